#!/bin/sh
# scripts/gpu-final.sh - the figures bench/RESULTS.md keeps, from one run on a
# GPU machine (through scripts/bundle.sh's bundle).
#   scripts/gpu-final.sh bench OUTDIR: device info, the add check, bench peak,
#     the matmul ladder (every variant) with odd shapes, the op sweep, the
#     PyTorch anchor for all of them in the same invocation (compare_torch.py),
#     fusion and the port's latency;
#   scripts/gpu-final.sh check OUTDIR: the full conformance suite (the op
#     table split over 8 processes, one report each) and stress all.
B=${B:-bundle/run.sh}
what=${1:?bench or check}
R=${2:?outdir}
mkdir -p "$R"
export NXVK_CACHE_DIR="$R/cache"
step() { echo "== $*"; date -u +%FT%TZ; }
if [ "$what" = bench ]; then
  step info; $B info --json > "$R/info.json"; $B info > "$R/info.txt"
  step add; $B run --op add --check '{"dtype":"f32","shape":[2,3],"data":[1,2,3,4,5,"nan"]}' \
    '{"dtype":"f32","shape":[3],"data":[10,20,"inf"]}' > "$R/add.txt" 2>&1
  step bench peak; $B bench peak --min-time 0.3 --json "$R/peak.json" > "$R/peak.txt" 2>&1
  step coopmat; $B conformance --quick --op dot --dtype f32 > "$R/conformance-dot-f32.tap" 2>&1
  tail -n 4 "$R/conformance-dot-f32.tap"
  step bench matmul
  mm() { $B bench matmul --shapes 4095x4095x4095,1000x3000x700,8x1024x1024x1024 --dtype f32,f64 \
    --min-time 0.3 --warmup 0.3 --json "$R/matmul.json" --plot "$R/ladder.svg" "$@"; }
  if ! mm > "$R/matmul.txt" 2>&1; then   # a wrong variant fails the bench: keep its output, time the rest
    mv "$R/matmul.txt" "$R/matmul-failed.txt"; tail -n 3 "$R/matmul-failed.txt"
    mm --variant tiled,vec,vec1,regtile,naive > "$R/matmul.txt" 2>&1
  fi
  step bench ops
  $B bench ops --ops add,exp,sum --dtype f32,f64 --min-time 0.3 --warmup 0.3 --cpu-limit 0.5 \
    --json "$R/ops.json" --plot "$R/sweep.svg" > "$R/ops.txt" 2>&1
  step torch
  python3 bench/compare_torch.py --nxvk-json "$R/matmul.json" --nxvk-json "$R/ops.json" --min-time 0.3 \
    --out "$R/compare.json" > "$R/compare.txt" 2>&1
  step fusion; $B bench fusion --min-time 0.3 > "$R/fusion.txt" 2>&1
  step port; PYTHONUNBUFFERED=1 NXVK="$PWD/bundle/nxvk" LD_LIBRARY_PATH="$PWD/bundle/lib" timeout 60 \
    python3 tests/port/test_port.py --latency > "$R/port-latency.txt" 2>&1
else
  step conformance
  mkdir -p "$R/conformance"
  ops=$($B run --list-ops | awk '{print $1}')
  for i in 0 1 2 3 4 5 6 7; do
    part=$(echo "$ops" | awk -v i=$i 'NR % 8 == i' | paste -sd, -)
    timeout ${CONF_TIMEOUT:-400} $B conformance --op "$part" --json "$R/conformance/part$i.json" \
      > "$R/conformance/part$i.tap" 2>&1 &
  done
  wait
  tail -n 1 "$R"/conformance/part*.tap
  step stress; timeout 150 $B stress all --quick --json "$R/stress-all.json" > "$R/stress-all.txt" 2>&1
  tail -n 3 "$R/stress-all.txt"
fi
step done
