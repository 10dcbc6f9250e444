#!/bin/sh
# scripts/gpu-tune-ew.sh - elementwise and reduction layouts at 16M and 64M
# elements, f32 and f64, against PyTorch in the same invocation: add and exp
# with a workgroup's round grid-strided or blocked (NXVK_EW_BLOCKED) at
# unroll 4 and 8; sum in two passes or folded (NXVK_REDUCE_FOLD) with 1024
# or 2048 partials (NXVK_REDUCE_PARTIALS).  Each configuration is checked by
# the quick conformance of its ops first; two passes over the cells, the
# second in reverse order.  Through the bundle (scripts/bundle.sh); logs go
# to $OUT (default /tmp).
B=${B:-bundle/run.sh}
O=${OUT:-/tmp}
T="--sizes 16M,64M --dtype f32,f64 --min-time 0.3 --warmup 0.3 --cpu-limit 0.5"
EW="blocked0-u4:NXVK_EW_BLOCKED=0,NXVK_EW_UNROLL=4 blocked1-u4:NXVK_EW_BLOCKED=1,NXVK_EW_UNROLL=4
blocked1-u8:NXVK_EW_BLOCKED=1,NXVK_EW_UNROLL=8 blocked0-u8:NXVK_EW_BLOCKED=0,NXVK_EW_UNROLL=8"
RED="fold0-p2048:NXVK_REDUCE_FOLD=0,NXVK_REDUCE_PARTIALS=2048
fold0-p1024:NXVK_REDUCE_FOLD=0,NXVK_REDUCE_PARTIALS=1024
fold1-p1024:NXVK_REDUCE_FOLD=1,NXVK_REDUCE_PARTIALS=1024
fold1-p2048:NXVK_REDUCE_FOLD=1,NXVK_REDUCE_PARTIALS=2048"
cell() {   # cell PASS NAME:VAR=V,VAR=V OPS
  name=${2%%:*}; vars=$(echo "${2#*:}" | tr , ' ')
  [ "$1" = 1 ] && echo "$name conformance: $(env $vars $B conformance --quick --op "$3" 2>&1 | tail -n 1)"
  env $vars $B bench ops --ops "$3" $T --json "$O/$name-$1.json" > "$O/$name-$1.txt" 2>&1 ||
    echo "$name pass $1: bench failed (exit $?)"
}
for c in $EW; do cell 1 "$c" add,exp; done
for c in $RED; do cell 1 "$c" sum; done
for c in $(echo $RED | tr ' ' '\n' | tac); do cell 2 "$c" sum; done
for c in $(echo $EW | tr ' ' '\n' | tac); do cell 2 "$c" add,exp; done
python3 bench/compare_torch.py --nxvk-json "$O/blocked0-u4-1.json" --nxvk-json "$O/fold0-p2048-1.json" \
  --min-time 0.3 --out "$O/compare.json" > "$O/compare.txt" 2>&1 || echo "compare_torch failed"
python3 - "$O" <<'PY'
import glob, json, os, sys
o = sys.argv[1]
torch = {}
try:
    for r in json.load(open(os.path.join(o, "compare.json")))["torch"]["results"]:
        torch[(r["name"], r["dtype"], r["size"])] = r.get("gbps")
except Exception as e:
    print("no PyTorch figures:", e)
cells = {}
for f in sorted(glob.glob(os.path.join(o, "*-[12].json"))):
    name, p = os.path.basename(f)[:-5].rsplit("-", 1)
    for r in json.load(open(f))["results"]:
        cells.setdefault((r["name"], r["dtype"], r["size"]), {}).setdefault(name, []).append(r["gbps"])
for key in sorted(cells):
    t = torch.get(key)
    print("%-4s %s %5dM  PyTorch %s" % (key[0], key[1], key[2] >> 20, "%.0f" % t if t else "?"))
    for name, v in sorted(cells[key].items()):
        print("   %-12s %s%s" % (name, " ".join("%6.0f" % x for x in v),
                                "  ratio %s" % " ".join("%.3f" % (x / t) for x in v) if t else ""))
PY
