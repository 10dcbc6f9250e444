#!/usr/bin/env bash
# test_bad_input.sh - every bad input of `nxvk run` gets one line on stderr
# (`nxvk: error: ...`) naming the file, field or argument, the documented
# exit status (2 for bad input and usage, 1 for I/O failures), no crash
# (status < 128), and no output: a fresh -o path is never created and a file
# already there is left exactly as it was.  A leaked tensor would add a
# second stderr line ("tensor(s) not freed at exit"), so the one-line check
# also proves that error paths free what they made.  Successful runs exit 0,
# which main.c only allows with no tensor alive.
set -u
cd "$(dirname "$0")/../.." || exit 1
T=$(mktemp -d /tmp/nxvk_bad_input.XXXXXX)
trap 'rm -rf "$T"' EXIT
# a private copy, so a concurrent rebuild cannot swap the binary mid-run
cp "${NXVK:-./nxvk}" "$T/nxvk" 2>/dev/null && [ -s "$T/nxvk" ] ||
  { echo "not ok 1 - no nxvk binary at ${NXVK:-./nxvk}"; echo "1..1"; exit 1; }
NXVK="$T/nxvk"
PY=/usr/bin/python3
n=0
fail=0

ok() { # cond-status desc [diag]
  n=$((n + 1))
  if [ "$1" -eq 0 ]; then
    echo "ok $n - $2"
  else
    echo "not ok $n - $2"
    [ -n "${3:-}" ] && printf '%s\n' "$3" | sed 's/^/#   /'
    fail=1
  fi
}

# run_case DESC STATUS MENTION OUT ARGS...
#   runs nxvk ARGS (OUT is the output path the command names, or "" if none)
#   twice: with OUT absent, then with OUT holding a precious file.
run_case() {
  local desc=$1 want=$2 mention=$3 out=$4
  shift 4
  local err="$T/stderr" rc lines first
  [ -n "$out" ] && rm -f "$out"
  "$NXVK" "$@" >"$T/stdout" 2>"$err"
  rc=$?
  lines=$(wc -l <"$err")
  first=$(head -1 "$err")
  local problems=""
  [ "$rc" -ge 128 ] && problems+="crashed (status $rc); "
  [ "$rc" -ne "$want" ] && problems+="exit $rc, want $want; "
  [ "$lines" -ne 1 ] && problems+="$lines stderr lines, want 1; "
  case "$first" in "nxvk: error: "*) ;; *) problems+="stderr does not start with 'nxvk: error: '; " ;; esac
  grep -qF -- "$mention" "$err" || problems+="message does not mention '$mention'; "
  ok "$([ -z "$problems" ]; echo $?)" "$desc: exit $want, one line naming '$mention'" \
    "${problems}stderr: $(cat "$err")"
  if [ -n "$out" ]; then
    ok "$([ ! -e "$out" ]; echo $?)" "$desc: no output file left behind" "$(ls -l "$out" 2>&1)"
    # the same with a file already at the output path: it stays as it was
    printf 'precious\n' >"$out"
    "$NXVK" "$@" >/dev/null 2>&1
    rc=$?
    ok "$([ "$rc" -eq "$want" ] && [ "$(cat "$out" 2>/dev/null)" = precious ]; echo $?)" \
      "$desc: a file already at the output path is left untouched" "exit $rc; file now: $(head -c 80 "$out" 2>&1 | tr -c '[:print:]' '?')"
    rm -f "$out"
  fi
}

# ---- crafted .npy files (numpy writes the good ones, the bad ones by hand)
$PY - "$T" <<'EOF'
import struct, sys, numpy as np
T = sys.argv[1]
def npy(name, header, data=b'', major=1, hlen=None):
    h = header.encode()
    pre = b'\x93NUMPY' + bytes([major, 0])
    n = len(h) if hlen is None else hlen
    pre += struct.pack('<H', n) if major == 1 else struct.pack('<I', n)
    open('%s/%s' % (T, name), 'wb').write(pre + h + data)
def hdr(descr, fortran, shape):
    s = "{'descr': %s, 'fortran_order': %s, 'shape': %s, }" % (descr, fortran, shape)
    return s + ' ' * (63 - (len(s) + 10) % 64) + '\n'
npy('trunc_header.npy', hdr("'<f4'", 'False', '(2,)')[:20], hlen=118)
npy('huge_header.npy', hdr("'<f4'", 'False', '(2,)'), b'\0' * 8, major=2, hlen=0xFFFFFFF0)
open(T + '/half_magic.npy', 'wb').write(b'\x93NUM')
npy('complex.npy', hdr("'<c8'", 'False', '(2,)'), b'\0' * 16)
npy('object.npy', hdr("'|O'", 'False', '(2,)'), b'\0' * 16)
npy('structured.npy', hdr("[('a', '<f4'), ('b', '<i4')]", 'False', '(2,)'), b'\0' * 16)
npy('fortran.npy', hdr("'<f4'", 'Maybe', '(2,)'), b'\0' * 8)
npy('short_data.npy', hdr("'<f4'", 'False', '(10,)'), b'\0' * 8)
npy('overflow.npy', hdr("'<f4'", 'False', '(1099511627776, 1099511627776)'), b'\0' * 8)
npy('rank9.npy', hdr("'<f4'", 'False', '(1, 1, 1, 1, 1, 1, 1, 1, 1)'), b'\0' * 4)
npy('neg_dim.npy', hdr("'<f4'", 'False', '(-2,)'), b'')
np.save(T + '/m23.npy', np.arange(6, dtype=np.float32).reshape(2, 3))
np.save(T + '/m45.npy', np.ones((4, 5), np.float32))
np.save(T + '/m32.npy', np.ones((3, 2), np.float32))
np.save(T + '/v3.npy', np.ones(3, np.float32))
np.save(T + '/v4.npy', np.arange(4, dtype=np.float32))
np.save(T + '/d3.npy', np.ones(3, np.float64))
np.save(T + '/e0.npy', np.zeros(0, np.float32))
open(T + '/bad.csv', 'w').write('1,2,3\n4,five,6\n')
open(T + '/ragged.csv', 'w').write('1,2,3\n4,5\n')
EOF

O="$T/out.npy"
# ---- .npy files
run_case "truncated .npy header" 2 trunc_header.npy "$O" run --op negate "$T/trunc_header.npy" -o "$O"
run_case "file shorter than the .npy magic" 2 half_magic.npy "$O" run --op negate "$T/half_magic.npy" -o "$O"
run_case "over-large .npy header length" 2 huge_header.npy "$O" run --op negate "$T/huge_header.npy" -o "$O"
run_case "unknown descr '<c8'" 2 "'<c8'" "$O" run --op negate "$T/complex.npy" -o "$O"
run_case "unknown descr names the file" 2 complex.npy "$O" run --op negate "$T/complex.npy" -o "$O"
run_case "object dtype '|O'" 2 object.npy "$O" run --op negate "$T/object.npy" -o "$O"
run_case "structured dtype" 2 structured.npy "$O" run --op negate "$T/structured.npy" -o "$O"
run_case "fortran_order garbage" 2 fortran_order "$O" run --op negate "$T/fortran.npy" -o "$O"
run_case "data shorter than the shape" 2 short_data.npy "$O" run --op negate "$T/short_data.npy" -o "$O"
run_case "header shape (2**40, 2**40) overflows" 2 overflow.npy "$O" run --op negate "$T/overflow.npy" -o "$O"
run_case "rank 9 .npy" 2 rank9.npy "$O" run --op negate "$T/rank9.npy" -o "$O"
run_case "negative dimension in a .npy header" 2 neg_dim.npy "$O" run --op negate "$T/neg_dim.npy" -o "$O"
run_case "missing input file (I/O error)" 1 "$T/missing.npy" "$O" run --op negate "$T/missing.npy" -o "$O"
run_case "CSV with a word in it" 2 bad.csv "$O" run --op negate "$T/bad.csv" -o "$O"
run_case "CSV with rows of different lengths" 2 ragged.csv "$O" run --op negate "$T/ragged.csv" -o "$O"

# ---- shapes, dtypes, ops
run_case "dot with wrong inner dims" 2 "dot" "$O" run --op dot "$T/m23.npy" "$T/m45.npy" -o "$O"
run_case "dot with wrong inner dims names the shapes" 2 "[2,3]" "$O" run --op dot "$T/m23.npy" "$T/m45.npy" -o "$O"
run_case "shapes that do not broadcast" 2 "broadcast" "$O" run --op add "$T/v3.npy" "$T/v4.npy" -o "$O"
run_case "unknown op" 2 "frobnicate" "$O" run --op frobnicate "$T/v3.npy" -o "$O"
run_case "mixed dtypes without as_type" 2 "as_type" "$O" run --op add "$T/v3.npy" "$T/d3.npy" -o "$O"
run_case "op given a dtype it does not take" 2 "i32" "$O" run --op exp '{"dtype":"i32","shape":[2],"data":[1,2]}' -o "$O"
run_case "wrong number of inputs" 2 "add" "$O" run --op add "$T/v3.npy" -o "$O"
run_case "argmax of an empty tensor" 2 "argmax" "$O" run --op argmax "$T/e0.npy" -o "$O"
run_case "select with a non-u8 predicate" 2 "select" "$O" run --op select "$T/v3.npy" "$T/v3.npy" "$T/v3.npy" -o "$O"

# ---- dot's coopmat variant: f32 only, and only where the device has NV
# cooperative matrices (lavapipe has none): exit 1, "not supported on DEVICE"
np_d23='{"dtype":"f64","shape":[2,3],"data":[1,2,3,4,5,6]}' np_d32='{"dtype":"f64","shape":[3,2],"data":[1,2,3,4,5,6]}'
run_case "dot variant coopmat on f64" 2 "variant coopmat takes f32" "$O" \
  run --op dot --attrs '{"variant":"coopmat"}' "$np_d23" "$np_d32" -o "$O"
if "$NXVK" info --json | $PY -c 'import json, sys; d = json.load(sys.stdin)["devices"]; sys.exit(0 if d and not d[0]["features"]["coopmat_f16_f32"] else 1)' 2>/dev/null; then
  run_case "dot variant coopmat without cooperative matrices" 1 "variant coopmat is not supported on" "$O" \
    run --op dot --attrs '{"variant":"coopmat"}' "$T/m23.npy" "$T/m32.npy" -o "$O"
  run_case "dot variant coopmat without cooperative matrices, batched" 1 "not supported on" "$O" \
    run --op dot --attrs '{"variant":"coopmat"}' '{"dtype":"f32","shape":[2,1,1],"data":[1,2]}' \
    '{"dtype":"f32","shape":[2,1,1],"data":[3,4]}' -o "$O"
else
  echo "# device 0 has cooperative matrices: coopmat's 'not supported' cases do not apply"
fi

# ---- attributes
run_case "attrs: unknown key" 2 '"foo"' "$O" run --op sum --attrs '{"foo":1}' "$T/v3.npy" -o "$O"
run_case "attrs: wrong type" 2 '"axes"' "$O" run --op sum --attrs '{"axes":"all"}' "$T/v3.npy" -o "$O"
run_case "attrs: keep_axes not a bool" 2 keep_axes "$O" run --op sum --attrs '{"keep_axes":1}' "$T/v3.npy" -o "$O"
run_case "attrs: axis out of range" 2 "axis 5" "$O" run --op sum --attrs '{"axes":[5]}' "$T/m23.npy" -o "$O"
run_case "attrs: axis given twice" 2 "axes" "$O" run --op sum --attrs '{"axes":[0,-2]}' "$T/m23.npy" -o "$O"
run_case "attrs: perm not a permutation" 2 "perm" "$O" run --op transpose --attrs '{"perm":[0,0]}' "$T/m23.npy" -o "$O"
run_case "attrs: perm of the wrong length" 2 "perm" "$O" run --op transpose --attrs '{"perm":[0]}' "$T/m23.npy" -o "$O"
run_case "attrs: slice past the end" 2 "slice" "$O" run --op slice --attrs '{"start":[2],"length":[5]}' "$T/v4.npy" -o "$O"
run_case "attrs: slice with a zero stride" 2 "stride" "$O" run --op slice --attrs '{"start":[0],"length":[2],"stride":[0]}' "$T/v4.npy" -o "$O"
run_case "attrs: reshape to another element count" 2 "reshape" "$O" run --op reshape --attrs '{"shape":[5]}' "$T/v4.npy" -o "$O"
run_case "attrs: concatenate axis out of range" 2 "axis" "$O" run --op concatenate --attrs '{"axis":3}' "$T/v3.npy" "$T/v4.npy" -o "$O"
run_case "attrs: as_type to an unknown dtype" 2 "dtype" "$O" run --op as_type --attrs '{"dtype":"c64"}' "$T/v3.npy" -o "$O"
run_case "attrs: not valid JSON" 2 "--attrs" "$O" run --op sum --attrs '{"axes":[0' "$T/v3.npy" -o "$O"
run_case "attrs: an op that takes none" 2 "negate" "$O" run --op negate --attrs '{"axes":[0]}' "$T/v3.npy" -o "$O"
run_case "iota without a shape" 2 "shape" "$O" run --op iota -o "$O"
run_case "iota shape over the element limit" 2 "iota" "$O" run --op iota --attrs '{"shape":[65536,65536]}' -o "$O"

# ---- inline JSON tensors
run_case "inline JSON with the wrong count" 2 "data" "$O" run --op negate '{"dtype":"f32","shape":[3],"data":[1,2]}' -o "$O"
run_case "inline JSON with an unknown dtype" 2 "dtype" "$O" run --op negate '{"dtype":"c8","shape":[1],"data":[1]}' -o "$O"
run_case "inline JSON with a bad string value" 2 "nope" "$O" run --op negate '{"dtype":"f32","shape":[1],"data":["nope"]}' -o "$O"
run_case "inline JSON that is not JSON" 2 "inline" "$O" run --op negate '{"dtype":"f32",' -o "$O"

# ---- usage
run_case "unknown option" 2 "--frob" "$O" run --op negate --frob "$T/v3.npy" -o "$O"
run_case "--attrs without --op" 2 "--attrs" "" run --attrs '{}' "$T/v3.npy"
run_case "output into a missing folder (I/O error)" 1 "$T/nodir/out.npy" "" run --op negate "$T/v3.npy" -o "$T/nodir/out.npy"
ok "$([ ! -e "$T/nodir" ]; echo $?)" "output into a missing folder creates nothing"

# ---- graphs: outputs are named in the graph; none may appear
G="$T/g"
mkdir -p "$G"
graph_case() { # desc status mention json
  printf '%s' "$4" >"$G/graph.json"
  rm -f "$G"/*.npy
  cp "$T/v3.npy" "$G/x.npy"
  run_case "$1" "$2" "$3" "$G/out.npy" run "$G/graph.json"
  find "$G" -mindepth 1 ! -name graph.json ! -name x.npy >"$T/extra"
  ok "$([ ! -s "$T/extra" ]; echo $?)" "$1: no other file appears beside the graph" "$(cat "$T/extra")"
}
graph_case "graph naming an unknown input" 2 '"nope"' \
  '{"inputs":{"x":"x.npy"},"ops":[{"op":"exp","in":["nope"],"out":"t"}],"outputs":{"t":"out.npy"}}'
graph_case "graph with a forward reference" 2 '"t1"' \
  '{"inputs":{"x":"x.npy"},"ops":[{"op":"exp","in":["t1"],"out":"t0"},{"op":"exp","in":["t0"],"out":"t1"}],"outputs":{"t1":"out.npy"}}'
graph_case "graph with a cycle onto itself" 2 '"t"' \
  '{"inputs":{"x":"x.npy"},"ops":[{"op":"add","in":["x","t"],"out":"t"}],"outputs":{"t":"out.npy"}}'
graph_case "graph output naming nothing" 2 '"zzz"' \
  '{"inputs":{"x":"x.npy"},"ops":[{"op":"exp","in":["x"],"out":"t"}],"outputs":{"zzz":"out.npy"}}'
graph_case "graph with an unknown op" 2 "frobnicate" \
  '{"inputs":{"x":"x.npy"},"ops":[{"op":"frobnicate","in":["x"],"out":"t"}],"outputs":{"t":"out.npy"}}'
graph_case "graph with a name used twice" 2 '"t"' \
  '{"inputs":{"x":"x.npy"},"ops":[{"op":"exp","in":["x"],"out":"t"},{"op":"exp","in":["x"],"out":"t"}],"outputs":{"t":"out.npy"}}'
graph_case "graph with bad attrs" 2 "perm" \
  '{"inputs":{"x":"x.npy"},"ops":[{"op":"transpose","in":["x"],"attrs":{"perm":[1]},"out":"t"}],"outputs":{"t":"out.npy"}}'
graph_case "graph whose shapes do not broadcast" 2 "broadcast" \
  '{"inputs":{"x":"x.npy","y":{"dtype":"f32","shape":[2],"data":[1,2]}},"ops":[{"op":"add","in":["x","y"],"out":"t"}],"outputs":{"t":"out.npy"}}'
graph_case "graph with an inline input of the wrong count" 2 "data" \
  '{"inputs":{"x":{"dtype":"f32","shape":[3],"data":[1,"nan"]}},"ops":[{"op":"exp","in":["x"],"out":"t"}],"outputs":{"t":"out.npy"}}'
graph_case "graph naming a missing input file" 1 "missing.npy" \
  '{"inputs":{"x":"missing.npy"},"ops":[{"op":"exp","in":["x"],"out":"t"}],"outputs":{"t":"out.npy"}}'
graph_case "graph that is not JSON" 2 "graph.json" '{"inputs":'
graph_case "graph with an unknown field" 2 '"extra"' \
  '{"inputs":{"x":"x.npy"},"ops":[],"outputs":{"x":"out.npy"},"extra":1}'
graph_case "graph with no outputs" 2 "outputs" \
  '{"inputs":{"x":"x.npy"},"ops":[{"op":"exp","in":["x"],"out":"t"}],"outputs":{}}'

# A graph whose second output cannot be written: all outputs or none, and
# a file that was already at the first output path must survive.
printf '%s' '{"inputs":{"x":"x.npy"},"ops":[{"op":"exp","in":["x"],"out":"t"},{"op":"negate","in":["x"],"out":"u"}],"outputs":{"t":"out.npy","u":"nodir/u.npy"}}' >"$G/graph.json"
rm -f "$G/out.npy"
"$NXVK" run "$G/graph.json" >/dev/null 2>"$T/stderr"
rc=$?
ok "$([ "$rc" -eq 1 ] && [ ! -e "$G/out.npy" ]; echo $?)" \
  "graph whose second output cannot be written: exit 1 and the first output is not left behind" \
  "exit $rc; $(ls "$G"); $(cat "$T/stderr")"
printf 'precious\n' >"$G/out.npy"
"$NXVK" run "$G/graph.json" >/dev/null 2>&1
ok "$([ "$(cat "$G/out.npy" 2>/dev/null)" = precious ]; echo $?)" \
  "graph whose second output cannot be written: a file already at the first output path survives" \
  "out.npy now: $(ls -l "$G/out.npy" 2>&1)"

# ---- and the good paths exit 0 with no tensor left alive (main.c checks)
"$NXVK" run --op add "$T/v3.npy" "$T/v3.npy" -o "$O" 2>"$T/stderr"
rc=$?
ok "$([ "$rc" -eq 0 ] && [ -s "$O" ] && [ ! -s "$T/stderr" ]; echo $?)" "a good run exits 0, writes its output, says nothing on stderr" "exit $rc; $(cat "$T/stderr")"
printf '%s' '{"inputs":{"x":"x.npy"},"ops":[{"op":"exp","in":["x"],"out":"t"},{"op":"sum","in":["t"],"out":"s"}],"outputs":{"s":"out.npy"}}' >"$G/graph.json"
rm -f "$G/out.npy"
"$NXVK" run "$G/graph.json" 2>"$T/stderr"
rc=$?
ok "$([ "$rc" -eq 0 ] && [ -s "$G/out.npy" ] && [ ! -s "$T/stderr" ]; echo $?)" "a good graph exits 0 and writes its output" "exit $rc; $(cat "$T/stderr")"
find "$T" -mindepth 1 -name '*.tmp*' >"$T/extra"
ok "$([ ! -s "$T/extra" ]; echo $?)" "no temporary files left in the working folders" "$(cat "$T/extra")"

echo "1..$n"
exit $fail
