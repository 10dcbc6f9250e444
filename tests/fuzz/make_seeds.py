#!/usr/bin/python3
"""make_seeds.py - seed inputs for the fuzz targets (tests/fuzz/fuzz_*.c).

    tests/fuzz/make_seeds.py OUTDIR     writes OUTDIR/<target>/<name>

The committed corpus (tests/fuzz/corpus/) started from these seeds and grew
by fuzzing; this script says what the seeds were, so a corpus can be
rebuilt from nothing.  Op names come from `nxvk run --list-ops` when NXVK
points at a binary, else from a fixed list.
"""
import io
import json
import os
import struct
import subprocess
import sys

import numpy as np


def write(outdir, target, name, data):
    d = os.path.join(outdir, target)
    os.makedirs(d, exist_ok=True)
    if isinstance(data, str):
        data = data.encode()
    with open(os.path.join(d, name), "wb") as f:
        f.write(data)


def op_names():
    nxvk = os.environ.get("NXVK")
    if nxvk and os.access(nxvk, os.X_OK):
        out = subprocess.run([nxvk, "run", "--list-ops"], capture_output=True, text=True)
        names = [line.split()[0] for line in out.stdout.splitlines() if line.strip()]
        if names:
            return names
    return ("add subtract multiply divide pow max min remainder atan2 equal not_equal less "
            "less_equal greater greater_equal exp log sqrt rsqrt abs negate sigmoid tanh floor "
            "ceil round sign sin cos expm1 log1p erf select sum product reduce_max reduce_min "
            "argmax argmin mean dot reshape transpose slice concatenate as_type iota "
            "random_uniform random_normal").split()


# ---------------------------------------------------------------- npy
def npy_seeds(out):
    rng = np.random.default_rng(7)
    arrays = {
        "f4": np.array([[1.5, -0.0, np.nan], [np.inf, -np.inf, 1e-45]], dtype="<f4"),
        "f8": np.array([1.0, -0.0, np.nan, np.inf, 5e-324], dtype="<f8"),
        "i4": np.array([[0, -1], [2**31 - 1, -2**31]], dtype="<i4"),
        "u1": np.arange(7, dtype="|u1"),
        "b1": np.array([True, False, True]),
        "f4_scalar": np.array(3.25, dtype="<f4"),
        "f8_empty": np.zeros((0, 3), dtype="<f8"),
        "i4_rank8": np.arange(2 * 1 * 2 * 1 * 2 * 1 * 2 * 1, dtype="<i4").reshape(2, 1, 2, 1, 2, 1, 2, 1),
        "f4_3d": rng.standard_normal((2, 3, 4)).astype("<f4"),
    }
    for name, a in arrays.items():
        for version in ((1, 0), (2, 0), (3, 0)):
            for order in ("C", "F"):
                if order == "F" and a.ndim < 2:
                    continue
                b = np.asfortranarray(a) if order == "F" else np.ascontiguousarray(a)
                f = io.BytesIO()
                np.lib.format.write_array(f, b, version=version)
                write(out, "npy", f"{name}_v{version[0]}_{order}.npy", f.getvalue())
    for code in (">f4", ">f8", ">i4"):
        f = io.BytesIO()
        np.lib.format.write_array(f, np.array([[1, 2, 3], [4, 5, 6]], dtype=code), version=(1, 0))
        write(out, "npy", f"big_endian_{code[1:]}.npy", f.getvalue())
    # hand-written headers numpy would not produce, and broken ones
    def raw(header, data=b"", version=1):
        h = header.encode()
        if version == 1:
            return b"\x93NUMPY\x01\x00" + struct.pack("<H", len(h)) + h + data
        return b"\x93NUMPY" + bytes([version, 0]) + struct.pack("<I", len(h)) + h + data
    write(out, "npy", "hand_long_dims.npy", raw("{'descr': '<f4', 'fortran_order': False, 'shape': (2L, 1L), }\n", b"\0" * 8))
    write(out, "npy", "hand_tuple_no_comma.npy", raw("{'shape': (3), 'fortran_order': False, 'descr': '|u1'}\n", b"abc"))
    write(out, "npy", "hand_dquotes.npy", raw('{"descr": "<i4", "fortran_order": True, "shape": (1, 1)}\n', b"\1\0\0\0"))
    write(out, "npy", "bad_descr.npy", raw("{'descr': '<c8', 'fortran_order': False, 'shape': (1,), }\n", b"\0" * 8))
    write(out, "npy", "structured.npy", raw("{'descr': [('a', '<f4')], 'fortran_order': False, 'shape': (1,), }\n", b"\0" * 4))
    write(out, "npy", "truncated.npy", raw("{'descr': '<f8', 'fortran_order': False, 'shape': (4,), }\n", b"\0" * 9))
    write(out, "npy", "huge_dims.npy", raw("{'descr': '<f8', 'fortran_order': False, 'shape': (65536, 65536), }\n"))
    write(out, "npy", "zero_dim_huge.npy", raw("{'descr': '<f8', 'fortran_order': False, 'shape': (2147483647, 2147483647, 0), }\n"))
    write(out, "npy", "rank9.npy", raw("{'descr': '|u1', 'fortran_order': False, 'shape': (1,1,1,1,1,1,1,1,1), }\n", b"\0"))
    write(out, "npy", "v9.npy", b"\x93NUMPY\x09\x00\x10\x00" + b" " * 16)
    write(out, "npy", "magic_only.npy", b"\x93NUMPY")
    write(out, "npy", "v2_header_len_big.npy", b"\x93NUMPY\x02\x00\xff\xff\xff\x7f{")


# ---------------------------------------------------------------- json tensors
JSON_TENSORS = [
    {"dtype": "f32", "shape": [2, 3], "data": [1, 2, 3, 4, 5, 6]},
    {"dtype": "f32", "shape": [2, 2], "data": [[1, "nan"], ["inf", "-inf"]]},
    {"dtype": "f64", "shape": [4], "data": ["-0", "NaN", "Infinity", "+inf"]},
    {"dtype": "f64", "data": [1e308, -1e-320, 0.1, 2.5e-324]},
    {"dtype": "i32", "shape": [3], "data": [2147483647, -2147483648, 0]},
    {"dtype": "u8", "shape": [4], "data": [0, 255, True, False]},
    {"dtype": "float32", "shape": [], "data": 3.5},
    {"dtype": "int32", "data": 7},
    {"dtype": "f32", "shape": [0], "data": []},
    {"dtype": "f32", "shape": [2, 0], "data": [[], []]},
    {"dtype": "f32", "shape": [3, 0, 2], "data": []},
    {"dtype": "f64", "shape": [1, 1, 1, 1, 1, 1, 1, 2], "data": [[[[[[[[1, 2]]]]]]]]},
    {"dtype": "i32", "shape": [2, 2, 2], "data": [[[1, 2], [3, 4]], [[5, 6], [7, 8]]]},
    {"dtype": "u8", "shape": [2, 2], "data": [1, 2, 3, 4]},
]
JSON_BAD = [
    '{"dtype":"f32","shape":[2],"data":[1]}',
    '{"dtype":"f16","data":[1]}',
    '{"dtype":"i32","data":[1.5]}',
    '{"dtype":"u8","data":[256]}',
    '{"dtype":"f32","data":["nope"]}',
    '{"dtype":"f32","data":[1],"extra":1}',
    '{"dtype":"f32","dtype":"f64","data":[1]}',
    '{"dtype":"f32","shape":[1,1,1,1,1,1,1,1,1],"data":[1]}',
    '{"dtype":"f32","shape":[65536,65536],"data":[]}',
    '{"dtype":"f32","shape":[2],"data":[[1],[2]]}',
    '{"dtype":"f32","data":[1]} trailing',
    '{"dtype":"f32","data":' + "[" * 70 + "]" * 70 + "}",
    '{"dtype":"f32","data":[1,2,"\\u0000"]}',
    '{"dtype":"f32","shape":[-1],"data":[]}',
    '[1,2,3]',
]


def json_tensor_seeds(out):
    for i, t in enumerate(JSON_TENSORS):
        write(out, "json_tensor", f"ok_{i:02d}.json", json.dumps(t))
    for i, t in enumerate(JSON_BAD):
        write(out, "json_tensor", f"bad_{i:02d}.json", t)


# ---------------------------------------------------------------- graphs
def graph_seeds(out, ops):
    x = {"dtype": "f32", "shape": [2, 3], "data": [1, -2, 3, "nan", "-0", "inf"]}
    y = {"dtype": "f32", "shape": [3], "data": [10, 20, 30]}
    graphs = {
        "design": {"inputs": {"x": "x.npy", "y": {"dtype": "f32", "shape": [3], "data": [1, 2, "nan"]}},
                   "ops": [{"op": "exp", "in": ["x"], "out": "t0"},
                           {"op": "add", "in": ["t0", "y"], "out": "t1"},
                           {"op": "sum", "in": ["t1"], "attrs": {"axes": [0]}, "out": "s"}],
                   "outputs": {"t1": "t1.npy", "s": "s.npy"}},
        "chain": {"inputs": {"x": x, "y": y},
                  "ops": [{"op": "multiply", "in": ["x", "y"], "out": "a"},
                          {"op": "tanh", "in": ["a"], "out": "b"},
                          {"op": "greater", "in": ["b", "y"], "out": "c"},
                          {"op": "select", "in": ["c", "a", "b"], "out": "d"},
                          {"op": "mean", "in": ["d"], "attrs": {"axes": [1], "keep_axes": True}, "out": "m"}],
                  "outputs": {"d": True, "m": None}},
        "movement": {"inputs": {"x": x},
                     "ops": [{"op": "transpose", "in": ["x"], "attrs": {"perm": [1, 0]}, "out": "t"},
                             {"op": "reshape", "in": ["t"], "attrs": {"shape": [-1]}, "out": "r"},
                             {"op": "slice", "in": ["r"], "attrs": {"start": [1], "length": [2], "stride": [2]}, "out": "s"},
                             {"op": "concatenate", "in": ["s", "s", "r"], "attrs": {"axis": 0}, "out": "c"},
                             {"op": "as_type", "in": ["c"], "attrs": {"dtype": "i32"}, "out": "i"}],
                     "outputs": {"i": "i.npy"}},
        "dot": {"inputs": {"a": {"dtype": "f64", "shape": [2, 3], "data": [1, 2, 3, 4, 5, 6]},
                           "b": {"dtype": "f64", "shape": [3, 2], "data": [1, 0, 0, 1, 1, 1]}},
                "ops": [{"op": "dot", "in": ["a", "b"], "out": "c"},
                        {"op": "argmax", "in": ["c"], "attrs": {"axes": [1]}, "out": "am"}],
                "outputs": {"c": True, "am": True}},
        "sources": {"ops": [{"op": "iota", "attrs": {"shape": [2, 3], "axis": 1, "dtype": "f32"}, "out": "i"},
                            {"op": "random_uniform", "attrs": {"shape": [4], "seed": 42}, "out": "u"},
                            {"op": "random_normal", "attrs": {"shape": [2, 2], "seed": "18446744073709551615", "dtype": "f64"}, "out": "n"}],
                    "outputs": {"i": True, "u": True, "n": True}},
        "handles": {"inputs": {"h": {"handle": 3}, "k": {"handle": 9007199254740992}},
                    "ops": [{"op": "add", "in": ["h", "k"], "out": "s"}], "outputs": {"s": True}},
        "reduce_all": {"inputs": {"x": {"dtype": "i32", "shape": [2, 2], "data": [[1, 2], [3, 4]]}},
                       "ops": [{"op": "product", "in": ["x"], "out": "p"},
                               {"op": "reduce_min", "in": ["x"], "attrs": {"axes": [-1]}, "out": "m"}],
                       "outputs": {"p": True, "m": True}},
    }
    # one graph per op, fed by inline inputs of the arity it wants
    unary_in = {"dtype": "f32", "shape": [2, 2], "data": [0.5, -1, "inf", "-0"]}
    for op in ops:
        ins = {"a": unary_in, "b": unary_in,
               "p": {"dtype": "u8", "shape": [2, 2], "data": [1, 0, 0, 1]}}
        use = ["a"] if op not in ("add subtract multiply divide pow max min remainder atan2 equal "
                                  "not_equal less less_equal greater greater_equal dot concatenate").split() else ["a", "b"]
        if op == "select":
            use = ["p", "a", "b"]
        if op in ("iota", "random_uniform", "random_normal"):
            use = []
        node = {"op": op, "in": use, "out": "r"}
        if op in ("iota", "random_uniform", "random_normal"):
            node["attrs"] = {"shape": [3]}
        g = {"inputs": {k: ins[k] for k in use}, "ops": [node], "outputs": {"r": True}}
        graphs[f"op_{op}"] = g
    for name, g in graphs.items():
        write(out, "graph", f"{name}.json", json.dumps(g))
    bad = {
        "unknown_op": '{"ops":[{"op":"frobnicate","in":[],"out":"x"}],"outputs":{"x":true}}',
        "dup_name": '{"inputs":{"x":"a.npy"},"ops":[{"op":"exp","in":["x"],"out":"x"}],"outputs":{"x":true}}',
        "forward_ref": '{"inputs":{"x":"a.npy"},"ops":[{"op":"exp","in":["y"],"out":"z"},{"op":"exp","in":["x"],"out":"y"}],"outputs":{"z":true}}',
        "no_outputs": '{"ops":[],"outputs":{}}',
        "deep": '{"ops":[],"outputs":{"x":' + "[" * 70 + "]" * 70 + "}}",
        "bad_attr": '{"inputs":{"x":"a.npy"},"ops":[{"op":"sum","in":["x"],"attrs":{"perm":[0]},"out":"s"}],"outputs":{"s":true}}',
        "trailing": '{"ops":[{"op":"iota","attrs":{"shape":[2]},"out":"i"}],"outputs":{"i":true}} trailing',
        "abs_path": '{"inputs":{"x":"/tmp/x.npy"},"ops":[],"outputs":{"x":"/tmp/y.npy"}}',
    }
    for name, text in bad.items():
        write(out, "graph", f"bad_{name}.json", text)


# ---------------------------------------------------------------- csv
def csv_seeds(out):
    tables = {
        "plain": "1,2,3\n4,5,6\n",
        "crlf": "1.5,-2e3\r\n3.25,4\r\n",
        "bom": "\ufeff1,2\n3,4\n",
        "quoted": '"1"," 2 "\n"3",4\n',
        "special": "nan,inf,-inf\n-0,1e-45,3.4e39\n",
        "hex": "0x1p3,0x10\n",
        "ints": "2147483647,-2147483648\n0,1\n",
        "u8": "0,255\n1,2\n",
        "one": "7",
        "no_newline_end": "1,2\n3,4",
        "ragged": "1,2\n3\n",
        "empty_field": "1,,3\n",
        "text": "a,b\n",
        "empty": "",
        "blank_lines": "\n\n1,2\n\n3,4\n",
        "quote_newline": '"1\n",2\n',
        "unterminated": '"1,2\n',
        "long_field": "1" * 200 + "\n",
        "spaces": " 1 , 2 \n",
        "out_of_range": "2147483648,-2147483649\n256,-1\n",
    }
    for dt_i, dt in enumerate(("f32", "f64", "i32", "u8")):
        for name, text in tables.items():
            write(out, "csv", f"{dt}_{name}.csv", bytes([dt_i]) + text.encode())


# ---------------------------------------------------------------- port frames
def frame(header, data=b"", limit_byte=2, hlen=None):
    h = header if isinstance(header, bytes) else json.dumps(header).encode()
    n = len(h) if hlen is None else hlen
    return bytes([limit_byte]) + struct.pack(">I", n) + h + data


def port_seeds(out):
    f32_6 = struct.pack("<6f", 1, 2, 3, float("nan"), float("inf"), -0.0)
    g = {"inputs": {"x": {"dtype": "f32", "shape": [2, 3], "bytes": True}, "h": {"handle": 1}},
         "ops": [{"op": "add", "in": ["x", "h"], "out": "y"}], "outputs": {"y": True}}
    frames = {
        "info": frame({"id": 1, "cmd": "info"}),
        "ping": frame({"id": 2, "cmd": "ping", "echo": {"a": [1, 2, "x"]}}, b"\x00\x01\x02\xff"),
        "put": frame({"id": 3, "cmd": "put", "dtype": "f32", "shape": [2, 3]}, f32_6),
        "put_u8_empty": frame({"id": "s", "cmd": "put", "dtype": "u8", "shape": [0, 4]}),
        "get": frame({"id": 4, "cmd": "get", "handle": 1}),
        "free": frame({"id": 5, "cmd": "free", "handle": 1}),
        "free_many": frame({"id": 6, "cmd": "free", "handles": [1, 2, 2]}),
        "op": frame({"id": 7, "cmd": "op", "op": "sum", "in": [1], "attrs": {"axes": [0]}, "fetch": True, "keep": False}),
        "run": frame({"id": 8, "cmd": "run", "graph": g, "fetch": ["y"], "keep": True}, f32_6),
        "stats": frame({"id": 9, "cmd": "stats"}),
        "debug_lose_device": frame({"id": 10, "cmd": "debug_lose_device"}),
        "utf8": frame('{"id":"\u00e9\u4e2d\U0001f600","cmd":"ping"}'.encode()),
        "bad_utf8": frame(b'{"id":"\xc0\xaf","cmd":"ping"}'),
        "surrogate": frame(b'{"id":"\xed\xa0\x80","cmd":"ping"}'),
        "nul": frame(b'{"id":1,\x00"cmd":"ping"}'),
        "header_past_end": frame({"id": 1, "cmd": "info"}, hlen=4096),
        "header_zero": frame(b"", hlen=0),
        "short": bytes([2]) + b"\x00\x00",
        "limit64": frame({"id": 1, "cmd": "ping", "echo": "x" * 80}, limit_byte=0),
        "limit_max": frame({"id": 1, "cmd": "info"}, limit_byte=3),
        "trailing_text": frame(b'{"id":1,"cmd":"info"} x'),
        "not_object": frame(b"[1,2]"),
    }
    for name, data in frames.items():
        write(out, "port_frame", f"{name}.bin", data)


# ---------------------------------------------------------------- attrs
ATTRS = [
    "", "{}", "null",
    '{"axes":[0,-1]}', '{"axes":[],"keep_axes":true}', '{"keep_axes":false}',
    '{"perm":[2,0,1]}', '{"perm":[0,0]}',
    '{"start":[0,1],"length":[2,1]}', '{"start":[1],"length":[3],"stride":[2]}',
    '{"start":[0],"length":[1,1]}', '{"stride":[1]}',
    '{"axis":-1}', '{"axis":7}', '{"axis":1.5}',
    '{"shape":[-1,4]}', '{"shape":[2,-1,-1]}', '{"shape":[1,1,1,1,1,1,1,1,1]}',
    '{"dtype":"f64"}', '{"dtype":"float32","shape":[2,3],"axis":0}',
    '{"seed":9007199254740992}', '{"seed":"18446744073709551615"}', '{"seed":"18446744073709551616"}',
    '{"seed":"-1"}', '{"variant":"naive"}', '{"variant":"tiled"}', '{"variant":"xxxxxxxxxxxxxxxxxxxx"}',
    '{"bogus":1}', '[1]', '{"axes":' + "[" * 80 + "]" * 80 + "}",
]


def attrs_seeds(out):
    for i, a in enumerate(ATTRS):
        write(out, "attrs", f"attrs_{i:02d}.json", a)


def npz_seeds(out):
    """numpy.savez and savez_compressed files: several members, dtypes, orders."""
    arrays = {"x": np.arange(3, dtype=np.float32), "y": np.ones((2, 2), np.float64),
              "b": np.array([True, False]), "f": np.arange(6, dtype=np.uint8).reshape(2, 3, order="F"),
              "i": np.array([-1, 2], np.int32), "e": np.zeros((0, 2), np.float32)}
    for name, save in (("stored", np.savez), ("deflated", np.savez_compressed)):
        f = io.BytesIO()
        save(f, **arrays)
        write(out, "npz", f"{name}.npz", f.getvalue())
        f = io.BytesIO()
        save(f, np.float32(1.5))
        write(out, "npz", f"{name}_scalar.npz", f.getvalue())
    write(out, "npz", "empty.npz", b"PK\x05\x06" + b"\0" * 18)


def main():
    if len(sys.argv) != 2:
        sys.exit("usage: make_seeds.py OUTDIR")
    out = sys.argv[1]
    npy_seeds(out)
    npz_seeds(out)
    json_tensor_seeds(out)
    graph_seeds(out, op_names())
    csv_seeds(out)
    port_seeds(out)
    attrs_seeds(out)


if __name__ == "__main__":
    main()
