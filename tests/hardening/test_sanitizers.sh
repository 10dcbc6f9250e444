#!/usr/bin/env bash
# tests/hardening/test_sanitizers.sh - the representative subset
# (subset.sh: every op family with --check, a fused graph, bad inputs, info,
# a scripted port session) on ./nxvk-asan, built here with `make asan`
# (AddressSanitizer + UndefinedBehaviorSanitizer, no recovery), with
# LeakSanitizer on.  Any sanitizer report fails the case; the only
# suppressions are lsan.supp's, inside the Vulkan driver stack.  Libraries
# stay mapped at dlclose (keep_loaded.c, preloaded): lsan.supp says why.
set -u
cd "$(dirname "$0")/../.."
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
n=0
. tests/hardening/subset.sh

# one `make asan` at a time in this tree (tests/run.sh runs two producers at once)
mkdir -p build
if flock build/asan.lock make -s -j2 asan >"$T/make.log" 2>&1 && [ -x ./nxvk-asan ]; then
  ok "make asan builds ./nxvk-asan"
else
  not_ok "make asan builds ./nxvk-asan" "$(tail -20 "$T/make.log")"
  echo "1..$n"
  exit 1
fi
BIN=$PWD/nxvk-asan
if ${CC:-cc} -shared -fPIC -O1 -Wall -Wextra -Werror -o "$T/keep_loaded.so" tests/hardening/keep_loaded.c 2>"$T/cc.log"; then
  ok "keep_loaded.so builds"
else
  not_ok "keep_loaded.so builds" "$(cat "$T/cc.log")"
fi
export LD_PRELOAD=$T/keep_loaded.so
# the shim comes before the ASan runtime in the load order: allowed here
export ASAN_OPTIONS="verify_asan_link_order=0:detect_leaks=1:abort_on_error=0:exitcode=86:strict_string_checks=1:detect_stack_use_after_return=1:check_initialization_order=1"
export LSAN_OPTIONS="suppressions=$PWD/tests/hardening/lsan.supp:print_suppressions=0:exitcode=87"
export UBSAN_OPTIONS="halt_on_error=1:print_stacktrace=1:exitcode=88"
export NXVK_CACHE_DIR=$T/cache   # the fused kernel compiles once here, then loads

clean() {
  if grep -qE 'ERROR: (AddressSanitizer|LeakSanitizer)|runtime error:|SUMMARY: (Address|UndefinedBehavior|Leak)Sanitizer' "$1"; then
    grep -m3 -E 'ERROR: |runtime error:|SUMMARY:' "$1"
    return 1
  fi
  return 0
}

# the sanitizers must be able to fail this test: a leak, as nxvk's own
# test fault makes one (NXVK_TEST_INJECT=leak keeps freed tensors' memory)
# is seen by the checks above, through the same clean()
NXVK_TEST_INJECT=leak timeout 120 "$BIN" run --op add '{"dtype":"f32","data":[1]}' '{"dtype":"f32","data":[2]}' \
  >/dev/null 2>"$T/inject.err"
rc=$?
if [ "$rc" -ne 0 ] && ! clean "$T/inject.err" >/dev/null && grep -q 'nxvk_buffer_create' "$T/inject.err"; then
  ok "LeakSanitizer reports an injected leak, with nxvk's frames (exit $rc)"
else
  not_ok "LeakSanitizer reports an injected leak, with nxvk's frames" "exit $rc" "$(head -c 800 "$T/inject.err")"
fi

run_subset

# the C unit tests (the engine's API, the buffer pool, threads) built by
# the same `make asan`; test_core under ASan took over 300 s on a loaded
# 2-core machine (every op x dtype), so the limit only catches a hang
for t in build/tests-asan/test_*; do
  [ -x "$t" ] || continue
  name=$(basename "$t")
  timeout 900 "$t" >"$T/$name.out" 2>"$T/$name.err"
  rc=$?
  fails=$(grep -c '^not ok' "$T/$name.out")
  if [ "$rc" -eq 0 ] && [ "$fails" -eq 0 ] && clean "$T/$name.err" >/dev/null; then
    ok "unit test $name under ASan/UBSan/LSan: $(grep -c '^ok' "$T/$name.out") ok"
  else
    not_ok "unit test $name under ASan/UBSan/LSan (exit $rc, $fails failing)" \
      "$(grep -m3 '^not ok' "$T/$name.out")" "$(clean "$T/$name.err" | head -5)"
  fi
done
echo "1..$n"
