# tests/tap.sh - TAP helpers the shell suites source (after cd to the repo root):
#   ok DESC               the next test passed
#   not_ok DESC [DIAG...] it failed; each DIAG is shown as '#   ' lines (2000 bytes at most)
#   expect_error DESC STATUS REGEX CMD...
#                         CMD exits STATUS with one stderr line `nxvk: error: ...`
#                         matching REGEX (stdin /dev/null, output in $T/out and
#                         $T/err, killed after $EXPECT_TIMEOUT seconds, 60 unless set)
# n counts the tests (kept when a sourcing script already set it), fail is 1
# once any failed; each suite ends with: echo "1..$n" (and exit $fail where
# its exit status matters).
n=${n:-0}
fail=${fail:-0}
ok() { n=$((n + 1)); echo "ok $n - $1"; }
not_ok() {
  n=$((n + 1)); echo "not ok $n - $1"; fail=1
  shift; for l in "$@"; do printf '%s\n' "$l" | head -c 2000 | sed 's/^/#   /'; echo; done
}
expect_error() {
  local desc=$1 want=$2 re=$3; shift 3
  timeout "${EXPECT_TIMEOUT:-60}" "$@" >"$T/out" 2>"$T/err" </dev/null
  local rc=$? lines; lines=$(wc -l <"$T/err")
  if [ "$rc" -eq "$want" ] && [ "$lines" -eq 1 ] && grep -qE "^nxvk: error: .*($re)" "$T/err"; then
    ok "$desc"
  else
    not_ok "$desc" "exit $rc (want $want), $lines stderr lines, want /$re/" "$(head -c 600 "$T/err")"
  fi
}
