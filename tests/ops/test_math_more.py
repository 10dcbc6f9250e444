#!/usr/bin/python3
"""test_math_more.py - tan, asin, acos, atan, sinh, cosh, asinh, acosh, atanh,
cbrt, erfc and erf_inv ([nx-ops]) against numpy: f32 and f64 over each
function's range, the tails, denormal inputs and the specials (NaN, +-inf,
-0, domain errors -> NaN, atanh(+-1) = +-inf, erf_inv(+-1) = +-inf,
cbrt(-8) = -2), under the limits of conformance/limits.json; f16 (computed
in f32, rounded once) within 1 ULP of f16.

The reference is numpy's long double ufuncs (libm's tanl, asinl, ... on
this machine), rounded once to the dtype.  erf and erfc have no numpy ufunc:
erfc comes from Python's math.erfc (double, a few ULP of f64 at most;
f64 erfc is checked at its limit + 1 for that), and erf_inv from an oracle
of its own, independent of nxvk: mpmath.erfinv where mpmath is installed,
else Newton steps in long double on a series for erf (|y| < 1/2), and on
log(math.erfc(x)) for the tail (1 - |y| is exact there).  TAP."""
import json
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from math_oracles import erf_inv_oracle, erfc_ref, mpmath  # noqa: E402
from precision_common import LD, check_ulps, done, run, tap  # noqa: E402
from pytap import ROOT  # noqa: E402

rng = np.random.default_rng(29)
N = 4000
LIMITS = json.load(open(os.path.join(ROOT, "conformance", "limits.json")))["ops"]

REF = {
    "tan": np.tan, "asin": np.arcsin, "acos": np.arccos, "atan": np.arctan, "sinh": np.sinh,
    "cosh": np.cosh, "asinh": np.arcsinh, "acosh": np.arccosh, "atanh": np.arctanh,
    "cbrt": np.cbrt, "erfc": erfc_ref, "erf_inv": erf_inv_oracle,
}
# each function's own range (uniform), then a wide one (log-uniform, both signs)
RANGE = {
    "tan": (-10, 10), "asin": (-1, 1), "acos": (-1, 1), "atan": (-8, 8), "sinh": (-30, 30),
    "cosh": (-30, 30), "asinh": (-20, 20), "acosh": (1, 20), "atanh": (-1, 1),
    "cbrt": (-100, 100), "erfc": (-6, 27), "erf_inv": (-1, 1),
}
SPECIALS = [0.0, -0.0, float("inf"), float("-inf"), float("nan"), 1.0, -1.0, 2.0, -8.0, 0.5, -0.5,
            1e-30, -1e-30, 5e-324, 1.5e-45, -1.5e-45, 1.1754944e-38, 88.7, 89.5, 710.0, 711.0,
            3.4e38, 1e300, 4.0, 6.0, 10.05, 10.06, 27.2, 27.3]


def ulps64(got, ref_ld):
    ref = np.asarray(ref_ld).astype(np.float64)
    got = np.asarray(got, dtype=np.float64)

    def ordered(v):
        i = v.view(np.int64)
        return np.where(i < 0, -(i & 0x7fffffffffffffff), i)
    d = np.abs((ordered(got) - ordered(ref)).astype(np.float64))
    nan_g, nan_r = np.isnan(got), np.isnan(ref)
    d = np.where(nan_g | nan_r, np.where(nan_g & nan_r, 0.0, np.inf), d)
    zero = (got == 0) & (ref == 0)
    return np.where(zero & (np.signbit(got) != np.signbit(ref)), np.inf, np.where(zero, 0.0, d))


def inputs(op, dt):
    lo, hi = RANGE[op]
    wide = np.exp(rng.uniform(-40 if dt == np.float32 else -200, 6, N)) * rng.choice([-1, 1], N)
    parts = [rng.uniform(lo, hi, N), wide, np.array(SPECIALS)]
    if op == "erf_inv":  # the tail, 1 - 2^-k
        k = rng.uniform(1, 24 if dt == np.float32 else 53, N)
        parts.append((1 - 2.0 ** -k) * rng.choice([-1, 1], N))
    if op in ("asin", "acos", "atanh", "acosh"):  # next to the domain's edges
        parts.append(np.nextafter(np.array([1.0, -1.0, 1.0, -1.0], dt), np.array([0, 0, 2, -2], dt)))
    with np.errstate(over="ignore"):
        return np.concatenate([p.astype(dt) for p in parts])


for op in REF:
    for dt, name in ((np.float32, "f32"), (np.float64, "f64")):
        x = inputs(op, dt)
        lim = LIMITS[op][name]["ulp"]
        try:
            got = run(op, x)
        except RuntimeError as e:
            tap(False, "%s %s" % (op, name), str(e))
            continue
        with np.errstate(all="ignore"):
            ref = REF[op](x.astype(LD))
        if dt == np.float32:
            check_ulps("%s f32, range %s, wide, specials" % (op, RANGE[op]), got, ref, lim, [x])
        else:
            if op == "erfc":
                lim += 1  # math.erfc is double, not long double
            d = ulps64(got, ref)
            w = int(np.argmax(d))
            tap(d[w] <= lim, "%s f64, range %s, wide, specials: max %g ULP over %d values (limit %g)"
                % (op, RANGE[op], d[w], d.size, lim),
                None if d[w] <= lim else "worst at %r: got %r want %r" % (x[w], got[w], float(ref[w])))

# f16: computed in f32 and rounded once: within 1 ULP of f16
for op in ("tan", "asin", "sinh", "acosh", "atanh", "cbrt", "erfc", "erf_inv"):
    lo, hi = RANGE[op]
    x = np.concatenate([rng.uniform(lo, hi, 500), [0.0, -0.0, 1.0, -1.0, float("inf"), float("nan")]]).astype(np.float16)
    try:
        got = run(op, x)
    except RuntimeError as e:
        tap(False, "%s f16" % op, str(e))
        continue
    with np.errstate(all="ignore"):
        ref = np.asarray(REF[op](x.astype(LD))).astype(np.float16)
    gi = got.view(np.int16).astype(np.int64)
    ri = ref.view(np.int16).astype(np.int64)
    gi = np.where(gi < 0, -(gi & 0x7fff), gi)
    ri = np.where(ri < 0, -(ri & 0x7fff), ri)
    d = np.abs(gi - ri).astype(np.float64)
    d = np.where(np.isnan(got) | np.isnan(ref), np.where(np.isnan(got) & np.isnan(ref), 0, np.inf), d)
    w = int(np.argmax(d))
    tap(d[w] <= 1, "%s f16: max %g ULP of f16 over %d values (limit 1)" % (op, d[w], d.size),
        None if d[w] <= 1 else "worst at %r: got %r want %r" % (x[w], got[w], ref[w]))

print("# erf_inv oracle: %s" % ("mpmath.erfinv" if mpmath else
      "Newton in long double on a series for erf, and on log(math.erfc) for the tail (no mpmath here)"))
sys.exit(done())
