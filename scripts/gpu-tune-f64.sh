#!/bin/sh
# scripts/gpu-tune-f64.sh - the f64 vec dot kernel on its two grids: 16 x 16
# invocations (dot_vec_f64, the default) and 8 x 16 (dot_vec128_f64,
# NXVK_DOT_NT=128: two workgroups of 8 x 8 doubles per invocation fit an SM's
# registers where one of 256 did), over tiles (NXVK_DOT_VEC=RB,CB,BK) and warp
# layouts (NXVK_DOT_LANES), with the driver's register and local-memory
# figures (NXVK_KERNEL_STATS); each narrow layout checked by the quick dot
# f64 conformance first; through the bundle (scripts/bundle.sh).
# Logs go to $OUT (default /tmp).  (The 2026-11-24 sweeps of the 16 x 16
# grid are in bench/hosts/h200-2026-11-24-lanes/.)
B=${B:-bundle/run.sh}
O=${OUT:-/tmp}
T="--min-time 0.2 --warmup 0.2"
$B bench peak --min-time 0.2 2>&1 | grep -E "^fma"
echo "== f64 conformance (quick), 8 x 16 grid"
for run in "2 4,4,8" "4 4,4,12" "2 2,2,16"; do
  set -- $run
  echo "nt 128 lanes $1 $2: $(NXVK_DOT_NT=128 NXVK_DOT_LANES=$1 NXVK_DOT_VEC=$2 $B conformance --quick --op dot --dtype f64 2>&1 | tail -n 1)"
done
echo "== f64 vec: grid lanes RB,CB,BK -> GFLOPS at 2048, 4096; registers, local memory"
for run in "256 2 2,2,16" "128 2 4,4,8" "128 4 4,4,8" "128 8 4,4,8" "128 2 4,4,12" "128 4 4,4,12" \
           "128 2 4,4,4" "128 2 4,2,16" "128 2 2,4,16" "128 2 2,2,16" "128 4 4,2,16"; do
  set -- $run
  NXVK_KERNEL_STATS=1 NXVK_DOT_NT=$1 NXVK_DOT_LANES=$2 NXVK_DOT_VEC=$3 $B bench matmul --variant vec \
    --sizes 2048,4096 --dtype f64 $T > "$O/f64-$1-$2-$3.txt" 2> "$O/f64-$1-$2-$3-stats.txt"
  echo "$1 $2 $3 $(grep -E '^dot' "$O/f64-$1-$2-$3.txt" | awk '{print $7}' | tr '\n' ' ') $(grep dot_vec "$O/f64-$1-$2-$3-stats.txt" | sed 's/Binary Size=[0-9]*, //; s/Stack Size=0, //')"
done
