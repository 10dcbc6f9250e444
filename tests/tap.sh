# tests/tap.sh - TAP helpers the shell suites source (after cd to the repo root):
#   ok DESC               the next test passed
#   not_ok DESC [DIAG...] it failed; each DIAG is shown as '#   ' lines (2000 bytes at most)
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
