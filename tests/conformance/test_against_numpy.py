#!/usr/bin/python3
"""tests/conformance/test_against_numpy.py - an independent check of a sample
of `nxvk conformance`'s verdicts.

For a sample of op x dtype x input class, inputs are made here with numpy
(random normal-range values, or the edge values of
conformance/edge_values.json, in all pairs for binary ops), written as .npy
and run through `nxvk run --op ... --check -o out.npy`.  The GPU's output is
then judged here against numpy's own result under the limits of
conformance/limits.json, with this file's own reading of the rules that
nxvk-conformance(1) documents (exact, ULP, absolute inside a range,
unbounded outside, n*eps*sum|x| for accumulations, classes for NaN, infinity
and the sign of zero, denormal flushes forgiven where the device may flush).
Each sample asserts that three verdicts agree: this numpy judgement, `run
--check`'s exit status, and conformance's verdict for the same op, dtype and
input class (from its --json report).  A last sample breaks an op on purpose
(NXVK_TEST_INJECT) and asserts that all three see it.
"""
import json
import math
import os
import subprocess
import sys
import tempfile

import numpy as np

ROOT = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
sys.path.insert(0, os.path.join(ROOT, "tests"))
from pytap import NXVK, done, run_op, tap  # noqa: E402
LIMITS = json.load(open(os.path.join(ROOT, "conformance", "limits.json")))["ops"]
VALUES = json.load(open(os.path.join(ROOT, "conformance", "edge_values.json")))
NP = {"f32": np.float32, "f64": np.float64, "i32": np.int32, "u8": np.uint8}
EPS = {"f32": 2.0 ** -24, "f64": 2.0 ** -53}
TINY = {"f32": 2.0 ** -126, "f64": 2.0 ** -1022}


# ---------------------------------------------------------------- data

def by_dtype(obj, dt):
    if not isinstance(obj, dict):
        return None
    for key in (dt, "float" if dt in ("f32", "f64") else "int", "*"):
        if key in obj:
            return obj[key]
    return None


def parse(s):
    if isinstance(s, (int, float)):
        return float(s)
    t = s.strip()
    if "0x" in t.lower():
        return float.fromhex(t)
    return float(t)  # nan, inf, -inf, -0, decimals


def limit(op, dt):
    row = LIMITS[op]
    return row.get(dt, row.get("*"))


def accumulating(op, dt):
    lim = limit(op, dt)
    return isinstance(lim, dict) and lim.get("sum_factor", 0) > 0


def edge_values(op, dt):
    """The edge set conformance uses for op's inputs of dtype dt."""
    arr = by_dtype(VALUES.get("op_overrides", {}).get(op, {}).get("edge"), dt)
    if arr is None and accumulating(op, dt):
        arr = by_dtype(VALUES.get("accumulate", {}).get("edge"), dt)
    if arr is None:
        arr = by_dtype(VALUES["edge"], dt)
    return np.array([parse(v) for v in arr], dtype=np.float64).astype(NP[dt])


# -------------------------------------------------- numpy's own results

def as_type_i32(x):
    """nxvk's documented float -> i32: NaN -> 0, saturating, truncating."""
    x = x.astype(np.float64)
    out = np.where(np.isnan(x), 0.0, np.trunc(np.clip(np.nan_to_num(x, nan=0.0), -2.0 ** 31, 2.0 ** 31 - 1)))
    return out.astype(np.int32)


def i32_divide(a, b):
    """Truncating, x/0 = 0, INT_MIN/-1 = INT_MIN (DESIGN.md)."""
    a64, b64 = a.astype(np.int64), b.astype(np.int64)
    safe = np.where(b64 == 0, 1, b64)
    q = np.abs(a64) // np.abs(safe) * np.sign(a64) * np.sign(safe)
    q = np.where(b64 == 0, 0, q)
    return ((q + 2 ** 31) % 2 ** 32 - 2 ** 31).astype(np.int32)


def wrap(v, dt):
    if dt == "i32":
        return ((v.astype(np.int64) + 2 ** 31) % 2 ** 32 - 2 ** 31).astype(np.int32)
    return (v.astype(np.int64) % 256).astype(np.uint8)


def numpy_result(op, dt, ins, attrs):
    """numpy's value of op: floats computed in float64 (long double for f64
    dot) and rounded once; integers with nxvk's documented wrap-around."""
    wide = [x.astype(np.float64) if dt in ("f32", "f64") else x.astype(np.int64) for x in ins]
    with np.errstate(all="ignore"):
        if op == "add":
            r = wide[0] + wide[1]
        elif op == "multiply":
            r = wide[0] * wide[1]
        elif op == "divide":
            if dt == "i32":
                return i32_divide(ins[0], ins[1])
            r = wide[0] / wide[1]
        elif op == "max":
            r = np.maximum(wide[0], wide[1])
        elif op == "less":
            return wide[0] < wide[1]  # comparisons give bool
        elif op == "equal":
            return wide[0] == wide[1]
        elif op == "sqrt":
            r = np.sqrt(wide[0])
        elif op == "exp":
            r = np.exp(wide[0])
        elif op == "log":
            r = np.log(wide[0])
        elif op == "floor":
            r = np.floor(wide[0])
        elif op == "abs":
            r = np.abs(wide[0])
        elif op == "negate":
            r = -wide[0]
        elif op == "sum":
            r = np.sum(wide[0].astype(np.longdouble) if dt == "f64" else wide[0])
        elif op == "reduce_max":
            r = np.max(wide[0])
        elif op == "argmax":
            return np.array(np.argmax(ins[0]), dtype=np.int32)
        elif op == "dot":
            if dt == "f64":
                r = np.matmul(ins[0].astype(np.longdouble), ins[1].astype(np.longdouble))
            else:
                r = np.matmul(wide[0], wide[1])
        elif op == "transpose":
            return np.ascontiguousarray(np.transpose(ins[0], attrs["perm"]))
        elif op == "as_type":
            return as_type_i32(ins[0])
        else:
            raise ValueError(op)
    with np.errstate(all="ignore"):
        if dt in ("f32", "f64"):
            return np.asarray(r).astype(NP[dt])  # overflow to inf is the rounding
        return wrap(np.asarray(r), dt)


# --------------------------------------------- judging under the limits

def ulp_of(dt, r):
    r = abs(r)
    if r < TINY[dt]:
        return TINY[dt] * EPS[dt] * 2
    m, e = math.frexp(r)
    return math.ldexp(1.0, e - (24 if dt == "f32" else 53))


def ulp_diff(dt, g, r):
    if math.isnan(g) or math.isnan(r):
        return 0.0 if math.isnan(g) and math.isnan(r) else math.inf
    if math.isinf(g) or math.isinf(r):
        return 0.0 if g == r else math.inf
    if g == 0 and r == 0 and math.copysign(1, g) != math.copysign(1, r):
        return math.inf
    if g == r:
        return 0.0
    return abs(g - r) / ulp_of(dt, r)


def flush(x, dt):
    if dt not in ("f32", "f64"):
        return x
    x = x.copy()
    den = (x != 0) & (np.abs(x.astype(np.float64)) < TINY[dt])
    x[den] = np.copysign(0.0, x[den].astype(np.float64)).astype(x.dtype)
    return x


# reductions, scans and windows add, multiply and compare IEEE also where the
# driver flushes (reduce.comp, scan.comp, window.comp use nxmath's nxf_* /
# nxd_*; the products with a wide exponent range): no flush is forgiven there
NO_FLUSH = {"sum", "product", "mean", "reduce_max", "reduce_min", "argmax", "argmin",
            "cumulative_sum", "cumulative_product", "cumulative_max", "cumulative_min",
            "window_sum", "window_product", "window_max", "window_min", "window_scatter_max",
            "window_scatter_min"}


def judge(op, dt, ins, attrs, got, preserve):
    """Elements over the limit: (count, first index, detail)."""
    ref = numpy_result(op, dt, ins, attrs)
    if got.shape != ref.shape or got.dtype != ref.dtype:
        return got.size or 1, 0, "shape/dtype %s %s vs %s %s" % (got.shape, got.dtype, ref.shape, ref.dtype)
    lim = limit(op, dt)
    out_dt = {np.dtype(np.float32): "f32", np.dtype(np.float64): "f64"}.get(got.dtype)
    exact = lim == "exact" or out_dt is None
    refl = None
    if not preserve and dt in ("f32", "f64"):
        refl = numpy_result(op, dt, [flush(x, dt) for x in ins], attrs).reshape(-1)
    g, r = got.reshape(-1), ref.reshape(-1)
    bound = None
    if not exact and lim.get("sum_factor", 0) > 0:
        absin = [np.abs(x.astype(np.float64)).astype(np.float64) for x in ins]
        scale = np.asarray(numpy_result(op, "f64", absin, attrs), dtype=np.float64).reshape(-1)
        terms = ins[0].shape[-1] if op == "dot" else (ins[0].size // max(got.size, 1))
        bound = lim["sum_factor"] * max(terms, 1) * EPS[out_dt] * scale
    if not exact and op not in ("sum", "dot"):
        xs = np.broadcast_to(ins[0], got.shape).reshape(-1).astype(np.float64)
        ys = np.broadcast_to(ins[1], got.shape).reshape(-1).astype(np.float64) if len(ins) > 1 else None
    bad, first = 0, -1
    for i in range(g.size):
        gi, ri = g[i].item(), r[i].item()
        if exact:
            ok = (ulp_diff(out_dt, gi, ri) == 0) if out_dt else gi == ri
        else:
            u = ulp_diff(out_dt, gi, ri)
            if u == 0:
                ok = True
            elif math.isinf(u):
                ok = False
            elif bound is not None:
                ok = abs(gi - ri) <= bound[i] + ulp_of(out_dt, ri)
            else:
                x = xs[i]
                y = ys[i] if ys is not None else 0.0
                lo, hi = lim.get("lo", -math.inf), lim.get("hi", math.inf)
                if lim.get("abs", 0) > 0 and lo <= x <= hi:
                    ok = abs(gi - ri) <= lim["abs"]
                elif lim.get("outside") == "unbounded":
                    ok = abs(gi) <= 1
                else:
                    arg = abs(y * math.log2(abs(x))) if lim.get("arg") == "y*log2(x)" and x != 0 else abs(x)
                    if not math.isfinite(arg):
                        arg = 0
                    ok = u <= lim.get("ulp", 0) + lim.get("ulp_per_arg", 0) * arg + lim.get("ulp_per_y", 0) * abs(y)
        if not ok and refl is not None and out_dt and op not in NO_FLUSH:
            rf = refl[i].item()
            den = lambda v: v != 0 and abs(v) < TINY[out_dt]
            if ulp_diff(out_dt, gi, rf) == 0 or (gi == 0 and (den(ri) or den(rf))):
                ok = True  # a flush the device's float controls allow
        if not ok:
            bad += 1
            if first < 0:
                first = i
    detail = ""
    if first >= 0:
        detail = "first at %d: gpu %r ref %r" % (first, g[first].item(), r[first].item())
    return bad, first, detail


# ------------------------------------------------------------- samples

def make_inputs(op, dt, cls, nin, shapes, rng):
    if cls == "edge":
        e = edge_values(op, dt)
        if nin == 2 and shapes is None:  # every pair
            return [np.tile(e, e.size), np.repeat(e, e.size)]
        if shapes is None:
            return [e]
        return [np.resize(e, s) for s in shapes]
    shapes = shapes or [(4099,)] * nin
    out = []
    for s in shapes:
        if dt in ("f32", "f64"):
            out.append(rng.uniform(-10, 10, s).astype(NP[dt]))
        elif dt == "i32":
            out.append(rng.integers(-100, 101, s).astype(np.int32))
        else:
            out.append(rng.integers(0, 21, s).astype(np.uint8))
    return out


# (op, dtype, class, arity, shapes, attrs): classes as conformance names them
SAMPLES = [
    ("sqrt", "f32", "normal", 1, None, None),
    ("sqrt", "f32", "edge", 1, None, None),
    ("exp", "f32", "normal", 1, None, None),
    ("exp", "f32", "edge", 1, None, None),
    ("log", "f32", "normal", 1, None, None),
    ("log", "f32", "edge", 1, None, None),
    ("floor", "f32", "edge", 1, None, None),
    ("abs", "f64", "edge", 1, None, None),
    ("negate", "i32", "edge", 1, None, None),
    ("add", "f32", "edge", 2, None, None),
    ("add", "f64", "edge", 2, None, None),
    ("add", "i32", "edge", 2, None, None),
    ("add", "u8", "normal", 2, None, None),
    ("multiply", "f32", "normal", 2, None, None),
    ("multiply", "f32", "edge", 2, None, None),
    ("divide", "f32", "normal", 2, None, None),
    ("divide", "f32", "edge", 2, None, None),
    ("divide", "i32", "edge", 2, None, None),
    ("max", "f32", "edge", 2, None, None),
    ("less", "f32", "edge", 2, None, None),
    ("equal", "i32", "normal", 2, None, None),
    ("sum", "f32", "normal", 1, [(65537,)], None),
    ("sum", "f64", "normal", 1, [(65537,)], None),
    ("reduce_max", "f32", "edge", 1, [(7,)], None),
    ("argmax", "f32", "normal", 1, [(1000,)], None),
    ("dot", "f32", "normal", 2, [(65, 129), (129, 33)], None),
    ("transpose", "f32", "normal", 1, [(3, 4, 5)], {"perm": [2, 0, 1]}),
    ("as_type", "f32", "edge", 1, None, {"dtype": "i32"}),
]


def run_check(op, ins, attrs, tmp, env=None):
    return run_op(op, ins, tmp, attrs=attrs, check=True, env=env, timeout=None)


def conformance_verdicts(ops, env=None):
    """{(op, dtype, class family): all cases ok} from a --quick --json run."""
    with tempfile.TemporaryDirectory() as tmp:
        rep = os.path.join(tmp, "r.json")
        p = subprocess.run([NXVK, "conformance", "--quick", "--op", ",".join(sorted(ops)), "--json", rep],
                           capture_output=True, text=True, env=env)
        if not os.path.exists(rep):
            return None, None, p.stderr
        r = json.load(open(rep))
    verdicts = {}
    for c in r["reports"][0]["cases"]:
        if c["verdict"] == "skip" or "class" not in c:
            continue
        key = (c["op"], c["dtype"], c["class"].split("-")[0])
        verdicts[key] = verdicts.get(key, True) and c["verdict"] == "ok"
    return verdicts, r["reports"][0]["device"], p.returncode


def main():
    rng = np.random.default_rng(20261122)
    verdicts, device, rc = conformance_verdicts({s[0] for s in SAMPLES})
    tap(verdicts is not None, "conformance --quick --json runs on the sampled ops",
        [] if verdicts is not None else [str(rc)])
    if verdicts is None:
        done()
        return 1
    fc = device["float_controls"]
    with tempfile.TemporaryDirectory() as tmp:
        for op, dt, cls, nin, shapes, attrs in SAMPLES:
            preserve = fc["denorm_preserve_" + dt] if dt in ("f32", "f64") else True
            ins = make_inputs(op, dt, cls, nin, shapes, rng)
            rc, got, out = run_check(op, ins, attrs, tmp)
            if got is None or rc not in (0, 1):
                tap(False, "%s %s %s: nxvk run did not run" % (op, dt, cls), out[-5:])
                continue
            bad, _, detail = judge(op, dt, ins, attrs or {}, got, preserve)
            numpy_ok, check_ok = bad == 0, rc == 0
            conf_ok = verdicts.get((op, dt, cls))
            desc = "%s %s %s: numpy %s, run --check %s, conformance %s" % (
                op, dt, cls, "ok" if numpy_ok else "FAIL (%d elements)" % bad,
                "ok" if check_ok else "FAIL", {True: "ok", False: "FAIL", None: "no such case"}[conf_ok])
            tap(conf_ok is not None and numpy_ok == check_ok == conf_ok, desc,
                [detail] if detail else [])

        # the three must also agree when an op is broken on purpose
        env = dict(os.environ, NXVK_TEST_INJECT="break_op:multiply")
        ins = make_inputs("multiply", "f32", "normal", 2, None, rng)
        rc, got, out = run_check("multiply", ins, None, tmp, env)
        bad, first, _ = judge("multiply", "f32", ins, {}, got, True) if got is not None else (0, -1, "")
        broken, _, _ = conformance_verdicts({"multiply"}, env)
        conf_ok = broken.get(("multiply", "f32", "normal")) if broken else None
        tap(got is not None and bad >= 1 and rc == 1 and conf_ok is False,
            "break_op:multiply: numpy finds %d bad element(s) (first %d), run --check exit %d, "
            "conformance %s" % (bad, first, rc, {True: "ok", False: "FAIL", None: "no such case"}[conf_ok]))
    return done()


if __name__ == "__main__":
    sys.exit(main())
