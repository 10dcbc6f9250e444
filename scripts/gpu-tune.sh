#!/bin/sh
# scripts/gpu-tune.sh - speed probes on a GPU machine, through the bundle
# (scripts/bundle.sh): the roofline, the op sweep, the vec dot kernel's tile
# configurations (NXVK_DOT_VEC="RB,CB,BK", see src/ops/dot.c) and odd shapes,
# with PyTorch's figures for the same sizes from the same run.  Writes JSON
# into $OUT (default /tmp).
B=${B:-bundle/run.sh}
O=${OUT:-/tmp}
PY=${PY:-python3}
$B info | sed -n '1,40p'
$B bench peak --min-time 0.3
$B bench ops --ops add,exp,sum --sizes 4M,16M,64M --dtype f32,f64 --min-time 0.3 --warmup 0.5 \
  --cpu-limit 0.01 --json "$O/ops.json"
for cfg in 2,2,8 2,2,16 1,2,8 1,1,8 2,2,4 4,2,8; do
  echo "== f32 NXVK_DOT_VEC=$cfg"
  NXVK_DOT_VEC=$cfg $B bench matmul --variant vec --sizes 1024,2048,4096 --dtype f32 --min-time 0.3 \
    --warmup 0.3 | grep -E "^dot|error"
done
for cfg in 2,2,8 2,2,16 4,4,8 4,2,8 2,4,8 1,2,8; do
  echo "== f64 NXVK_DOT_VEC=$cfg"
  NXVK_DOT_VEC=$cfg $B bench matmul --variant vec --sizes 1024,4096 --dtype f64 --min-time 0.3 \
    --warmup 0.3 | grep -E "^dot|error"
done
$B bench matmul --variant tiled --sizes 1024,2048,4096 --shapes 4095x4095x4095,1000x3000x700,8x1024x1024x1024 \
  --dtype f32,f64 --min-time 0.3 --warmup 0.3 --json "$O/mm.json"
$PY bench/compare_torch.py --nxvk-json "$O/ops.json" --nxvk-json "$O/mm.json" --min-time 0.3 --out "$O/compare.json"
