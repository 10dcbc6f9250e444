"""math_oracles.py - references for erfc and erf_inv, which numpy lacks
(scipy may be absent), independent of nxvk: erfc from Python's math.erfc
(double); erf_inv from mpmath.erfinv where mpmath is installed, else Newton
steps in long double on a series for erf (|y| < 1/2) and on log(math.erfc)
for the tail (1 - |y| is exact there); and dot's exact result with its
error bound, for the dot suites (test_skinny, test_mvr, test_coopmat_bf16).
Not a test itself."""
import math

import numpy as np

LD = np.longdouble

try:
    import mpmath  # noqa: F401
    mpmath.mp.dps = 40
except ImportError:
    mpmath = None


def erf_series(x, terms=60):
    """erf in long double: 2/sqrt(pi) exp(-x^2) sum 2^n x^(2n+1) / (2n+1)!!
    (positive terms, no cancellation), the first terms - 1 of them after x:
    60 for |x| < 1, 400 up to |x| = 6.5 (test_ops_numpy's erf)"""
    x = np.asarray(x, dtype=LD)
    x2 = x * x
    term = x.copy()
    total = x.copy()
    for n in range(1, terms):
        term = term * 2 * x2 / LD(2 * n + 1)
        total = total + term
    return LD(2) / np.sqrt(np.arccos(LD(-1))) * np.exp(-x2) * total


def erf_inv_oracle(y):
    shape = np.shape(y)
    y = np.asarray(y, dtype=np.float64).reshape(-1)
    a = np.abs(y)
    out = np.full(y.shape, np.nan, dtype=LD)
    out[a == 1] = LD("inf")
    out[a == 0] = LD(0)
    small = (a > 0) & (a < 0.5)
    if mpmath is not None:
        for i in np.flatnonzero((a > 0) & (a < 1)):
            out[i] = LD(mpmath.nstr(mpmath.erfinv(mpmath.mpf(float(a[i]))), 25))
    else:
        x = a[small].astype(LD) * LD("0.8862269254527580136490837416705725914")
        for _ in range(6):  # Newton on the long double series, vectorized
            x = x - (erf_series(x) - a[small].astype(LD)) / (LD(2) / np.sqrt(np.arccos(LD(-1))) * np.exp(-x * x))
        out[small] = x
        for i in np.flatnonzero((a >= 0.5) & (a < 1)):
            t = 1.0 - float(a[i])  # exact
            x = math.sqrt(-math.log(t))  # a start on the tail
            for _ in range(60):
                ec = math.erfc(x)
                step = (math.log(ec) - math.log(t)) / (2 * math.exp(-x * x) / (math.sqrt(math.pi) * ec))
                x += step
                if abs(step) < 1e-18 * x:
                    break
            out[i] = LD(x)
    return np.where(np.signbit(y), -out, out).reshape(shape)


def erfc_ref(x):
    return np.array([math.erfc(float(v)) for v in np.asarray(x).reshape(-1)], dtype=LD).reshape(np.shape(x))


def dot_bound(a64, b64, dt):
    """dot of inputs made exact in f64 (a64 . b64, batched as np.matmul):
    (the exact products summed, their bound per output): f32 sums in some
    order, n * eps(f32) * sum|a*b| with n = K, then for an f16 or bf16
    result (dt) the one rounding to it: half an ulp relative, or half the
    least subnormal; for an f32 result (dt "f32") f32's least normal"""
    with np.errstate(all="ignore"):
        want = np.matmul(a64, b64)
        mag = np.matmul(np.abs(a64), np.abs(b64))
    sums = max(a64.shape[-1], 1) * np.finfo(np.float32).eps * mag
    if dt == "f32":
        return want, sums + np.finfo(np.float32).tiny
    rel, least = {"bf16": (2.0 ** -8, 2.0 ** -133), "f16": (2.0 ** -11, 2.0 ** -24)}[dt]
    return want, sums + rel * (np.abs(want) + sums) + least / 2
