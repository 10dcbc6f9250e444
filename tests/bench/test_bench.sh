#!/usr/bin/env bash
# nxvk bench on the CI device (lavapipe): seconds-long runs of every mode
# prove the paths work - exit status, the table (rows flushed as they
# finish), JSON with its fields, CSV (libcsv), SVG with a polyline and min/max
# bars per series, compare of reports side by side - and that a wrong GPU
# result fails the bench.  Figures are never asserted: only that they exist and are
# ordered (min <= median <= max).
set -u
cd "$(dirname "$0")/../.."
NXVK=${NXVK:-./nxvk}
PY=/usr/bin/python3
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
. tests/tap.sh
# check DESC CMD...: ok when CMD succeeds; its output is shown when not
check() {
  local desc=$1 out
  shift
  if out=$("$@" 2>&1); then ok "$desc"; else not_ok "$desc"; echo "$out" | sed 's/^/#   /' | head -30; fi
}
# expect_status DESC STATUS CMD...: CMD's exit status must be STATUS
expect_status() {
  local desc=$1 want=$2 got
  shift 2
  "$@" >"$tmp/last.out" 2>"$tmp/last.err"
  got=$?
  if [ "$got" -eq "$want" ]; then ok "$desc"; else
    not_ok "$desc (exit $got, want $want)"
    sed 's/^/#   /' "$tmp/last.err" | head -10
  fi
}

# Python checks of the files a run wrote: json FILE MODE..., csv FILE, svg FILE JSON
cat >"$tmp/check.py" <<'PY'
import csv, json, re, sys, xml.etree.ElementTree as ET
what, path = sys.argv[1], sys.argv[2]
def fail(msg):
    print(msg)
    sys.exit(1)
if what == "json":
    d = json.load(open(path))
    for k in ("date", "command", "mode", "method", "devices", "results", "skipped"):
        if k not in d: fail("missing key %s" % k)
    if not re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ", d["date"]): fail("date not ISO 8601 UTC: %r" % d["date"])
    if not d["command"].startswith("nxvk bench"): fail("command: %r" % d["command"])
    for dev in d["devices"]:
        for k in ("name", "driver", "api"):
            if not dev.get(k): fail("device lacks %s" % k)
    modes = set(sys.argv[3:])
    seen = set(r["mode"] for r in d["results"])
    if not modes <= seen: fail("modes %s, want %s" % (sorted(seen), sorted(modes)))
    for r in d["results"]:
        stats = [r[k] for k in ("gpu_ns", "e2e_ns", "cpu_ns") if r[k] is not None]
        if not stats: fail("a result with no time: %s" % r)
        for s in stats:
            if not (0 <= s["min"] <= s["median"] <= s["max"] and s["repeats"] >= 1):
                fail("bad stat %s in %s %s" % (s, r["name"], r["size"]))
        if not r["check"]["on"]: fail("unchecked result %s" % r)
        if r["mode"] == "ops":
            if r["gpu_ns"] is None or r["e2e_ns"] is None or not r["gbps"] > 0: fail("ops row lacks kernel/e2e/GB/s: %s" % r)
            if r["cpu_ns"] is not None and not r["speedup"] > 0: fail("ops row lacks speedup: %s" % r)
        if r["mode"] == "matmul" and not (r["gflops_min"] <= r["gflops"] <= r["gflops_max"]):
            fail("matmul GFLOPS out of order: %s" % r)
    for s in d["skipped"]:
        if not s["reason"]: fail("a skip without a reason")
    print("ok")
elif what == "csv":
    rows = list(csv.reader(open(path)))
    if len(rows) < 2: fail("no data rows")
    head = rows[0]
    for k in ("device", "mode", "name", "dtype", "size", "gpu_median_ns", "gpu_min_ns", "gpu_max_ns", "gpu_repeats"):
        if k not in head: fail("header lacks %s" % k)
    for r in rows[1:]:
        if len(r) != len(head): fail("row of %d fields, header has %d" % (len(r), len(head)))
    print("ok")
elif what == "svg":
    ns = "{http://www.w3.org/2000/svg}"
    root = ET.parse(path).getroot()
    if root.tag != ns + "svg": fail("root is %s" % root.tag)
    groups = [g for g in root.iter(ns + "g") if g.get("class") == "series"]
    labels = set()
    for g in groups:
        lines = g.findall(ns + "polyline")
        if len(lines) != 1: fail("a series with %d polylines" % len(lines))
        labels.add("".join(t.text or "" for t in g.findall(ns + "text")))
    d = json.load(open(sys.argv[3]))
    want = set()
    for r in d["results"]:
        if r["mode"] == "matmul": want.add("%s %s %s" % (r["name"], r["variant"], r["dtype"]))
        if r["mode"] == "ops": want.add("%s %s" % (r["name"], r["dtype"]))
    if not want: fail("no results to draw")
    if not want <= labels: fail("series missing: %s (have %s)" % (sorted(want - labels), sorted(labels)))
    for s in want:
        pts = [g.find(ns + "polyline").get("points").split() for g in groups
               if "".join(t.text or "" for t in g.findall(ns + "text")) == s][0]
        n = sum(1 for r in d["results"] if r["mode"] in ("ops", "matmul") and
                ("%s %s %s" % (r["name"], r["variant"], r["dtype"]) == s or "%s %s" % (r["name"], r["dtype"]) == s))
        if len(pts) != n: fail("series %s has %d points, want %d" % (s, len(pts), n))
        # a min/max bar at every point: a vertical path through the point
        g = [g for g in groups if "".join(t.text or "" for t in g.findall(ns + "text")) == s][0]
        bars = [p.get("d") for p in g.findall(ns + "path") if p.get("class") == "minmax"]
        if len(bars) != n: fail("series %s has %d min/max bars for %d points" % (s, len(bars), n))
        for (px, py), d_ in zip([tuple(map(float, q.split(","))) for q in pts], bars):
            m = re.match(r"M([\d.]+) ([\d.]+)V([\d.]+)", d_)
            if not m or abs(float(m.group(1)) - px) > 0.11 or not (float(m.group(2)) + 0.11 >= py >= float(m.group(3)) - 0.11):
                fail("bar %r does not span its point %s,%s in %s" % (d_, px, py, s))
    print("ok")
PY

# ---- ops -------------------------------------------------------------------
expect_status "bench ops runs (add,exp,sum,dot at 1K,4K)" 0 \
  "$NXVK" bench ops --ops add,exp,sum,dot --sizes 1K,4K --repeat 2 \
  --json "$tmp/ops.json" --csv "$tmp/ops.csv" --plot "$tmp/ops.svg"
cp "$tmp/last.out" "$tmp/ops.out"
cp "$tmp/last.err" "$tmp/ops.err"
check "ops table has a header and a row per op and size" \
  bash -c "grep -qE '^op +dtype +size' '$tmp/ops.out' && [ \$(grep -cE '^(add|exp|sum|dot) +f32 +(1K|4K) ' '$tmp/ops.out') -eq 8 ]"
check "stderr not a terminal: plain progress lines only (no escape codes, no carriage returns)" \
  bash -c "! grep -q \$'\\r\\|\\033' '$tmp/ops.err' && ! grep -v '^nxvk bench: [0-9]* s: ' '$tmp/ops.err' | grep -q ."
# rows flushed as they finish, into a pipe; a progress line every 5 s into a pipe
# (progress is printed at a step's start, at most every 5 s, so the run must
# have steps well past 5 s for a second line: five sizes ended in 5.4-5.6 s
# on a quiet CI machine, with one line, whatever --min-time; seven sizes
# take about 10 s)
cat >"$tmp/stream.py" <<'PY'
import re, subprocess, sys, time
p = subprocess.Popen(sys.argv[1:], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, bufsize=1)
t0, rows = time.monotonic(), []
for line in p.stdout:
    if re.match(r"^add +f32 +\d", line): rows.append(time.monotonic() - t0)
err = p.stderr.read()
rc, end = p.wait(), time.monotonic() - t0
prog = [l for l in err.splitlines() if l.startswith("nxvk bench: ")]
print("exit %d, rows at %s s, end at %.1f s, progress lines %r" % (rc, ["%.1f" % t for t in rows], end, prog))
ok = rc == 0 and len(rows) == 7 and end - rows[0] > 2.0 and len(prog) >= 2 and prog[0].startswith("nxvk bench: 0 s: ")
sys.exit(0 if ok else 1)
PY
check "bench ops | pipe: each row arrives as it finishes, progress every 5 s on stderr" \
  "$PY" "$tmp/stream.py" "$NXVK" bench ops --ops add --sizes 1K,2K,4K,8K,16K,32K,64K --min-time 0.6 --warmup 0.1
check "the ops table says what 'vs cpu ref' divides (nxvk's C reference, not numpy)" \
  bash -c "grep -qE '^op +dtype +size +shape +cpu ref +kernel +min +max +e2e +vs cpu ref +GB/s' '$tmp/ops.out' &&
           grep -q 'vs cpu ref = cpu ref / kernel' '$tmp/ops.out' && grep -q 'not numpy' '$tmp/ops.out'"
check "ops JSON parses and has the fields" "$PY" "$tmp/check.py" json "$tmp/ops.json" ops
check "ops JSON holds 8 measurements with 2 repeats each" "$PY" -c "
import json; d = json.load(open('$tmp/ops.json'))
r = [x for x in d['results'] if x['mode'] == 'ops']
assert len(r) == 8, len(r)
assert all(x['gpu_ns']['repeats'] == 2 for x in r)"
check "ops CSV has a header and rows" "$PY" "$tmp/check.py" csv "$tmp/ops.csv"
check "ops SVG is XML with a polyline per op" "$PY" "$tmp/check.py" svg "$tmp/ops.svg" "$tmp/ops.json"

# ---- matmul ----------------------------------------------------------------
expect_status "bench matmul runs (every dot variant, n = 16, 32)" 0 \
  "$NXVK" bench matmul --sizes 16,32 --dtype f32 --repeat 2 --json "$tmp/mm.json" --csv "$tmp/mm.csv" \
  --plot "$tmp/mm.svg"
cp "$tmp/last.out" "$tmp/mm.out"
check "matmul table has a GFLOPS header and rows" \
  bash -c "grep -qE '^op +variant +dtype +n +kernel +GFLOPS' '$tmp/mm.out' && grep -qE '^dot +[a-z]+ +f32 +32 ' '$tmp/mm.out'"
check "matmul JSON parses and has the fields" "$PY" "$tmp/check.py" json "$tmp/mm.json" matmul
check "matmul JSON has every variant at every size" "$PY" -c "
import json; d = json.load(open('$tmp/mm.json'))
r = [x for x in d['results'] if x['mode'] == 'matmul']
v = set(x['variant'] for x in r)
assert len(v) >= 1 and len(r) == 2 * len(v), (v, len(r))
assert all(x['flops'] == 2 * x['size'] ** 3 for x in r)"
check "matmul CSV has a header and rows" "$PY" "$tmp/check.py" csv "$tmp/mm.csv"
check "matmul SVG is XML with a polyline per variant" "$PY" "$tmp/check.py" svg "$tmp/mm.svg" "$tmp/mm.json"

# ---- peak ------------------------------------------------------------------
expect_status "bench peak runs" 0 "$NXVK" bench peak --repeat 2 --bytes 1M --json "$tmp/peak.json"
cp "$tmp/last.out" "$tmp/peak.out"
check "peak table has a header" grep -qE '^measure +variant +dtype' "$tmp/peak.out"
check "peak JSON parses" "$PY" "$tmp/check.py" json "$tmp/peak.json" peak
check "peak: every measure is a result or a skip with its reason" "$PY" -c "
import json; d = json.load(open('$tmp/peak.json'))
got = set(r['name'] for r in d['results']) | set(s['name'] for s in d['skipped'] if s['reason'])
want = {'fma', 'copy', 'h2d', 'd2h', 'latency'}
assert want <= got, want - got
for r in d['results']:
    if r['name'] in ('h2d', 'd2h', 'copy'): assert r['gbps'] > 0, r
    if r['name'] == 'fma': assert r['gflops'] > 0 and r['dtype'] in ('f32', 'f64', 'f16'), r
    if r['name'] == 'latency': assert r['latency_us'] > 0, r"
check "peak: copy both ways (vkCmdCopyBuffer, the shader); f16 FMA a rate or 'not supported'; coopmat f16/int8/bf16 a checked rate or 'not supported', never 0" "$PY" -c "
import json; d = json.load(open('$tmp/peak.json'))
res, sk = d['results'], d['skipped']
assert {r['variant'] for r in res if r['name'] == 'copy'} == {'device', 'shader'}, res
copy = max(r['gbps'] for r in res if r['name'] == 'copy')
assert abs(d['devices'][0]['peak']['copy_gbps'] - copy) < 1e-9 * copy, d['devices'][0]['peak']
f16 = [r for r in res if r['name'] == 'fma' and r['dtype'] == 'f16']
f16_skip = [s for s in sk if s['name'] == 'fma' and s['dtype'] == 'f16']
assert (len(f16) == 2 and all(r['gflops'] > 0 for r in f16)) != bool(f16_skip), (f16, f16_skip)
assert all(s['reason'].startswith('not supported') for s in f16_skip), f16_skip
assert bool(f16) == d['devices'][0]['features']['f16'], 'a rate exactly where the device has shaderFloat16'
feat = d['devices'][0]['features']
for t in ('f16', 'int8', 'bf16'):
    c = [s for s in sk if s['name'] == 'coopmat' and s['dtype'] == t]
    rows = [r for r in res if r['name'] == 'coopmat' and r['dtype'] == t]
    assert (len(rows) == 1 and rows[0]['gflops'] > 0 and rows[0]['check']['on'].startswith('exact')) != (len(c) == 1), (rows, c)
    assert all(s['reason'].startswith('not supported') for s in c), c
    if t != 'bf16' and not feat['cooperative_matrix_nv']: assert c and not rows, 'a rate only where the device has NV cooperative matrices'
    if t == 'bf16': assert bool(rows) == feat['coopmat_bf16_f32'], 'a bf16 rate exactly where the device has bf16 cooperative matrices'"

# the staged path a discrete GPU takes (NXVK_STAGING=1): the device copy through
# copy_vec4.comp with a tail of 4 bytes, the transfers through staging; each
# checks its bytes (a copy that differs fails the bench)
expect_status "peak under NXVK_STAGING=1 (the discrete-GPU paths) runs, every copy checked" 0 \
  env NXVK_STAGING=1 "$NXVK" bench peak --repeat 1 --bytes 1048580 --json "$tmp/peak-staged.json"
check "peak under NXVK_STAGING=1: the device copy (shader and tail), h2d and d2h measured" "$PY" -c "
import json; d = json.load(open('$tmp/peak-staged.json'))
got = {(r['name'], r['variant']) for r in d['results'] if (r.get('gbps') or 0) > 0}
assert {('copy', 'device'), ('h2d', 'upload'), ('d2h', 'download')} <= got, got"

# bench transfers: peak's h2d and d2h alone, through the lanes (NXVK_STAGING=1, from
# 1 MiB in pieces of 1 MiB: a size that is no multiple of a piece)
expect_status "bench transfers runs (the lanes, 1 MiB pieces, 3 MiB + 4 bytes)" 0 env NXVK_STAGING=1 \
  NXVK_XFER_MIN=1M NXVK_XFER_PIECE=1M "$NXVK" bench transfers --repeat 2 --bytes 3145732 --json "$tmp/xfer.json"
check "transfers: exactly peak's h2d and d2h rows, pageable then pinned, and the memcpy rows, in GB/s" "$PY" -c "
import json; d = json.load(open('$tmp/xfer.json'))
r = d['results']
assert [(x['mode'], x['name'], x['variant']) for x in r] == [('peak', 'h2d', 'upload'), ('peak', 'd2h', 'download'),
    ('peak', 'h2d', 'pinned-upload'), ('peak', 'd2h', 'pinned-download'), ('peak', 'memcpy', 'to-pinned'),
    ('peak', 'memcpy', 'from-pinned')], r
assert all(x['gbps'] > 0 and x['size'] == 3145732 for x in r), r
# the pinned rows are the device's copy alone (NXVK_STAGING=1: the discrete-GPU path)
assert all(x['note'].endswith('; 100% of bytes by DMA') for x in r if x['variant'].startswith('pinned')), r"
expect_status "bench transfers with NXVK_XFER_PINNED=0 (pinned memory as any host memory) runs" 0 env NXVK_STAGING=1 \
  NXVK_XFER_PINNED=0 NXVK_XFER_PINNED_SPLIT=2 "$NXVK" bench transfers --repeat 1 --bytes 1M --json "$tmp/xfer0.json"
check "transfers with NXVK_XFER_PINNED=0: no byte of the pinned rows by DMA" "$PY" -c "
import json; r = json.load(open('$tmp/xfer0.json'))['results']
p = [x for x in r if x['variant'].startswith('pinned')]
assert len(p) == 2 and all(x['note'].endswith('; 0% of bytes by DMA') for x in p), p"
expect_status "transfers refuses --sizes" 2 "$NXVK" bench transfers --sizes 1K
expect_status "a bad NXVK_XFER_COPY is an error naming it" 2 env NXVK_XFER_COPY=fast "$NXVK" bench transfers --bytes 1M
check "the error names NXVK_XFER_COPY" grep -q "NXVK_XFER_COPY=fast" "$tmp/last.err"

# ---- all -------------------------------------------------------------------
expect_status "bench all runs (one size, --device all)" 0 \
  "$NXVK" bench all --ops add --sizes 1K --dtype f32 --repeat 1 --bytes 256K --device all \
  --json "$tmp/all.json" --plot "$tmp/all.svg"
check "all JSON has peak, ops and matmul results" "$PY" "$tmp/check.py" json "$tmp/all.json" peak ops matmul
check "all SVG draws the ladder and the sweep" "$PY" "$tmp/check.py" svg "$tmp/all.svg" "$tmp/all.json"
check "--device all measured every device" "$PY" -c "
import json, subprocess
d = json.load(open('$tmp/all.json'))
info = json.loads(subprocess.run(['$NXVK', 'info', '--json'], capture_output=True, text=True).stdout)
assert len(d['devices']) == len(info['devices']), (len(d['devices']), len(info['devices']))"

# ---- sizes a device cannot hold are skipped with a note, never silently ----
range=$("$PY" -c "
import json, subprocess
info = json.loads(subprocess.run(['$NXVK', 'info', '--json'], capture_output=True, text=True).stdout)
print(info['devices'][0]['limits']['max_storage_buffer_range'])")
big=$((range / 2))   # f32 elements: twice the range in bytes
expect_status "a size over the storage buffer range is skipped, not fatal" 0 \
  "$NXVK" bench ops --device 0 --ops add --sizes "1K,$big" --repeat 1 --json "$tmp/skip.json"
check "the skip is printed as a note" grep -qE '^note: ops add f32 .* skipped: ' "$tmp/last.out"
check "the skip is in the JSON" "$PY" -c "
import json; d = json.load(open('$tmp/skip.json'))
assert [s for s in d['skipped'] if s['name'] == 'add' and s['size'] == $big], d['skipped']
assert len(d['results']) == 1"

# ---- a wrong result fails the bench, and writes no file ----------------------
expect_status "a wrong GPU result fails the bench (exit 1)" 1 \
  env NXVK_TEST_INJECT=break_op:add "$NXVK" bench ops --ops add --sizes 1K --repeat 2 --json "$tmp/bad.json"
check "the failure names the op and the check" grep -q 'add f32.*wrong GPU result' "$tmp/last.err"
check "a failed bench leaves no JSON file" test ! -e "$tmp/bad.json"
expect_status "a wrong result at a sliced check size fails too" 1 \
  env NXVK_TEST_INJECT=break_op:exp "$NXVK" bench ops --ops exp --sizes 5M --repeat 1 --cpu-limit 0
check "that failure says what was checked" grep -q 'check: first 65536 elements' "$tmp/last.err"

# ---- matmul --shapes and --variant ---------------------------------------------
expect_status "bench matmul --shapes (odd, non-square, batched) --variant vec" 0 \
  "$NXVK" bench matmul --sizes 16 --shapes 17x9x23,3x5x7x11 --variant vec --dtype f32,f64 --repeat 1 \
  --warmup 0 --json "$tmp/shapes.json"
check "shapes rows carry their dims, flops and a full check; only vec on the ladder" "$PY" -c "
import json; d = json.load(open('$tmp/shapes.json'))
sh = [r for r in d['results'] if r['mode'] == 'shapes']
got = sorted((r['dtype'], r['dims'], r['flops']) for r in sh)
want = sorted((dt, dims, f) for dt in ('f32', 'f64') for dims, f in (('17x9x23', 2*17*9*23), ('3x5x7x11', 2*3*5*7*11)))
assert got == want, got
assert all(r['check']['on'] == 'full' and r['variant'] == 'tiled' for r in sh), sh
assert set(r['variant'] for r in d['results'] if r['mode'] == 'matmul') == {'vec'}
assert d['method']['warmup_s'] == 0"
# ---- the thread that keeps a GPU busy between timings (bench_busy.c) ------------
# lavapipe is a CPU device and gets none; busy_on_cpu starts it anyway, with
# validation on, so its pauses around every timing and its exit are run here
expect_status "bench ops with the busy thread forced on (validated)" 0 env NXVK_TEST_INJECT=busy_on_cpu \
  "$NXVK" bench ops --ops add,sum --sizes 1K,64K --min-time 0.05 --validate --json "$tmp/busy.json"
check "its JSON says the GPU was kept busy, every row checked" "$PY" -c "
import json; d = json.load(open('$tmp/busy.json'))
assert d['method']['gpu_kept_busy'] is True, d['method']
assert len(d['results']) == 4 and all(r['check']['on'] == 'full' for r in d['results']), d['results']"
expect_status "bench peak with the busy thread forced on" 0 env NXVK_TEST_INJECT=busy_on_cpu \
  "$NXVK" bench peak --bytes 1M --min-time 0.05
expect_status "--idle-gpu: no busy thread" 0 env NXVK_TEST_INJECT=busy_on_cpu \
  "$NXVK" bench ops --ops add --sizes 1K --min-time 0.05 --idle-gpu --json "$tmp/idle.json"
check "and the JSON says so" "$PY" -c "
import json; assert json.load(open('$tmp/idle.json'))['method']['gpu_kept_busy'] is False"
expect_status "an unknown --variant exits 2" 2 "$NXVK" bench matmul --variant fastest
expect_status "a shape with two dimensions exits 2" 2 "$NXVK" bench matmul --shapes 10x10
expect_status "--shapes with ops exits 2" 2 "$NXVK" bench ops --shapes 2x2x2
expect_status "a negative --warmup exits 2" 2 "$NXVK" bench ops --warmup -1

# ---- compare: reports of several runs side by side -----------------------------
expect_status "bench compare of a report with itself" 0 "$NXVK" bench compare "$tmp/ops.json" "$tmp/ops.json" --plot "$tmp/cmp.svg"
cp "$tmp/last.out" "$tmp/cmp.out"
check "compare: a legend line per run, every ops measurement once, ratio 1.00x to itself" "$PY" - "$tmp/ops.json" "$tmp/cmp.out" <<'EOF'
import json, re, sys
d = json.load(open(sys.argv[1]))
out = open(sys.argv[2]).read()
assert re.search(r"^  \[1\] .*ops\.json: device 0, ", out, re.M) and re.search(r"^  \[2\] .*ops\.json: device 0, ", out, re.M), out
rows = re.findall(r"^((?:add|exp|sum|dot) f32 \S+ \[\d+(?:,\d+)*\]) +(\S+ \S+) +(\S+ \S+) +(\S+)$", out, re.M)
want = [r for r in d["results"] if r["mode"] == "ops"]
assert len(rows) == len(want), (len(rows), len(want), out)
assert all(a == b and x == "1.00x" for _, a, b, x in rows), rows
EOF
check "compare --plot: both runs' series, each point with its min/max bar" "$PY" - "$tmp/cmp.svg" <<'EOF'
import sys, xml.etree.ElementTree as ET
ns = "{http://www.w3.org/2000/svg}"
groups = [g for g in ET.parse(sys.argv[1]).getroot().iter(ns + "g") if g.get("class") == "series"]
labels = ["".join(t.text or "" for t in g.findall(ns + "text")) for g in groups]
for run in ("[1]", "[2]"):
    for op in ("add", "exp", "sum", "dot"):
        assert "%s %s f32" % (run, op) in labels, labels
for g, l in zip(groups, labels):
    n = len(g.find(ns + "polyline").get("points").split())
    assert len([p for p in g.findall(ns + "path") if p.get("class") == "minmax"]) == n, l
EOF
expect_status "bench compare of an ops run and a matmul run" 0 "$NXVK" bench compare "$tmp/ops.json" "$tmp/mm.json"
check "compare: a measurement a run lacks is '-' there, and has no ratio" \
  bash -c "grep -qE '^add f32 1K \[1024\] +[0-9.]+ [mun]?s +- +-\$' '$tmp/last.out' &&
           grep -qE '^dot [a-z0-9]+ f32 n=32 +- +[0-9.]+ +-\$' '$tmp/last.out'"
expect_status "compare with one report exits 2" 2 "$NXVK" bench compare "$tmp/ops.json"
"$NXVK" info --json >"$tmp/notbench.json"
expect_status "compare of a file that is no bench report exits 2" 2 "$NXVK" bench compare "$tmp/ops.json" "$tmp/notbench.json"
check "... and names it" grep -q "notbench.json is not a report of 'nxvk bench --json'" "$tmp/last.err"
expect_status "compare of a missing file exits 1" 1 "$NXVK" bench compare "$tmp/ops.json" "$tmp/no-such.json"
expect_status "compare with a measuring option exits 2" 2 "$NXVK" bench compare "$tmp/ops.json" "$tmp/ops.json" --sizes 1K

# ---- fusion: every figure says what it is, in a user's words ------------------
expect_status "bench fusion runs (64K elements)" 0 "$NXVK" bench fusion --sizes 64K --min-time 0.05
check "fusion says what its ratio means, with no internal vocabulary (issue, target)" \
  bash -c "grep -qE '^  fused chain +[0-9.]+x the kernel time of one [a-z_]+; unfused [0-9.]+x \(1.00x: the 8-op chain costs what one op does\)' '$tmp/last.out' &&
           ! grep -qi 'issue\|target' '$tmp/last.out'"

# ---- concurrency: 1K adds end to end from 1, 16 and 100 threads and from port clients, ops/s;
# ---- a tensor's put and get through one port, GB/s ------------------------------------------
expect_status "bench concurrency runs (3 ops a thread, 2 port clients, a 1 MiB put/get)" 0 "$NXVK" bench concurrency \
  --repeat 3 --clients 2 --bytes 1M --json "$tmp/conc.json" --csv "$tmp/conc.csv"
check "concurrency table has ops/s rows for 1, 16 and 100 threads and 2 ports, every op checked" \
  bash -c "grep -qE '^op +dtype +size +threads +per op +ops/s +check' '$tmp/last.out' &&
           grep -qE '^add +f32 +1K +1 .* [0-9]+ +all 3 exact' '$tmp/last.out' &&
           grep -qE '^add +f32 +1K +16 .* [0-9]+ +all 48 exact' '$tmp/last.out' &&
           grep -qE '^add +f32 +1K +100 .* [0-9]+ +all 300 exact' '$tmp/last.out' &&
           grep -qE '^add +f32 +1K +2 ports .* [0-9]+ +all 6 exact' '$tmp/last.out'"
check "concurrency notes split each thread count's op into the engine's stages" \
  bash -c "for t in 1 16 100; do grep -qE \"^note: concurrency add threads f32 1K: \$t threads, us an op: record [0-9.]+, submit [0-9.]+, wait [0-9.]+, release [0-9.]+, other -?[0-9.]+; [0-9.]+ ops a vkQueueSubmit \\([0-9.]+ us each\\)\" '$tmp/last.out' || exit 1; done"
check "concurrency: the port's put and get of 1M in GB/s, checked by a round trip" \
  bash -c "grep -qE '^h2d +port put +f32 +1M .* [0-9.]+ GB/s +round trip' '$tmp/last.out' &&
           grep -qE '^d2h +port get +f32 +1M .* [0-9.]+ GB/s +round trip' '$tmp/last.out'"
check "concurrency: put and get through shared memory too (where /dev/shm is), checked by a round trip" \
  bash -c "test ! -d /dev/shm || { grep -qE '^h2d +port put shm +f32 +1M .* [0-9.]+ GB/s +round trip' '$tmp/last.out' &&
           grep -qE '^d2h +port get shm +f32 +1M .* [0-9.]+ GB/s +round trip' '$tmp/last.out'; }"
check "concurrency JSON: ops_per_s per thread count and for the port clients, GB/s for put and get" "$PY" -c "
import json; d = json.load(open('$tmp/conc.json'))
r = [x for x in d['results'] if x['mode'] == 'concurrency']
assert [x['dims'] for x in r] == ['1', '16', '100', '2 ports'], r
assert all(x['ops_per_s'] > 0 for x in r), r
assert [x['e2e_ns']['repeats'] for x in r] == [3, 48, 300, 6], r
p = [x for x in d['results'] if x['mode'] == 'peak']
import os
want = ['port put', 'port get'] + (['port put shm', 'port get shm'] if os.path.isdir('/dev/shm') else [])
assert [x['variant'] for x in p] == want and all(x['gbps'] > 0 for x in p), p"
check "concurrency CSV: ops_per_s for the four concurrency rows" "$PY" -c "
import csv; rows = [x for x in csv.DictReader(open('$tmp/conc.csv')) if x['mode'] == 'concurrency']
assert len(rows) == 4 and all(float(x['ops_per_s']) > 0 for x in rows), rows"
expect_status "concurrency refuses --clients over 1000" 2 "$NXVK" bench concurrency --clients 1001
expect_status "--clients goes with concurrency only" 2 "$NXVK" bench peak --clients 2
expect_status "concurrency refuses --sizes" 2 "$NXVK" bench concurrency --sizes 1K

# ---- usage ------------------------------------------------------------------
expect_status "no mode is a usage error" 2 "$NXVK" bench
expect_status "an unknown mode is a usage error" 2 "$NXVK" bench fast
expect_status "an unknown op exits 2" 2 "$NXVK" bench ops --ops no_such_op
check "the unknown op is named" grep -q "no_such_op" "$tmp/last.err"
# operands come from the one case maker (cases.c): movement ops too
expect_status "movement ops are benched (reshape, transpose, slice, concatenate)" 0 \
  "$NXVK" bench ops --ops reshape,transpose,slice,concatenate --sizes 1K --repeat 3
check "a checked row for each movement op" \
  awk '$1 ~ /^(reshape|transpose|slice|concatenate)$/ && $NF == "full" { n++ } END { exit n == 4 ? 0 : 1 }' "$tmp/last.out"
expect_status "a bad size exits 2" 2 "$NXVK" bench ops --sizes 1K,0
# sizes take the one grammar of every size option (nxvk(1), SIZES)
expect_status "a size that is not whole exits 2" 2 "$NXVK" bench ops --sizes 0.3
expect_status "sizes 1KiB, 1.5K and 2kB are taken" 0 "$NXVK" bench ops --ops add --sizes 1KiB,1.5K,2kB --repeat 1
expect_status "a bad dtype exits 2" 2 "$NXVK" bench matmul --dtype c64
expect_status "a negative --repeat exits 2" 2 "$NXVK" bench ops --repeat -1
expect_status "--plot with peak exits 2" 2 "$NXVK" bench peak --plot "$tmp/p.svg"
expect_status "--ops with matmul exits 2" 2 "$NXVK" bench matmul --ops add
expect_status "an unknown option exits 2" 2 "$NXVK" bench ops --fast
expect_status "an unwritable --json folder fails before the run" 1 \
  "$NXVK" bench ops --json "$tmp/no/such/dir/x.json"
check "usage errors are one line" bash -c "[ \$(wc -l <'$tmp/last.err') -eq 1 ]"
expect_status "--help exits 0" 0 "$NXVK" bench --help
check "--help lists every mode" bash -c "for m in ops matmul peak all; do grep -q \"^.*nxvk bench \$m \" '$tmp/last.out' || exit 1; done"

# ---- bench/compare_torch.py where there is no CUDA ---------------------------
expect_status "compare_torch.py runs without torch/CUDA" 0 \
  "$PY" bench/compare_torch.py --nxvk "$NXVK" --sizes 1K --matmul-sizes 16 --dtype f32 \
  --nxvk-args="--repeat 1" --out "$tmp/cmp.json"
check "it says the PyTorch figures were skipped" grep -q "no CUDA: PyTorch figures skipped" "$tmp/last.out"
check "its combined JSON holds the nxvk run" "$PY" -c "
import json; d = json.load(open('$tmp/cmp.json'))
assert d['torch'] is None or d['torch'].get('skipped'), d['torch']
assert d['nxvk']['results'], 'no nxvk results'"
# --matmul-dtype bf16: nxvk's bf16 ladder on the variant coopmat (here its emulation), a row PyTorch's bf16 matmul would face
NXVK_DOT_COOPMAT_EMU=1 "$PY" bench/compare_torch.py --nxvk "$NXVK" --ops add --sizes 1K --dtype f32 \
  --matmul-dtype bf16 --matmul-sizes 32 --nxvk-args="--repeat 1" --out "$tmp/cmpbf.json" > "$tmp/cmpbf.out" 2>&1
rc=$?
check "compare_torch.py --matmul-dtype bf16: nxvk's bf16 coopmat row, checked (exit $rc)" sh -c "[ $rc -eq 0 ] && \"$PY\" -c \"
import json, sys
rs = [r for r in json.load(open(sys.argv[1]))['nxvk']['results'] if r['mode'] == 'matmul']
assert [(r['variant'], r['dtype'], r['size']) for r in rs] == [('coopmat', 'bf16', 32)], rs
assert rs[0]['gflops'] > 0 and rs[0]['check']['on'] == 'full', rs
\" '$tmp/cmpbf.json'"
check "its timer divides runs of back-to-back calls by their count" "$PY" -c "
import sys; sys.path.insert(0, 'bench'); import compare_torch as ct
calls = [0]
class Event:   # a fake CUDA event: 10 us of GPU time per call recorded between two
    def __init__(self, enable_timing): self.at = None
    def record(self): self.at = calls[0]
    def synchronize(self): pass
    def elapsed_time(self, end): return (end.at - self.at) * 0.010   # ms
class Cuda:
    Event = Event
    @staticmethod
    def synchronize(): pass
class Torch: cuda = Cuda
def fn(): calls[0] += 1
before = calls[0]
st = ct.time_cuda(Torch, fn, 0, 4, warmup=0)
assert abs(st['median'] - 10e3) < 1e-6, st   # ns per call
assert st['repeats'] == 4, st
assert calls[0] - before == 1 + 3 + 4 * 50, calls[0] - before   # 0.5 ms / 10 us = 50 a run"

# --sweep: the product again under each line's knobs on the same inputs (a row
# named after the line, checked), a refused line is a note, '~' lines are not checked
printf '# comment\nt32 NXVK_DOT_TILES=32,32,8,4,4\nbad NXVK_DOT_NT=64\n~t64 NXVK_DOT_TILES=64,64,16,4,4\n' > "$tmp/sweep.txt"
"$NXVK" bench matmul --variant tiled --dtype f32 --sizes 72 --repeat 2 --warmup 0 --cpu-limit 0 \
  --sweep "$tmp/sweep.txt" > "$tmp/sweep.out" 2>&1
rc=$?
check "bench matmul --sweep: a checked row per accepted line, a note for the refused one, '~' unchecked (exit $rc)" \
  sh -c "[ $rc -eq 0 ] && grep -Eq '^dot +tiled +f32 +72 .* full\$' '$tmp/sweep.out' &&
         grep -Eq '^dot +t32 +f32 +72 .* full\$' '$tmp/sweep.out' &&
         grep -Eq '^dot +~t64 +f32 +72 .* none \\(diagnostic\\)\$' '$tmp/sweep.out' &&
         grep -q 'sweep bad).*NXVK_DOT_NT=64' '$tmp/sweep.out' && ! grep -Eq '^dot +bad ' '$tmp/sweep.out'"
# ops' reductions take --sweep too (rows of the line's name in the JSON); other ops do not
printf 'exact NXVK_REDUCE_ADD=exact\nbad NXVK_REDUCE_VEC=9\n~nat NXVK_REDUCE_ADD=native\n' > "$tmp/sweep3.txt"
"$NXVK" bench ops --ops sum,add --dtype f32,bf16 --sizes 5000 --repeat 2 --warmup 0 --cpu-limit 0 \
  --sweep "$tmp/sweep3.txt" --json "$tmp/sweep3.json" > "$tmp/sweep3.out" 2>&1
rc=$?
check "bench ops --sweep: a row per accepted line for sum, checked or '~' not, a note for the refused one, none for add (exit $rc)" \
  sh -c "[ $rc -eq 0 ] && grep -q 'sweep bad).*NXVK_REDUCE_VEC=9' '$tmp/sweep3.out' && \"$PY\" -c \"
import json, sys
rs = [(r['name'], r['dtype'], r.get('variant') or '', (r.get('check') or {}).get('on'))
      for r in json.load(open(sys.argv[1]))['results'] if r['mode'] == 'ops']
want = [(o, d, v, c) for d in ('f32', 'bf16') for (o, v, c) in
        (('sum', '', 'full'), ('sum', 'exact', 'full'), ('sum', '~nat', 'none (diagnostic)'), ('add', '', 'full'))]
assert sorted(rs) == sorted(want), rs
\" '$tmp/sweep3.json'"
# a knob exported before the sweep holds on every line: a line puts its variables back as they were (set or
# unset) rather than unsetting them.  NXVK_DOT_VEC=1,8,8,1 takes 20 736 bytes of shared memory on
# NXVK_DOT_NT=128's narrow grid, 37 120 on the default one: past lavapipe's 32 KiB, refused without NT=128
# (the first check shows the second can fail here)
printf 'vec NXVK_DOT_VEC=1,8,8,1\n' > "$tmp/sweep4a.txt"
printf 'nt NXVK_DOT_NT=128\nvec NXVK_DOT_VEC=1,8,8,1\n' > "$tmp/sweep4.txt"
env -u NXVK_DOT_NT "$NXVK" bench matmul --variant tiled --dtype f32 --sizes 72 --repeat 1 --warmup 0 --cpu-limit 0 \
  --sweep "$tmp/sweep4a.txt" > "$tmp/sweep4a.out" 2>&1
rc=$?
check "bench --sweep: NXVK_DOT_VEC=1,8,8,1 alone is refused on this device (exit $rc)" \
  sh -c "[ $rc -eq 0 ] && grep -q 'sweep vec).*NXVK_DOT_VEC=1,8,8,1' '$tmp/sweep4a.out' && ! grep -Eq '^dot +vec ' '$tmp/sweep4a.out'"
NXVK_DOT_NT=128 "$NXVK" bench matmul --variant tiled --dtype f32 --sizes 72 --repeat 1 --warmup 0 --cpu-limit 0 \
  --sweep "$tmp/sweep4.txt" > "$tmp/sweep4.out" 2>&1
rc=$?
check "bench --sweep: NXVK_DOT_NT=128 exported holds after a line that set it, so the next line is taken (exit $rc)" \
  sh -c "[ $rc -eq 0 ] && grep -Eq '^dot +nt +f32 +72 .* full\$' '$tmp/sweep4.out' &&
         grep -Eq '^dot +vec +f32 +72 .* full\$' '$tmp/sweep4.out'"
printf 'x NOEQUALS\n' > "$tmp/sweep2.txt"
"$NXVK" bench matmul --variant tiled --dtype f32 --sizes 8 --repeat 1 --warmup 0 --sweep "$tmp/sweep2.txt" \
  > "$tmp/sweep2.out" 2>&1
rc=$?
check "bench --sweep: a malformed line is a usage error naming the file and line (exit $rc)" \
  sh -c "[ $rc -eq 2 ] && grep -q 'sweep2.txt:1: want NAME VAR=VALUE' '$tmp/sweep2.out'"

echo "1..$n"
exit $fail
