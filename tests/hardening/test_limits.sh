#!/usr/bin/env bash
# tests/hardening/test_limits.sh - every documented input limit (nxvk(1)
# LIMITS, nxvk-port(7) LIMITS), at the limit and one past it, through the
# CLI.  At the limit the input is accepted, or refused for another,
# documented reason (named in the test); past it the answer is one line
# `nxvk: error: ...` with exit status 2 (too_large is a usage-class error),
# or a too_large reply from the port, and never a crash.
set -u
cd "$(dirname "$0")/../.."
NXVK=${NXVK:-$PWD/nxvk}
PY=/usr/bin/python3
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
EXPECT_TIMEOUT=120
. tests/tap.sh # ok, not_ok, expect_error (its one stderr line also rules out a sanitizer report or crash)

# expect_ok DESC REGEX CMD...: exit 0 and stdout matching REGEX.
expect_ok() {
  local desc=$1 re=$2; shift 2
  timeout 120 "$@" >"$T/out" 2>"$T/err"
  local rc=$?
  if [ "$rc" -eq 0 ] && grep -qE "$re" "$T/out"; then
    ok "$desc"
  else
    not_ok "$desc" "exit $rc, want stdout /$re/" "$(head -c 600 "$T/err")" "$(head -c 300 "$T/out")"
  fi
}

[ -x "$NXVK" ] || { echo "1..0 # SKIP $NXVK not built"; exit 0; }

# ---- files: .npy headers, ranks, element counts, sizes, graphs ----------
$PY - "$T" <<'EOF'
import json, struct, sys
T = sys.argv[1]

def npy(path, header, data=b"", version=1, hlen=None):
    """hlen: pad the header dict with spaces to exactly hlen bytes."""
    h = header.encode()
    if hlen is not None:
        h = h + b" " * (hlen - len(h) - 1) + b"\n"
    fmt, ver = ("<H", 1) if version == 1 else ("<I", 2)
    with open(f"{T}/{path}", "wb") as f:
        f.write(b"\x93NUMPY" + bytes([ver, 0]) + struct.pack(fmt, len(h)) + h + data)

two = struct.pack("<2f", 1.5, -2.0)
d = "{'descr': '<f4', 'fortran_order': False, 'shape': %s, }"
npy("hdr_at.npy", d % "(2,)", two, version=2, hlen=65536)
npy("hdr_past.npy", d % "(2,)", two, version=2, hlen=65537)
npy("rank8.npy", d % "(1, 1, 1, 1, 1, 1, 1, 2)" + "\n", two)
npy("rank9.npy", d % "(1, 1, 1, 1, 1, 1, 1, 1, 2)" + "\n", two)
u = "{'descr': '|u1', 'fortran_order': False, 'shape': %s, }\n"
npy("elems_at.npy", u % "(2147483647,)", b"\0")       # 2^31-1: the header is fine
npy("elems_past.npy", u % "(65536, 32768)", b"\0")     # 2^31
npy("dim_past.npy", u % "(2147483648,)", b"\0")
npy("file_at.npy", u % "(4,)", b"\0" * 4)               # truncated to 64 GiB below
npy("file_past.npy", u % "(4,)", b"\0" * 4)

# graphs: node count (views cost no kernel), JSON depth, op inputs
def chain(n):
    ops, prev = [], "x"
    for i in range(n):
        ops.append({"op": "reshape", "in": [prev], "attrs": {"shape": [-1] if i % 2 else [2, 2]}, "out": f"v{i}"})
        prev = f"v{i}"
    return {"inputs": {"x": {"dtype": "f32", "shape": [4], "data": [1, 2, 3, 4]}}, "ops": ops,
            "outputs": {prev: True}}
json.dump(chain(4096), open(f"{T}/nodes_at.json", "w"))
json.dump(chain(4097), open(f"{T}/nodes_past.json", "w"))

def deep(depth):
    # the graph object is level 1, "outputs" level 2; the rest nests in a list
    inner = "[" * (depth - 2) + "]" * (depth - 2)
    return '{"ops":[],"outputs":{"x":' + inner + '}}'
open(f"{T}/depth_at.json", "w").write(deep(64))
open(f"{T}/depth_past.json", "w").write(deep(65))

def concat(k):
    ins = {f"a{i}": {"dtype": "f32", "shape": [1], "data": [i]} for i in range(k)}
    return {"inputs": ins, "ops": [{"op": "concatenate", "in": list(ins), "out": "c"}],
            "outputs": {"c": True}}
json.dump(concat(64), open(f"{T}/inputs_at.json", "w"))
json.dump(concat(65), open(f"{T}/inputs_past.json", "w"))

# a graph file of exactly 256 MiB, and one byte more: spaces after the JSON
g = b'{"ops":[{"op":"iota","attrs":{"shape":[3]},"out":"i"}],"outputs":{"i":true}}'
for name, size in (("gsize_at.json", 1 << 28), ("gsize_past.json", (1 << 28) + 1)):
    with open(f"{T}/{name}", "wb") as f:
        f.write(g + b" " * (size - len(g) - 1) + b"\n")
EOF
truncate -s 64G "$T/file_at.npy"
truncate -s $(((1 << 36) + 1)) "$T/file_past.npy"
printf '1,2\n' >"$T/csv_past.csv"
truncate -s $(((1 << 36) + 1)) "$T/csv_past.csv"

# npy header length: 65536 bytes
expect_ok "npy header of 65536 bytes (the limit) is read" '\[1\.5,2\]' "$NXVK" run --op abs --print "$T/hdr_at.npy"
expect_error "npy header of 65537 bytes is refused" 2 "header length 65537 is over the limit" \
  "$NXVK" run --op abs "$T/hdr_past.npy"

# rank 8
expect_ok "rank 8 .npy works" 'f32 \[1,1,1,1,1,1,1,2\]' "$NXVK" run --op abs --print "$T/rank8.npy"
expect_error "rank 9 .npy is refused" 2 "rank is over the limit of 8" "$NXVK" run --op abs "$T/rank9.npy"
expect_ok "rank 8 inline tensor works" 'f32 \[1,1,1,1,1,1,1,1\]' \
  "$NXVK" run --op negate --print '{"dtype":"f32","shape":[1,1,1,1,1,1,1,1],"data":[3]}'
expect_error "rank 9 inline tensor is refused" 2 "rank is over the limit of 8" \
  "$NXVK" run --op negate '{"dtype":"f32","shape":[1,1,1,1,1,1,1,1,1],"data":[3]}'
expect_ok "reshape to rank 8 works" 'f32 \[1,1,1,1,1,1,1,2\]' \
  "$NXVK" run --op reshape --attrs '{"shape":[1,1,1,1,1,1,1,2]}' --print '{"dtype":"f32","data":[1,2]}'
expect_error "reshape to rank 9 is refused" 2 "shape.*(more entries than the maximum rank|rank)" \
  "$NXVK" run --op reshape --attrs '{"shape":[1,1,1,1,1,1,1,1,2]}' '{"dtype":"f32","data":[1,2]}'

# elements: below 2^31
expect_error "2^31-1 elements in a .npy header pass the limit (then: the data is truncated)" 2 \
  "data is truncated: shape \[2147483647\]" "$NXVK" run --op abs "$T/elems_at.npy"
expect_error "2^31 elements in a .npy header are refused" 2 "more than 2\^31-1 elements" \
  "$NXVK" run --op abs "$T/elems_past.npy"
expect_error "a .npy dimension of 2^31 is refused" 2 "over the limit of 2\^31-1" \
  "$NXVK" run --op abs "$T/dim_past.npy"
# iota makes its tensor on the device: at the limit the only refusal is the
# device's (lavapipe's storage buffer range, 128 MiB; documented in LIMITS)
expect_error "iota of 2^31-1 u8 elements passes the limit (then: the device's buffer range)" 2 \
  "storage buffer range|device memory|allocation" \
  "$NXVK" run --op iota --attrs '{"shape":[2147483647],"dtype":"u8"}' -o "$T/iota.npy"
expect_error "iota of 2^31 elements is refused" 2 "more than 2\^31-1 elements" \
  "$NXVK" run --op iota --attrs '{"shape":[65536,32768],"dtype":"u8"}' -o "$T/iota.npy"
expect_error "inline tensor of 2^31 elements is refused" 2 "more than 2\^31-1 elements" \
  "$NXVK" run --op abs '{"dtype":"f32","shape":[65536,32768],"data":[]}'
[ ! -e "$T/iota.npy" ] && ok "no output file after a refused run" || not_ok "no output file after a refused run"

# tensor file: 64 GiB (sparse files; only the size is looked at first)
expect_error "a 64 GiB .npy passes the size limit (then: trailing bytes after its data)" 2 \
  "trailing bytes" "$NXVK" run --op abs "$T/file_at.npy"
expect_error "a 64 GiB + 1 byte .npy is refused by its size" 2 "over the limit of 68719476736" \
  "$NXVK" run --op abs "$T/file_past.npy"
# a CSV over the limit must be refused by its size too, not read through
# (bounded here so a reader that tries cannot hurt the machine)
expect_error "a 64 GiB + 1 byte .csv is refused by its size" 2 "over the limit of 68719476736" \
  bash -c 'ulimit -v 4194304; exec timeout 10 "$0" run --op abs "$1"' "$NXVK" "$T/csv_past.csv"

# graph file: 256 MiB
expect_ok "a graph file of 256 MiB (the limit) runs" '\[0,1,2\]' "$NXVK" run --print "$T/gsize_at.json"
expect_error "a graph file of 256 MiB + 1 byte is refused" 2 "over 256 MiB|over the limit" \
  "$NXVK" run "$T/gsize_past.json"
rm -f "$T/gsize_at.json" "$T/gsize_past.json"

# graph nodes: 4096
expect_ok "a graph of 4096 ops runs" 'v4095: f32 \[4\]' "$NXVK" run --print "$T/nodes_at.json"
expect_error "a graph of 4097 ops is refused" 2 "4097 ops is over the limit of 4096" "$NXVK" run "$T/nodes_past.json"

# JSON depth: 64.  No valid tensor or graph nests that deep (rank <= 8), so
# at the limit the refusal is a different one; past it, the depth's.
expect_error "graph JSON nested 64 deep passes the depth check (then: not a name)" 2 \
  "outputs|is not a name|must be" "$NXVK" run "$T/depth_at.json"
if grep -q "nested deeper" "$T/err"; then not_ok "depth 64 is not refused for its depth" "$(cat "$T/err")"; else ok "depth 64 is not refused for its depth"; fi
expect_error "graph JSON nested 65 deep is refused" 2 "nested deeper than 64" "$NXVK" run "$T/depth_past.json"
d63=$(printf '%*s' 63 '' | tr ' ' '['); e63=$(printf '%*s' 63 '' | tr ' ' ']')
expect_error "inline tensor nested 64 deep passes the depth check (then: shape needed)" 2 \
  "shape.*required|nested deeper than shape" "$NXVK" run --op abs "{\"dtype\":\"f32\",\"data\":${d63}1${e63}}"
expect_error "inline tensor nested 65 deep is refused" 2 "nested deeper than 64 levels" \
  "$NXVK" run --op abs "{\"dtype\":\"f32\",\"data\":[${d63}1${e63}]}"

# op inputs: 64
args=(); for i in $(seq 64); do args+=("{\"dtype\":\"i32\",\"data\":[$i]}"); done
expect_ok "concatenate of 64 inputs works" 'i32 \[64\]' "$NXVK" run --op concatenate --print "${args[@]}"
expect_error "concatenate of 65 inputs is refused" 2 "more than 64 inputs" \
  "$NXVK" run --op concatenate "${args[@]}" '{"dtype":"i32","data":[0]}'
expect_ok "a graph op of 64 inputs works" 'c: f32 \[64\]' "$NXVK" run --print "$T/inputs_at.json"
expect_error "a graph op of 65 inputs is refused" 2 "more than 64 inputs" "$NXVK" run "$T/inputs_past.json"

# ---- nxvk port: --max-frame, header, rank, elements, inputs, nodes, depth --
expect_error "port --max-frame 63 (under the minimum) is a usage error" 2 "max-frame" \
  "$NXVK" port --max-frame 63 </dev/null
expect_error "port --max-frame 4G (over 4G-1) is a usage error" 2 "max-frame" \
  "$NXVK" port --max-frame 4G </dev/null
PYTHONDONTWRITEBYTECODE=1 PYTHONPATH=tests/hardening $PY - "$NXVK" <<'EOF' >"$T/port.tap"
import json, struct, sys
from portlib import frame, payload, raw_frame, session
nxvk = sys.argv[1]

def result(ok, desc, detail=""):
    print(("ok" if ok else "fail") + "\t" + desc + ("\t" + detail.replace("\n", " ")[:400] if not ok else ""))

def replies_by_request(reqs, reps):
    """The server answers in request order; a refused frame's reply may
    carry no id, so pair them by position (request id -> reply)."""
    ids = []
    for fr in (reqs if isinstance(reqs, list) else [reqs]):
        h = struct.unpack(">I", fr[4:8])[0]
        try:
            ids.append(json.loads(fr[8:8 + h]).get("id"))
        except ValueError:
            ids.append(None)
    return dict(zip(ids, reps)) if len(ids) == len(reps) else {}

def code(rep):
    return rep.get("error", {}).get("code") if not rep.get("ok") else "ok"

# --max-frame 64: a 64-byte payload is served, a 65-byte one refused
def ping_of(size):
    base = payload({"id": 1, "cmd": "ping", "echo": ""})
    p = payload({"id": 1, "cmd": "ping", "echo": "x" * (size - len(base))})
    assert len(p) == size
    return raw_frame(p)
at, past = ping_of(64), ping_of(65).replace(b'"id":1', b'"id":2')
rc, reps, err = session([nxvk, "port", "--max-frame", "64"],
                        at + past + frame({"id": 3, "cmd": "ping"}))
result(rc == 0 and len(reps) == 3, "port --max-frame 64: three frames, three replies, exit 0", f"rc {rc} {reps} {err}")
if len(reps) == 3:
    result(reps[0][0].get("ok") is True, "a 64-byte frame (the limit) is served", json.dumps(reps[0][0]))
    result(code(reps[1][0]) == "too_large" and reps[1][0].get("id") == 2,
           "a 65-byte frame gets too_large with its id", json.dumps(reps[1][0]))
    result(reps[2][0].get("ok") is True, "the server goes on after a refused frame", json.dumps(reps[2][0]))

# the default limit (1 GiB): a frame announced one byte over it, then the end
big = struct.pack(">I", (1 << 30) + 1) + payload({"id": 7, "cmd": "ping"})
rc, reps, err = session([nxvk, "port"], big)
result(rc == 0 and len(reps) == 1 and code(reps[0][0]) == "too_large" and reps[0][0].get("id") == 7,
       "a frame of 1 GiB + 1 byte (default --max-frame) gets too_large, then exit 0 at the end",
       f"rc {rc} {[r[0] for r in reps]} {err}")

# header length: 256 MiB.  At the limit the length passes (then: past the
# end of this short payload); one more is over the limit.
reqs = (raw_frame(payload({"id": 1, "cmd": "info"}, hlen=1 << 28)) +
        raw_frame(payload({"id": 2, "cmd": "info"}, hlen=(1 << 28) + 1)))
rc, reps, err = session([nxvk, "port"], reqs)
ok = rc == 0 and len(reps) == 2
result(ok and "past the end" in reps[0][0].get("error", {}).get("message", ""),
       "a header length of 256 MiB passes the limit (then: past the end of the payload)",
       f"{[r[0] for r in reps]}")
result(ok and "over the limit" in reps[1][0].get("error", {}).get("message", ""),
       "a header length of 256 MiB + 1 is over the limit", f"{[r[0] for r in reps]}")

# rank, elements, op inputs, graph nodes, graph depth
f32 = lambda *v: struct.pack(f"<{len(v)}f", *v)
reqs = [frame({"id": "one", "cmd": "put", "dtype": "f32", "shape": [1]}, f32(5)),  # handle 1
        frame({"id": "r8", "cmd": "put", "dtype": "f32", "shape": [1] * 7 + [2]}, f32(1, 2)),
        frame({"id": "r9", "cmd": "put", "dtype": "f32", "shape": [1] * 8 + [2]}, f32(1, 2)),
        frame({"id": "e_at", "cmd": "put", "dtype": "u8", "shape": [2147483647]}, b"\0"),
        frame({"id": "e_past", "cmd": "put", "dtype": "u8", "shape": [65536, 32768]}, b"\0")]
reqs += [frame({"id": "cat64", "cmd": "op", "op": "concatenate", "in": [1] * 64, "fetch": True}),
         frame({"id": "cat65", "cmd": "op", "op": "concatenate", "in": [1] * 65})]
rc, reps, err = session([nxvk, "port"], b"".join(reqs))
by = replies_by_request(reqs, reps)
def check(rid, want, desc, extra=None):
    r = by.get(rid)
    good = r is not None and code(r[0]) == want and (extra is None or extra(r))
    result(good, desc, json.dumps(r[0]) if r else f"no reply (rc {rc}, {err})")
check("r8", "ok", "port put of rank 8 works")
check("r9", "too_large", "port put of rank 9 is too_large")
check("e_at", "size_mismatch", "port put of 2^31-1 elements passes the limit (then: size_mismatch for 1 byte)")
check("e_past", "too_large", "port put of 2^31 elements is too_large")
check("cat64", "ok", "port op with 64 inputs works", lambda r: r[0].get("shape") == [64] and len(r[1]) == 256)
check("cat65", "too_large", "port op with 65 inputs is too_large")
result(rc == 0, "port session of puts and ops exits 0", f"rc {rc} {err}")

def chain(n):
    ops, prev = [], "x"
    for i in range(n):
        ops.append({"op": "reshape", "in": [prev], "attrs": {"shape": [-1]}, "out": f"v{i}"})
        prev = f"v{i}"
    return {"inputs": {"x": {"dtype": "f32", "shape": [2], "bytes": True}}, "ops": ops, "outputs": {prev: True}}
# the graph object nests d deep: itself, "outputs", then d - 2 lists
deep = lambda d: {"inputs": {}, "ops": [], "outputs": {"x": json.loads("[" * (d - 2) + "]" * (d - 2))}}
reqs = [frame({"id": "n4096", "cmd": "run", "graph": chain(4096), "fetch": True}, f32(1, 2)),
        frame({"id": "n4097", "cmd": "run", "graph": chain(4097)}, f32(1, 2)),
        frame({"id": "d64", "cmd": "run", "graph": deep(64)}),
        frame({"id": "d65", "cmd": "run", "graph": deep(65)})]
# a request header itself: nxvk(1) bounds JSON nesting (64, and one more for
# the request that wraps a graph); echo nests: request 1, echo 2, lists 3..
echo = lambda d: json.loads("[" * (d - 1) + "]" * (d - 1))
reqs += [frame({"id": "h65", "cmd": "ping", "echo": echo(65)}),
         frame({"id": "h66", "cmd": "ping", "echo": echo(66)})]
rc, reps, err = session([nxvk, "port"], b"".join(reqs))
by = replies_by_request(reqs, reps)
check("h65", "ok", "port request header nested 65 deep (a graph's 64 + the request) is served")
check("h66", "too_large", "port request header nested 66 deep is too_large")
check("n4096", "ok", "port run of a 4096-op graph works", lambda r: r[1] == f32(1, 2))
check("n4097", "too_large", "port run of a 4097-op graph is too_large")
check("d64", "bad_request", "port run of a graph nested 64 deep passes the depth check (then: bad_request)",
      lambda r: "nested deeper" not in r[0]["error"]["message"])
check("d65", "too_large", "port run of a graph nested 65 deep is too_large")
result(rc == 0, "port session of graphs exits 0", f"rc {rc} {err}")
EOF
pyrc=$?
while IFS=$'\t' read -r res desc detail; do
  if [ "$res" = ok ]; then ok "$desc"; else not_ok "$desc" "$detail"; fi
done <"$T/port.tap"
[ "$pyrc" -eq 0 ] || not_ok "port limit script ran to its end" "python exit $pyrc"

echo "1..$n"
