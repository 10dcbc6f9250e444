#!/usr/bin/env bash
# tests/fuzz/coverage.sh - line and branch coverage of the committed corpus
# (tests/fuzz/corpus/TARGET) over the source files each target is for.
#
#   tests/fuzz/coverage.sh [TARGET...]
#
# Builds build/fuzz/bin/cov_TARGET (build.sh cov: clang source-based
# coverage, no sanitizers), replays the corpus, and prints llvm-cov's
# summary of the files below.  LLVM_COV / LLVM_PROFDATA override the tools.
set -euo pipefail
cd "$(dirname "$0")/../.."
targets=("$@")
if [ ${#targets[@]} -eq 0 ]; then
  for f in tests/fuzz/fuzz_*.c; do t=${f#tests/fuzz/fuzz_}; targets+=("${t%.c}"); done
fi
LLVM_COV=${LLVM_COV:-$(command -v llvm-cov-14 || command -v llvm-cov)}
LLVM_PROFDATA=${LLVM_PROFDATA:-$(command -v llvm-profdata-14 || command -v llvm-profdata)}
tests/fuzz/build.sh cov "${targets[@]}" >/dev/null
out=build/fuzz/cov
mkdir -p "$out"
files_of() {
  case $1 in
    npy) echo src/io/npy.c ;;
    json_tensor) echo src/io/json_tensor.c ;;
    graph) echo src/ops/graph.c src/ops/attrs.c src/ops/exec.c src/ops/elementwise.c src/ops/reduce.c \
      src/ops/movement.c src/ops/dot.c src/ops/source.c src/io/json_tensor.c ;;
    csv) echo src/io/csv.c ;;
    port_frame) echo src/cli/port_frame.c ;;
    attrs) echo src/ops/attrs.c ;;
  esac
}
for t in "${targets[@]}"; do
  rm -f "$out/$t".prof*
  # the corpus only: a regression case may abort (no profile) until its fix lands
  LLVM_PROFILE_FILE="$out/$t.profraw" build/fuzz/bin/cov_"$t" -q tests/fuzz/corpus/"$t" >/dev/null 2>&1 || true
  "$LLVM_PROFDATA" merge -sparse "$out/$t.profraw" -o "$out/$t.profdata"
  echo "== $t ($(ls tests/fuzz/corpus/"$t" | wc -l) corpus files)"
  # shellcheck disable=SC2046
  "$LLVM_COV" report "build/fuzz/bin/cov_$t" -instr-profile="$out/$t.profdata" $(files_of "$t") |
    awk -v root="$PWD/" '$1 ~ /\.c$/ || $1 == "TOTAL" { sub(root, "", $1);
      printf "  %-26s lines %7s  branches %7s  functions %7s  regions %7s\n", $1, $10, $13, $7, $4 }'
done
