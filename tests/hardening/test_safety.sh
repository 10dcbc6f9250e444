#!/usr/bin/env bash
# tests/hardening/test_safety.sh - nothing replaced, nothing trusted blindly,
# nothing parsed loosely (tests/hardening/README.md, "Outputs", "Inputs",
# "Caches", "Options").  Every output case checks what stands at the path
# afterwards: device nodes and FIFOs are made here (mknod, mkfifo) in a
# temporary folder -- never the system's /dev/null or /dev/full -- and each
# must still be a device or FIFO after the command.  numpy reads back every
# output format.
set -u
cd "$(dirname "$0")/../.."
NXVK=${NXVK:-$PWD/nxvk}
PY=/usr/bin/python3
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
. tests/tap.sh # ok, not_ok, expect_error
check() { # DESC COMMAND-STRING: ok when the shell command succeeds
  if eval "$2"; then ok "$1"; else not_ok "$1" "failed: $2"; fi
}

D=$T/d
mkdir -p "$D"
$PY - "$D" <<'EOF'
import sys, numpy as np
d = sys.argv[1]
np.save(f"{d}/a.npy", np.arange(6, dtype=np.float32).reshape(2, 3) - 2)
np.save(f"{d}/big.npy", np.arange(2000, dtype=np.float32).reshape(40, 50))
np.save(f"{d}/i8.npy", np.arange(3))
np.save(f"{d}/c8.npy", np.arange(3).astype(np.complex64))
np.savez(f"{d}/z.npz", x=np.ones(3, np.float32), y=np.arange(3, dtype=np.float32))
np.savez_compressed(f"{d}/zc.npz", x=np.full(3, 2, np.float32), y=np.arange(3, dtype=np.float32))
EOF
A=$D/a.npy

# ---------------------------------------------------------------- outputs
mknod "$D/null" c 1 3
mknod "$D/full" c 1 7
mkfifo "$D/fifo"
is_chr() { [ -c "$1" ] && ! [ -L "$1" ]; }

timeout 60 "$NXVK" run --op abs "$A" -o "$D/null" >/dev/null 2>"$T/err"
rc=$?
check "-o a character device (null): written in place, exit 0 (got $rc)" "[ $rc -eq 0 ] && is_chr '$D/null'"
expect_error "-o a full device: ENOSPC reported, exit 1" 1 "full: write error: No space left on device" \
  "$NXVK" run --op abs "$A" -o "$D/full"
check "  the full device is still a character device" "is_chr '$D/full'"
cat "$D/fifo" >"$T/fifo.out" &
reader=$!
timeout 60 "$NXVK" run --op abs "$A" -o "$D/fifo" 2>"$T/err"
rc=$?
wait "$reader"
check "-o a FIFO: written through it (exit $rc), still a FIFO" "[ $rc -eq 0 ] && [ -p '$D/fifo' ]"
check "  the FIFO's reader got the .npy" "$PY -c \"import numpy as np; a=np.load('$T/fifo.out'); assert a.tolist()==[[2,1,0],[1,2,3]]\""
"$NXVK" run --op abs "$A" -o - >"$T/stdout.npy" 2>"$T/err"
check "-o - writes .npy to stdout" "$PY -c \"import numpy as np; assert np.load('$T/stdout.npy').shape==(2,3)\""
"$NXVK" run --op abs "$A" -o /dev/stdout >"$T/devstdout.npy" 2>"$T/err"
check "-o /dev/stdout (a file here) writes to stdout, not a new file" \
  "$PY -c \"import numpy as np; assert np.load('$T/devstdout.npy').shape==(2,3)\""
"$NXVK" run --op abs "$A" -o /dev/stdout 2>"$T/err" | cat >"$T/devstdout2.npy"
check "-o /dev/stdout (a pipe) writes through the pipe" \
  "$PY -c \"import numpy as np; assert np.load('$T/devstdout2.npy').shape==(2,3)\""
"$NXVK" run --op abs "$A" -o - --format csv >"$T/stdout.csv" 2>"$T/err"
check "-o - --format csv writes CSV to stdout" "[ \"\$(head -1 '$T/stdout.csv')\" = '2,1,0' ]"

echo keep >"$D/target.npy"
ln -s target.npy "$D/link.npy"
"$NXVK" run --op abs "$A" -o "$D/link.npy" 2>"$T/err"
check "-o a symbolic link: the link stays, its target is replaced" \
  "[ -L '$D/link.npy' ] && $PY -c \"import numpy as np; assert np.load('$D/target.npy').shape==(2,3)\""
ln -s nowhere.npy "$D/dangling.npy"
expect_error "-o a link to nothing: refused" 1 "symbolic link to a file that does not exist" \
  "$NXVK" run --op abs "$A" -o "$D/dangling.npy"
mkdir "$D/dir.npy"
expect_error "-o a directory: usage error" 2 "is a directory" "$NXVK" run --op abs "$A" -o "$D/dir.npy"
expect_error "-o with an unknown extension: usage error naming -o" 2 "-o: cannot tell the format" \
  "$NXVK" run --op abs "$A" -o "$D/out.txt"
expect_error "--format with an unknown name" 2 "--format: 'xls' is not a format" \
  "$NXVK" run --op abs "$A" -o - --format xls
expect_error "-o into a missing folder: exit 1 before any work" 1 "folder .*No such file" \
  "$NXVK" run --op abs "$A" -o "$D/none/x.npy"
echo old >"$D/keep.npy"
chmod 0640 "$D/keep.npy"
"$NXVK" run --op abs "$A" -o "$D/keep.npy" 2>"$T/err"
check "a regular file is replaced with its mode kept (0640)" "[ \"\$(stat -c %a '$D/keep.npy')\" = 640 ]"
if [ "$(id -u)" -eq 0 ]; then
  chown 1234:1234 "$D/keep.npy"
  "$NXVK" run --op abs "$A" -o "$D/keep.npy" 2>"$T/err"
  check "run as root, a user's file is replaced with its owner kept" "[ \"\$(stat -c %u:%g '$D/keep.npy')\" = 1234:1234 ]"
  chown 0:0 "$D/keep.npy"
fi
check "no temporary is left beside the outputs" "[ -z \"\$(ls -A '$D' | grep -E 'nxvk-|\\.tmp\\.')\" ]"
# a planted symlink at the old predictable temporary name is not followed
echo precious >"$T/precious"
for p in $(seq 1 64); do ln -sf "$T/precious" "$D/keep.npy.tmp.$p" 2>/dev/null; done
"$NXVK" run --op abs "$A" -o "$D/keep.npy" 2>"$T/err"
check "a planted link at a temporary-like name is not written through" "[ \"\$(cat '$T/precious')\" = precious ]"
rm -f "$D"/keep.npy.tmp.*

# the reports go through the same module
expect_error "conformance --json to a full device: ENOSPC, exit 1" 1 "--json: .*full: write error: No space left on device" \
  "$NXVK" conformance --quick --op negate --dtype i32 --json "$D/full"
# (bench prints progress lines on stderr when it is not a terminal: the error is the last line)
"$NXVK" bench ops --ops add --sizes 1K --repeat 1 --warmup 0 --cpu-limit 0 --json "$D/full" >/dev/null 2>"$T/err" </dev/null
rc=$?
check "bench --json to a full device: ENOSPC, exit 1 (got $rc)" \
  "[ $rc -eq 1 ] && tail -1 '$T/err' | grep -qE '^nxvk: error: .*full: write error: No space left on device' && [ \$(grep -c '^nxvk: error' '$T/err') -eq 1 ]"
check "  the device is still a character device" "is_chr '$D/full'"
echo old >"$D/conf.json"
ln -s conf.json "$D/conf-link.json"
"$NXVK" conformance --quick --op negate --dtype i32 --json "$D/conf-link.json" >/dev/null 2>&1
check "conformance --json through a link replaces the target, keeps the link" \
  "[ -L '$D/conf-link.json' ] && $PY -c \"import json; json.load(open('$D/conf.json'))\""

# formats read back by numpy
for f in npy csv json npz; do "$NXVK" run --op abs "$A" -o "$D/r.$f" 2>"$T/err" || not_ok "-o r.$f" "$(cat "$T/err")"; done
check "numpy reads back .npy .csv .json .npz outputs" "$PY - '$D' <<'EOF'
import sys, json, numpy as np
d = sys.argv[1]
want = np.abs(np.arange(6, dtype=np.float32).reshape(2, 3) - 2)
assert (np.load(f'{d}/r.npy') == want).all()
assert (np.loadtxt(f'{d}/r.csv', delimiter=',', ndmin=2) == want).all()
j = json.load(open(f'{d}/r.json')); assert j['dtype'] == 'f32' and j['shape'] == [2, 3]
assert (np.array(j['data'], np.float32) == want).all()
assert (np.load(f'{d}/r.npz')['arr_0'] == want).all()
EOF"
"$NXVK" run --op abs "$D/r.npz" -o "$D/r2.npy" 2>"$T/err"
check "an .npz written by nxvk is read back as input" "$PY -c \"import numpy as np; assert np.load('$D/r2.npy').shape==(2,3)\""
expect_error "-o .csv of a rank-3 tensor: refused" 2 "CSV holds at most 2 dimensions" \
  "$NXVK" run --op abs '{"dtype":"f32","shape":[1,1,2],"data":[1,2]}' -o "$D/r3.csv"
check "  and no file was left" "[ ! -e '$D/r3.csv' ]"

# --print summary
"$NXVK" run --op abs "$D/big.npy" --print >"$T/print" 2>&1
check "--print of 2000 elements summarises with edge items and ..." \
  "grep -q '\\[\\[0,1,2,\\.\\.\\.,47,48,49\\],\\[50,51,52,\\.\\.\\.' '$T/print' && ! grep -q 'too many' '$T/print'"

# ---------------------------------------------------------------- graph outputs
cat >"$D/g_dir.json" <<'EOF'
{"inputs":{"x":"a.npy"},"ops":[{"op":"abs","in":["x"],"out":"a"},{"op":"negate","in":["x"],"out":"b"}],
 "outputs":{"a":"keep.npy","b":"dir.npy"}}
EOF
cp "$D/keep.npy" "$T/keep.before"
expect_error "graph: a directory at the second output: exit 2 before GPU work" 2 "outputs: b: .*is a directory" \
  "$NXVK" run "$D/g_dir.json"
check "  the first output's existing file is untouched" "cmp -s '$D/keep.npy' '$T/keep.before'"
cat >"$D/g_same.json" <<'EOF'
{"inputs":{"x":"a.npy"},"ops":[{"op":"abs","in":["x"],"out":"a"},{"op":"negate","in":["x"],"out":"b"}],
 "outputs":{"a":"keep.npy","b":"./keep.npy"}}
EOF
expect_error "graph: two outputs naming one file: exit 2" 2 "'a' and 'b' both write" "$NXVK" run "$D/g_same.json"
check "  the file is untouched" "cmp -s '$D/keep.npy' '$T/keep.before'"
cat >"$D/g_ext.json" <<'EOF'
{"inputs":{"x":"a.npy"},"ops":[{"op":"abs","in":["x"],"out":"a"}],"outputs":{"a":"a.out"}}
EOF
expect_error "graph: an output with an unknown extension: exit 2" 2 "outputs: a: cannot tell the format" \
  "$NXVK" run "$D/g_ext.json"
cat >"$D/g_full.json" <<'EOF'
{"inputs":{"x":"a.npy"},"ops":[{"op":"abs","in":["x"],"out":"a"},{"op":"negate","in":["x"],"out":"b"}],
 "outputs":{"a":"keep.npy","b":"full"}}
EOF
expect_error "graph: a write error on one output fails the run" 1 "No space left on device" "$NXVK" run "$D/g_full.json"
check "  the other output's existing file is not replaced" "cmp -s '$D/keep.npy' '$T/keep.before' && is_chr '$D/full'"
check "  no temporary is left" "[ -z \"\$(ls -A '$D' | grep -E 'nxvk-')\" ]"
cat >"$D/g_npz.json" <<'EOF'
{"inputs":{"x":"z.npz","y":"zc.npz"},"ops":[{"op":"add","in":["x","y"],"out":"s"},{"op":"negate","in":["y"],"out":"n"}],
 "outputs":{"s":"both.npz","n":"both.npz","c":"s.csv"}}
EOF
sed -i 's/"c":"s.csv"/"s2":"s.csv"/; s/"out":"n"}]/"out":"n"},{"op":"abs","in":["s"],"out":"s2"}]/' "$D/g_npz.json"
"$NXVK" run "$D/g_npz.json" 2>"$T/err"
check "graph: .npz inputs by name (stored and compressed), outputs sharing one .npz as members" "$PY - '$D' <<'EOF'
import sys, numpy as np
d = sys.argv[1]
z = np.load(f'{d}/both.npz')
assert sorted(z.files) == ['n', 's'], z.files
assert z['s'].tolist() == [1, 2, 3] and z['n'].tolist() == [-0.0, -1, -2]
assert np.loadtxt(f'{d}/s.csv').tolist() == [1, 2, 3]
EOF"

# ---------------------------------------------------------------- inputs
ln -s /dev/zero "$D/zero.npy"
start=$SECONDS
expect_error "a .npy that is a link to /dev/zero fails at its magic" 2 "zero.npy: not a .npy file" \
  "$NXVK" run --op abs "$D/zero.npy"
check "  at once (under 5 s, took $((SECONDS - start)) s)" "[ $((SECONDS - start)) -lt 5 ]"
out=$(cat "$A" | "$NXVK" run --op abs /dev/stdin 2>&1)
check "cat x.npy | nxvk run --op abs /dev/stdin" "echo '$out' | grep -q '\\[\\[2,1,0\\],\\[1,2,3\\]\\]'"
out=$(cat "$A" | "$NXVK" run --op abs - 2>&1)
check "cat x.npy | nxvk run --op abs -" "echo '$out' | grep -q '\\[\\[2,1,0\\],\\[1,2,3\\]\\]'"
out=$(printf '1,-2\n-3,4\n' | "$NXVK" run --op abs - 2>&1)
check "CSV on stdin" "echo '$out' | grep -q '\\[\\[1,2\\],\\[3,4\\]\\]'"
out=$(cat "$D/z.npz" | "$NXVK" run --op add - 2>&1)
check ".npz on stdin: each member one input" "echo '$out' | grep -q '\\[1,2,3\\]'"
mkfifo "$D/in.fifo"
(cat "$A" >"$D/in.fifo" &)
out=$(timeout 20 "$NXVK" run --op abs "$D/in.fifo" 2>&1)
check "a FIFO as input" "echo '$out' | grep -q '\\[\\[2,1,0\\],\\[1,2,3\\]\\]'"
$PY -c "
import numpy as np, sys
a = np.arange(4, dtype=np.float32)
with open('$D/trail.bin', 'wb') as f: np.save(f, a); f.write(b'xx')
"
expect_error "a piped .npy with trailing bytes" 2 "trailing bytes" sh -c "cat '$D/trail.bin' | '$NXVK' run --op abs -"
head -c 300 "$D/big.npy" >"$D/cut.bin"
expect_error "a piped .npy cut short" 2 "data is truncated" sh -c "cat '$D/cut.bin' | '$NXVK' run --op abs -"
expect_error "a complex64 .npy names the dtype and a way around it" 2 "descr '<c8' \\(complex64\\) is not supported; instead: a.real and a.imag saved as two float arrays" \
  "$NXVK" run --op abs "$D/c8.npy"
out=$("$NXVK" run --op abs "$D/i8.npy" 2>&1)
check "an int64 .npy (numpy's default integer) is read as i64" "echo '$out' | grep -q 'abs: i64 \\[3\\]'"
printf 'a,b\n1,-2\n' >"$D/h.csv"
out=$("$NXVK" run --op abs "$D/h.csv" 2>&1)
check "a CSV header row is detected" "echo '$out' | grep -q '\\[\\[1,2\\]\\]'"
printf '7,8\n1,-2\n' >"$D/h2.csv"
out=$("$NXVK" run --op abs --csv-header "$D/h2.csv" 2>&1)
check "--csv-header skips the first row" "echo '$out' | grep -q '\\[\\[1,2\\]\\]'"
$PY -c "open('$D/long.csv','w').write('1'*(8<<20)+'\n')"
start=$SECONDS
expect_error "one 8 MiB CSV field: refused as it grows" 2 "a field longer than 4096 bytes" \
  "$NXVK" run --op abs "$D/long.csv"
check "  at once (took $((SECONDS - start)) s)" "[ $((SECONDS - start)) -lt 5 ]"
printf 'PK\005\006' >"$D/junk.npz"
head -c 18 /dev/zero >>"$D/junk.npz"
cat >"$D/g_junk.json" <<'EOF'
{"inputs":{"x":"junk.npz"},"ops":[{"op":"abs","in":["x"],"out":"a"}],"outputs":{"a":"j.npy"}}
EOF
expect_error "a graph input from an .npz without that member: refused" 2 "junk.npz: no array named 'x'" \
  "$NXVK" run "$D/g_junk.json"
$PY -c "
import numpy as np, zipfile
np.savez('$D/bad.npz', x=np.ones(3, np.float32))
b = bytearray(open('$D/bad.npz','rb').read()); i = b.find(b'\x93NUMPY') + 130; b[i] ^= 0xff
open('$D/bad.npz','wb').write(b)
"
expect_error "an .npz member with a wrong CRC" 2 "CRC-32 mismatch" "$NXVK" run --op abs "$D/bad.npz"

# ---------------------------------------------------------------- caches
C=$T/cache/a/b
cat >"$D/gf.json" <<'EOF'
{"inputs":{"x":"a.npy"},"ops":[{"op":"exp","in":["x"],"out":"t"},{"op":"add","in":["t","x"],"out":"u"}],"outputs":{"u":"u.npy"}}
EOF
right() { $PY -c "import numpy as np; a=np.load('$A'); assert np.allclose(np.load('$D/u.npy'), np.exp(a)+a)"; }
runc() { rm -f "$D/u.npy"; NXVK_CACHE_DIR=$C timeout 60 "$NXVK" run "$D/gf.json" --explain >"$T/explain" 2>&1; }
runc
check "the cache folders are created 0700" \
  "[ \"\$(stat -c %a '$T/cache' '$T/cache/a' '$C' '$C/spirv' | sort -u)\" = 700 ] && right"
spv=$(ls "$C"/spirv/*.spv)
cp "$spv" "$T/good.spv"
$PY - "$spv" <<'EOF'
import sys, hashlib, struct
p = sys.argv[1]
b = bytearray(open(p, 'rb').read())
head = b[:120]
# a module the driver refuses, under a valid header and checksum
payload = struct.pack('<5I', 0x07230203, 0x00010300, 0, 100, 0) + struct.pack('<4I', 0x00040011, 0xdeadbeef, 7, 9)
head[16:24] = struct.pack('<Q', len(payload))
head[56:88] = hashlib.sha256(payload).digest()
open(p, 'wb').write(bytes(head) + payload)
EOF
runc
rc=$?
check "a cached module with a valid checksum that builds no pipeline: discarded, recompiled, right (exit $rc)" \
  "[ $rc -eq 0 ] && grep -q 'discarded, recompiled' '$T/explain' && right"
runc
check "  and the next run hits the rewritten entry" "grep -q 'cache hit' '$T/explain' && right"
$PY - "$spv" <<'EOF'
import sys
p = sys.argv[1]
b = bytearray(open(p, 'rb').read()); b[100] ^= 1  # the compiler identity of the key
open(p, 'wb').write(b)
EOF
runc
check "an entry made by another compiler version or options is a miss" \
  "grep -q 'another compiler version or options' '$T/explain' && grep -q 'compiled (cache miss)' '$T/explain' && right"
other=$T/other.spv
$PY - "$spv" "$other" <<'EOF'
import sys
b = bytearray(open(sys.argv[1], 'rb').read()); b[24] ^= 1  # another kernel's key
open(sys.argv[2], 'wb').write(b)
EOF
cp "$other" "$spv"
runc
check "another kernel's entry copied under this name is a miss" \
  "grep -q 'made for another key' '$T/explain' && grep -q 'compiled (cache miss)' '$T/explain' && right"
rm -f "$spv"; mkfifo "$spv"
pc=$(ls "$C"/pipeline-*.bin)
rm -f "$pc"; mkfifo "$pc"
runc
rc=$?
check "FIFOs at the SPIR-V and pipeline cache paths: no hang, ignored and replaced (exit $rc)" \
  "[ $rc -eq 0 ] && right && [ -f '$spv' ] && [ -f '$pc' ]"
echo "not a cache file" >"$T/victim"
cp "$T/victim" "$T/victim.before"
rm -f "$spv"; ln -s "$T/victim" "$spv"
runc
check "a symbolic link at a cache path is neither read nor written through: replaced by a file" \
  "grep -q 'a symbolic link' '$T/explain' && right && cmp -s '$T/victim' '$T/victim.before' && [ -f '$spv' ] && ! [ -L '$spv' ]"
long=$T/$(head -c 4200 /dev/zero | tr '\0' 'x')
expect_error "an over-long NXVK_CACHE_DIR is an error, not a cut" 2 "NXVK_CACHE_DIR: .* over the limit" \
  env NXVK_CACHE_DIR="$long" "$NXVK" run --op abs "$A"
check "  and nothing was created" "[ -z \"\$(ls '$T' | grep xxxx)\" ]"

# ---------------------------------------------------------------- options
expect_error "--attrs with trailing text" 2 "--attrs: text after the JSON object" \
  "$NXVK" run --op sum --attrs '{"axes":[0]} trailing' "$A"
for sd in '"-1"' '" -1"' '"+5"' '"5 "' '"0x10"' '-1'; do
  expect_error "seed $sd refused" 2 'attribute "seed"' \
    "$NXVK" run --op random_uniform --attrs "{\"seed\":$sd,\"shape\":[2]}"
done
expect_error "stress --threads -1" 2 "--threads: must be 1..1024" "$NXVK" stress race --threads -1
expect_error "stress --duration nan" 2 "--duration: 'nan' is not a number" "$NXVK" stress race --duration nan
expect_error "stress --duration inf" 2 "--duration: 'inf' is not a number" "$NXVK" stress race --duration inf
expect_error "stress --seed -1" 2 "--seed: must be 0 or more" "$NXVK" stress race --seed -1
expect_error "stress --ops ' 5' (a space)" 2 "--ops: ' 5' is not an integer" "$NXVK" stress race --ops ' 5'
expect_error "stress --cycles 99999999999999999999" 2 "--cycles: .* out of range" "$NXVK" stress leak --cycles 99999999999999999999
expect_error "bench --repeat 0" 2 "--repeat: give 1 to 100000" "$NXVK" bench ops --repeat 0
expect_error "bench --sizes 1,,2" 2 "--sizes: .*no empty item" "$NXVK" bench ops --sizes 1,,2
expect_error "bench --sizes 1,2, (trailing comma)" 2 "--sizes: .*no empty item" "$NXVK" bench ops --sizes 1,2,
expect_error "bench --min-time nan" 2 "--min-time: 'nan' is not a number" "$NXVK" bench ops --min-time nan

# ---------------------------------------------------------------- port memory cap
port_out=$($PY - "$NXVK" <<'EOF' 2>&1
import sys
sys.path.insert(0, "tests/hardening")
from portlib import frame, session
nxvk = sys.argv[1]
mib16 = b"\0" * (16 << 20)
reqs = b""
for i in range(1, 5):
    reqs += frame({"id": i, "cmd": "put", "dtype": "f32", "shape": [4 << 20]}, mib16)
reqs += frame({"id": 10, "cmd": "stats"})
reqs += frame({"id": 11, "cmd": "free", "handles": [1]})
reqs += frame({"id": 12, "cmd": "put", "dtype": "f32", "shape": [4 << 20]}, mib16)
reqs += frame({"id": 13, "cmd": "ping"})
rc, replies, err = session([nxvk, "port", "--max-bytes", "40M"], reqs)
by = {h["id"]: h for h, _ in replies}
ok = [i for i in range(1, 5) if by[i]["ok"]]
failed = [i for i in range(1, 5) if not by[i]["ok"]]
assert rc == 0, (rc, err)
assert ok and failed, by
assert all(by[i]["error"]["code"] == "alloc_failed" for i in failed), by
st = by[10]
assert st["ok"] and st["max_bytes"] == 40 << 20 and st["live_bytes"] <= 40 << 20, st
assert by[13]["ok"], by[13]
print("port cap ok:", len(ok), "puts held,", len(failed), "alloc_failed; after a free:", by[12]["ok"])
assert by[12]["ok"] or not by[11]["ok"], by[12]
rc, replies, err = session([nxvk, "port"], frame({"id": 1, "cmd": "stats"}))
assert replies[0][0]["max_bytes"] > 0, replies
rc, replies, err = session([nxvk, "port", "--max-bytes", "1.5x"], b"")
assert rc == 2 and "--max-bytes" in err, (rc, err)
EOF
)
rc=$?
check "port --max-bytes: past the cap alloc_failed, live bytes within it, the port keeps serving; default from the heap; bad size exit 2" \
  "[ $rc -eq 0 ] || { echo '$port_out' | tail -5 >&2; false; }"

echo "1..$n"
exit $fail
