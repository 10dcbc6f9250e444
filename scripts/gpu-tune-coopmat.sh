#!/bin/sh
# scripts/gpu-tune-coopmat.sh - dot's coopmat kernels (NXVK_COOPMAT=base|w8|
# wide) checked (quick conformance of dot f32, whose coopmat cases run only
# where the device has NV cooperative matrices) and timed with the driver's
# register figures, then f64 exp (its plain-double form) checked and timed,
# and PyTorch's figures for the same sizes in the same run; through the bundle
# (scripts/bundle.sh).  Logs and JSON go to $OUT (default /tmp).
B=${B:-bundle/run.sh}
O=${OUT:-/tmp}
T="--min-time 0.3 --warmup 0.3"
$B info | sed -n '1,3p'
for v in base w8 wide; do
  echo "== coopmat $v"
  NXVK_COOPMAT=$v $B conformance --quick --op dot --dtype f32 > "$O/conf-$v.tap" 2>&1
  grep -E "^# dot .*coopmat|not ok" "$O/conf-$v.tap" | head -5; tail -n 1 "$O/conf-$v.tap"
  NXVK_COOPMAT=$v NXVK_KERNEL_STATS=1 $B bench matmul --variant coopmat --sizes 1024,2048,4096,8192 \
    --shapes 4095x4095x4095,1000x3000x700,8x1024x1024x1024 --dtype f32 $T --json "$O/cm-$v.json" \
    > "$O/cm-$v.txt" 2> "$O/cm-$v-stats.txt"
  grep -E "^dot" "$O/cm-$v.txt"; grep -E "coopmat|f16_pack" "$O/cm-$v-stats.txt"
done
echo "== exp f64"
$B conformance --op exp --dtype f64 > "$O/conf-exp.tap" 2>&1; tail -n 3 "$O/conf-exp.tap"
$B bench ops --ops add,exp --sizes 16M,64M --dtype f32,f64 $T --cpu-limit 0.01 --json "$O/ops.json" \
  > "$O/ops.txt" 2>&1
grep -E "^(add|exp) " "$O/ops.txt"
echo "== PyTorch"
python3 bench/compare_torch.py --nxvk-json "$O/cm-base.json" --nxvk-json "$O/ops.json" --min-time 0.3 \
  --out "$O/compare.json" > "$O/compare.txt" 2>&1
grep -E "ratio|coopmat|^ *(add|exp)" "$O/compare.txt" | head -40
