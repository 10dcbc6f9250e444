#!/usr/bin/python3
"""test_mvb.py - dot_mvb.comp, f32 skinny products of the rows form with B
held in registers (src/ops/dot_mvb.c, issue 30): taken by default for f32
with n = 9..16 and K a multiple of 4, and for every n = 2..16 under
NXVK_DOT_MVB=CG,WG,RB,RU[,S[,F]].  Column groups 1, 2 and 4 (the
transposing tree's plain and kept steps on lavapipe's subgroups of 8, B's
columns permuted by lane), rows
not a multiple of the block or of the step, K not a multiple of a segment,
split K summed by the last workgroup or by a second pass, chunks a
subgroup has no segment of, batches, NaN and infinities.  Each result is
checked against numpy (f64 products) under dot's bound n * eps(f32) *
sum|a*b|, some also by --check against the CPU reference; NXVK_KERNEL_STATS=1
names the kernel built, so each case also tells that dot_mvb ran (or that
it did not where it must not).  Lavapipe's subgroups of 8 keep every step
of the tree a transposing one: its plain steps (subgroups of more than 16
lanes) run only on GPUs, where conformance's dot and bench's check cover
them.  TAP."""
import os
import re
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import nphelp  # noqa: E402
from math_oracles import dot_bound  # noqa: E402
from nphelp import check as tap  # noqa: E402

TMP = nphelp.scratch("mvb")
rng = np.random.default_rng(3031)


def case(desc, ashape, bshape, layout="0,0,0,0", special=False, check=False, want=True, env=None, name=None):
    a = rng.standard_normal(ashape).astype(np.float32)
    b = rng.standard_normal(bshape).astype(np.float32)
    if special:
        a[..., 2, 3] = np.nan
        a[..., 1, -1] = np.inf
        b[..., -1, 1] = -np.inf
    pa, pb, out = (os.path.join(TMP, f) for f in ("a.npy", "b.npy", "o.npy"))
    np.save(pa, a)
    np.save(pb, b)
    e = {"NXVK_KERNEL_STATS": "1", "NXVK_DOT_MVB": layout}  # None: unset
    e.update(env or {})
    _, got, text = nphelp.run_dot(pa, pb, out, None, check, env=e)
    if got is None:
        tap(False, desc, text)
        return
    want_v, bound = dot_bound(a.astype(np.float64), b.astype(np.float64), "f32")
    if not nphelp.within_bound(desc, got.astype(np.float64), want_v, bound, text):
        return
    if check:
        tap(": ok" in text, "%s: --check against the CPU reference" % desc, text)
    ran = re.search(r"dot_mvb_n\d+g\d+r\d+u\d+w\d+s\d+_f32\b", text) is not None
    tap(ran == want, "%s: %s dot_mvb" % (desc, "ran" if want else "did not run"), text)
    if name:  # the layout the rule picks, as the kernel's name says
        tap(re.search(name, text) is not None, "%s: kernel %s" % (desc, name), text)


def main():
    # the rule's layout (NXVK_DOT_MVB unset): n = 9..16
    for nn in (9, 12, 13, 16):
        case("n = %d 200x1000 . 1000x%d (the rule's)" % (nn, nn), (200, 1000), (1000, nn), layout=None,
             check=nn in (9, 16), name=r"dot_mvb_n%dg%sw\d+s\d+_f32" % (nn, "2r32u2" if nn == 16 else "1r64u2"))
    case("n = 16 2000x4096 . 4096x16 (the rule's, split K folded)", (2000, 4096), (4096, 16), layout=None, check=True)
    case("batched 3x77x1000 . 3x1000x11 (the rule's)", (3, 77, 1000), (3, 1000, 11), layout=None)
    case("NaN and inf, n = 16", (64, 1000), (1000, 16), layout=None, special=True)
    # the layouts: column groups, rows a step, rows a block, workgroup sizes, split K and how it is summed
    case("CG=1 (16 columns a lane), n = 16", (150, 2000), (2000, 16), layout="1,0,0,0")
    case("CG=4 (4 columns a lane), n = 10", (150, 2000), (2000, 10), layout="4,0,0,0", check=True)
    case("RU=3, RB=10 (rows a multiple of neither)", (101, 1000), (1000, 16), layout="2,0,10,3")
    case("RU=1 RB=1", (40, 512), (512, 14), layout="2,0,1,1")
    case("WG=32, S=3 folded (K not a multiple of a chunk)", (90, 3000), (3000, 16), layout="2,32,0,0,3")
    case("S=4, second pass (F=2)", (90, 3000), (3000, 12), layout="2,0,0,0,4,2")
    case("WG=256 S=2: the last chunk has segments for few subgroups", (70, 2100), (2100, 16), layout="2,256,0,0,2")
    case("K = 4 (one vector; most subgroups have no segment)", (50, 4), (4, 16), layout="0,0,0,0")
    case("n = 2 under NXVK_DOT_MVB", (300, 1000), (1000, 2), layout="4,0,0,0", check=True)
    case("n = 5 under NXVK_DOT_MVB, batched, split K", (2, 40, 2048), (2, 2048, 5), layout="1,0,0,2,3")
    case("CG=4, n = 13, batched (the last group's 3 columns past n)", (2, 60, 1000), (2, 1000, 13),
         layout="4,0,0,0")
    case("CG=2 RB=32, n = 12 (the second group's last 4 columns past n)", (130, 1000), (1000, 12), layout="2,0,32,0",
         check=True)
    # where it must not run
    case("K % 4 != 0 stays on dot_mv", (100, 1001), (1001, 16), layout=None, want=False)
    case("n = 8 unset stays on dot_mv", (100, 1000), (1000, 8), layout=None, want=False)
    case("NXVK_DOT_MVB=off", (100, 1000), (1000, 16), layout="off", want=False)
    case("NXVK_DOT_MVR set keeps its products", (100, 1000), (1000, 16), layout=None, want=False,
         env={"NXVK_DOT_MVR": "4,2,2,2"})
    case("m < n <= 16 is the columns form", (12, 1000), (1000, 16), layout=None, want=False)


nphelp.main(main, TMP)
