#!/usr/bin/python3
"""test_dtypes_numpy.py - numpy as the oracle for the dtypes [dtypes] added:
f16 bf16 i8 i16 i64 u16 u32 u64 bool (test_ops_numpy.py covers f32 f64 i32 u8).

For each dtype one graph holds every op `nxvk run --list-ops` lists for it,
on inputs full of that dtype's edge values (INT_MIN / -1, INT_MAX + 1,
u64 above 2^63, f16 65504 and its subnormals, bf16 NaN payloads and the
largest finite bf16, +-0, +-inf, NaN) beside random ones, 300 elements (both
sides of the 256-wide workgroup); it runs once op by op (--no-fusion) and
once fused, and every output is judged against numpy:
  - f16: numpy's float16 is computed the same way (in f32, rounded once), so
    exact ops must be bit-identical, the others within 1 f16 ulp;
  - bf16: numpy has none, so the oracle is f32-then-round-to-nearest-even on
    the bits (NaN: top payload bits kept, quiet bit set);
  - integers: Python integers wrapped to the type (two's complement), with
    the documented x/0 = 0, INT_MIN/-1 = INT_MIN, C remainder;
  - comparisons give bool; as_type between every pair follows nxvk-run(1).
A listed op x dtype with no oracle here fails.  Files: .npy of every dtype
in both byte orders, bf16 as '<V2' (what np.save writes for ml_dtypes'
bfloat16); JSON with exact 64-bit integers.  Size classes: 0, 1, 255, 256,
257, 65537.  A device without shaderInt64 (simulated) refuses i64 with exit 2.
TAP on stdout.
"""
import json
import os
import shutil
import sys
import tempfile

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import nphelp  # noqa: E402
from math_oracles import erf_inv_oracle, erfc_ref  # noqa: E402
from nphelp import NPT, bf16_bits, bf16_f32, check as tap, have_binary, list_ops, load_bits, nxvk, save  # noqa: E402

np.seterr(all="ignore")
TMP = nphelp.scratch("dtypes")
N = 300

NEW = ["f16", "bf16", "i8", "i16", "i64", "u16", "u32", "u64", "bool"]
ALLD = ["f16", "bf16", "f32", "f64", "i8", "i16", "i32", "i64", "u8", "u16", "u32", "u64", "bool"]
INTS = {"i8": (8, True), "i16": (16, True), "i32": (32, True), "i64": (64, True),
        "u8": (8, False), "u16": (16, False), "u32": (32, False), "u64": (64, False)}
EXACT = {"add", "subtract", "multiply", "divide", "max", "min", "remainder", "sqrt", "abs", "negate",
         "floor", "ceil", "round", "sign", "select", "equal", "not_equal", "less", "less_equal",
         "greater", "greater_equal"}
UNARY_F = {"exp": np.exp, "log": np.log, "sqrt": np.sqrt, "rsqrt": lambda x: 1 / np.sqrt(x),
           "abs": np.abs, "negate": np.negative, "sigmoid": lambda x: 1 / (1 + np.exp(-x)),
           "tanh": np.tanh, "floor": np.floor, "ceil": np.ceil,
           "round": lambda x: np.where(np.isfinite(x), np.sign(x) * np.floor(np.abs(x) + np.float32(0.5)), x),
           "sign": lambda x: np.where(np.isnan(x), x, np.sign(x) + np.float32(0)),
           "sin": np.sin, "cos": np.cos, "expm1": np.expm1, "log1p": np.log1p, "erf": None,
           "tan": np.tan, "asin": np.arcsin, "acos": np.arccos, "atan": np.arctan, "sinh": np.sinh,
           "cosh": np.cosh, "asinh": np.arcsinh, "acosh": np.arccosh, "atanh": np.arctanh,
           "cbrt": np.cbrt, "erfc": None, "erf_inv": None}
BINARY_F = {"add": np.add, "subtract": np.subtract, "multiply": np.multiply, "divide": np.divide,
            "pow": np.power, "max": np.maximum, "min": np.minimum, "remainder": np.fmod,
            "atan2": np.arctan2}
COMPARE = {"equal": np.equal, "not_equal": np.not_equal, "less": np.less, "less_equal": np.less_equal,
           "greater": np.greater, "greater_equal": np.greater_equal}
REDUCE = ("sum", "product", "reduce_max", "reduce_min", "argmax", "argmin", "mean")
# tests/ops/test_intops_numpy.py is the oracle of these, on every dtype
INTOPS = ("bitwise_and", "bitwise_or", "bitwise_xor", "bitwise_not", "left_shift", "right_shift",
          "count_leading_zeros", "population_count", "quotient", "logical_and", "logical_or",
          "logical_xor", "logical_not", "is_nan", "is_infinity", "all", "any", "reverse", "eye")

# ---------------------------------------------------------------- bf16 on the bits

def as_f32(dt, a):
    """a dtype's array (bf16: its uint16 bits) as f32 values (exact)."""
    return bf16_f32(a) if dt == "bf16" else np.asarray(a).astype(np.float32)


def round_to(dt, x32):
    """f32 values -> dtype storage (f16 array, or bf16 bits)."""
    return bf16_bits(x32) if dt == "bf16" else np.asarray(x32, np.float32).astype(np.float16)


# ---------------------------------------------------------------- .npy

def load(dt, path):
    """a result file; bf16 as its bits"""
    return load_bits(path, "bf16") if dt == "bf16" else np.load(path)


# ---------------------------------------------------------------- inputs

def int_range(dt):
    bits, signed = INTS[dt]
    return (-(1 << (bits - 1)), (1 << (bits - 1)) - 1) if signed else (0, (1 << bits) - 1)


def wrap(v, dt):
    if dt == "bool":
        return int(v != 0)
    bits, signed = INTS[dt]
    v &= (1 << bits) - 1
    return v - (1 << bits) if signed and v >> (bits - 1) else v


def inputs(dt, rng):
    """x, y (and a bool predicate) of N elements: edge values first, then random."""
    if dt == "bool":
        x = rng.integers(0, 2, N).astype(np.bool_)
        y = rng.integers(0, 2, N).astype(np.bool_)
        return x, y
    if dt in INTS:
        lo, hi = int_range(dt)
        edges = [(lo, -1), (hi, 1), (lo, 1), (hi, -1), (lo, lo), (hi, hi), (0, 0), (7, 0), (-7 if lo else 7, 2),
                 (1, 0), (hi, 2), (lo + 1, -1)]
        if not INTS[dt][1]:
            half = 1 << (INTS[dt][0] - 1)
            edges += [(half, 1), (half + 1, half), (hi, half), (half, 3)]  # u64 above 2^63 and friends
        edges = [(a if lo <= a <= hi else wrap(a, dt), b if lo <= b <= hi else wrap(b, dt)) for a, b in edges]
        xs = [a for a, _ in edges]
        ys = [b for _, b in edges]
        small = rng.integers(-100 if lo else 0, 100, N)
        full = rng.integers(lo, hi, N, dtype=np.int64 if dt != "u64" else np.uint64, endpoint=True)
        for i in range(len(xs), N):
            xs.append(int(full[i]) if i % 3 == 0 else int(small[i]))
            ys.append(int(full[(i * 7) % N]) if i % 5 == 0 else int(small[(i * 11) % N]) or 3)
        return np.array(xs, NPT[dt]), np.array(ys, NPT[dt])
    # floats: f32 values exact in the dtype
    if dt == "f16":
        edges = [65504.0, -65504.0, 6.103515625e-05, 5.960464477539063e-08, -5.960464477539063e-08,
                 3.0517578125e-05, 0.0, -0.0, np.inf, -np.inf, np.nan, 1.0, 1.0009765625, 0.99951171875,
                 65504.0, 32.0, 2.0, -1.5]
        yedges = [65504.0, 16.0, 6.103515625e-05, 5.960464477539063e-08, 2.0, 0.5, -0.0, 0.0, 1.0, np.inf,
                  1.0, 3.0, -1.0, 2.0, 1.0, 0.0, -0.0, np.nan]
    else:
        big = float(bf16_f32(np.array([0x7f7f], np.uint16))[0])   # the largest finite bf16
        payload = bf16_f32(np.array([0x7fc1, 0xff81, 0x7f81, 0x0001, 0x8001, 0x0080], np.uint16))
        edges = [big, -big] + [float(v) for v in payload] + [0.0, -0.0, np.inf, -np.inf, 1.0, 1.0078125,
                                                             3.0, -2.5, big, 2.0]
        yedges = [big, 2.0, 1.0, 2.0, np.nan, 1.0, 2.0, 0.5, -0.0, 0.0, 1.0, -1.0, 3.0, 1.0, 0.0, 7.0, 1.0, 0.5]
    r = rng.uniform(-4, 4, 2 * N).astype(np.float32)
    x = np.concatenate([np.array(edges, np.float32), r[:N - len(edges)]])
    y = np.concatenate([np.array(yedges, np.float32), r[N:2 * N - len(yedges)]])
    y[len(yedges):][::7] = 0.0   # some zero divisors
    return round_to(dt, x), round_to(dt, y)


# ---------------------------------------------------------------- oracles

def int_op(name, a, b, dt):
    a, b = int(a), int(b)
    if name == "add": return wrap(a + b, dt)
    if name == "subtract": return wrap(a - b, dt)
    if name == "multiply": return wrap(a * b, dt)
    if name == "divide":
        if b == 0: return 0
        q = abs(a) // abs(b)
        return wrap(q if (a < 0) == (b < 0) else -q, dt)   # INT_MIN / -1 wraps to INT_MIN
    if name == "remainder":
        if b == 0: return 0
        r = abs(a) % abs(b)
        return wrap(-r if a < 0 else r, dt)
    if name == "max": return max(a, b)
    if name == "min": return min(a, b)
    if name == "abs": return wrap(abs(a), dt)
    if name == "negate": return wrap(-a, dt)
    if name == "sign": return (a > 0) - (a < 0)
    raise KeyError(name)


def oracle_ew(name, dt, x, y, pred):
    """(expected storage array, exact?) or None when no oracle."""
    if name in COMPARE:
        if dt == "bf16":
            return COMPARE[name](bf16_f32(x), bf16_f32(y)), True
        if dt in INTS:
            return np.array([COMPARE[name](int(a), int(b)) for a, b in zip(x, y)], np.bool_), True
        return COMPARE[name](x, y), True
    if name == "select":
        return np.where(pred, x, y), True
    if dt == "bool":
        return None
    if dt in INTS:
        unary = name in ("abs", "negate", "sign")
        try:
            vals = [int_op(name, a, 0 if unary else b, dt) for a, b in zip(x, y)]
        except KeyError:
            return None
        return np.array(vals, NPT[dt]), True
    x32, y32 = as_f32(dt, x), as_f32(dt, y)
    if name in BINARY_F:
        f = BINARY_F[name]
        r = f(x32, y32)
        if name in ("max", "min"):  # numpy maximum: NaN wins, ties give... equal zeros: b (nxvk) vs a
            r = np.where(np.isnan(x32), x32, np.where(np.isnan(y32), y32,
                                                      (np.where(x32 > y32, x32, y32) if name == "max"
                                                       else np.where(x32 < y32, x32, y32))))
    elif name in UNARY_F:
        if name == "erf":
            import math
            r = np.array([math.erf(float(v)) for v in x32], np.float32)
        elif name in ("erfc", "erf_inv"):
            r = (erfc_ref if name == "erfc" else erf_inv_oracle)(x32.astype(np.float64)).astype(np.float32)
        else:
            r = UNARY_F[name](x32)
    else:
        return None
    return round_to(dt, np.asarray(r, np.float32)), name in EXACT


def ulps(dt, got, want):
    """distance in units of the dtype (inf across classes, 0 for both NaN)."""
    g = as_f32(dt, got).astype(np.float64)
    w = as_f32(dt, want).astype(np.float64)
    out = np.zeros(len(g))
    both_nan = np.isnan(g) & np.isnan(w)
    eq = (g == w) & (np.signbit(g) == np.signbit(w))
    p, emin = (11, -14) if dt == "f16" else (8, -126)
    aw = np.abs(w)
    e = np.floor(np.log2(np.where(aw > 0, aw, 1.0)))
    ulp = np.ldexp(1.0, (np.maximum(e, emin) - (p - 1)).astype(int))
    d = np.abs(g - w) / ulp
    out = np.where(both_nan | eq, 0, np.where(np.isfinite(g) & np.isfinite(w), d, np.inf))
    return out


def judge(dt, name, got, want, exact, mask=None):
    if got.shape != want.shape:
        return False, "shape %s, want %s" % (got.shape, want.shape)
    got, want = got.reshape(-1), want.reshape(-1)
    if mask is not None:
        got, want = got[mask], want[mask]
    if dt in ("f16", "bf16") and got.dtype != np.bool_:
        gb = got.view(np.uint16) if dt == "f16" else got
        wb = want.view(np.uint16) if dt == "f16" else want
        u = ulps(dt, gb if dt == "bf16" else got, wb if dt == "bf16" else want)
        lim = 0 if exact else 1
        bad = np.nonzero(u > lim)[0]
        if len(bad):
            i = bad[0]
            return False, "%d of %d over %d ulp; first [%d]: got 0x%04x want 0x%04x" % (
                len(bad), len(u), lim, i, int(gb[i]), int(wb[i]))
        return True, None
    if got.dtype.kind == "f":  # bits, with any NaN equal to any NaN
        w = np.asarray(want, got.dtype)
        gi = got.view("u%d" % got.dtype.itemsize)
        wi = w.view("u%d" % got.dtype.itemsize)
        bad = [i for i in range(len(got)) if not (np.isnan(got[i]) and np.isnan(w[i])) and gi[i] != wi[i]]
        g = got
    else:
        g = got.astype(object) if got.dtype.kind in "iu" else got
        w = np.asarray(want).astype(got.dtype).astype(object) if got.dtype.kind in "iu" else np.asarray(want, got.dtype)
        bad = [i for i in range(len(g)) if g[i] != w[i]]
    if bad:
        i = bad[0]
        return False, "%d of %d differ; first [%d]: got %r want %r" % (len(bad), len(g), i, g[i], w[i])
    return True, None


def int_to_f32(t):
    """a Python integer rounded to f32, to nearest even, in one rounding."""
    m = abs(t)
    bl = m.bit_length()
    if bl > 24:
        sh = bl - 24
        q, r = divmod(m, 1 << sh)
        half = 1 << (sh - 1)
        if r > half or (r == half and q & 1):
            q += 1
        m = q << sh
    return np.float32(float(-m if t < 0 else m))


def astype_oracle(src, dst, a):
    """The documented as_type of array a (src storage) to dst storage."""
    if src == dst:
        return np.array(a, copy=True)   # the bits, NaN payloads included
    if dst == "bool":
        if src in ("f16", "bf16", "f32", "f64"):
            v = as_f32(src, a) if src != "f64" else a
            return np.array([bool(t != 0 or t != t) for t in v], np.bool_)
        return np.array([int(t) != 0 for t in a], np.bool_)
    sfloat = src in ("f16", "bf16", "f32", "f64")
    if dst in ("f16", "bf16", "f32", "f64"):
        if sfloat:
            v = a.astype(np.float64) if src not in ("bf16",) else bf16_f32(a).astype(np.float64)
            if dst == "f64": return v
            if dst == "f32": return v.astype(np.float32)
            if dst == "f16": return v.astype(np.float16)            # numpy rounds f64 -> f16 once
            # bf16 from f64 in one rounding: through f32 rounded to odd
            f = v.astype(np.float32)
            fb = f.view(np.uint32).copy()
            inexact = np.isfinite(f) & (f.astype(np.float64) != v) & ~np.isnan(v)
            down = inexact & (np.abs(f.astype(np.float64)) > np.abs(v))
            fb = np.where(down, fb - 1, fb)
            fb = np.where(inexact, fb | 1, fb).astype(np.uint32)
            return bf16_bits(fb.view(np.float32))
        ints = [int(t) for t in a]
        if dst == "f64": return np.array([float(t) for t in ints], np.float64)
        f32 = np.array([int_to_f32(t) for t in ints], np.float32)
        if dst == "f32": return f32
        return round_to(dst, f32)  # f16 / bf16 through f32
    lo, hi = int_range(dst)
    if sfloat:
        v = as_f32(src, a).astype(np.float64) if src != "f64" else a
        out = []
        for t in v:
            if t != t: out.append(0)
            elif t >= hi + 1: out.append(hi)
            elif t <= lo - 1 and lo < 0 and t <= lo: out.append(lo)
            elif t <= lo: out.append(lo)
            else: out.append(int(t))
        return np.array(out, NPT[dst])
    return np.array([wrap(int(t), dst) for t in a], NPT[dst])


# ---------------------------------------------------------------- the graph per dtype

def run_graph(gdir, graph, fusion):
    os.makedirs(os.path.join(gdir, "out"), exist_ok=True)
    gpath = os.path.join(gdir, "g.json")
    with open(gpath, "w") as f:
        json.dump(graph, f)
    return nxvk(["run", gpath] + ([] if fusion else ["--no-fusion"]))


def test_dtype(dt, ops, rng):
    gdir = tempfile.mkdtemp(prefix=dt + "_", dir=TMP)
    x, y = inputs(dt, rng)
    pred = rng.integers(0, 2, N).astype(np.bool_)
    save(os.path.join(gdir, "x.npy"), dt, x)
    save(os.path.join(gdir, "y.npy"), dt, y, ">")          # the other byte order
    np.save(os.path.join(gdir, "p.npy"), pred)
    xr = x.reshape(3, 100)
    save(os.path.join(gdir, "xr.npy"), dt, xr)
    yd = y[:200].reshape(100, 2)
    save(os.path.join(gdir, "yd.npy"), dt, yd)
    nodes, outs, expect = [], {}, []
    # the ordering ops' oracle is tests/ops/test_ordering_numpy.py (every dtype); the
    # shape and indexing ops' tests/ops/test_index_numpy.py (every dtype numpy has);
    # bitcast's tests/ops/test_bitcast_numpy.py
    elsewhere = ("cumulative_", "sort", "argsort", "top_k", "window_", "bitcast")
    index_ops = ("broadcast", "pad", "dynamic_slice", "put_slice", "gather", "take", "take_along_axis",
                 "indexed_add", "indexed_put")
    mine = [name for name, dts in ops.items()
            if dt in dts and not name.startswith(elsewhere) and name not in index_ops]
    for name in mine:
        if name in INTOPS:
            continue
        out = "o_" + name
        if name in BINARY_F or name in COMPARE or name in ("abs", "negate", "sign") or name in UNARY_F or name == "select":
            ins = ["p", "x", "y"] if name == "select" else (["x"] if (name in UNARY_F or name in ("abs", "negate", "sign")) and name not in BINARY_F else ["x", "y"])
            o = oracle_ew(name, dt, x, y, pred)
            if o is None:
                tap(False, "%s %s: no oracle here" % (name, dt))
                continue
            nodes.append({"op": name, "in": ins, "out": out})
            expect.append((name, out, o[0], o[1], dt if name not in COMPARE else "bool"))
        elif name in REDUCE:
            nodes.append({"op": name, "in": ["xr"], "attrs": {"axes": [1]}, "out": out})
            expect.append((name, out, None, False, "i32" if name.startswith("arg") else dt))
        elif name in ("transpose", "slice", "concatenate", "reshape"):
            attrs = {"transpose": {}, "slice": {"start": [0, 1], "length": [3, 50], "stride": [1, 2]},
                     "concatenate": {"axis": 0}, "reshape": {"shape": [100, 3]}}[name]
            ins = ["xr", "xr"] if name == "concatenate" else ["xr"]
            nodes.append({"op": name, "in": ins, "attrs": attrs, "out": out})
            want = {"transpose": lambda: xr.T, "slice": lambda: xr[0:3, 1:101:2],
                    "concatenate": lambda: np.concatenate([xr, xr]), "reshape": lambda: xr.reshape(100, 3)}[name]()
            expect.append((name, out, np.ascontiguousarray(want), True, dt))
        elif name == "as_type":
            for to in ALLD:
                o2 = "o_as_" + to
                nodes.append({"op": "as_type", "in": ["x"], "attrs": {"dtype": to}, "out": o2})
                outs[o2] = "out/%s.npy" % o2
                expect.append(("as_type to " + to, o2, astype_oracle(dt, to, x), True, to))
            continue
        elif name == "dot":
            nodes.append({"op": "dot", "in": ["xr", "yd"], "out": out})
            expect.append(("dot", out, None, False, dt))
            if dt in ("f16", "bf16"):  # the f32 sums kept: "dtype": "f32"
                nodes.append({"op": "dot", "in": ["xr", "yd"], "attrs": {"dtype": "f32"}, "out": "o_dot32"})
                outs["o_dot32"] = "out/o_dot32.npy"
                expect.append(("dot32", "o_dot32", None, False, "f32"))
        elif name == "iota":
            nodes.append({"op": "iota", "attrs": {"shape": [N], "dtype": dt}, "out": out})
            if dt == "bool":
                want = np.arange(N) != 0
            elif dt in INTS:
                want = np.array([wrap(i, dt) for i in range(N)], NPT[dt])
            else:
                want = round_to(dt, np.arange(N, dtype=np.float32))
            expect.append(("iota", out, want, True, dt))
        elif name == "conv":
            # [1,3,100] (xr) with the kernel [2,3,2] made of y's first 12 values (edge values)
            nodes += [{"op": "reshape", "in": ["xr"], "attrs": {"shape": [1, 3, 100]}, "out": out + "_x"},
                      {"op": "slice", "in": ["yd"], "attrs": {"start": [0, 0], "length": [6, 2]}, "out": out + "_s"},
                      {"op": "reshape", "in": [out + "_s"], "attrs": {"shape": [2, 3, 2]}, "out": out + "_w"},
                      {"op": "conv", "in": [out + "_x", out + "_w"], "out": out}]
            expect.append((name, out, None, False, dt))
        elif name.startswith("random_"):
            nodes.append({"op": name, "attrs": {"shape": [N], "dtype": dt, "seed": 7}, "out": out})
            expect.append((name, out, None, False, dt))
        else:
            tap(False, "%s %s: no oracle here" % (name, dt))
            continue
        outs[out] = "out/%s.npy" % out
    graph = {"inputs": {"x": "x.npy", "y": "y.npy", "p": "p.npy", "xr": "xr.npy", "yd": "yd.npy"},
             "ops": nodes, "outputs": outs}
    results = {}
    for fusion in (False, True):
        rc, so, err = run_graph(gdir, graph, fusion)
        tap(rc == 0, "%s: graph of %d ops (%s) runs" % (dt, len(nodes), "fused" if fusion else "op by op"), err.strip())
        if rc != 0:
            return
        got = {o: load(e[4], os.path.join(gdir, "out", o + ".npy")) for (_, o, _, _, _), e in
               zip(expect, expect)}
        results[fusion] = got
    for name, out, want, exact, odt in expect:
        got = results[False][out]
        if name in REDUCE:
            ok, d = judge_reduce(name, dt, xr, got)
        elif name == "dot":
            ok, d = judge_dot(dt, xr, yd, got)
        elif name == "dot32":
            ok, d = judge_dot32(dt, xr, yd, got, results[False]["o_dot"])
        elif name == "conv":
            ok, d = judge_conv(dt, xr, yd, got)
        elif name.startswith("random_"):
            v = as_f32(dt, got)
            if name == "random_uniform":
                ok, d = bool(np.all((v >= 0) & (v < 1))), "outside [0, 1)"
            else:
                ok, d = bool(np.all(np.isfinite(v))) and abs(float(np.mean(v))) < 0.5, "not finite or mean off"
        else:
            mask = None
            if name in ("sin", "cos"):
                # the f32 limit bounds builtin sin/cos only in [-pi, pi] (conformance/limits.json:
                # unbounded outside); huge finite arguments are left out here
                v = as_f32(dt, x)
                mask = ~(np.isfinite(v) & (np.abs(v) > 100))
            ok, d = judge(odt if odt in ("f16", "bf16") else dt, name, got, np.asarray(want), exact, mask)
            if odt != dt and odt not in ("f16", "bf16"):
                ok, d = judge(odt, name, got, np.asarray(want), True)
        tap(ok, "%s %s against numpy (%d elements, edge values first)" % (dt, name, got.size), d)
        same = results[True][out].tobytes() == got.tobytes()
        if name.startswith("o_as") or not name.startswith("random_"):
            tap(same, "%s %s: fused result bit-identical to op by op" % (dt, name))


def judge_dot(dt, a, b, got):
    """[3,100] x [100,2]: integers exact and wrapping; f16/bf16 within n*eps*sum|a*b| of the f64
    product (summed in f32, rounded once), non-finite results by class."""
    if dt in INTS:
        A = [[int(v) for v in r] for r in a]
        B = [[int(v) for v in r] for r in b]
        want = [[wrap(sum(A[i][k] * B[k][j] for k in range(len(B))), dt) for j in range(2)] for i in range(3)]
        g = [[int(v) for v in r] for r in got]
        return g == want, "got %s want %s" % (g, want)
    A, B = as_f32(dt, a).astype(np.float64), as_f32(dt, b).astype(np.float64)
    g = as_f32(dt, got).astype(np.float64)
    want = A @ B
    scale = np.abs(A) @ np.abs(B)
    eps = 2.0 ** (-11 if dt == "f16" else -8)
    top = 65504 if dt == "f16" else 3.3e38
    ok = True
    for w, s_, v in zip(want.ravel(), scale.ravel(), g.ravel()):
        if not np.isfinite(w) or not np.isfinite(s_) or abs(w) > top:
            ok &= bool((np.isnan(v) and (np.isnan(w) or not np.isfinite(s_))) or np.isinf(v) or np.isnan(w))
        else:
            ok &= bool(abs(v - w) <= 100 * eps * s_ + 2 * eps * abs(w))
    return ok, "got %s want %s" % (g.ravel(), want.ravel())


def judge_dot32(dt, a, b, got, narrow):
    """dot with "dtype": "f32" on f16/bf16: an f32 result within K * 2^-24 * sum|a*b| of numpy's
    f64 product (non-finite by class), and rounding it to dt gives the plain dot's bits (the
    same f32 sums, rounded once; a NaN is any NaN)."""
    if got.dtype != np.float32:
        return False, "result dtype %s, want float32" % got.dtype
    A, B = as_f32(dt, a).astype(np.float64), as_f32(dt, b).astype(np.float64)
    want, scale = A @ B, np.abs(A) @ np.abs(B)
    ok = True
    for w, s_, v in zip(want.ravel(), scale.ravel(), got.astype(np.float64).ravel()):
        if not np.isfinite(w) or not np.isfinite(s_) or abs(w) > 3.4e38:
            ok &= bool(np.isnan(v) or np.isinf(v) or np.isnan(w))
        else:
            ok &= bool(abs(v - w) <= A.shape[1] * 2.0 ** -24 * s_ + 2.0 ** -24 * abs(w))
    # NaN by class: which NaN's payload a sum carries is the compiled code's (Vulkan keeps none)
    r, nw = round_to(dt, got).ravel(), np.asarray(narrow).ravel()
    isnan = lambda v: np.isnan(as_f32(dt, v))  # noqa: E731
    same = bool(np.all((isnan(r) & isnan(nw)) | (r.view(np.uint16) == nw.view(np.uint16))))
    return ok and same, "got %s want %s; rounded to %s equal to dot's: %s" % (got.ravel(), want.ravel(), dt, same)


def judge_conv(dt, xr, yd, got):
    """conv of xr as [1,3,100] with yd's first 12 values as [2,3,2]: as judge_dot, the f64 sums of
    the products by explicit loops (valid padding: 99 outputs per output channel)"""
    A = as_f32(dt, xr).astype(np.float64).reshape(3, 100)
    W = as_f32(dt, yd).astype(np.float64).reshape(-1)[:12].reshape(2, 3, 2)
    want = np.zeros((2, 99))
    scale = np.zeros((2, 99))
    with np.errstate(all="ignore"):
        for o in range(2):
            for t in range(99):
                prods = [A[c, t + k] * W[o, c, k] for c in range(3) for k in range(2)]
                want[o, t] = sum(prods)
                scale[o, t] = sum(abs(p) for p in prods)
    g = as_f32(dt, got).astype(np.float64).reshape(-1)
    if g.size != want.size:
        return False, "got %d elements, want [1,2,99]" % g.size
    eps = 2.0 ** (-11 if dt == "f16" else -8)
    top = 65504 if dt == "f16" else 3.3e38
    ok = True
    for w, s_, v in zip(want.ravel(), scale.ravel(), g):
        if not np.isfinite(w) or not np.isfinite(s_) or abs(w) > top:
            ok &= bool((np.isnan(v) and (np.isnan(w) or not np.isfinite(s_))) or np.isinf(v) or np.isnan(w))
        else:
            ok &= bool(abs(v - w) <= 6 * eps * s_ + 2 * eps * abs(w))
    return ok, "got %s want %s" % (g, want.ravel())


def judge_reduce(name, dt, xr, got):
    if dt == "bool":
        return False, "no oracle for bool reductions"
    if dt in INTS:
        rows = [[int(v) for v in r] for r in xr]
        if name == "sum": want = [wrap(sum(r), dt) for r in rows]
        elif name == "product":
            want = []
            for r in rows:
                p = 1
                for v in r: p = wrap(p * v, dt)
                want.append(p)
        elif name == "reduce_max": want = [max(r) for r in rows]
        elif name == "reduce_min": want = [min(r) for r in rows]
        elif name == "argmax": want = [r.index(max(r)) for r in rows]
        elif name == "argmin": want = [r.index(min(r)) for r in rows]
        else: return False, "no oracle for %s" % name
        g = [int(v) for v in got]
        return g == want, "got %s want %s" % (g, want)
    v = as_f32(dt, xr).astype(np.float64)
    g = as_f32(dt, got).astype(np.float64) if name not in ("argmax", "argmin") else got
    if name in ("argmax", "argmin"):
        want = []
        for r in v:
            nan = np.nonzero(np.isnan(r))[0]
            want.append(int(nan[0]) if len(nan) else int(np.argmax(r) if name == "argmax" else np.argmin(r)))
        return [int(t) for t in g] == want, "got %s want %s" % (list(g), want)
    if name in ("reduce_max", "reduce_min"):
        want = np.array([np.nan if np.isnan(r).any() else (r.max() if name == "reduce_max" else r.min()) for r in v])
        ok = all((np.isnan(a) and np.isnan(b)) or a == b for a, b in zip(g, want))
        return ok, "got %s want %s" % (g, want)
    f = {"sum": np.sum, "product": np.prod, "mean": np.mean}[name]
    want = np.array([f(r) for r in v])
    eps = 2.0 ** (-11 if dt == "f16" else -8)
    scale = np.array([f(np.abs(r)) for r in v])
    ok = True
    for a, b, s in zip(g, want, scale):
        if np.isnan(b) or np.isinf(b) or abs(b) > (65504 if dt == "f16" else 3e38):
            ok &= bool(np.isnan(a) == np.isnan(b) and (np.isnan(a) or np.isinf(a) or a == b))
        else:
            ok &= bool(abs(a - b) <= 100 * eps * s + 2 * eps * abs(b))
    return ok, "got %s want %s" % (g, want)


# ---------------------------------------------------------------- files, sizes, devices

def test_files(rng):
    d = tempfile.mkdtemp(prefix="files_", dir=TMP)
    for dt in ALLD:
        x, _ = inputs(dt, rng) if dt not in ("f32", "f64", "i32", "u8") else (
            np.arange(5).astype(NPT[dt]), None)
        for order in ("<", ">"):
            p = os.path.join(d, "in.npy")
            save(p, dt, x, order)
            o = os.path.join(d, "out.npy")
            rc, _, err = nxvk(["run", "--op", "reshape", "--attrs", '{"shape":[-1]}', p, "-o", o])
            ok = rc == 0
            if ok:
                back = load(dt, o)
                ok = back.tobytes() == np.asarray(x).astype(back.dtype).tobytes()
                err = "written back as %s" % back.dtype
            tap(ok, "%s .npy %s round trip through nxvk (written %s)" % (
                dt, {"<": "little-endian", ">": "big-endian"}[order], "'<V2'" if dt == "bf16" else "by numpy"), err)
            if dt == "bf16" and rc == 0:
                # '<V2' is what nxvk writes, as np.save does for ml_dtypes' bfloat16
                with open(o, "rb") as f:
                    head = f.read(128)
                tap(b"'descr': '<V2'" in head, "bf16 written with descr '<V2'", head[:80])
    # JSON: 64-bit integers exact as strings, bf16 / f16 printed
    rc, out, err = nxvk(["run", "--op", "add", "--print",
                         '{"dtype":"u64","shape":[2],"data":["18446744073709551615","9223372036854775808"]}',
                         '{"dtype":"u64","shape":[2],"data":[1,1]}'])
    tap(rc == 0 and "[0,9223372036854775809]" in out.replace(" ", ""), "u64 JSON: 2^64-1 + 1 wraps to 0, 2^63 + 1 exact", out + err)
    rc, out, err = nxvk(["run", "--op", "add", "--print", '{"dtype":"i64","shape":[1],"data":[9007199254740993]}',
                         '{"dtype":"i64","shape":[1],"data":[1]}'])
    tap(rc == 2 and "string" in err, "i64 JSON number past 2^53 refused (write it as a string)", err)
    rc, out, err = nxvk(["run", "--op", "negate", "--print", '{"dtype":"bf16","shape":[2],"data":[1.5,"nan"]}'])
    tap(rc == 0 and "-1.5" in out and "nan" in out, "bf16 through JSON", out + err)
    csv = os.path.join(d, "t.csv")
    with open(csv, "w") as f:
        f.write("1,2\n-3,300\n")
    for dt, ok_want in (("f16", True), ("bf16", True), ("i16", True), ("u16", False), ("i8", False), ("bool", False)):
        rc, out, err = nxvk(["run", "--op", "abs" if dt not in ("u16", "bool") else "reshape",
                             "--attrs", "{}" if dt not in ("u16", "bool") else '{"shape":[4]}', "--dtype", dt, "--print", csv])
        tap((rc == 0) == ok_want, "CSV as %s: %s" % (dt, "read" if ok_want else "refused (out of range)"), out + err)
    for descr, why in (("<c8", "two float arrays"), ("|O", "astype"), ("<f16", "a.astype(np.float64)"),
                       ("<M8[s]", "astype(np.int64)"), ("|V4", "bfloat16")):
        hdr = "{'descr': '%s', 'fortran_order': False, 'shape': (2,), }" % descr
        hdr += " " * (64 - (10 + len(hdr) + 1) % 64) + "\n"
        p = os.path.join(d, "bad.npy")
        with open(p, "wb") as f:
            f.write(b"\x93NUMPY\x01\x00" + len(hdr).to_bytes(2, "little") + hdr.encode() + b"\0" * 32)
        rc, out, err = nxvk(["run", "--op", "reshape", "--attrs", '{"shape":[-1]}', p])
        tap(rc == 2 and descr in err and why in err, "descr %s refused naming it and a way around" % descr, err)


def test_sizes(rng):
    for dt in ("f16", "bf16", "i8", "i64", "u64", "u16"):
        for n in (0, 1, 255, 256, 257, 65537):
            x = (rng.integers(0, 50, n) if dt not in ("f16", "bf16") else rng.integers(0, 2, n) * 0.5).astype(np.float32)
            x = round_to(dt, x) if dt in ("f16", "bf16") else x.astype(NPT[dt])
            d = tempfile.mkdtemp(prefix="size_", dir=TMP)
            p, o, o2 = os.path.join(d, "x.npy"), os.path.join(d, "o.npy"), os.path.join(d, "s.npy")
            save(p, dt, x)
            rc, _, err = nxvk(["run", "--op", "add", p, p, "-o", o])
            ok = rc == 0
            if ok:
                got = load(dt, o)
                want = round_to(dt, as_f32(dt, x) * 2) if dt in ("f16", "bf16") else (x * 2).astype(NPT[dt])
                ok = got.tobytes() == want.tobytes()
            rc2, _, err2 = nxvk(["run", "--op", "sum", p, "-o", o2])
            if rc2 == 0 and ok:
                s = load(dt, o2)
                want = float(np.sum(as_f32(dt, x).astype(np.float64))) if dt in ("f16", "bf16") else wrap(int(np.sum(x.astype(object)) if n else 0), dt)
                gs = float(as_f32(dt, s.reshape(1))[0]) if dt in ("f16", "bf16") else int(s)
                ok = abs(gs - want) <= (abs(want) * 2.0 ** -7 if dt in ("f16", "bf16") else 0)
            tap(ok and rc2 == 0, "%s add and sum at %d elements against numpy" % (dt, n), err + err2)


def test_broadcast16(rng):
    """The 16-bit kernels take two elements per 32-bit word: broadcast shapes and odd counts,
    each element bit-identical to numpy (f16) or f32-then-round (bf16), wrapping (i16, u16)."""
    for dt in ("f16", "bf16", "i16", "u16"):
        for sa, sb in (((7, 1), (1, 5)), ((3, 5), (5,)), ((1,), (9,)), ((5, 3), (5, 3)), ((2, 1, 3), (1, 7, 1))):
            d = tempfile.mkdtemp(prefix="bc_", dir=TMP)
            if dt in ("f16", "bf16"):
                a = round_to(dt, rng.standard_normal(sa).astype(np.float32) * 100)
                b = round_to(dt, rng.standard_normal(sb).astype(np.float32) * 100)
            else:
                lo, hi = int_range(dt)
                a = rng.integers(lo, hi + 1, sa).astype(NPT[dt])
                b = rng.integers(lo, hi + 1, sb).astype(NPT[dt])
            pa, pb, o = os.path.join(d, "a.npy"), os.path.join(d, "b.npy"), os.path.join(d, "o.npy")
            save(pa, dt, a)
            save(pb, dt, b)
            for op, f in (("add", np.add), ("multiply", np.multiply)):
                rc, _, err = nxvk(["run", "--op", op, pa, pb, "-o", o])
                ok = rc == 0
                if ok:
                    got = load(dt, o)
                    if dt in ("f16", "bf16"):
                        want = round_to(dt, f(as_f32(dt, a), as_f32(dt, b)))
                    else:
                        A, B = np.broadcast_arrays(a.astype(object), b.astype(object))
                        want = np.array([wrap(int(u) * int(v) if op == "multiply" else int(u) + int(v), dt)
                                         for u, v in zip(A.ravel(), B.ravel())], NPT[dt]).reshape(A.shape)
                    ok = got.shape == want.shape and got.tobytes() == np.asarray(want).tobytes()
                    err = "got %s want %s" % (got.ravel()[:8], np.asarray(want).ravel()[:8])
                tap(ok, "%s %s %s x %s (broadcast, %d elements) bit-identical to numpy" % (
                    dt, op, sa, sb, int(np.prod(np.broadcast_shapes(sa, sb)))), err)


def test_f16_cvt(rng):
    """NXVK_F16_CVT: the driver's f16 conversions (hw; with the software subnormal path, and as on a
    device that promises f16 subnormals) give the integer conversions' (sw) bits for every f16
    pattern: add and multiply bit-identical to numpy as well, exp, a fused chain that rounds an
    f16 intermediate, and sum (same order of additions); NaN as any NaN.  Where the device does
    not promise f16 round to nearest even, hw is refused naming the variable."""
    rc, out, err = nxvk(["info", "--json"])
    dev = json.loads(out)["devices"][0] if rc == 0 else {}
    fc, feat = dev.get("float_controls", {}), dev.get("features", {})
    hw_ok = bool(fc.get("rounding_mode_rte_f16") and feat.get("f16"))
    d = tempfile.mkdtemp(prefix="cvt_", dir=TMP)
    a = np.arange(65536, dtype=np.uint16).view(np.float16)[:65535]    # every pattern but one; odd count
    b = rng.permutation(np.arange(65536, dtype=np.uint16)).view(np.float16)[:65535]
    np.save(os.path.join(d, "a.npy"), a)
    np.save(os.path.join(d, "b.npy"), b)
    graph = {"inputs": {"a": "a.npy", "b": "b.npy"},
             "ops": [{"op": "add", "in": ["a", "b"], "out": "s"},
                     {"op": "multiply", "in": ["a", "b"], "out": "p"},
                     {"op": "exp", "in": ["a"], "out": "e"},
                     {"op": "sum", "in": ["a"], "attrs": {"axes": [0]}, "out": "r"},
                     {"op": "sum", "in": ["p"], "attrs": {"axes": [0]}, "out": "rp"},
                     {"op": "exp", "in": ["s"], "out": "t"},
                     {"op": "multiply", "in": ["t", "b"], "out": "u"}],
             "outputs": {k: k + ".npy" for k in ("s", "p", "e", "r", "rp", "u")}}
    forms = [("sw", {"NXVK_F16_CVT": "sw"})]
    if hw_ok:
        forms += [("hw", {"NXVK_F16_CVT": "hw"}),
                  ("hw, subnormals promised", {"NXVK_F16_CVT": "hw", "NXVK_TEST_INJECT": "f16_denorm_preserve"})]
    else:
        rc, out, err = nxvk(["run", "--op", "negate", '{"dtype":"f16","shape":[1],"data":[1]}'],
                            env={"NXVK_F16_CVT": "hw"})
        tap(rc == 2 and "NXVK_F16_CVT" in err, "NXVK_F16_CVT=hw refused where the device does not promise f16 RTE", err)
    base = None
    same = lambda g, w: g.shape == w.shape and bool(np.all((g.view(np.uint16) == w.view(np.uint16)) |  # noqa: E731
                                                           (np.isnan(g) & np.isnan(w))))
    for name, env in forms:
        for fusion in (False, True):
            gd = os.path.join(d, "%s_%d" % (name[:2], fusion))
            os.makedirs(gd, exist_ok=True)
            for f in ("a.npy", "b.npy"):
                shutil.copy(os.path.join(d, f), gd)
            with open(os.path.join(gd, "g.json"), "w") as f:
                json.dump(graph, f)
            rc, out, err = nxvk(["run", os.path.join(gd, "g.json")] + ([] if fusion else ["--no-fusion"]), env=env)
            if rc != 0:
                tap(False, "f16 conversions %s%s: run" % (name, ", fused" if fusion else ""), err)
                continue
            got = {k: np.load(os.path.join(gd, k + ".npy")) for k in graph["outputs"]}
            a32, b32 = a.astype(np.float32), b.astype(np.float32)
            with np.errstate(all="ignore"):
                ok = same(got["s"], (a32 + b32).astype(np.float16)) and same(got["p"], (a32 * b32).astype(np.float16))
            tap(ok, "f16 conversions %s%s: add and multiply over every f16 pattern bit-identical to numpy" % (
                name, ", fused" if fusion else ""))
            if base is None:
                base = got
                continue
            bad = [k for k in ("e", "r", "rp", "u") if not same(got[k], base[k])]
            tap(not bad, "f16 conversions %s%s: exp, sums and exp(a + b) * b give the sw form's bits" % (
                name, ", fused" if fusion else ""), "differ: %s" % bad)


def test_dot_dtype():
    """dot's "dtype": f32 only for f16/bf16 inputs; everything else refused naming the attribute."""
    for dt, to in (("i32", "f32"), ("f32", "f64"), ("f16", "f64"), ("bf16", "f16"), ("i64", "i32")):
        a = '{"dtype":"%s","shape":[1,1],"data":[1]}' % dt
        rc, out, err = nxvk(["run", "--op", "dot", "--attrs", '{"dtype":"%s"}' % to, "--print", a, a])
        tap(rc == 2 and '"dtype"' in err and to in err and dt in err,
            "dot %s with \"dtype\": \"%s\" refused naming the attribute" % (dt, to), err)
    for dt in ("f16", "bf16"):
        a = '{"dtype":"%s","shape":[1,2],"data":[2049,1]}' % dt
        b = '{"dtype":"%s","shape":[2,1],"data":[1,1]}' % dt
        rc, out, err = nxvk(["run", "--op", "dot", "--attrs", '{"dtype":"f32"}', "--print", a, b])
        # 2049 is 2048 in f16 and bf16; 2048 * 1 + 1 * 1 = 2049 in f32, which rounds back to 2048
        first = float(as_f32(dt, round_to(dt, np.array([2049], np.float32)))[0]) + 1
        tap(rc == 0 and "f32" in out and ("%g" % first) in out,
            "dot %s -> f32 keeps the f32 sum (%g, not rounded to %s)" % (dt, first, dt), out + err)


def test_unsupported():
    for dt in ("i64", "u64"):
        rc, out, err = nxvk(["run", "--op", "add", '{"dtype":"%s","shape":[1],"data":[1]}' % dt,
                             '{"dtype":"%s","shape":[1],"data":[1]}' % dt], env={"NXVK_TEST_INJECT": "no_int64"})
        lines = err.strip().splitlines()
        tap(rc == 2 and len(lines) == 1 and "unsupported on this device" in err and "shaderInt64" in err,
            "%s on a device without shaderInt64: exit 2, 'unsupported on this device'" % dt, err)


def main():
    if not have_binary():
        return
    rc, ops, err = list_ops()
    tap(rc == 0 and ops, "nxvk run --list-ops", err)
    rng = np.random.default_rng(20261126)
    for dt in NEW:
        listed = [o for o, dts in ops.items() if dt in dts]
        tap(len(listed) > 0, "%s is listed for %d ops" % (dt, len(listed)))
        test_dtype(dt, ops, rng)
    test_files(rng)
    test_sizes(rng)
    test_broadcast16(rng)
    test_f16_cvt(rng)
    test_dot_dtype()
    test_unsupported()


if __name__ == "__main__":
    nphelp.main(main, TMP)
