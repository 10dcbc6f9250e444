#!/bin/sh
# scripts/gpu-tune.sh - speed probes on a GPU machine, through the bundle
# (scripts/bundle.sh), each knob set by its tuning variable:
#   NXVK_EW_UNROLL=U     elements per invocation of the elementwise kernels
#   NXVK_DOT_VEC=RB,CB,BK[,S]   the vec dot kernel's tiles and split K
#   NXVK_KERNEL_STATS=1  the driver's register counts per kernel (stderr)
# First the default ladder (to compare with the last run), then each sweep,
# then PyTorch's figures for the same sizes in the same run.  JSON and the
# full logs go to $OUT (default /tmp); a summary to stdout.
B=${B:-bundle/run.sh}
O=${OUT:-/tmp}
PY=${PY:-python3}
T="--min-time 0.3 --warmup 0.3"
$B info > "$O/info.txt" 2>&1; sed -n '1,12p' "$O/info.txt"
$B bench peak --min-time 0.3 > "$O/peak.txt" 2>&1; grep -E "FMA|copy" "$O/peak.txt"
echo "== default ladder"
NXVK_KERNEL_STATS=1 $B bench matmul --variant tiled --sizes 1024,2048,4096 \
  --shapes 4095x4095x4095,1000x3000x700,8x1024x1024x1024 --dtype f32,f64 $T \
  --json "$O/mm.json" > "$O/mm.txt" 2> "$O/mm-stats.txt"
grep -E "^dot" "$O/mm.txt"; grep -E "^dot_" "$O/mm-stats.txt"
echo "== elementwise and sum, NXVK_EW_UNROLL (reductions always take 4 per round)"
for u in 1 2 4 8; do
  NXVK_EW_UNROLL=$u $B bench ops --ops add,exp,sum --sizes 16M,64M --dtype f32,f64 $T --cpu-limit 0.01 \
    --json "$O/ops-u$u.json" > "$O/ops-u$u.txt" 2>&1
  echo "-- U=$u"; grep -E "^(add|exp|sum) " "$O/ops-u$u.txt" | awk '{print $1, $2, $3, $(NF-1)}'
done
echo "== split K (f32, vec): RB,CB,BK,S"
for cfg in 1,2,8,3 1,2,8,4 1,2,8,6 2,2,8,3 2,2,8,4 2,2,8,6 2,2,8,8 1,1,8,2 1,1,8,3; do
  NXVK_DOT_VEC=$cfg $B bench matmul --variant vec --sizes 1024 --shapes 1000x3000x700 --dtype f32 \
    --min-time 0.2 --warmup 0.2 > "$O/split-$cfg.txt" 2>&1
  echo "$cfg $(grep -E '^dot' "$O/split-$cfg.txt" | awk '{print $7}' | tr '\n' ' ')"
done
echo "== f64 vec tiles: RB,CB,BK (8x8 per invocation at 4,4)"
for cfg in 2,2,8 1,1,8 2,2,4 2,4,8 4,4,8 4,4,4; do
  NXVK_KERNEL_STATS=1 NXVK_DOT_VEC=$cfg $B bench matmul --variant vec --sizes 2048 --dtype f64 \
    --min-time 0.2 --warmup 0.2 > "$O/f64-$cfg.txt" 2> "$O/f64-$cfg-stats.txt"
  echo "$cfg $(grep -E '^dot' "$O/f64-$cfg.txt" | awk '{print $7}') $(grep dot_vec "$O/f64-$cfg-stats.txt")"
done
echo "== PyTorch"
$PY bench/compare_torch.py --nxvk-json "$O/mm.json" --nxvk-json "$O/ops-u4.json" --min-time 0.3 \
  --out "$O/compare.json" > "$O/compare.txt" 2>&1
grep -E "ratio|^ *(dot|add|exp|sum)" "$O/compare.txt" | head -40
