#!/usr/bin/python3
"""test_transfers.py - large transfers (issue 30): tensors of NXVK_XFER_MIN
(8 MiB) and more move between host and device on several threads in pieces
of at most 4 MiB (src/vk/memory.c's lanes, streaming copies on x86-64), from 1 MiB each piece's page-aligned middle
imported from host memory (VK_EXT_external_memory_host) with
NXVK_XFER_IMPORT=1 where the device has it, else through staging (the default).  lavapipe maps
device memory, so NXVK_STAGING=1 forces the paths a discrete GPU takes.  A
byte count that is no multiple of the piece, and one under the threshold
beside it, each checked against numpy (f32 add is correctly rounded, so the
sums must be equal bit for bit), and the input bytes read back unchanged by
a copy (as_type to the same dtype).  TAP."""
import os
import shutil
import sys
import tempfile

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from pytap import done, run_op, tap  # noqa: E402

TMP = tempfile.mkdtemp(prefix="nxvk_xfer_")
rng = np.random.default_rng(3030)

for staging, imp in (("1", "1"), ("1", "0"), ("0", "1")):
    env = dict(os.environ, NXVK_STAGING=staging, NXVK_XFER_IMPORT=imp)
    for count, what in ((9_000_001, "36 MB, no multiple of a piece"), (2_500_001, "10 MB, 1 MiB pieces"),
                        (1_000_003, "4 MB, one staging copy")):
        a = rng.standard_normal(count, dtype=np.float32)
        b = rng.standard_normal(count, dtype=np.float32)
        rc, got, lines = run_op("add", [a, b], TMP, env=env)
        want = a + b
        tap(rc == 0 and got is not None and got.dtype == np.float32 and
            np.array_equal(got.view(np.uint32), want.view(np.uint32)),
            "NXVK_STAGING=%s NXVK_XFER_IMPORT=%s add of %s: equal to numpy bit for bit" % (staging, imp, what), None if rc == 0 else lines)
        rc, got, lines = run_op("as_type", [a], TMP, attrs={"dtype": "f32"}, env=env)
        tap(rc == 0 and got is not None and np.array_equal(got.view(np.uint32), a.view(np.uint32)),
            "NXVK_STAGING=%s NXVK_XFER_IMPORT=%s as_type f32 -> f32 of %s: the bytes come back unchanged" % (staging, imp, what),
            None if rc == 0 else lines)
shutil.rmtree(TMP, ignore_errors=True)
sys.exit(done())
