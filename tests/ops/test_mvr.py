#!/usr/bin/python3
"""test_mvr.py - dot_mvr.comp, the rows form of skinny products with
2 <= n <= 16 and lanes over rows (src/ops/dot_mvr.c, issue 30), taken where
NXVK_DOT_MVR=L,R,U,KS[,WG[,S[,P]]] is set: f32, f16 and bf16 (f16 / bf16
also with "dtype": "f32" results), n from 2 to 16, K not a
multiple of a 16-byte vector nor of a round, rows not a multiple of the
workgroup's, batches, split K over workgroups, k groups, lanes a row from 1
to 8, no prefetch, NaN and infinities.  Each result is checked against numpy
(f64 products of the inputs) under dot's bound n * eps(f32) * sum|a*b| per
output plus the one rounding to the result's dtype, some also by --check
against the CPU reference; NXVK_KERNEL_STATS=1 names the kernel built, so
each case also tells that dot_mvr ran (and that it did not under
NXVK_DOT_MVR=off or unset).  TAP."""
import os
import re
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import nphelp  # noqa: E402
from math_oracles import dot_bound  # noqa: E402
from nphelp import bf16_bits, bf16_f32, check as tap, save_v2  # noqa: E402

TMP = nphelp.scratch("mvr")
rng = np.random.default_rng(3030)


def bf16_f64(bits):
    return bf16_f32(bits).astype(np.float64)


def save(path, a, bf16):
    if bf16:
        save_v2(path, a)
    else:
        np.save(path, a)


def case(desc, ashape, bshape, dt, layout="0,0,0,0", out32=False, special=False, check=False, want_mvr=True, cm=None):
    bf = dt == "bf16"
    a32 = rng.standard_normal(ashape).astype(np.float32)
    b32 = rng.standard_normal(bshape).astype(np.float32)
    if special and a32.shape[-2] > 2 and b32.shape[-1] > 1:
        a32[..., 2, 3] = np.nan
        a32[..., 1, -1] = np.inf
        b32[..., -1, 1] = -np.inf
    if dt == "f32":
        a, b = a32, b32
    elif bf:
        a, b = bf16_bits(a32), bf16_bits(b32)
    else:
        a, b = a32.astype(np.float16), b32.astype(np.float16)
    a64, b64 = (bf16_f64(x) if bf else x.astype(np.float64) for x in (a, b))
    pa, pb, out = (os.path.join(TMP, f) for f in ("a.npy", "b.npy", "o.npy"))
    save(pa, a, bf)
    save(pb, b, bf)
    env = {"NXVK_KERNEL_STATS": "1", "NXVK_DOT_MVR": layout}  # None: unset
    if cm is not None:
        env["NXVK_DOT_MVR_CM"] = cm
    _, got, text = nphelp.run_dot(pa, pb, out, {"dtype": "f32"} if out32 else None, check, env=env)
    if got is None:
        tap(False, desc, text)
        return
    if got.dtype.kind == "V":
        got = got.view("<u2").astype(np.uint16)
    g = bf16_f64(got) if (bf and not out32) else got.astype(np.float64)
    want, bound = dot_bound(a64, b64, "f32" if out32 else dt)
    if not nphelp.within_bound(desc, g, want, bound, text):
        return
    if check:
        tap(": ok" in text, "%s: --check against the CPU reference" % desc, text)
    if cm is not None:
        mvr = re.search(r"dot_mvrcm(32)?_n\d+f\d+x\d+x\d+u\d+k\d+w\d+a\de_%s\b" % dt, text) is not None
        tap(mvr == want_mvr, "%s: %s dot_mvrcm (emulated)" % (desc, "ran" if want_mvr else "did not run"), text)
        return
    mvr = re.search(r"dot_mvr(32)?_n\d+l\d+r\d+u\d+k\d+w\d+p\d_%s\b" % dt, text) is not None
    tap(mvr == want_mvr, "%s: %s dot_mvr" % (desc, "ran" if want_mvr else "did not run"), text)


def main():
    # n from 2 to 16 (odd, whole vec4s, whole 16-byte vectors of B), the rule's layout, the three dtypes in turn
    for i, nn in enumerate((2, 3, 4, 5, 8, 11, 12, 16)):
        dt = ("f32", "f16", "bf16")[i % 3]
        case("%s 150x333 . 333x%d (the rule's layout)" % (dt, nn), (150, 333), (333, nn), dt, check=nn in (2, 16))
    for dt in ("f32", "f16", "bf16"):
        case("%s 300x2000 . 2000x16, split K" % dt, (300, 2000), (2000, 16), dt, layout="4,2,2,2,0,3", check=True)
        case("%s batched 3x77x1001 . 3x1001x5 (K odd)" % dt, (3, 77, 1001), (3, 1001, 5), dt)
        case("%s NaN and inf, n = 16" % dt, (64, 999), (999, 16), dt, special=True)
        case("%s L=1 R=1 U=1 KS=1, no prefetch" % dt, (100, 515), (515, 8), dt, layout="1,1,1,1,0,0,2")
        case("%s L=8 R=4 U=1 KS=4 (K odd, split 2)" % dt, (301, 1003), (1003, 12), dt, layout="8,4,1,4,0,2")
        case("%s L=2 R=1 U=8 KS=2 WG=128 S=3" % dt, (99, 2000), (2000, 3), dt, layout="2,1,8,2,128,3")
    for dt in ("f16", "bf16"):
        case("%s dtype f32 result" % dt, (200, 640), (640, 7), dt, out32=True)
        case("%s dtype f32 result, split K" % dt, (50, 4000), (4000, 16), dt, layout="4,1,2,2,0,4", out32=True)
    case("f16 WG=512 KS=8 U=1", (500, 2100), (2100, 16), "f16", layout="4,2,1,8,512")
    case("f32 K = 1", (40, 1), (1, 6), "f32")
    # f16 on tensor cores (dot_mvrcm.comp, NXVK_DOT_MVR_CM=U,KS[,WG[,S[,E[,LD]]]]): its emulation (E = 1) here, A staged through shared memory (LD = 2, the default) or not (LD = 1), so
    # the staging, the clamped last row tile, the k groups' sums, split K and the stores are checked on lavapipe
    case("f16 tensor-core form, 300x512 . 512x16 (rows clamped)", (300, 512), (512, 16), "f16", cm="4,2,0,0,1", check=True)
    case("f16 tensor-core form, n = 5, U=1 KS=4 S=3", (100, 1024), (1024, 5), "f16", cm="1,4,256,3,1")
    case("f16 tensor-core form, split K summed by a second pass (F=2)", (100, 1024), (1024, 5), "f16",
         cm="1,4,256,3,1,2,2")
    case("f16 tensor-core form, n = 16, split K summed by the last workgroup (F=1)", (150, 2048), (2048, 16), "f16",
         cm="4,1,0,4,1,2,1")
    case("f16 tensor-core form, n = 2 (the rule's on GPUs)", (150, 512), (512, 2), "f16", cm="0,0,0,0,1", check=True)
    case("f16 tensor-core form, n = 4, batched, split K", (2, 40, 2048), (2, 2048, 4), "f16", cm="0,0,0,3,1")
    case("f16 tensor-core form, A straight from memory (LD=1), rows clamped", (300, 512), (512, 16), "f16", cm="4,2,0,0,1,1")
    case("f16 tensor-core form, LD=1, U=2 KS=4 S=2, n = 11", (99, 1024), (1024, 11), "f16", cm="2,4,0,2,1,1")
    case("f16 tensor-core form, batched 2x40x320 . 2x320x9, NaN and inf", (2, 40, 320), (2, 320, 9), "f16",
         cm="2,1,64,0,1", special=True)
    case("f16 tensor-core form, dtype f32 result, split K", (70, 2048), (2048, 16), "f16", cm="2,2,0,4,1", out32=True)
    case("f16 tensor-core form needs K % 16 == 0 (K = 500: dot_mvr)", (70, 500), (500, 16), "f16", cm="4,2,0,0,1",
         want_mvr=False)
    # bf16 the same way (dot_mvrcm_..._bf16: bf16 fragments, a KHR kernel on tensor cores; the emulation reads
    # bf16 bits and rounds the f32 sums once to bf16)
    case("bf16 tensor-core form, 300x512 . 512x16 (rows clamped)", (300, 512), (512, 16), "bf16", cm="4,2,0,0,1",
         check=True)
    case("bf16 tensor-core form, n = 5, U=1 KS=4 S=3", (100, 1024), (1024, 5), "bf16", cm="1,4,256,3,1")
    case("bf16 tensor-core form, n = 3", (70, 1024), (1024, 3), "bf16", cm="0,0,0,0,1", check=True)
    case("bf16 tensor-core form, n = 8, batched 3x50x256 . 3x256x8", (3, 50, 256), (3, 256, 8), "bf16", cm="0,0,0,0,1")
    case("bf16 tensor-core form, LD=1, U=2 KS=4 S=2, n = 11", (99, 1024), (1024, 11), "bf16", cm="2,4,0,2,1,1")
    case("bf16 tensor-core form, batched 2x40x320 . 2x320x9, NaN and inf", (2, 40, 320), (2, 320, 9), "bf16",
         cm="2,1,64,0,1", special=True)
    case("bf16 tensor-core form, dtype f32 result, split K", (70, 2048), (2048, 16), "bf16", cm="2,2,0,4,1", out32=True)
    case("bf16 tensor-core form needs K % 16 == 0 (K = 500: dot_mvr)", (70, 500), (500, 16), "bf16", cm="4,2,0,0,1",
         want_mvr=False)
    case("f32 NXVK_DOT_MVR=off: the old rows form", (150, 333), (333, 16), "f32", layout="off", want_mvr=False)
    case("f16 NXVK_DOT_MVR unset: the old rows form", (150, 333), (333, 16), "f16", layout=None, want_mvr=False)
    case("f16 n = 1 stays on dot_mv", (150, 333), (333, 1), "f16", want_mvr=False)
    # the default (NXVK_DOT_MVR unset): f16 and bf16 take the tensor-core form where the device has one (not
    # lavapipe), else dot_mvr with n <= 4 (measured on the H100) and main's rows form with n >= 5
    case("f16 unset: n = 2 takes dot_mvr", (300, 1001), (1001, 2), "f16", layout=None, check=True)
    case("f16 unset: n = 4 takes dot_mvr (batched, split K)", (2, 70, 3000), (2, 3000, 4), "f16", layout=None)
    case("f16 unset: n = 5 stays", (70, 300), (300, 5), "f16", layout=None, want_mvr=False)
    case("bf16 unset: n = 4 takes dot_mvr", (70, 300), (300, 4), "bf16", layout=None)
    case("bf16 unset: n = 2 takes dot_mvr (K odd)", (70, 301), (301, 2), "bf16", layout=None, check=True)
    case("f32 unset: n = 2 stays", (70, 300), (300, 2), "f32", layout=None, want_mvr=False)
    case("f16 NXVK_DOT_MVR=off: n = 4 stays", (70, 300), (300, 4), "f16", layout="off", want_mvr=False)



nphelp.main(main, TMP)
