#!/usr/bin/python3
"""test_ew16_numpy.py - the cheap f16 / bf16 forms of add, subtract,
multiply and exp (NXVK_EW16, shaders/lib/nx.glsl's nx16_*) give the bits of
the f32 functions rounded once, over every 16-bit pattern.

Modes: 0 (the f32 functions with their denormal tests, as before), all (the
default; f16 add, subtract and multiply kernels in f16 arithmetic where the
device promises f16 RTE and subnormals, simulated here), f32 (all but
those: in f32) and fuzz (the cheap forms acting as the worst device the Vulkan
spec allows: f32 denormal operands and results flushed as NVIDIA does, the
driver's exp2 4 ULP off).  Lavapipe neither flushes nor errs that much, so
fuzz is what shows the guards (bf16's operand test, exp's distance from a
rounding midpoint) cover such a device.  Oracle: numpy, f32 then one
rounding (f16: numpy's float16; bf16: to nearest even on the bits, NaN as a
class).  exp: f16 bit-identical to numpy; bf16 bit-identical to mode 0 and
within 1 bf16 ulp of numpy's f32 exp (nxvk's f32 exp and numpy's may differ
by an f32 ULP).  Single ops (the paired kernels) and a fused graph.
TAP on stdout.
"""
import json
import os
import sys
import tempfile

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import nphelp  # noqa: E402
from nphelp import bits_f32, mismatches16, nxvk, round16, save_bits16, tap  # noqa: E402

TMP = nphelp.scratch("ew16")
MODES = ["0", "all", "fuzz"]
ALL = np.arange(65536, dtype=np.uint16)
OTHER = np.random.default_rng(28).permutation(ALL)


def oracle(dt, op, a, b):
    x, y = bits_f32(dt, a), bits_f32(dt, b)
    with np.errstate(all="ignore"):
        r = {"add": lambda: x + y, "subtract": lambda: x - y, "multiply": lambda: x * y, "exp": lambda: np.exp(x)}[op]()
    return round16(dt, r)


def ulps16(dt, got, want):
    """distance in 16-bit steps on the monotone key (finite values)"""
    def key(b):
        b = b.astype(np.int64)
        return np.where(b & 0x8000, -(b & 0x7fff), b & 0x7fff)
    return np.abs(key(got) - key(want))


def cvt_forms():
    """f16 conversions to run the f16 cases under (NXVK_F16_CVT): the
    integer ones, and where the device promises f16 RTE the driver's with
    the software subnormal path and as on a device that promises f16
    subnormals (DenormPreserve 16: the output takes no test at all)"""
    rc, out, _ = nxvk(["info", "--json"])
    dev = json.loads(out)["devices"][0] if rc == 0 else {}
    fc, feat = dev.get("float_controls", {}), dev.get("features", {})
    forms = [("sw", {"NXVK_F16_CVT": "sw"})]
    if fc.get("rounding_mode_rte_f16") and feat.get("f16"):
        forms += [("hw", {"NXVK_F16_CVT": "hw"}),
                  ("hw+preserve", {"NXVK_F16_CVT": "hw", "NXVK_TEST_INJECT": "f16_denorm_preserve"})]
    return forms


CVT = cvt_forms()


def run(args, mode, out, extra=None):
    rc, _, err = nxvk(["run"] + args, env=dict(extra or {}, NXVK_EW16=mode), timeout=300)
    if rc != 0:
        return None, err.strip()
    return {k: np.load(v).view(np.uint16) for k, v in out.items()}, None


def single_ops(dt):
    d = tempfile.mkdtemp(prefix=dt + "_", dir=TMP)
    pa, pb, po = (os.path.join(d, n) for n in ("a.npy", "b.npy", "o.npy"))
    save_bits16(pa, dt, ALL)
    save_bits16(pb, dt, OTHER)
    forms = CVT if dt == "f16" else [("", {})]
    for op in ("add", "subtract", "multiply", "exp"):
        want = oracle(dt, op, ALL, OTHER)
        base = None
        # mode 0 once, under the last form
        modes = MODES + (["f32"] if dt == "f16" else [])   # f16: without the f16-arithmetic kernels too
        runs = [(f, m, "") for f in forms for m in modes if f is forms[-1] or m != "0"]
        # the exact path out of the unrolled loop (NXVK_EW16_SPLIT): the
        # invocation's loop at 3 words a round a grid apart, the workgroup's
        # queue at the GPUs' 4 blocked; with vectors, 1 and 2 a round
        # (v: with 16-byte vector loads, NXVK_EW16_VEC)
        runs += [(f, m, sp) for f in forms for m in ("all", "fuzz") for sp in ("1", "2", "1v", "2v")]
        for (form, extra), mode, sp in runs:
            if sp:
                extra = dict(extra, NXVK_EW16_SPLIT=sp[0], NXVK_EW16_UNROLL={"1": "3", "2": "4", "1v": "3", "2v": "8"}[sp],
                             NXVK_EW_BLOCKED="0" if sp[0] == "1" else "1", NXVK_EW16_VEC="1" if "v" in sp else "0")
            got, err = run(["--op", op, pa] + ([] if op == "exp" else [pb]) + ["-o", po], mode, {"o": po}, extra)
            mode = "%s%s%s" % (mode, " F16_CVT=" + form if form else "", " SPLIT=" + sp if sp else "")
            if got is None:
                tap(False, "%s %s NXVK_EW16=%s: run" % (op, dt, mode), err)
                continue
            got = got["o"]
            if base is None:
                base = got
            bad = mismatches16(dt, got, want)
            what = "every %s pattern" % dt + ("" if op == "exp" else " with a permutation of them")
            if op == "exp" and dt == "bf16":
                same = mismatches16(dt, got, base)
                far = bad[ulps16(dt, got[bad], want[bad]) > 1]
                tap(len(same) == 0 and len(far) == 0,
                    "exp bf16 NXVK_EW16=%s: %s bit-identical to mode 0, within 1 ulp of numpy's f32 exp "
                    "(%d differ by 1)" % (mode, what, len(bad)),
                    ["[%d] 0x%04x: got 0x%04x, mode 0 0x%04x, numpy 0x%04x" % (i, ALL[i], got[i], base[i], want[i])
                     for i in list(same[:3]) + list(far[:3])])
            else:
                tap(len(bad) == 0, "%s %s NXVK_EW16=%s: %s bit-identical to numpy" % (op, dt, mode, what),
                    ["%d differ; [%d] 0x%04x, 0x%04x: got 0x%04x want 0x%04x" % (
                        len(bad), i, ALL[i], OTHER[i], got[i], want[i]) for i in bad[:3]])


def fused(dt, extra=None, label=""):
    """exp(a + b) * b - a and exp(a) * a, fused, every mode against mode 0
    and the oracle step by step (each intermediate rounded to the dtype)"""
    d = tempfile.mkdtemp(prefix=dt + "_g_", dir=TMP)
    a, b = ALL[:65535], OTHER[:65535]   # odd count: the last word's upper half
    save_bits16(os.path.join(d, "a.npy"), dt, a)
    save_bits16(os.path.join(d, "b.npy"), dt, b)
    graph = {"inputs": {"a": "a.npy", "b": "b.npy"},
             "ops": [{"op": "add", "in": ["a", "b"], "out": "s"},
                     {"op": "exp", "in": ["s"], "out": "t"},
                     {"op": "multiply", "in": ["t", "b"], "out": "u"},
                     {"op": "subtract", "in": ["u", "a"], "out": "v"},
                     {"op": "exp", "in": ["a"], "out": "e"},
                     {"op": "multiply", "in": ["e", "a"], "out": "w"}],
             "outputs": {"v": "v.npy", "w": "w.npy"}}
    with open(os.path.join(d, "g.json"), "w") as f:
        json.dump(graph, f)
    s = oracle(dt, "add", a, b)
    t = oracle(dt, "exp", s, s)
    v = oracle(dt, "subtract", oracle(dt, "multiply", t, b), a)
    w = oracle(dt, "multiply", oracle(dt, "exp", a, a), a)
    base = None
    for mode in MODES:
        got, err = run([os.path.join(d, "g.json")], mode, {k: os.path.join(d, k + ".npy") for k in ("v", "w")}, extra)
        if got is None:
            tap(False, "fused %s NXVK_EW16=%s: run" % (dt, mode), err)
            continue
        if base is None:
            base = got
        same = [k for k in got if len(mismatches16(dt, got[k], base[k]))]
        # f16: exactly numpy's steps; bf16: exp may differ from numpy's by an ulp, which the next steps carry
        exact = [k for k, want in (("v", v), ("w", w)) if len(mismatches16(dt, got[k], want))]
        tap(not same and (dt == "bf16" or not exact),
            "fused exp(a + b) * b - a and exp(a) * a, %s NXVK_EW16=%s%s: bit-identical to mode 0%s" % (
                dt, mode, label, "" if dt == "bf16" else " and to numpy step by step"),
            None if not same and (dt == "bf16" or not exact) else "differ from mode 0: %s; from numpy: %s" % (same, exact))


def split_broadcast(dt):
    """NXVK_EW16_SPLIT=1 and 2, with and without NXVK_EW16_VEC, on broadcast
    operands and odd counts (the split kernels' own loads, the vectors' last
    words): add, multiply and exp against numpy"""
    rng = np.random.default_rng(16)
    d = tempfile.mkdtemp(prefix=dt + "_b_", dir=TMP)
    for sa, sb in (((7, 1), (1, 5)), ((3, 5), (5,)), ((1,), (9,)), ((2, 1, 3), (1, 7, 1)), ((999,), (999,)),
                   ((1001,), (1001,)), ((1007,), (1007,)), ((8, 125), (125,))):
        a = rng.choice(ALL, size=sa)
        b = rng.choice(ALL, size=sb)
        pa, pb, po = (os.path.join(d, n) for n in ("a.npy", "b.npy", "o.npy"))
        save_bits16(pa, dt, a)
        save_bits16(pb, dt, b)
        A, B = np.broadcast_arrays(a, b)
        for sp, unroll, wg in (("1", "3", "64"), ("2", "4", "128"), ("1v", "2", "64"), ("2v", "1", "256")):
            for op in ("add", "multiply", "exp"):
                args = ["--op", op, pa] + ([] if op == "exp" else [pb]) + ["-o", po]
                got, err = run(args, "all", {"o": po}, {"NXVK_EW16_SPLIT": sp[0], "NXVK_EW16_UNROLL": unroll,
                                                        "NXVK_EW_BLOCKED": "1", "NXVK_EW16_WG": wg,
                                                        "NXVK_EW16_VEC": "1" if "v" in sp else "0"})
                if got is None:
                    tap(False, "%s %s %s x %s SPLIT=%s: run" % (dt, op, sa, sb, sp), err)
                    continue
                got = got["o"].ravel()
                want = oracle(dt, op, a.ravel(), a.ravel()) if op == "exp" else oracle(dt, op, A.ravel(), B.ravel())
                bad = mismatches16(dt, got, want) if len(got) == len(want) else np.arange(len(want))
                if op == "exp" and dt == "bf16" and len(got) == len(want):
                    bad = bad[ulps16(dt, got[bad], want[bad]) > 1]
                tap(len(bad) == 0, "%s %s %s%s SPLIT=%s (UNROLL %s, WG %s): %s" % (
                    dt, op, sa, "" if op == "exp" else " x %s" % (sb,), sp, unroll, wg,
                    "within 1 ulp of numpy" if op == "exp" and dt == "bf16" else "bit-identical to numpy"),
                    None if len(bad) == 0 else "%d differ" % len(bad))


def knob():
    for var, val in (("NXVK_EW16", "fast"), ("NXVK_EW16_UNROLL", "9"), ("NXVK_EW16_SPLIT", "3"),
                     ("NXVK_EW16_WG", "100")):
        rc, _, err = nxvk(["run", "--op", "exp", '{"dtype":"f16","shape":[1],"data":[1]}'], env={var: val})
        ok = rc == 2 and "%s=%s" % (var, val) in err
        tap(ok, "%s=%s refused (exit 2) naming the variable" % (var, val), None if ok else err)


def main():
    for dt in ("f16", "bf16"):
        single_ops(dt)
        fused(dt)
        # the GPUs' form: 4 words a round, each round one contiguous block
        fused(dt, {"NXVK_EW16_UNROLL": "4", "NXVK_EW_BLOCKED": "1"}, " (NXVK_EW16_UNROLL=4, blocked)")
        split_broadcast(dt)
    knob()


nphelp.main(main, TMP)
