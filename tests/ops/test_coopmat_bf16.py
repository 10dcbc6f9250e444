#!/usr/bin/python3
"""test_coopmat_bf16.py - bf16 dot on cooperative matrices (dot_coopmat.comp
with IN_BF16; issue 30), checked here through its emulation
(NXVK_DOT_COOPMAT_EMU=1: the kernel's stages, prefetch, padding, stores and
split K without tensor cores, lavapipe's way): the variant "coopmat" and the
default one (m, n > 16 take coopmat where the device has it, the emulation
counting), bf16 and "dtype": "f32" results, whole tiles and padded shapes
(f16_pad copies the bf16 bits), batches, split K (dot_ksum_f32_bf16 for
bf16 results), forced layouts, NaN, infinities and -0; where the device
has bf16 cooperative matrices (nxvk info: coopmat_bf16_f32) some of them
again on its tensor cores (the kernel rewritten to VK_KHR_cooperative_matrix
with bf16 fragments, spirv_khr.c).  numpy is the
oracle: the bf16 inputs made exact in f64, their products summed by
np.matmul, under dot's bound n * eps(f32) * sum|a*b| per output (f32 sums)
plus the one rounding to bf16; some cases also by --check against the CPU
reference (which must not round bf16 inputs to f16).  NXVK_KERNEL_STATS=1
names the kernels built: each case also tells that the bf16 coopmat kernel
(dotcm_..._b16_emu / _b32_emu) ran, and that the naive one did not.  TAP."""
import json
import os
import re
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import nphelp  # noqa: E402
from math_oracles import dot_bound  # noqa: E402
from nphelp import bf16_bits, bf16_f32, check as tap, save_v2  # noqa: E402

TMP = nphelp.scratch("bf16cm")
rng = np.random.default_rng(3031)


def case(desc, ashape, bshape, out32=False, special=False, check=False, variant="coopmat", env=None,
         ksum=False, want_cm=True, scale=(1.0, 1.0), emu=True):
    a32 = (rng.standard_normal(ashape) * scale[0]).astype(np.float32)
    b32 = (rng.standard_normal(bshape) * scale[1]).astype(np.float32)
    if special:
        # NaN, +-inf and -0 in A and B; a whole row of A of -0 (a sum of -0 products)
        a32[..., 2, 3] = np.nan
        a32[..., 1, -1] = np.inf
        a32[..., 4, :] = -0.0
        b32[..., -1, 1] = -np.inf
        b32[..., 0, 5] = -0.0
        b32[..., 7, 9] = np.inf
    a, b = bf16_bits(a32), bf16_bits(b32)
    a64, b64 = (bf16_f32(x).astype(np.float64) for x in (a, b))
    pa, pb, out = (os.path.join(TMP, f) for f in ("a.npy", "b.npy", "o.npy"))
    save_v2(pa, a)
    save_v2(pb, b)
    attrs = {}
    if variant:
        attrs["variant"] = variant
    if out32:
        attrs["dtype"] = "f32"
    # the layout knobs unset (None), so that every case runs the rule's layout unless it says
    e = {k: None for k in ("NXVK_DOT_COOPMAT", "NXVK_DOT_COOPMAT_SPLIT", "NXVK_DOT_COOPMAT_STAGES",
                           "NXVK_DOT_COOPMAT_PREFETCH", "NXVK_DOT_COOPMAT_GROUP", "NXVK_DOT_COOPMAT_ORDER")}
    e.update(NXVK_KERNEL_STATS="1", NXVK_DOT_COOPMAT_EMU="1" if emu else "0")
    e.update(env or {})
    _, got, text = nphelp.run_dot(pa, pb, out, attrs, check, env=e)
    if got is None:
        tap(False, desc, text)
        return
    if out32:
        ok_kind = got.dtype == np.float32
        g = got.astype(np.float64)
    else:
        ok_kind = got.dtype.kind == "V" and got.dtype.itemsize == 2
        g = bf16_f32(got.view("<u2").astype(np.uint16)).astype(np.float64)
    if not ok_kind:
        tap(False, "%s: result dtype %s" % (desc, got.dtype), text)
        return
    want, bound = dot_bound(a64, b64, "f32" if out32 else "bf16")
    if not nphelp.within_bound(desc, g, want, bound, text):
        return
    if check:
        tap(re.search(r"check .*: ok", text) is not None, "%s: --check against the CPU reference" % desc, text)
    # the kernel's result token: b16 (bf16 C) or b32 (f32 C, and split K's f32 partials);
    # ksum None: split K where the device's rule splits (its unit count decides), read from the run
    if ksum is None:
        ksum = "dot_ksum_f32" in text
    tok = "32" if out32 or ksum else "16"
    cm = re.search(r"dotcm_\S+_b%s%s(\s|$)" % (tok, "_emu" if emu else ""), text) is not None
    any_cm = "dotcm_" in text
    naive = "dot_naive" in text
    tap((cm and not naive) if want_cm else not any_cm, "%s: %s the bf16 coopmat kernel (%s%s)" %
        (desc, "ran" if want_cm else "did not run", "emulated" if emu else "tensor cores",
         ", b" + tok if want_cm else ""), text)
    if ksum:
        tap(re.search(r"dot_ksum_f32%s\b" % ("" if out32 else "_bf16"), text) is not None,
            "%s: split K summed by dot_ksum_f32%s" % (desc, "" if out32 else "_bf16"), text)


def main():
    # whole tiles of the default layout (128 x 256 blocks): A and B read as they are
    case("128x64 . 64x256, whole tiles, bf16 result", (128, 64), (64, 256), check=True)
    case("128x64 . 64x256, whole tiles, f32 result", (128, 64), (64, 256), out32=True, check=True)
    # padded (f16_pad copies the bf16 bits): two row tiles, two column tiles, edges, K not a multiple of BK
    case("130x72 . 72x260, padded, bf16 result", (130, 72), (72, 260), check=True)
    case("130x72 . 72x260, padded, f32 result", (130, 72), (72, 260), out32=True)
    case("40x24 . 24x36, the default variant takes coopmat", (40, 24), (24, 36), variant=None, check=True)
    case("40x24 . 24x36, the default variant, f32 result", (40, 24), (24, 36), variant=None, out32=True)
    case("16x100 . 100x40: the default keeps m <= 16 off coopmat", (16, 100), (100, 40), variant=None,
         want_cm=False)
    case("batched 3x50x40 . 3x40x70", (3, 50, 40), (3, 40, 70), check=True)
    case("batched 2x33x47 . 2x47x129, f32 result", (2, 33, 47), (2, 47, 129), out32=True)
    # split K: partials in f32, summed in chunk order, rounded once to bf16
    split = {"NXVK_DOT_COOPMAT": "2,2,4,4,32", "NXVK_DOT_COOPMAT_STAGES": "1", "NXVK_DOT_COOPMAT_SPLIT": "3"}
    case("128x320 . 320x128, split K in 3, bf16 result", (128, 320), (320, 128), env=split, ksum=True, check=True)
    case("100x333 . 333x90, split K in 3, f32 result", (100, 333), (333, 90), env=split, out32=True, ksum=True)
    case("batched 2x70x300 . 2x300x50, split K in 3", (2, 70, 300), (2, 300, 50), env=split, ksum=True)
    # other layouts: two stages of 128 x 64, loads two steps ahead, row tiles regrouped, fragment order 1
    case("300x100 . 100x256, 2,2,4,2,32 PREFETCH=2 GROUP=2", (300, 100), (100, 256),
         env={"NXVK_DOT_COOPMAT": "2,2,4,2,32", "NXVK_DOT_COOPMAT_PREFETCH": "2", "NXVK_DOT_COOPMAT_GROUP": "2"})
    case("70x90 . 90x80, ORDER=1, f32 result", (70, 90), (90, 80), env={"NXVK_DOT_COOPMAT_ORDER": "1"}, out32=True)
    # magnitudes beyond f16's range (bf16 has f32's): the CPU reference must not round bf16 inputs to f16
    case("A near 2^40, B near 2^-60, --check", (50, 40), (40, 60), scale=(2.0 ** 40, 2.0 ** -60), check=True)
    case("A near 2^-30, B near 2^20, f32 result, --check", (50, 40), (40, 60), scale=(2.0 ** -30, 2.0 ** 20),
         out32=True, check=True)
    # NaN, infinities and -0
    case("NaN, inf and -0, bf16 result", (40, 64), (64, 48), special=True, check=True)
    case("NaN, inf and -0, f32 result, padded", (37, 50), (50, 66), special=True, out32=True)
    case("NaN, inf and -0, split K", (128, 320), (320, 128), special=True, env=split, ksum=True)
    # the same kernel on the device's tensor cores, where it has bf16 ones
    rc, out, _ = nphelp.nxvk(["info", "--json"])
    try:
        dev = json.loads(out)["devices"][0] if rc == 0 else {}
    except ValueError:
        dev = {}
    if not dev.get("features", {}).get("coopmat_bf16_f32"):
        print("# no bf16 cooperative matrices on %s: the tensor-core cases do not apply" % dev.get("name", "device 0"))
        return
    case("tensor cores: 256x128 . 128x512, whole tiles", (256, 128), (128, 512), check=True, emu=False)
    case("tensor cores: 130x72 . 72x260, padded, f32 result", (130, 72), (72, 260), out32=True, check=True, emu=False)
    case("tensor cores: 40x24 . 24x36, the default variant", (40, 24), (24, 36), variant=None, emu=False)
    case("tensor cores: batched 3x50x40 . 3x40x70", (3, 50, 40), (3, 40, 70), check=True, emu=False)
    case("tensor cores: 128x320 . 320x128, split K in 3", (128, 320), (320, 128), env=split, ksum=True, emu=False)
    case("tensor cores: 1024x2048 . 2048x1024 (split K where the rule splits)", (1024, 2048), (2048, 1024), ksum=None,
         emu=False)
    case("tensor cores: NaN, inf and -0", (40, 64), (64, 48), special=True, check=True, emu=False)
    case("tensor cores: A near 2^40, B near 2^-60", (50, 40), (40, 60), scale=(2.0 ** 40, 2.0 ** -60), check=True,
         emu=False)


nphelp.main(main, TMP)
