#!/bin/sh
# scripts/gpu-tune-f64.sh - the f64 vec dot kernel's tiles (NXVK_DOT_VEC) with
# the driver's register and local-memory figures (NXVK_KERNEL_STATS), vec1
# beside them, and the default f32 choice for the split-K shapes; through the
# bundle (scripts/bundle.sh).  Logs go to $OUT (default /tmp).
B=${B:-bundle/run.sh}
O=${OUT:-/tmp}
T="--min-time 0.2 --warmup 0.2"
$B bench peak --min-time 0.2 2>&1 | grep -E "FMA"
echo "== f64 vec tiles: RB,CB,BK -> GFLOPS at 2048, 4096; registers, local memory"
for cfg in 2,2,8 1,1,8 2,2,16 2,4,8 4,2,8 4,4,8 4,4,4; do
  NXVK_KERNEL_STATS=1 NXVK_DOT_VEC=$cfg $B bench matmul --variant vec --sizes 2048,4096 --dtype f64 $T \
    > "$O/f64-$cfg.txt" 2> "$O/f64-$cfg-stats.txt"
  echo "$cfg $(grep -E '^dot' "$O/f64-$cfg.txt" | awk '{print $7}' | tr '\n' ' ') $(grep dot_vec "$O/f64-$cfg-stats.txt" | sed 's/Binary Size=[0-9]*, //; s/Stack Size=0, //')"
done
echo "== vec1 f64"
$B bench matmul --variant vec1 --sizes 2048,4096 --dtype f64 $T | grep -E "^dot"
echo "== default f32 (split-K rule)"
$B bench matmul --variant tiled --sizes 512,1024,2048,4096 --shapes 1000x3000x700,4095x4095x4095 --dtype f32 $T | grep -E "^dot"
