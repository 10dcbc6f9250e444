#!/usr/bin/python3
"""test_ordering_numpy.py - numpy as the oracle for the ordering ops: the
scans (cumulative_sum cumulative_product cumulative_max cumulative_min,
forward and reverse), sort / argsort / top_k / top_k_indices (stable,
ascending and descending, NaN as Nx orders it: last ascending, first
descending; -0 and +0 equal, so they keep their order) and the windows
(window_sum window_product window_max window_min through
sliding_window_view; window_scatter_max / window_scatter_min have their own
oracle, test_window_scatter_numpy.py).

Every dtype `nxvk run --list-ops` lists for an op is run, on inputs with
ties, NaN, +-inf, +-0 (floats) and the dtype's extremes (integers), at odd
sizes and empty axes.  Oracles:
  - scans: np.cumsum / np.cumprod in the dtype (integers wrap as numpy's
    fixed-width arithmetic does) or in float64/longdouble for floats, judged
    under conformance/limits.json's bound n*eps*sum|x|; np.maximum.accumulate
    / np.minimum.accumulate exactly (NaN as a class; equal zeros of either
    sign accepted: the engine gives +0 for max and -0 for min);
  - sort: np.sort / np.argsort(kind='stable'); descending is the stable
    ascending sort of the reversed row, reversed (ties keep their order);
    bit-identical values, identical indices;
  - windows: np.lib.stride_tricks.sliding_window_view over the padded input
    (padding with the op's identity), dilations by slicing.
TAP on stdout.  Environment: NXVK (default ./nxvk).
"""
import json
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import nphelp  # noqa: E402
from nphelp import bf16_bits, check as tap, load, nxvk, run_cases, save, scratch  # noqa: E402

np.seterr(all="ignore")
TMP = scratch("ordering")

NPT = {"f16": np.float16, "f32": np.float32, "f64": np.float64, "i8": np.int8, "i16": np.int16,
       "i32": np.int32, "i64": np.int64, "u8": np.uint8, "u16": np.uint16, "u32": np.uint32,
       "u64": np.uint64, "bool": np.bool_, "bf16": np.float32}
FLOATS = ("f16", "bf16", "f32", "f64")
EPS = {"f16": 2.0 ** -10, "bf16": 2.0 ** -7, "f32": 2.0 ** -23, "f64": 2.0 ** -52}
SCANS = ("cumulative_sum", "cumulative_product", "cumulative_max", "cumulative_min")
SORTS = ("sort", "argsort", "top_k", "top_k_indices")
WINDOWS = ("window_sum", "window_product", "window_max", "window_min")
SCATTERS = ("window_scatter_max", "window_scatter_min")
MINE = SCANS + SORTS + WINDOWS + SCATTERS

# Cases are queued and run as one graph per dtype (one process, not one per
# case): each case its own inputs and output.
_queue = []


def queue(op, dt, inputs, attrs, judge, in_dts=None):
    _queue.append((op, dt, inputs, attrs, judge, in_dts))


def flush():
    by_dt = {}
    for c in _queue:
        by_dt.setdefault(c[1], []).append(c)
    del _queue[:]
    for dt, cases in sorted(by_dt.items()):
        rc, err, paths = run_cases(TMP, dt, [(op, list(zip(in_dts or [dt] * len(inputs), inputs)), attrs)
                                             for op, _, inputs, attrs, _, in_dts in cases])
        for (_, _, _, _, judge, _), path in zip(cases, paths):
            judge(load(path) if path else None, err.strip())


def run(op, dt, inputs, attrs, in_dts=None):
    paths = []
    for i, a in enumerate(inputs):
        p = os.path.join(TMP, "in%d.npy" % i)
        save(p, (in_dts or [dt] * len(inputs))[i], a)
        paths.append(p)
    out = os.path.join(TMP, "out.npy")
    if os.path.exists(out):
        os.unlink(out)
    rc, _, err = nxvk(["run", "--op", op, "--attrs", json.dumps(attrs)] + paths + ["-o", out])
    if rc != 0:
        return None, err.strip()
    return load(out), ""


# ---------------------------------------------------------------- inputs

def values(dt, shape, rng, ties=True):
    """Random values of dt with ties, and the edge values of the dtype."""
    n = int(np.prod(shape)) if len(shape) else 1
    if dt in FLOATS:
        # small integers and halves: exact in every float dtype, many ties
        v = rng.integers(-8, 9, n).astype(np.float64) / (2 if ties else 1)
        if not ties:
            v = rng.standard_normal(n)
        edge = [np.nan, np.inf, -np.inf, 0.0, -0.0, 1.0, -1.0, 0.5]
        k = min(n, len(edge))
        pos = rng.choice(n, k, replace=False) if n else []
        for j, p in enumerate(pos):
            v[p] = edge[j]
        a = v.astype(np.float32 if dt in ("f16", "bf16", "f32") else np.float64)
        if dt == "f16":
            a = a.astype(np.float16)
        if dt == "bf16":
            a = (bf16_bits(a).astype(np.uint32) << 16).view(np.float32)
        return a.reshape(shape)
    if dt == "bool":
        return (rng.integers(0, 2, n) == 1).reshape(shape)
    info = np.iinfo(NPT[dt])
    v = rng.integers(max(info.min, -5), min(info.max, 5) + 1, n).astype(NPT[dt])
    edge = [info.min, info.max, 0]
    k = min(n, len(edge))
    pos = rng.choice(n, k, replace=False) if n else []
    for j, p in enumerate(pos):
        v[p] = edge[j]
    return v.reshape(shape)


def same_bits(got, want):
    """Identical values: NaN as a class, zeros by sign."""
    if got.shape != want.shape:
        return False, "shape %s, want %s" % (got.shape, want.shape)
    if got.dtype.kind == "f":
        g = got.astype(np.float64)
        w = want.astype(np.float64)
        ok = (np.isnan(g) & np.isnan(w)) | ((g == w) & (np.signbit(g) == np.signbit(w)))
    else:
        ok = got.astype(object) == want.astype(object) if got.dtype.kind in "iu" else got == want
    ok = np.asarray(ok, bool)
    if ok.all():
        return True, ""
    i = np.argwhere(~ok)[0]
    return False, "at %s: got %r, want %r (%d differ)" % (tuple(i), got[tuple(i)], want[tuple(i)], (~ok).sum())


# ---------------------------------------------------------------- scans

def scan_oracle(op, dt, x, axis, reverse):
    xs = np.flip(x, axis) if reverse else x
    if dt in FLOATS:
        wide = np.longdouble if dt == "f64" else np.float64
        xw = xs.astype(wide)
        f = {"cumulative_sum": np.cumsum, "cumulative_product": np.cumprod,
             "cumulative_max": np.maximum.accumulate, "cumulative_min": np.minimum.accumulate}[op]
        want = f(xw, axis=axis)
        scale = {"cumulative_sum": lambda: np.cumsum(np.abs(xw), axis=axis),
                 "cumulative_product": lambda: np.abs(np.cumprod(xw, axis=axis))}.get(op, lambda: None)()
    else:
        t = NPT[dt]
        f = {"cumulative_sum": lambda a: np.cumsum(a, axis=axis, dtype=t),
             "cumulative_product": lambda a: np.cumprod(a, axis=axis, dtype=t),
             "cumulative_max": lambda a: np.maximum.accumulate(a, axis=axis),
             "cumulative_min": lambda a: np.minimum.accumulate(a, axis=axis)}[op]
        want, scale = f(xs), None
    if reverse:
        want = np.flip(want, axis)
        scale = np.flip(scale, axis) if scale is not None else None
    return want, scale


def check_scan(op, dt, x, attrs, rng):
    queue(op, dt, [x], attrs, lambda got, err: judge_scan(op, dt, x, attrs, got, err))


def judge_scan(op, dt, x, attrs, got, err):
    axis = attrs.get("axis", 0)
    desc = "%s %s shape=%s attrs=%s" % (op, dt, list(x.shape), json.dumps(attrs))
    if got is None:
        tap(False, desc, err)
        return
    want, scale = scan_oracle(op, dt, x, axis % max(x.ndim, 1), attrs.get("reverse", False))
    if dt not in FLOATS:
        ok, diag = same_bits(got, want.astype(got.dtype))
        tap(ok, desc, diag)
        return
    g = got.astype(np.float64)
    if dt == "bf16":  # the oracle rounded to bf16 (nearest even) through f32
        b = np.asarray(want, np.float32).view(np.uint32).astype(np.uint64)
        r = (((b + 0x7fff + ((b >> 16) & 1)) >> 16) << 16).astype(np.uint32)
        w = np.where(np.isnan(np.asarray(want, np.float64)), np.float32(np.nan), r.view(np.float32))
    else:
        w = want.astype(NPT[dt])
    w = np.asarray(w).astype(np.float64)
    if op in ("cumulative_max", "cumulative_min"):
        ok = (np.isnan(g) & np.isnan(w)) | (g == w)   # zeros of either sign: see the docstring
    else:
        n = x.shape[axis] if x.ndim else 1
        # limits.json: n*eps*sum|x|, plus one ulp of the result (its rounding)
        bound = n * EPS[dt] * np.asarray(scale, np.float64) + 2 * EPS[dt] * np.abs(w)
        with np.errstate(invalid="ignore"):
            ok = (np.isnan(g) & np.isnan(w)) | (g == w) | (np.abs(g - w) <= bound)
        # the sign of an exact zero must match (x + -0 keeps x)
        ok &= ~((g == 0) & (w == 0) & (np.signbit(g) != np.signbit(w)))
    bad = np.argwhere(~ok)
    tap(len(bad) == 0, desc, "" if not len(bad) else "at %s: got %r, want %r (%d differ)" % (
        tuple(bad[0]), g[tuple(bad[0])], w[tuple(bad[0])], len(bad)))


def test_scans(ops, rng):
    shapes = [((0,), {}), ((1,), {}), ((7,), {"reverse": True}), ((300,), {}), ((2049,), {"reverse": True}),
              ((5, 7, 9), {"axis": 1}), ((5, 7, 9), {"axis": -1, "reverse": True}), ((4, 3), {"axis": 0}),
              ((3, 0), {"axis": 1}), ((3, 5000), {"axis": 1}), ((5000, 3), {"axis": 0, "reverse": True})]
    for op in SCANS:
        for dt in ops.get(op, []):
            for shape, attrs in shapes:
                x = values(dt, shape, rng, ties=op != "cumulative_product")
                if op == "cumulative_product" and dt in FLOATS:
                    # near 1 so long products stay finite, with the edge values kept
                    x = np.where(np.isfinite(x) & (x != 0), (1 + x.astype(np.float64) / 4096), x).astype(x.dtype)
                    if dt == "bf16":
                        x = (bf16_bits(x).astype(np.uint32) << 16).view(np.float32).reshape(x.shape)
                check_scan(op, dt, x, attrs, rng)
    flush()


# ---------------------------------------------------------------- sort

def stable_order(x, axis, desc):
    """np.argsort(kind='stable') along axis; descending: the ascending sort
    of the reversed line, reversed (ties keep their order, NaN first)."""
    if not desc:
        return np.argsort(x, axis=axis, kind="stable")
    n = x.shape[axis]
    r = np.argsort(np.flip(x, axis), axis=axis, kind="stable")
    return n - 1 - np.flip(r, axis)


def check_sort(op, dt, x, attrs):
    def judge(got, err):
        desc = "%s %s shape=%s attrs=%s" % (op, dt, list(x.shape), json.dumps(attrs))
        if got is None:
            tap(False, desc, err)
            return
        topk = op.startswith("top_k")
        axis = -1 if topk else attrs.get("axis", 0)
        xs = x.astype(np.float64) if dt in ("f16", "bf16") else x  # numpy sorts f16 the same; bf16 held as f32
        if x.ndim == 0:
            idx = np.zeros((), np.int64)
        else:
            idx = stable_order(xs, axis, topk or attrs.get("direction") == "desc")
            if topk:
                idx = idx[..., :attrs.get("k", 1)]
        if op in ("argsort", "top_k_indices"):
            want = idx.astype(got.dtype)
        else:
            want = np.take_along_axis(x, idx, axis=axis) if x.ndim else x
        ok, diag = same_bits(got, np.asarray(want, got.dtype))
        tap(ok, desc, diag)
    queue(op, dt, [x], attrs, judge)


def test_sorts(ops, rng):
    cases = [((0,), {}), ((1,), {}), ((7,), {"direction": "desc"}), ((300,), {}),
             ((2049,), {"direction": "desc"}), ((5, 7, 9), {"axis": 1}),
             ((5, 7, 9), {"axis": -1, "direction": "desc"}), ((4, 3), {"axis": 0}), ((3, 0), {"axis": 1}),
             ((3, 5000), {"axis": 1}), ((70000,), {}), ((), {})]
    topk = [((7,), {"k": 3}), ((5, 9), {"k": 9}), ((2, 3, 300), {"k": 17}), ((4, 2049), {"k": 1}),
            ((3, 1), {"k": 1})]
    for op in SORTS:
        for dt in ops.get(op, []):
            for shape, attrs in (topk if op.startswith("top_k") else cases):
                if shape == () and op.startswith("top_k"):
                    continue
                check_sort(op, dt, values(dt, shape, rng), attrs)
        flush()
    # the index dtype (Nx's argsort defaults to s64)
    x = values("f32", (3, 40), rng)
    check_sort("argsort", "f32", x, {"axis": 1, "dtype": "i64"})
    check_sort("top_k_indices", "f32", x, {"k": 5, "dtype": "u16"})
    flush()


# ---------------------------------------------------------------- windows

def window_oracle(op, dt, x, attrs):
    """sliding_window_view over x padded with the op's identity (as Nx pads);
    dilations by taking every dil-th element of the dilated window."""
    rank = x.ndim
    win = attrs["window_dimensions"]
    st = attrs.get("strides", [1] * rank)
    dil = attrs.get("window_dilations", [1] * rank)
    dw = [(w - 1) * d + 1 for w, d in zip(win, dil)]
    pad = attrs.get("padding", "valid")
    if pad == "valid":
        pad = [[0, 0]] * rank
    elif pad == "same":
        pad = [[(k - 1) // 2, k - 1 - (k - 1) // 2] for k in dw]
    fl = dt in FLOATS
    wide = np.longdouble if dt == "f64" else np.float64
    if fl:
        ident = {"window_sum": 0.0, "window_product": 1.0, "window_max": -np.inf, "window_min": np.inf}[op]
        xw = x.astype(wide)
    else:
        info = np.iinfo(NPT[dt])
        ident = {"window_sum": 0, "window_product": 1, "window_max": info.min, "window_min": info.max}[op]
        xw = x
    # negative padding crops, positive pads
    sl = tuple(slice(max(-lo, 0), x.shape[d] - max(-hi, 0)) for d, (lo, hi) in enumerate(pad))
    xw = xw[sl]
    xw = np.pad(xw, [(max(lo, 0), max(hi, 0)) for lo, hi in pad], constant_values=ident)
    out_shape = [max((xw.shape[d] - dw[d]) // st[d] + 1, 0) if xw.shape[d] >= dw[d] else 0 for d in range(rank)]
    if 0 in out_shape:
        return np.zeros(out_shape, xw.dtype), None
    v = np.lib.stride_tricks.sliding_window_view(xw, dw)
    v = v[tuple(slice(None, None, s_) for s_ in st) + tuple(slice(None, None, d) for d in dil)]
    v = v[tuple(slice(0, o) for o in out_shape)]
    axes = tuple(range(rank, 2 * rank))
    if op == "window_sum":
        want = v.sum(axis=axes) if fl else v.sum(axis=axes, dtype=NPT[dt])
        scale = np.abs(v).sum(axis=axes) if fl else None
    elif op == "window_product":
        want = v.prod(axis=axes) if fl else v.prod(axis=axes, dtype=NPT[dt])
        scale = np.abs(want) if fl else None
    elif op == "window_max":
        want, scale = np.maximum.reduce(v, axis=axes) if v.size else v.max(axis=axes), None
    else:
        want, scale = np.minimum.reduce(v, axis=axes) if v.size else v.min(axis=axes), None
    return want, scale


def check_window(op, dt, x, attrs):
    def judge(got, err):
        desc = "%s %s shape=%s attrs=%s" % (op, dt, list(x.shape), json.dumps(attrs))
        if got is None:
            tap(False, desc, err)
            return
        want, scale = window_oracle(op, dt, x, attrs)
        if dt not in FLOATS:
            ok, diag = same_bits(got, np.asarray(want).astype(got.dtype))
            tap(ok, desc, diag)
            return
        g = got.astype(np.float64)
        w = np.asarray(want, np.float64)
        if g.shape != w.shape:
            tap(False, desc, "shape %s, want %s" % (g.shape, w.shape))
            return
        with np.errstate(invalid="ignore"):
            if scale is None:  # max / min: exact, zeros of either sign (see the docstring)
                ok = (np.isnan(g) & np.isnan(w)) | (g == w)
            else:
                n = int(np.prod(attrs["window_dimensions"]))
                bound = n * EPS[dt] * np.asarray(scale, np.float64) + 2 * EPS[dt] * np.abs(w)
                ok = (np.isnan(g) & np.isnan(w)) | (g == w) | (np.abs(g - w) <= bound)
        bad = np.argwhere(~ok)
        tap(len(bad) == 0, desc, "" if not len(bad) else "at %s: got %r, want %r (%d differ)" % (
            tuple(bad[0]), g[tuple(bad[0])], w[tuple(bad[0])], len(bad)))
    queue(op, dt, [x], attrs, judge)


def test_windows(ops, rng):
    cases = [((7,), {"window_dimensions": [3], "strides": [2]}),
             ((6, 7), {"window_dimensions": [2, 2], "strides": [2, 2]}),
             ((6, 7), {"window_dimensions": [3, 2], "padding": "same"}),
             ((6, 7), {"window_dimensions": [2, 3], "strides": [1, 2], "padding": [[1, 0], [2, 1]],
                       "window_dilations": [2, 1]}),
             ((2, 3, 9, 8), {"window_dimensions": [1, 1, 3, 3], "strides": [1, 1, 2, 2], "padding": "same"}),
             ((2, 3, 9, 8), {"window_dimensions": [1, 2, 2, 2], "padding": [[0, 0], [0, 1], [-1, 1], [0, 0]]}),
             ((64, 66), {"window_dimensions": [2, 2], "strides": [2, 2]}),
             # the pooling path: 4-vector loads (W and the low padding multiples of 4), the rows' edges
             ((2, 3, 8, 16), {"window_dimensions": [1, 1, 2, 2], "strides": [1, 1, 2, 2]}),
             ((3, 9, 20), {"window_dimensions": [1, 3, 3], "strides": [1, 2, 2], "padding": [[0, 0], [1, 1], [4, 3]]}),
             ((5, 24), {"window_dimensions": [2, 3], "strides": [1, 1], "padding": "same"}),
             ((5, 0), {"window_dimensions": [1, 1]}), ((4, 5), {"window_dimensions": [4, 5]})]
    for op in WINDOWS:
        for dt in ops.get(op, []):
            for shape, attrs in cases:
                x = values(dt, shape, rng, ties=op != "window_product")
                if op == "window_product" and dt in FLOATS:
                    x = np.where(np.isfinite(x) & (x != 0), np.sign(x) * 2.0 ** np.round(x.astype(np.float64)), x).astype(x.dtype)
                check_window(op, dt, x, attrs)
        flush()


# ---------------------------------------------------------------- main

def wide_values(dt, shape, rng):
    """Keys over the dtype's whole range (every byte of the radix key varies:
    random bits for floats, NaN payloads and subnormals included), half of
    them drawn from five of those values, so that ties meet every pass."""
    n = int(np.prod(shape))
    if dt in ("f16", "bf16"):
        bits = rng.integers(0, 1 << 16, n).astype(np.uint16)
        a = bits.view(np.float16) if dt == "f16" else (bits.astype(np.uint32) << 16).view(np.float32)
    elif dt in ("f32", "f64"):
        ut = np.uint32 if dt == "f32" else np.uint64
        a = rng.integers(0, np.iinfo(ut).max, n, dtype=ut, endpoint=True).view(NPT[dt])
    elif dt == "bool":
        return values(dt, shape, rng)
    else:
        info = np.iinfo(NPT[dt])
        a = rng.integers(info.min, info.max, n, dtype=NPT[dt], endpoint=True)
    a = a.copy()
    pick = rng.random(n) < 0.5
    a[pick] = a[rng.integers(0, n, 5)][rng.integers(0, 5, int(pick.sum()))]
    return a.reshape(shape)


def test_sort_kernels(ops, rng):
    """Both radix kernels (NXVK_SORT_BITS: 8 bits a pass, the default where
    the device has subgroup ballots, and 4) on keys over the whole range:
    several tiles a line, lines along a middle axis, descending, top_k."""
    for bits in ("8", "4"):
        os.environ["NXVK_SORT_BITS"] = bits
        for dt in ops.get("sort", []):
            check_sort("sort", dt, wide_values(dt, (20001,), rng), {})
            check_sort("argsort", dt, wide_values(dt, (5000, 3), rng), {"axis": 0, "direction": "desc"})
            check_sort("top_k", dt, wide_values(dt, (2, 9000), rng), {"k": 40})
        flush()
        del os.environ["NXVK_SORT_BITS"]


def list_ops():
    rc, ops, err = nphelp.list_ops()
    return rc, {o: dts for o, dts in ops.items() if o in MINE}, err


def main():
    rc, ops, err = list_ops()
    tap(rc == 0, "nxvk run --list-ops", err)
    expected = SCANS + SORTS + WINDOWS
    missing = [o for o in expected if o not in ops]
    tap(not missing, "the ordering ops are listed", "missing: %s" % missing)
    rng = np.random.default_rng(29)
    test_scans(ops, rng)
    test_sorts(ops, rng)
    test_sort_kernels(ops, rng)
    test_windows(ops, rng)


if __name__ == "__main__":
    nphelp.main(main, TMP)
