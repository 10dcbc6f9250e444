#!/usr/bin/python3
"""test_linalg_numpy.py - cholesky and triangular_solve against numpy:
np.linalg.cholesky on symmetric positive definite matrices (batched, f32
and f64, n from 0 to past the workgroup size), and np.linalg.solve on the
triangular matrix each option combination makes (left_side, lower,
transform_a; b a vector or a matrix), only the named triangle read (the
other filled with garbage), plus NaN for a matrix that is not positive
definite and the shape and attribute errors.  Each result must lie within
4 * n * eps * max|x| of numpy's (the matrices are well conditioned:
diagonally dominant).  Some cases also run --check (the CPU reference).
TAP."""
import os
import shutil
import sys
import tempfile

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from pytap import done, check as tap, run_op  # noqa: E402

TMP = tempfile.mkdtemp(prefix="nxvk_linalg_")
rng = np.random.default_rng(2929)


def run(op, ins, attrs=None, check=False):
    """(exit status, the result or None, stdout and stderr as one string)"""
    rc, got, lines = run_op(op, ins, TMP, attrs, check, timeout=600)
    return rc, (got if rc == 0 else None), "\n".join(lines)


def close(got, want, dt, nn):
    if got is None or got.shape != want.shape or got.dtype != dt:
        return False, "shape/dtype %s want %s" % (None if got is None else (got.shape, got.dtype), want.shape)
    eps = float(np.finfo(dt).eps) / 2
    if want.size == 0:
        return True, None
    w = want.reshape((-1,) + want.shape[-2:]) if want.ndim >= 2 else want.reshape(1, -1)
    g = got.reshape(w.shape).astype(np.float64)
    scale = np.abs(w).reshape(w.shape[0], -1).max(axis=1) if w.size else np.zeros(0)
    bound = 4 * max(nn, 1) * eps * scale.reshape((-1,) + (1,) * (w.ndim - 1)) + float(np.finfo(dt).tiny)
    err = np.abs(g - w)
    if not np.isfinite(g).all() or (err > bound).any():
        return False, "max err %g (bound %g)" % (np.nanmax(err) if err.size else 0, bound.max() if bound.size else 0)
    return True, None


def spd(shape, dt):
    k = shape[-1]
    m = rng.standard_normal(shape)
    a = m @ np.swapaxes(m, -1, -2) / max(k, 1) + np.eye(k) * 2
    return a.astype(dt)


def chol_case(desc, shape, dt=np.float32, check=False):
    a = spd(shape, dt)
    garbage = np.triu(rng.standard_normal(shape) * 100, 1).astype(dt)
    a_in = np.tril(a) + garbage  # the upper triangle must not be read
    want = np.linalg.cholesky(a.astype(np.float64)) if a.size else np.zeros(shape)
    rc, got, text = run("cholesky", [a_in], check=check)
    if rc:
        tap(False, desc, text)
        return
    ok, why = close(got, want, dt, shape[-1])
    tap(ok, desc, why)


chol_case("cholesky 3x3 f32", (3, 3), check=True)
chol_case("cholesky 1x1", (1, 1))
chol_case("cholesky 0x0", (0, 0))
chol_case("cholesky batched [2,3,5,5] f32", (2, 3, 5, 5), check=True)
chol_case("cholesky 64x64 f64", (64, 64), dt=np.float64, check=True)
chol_case("cholesky 300x300 f32 (past the workgroup)", (300, 300), check=True)
chol_case("cholesky batched [4,33,33] f64", (4, 33, 33), dt=np.float64)

# not positive definite: NaN from the failing pivot on
a = np.array([[1, 2], [2, 1]], np.float32)
rc, got, text = run("cholesky", [a])
tap(rc == 0 and got[0, 0] == 1 and np.isnan(got[1, 1]), "cholesky of an indefinite matrix: NaN pivot",
    text if rc else str(got))
a = np.array([[20.0, 17.6], [17.6, 16.0]], np.float32)  # Nx's doctest
rc, got, text = run("cholesky", [a])
want = np.array([[4.4721360206604, 0.0], [3.9354796409606934, 0.7155418395996094]], np.float32)
tap(rc == 0 and np.allclose(got, want, rtol=1e-6, atol=0), "cholesky: Nx's doctest values", str(got))


def tri(shape, lower, dt):
    k = shape[-1]
    m = rng.standard_normal(shape) * 0.5
    m = m + np.eye(k) * (k + 2) * np.sign(rng.standard_normal(shape[:-1] + (1,)) + 0.1)
    t = np.tril(m) if lower else np.triu(m)
    garbage = (np.triu(rng.standard_normal(shape), 1) if lower else np.tril(rng.standard_normal(shape), -1)) * 50
    return t.astype(dt), (t + garbage).astype(dt)


def trsm_case(desc, ashape, bshape, left=True, lower=True, transpose=False, dt=np.float32, check=False):
    t, a_in = tri(ashape, lower, dt)
    b = rng.standard_normal(bshape).astype(dt)
    t64, b64 = t.astype(np.float64), b.astype(np.float64)
    op = np.swapaxes(t64, -1, -2) if transpose else t64
    vec = b.ndim == t.ndim - 1
    if left:
        want = np.linalg.solve(op, b64[..., None])[..., 0] if vec else np.linalg.solve(op, b64)
    else:  # x op = b  <=>  op^T x^T = b^T
        opT = np.swapaxes(op, -1, -2)
        want = np.linalg.solve(opT, b64[..., None])[..., 0] if vec else \
            np.swapaxes(np.linalg.solve(opT, np.swapaxes(b64, -1, -2)), -1, -2)
    attrs = {"left_side": left, "lower": lower, "transform_a": "transpose" if transpose else "none"}
    rc, got, text = run("triangular_solve", [a_in, b], attrs, check)
    if rc:
        tap(False, desc, text)
        return
    ok, why = close(got, want, dt, ashape[-1])
    tap(ok, desc, why)


for left in (True, False):
    for lower in (True, False):
        for transpose in (False, True):
            name = "left_side %s lower %s transform_a %s" % (left, lower, "transpose" if transpose else "none")
            bshape = (5, 3) if left else (3, 5)
            trsm_case("triangular_solve " + name + " (matrix b)", (5, 5), bshape, left, lower, transpose,
                      check=True)
            trsm_case("triangular_solve " + name + " (vector b, f64)", (6, 6), (6,), left, lower, transpose,
                      dt=np.float64)
trsm_case("triangular_solve batched [2,3,4,4] x [2,3,4,2]", (2, 3, 4, 4), (2, 3, 4, 2), check=True)
trsm_case("triangular_solve batched vectors [3,7,7] x [3,7], upper", (3, 7, 7), (3, 7), lower=False)
trsm_case("triangular_solve 400x400 x [400,30] f32 (long substitutions)", (400, 400), (400, 30))
trsm_case("triangular_solve right side batched f64", (2, 9, 9), (2, 4, 9), left=False, lower=False,
          transpose=True, dt=np.float64)
rc, got, text = run("triangular_solve", [np.eye(3, dtype=np.float32), np.zeros((3, 0), np.float32)])
tap(rc == 0 and got.shape == (3, 0), "triangular_solve with no right-hand sides", text)

# Nx's doctest: a = [[3,0,0,0],[2,1,0,0],[1,0,1,0],[1,1,1,1]], b = [4,2,4,2]
a = np.array([[3, 0, 0, 0], [2, 1, 0, 0], [1, 0, 1, 0], [1, 1, 1, 1]], np.float64)
rc, got, text = run("triangular_solve", [a, np.array([4, 2, 4, 2], np.float64)])
tap(rc == 0 and np.allclose(got, [1.3333333333333333, -0.6666666666666665, 2.6666666666666665,
                                  -1.3333333333333333], rtol=1e-15), "triangular_solve: Nx's doctest", str(got))


def refused(desc, op, ins, attrs, needle):
    rc, _, text = run(op, ins, attrs)
    tap(rc != 0 and needle in text, desc, "rc %d, want '%s' in: %s" % (rc, needle, text))


f = np.float32
refused("cholesky of a non-square matrix names a", "cholesky", [np.ones((2, 3), f)], None, "a [2,3]")
refused("cholesky of a vector names a", "cholesky", [np.ones(3, f)], None, "a [3]")
refused("triangular_solve: b of the wrong size named", "triangular_solve", [np.eye(3, dtype=f), np.ones(4, f)],
        None, "b [4]")
refused("triangular_solve: right side needs [m, n]", "triangular_solve",
        [np.eye(3, dtype=f), np.ones((3, 2), f)], {"left_side": False}, "b [3,2]")
refused("triangular_solve: batch axes must match", "triangular_solve",
        [np.ones((2, 3, 3), f), np.ones((3, 3), f)], None, "b [3,3]")
refused("triangular_solve: bad transform_a named", "triangular_solve", [np.eye(2, dtype=f), np.ones(2, f)],
        {"transform_a": "conjugate"}, '"transform_a"')
refused("triangular_solve: lower must be a bool", "triangular_solve", [np.eye(2, dtype=f), np.ones(2, f)],
        {"lower": 1}, '"lower"')
refused("triangular_solve: mixed dtypes", "triangular_solve", [np.eye(2, dtype=f), np.ones(2, np.float64)],
        None, "as_type")
refused("cholesky: integers refused", "cholesky", [np.eye(2, dtype=np.int32)], None, "i32")

shutil.rmtree(TMP, ignore_errors=True)
sys.exit(done())
