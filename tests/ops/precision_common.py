"""precision_common.py - shared by tests/ops/test_precision_*.py: run one op
through `nxvk run` on numpy inputs and measure the result against numpy in
ULPs of f32 (a long double reference rounded once to f32; 0 = the correctly
rounded value).  TAP helpers; not a test itself."""
import os
import shutil
import sys
import tempfile
import warnings

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import pytap  # noqa: E402
from pytap import NXVK, tap  # noqa: E402,F401  (the suites import them from here)

warnings.simplefilter("ignore")
np.seterr(all="ignore")

TMP = tempfile.mkdtemp(prefix="nxvk_precision_")
LD = np.longdouble


def done():
    shutil.rmtree(TMP, ignore_errors=True)
    return pytap.done()


def run(op, *arrays):
    """nxvk run --op OP on the arrays; the result as a numpy array"""
    rc, got, lines = pytap.run_op(op, arrays, TMP)
    if rc != 0 or got is None:
        raise RuntimeError("nxvk run --op %s: %s" % (op, "\n".join(lines)))
    return got


def ordered(x):
    """f32 values as integers in the order of the reals (+0 == -0)"""
    i = np.asarray(x, dtype=np.float32).view(np.int32).astype(np.int64)
    return np.where(i < 0, -(i & 0x7fffffff), i)


def ulps(got, ref_ld):
    """per-element ULP distance of f32 got from the long double reference
    rounded to f32; NaN must meet NaN, zeros must agree in sign"""
    ref = np.asarray(ref_ld).astype(np.float32)
    got = np.asarray(got, dtype=np.float32)
    d = np.abs(ordered(got) - ordered(ref)).astype(np.float64)
    nan_g, nan_r = np.isnan(got), np.isnan(ref)
    d = np.where(nan_g | nan_r, np.where(nan_g & nan_r, 0.0, np.inf), d)
    zero = (got == 0) & (ref == 0)
    d = np.where(zero & (np.signbit(got) != np.signbit(ref)), np.inf, np.where(zero, 0.0, d))
    return d


def check_ulps(desc, got, ref_ld, limit, inputs):
    d = ulps(got, ref_ld)
    w = int(np.argmax(d)) if d.size else 0
    worst = float(d[w]) if d.size else 0.0
    args = ", ".join("%r" % float(np.asarray(a).reshape(-1)[w]) for a in inputs)
    tap(worst <= limit, "%s: max %g ULP over %d values (limit %g)" % (desc, worst, d.size, limit),
        None if worst <= limit else "worst at (%s): got %r want %r" % (
            args, float(np.asarray(got).reshape(-1)[w]), float(np.asarray(ref_ld).astype(np.float32).reshape(-1)[w])))


def check_exact(desc, got, want, inputs):
    got = np.asarray(got)
    want = np.asarray(want)
    if got.dtype in (np.float32, np.float64):  # the bits, NaN as a class
        ui = np.uint32 if got.dtype == np.float32 else np.uint64
        same = (got.view(ui) == want.astype(got.dtype).view(ui)) | (np.isnan(got) & np.isnan(want))
    else:
        same = got == want
    bad = np.flatnonzero(~same)
    diag = None
    if bad.size:
        w = int(bad[0])
        args = ", ".join("%r" % float(np.asarray(a).reshape(-1)[w]) for a in inputs)
        diag = "%d differ; first at (%s): got %r want %r" % (bad.size, args, got.reshape(-1)[w], want.reshape(-1)[w])
    tap(bad.size == 0, "%s: bit-identical to numpy on %d values" % (desc, got.size), diag)


def f32_bits(u):
    return np.asarray(u, dtype=np.uint32).view(np.float32)

