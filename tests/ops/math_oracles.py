"""math_oracles.py - references for erfc and erf_inv, which numpy lacks
(scipy may be absent), independent of nxvk: erfc from Python's math.erfc
(double); erf_inv from mpmath.erfinv where mpmath is installed, else Newton
steps in long double on a series for erf (|y| < 1/2) and on log(math.erfc)
for the tail (1 - |y| is exact there).  Not a test itself."""
import math

import numpy as np

LD = np.longdouble

try:
    import mpmath  # noqa: F401
    mpmath.mp.dps = 40
except ImportError:
    mpmath = None


def erf_series(x):
    """erf in long double: 2/sqrt(pi) exp(-x^2) sum 2^n x^(2n+1) / (2n+1)!!
    (positive terms, no cancellation), for |x| < 1"""
    x = np.asarray(x, dtype=LD)
    x2 = x * x
    term = x.copy()
    total = x.copy()
    for n in range(1, 60):
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
