#!/usr/bin/python3
"""test_transfers.py - large transfers (issue 30): tensors of NXVK_XFER_MIN
(32 MiB) and more move between host and device on several threads, each
through its own 8 MiB staging pieces (src/vk/memory.c).  lavapipe maps device
memory, so NXVK_STAGING=1 forces the staged path a discrete GPU takes.  A
byte count that is no multiple of the piece, and one under the threshold
beside it, each checked against numpy (f32 add is correctly rounded, so the
sums must be equal bit for bit), and the input bytes read back unchanged by
a copy (as_type to the same dtype).  TAP."""
import os
import shutil
import subprocess
import sys
import tempfile

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
NXVK = os.environ.get("NXVK") or os.path.join(ROOT, "nxvk")
TMP = tempfile.mkdtemp(prefix="nxvk_xfer_")
rng = np.random.default_rng(3030)
n = [0, 0]


def tap(ok, desc, diag=None):
    n[0] += 1
    n[1] += 0 if ok else 1
    print("%s %d - %s" % ("ok" if ok else "not ok", n[0], desc))
    if diag and not ok:
        for line in str(diag).splitlines():
            print("#   " + line)


def run(op, arrays, env_extra, attrs=None):
    paths = []
    for i, a in enumerate(arrays):
        p = os.path.join(TMP, "in%d.npy" % i)
        np.save(p, a)
        paths.append(p)
    out = os.path.join(TMP, "out.npy")
    if os.path.exists(out):
        os.unlink(out)
    cmd = [NXVK, "run", "--op", op] + (["--attrs", attrs] if attrs else []) + paths + ["-o", out]
    env = dict(os.environ, **env_extra)
    p = subprocess.run(cmd, env=env, capture_output=True, text=True)
    if p.returncode != 0:
        return None, p.stderr.strip()
    return np.load(out), ""


print("1..8")
for staging in ("1", "0"):
    env = {"NXVK_STAGING": staging}
    for count, what in ((9_000_001, "36 MB, no multiple of the 8 MiB piece"), (1_000_003, "4 MB, one thread")):
        a = rng.standard_normal(count, dtype=np.float32)
        b = rng.standard_normal(count, dtype=np.float32)
        got, err = run("add", [a, b], env)
        want = a + b
        tap(got is not None and got.dtype == np.float32 and np.array_equal(got.view(np.uint32), want.view(np.uint32)),
            "NXVK_STAGING=%s add of %s: equal to numpy bit for bit" % (staging, what), err)
        got, err = run("as_type", [a], env, '{"dtype":"f32"}')
        tap(got is not None and np.array_equal(got.view(np.uint32), a.view(np.uint32)),
            "NXVK_STAGING=%s as_type f32 -> f32 of %s: the bytes come back unchanged" % (staging, what), err)
shutil.rmtree(TMP, ignore_errors=True)
print("%d passed, %d failed" % (n[0] - n[1], n[1]))
sys.exit(1 if n[1] else 0)
