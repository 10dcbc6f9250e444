#!/usr/bin/env bash
# tests/fuzz/test_fuzz_replay.sh - every fuzz target over its saved corpus
# (tests/fuzz/corpus/TARGET) and each of its regression cases
# (tests/fuzz/regressions/TARGET/*), without libFuzzer: replay.c's driver
# built by build.sh with gcc, ASan + UBSan (+ float-cast-overflow), no
# recovery, LeakSanitizer on.  One TAP line per target's corpus, one per
# regression case; a crash, a sanitizer report, a leak or a failed check
# in the target fails its line.
set -u
cd "$(dirname "$0")/../.."
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
. tests/tap.sh

targets=()
for f in tests/fuzz/fuzz_*.c; do t=${f#tests/fuzz/fuzz_}; targets+=("${t%.c}"); done
if tests/fuzz/build.sh replay >"$T/build.log" 2>&1; then
  ok "build.sh replay builds ${#targets[@]} replay drivers"
else
  not_ok "build.sh replay builds ${#targets[@]} replay drivers" "$(tail -20 "$T/build.log")"
  echo "1..$n"
  exit 1
fi
# a request for more than 2 GiB from a few KiB of input is a bug (libFuzzer's
# -rss_limit_mb=2048 would call it out of memory): make it an ASan report
export ASAN_OPTIONS="detect_leaks=1:max_allocation_size_mb=2048:allocator_may_return_null=0:exitcode=86"
export UBSAN_OPTIONS="halt_on_error=1:print_stacktrace=1:exitcode=88"

replay() { # DESC BIN PATH
  timeout 600 "$2" "$3" >"$T/out" 2>&1
  local rc=$?
  if [ "$rc" -eq 0 ]; then ok "$1 ($(sed -n 's/^replay: \([0-9]*\) inputs ran$/\1 inputs/p' "$T/out"))"; else
    not_ok "$1" "exit $rc" "$(grep -m12 -E 'replay:|check failed|ERROR|runtime error|SUMMARY|^    #[0-9] ' "$T/out")"
  fi
}
for t in "${targets[@]}"; do
  bin=build/fuzz/bin/replay_$t
  if [ -z "$(ls tests/fuzz/corpus/"$t" 2>/dev/null)" ]; then
    not_ok "$t: corpus replayed with 0 crashes" "tests/fuzz/corpus/$t is empty"
  else
    replay "$t: corpus replayed with 0 crashes" "$bin" "tests/fuzz/corpus/$t"
  fi
  for r in tests/fuzz/regressions/"$t"/*; do
    [ -f "$r" ] || continue
    replay "$t: regression ${r##*/} runs clean" "$bin" "$r"
  done
done
echo "1..$n"
