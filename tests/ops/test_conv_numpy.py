#!/usr/bin/python3
"""test_conv_numpy.py - conv (Nx.conv's whole signature) against numpy:
strides, "valid" / "same" / explicit padding (negative included), input and
kernel dilation, feature and batch groups, input / kernel / output
permutations, spatial ranks 1 to 3, f16 f32 f64, NaN and infinities, empty
shapes, and the attribute and shape errors.  The oracle is numpy alone:
the input dilated (zeros between elements), padded or cropped, windows from
sliding_window_view, products summed by np.einsum in f64; each output must
lie within conv's bound (terms * eps * sum|x*w| + one ulp).  Some cases
also run --check (the CPU reference).  TAP."""
import json
import os
import shutil
import subprocess
import sys
import tempfile

import numpy as np
from numpy.lib.stride_tricks import sliding_window_view

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from pytap import NXVK, done, check as tap  # noqa: E402

TMP = tempfile.mkdtemp(prefix="nxvk_conv_")
rng = np.random.default_rng(29)


def np_conv(x, w, strides=None, padding="valid", idil=None, kdil=None, fg=1, bg=1, pin=None, pk=None,
            pout=None):
    """Nx.conv in f64 with numpy only; returns (result, sum of |products|, terms)"""
    r = x.ndim
    S = r - 2
    x = np.transpose(x.astype(np.float64), pin or list(range(r)))
    w = np.transpose(w.astype(np.float64), pk or list(range(r)))
    strides = strides or [1] * S
    idil = idil or [1] * S
    kdil = kdil or [1] * S
    N, C = x.shape[:2]
    O, I = w.shape[:2]
    # dilations: zeros between elements
    xd = np.zeros((N, C) + tuple((s - 1) * d + 1 if s else 0 for s, d in zip(x.shape[2:], idil)))
    xd[(slice(None), slice(None)) + tuple(slice(None, None, d) for d in idil)] = x
    wd = np.zeros((O, I) + tuple((s - 1) * d + 1 if s else 0 for s, d in zip(w.shape[2:], kdil)))
    wd[(slice(None), slice(None)) + tuple(slice(None, None, d) for d in kdil)] = w
    if padding == "valid":
        pads = [(0, 0)] * S
    elif padding == "same":
        pads = [((k - 1) // 2, (k - 1) - (k - 1) // 2) if k > 1 else (0, 0) for k in wd.shape[2:]]
    else:
        pads = [tuple(p) for p in padding]
    xp = np.pad(xd, [(0, 0), (0, 0)] + [(max(lo, 0), max(hi, 0)) for lo, hi in pads])
    crop = tuple(slice(-lo if lo < 0 else 0, xp.shape[2 + i] + hi if hi < 0 else None) for i, (lo, hi) in
                 enumerate(pads))
    xp = xp[(slice(None), slice(None)) + crop]
    ks = wd.shape[2:]
    Y = [max(0, (xp.shape[2 + i] - ks[i]) // strides[i] + 1) if xp.shape[2 + i] >= ks[i] else 0 for i in
         range(S)]
    NB = N // bg
    out = np.zeros((NB, O) + tuple(Y))
    mag = np.zeros_like(out)
    if all(Y) and NB and O:
        win = sliding_window_view(xp, ks, axis=tuple(range(2, r)))  # [N, C, P..., K...]
        win = win[(slice(None), slice(None)) + tuple(slice(0, y * s, s) for y, s in zip(Y, strides))]
        sp = "ABDEFG"[:S]
        kk = "HJKLMP"[:S]
        eq = "nc%s%s,oc%s->no%s" % (sp, kk, kk, sp)
        for o in range(O):
            g = o // (O // fg)
            b = o // (O // bg)
            xs = win[b * NB:(b + 1) * NB, g * I:(g + 1) * I]
            with np.errstate(all="ignore"):
                out[:, o:o + 1] = np.einsum(eq, xs, wd[o:o + 1])
                mag[:, o:o + 1] = np.einsum(eq, np.abs(xs), np.abs(wd[o:o + 1]))
    inv = list(np.argsort(pout)) if pout else list(range(r))
    terms = I * int(np.prod(w.shape[2:]))
    return np.transpose(out, inv), np.transpose(mag, inv), terms


def attrs_of(kw):
    a = {}
    for k, name in [("strides", "strides"), ("padding", "padding"), ("idil", "input_dilation"),
                    ("kdil", "kernel_dilation"), ("fg", "feature_group_size"), ("bg", "batch_group_size"),
                    ("pin", "input_permutation"), ("pk", "kernel_permutation"), ("pout", "output_permutation")]:
        if k in kw:
            a[name] = kw[k]
    return a


def run(x, w, attrs, check=False, env=None):
    px, pw, po = (os.path.join(TMP, f) for f in ("x.npy", "w.npy", "o.npy"))
    np.save(px, x)
    np.save(pw, w)
    cmd = [NXVK, "run", "--op", "conv", "--attrs", json.dumps(attrs), px, pw, "-o", po]
    if check:
        cmd.append("--check")
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=600,
                       env=dict(os.environ, **(env or {})))
    text = p.stdout.decode(errors="replace") + p.stderr.decode(errors="replace")
    return p.returncode, (np.load(po) if p.returncode == 0 else None), text


def judge(got, want, mag, terms, dt, sum_eps=None):
    if got is None or got.shape != want.shape or got.dtype != dt:
        return False, "shape/dtype %s, want %s" % (None if got is None else (got.shape, got.dtype), want.shape)
    fin = np.isfinite(want)
    if not np.array_equal(np.isnan(got), np.isnan(want)) or \
            not np.array_equal(got[~fin & ~np.isnan(want)], want[~fin & ~np.isnan(want)]):
        return False, "non-finite results differ:\n%s\n%s" % (got, want)
    eps = float(np.finfo(dt).eps)
    g = got[fin].astype(np.float64)
    wv = want[fin]
    # sum_eps: the sums' own precision where it is finer than the dtype's
    # (f16 in f32 sums: each output within f32 summation error and one f16 ulp)
    bound = max(terms, 1) * (sum_eps or eps) * mag[fin] + eps * np.abs(wv) + float(np.finfo(dt).tiny)
    err = np.abs(g - wv)
    if (err > bound).any():
        i = int(np.argmax(err - bound))
        return False, "%d of %d over the bound; worst got %r want %r" % ((err > bound).sum(), err.size, g[i], wv[i])
    return True, None


def np_conv_skip(x, w, strides=None, padding=None, kdil=None):
    """2-D conv (NCHW, OIHW, explicit non-negative padding) with padded
    positions skipped, not multiplied as zeros: conv's semantics where a
    weight is infinite or NaN (0 * inf would be NaN)"""
    N, C, X0, X1 = x.shape
    O, _, K0, K1 = w.shape
    s0, s1 = strides or [1, 1]
    d0, d1 = kdil or [1, 1]
    (lo0, hi0), (lo1, hi1) = padding
    Y0 = (X0 + lo0 + hi0 - (K0 - 1) * d0 - 1) // s0 + 1
    Y1 = (X1 + lo1 + hi1 - (K1 - 1) * d1 - 1) // s1 + 1
    xf, wf = x.astype(np.float64), w.astype(np.float64)
    out = np.zeros((N, O, Y0, Y1))
    mag = np.zeros_like(out)
    for a in range(K0):
        for b in range(K1):
            q0 = np.arange(Y0) * s0 - lo0 + a * d0
            q1 = np.arange(Y1) * s1 - lo1 + b * d1
            ok = ((q0 >= 0) & (q0 < X0))[:, None] & ((q1 >= 0) & (q1 < X1))[None, :]
            xg = xf[:, :, np.clip(q0, 0, X0 - 1)][:, :, :, np.clip(q1, 0, X1 - 1)]
            with np.errstate(all="ignore"):
                out += np.where(ok, np.einsum("ncyx,oc->noyx", xg, wf[:, :, a, b]), 0)
                mag += np.where(ok, np.einsum("ncyx,oc->noyx", np.abs(xg), np.abs(wf[:, :, a, b])), 0)
    return out, mag, C * K0 * K1


def case(desc, xshape, wshape, dt=np.float32, check=False, special=False, skip_oracle=False, env=None,
         wbad=None, sum_eps=None, **kw):
    x = rng.standard_normal(xshape).astype(dt)
    w = rng.standard_normal(wshape).astype(dt)
    if special and x.size > 3 and w.size > 1:
        x.flat[0] = np.nan
        x.flat[x.size // 2] = np.inf
        w.flat[1] = -np.inf
    for i, v in wbad or []:
        w.flat[i] = v
    want, mag, terms = np_conv_skip(x, w, **kw) if skip_oracle else np_conv(x, w, **kw)
    rc, got, text = run(x, w, attrs_of(kw), check, env)
    if rc != 0:
        tap(False, desc, text)
        return
    ok, why = judge(got, want, mag, terms, dt, sum_eps)
    tap(ok, desc, why)


# shapes and options
case("2-D valid", (2, 3, 7, 6), (4, 3, 3, 2), check=True)
case("2-D strides [2,3], same", (2, 3, 9, 8), (5, 3, 3, 3), strides=[2, 3], padding="same", check=True)
case("2-D explicit padding with a negative (crop)", (1, 2, 6, 7), (3, 2, 2, 3), padding=[[1, 2], [-1, 0]],
     check=True)
case("2-D input dilation [2,1], kernel dilation [1,2]", (2, 2, 5, 6), (3, 2, 2, 2), idil=[2, 1], kdil=[1, 2],
     check=True)
case("2-D all of strides, padding, both dilations", (2, 3, 8, 7), (4, 3, 3, 2), strides=[2, 1],
     padding=[[2, 1], [0, 3]], idil=[1, 2], kdil=[2, 1], check=True)
case("same with dilated kernel", (1, 2, 7, 7), (2, 2, 3, 2), kdil=[2, 3], padding="same")
case("feature groups 2", (2, 4, 5, 5), (6, 2, 3, 3), fg=2, check=True)
case("depthwise (feature groups = channels)", (2, 4, 6, 6), (8, 1, 3, 3), fg=4, padding="same")
case("batch groups 2", (4, 3, 5, 5), (4, 3, 2, 2), bg=2, check=True)
case("batch groups 3 with strides and padding", (6, 2, 6, 5), (6, 2, 3, 2), bg=3, strides=[2, 2],
     padding=[[1, 1], [0, 1]])
case("1-D", (3, 2, 11), (4, 2, 3), strides=[2], padding=[[1, 0]], check=True)
case("3-D", (1, 2, 5, 4, 6), (3, 2, 2, 3, 2), padding="same", kdil=[1, 1, 2], check=True)
case("input NHWC, kernel HWIO, output NHWC", (2, 6, 5, 3), (3, 3, 3, 4), pin=[0, 3, 1, 2], pk=[3, 2, 0, 1],
     pout=[0, 3, 1, 2], padding="same", check=True)
case("odd permutations", (5, 2, 3, 4), (2, 3, 2, 2), pin=[2, 1, 3, 0], pk=[1, 3, 0, 2], pout=[3, 1, 0, 2])
case("f64", (2, 3, 6, 6), (4, 3, 3, 3), dt=np.float64, padding="same", strides=[1, 2], check=True)
case("f16 (f32 sums)", (2, 3, 6, 6), (4, 3, 3, 3), dt=np.float16, padding="same", check=True)
case("f64 groups and dilations", (2, 4, 7, 6), (4, 2, 2, 3), dt=np.float64, fg=2, idil=[2, 2], kdil=[1, 2])
case("NaN and infinities", (1, 2, 5, 5), (2, 2, 2, 2), special=True, check=True)
case("NaN and infinities f64", (1, 2, 5, 5), (2, 2, 2, 2), dt=np.float64, special=True)
case("kernel larger than the input: empty output", (1, 1, 2, 2), (1, 1, 3, 3))
case("zero output channels", (1, 2, 4, 4), (0, 2, 2, 2))
case("zero input channels: zeros", (2, 0, 4, 4), (3, 0, 2, 2), check=True)
case("ResNet-like 16 -> 16, 14x14, 3x3, padding 1", (2, 16, 14, 14), (16, 16, 3, 3), padding=[[1, 1], [1, 1]],
     check=True)
case("many channels (long sums)", (1, 300, 4, 4), (2, 300, 3, 3), padding="same")
# the implicit GEMM's tiles and paths (conv_gemm.comp): several pixel and
# channel blocks, O past 64 and not a multiple of 4, channels a multiple of
# its k step or not, scalar and vector stores
case("GEMM: 70 -> 130 channels, strides [1,2], same", (2, 70, 9, 10), (130, 70, 3, 3), strides=[1, 2],
     padding="same")
case("GEMM: 24 -> 20 channels, NHWC in and out, dilated kernel", (3, 11, 12, 24), (20, 24, 3, 2),
     pin=[0, 3, 1, 2], pout=[0, 3, 1, 2], kdil=[2, 1], padding=[[2, 1], [0, 1]])
case("GEMM: 32 -> 64 channels, 16x16, padding 1 (vector stores)", (3, 32, 16, 16), (64, 32, 3, 3),
     padding=[[1, 1], [1, 1]], check=True)
# a non-finite weight: the border outputs skip the padding (numpy oracle
# that skips it too), vector-store and scalar-store layouts
case("infinite and NaN weights with padding skip the padding", (2, 16, 8, 8), (8, 16, 3, 3),
     padding=[[1, 1], [1, 1]], skip_oracle=True, wbad=[(5, np.inf), (200, -np.inf), (1000, np.nan)], check=True)
case("an infinite weight, padding, strides, odd sizes", (1, 3, 7, 9), (5, 3, 3, 2), strides=[2, 1],
     padding=[[1, 2], [0, 1]], skip_oracle=True, wbad=[(7, np.inf)])
case("f16 through the GEMM (f32 copies): 16 -> 24 channels, NHWC in", (2, 10, 10, 16), (24, 16, 3, 3),
     dt=np.float16, pin=[0, 3, 1, 2], padding=[[1, 1], [1, 1]], check=True, env={"NXVK_CONV_COOPMAT": "0"})
case("f16, an infinite weight with padding", (1, 8, 6, 6), (4, 8, 3, 3), dt=np.float16, padding=[[1, 1], [1, 1]],
     skip_oracle=True, wbad=[(3, np.inf)])
# NXVK_CONV_GEMM's tiles give the same results; bad ones are refused
for tile in ["256,16,2,1,8", "128,8,2,2,8", "64,4,1,1,4", "128,8,2,2,16"]:
    case("NXVK_CONV_GEMM=%s" % tile, (2, 24, 10, 12), (72, 24, 3, 3), padding=[[1, 1], [1, 1]],
         env={"NXVK_CONV_GEMM": tile})

# f16 on cooperative matrices (conv_coopmat.comp): NXVK_CONV_COOPMAT_EMU=1
# runs its data flow (the gather, the stages, the stores, the border
# recompute) with plain products, on any device; f32 sums, so the bound is
# f32 summation error and one f16 ulp.  One-pixel and many-pixel blocks,
# channels a multiple of the k step (one kernel position a step) or not, O
# past the 64-channel tile, strides, dilation, permutations, non-finite
# inputs and weights, and the layouts a GPU run sweeps (those that fit the
# device's shared memory).
EMU = {"NXVK_CONV_COOPMAT_EMU": "1"}
F32 = float(np.finfo(np.float32).eps)
case("coopmat (emulated): 64 -> 64, 8x8, padding 1", (2, 64, 8, 8), (64, 64, 3, 3), dt=np.float16,
     padding=[[1, 1], [1, 1]], env=EMU, sum_eps=F32, check=True)
case("coopmat (emulated): 64 -> 72, 7x9, strides [2,1]", (3, 64, 7, 9), (72, 64, 3, 3), dt=np.float16,
     strides=[2, 1], padding=[[1, 1], [1, 1]], env=EMU, sum_eps=F32)
case("coopmat (emulated): 3 channels, same", (2, 3, 9, 8), (4, 3, 3, 2), dt=np.float16, strides=[2, 1],
     padding="same", env=EMU, sum_eps=F32)
case("coopmat (emulated): NHWC in and out, dilated kernel", (3, 11, 12, 24), (20, 24, 3, 2), dt=np.float16,
     pin=[0, 3, 1, 2], pout=[0, 3, 1, 2], kdil=[2, 1], padding=[[2, 1], [0, 1]], env=EMU, sum_eps=F32)
case("coopmat (emulated): 70 -> 130 channels", (2, 70, 9, 10), (130, 70, 3, 3), dt=np.float16, strides=[1, 2],
     padding="same", env=EMU, sum_eps=F32)
case("coopmat (emulated): odd permutations", (5, 2, 3, 4), (2, 3, 2, 2), dt=np.float16, pin=[2, 1, 3, 0],
     pk=[1, 3, 0, 2], pout=[3, 1, 0, 2], env=EMU, sum_eps=F32)
case("coopmat (emulated): NaN and infinities in x and w", (1, 2, 5, 5), (2, 2, 2, 2), dt=np.float16, special=True,
     env=EMU)
case("coopmat (emulated): non-finite weights skip the padding", (2, 16, 8, 8), (8, 16, 3, 3), dt=np.float16,
     padding=[[1, 1], [1, 1]], skip_oracle=True, wbad=[(5, np.inf), (200, -np.inf), (1000, np.nan)], env=EMU)
case("coopmat (emulated): an infinite weight, strides, odd sizes", (1, 32, 7, 9), (5, 32, 3, 2), dt=np.float16,
     strides=[2, 1], padding=[[1, 2], [0, 1]], skip_oracle=True, wbad=[(7, np.inf)], env=EMU)
for lay in ["4,1,2,4,32", "2,2,2,2,32", "4,1,2,4,16", "2,1,2,4,32"]:
    case("coopmat (emulated) NXVK_CONV_COOPMAT=%s" % lay, (2, 32, 11, 13), (40, 32, 3, 3), dt=np.float16,
         padding=[[1, 1], [1, 1]], env=dict(EMU, NXVK_CONV_COOPMAT=lay), sum_eps=F32)


def built(dt, env):
    """the kernels an f16/f32 conv builds (NXVK_KERNEL_STATS=1 lists them)"""
    x = np.ones((1, 16, 6, 6), dt)
    w = np.ones((8, 16, 3, 3), dt)
    rc, got, text = run(x, w, {"padding": [[1, 1], [1, 1]]}, env=dict(env, NXVK_KERNEL_STATS="1"))
    ok = rc == 0 and got is not None and float(got[0, 0, 2, 2]) == 144.0 and float(got[0, 0, 0, 0]) == 64.0
    return ok, text


# the choice: f16 conv takes conv_coopmat where the device has NV
# cooperative matrices (nxvk info), else conv_gemm through f32 copies;
# NXVK_CONV_COOPMAT=0 turns it off, the emulation turns it on anywhere
info = subprocess.run([NXVK, "info"], stdout=subprocess.PIPE, stderr=subprocess.STDOUT).stdout.decode()
has_cm = "NV yes" in info and "(dot variant coopmat) yes" in info
ok, text = built(np.float16, {})
want = "conv_wpack_f16" if has_cm else "conv_gemm_f32"
tap(ok and want in text and ("conv_gemm_f32" in text) != has_cm,
    "f16 conv by default: %s (%s cooperative matrices)" % (want, "with" if has_cm else "no"), text)
ok, text = built(np.float16, {"NXVK_CONV_COOPMAT": "0"})
tap(ok and "conv_gemm_f32" in text and "conv_wpack_f16" not in text, "NXVK_CONV_COOPMAT=0: conv_gemm", text)
ok, text = built(np.float16, EMU)
tap(ok and "conv_wpack_f16" in text and "conv_gemm_f32" not in text, "NXVK_CONV_COOPMAT_EMU=1: conv_coopmat", text)
ok, text = built(np.float32, EMU)
tap(ok and "conv_gemm_f32" in text and "conv_wpack_f16" not in text, "f32 conv stays on conv_gemm", text)
for val, needle in [("4,1,2,4,24", "BK must" if has_cm else "cooperative"),
                    ("4,1,2", "five whole numbers"), ("1", "five whole numbers")]:
    rc, _, text = run(np.ones((1, 1, 3, 3), np.float16), np.ones((1, 1, 2, 2), np.float16), {},
                      env={"NXVK_CONV_COOPMAT": val})
    tap(rc != 0 and "NXVK_CONV_COOPMAT" in text and needle in text, "NXVK_CONV_COOPMAT=%s refused" % val, text)


def refused(desc, xshape, wshape, attrs, needle, dt=np.float32, wdt=None):
    x = np.ones(xshape, dt)
    w = np.ones(wshape, wdt or dt)
    rc, _, text = run(x, w, attrs)
    tap(rc != 0 and needle in text, desc, "rc %d, want '%s' in: %s" % (rc, needle, text))


refused("unknown attribute named", (1, 1, 3, 3), (1, 1, 2, 2), {"stride": [1, 1]}, '"stride"')
refused("strides of the wrong length named", (1, 1, 3, 3), (1, 1, 2, 2), {"strides": [1]}, '"strides"')
refused("zero stride refused", (1, 1, 3, 3), (1, 1, 2, 2), {"strides": [0, 1]}, '"strides"')
refused("bad padding named", (1, 1, 3, 3), (1, 1, 2, 2), {"padding": "full"}, '"padding"')
refused("padding pairs of the wrong count", (1, 1, 3, 3), (1, 1, 2, 2), {"padding": [[1, 1]]}, '"padding"')
refused("a repeated permutation axis", (1, 1, 3, 3), (1, 1, 2, 2), {"input_permutation": [0, 0, 1, 2]},
        '"input_permutation"')
refused("feature and batch groups together", (2, 2, 3, 3), (2, 1, 2, 2),
        {"feature_group_size": 2, "batch_group_size": 2}, "feature_group_size")
refused("channels not matching the kernel name both", (1, 3, 3, 3), (1, 2, 2, 2), {}, "kernel [1,2,2,2]")
refused("rank 2 input refused", (3, 3), (2, 2), {}, "input [3,3]")
refused("mixed dtypes refused", (1, 1, 3, 3), (1, 1, 2, 2), {}, "as_type", wdt=np.float64)
refused("integer dtypes refused", (1, 1, 3, 3), (1, 1, 2, 2), {}, "i32", dt=np.int32)

for tile, needle in [("256,8,4,2,8", "TX a multiple of 4 RB"), ("256,8,2,2", "five whole numbers")]:
    rc, _, text = run(np.ones((1, 1, 3, 3), np.float32), np.ones((1, 1, 2, 2), np.float32), {},
                      env={"NXVK_CONV_GEMM": tile})
    tap(rc != 0 and "NXVK_CONV_GEMM" in text and needle in text, "NXVK_CONV_GEMM=%s refused" % tile, text)

shutil.rmtree(TMP, ignore_errors=True)
sys.exit(done())
