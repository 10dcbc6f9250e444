#!/bin/sh
# scripts/gpu-final.sh - the figures bench/RESULTS.md keeps, from one run on a
# GPU machine (through scripts/bundle.sh's bundle): device info, the add
# check, the bench modes with the PyTorch anchor in the same invocation,
# fusion, conformance --quick, stress race, and the port's latency.
# Usage: scripts/gpu-final.sh OUTDIR
B=${B:-bundle/run.sh}
R=${1:?outdir}
mkdir -p "$R"
export NXVK_CACHE_DIR="$R/cache"
step() { echo "== $*"; date -u +%FT%TZ; }
step info; $B info --json > "$R/info.json"; $B info > "$R/info.txt"
step add; $B run --op add --check '{"dtype":"f32","shape":[2,3],"data":[1,2,3,4,5,"nan"]}' '{"dtype":"f32","shape":[3],"data":[10,20,"inf"]}' > "$R/add.txt" 2>&1
step bench matmul
$B bench matmul --sizes 1024,2048,4096 --dtype f32,f64 --min-time 0.3 --json "$R/matmul.json" --plot "$R/ladder.svg" > "$R/matmul.txt" 2>&1
step bench ops
$B bench ops --ops add,exp,sum --sizes 1K,16M,64M --dtype f32,f64 --min-time 0.3 --cpu-limit 1 --json "$R/ops.json" --plot "$R/sweep.svg" > "$R/ops.txt" 2>&1
step torch
python3 bench/compare_torch.py --nxvk-json "$R/matmul.json" --out "$R/compare_matmul.json" > "$R/compare_matmul.txt" 2>&1
python3 bench/compare_torch.py --nxvk-json "$R/ops.json" --out "$R/compare_ops.json" > "$R/compare_ops.txt" 2>&1
step fusion; $B bench fusion --min-time 0.3 > "$R/fusion.txt" 2>&1
step conformance; timeout 120 $B conformance --quick --json "$R/conformance-quick.json" > "$R/conformance-quick.tap" 2>&1
step stress; timeout 60 $B stress race --json "$R/stress-race.json" > "$R/stress-race.txt" 2>&1
step port; PYTHONUNBUFFERED=1 NXVK="$PWD/bundle/nxvk" LD_LIBRARY_PATH="$PWD/bundle/lib" timeout 60 python3 tests/port/test_port.py --latency > "$R/port-latency.txt" 2>&1
step done
