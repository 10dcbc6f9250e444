for f in .gl/*.deb; do dpkg -x $f /; done; ldconfig; export VK_DRIVER_FILES=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json
B=bundle/run.sh; R=$OUT/r; mkdir -p $R
T="--min-time 0.3 --warmup 0.3 --cpu-limit 0.5"
$B bench ops --ops exp,add --sizes 64M --dtype f32 $T --json $R/alone.json > $R/alone.txt 2>&1
NXVK_POOL_NO_EVICT=1 $B bench ops --ops add,exp,sum --dtype f32,f64 $T --json $R/noevict.json > $R/noevict.txt 2>&1
$B bench ops --ops add,exp,sum --dtype f32,f64 $T --json $R/evict.json > $R/evict.txt 2>&1
NXVK_EW_BLOCKED=0 NXVK_EW_UNROLL=4 $B bench ops --ops add,exp,sum --dtype f32,f64 $T --json $R/evict-b0u4.json > $R/evict-b0u4.txt 2>&1
python3 bench/compare_torch.py --nxvk-json $R/evict.json --min-time 0.3 --out $R/compare.json > $R/compare.txt 2>&1
python3 - $R <<'PY'
import json, sys, os
R = sys.argv[1]
def load(n):
    return {(r["name"], r["dtype"], r["size"]): r for r in json.load(open(os.path.join(R, n)))["results"]}
t = {(r["name"], r["dtype"], r["size"]): r for r in json.load(open(os.path.join(R, "compare.json")))["torch"]["results"] if r["mode"] == "ops"}
runs = [(n, load(n + ".json")) for n in ("alone", "noevict", "evict", "evict-b0u4")]
print("op dtype size | torch GB/s | per run: median GB/s (ratio) [min us/median us]")
for k in sorted(runs[2][1]):
    if k[2] < (1 << 20): continue
    line = "%s %s %dM | %.0f |" % (k[0], k[1], k[2] >> 20, t[k]["gbps"] if k in t else 0)
    for n, d in runs:
        if k in d:
            r = d[k]; g = r["gpu_ns"]
            line += " %s %.0f (%.3f) [%.1f/%.1f]" % (n, r["gbps"], r["gbps"] / t[k]["gbps"] if k in t else 0, g["min"] / 1e3, g["median"] / 1e3)
    print(line)
PY
cd $OUT && tar czf exp3.tgz r && rm -rf r
