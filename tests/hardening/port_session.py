#!/usr/bin/python3
"""port_session.py - one scripted `nxvk port` session touching every command.

    port_session.py [--small] NXVK [ARGS...]

Runs `NXVK ARGS... port` (NXVK_TEST_HOOKS=1 for debug_lose_device) on a
scripted list of requests: every command, malformed frames, errors, a
device loss and re-creation, and a last frame cut short.  Prints one line
per check, `ok<TAB>description` or `fail<TAB>description<TAB>detail`, and
the server's standard error after a line `stderr:`; exits 0 when it ran.
--small leaves out the device loss and the fused graph (for valgrind).
"""
import json
import os
import struct
import sys

sys.dont_write_bytecode = True  # no __pycache__ left in the source tree
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from portlib import frame, payload, raw_frame, session  # noqa: E402


def f32(*v):
    return struct.pack(f"<{len(v)}f", *v)


def main():
    args = sys.argv[1:]
    small = args and args[0] == "--small"
    if small:
        args = args[1:]
    cmd = args + ["port"]
    reqs, checks = [], []

    def req(header, data=b"", want="ok", check=None, desc=None):
        reqs.append(frame(header, data))
        checks.append((header.get("id"), want, check, desc or f"{header.get('cmd')} ({header.get('id')})"))

    def bad(raw, rid, want, desc):
        reqs.append(raw)
        checks.append((rid, want, None, desc))

    req({"id": 1, "cmd": "info"}, check=lambda h, d: h["protocol"] >= 1 and len(h["ops"]) > 0)
    req({"id": 2, "cmd": "ping", "echo": {"n": [1, "x"]}}, b"\x00\xff\x10",
        check=lambda h, d: d == b"\x00\xff\x10" and h["echo"] == {"n": [1, "x"]})
    req({"id": 3, "cmd": "put", "dtype": "f32", "shape": [2, 3]}, f32(1, 2, 3, float("nan"), float("-inf"), -0.0),
        check=lambda h, d: h["handle"] == 1)
    req({"id": 4, "cmd": "put", "dtype": "f32", "shape": [3]}, f32(10, 20, 30), check=lambda h, d: h["handle"] == 2)
    req({"id": 5, "cmd": "put", "dtype": "i32", "shape": [4]}, struct.pack("<4i", -7, 0, 7, 2**31 - 1),
        check=lambda h, d: h["handle"] == 3)
    req({"id": 6, "cmd": "put", "dtype": "u8", "shape": [0]}, check=lambda h, d: h["handle"] == 4)
    req({"id": 7, "cmd": "get", "handle": 1}, check=lambda h, d: len(d) == 24 and d[:8] == f32(1, 2))
    req({"id": 8, "cmd": "op", "op": "add", "in": [1, 2], "fetch": True},
        check=lambda h, d: h["shape"] == [2, 3] and d[:12] == f32(11, 22, 33) and h["handle"] == 5)
    req({"id": 9, "cmd": "op", "op": "sum", "in": [3], "attrs": {"axes": [0]}, "fetch": True, "keep": False},
        check=lambda h, d: d == struct.pack("<i", 2**31 - 1) and "handle" not in h)
    req({"id": 10, "cmd": "op", "op": "transpose", "in": [1], "fetch": True}, check=lambda h, d: h["shape"] == [3, 2])
    req({"id": 11, "cmd": "op", "op": "dot", "in": [1, 98]}, want="unknown_handle")
    req({"id": 12, "cmd": "op", "op": "exp", "in": [3]}, want="unsupported_dtype")
    req({"id": 13, "cmd": "op", "op": "nope", "in": [1]}, want="unknown_op")
    req({"id": 14, "cmd": "op", "op": "sum", "in": [1], "attrs": {"perm": [0]}}, want="bad_attr")
    req({"id": 15, "cmd": "op", "op": "add", "in": [1, 3]}, want="dtype_mismatch")
    graph = {"inputs": {"x": {"dtype": "f32", "shape": [2, 3], "bytes": True}, "h": {"handle": 2},
                        "c": {"dtype": "f32", "shape": [3], "data": [1, "nan", "-0"]}},
             "ops": [{"op": "multiply", "in": ["x", "h"], "out": "m"},
                     {"op": "tanh", "in": ["m"], "out": "t"},
                     {"op": "add", "in": ["t", "c"], "out": "a"},
                     {"op": "reduce_max", "in": ["a"], "attrs": {"axes": [1]}, "out": "r"}],
             "outputs": {"a": True, "r": True}}
    if not small:
        req({"id": 16, "cmd": "run", "graph": graph, "fetch": ["r"], "keep": False}, f32(1, 2, 3, 4, 5, 6),
            check=lambda h, d: len(h["outputs"]) == 2 and len(d) == 8)
    req({"id": 17, "cmd": "run", "graph": {"ops": [{"op": "iota", "attrs": {"shape": [4]}, "out": "i"}],
                                          "outputs": {"i": True}}, "fetch": True},
        check=lambda h, d: d == struct.pack("<4i", 0, 1, 2, 3))
    req({"id": 18, "cmd": "run", "graph": {"inputs": {"x": "x.npy"}, "ops": [], "outputs": {"x": True}}},
        want="bad_request")
    req({"id": 19, "cmd": "put", "dtype": "f32", "shape": [2]}, f32(1), want="size_mismatch")
    req({"id": 20, "cmd": "put", "dtype": "c64", "shape": [1]}, b"\0" * 8, want="unsupported_dtype")
    req({"id": 21, "cmd": "get", "handle": 99}, want="unknown_handle")
    req({"id": 22, "cmd": "frobnicate"}, want="bad_request")
    req({"id": 23, "cmd": "info", "extra": 1}, want="bad_request")
    req({"id": 24, "cmd": "stats"}, b"\x01", want="size_mismatch")
    bad(raw_frame(payload(b'{"id":25,"cmd":"ping"', b"")), None, "bad_request", "invalid JSON header")
    bad(raw_frame(payload(b'{"id":26,"cmd":"ping","x":"\xc3\x28"}')), None, "bad_request", "header not UTF-8")
    bad(raw_frame(payload(b'{"id":27,\x00"cmd":"ping"}')), None, "bad_request", "NUL in a header")
    bad(raw_frame(payload({"id": 28, "cmd": "ping"}, hlen=1000)), None, "bad_request", "header length past the end")
    bad(raw_frame(b"\x00\x00"), None, "bad_request", "payload shorter than its header length")
    bad(raw_frame(payload(b"[1,2,3]")), None, "bad_request", "header not an object")
    req({"id": 29, "cmd": "free", "handles": [1, 2, 2]}, check=lambda h, d: h["freed"] == 2)
    req({"id": 30, "cmd": "free", "handle": 1}, want="unknown_handle")
    if not small:
        req({"id": 31, "cmd": "debug_lose_device"})
        req({"id": 32, "cmd": "get", "handle": 3}, want="device_lost")
        req({"id": 33, "cmd": "info"}, check=lambda h, d: h["generation"] == 2)
        req({"id": 34, "cmd": "put", "dtype": "f64", "shape": [1]}, struct.pack("<d", 2.5),
            check=lambda h, d: h["handle"] >= 6)
        req({"id": 35, "cmd": "free", "handles": [3, 4]}, check=lambda h, d: h["freed"] == 2)
    req({"id": 36, "cmd": "stats"}, check=lambda h, d: h["validation_messages"] == 0)
    # the last frame announces more than it carries: a bad_request, then exit 0
    cut = payload({"id": 37, "cmd": "ping"})
    reqs.append(struct.pack(">I", len(cut) + 10) + cut)
    checks.append((37, "bad_request", None, "a frame cut short at the end of input"))

    env = dict(os.environ, NXVK_TEST_HOOKS="1")
    try:
        rc, reps, err = session(cmd, b"".join(reqs), timeout=300, env=env)
    except Exception as e:  # a crash mid-frame, a timeout: one failure, said plainly
        print(f"fail\tport session ran\t{type(e).__name__}: {e}")
        return 0
    print(("ok" if rc == 0 else "fail") + f"\tport session exits 0\texit {rc}")
    print(("ok" if len(reps) == len(checks) else "fail") +
          f"\tport session: one reply per request\t{len(reps)} replies to {len(checks)} requests")
    for (rid, want, check, desc), (h, d) in zip(checks, reps):
        code = "ok" if h.get("ok") else h.get("error", {}).get("code")
        good = code == want and (rid is None or h.get("id") == rid)
        if good and check:
            try:
                good = bool(check(h, d))
            except Exception as e:  # a missing field is a failed check
                good = False
                h = dict(h, check_error=str(e))
        print(("ok" if good else "fail") + f"\tport {desc}: {want}\t{json.dumps(h)[:300]}")
    print("stderr:")
    sys.stdout.write(err)
    return 0


if __name__ == "__main__":
    sys.exit(main())
