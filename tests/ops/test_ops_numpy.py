#!/usr/bin/python3
"""test_ops_numpy.py - numpy as an independent oracle for every op, through
the command line: inputs written by numpy as .npy, `nxvk run --op NAME
[--attrs JSON] IN... -o OUT.npy`, the output read back by numpy and compared
with numpy's own computation under conformance/limits.json.

TAP on stdout, one line per op x dtype x case.  Every op that
`nxvk run --list-ops` lists must have an oracle here (a missing one fails),
and every dtype it lists is tested.

Where nxvk's documented semantics differ from numpy's default, the oracle
computes the documented ones (C fmod for remainder, truncating integer
division with x/0 = 0, round half away from zero, sign(-0) = +0, saturating
as_type, ...).  Floating-point references are computed in long double (x87,
64-bit mantissa) and rounded once to the dtype; dot's f32 reference in
float64, as the design asks.

Environment: NXVK (the binary; default ./nxvk), NXVK_DEVICE (passed on).
"""
import json
import math
import os
import subprocess
import sys
import tempfile
import time
import warnings
from concurrent.futures import ThreadPoolExecutor

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import nphelp  # noqa: E402
from math_oracles import erf_inv_oracle, erf_series, erfc_ref  # noqa: E402
from nphelp import ROOT, have_binary, nxvk, tap  # noqa: E402

warnings.simplefilter("ignore")
np.seterr(all="ignore")

LD = np.longdouble
NP = {"f32": np.float32, "f64": np.float64, "i32": np.int32, "u8": np.uint8}
FLOATS = ("f32", "f64")
# the dtypes [dtypes] added; their numpy oracle is test_dtypes_numpy.py
NEW_DTYPES = ("f16", "bf16", "i8", "i16", "i64", "u16", "u32", "u64", "bool")
# the shape and indexing ops; their numpy oracle is test_index_numpy.py
INDEX_OPS = ("broadcast", "pad", "dynamic_slice", "put_slice", "gather", "take", "take_along_axis",
             "indexed_add", "indexed_put")
TMP = nphelp.scratch("numpy")
# a private copy: the suite runs for minutes and a rebuild must not swap the
# binary under it (the engine embeds its shaders, so the copy is complete)
nphelp.private_copy(TMP)


def run_op(op, inputs, attrs=None, env=None):
    """Run one op (env: extra environment); returns (rc, output array or None, stderr)."""
    return nphelp.run_op(op, inputs, TMP, attrs, env)


# ---------------------------------------------------------------- device and limits

def device_info():
    args = ["info", "--json"]
    if os.environ.get("NXVK_DEVICE"):
        args += ["--device", os.environ["NXVK_DEVICE"]]
    try:
        rc, out, err = nxvk(args)
        devs = json.loads(out)["devices"] if rc == 0 else None
    except (OSError, ValueError, KeyError, subprocess.SubprocessError):
        devs = None
    if not devs:
        return None
    if len(devs) == 1:
        return devs[0]
    for kind in ("discrete", "integrated", "virtual", "cpu"):  # the default order
        for d in devs:
            if d["type"] == kind:
                return d
    return devs[0] if devs else None


DEV = device_info()
# where the device does not promise to preserve denormals, a result that
# flushing explains is forgiven (counted in the diagnostic), as in nxvk_compare
MAY_FLUSH = {
    "f32": not (DEV or {}).get("float_controls", {}).get("denorm_preserve_f32", False),
    "f64": not (DEV or {}).get("float_controls", {}).get("denorm_preserve_f64", False),
    "i32": False, "u8": False,
}
HAS_F64 = bool((DEV or {}).get("features", {}).get("f64", False))

with open(os.path.join(ROOT, "conformance", "limits.json")) as f:
    LIMITS = json.load(f)["ops"]


def limit_of(op, dt):
    row = LIMITS.get(op)
    if row is None:
        return None
    e = row.get(dt, row.get("*"))
    return e


# ---------------------------------------------------------------- comparison

FLT = {"f32": (24, 2.0 ** -149, 2.0 ** -126, 2.0 ** -24),
       "f64": (53, 2.0 ** -1074, 2.0 ** -1022, 2.0 ** -53)}


def ulp_of(dt, x):
    mant, tiny, fmin, _ = FLT[dt]
    ax = np.abs(np.asarray(x, np.float64))
    _, e = np.frexp(ax)
    u = np.ldexp(1.0, (e - mant).astype(np.int32))
    return np.where(ax < fmin, tiny, u)


def ulp_diff(dt, g, r):
    """ULPs between got and ref (0 when bit-equal or both NaN; inf across
    classes: NaN vs number, different infinities, zeros of different sign)."""
    g = np.asarray(g, np.float64)
    r = np.asarray(r, np.float64)
    u = np.abs(g - r) / ulp_of(dt, r)
    ng, nr = np.isnan(g), np.isnan(r)
    ig, ir = np.isinf(g), np.isinf(r)
    u = np.where(g == r, 0.0, u)
    u = np.where((g == 0) & (r == 0) & (np.signbit(g) != np.signbit(r)), np.inf, u)
    u = np.where(ig | ir, np.where(g == r, 0.0, np.inf), u)
    u = np.where(ng | nr, np.where(ng & nr, 0.0, np.inf), u)
    return u


def is_denormal(dt, x):
    x = np.asarray(x, np.float64)
    return (x != 0) & (np.abs(x) < FLT[dt][2])


def flush(a):
    """Denormal inputs to signed zero (what a flushing device computes on)."""
    if a.dtype.kind != "f":
        return a
    dt = "f32" if a.dtype == np.float32 else "f64"
    z = np.copysign(np.zeros_like(a), a)
    return np.where(is_denormal(dt, a), z, a).astype(a.dtype)


def fmt(v):
    if isinstance(v, (float, np.floating)):
        return repr(float(v))
    return str(v)


def compare(op, in_dt, got, want, xs=(), want_flushed=None, scale=None, terms=0, ew=True):
    """Judge got against want under op's limit for in_dt.  xs: inputs
    broadcast to the output shape (for elementwise limits and diagnostics).
    Returns (ok, diagnostic)."""
    if got is None:
        return False, "no output"
    if got.dtype != want.dtype or got.shape != want.shape:
        return False, "got %s %s, want %s %s" % (got.dtype, got.shape, want.dtype, want.shape)
    if got.size == 0:
        return True, ""
    if want.dtype.kind != "f":
        bad = got != want
        if not bad.any():
            return True, ""
        i = int(np.flatnonzero(bad.ravel())[0])
        return False, worst_line(i, xs, got, want, None, "exact", bad.sum(), got.size)
    dt = "f32" if want.dtype == np.float32 else "f64"
    lim = limit_of(op, in_dt)
    if lim is None:
        return False, "limits.json has no entry for %s %s" % (op, in_dt)
    g = got.astype(np.float64).ravel()
    r = want.astype(np.float64).ravel()
    u = ulp_diff(dt, g, r)
    ok = u == 0
    text = "exact"
    if lim != "exact":
        fin = np.isfinite(u)
        if "sum_factor" in lim:
            eps = FLT[dt][3]
            s = np.asarray(scale, np.float64).ravel()
            bound = lim["sum_factor"] * max(terms, 1) * eps * s + ulp_of(dt, r)
            ok |= fin & (np.abs(g - r) <= bound)
            text = "%g*n*eps*sum|x| (n=%d)" % (lim["sum_factor"], terms)
        else:
            x = np.asarray(xs[0], np.float64).ravel() if len(xs) >= 1 and ew else np.zeros_like(g)
            y = np.asarray(xs[1], np.float64).ravel() if len(xs) >= 2 and ew else np.zeros_like(g)
            lo = lim.get("lo", -np.inf)
            hi = lim.get("hi", np.inf)
            absl = lim.get("abs", 0)
            if lim.get("arg") == "y*log2(x)":
                arg = np.abs(y * np.log2(np.abs(x)))
            else:
                arg = np.abs(x)
            arg = np.where(np.isfinite(arg), arg, 0.0)
            allowed = lim.get("ulp", 0) + lim.get("ulp_per_arg", 0) * arg + \
                lim.get("ulp_per_y", 0) * np.abs(y)
            by_ulp = u <= allowed
            if absl > 0 and math.isfinite(lo):
                inside = (x >= lo) & (x <= hi)
                outside = np.abs(g) <= 1.0 if lim.get("outside") == "unbounded" else by_ulp
                rule = np.where(inside, np.abs(g - r) <= absl, outside)
            elif absl > 0:
                rule = np.abs(g - r) <= absl
            elif lim.get("outside") == "unbounded":
                rule = np.abs(g) <= 1.0
            else:
                rule = by_ulp
            ok |= fin & rule
            text = json.dumps(lim)
    forgiven = 0
    if MAY_FLUSH[dt] and not ok.all():
        rf = want_flushed.astype(np.float64).ravel() if want_flushed is not None else r
        fl = (~ok) & ((is_denormal(dt, r) & (g == 0)) | (ulp_diff(dt, g, rf) == 0) |
                      (is_denormal(dt, rf) & (g == 0)))
        forgiven = int(fl.sum())
        ok |= fl
    if ok.all():
        return True, ("%d denormal flushes forgiven" % forgiven) if forgiven else ""
    bad = ~ok
    # the worst element: largest ulp error among the bad ones (first on ties)
    ub = np.where(bad, np.where(np.isfinite(u), u, np.inf), -1)
    i = int(np.argmax(ub))
    return False, worst_line(i, xs, got, want, u[i], text, int(bad.sum()), g.size)


def worst_line(i, xs, got, want, u, text, nbad, n):
    ins = ", ".join(fmt(np.asarray(x).ravel()[i]) for x in xs
                    if np.asarray(x).size == got.size) if xs else ""
    s = "%d of %d over the limit (%s); worst at flat index %d:" % (nbad, n, text, i)
    s += "\ninput (%s) got %s want %s" % (ins, fmt(got.ravel()[i]), fmt(want.ravel()[i]))
    if u is not None:
        s += " ulp %s" % fmt(u)
    return s


# ---------------------------------------------------------------- values

def edge_values(dt):
    if dt == "f32":
        t = np.float32
        eps = float(np.finfo(t).eps)
        v = [0.0, -0.0, np.inf, -np.inf, np.nan, 2.0 ** -149, -2.0 ** -149, 1e-40, 2.0 ** -126, -2.0 ** -126,
             float(np.finfo(t).max), -float(np.finfo(t).max), 1.0, -1.0, 1 + eps, 1 - eps / 2,
             -(1 + eps), 0.5, -0.5, 0.49999997, 1.5, 2.5, -2.5, 2.0, -2.0, 3.0, -3.0,
             88.72283, 88.7229, -87.33655, -103.9721, 10.0, -10.0, math.pi, 1e10, -1e10, 16777217.0]
        return np.array(v, np.float32)
    if dt == "f64":
        eps = float(np.finfo(np.float64).eps)
        v = [0.0, -0.0, np.inf, -np.inf, np.nan, 5e-324, -5e-324, 1e-310, 2.0 ** -1022, -2.0 ** -1022,
             float(np.finfo(np.float64).max), -float(np.finfo(np.float64).max), 1.0, -1.0, 1 + eps,
             1 - eps / 2, -(1 + eps), 0.5, -0.5, 0.49999999999999994, 1.5, 2.5, -2.5, 2.0, -2.0, 3.0,
             -3.0, 709.782712893384, 709.79, -708.3964185322641, -745.1332191019412, 10.0, -10.0,
             math.pi, 1e300, -1e300, 9007199254740993.0]
        return np.array(v, np.float64)
    if dt == "i32":
        return np.array([0, 1, -1, 2, -2, 3, -3, 7, -7, 255, 256, 2 ** 31 - 1, -2 ** 31, 2 ** 31 - 2,
                         -2 ** 31 + 1, 46341, -46341, 65536, 1000000007], np.int32)
    return np.array([0, 1, 2, 3, 7, 15, 16, 127, 128, 200, 254, 255], np.uint8)


def random_values(dt, n, rng, kind="any"):
    if dt in FLOATS:
        pick = rng.random(n)
        a = rng.uniform(-10, 10, n)
        a = np.where(pick < 0.2, rng.uniform(0, 2, n), a)
        mag = 10.0 ** rng.uniform(-30, 30, n) * np.where(rng.random(n) < 0.5, -1, 1)
        a = np.where((pick >= 0.2) & (pick < 0.35), mag, a)
        a = np.where(pick >= 0.9, rng.integers(-5, 6, n).astype(np.float64), a)
        if kind == "product":   # 257 factors near +-1 stay finite and normal
            a = (1 + rng.uniform(-0.125, 0.125, n)) * np.where(rng.random(n) < 0.5, -1, 1)
        elif kind in ("sum", "dot"):
            a = rng.uniform(-1, 1, n)
        return a.astype(NP[dt])
    if dt == "i32":
        if kind == "product":
            return rng.choice(np.array([-3, -2, -1, 1, 2, 3], np.int32), n)
        full = rng.integers(-2 ** 31, 2 ** 31, n, dtype=np.int64)
        small = rng.integers(-100, 101, n, dtype=np.int64)
        return np.where(rng.random(n) < 0.5, full, small).astype(np.int32)
    return rng.integers(0, 256, n, dtype=np.int64).astype(np.uint8)


# ---------------------------------------------------------------- numpy references

def wide(a):
    return np.asarray(a).astype(LD)


def fl_ref(fn):
    """A float op computed in long double and rounded once to the dtype."""
    def f(*args):
        dt = args[0].dtype
        return np.asarray(fn(*[wide(a) for a in args])).astype(dt)
    return f


def int_divide(a, b):
    a64, b64 = a.astype(np.int64), b.astype(np.int64)
    safe = np.where(b64 == 0, 1, b64)
    q = (np.abs(a64) // np.abs(safe)) * np.sign(a64) * np.sign(safe)
    return np.where(b64 == 0, 0, q).astype(a.dtype)  # INT_MIN/-1 wraps to INT_MIN


def int_remainder(a, b):
    a64, b64 = a.astype(np.int64), b.astype(np.int64)
    safe = np.where(b64 == 0, 1, b64)
    q = (np.abs(a64) // np.abs(safe)) * np.sign(a64) * np.sign(safe)
    return np.where(b64 == 0, 0, a64 - q * safe).astype(a.dtype)


def r_divide(a, b):
    if a.dtype.kind == "f":
        return (a / b).astype(a.dtype)
    return int_divide(a, b)


def r_remainder(a, b):
    if a.dtype.kind == "f":
        return np.fmod(a, b).astype(a.dtype)    # C fmod: exact, sign of a
    return int_remainder(a, b)


def r_max(a, b):  # NaN propagates (a's first), ties give b
    if a.dtype.kind != "f":
        return np.maximum(a, b)
    a, b = np.broadcast_arrays(a, b)
    return np.where(np.isnan(a), a, np.where(np.isnan(b), b, np.where(a > b, a, b))).astype(a.dtype)


def r_min(a, b):
    if a.dtype.kind != "f":
        return np.minimum(a, b)
    a, b = np.broadcast_arrays(a, b)
    return np.where(np.isnan(a), a, np.where(np.isnan(b), b, np.where(a < b, a, b))).astype(a.dtype)


def r_round(x):
    t = np.trunc(x)
    r = np.where(np.abs(x - t) >= 0.5, t + np.sign(x), t)
    return np.copysign(r, x).astype(x.dtype)   # keeps -0 (and round(-0.3) = -0)


def r_sign(x):
    if x.dtype.kind != "f":
        return np.sign(x)
    return np.where(x > 0, 1, np.where(x < 0, -1, np.where(np.isnan(x), x, 0.0))).astype(x.dtype)


def erf_ld(x):
    """erf in long double: 2/sqrt(pi) exp(-x^2) sum 2^n x^(2n+1) / (2n+1)!!,
    a series of positive terms (no cancellation); 1 beyond |x| = 6.5."""
    x = wide(x)
    r = erf_series(np.where(np.isfinite(x), np.minimum(np.abs(x), LD(6.5)), LD(0)), 400)
    r = np.where(np.abs(x) >= 6.5, LD(1), r)
    r = np.copysign(r, x)
    return np.where(np.isnan(x), x, r)


def as_int(x, lo, hi):
    t = np.trunc(x.astype(np.float64))
    return np.where(np.isnan(t), 0, np.clip(t, lo, hi))


def r_as_type(x, to):
    if to in FLOATS:
        return x.astype(NP[to])
    if x.dtype.kind == "f":
        if to == "i32":
            return as_int(x, -2 ** 31, 2 ** 31 - 1).astype(np.int32)
        return as_int(x, 0, 255).astype(np.uint8)
    return x.astype(NP[to])     # integers: u8 wraps, i32 keeps


BINARY = {
    "add": lambda a, b: (a + b).astype(a.dtype),
    "subtract": lambda a, b: (a - b).astype(a.dtype),
    "multiply": lambda a, b: (a * b).astype(a.dtype),
    "divide": r_divide,
    "pow": fl_ref(np.power),
    "max": r_max,
    "min": r_min,
    "remainder": r_remainder,
    "atan2": fl_ref(np.arctan2),
}
COMPARE = {
    "equal": np.equal, "not_equal": np.not_equal, "less": np.less,
    "less_equal": np.less_equal, "greater": np.greater, "greater_equal": np.greater_equal,
}
UNARY = {
    "exp": fl_ref(np.exp), "log": fl_ref(np.log),
    # sqrt is exact (correctly rounded): numpy's own, in the dtype (long double
    # rounded to f64 rounds twice: sqrt(DBL_MAX) came out one ULP high)
    "sqrt": lambda x: np.sqrt(x).astype(x.dtype),
    "rsqrt": fl_ref(lambda x: LD(1) / np.sqrt(x)),
    "abs": lambda x: np.abs(x).astype(x.dtype), "negate": lambda x: (-x).astype(x.dtype),
    "sigmoid": fl_ref(lambda x: LD(1) / (LD(1) + np.exp(-x))),
    "tanh": fl_ref(np.tanh), "floor": lambda x: np.floor(x), "ceil": lambda x: np.ceil(x),
    "round": r_round, "sign": r_sign, "sin": fl_ref(np.sin), "cos": fl_ref(np.cos),
    "expm1": fl_ref(np.expm1), "log1p": fl_ref(np.log1p), "erf": fl_ref(erf_ld),
    "tan": fl_ref(np.tan), "asin": fl_ref(np.arcsin), "acos": fl_ref(np.arccos),
    "atan": fl_ref(np.arctan), "sinh": fl_ref(np.sinh), "cosh": fl_ref(np.cosh),
    "asinh": fl_ref(np.arcsinh), "acosh": fl_ref(np.arccosh), "atanh": fl_ref(np.arctanh),
    "cbrt": fl_ref(np.cbrt), "erfc": fl_ref(erfc_ref), "erf_inv": fl_ref(erf_inv_oracle),
}
REDUCE = ("sum", "product", "reduce_max", "reduce_min", "argmax", "argmin", "mean")
MOVEMENT = ("reshape", "transpose", "slice", "concatenate", "as_type")
OTHER = ("select", "dot", "iota", "random_uniform", "random_normal")
KNOWN = set(BINARY) | set(COMPARE) | set(UNARY) | set(REDUCE) | set(MOVEMENT) | set(OTHER)
# ops whose numpy oracle is their own test file (every dtype they take)
ELSEWHERE = {op: "test_ordering_numpy.py" for op in (
    "cumulative_sum", "cumulative_product", "cumulative_max", "cumulative_min", "sort", "argsort",
    "top_k", "top_k_indices", "window_sum", "window_product", "window_max", "window_min")}
ELSEWHERE.update({op: "test_window_scatter_numpy.py" for op in ("window_scatter_max", "window_scatter_min")})
ELSEWHERE.update({"conv": "test_conv_numpy.py", "cholesky": "test_linalg_numpy.py",
                  "triangular_solve": "test_linalg_numpy.py"})
ELSEWHERE.update({op: "test_index_numpy.py" for op in INDEX_OPS})
ELSEWHERE.update({"bitcast": "test_bitcast_numpy.py"})
ELSEWHERE.update({op: "test_intops_numpy.py" for op in (
    "bitwise_and", "bitwise_or", "bitwise_xor", "bitwise_not", "left_shift", "right_shift",
    "count_leading_zeros", "population_count", "quotient", "logical_and", "logical_or",
    "logical_xor", "logical_not", "is_nan", "is_infinity", "all", "any", "reverse", "eye")})


# ---------------------------------------------------------------- cases

class Case:
    """One nxvk invocation and how to judge it."""

    def __init__(self, desc, op, inputs, attrs, judge, env=None):
        self.desc, self.op, self.inputs, self.attrs, self.judge = desc, op, inputs, attrs, judge
        self.env = env

    def run(self):
        try:
            rc, got, err = run_op(self.op, self.inputs, self.attrs, self.env)
            return self.judge(rc, got, err)
        except Exception as e:  # a broken case fails, never stops the suite
            return False, "exception: %r" % (e,)


def expect_ok(rc, err):
    if rc != 0:
        return "nxvk exited %d: %s" % (rc, err.strip()[:500])
    return None


def ew_judge(op, dt, fn, inputs):
    """Elementwise: numpy broadcasting of inputs, fn the reference."""
    def judge(rc, got, err):
        e = expect_ok(rc, err)
        if e:
            return False, e
        want = np.asarray(fn(*inputs))
        shape = np.broadcast_shapes(*[a.shape for a in inputs])
        want = np.broadcast_to(want, shape)
        xs = [np.broadcast_to(a, shape) for a in inputs]
        wf = None
        if dt in FLOATS and MAY_FLUSH[dt]:
            wf = np.broadcast_to(np.asarray(fn(*[flush(a) for a in inputs])), shape)
        if op == "select":
            xs = xs[1:]
        return compare(op, dt, got, want, xs, wf)
    return judge


def pairs(v):
    """Every (a, b) of the edge values, as two flat arrays."""
    return np.repeat(v, len(v)), np.tile(v, len(v))


SIZES = (0, 1, 255, 256, 257)
BCAST = (((3, 1), (1, 4)), ((2, 3, 4), (4,)), ((), (5,)), ((5,), ()))


def cases_binary(op, dt, fn, rng):
    cs = []
    for n in SIZES:
        a, b = random_values(dt, n, rng), random_values(dt, n, rng)
        if op == "pow" and n:
            b[::3] = np.round(b[::3] / 4)   # integer exponents for negative bases
        cs.append(Case("%s %s [%d] random" % (op, dt, n), op, [a, b], None, ew_judge(op, dt, fn, [a, b])))
    a, b = pairs(edge_values(dt))
    cs.append(Case("%s %s edge values, all %d pairs" % (op, dt, a.size), op, [a, b], None,
                   ew_judge(op, dt, fn, [a, b])))
    for sa, sb in BCAST:
        a = random_values(dt, int(np.prod(sa)), rng).reshape(sa)
        b = random_values(dt, int(np.prod(sb)), rng).reshape(sb)
        cs.append(Case("%s %s broadcast %s x %s" % (op, dt, list(sa), list(sb)), op, [a, b], None,
                       ew_judge(op, dt, fn, [a, b])))
    return cs


def cases_unary(op, dt, fn, rng):
    cs = []
    for n in SIZES:
        a = random_values(dt, n, rng)
        cs.append(Case("%s %s [%d] random" % (op, dt, n), op, [a], None, ew_judge(op, dt, fn, [a])))
    e = edge_values(dt)
    if dt in FLOATS:  # a sweep of the interesting range too
        sweep = np.concatenate([np.linspace(-20, 20, 801), np.linspace(-1, 1, 201),
                                np.linspace(-100, 100, 101)]).astype(NP[dt])
        e = np.concatenate([e, sweep])
    cs.append(Case("%s %s edge values and sweep (%d)" % (op, dt, e.size), op, [e], None,
                   ew_judge(op, dt, fn, [e])))
    return cs


def cases_select(dt, rng):
    cs = []
    op = "select"
    fn = lambda p, a, b: np.where(p != 0, a, b)
    for n in SIZES:
        p = rng.integers(0, 256, n).astype(np.uint8)
        p[rng.random(n) < 0.4] = 0
        a, b = random_values(dt, n, rng), random_values(dt, n, rng)
        cs.append(Case("select %s [%d] random" % (dt, n), op, [p, a, b], None, ew_judge(op, dt, fn, [p, a, b])))
    e = edge_values(dt)
    a, b = pairs(e)
    p = (np.arange(a.size) % 3 == 0).astype(np.uint8) * np.uint8(7)
    cs.append(Case("select %s edge values" % dt, op, [p, a, b], None, ew_judge(op, dt, fn, [p, a, b])))
    p = np.array([[1], [0], [255]], np.uint8)
    a = random_values(dt, 4, rng).reshape(1, 4)
    b = random_values(dt, 1, rng).reshape(())
    cs.append(Case("select %s broadcast [3,1] [1,4] []" % dt, op, [p, a, b], None,
                   ew_judge(op, dt, fn, [p, a, b])))
    return cs


# ---- reductions

def reduce_ref(op, x, axes, keep):
    """numpy reference; axes None = all."""
    # the reduced set is flattened in row-major order of its axes, whatever
    # order "axes" lists them in
    ax = tuple(range(x.ndim)) if axes is None else tuple(sorted(a % x.ndim for a in axes)) if x.ndim else ()
    dt = x.dtype
    if op in ("argmax", "argmin"):
        kept = [d for d in range(x.ndim) if d not in ax]
        y = np.transpose(x, kept + list(ax))
        shape = y.shape[:len(kept)]
        y = y.reshape(shape + (int(np.prod([x.shape[a] for a in ax])),))
        r = (np.argmax if op == "argmax" else np.argmin)(y, axis=-1).astype(np.int32)
        if keep:
            r = r.reshape([1 if d in ax else x.shape[d] for d in range(x.ndim)])
        return r
    if op in ("reduce_max", "reduce_min"):
        if dt.kind == "f":
            init = -np.inf if op == "reduce_max" else np.inf
        elif dt == np.int32:
            init = -2 ** 31 if op == "reduce_max" else 2 ** 31 - 1
        else:
            init = 0 if op == "reduce_max" else 255
        f = np.max if op == "reduce_max" else np.min
        return f(x, axis=ax, keepdims=keep, initial=init).astype(dt)
    if dt.kind != "f":  # i32 sum and product wrap modulo 2^32 (int64 keeps the low bits)
        f = np.sum if op == "sum" else np.prod
        return f(x.astype(np.int64), axis=ax, keepdims=keep).astype(dt)
    w = wide(x)
    if op == "sum":
        r = np.sum(w, axis=ax, keepdims=keep)
    elif op == "product":
        r = np.prod(w, axis=ax, keepdims=keep)
    else:
        cnt = int(np.prod([x.shape[a] for a in ax])) if ax else 1
        r = np.sum(w, axis=ax, keepdims=keep) / LD(cnt) if cnt else \
            np.full(np.sum(w, axis=ax, keepdims=keep).shape, np.nan, LD)
    return np.asarray(r).astype(dt)


def reduce_judge(op, dt, x, axes, keep):
    def judge(rc, got, err):
        e = expect_ok(rc, err)
        if e:
            return False, e
        want = np.asarray(reduce_ref(op, x, axes, keep))
        scale, terms = None, 0
        if dt in FLOATS and op in ("sum", "product", "mean"):
            scale = np.asarray(reduce_ref(op, np.abs(x.astype(np.float64)), axes, keep))
            terms = x.size // want.size if want.size else 0
        wf = np.asarray(reduce_ref(op, flush(x), axes, keep)) if dt in FLOATS and MAY_FLUSH[dt] else None
        return compare(op, dt, got, want, (), wf, scale, terms, ew=False)
    return judge


def cases_reduce(op, dt, rng):
    cs = []
    kind = "product" if op == "product" else "sum"

    def add(desc, x, axes=None, keep=False, env=None):
        attrs = {}
        if axes is not None:
            attrs["axes"] = list(axes)
        if keep:
            attrs["keep_axes"] = True
        cs.append(Case("%s %s %s" % (op, dt, desc), op, [x], attrs or None,
                       reduce_judge(op, dt, x, axes, keep), env))

    for n in SIZES:
        if n == 0 and op in ("argmax", "argmin"):
            continue  # an error: tested below
        add("[%d] random, all axes" % n, random_values(dt, n, rng, kind))
    x = random_values(dt, 60, rng, kind).reshape(3, 4, 5)
    for axes, keep in (([0], False), ([2], True), ([-1], False), ([0, 2], False), ([1, 2], True),
                       ([2, 0], True), ([], False)):
        add("[3,4,5] axes %s%s" % (axes, " keep_axes" if keep else ""), x, axes, keep)
    add("[3,4,5] all axes keep_axes", x, None, True)
    y = random_values(dt, 257 * 3, rng, kind).reshape(257, 3)
    add("[257,3] axes [0]", y, [0])
    add("[2,0,3] axes [0]", np.zeros((2, 0, 3), NP[dt]), [0])
    # over 4096 elements per output a reduction splits into partial results
    # (src/ops/reduce.c), finished by a second dispatch or, on GPUs, by the
    # last workgroup of the first (NXVK_REDUCE_FOLD): both forms, one output
    # and several, contiguous runs and strided ones
    big = random_values(dt, 3 * 9001, rng, kind)
    for fold in ("0", "1"):
        env = {"NXVK_REDUCE_FOLD": fold}
        add("[27003] all axes, in partials (fold %s)" % fold, big, env=env)
        add("[3,9001] axes [1], in partials (fold %s)" % fold, big.reshape(3, 9001), [1], env=env)
        add("[9001,3] axes [0], in partials (fold %s)" % fold, big.reshape(9001, 3), [0], env=env)
    if op not in ("argmax", "argmin"):
        add("[2,0,3] axes [1] (empty reductions)", np.zeros((2, 0, 3), NP[dt]), [1])
    e = edge_values(dt)
    add("edge values", e)
    if dt in FLOATS:
        add("edge values without NaN", e[~np.isnan(e)])
        big = np.abs(e) > 1e9
        fin = e[np.isfinite(e) & ~big]
        add("finite edge values", fin)
        add("all -0", np.full(7, -0.0, NP[dt]))
        add("NaN first", np.array([np.nan, 1, -np.nan, 5], NP[dt]))
    else:
        add("edge values reversed", e[::-1].copy())
    return cs


def cases_arg_empty(op, dt):
    x = np.zeros((0,), NP[dt])

    def judge(rc, got, err):
        ok = rc == 2 and got is None and err.strip().startswith("nxvk: error:")
        return ok, "exit %d, stderr %r" % (rc, err.strip())
    return [Case("%s %s [0] is an error (exit 2, no output)" % (op, dt), op, [x], None, judge)]


# ---- dot

def dot_judge(dt, a, b):
    def judge(rc, got, err):
        e = expect_ok(rc, err)
        if e:
            return False, e
        if dt == "f32":
            w = np.matmul(a.astype(np.float64), b.astype(np.float64))
            s = np.matmul(np.abs(a.astype(np.float64)), np.abs(b.astype(np.float64)))
        else:
            w = np.matmul(wide(a), wide(b))
            s = np.matmul(np.abs(wide(a)), np.abs(wide(b)))
        want = np.asarray(w).astype(NP[dt])
        wf = None
        if MAY_FLUSH[dt]:
            fa, fb = flush(a), flush(b)
            wf = np.matmul(fa.astype(np.float64) if dt == "f32" else wide(fa),
                           fb.astype(np.float64) if dt == "f32" else wide(fb)).astype(NP[dt])
        return compare("dot", dt, got, want, (), wf, np.asarray(s, np.float64), a.shape[-1], ew=False)
    return judge


def cases_dot_int(dt, rng):
    """i32 dot: exact and wrapping (the products summed modulo 2^32)."""
    cs = []

    def judge_for(a, b):
        def judge(rc, got, err):
            e = expect_ok(rc, err)
            if e:
                return False, e
            w = np.matmul(a.astype(object), b.astype(object))
            want = np.vectorize(lambda v: ((int(v) + 2 ** 31) % 2 ** 32) - 2 ** 31)(w).astype(np.int32)
            ok = got is not None and got.dtype == np.int32 and got.shape == want.shape and np.array_equal(got, want)
            return ok, "got %s want %s" % (None if got is None else got.ravel()[:6], want.ravel()[:6])
        return judge

    for m, k, n in ((3, 1, 5), (3, 257, 5), (33, 70, 65)):
        a = random_values(dt, m * k, rng).reshape(m, k)
        b = random_values(dt, k * n, rng).reshape(k, n)
        cs.append(Case("dot %s [%d,%d]x[%d,%d] exact, wrapping" % (dt, m, k, k, n), "dot", [a, b], None, judge_for(a, b)))
    a = random_values(dt, 2 * 3 * 9, rng).reshape(2, 3, 9)
    b = random_values(dt, 2 * 9 * 4, rng).reshape(2, 9, 4)
    cs.append(Case("dot %s batched [2,3,9]x[2,9,4] exact, wrapping" % dt, "dot", [a, b], None, judge_for(a, b)))
    return cs


def cases_dot(dt, rng):
    cs = []

    def add(desc, a, b, attrs=None, env=None):
        cs.append(Case("dot %s %s" % (dt, desc), "dot", [a, b], attrs, dot_judge(dt, a, b), env))

    for k in SIZES:
        add("[3,%d]x[%d,5]" % (k, k), random_values(dt, 3 * k, rng, "dot").reshape(3, k),
            random_values(dt, 5 * k, rng, "dot").reshape(k, 5))
    for k in (1, 257):
        add("batched [2,3,%d]x[2,%d,4]" % (k, k), random_values(dt, 6 * k, rng, "dot").reshape(2, 3, k),
            random_values(dt, 8 * k, rng, "dot").reshape(2, k, 4))
    for variant in ("tiled", "naive"):
        for m, k, n in ((33, 70, 65), (64, 64, 64), (1, 1, 1)):
            add("[%d,%d]x[%d,%d] variant %s" % (m, k, k, n, variant),
                random_values(dt, m * k, rng, "dot").reshape(m, k),
                random_values(dt, k * n, rng, "dot").reshape(k, n), {"variant": variant})
    # few output tiles and a long K: the vec kernel splits K (dot_vec_split,
    # dot_ksum; K = 2048 in a power-of-two count of chunks: the batch form
    # with A read in place, dot_vec_strided_f32, for f32)
    for m, k, n in ((3, 1000, 5), (33, 3000, 65), (7, 1029, 130), (33, 2048, 65)):
        add("[%d,%d]x[%d,%d] variant vec (split K)" % (m, k, k, n),
            random_values(dt, m * k, rng, "dot").reshape(m, k),
            random_values(dt, k * n, rng, "dot").reshape(k, n), {"variant": "vec"})
    # lavapipe cut vec1's loops short from K = 52605 (3x3 f32, found by stress
    # bounds); positive inputs, so that a sum cut short is far outside the bound
    # (with mixed signs K*eps*sum|x| would hide it at this K)
    for variant in ("vec1", "naive", "regtile"):
        add("[3,65535]x[65535,3] variant %s, positive inputs" % variant,
            np.abs(random_values(dt, 3 * 65535, rng, "dot")).reshape(3, 65535),
            np.abs(random_values(dt, 3 * 65535, rng, "dot")).reshape(65535, 3), {"variant": variant})
    # split K's forms forced (src/ops/dot.c): the split kernel, and the batch
    # form with A's k chunks copied out or (f32, 4 chunks that tile K = 3072)
    # read in place; K = 3001 overruns 4 chunks, so B is copied padded too
    for k in (3072, 3001):
        a = random_values(dt, 2 * 33 * k, rng, "dot").reshape(2, 33, k)
        b = random_values(dt, 2 * k * 65, rng, "dot").reshape(2, k, 65)
        for form in ("kernel", "batch", "copy"):
            add("batched [2,33,%d]x[2,%d,65] variant vec, split K in 4 (%s form)" % (k, k, form), a, b,
                {"variant": "vec"}, {"NXVK_DOT_VEC": "1,1,8,4", "NXVK_DOT_SPLIT": form})
    # f32 products of whole tiles without bounds tests (dot_vec_aligned_f32,
    # NXVK_DOT_ALIGNED), launched in groups of row tiles (3 or 6 row tiles in groups
    # of 4 or 3: the last group short), and the 8 x 16 grid (NXVK_DOT_NT=128) for
    # f32, aligned or not; f64 takes the checked kernels (the same oracle)
    a = random_values(dt, 384 * 48, rng, "dot").reshape(384, 48)
    b = random_values(dt, 48 * 256, rng, "dot").reshape(48, 256)
    for env in ({"NXVK_DOT_ALIGNED": "1"}, {"NXVK_DOT_ALIGNED": "1", "NXVK_DOT_GROUP": "4"},
                {"NXVK_DOT_ALIGNED": "1", "NXVK_DOT_GROUP": "4", "NXVK_DOT_VEC": "1,2,16"},
                {"NXVK_DOT_ALIGNED": "1", "NXVK_DOT_GROUP": "3", "NXVK_DOT_VEC": "2,4,8", "NXVK_DOT_NT": "128"},
                {"NXVK_DOT_ALIGNED": "1", "NXVK_DOT_FRAG": "1", "NXVK_DOT_VEC": "1,2,16"},
                {"NXVK_DOT_ALIGNED": "1", "NXVK_DOT_FRAG": "1", "NXVK_DOT_VEC": "2,4,8", "NXVK_DOT_NT": "128"},
                # k steps unrolled by KU in a loop over BK (with FRAG: fragments
                # carried across passes), a warp's columns (LW), N and K compiled in
                {"NXVK_DOT_ALIGNED": "1", "NXVK_DOT_KU": "8", "NXVK_DOT_VEC": "1,2,16"},
                {"NXVK_DOT_ALIGNED": "1", "NXVK_DOT_KU": "4", "NXVK_DOT_FRAG": "1", "NXVK_DOT_VEC": "1,2,16"},
                {"NXVK_DOT_ALIGNED": "1", "NXVK_DOT_KU": "2", "NXVK_DOT_FRAG": "1", "NXVK_DOT_VEC": "1,4,8",
                 "NXVK_DOT_NT": "128"},
                {"NXVK_DOT_ALIGNED": "1", "NXVK_DOT_LW": "4", "NXVK_DOT_VEC": "2,2,8"},
                {"NXVK_DOT_ALIGNED": "1", "NXVK_DOT_LW": "2", "NXVK_DOT_CT": "1", "NXVK_DOT_VEC": "2,2,8"},
                {"NXVK_DOT_ALIGNED": "1", "NXVK_DOT_LW": "4", "NXVK_DOT_CT": "1", "NXVK_DOT_FRAG": "1",
                 "NXVK_DOT_VEC": "2,4,8", "NXVK_DOT_NT": "128"},
                # the last k step's products after the barrier, with and without FRAG
                {"NXVK_DOT_ALIGNED": "1", "NXVK_DOT_XB": "1", "NXVK_DOT_VEC": "2,2,8"},
                {"NXVK_DOT_ALIGNED": "1", "NXVK_DOT_XB": "1", "NXVK_DOT_VEC": "1,2,16"},
                {"NXVK_DOT_ALIGNED": "1", "NXVK_DOT_XB": "1", "NXVK_DOT_FRAG": "1", "NXVK_DOT_VEC": "1,2,4"},
                {"NXVK_DOT_ALIGNED": "1", "NXVK_DOT_XB": "1", "NXVK_DOT_FRAG": "1", "NXVK_DOT_VEC": "2,4,8",
                 "NXVK_DOT_NT": "128"},
                {"NXVK_DOT_ALIGNED": "1", "NXVK_DOT_XB": "2", "NXVK_DOT_FRAG": "1", "NXVK_DOT_VEC": "1,2,4"},
                {"NXVK_DOT_ALIGNED": "1", "NXVK_DOT_XB": "2", "NXVK_DOT_FRAG": "1", "NXVK_DOT_VEC": "2,4,8",
                 "NXVK_DOT_NT": "128"},
                # the next tile stored mid-tile (XS)
                {"NXVK_DOT_ALIGNED": "1", "NXVK_DOT_XB": "1", "NXVK_DOT_XS": "4", "NXVK_DOT_FRAG": "1",
                 "NXVK_DOT_VEC": "2,4,8", "NXVK_DOT_NT": "128"},
                {"NXVK_DOT_ALIGNED": "1", "NXVK_DOT_XB": "1", "NXVK_DOT_XS": "3", "NXVK_DOT_VEC": "2,2,8"},
                {"NXVK_DOT_NT": "128", "NXVK_DOT_VEC": "2,4,8"}):
        add("[384,48]x[48,256] variant vec, %s" % " ".join("%s=%s" % kv for kv in sorted(env.items())), a, b,
            {"variant": "vec"}, env)
    a = random_values(dt, 2 * 256 * 64, rng, "dot").reshape(2, 256, 64)
    b = random_values(dt, 2 * 64 * 384, rng, "dot").reshape(2, 64, 384)
    add("batched [2,256,64]x[2,64,384] variant vec, aligned, groups of 3 on the 8 x 16 grid", a, b,
        {"variant": "vec"}, {"NXVK_DOT_ALIGNED": "1", "NXVK_DOT_GROUP": "3", "NXVK_DOT_NT": "128"})
    add("batched [2,256,64]x[2,64,384] variant vec, aligned, N and K compiled in, KU 4", a, b,
        {"variant": "vec"}, {"NXVK_DOT_ALIGNED": "1", "NXVK_DOT_CT": "1", "NXVK_DOT_KU": "4", "NXVK_DOT_VEC": "1,2,16"})
    add("batched [2,256,64]x[2,64,384] variant vec, aligned, XB and FRAG on the 8 x 16 grid", a, b,
        {"variant": "vec"}, {"NXVK_DOT_ALIGNED": "1", "NXVK_DOT_XB": "1", "NXVK_DOT_FRAG": "1", "NXVK_DOT_NT": "128"})
    add("[33,70]x[70,65] variant vec on the 8 x 16 grid (bounds tests)",
        random_values(dt, 33 * 70, rng, "dot").reshape(33, 70),
        random_values(dt, 70 * 65, rng, "dot").reshape(70, 65), {"variant": "vec"}, {"NXVK_DOT_NT": "128"})
    add("batched [2,5,2000]x[2,2000,9] variant vec (split K)",
        random_values(dt, 2 * 5 * 2000, rng, "dot").reshape(2, 5, 2000),
        random_values(dt, 2 * 2000 * 9, rng, "dot").reshape(2, 2000, 9), {"variant": "vec"})
    ev = np.array([0.0, -0.0, 1.0, -1.0, np.inf, -np.inf, np.nan, FLT[dt][1], FLT[dt][2], 0.5], NP[dt])
    a = np.resize(ev, 40).reshape(4, 10)
    b = np.resize(ev[::-1], 30).reshape(10, 3)
    add("edge values [4,10]x[10,3]", a, b)
    return cs


# ---- movement

def exact_judge(op, dt, want_fn):
    def judge(rc, got, err):
        e = expect_ok(rc, err)
        if e:
            return False, e
        want = np.asarray(want_fn())
        if got is None or got.dtype != want.dtype or got.shape != want.shape:
            return False, "got %s %s, want %s %s" % (None if got is None else got.dtype,
                                                     None if got is None else got.shape,
                                                     want.dtype, want.shape)
        # bit-equal, NaN as a class (movement keeps -0)
        if want.dtype.kind == "f":
            same = ((got == want) & (np.signbit(got) == np.signbit(want))) | \
                (np.isnan(got) & np.isnan(want))
        else:
            same = got == want
        if same.all():
            return True, ""
        i = int(np.flatnonzero(~same.ravel())[0])
        return False, "%d of %d differ; first at flat index %d: got %s want %s" % (
            int((~same).sum()), same.size, i, fmt(got.ravel()[i]), fmt(want.ravel()[i]))
    return judge


def cases_movement(op, dt, rng):
    cs = []
    e = edge_values(dt)

    def add(desc, inputs, attrs, want_fn):
        cs.append(Case("%s %s %s" % (op, dt, desc), op, inputs, attrs, exact_judge(op, dt, want_fn)))

    if op == "reshape":
        for n in SIZES:
            x = random_values(dt, n, rng)
            add("[%d] to [-1]" % n, [x], {"shape": [-1]}, lambda x=x: x.reshape(-1))
        x = np.resize(e, 24).reshape(2, 3, 4)
        for shape in ([4, 6], [-1, 2], [24], [2, 1, 12, 1], [1, 1, 1, 1, 1, 1, 1, 24]):
            add("[2,3,4] edge values to %s" % shape, [x], {"shape": shape},
                lambda x=x, s=shape: x.reshape(s))
        z = np.zeros((0, 3), NP[dt])
        add("[0,3] to [3,0,5]", [z], {"shape": [3, 0, 5]}, lambda z=z: z.reshape(3, 0, 5))
    elif op == "transpose":
        for n in SIZES:
            x = random_values(dt, 2 * n, rng).reshape(n, 2)
            add("[%d,2] default perm" % n, [x], None, lambda x=x: x.T)
        x = np.resize(e, 24).reshape(2, 3, 4)
        for perm in ([2, 0, 1], [1, 0, 2], [0, 1, 2], [2, 1, 0]):
            add("[2,3,4] perm %s" % perm, [x], {"perm": perm}, lambda x=x, p=perm: np.transpose(x, p))
        add("[2,3,4] default perm (reverse)", [x], None, lambda x=x: np.transpose(x))
        y = random_values(dt, 128, rng).reshape(1, 2, 1, 2, 4, 2, 2, 2)
        perm = [7, 0, 6, 1, 5, 2, 4, 3]
        add("rank 8 perm %s" % perm, [y], {"perm": perm}, lambda y=y, p=perm: np.transpose(y, p))
        big = random_values(dt, 257 * 33, rng).reshape(257, 33)
        add("[257,33] perm [1,0]", [big], {"perm": [1, 0]}, lambda b=big: b.T)
    elif op == "slice":
        for n in SIZES:
            x = random_values(dt, n, rng)
            add("[%d] start 0 length %d" % (n, n), [x], {"start": [0], "length": [n]}, lambda x=x: x[:])

        def sl(x, start, length, stride):
            idx = tuple(slice(s, s + (l - 1) * st + 1 if l else s, st)
                        for s, l, st in zip(start, length, stride))
            return x[idx]
        x = random_values(dt, 257, rng)
        for st, ln, sd in (([2], [3], [2]), ([1], [85], [3]), ([256], [1], [1]), ([5], [0], [4]),
                           ([0], [129], [2])):
            add("[257] start %s length %s stride %s" % (st, ln, sd), [x],
                {"start": st, "length": ln, "stride": sd}, lambda x=x, a=st, b=ln, c=sd: sl(x, a, b, c))
        y = np.resize(e, 120).reshape(4, 5, 6)
        for st, ln, sd in (([1, 0, 2], [2, 5, 2], [2, 1, 3]), ([3, 4, 5], [1, 1, 1], [1, 1, 1]),
                           ([0, 1, 0], [4, 2, 6], [1, 3, 1])):
            add("[4,5,6] edge values start %s length %s stride %s" % (st, ln, sd), [y],
                {"start": st, "length": ln, "stride": sd}, lambda y=y, a=st, b=ln, c=sd: sl(y, a, b, c))
        add("[4,5,6] start/length without stride", [y], {"start": [1, 1, 1], "length": [2, 2, 2]},
            lambda y=y: y[1:3, 1:3, 1:3])
    elif op == "concatenate":
        for n in SIZES:
            a, b = random_values(dt, n, rng), random_values(dt, 3, rng)
            add("[%d] [3] axis 0" % n, [a, b], None, lambda a=a, b=b: np.concatenate([a, b]))
        a = np.resize(e, 6).reshape(2, 3)
        b = np.resize(e[::-1], 10).reshape(2, 5)
        add("[2,3] [2,5] axis 1 (edge values)", [a, b], {"axis": 1},
            lambda a=a, b=b: np.concatenate([a, b], axis=1))
        add("[2,3] [2,5] axis -1", [a, b], {"axis": -1}, lambda a=a, b=b: np.concatenate([a, b], axis=-1))
        parts = [random_values(dt, 4 * k, rng).reshape(k, 4) for k in (1, 0, 3, 257)]
        add("4 inputs [k,4] axis 0", parts, {"axis": 0}, lambda p=parts: np.concatenate(p, axis=0))
        one = [random_values(dt, 5, rng)]
        add("one input", one, None, lambda o=one: o[0].copy())
    elif op == "as_type":
        for to in ("f32", "f64", "i32", "u8"):
            if to == "f64" and not HAS_F64:
                continue
            for n in (0, 257):
                x = random_values(dt, n, rng)
                add("[%d] random to %s" % (n, to), [x], {"dtype": to}, lambda x=x, t=to: r_as_type(x, t))
            x = edge_values(dt)
            if dt in FLOATS:
                x = np.concatenate([x, np.array([255.5, 256, -0.5, -1, 254.99, 2147483520, 2147483648,
                                                 -2147483648, -2147483904, 3e9, -3e9, 0.9999], NP[dt])])
            add("edge values to %s" % to, [x], {"dtype": to}, lambda x=x, t=to: r_as_type(x, t))
    return cs


# ---- sources

def cases_iota(dt):
    cs = []

    def want(shape, axis):
        if axis is None:
            v = np.arange(int(np.prod(shape)), dtype=np.int64).reshape(shape)
        else:
            v = np.broadcast_to(np.arange(shape[axis], dtype=np.int64).reshape(
                [-1 if d == axis % len(shape) else 1 for d in range(len(shape))]), shape)
        return r_as_type(v.astype(np.int64) & 0xFFFFFFFF, dt) if dt != "u8" else (v & 255).astype(np.uint8)

    def add(shape, axis):
        attrs = {"shape": list(shape), "dtype": dt}
        if axis is not None:
            attrs["axis"] = axis
        cs.append(Case("iota %s shape %s%s" % (dt, list(shape), "" if axis is None else " axis %d" % axis),
                       "iota", [], attrs, exact_judge("iota", dt, lambda: want(shape, axis).astype(NP[dt]))))
    for n in SIZES + (65537,):
        add((n,), None)
    for shape, axis in (((3, 4), 0), ((3, 4), 1), ((3, 4), -1), ((2, 3, 4), 1), ((2, 0, 3), 2),
                        ((300,), 0), ((), None)):
        add(shape, axis)
    return cs


def cases_random(op, dt):
    cs = []
    n = 100000

    def stats_judge(seed):
        def judge(rc, got, err):
            e = expect_ok(rc, err)
            if e:
                return False, e
            if got is None or got.dtype != NP[dt] or got.shape != (n,):
                return False, "got %s" % (None if got is None else (got.dtype, got.shape))
            if not np.isfinite(got).all():
                return False, "non-finite values"
            m, s = float(np.mean(got, dtype=np.float64)), float(np.std(got, dtype=np.float64))
            if op == "random_uniform":
                ok = got.min() >= 0 and got.max() < 1 and abs(m - 0.5) < 0.005 and abs(s - 0.288675) < 0.005
                return ok, "min %r max %r mean %r std %r (want [0,1), 0.5, 0.2887)" % (
                    float(got.min()), float(got.max()), m, s)
            # 100000 samples: the mean's sd is 0.0032 and the std's 0.0022
            ok = abs(m) < 0.02 and abs(s - 1) < 0.015 and 3.5 < np.abs(got).max() < 8
            return ok, "mean %r std %r max|x| %r (want 0, 1, 3.5..8)" % (m, s, float(np.abs(got).max()))
        return judge

    cs.append(Case("%s %s [%d] seed 1: range and moments" % (op, dt, n), op, [],
                   {"shape": [n], "seed": 1, "dtype": dt}, stats_judge(1)))
    for size in SIZES:
        def judge(rc, got, err, size=size):
            e = expect_ok(rc, err)
            if e:
                return False, e
            ok = got is not None and got.shape == (size,) and got.dtype == NP[dt] and np.isfinite(got).all()
            if ok and op == "random_uniform" and size:
                ok = got.min() >= 0 and got.max() < 1
            return ok, "got %r" % (got[:8] if got is not None else None,)
        cs.append(Case("%s %s [%d] seed 7" % (op, dt, size), op, [], {"shape": [size], "seed": 7, "dtype": dt}, judge))
    return cs


def random_determinism(op, dt):
    """Same seed: same bits; another seed: other values; shape [2,3] too."""
    attrs = {"shape": [4099], "seed": 42, "dtype": dt}
    r1 = run_op(op, [], attrs)
    r2 = run_op(op, [], attrs)
    r3 = run_op(op, [], dict(attrs, seed=43))
    r4 = run_op(op, [], dict(attrs, seed="18446744073709551615"))
    ok = all(r[0] == 0 and r[1] is not None for r in (r1, r2, r3, r4))
    same = ok and r1[1].tobytes() == r2[1].tobytes()
    differ = ok and np.mean(r1[1] != r3[1]) > 0.99 and np.mean(r1[1] != r4[1]) > 0.99
    tap(same, "%s %s: the same seed gives the same bits" % (op, dt),
        "" if ok else "runs failed: %s" % [r[2].strip() for r in (r1, r2, r3, r4)])
    tap(differ, "%s %s: seeds 43 and 2^64-1 give other values" % (op, dt))


# ---------------------------------------------------------------- graphs

def graph_tests():
    gdir = tempfile.mkdtemp(prefix="graph_", dir=TMP)
    x = np.array([0.0, -0.0, 1.5, -3.0, 88.0, -200.0, np.nan], np.float32)
    np.save(os.path.join(gdir, "x.npy"), x)
    y_json = {"dtype": "f32", "shape": [7], "data": [1, "nan", "-0", 2.5, "inf", "-0", 0]}
    y = np.array([1, np.nan, -0.0, 2.5, np.inf, -0.0, 0], np.float32)
    graph = {
        "inputs": {"x": "x.npy", "y": y_json},
        "ops": [{"op": "exp", "in": ["x"], "out": "t0"},
                {"op": "add", "in": ["t0", "y"], "out": "t1"},
                {"op": "sum", "in": ["t1"], "attrs": {"axes": [0]}, "out": "s"},
                {"op": "slice", "in": ["t0"], "attrs": {"start": [0], "length": [6]}, "out": "t0s"},
                {"op": "sum", "in": ["t0s"], "attrs": {"axes": [0], "keep_axes": True}, "out": "s2"}],
        "outputs": {"t0": "out/t0.npy", "t1": "out/t1.npy", "s": "out/s.npy", "s2": "out/s2.npy"},
    }
    os.makedirs(os.path.join(gdir, "out"))
    gpath = os.path.join(gdir, "g.json")
    with open(gpath, "w") as f:
        json.dump(graph, f)
    rc, out, err = nxvk(["run", gpath])
    tap(rc == 0, "graph exp -> add -> sum (inline \"nan\"/\"-0\"/\"inf\"): exit 0", err.strip())
    if rc != 0:
        return
    try:
        t0, t1, s, s2 = [np.load(os.path.join(gdir, "out", n + ".npy")) for n in ("t0", "t1", "s", "s2")]
    except Exception as e:  # noqa
        tap(False, "graph outputs are readable .npy files", repr(e))
        return
    ok, d = compare("exp", "f32", t0, fl_ref(np.exp)(x), [x], fl_ref(np.exp)(flush(x)))
    tap(ok, "graph output t0 = exp(x) against numpy", d)
    ok, d = compare("add", "f32", t1, (t0 + y).astype(np.float32), [t0, y])
    tap(ok, "graph output t1 = t0 + y against numpy (on the GPU's t0)", d)
    want = reduce_ref("sum", t1, [0], False)
    ok, d = compare("sum", "f32", s, want, (), None, reduce_ref("sum", np.abs(t1.astype(np.float64)), [0], False), 7, ew=False)
    tap(ok and s.shape == () and np.isnan(s), "graph output s = sum(t1) is NaN of shape [] (input has NaN)", d)
    want2 = reduce_ref("sum", t0[:6], [0], True)
    ok, d = compare("sum", "f32", s2, want2, (), None,
                    reduce_ref("sum", np.abs(t0[:6].astype(np.float64)), [0], True), 6, ew=False)
    tap(ok and s2.shape == (1,), "graph output s2 = sum(slice(t0)) keep_axes against numpy", d)
    rc, out, err = nxvk(["run", gpath, "--check", "--print"])
    tap(rc == 0 and "check" in out and "t1" in out, "graph with --check --print: exit 0, checks printed",
        "exit %d\n%s%s" % (rc, out[-800:], err))


# ---------------------------------------------------------------- main

def make_cases(name, dt, rng):
    cases = []
    if name in BINARY:
        cases += cases_binary(name, dt, BINARY[name], rng)
    elif name in COMPARE:
        fn = (lambda f: lambda a, b: f(a, b).astype(np.bool_))(COMPARE[name])  # comparisons give bool
        cases += cases_binary(name, dt, fn, rng)
    elif name in UNARY:
        cases += cases_unary(name, dt, UNARY[name], rng)
    elif name == "select":
        cases += cases_select(dt, rng)
    elif name in REDUCE:
        cases += cases_reduce(name, dt, rng)
        if name in ("argmax", "argmin"):
            cases += cases_arg_empty(name, dt)
    elif name == "dot" and dt == "i32":
        cases += cases_dot_int(dt, rng)
    elif name == "dot":
        cases += cases_dot(dt, rng)
    elif name in MOVEMENT:
        cases += cases_movement(name, dt, rng)
    elif name == "iota":
        cases += cases_iota(dt)
    elif name.startswith("random_"):
        cases += cases_random(name, dt)
    return cases


def list_ops():
    rc, ops, err = nphelp.list_ops()
    return rc, list(ops.items()) if rc == 0 else [], err


def main():
    if not have_binary():
        return
    tap(DEV is not None, "nxvk info --json names a device (%s)" % ((DEV or {}).get("name")))
    rc, ops, err = list_ops()
    tap(rc == 0 and len(ops) > 0, "nxvk run --list-ops lists %d ops" % len(ops), err)
    listed = {name for name, _ in ops}
    missing = sorted(KNOWN - listed)
    tap(not missing, "every op of the design is listed", "missing: %s" % missing)
    rng = np.random.default_rng(20240611)
    cases = []
    for name, dts in ops:
        if name in ELSEWHERE:
            continue  # tests/ops/<ELSEWHERE[name]> is its oracle
        if name not in KNOWN:
            tap(False, "op %s: this test has no numpy oracle for it" % name)
            continue
        bad_dts = [d for d in ("f32", "f64", "i32", "u8") if d not in dts]
        for dt in dts:
            if dt in NEW_DTYPES:
                continue  # tests/ops/test_dtypes_numpy.py is their oracle (and fails where it has none)
            if dt not in NP:
                tap(False, "op %s: unknown dtype %s in --list-ops" % (name, dt))
                continue
            if dt == "f64" and not HAS_F64:
                continue
            try:
                cases += make_cases(name, dt, rng)
            except Exception as e:  # a broken generator fails its op, the rest runs
                tap(False, "op %s %s: building the cases failed: %r" % (name, dt, e))
        # a dtype the op does not take: exit 2, one line on stderr
        if bad_dts and name not in ("iota", "random_uniform", "random_normal", "as_type"):
            d = bad_dts[0]
            x = np.ones(3, NP[d])
            inputs = {"select": [np.ones(3, np.uint8), x, x], "dot": [x.reshape(1, 3), x.reshape(3, 1)]}.get(
                name, [x] * (2 if name in BINARY or name in COMPARE else 1))

            def judge(rc, got, err, d=d):
                lines = err.strip().splitlines()
                ok = rc == 2 and got is None and len(lines) == 1 and lines[0].startswith("nxvk: error:")
                return ok, "exit %d, stderr %r" % (rc, err)
            cases.append(Case("%s rejects %s (exit 2, one-line error)" % (name, d), name, inputs, None, judge))

    workers = 4   # nxvk waits on lavapipe's threads; a few in flight keep 2 cores busy
    with ThreadPoolExecutor(workers) as pool:
        for c, (ok, diag) in zip(cases, pool.map(lambda c: c.run(), cases)):
            tap(ok, c.desc, diag)

    for name, dts in ops:
        if name.startswith("random_"):
            for dt in dts:
                if dt != "f64" or HAS_F64:
                    random_determinism(name, dt)
    graph_tests()


if __name__ == "__main__":
    start = time.monotonic()
    nphelp.main(lambda: (main(), print("# %.0f s" % (time.monotonic() - start))), TMP)
