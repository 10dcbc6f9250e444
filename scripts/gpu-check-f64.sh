#!/bin/sh
# scripts/gpu-check-f64.sh - f64 dot on a GPU machine, through the bundle
# (scripts/bundle.sh): the full dot f64 conformance, then the default ladder
# with the odd shapes on the 16 x 16 grid (NXVK_DOT_NT=256) and with the
# default choice (the 8 x 16 grid for products that take the largest tile),
# with the driver's register counts, and DGEMM through PyTorch in the same
# run.  Output goes to $OUT/f64 (OUT default /tmp).  The run of 2026-11-24
# (bench/hosts/h200-2026-11-24-f64-grid/, command.sh) did the same steps.
B=${B:-bundle/run.sh}
R=${OUT:-/tmp}/f64
mkdir -p "$R"
export NXVK_CACHE_DIR="$R/cache"
$B info > "$R/info.txt"; head -3 "$R/info.txt"
$B conformance --op dot --dtype f64 --json "$R/conformance-dot-f64.json" > "$R/conformance-dot-f64.tap" 2>&1
tail -n 1 "$R/conformance-dot-f64.tap"
for g in 256 default; do
  if [ $g = 256 ]; then export NXVK_DOT_NT=256; else unset NXVK_DOT_NT; fi
  NXVK_KERNEL_STATS=1 $B bench matmul --variant tiled --dtype f64 \
    --shapes 4095x4095x4095,1000x3000x700,8x1024x1024x1024 --min-time 0.3 --warmup 0.3 \
    --json "$R/matmul-$g.json" > "$R/matmul-$g.txt" 2> "$R/matmul-$g-stats.txt"
  echo "== grid $g"; grep -E "^dot" "$R/matmul-$g.txt"; grep -E "^dot_vec" "$R/matmul-$g-stats.txt"
done
python3 bench/compare_torch.py --nxvk-json "$R/matmul-default.json" --min-time 0.3 --out "$R/compare.json" \
  > "$R/compare.txt" 2>&1
grep -E "f64" "$R/compare.txt"
rm -rf "$R/cache"
