#!/usr/bin/python3
"""test_index_numpy.py - numpy as the oracle for the shape and indexing ops
(broadcast pad dynamic_slice put_slice gather take take_along_axis
indexed_add indexed_put), through `nxvk run --op NAME --attrs JSON IN... -o
OUT.npy`.  test_ops_numpy.py and test_dtypes_numpy.py leave these ops to this
file; an op of theirs that `nxvk run --list-ops` lists and that has no oracle
here fails.

The oracle is numpy's own: np.broadcast_to, np.pad (with interior padding
and negative edges written out), slicing, np.take, np.take_along_axis,
advanced indexing, np.add.at; indices clamped (gather, take,
take_along_axis: into [0, dim-1]; starts: into [0, dim-length]) or dropped
(indexed_add, indexed_put) as nxvk-run(1) documents.  indexed_put's oracle
is a loop in row order (the last duplicate wins), checked under each of
the engine's pass structures (NXVK_SCATTER_PUT).  Every integer dtype
serves as the index dtype; the data dtypes are every one numpy has (not
bf16: conformance checks it against the reference).

Environment: NXVK (the binary; default ./nxvk).
"""
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import nphelp  # noqa: E402
from nphelp import check as tap, have_binary, list_ops, nxvk, run_cases  # noqa: E402

TMP = nphelp.scratch("index")
NP = {"f16": np.float16, "f32": np.float32, "f64": np.float64, "i8": np.int8, "i16": np.int16,
      "i32": np.int32, "i64": np.int64, "u8": np.uint8, "u16": np.uint16, "u32": np.uint32,
      "u64": np.uint64, "bool": np.bool_}
IX = ["i32", "i64", "u8", "i8", "u16", "i16", "u32", "u64"]
OPS = ("broadcast", "pad", "dynamic_slice", "put_slice", "gather", "take", "take_along_axis",
       "indexed_add", "indexed_put")

def run(op, inputs, attrs=None, env=None):
    return nphelp.run_op(op, inputs, TMP, attrs or None, env)


def data(dt, shape, rng):
    n = int(np.prod(shape)) if len(shape) else 1
    if dt == "bool":
        v = rng.integers(0, 2, n).astype(np.bool_)
    elif dt.startswith("f"):
        v = (rng.integers(-1000, 1000, n) / 64.0).astype(NP[dt])
        if n > 3:
            v[:3] = np.array([np.nan, -0.0, np.inf], NP[dt])  # bits must travel unchanged
    else:
        info = np.iinfo(NP[dt])
        v = rng.integers(info.min, info.max, n, dtype=NP[dt], endpoint=True)
    return v.reshape(shape)


def indices(ix, shape, bound, rng, wild=True):
    """Mostly in [0, bound); wild: some -1, bound, bound+7 and the dtype's extremes."""
    info = np.iinfo(NP[ix])
    v = rng.integers(0, max(bound, 1), int(np.prod(shape)) if len(shape) else 1).astype(object)
    if wild:
        for j in range(0, v.size, 5):
            v[j] = [-1, bound, bound + 7, int(info.min), int(info.max)][(j // 5) % 5]
    return np.array([wrapto(int(x), ix) for x in v.ravel()], NP[ix]).reshape(shape)


def wrapto(x, ix):
    bits = 8 * np.dtype(NP[ix]).itemsize
    x &= (1 << bits) - 1
    if ix.startswith("i") and x >= 1 << (bits - 1):
        x -= 1 << bits
    return x


def same(got, want):
    if got is None or got.shape != want.shape or got.dtype != want.dtype:
        return False, "got %s, want %s %s %s" % (None if got is None else (got.shape, got.dtype), want.shape,
                                                  want.dtype, "")
    if want.dtype.kind == "f":
        g = got.view(np.dtype("u%d" % want.dtype.itemsize))
        w = want.view(np.dtype("u%d" % want.dtype.itemsize))
        ok = bool(np.array_equal(g, w))
    else:
        ok = bool(np.array_equal(got, want))
    return ok, "" if ok else "got %s\nwant %s" % (got.ravel()[:16], want.ravel()[:16])


PENDING = []


def check(desc, op, inputs, attrs, want, close=False):
    """Queued: flush() runs the queued ops as one graph (one process)."""
    PENDING.append((desc, op, inputs, attrs, want, close))


def judge(desc, got, want, close):
    if close and want.dtype.kind == "f":
        ok = got is not None and got.shape == want.shape and bool(
            np.allclose(got.astype(np.float64), want.astype(np.float64), rtol=1e-5, atol=1e-5, equal_nan=True))
        tap(ok, desc, "got %s\nwant %s" % (got, want))
    else:
        ok, d = same(got, want)
        tap(ok, desc, d)


def flush(label, env=None):
    if not PENDING:
        return
    rc, err, paths = run_cases(TMP, "graph", [(op, [(None, a) for a in inputs], attrs)
                                              for desc, op, inputs, attrs, want, close in PENDING], env=env)
    tap(rc == 0, "%s: a graph of %d ops runs" % (label, len(PENDING)), err)
    for (desc, op, inputs, attrs, want, close), path in zip(PENDING, paths):
        judge(desc, np.load(path) if path else None, want, close)
    PENDING.clear()


def ci(v, lo, hi):
    """Clamp an index array (any integer dtype) into [lo, hi] as Python ints."""
    return np.array([min(max(int(x), lo), hi) for x in np.asarray(v).ravel()], np.int64).reshape(np.shape(v))


# ---------------------------------------------------------------- oracles

def o_broadcast(x, shape, axes):
    if axes is None:
        return np.broadcast_to(x, shape).copy()
    s = [1] * len(shape)
    for i, a in enumerate(axes):
        s[a] = x.shape[i]
    return np.broadcast_to(x.reshape(s), shape).copy()


def o_pad(x, v, low, high, interior):
    y = x
    for d in range(x.ndim):
        n = y.shape[d]
        if interior[d] and n > 0:
            sh = list(y.shape)
            sh[d] = (n - 1) * (interior[d] + 1) + 1
            z = np.full(sh, v, x.dtype)
            idx = [slice(None)] * y.ndim
            idx[d] = slice(None, None, interior[d] + 1)
            z[tuple(idx)] = y
            y = z
        pw = [(0, 0)] * y.ndim
        pw[d] = (max(low[d], 0), max(high[d], 0))
        y = np.pad(y, pw, constant_values=v)
        idx = [slice(None)] * y.ndim
        idx[d] = slice(max(-low[d], 0), y.shape[d] - max(-high[d], 0))
        y = y[tuple(idx)]
    return np.ascontiguousarray(y)


def o_gather(t, ix, axes):
    k = ix.shape[-1]
    axes = list(range(k)) if axes is None else axes
    tt = np.moveaxis(t, axes, list(range(k)))
    flat = ix.reshape(-1, k)
    rows = [tt[tuple(ci(r[j], 0, t.shape[axes[j]] - 1) for j in range(k))] for r in flat]
    rest = tt.shape[k:]
    return np.array(rows, t.dtype).reshape(ix.shape[:-1] + rest)


def o_scatter(op, t, ix, u, axes):
    k = ix.shape[1]
    axes = list(range(k)) if axes is None else axes
    out = np.moveaxis(t.copy(), axes, list(range(k))).copy()
    for j in range(ix.shape[0]):
        pos = [int(x) for x in ix[j]]
        if any(p < 0 or p >= t.shape[axes[i]] for i, p in enumerate(pos)):
            continue
        win = tuple(pos) + tuple(slice(0, n) for n in u.shape[1:])
        if op == "indexed_put":
            out[win] = u[j]
        else:
            with np.errstate(over="ignore"):
                np.add.at(out, win, u[j])
    return np.ascontiguousarray(np.moveaxis(out, list(range(k)), axes))


# ---------------------------------------------------------------- cases

def cases(rng):
    dts = [d for d in NP]
    for n, dt in enumerate(dts):
        ix = IX[n % len(IX)]
        # broadcast
        x = data(dt, (3,), rng)
        check("broadcast %s [3] -> [2,3]" % dt, "broadcast", [x], {"shape": [2, 3]}, o_broadcast(x, (2, 3), None))
        check("broadcast %s [3] -> [3,4] axes [0]" % dt, "broadcast", [x], {"shape": [3, 4], "axes": [0]},
              o_broadcast(x, (3, 4), [0]))
        x = data(dt, (2, 1), rng)
        check("broadcast %s [2,1] -> [2,5,3] axes [0,2]" % dt, "broadcast", [x],
              {"shape": [2, 5, 3], "axes": [0, 2]}, o_broadcast(x, (2, 5, 3), [0, 2]))
        # pad
        x = data(dt, (4, 5), rng)
        v = data(dt, (), rng)
        for low, high, inter in (([1, 0], [2, 3], [0, 0]), ([-1, 2], [0, -3], [1, 2]), ([0, -4], [-5, 1], [2, 0])):
            check("pad %s [4,5] low %s high %s interior %s" % (dt, low, high, inter), "pad", [x, v],
                  {"low": low, "high": high, "interior": inter}, o_pad(x, v, low, high, inter))
        # dynamic_slice / put_slice: starts clamped into [0, dim - length]
        x = data(dt, (6, 7), rng)
        for st in ([1, 2], [-3, 9], [5, 0]):
            s = np.array([wrapto(q, ix) for q in st], NP[ix])
            a, b = ci(s[0], 0, 6 - 3), ci(s[1], 0, 7 - 4)
            check("dynamic_slice %s [6,7] starts %s %s length [3,4]" % (dt, s.tolist(), ix), "dynamic_slice", [x, s],
                  {"length": [3, 4]}, x[a:a + 3, b:b + 4].copy())
            u = data(dt, (2, 5), rng)
            a, b = ci(s[0], 0, 6 - 2), ci(s[1], 0, 7 - 5)
            w = x.copy()
            w[a:a + 2, b:b + 5] = u
            check("put_slice %s [6,7] <- [2,5] at %s %s" % (dt, s.tolist(), ix), "put_slice", [x, u, s], None, w)
        check("dynamic_slice %s stride [1,2]" % dt, "dynamic_slice", [x, np.array([9, 1], NP[ix])],
              {"length": [2, 5], "stride": [1, 2]}, x[4:6, 1:6:2].copy())
        # gather / take / take_along_axis
        t = data(dt, (4, 5, 3), rng)
        i2 = indices(ix, (7, 2), 4, rng)
        i2[:, 1] = indices(ix, (7,), 5, rng)
        check("gather %s [4,5,3] by [7,2] %s" % (dt, ix), "gather", [t, i2], None, o_gather(t, i2, None))
        i1 = indices(ix, (2, 3, 1), 3, rng)
        check("gather %s axes [2] by [2,3,1] %s" % (dt, ix), "gather", [t, i1], {"axes": [2]}, o_gather(t, i1, [2]))
        i1 = indices(ix, (6, 2), 4, rng)
        i1[:, 1] = indices(ix, (6,), 3, rng)
        check("gather %s axes [0,2] %s" % (dt, ix), "gather", [t, i1], {"axes": [0, 2]}, o_gather(t, i1, [0, 2]))
        it = indices(ix, (2, 4), 5, rng)
        check("take %s axis 1 by [2,4] %s" % (dt, ix), "take", [t, it], {"axis": 1},
              np.take(t, ci(it, 0, 4), axis=1))
        ia = indices(ix, (4, 9, 3), 5, rng)
        check("take_along_axis %s axis 1 %s" % (dt, ix), "take_along_axis", [t, ia], {"axis": 1},
              np.take_along_axis(t, ci(ia, 0, 4), axis=1))
        # indexed_put (every dtype) and indexed_add (not bool)
        for op in ("indexed_put", "indexed_add"):
            if op == "indexed_add" and dt == "bool":
                continue
            if op == "indexed_add" and dt == "f64":  # needs 64-bit atomics: where missing, refused and named
                rc, got, err = run(op, [np.zeros(2), np.zeros((1, 1), np.int32), np.ones(1)])
                if rc != 0:
                    tap(got is None and "shaderBufferInt64Atomics" in err,
                        "indexed_add f64 is refused on a device without 64-bit atomics, saying so", err)
                    continue
            tg = data(dt, (5, 4), rng)
            if dt.startswith("f"):
                tg[np.isnan(tg) | np.isinf(tg)] = 1.0
            ii = indices(ix, (12, 1), 5, rng)
            u = data(dt, (12, 4), rng)
            if dt.startswith("f"):
                u[~np.isfinite(u)] = 2.0
            check("%s %s [5,4] rows [12,1] %s (duplicates, out of range)" % (op, dt, ix), op, [tg, ii, u], None,
                  o_scatter(op, tg, ii, u, None), close=True)
            ii = indices(ix, (6, 2), 5, rng, wild=False)
            ii[:, 1] = indices(ix, (6,), 4, rng, wild=False)
            u = data(dt, (6,), rng)
            if dt.startswith("f"):
                u[~np.isfinite(u)] = 2.0
            check("%s %s [5,4] elements [6,2] %s" % (op, dt, ix), op, [tg, ii, u], None,
                  o_scatter(op, tg, ii, u, None), close=True)
            ii = indices(ix, (5, 1), 4, rng)
            u = data(dt, (5, 5), rng)
            if dt.startswith("f"):
                u[~np.isfinite(u)] = 2.0
            check("%s %s axes [1] %s" % (op, dt, ix), op, [tg, ii, u], {"axes": [1]},
                  o_scatter(op, tg, ii, u, [1]), close=True)
        flush(dt)
    # duplicates everywhere: f32 adds of small integers are exact in any order
    tg = np.zeros(8, np.float32)
    ii = (np.arange(4000) % 8).astype(np.int32).reshape(-1, 1)
    u = np.ones(4000, np.float32)
    check("indexed_add f32: 4000 updates on 8 elements sum exactly", "indexed_add", [tg, ii, u], None,
          np.full(8, 500, np.float32))
    ii = np.zeros((300, 1), np.int64)
    u = np.arange(300, dtype=np.int32)
    check("indexed_put i32: the last of 300 duplicates wins", "indexed_put", [np.zeros(2, np.int32), ii, u], None,
          np.array([299, 0], np.int32))
    flush("duplicates")
    put_forms(rng)
    small_range(rng)
    # errors: exit 2 and one line naming the operand or attribute
    for desc, op, ins, attrs, words in (
            ("take refuses float indices", "take", [np.ones(3, np.float32), np.ones(2, np.float32)], None, "indices"),
            ("pad refuses a non-scalar value", "pad", [np.ones(3, np.float32), np.ones(2, np.float32)],
             {"low": [0], "high": [0]}, "pad value"),
            ("gather refuses unordered axes", "gather", [np.ones((2, 3), np.float32), np.zeros((1, 2), np.int32)],
             {"axes": [1, 0]}, "axes"),
            ("indexed_add refuses mixed dtypes", "indexed_add",
             [np.ones(3, np.float32), np.zeros((1, 1), np.int32), np.ones(1, np.int32)], None, "as_type"),
            ("broadcast refuses a mismatched axis", "broadcast", [np.ones(3, np.float32)],
             {"shape": [4, 2], "axes": [1]}, "axis 0"),
            ("dynamic_slice refuses a start attribute", "dynamic_slice", [np.ones(3, np.float32), np.zeros(1, np.int32)],
             {"start": [0], "length": [1]}, "start")):
        rc, got, err = run(op, ins, attrs)
        lines = err.strip().splitlines()
        tap(rc == 2 and got is None and len(lines) == 1 and words in lines[0], desc, "exit %d: %r" % (rc, err))


def small_range(rng):
    """indexed_put's owners and indexed_add's 32-bit scratch are 4 bytes a
    target: for 8- and 16-bit dtypes more than the tensor, so they may pass
    the device's maxStorageBufferRange where the tensor fits.  With the
    range lowered to 8 KiB (NXVK_TEST_INJECT=storage_range) a [3000] target
    fits and its 12000-byte owners do not: the work goes a window of the
    targets a pass, every form asked for; updates whose 32-bit scratch does
    not fit are refused by name."""
    env = {"NXVK_TEST_INJECT": "storage_range:8192"}
    for form in (None, "gather", "packed"):
        label = "storage range 8 KiB, NXVK_SCATTER_PUT=%s" % (form or "(the rule)")
        for n, dt in enumerate(("u8", "i8", "bool", "i16", "u16", "f16")):
            tg = data(dt, (3000,), rng)
            ii = indices(("u16", "i32", "i16")[n % 3], (700, 1), 3000, rng)
            ii[::9] = ii[1]  # duplicates across windows and workgroups
            u = data(dt, (700,), rng)
            check("%s indexed_put %s [3000] <- 700 rows" % (label, dt), "indexed_put", [tg, ii, u], None,
                  o_scatter("indexed_put", tg, ii, u, None))
            if dt != "bool" and form is None:
                check("%s indexed_add %s [3000] <- 700 rows" % (label, dt), "indexed_add", [tg, ii, u], None,
                      o_scatter("indexed_add", tg, ii, u, None), close=dt == "f16")
        flush(label, dict(env, NXVK_SCATTER_PUT=form) if form else env)
    rc, got, err = run("indexed_add", [np.zeros(3000, np.uint8), np.zeros((2100, 1), np.uint8),
                                       np.ones(2100, np.uint8)], env=env)
    lines = err.strip().splitlines()
    tap(rc == 2 and got is None and len(lines) == 1 and "indexed_add" in lines[0] and "storage buffer range" in lines[0],
        "storage range 8 KiB: indexed_add u8 of 2100 updates (8400 bytes in 32 bits) is refused by name",
        "exit %d: %r" % (rc, err))


def put_forms(rng):
    """indexed_put under each pass structure (NXVK_SCATTER_PUT, index.c's
    put_form) and the rule (gather, or owned for a few updates into a large
    target): every dtype, bits exact (NaN, -0.0 and inf updates travel
    unchanged), duplicates across workgroups, out-of-range rows dropped,
    windows."""
    no_i64 = {"NXVK_TEST_INJECT": "no_int64"}
    for form in ("packed", "gather", "owned", None, "no_int64"):
        label = "indexed_put NXVK_SCATTER_PUT=%s" % (form or "(the rule)")
        if form == "no_int64":
            label = "indexed_put, the rule without 64-bit atomics (NXVK_TEST_INJECT=no_int64)"
        for n, dt in enumerate(NP):
            if form == "no_int64" and dt in ("i64", "u64", "f64"):
                continue
            ix = IX[(n + 3) % len(IX)]
            if form == "no_int64" and ix in ("i64", "u64"):
                ix = "i32"
            tg = data(dt, (40, 3), rng)
            ii = indices(ix, (900, 1), 40, rng)
            u = data(dt, (900, 3), rng)
            check("%s %s [40,3] rows [900,1] %s" % (label, dt, ix), "indexed_put", [tg, ii, u], None,
                  o_scatter("indexed_put", tg, ii, u, None))
            tg = data(dt, (6, 5, 4), rng)
            ii = indices(ix, (30, 2), 6, rng)
            ii[:, 1] = indices(ix, (30,), 4, rng)
            u = data(dt, (30, 3), rng)
            check("%s %s axes [0,2] window [30,3] %s" % (label, dt, ix), "indexed_put", [tg, ii, u],
                  {"axes": [0, 2]}, o_scatter("indexed_put", tg, ii, u, [0, 2]))
            tg = data(dt, (3000,), rng)
            ii = indices(ix if ix not in ("u8", "i8") else "i32", (7, 1), 3000, rng)
            u = data(dt, (7,), rng)
            check("%s %s 7 updates into 3000 %s" % (label, dt, ix), "indexed_put", [tg, ii, u], None,
                  o_scatter("indexed_put", tg, ii, u, None))
        flush(label, no_i64 if form == "no_int64" else {"NXVK_SCATTER_PUT": form} if form else None)
    rc, _, err = nxvk(["run", "--op", "add", '{"dtype":"f32","shape":[1],"data":[1]}',
                       '{"dtype":"f32","shape":[1],"data":[1]}'], env=dict(NXVK_SCATTER_PUT="packed", **no_i64))
    lines = err.strip().splitlines()
    tap(rc == 2 and len(lines) == 1 and "NXVK_SCATTER_PUT=packed" in lines[0] and "64-bit" in lines[0],
        "NXVK_SCATTER_PUT=packed is refused on a device without 64-bit atomics, naming the variable",
        "exit %d: %r" % (rc, err))


def main():
    if not have_binary():
        return
    nphelp.private_copy(TMP)
    _, ops, _ = list_ops()
    tap(all(o in ops for o in OPS), "nxvk run --list-ops lists %s" % ", ".join(OPS))
    cases(np.random.default_rng(20261126))


if __name__ == "__main__":
    nphelp.main(main, TMP)
