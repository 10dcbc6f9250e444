#!/usr/bin/python3
"""test_precision_f64.py - f64 arithmetic bit-identical to numpy (issue 24):
divide and sqrt correctly rounded on random bit patterns over the whole
range (denormal results included); add, subtract, multiply, divide, sqrt,
the comparisons, abs, negate, sign, max, min, floor, ceil, remainder on
denormal-heavy inputs.  On a driver that flushes f64 denormals
(shaderDenormPreserveFloat64 = false) the library reads denormals from their
bits and builds denormal results from bits (tests/unit/test_ieee.c checks
that case under emulated flushing).  TAP."""
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from precision_common import check_exact, done, run, tap  # noqa: E402

rng = np.random.default_rng(4242)
N = 20000


def f64_bits(u):
    return np.asarray(u, dtype=np.uint64).view(np.float64)


def random_bits(n):
    """uniform over all bit patterns: every exponent, NaN and inf included"""
    return f64_bits(rng.integers(0, 1 << 64, n, dtype=np.uint64, endpoint=False))


def denormal_heavy(n):
    sign = rng.integers(0, 2, n, dtype=np.uint64) << np.uint64(63)
    mant = rng.integers(0, 1 << 52, n, dtype=np.uint64)
    expo = rng.integers(1, 70, n, dtype=np.uint64) << np.uint64(52)
    edges = np.array([0, 1 << 63, 1, (1 << 63) | 1, (1 << 52) - 1, 1 << 52, (1 << 52) + 1,
                      0x7ff0000000000000, 0xfff0000000000000, 0x7ff8000000000000,
                      0x3ff0000000000000, 0x7fefffffffffffff, 1 << 51, 0xffffffff], dtype=np.uint64)
    kind = rng.integers(0, 3, n)
    bits = np.where(kind == 0, sign | mant, np.where(kind == 1, sign | expo | mant,
                                                     edges[rng.integers(0, edges.size, n)] ^ sign))
    return f64_bits(bits)


def exact(desc, op, want, *args):
    try:
        got = run(op, *args)
    except RuntimeError as e:
        tap(False, desc, str(e))
        return
    check_exact(desc, got, want, list(args))


with np.errstate(all="ignore"):
    # divide and sqrt correctly rounded over the whole range
    a, b = random_bits(N), random_bits(N)
    exact("f64 divide, random bit patterns", "divide", a / b, a, b)
    exact("f64 sqrt, random bit patterns", "sqrt", np.sqrt(np.abs(a)), np.abs(a))
    # quotients landing in the denormals (and just above DBL_MIN)
    m1 = f64_bits((rng.integers(1023 - 300, 1023 - 200, N, dtype=np.uint64) << np.uint64(52)) |
                  rng.integers(0, 1 << 52, N, dtype=np.uint64))
    m2 = f64_bits((rng.integers(1023 + 700, 1023 + 830, N, dtype=np.uint64) << np.uint64(52)) |
                  rng.integers(0, 1 << 52, N, dtype=np.uint64))
    exact("f64 divide, results near and below DBL_MIN", "divide", m1 / m2, m1, m2)
    exact("f64 divide, results near overflow", "divide", m2 / m1, m2, m1)

    x, y = denormal_heavy(N), denormal_heavy(N)
    y[::7] = -x[::7]
    y[1::7] = f64_bits(x[1::7].view(np.uint64) ^ np.uint64(1))
    exact("f64 add, denormal inputs and results", "add", x + y, x, y)
    exact("f64 subtract, denormal inputs and results", "subtract", x - y, x, y)
    exact("f64 multiply, denormal inputs and results", "multiply", x * y, x, y)
    half = np.full(N, 0.5000000000000001)
    exact("f64 multiply by 0.5(1+2^-52), rounding into the denormals", "multiply", x * half, x, half)
    exact("f64 divide, denormal inputs and results", "divide", x / y, x, y)
    three = np.full(N, 3.0)
    exact("f64 divide by 3, denormal results", "divide", x / three, x, three)
    exact("f64 sqrt of denormals", "sqrt", np.sqrt(np.abs(x)), np.abs(x))
    exact("f64 abs", "abs", np.abs(x), x)
    exact("f64 negate", "negate", -x, x)
    exact("f64 sign", "sign", np.where(np.isnan(x), x, np.where(x > 0, 1.0, np.where(x < 0, -1.0, 0.0))), x)
    exact("f64 floor", "floor", np.floor(x), x)
    exact("f64 ceil", "ceil", np.ceil(x), x)
    exact("f64 max", "max", np.maximum(x, y), x, y)
    exact("f64 min", "min", np.minimum(x, y), x, y)
    exact("f64 remainder", "remainder", np.fmod(x, y), x, y)
    for op, f in (("equal", np.equal), ("not_equal", np.not_equal), ("less", np.less),
                  ("less_equal", np.less_equal), ("greater", np.greater), ("greater_equal", np.greater_equal)):
        exact("f64 %s, denormal operands" % op, op, f(x, y).astype(np.uint8), x, y)

sys.exit(done())
