#!/usr/bin/python3
"""test_bitcast_numpy.py - numpy's view() as the oracle for bitcast (Nx.bitcast):
the same bytes read as another numeric dtype of the same width.

For every numeric dtype, one graph bitcasts random bit patterns (so NaNs with
payloads, -0, denormals and infinities of the float dtypes come along) of
sizes 0, 1, 300 and 4099 to each dtype of its width (itself included), and
back again (a chain of two copies: the second reads what the first wrote).
Every result must be byte-identical to numpy's view of the input, its dtype
the one asked for; `--check` has the CPU reference agree too.  Each graph runs
twice: with the device's own copy path, and with NXVK_STAGING=1 (the discrete
GPU's: copy_vec4's 16-byte words, a vkCmdCopyBuffer tail).  Another width
and bool are refused: exit 2, one line on stderr.  TAP on stdout.
"""
import json
import os
import sys
import tempfile

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import nphelp  # noqa: E402
from nphelp import check as tap, have_binary, list_ops, nxvk, save, scratch  # noqa: E402

TMP = scratch("bitcast")
# storage dtypes (bf16: its bits as uint16, written as '<V2' like ml_dtypes)
STORE = {"f16": "<f2", "bf16": "<u2", "f32": "<f4", "f64": "<f8", "i8": "i1", "i16": "<i2",
         "i32": "<i4", "i64": "<i8", "u8": "u1", "u16": "<u2", "u32": "<u4", "u64": "<u8"}
WIDTH = {d: np.dtype(s).itemsize for d, s in STORE.items()}
SIZES = [0, 1, 300, 4099]


def load_bytes(dt, path):
    """(little-endian bytes, dtype ok?) of a result file."""
    a = np.load(path)
    if dt == "bf16":
        return a.view("<u2").tobytes() if a.dtype.kind == "V" else b"", a.dtype.kind == "V" and a.dtype.itemsize == 2
    ok = a.dtype == np.dtype(STORE[dt])
    return a.astype(np.dtype(STORE[dt]).newbyteorder("<")).tobytes(), ok


def test_from(dt, rng):
    gdir = tempfile.mkdtemp(prefix=dt + "_", dir=TMP)
    os.makedirs(os.path.join(gdir, "out"))
    inputs, nodes, outputs, want = {}, [], {}, []
    for n in SIZES:
        bits = rng.integers(0, 256, n * WIDTH[dt], dtype=np.uint8)
        x = bits.view(STORE[dt])
        if dt in ("f16", "f32", "f64") and n >= 300:
            # the float specials at the front: -0, +-inf, a quiet and a signalling NaN with payloads, denormals
            w = WIDTH[dt] * 8
            specials = {16: [0x8000, 0x7C00, 0xFC00, 0x7E01, 0x7C02, 0x0001, 0x83FF],
                        32: [0x80000000, 0x7F800000, 0xFF800000, 0x7FC00123, 0x7F800456, 0x00000001, 0x807FFFFF],
                        64: [1 << 63, 0x7FF0 << 48, 0xFFF0 << 48, (0x7FF8 << 48) | 0x123,
                             (0x7FF0 << 48) | 0x456, 1, (1 << 63) | ((1 << 52) - 1)]}[w]
            x = x.copy()
            x.view("<u%d" % WIDTH[dt])[:len(specials)] = specials
        name = "x%d" % n
        save(os.path.join(gdir, name + ".npy"), dt, x)
        inputs[name] = name + ".npy"
        for to in STORE:
            if WIDTH[to] != WIDTH[dt]:
                continue
            o = "o%d_%s" % (n, to)
            nodes.append({"op": "bitcast", "in": [name], "attrs": {"dtype": to}, "out": o})
            nodes.append({"op": "bitcast", "in": [o], "attrs": {"dtype": dt}, "out": o + "_back"})
            outputs[o] = "out/%s.npy" % o
            outputs[o + "_back"] = "out/%s_back.npy" % o
            raw = x.astype(np.dtype(STORE[dt]).newbyteorder("<")).tobytes()
            want.append(("%s[%d] to %s" % (dt, n, to), o, to, raw))
            want.append(("%s[%d] to %s and back" % (dt, n, to), o + "_back", dt, raw))
    with open(os.path.join(gdir, "g.json"), "w") as f:
        json.dump({"inputs": inputs, "ops": nodes, "outputs": outputs}, f)
    # the device's own copy path, then the discrete GPU's (copy_vec4 words and a
    # vkCmdCopyBuffer tail: NXVK_STAGING=1 takes it on a CPU device too)
    for how, env in (("", None), (" (NXVK_STAGING=1: copy_vec4)", {"NXVK_STAGING": "1"})):
        for f in outputs.values():
            if os.path.exists(os.path.join(gdir, f)):
                os.remove(os.path.join(gdir, f))
        rc, out, err = nxvk(["run", "g.json", "--check"], cwd=gdir, env=env)
        tap(rc == 0, "%s: a graph of %d bitcasts runs, the CPU reference agreeing%s" % (dt, len(nodes), how),
            out[-1500:] + err)
        for desc, o, to, raw in want:
            path = os.path.join(gdir, outputs[o])
            if rc != 0 or not os.path.exists(path):
                tap(False, "bitcast %s%s: no result" % (desc, how))
                continue
            got, dtype_ok = load_bytes(to, path)
            tap(dtype_ok and got == raw, "bitcast %s%s: numpy's view, byte for byte" % (desc, how),
                "dtype %s, %d of %d bytes differ" % (np.load(path).dtype, sum(a != b for a, b in zip(got, raw)),
                                                     len(raw)))


def test_refusals():
    x = os.path.join(TMP, "r.npy")
    np.save(x, np.arange(4, dtype=np.float32))
    for to, why in (("f64", "another width"), ("i16", "another width"), ("bool", "bool")):
        rc, out, err = nxvk(["run", "--op", "bitcast", "--attrs", json.dumps({"dtype": to}), x,
                             "-o", os.path.join(TMP, "r_out.npy")])
        lines = err.strip().splitlines()
        tap(rc == 2 and len(lines) == 1 and lines[0].startswith("nxvk: error:") and "dtype" in lines[0],
            "bitcast f32 to %s (%s): exit 2, one line naming the attribute" % (to, why), "exit %d: %r" % (rc, err))
    rc, out, err = nxvk(["run", "--op", "bitcast", x, "-o", os.path.join(TMP, "r_out.npy")])
    tap(rc == 2 and "dtype" in err, "bitcast without \"dtype\": exit 2, naming it", "exit %d: %r" % (rc, err))


def main():
    if not have_binary():
        return
    _, ops, _ = list_ops()
    listed = {op: set(dts) for op, dts in ops.items()}
    tap(listed.get("bitcast") == set(STORE), "bitcast is listed for every numeric dtype",
        "listed: %s" % sorted(listed.get("bitcast", [])))
    rng = np.random.default_rng(20261127)
    for dt in STORE:
        if dt in listed.get("bitcast", set()):
            test_from(dt, rng)
    test_refusals()


if __name__ == "__main__":
    nphelp.main(main, TMP)
