#!/usr/bin/python3
"""test_reduce_exact.py - sum, mean and product whose every order of
evaluation is exact, so numpy's result (in f64, rounded once to the dtype)
is the only right answer, bit for bit, under every form of reduce.comp's
f32 adds (NXVK_REDUCE_ADD), both split forms (NXVK_REDUCE_FOLD) and the
16-byte loads (NXVK_REDUCE_VEC=4, the GPU rule), with a
driver that flushes denormals (NVIDIA's f32: shaderDenormPreserveFloat32 =
false) emulated: fuzz makes the driver's add and multiply flush denormal
operands and results, so every invocation whose run met a denormal must
have been run again with nxmath's exact adds, or the results differ.

  - sums of small multiples of the smallest denormal (every partial sum
    exact; a flushing add makes them 0)
  - sums of normal values below 2^-103 whose running sums dip below 2^-126
  - means of the first (the exact sum divided once, correctly rounded)
  - products of powers of two whose running product in one invocation's
    run dips below 2^-126 and comes back (every subset's product is in
    range, so any grouping is exact)
  - NaN, inf and -0 among denormals (a sum starts from +0, as the CPU
    reference and Nx: the sum of -0s is +0)
  - random normal values (order-dependent sums), with and without tiny
    values that make the fast form run again exactly: the fast form gives
    the exact form's bits, and both are near numpy's

f16, bf16 and f32 (f16 and bf16 add in f32, rounded once).  The flush form
(the emulated flush, never checked) must get the denormal cases wrong: the
emulation has teeth.  TAP on stdout.  Environment: NXVK (default ./nxvk).
"""
import json
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import nphelp  # noqa: E402
from nphelp import check as tap, load, round_to, run_cases, scratch  # noqa: E402

TMP = scratch("reduce_exact")


# the smallest denormal's exponent of each dtype
DMIN = {"f32": -149, "bf16": -133, "f16": -24}
# products: exponents of the values one invocation's run meets in turn,
# down below 2^-126 and back (every subset's product within range)
PROD = {"f32": [-70, -70, -5, 80], "bf16": [-70, -70, -5, 80], "f16": [-24] * 5 + [-14] + [15] * 8}


def run_positions(dt, n):
    """the first elements (in order) of invocation 3's run over a contiguous
    axis of n elements split in chunks of at least 4096: 16-bit dtypes read
    words (elements 2w, 2w + 1, w = 3, 3 + 256, ...), others elements 3,
    3 + 256, ..."""
    if dt in ("f16", "bf16"):
        return [2 * (3 + 256 * (k // 2)) + (k & 1) for k in range(16)]
    return [3 + 256 * k for k in range(16)]


def cases(rng):
    """(op, dt, shape, attrs, x (f64), want (f64, or None: the exact form's result), tag)"""
    out = []
    shapes = [((1000,), {}), ((30001,), {}), ((300, 70), {"axes": [0]}), ((3, 30000), {"axes": [1]}),
              ((20001, 2), {"axes": [0]}), ((40, 1500), {})]
    for dt in ("f32", "bf16", "f16"):
        dmin = DMIN[dt]
        for shape, attrs in shapes:
            axes = tuple(attrs.get("axes", range(len(shape))))
            nred = int(np.prod([shape[a] for a in axes]))
            # sums: multiples of the smallest denormal, k in [-100, 100]
            xs = np.ldexp(rng.integers(-100, 101, shape).astype(np.float64), dmin)
            ws = xs.sum(axis=axes)
            out.append(("sum", dt, shape, attrs, xs, round_to(dt, ws), "denormals"))
            out.append(("mean", dt, shape, attrs, xs, round_to(dt, ws / nred), "denormals"))
            # normal values (4 to 100 units of 2^-128) whose running sums dip below 2^-126
            if dt != "f16":
                xd = np.ldexp((rng.integers(4, 101, shape) * np.where(rng.random(shape) < 0.5, -1, 1))
                              .astype(np.float64), -128)
                out.append(("sum", dt, shape, attrs, xd, round_to(dt, xd.sum(axis=axes)), "dips"))
            # random normal values: the exact form's bits
            xr = rng.standard_normal(shape).astype(np.float32).astype(np.float64)
            xr = round_to(dt, xr)
            out.append(("sum", dt, shape, attrs, xr, None, "normal"))
            # and with tiny values among them: fast runs most invocations
            # again (run_exact), in the same order of adds as exact's
            if dt != "f16":
                xt = xr.copy()
                xt.flat[::97] = np.ldexp(np.where(rng.random(xt.flat[::97].shape) < 0.5, -1.0, 1.0), -110)
                out.append(("sum", dt, shape, attrs, xt, None, "normal, tiny values"))
            if shape == (1000,) or shape == (40, 3000):
                out.append(("product", dt, shape, attrs, np.where(rng.random(shape) < 0.5, -1.0, 1.0) *
                            np.exp2(np.round(rng.standard_normal(shape) * 0.3)), None, "normal"))
        # products that dip below 2^-126 within one invocation's run (1-D,
        # chunks of 4096 and one pass)
        for n in (1000 if dt == "f32" else 8000, 16384, 24000):
            x = np.where(rng.random(n) < 0.5, -1.0, 1.0)
            pos = run_positions(dt, n)
            for k, e in enumerate(PROD[dt]):
                x[pos[k]] = np.ldexp(x[pos[k]], e)
            out.append(("product", dt, (n,), {}, x, round_to(dt, np.prod(x)), "dips"))
        # NaN, inf and -0 among denormals
        n = 20000
        base = np.ldexp(rng.integers(1, 50, n).astype(np.float64), dmin)
        for tag, vals, want_sum in (("inf", {7: np.inf}, np.inf), ("inf-inf", {7: np.inf, 9000: -np.inf}, np.nan),
                                    ("nan", {11: np.nan}, np.nan)):
            x = base.copy()
            for i, v in vals.items():
                x[i] = v
            out.append(("sum", dt, (n,), {}, x, np.array(want_sum), tag))
        z = -np.zeros(n)
        out.append(("sum", dt, (n,), {}, z, np.array(0.0), "-0s (+0, as the CPU reference and Nx)"))
        zd = z.copy()
        zd[::3] = np.ldexp(rng.integers(-5, 6, zd[::3].shape).astype(np.float64), dmin)
        out.append(("sum", dt, (n,), {}, zd, round_to(dt, zd.sum()), "-0s and denormals"))
        # products: -0 among values that dip (the sign is exact), inf * 0
        x = np.where(rng.random(n) < 0.5, -1.0, 1.0)
        pos = run_positions(dt, n)
        for k, e in enumerate(PROD[dt]):
            x[pos[k]] = np.ldexp(x[pos[k]], e)
        x0 = x.copy()
        x0[5000] = -0.0
        out.append(("product", dt, (n,), {}, x0, round_to(dt, np.prod(x0)), "-0"))
        x0 = x0.copy()
        x0[6000] = np.inf
        out.append(("product", dt, (n,), {}, x0, np.array(np.nan), "inf * 0"))
    return out


# name, variables, the form whose bits order-dependent sums must have (the
# same order of adds: 16-byte loads give each invocation other elements)
FORMS = (("fast (the rule)", {}, "exact"),
         ("exact", {"NXVK_REDUCE_ADD": "exact"}, "exact"),
         ("fuzz, two passes", {"NXVK_REDUCE_ADD": "fuzz", "NXVK_REDUCE_FOLD": "0"}, "exact"),
         ("fuzz, folded", {"NXVK_REDUCE_ADD": "fuzz", "NXVK_REDUCE_FOLD": "1"}, "exact"),
         ("exact, 16-byte loads", {"NXVK_REDUCE_ADD": "exact", "NXVK_REDUCE_VEC": "4"}, "exact, 16-byte loads"),
         ("fuzz, 16-byte loads, folded", {"NXVK_REDUCE_ADD": "fuzz", "NXVK_REDUCE_VEC": "4", "NXVK_REDUCE_FOLD": "1"},
          "exact, 16-byte loads"))


def run_form(cs, env_add):
    """every case of a dtype in one graph; {case index: f64 result or error text}"""
    by_dt = {}
    for i, c in enumerate(cs):
        by_dt.setdefault(c[1], []).append((i, c))
    got = {}
    for dt, lst in by_dt.items():
        rc, err, paths = run_cases(TMP, dt, [(op, [(dt, x)], attrs) for _, (op, _, _, attrs, x, _, _) in lst],
                                   env=env_add)
        for (i, _), path in zip(lst, paths):
            got[i] = load(path).astype(np.float64) if path else (err or "exit %d" % rc)
    return got


def same(g, w):
    """bit for bit as f64 (the dtype's values are exact in f64): equal with
    equal signs, or both NaN"""
    g, w = np.asarray(g, np.float64), np.asarray(w, np.float64)
    if g.shape != w.shape:
        return np.zeros(w.shape, bool) if w.shape else np.array(False)
    return ((g == w) & (np.signbit(g) == np.signbit(w))) | (np.isnan(g) & np.isnan(w))


def desc_of(c, form):
    op, dt, shape, attrs, _, _, tag = c
    return "%s %s %s shape=%s attrs=%s (%s)" % (op, dt, tag, list(shape), json.dumps(attrs), form)


def main():
    cs = cases(np.random.default_rng(2031))
    results = {name: run_form(cs, env) for name, env, _ in FORMS}
    for name, _, ref_form in FORMS:
        got = results[name]
        exact = results[ref_form]
        for i, c in enumerate(cs):
            g = got[i]
            if isinstance(g, str):
                tap(False, desc_of(c, name), g)
                continue
            want = c[5]
            if want is None:
                e = exact[i]
                if isinstance(e, str):
                    tap(False, desc_of(c, name) + ": the bits of " + ref_form, ref_form + " failed: " + e)
                    continue
                ok = same(g, e)
                # and near numpy (order-dependent: f32 sums, then the dtype's rounding)
                x = c[4]
                axes = tuple(c[3].get("axes", range(len(c[2]))))
                ref = round_to(c[1], x.sum(axis=axes) if c[0] == "sum" else np.prod(x, axis=axes))
                tol = {"f32": 1e-4, "bf16": 2e-2, "f16": 4e-3}[c[1]]
                with np.errstate(invalid="ignore"):
                    near = (g == ref) | (np.abs(g - ref) <= tol * np.maximum(1.0, np.abs(ref)))
                tap(bool(np.all(ok)) and bool(np.all(near)), desc_of(c, name) + ": the bits of %s, near numpy" % ref_form,
                    "differs from " + ref_form + " at %d of %d, far from numpy at %d" % (np.sum(~ok), ok.size, np.sum(~near)))
            else:
                ok = same(g, want)
                bad = np.argwhere(~np.atleast_1d(ok))
                gg, ww = np.atleast_1d(g), np.atleast_1d(want)
                tap(len(bad) == 0, desc_of(c, name) + ": numpy's, bit for bit",
                    "" if not len(bad) else "at %s: got %r, want %r (%d of %d differ)" % (
                        tuple(bad[0]), gg[tuple(bad[0])], ww[tuple(bad[0])], len(bad), ww.size))
    # the emulated flush has teeth: never checked, it loses the denormal sums
    # and the products that dip (f16 sums never meet a denormal: not asked)
    flush = run_form(cs, {"NXVK_REDUCE_ADD": "flush", "NXVK_REDUCE_FOLD": "1"})
    for dt in ("f32", "bf16", "f16"):
        for op, tag in (("sum", "denormals"), ("product", "dips")):
            if dt == "f16" and op == "sum":
                continue
            idx = [i for i, c in enumerate(cs) if c[0] == op and c[1] == dt and c[6] == tag]
            wrong = [i for i in idx if isinstance(flush[i], str) or not np.all(same(flush[i], cs[i][5]))]
            tap(len(idx) > 0 and len(wrong) == len(idx),
                "%s %s %s: the emulated flush, never checked, gets every case wrong (%d of %d)" % (
                    op, dt, tag, len(wrong), len(idx)))


if __name__ == "__main__":
    nphelp.main(main, TMP)
