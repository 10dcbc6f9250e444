#!/usr/bin/env bash
# tests/run.sh - the whole suite (make test).  Every test is a TAP producer:
#   tests/unit/test_*.c    C unit tests, built by make (build/tests/test_*)
#   tests/*/test_*.sh      shell tests (CLI, man pages, stress, ...)
#   tests/*/test_*.py      Python tests, run with /usr/bin/python3 (numpy oracle)
#   elixir/                ExUnit through `mix test` (when elixir is installed)
# A producer that crashes or exits non-zero without a failing line counts as
# one failure.  The last line is `N passed, N failed`.
# tests/run.sh PART... runs the tests whose path contains any PART (elixir:
# the ExUnit suite); a PART that selects no test is a failure, not a pass.
# An area's tests by name, e.g. dot's: tests/run.sh skinny mvr coopmat
set -u
cd "$(dirname "$0")/.."
export NXVK="${NXVK:-$PWD/nxvk}"
# the suite's kernel and pipeline caches live and die with the run
NXVK_CACHE_DIR=$(mktemp -d)
export NXVK_CACHE_DIR
trap 'rm -rf "$NXVK_CACHE_DIR"' EXIT
PY=/usr/bin/python3
passed=0 failed=0
failures=()
parts=()
for a in "$@"; do [ -z "$a" ] || parts+=("$a"); done
declare -A hit=() # the PARTs that selected a test
selected() { # path: every test without a PART, else those whose path contains one
  [ "${#parts[@]}" -eq 0 ] && return 0
  local p found=1
  for p in "${parts[@]}"; do case "$1" in *"$p"*) hit[$p]=1; found=0 ;; esac; done
  return $found
}

run_tap() { # name, command...
  local name=$1; shift
  local log; log=$(mktemp)
  local start=$SECONDS
  "$@" >"$log" 2>&1
  local rc=$?
  local ok nok
  ok=$(grep -cE '^ok [0-9]+' "$log")
  nok=$(grep -cE '^not ok [0-9]+' "$log")
  if [ "$rc" -ne 0 ] && [ "$nok" -eq 0 ]; then nok=1; echo "not ok - $name exited $rc without a failing test" >>"$log"; fi
  if [ "$ok" -eq 0 ] && [ "$nok" -eq 0 ]; then nok=1; echo "not ok - $name ran no test" >>"$log"; fi
  passed=$((passed + ok)); failed=$((failed + nok))
  printf '%-40s %5d ok %4d not ok  (%ds)\n' "$name" "$ok" "$nok" $((SECONDS - start))
  if [ "$nok" -ne 0 ]; then
    failures+=("$name")
    grep -E -A8 '^not ok' "$log" | head -60 | sed 's/^/    /'
  fi
  rm -f "$log"
}

for t in build/tests/test_*; do
  [ -x "$t" ] || continue
  selected "$t" || continue
  run_tap "unit/$(basename "$t")" "$t"
done
for t in tests/*/test_*.sh; do
  [ -f "$t" ] || continue
  selected "$t" || continue
  run_tap "${t#tests/}" bash "$t"
done
for t in tests/*/test_*.py; do
  [ -f "$t" ] || continue
  selected "$t" || continue
  run_tap "${t#tests/}" "$PY" "$t"
done
if [ -f elixir/mix.exs ] && command -v mix >/dev/null 2>&1 && { [ "${#parts[@]}" -eq 0 ] || [[ " ${parts[*]} " == *" elixir "* ]]; }; then
  log=$(mktemp)
  hit[elixir]=1
  start=$SECONDS
  (cd elixir && MIX_ENV=test mix test --color=false) >"$log" 2>&1
  rc=$?
  # "N doctests, M tests, K failures" (doctests count as tests) or "M tests, K failures"
  line=$(grep -E '^([0-9]+ doctests?, )?[0-9]+ tests?, [0-9]+ failures?' "$log" | tail -1)
  d=$(echo "$line" | sed -nE 's/^([0-9]+) doctests?, .*/\1/p')
  n=$(echo "$line" | sed -E 's/^([0-9]+ doctests?, )?([0-9]+) tests?.*/\2/'); f=$(echo "$line" | sed -E 's/.*, ([0-9]+) failures?.*/\1/')
  if [ -z "$line" ]; then n=0; f=1; else n=$((n + ${d:-0})); fi
  if [ "$rc" -ne 0 ] && [ "$f" -eq 0 ]; then f=1; fi
  passed=$((passed + n - f)); failed=$((failed + f))
  printf '%-40s %5d ok %4d not ok  (%ds)\n' "elixir (ExUnit)" $((n - f)) "$f" $((SECONDS - start))
  grep '^nxvk native count' "$log" | sed 's/^/    /'
  if [ "$f" -ne 0 ]; then failures+=("elixir"); tail -40 "$log" | sed 's/^/    /'; fi
  rm -f "$log"
fi
for p in "${parts[@]}"; do
  [ -z "${hit[$p]:-}" ] || continue
  echo "not ok - $p selects no test (tests/run.sh PART... selects tests by path)"
  failed=$((failed + 1)); failures+=("($p: no test)")
done
[ "${#failures[@]}" -eq 0 ] || echo "failing: ${failures[*]}"
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
