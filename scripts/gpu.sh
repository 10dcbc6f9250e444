#!/bin/sh
# scripts/gpu.sh - the GPU bench and check, end to end, in one run on a GPU
# machine.  The figures bench/RESULTS.md keeps come from `bench`; a release
# is checked with `check`.
#
#   scripts/gpu.sh bench OUTDIR   device info, an add --check, bench peak, the
#       quick dot f32 conformance (coopmat included where the device has it),
#       the matmul ladder (every variant) with odd shapes, the op sweep (add,
#       exp, sum), sort / cumulative_sum / max pooling at 1M and 16M, PyTorch's
#       figures for the same cases in the same run
#       (bench/compare_torch.py, where torch is installed), gather and
#       scatter at 16M against PyTorch (compare-index.txt), fusion, small-op
#       throughput from 1, 16 and 100 threads and 100 port clients (concurrency,
#       and its variants: NXVK_WAIT_*, NXVK_LAZY_BARRIERS, NXVK_GROUP_SUBMIT),
#       transfers (import against staging, PyTorch pinned and pageable, a
#       64M add end to end: compare-transfers.txt), and the port's
#       latency; on NVIDIA the SM clock sampled beside them (smi.csv).
#   scripts/gpu.sh check OUTDIR   the full conformance suite (one process and
#       JSON report per op, JOBS at a time, each within CONF_TIMEOUT seconds)
#       and stress all --quick; the summed verdict is OUTDIR/conformance/summary.txt.
#   scripts/gpu.sh coopmat OUTDIR   dot on cooperative matrices (issue 30) in
#       one run: device info, bench peak (the f16 and int8 tensor-core rates
#       beside the FMA rows), the quick dot conformance in f32, f16 and bf16, the
#       default layout on f32, f16 and bf16 tensors at 1024-8192 and the ggml-vulkan
#       shape 4096x14336x512 (M x K x N: 4096 x 512 out, K 14336), PyTorch's
#       f16 and bf16 matmul at the same sizes (compare-coopmat.txt), then every block
#       layout of COOPMAT_LAYOUTS (NXVK_DOT_COOPMAT and, after a slash, its
#       stages, prefetch and group: nxvk(1); 20 by default) on f16 at
#       4096, 8192 and that shape, summed up in sweep.txt (GFLOPS per layout),
#       and that shape with K split in 1, 2, 3, 4 and 6 (NXVK_DOT_COOPMAT_SPLIT).
#   scripts/gpu.sh nx OUTDIR   the Elixir benches through Nxvk.Backend: Nx ops
#       against Nx.BinaryBackend and `nxvk bench` (1K, 1M, 16M: nx_ops.md;
#       the 1K add again with early replies and busy-waiting schedulers:
#       nx_ops_latency.md),
#       the defn MLP step (mlp.md), and Nx.Serving over NX_DEVICES (default:
#       0,1 where nvidia-smi lists two GPUs or more, else 0; serving.txt);
#       NX_SIZES, NX_REQUESTS and NX_WIDTH change 1K,1M,16M, 20000 and 1024.  On
#       a machine without Erlang/Elixir it runs on the runtime that
#       `scripts/bundle.sh --nx` packed in bundle/nx.tar.gz (carry bundle/),
#       unpacked in bundle/nx, as:
#         tar xzf bundle/nx.tar.gz -C bundle
#         cd bundle/nx/nxvk/elixir && ../../with-env mix run bench/nx_ops.exs --sizes 1K,1M,16M
#         ../../with-env mix run bench/serving.exs --devices 0,1 --requests 20000 --width 1024
#       else on the system's mix in elixir/.  versions.txt says which erl ran.
#   scripts/gpu.sh conv OUTDIR   conv2d of a ResNet-50 stage (N=32, 64 -> 64,
#       56x56, 3x3, padding 1) in f32: `bench ops --ops conv --sizes 6272K` with
#       the rule's tile and each NXVK_CONV_GEMM candidate (conv-TILE.txt), in f16
#       on cooperative matrices and with NXVK_CONV_COOPMAT=0 (conv-f16-*.txt), then
#       PyTorch's conv2d (cuDNN, TF32 off) against each run, in that order
#       (compare-conv.txt; bench/NOTES.md "conv f32").
#
# B is the nxvk to run: by default bundle/run.sh where scripts/bundle.sh made
# one (a GPU machine with a driver but no compiler), else ./nxvk.  Every
# output, the kernel caches included, goes under OUTDIR; keep the folders
# outside the repository.  Exit status: 0 when every step ran, 2 on usage.
if [ -z "${B:-}" ]; then
  if [ -x bundle/run.sh ]; then B=bundle/run.sh; else B=./nxvk; fi
fi
what=${1:-}
R=${2:-}
case "$what" in
bench|check|nx|conv|coopmat) [ -n "$R" ] || { echo "usage: scripts/gpu.sh bench|check|nx|conv|coopmat OUTDIR" >&2; exit 2; } ;;
*) echo "usage: scripts/gpu.sh bench|check|nx|conv|coopmat OUTDIR" >&2; exit 2 ;;
esac
mkdir -p "$R"
R=$(cd "$R" && pwd)
export NXVK_CACHE_DIR="$R/cache"
step() { echo "== $*"; date -u +%FT%TZ; }
if [ "$what" = nx ]; then
  if [ -f bundle/nx.tar.gz ] && [ ! -x bundle/nx/with-env ]; then tar xzf bundle/nx.tar.gz -C bundle; fi
  if [ -x bundle/nx/with-env ]; then
    cd bundle/nx/nxvk/elixir; W=../../with-env
  else
    cd elixir; W=; export NXVK_BIN="${NXVK_BIN:-$(cd .. && pwd)/nxvk}"
  fi
  if [ -z "${NX_DEVICES:-}" ]; then
    NX_DEVICES=0
    if command -v nvidia-smi > /dev/null && [ "$(nvidia-smi -L 2>/dev/null | grep -c '^GPU')" -ge 2 ]; then NX_DEVICES=0,1; fi
  fi
  step versions
  $W sh -c 'echo "erl: $(command -v erl), elixir: $(command -v elixir), mix: $(command -v mix), NXVK_BIN: $NXVK_BIN"; erl -version 2>&1' \
    > "$R/versions.txt" 2>&1
  $W mix run -e 'IO.puts("root_dir #{:code.root_dir()}, Elixir #{System.version()}, OTP #{System.otp_release()}")' \
    >> "$R/versions.txt" 2>&1
  cat "$R/versions.txt"
  step nx_ops; $W mix run bench/nx_ops.exs --sizes "${NX_SIZES:-1K,1M,16M}" > "$R/nx_ops.md" 2>&1; tail -n 3 "$R/nx_ops.md"
  # the 1K add under the latency knobs (early replies, the default, against
  # replies after the run, the port's wait settings: bench/add_latency.exs),
  # then with the VM's schedulers busy-waiting (elixir/README.md)
  step nx_ops_latency
  $W mix run bench/add_latency.exs > "$R/nx_ops_latency.md" 2>&1
  ELIXIR_ERL_OPTIONS="+sbwt very_long +swt very_low" $W mix run bench/add_latency.exs --variants defaults,sync \
    >> "$R/nx_ops_latency.md" 2>&1
  grep '^|' "$R/nx_ops_latency.md" | grep -v -- '| ---' | cut -c1-160
  step mlp; $W mix run bench/mlp.exs > "$R/mlp.md" 2>&1; tail -n 3 "$R/mlp.md"
  step serving "($NX_DEVICES)"
  $W mix run bench/serving.exs --devices "$NX_DEVICES" --requests "${NX_REQUESTS:-20000}" --width "${NX_WIDTH:-1024}" \
    > "$R/serving.txt" 2>&1
  tail -n 3 "$R/serving.txt"
elif [ "$what" = conv ]; then
  for t in rule 128,8,2,2,8 256,16,2,1,8 256,16,2,2,8; do
    step conv "$t"
    g=$t; [ "$t" = rule ] && g=
    NXVK_CONV_GEMM=$g $B bench ops --ops conv --sizes 6272K --dtype f32 --min-time 0.3 --warmup 0.3 \
      --cpu-limit 0.5 --json "$R/conv-$t.json" > "$R/conv-$t.txt" 2>&1
    tail -n 1 "$R/conv-$t.txt"
  done
  # f16: cooperative matrices (the rule), then the old path (f32 copies through conv_gemm)
  for t in rule 0; do
    step conv f16 "$t"
    g=$t; [ "$t" = rule ] && g=
    NXVK_CONV_COOPMAT=$g $B bench ops --ops conv --sizes 6272K --dtype f16 --min-time 0.3 --warmup 0.3 \
      --cpu-limit 0.5 --json "$R/conv-f16-$t.json" > "$R/conv-f16-$t.txt" 2>&1
    tail -n 1 "$R/conv-f16-$t.txt"
  done
  step torch conv   # the conv rows in the loops' order: f32 rule, the candidates, f16 rule, f16 old path
  python3 bench/compare_torch.py --nxvk-json "$R/conv-rule.json" --nxvk-json "$R/conv-128,8,2,2,8.json" \
    --nxvk-json "$R/conv-256,16,2,1,8.json" --nxvk-json "$R/conv-256,16,2,2,8.json" \
    --nxvk-json "$R/conv-f16-rule.json" --nxvk-json "$R/conv-f16-0.json" \
    --conv --dtype f32,f16 --sizes 1K --matmul-sizes "" \
    --min-time 0.3 --out "$R/compare-conv.json" > "$R/compare-conv.txt" 2>&1
  tail -n 8 "$R/compare-conv.txt"
elif [ "$what" = coopmat ]; then
  step info; $B info --json > "$R/info.json"; $B info > "$R/info.txt"
  grep -i -A3 "cooperative" "$R/info.txt" | head -n 12
  step bench peak; $B bench peak --min-time 0.3 --json "$R/peak.json" > "$R/peak.txt" 2>&1
  grep -E "^(fma|coopmat)|coopmat" "$R/peak.txt"
  for dt in f32 f16 bf16; do
    step conformance dot $dt
    $B conformance --quick --op dot --dtype $dt > "$R/conformance-dot-$dt.tap" 2>&1; tail -n 2 "$R/conformance-dot-$dt.tap"
  done
  step coopmat default layout
  $B bench matmul --variant coopmat --dtype f32,f16,bf16 --sizes 1024,2048,4096,8192 --shapes 4096x14336x512 \
    --min-time 0.3 --warmup 0.3 --json "$R/coopmat.json" > "$R/coopmat.txt" 2>&1
  tail -n 24 "$R/coopmat.txt"
  step torch f16 bf16
  python3 bench/compare_torch.py --nxvk-json "$R/coopmat.json" --min-time 0.3 --out "$R/compare-coopmat.json" \
    > "$R/compare-coopmat.txt" 2>&1
  tail -n 28 "$R/compare-coopmat.txt"
  # WM,WN,FR,FC,BK[,FM,FN,FK][/sS][/pP][/gG]: WM x WN subgroups of FR x FC
  # fragments; the block is (WM FR FM) x (WN FC FN), k steps of BK; then
  # NXVK_DOT_COOPMAT_STAGES=S, _PREFETCH=P, _GROUP=G; a layout the device
  # cannot hold (shared memory, fragment shape) is refused and listed so
  step coopmat sweep
  layouts=${COOPMAT_LAYOUTS:-2,2,4,4,32 2,2,4,4,16 2,4,4,2,32 4,2,2,4,32 2,4,4,4,16 4,2,4,4,16 1,4,8,2,32 4,4,2,2,32 2,2,2,4,32 2,2,4,2,32 2,2,2,2,64 4,2,4,4,32 2,2,4,8,32,16,8,16 2,2,4,4,32/p2 2,4,4,2,32/p2 2,2,4,4,64/s1 4,2,4,4,32/s1 2,4,4,4,32/s1 4,2,4,4,16/p2 2,4,4,2,32/g8}
  cm_env() { # a layout entry -> its variables
    local e="NXVK_DOT_COOPMAT=${1%%/*}" p rest=${1#*/}
    [ "$rest" = "$1" ] && rest=
    for p in ${rest//\// }; do
      case $p in
      s*) e="$e NXVK_DOT_COOPMAT_STAGES=${p#s}" ;;
      p*) e="$e NXVK_DOT_COOPMAT_PREFETCH=${p#p}" ;;
      g*) e="$e NXVK_DOT_COOPMAT_GROUP=${p#g}" ;;
      esac
    done
    echo "$e"
  }
  for L in $layouts; do
    f=$(echo "$L" | tr ,/ __)
    env $(cm_env "$L") $B bench matmul --variant coopmat --dtype f16 --sizes 4096,8192 --shapes 4096x14336x512 \
      --min-time 0.3 --warmup 0.2 --json "$R/sweep-$f.json" > "$R/sweep-$f.txt" 2>&1
    echo "$L exit $?"
  done
  # split K on the ggml shape (128 blocks of 128 x 128 on 132 SMs: the rule splits it in 2)
  for S in 1 2 3 4 6; do
    step coopmat split $S
    NXVK_DOT_COOPMAT_SPLIT=$S $B bench matmul --variant coopmat --dtype f16 --sizes 1024 --shapes 4096x14336x512 \
      --min-time 0.3 --warmup 0.2 --json "$R/split-$S.json" > "$R/split-$S.txt" 2>&1
    grep -E "4096x14336x512" "$R/split-$S.txt" | head -n 2
  done
  python3 - "$R" $layouts > "$R/sweep.txt" <<'PY'
import json, os, sys
r = sys.argv[1]
print("%-22s %10s %10s %16s   (f16 GFLOPS, kernel time; - = refused or failed: sweep-LAYOUT.txt says why)"
      % ("layout", "4096", "8192", "4096x14336x512"))
for layout in sys.argv[2:]:
    path = os.path.join(r, "sweep-%s.json" % layout.replace(",", "_").replace("/", "_"))
    cells = {}
    try:
        for x in json.load(open(path))["results"]:
            key = x.get("dims") if x["mode"] == "shapes" else str(x["size"])
            if x.get("gflops"):
                cells[key] = x["gflops"]
    except (OSError, ValueError, KeyError):
        pass
    print("%-22s %10s %10s %16s" % (layout, *("%.0f" % cells[k] if k in cells else "-"
                                            for k in ("4096", "8192", "4096x14336x512"))))
PY
  cat "$R/sweep.txt"
elif [ "$what" = bench ]; then
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
  step conformance dot f32; $B conformance --quick --op dot --dtype f32 > "$R/conformance-dot-f32.tap" 2>&1
  tail -n 4 "$R/conformance-dot-f32.tap"
  step bench matmul
  # the skinny shapes (matrix-vector, n = 16, m = 1 and 16) run dot_skinny.comp (bench/NOTES.md)
  mm() { $B bench matmul --shapes 4095x4095x4095,1000x3000x700,8x1024x1024x1024,4096x4096x1,8192x8192x1,1x4096x4096,1000x3000x16,4096x4096x16,16x4096x4096 --dtype f32,f64 \
    --min-time 0.3 --warmup 0.3 --json "$R/matmul.json" --plot "$R/ladder.svg" "$@"; }
  if ! mm > "$R/matmul.txt" 2>&1; then   # a wrong variant fails the bench: keep its output, time the rest
    mv "$R/matmul.txt" "$R/matmul-failed.txt"; tail -n 3 "$R/matmul-failed.txt"
    mm --variant tiled,vec,vec1,regtile,naive,skinny > "$R/matmul.txt" 2>&1
  fi
  step bench ops
  $B bench ops --ops add,exp,sum --dtype f32,f64 --min-time 0.3 --warmup 0.3 --cpu-limit 0.5 \
    --json "$R/ops.json" --plot "$R/sweep.svg" > "$R/ops.txt" 2>&1
  step torch
  python3 bench/compare_torch.py --nxvk-json "$R/matmul.json" --nxvk-json "$R/ops.json" --min-time 0.3 \
    --out "$R/compare.json" > "$R/compare.txt" 2>&1
  step bench ordering
  # sort, cumulative_sum (one row of n), max and average pooling (window_max,
  # window_sum 2x2/2 on 4096 x 4096 at 16M) against torch.sort, torch.cumsum,
  # max_pool2d and avg_pool2d
  $B bench ops --ops sort,cumulative_sum,window_max,window_sum --dtype f32 --sizes 1M,16M --min-time 0.3 --warmup 0.3 \
    --cpu-limit 0.5 --json "$R/ordering.json" > "$R/ordering.txt" 2>&1
  python3 bench/compare_torch.py --nxvk-json "$R/ordering.json" --ops sort,cumulative_sum,window_max,window_sum \
    --matmul-sizes "" --min-time 0.3 --out "$R/compare-ordering.json" > "$R/compare-ordering.txt" 2>&1
  tail -n 8 "$R/compare-ordering.txt"
  step gather and scatter   # 16M elements, n uniform indices: against torch index_select/gather/index_add/index_put
  ix=take,gather,indexed_add,indexed_put
  $B bench ops --ops $ix --sizes 16M --dtype f32 --min-time 0.3 --warmup 0.3 --cpu-limit 0.5 \
    --json "$R/index.json" > "$R/index.txt" 2>&1
  python3 bench/compare_torch.py --nxvk-json "$R/index.json" --ops $ix --matmul-sizes "" --min-time 0.3 \
    --out "$R/compare-index.json" > "$R/compare-index.txt" 2>&1
  tail -n 8 "$R/compare-index.txt"
  step fusion; $B bench fusion --min-time 0.3 > "$R/fusion.txt" 2>&1
  step concurrency; $B bench concurrency --min-time 1 --json "$R/concurrency.json" > "$R/concurrency.txt" 2>&1
  step concurrency variants   # threads only: every thread polling, none, lazy barriers, no group commit
  for v in NXVK_WAIT_SPINNERS=1024 NXVK_WAIT_SPIN_US=0 NXVK_LAZY_BARRIERS=1 NXVK_GROUP_SUBMIT=0; do
    env "$v" $B bench concurrency --min-time 1 --clients 0 > "$R/concurrency-$v.txt" 2>&1
    grep -E '^add ' "$R/concurrency-$v.txt" | sed "s/^/$v: /"
  done
  for op in add sum cumulative_sum; do   # lazy barriers must change no result
    NXVK_LAZY_BARRIERS=1 $B conformance --quick --op $op > "$R/lazy-barriers-$op.tap" 2>&1
    echo "NXVK_LAZY_BARRIERS=1 conformance $op: $(tail -n 1 "$R/lazy-barriers-$op.tap")"
  done
  step transfers   # staging only beside bench peak's import; PyTorch pinned/pageable; a 64M add end to end
  NXVK_XFER_IMPORT=0 $B bench peak --min-time 0.3 --json "$R/peak-staging.json" > "$R/peak-staging.txt" 2>&1
  $B bench ops --ops add --sizes 64M --dtype f32 --min-time 0.3 --cpu-limit 0.5 --json "$R/add64m.json" \
    > "$R/add64m.txt" 2>&1
  python3 bench/compare_torch.py --nxvk-json "$R/peak.json" --nxvk-json "$R/add64m.json" --transfers --ops add \
    --matmul-sizes "" --min-time 0.3 --out "$R/compare-transfers.json" > "$R/compare-transfers.txt" 2>&1
  tail -n 4 "$R/compare-transfers.txt"
  step port
  if [ "$B" = bundle/run.sh ]; then nx="$PWD/bundle/nxvk"; else nx=$(command -v "$B" || echo "$B"); fi
  PYTHONUNBUFFERED=1 NXVK="$nx" LD_LIBRARY_PATH="$PWD/bundle/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" timeout 60 \
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
