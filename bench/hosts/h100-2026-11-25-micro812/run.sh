#!/bin/sh
# The run kept in this folder (run 1; the peak lines of peak.txt are from a second call, the same lease, when the first call's peak.txt did not come back) (README says what it tests), on the GPU machine
# from the repository root, with bundle/ (scripts/bundle.sh) and bundle-micro/
# (the scratch builds of bench peak: nxvk-4x8, nxvk-8x8, nxvk-8x12) carried.
R=${OUT:-/tmp/out}/r
mkdir -p "$R"
export LD_LIBRARY_PATH="$PWD/bundle/lib" NXVK_CACHE_DIR=/tmp/cache
B=bundle/run.sh
nvidia-smi --query-gpu=timestamp,clocks.sm,power.draw,clocks_throttle_reasons.active \
  --format=csv,noheader -lms 200 > "$R/smi.csv" 2>&1 &
smi=$!
date -u +%FT%TZ > "$R/date.txt"
$B info > "$R/info.txt" 2>&1
# 1. the f64 loop from shared memory, 4 x 8, 8 x 8 and 8 x 12 doubles per invocation, two passes
for p in 1 2; do
  for v in 4x8 8x8 8x12; do
    echo "== $v pass $p $(date -u +%T)" >> "$R/peak.txt"
    NXVK_KERNEL_STATS=1 bundle-micro/nxvk-$v bench peak --min-time 1 --bytes 1M >> "$R/peak.txt" 2>&1
  done
done
# 2. the odd shape beside the square of the same work (1280^3 = 2.10 GFLOP x 2), two passes, and cuBLAS
for p in 1 2; do
  $B bench matmul --variant tiled --sizes 1024,1280,2048,4096 --shapes 1000x3000x700 --dtype f32 \
    --min-time 0.3 --warmup 0.3 --json "$R/matmul-$p.json" > "$R/matmul-$p.txt" 2>&1
done
python3 bench/compare_torch.py --nxvk-json "$R/matmul-1.json" --min-time 0.3 --out "$R/compare.json" \
  > "$R/compare.txt" 2>&1
date -u +%FT%TZ >> "$R/date.txt"
kill $smi
