#!/usr/bin/env bash
# tests/fusion/test_fusion.sh - elementwise fusion end to end: the plan
# (--explain), fused results against unfused ones and the reference
# (--check), the SPIR-V and pipeline caches (miss, hit, deleted, corrupted,
# concurrent writers, --no-cache), and validation layers.
set -u
cd "$(dirname "$0")/../.."
NXVK=${NXVK:-$PWD/nxvk}
PY=${PY:-/usr/bin/python3}
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
export NXVK_CACHE_DIR=$T/cache
unset NXVK_NO_CACHE NXVK_TEST_INJECT
n=0
fail=0
pass() { n=$((n + 1)); echo "ok $n - $1"; }
flunk() { n=$((n + 1)); echo "not ok $n - $1"; fail=1; [ -n "${2:-}" ] && echo "$2" | head -20 | sed 's/^/#   /'; }
expect() { # description, then a command that must succeed
  local d=$1; shift
  if "$@"; then pass "$d"; else flunk "$d"; fi
}
has() { grep -q -- "$2" <<<"$1"; }

# ---- graphs -----------------------------------------------------------------
$PY - "$T" <<'PYEOF'
import json, sys, numpy as np
T = sys.argv[1]
r = np.random.default_rng(7)
def save(name, a): np.save(f"{T}/{name}", a)
# f32 chain with broadcasts: x [64,33], y [33], z [64,1]
save("x.npy", (r.standard_normal((64, 33)) * 2).astype(np.float32))
save("y.npy", r.uniform(0.5, 2, 33).astype(np.float32))
save("z.npy", r.standard_normal((64, 1)).astype(np.float32))
chain = {"inputs": {"x": "x.npy", "y": "y.npy", "z": "z.npy"},
         "ops": [{"op": "multiply", "in": ["x", "y"], "out": "t0"},
                 {"op": "add", "in": ["t0", "z"], "out": "t1"},
                 {"op": "tanh", "in": ["t1"], "out": "t2"},
                 {"op": "exp", "in": ["t2"], "out": "t3"},
                 {"op": "divide", "in": ["t3", "y"], "out": "t4"},
                 {"op": "greater", "in": ["t4", "z"], "out": "p"},
                 {"op": "select", "in": ["p", "t4", "t1"], "out": "t5"},
                 {"op": "sqrt", "in": ["y"], "out": "sy"},
                 {"op": "subtract", "in": ["t5", "sy"], "out": "t6"}],
         "outputs": {"t6": "t6.npy", "t2": "t2.npy", "p": "p.npy"}}
json.dump(chain, open(f"{T}/chain.json", "w"))
# exact ops only: fused must equal unfused bit for bit
exact = {"inputs": {"x": "x.npy", "y": "y.npy", "z": "z.npy"},
         "ops": [{"op": "multiply", "in": ["x", "y"], "out": "a"},
                 {"op": "add", "in": ["a", "z"], "out": "b"},
                 {"op": "max", "in": ["b", "x"], "out": "c"},
                 {"op": "floor", "in": ["c"], "out": "d"},
                 {"op": "subtract", "in": ["d", "y"], "out": "e"},
                 {"op": "abs", "in": ["e"], "out": "f"},
                 {"op": "negate", "in": ["f"], "out": "g"},
                 {"op": "min", "in": ["g", "z"], "out": "h"}],
         "outputs": {"h": "h.npy", "c": "c.npy"}}
json.dump(exact, open(f"{T}/exact.json", "w"))
# integers, u8 (add wraps before divide reads it), compare and select
ints = {"inputs": {"a": {"dtype": "i32", "shape": [4, 3], "data": list(range(-6, 6))},
                   "b": {"dtype": "i32", "shape": [3], "data": [0, -1, 7]},
                   "u": {"dtype": "u8", "shape": [4, 3], "data": [0, 1, 2, 100, 200, 255, 3, 4, 5, 6, 7, 250]},
                   "v": {"dtype": "u8", "shape": [3], "data": [100, 0, 9]}},
        "ops": [{"op": "divide", "in": ["a", "b"], "out": "i0"},
                {"op": "multiply", "in": ["i0", "a"], "out": "i1"},
                {"op": "remainder", "in": ["i1", "b"], "out": "i2"},
                {"op": "less", "in": ["i2", "a"], "out": "pi"},
                {"op": "add", "in": ["u", "v"], "out": "u0"},
                {"op": "divide", "in": ["u0", "v"], "out": "u1"},
                {"op": "max", "in": ["u", "v"], "out": "u2"},
                {"op": "min", "in": ["u2", "u1"], "out": "u3"},
                {"op": "select", "in": ["pi", "u3", "u2"], "out": "u4"},
                {"op": "equal", "in": ["u4", "u"], "out": "u5"}],
        "outputs": {"i2": "i2.npy", "u4": "u4.npy", "u5": "u5.npy", "u1": "u1.npy"}}
json.dump(ints, open(f"{T}/ints.json", "w"))
# rank 8 with broadcasts on every axis
save("a8.npy", r.standard_normal((2, 1, 3, 1, 2, 1, 2, 3)).astype(np.float32))
save("b8.npy", r.standard_normal((2, 1, 2, 1, 2, 1, 1)).astype(np.float32))
rank8 = {"inputs": {"a": "a8.npy", "b": "b8.npy", "y": "y.npy"},
         "ops": [{"op": "multiply", "in": ["a", "b"], "out": "m"},
                 {"op": "add", "in": ["m", "a"], "out": "s"},
                 {"op": "less_equal", "in": ["s", "b"], "out": "q"},
                 {"op": "select", "in": ["q", "s", "m"], "out": "w"},
                 {"op": "sin", "in": ["w"], "out": "o"}],
         "outputs": {"o": "o8.npy", "w": "w8.npy"}}
json.dump(rank8, open(f"{T}/rank8.json", "w"))
# a reduction in the middle: [t0 t1] -> sum -> [t2 t3]; t2 cannot join t1's kernel
mixed = {"inputs": {"x": "x.npy"},
         "ops": [{"op": "exp", "in": ["x"], "out": "t0"},
                 {"op": "add", "in": ["t0", "x"], "out": "t1"},
                 {"op": "sum", "in": ["t1"], "attrs": {"axes": [1], "keep_axes": True}, "out": "r"},
                 {"op": "multiply", "in": ["t1", "r"], "out": "t2"},
                 {"op": "subtract", "in": ["t2", "x"], "out": "t3"}],
         "outputs": {"t3": "m3.npy"}}
json.dump(mixed, open(f"{T}/mixed.json", "w"))
bad = {"inputs": {"x": "x.npy", "z": "z.npy"},
       "ops": [{"op": "exp", "in": ["x"], "out": "t0"},
               {"op": "add", "in": ["t0", "z"], "out": "t1"},
               {"op": "add", "in": ["t1", "x8"], "out": "t2"}],
       "outputs": {"t2": True}}
json.dump(bad, open(f"{T}/bad_name.json", "w"))
bad["inputs"]["w"] = {"dtype": "f32", "shape": [5], "data": [1, 2, 3, 4, 5]}
bad["ops"][2]["in"] = ["t1", "w"]
json.dump(bad, open(f"{T}/bad_shape.json", "w"))
PYEOF

spv_files() { find "$T/cache/spirv" -name '*.spv' 2>/dev/null | sort; }
# cmp_npy DIR1 DIR2 NAME...: bit-identical files
same_npy() {
  local a=$1 b=$2; shift 2
  $PY - "$a" "$b" "$@" <<'PYEOF'
import sys, numpy as np
a, b = sys.argv[1], sys.argv[2]
bad = [n for n in sys.argv[3:] if np.load(f"{a}/{n}").tobytes() != np.load(f"{b}/{n}").tobytes()]
print("differ: " + " ".join(bad) if bad else "")
sys.exit(1 if bad else 0)
PYEOF
}
# run GRAPH in $T, keep its outputs in $T/OUTDIR
run_keep() { # outdir graph args...
  local d=$1 g=$2; shift 2
  (cd "$T" && "$NXVK" run "$g" "$@") && mkdir -p "$T/$d" && mv "$T"/*.npy.out "$T/$d/" 2>/dev/null; true
}

# ---- the plan ------------------------------------------------------------------
out=$("$NXVK" run "$T/chain.json" --explain --check 2>&1); rc=$?
if [ $rc -eq 0 ] && has "$out" "1 fused kernel (8 ops" && has "$out" "compiled (cache miss)"; then
  pass "chain: 8 ops of one shape become one fused kernel, compiled on a cache miss"
else flunk "chain: 8 ops of one shape become one fused kernel, compiled on a cache miss (rc $rc)" "$out"; fi
# sqrt(y) has y's shape [33]: its own small kernel, read by the big one through strides
if has "$out" "ops\[7\] sqrt -> sy: single op" && has "$out" "reads: x y z sy; writes: t2 p t6; in registers: t0 t1 t3 t4 t5"; then
  pass "chain: intermediates nothing else reads stay in registers; a smaller broadcast operand is its own kernel"
else flunk "chain: intermediates nothing else reads stay in registers" "$out"; fi
if has "$out" "check t6 (fused kernel" && has "$out" "check p (fused kernel" && ! has "$out" FAIL; then
  pass "chain: --check judges fused outputs against the composed limit"
else flunk "chain: --check judges fused outputs against the composed limit" "$out"; fi
expect "chain: the kernel's SPIR-V is in the cache" test "$(spv_files | wc -l)" -eq 1

out=$("$NXVK" run "$T/chain.json" --explain 2>&1)
if has "$out" "cache hit (SPIR-V from disk)"; then pass "second run: a cache hit"
else flunk "second run: a cache hit" "$out"; fi

# ---- fused against unfused ------------------------------------------------------
for g in chain exact ints rank8 mixed; do
  rm -rf "$T/fused" "$T/unfused"; mkdir -p "$T/fused" "$T/unfused"
  out1=$(cd "$T" && "$NXVK" run "$g.json" --check 2>&1); rc1=$?
  for f in "$T"/*.npy; do case "$f" in *x.npy|*y.npy|*z.npy|*a8.npy|*b8.npy) ;; *) mv "$f" "$T/fused/";; esac; done
  out2=$(cd "$T" && "$NXVK" run "$g.json" --check --no-fusion 2>&1); rc2=$?
  for f in "$T"/*.npy; do case "$f" in *x.npy|*y.npy|*z.npy|*a8.npy|*b8.npy) ;; *) mv "$f" "$T/unfused/";; esac; done
  if [ $rc1 -eq 0 ] && [ $rc2 -eq 0 ]; then pass "$g: fused and unfused outputs within their limits (--check)"
  else flunk "$g: fused and unfused outputs within their limits (--check: $rc1 $rc2)" "$out1
$out2"; fi
  names=$(cd "$T/fused" && ls)
  if [ -n "$names" ] && diff <(cd "$T/fused" && ls) <(cd "$T/unfused" && ls) >/dev/null; then
    # every op of these graphs but chain's and rank8's sin/tanh/exp/divide/sqrt is exact
    if [ "$g" = exact ] || [ "$g" = ints ]; then
      d=$(same_npy "$T/fused" "$T/unfused" $names); rc=$?
      if [ $rc -eq 0 ]; then pass "$g: fused equals unfused bit for bit (exact ops)"
      else flunk "$g: fused equals unfused bit for bit (exact ops)" "$d"; fi
    fi
  else flunk "$g: both runs wrote the same outputs" "$names"; fi
done
out=$("$NXVK" run "$T/ints.json" --explain 2>&1)
if has "$out" "ops\[4\] add -> u0: single op" && has "$out" "select" && has "$out" "fused kernel"; then
  pass "ints: i32, u8, compare and select fuse; a u8 add is stored (wrapped) before divide reads it"
else flunk "ints: i32, u8, compare and select fuse; a u8 add is stored before divide reads it" "$out"; fi
out=$(cd "$T" && "$NXVK" run rank8.json --explain 2>&1)
if has "$out" "1 fused kernel (5 ops"; then pass "rank8: five ops over rank-8 broadcasts in one kernel"
else flunk "rank8: five ops over rank-8 broadcasts in one kernel" "$out"; fi
out=$("$NXVK" run "$T/mixed.json" --explain 2>&1)
if has "$out" "2 fused kernels (4 ops" && has "$out" "sum -> r: single op"; then
  pass "mixed: a reduction splits the chain into two kernels in dependency order"
else flunk "mixed: a reduction splits the chain into two kernels in dependency order" "$out"; fi

# ---- the check can fail -----------------------------------------------------------
out=$(NXVK_TEST_INJECT=break_op:multiply "$NXVK" run "$T/chain.json" --check 2>&1); rc=$?
if [ $rc -eq 1 ] && has "$out" "FAIL"; then pass "--check catches a wrong element in a fused kernel (break_op)"
else flunk "--check catches a wrong element in a fused kernel (break_op; rc $rc)" "$out"; fi

# ---- errors name the op -------------------------------------------------------
out=$("$NXVK" run "$T/bad_shape.json" 2>&1); rc=$?
if [ $rc -eq 2 ] && has "$out" "ops\[2\] (add -> t2)" && [ "$(wc -l <<<"$out")" -eq 1 ]; then
  pass "a shape error inside a fusible chain names the op, exit 2"
else flunk "a shape error inside a fusible chain names the op, exit 2 (rc $rc)" "$out"; fi
out=$("$NXVK" run --op add --explain '{"dtype":"f32","shape":[1],"data":[1]}' '{"dtype":"f32","shape":[1],"data":[1]}' 2>&1); rc=$?
if [ $rc -eq 2 ]; then pass "--explain with --op is a usage error"; else flunk "--explain with --op is a usage error (rc $rc)" "$out"; fi

# ---- the SPIR-V cache: deleted, corrupted -------------------------------------------
rm -rf "$T/cache"
out=$("$NXVK" run "$T/chain.json" --explain 2>&1)
if has "$out" "compiled (cache miss)" && [ "$(spv_files | wc -l)" -eq 1 ]; then pass "cache folder deleted: a miss, and written again"
else flunk "cache folder deleted: a miss, and written again" "$out"; fi
spv=$(spv_files | head -1)
size=$(stat -c %s "$spv")
corrupt_case() { # description, why-substring, python that damages the file at sys.argv[1]
  local d=$1 why=$2 code=$3
  $PY -c "$code" "$spv"
  local o rc
  o=$("$NXVK" run "$T/chain.json" --explain --check 2>&1); rc=$?
  if [ $rc -eq 0 ] && has "$o" "corrupt file ignored and rewritten" && has "$o" "$why" && ! has "$o" FAIL &&
     [ "$(stat -c %s "$spv")" -eq "$size" ]; then
    o2=$("$NXVK" run "$T/chain.json" --explain 2>&1)
    if has "$o2" "cache hit"; then pass "SPIR-V cache: $d: detected, ignored, rewritten"
    else flunk "SPIR-V cache: $d: rewritten file is a hit next time" "$o2"; fi
  else flunk "SPIR-V cache: $d: detected, ignored, rewritten (rc $rc)" "$o"; fi
}
corrupt_case "truncated" "truncated" 'import sys; p=sys.argv[1]; d=open(p,"rb").read(); open(p,"wb").write(d[:len(d)//2])'
corrupt_case "cut inside the header" "truncated" 'import sys; p=sys.argv[1]; d=open(p,"rb").read(); open(p,"wb").write(d[:40])'
corrupt_case "empty" "truncated" 'import sys; open(sys.argv[1],"wb").close()'
corrupt_case "a flipped byte in the SPIR-V" "checksum mismatch" 'import sys; p=sys.argv[1]; d=bytearray(open(p,"rb").read()); d[len(d)//2]^=0x10; open(p,"wb").write(d)'
corrupt_case "a flipped byte in the key" "another key" 'import sys; p=sys.argv[1]; d=bytearray(open(p,"rb").read()); d[30]^=1; open(p,"wb").write(d)'
corrupt_case "bad magic" "bad magic" 'import sys; p=sys.argv[1]; d=bytearray(open(p,"rb").read()); d[0]^=0xff; open(p,"wb").write(d)'
corrupt_case "garbage" "" 'import sys,os; open(sys.argv[1],"wb").write(os.urandom(5000))'

# ---- the pipeline cache ----------------------------------------------------------
pc=$(find "$T/cache" -maxdepth 1 -name 'pipeline-*.bin' | head -1)
expect "the pipeline cache is saved at exit" test -n "$pc" -a -s "$pc"
out=$("$NXVK" run "$T/chain.json" --explain 2>&1)
if has "$out" "pipeline cache pipeline-.*: loaded [0-9]* bytes"; then pass "the pipeline cache is loaded at start"
else flunk "the pipeline cache is loaded at start" "$out"; fi
pcache_case() { # description, why-substring, python damaging sys.argv[1]
  local d=$1 why=$2 code=$3
  $PY -c "$code" "$pc"
  local o o2 rc
  o=$("$NXVK" run "$T/chain.json" --explain --check 2>&1); rc=$?
  o2=$("$NXVK" run "$T/chain.json" --explain 2>&1)
  if [ $rc -eq 0 ] && has "$o" "$why" && has "$o" "ignored" && ! has "$o" FAIL && has "$o2" "loaded [0-9]* bytes"; then
    pass "pipeline cache: $d: detected, ignored, rewritten"
  else flunk "pipeline cache: $d: detected, ignored, rewritten (rc $rc)" "$o
$o2"; fi
}
pcache_case "truncated" "truncated" 'import sys; p=sys.argv[1]; d=open(p,"rb").read(); open(p,"wb").write(d[:len(d)-7])'
pcache_case "header only" "truncated header" 'import sys; p=sys.argv[1]; d=open(p,"rb").read(); open(p,"wb").write(d[:20])'
pcache_case "a flipped byte in the blob" "checksum mismatch" 'import sys; p=sys.argv[1]; d=bytearray(open(p,"rb").read()); d[-3]^=0x40; open(p,"wb").write(d)'
pcache_case "another driver version" "another device or driver version" 'import sys; p=sys.argv[1]; d=bytearray(open(p,"rb").read()); d[20]^=1; open(p,"wb").write(d)'
pcache_case "another pipelineCacheUUID" "another device or driver version" 'import sys; p=sys.argv[1]; d=bytearray(open(p,"rb").read()); d[30]^=1; open(p,"wb").write(d)'
# the driver's own header (VkPipelineCacheHeaderVersionOne) naming another
# device, with our checksum made to match: still refused
pcache_case "driver header of another device" "driver header names another device" '
import sys
p = sys.argv[1]; d = bytearray(open(p, "rb").read())
d[56 + 16] ^= 1  # the first byte of the blob'"'"'s pipelineCacheUUID
def checksum(b):
    M = (1 << 64) - 1
    h = (0x9E3779B97F4A7C15 ^ len(b)) & M
    i = 0
    while i + 8 <= len(b):
        w = int.from_bytes(b[i:i+8], "little")
        h = ((h ^ w) * 0xFF51AFD7ED558CCD) & M
        h ^= h >> 32
        i += 8
    for c in b[i:]:
        h = ((h ^ c) * 0x100000001B3) & M
    h ^= h >> 29
    h = (h * 0xC4CEB9FE1A85EC53) & M
    return h ^ (h >> 32)
d[48:56] = checksum(bytes(d[56:])).to_bytes(8, "little")
open(p, "wb").write(d)'

# ---- concurrent writers ------------------------------------------------------------
rm -rf "$T/cache"
mkdir -p "$T/c1" "$T/c2"
for k in 1 2; do cp "$T/chain.json" "$T/c$k/"; cp "$T"/x.npy "$T"/y.npy "$T"/z.npy "$T/c$k/"; done
( "$NXVK" run "$T/c1/chain.json" --check >"$T/c1/log" 2>&1; echo $? >"$T/c1/rc" ) &
( "$NXVK" run "$T/c2/chain.json" --check >"$T/c2/log" 2>&1; echo $? >"$T/c2/rc" ) &
wait
if [ "$(cat "$T/c1/rc")" = 0 ] && [ "$(cat "$T/c2/rc")" = 0 ]; then pass "two concurrent runs on an empty cache both succeed"
else flunk "two concurrent runs on an empty cache both succeed" "$(cat "$T/c1/log" "$T/c2/log")"; fi
left=$(find "$T/cache" -name '.*' -type f | wc -l)
out=$("$NXVK" run "$T/chain.json" --explain 2>&1)
if [ "$left" -eq 0 ] && [ "$(spv_files | wc -l)" -eq 1 ] && has "$out" "cache hit" && has "$out" "loaded [0-9]* bytes"; then
  pass "after concurrent writers: whole files, no temporaries, a hit"
else flunk "after concurrent writers: whole files, no temporaries, a hit ($left temporaries)" "$out"; fi

# ---- --no-cache and NXVK_NO_CACHE touch nothing ---------------------------------------
before=$(cd "$T/cache" && find . -printf '%p %s %T@\n' | sort)
out=$("$NXVK" run "$T/chain.json" --explain --no-cache 2>&1); rc=$?
after=$(cd "$T/cache" && find . -printf '%p %s %T@\n' | sort)
if [ $rc -eq 0 ] && has "$out" "cache: off" && has "$out" "compiled (cache miss)" && [ "$before" = "$after" ]; then
  pass "--no-cache: compiled, the cache folder untouched"
else flunk "--no-cache: compiled, the cache folder untouched (rc $rc)" "$out"; fi
out=$(NXVK_CACHE_DIR=$T/none "$NXVK" run "$T/chain.json" --no-cache 2>&1); rc1=$?
out2=$(NXVK_CACHE_DIR=$T/none "$NXVK" run --op exp --no-cache '{"dtype":"f32","shape":[2],"data":[0,1]}' 2>&1); rc2=$?
out3=$(NXVK_CACHE_DIR=$T/none NXVK_NO_CACHE=1 "$NXVK" run "$T/chain.json" 2>&1); rc3=$?
if [ $rc1 -eq 0 ] && [ $rc2 -eq 0 ] && [ $rc3 -eq 0 ] && [ ! -e "$T/none" ]; then
  pass "--no-cache (graph and --op) and NXVK_NO_CACHE=1 never create the cache folder"
else flunk "--no-cache and NXVK_NO_CACHE=1 never create the cache folder ($rc1 $rc2 $rc3)" "$out $out2 $out3"; fi
out=$(NXVK_CACHE_DIR=$T/fresh "$NXVK" run "$T/chain.json" 2>&1); rc=$?
if [ $rc -eq 0 ] && [ -n "$(find "$T/fresh/spirv" -name '*.spv' 2>/dev/null)" ]; then pass "NXVK_CACHE_DIR names the cache folder"
else flunk "NXVK_CACHE_DIR names the cache folder" "$out"; fi
out=$(env -u NXVK_CACHE_DIR XDG_CACHE_HOME=$T/xdg "$NXVK" run "$T/chain.json" 2>&1); rc=$?
if [ $rc -eq 0 ] && [ -n "$(find "$T/xdg/nxvk/spirv" -name '*.spv' 2>/dev/null)" ]; then pass "without NXVK_CACHE_DIR: \$XDG_CACHE_HOME/nxvk"
else flunk "without NXVK_CACHE_DIR: \$XDG_CACHE_HOME/nxvk" "$out"; fi

# ---- validation layers ------------------------------------------------------------
rm -rf "$T/cache"
out=$(NXVK_VALIDATE=1 "$NXVK" run "$T/chain.json" --check 2>&1); rc1=$?
out2=$(NXVK_VALIDATE=1 "$NXVK" run "$T/ints.json" --check 2>&1); rc2=$?
out3=$(cd "$T" && NXVK_VALIDATE=1 "$NXVK" run rank8.json --check 2>&1); rc3=$?
if [ $rc1 -eq 0 ] && [ $rc2 -eq 0 ] && [ $rc3 -eq 0 ]; then pass "NXVK_VALIDATE=1: fused kernels (compiled and cached) raise no validation message"
else flunk "NXVK_VALIDATE=1: fused kernels raise no validation message ($rc1 $rc2 $rc3)" "$out $out2 $out3"; fi

echo "1..$n"
exit $fail
