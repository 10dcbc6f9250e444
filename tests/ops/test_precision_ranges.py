#!/usr/bin/python3
"""test_precision_ranges.py - f32 transcendentals where drivers' built-ins
fail (issue 24): sin and cos of large arguments and next to multiples of
pi/2, log near 1, log1p/expm1 near 0, exp/pow/sigmoid results near FLT_MIN
and in the denormals, atan2 of tiny ratios; against numpy (long double,
rounded once) under the limits of conformance/limits.json: exp, log, rsqrt
<= 1 ULP, the rest <= 2 ULP.  TAP."""
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from precision_common import LD, check_ulps, done, f32_bits, run, tap  # noqa: E402

rng = np.random.default_rng(24)
N = 20000


def f32(a):
    return np.asarray(a, dtype=np.float32)


def unary(op, ref, x, limit, what):
    x = f32(x)
    try:
        got = run(op, x)
    except RuntimeError as e:
        tap(False, "%s %s" % (op, what), str(e))
        return
    check_ulps("%s %s" % (op, what), got, ref(x.astype(LD)), limit, [x])


def binary(op, ref, x, y, limit, what):
    x, y = f32(x), f32(y)
    try:
        got = run(op, x, y)
    except RuntimeError as e:
        tap(False, "%s %s" % (op, what), str(e))
        return
    check_ulps("%s %s" % (op, what), got, ref(x.astype(LD), y.astype(LD)), limit, [x, y])


# sin, cos: large arguments, the whole range, next to multiples of pi/2
big = rng.uniform(-2e6, 2e6, N)
anyf = f32_bits(rng.integers(0, 0x7f800000, N, dtype=np.uint32)) * np.where(rng.random(N) < 0.5, -1, 1).astype(np.float32)
k = np.floor(rng.uniform(1, 2e6, N))
near = f32(k * (np.pi / 2)).view(np.uint32) + rng.integers(-2, 3, N).astype(np.uint32)
near = near.view(np.float32)
small = f32(rng.uniform(-np.pi, np.pi, N))
tiny = f32([-9.2e-7, 1e-6, -1e-6, 3e-8, 1e-30, -1e-38, 1e-45] * 10)
for op, ref in (("sin", np.sin), ("cos", np.cos)):
    unary(op, ref, big, 2, "|x| up to 2e6")
    unary(op, ref, anyf, 2, "x over the whole f32 range")
    unary(op, ref, near, 2, "x next to multiples of pi/2")
    unary(op, ref, small, 2, "x in [-pi, pi]")
    unary(op, ref, tiny, 2, "tiny x (-9.2e-7, 1e-6, denormals)")

# log near 1, log1p and expm1 near 0
one = f32(1 + rng.uniform(-1e-3, 1e-3, N))
ulp1 = f32(1 + np.float32(2 ** -23) * rng.integers(-64, 64, N))
unary("log", np.log, one, 1, "x within 1e-3 of 1")
unary("log", np.log, ulp1, 1, "x within 64 ULP of 1")
unary("log", np.log, f32(10 ** rng.uniform(-37, 38, N)), 1, "x over the normal range")
unary("log1p", np.log1p, f32(rng.uniform(-1e-4, 1e-4, N)), 2, "x near 0")
unary("expm1", np.expm1, f32(rng.uniform(-1e-4, 1e-4, N)), 2, "x near 0")

# results near FLT_MIN and in the denormals
unary("exp", np.exp, f32(rng.uniform(-104, -85, N)), 1, "results near FLT_MIN and denormal")
unary("exp", np.exp, f32(rng.uniform(-88, 88.7, N)), 1, "over the normal range")
unary("exp", np.exp, f32([88.7228, 88.72283935546875, 88.73, -87.33654, -103.97, -104.0, -150.0]), 1, "edges of overflow and underflow")
binary("pow", np.power, f32(np.full(N, 2.0)), f32(rng.uniform(-150, -120, N)), 2, "2^y into the denormals")
binary("pow", np.power, f32(rng.uniform(0.1, 0.9, N)), f32(rng.uniform(300, 900, N)), 2, "x^y near FLT_MIN")
binary("pow", np.power, f32(1 + rng.uniform(-1e-3, 1e-3, N)), f32(rng.uniform(-8e4, 8e4, N)), 2, "x near 1, large y")
unary("sigmoid", lambda x: 1 / (1 + np.exp(-x)), f32(rng.uniform(-104, -85, N)), 2, "results near FLT_MIN")
unary("rsqrt", lambda x: 1 / np.sqrt(x), f32(10 ** rng.uniform(-45, 38, N)), 1, "x over the whole range")
unary("tanh", np.tanh, f32(rng.uniform(-10, 10, N)), 2, "x in [-10, 10]")
unary("erf", lambda x: np.array([LD(__import__("math").erf(float(v))) for v in x]), f32(rng.uniform(-5, 5, 2000)), 2, "x in [-5, 5]")
binary("atan2", np.arctan2, f32(10 ** rng.uniform(-45, -30, N)), f32(10 ** rng.uniform(0, 10, N)), 2, "tiny ratios (denormal results)")
binary("atan2", np.arctan2, f32(rng.uniform(-1, 1, N)), f32(rng.uniform(-1, 1, N)), 2, "all quadrants")
sys.exit(done())
