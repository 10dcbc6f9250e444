#!/usr/bin/python3
"""test_intops_numpy.py - numpy as the oracle for the integer and logical ops
([nx-ops] intops): bitwise_and/or/xor/not, left_shift, right_shift,
count_leading_zeros, population_count, quotient on every integer dtype;
logical_and/or/xor/not, is_nan, is_infinity on every dtype (f16 f32 f64,
integers, bool); the all and any reductions; argmax/argmin with tie_break
"high"; reverse and eye.

Inputs hold each dtype's edge values (INT_MIN, INT_MAX, -1, all ones, shift
counts 0, 1, width-1, width, width+1, negative and huge; NaN, +-inf, +-0,
denormals) beside random ones.  Shifts follow numpy (whose rule nxvk-run(1)
documents: a count outside 0..width-1 shifts every bit out); quotient is
truncating division with x/0 = 0 (nxvk's integer divide rule) and
INT_MIN/-1 = INT_MIN; clz and popcount count in the dtype's width.  Every
result must be bit-identical (and of the right dtype).  TAP on stdout.
"""
import json
import os
import shutil
import sys
import tempfile

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import nphelp  # noqa: E402
from nphelp import check as tap, save_v2  # noqa: E402

np.seterr(all="ignore")
TMP = tempfile.mkdtemp(prefix="nxvk_intops_")
INTS = {"i8": np.int8, "i16": np.int16, "i32": np.int32, "i64": np.int64,
        "u8": np.uint8, "u16": np.uint16, "u32": np.uint32, "u64": np.uint64}
FLOATS = {"f16": np.float16, "f32": np.float32, "f64": np.float64}
N = 300  # both sides of a 256-wide workgroup

# Checks are batched: one graph of every pending op runs with --check (the
# CPU reference must agree too), op by op and fused, and each output is then
# judged against numpy.  Few nxvk invocations keep the test quick.
_pending = []


NAMES = {np.dtype(t): n for n, t in list(INTS.items()) + list(FLOATS.items())}
NAMES[np.dtype(np.bool_)] = "bool"
covered = {}   # op -> dtypes checked


class Bf16:
    """A bf16 tensor (its uint16 bits), written as '<V2' the way np.save
    writes ml_dtypes' bfloat16."""

    def __init__(self, f32):
        self.bits = (np.asarray(f32, np.float32).view(np.uint32) >> 16).astype(np.uint16)

    def save(self, path):
        save_v2(path, self.bits)


def check(desc, op, inputs, want, attrs=None):
    a = inputs[0]
    covered.setdefault(op, set()).add("bf16" if isinstance(a, Bf16) else NAMES[a.dtype])
    _pending.append((desc, op, inputs, want, attrs))


def flush():
    global _pending
    batch, _pending = _pending, []
    if not batch:
        return
    gdir = tempfile.mkdtemp(dir=TMP)
    os.makedirs(os.path.join(gdir, "out"))
    ins, nodes, outs = {}, [], {}
    for i, (desc, op, inputs, want, attrs) in enumerate(batch):
        names = []
        for j, a in enumerate(inputs):
            n = "i%d_%d" % (i, j)
            if isinstance(a, Bf16):
                a.save(os.path.join(gdir, n + ".npy"))
            else:
                np.save(os.path.join(gdir, n + ".npy"), a)
            ins[n] = n + ".npy"
            names.append(n)
        node = {"op": op, "in": names, "out": "o%d" % i}
        if attrs is not None:
            node["attrs"] = attrs
        nodes.append(node)
        outs["o%d" % i] = "out/o%d.npy" % i
    gpath = os.path.join(gdir, "g.json")
    with open(gpath, "w") as f:
        json.dump({"inputs": ins, "ops": nodes, "outputs": outs}, f)
    got = {}
    for mode in (["--no-fusion"], []):
        rc, so, se = nphelp.nxvk(["run", gpath, "--check"] + mode, cwd=gdir)
        tap(rc == 0, "graph of %d ops (%s) runs and agrees with the CPU reference" % (
            len(nodes), "op by op" if mode else "fused"), (so[-2000:] + se).strip())
        for i in range(len(batch)):
            f = os.path.join(gdir, "out", "o%d.npy" % i)
            r = np.load(f) if rc == 0 and os.path.exists(f) else None
            if mode:
                got[i] = r
            elif r is not None and got[i] is not None and not same(r, got[i]):
                tap(False, "%s: fused differs from op by op" % batch[i][0])
    for i, (desc, op, inputs, want, attrs) in enumerate(batch):
        g = got[i]
        diag = None
        if g is None:
            diag = "no result"
        elif not same(g, want) and isinstance(want, Bf16):
            diag = "bf16 bits differ: got %s" % g.view("<u2")[:8]
        elif not same(g, want):
            bad = np.flatnonzero(np.asarray(g != want).reshape(-1)) if g.shape == want.shape else []
            diag = "dtype %s want %s, shape %s want %s; first differences at %s: got %s want %s" % (
                g.dtype, want.dtype, g.shape, want.shape, list(bad[:5]),
                g.reshape(-1)[bad[:5]] if len(bad) else None, want.reshape(-1)[bad[:5]] if len(bad) else None)
        tap(diag is None, desc, diag)


def same(got, want):
    """Bit-identical, dtype included (NaN as NaN)."""
    if isinstance(want, Bf16):
        return (got is not None and got.dtype.kind == "V" and got.dtype.itemsize == 2 and
                got.shape == want.bits.shape and np.array_equal(got.view("<u2"), want.bits))
    if got is None or got.dtype != want.dtype or got.shape != want.shape:
        return False
    if want.dtype.kind == "f":
        return bool(np.all((got == want) & (np.signbit(got) == np.signbit(want)) |
                           (np.isnan(got) & np.isnan(want))))
    return bool(np.array_equal(got, want))


def int_edges(dt):
    t = np.iinfo(INTS[dt])
    w = t.bits
    v = [0, 1, 2, 3, 5, 7, t.max, t.max - 1, t.min, t.min + 1, w - 1, w, w + 1, 2 * w, 100,
         (1 << (w - 1)) - 1 if t.min == 0 else -1, 0x55 & t.max]
    if t.min < 0:
        v += [-1, -2, -3, -7, -w, -(w - 1), -100, t.min // 2]
    else:
        v += [t.max // 2, t.max // 2 + 1]
    return np.array(v, dtype=object)


def int_values(dt, rng):
    """Edge values then random ones, N in all, as Python ints (exact for u64)."""
    t = np.iinfo(INTS[dt])
    e = list(int_edges(dt))
    r = [int(x) for x in rng.integers(t.min, t.max, N - len(e), dtype=INTS[dt], endpoint=True)]
    return np.array(e + r, dtype=object)


def wrap(x, dt):
    t = np.iinfo(INTS[dt])
    m = 1 << t.bits
    x = int(x) % m
    return x - m if t.min < 0 and x > t.max else x


def arr(vals, dt):
    return np.array([wrap(v, dt) for v in vals], dtype=INTS[dt])


def shift_pairs(dt, rng):
    """Values x counts: every edge value shifted by every edge count."""
    w = np.iinfo(INTS[dt]).bits
    signed = np.iinfo(INTS[dt]).min < 0
    counts = [0, 1, 2, w // 2, w - 2, w - 1, w, w + 1, 2 * w, 127]
    if signed:
        counts += [-1, -w, int(np.iinfo(INTS[dt]).min)]
    else:
        counts += [int(np.iinfo(INTS[dt]).max)]
    xs = list(int_edges(dt))
    a = [x for x in xs for _ in counts]
    b = [c for _ in xs for c in counts]
    return np.array(a, dtype=object), np.array([wrap(c, dt) for c in b], dtype=object)


def np_shift(a, b, dt, left):
    """numpy's own shift (np.left_shift / np.right_shift), elementwise on
    the dtype: numpy defines counts >= width (and negative ones, taken as
    unsigned) as shifting every bit out."""
    x, c = arr(a, dt), arr(b, dt)
    return (np.left_shift if left else np.right_shift)(x, c)


def main():
    rng = np.random.default_rng(29)
    for dt in INTS:
        w = np.iinfo(INTS[dt]).bits
        a = int_values(dt, rng)
        b = np.array(list(int_edges(dt))[::-1] + list(a[len(int_edges(dt)):][::-1]), dtype=object)
        x, y = arr(a, dt), arr(b, dt)
        check("bitwise_and %s" % dt, "bitwise_and", [x, y], np.bitwise_and(x, y))
        check("bitwise_or %s" % dt, "bitwise_or", [x, y], np.bitwise_or(x, y))
        check("bitwise_xor %s" % dt, "bitwise_xor", [x, y], np.bitwise_xor(x, y))
        check("bitwise_not %s" % dt, "bitwise_not", [x], np.invert(x))
        sa, sb = shift_pairs(dt, rng)
        sx, sy = arr(sa, dt), arr(sb, dt)
        check("left_shift %s by 0..width+1, negative and huge counts" % dt, "left_shift", [sx, sy],
              np_shift(sa, sb, dt, True))
        check("right_shift %s (arithmetic if signed) by 0..width+1, negative and huge counts" % dt,
              "right_shift", [sx, sy], np_shift(sa, sb, dt, False))
        # a count broadcast from a scalar
        c = np.array(w - 1, dtype=INTS[dt])
        check("left_shift %s by a broadcast width-1" % dt, "left_shift", [x, c], np.left_shift(x, c))
        m = (1 << w) - 1
        check("count_leading_zeros %s" % dt, "count_leading_zeros", [x],
              arr([w - (int(v) & m).bit_length() for v in a], dt))
        check("population_count %s" % dt, "population_count", [x],
              arr([bin(int(v) & m).count("1") for v in a], dt))
        # quotient: truncating, x/0 = 0, INT_MIN/-1 wraps to INT_MIN
        q = [0 if int(d) == 0 else abs(int(n)) // abs(int(d)) * (1 if (int(n) < 0) == (int(d) < 0) else -1)
             for n, d in zip(a, b)]
        check("quotient %s (x/0 = 0, INT_MIN/-1 = INT_MIN)" % dt, "quotient", [x, y], arr(q, dt))
        z = (x % 3 == 0).astype(INTS[dt]) * x
        for op, fn in (("logical_and", np.logical_and), ("logical_or", np.logical_or),
                       ("logical_xor", np.logical_xor)):
            check("%s %s" % (op, dt), op, [z, y], fn(z, y))
        check("logical_not %s" % dt, "logical_not", [z], np.logical_not(z))
        check("is_nan %s (false)" % dt, "is_nan", [x], np.zeros(x.shape, bool))
        check("is_infinity %s (false)" % dt, "is_infinity", [x], np.zeros(x.shape, bool))

    for dt, t in FLOATS.items():
        fi = np.finfo(t)
        e = [0.0, -0.0, np.nan, -np.nan, np.inf, -np.inf, float(fi.max), -float(fi.max),
             float(fi.tiny), float(fi.tiny) / 4, -float(fi.tiny) / 2, 1.0, -1.0, 0.5]
        v = np.array(e + list(rng.uniform(-3, 3, N - len(e))), dtype=t)
        v[len(e)::7] = 0
        u = v[::-1].copy()
        for op, fn in (("logical_and", np.logical_and), ("logical_or", np.logical_or),
                       ("logical_xor", np.logical_xor)):
            check("%s %s (NaN true, -0 false, denormals true)" % (op, dt), op, [v, u], fn(v, u))
        check("logical_not %s" % dt, "logical_not", [v], np.logical_not(v))
        check("is_nan %s" % dt, "is_nan", [v], np.isnan(v))
        check("is_infinity %s" % dt, "is_infinity", [v], np.isinf(v))
    # bf16: f32 values that bf16 holds exactly (NaN, inf, denormals, -0)
    f = np.array([0.0, -0.0, np.nan, np.inf, -np.inf, 1e-39, -1e-40, 1.0, -2.0, 3.0e38], np.float32)
    f = (f.view(np.uint32) & np.uint32(0xffff0000)).view(np.float32)
    f = np.concatenate([f, (rng.uniform(-2, 2, N - len(f)).astype(np.float32).view(np.uint32)
                            & np.uint32(0xffff0000)).view(np.float32)])
    f[len(f) // 2::5] = 0
    g = f[::-1].copy()
    for op, fn in (("logical_and", np.logical_and), ("logical_or", np.logical_or),
                   ("logical_xor", np.logical_xor)):
        check("%s bf16" % op, op, [Bf16(f), Bf16(g)], fn(f, g))
    check("logical_not bf16", "logical_not", [Bf16(f)], np.logical_not(f))
    check("is_nan bf16", "is_nan", [Bf16(f)], np.isnan(f))
    check("is_infinity bf16", "is_infinity", [Bf16(f)], np.isinf(f))
    x = (f.reshape(10, 30) != 0).astype(np.float32)
    x[0, 0] = np.nan
    x[1, :] = 1
    check("all bf16 axes [1]", "all", [Bf16(x)], np.all(x, axis=1), {"axes": [1]})
    check("any bf16 axes [1]", "any", [Bf16(x)], np.any(x, axis=1), {"axes": [1]})
    flush()
    bo = rng.random(N) < 0.5
    bo2 = rng.random(N) < 0.5
    for op, fn in (("logical_and", np.logical_and), ("logical_or", np.logical_or),
                   ("logical_xor", np.logical_xor)):
        check("%s bool" % op, op, [bo, bo2], fn(bo, bo2))
    check("logical_not bool", "logical_not", [bo], np.logical_not(bo))
    check("is_nan bool (false)", "is_nan", [bo], np.zeros(N, bool))
    check("is_infinity bool (false)", "is_infinity", [bo], np.zeros(N, bool))
    bm = bo.reshape(10, 30).copy()
    bm[2, :] = True
    check("all bool axes [1]", "all", [bm], np.all(bm, axis=1), {"axes": [1]})
    check("any bool axes [1]", "any", [bm], np.any(bm, axis=1), {"axes": [1]})

    # all / any over axes (NaN counts as true, -0 as false, empty: true / false)
    for dt in list(INTS) + list(FLOATS):
        t = FLOATS.get(dt) or INTS[dt]
        x = (rng.random((4, 5, 70)) < 0.97).astype(t)
        x[1, :, :] = 1
        x[2, 3, :] = 0
        if dt in FLOATS:
            x[0, 0, :] = np.nan
            x[3, 1, :] = -0.0
        for axes in ([2], [0, 2], [1], None):
            ax = tuple(axes) if axes else None
            attrs = {"axes": axes} if axes else None
            check("all %s axes %s" % (dt, axes), "all", [x], np.all(x, axis=ax), attrs)
            check("any %s axes %s" % (dt, axes), "any", [x], np.any(x, axis=ax), attrs)
        e = np.zeros((3, 0), t)
        check("all %s of empty rows: true" % dt, "all", [e], np.ones(3, bool), {"axes": [1]})
        check("any %s of empty rows: false" % dt, "any", [e], np.zeros(3, bool), {"axes": [1]})
    flush()

    # argmax / argmin, tie_break high: the last of equal extremes; numpy's
    # arg* of the reversed axis gives the oracle.  Long rows take the
    # partial-and-final path of the kernel.
    def last(fn, x, axis):
        return (x.shape[axis] - 1 - fn(np.flip(x, axis), axis=axis)).astype(np.int32)
    for dt in list(INTS) + list(FLOATS):
        t = FLOATS.get(dt) or INTS[dt]
        for shape, axis in (((3, 4500), 1), ((50, 7), 0), ((3, 4, 5), 2)):
            x = rng.integers(0, 3, shape).astype(t)
            for op, fn in (("argmax", np.argmax), ("argmin", np.argmin)):
                check("%s %s %s axis %d tie_break high" % (op, dt, shape, axis), op, [x], last(fn, x, axis),
                      {"axes": [axis], "tie_break": "high"})
                check("%s %s %s axis %d tie_break low" % (op, dt, shape, axis), op, [x],
                      fn(x, axis=axis).astype(np.int32), {"axes": [axis], "tie_break": "low"})
    x = rng.integers(0, 3, (7, 40)).astype(np.float32)
    for op, fn in (("argmax", np.argmax), ("argmin", np.argmin)):
        check("%s bf16 tie_break high" % op, op, [Bf16(x)], last(fn, x, 1), {"axes": [1], "tie_break": "high"})
    flush()
    # reverse (any axes, default all) and eye (batched identities)
    for dt in list(INTS) + list(FLOATS) + ["bool"]:
        t = FLOATS.get(dt) or INTS.get(dt) or np.bool_
        x = rng.integers(0, 100, (3, 4, 70)).astype(t)
        for axes in ([0], [2], [1, 2], [0, 1, 2], [-1], None):
            want = np.flip(x, axis=tuple(axes) if axes else None)
            check("reverse %s axes %s" % (dt, axes), "reverse", [x], np.ascontiguousarray(want),
                  {"axes": axes} if axes else None)
        check("reverse %s of [0, 5]" % dt, "reverse", [np.zeros((0, 5), t)], np.zeros((0, 5), t), {"axes": [0]})
    for dt in list(INTS) + list(FLOATS):
        t = FLOATS.get(dt) or INTS[dt]
        for shape in ((4, 4), (3, 5), (6, 2), (2, 3, 3), (2, 1, 300), (1, 1)):
            want = np.broadcast_to(np.eye(shape[-2], shape[-1], dtype=t), shape).copy()
            _pending.append(("eye %s %s" % (dt, list(shape)), "eye", [], want, {"shape": list(shape), "dtype": dt}))
            covered.setdefault("eye", set()).add(dt)
    xb = rng.integers(0, 100, (3, 70)).astype(np.float32)
    check("reverse bf16 axes [1]", "reverse", [Bf16(xb)], Bf16(np.ascontiguousarray(xb[:, ::-1])), {"axes": [1]})
    _pending.append(("eye bf16 [2, 3, 4]", "eye", [], Bf16(np.broadcast_to(np.eye(3, 4, dtype=np.float32), (2, 3, 4)).copy()),
                     {"shape": [2, 3, 4], "dtype": "bf16"}))
    covered["eye"].add("bf16")
    _pending.append(("eye default dtype i32", "eye", [], np.eye(3, dtype=np.int32), {"shape": [3, 3]}))
    flush()
    rc, _, err = nphelp.run_op("eye", [], TMP, {"shape": [4]})
    tap(rc == 2 and "rank" in err, "eye of rank 1 is refused", err)
    rc, _, err = nphelp.run_op("reverse", [np.zeros((2, 2), np.float32)], TMP, {"axes": [0, 0]})
    tap(rc == 2 and "twice" in err, "reverse with an axis twice is refused", err)
    x = np.array([1, np.nan, 3, np.nan, 0], np.float32)
    check("argmax f32 with NaNs, tie_break high: the last NaN", "argmax", [x], np.array(3, np.int32),
          {"tie_break": "high"})
    check("argmin f32 with NaNs, tie_break low: the first NaN", "argmin", [x], np.array(1, np.int32))
    flush()
    rc, _, err = nphelp.run_op("argmax", [x], TMP, {"tie_break": "middle"})
    tap(rc == 2 and "tie_break" in err, "tie_break \"middle\" is refused naming the attribute", err)

    # every dtype --list-ops gives these ops is checked above
    listed = {op: set(dts) for op, dts in nphelp.list_ops()[1].items()}
    for op in sorted(covered):
        miss = listed.get(op, set()) - covered[op]
        tap(op in listed and not miss, "%s: every listed dtype checked against numpy" % op,
            "not listed" if op not in listed else "unchecked: %s" % sorted(miss))
    shutil.rmtree(TMP, ignore_errors=True)
    return nphelp.done()


if __name__ == "__main__":
    sys.exit(main())
