#!/usr/bin/env bash
# tests/conformance/test_conformance.sh - `nxvk conformance` as a command:
# listing, usage errors, a clean run, a run that must fail (the engine's
# test-only break_op fault), the JSON and JUnit reports, validation layers, and
# --device all.  TAP on stdout; conformance's own TAP is kept in files and
# only summarised here, so the runner counts this script's lines alone.
set -u
cd "$(dirname "$0")/../.."
NXVK="${NXVK:-$PWD/nxvk}"
PY=/usr/bin/python3
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
n=0 failed=0

check() { # description, then a command whose status is the verdict
  local desc=$1; shift
  n=$((n + 1))
  if "$@"; then
    echo "ok $n - $desc"
  else
    echo "not ok $n - $desc"
    failed=$((failed + 1))
  fi
}
note() { sed 's/^/#   /' "$@" | head -40; }

# runs conformance; stdout in $tmp/out, stderr in $tmp/err, status in $rc
conf() {
  "$NXVK" conformance "$@" >"$tmp/out" 2>"$tmp/err"
  rc=$?
}

# ---- help and listing (no device needed)
conf --help
check "--help exits 0 and prints both synopsis lines" \
  test "$rc" -eq 0 -a "$(grep -c '^ *\(usage:\)\? *nxvk conformance ' "$tmp/out")" -eq 2

conf --list --quick
total=$(grep -vc '^#' "$tmp/out")
check "--list --quick lists cases ($total) and exits 0" test "$rc" -eq 0 -a "$total" -gt 1000
check "--list has an edge-pairs line at a workgroup boundary" \
  grep -qx 'add f32 size=257 class=edge-pairs' "$tmp/out"
check "--list covers every op of the table" \
  bash -c 'diff <("$0" run --list-ops | awk "{print \$1}" | sort -u) <(grep -v "^#" "$1" | awk "{print \$1}" | sort -u)' \
  "$NXVK" "$tmp/out"
check "--list names statistics cases for seeded ops" grep -q ' class=stats$' "$tmp/out"

conf --list
full=$(grep -vc '^#' "$tmp/out")
check "full mode lists more cases ($full) than quick ($total), with sizes over 1M" \
  bash -c "test $full -gt $total && grep -q 'size=1048577 ' '$tmp/out'"

conf --list --quick --op add --op multiply,sum --dtype f32,i32
check "--op repeated and as a comma list, --dtype as a list" \
  bash -c "test $rc -eq 0 && diff <(grep -v '^#' '$tmp/out' | awk '{print \$1, \$2}' | sort -u) \
    <(printf 'add f32\nadd i32\nmultiply f32\nmultiply i32\nsum f32\nsum i32\n')"

# ---- usage errors: exit 2, one line on stderr naming the problem
usage_case() { # description, expected text, args...
  local desc=$1 want=$2; shift 2
  conf "$@"
  check "usage error exits 2: $desc" \
    bash -c 'test "$1" -eq 2 && test $(wc -l <"$2") -eq 1 && grep -qF -- "$3" "$2" && test ! -s "$4"' \
    _ "$rc" "$tmp/err" "$want" "$tmp/out"
}
usage_case "unknown op" "unknown op 'nosuchop'" --quick --op nosuchop
usage_case "unknown op in a list" "unknown op 'bogus'" --quick --op add,bogus
usage_case "unknown dtype" "dtype" --quick --dtype c64
usage_case "unknown option" "unknown option" --quick --frobnicate
usage_case "a stray argument" "unexpected argument" --quick extra
usage_case "--json with --list" "do not go with --list" --list --json "$tmp/x.json"
usage_case "--op without a value" "needs a value" --quick --op

# ---- a clean run passes and says so
conf --quick --op multiply
passed=$(tail -1 "$tmp/out" | sed -nE 's/^([0-9]+) passed, 0 failed.*/\1/p')
oks=$(grep -cE '^ok [0-9]+ - multiply ' "$tmp/out")
check "clean --quick --op multiply exits 0 with 'N passed, 0 failed'" \
  test "$rc" -eq 0 -a -n "$passed" -a "$oks" -gt 100
[ "$rc" -eq 0 ] || note "$tmp/out" "$tmp/err"
check "one TAP line per case, numbered 1..N with a matching plan" \
  bash -c "grep -cE '^(not )?ok [0-9]+ - ' '$tmp/out' | grep -qx \$(sed -nE 's/^1\\.\\.([0-9]+)$/\\1/p' '$tmp/out') && test $oks -eq ${passed:-0}"
check "TAP lines carry size, class and max ULP" \
  grep -qE '^ok [0-9]+ - multiply f32 size=257 class=edge-pairs maxulp=0$' "$tmp/out"
check "the summary table has a row per dtype with its limit" \
  bash -c "test \$(grep -cE '^# multiply +(f32|f64|i32|u8) +[0-9]+ .*exact +ok' '$tmp/out') -eq 4"

# ---- the suite proves it can fail: one op broken on purpose
NXVK_TEST_INJECT=break_op:multiply conf --quick --op multiply
check "break_op:multiply makes conformance exit 1" test "$rc" -eq 1
check "... with failing TAP lines for multiply" grep -qE '^not ok [0-9]+ - multiply (f32|f64|i32|u8) ' "$tmp/out"
check "... and a closing line counting them" \
  grep -qE '^[0-9]+ passed, [1-9][0-9]* failed' "$tmp/out"
check "... the diagnostic gives index, inputs, GPU and reference in hex and decimal" \
  bash -c "grep -A9 -m1 '^not ok' '$tmp/out' > '$tmp/diag' &&
    grep -qE '^# op=multiply dtype=' '$tmp/diag' &&
    grep -qE '^# .* first at flat index [0-9]+' '$tmp/diag' &&
    grep -qE '^# input 1 \\[[0-9]+\\]: 0x[0-9a-f]+ \\(' '$tmp/diag' &&
    grep -qE '^# input 2 \\[[0-9]+\\]: 0x[0-9a-f]+ \\(' '$tmp/diag' &&
    grep -qE '^# gpu: 0x[0-9a-f]+ \\(' '$tmp/diag' && grep -qE '^# ref: 0x[0-9a-f]+ \\(' '$tmp/diag'"
check "... and finds the fault depends on the tensor, not the inputs" \
  grep -q '^# attribution: position dependent' "$tmp/diag"
check "... while an op that is not broken still passes" \
  bash -c "NXVK_TEST_INJECT=break_op:multiply '$NXVK' conformance --quick --op add >/dev/null"

# ---- the JSON report
conf --quick --op add,argmax,as_type --dtype f32 --json "$tmp/r.json"
check "--json run exits 0" test "$rc" -eq 0
check "--json writes a report python can parse, matching the TAP" \
  "$PY" - "$tmp/r.json" "$tmp/out" <<'EOF'
import json, re, sys
r = json.load(open(sys.argv[1]))
tap = open(sys.argv[2]).read()
rep = r["reports"][0]
cases = rep["cases"]
assert r["mode"] == "quick" and r["failed"] == 0 and r["passed"] == len(cases), r
assert rep["device"]["name"] and "float_controls" in rep["device"]
assert {c["op"] for c in cases} == {"add", "argmax", "as_type"}
assert all(c["verdict"] == "ok" for c in cases)
lines = re.findall(r"^ok (\d+) - (\S+) (\S+) ", tap, re.M)
assert [(int(n), o, d) for n, o, d in lines] == [(c["tap"], c["op"], c["dtype"]) for c in cases]
rows = {(s["op"], s["dtype"]): s for s in rep["summary"]}
assert set(rows) == {("add", "f32"), ("argmax", "f32"), ("as_type", "f32")}, rows
assert rows[("add", "f32")]["limit"] == "exact" and rows[("add", "f32")]["max_ulp"] == 0
assert any(c.get("error_as_reference") == "shape_mismatch" for c in cases if c["op"] == "argmax")
EOF
NXVK_TEST_INJECT=break_op:add conf --quick --op add --dtype i32 --json "$tmp/b.json"
check "a failing run's report names the element, in hex and decimal" \
  "$PY" - "$tmp/b.json" <<'EOF'
import json, sys
r = json.load(open(sys.argv[1]))
bad = [c for c in r["reports"][0]["cases"] if c["verdict"] == "fail"]
assert bad and r["failed"] == len(bad)
f = bad[0]["failure"]
assert f["gpu"]["hex"].startswith("0x") and f["ref"]["hex"].startswith("0x")
assert int(f["gpu"]["value"]) != int(f["ref"]["value"])
assert len(f["inputs"]) == 2 and f["alone"]["same_bits"] is False
EOF
# ---- dot's coopmat variant: skipped with the reason where the device cannot
# run it (f64 always; f32 and f16 without NV cooperative matrices, bf16 without bf16 ones), never passed
conf --quick --op dot --json "$tmp/d.json"
check "dot: coopmat cases are skipped with their reason, never passed or failed" \
  "$PY" - "$tmp/d.json" "$tmp/out" <<'EOF'
import json, re, sys
r = json.load(open(sys.argv[1]))
tap = open(sys.argv[2]).read()
rep = r["reports"][0]
coop = rep["device"]["features"]["coopmat_f16_f32"]
cm = [c for c in rep["cases"] if c["case"].endswith("variant=coopmat")]
assert cm, "no coopmat cases"
for c in cm:
    if c["dtype"] == "f64" or not coop:
        assert c["verdict"] == "skip" and "coopmat" in c["reason"], c
        # f32, f16 and bf16 are the dtypes coopmat takes: only they name the device
        assert ("not supported on" in c["reason"]) == (c["dtype"] in ("f32", "f16", "bf16")), c
assert r["failed"] == 0 and r["skipped"] >= sum(c["verdict"] == "skip" for c in cm), r
assert r["passed"] == sum(c["verdict"] == "ok" for c in rep["cases"]), r
assert re.search(r"^ok \d+ - dot f64 \S+ variant=coopmat class=\S+ # SKIP dot: variant coopmat takes f32", tap, re.M)
rows = {(s["op"], s["dtype"]): s for s in rep["summary"]}
assert rows[("dot", "f64")]["skipped"] > 0 and "coopmat" in rows[("dot", "f64")]["reason"], rows
assert re.search(r"^# dot +f64 .* ok, \d+ skipped: dot: variant coopmat", tap, re.M)
assert re.search(r"^\d+ passed, 0 failed, \d+ skipped$", tap, re.M)
EOF
# ---- cases the GPU and the reference both refuse: only an error case by
# design (argmax/argmin over no element) passes, as an error-handling check;
# any other (eye of rank < 2, concatenate of scalars) compared nothing.  The
# case maker does not make those (so skipped counts mean something); the
# test-only fault unrunnable_cases keeps them, to prove each is skipped with
# the error as its reason, never counted as passed
conf --quick --op argmax,eye,concatenate --dtype f32 --json "$tmp/r0.json"
check "the case maker makes no case the op's shape rule refuses: no skip for eye and concatenate" \
  "$PY" - "$tmp/r0.json" <<'EOF'
import json, sys
r = json.load(open(sys.argv[1]))
cases = r["reports"][0]["cases"]
assert r["failed"] == 0 and r["skipped"] == 0, (r["failed"], r["skipped"])
eye = [c for c in cases if c["op"] == "eye"]
# the sizes reach eye as 2-D shapes: every size class is still there
assert sum(c["case"].startswith("size=") for c in eye) >= 10 and all(c["verdict"] == "ok" for c in eye), eye
assert any(c["op"] == "concatenate" for c in cases)
assert sum("error_as_reference" in c for c in cases if c["op"] == "argmax") > 0
EOF
NXVK_TEST_INJECT=unrunnable_cases conf --quick --op argmax,eye,concatenate --dtype f32 --json "$tmp/r.json" --junit "$tmp/r.xml"
check "both refuse: error cases by design pass as such, the rest are skipped with the reason" \
  "$PY" - "$tmp/r.json" "$tmp/out" "$tmp/r.xml" <<'EOF'
import json, re, sys, xml.etree.ElementTree as ET
r = json.load(open(sys.argv[1]))
tap = open(sys.argv[2]).read()
rep = r["reports"][0]
cases = rep["cases"]
err_ok = [c for c in cases if "error_as_reference" in c]
skips = [c for c in cases if c["verdict"] == "skip"]
assert err_ok and skips, (len(err_ok), len(skips))
for c in err_ok:  # only empty reductions of argmax, refused with the designed error
    assert c["op"] == "argmax" and c["verdict"] == "ok" and c["error_as_reference"] == "shape_mismatch", c
    assert re.search(r"size=0\b|\[0,5\]", c["case"]), c
    assert "max_ulp" not in c, c
for c in skips:
    assert c["op"] in ("eye", "concatenate") and c["reason"].startswith("not compared: the GPU and the reference both refuse"), c
assert r["passed"] == sum(c["verdict"] == "ok" for c in cases) and r["failed"] == 0, r
assert r["skipped"] == len(skips), (r["skipped"], len(skips))
assert len(re.findall(r"^ok \d+ - (eye|concatenate) .* # SKIP not compared", tap, re.M)) == len(skips)
assert len(re.findall(r"^ok \d+ - argmax .*error=shape_mismatch \(as the reference: an error case by design\)$", tap, re.M)) == len(err_ok)
assert re.search(r"^\d+ passed, 0 failed, %d skipped$" % len(skips), tap, re.M)
root = ET.parse(sys.argv[3]).getroot()
sk = [c for c in root.iter("testcase") if c.find("skipped") is not None]
assert len(sk) == len(skips) and all("not compared" in c.find("skipped").get("message") for c in sk)
EOF
# ---- --junit: a testcase per TAP line, failures and skips as the TAP has them
cat >"$tmp/junit.py" <<'EOF'
import re, sys, xml.etree.ElementTree as ET
root = ET.parse(sys.argv[1]).getroot()
tap = open(sys.argv[2]).read().splitlines()
lines = [l for l in tap if re.match(r"^(ok|not ok) \d+ - ", l)]
cases = list(root.iter("testcase"))
assert root.tag == "testsuites" and len(list(root)) == 1, root.tag
assert len(cases) == len(lines) == int(root.get("tests")), (len(cases), len(lines), root.attrib)
for c, l in zip(cases, lines):
    m = re.match(r"^(ok|not ok) \d+ - (\S+) (\S+) (.*?)( # SKIP .*)?$", l)
    assert c.get("classname") == "nxvk.conformance." + m.group(2), (c.attrib, l)
    assert c.get("name").startswith(m.group(3) + " "), (c.attrib, l)
    kinds = [e.tag for e in c if e.tag in ("failure", "skipped")]
    want = ["failure"] if m.group(1) == "not ok" else ["skipped"] if m.group(5) else []
    assert kinds == want, (kinds, l)
    for e in c:
        if e.tag == "failure": assert e.get("message") and e.text, l
nf = sum(l.startswith("not ok") for l in lines)
assert int(root.get("failures")) == nf and nf == int(sys.argv[3]), (root.attrib, nf)
EOF
conf --quick --op add,argmax,dot --dtype f32,f64 --junit "$tmp/j.xml"
check "--junit: exit 0, a testcase per TAP line, the skips as <skipped>" \
  bash -c "test $rc -eq 0 && '$PY' '$tmp/junit.py' '$tmp/j.xml' '$tmp/out' 0 && grep -q '<skipped ' '$tmp/j.xml'"
NXVK_TEST_INJECT=break_op:multiply conf --quick --op multiply --dtype f32 --junit "$tmp/jb.xml"
nbad=$(grep -c '^not ok' "$tmp/out")
check "--junit of a failing run: each not ok line is a <failure> with its diagnostic ($nbad)" \
  bash -c "test $rc -eq 1 && test $nbad -gt 0 && '$PY' '$tmp/junit.py' '$tmp/jb.xml' '$tmp/out' $nbad"
usage_case "--junit with --list" "do not go with --list" --list --junit "$tmp/x.xml"

conf --quick --op add --json /nonexistent-dir/r.json
check "an unwritable --json path fails with one error line" \
  bash -c "test $rc -eq 1 && grep -q '^nxvk: error: --json' '$tmp/err'"

# ---- validation layers on: a small subset must be clean
NXVK_VALIDATE=1 conf --quick --op add,select,sum,dot,transpose,concatenate,iota,random_normal --dtype f32
check "NXVK_VALIDATE=1 on a subset of every kind is clean" \
  bash -c "test $rc -eq 0 && ! grep -q 'validation' '$tmp/err'"
[ "$rc" -eq 0 ] || note "$tmp/err"

# ---- every device, one report each
ndev=$("$NXVK" info --json 2>/dev/null | "$PY" -c 'import json,sys; d=json.load(sys.stdin); print(len(d["devices"]) if isinstance(d, dict) else len(d))' 2>/dev/null || echo 0)
conf --quick --op negate --device all --json "$tmp/all.json"
check "--device all runs every device ($ndev), one report each" \
  "$PY" -c "
import json, sys
r = json.load(open('$tmp/all.json'))
assert $rc == 0 and len(r['reports']) == max($ndev, 1), (len(r['reports']), $ndev)
assert len({x['device']['index'] for x in r['reports']}) == len(r['reports'])
"
check "--device all prints a header and a summary per device" \
  bash -c "test \$(grep -c '^# device [0-9]*: ' '$tmp/out') -ge 2"

echo "1..$n"
[ "$failed" -eq 0 ]
