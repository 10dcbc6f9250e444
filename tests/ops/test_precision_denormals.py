#!/usr/bin/python3
"""test_precision_denormals.py - f32 denormal inputs and results (issue 24):
add, subtract, multiply, divide, sqrt, the comparisons, abs, negate, sign,
max, min, select, floor, ceil, remainder and as_type f32 <-> f64 must be
bit-identical to numpy on denormal-heavy inputs (every driver: these ops
read a denormal from its bits and build a denormal result from bits, so a
driver that flushes, as NVIDIA's does, changes nothing); log, exp, rsqrt of
denormals within 1 ULP.  TAP."""
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from precision_common import LD, check_exact, check_ulps, done, f32_bits, run, tap  # noqa: E402

rng = np.random.default_rng(2024)
N = 20000


def denormal_heavy(n):
    """a third denormal, a third just above FLT_MIN, a third edge values"""
    sign = (rng.integers(0, 2, n, dtype=np.uint32) << 31).astype(np.uint32)
    mant = rng.integers(0, 1 << 23, n, dtype=np.uint32)
    expo = rng.integers(1, 31, n, dtype=np.uint32) << 23
    edges = np.array([0, 0x80000000, 1, 0x80000001, 0x007fffff, 0x00800000, 0x00800001,
                      0x7f800000, 0xff800000, 0x7fc00000, 0x3f800000, 0x7f7fffff, 0x00400000], dtype=np.uint32)
    kind = rng.integers(0, 3, n)
    bits = np.where(kind == 0, sign | mant, np.where(kind == 1, sign | expo | mant, edges[rng.integers(0, edges.size, n)] ^ sign))
    return f32_bits(bits)


x = denormal_heavy(N)
y = denormal_heavy(N)
y[::7] = -x[::7]  # exact cancellation to zero
y[1::7] = f32_bits(x[1::7].view(np.uint32) ^ 1)  # neighbours: results in the denormals


def exact(op, want, *args):
    try:
        got = run(op, *args)
    except RuntimeError as e:
        tap(False, op, str(e))
        return
    check_exact("%s, denormal inputs and results" % op, got, want, list(args))


exact("add", x + y, x, y)
exact("subtract", x - y, x, y)
exact("multiply", x * f32_bits(np.full(N, 0x3f000001, dtype=np.uint32)), x, f32_bits(np.full(N, 0x3f000001, dtype=np.uint32)))
exact("multiply", x * y, x, y)
small = np.where(np.abs(y) > 0, y, np.float32(1)).astype(np.float32)
exact("divide", x / np.float32(3.0), x, np.full(N, 3.0, dtype=np.float32))
exact("divide", x / small, x, small)
exact("sqrt", np.sqrt(np.abs(x)), np.abs(x))
exact("abs", np.abs(x), x)
exact("negate", -x, x)
with np.errstate(invalid="ignore"):
    exact("sign", np.where(np.isnan(x), x, np.where(x > 0, 1, np.where(x < 0, -1, 0))).astype(np.float32), x)
exact("floor", np.floor(x), x)
exact("ceil", np.ceil(x), x)
exact("max", np.maximum(x, y), x, y)
exact("min", np.minimum(x, y), x, y)
exact("remainder", np.fmod(x, y), x, y)
for op, f in (("equal", np.equal), ("not_equal", np.not_equal), ("less", np.less),
              ("less_equal", np.less_equal), ("greater", np.greater), ("greater_equal", np.greater_equal)):
    exact(op, f(x, y).astype(np.uint8), x, y)
pred = rng.integers(0, 2, N).astype(np.uint8)
exact("select", np.where(pred != 0, x, y), pred, x, y)

# as_type f32 -> f64 keeps denormals; f64 -> f32 rounds into them
import subprocess  # noqa: E402

from precision_common import NXVK, TMP  # noqa: E402


def as_type(a, dt):
    p = os.path.join(TMP, "as_in.npy")
    o = os.path.join(TMP, "as_out.npy")
    np.save(p, a)
    r = subprocess.run([NXVK, "run", "--op", "as_type", "--attrs", '{"dtype":"%s"}' % dt, p, "-o", o],
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=300)
    if r.returncode:
        raise RuntimeError(r.stderr.decode(errors="replace"))
    return np.load(o)


try:
    check_exact("as_type f32 -> f64, denormal inputs", as_type(x, "f64"), x.astype(np.float64), [x])
    xd = x.astype(np.float64) * rng.uniform(0.25, 1.0, N)
    check_exact("as_type f64 -> f32, results in the denormals", as_type(xd, "f32"), xd.astype(np.float32), [xd])
except RuntimeError as e:
    tap(False, "as_type", str(e))

# transcendentals of denormals
pos = np.abs(f32_bits(rng.integers(1, 1 << 23, N, dtype=np.uint32)))
for op, ref, lim in (("log", np.log, 1), ("rsqrt", lambda v: 1 / np.sqrt(v), 1), ("exp", np.exp, 1),
                     ("sin", np.sin, 2), ("tanh", np.tanh, 2), ("expm1", np.expm1, 2), ("log1p", np.log1p, 2)):
    try:
        got = run(op, pos)
        check_ulps("%s of denormal inputs" % op, got, ref(pos.astype(LD)), lim, [pos])
    except RuntimeError as e:
        tap(False, op, str(e))
sys.exit(done())
