#!/usr/bin/python3
"""test_ew16_table.py - f16 / bf16 unary ops by table (NXVK_EW16_TABLE,
src/ops/elementwise.c, shaders/lut16.comp): every unary float op of
elementwise.def over every one of the 65 536 16-bit patterns, the table
(NXVK_EW16_TABLE=1) against the kernels that compute (0) and against numpy: the op in float64,
rounded to float32 and then once to the 16-bit dtype (f16: numpy's
float16 cast; bf16: to nearest even on the bits), NaN as a class (the
table's NaN bits are the CPU reference's).  Then the tails (counts that are
not whole 16-byte vectors, odd counts: the last word's upper half is 0), a
2-D shape, and a fused graph (which keeps the computing kernels).
TAP on stdout.
"""
import json
import math
import os
import re
import sys
import tempfile

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import nphelp  # noqa: E402
from nphelp import ROOT, bits_f32, check, mismatches16, nxvk, round16, save_bits16, tap  # noqa: E402

TMP = nphelp.scratch("ew16t")
ALL = np.arange(65536, dtype=np.uint16)

OPS = []
with open(os.path.join(ROOT, "src", "ops", "elementwise.def")) as f:
    for line in f:
        m = re.match(r"EW\((\w+),\s*UNARY,\s*(FLOAT|SIGNED|ALL)\s*,", line)
        if m:
            OPS.append(m.group(1))


def _round_half_away(v):
    return np.where(np.isfinite(v), np.copysign(np.floor(np.abs(v) + 0.5), v), v)


def _erf_inv(v):
    def one(y):
        if math.isnan(y) or abs(y) > 1:
            return math.nan
        if abs(y) == 1:
            return math.copysign(math.inf, y)
        ay = abs(y)
        lo, hi = 0.0, 30.0   # bisection, then Newton, in float64
        for _ in range(60):
            mid = 0.5 * (lo + hi)
            if math.erf(mid) < ay:
                lo = mid
            else:
                hi = mid
        x = 0.5 * (lo + hi)
        for _ in range(3):
            d = 2 / math.sqrt(math.pi) * math.exp(-x * x)
            x -= ((math.erf(x) - ay) if ay < 0.5 else ((1 - ay) - math.erfc(x))) / d
        return math.copysign(x, y)
    return np.vectorize(one)(v)


NUMPY = {"exp": np.exp, "log": np.log, "sqrt": np.sqrt, "rsqrt": lambda v: 1 / np.sqrt(v), "abs": np.abs,
         "negate": np.negative, "sigmoid": lambda v: 1 / (1 + np.exp(-v)), "tanh": np.tanh, "floor": np.floor,
         "ceil": np.ceil, "round": _round_half_away, "sign": np.sign, "sin": np.sin, "cos": np.cos,
         "expm1": np.expm1, "log1p": np.log1p, "erf": np.vectorize(math.erf), "tan": np.tan, "asin": np.arcsin,
         "acos": np.arccos, "atan": np.arctan, "sinh": np.sinh, "cosh": np.cosh, "asinh": np.arcsinh,
         "acosh": np.arccosh, "atanh": np.arctanh, "cbrt": np.cbrt, "erfc": np.vectorize(math.erfc),
         "erf_inv": _erf_inv}


def oracle(dt, op, bits):
    with np.errstate(all="ignore"):
        return round16(dt, NUMPY[op](bits_f32(dt, bits).astype(np.float64)).astype(np.float32))


MODES = ["0", "1"]


def run_graph(graph, d, mode, outs, fusion=False, table=True):
    """run a graph under NXVK_EW16_TABLE=mode: its outputs, or None and why;
    table: whether the table's kernel is to run where the mode is not 0"""
    with open(os.path.join(d, "g.json"), "w") as f:
        json.dump(graph, f)
    rc, _, err = nxvk(["run"] + ([] if fusion else ["--no-fusion"]) + [os.path.join(d, "g.json")],
                      env={"NXVK_EW16_TABLE": mode, "NXVK_KERNEL_STATS": "1"})
    if rc != 0:
        return None, err.strip()
    # the kernels built (NXVK_KERNEL_STATS): lut16 where the table is on
    kernels = set(re.findall(r"^(\S+) \[", err, re.M))
    want = {"0": None, "1": "lut16"}[mode]
    used = {k for k in kernels if k.startswith("lut16")}
    if not table or want is None:
        if used:
            return None, "the table's kernel ran: %s" % sorted(used)
    elif used != {want}:
        return None, "kernels built: %s (want %s)" % (sorted(kernels), want)
    return {k: np.load(os.path.join(d, v)).view(np.uint16) for k, v in outs.items()}, None


def every_pattern(dt):
    """every unary op on every 16-bit pattern, one graph a mode (each op its own kernel: --no-fusion)"""
    d = tempfile.mkdtemp(prefix=dt + "_", dir=TMP)
    save_bits16(os.path.join(d, "a.npy"), dt, ALL)
    got = {}
    for mode in MODES:
        outs = {o: "%s_%s.npy" % (o, mode) for o in OPS}
        g = {"inputs": {"a": "a.npy"}, "ops": [{"op": o, "in": ["a"], "out": o} for o in OPS], "outputs": outs}
        got[mode], err = run_graph(g, d, mode, outs)
        tap(got[mode] is not None, "%s: %d unary ops on every pattern, NXVK_EW16_TABLE=%s: run" % (dt, len(OPS), mode),
            err)
    if any(got[m] is None for m in MODES):
        return
    for o in OPS:
        want = oracle(dt, o, ALL)
        diag = []
        for mode in MODES:
            bad = mismatches16(dt, got[mode][o], want)
            diag += ["TABLE=%s: %d differ from numpy; [0x%04x]: got 0x%04x want 0x%04x" % (
                mode, len(bad), i, got[mode][o][i], want[i]) for i in bad[:2]]
            if mode != "0":
                same = mismatches16(dt, got[mode][o], got["0"][o])
                diag += ["TABLE=%s: %d differ from TABLE=0; [0x%04x]: 0x%04x against 0x%04x" % (
                    mode, len(same), i, got[mode][o][i], got["0"][o][i]) for i in same[:2]]
        tap(not diag, "%s %s: every pattern, the table bit-identical to the kernel that computes and to numpy "
            "(float64, then float32, then %s; NaN as a class)" % (o, dt, dt), diag)


def tails(dt):
    """counts around whole vectors (8 elements) and odd counts: the table's
    vectors, its last words one a word, the zero upper half of an odd count's
    last word; and a 2-D shape"""
    rng = np.random.default_rng(16)
    d = tempfile.mkdtemp(prefix=dt + "_t_", dir=TMP)
    shapes = [(1,), (2,), (3,), (7,), (8,), (9,), (15,), (16,), (17,), (4095,), (4097,), (65535,), (3, 333), (2, 5, 7)]
    ops = ["exp", "tanh", "cos", "abs"]
    inputs, gops, outs = {}, [], {}
    arrays = {}
    for k, s in enumerate(shapes):
        a = rng.choice(ALL, size=s).astype(np.uint16)
        arrays["a%d" % k] = a
        save_bits16(os.path.join(d, "a%d.npy" % k), dt, a)
        inputs["a%d" % k] = "a%d.npy" % k
        for o in ops:
            gops.append({"op": o, "in": ["a%d" % k], "out": "%s%d" % (o, k)})
            outs["%s%d" % (o, k)] = "%s%d.npy" % (o, k)
    for mode in MODES[1:]:
        got, err = run_graph({"inputs": inputs, "ops": gops, "outputs": outs}, d, mode, outs)
        if got is None:
            tap(False, "%s tails NXVK_EW16_TABLE=%s: run" % (dt, mode), err)
            continue
        diag = []
        for k, s in enumerate(shapes):
            for o in ops:
                g = got["%s%d" % (o, k)]
                want = oracle(dt, o, arrays["a%d" % k])
                if g.shape != want.shape:
                    diag.append("%s %s: shape %s" % (o, s, g.shape))
                    continue
                bad = mismatches16(dt, g.ravel(), want.ravel())
                if len(bad):
                    diag.append("%s %s: %d differ, first at %d" % (o, s, len(bad), bad[0]))
        tap(not diag, "%s NXVK_EW16_TABLE=%s: exp tanh cos abs on %d shapes (1 to 65535 elements, 2-D and 3-D) "
            "against numpy" % (dt, mode, len(shapes)), diag[:6])


def fused(dt):
    """a fused kernel (tanh(a) * a) keeps the code that computes, with the
    table on or off: the same bits; a unary op the planner leaves on its own
    (exp(a): no neighbour of its shape to fuse with) takes the table"""
    d = tempfile.mkdtemp(prefix=dt + "_g_", dir=TMP)
    a = ALL[:65535]
    save_bits16(os.path.join(d, "a.npy"), dt, a)
    tw = [{"op": "tanh", "in": ["a"], "out": "t"}, {"op": "multiply", "in": ["t", "a"], "out": "w"}]
    graphs = [("tanh(a) * a", {"inputs": {"a": "a.npy"}, "ops": tw, "outputs": {"w": "w.npy"}}, False),
              ("tanh(a) * a and exp(a)", {"inputs": {"a": "a.npy"}, "ops": tw + [{"op": "exp", "in": ["a"], "out": "e"}],
                                          "outputs": {"w": "w.npy", "e": "e.npy"}}, True)]
    for label, g, table in graphs:
        res = {}
        for mode in ("0", "1"):
            res[mode], err = run_graph(g, d, mode, g["outputs"], fusion=True, table=table)
            if res[mode] is None:
                tap(False, "fused %s, %s NXVK_EW16_TABLE=%s: run" % (label, dt, mode), err)
                break
        else:
            diff = [k for k in g["outputs"] if len(mismatches16(dt, res["1"][k], res["0"][k]))]
            bad_e = mismatches16(dt, res["1"]["e"], oracle(dt, "exp", a)) if "e" in g["outputs"] else []
            check(not diff and not len(bad_e), "fused %s, %s: NXVK_EW16_TABLE=1 (%s) bit-identical to 0%s" % (
                label, dt, "exp by table" if table else "no table", ", exp against numpy" if table else ""),
                "differ: %s; exp: %d from numpy" % (diff, len(bad_e)))


def cpu_default():
    """unset, the rule: on a CPU device (lavapipe) no op takes the table"""
    rc, out, _ = nxvk(["info", "--json"])
    if rc != 0 or json.loads(out)["devices"][0].get("type") != "cpu":
        tap(True, "# SKIP the rule on a CPU device: this device is not one")
        return
    d = tempfile.mkdtemp(prefix="rule_", dir=TMP)
    save_bits16(os.path.join(d, "a.npy"), "f16", ALL[:1000])
    rc, _, err = nxvk(["run", "--op", "tanh", os.path.join(d, "a.npy"), "-o", os.path.join(d, "o.npy")],
                      env={"NXVK_EW16_TABLE": None, "NXVK_KERNEL_STATS": "1"})
    check(rc == 0 and "lut16" not in err and "ew_tanh_f16" in err,
          "NXVK_EW16_TABLE unset on a CPU device: tanh f16 computed (ew_tanh_f16), no table", err)


def bad_knob():
    pa = os.path.join(TMP, "k.npy")
    np.save(pa, np.ones(3, np.float16))
    rc, _, err = nxvk(["run", "--op", "exp", pa], env={"NXVK_EW16_TABLE": "2"})
    check(rc != 0 and "NXVK_EW16_TABLE" in err, "NXVK_EW16_TABLE=2 is refused, naming the variable", err.strip())


def main():
    for dt in ("f16", "bf16"):
        every_pattern(dt)
        tails(dt)
        fused(dt)
    cpu_default()
    bad_knob()


nphelp.main(main, TMP)
