#!/usr/bin/python3
"""test_skinny.py - matrix-vector and skinny products (dot_mv.comp for f32
f16 bf16, dot_skinny.comp for f64 and under NXVK_DOT_MV=off; issue 30):
shapes with m or n up to 16, batched too, K not a multiple of the
workgroup or of a 16-byte vector, K = 0 and 1, split K, NaN and
infinities, forced layouts (NXVK_DOT_MV=R,WG,U,S); each checked against
numpy (f64 products of the inputs, summed exactly enough) under dot's bound
n * eps * sum|a*b| per output (f16 / bf16: f32 sums, eps of f32, plus the
one rounding to the result's dtype), and by --check against the CPU
reference.  NXVK_KERNEL_STATS=1 names the kernels built, which tells that
the skinny kernel (and not a tiled one) ran where it should, and not under
the named variants.  TAP."""
import json
import os
import re
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import nphelp  # noqa: E402
from math_oracles import dot_bound  # noqa: E402
from nphelp import bf16_bits, bf16_f32, check as tap, save_v2  # noqa: E402

TMP = nphelp.scratch("skinny")
rng = np.random.default_rng(30)


def save(path, a, bf16):
    """bf16 (uint16 bits) as '<V2', the way np.save writes ml_dtypes' bfloat16"""
    if bf16:
        save_v2(path, a)
    else:
        np.save(path, a)


def run(a, b, variant=None, check=False, bf16=False, attrs=None, env=None):
    pa, pb, out = (os.path.join(TMP, f) for f in ("a.npy", "b.npy", "o.npy"))
    save(pa, a, bf16)
    save(pb, b, bf16)
    at = dict(attrs or {})
    if variant:
        at["variant"] = variant
    rc, got, text = nphelp.run_dot(pa, pb, out, at, check, env=dict({"NXVK_KERNEL_STATS": "1"}, **(env or {})))
    if got is not None and got.dtype.kind == "V":
        got = got.view("<u2").astype(np.uint16)
    return rc, got, text


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


MV = {"NXVK_DOT_MV": "0,0,0,0"}


def ran(kernel, text, env=None):
    """the kernel built: dot_mv_<form>_<dt> is the specialization-constant
    form's name (NXVK_DOT_MV_CT=0), dot_mvk_<form>_n<NB>r<R>u<U>d<D>[p1]_<dt>
    the compile-time form's (the default); dot_mvc_<dt> stands for
    dot_mvc.comp's layouts, dot_mvc[32]_n<NB>w<W>u<U>p<P>[a]_<dt> (the
    columns form's default; NXVK_DOT_MVC=off: dot_mv's); the rows form's
    B tiles of T sub-tiles (NXVK_DOT_MV's 7th field) add t<T>[b2][c<C>][h2]
    after [p1];
    "re:PATTERN" names the kernel by a regular expression"""
    if kernel.startswith("re:"):
        return re.search(kernel[3:] + r"\b", text) is not None
    m = re.match(r"dot_mvcm_(f16|bf16)$", kernel)
    if m:  # e: the emulation, k: f16 as a KHR kernel
        return re.search(r"dot_mvcm(32)?_f16x\d+x\d+c\d+p\d+l\d[ek]?_%s\b" % m.group(1), text) is not None
    m = re.match(r"dot_mvcmt(\d+)?_(f16|bf16)$", kernel)
    if m:  # its transposed form (C^T = B^T A^T), dot_mvcm[32]_t<FN>x<m>x<FK>...; dot_mvcmt<m>_<dt>: with m columns
        return re.search(r"dot_mvcm(32)?_t\d+x%sx\d+c\d+p\d+l\d[ek]?_%s\b" % (m.group(1) or r"\d+", m.group(2)),
                         text) is not None
    m = re.match(r"dot_mvc(32)?_(f32|f16|bf16)$", kernel)
    if m:
        return re.search(r"dot_mvc%s_n\d+w\d+u\d+p\d+a?_%s\b" % (m.group(1) or "", m.group(2)), text) is not None
    m = re.match(r"dot_mv_(rows|cols)(32)?_(f32|f16|bf16)$", kernel)
    if not m:
        return kernel in text
    ct = r"dot_mvk_%s%s_n\d+r\d+u\d+d\d+(p1)?(t\d(b2)?(c[24])?(h2)?)?_%s\b" % (m.group(1), m.group(2) or "", m.group(3))
    if dict(os.environ, **(env or {})).get("NXVK_DOT_MV_CT") == "0":
        return re.search(re.escape(kernel) + r"\b", text) is not None
    return re.search(ct, text) is not None


def specials(a, b, how):
    """True: a NaN in A's row 0 and an infinity in B's row 0 (every result
    non-finite for n = 1 or m = 1); "sparse": a NaN and an infinity in two of
    A's rows (the infinity in the last k, past the whole vectors) and two of
    B's columns, the other results finite; "next": a NaN and an infinity in
    the first rows of B's batches after the first (batch 0's results finite:
    its last tile's rows past K, the next batch's first, must add nothing)"""
    if how is True:
        a.flat[1] = np.nan
        b.flat[0] = np.inf
    elif how == "next":
        b[1:, 7, 9 % b.shape[-1]] = np.nan
        b[1:, 0, 2 % b.shape[-1]] = np.inf
    elif how == "sparse":
        if a.shape[-2] > 2:
            a[..., 2, 3] = np.nan
            a[..., 1, -1] = np.inf
        if b.shape[-1] > 10:
            b[..., 7, 9] = np.nan
            b[..., -1, 3] = -np.inf


def mvc_env(kernel, env):
    """dot_mvc runs where NXVK_DOT_MVC names a layout, and by default for f32
    m <= 4 and 16-bit m = 1: cases that expect it and name no environment
    (env None) set NXVK_DOT_MVC=0,0,0,0, so they test it whatever the rule;
    env={} tests the rule"""
    if kernel and kernel.startswith("dot_mvc") and env is None:
        return {"NXVK_DOT_MVC": "0,0,0,0"}
    return env


def case(desc, ashape, bshape, dt=np.float32, kernel=None, variant=None, check=False, special=False, env=None):
    a = rng.standard_normal(ashape).astype(dt)
    b = rng.standard_normal(bshape).astype(dt)
    specials(a, b, special)
    env = mvc_env(kernel, env)
    if env is None and kernel and kernel.startswith("dot_mv") and dt == np.float32:
        env = MV  # f32 takes dot_mv where NXVK_DOT_MV is set (its rule keeps dot_skinny.comp)
    _, got, text = run(a, b, variant, check, env=env)
    if got is None:
        tap(False, desc, text)
        return
    ok, why = judge(a, b, got)
    tap(ok, "%s: against numpy (%s)" % (desc, why), why)
    if check:
        tap(": ok" in text, "%s: --check against the CPU reference" % desc, text)
    if kernel:
        tap(ran(kernel, text, env), "%s: ran %s" % (desc, kernel), text)
    else:
        tap("dot_skinny" not in text and "dot_mv" not in text, "%s: no skinny kernel" % desc, text)


def bf16_f64(bits):
    return bf16_f32(bits).astype(np.float64)


def half_case(desc, ashape, bshape, dt, kernel, out32=False, special=False, env=None, check=False):
    bf = dt == "bf16"
    a32 = rng.standard_normal(ashape).astype(np.float32)
    b32 = rng.standard_normal(bshape).astype(np.float32)
    specials(a32, b32, special)
    a, b = (bf16_bits(x) if bf else x.astype(np.float16) for x in (a32, b32))
    a64, b64 = (bf16_f64(x) if bf else x.astype(np.float64) for x in (a, b))
    env = mvc_env(kernel, env)
    _, got, text = run(a, b, None, check, bf16=bf, attrs={"dtype": "f32"} if out32 else None, env=env)
    if got is None:
        tap(False, desc, text)
        return
    want_dt = np.float32 if out32 else (np.uint16 if bf else np.float16)
    if got.dtype != want_dt:
        tap(False, "%s: result dtype %s" % (desc, got.dtype), text)
        return
    g = bf16_f64(got) if (bf and not out32) else got.astype(np.float64)
    want, bound = dot_bound(a64, b64, "f32" if out32 else dt)
    if not nphelp.within_bound(desc, g, want, bound, text):
        return
    if check:
        tap(": ok" in text, "%s: --check against the CPU reference" % desc, text)
    tap(ran(kernel, text, env), "%s: ran %s" % (desc, kernel), text)


def fold_case(desc, ashape, bshape, dt, kernel, fold_env, pass_env, out32=False):
    """split K's chunks summed by each block's last workgroup (fold_env: the
    fold, mvfold.glsl) against the second pass (pass_env): each within dot's
    bound of numpy, the two results bit-identical (the same sums in the same
    order), and the fold set in the first run's kernel (NXVK_KERNEL_STATS
    prints its specialization constants, the fold's the fourth) and not in
    the second's"""
    bf = dt == "bf16"
    a32 = rng.standard_normal(ashape).astype(np.float32)
    b32 = rng.standard_normal(bshape).astype(np.float32)
    specials(a32, b32, "sparse")
    a, b = (bf16_bits(x) if bf else (x.astype(np.float16) if dt == "f16" else x) for x in (a32, b32))
    a64, b64 = (bf16_f64(x) if bf else x.astype(np.float64) for x in (a, b))
    attrs = {"dtype": "f32"} if out32 else None
    runs = []
    for env in (fold_env, pass_env):
        _, got, text = run(a, b, None, False, bf16=bf, attrs=attrs, env=env)
        if got is None:
            tap(False, desc, text)
            return
        g = bf16_f64(got) if (bf and not out32) else got.astype(np.float64)
        want, bound = dot_bound(a64, b64, "f32" if (out32 or dt == "f32") else dt)
        if not nphelp.within_bound("%s (%s)" % (desc, "fold" if env is fold_env else "second pass"), g, want, bound,
                                   text):
            return
        runs.append((got, text))
    (g1, t1), (g2, t2) = runs
    tap(g1.tobytes() == g2.tobytes(), "%s: the fold's results are the second pass's, bit for bit" % desc,
        "%d of %d differ" % (int((g1.view(np.uint8) != g2.view(np.uint8)).sum()), g1.nbytes))
    spec = r"%s\S*_%s \[\d+,\d+,1,%%d[\],]" % (kernel, dt)
    tap(re.search(spec % 1, t1) is not None and re.search(spec % 0, t2) is not None,
        "%s: ran %s with the fold, then without" % (desc, kernel), t1 + t2)


def counts_case(desc, dt, env, update_env):
    """the fold's counts are the recording's and the kernel leaves them zero
    (nxvk_rec_counts): three of the same split product in one graph (one
    recording, a buffer of counts each) agree bit for bit with each other,
    with numpy's bound and with the counts zeroed by an update (F 3); then
    conformance's dot, hundreds of products through the same pooled
    recordings in one process, with the split forced"""
    bf = dt == "bf16"
    a32 = rng.standard_normal((16, 2048)).astype(np.float32)
    b32 = rng.standard_normal((2048, 520)).astype(np.float32)
    a, b = (bf16_bits(x) if bf else (x.astype(np.float16) if dt == "f16" else x) for x in (a32, b32))
    a64, b64 = (bf16_f64(x) if bf else x.astype(np.float64) for x in (a, b))
    outs = []
    for e in (env, update_env):
        rc, err, paths = nphelp.run_cases(TMP, "counts", [("dot", [("bf16" if bf else None, a), ("bf16" if bf else None, b)],
                                                           None)] * 3, env=e)
        if rc != 0 or None in paths:
            tap(False, "%s: the graph ran" % desc, err)
            return
        outs.append([nphelp.load(q) for q in paths])
    want, bound = dot_bound(a64, b64, dt)
    firsts = outs[0]
    g = firsts[0].astype(np.float64)
    if not nphelp.within_bound(desc, g, want, bound, ""):
        return
    same = all(o.tobytes() == firsts[0].tobytes() for o in firsts[1:] + outs[1])
    tap(same, "%s: three products in one recording and the updated counts' three agree bit for bit" % desc)
    rc, out, err = nphelp.nxvk(["conformance", "--quick", "--op", "dot", "--dtype", dt], env=env, timeout=900)
    tail = (out.strip().splitlines() or [""])[-1]
    tap(rc == 0 and re.search(r" 0 failed", tail) is not None and not tail.startswith("0 passed"),
        "%s: conformance --quick --op dot in one process: %s" % (desc, tail), out[-2000:] + err[-2000:])


def has_coopmat():
    _, out, _ = nphelp.nxvk(["info", "--json"], timeout=120)
    try:
        d = json.loads(out)
        d = d["devices"][0] if isinstance(d, dict) and "devices" in d else (d[0] if isinstance(d, list) else d)
        return bool(d.get("features", {}).get("coopmat_f16_f32"))
    except (ValueError, KeyError, IndexError, AttributeError):
        return False


def main():
    case("4096x4096 . 4096x1 (matrix-vector)", (4096, 4096), (4096, 1), kernel="dot_mv_rows_f32", check=True)
    case("1x4096 . 4096x4096 (vector-matrix, split K)", (1, 4096), (4096, 4096), kernel="dot_mvc_f32")
    case("1000x3000 . 3000x16", (1000, 3000), (3000, 16), kernel="dot_mv_rows_f32", check=True)
    case("16x2500 . 2500x700 (m = 16)", (16, 2500), (2500, 700), kernel="dot_mvc_f32", check=True)
    case("300x257 . 257x3 (K not a multiple of the workgroup)", (300, 257), (257, 3), kernel="dot_mv_rows_f32")
    case("5x1000 . 1000x100 (3 chunks of k)", (5, 1000), (1000, 100), kernel="dot_mvc_f32", check=True)
    case("3x700 . 700x5 (both skinny)", (3, 700), (700, 5), kernel="dot_mvc_f32", check=True)
    case("7x1 . 1x9 (K = 1)", (7, 1), (1, 9), kernel="dot_mvc_f32")
    case("40x1 . 1x2 (K = 1, rows)", (40, 1), (1, 2), kernel="dot_mv_rows_f32")
    case("6x0 . 0x20 (K = 0: zeros)", (6, 0), (0, 20), kernel="dot_mvc_f32")
    case("50x0 . 0x4 (K = 0, rows)", (50, 0), (0, 4), kernel="dot_mv_rows_f32")
    case("batched 3x200x513 . 3x513x2", (3, 200, 513), (3, 513, 2), kernel="dot_mv_rows_f32", check=True)
    case("batched 2x4x1500 . 2x1500x300 (split K)", (2, 4, 1500), (2, 1500, 300), kernel="dot_mvc_f32",
         check=True)
    case("f64 500x900 . 900x7", (500, 900), (900, 7), dt=np.float64, kernel="dot_skinny_n_f64", check=True)
    case("f64 2x1200 . 1200x130", (2, 1200), (1200, 130), dt=np.float64, kernel="dot_skinny_m_f64", check=True)
    case("NaN and inf, rows", (64, 300), (300, 4), kernel="dot_mv_rows_f32", special=True)
    case("NaN and inf, columns", (4, 300), (300, 64), kernel="dot_mvc_f32", special=True)
    case("variant skinny names it", (100, 64), (64, 1), variant="skinny", kernel="dot_mv_rows_f32")
    case("variant skinny on a wide product runs the tiled kernel", (40, 30), (30, 50), variant="skinny")
    case("variant naive keeps its kernel on a skinny shape", (100, 64), (64, 1), variant="naive",
         kernel="dot_naive_f32")
    case("a wide product keeps the tiled kernel", (40, 30), (30, 50))

    # f32 forced layouts (NXVK_DOT_MV=R,WG,U,S): every rows-per-subgroup, odd
    # splits, small and large workgroups; then the old kernel (NXVK_DOT_MV=off)
    case("R=8 U=1 WG=64 S=3, rows", (333, 1000), (1000, 13), kernel="dot_mv_rows_f32", env={"NXVK_DOT_MV": "8,64,1,3"})
    case("R=2 U=3 WG=512, rows (K odd)", (70, 999), (999, 2), kernel="dot_mv_rows_f32", env={"NXVK_DOT_MV": "2,512,3,0"})
    case("WG=64 U=1 S=5, columns", (9, 1100), (1100, 130), kernel="dot_mv_cols_f32", env={"NXVK_DOT_MV": "0,64,1,5", "NXVK_DOT_MVC": "off"})
    case("U=8 S=1, columns (N odd)", (2, 700), (700, 301), kernel="dot_mv_cols_f32", env={"NXVK_DOT_MV": "0,0,8,1", "NXVK_DOT_MVC": "off"})
    case("D=2: the vector through shared memory", (300, 1000), (1000, 1), kernel="dot_mv_rows_f32",
         env={"NXVK_DOT_MV": "0,0,0,0,2"})
    case("D=1 R=2 U=1 S=3: the vector from memory (K odd)", (70, 999), (999, 1), kernel="dot_mv_rows_f32",
         env={"NXVK_DOT_MV": "2,64,1,3,1"})
    # f32's defaults: the compiled dot_mv for n <= 16 and 8 <= m <= 16, dot_skinny.comp for m < 8 (and
    # for every n > 1 and m under NXVK_DOT_MV_CT=0)
    case("f32 by default: 1000x3000 . 3000x16 on dot_mvb (B in registers, tests/ops/test_mvb.py)", (1000, 3000),
         (3000, 16), kernel=r"re:dot_mvb_n16g\d+r\d+u\d+w\d+s\d+_f32", env={}, check=True)
    case("f32 by default: 1000x3001 . 3001x16 (K odd) on dot_mv", (1000, 3001), (3001, 16), kernel="dot_mv_rows_f32",
         env={}, check=True)
    case("f32 by default: 300x1000 . 1000x1 on dot_mv", (300, 1000), (1000, 1), kernel="dot_mv_rows_f32", env={})
    case("f32 by default: 16x2500 . 2500x700 on dot_mvc", (16, 2500), (2500, 700), kernel="dot_mvc_f32", env={},
         check=True)
    case("f32 by default: 1x2500 . 2500x700 on dot_mvc", (1, 2500), (2500, 700), kernel="dot_mvc_f32", env={})
    case("f32 by default: 4x2500 . 2500x700 on dot_mvc", (4, 2500), (2500, 700), kernel="dot_mvc_f32", env={},
         check=True)
    case("f32 by default: 5x2500 . 2500x700 on dot_mvc", (5, 2500), (2500, 700), kernel="dot_mvc_f32", env={})
    case("f32 NXVK_DOT_MVC=off: 4x2500 . 2500x700 on dot_skinny", (4, 2500), (2500, 700), kernel="dot_skinny_m_f32",
         env={"NXVK_DOT_MVC": "off"})
    case("f32 NXVK_DOT_MV_CT=0: 1000x3000 . 3000x16 on dot_skinny", (1000, 3000), (3000, 16), kernel="dot_skinny_n_f32",
         env={"NXVK_DOT_MV_CT": "0", "NXVK_DOT_MVB": "off"})
    case("f32 NXVK_DOT_MV_CT=0: 16x2500 . 2500x700 on dot_skinny", (16, 2500), (2500, 700), kernel="dot_skinny_m_f32",
         env={"NXVK_DOT_MV_CT": "0", "NXVK_DOT_MVC": "off"})
    OFF = {"NXVK_DOT_MV": "off"}
    case("off: 1000x3000 . 3000x16 on dot_skinny", (1000, 3000), (3000, 16), kernel="dot_skinny_n_f32", env=OFF)
    case("off: 16x2500 . 2500x700 on dot_skinny", (16, 2500), (2500, 700), kernel="dot_skinny_m_f32", env=OFF)
    case("off: batched 2x4x1500 . 2x1500x300 (split K)", (2, 4, 1500), (2, 1500, 300), kernel="dot_skinny_m_f32",
         env=OFF)


    # ---- f16 and bf16: 16-bit inputs read as they are, f32 sums, one rounding
    # (NXVK_DOT_MVR=off: f16 with n <= 4 takes dot_mvr.comp by default, tests/ops/test_mvr.py)
    for dt in ("f16", "bf16"):
        half_case("%s 300x1000 . 1000x1 (matrix-vector)" % dt, (300, 1000), (1000, 1), dt, "dot_mv_rows_" + dt,
                  check=True)
        half_case("%s 513x257 . 257x16 (K not whole vectors)" % dt, (513, 257), (257, 16), dt, "dot_mv_rows_" + dt)
        half_case("%s 16x700 . 700x300 (m = 16)" % dt, (16, 700), (700, 300), dt, "dot_mvc_" + dt, check=True)
        half_case("%s 1x2048 . 2048x520 (split K)" % dt, (1, 2048), (2048, 520), dt, "dot_mvc_" + dt)
        half_case("%s 3x600 . 600x77 (N odd)" % dt, (3, 600), (600, 77), dt, "dot_mvc_" + dt)
        half_case("%s batched 2x100x800 . 2x800x3" % dt, (2, 100, 800), (2, 800, 3), dt, "dot_mv_rows_" + dt, env={"NXVK_DOT_MVR": "off"})
        half_case("%s 20x0 . 0x5 (K = 0)" % dt, (20, 0), (0, 5), dt, "dot_mv_rows_" + dt)
        half_case("%s NaN and inf, rows" % dt, (64, 300), (300, 4), dt, "dot_mv_rows_" + dt, special=True, env={"NXVK_DOT_MVR": "off"})
        half_case("%s NaN and inf, columns" % dt, (4, 300), (300, 64), dt, "dot_mvc_" + dt, special=True)
        half_case("%s dtype f32 result, rows" % dt, (200, 640), (640, 2), dt, "dot_mv_rows32_" + dt, out32=True, env={"NXVK_DOT_MVR": "off"})
        half_case("%s dtype f32 result, columns (split K)" % dt, (5, 3000), (3000, 90), dt, "dot_mvc32_" + dt,
                  out32=True)
        half_case("%s R=8 U=1 WG=64 S=3" % dt, (333, 1000), (1000, 13), dt, "dot_mv_rows_" + dt,
                  env={"NXVK_DOT_MV": "8,64,1,3"})
        half_case("%s WG=64 U=2 S=4, columns" % dt, (9, 1100), (1100, 130), dt, "dot_mv_cols_" + dt,
                  env={"NXVK_DOT_MV": "0,64,2,4", "NXVK_DOT_MVC": "off"})
    # the compile-time layouts (dot_mvk_*) on odd shapes: k not whole vectors nor
    # whole tiles, odd n, both m = 1 and n = 1 tiles (D = 3: the vector's
    # tile packed), 16 rows or columns of sums a lane; and the
    # specialization-constant form (NXVK_DOT_MV_CT=0) kept for A/B
    for dt in ("f16", "bf16"):
        half_case("%s 777x1001 . 1001x1 (n = 1, K odd)" % dt, (777, 1001), (1001, 1), dt, "dot_mv_rows_" + dt)
        half_case("%s 1x1001 . 1001x777 (m = 1, K and N odd)" % dt, (1, 1001), (1001, 777), dt, "dot_mvc_" + dt)
        half_case("%s 16x1001 . 1001x333 (m = 16, odd)" % dt, (16, 1001), (1001, 333), dt, "dot_mvc_" + dt)
        half_case("%s NaN and inf, n = 1" % dt, (200, 3001), (3001, 1), dt, "dot_mv_rows_" + dt, special="sparse")
        half_case("%s NaN and inf, m = 1" % dt, (1, 3001), (3001, 200), dt, "dot_mvc_" + dt, special="sparse")
        half_case("%s NaN and inf, n = 16" % dt, (300, 999), (999, 16), dt, "dot_mv_rows_" + dt, special="sparse")
        half_case("%s NaN and inf, m = 16" % dt, (16, 999), (999, 300), dt, "dot_mvc_" + dt, special="sparse")
    half_case("f16 batched 3x100x1001 . 3x1001x8 (B's tile in 16-byte vectors, K odd)", (3, 100, 1001), (3, 1001, 8),
              "f16", "dot_mv_rows_f16")
    half_case("f16 R=4 U=3 WG=64 S=3, n = 16 (K odd)", (300, 999), (999, 16), "f16", "dot_mv_rows_f16",
              env={"NXVK_DOT_MV": "4,64,3,3"})
    case("f32 batched 2x90x777 . 2x777x12 (B's tile in vectors)", (2, 90, 777), (2, 777, 12), kernel="dot_mv_rows_f32")
    half_case("f16 P=1 (A's next tile prefetched) D=3 U=2 S=3, K odd", (777, 1001), (1001, 1), "f16", "dot_mv_rows_f16",
              env={"NXVK_DOT_MV": "0,0,2,3,3,1"})
    half_case("bf16 P=1 R=4 U=1 S=2, n = 16, K odd", (100, 1001), (1001, 16), "bf16", "dot_mv_rows_bf16",
              env={"NXVK_DOT_MV": "4,0,1,2,0,1"}, special="sparse")
    half_case("f16 n = 16 on one k tile (the direct form, S = 1)", (40, 200), (200, 16), "f16", "dot_mv_rows_f16")
    half_case("bf16 m = 9, 16-bit results through the partials", (9, 3000), (3000, 50), "bf16", "dot_mvc_bf16")
    half_case("f16 D=1 (the vector from memory), K odd", (70, 999), (999, 1), "f16", "dot_mv_rows_f16",
              env={"NXVK_DOT_MV": "2,64,1,3,1"})
    half_case("f16 specialization-constant form, n = 1", (300, 1001), (1001, 1), "f16", "dot_mv_rows_f16",
              env={"NXVK_DOT_MV_CT": "0"})
    half_case("bf16 specialization-constant form, m = 16", (16, 700), (700, 300), "bf16", "dot_mv_cols_bf16",
              env={"NXVK_DOT_MV_CT": "0", "NXVK_DOT_MVC": "off"}, check=True)
    case("f32 1x1001 . 1001x777 (m = 1, K and N odd)", (1, 1001), (1001, 777), kernel="dot_mvc_f32")
    case("f32 777x1001 . 1001x1 (D = 3, K odd)", (777, 1001), (1001, 1), kernel="dot_mv_rows_f32", check=True)
    case("f32 NaN and inf, n = 16", (300, 999), (999, 16), kernel="dot_mv_rows_f32", special="sparse")
    case("f32 NaN and inf, m = 1", (1, 999), (999, 300), kernel="dot_mvc_f32", special="sparse")
    case("f32 specialization-constant form, n = 1", (300, 1001), (1001, 1), kernel="dot_mv_rows_f32",
         env={"NXVK_DOT_MV_CT": "0"})
    half_case("bf16 D=2: the vector through shared memory", (300, 1000), (1000, 1), "bf16", "dot_mv_rows_bf16",
              env={"NXVK_DOT_MV": "0,0,0,0,2"})
    half_case("f16 integer conversions (NXVK_F16_CVT=sw), rows", (100, 520), (520, 5), "f16", "dot_mv_rows_f16",
              env={"NXVK_F16_CVT": "sw"})
    half_case("f16 integer conversions (NXVK_F16_CVT=sw), columns", (7, 520), (520, 100), "f16", "dot_mvc_f16",
              env={"NXVK_F16_CVT": "sw", "NXVK_DOT_MVC": "0,0,0,0"})

    # the rows form's B tile of T sub-tiles (NXVK_DOT_MV=R,WG,U,S,D,P,T; T > 0):
    # B's rows staged in coalesced loads into padded rows (n a multiple of
    # the 16-byte vector's values) or value by value (the others), P = 1 with
    # A's next sub-tile in flight; n = 9 to 16 and less, M not whole row
    # blocks, K not whole tiles nor vectors, one short tile, split K, batches,
    # NaN and inf, f16 / bf16 (16-bit results through the partials, f32
    # results).  The layouts named fit 48 KB of shared memory with 32-lane
    # subgroups (U T <= 5 for f32, 2 for 16-bit), so their names hold there
    # too; T = 8 is named by pattern
    case("f32 T=4 P=1 R=4 S=3, n = 16, M and K odd, NaN and inf", (333, 3001), (3001, 16),
         kernel="dot_mvk_rows_n16r4u1d0p1t4_f32", env={"NXVK_DOT_MV": "4,256,1,3,0,1,4"}, check=True, special="sparse")
    case("f32 T=2 P=0 R=2 U=2 WG=128, batched 3x100x1000 . 3x1000x12", (3, 100, 1000), (3, 1000, 12),
         kernel="dot_mvk_rows_n12r2u2d0t2_f32", env={"NXVK_DOT_MV": "2,128,2,0,0,0,2"})
    case("f32 T=3 P=1 R=4 WG=64 S=2, n = 9 (B value by value), K odd", (70, 777), (777, 9),
         kernel="dot_mvk_rows_n9r4u1d0p1t3_f32", env={"NXVK_DOT_MV": "4,64,1,2,0,1,3"}, check=True)
    case("f32 T=8 P=1 R=8 WG=64, n = 13, K = 5000", (150, 5000), (5000, 13),
         kernel=r"re:dot_mvk_rows_n13r8u1d0p1t[1-8]_f32", env={"NXVK_DOT_MV": "8,64,1,0,0,1,8"})
    case("f32 T=4 P=1, n = 16 on one short tile (K = 200: sub-tiles past K)", (90, 200), (200, 16),
         kernel="dot_mvk_rows_n16r4u1d0p1t4_f32", env={"NXVK_DOT_MV": "4,0,1,1,0,1,4"})
    case("f32 T=2 P=1 R=2 WG=64 S=4, batched 2x45x2100 . 2x2100x10", (2, 45, 2100), (2, 2100, 10),
         kernel="dot_mvk_rows_n10r2u1d0p1t2_f32", env={"NXVK_DOT_MV": "2,64,1,4,0,1,2"})
    # a NaN and an infinity in batch 1's first rows: batch 0's last tile reads them past K and must add nothing
    case("f32 T=4 P=1, batched 2x50x1000 . 2x1000x16, NaN and inf past the tile's end", (2, 50, 1000), (2, 1000, 16),
         kernel="dot_mvk_rows_n16r4u1d0p1t4_f32", env={"NXVK_DOT_MV": "4,0,1,1,0,1,4"}, special="next")
    case("f32 T=3 P=0, batched 2x50x1000 . 2x1000x11, NaN and inf past the tile's end", (2, 50, 1000), (2, 1000, 11),
         kernel="dot_mvk_rows_n11r4u1d0t3_f32", env={"NXVK_DOT_MV": "4,0,1,1,0,0,3"}, special="next")
    # B = 2: two tiles of B, the next staged before this one's products (one barrier a tile)
    case("f32 T=2 B=2 P=1 R=4 S=3, n = 16, M and K odd, NaN and inf", (333, 3001), (3001, 16),
         kernel="dot_mvk_rows_n16r4u1d0p1t2b2_f32", env={"NXVK_DOT_MV": "4,256,1,3,0,1,2,2"}, check=True,
         special="sparse")
    case("f32 T=1 B=2 P=0 R=2 WG=64, n = 9, K odd", (70, 777), (777, 9), kernel="dot_mvk_rows_n9r2u1d0t1b2_f32",
         env={"NXVK_DOT_MV": "2,64,1,0,0,0,1,2"})
    case("f32 T=2 B=2 P=1, batched 2x50x1000 . 2x1000x12, NaN and inf past the tile's end", (2, 50, 1000),
         (2, 1000, 12), kernel="dot_mvk_rows_n12r4u1d0p1t2b2_f32", env={"NXVK_DOT_MV": "4,0,1,1,0,1,2,2"},
         special="next")
    case("f32 T=2 B=2 P=1 S=4, batched 2x45x2100 . 2x2100x13", (2, 45, 2100), (2, 2100, 13),
         kernel="dot_mvk_rows_n13r4u1d0p1t2b2_f32", env={"NXVK_DOT_MV": "4,128,1,4,0,1,2,2"})
    case("f32 T=2 B=2 P=1, n = 16 on one short tile (K = 200)", (90, 200), (200, 16),
         kernel="dot_mvk_rows_n16r4u1d0p1t2b2_f32", env={"NXVK_DOT_MV": "4,0,1,1,0,1,2,2"})
    half_case("bf16 T=1 B=2 P=1 R=4, n = 16, K odd, f32 result", (300, 999), (999, 16), "bf16",
              "dot_mvk_rows32_n16r4u1d0p1t1b2_bf16", out32=True,
              env={"NXVK_DOT_MV": "4,0,1,0,0,1,1,2", "NXVK_DOT_MVR": "off"})
    case("f32 T=5 P=0 R=4 WG=512, n = 15, K = 4096 (whole tiles)", (1000, 4096), (4096, 15),
         kernel="dot_mvk_rows_n15r4u1d0t5_f32", env={"NXVK_DOT_MV": "4,512,1,0,0,0,5"})
    case("f32 T=2 P=1 R=2 U=2, n = 4", (500, 2001), (2001, 4), kernel="dot_mvk_rows_n4r2u2d0p1t2_f32",
         env={"NXVK_DOT_MV": "2,256,2,0,0,1,2"})
    case("f32 T=2 P=1 U=2 D=2, n = 1", (300, 1001), (1001, 1), kernel="dot_mvk_rows_n1r1u2d0p1t2_f32",
         env={"NXVK_DOT_MV": "1,0,2,0,2,1,2"})
    half_case("f16 T=2 P=1 R=4 WG=64, n = 16, K odd (through the partials)", (300, 999), (999, 16), "f16",
              "dot_mvk_rows_n16r4u1d0p1t2_f16", env={"NXVK_DOT_MV": "4,64,1,0,0,1,2", "NXVK_DOT_MVR": "off"}, check=True)
    half_case("bf16 T=2 P=0 R=2 S=2, n = 10 (B value by value), dtype f32 result", (200, 1500), (1500, 10), "bf16",
              "dot_mvk_rows32_n10r2u1d0t2_bf16", out32=True, env={"NXVK_DOT_MV": "2,0,1,2,0,0,2", "NXVK_DOT_MVR": "off"})
    half_case("bf16 T=1 P=1 R=4, n = 12, NaN and inf", (100, 1001), (1001, 12), "bf16",
              "dot_mvk_rows_n12r4u1d0p1t1_bf16", env={"NXVK_DOT_MV": "4,0,1,2,0,1,1", "NXVK_DOT_MVR": "off"}, special="sparse")
    half_case("f16 T=2 P=1, batched 2x40x1000 . 2x1000x16, NaN and inf past the tile's end", (2, 40, 1000),
              (2, 1000, 16), "f16", "dot_mvk_rows_n16r4u1d0p1t2_f16",
              env={"NXVK_DOT_MV": "4,0,1,0,0,1,2", "NXVK_DOT_MVR": "off"}, special="next")
    half_case("f16 T=2 P=1 R=2, batched 2x77x600 . 2x600x16", (2, 77, 600), (2, 600, 16), "f16",
              "dot_mvk_rows_n16r2u1d0p1t2_f16", env={"NXVK_DOT_MV": "2,128,1,0,0,1,2", "NXVK_DOT_MVR": "off"})

    # B's columns split per lane (with T): C = 2 or 4 subgroups of a workgroup on the same rows, each 1 / C of
    # the column quads (NXVK_DOT_MV's 9th field), H = 2 the two halves of a subgroup's lanes (10th: each half's
    # quads for its own k and its partner's, A's vectors by shuffles), both (C 2 H 2); n = 9 to 16 and 4 (a
    # part with no quads), M not whole row blocks, K not whole tiles nor vectors, split K, batches with a NaN
    # and an infinity past batch 0's end, f16 / bf16.  WG >= 128 where C = 4 (4 subgroups of 32 lanes)
    case("f32 C=2 T=1 B=2 P=1 R=4 S=3, n = 16, M and K odd, NaN and inf", (333, 3001), (3001, 16),
         kernel="dot_mvk_rows_n16r4u1d0p1t1b2c2_f32", env={"NXVK_DOT_MV": "4,256,1,3,0,1,1,2,2"}, check=True,
         special="sparse")
    case("f32 H=2 T=1 B=2 P=1 R=4 S=3, n = 16, M and K odd, NaN and inf", (333, 3001), (3001, 16),
         kernel="dot_mvk_rows_n16r4u1d0p1t1b2h2_f32", env={"NXVK_DOT_MV": "4,256,1,3,0,1,1,2,1,2"}, check=True,
         special="sparse")
    case("f32 C=4 T=2 P=1 R=4 WG=256, n = 13, K odd", (250, 2001), (2001, 13),
         kernel="dot_mvk_rows_n13r4u1d0p1t2c4_f32", env={"NXVK_DOT_MV": "4,256,1,0,0,1,2,0,4"})
    case("f32 C=2 H=2 T=2 B=2 P=1, batched 2x50x1000 . 2x1000x12, NaN and inf past the tile's end", (2, 50, 1000),
         (2, 1000, 12), kernel="dot_mvk_rows_n12r4u1d0p1t2b2c2h2_f32", env={"NXVK_DOT_MV": "4,0,1,1,0,1,2,2,2,2"},
         special="next")
    case("f32 H=2 T=4 P=1 R=3 WG=512, n = 12, M not whole row blocks", (1000, 1500), (1500, 12),
         kernel="dot_mvk_rows_n12r3u1d0p1t4h2_f32", env={"NXVK_DOT_MV": "3,512,1,0,0,1,4,0,0,2"})
    case("f32 H=2 T=1 B=2 R=2 WG=64, n = 9 (B value by value), K odd", (70, 777), (777, 9),
         kernel="dot_mvk_rows_n9r2u1d0t1b2h2_f32", env={"NXVK_DOT_MV": "2,64,1,0,0,0,1,2,1,2"})
    case("f32 C=2 T=2 P=1 R=2 S=4, batched 2x45x2100 . 2x2100x10", (2, 45, 2100), (2, 2100, 10),
         kernel="dot_mvk_rows_n10r2u1d0p1t2c2_f32", env={"NXVK_DOT_MV": "2,128,1,4,0,1,2,0,2"})
    case("f32 C=4 T=1 B=2 P=1 R=8 WG=512, batched 2x50x1000 . 2x1000x16, NaN and inf past the tile's end",
         (2, 50, 1000), (2, 1000, 16), kernel="dot_mvk_rows_n16r8u1d0p1t1b2c4_f32",
         env={"NXVK_DOT_MV": "8,512,1,1,0,1,1,2,4"}, special="next")
    case("f32 H=2 T=1 B=2 P=1 R=2 U=2, n = 15, one short tile (K = 200)", (90, 200), (200, 15),
         kernel="dot_mvk_rows_n15r2u2d0p1t1b2h2_f32", env={"NXVK_DOT_MV": "2,128,2,1,0,1,1,2,1,2"})
    case("f32 C=2 T=1 P=0 R=2, n = 4 (the second part's quads past n)", (500, 2001), (2001, 4),
         kernel="dot_mvk_rows_n4r2u1d0t1c2_f32", env={"NXVK_DOT_MV": "2,256,1,0,0,0,1,0,2"})
    half_case("bf16 H=2 T=1 B=2 P=1 R=4, n = 16, K odd, f32 result", (300, 999), (999, 16), "bf16",
              "dot_mvk_rows32_n16r4u1d0p1t1b2h2_bf16", out32=True,
              env={"NXVK_DOT_MV": "4,0,1,0,0,1,1,2,1,2", "NXVK_DOT_MVR": "off"}, special="sparse")
    half_case("f16 C=2 T=2 P=1 R=4, n = 13, K odd (through the partials)", (300, 999), (999, 13), "f16",
              "dot_mvk_rows_n13r4u1d0p1t2c2_f16", env={"NXVK_DOT_MV": "4,128,1,0,0,1,2,0,2", "NXVK_DOT_MVR": "off"},
              check=True)
    half_case("f16 C=2 H=2 T=2 P=1, batched 2x40x1000 . 2x1000x16, NaN and inf past the tile's end", (2, 40, 1000),
              (2, 1000, 16), "f16", "dot_mvk_rows_n16r4u1d0p1t2c2h2_f16",
              env={"NXVK_DOT_MV": "4,0,1,0,0,1,2,0,2,2", "NXVK_DOT_MVR": "off"}, special="next")

    half_case("f16 by default: 16x1001 . 1001x333 on dot_mvc", (16, 1001), (1001, 333), "f16", "dot_mvc_f16", env={})
    half_case("f16 by default: 1x1001 . 1001x777 on dot_mvc", (1, 1001), (1001, 777), "f16", "dot_mvc_f16", env={})
    half_case("bf16 by default: 1x3000 . 3000x520 on dot_mvc (split K)", (1, 3000), (3000, 520), "bf16", "dot_mvc_bf16",
              env={}, check=True)
    half_case("bf16 by default: 2x1001 . 1001x333 on dot_mvc", (2, 1001), (1001, 333), "bf16", "dot_mvc_bf16", env={})
    half_case("bf16 NXVK_DOT_MVC=off: 2x1001 . 1001x333 on dot_mv", (2, 1001), (1001, 333), "bf16", "dot_mv_cols_bf16",
              env={"NXVK_DOT_MVC": "off"})
    # dot_mvc.comp (the columns form, NXVK_DOT_MVC=W,U,S,WG[,P]): every load width,
    # rows in flight from 1 to 32, the next round's loads first (P = 2), odd and
    # forced splits, small and large workgroups, N not whole loads, K not whole
    # slabs, batches; and dot_mv's columns form under NXVK_DOT_MVC=off
    MVC = "NXVK_DOT_MVC"
    for dt in ("f16", "bf16"):
        half_case("%s W=1 U=1 S=3 WG=64, m = 16, N odd" % dt, (16, 1001), (1001, 333), dt, "dot_mvc_" + dt,
                  env={MVC: "1,1,3,64"})
        half_case("%s W=4 U=32 P=2, m = 5, K odd" % dt, (5, 999), (999, 520), dt, "dot_mvc_" + dt,
                  env={MVC: "4,32,0,0,2"})
        half_case("%s W=2 U=2 S=1 WG=512, batched 3x12x700 . 3x700x130" % dt, (3, 12, 700), (3, 700, 130), dt,
                  "dot_mvc_" + dt, env={MVC: "2,2,1,512"})
        half_case("%s W=4 P=2 S=5, m = 8, dtype f32 result" % dt, (8, 3001), (3001, 257), dt, "dot_mvc32_" + dt,
                  out32=True, env={MVC: "4,0,5,0,2"}, special="sparse")
        half_case("%s NXVK_DOT_MVC=off: m = 16 on dot_mv" % dt, (16, 1001), (1001, 333), dt, "dot_mv_cols_" + dt,
                  env={MVC: "off"}, check=True)
        half_case("%s NXVK_DOT_MVC=off: m = 1 on dot_mv" % dt, (1, 2048), (2048, 520), dt, "dot_mv_cols_" + dt,
                  env={MVC: "off"})
    case("f32 W=1 U=4 S=7 WG=128, m = 16, N odd", (16, 1500), (1500, 301), kernel="dot_mvc_f32", env={MVC: "1,4,7,128"},
         check=True)
    case("f32 W=2 U=16 P=2, m = 3, batched", (2, 3, 2000), (2, 2000, 67), kernel="dot_mvc_f32", env={MVC: "2,16,0,0,2"},
         special="sparse")
    case("f32 W=4 U=8 S=2 WG=32 (one subgroup), m = 2", (2, 777), (777, 1000), kernel="dot_mvc_f32",
         env={MVC: "4,8,2,32"})

    # dot_mvcm.comp (f16 m = 16 on tensor cores, NXVK_DOT_MVC_CM=FC,PF) where the
    # device has f16 cooperative matrices; elsewhere the same setting leaves the
    # product to the columns kernels
    CM = has_coopmat()
    CMK = "dot_mvcm_f16" if CM else "dot_mvc_f16"
    half_case("f16 NXVK_DOT_MVC_CM=0,0: 16x512 . 512x1024 on %s" % CMK, (16, 512), (512, 1024), "f16", CMK,
              env={"NXVK_DOT_MVC_CM": "0,0"}, check=True)
    half_case("f16 NXVK_DOT_MVC_CM=8,4, batched 2x16x1024 . 2x1024x256, NaN and inf", (2, 16, 1024), (2, 1024, 256), "f16",
              CMK, env={"NXVK_DOT_MVC_CM": "8,4"}, special="sparse")
    half_case("f16 NXVK_DOT_MVC_CM=1,2,1 (B's fragments straight from memory), batched 3x16x256 . 3x256x64", (3, 16, 256),
              (3, 256, 64), "f16", CMK, env={"NXVK_DOT_MVC_CM": "1,2,1"})
    half_case("f16 NXVK_DOT_MVC_CM=2,1 S=3, dtype f32 result", (16, 4096), (4096, 96), "f16",
              "dot_mvcm_f16" if CM else "dot_mvc32_f16", env={"NXVK_DOT_MVC_CM": "2,1", "NXVK_DOT_MVC": "0,0,3,0"},
              out32=True)
    # its emulation (E = 1: plain code, any device) checks the same k steps, staging and sums everywhere
    half_case("f16 tensor-core emulation, B staged, 16x512 . 512x1040 (the last block 1 fragment)", (16, 512), (512, 1040),
              "f16", "dot_mvcm_f16", env={"NXVK_DOT_MVC_CM": "0,0,2,1"}, check=True, special="sparse")
    half_case("f16 tensor-core emulation, B from memory, FC=2 PF=4 S=3, batched 2x16x768 . 2x768x96", (2, 16, 768),
              (2, 768, 96), "f16", "dot_mvcm_f16", env={"NXVK_DOT_MVC_CM": "2,4,1,1", "NXVK_DOT_MVC": "0,0,3,0"})
    half_case("f16 tensor-core emulation, FC=8 PF=1 staged, dtype f32 result", (16, 1024), (1024, 256), "f16",
              "dot_mvcm_f16", env={"NXVK_DOT_MVC_CM": "8,1,2,1"}, out32=True)
    # bf16 the same way (bf16 fragments, a KHR kernel on tensor cores): the emulation reads bf16 bits and rounds
    # the f32 sums once to bf16
    half_case("bf16 tensor-core emulation, B staged, 16x512 . 512x1040 (the last block 1 fragment)", (16, 512),
              (512, 1040), "bf16", "dot_mvcm_bf16", env={"NXVK_DOT_MVC_CM": "0,0,2,1"}, check=True, special="sparse")
    half_case("bf16 tensor-core emulation, B from memory, FC=2 PF=4 S=3, batched 2x16x768 . 2x768x96", (2, 16, 768),
              (2, 768, 96), "bf16", "dot_mvcm_bf16", env={"NXVK_DOT_MVC_CM": "2,4,1,1", "NXVK_DOT_MVC": "0,0,3,0"})
    half_case("bf16 tensor-core emulation, FC=8 PF=1 staged, dtype f32 result", (16, 1024), (1024, 256), "bf16",
              "dot_mvcm_bf16", env={"NXVK_DOT_MVC_CM": "8,1,2,1"}, out32=True)
    half_case("bf16 tensor-core emulation, FC=4 PF=2 staged, split K (S=4)", (16, 2048), (2048, 128), "bf16",
              "dot_mvcm_bf16", env={"NXVK_DOT_MVC_CM": "4,2,2,1", "NXVK_DOT_MVC": "0,0,4,0"})
    half_case("bf16 NXVK_DOT_MVC_CM=0,0,2,1, N not whole fragments: the columns kernels", (16, 512), (512, 1000), "bf16",
              "dot_mvc_bf16", env={"NXVK_DOT_MVC_CM": "0,0,2,1"})
    half_case("bf16 NXVK_DOT_MVC_CM=off: 16x512 . 512x1024 on dot_mvc", (16, 512), (512, 1024), "bf16", "dot_mvc_bf16",
              env={"NXVK_DOT_MVC_CM": "off"})
    half_case("f16 NXVK_DOT_MVC_CM=0,0, N not whole fragments: the columns kernels", (16, 512), (512, 1000), "f16",
              "dot_mvc_f16", env={"NXVK_DOT_MVC_CM": "0,0"})
    half_case("f16 by default: 16x512 . 512x1024 on %s" % CMK, (16, 512), (512, 1024), "f16", CMK, env={})
    half_case("f16 NXVK_DOT_MVC_CM=off: 16x512 . 512x1024 on dot_mvc", (16, 512), (512, 1024), "f16", "dot_mvc_f16",
              env={"NXVK_DOT_MVC_CM": "off"})
    # m = 8 on tensor cores as the transpose C^T = B^T A^T (NXVK_DOT_MVC_CM's T: 0 the rule's, transposed for m = 8;
    # 2 forces it, also for m = 16; 1 the plain form, m = 16 only): B^T's fragments loaded column-major from B's
    # staged tile (LD 2) or from B (LD 1), A^T's column-major from A, the accumulators stored column-major; the
    # emulation (E = 1) makes the same loads and stores, so a transposition broken there fails these
    CMT = "dot_mvcmt8_f16" if CM else "dot_mvc_f16"
    half_case("f16 m = 8 by default on %s" % CMT, (8, 512), (512, 1024), "f16", CMT, env={}, check=True)
    for dt in ("f16", "bf16"):
        half_case("%s transposed emulation (m = 8), B staged, 8x512 . 512x1040 (the last block 1 fragment), NaN and inf"
                  % dt, (8, 512), (512, 1040), dt, "dot_mvcmt8_" + dt, env={"NXVK_DOT_MVC_CM": "0,0,2,1"}, check=True,
                  special="sparse")
        half_case("%s transposed emulation (m = 8), B from memory, FC=2 PF=4 S=3, batched 2x8x768 . 2x768x96, the next "
                  "batches' NaN and inf" % dt, (2, 8, 768), (2, 768, 96), dt, "dot_mvcmt8_" + dt,
                  env={"NXVK_DOT_MVC_CM": "2,4,1,1", MVC: "0,0,3,0"}, special="next")
        half_case("%s transposed emulation (m = 8), FC=8 PF=2 staged, batched 3x8x640 . 3x640x272 (N not whole blocks)"
                  % dt, (3, 8, 640), (3, 640, 272), dt, "dot_mvcmt8_" + dt, env={"NXVK_DOT_MVC_CM": "8,2,2,1,0,2"})
        half_case("%s transposed emulation (m = 8), FC=1 PF=1 staged, dtype f32 result, NaN and inf" % dt, (8, 1024),
                  (1024, 48), dt, "dot_mvcmt8_" + dt, env={"NXVK_DOT_MVC_CM": "1,1,2,1"}, out32=True, special=True)
        half_case("%s transposed emulation (m = 8), FC=4 PF=2 staged, split K (S=4), second pass" % dt, (8, 2048),
                  (2048, 128), dt, "dot_mvcmt8_" + dt, env={"NXVK_DOT_MVC_CM": "4,2,2,1,2", MVC: "0,0,4,0"})
        half_case("%s transposed emulation of m = 16 (T=2), B staged, 16x512 . 512x1040" % dt, (16, 512), (512, 1040),
                  dt, "dot_mvcmt16_" + dt, env={"NXVK_DOT_MVC_CM": "0,0,2,1,0,2"}, special="sparse")
        half_case("%s transposed emulation of m = 16 (T=2), B from memory, S=3, dtype f32 result" % dt, (16, 1536),
                  (1536, 80), dt, "dot_mvcmt16_" + dt, env={"NXVK_DOT_MVC_CM": "2,2,1,1,0,2", MVC: "0,0,3,0"},
                  out32=True)
        half_case("%s T=1 (the plain form) leaves m = 8 to the columns kernels" % dt, (8, 512), (512, 1024), dt,
                  "dot_mvc_" + dt, env={"NXVK_DOT_MVC_CM": "0,0,2,1,0,1"})
        half_case("%s m = 8, N not whole fragments: the columns kernels" % dt, (8, 512), (512, 1000), dt,
                  "dot_mvc_" + dt, env={"NXVK_DOT_MVC_CM": "0,0,2,1"})
        half_case("%s m = 8, K not whole fragments: the columns kernels" % dt, (8, 1000), (1000, 512), dt,
                  "dot_mvc_" + dt, env={"NXVK_DOT_MVC_CM": "0,0,2,1"})
        # fewer rows than the fragment's columns (T=2: m = 1..7 on 16x8x16, 9..15 on 16x16x16, and m = 8 where only
        # 16x16x16 is listed): A^T staged with zero columns (the kernel's z), B staged only
        half_case("%s transposed emulation, m = 5 (A^T zero-padded), batched 3x5x768 . 3x768x272, the next batches' "
                  "NaN and inf" % dt, (3, 5, 768), (3, 768, 272), dt, "re:dot_mvcm_t16x8x16c8p2l1ze_" + dt,
                  env={"NXVK_DOT_MVC_CM": "8,2,2,1,0,2"}, special="next")
        half_case("%s transposed emulation, m = 12 (A^T zero-padded), S=3, dtype f32 result, NaN and inf" % dt,
                  (12, 1536), (1536, 80), dt, "re:dot_mvcm32_t16x16x16c2p4l1ze_" + dt,
                  env={"NXVK_DOT_MVC_CM": "2,4,2,1,0,2", MVC: "0,0,3,0"}, out32=True, special="sparse")
        half_case("%s transposed emulation, m = 1 (A^T zero-padded)" % dt, (1, 512), (512, 1040), dt,
                  "re:dot_mvcm_t16x8x16c4p1l1ze_" + dt, env={"NXVK_DOT_MVC_CM": "0,0,2,1,0,2"}, check=True)
        half_case("%s m = 4 (T=2), B from memory: the columns kernels (A^T zero-padded needs B staged)" % dt, (4, 512),
                  (512, 1024), dt, "dot_mvc_" + dt, env={"NXVK_DOT_MVC_CM": "0,0,1,1,0,2"})
    half_case("f16 NXVK_DOT_MVC_CM=off: m = 8 on dot_mvc", (8, 512), (512, 1024), "f16", "dot_mvc_f16",
              env={"NXVK_DOT_MVC_CM": "off"})
    # split K summed by the last workgroup of each column block (F = 1, the default) against the second pass (F = 2):
    # dot_mvc (W,U,S,WG,P,F) and the tensor-core form's emulation (FC,PF,LD,E,F); vec4 sums where N and the blocks
    # are whole vec4s, single floats where not (N = 1003), batches, odd splits, f32 results
    for dt in ("f16", "bf16", "f32"):
        fold_case("%s dot_mvc S=3, m = 8, batched 2x8x3000 . 2x3000x1003" % dt, (2, 8, 3000), (2, 3000, 1003), dt,
                  "dot_mvc", {MVC: "0,0,3,0,0,1"}, {MVC: "0,0,3,0,0,2"})
        fold_case("%s dot_mvc S=5, m = 16, 16x4000 . 4000x512" % dt, (16, 4000), (4000, 512), dt, "dot_mvc",
                  {MVC: "0,0,5,0,0,1"}, {MVC: "0,0,5,0,0,2"})
    # the rule's F for f32: the second pass for m > 12 (the fold took the m = 16 kernel past 128 registers on an
    # H100), the fold below (the fourth specialization constant)
    case("f32 m = 16, S=5 by default: the second pass", (16, 4000), (4000, 512),
         kernel=r"re:dot_mvc_n16w\d+u\d+p\d+a?_f32 \[\d+,\d+,1,0", env={MVC: "0,0,5,0"})
    case("f32 m = 12, S=5 by default: the fold", (12, 4000), (4000, 512),
         kernel=r"re:dot_mvc_n12w\d+u\d+p\d+a?_f32 \[\d+,\d+,1,1", env={MVC: "0,0,5,0"})
    for dt in ("f16", "bf16", "f32"):
        counts_case("%s dot_mvc S=3 counts left zero" % dt, dt, {MVC: "0,0,3,0,0,1"}, {MVC: "0,0,3,0,0,3"})
    fold_case("f16 dot_mvc S=4, m = 3, dtype f32 result", (3, 2000), (2000, 260), "f16", "dot_mvc32",
              {MVC: "0,0,4,0,0,1"}, {MVC: "0,0,4,0,0,2"}, out32=True)
    for dt in ("f16", "bf16"):
        fold_case("%s tensor-core emulation, transposed (m = 8) S=3, batched 2x8x1024 . 2x1024x336" % dt, (2, 8, 1024),
                  (2, 1024, 336), dt, "dot_mvcm_t16x8", {"NXVK_DOT_MVC_CM": "0,0,2,1,1", MVC: "0,0,3,0"},
                  {"NXVK_DOT_MVC_CM": "0,0,2,1,2", MVC: "0,0,3,0"})
        fold_case("%s tensor-core emulation, transposed, m = 6 (A^T zero-padded) S=3" % dt, (2, 6, 1024),
                  (2, 1024, 336), dt, "dot_mvcm_t16x8", {"NXVK_DOT_MVC_CM": "0,0,2,1,1,2", MVC: "0,0,3,0"},
                  {"NXVK_DOT_MVC_CM": "0,0,2,1,2,2", MVC: "0,0,3,0"})
        fold_case("%s tensor-core emulation, transposed (m = 8) S=6 FC=2, dtype f32 result" % dt, (8, 3072),
                  (3072, 96), dt, "dot_mvcm32_t16x8", {"NXVK_DOT_MVC_CM": "2,1,2,1", MVC: "0,0,6,0"},
                  {"NXVK_DOT_MVC_CM": "2,1,2,1,2", MVC: "0,0,6,0"}, out32=True)
    for dt in ("f16", "bf16"):
        fold_case("%s tensor-core emulation S=3, batched 2x16x1024 . 2x1024x320" % dt, (2, 16, 1024), (2, 1024, 320), dt,
                  "dot_mvcm", {"NXVK_DOT_MVC_CM": "0,0,2,1,1", MVC: "0,0,3,0"},
                  {"NXVK_DOT_MVC_CM": "0,0,2,1,2", MVC: "0,0,3,0"})
        fold_case("%s tensor-core emulation S=6 FC=2, dtype f32 result" % dt, (16, 3072), (3072, 96), dt, "dot_mvcm",
                  {"NXVK_DOT_MVC_CM": "2,1,2,1", MVC: "0,0,6,0"}, {"NXVK_DOT_MVC_CM": "2,1,2,1,2", MVC: "0,0,6,0"},
                  out32=True)


nphelp.main(main, TMP)
