#!/bin/sh
# scripts/gpu-tune-lanes.sh - the vec dot kernel's warp layout (NXVK_DOT_LANES:
# a 32-invocation group covers LW columns x 32/LW rows of the 16 x 16 grid)
# for f32 at the default tiles, f64 tiles at LW = 2, and the odd f32 shape's
# split-K cells at BK = 16; each layout checked by the quick dot conformance
# first; through the bundle (scripts/bundle.sh).  Logs go to $OUT (default /tmp).
B=${B:-bundle/run.sh}
O=${OUT:-/tmp}
T="--min-time 0.2 --warmup 0.2"
for l in 2 4 8; do
  echo "lanes $l f32: $(NXVK_DOT_LANES=$l $B conformance --quick --op dot --dtype f32 2>&1 | tail -n 1)"
done
echo "== f32 default tiles per layout: 1024 2048 4096 4095^3 1000x3000x700 8x1024^3 (GFLOPS)"
for l in 16 2 4 8; do
  NXVK_KERNEL_STATS=1 NXVK_DOT_LANES=$l $B bench matmul --variant tiled --sizes 1024,2048,4096 \
    --shapes 4095x4095x4095,1000x3000x700,8x1024x1024x1024 --dtype f32 $T \
    > "$O/f32-lanes$l.txt" 2> "$O/f32-lanes$l-stats.txt"
  echo "$l $(grep -E '^dot' "$O/f32-lanes$l.txt" | awk '{for (i = 1; i <= NF; i++) if ($i == "us" || $i == "ms" || $i == "s") {print $(i + 1); break}}' | tr '\n' ' ')"
done
echo "== f64 at LW = 2: RB,CB,BK -> 2048 4096 (GFLOPS); registers"
for cfg in 2,2,16 2,4,8 2,4,12 4,2,8 4,4,8 1,2,16 2,1,16 2,2,8; do
  NXVK_KERNEL_STATS=1 NXVK_DOT_LANES=2 NXVK_DOT_VEC=$cfg $B bench matmul --variant vec --sizes 2048,4096 \
    --dtype f64 $T > "$O/f64-2-$cfg.txt" 2> "$O/f64-2-$cfg-stats.txt"
  echo "$cfg $(grep -E '^dot' "$O/f64-2-$cfg.txt" | awk '{print $7}' | tr '\n' ' ') $(grep -o 'Register Count=[0-9]*' "$O/f64-2-$cfg-stats.txt" | head -1)"
done
echo "== f32 split K, 1024 and 1000x3000x700: lanes RB,CB,BK,S"
for run in "16 2,2,16,4" "16 2,2,16,6" "2 2,2,16,5" "2 2,2,8,4" "2 2,2,8,5" "2 1,2,8,4"; do
  set -- $run
  NXVK_DOT_LANES=$1 NXVK_DOT_VEC=$2 $B bench matmul --variant vec --sizes 1024 --shapes 1000x3000x700 \
    --dtype f32 $T > "$O/split-$1-$2.txt" 2>&1
  echo "$1 $2 $(grep -E '^dot' "$O/split-$1-$2.txt" | awk '{for (i = 1; i <= NF; i++) if ($i == "us" || $i == "ms" || $i == "s") {print $(i + 1); break}}' | tr '\n' ' ')"
done
