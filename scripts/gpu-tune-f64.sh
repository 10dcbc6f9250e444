#!/bin/sh
# scripts/gpu-tune-f64.sh - the f64 vec dot kernel's tiles (NXVK_DOT_VEC) and
# its warp layout (NXVK_DOT_LANES: 16 is the f32 layout, 4 the default) with
# the driver's register and local-memory figures (NXVK_KERNEL_STATS), each
# checked by the quick dot f64 conformance first; then the split-K cells of
# the odd f32 shape not yet measured; through the bundle (scripts/bundle.sh).
# Logs go to $OUT (default /tmp).
B=${B:-bundle/run.sh}
O=${OUT:-/tmp}
T="--min-time 0.2 --warmup 0.2"
$B bench peak --min-time 0.2 2>&1 | grep -E "FMA"
echo "== f64 conformance (quick) per layout"
for l in 16 2 4 8; do
  echo "lanes $l: $(NXVK_DOT_LANES=$l $B conformance --quick --op dot --dtype f64 2>&1 | tail -n 1)"
done
echo "== f64 vec: lanes RB,CB,BK -> GFLOPS at 2048, 4096; registers, local memory"
for run in "16 2,2,16" "4 2,2,16" "8 2,2,16" "2 2,2,16" "4 2,2,8" "4 2,4,12" "4 4,2,12" "4 4,4,8" \
           "8 4,4,8" "4 2,2,20" "4 2,4,8" "4 4,2,8"; do
  set -- $run
  NXVK_KERNEL_STATS=1 NXVK_DOT_LANES=$1 NXVK_DOT_VEC=$2 $B bench matmul --variant vec --sizes 2048,4096 \
    --dtype f64 $T > "$O/f64-$1-$2.txt" 2> "$O/f64-$1-$2-stats.txt"
  echo "$1 $2 $(grep -E '^dot' "$O/f64-$1-$2.txt" | awk '{print $7}' | tr '\n' ' ') $(grep dot_vec "$O/f64-$1-$2-stats.txt" | sed 's/Binary Size=[0-9]*, //; s/Stack Size=0, //')"
done
echo "== f32 split K at 1000x3000x700 and 1024: RB,CB,BK,S"
for cfg in 2,2,8,5 2,2,16,5 1,2,8,4 1,2,16,4 2,2,8,4 1,2,8,5; do
  NXVK_DOT_VEC=$cfg $B bench matmul --variant vec --sizes 1024 --shapes 1000x3000x700 --dtype f32 $T \
    > "$O/split-$cfg.txt" 2>&1
  echo "$cfg $(grep -E '^dot' "$O/split-$cfg.txt" | awk '{print $7}' | tr '\n' ' ')"
done
echo "== default ladder (f32, f64)"
$B bench matmul --variant tiled --sizes 1024,2048,4096 --shapes 4095x4095x4095,1000x3000x700 \
  --dtype f32,f64 $T | grep -E "^dot"
