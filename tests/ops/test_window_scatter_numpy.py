#!/usr/bin/python3
"""test_window_scatter_numpy.py - window_scatter_max and window_scatter_min
against an oracle written here from Nx 0.7.3's definition (numpy has no such
op; its arrays only hold the data):

  each window (strides, padding; no dilations), in row-major window order,
  selects one element of x: walking the window's elements of x in row-major
  order (padded positions are skipped: never selected), the first, then each
  later v with v >= acc (max) / v <= acc (min), IEEE -- the last of equal
  values wins, -0 == +0, a NaN only when it comes first (Nx.BinaryBackend's
  select_and_scatter with greater_equal / less_equal).  The result has x's
  shape and the source's dtype: init everywhere, plus, for each window in
  row-major order, its source value added onto its selected element (f32,
  f16, bf16 added in f32 and rounded once to 16 bits; f64 in f64; integers
  wrap).

Every dtype `nxvk run --list-ops` lists, inputs with ties, NaN, +-inf, +-0
and the integer extremes, overlapping windows, "same" and explicit padding
(windows that are all padding drop their source), an x of another dtype than
the source, empty tensors, and the errors (source shape, init shape,
dilations).  TAP on stdout.  Environment: NXVK (default ./nxvk).
"""
import json
import os
import subprocess
import sys
import tempfile

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from pytap import done, tap  # noqa: E402

np.seterr(all="ignore")
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
NXVK = os.environ.get("NXVK") or os.path.join(ROOT, "nxvk")
TMP = tempfile.mkdtemp(prefix="nxvk_wscatter_")
OPS = ("window_scatter_max", "window_scatter_min")
NPT = {"f16": np.float16, "f32": np.float32, "f64": np.float64, "i8": np.int8, "i16": np.int16,
       "i32": np.int32, "i64": np.int64, "u8": np.uint8, "u16": np.uint16, "u32": np.uint32,
       "u64": np.uint64, "bf16": np.float32}
FLOATS = ("f16", "bf16", "f32", "f64")

def nxvk(args):
    p = subprocess.run([NXVK] + args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=300)
    return p.returncode, p.stdout.decode(errors="replace"), p.stderr.decode(errors="replace")


def bf16_round(a):
    """f32 -> the nearest bf16 value (ties to even), as f32."""
    u = np.asarray(a, np.float32).view(np.uint32).astype(np.uint64)
    nan = np.isnan(np.asarray(a, np.float32))
    r = ((u + 0x7FFF + ((u >> 16) & 1)) >> 16) << 16
    out = r.astype(np.uint32).view(np.float32)
    return np.where(nan, np.float32(np.nan), out)


def save(path, dt, a):
    if dt == "bf16":
        bits = (np.asarray(a, np.float32).view(np.uint32) >> 16).astype("<u2")
        hdr = "{'descr': '<V2', 'fortran_order': False, 'shape': %s, }" % repr(tuple(bits.shape))
        hdr += " " * (64 - (10 + len(hdr) + 1) % 64) + "\n"
        with open(path, "wb") as f:
            f.write(b"\x93NUMPY\x01\x00" + len(hdr).to_bytes(2, "little") + hdr.encode() + bits.tobytes())
        return
    np.save(path, np.asarray(a, NPT[dt]))


def load(path):
    a = np.load(path)
    if a.dtype.kind == "V":  # bf16
        return (a.reshape(-1).view("<u2").astype(np.uint32) << 16).view(np.float32).reshape(a.shape)
    return a


def values(dt, shape, rng):
    """Small values with many ties, and the dtype's edge values."""
    n = int(np.prod(shape)) if len(shape) else 1
    if dt in FLOATS:
        v = rng.integers(-4, 5, n).astype(np.float64) / 2
        edge = [np.nan, np.inf, -np.inf, 0.0, -0.0, 0.0, -0.0]
        pos = rng.choice(n, min(n, len(edge)), replace=False) if n else []
        for j, p in enumerate(pos):
            v[p] = edge[j]
        a = v.astype(np.float16 if dt == "f16" else np.float64 if dt == "f64" else np.float32)
        return a.reshape(shape)
    info = np.iinfo(NPT[dt])
    v = rng.integers(max(info.min, -3), min(info.max, 3) + 1, n).astype(NPT[dt])
    edge = [info.min, info.max, info.max]
    pos = rng.choice(n, min(n, len(edge)), replace=False) if n else []
    for j, p in enumerate(pos):
        v[p] = edge[j]
    return v.reshape(shape)


def sources(dt, shape, rng):
    n = int(np.prod(shape)) if len(shape) else 1
    if dt in FLOATS:
        # fractions whose sums round in f16 / bf16 / f32
        v = rng.standard_normal(n) * 3
        a = v.astype(np.float16 if dt == "f16" else np.float64 if dt == "f64" else np.float32)
        if dt == "bf16":
            a = bf16_round(a)
        return a.reshape(shape)
    info = np.iinfo(NPT[dt])
    v = rng.integers(max(info.min, -100), min(info.max, 100) + 1, n).astype(NPT[dt])
    if n:
        v[0] = info.max  # the sums wrap
    return v.reshape(shape)


# ---------------------------------------------------------------- the oracle

def geometry(shape, attrs):
    rank = len(shape)
    win = attrs["window_dimensions"]
    st = attrs.get("strides", [1] * rank)
    pad = attrs.get("padding", "valid")
    if pad == "valid":
        pad = [[0, 0]] * rank
    elif pad == "same":
        pad = [[(w - 1) // 2, w - 1 - (w - 1) // 2] for w in win]
    out = []
    for d in range(rank):
        padded = shape[d] + pad[d][0] + pad[d][1]
        out.append((padded - win[d]) // st[d] + 1 if padded >= win[d] else 0)
    return win, st, [p[0] for p in pad], out


def select(x, o, win, st, lo, is_max):
    """x's element (a tuple) that window o selects, None when it is all padding."""
    best, acc = None, None
    for w in np.ndindex(*win):
        c = tuple(o[d] * st[d] - lo[d] + w[d] for d in range(len(win)))
        if any(c[d] < 0 or c[d] >= x.shape[d] for d in range(len(win))):
            continue
        v = x[c]
        v = int(v) if x.dtype.kind in "iu" else float(v)
        if best is None or (v >= acc if is_max else v <= acc):
            best, acc = c, v
    return best


def oracle(op, x, src, init, dt, attrs):
    win, st, lo, out = geometry(x.shape, attrs)
    is_max = op == "window_scatter_max"
    fl = dt in FLOATS
    if fl:
        acc_t = np.float64 if dt == "f64" else np.float32
        acc = np.full(x.shape, acc_t(float(init)), acc_t)
    else:
        bits = np.iinfo(NPT[dt]).bits
        acc = np.full(x.shape, int(init), object)
    for o in np.ndindex(*out):
        e = select(x, o, win, st, lo, is_max)
        if e is None:
            continue
        if fl:
            acc[e] = acc_t(acc[e] + acc_t(float(src[o])))
        else:
            acc[e] = acc[e] + int(src[o])
    if fl:
        if dt == "f16":
            return acc.astype(np.float16)
        if dt == "bf16":
            return bf16_round(acc)
        return acc
    m = (1 << bits)
    signed = np.iinfo(NPT[dt]).min < 0
    flat = [((v % m) - m if signed and (v % m) >= m // 2 else v % m) for v in acc.reshape(-1)]
    return np.array(flat, dtype=NPT[dt]).reshape(x.shape)


def same(got, want):
    if got.shape != want.shape:
        return False, "shape %s, want %s" % (got.shape, want.shape)
    if got.dtype.kind == "f":
        g, w = got.astype(np.float64), want.astype(np.float64)
        ok = (np.isnan(g) & np.isnan(w)) | ((g == w) & (np.signbit(g) == np.signbit(w)))
    else:
        ok = got.astype(object) == want.astype(object)
    ok = np.asarray(ok, bool)
    if ok.all():
        return True, ""
    i = tuple(np.argwhere(~ok)[0])
    return False, "at %s: got %r, want %r (%d differ)" % (i, got[i], want[i], (~ok).sum())


# ---------------------------------------------------------------- running

_queue = []


def queue(op, xdt, dt, x, src, init, attrs):
    _queue.append((op, xdt, dt, x, src, init, attrs))


def flush():
    """Every queued case in one graph (one process)."""
    gdir = tempfile.mkdtemp(dir=TMP)
    graph = {"inputs": {}, "ops": [], "outputs": {}}
    for ci, (op, xdt, dt, x, src, init, attrs) in enumerate(_queue):
        names = []
        for k, (a, adt) in enumerate(((x, xdt), (src, dt), (init, dt))):
            nm = "c%d_%d" % (ci, k)
            save(os.path.join(gdir, nm + ".npy"), adt, a)
            graph["inputs"][nm] = nm + ".npy"
            names.append(nm)
        graph["ops"].append({"op": op, "in": names, "attrs": attrs, "out": "o%d" % ci})
        graph["outputs"]["o%d" % ci] = "o%d.npy" % ci
    with open(os.path.join(gdir, "g.json"), "w") as f:
        json.dump(graph, f)
    rc, _, err = nxvk(["run", os.path.join(gdir, "g.json")])
    for ci, (op, xdt, dt, x, src, init, attrs) in enumerate(_queue):
        desc = "%s x %s%s source %s attrs=%s" % (op, xdt, list(x.shape), dt, json.dumps(attrs))
        path = os.path.join(gdir, "o%d.npy" % ci)
        if rc != 0 or not os.path.exists(path):
            tap(False, desc, err.strip())
            continue
        ok, diag = same(load(path), oracle(op, x, src, init, dt, attrs))
        tap(ok, desc, None if ok else diag)
    del _queue[:]


CASES = [((4, 6), {"window_dimensions": [2, 3], "strides": [2, 3]}),
         ((4, 5), {"window_dimensions": [2, 3], "strides": [2, 2]}),
         ((6, 7), {"window_dimensions": [2, 2], "strides": [1, 1]}),             # overlapping
         ((6, 7), {"window_dimensions": [3, 3], "strides": [2, 2], "padding": "same"}),
         ((5, 7), {"window_dimensions": [2, 3], "strides": [1, 2], "padding": [[3, 0], [1, 2]]}),  # all-padding windows
         ((2, 3, 9, 8), {"window_dimensions": [1, 1, 3, 3], "strides": [1, 1, 2, 2], "padding": "same"}),
         ((9,), {"window_dimensions": [4], "strides": [1], "padding": [[-1, 2]]}),
         ((300,), {"window_dimensions": [3], "strides": [2]}),                   # past one workgroup
         ((0, 5), {"window_dimensions": [1, 2]}),
         ((3, 4), {"window_dimensions": [4, 1], "padding": "valid"})]           # no windows: all init


def main():
    rc, out, err = nxvk(["run", "--list-ops"])
    dts = {}
    for line in out.splitlines():
        parts = line.split()
        if len(parts) >= 2 and parts[0] in OPS:
            dts[parts[0]] = parts[1].split(",")
    ok = rc == 0 and all(o in dts for o in OPS)
    tap(ok, "both ops listed", None if ok else err)
    rng = np.random.default_rng(7)
    for op in OPS:
        for dt in dts.get(op, []):
            for shape, attrs in CASES:
                _, _, _, wshape = geometry(shape, attrs)
                x = values(dt, shape, rng)
                src = sources(dt, wshape, rng)
                init = sources(dt, (), rng) if dt != "u8" else np.uint8(3)
                queue(op, dt, dt, x, src, np.asarray(init, NPT[dt]), attrs)
        # x in another dtype than the source and init (Nx: the result has
        # the source's type, x compares in its own)
        for xdt, dt in (("f32", "i32"), ("u8", "f32"), ("i64", "f64"), ("f16", "i64")):
            shape, attrs = (6, 7), {"window_dimensions": [2, 2], "strides": [1, 2]}
            _, _, _, wshape = geometry(shape, attrs)
            queue(op, xdt, dt, values(xdt, shape, rng), sources(dt, wshape, rng),
                  np.asarray(sources(dt, (), rng), NPT[dt]), attrs)
        flush()

    # errors, each naming what is wrong
    p = [os.path.join(TMP, n + ".npy") for n in ("x", "s", "i", "s2", "i2")]
    np.save(p[0], np.zeros((4, 6), np.float32))
    np.save(p[1], np.zeros((2, 2), np.float32))
    np.save(p[2], np.zeros((), np.float32))
    np.save(p[3], np.zeros((2, 3), np.float32))
    np.save(p[4], np.zeros((1,), np.float32))
    at = json.dumps({"window_dimensions": [2, 3], "strides": [2, 3]})
    for args, what, want in (([p[0], p[3], p[2]], "source of the wrong shape", "source"),
                             ([p[0], p[1], p[4]], "init not a scalar", "init"),
                             ([p[0], p[1], p[2], p[2]], "four inputs", "inputs"),
                             ([p[0], p[1], os.path.join(TMP, "i64.npy")], "init of another dtype", "i64")):
        if want == "i64":
            np.save(args[2], np.zeros((), np.int64))
        rc, _, err = nxvk(["run", "--op", "window_scatter_max", "--attrs", at] + args)
        ok = rc != 0 and want in err
        tap(ok, "refused: " + what, None if ok else "rc %d: %s" % (rc, err.strip()))
    rc, _, err = nxvk(["run", "--op", "window_scatter_min", "--attrs",
                       json.dumps({"window_dimensions": [2, 3], "strides": [2, 3], "window_dilations": [2, 1]})] + p[:3])
    ok = rc != 0 and "window_dilations" in err
    tap(ok, "refused: dilations", None if ok else "rc %d: %s" % (rc, err.strip()))
    return done()


if __name__ == "__main__":
    sys.exit(main())
