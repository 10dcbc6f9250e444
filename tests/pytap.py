"""pytap.py - what the Python suites share, as tap.sh is for the shell
ones: TAP lines (tap, done) and one op through `nxvk run` on numpy arrays
(run_op).  Not a test itself; a suite puts tests/ on sys.path first."""
import json
import os
import subprocess
import sys

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
NXVK = os.environ.get("NXVK") or os.path.join(ROOT, "nxvk")
_n = [0, 0]  # tests, failed


def tap(ok, desc, diag=None):
    """one TAP line; diag (a string or a list of lines) as '#   ' lines"""
    _n[0] += 1
    _n[1] += 0 if ok else 1
    print("%s %d - %s" % ("ok" if ok else "not ok", _n[0], desc))
    for line in (str(diag).splitlines() if isinstance(diag, str) else diag or ()):
        print("#   " + line)
    sys.stdout.flush()


def check(ok, desc, diag=None):
    """tap() with the diagnostic (its first 20 lines) shown only on failure"""
    tap(ok, desc, None if ok or not diag else str(diag).splitlines()[:20])


def done():
    """the plan line; the exit status (1 once a test failed)"""
    print("1..%d" % _n[0])
    return 1 if _n[1] else 0


def run_op(op, arrays, tmp, attrs=None, check=False, env=None, timeout=300):
    """nxvk run --op OP [--check] [--attrs ATTRS] on the arrays (saved as
    .npy files in tmp): (exit status, the result as a numpy array or None
    when none was written, stdout and stderr as lines)"""
    paths = []
    for k, x in enumerate(arrays):
        p = os.path.join(tmp, "in%d.npy" % k)
        np.save(p, x)
        paths.append(p)
    out = os.path.join(tmp, "out.npy")
    if os.path.exists(out):
        os.unlink(out)
    cmd = [NXVK, "run", "--op", op] + (["--check"] if check else []) + ["-o", out]
    if attrs:
        cmd += ["--attrs", json.dumps(attrs)]
    p = subprocess.run(cmd + paths, capture_output=True, text=True, env=env, timeout=timeout)
    got = np.load(out) if os.path.exists(out) else None
    return p.returncode, got, (p.stdout + p.stderr).strip().splitlines()
