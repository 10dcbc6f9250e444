#!/bin/sh
# scripts/gpu-final.sh - the figures bench/RESULTS.md keeps, from one run on a
# GPU machine (through scripts/bundle.sh's bundle).
#   scripts/gpu-final.sh bench OUTDIR: device info, the add check, bench peak,
#     the matmul ladder (every variant) with odd shapes, the op sweep, the
#     PyTorch anchor for all of them in the same invocation (compare_torch.py),
#     fusion and the port's latency;
#   scripts/gpu-final.sh check OUTDIR: the full conformance suite (one
#     process and report per op, JOBS at a time) and stress all.
B=${B:-bundle/run.sh}
what=${1:?bench or check}
R=${2:?outdir}
mkdir -p "$R"
export NXVK_CACHE_DIR="$R/cache"
step() { echo "== $*"; date -u +%FT%TZ; }
if [ "$what" = bench ]; then
  # the SM clock beside the figures (bench_busy.c says why it matters)
  if command -v nvidia-smi > /dev/null; then
    nvidia-smi --query-gpu=timestamp,clocks.sm,clocks.mem,power.draw,temperature.gpu,clocks_throttle_reasons.active \
      --format=csv,noheader -lms 100 > "$R/smi.csv" 2>&1 &
    smi=$!
  fi
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
  [ -n "${smi:-}" ] && kill "$smi"
else
  step conformance
  # one process per op (dot, the slowest, one per dtype), JOBS at a time:
  # the CPU reference is the cost, the GPU queue is shared
  mkdir -p "$R/conformance"
  $B run --list-ops | awk '{print $1}' | sed 's/^dot$/dot:f32\ndot:f64/' |
    xargs -P "${JOBS:-$(nproc)}" -I{} sh -c '
      op=${1%%:*}; dt=${1#*:}; name=$(echo "$1" | tr : -)
      if [ "$dt" = "$1" ]; then set -- --op "$op"; else set -- --op "$op" --dtype "$dt"; fi
      timeout "${CONF_TIMEOUT:-420}" '"$B"' conformance "$@" --json "'"$R"'/conformance/$name.json" \
        > "'"$R"'/conformance/$name.tap" 2>&1
      echo "$name exit $?" >> "'"$R"'/conformance/exit-status.txt"' _ {}
  # the closing line of each report, summed: a report with no closing line timed out
  for f in "$R"/conformance/*.tap; do
    last=$(tail -n 1 "$f")
    case "$last" in *" passed, "*" failed"*) echo "$last" ;; *) echo "0 passed, 1 failed ($(basename "$f") has no verdict)" ;; esac
  done | awk '{p += $1; f += $3; s += $5} END {print "conformance, all reports: " p " passed, " f " failed, " s " skipped"}' |
    tee "$R/conformance/summary.txt"
  step stress; timeout 150 $B stress all --quick --json "$R/stress-all.json" > "$R/stress-all.txt" 2>&1
  tail -n 3 "$R/stress-all.txt"
fi
step done
