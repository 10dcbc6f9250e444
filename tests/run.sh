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
#
# NXVK_TEST_JOBS (default 2) producers run at once; each one's lines are
# printed whole, in the order above, whatever order they finish in.  The
# producers whose checks measure time or memory (TIMED below) run alone,
# first, on an otherwise idle suite; then the others, the longest known
# first (LONG below) so that they overlap the many short ones.
# NXVK_TEST_JOBS=1 runs everything one at a time, in the order above.
set -u
cd "$(dirname "$0")/.."
export NXVK="${NXVK:-$PWD/nxvk}"
# the suite's kernel and pipeline caches live and die with the run
NXVK_CACHE_DIR=$(mktemp -d)
export NXVK_CACHE_DIR
R=$(mktemp -d) # each producer's log, exit status and seconds
trap 'rm -rf "$NXVK_CACHE_DIR" "$R"' EXIT
PY=/usr/bin/python3
JOBS=${NXVK_TEST_JOBS:-2}
[[ "$JOBS" =~ ^[1-9][0-9]*$ ]] || { echo "NXVK_TEST_JOBS must be a whole number >= 1 (got '$JOBS')" >&2; exit 2; }
# by name (as printed): these time themselves, watch latencies or set memory
# limits, so nothing else runs beside them
TIMED=" bench/test_bench.sh stress/test_stress.sh hardening/test_limits.sh hardening/test_safety.sh port/test_port.py "
# the longest producers on the 2-core lavapipe CI machine, longest first
LONG=" conformance/test_quick_suite.sh hardening/test_sanitizers.sh elixir "
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

names=() kinds=() cmds=() # the producers, in printing order; cmds[i] is a quoted command line
add() { # name kind command...: kind tap (TAP lines) or exunit (mix test's summary)
  names+=("$1"); kinds+=("$2"); shift 2
  cmds+=("$(printf '%q ' "$@")")
}
for t in build/tests/test_*; do
  [ -x "$t" ] || continue
  selected "$t" || continue
  add "unit/$(basename "$t")" tap "$t"
done
for t in tests/*/test_*.sh; do
  [ -f "$t" ] || continue
  selected "$t" || continue
  add "${t#tests/}" tap bash "$t"
done
for t in tests/*/test_*.py; do
  [ -f "$t" ] || continue
  selected "$t" || continue
  add "${t#tests/}" tap "$PY" "$t"
done
if [ -f elixir/mix.exs ] && command -v mix >/dev/null 2>&1 && { [ "${#parts[@]}" -eq 0 ] || [[ " ${parts[*]} " == *" elixir "* ]]; }; then
  hit[elixir]=1
  add elixir exunit bash -c 'cd elixir && MIX_ENV=test exec mix test --color=false'
fi

start_job() { # index: runs producer i in the background; $R/i.done holds "status seconds"
  local i=$1
  (
    s=$SECONDS
    eval "${cmds[$i]}" >"$R/$i.log" 2>&1 </dev/null
    rc=$?
    echo "$rc $((SECONDS - s))" >"$R/$i.tmp" && mv "$R/$i.tmp" "$R/$i.done"
  ) &
}

report() { # index: counts and prints producer i (finished)
  local i=$1
  local name=${names[$i]} log="$R/$i.log" rc secs
  read -r rc secs <"$R/$i.done"
  if [ "${kinds[$i]}" = tap ]; then
    local ok nok
    ok=$(grep -cE '^ok [0-9]+' "$log")
    nok=$(grep -cE '^not ok [0-9]+' "$log")
    if [ "$rc" -ne 0 ] && [ "$nok" -eq 0 ]; then nok=1; echo "not ok - $name exited $rc without a failing test" >>"$log"; fi
    if [ "$ok" -eq 0 ] && [ "$nok" -eq 0 ]; then nok=1; echo "not ok - $name ran no test" >>"$log"; fi
    passed=$((passed + ok)); failed=$((failed + nok))
    printf '%-40s %5d ok %4d not ok  (%ds)\n' "$name" "$ok" "$nok" "$secs"
    if [ "$nok" -ne 0 ]; then
      failures+=("$name")
      grep -E -A8 '^not ok' "$log" | head -60 | sed 's/^/    /'
    fi
  else
    # "N doctests, M tests, K failures" (doctests count as tests) or "M tests, K failures"
    local line d n f
    line=$(grep -E '^([0-9]+ doctests?, )?[0-9]+ tests?, [0-9]+ failures?' "$log" | tail -1)
    d=$(echo "$line" | sed -nE 's/^([0-9]+) doctests?, .*/\1/p')
    n=$(echo "$line" | sed -E 's/^([0-9]+ doctests?, )?([0-9]+) tests?.*/\2/'); f=$(echo "$line" | sed -E 's/.*, ([0-9]+) failures?.*/\1/')
    if [ -z "$line" ]; then n=0; f=1; else n=$((n + ${d:-0})); fi
    if [ "$rc" -ne 0 ] && [ "$f" -eq 0 ]; then f=1; fi
    passed=$((passed + n - f)); failed=$((failed + f))
    printf '%-40s %5d ok %4d not ok  (%ds)\n' "elixir (ExUnit)" $((n - f)) "$f" "$secs"
    grep '^nxvk native count' "$log" | sed 's/^/    /'
    if [ "$f" -ne 0 ]; then failures+=("elixir"); tail -40 "$log" | sed 's/^/    /'; fi
  fi
  rm -f "$log"
}

total=${#names[@]}
next_print=0 running=0
flush() { # prints the finished producers that are next in printing order
  while [ "$next_print" -lt "$total" ] && [ -f "$R/$next_print.done" ]; do
    report "$next_print"; next_print=$((next_print + 1))
  done
}
declare -A reaped=()
reap() { # waits until fewer than $1 producers run
  local i
  while [ "$running" -ge "$1" ]; do
    sleep 0.2
    running=0
    for i in "${!started[@]}"; do
      if [ -f "$R/$i.done" ]; then
        [ -n "${reaped[$i]:-}" ] || { reaped[$i]=1; wait "${pids[$i]}" 2>/dev/null; }
      else running=$((running + 1)); fi
    done
    flush
  done
}
# launch order: TIMED alone, then LONG, then the rest in printing order
order=()
if [ "$JOBS" -eq 1 ]; then
  for ((i = 0; i < total; i++)); do order+=("$i"); done
else
  for ((i = 0; i < total; i++)); do [[ "$TIMED" == *" ${names[$i]} "* ]] && order+=("$i"); done
  for l in $LONG; do for ((i = 0; i < total; i++)); do [ "${names[$i]}" = "$l" ] && order+=("$i"); done; done
  for ((i = 0; i < total; i++)); do
    [[ "$TIMED" == *" ${names[$i]} "* || "$LONG" == *" ${names[$i]} "* ]] || order+=("$i")
  done
fi
declare -A started=() pids=()
# each producer its own process group, so that an interrupt stops them all
set -m
trap 'for i in "${!pids[@]}"; do [ -f "$R/$i.done" ] || kill -TERM -- "-${pids[$i]}" 2>/dev/null; done; exit 130' INT TERM
for i in "${order[@]}"; do
  if [[ "$TIMED" == *" ${names[$i]} "* ]]; then reap 1; else reap "$JOBS"; fi
  start_job "$i"; started[$i]=1; pids[$i]=$!; running=$((running + 1))
  [[ "$TIMED" == *" ${names[$i]} "* ]] && reap 1
done
reap 1
flush

for p in "${parts[@]}"; do
  [ -z "${hit[$p]:-}" ] || continue
  echo "not ok - $p selects no test (tests/run.sh PART... selects tests by path)"
  failed=$((failed + 1)); failures+=("($p: no test)")
done
[ "${#failures[@]}" -eq 0 ] || echo "failing: ${failures[*]}"
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
