#!/usr/bin/python3
"""test_f16_numpy.py - dot's coopmat rounding (f32 -> f16, nearest even)
against numpy's float16, on edge values and random bit patterns.

build/tests/test_f16 --round reads f32 bit patterns and prints, for each, the
kernel's f16 bits (shaders/lib/f16.glsl compiled as C) and the CPU
reference's result (nxvk_f16_round, as f64 bits); both must be numpy's
np.float16(np.float32(x)) (NaN as a class, with its sign).  Output is TAP.
"""
import os
import struct
import subprocess
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from pytap import ROOT, done, tap as check  # noqa: E402

BIN = os.path.join(ROOT, "build", "tests", "test_f16")


def edge_patterns():
    """f32 bit patterns around every f16 boundary and tie"""
    out = set()
    for s in (0, 0x80000000):
        for v in (0, 0x7F800000, 0x7FC00000, 0x7F800001, 0x7FFFFFFF, 0x7F7FFFFF, 1, 0x007FFFFF,
                  0x00800000):
            out.add(s | v)
        for e in range(0x60, 0x90):  # f32 exponents from 2^-31 to 2^16
            for m in (0, 1, 0x1000, 0x0FFF, 0x1001, 0x2000, 0x3000, 0x7FF000, 0x7FFFFF, 0x400000,
                      0x401000, 0x7FE000, 0x7FF000 - 1):
                out.add(s | (e << 23) | m)
        for v in (0x477FE000, 0x477FEFFF, 0x477FF000, 0x477FF001, 0x33000000, 0x33000001,
                  0x32FFFFFF, 0x33800000, 0x387FF000, 0x387FEFFF, 0x387FC000):
            out.add(s | v)
    return sorted(out)


def main():
    if not os.access(BIN, os.X_OK):
        check(False, "%s is built (make build/tests/test_f16)" % BIN)
        return done()
    rng = np.random.default_rng(20261122)
    pats = edge_patterns() + [int(x) for x in rng.integers(0, 2**32, size=200000, dtype=np.uint64)]
    res = subprocess.run([BIN, "--round"], input="".join("%08x\n" % p for p in pats),
                         capture_output=True, text=True, check=False)
    check(res.returncode == 0, "test_f16 --round runs (%s)" % res.stderr.strip()[-200:])
    lines = res.stdout.split("\n")[:-1]
    check(len(lines) == len(pats), "one answer per pattern (%d of %d)" % (len(lines), len(pats)))
    f32 = np.array(pats, dtype=np.uint32).view(np.float32)
    with np.errstate(over="ignore", invalid="ignore"):
        want = f32.astype(np.float16)
    want_bits = want.view(np.uint16)
    bad_k, bad_r = [], []
    for i, line in enumerate(lines):
        kh, rh = line.split()
        k = int(kh, 16)
        r = struct.unpack("<d", bytes.fromhex(rh)[::-1])[0]
        w, wb = float(want[i]), int(want_bits[i])
        if np.isnan(w):
            k_ok = ((k >> 10) & 0x1F) == 0x1F and (k & 0x3FF) != 0 and (k & 0x8000) == (wb & 0x8000)
            r_ok = np.isnan(r)
        else:
            k_ok = k == wb
            r_ok = r == w and np.signbit(r) == np.signbit(w)
        if not k_ok:
            bad_k.append("0x%08x: 0x%04x, numpy 0x%04x" % (pats[i], k, wb))
        if not r_ok:
            bad_r.append("0x%08x: %r, numpy %r" % (pats[i], r, w))
    n_edge = len(edge_patterns())
    check(not bad_k, "kernel rounding (shaders/lib/f16.glsl) = numpy float16 on %d edge and %d random "
          "patterns%s" % (n_edge, len(pats) - n_edge, ("; " + "; ".join(bad_k[:5])) if bad_k else ""))
    check(not bad_r, "reference rounding (nxvk_f16_round) = numpy float16 on the same patterns%s"
          % (("; " + "; ".join(bad_r[:5])) if bad_r else ""))
    return done()


if __name__ == "__main__":
    sys.exit(main())
