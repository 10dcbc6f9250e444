"""nphelp.py - what the numpy suites under tests/ops share, beside
tests/pytap.py's TAP lines: nxvk on .npy files (a command, one op, a graph
of cases run as one process), the dtypes' files (bf16 as '<V2', the way
np.save writes ml_dtypes' bfloat16, in either byte order), the 16-bit
dtypes' bits (f16 and bf16 to and from f32, rounding to nearest even on the
bits) and a suite's main with its scratch folder removed at the end.
The oracles stay in the suites: numpy computes what nxvk must give.
Not a test itself."""
import itertools
import json
import os
import shutil
import subprocess
import sys
import tempfile

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import pytap  # noqa: E402
from pytap import ROOT, check, done, tap  # noqa: E402,F401  (the suites import them from here)

# the binary: NXVK, or a private copy (private_copy) that a rebuild cannot swap
NXVK = [pytap.NXVK]
# every numeric dtype's numpy type (bf16: none; its bits travel as uint16)
NPT = {"f16": np.float16, "f32": np.float32, "f64": np.float64, "i8": np.int8, "i16": np.int16,
       "i32": np.int32, "i64": np.int64, "u8": np.uint8, "u16": np.uint16, "u32": np.uint32,
       "u64": np.uint64, "bool": np.bool_}


def scratch(name):
    """a fresh scratch folder for a suite (removed by main())"""
    return tempfile.mkdtemp(prefix="nxvk_%s_" % name)


def private_copy(tmp):
    """run a copy of the binary from tmp from now on (a suite that runs for
    minutes must not see a rebuild; the engine embeds its shaders)"""
    try:
        shutil.copy2(NXVK[0], os.path.join(tmp, "nxvk"))
        NXVK[0] = os.path.join(tmp, "nxvk")
    except OSError:
        pass  # the suite reports the missing binary


def have_binary():
    """the binary is there (a failing TAP line where it is not)"""
    ok = os.access(NXVK[0], os.X_OK) and os.path.getsize(NXVK[0]) > 0
    if not ok:
        tap(False, "nxvk binary at %s" % NXVK[0])
    return ok


def main(body, tmp):
    """run a suite's body, remove its scratch folder, print the plan line and exit
    with done()'s status"""
    try:
        body()
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    sys.exit(done())


# ---------------------------------------------------------------- running nxvk

def nxvk(args, env=None, cwd=None, timeout=600):
    """nxvk ARGS... (env: variables added to the environment; a value None
    removes one): (exit status, stdout, stderr)"""
    e = dict(os.environ)
    for k, v in (env or {}).items():
        if v is None:
            e.pop(k, None)
        else:
            e[k] = v
    p = subprocess.run(NXVK + list(args), stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=timeout,
                       cwd=cwd, env=e)
    return p.returncode, p.stdout.decode(errors="replace"), p.stderr.decode(errors="replace")


def run_dot(pa, pb, out, attrs=None, check=False, env=None):
    """nxvk run --op dot [--attrs ATTRS] A B -o OUT [--check] on operands
    saved at pa and pb (attrs: none where empty; env as nxvk()'s): (exit
    status, the result array or None where the run failed or wrote none,
    its stdout and stderr together).  OUT is removed first, so that a run
    that writes nothing cannot pass off an earlier case's result."""
    args = ["run", "--op", "dot"] + (["--attrs", json.dumps(attrs)] if attrs else []) + [pa, pb, "-o", out]
    if check:
        args.append("--check")
    if os.path.exists(out):
        os.unlink(out)
    rc, so, se = nxvk(args, env=env)
    got = np.load(out) if rc == 0 and os.path.exists(out) else None
    return rc, got, so + se


_k = itertools.count()  # run_op's file names (next() is atomic: suites run ops on threads)


def run_op(op, inputs, tmp, attrs=None, env=None, timeout=120):
    """nxvk run --op OP [--attrs ATTRS] on numpy arrays: (exit status, the
    result or None, stderr); its files are removed"""
    paths = []
    k = next(_k)
    for i, a in enumerate(inputs):
        p = os.path.join(tmp, "%d_in%d.npy" % (k, i))
        np.save(p, a)
        paths.append(p)
    out = os.path.join(tmp, "%d_out.npy" % k)
    args = ["run", "--op", op] + (["--attrs", json.dumps(attrs)] if attrs is not None else []) + paths + ["-o", out]
    rc, _, err = nxvk(args, env=env, timeout=timeout)
    got = np.load(out) if rc == 0 and os.path.exists(out) else None
    for q in paths + [out]:
        if os.path.exists(q):
            os.unlink(q)
    return rc, got, err


def run_cases(tmp, prefix, cases, env=None, args=(), timeout=600):
    """one graph of cases, run as one process: each case (op, [(dtype,
    array), ...], attrs) its own inputs (written with save(); dtype None:
    the array's) and output.
    Returns (exit status, stderr, [the output's path, or None where none
    was written or the run failed])"""
    gdir = tempfile.mkdtemp(prefix=prefix + "_", dir=tmp)
    graph = {"inputs": {}, "ops": [], "outputs": {}}
    for ci, (op, inputs, attrs) in enumerate(cases):
        names = []
        for i, (dt, a) in enumerate(inputs):
            nm = "c%d_%d" % (ci, i)
            save(os.path.join(gdir, nm + ".npy"), dt, a)
            graph["inputs"][nm] = nm + ".npy"
            names.append(nm)
        graph["ops"].append({"op": op, "in": names, "attrs": attrs or {}, "out": "o%d" % ci})
        graph["outputs"]["o%d" % ci] = "o%d.npy" % ci
    gp = os.path.join(gdir, "g.json")
    with open(gp, "w") as f:
        json.dump(graph, f)
    rc, _, err = nxvk(["run", gp] + list(args), env=env, timeout=timeout)
    paths = [os.path.join(gdir, "o%d.npy" % ci) for ci in range(len(cases))]
    return rc, err, [p if rc == 0 and os.path.exists(p) else None for p in paths]


def list_ops():
    """nxvk run --list-ops: (exit status, {op: [dtypes]}, stderr)"""
    rc, out, err = nxvk(["run", "--list-ops"])
    ops = {}
    for line in out.splitlines():
        parts = line.split()
        if len(parts) >= 2:
            ops[parts[0]] = parts[1].split(",")
    return rc, ops, err


# ---------------------------------------------------------------- 16-bit dtypes

def bf16_bits(x32):
    """f32 values -> bf16 bits (uint16): to nearest even; a NaN keeps its
    sign and top payload bits, made quiet"""
    x32 = np.asarray(x32, np.float32)
    b = np.atleast_1d(x32).view(np.uint32).astype(np.uint64)  # (1-D: numpy 1's casts of 0-d uint64)
    nan = (b & 0x7fffffff) > 0x7f800000
    r = ((b + 0x7fff + ((b >> 16) & 1)) >> 16) & 0xffff
    r = np.where(nan, ((b >> 16) | 0x40) & 0xffff, r)
    return r.astype(np.uint16).reshape(x32.shape)


def bf16_f32(bits):
    """bf16 bits -> their f32 values (exact)"""
    return (np.asarray(bits, np.uint16).astype(np.uint32) << 16).view(np.float32)


def bits_f32(dt, bits):
    """f16 or bf16 bits (uint16) -> f32 values (exact)"""
    if dt == "f16":
        return np.asarray(bits, np.uint16).view(np.float16).astype(np.float32)
    return bf16_f32(bits)


def round16(dt, x):
    """f32 values rounded once to f16 or bf16 (nearest even): their bits"""
    x = np.asarray(x, np.float32)
    if dt == "f16":
        with np.errstate(all="ignore"):
            return x.astype(np.float16).view(np.uint16)
    return bf16_bits(x)


def mismatches16(dt, got, want):
    """indices where 16-bit patterns differ, a NaN equal to any NaN"""
    g, w = bits_f32(dt, got), bits_f32(dt, want)
    return np.nonzero((got != want) & ~(np.isnan(g) & np.isnan(w)))[0]


def within_bound(desc, got, want, bound, diag=None):
    """a result against the oracle's, all as f64 arrays: the same shape,
    NaN where want has NaN, want's infinities, the finite ones within bound.
    One TAP line: a failing one for the first of those that differs (False:
    the case stops there), else the bound's, max error and count over it
    (True, passed or not)"""
    if got.shape != want.shape:
        check(False, "%s: shape %s, want %s" % (desc, got.shape, want.shape), diag)
        return False
    fin = np.isfinite(want)
    inf = ~fin & ~np.isnan(want)
    if not np.array_equal(np.isnan(got), np.isnan(want)) or not np.array_equal(got[inf], want[inf]):
        check(False, "%s: non-finite results differ (%d NaN got, %d wanted)" %
              (desc, np.isnan(got).sum(), np.isnan(want).sum()), diag)
        return False
    err = np.abs(got[fin] - want[fin])
    over = err > bound[fin]
    check(not over.any(), "%s: against numpy (max err %g, %d over the bound)" %
          (desc, err.max() if err.size else 0, over.sum()), diag)
    return True


def round_to(dt, w64):
    """exact (f64) results rounded to f32 (nearest even), then to dt, as
    f64 values (f64 and the integer dtypes as they are)"""
    if dt not in ("f32", "f16", "bf16"):
        return np.asarray(w64)
    shape = np.shape(w64)
    with np.errstate(over="ignore"):  # out of range: inf
        f = np.atleast_1d(np.asarray(w64, np.float64)).astype(np.float32)
        if dt == "f16":
            f = f.astype(np.float16)
        elif dt == "bf16":
            f = bf16_f32(bf16_bits(f))
    return f.astype(np.float64).reshape(shape)


# ---------------------------------------------------------------- .npy files

def save_v2(path, bits, order="<"):
    """bf16 bits as a '<V2' (or '>V2') .npy, as np.save writes ml_dtypes' bfloat16"""
    bits = np.asarray(bits, np.uint16)
    hdr = "{'descr': '%sV2', 'fortran_order': False, 'shape': %s, }" % (order, repr(tuple(bits.shape)))
    hdr += " " * (64 - (10 + len(hdr) + 1) % 64) + "\n"
    with open(path, "wb") as f:
        f.write(b"\x93NUMPY\x01\x00" + len(hdr).to_bytes(2, "little") + hdr.encode() +
                bits.astype(order + "u2").tobytes())


def save(path, dt, a, order="<"):
    """a dtype's array as a .npy in the given byte order; bf16 from its bits
    (a uint16 array) or from values (rounded to nearest even); dt None: the
    array's own dtype"""
    a = np.asarray(a)
    if dt is None:
        np.save(path, a)
        return
    if dt == "bf16":
        save_v2(path, a if a.dtype == np.uint16 else bf16_bits(a.astype(np.float32)), order)
        return
    arr = a.astype(NPT[dt])
    if order == ">" and arr.dtype.itemsize > 1:
        arr = arr.astype(arr.dtype.newbyteorder(">"))
    np.save(path, arr)


def save_bits16(path, dt, bits):
    """f16 or bf16 bits (uint16) as that dtype's .npy"""
    save(path, dt, np.asarray(bits, np.uint16).view(np.float16) if dt == "f16" else np.asarray(bits, np.uint16))


def load(path):
    """a result file; bf16 ('V2') as its f32 values"""
    a = np.load(path)
    if a.dtype.kind == "V":
        return bf16_f32(a.reshape(-1).view("<u2")).reshape(a.shape)
    return a


def load_bits(path, dt):
    """an f16 or bf16 result file as its bits (uint16), its dtype checked"""
    a = np.load(path)
    kind = "V" if dt == "bf16" else "f"
    assert a.dtype.kind == kind and a.dtype.itemsize == 2, "%s file holds %s" % (dt, a.dtype)
    return a.view("<u2").astype(np.uint16) if kind == "V" else a.view(np.uint16)
