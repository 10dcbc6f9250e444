#!/usr/bin/python3
"""test_skinny.py - matrix-vector and skinny products (dot_skinny.comp,
issue 30): shapes with m or n up to 16, batched too, K not a multiple of the
workgroup, K = 0 and 1, the split-K form of the m-skinny kernel, NaN and
infinities; each checked against numpy (f64 products of the f32/f64 inputs,
summed exactly enough) under dot's bound n * eps * sum|a*b| per output, and
by --check against the CPU reference.  NXVK_KERNEL_STATS=1 names the
kernels built, which tells that the skinny kernel (and not a tiled one) ran
where it should, and not under the named variants.  TAP."""
import os
import shutil
import subprocess
import sys
import tempfile

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
NXVK = os.environ.get("NXVK") or os.path.join(ROOT, "nxvk")
TMP = tempfile.mkdtemp(prefix="nxvk_skinny_")
rng = np.random.default_rng(30)
n = [0, 0]


def tap(ok, desc, diag=None):
    n[0] += 1
    n[1] += 0 if ok else 1
    print("%s %d - %s" % ("ok" if ok else "not ok", n[0], desc))
    if diag and not ok:
        for line in str(diag).splitlines():
            print("#   " + line)


def run(a, b, variant=None, check=False):
    pa, pb, out = (os.path.join(TMP, f) for f in ("a.npy", "b.npy", "o.npy"))
    np.save(pa, a)
    np.save(pb, b)
    cmd = [NXVK, "run", "--op", "dot", pa, pb, "-o", out]
    if variant:
        cmd[4:4] = ["--attrs", '{"variant":"%s"}' % variant]
    if check:
        cmd.append("--check")
    env = dict(os.environ, NXVK_KERNEL_STATS="1")
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=600, env=env)
    text = p.stdout.decode(errors="replace") + p.stderr.decode(errors="replace")
    got = np.load(out) if p.returncode == 0 else None
    return p.returncode, got, text


def judge(a, b, got):
    """max error over dot's bound; NaN/inf positions must match exactly"""
    a64, b64 = a.astype(np.float64), b.astype(np.float64)
    with np.errstate(all="ignore"):
        want = np.matmul(a64, b64)
        mag = np.matmul(np.abs(a64), np.abs(b64))
    eps = np.finfo(a.dtype).eps
    K = a.shape[-1]
    bound = max(K, 1) * eps * mag + np.finfo(a.dtype).tiny
    fin = np.isfinite(want)
    if got is None or got.shape != want.shape or got.dtype != a.dtype:
        return False, "shape/dtype %s" % (None if got is None else (got.shape, got.dtype))
    if not np.array_equal(np.isnan(got), np.isnan(want)) or \
            not np.array_equal(got[~fin & ~np.isnan(want)], want[~fin & ~np.isnan(want)]):
        return False, "non-finite results differ"
    err = np.abs(got[fin].astype(np.float64) - want[fin])
    over = err > bound[fin]
    if over.any():
        return False, "%d of %d over the bound (max err %g)" % (over.sum(), over.size, err.max())
    return True, "max err %g" % (err.max() if err.size else 0)


def case(desc, ashape, bshape, dt=np.float32, kernel=None, variant=None, check=False, special=False):
    a = rng.standard_normal(ashape).astype(dt)
    b = rng.standard_normal(bshape).astype(dt)
    if special:
        a.flat[1] = np.nan
        b.flat[0] = np.inf
    rc, got, text = run(a, b, variant, check)
    if rc != 0:
        tap(False, desc, text)
        return
    ok, why = judge(a, b, got)
    tap(ok, "%s: against numpy (%s)" % (desc, why), why)
    if check:
        tap(": ok" in text, "%s: --check against the CPU reference" % desc, text)
    if kernel:
        tap(kernel in text, "%s: ran %s" % (desc, kernel), text)
    else:
        tap("dot_skinny" not in text, "%s: no skinny kernel" % desc, text)


case("4096x4096 . 4096x1 (matrix-vector)", (4096, 4096), (4096, 1), kernel="dot_skinny_n_f32", check=True)
case("1x4096 . 4096x4096 (vector-matrix, split K)", (1, 4096), (4096, 4096), kernel="dot_skinny_m_f32")
case("1000x3000 . 3000x16", (1000, 3000), (3000, 16), kernel="dot_skinny_n_f32", check=True)
case("16x2500 . 2500x700 (m = 16)", (16, 2500), (2500, 700), kernel="dot_skinny_m_f32", check=True)
case("300x257 . 257x3 (K not a multiple of the workgroup)", (300, 257), (257, 3), kernel="dot_skinny_n_f32")
case("5x1000 . 1000x100 (3 chunks of k)", (5, 1000), (1000, 100), kernel="dot_skinny_m_f32", check=True)
case("3x700 . 700x5 (both skinny)", (3, 700), (700, 5), kernel="dot_skinny_m_f32", check=True)
case("7x1 . 1x9 (K = 1)", (7, 1), (1, 9), kernel="dot_skinny")
case("40x1 . 1x2 (K = 1, rows)", (40, 1), (1, 2), kernel="dot_skinny_n_f32")
case("6x0 . 0x20 (K = 0: zeros)", (6, 0), (0, 20), kernel="dot_skinny_m_f32")
case("50x0 . 0x4 (K = 0, rows)", (50, 0), (0, 4), kernel="dot_skinny_n_f32")
case("batched 3x200x513 . 3x513x2", (3, 200, 513), (3, 513, 2), kernel="dot_skinny_n_f32", check=True)
case("batched 2x4x1500 . 2x1500x300 (split K)", (2, 4, 1500), (2, 1500, 300), kernel="dot_skinny_m_f32",
     check=True)
case("f64 500x900 . 900x7", (500, 900), (900, 7), dt=np.float64, kernel="dot_skinny_n_f64", check=True)
case("f64 2x1200 . 1200x130", (2, 1200), (1200, 130), dt=np.float64, kernel="dot_skinny_m_f64", check=True)
case("NaN and inf, rows", (64, 300), (300, 4), kernel="dot_skinny_n_f32", special=True)
case("NaN and inf, columns", (4, 300), (300, 64), kernel="dot_skinny_m_f32", special=True)
case("variant skinny names it", (100, 64), (64, 1), variant="skinny", kernel="dot_skinny_n_f32")
case("variant skinny on a wide product runs the tiled kernel", (40, 30), (30, 50), variant="skinny")
case("variant naive keeps its kernel on a skinny shape", (100, 64), (64, 1), variant="naive",
     kernel="dot_naive_f32")
case("a wide product keeps the tiled kernel", (40, 30), (30, 50))

print("1..%d" % n[0])
shutil.rmtree(TMP, ignore_errors=True)
sys.exit(1 if n[1] else 0)
