#!/usr/bin/python3
"""test_scan_exact.py - scans whose every order of evaluation is exact, so
numpy's sequential result is the only right answer, bit for bit, for every
kernel the engine may pick (NXVK_SCAN, the block layouts, reverse, inner
axes) and on a driver that flushes denormals (NVIDIA's f32:
shaderDenormPreserveFloat32 = false).  Lavapipe keeps denormals, so there
these cases check the kernels' indexing; on such a GPU they check that the
scan's combine is nxmath.glsl's IEEE add and multiply, not the driver's:

  - cumulative_product of powers of two whose running product dips below
    the f32 normal range (2^-126) and comes back: a flushed intermediate
    would leave every later prefix 0.  The prefix exponents stay in a band
    narrower than 2^127 so every product of a run of elements (what block
    scans combine) is finite: exact in any order.
  - cumulative_sum of small multiples of the smallest denormal: every
    partial sum is exact, and a flushing add makes them 0.
  - cumulative_max / cumulative_min of denormals of both signs.

f16 and bf16 compute in f32 (their results rounded once, as numpy's oracle
here rounds the exact f64 result), f64 in f64.  TAP on stdout.
Every case runs under each scan kernel (NXVK_SCAN): the rule, blocks and
one_pass, lookback (also with tiles of 256: many levels of
look-back totals), rts (reduce then scan), and rts and lookback with their
fast f32 adds on an emulated flush (NXVK_SCAN_ADD=fuzz).  Environment: NXVK (default ./nxvk).
"""
import json
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import nphelp  # noqa: E402
from nphelp import check as tap, load, round_to, run_cases, scratch  # noqa: E402

TMP = scratch("scan_exact")


def walk(rng, n, lo, hi, step_lo, step_hi, start):
    """prefix exponents: a random walk within [lo, hi] from start, steps in
    [step_lo, step_hi], pushed towards lo and back up (several dips)"""
    e = np.empty(n, np.int64)
    e[0] = start
    down = True
    for k in range(1, n):
        s = int(rng.integers(step_lo, step_hi + 1))
        s = -abs(s) if down else abs(s)
        if rng.random() < 0.3:
            s = -s
        nxt = min(max(e[k - 1] + s, lo), hi)
        if nxt <= lo + 2:
            down = False
        elif nxt >= hi - 2:
            down = True
        e[k] = nxt
    return e


# dtype: (prefix band lo, hi, largest step, smallest denormal exponent)
PROD = {"f32": (-148, -25, 24, -149), "bf16": (-148, -25, 24, -133),
        "f16": (-140, -14, 15, -24), "f64": (-1072, -50, 200, -1074)}


def cases(rng):
    out = []
    shapes = [((5000,), {}), ((5000,), {"reverse": True}), ((2, 4100), {"axis": 1, "reverse": True}),
              ((300, 3), {"axis": 0}), ((65537,), {"reverse": True})]
    for dt in ("f32", "bf16", "f16", "f64"):
        lo, hi, step, dmin = PROD[dt]
        for shape, attrs in shapes:
            ax = attrs.get("axis", 0)
            n = shape[ax]
            lines = int(np.prod(shape)) // n
            # products: each line's prefix exponents walk the band, the
            # first element starts it (an input exponent within the dtype)
            es = []
            for _ in range(lines):
                e = walk(rng, n, lo, hi, 1, step, -14 if dt == "f16" else -20)
                steps = np.diff(e, prepend=0)
                steps[0] = e[0]
                es.append(steps)
            st = np.stack(es)  # [lines, n] in scan order
            sign = np.where(rng.random(st.shape) < 0.5, -1.0, 1.0)
            xp = sign * np.ldexp(1.0, st)
            # sums: multiples of the smallest denormal, k in [-100, 100]
            xs = np.ldexp(rng.integers(-100, 101, st.shape).astype(np.float64), dmin)
            # max / min: denormals of both signs
            xm = np.ldexp(rng.integers(-1000, 1001, st.shape).astype(np.float64),
                          dmin if dt != "f16" else -24)
            if dt == "bf16":
                xm = np.ldexp(rng.integers(-127, 128, st.shape).astype(np.float64), dmin)
            # sums of normal values whose running sums dip below 2^-126:
            # multiples of 2^(dmin + 21) (f32: 2^-128) of at least 4 units
            xd = np.ldexp(rng.integers(4, 101, st.shape) * np.where(rng.random(st.shape) < 0.5, -1, 1)
                          .astype(np.float64), dmin + 21)
            for op, x, f in (("cumulative_product", xp, np.cumprod), ("cumulative_sum", xs, np.cumsum),
                             ("cumulative_sum", xd, np.cumsum),
                             ("cumulative_max", xm, np.maximum.accumulate),
                             ("cumulative_min", xm, np.minimum.accumulate)):
                want = f(x, axis=1)  # exact in f64 (the f64 dtype's products: powers of two)
                if attrs.get("reverse"):
                    x, want = x[:, ::-1], want[:, ::-1]
                # lines back to the tensor's layout
                def lay(a):
                    if ax == 0 and len(shape) == 2:
                        return a.T.reshape(shape)
                    return a.reshape(shape)
                out.append((op, dt, shape, attrs, lay(x), lay(round_to(dt, want))))
    return out


# dtype: a prefix band past the dtype's range both ways (2^-150 and below
# round to 0, 2^128 and above to inf), the largest step of an element
WIDE = {"f32": (-420, 300, 100), "bf16": (-420, 300, 100), "f16": (-150, 80, 14), "f64": (-2500, 2200, 600)}


def wide_cases(rng):
    """cumulative_product of powers of two whose prefix leaves the dtype's
    range (under and over) and comes back: every prefix is the exact
    product rounded once (numpy's oracle in float64 on the exponents,
    np.ldexp rounding 2^e once; numpy's own cumprod in the dtype, step by
    step, would keep 0 or inf after a partial product left the range)"""
    out = []
    for dt in ("f32", "bf16", "f16", "f64"):
        lo, hi, step = WIDE[dt]
        for shape, attrs in (((5000,), {}), ((2, 4100), {"axis": 1, "reverse": True}), ((300, 3), {"axis": 0})):
            ax = attrs.get("axis", 0)
            n = shape[ax]
            lines = int(np.prod(shape)) // n
            es = np.stack([walk(rng, n, lo, hi, 1, step, -14 if dt == "f16" else -20) for _ in range(lines)])
            steps = np.diff(es, axis=1, prepend=0)
            sign = np.where(rng.random(es.shape) < 0.5, -1.0, 1.0)
            x = sign * np.ldexp(1.0, steps)
            with np.errstate(over="ignore"):
                want = np.cumprod(sign, axis=1) * np.ldexp(1.0, es)
            if attrs.get("reverse"):
                x, want = x[:, ::-1], want[:, ::-1]
            lay = (lambda a: a.T.reshape(shape)) if ax == 0 and len(shape) == 2 else (lambda a: a.reshape(shape))
            out.append(("cumulative_product", dt, shape, attrs, lay(x), lay(round_to(dt, want))))
    return out


def window_wide(rng):
    """window_product of powers of two whose partial products (in row-major
    window order) leave the dtype's range and whose total may come back:
    the exact product rounded once, as the scans'; the general path (1-D,
    dilated) and the pooling path (windows on the last two axes)"""
    top = {"f32": 60, "bf16": 60, "f16": 12, "f64": 400}
    for dt in ("f32", "bf16", "f16", "f64"):
        cases, wants = [], []
        for shape, attrs in (((3000,), {"window_dimensions": [16]}),
                             ((3000,), {"window_dimensions": [8], "strides": [3], "window_dilations": [2]}),
                             ((2, 40, 50), {"window_dimensions": [1, 4, 4], "strides": [1, 2, 2]})):
            k = rng.integers(-top[dt], top[dt] + 1, shape)
            sign = np.where(rng.random(shape) < 0.5, -1.0, 1.0)
            x = sign * np.ldexp(1.0, k)
            win = tuple(attrs["window_dimensions"])
            dil = tuple(attrs.get("window_dilations", [1] * len(shape)))
            span = tuple((w - 1) * d + 1 for w, d in zip(win, dil))
            sl = tuple(slice(None, None, s) for s in attrs.get("strides", [1] * len(shape)))
            sub = tuple(slice(None, None, d) for d in dil)
            def wsum(a, f):
                v = np.lib.stride_tricks.sliding_window_view(a, span)[sl]
                return f(v[(Ellipsis,) + sub].reshape(v.shape[:len(shape)] + (-1,)), axis=-1)
            ks = wsum(k, np.sum)
            with np.errstate(over="ignore"):
                want = wsum(sign, np.prod) * np.ldexp(1.0, ks)
            cases.append(("window_product", [(dt, x)], attrs))
            # the windows whose total is a normal value but a partial product (row-major) is not
            elo, ehi = {"f32": (-126, 127), "bf16": (-126, 127), "f16": (-14, 15), "f64": (-1022, 1023)}[dt]
            part = wsum(k, lambda v, axis: np.cumsum(v, axis=axis))
            dips = (ks >= elo) & (ks <= ehi) & np.any((part < elo) | (part > ehi), axis=-1)
            wants.append((shape, attrs, int(np.sum(dips)), round_to(dt, want)))
        rc, err, paths = run_cases(TMP, "window_" + dt, cases)
        for (shape, attrs, dips, want), path in zip(wants, paths):
            desc = "window_product %s shape=%s attrs=%s: the exact product rounded once (%d of %d normal with a " \
                   "partial product outside the normal range)" % (dt, list(shape), json.dumps(attrs), dips, want.size)
            if path is None:
                tap(False, desc, err)
                continue
            g = load(path).astype(np.float64)
            ok = (g.shape == want.shape) and bool(np.all((g == want) & (np.signbit(g) == np.signbit(want))))
            bad = np.argwhere(~((g == want) & (np.signbit(g) == np.signbit(want)))) if g.shape == want.shape else []
            tap(ok and dips > 0, desc, "shape %s; %d differ%s" % (g.shape, len(bad), "" if not len(bad) else ", first at %s: got %r "
                "want %r" % (tuple(bad[0]), g[tuple(bad[0])], want[tuple(bad[0])])))


def big_cases(rng):
    """rows past one group of 256 tiles (the one-pass scan's chain of
    group prefixes): i32 sums, and f32 sums of multiples of 2^-149 small
    enough to stay exact"""
    out = []
    for dt, shape, attrs in (("i32", (2, 1200000), {"axis": 1}), ("f32", (1200000,), {"reverse": True}),
                             ("i32", (3000000,), {})):
        if dt == "i32":
            x = rng.integers(-1000, 1001, shape).astype(np.int32)
        else:
            x = np.ldexp(rng.integers(-3, 4, shape).astype(np.float64), -149)
        ax = attrs.get("axis", 0)
        xs = np.flip(x, ax) if attrs.get("reverse") else x
        want = np.cumsum(xs, axis=ax, dtype=np.int32 if dt == "i32" else np.float64)
        want = np.flip(want, ax) if attrs.get("reverse") else want
        out.append(("cumulative_sum", dt, shape, attrs, x, want.astype(np.float64)))
    return out


# Each case runs under every scan kernel: the device's rule, the three-pass
# block scan and the one-pass scan (on lavapipe on one thread: see
# scan.comp's wait_flag; LP_NUM_THREADS means nothing to other drivers).
VARIANTS = (("rule", {}), ("blocks", {"NXVK_SCAN": "blocks"}),
            ("one_pass", {"NXVK_SCAN": "one_pass", "LP_NUM_THREADS": "1"}),
            ("lookback", {"NXVK_SCAN": "lookback", "LP_NUM_THREADS": "1"}),
            ("lookback 64x4", {"NXVK_SCAN": "lookback", "NXVK_SCAN_WG": "64", "NXVK_SCAN_ITEMS": "4",
                               "LP_NUM_THREADS": "1"}),
            # rts never waits: lavapipe's threads as they are; its fast f32
            # adds with NVIDIA's flush emulated (fuzz: every tile that met
            # a denormal must be re-run exactly), tiles of 256: 3 levels
            ("rts", {"NXVK_SCAN": "rts"}),
            ("rts fuzz 64x4", {"NXVK_SCAN": "rts", "NXVK_SCAN_ADD": "fuzz", "NXVK_SCAN_WG": "64",
                               "NXVK_SCAN_ITEMS": "4"}),
            ("lookback fuzz", {"NXVK_SCAN": "lookback", "NXVK_SCAN_ADD": "fuzz", "LP_NUM_THREADS": "1"}))


def main():
    rng = np.random.default_rng(2029)
    cs = cases(rng) + wide_cases(rng) + big_cases(rng)
    by_dt = {}
    for i, c in enumerate(cs):
        by_dt.setdefault(c[1], []).append((i, c))
    for vname, venv in VARIANTS:
        run_variant(cs, by_dt, vname, venv)
    never_wrong(np.random.default_rng(5))
    window_wide(np.random.default_rng(7))
    # the cases are not vacuous: products dip below the f32 normal range and return
    e = walk(np.random.default_rng(1), 5000, *PROD["f32"][:2], 1, 24, -20)
    dips = np.sum((e[1:] >= -126) & (e[:-1] < -126))
    tap(dips >= 3, "the f32 product walk comes back from below 2^-126 (%d times)" % dips)
    # and the wide ones leave f32's range both ways and come back
    e = walk(np.random.default_rng(1), 5000, *WIDE["f32"][:2], 1, WIDE["f32"][2], -20)
    back = np.sum((e[1:] >= -126) & (e[:-1] < -150)), np.sum((e[1:] <= 127) & (e[:-1] > 127))
    tap(min(back) >= 3, "the wide f32 product walk comes back from below 2^-150 (%d times) and above 2^127 (%d)"
        % back)


def never_wrong(rng):
    """The one-pass kernels where workgroups do wait for each other (lavapipe on
    4 threads: a wait there ends after 65 535 turns): the right result, or the
    op fails with the scan's error; never a wrong result."""
    x = rng.integers(-1000, 1001, 3000000).astype(np.int32)
    want = np.cumsum(x, dtype=np.int32)
    for kind in ("lookback", "one_pass"):
        rc, err, (out,) = run_cases(TMP, "wait", [("cumulative_sum", [("i32", x)], {})],
                                    env={"NXVK_SCAN": kind, "LP_NUM_THREADS": "4"})
        if out is not None:
            g = load(out)
            tap(np.array_equal(g, want), "%s with waiting workgroups: the right result (exit 0)" % kind,
                "%d of %d differ" % (np.sum(g != want), want.size))
        else:
            tap("waited too long for an earlier one" in err,
                "%s with waiting workgroups: the scan's error (exit %d)" % (kind, rc), err)


def run_variant(cs, by_dt, vname, venv):
    got = {}
    for dt, lst in by_dt.items():
        rc, err, paths = run_cases(TMP, dt, [(op, [(dt, x)], attrs) for _, (op, _, _, attrs, x, _) in lst],
                                   env=venv)
        for (i, _), path in zip(lst, paths):
            got[i] = load(path).astype(np.float64) if path else err
    for i, (op, dt, shape, attrs, x, want) in enumerate(cs):
        desc = "%s %s shape=%s attrs=%s exact (%s)" % (op, dt, list(shape), json.dumps(attrs), vname)
        g = got[i]
        if isinstance(g, str):
            tap(False, desc, g)
            continue
        ok = (g == want) & (np.signbit(g) == np.signbit(want))
        bad = np.argwhere(~ok)
        tap(len(bad) == 0, desc, "" if not len(bad) else "at %s: got %r, want %r (%d of %d differ)" % (
            tuple(bad[0]), g[tuple(bad[0])], want[tuple(bad[0])], len(bad), want.size))


if __name__ == "__main__":
    nphelp.main(main, TMP)
