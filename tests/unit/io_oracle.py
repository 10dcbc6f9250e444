#!/usr/bin/python3
"""io_oracle.py - check nxvk's .npy reader and writer against numpy.

    /usr/bin/python3 tests/unit/io_oracle.py PATH/TO/test_io

numpy writes .npy files of every kind we read (each dtype, big-endian,
Fortran order, 0-d, empty, versions 1.0 2.0 3.0, a large array); `test_io
--roundtrip IN OUT` reads each with nxvk and writes it back; numpy.load(OUT)
must equal numpy.load(IN) in C order with our dtype (bool -> uint8, any byte
order -> little-endian).  Where IN is already what we write (C order,
little-endian, version 1.0) OUT must be byte-identical to numpy's file.
Unsupported dtypes must fail with a message naming the descr and leave no
OUT.  Output is TAP.
"""
import os
import shutil
import subprocess
import sys
import tempfile

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from pytap import done, tap as check  # noqa: E402


def edge(a):
    """Put NaN, infinities and -0 at the front of a float array."""
    flat = a.reshape(-1)
    if flat.dtype.kind == "f":
        vals = [np.nan, np.inf, -np.inf, -0.0, 0.0, np.finfo(flat.dtype).tiny / 4]
        k = min(len(vals), flat.size)
        flat[:k] = vals[:k]
    return a


def expected(a):
    """What nxvk should give back for array a."""
    want = {"f": {4: "<f4", 8: "<f8"}, "i": {4: "<i4"}, "u": {1: "|u1"}, "b": {1: "|u1"}}
    dt = np.dtype(want[a.dtype.kind][a.dtype.itemsize])
    return a.astype(dt, order="C")  # not ascontiguousarray: it makes 0-d into 1-d


def bits_equal(x, y):
    if x.dtype != y.dtype or x.shape != y.shape:
        return False
    if x.dtype.kind == "f":
        # NaN as a class; everything else bit for bit (so -0 != 0)
        nx, ny = np.isnan(x), np.isnan(y)
        if not np.array_equal(nx, ny):
            return False
        u = {4: np.uint32, 8: np.uint64}[x.dtype.itemsize]
        return np.array_equal(x[~nx].view(u), y[~ny].view(u))
    return np.array_equal(x, y)


def header_info(path):
    with open(path, "rb") as f:
        major, minor = np.lib.format.read_magic(f)
        if (major, minor) == (1, 0):
            shape, fortran, dtype = np.lib.format.read_array_header_1_0(f)
        else:
            shape, fortran, dtype = np.lib.format.read_array_header_2_0(f)
        return (major, minor), fortran, f.tell()


def main():
    if len(sys.argv) != 2:
        print("usage: io_oracle.py PATH/TO/test_io", file=sys.stderr)
        return 2
    exe = os.path.abspath(sys.argv[1])
    tmp = tempfile.mkdtemp(prefix="nxvk_io_oracle.")
    try:
        run(exe, tmp)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return done()


def run(exe, tmp):
    rng = np.random.default_rng(12345)

    def rnd(dtype, shape):
        dtype = np.dtype(dtype)
        if dtype.kind == "f":
            return edge((rng.standard_normal(shape) * 1e3).astype(dtype))
        if dtype.kind == "b":
            return rng.integers(0, 2, shape).astype(bool)
        info = np.iinfo(dtype)
        native = dtype.newbyteorder("=")
        return rng.integers(info.min, info.max, shape, endpoint=True, dtype=native).astype(dtype)

    cases = []  # (name, array, save how)
    for dt in ["<f4", "<f8", "<i4", "|u1", "|b1"]:
        cases.append((f"{dt} (3,4)", rnd(dt, (3, 4)), "save"))
        cases.append((f"{dt} 0-d", rnd(dt, ()), "save"))
        cases.append((f"{dt} empty (0,)", rnd(dt, (0,)), "save"))
        cases.append((f"{dt} empty (2,0,3)", rnd(dt, (2, 0, 3)), "save"))
        cases.append((f"{dt} rank 8", rnd(dt, (2, 1, 3, 1, 2, 2, 1, 3)), "save"))
        cases.append((f"{dt} fortran (5,3,4)", np.asfortranarray(rnd(dt, (5, 3, 4))), "save"))
    for dt in [">f4", ">f8", ">i4"]:
        cases.append((f"big-endian {dt} (7,5)", rnd(dt, (7, 5)), "save"))
        cases.append((f"big-endian {dt} fortran (4,6)", np.asfortranarray(rnd(dt, (4, 6))), "save"))
    cases.append(("transposed view saved as fortran_order", rnd("<f8", (6, 9)).T, "save"))
    cases.append(("version 2.0 header", rnd("<f4", (4, 5)), (2, 0)))
    cases.append(("version 3.0 header", rnd("<i4", (4, 5)), (3, 0)))
    cases.append(("large (1024, 1025) f4", rnd("<f4", (1024, 1025)), "save"))
    cases.append(("large (3000000,) u1", rnd("|u1", (3000000,)), "save"))
    cases.append(("(1,) shape", rnd("<f8", (1,)), "save"))

    for i, (name, arr, how) in enumerate(cases):
        src = os.path.join(tmp, f"in{i}.npy")
        out = os.path.join(tmp, f"out{i}.npy")
        if how == "save":
            np.save(src, arr)
        else:
            with open(src, "wb") as f:
                np.lib.format.write_array(f, arr, version=how)
        p = subprocess.run([exe, "--roundtrip", src, out], capture_output=True, text=True)
        if p.returncode != 0:
            check(False, f"{name}: roundtrip failed: {p.stderr.strip()}")
            continue
        got = np.load(out)
        want = expected(np.load(src))
        (ver, fortran, offset) = header_info(out)
        check(bits_equal(got, want) and got.flags.c_contiguous,
              f"{name}: read back equal, dtype {got.dtype.str} shape {got.shape}")
        check(ver == (1, 0) and not fortran and offset % 64 == 0,
              f"{name}: written as version 1.0, C order, data at {offset}")
        src_ver, src_fortran, _ = header_info(src)
        if src_ver == (1, 0) and not src_fortran and arr.dtype.str in ("<f4", "<f8", "<i4", "|u1"):
            with open(src, "rb") as a, open(out, "rb") as b:
                check(a.read() == b.read(), f"{name}: byte-identical to numpy's own file")

    bad = [
        ("complex64", np.zeros(3, np.complex64), "<c8"),
        ("int64", np.arange(3, dtype=np.int64), "<i8"),
        ("float16", np.zeros(3, np.float16), "<f2"),
        ("int8", np.zeros(3, np.int8), "|i1"),
        ("unicode", np.array(["ab", "c"]), "<U2"),
        ("bytes", np.array([b"ab", b"c"]), "|S2"),
        ("object", np.array([1, "x", None], dtype=object), "|O"),
        ("structured", np.zeros(3, dtype=[("a", "<f4"), ("b", "<i4")]), "structured"),
    ]
    for name, arr, token in bad:
        src = os.path.join(tmp, f"bad_{name}.npy")
        out = os.path.join(tmp, f"bad_{name}_out.npy")
        np.save(src, arr, allow_pickle=True)
        p = subprocess.run([exe, "--roundtrip", src, out], capture_output=True, text=True)
        check(p.returncode != 0 and token in p.stderr and src in p.stderr and "unsupported_dtype" in p.stderr
              and not os.path.exists(out),
              f"{name}: refused, message names file and descr ({p.stderr.strip()})")

    left = [f for f in os.listdir(tmp) if ".tmp." in f]
    check(not left, f"no temp files left ({left})")


if __name__ == "__main__":
    sys.exit(main())
