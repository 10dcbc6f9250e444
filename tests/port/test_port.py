#!/usr/bin/env python3
"""tests/port/test_port.py - an independent client of `nxvk port`, written
from man/nxvk-port.7 alone: if this passes, the page is a complete contract.

TAP on stdout.  Every command, every error code the page lists that a test
can provoke, oversized and truncated frames, serving on after errors, end of
input, memory back to zero, device loss (NXVK_TEST_HOOKS=1), a validation
session (NXVK_VALIDATE=1).

    python3 tests/port/test_port.py              # the tests
    python3 tests/port/test_port.py --latency    # put+add+get round trips vs in-process

Not provoked here (no portable way on a CPU device): alloc_failed, no_memory,
unsupported, vulkan_error, no_device, no_loader.
"""
import json
import os
import select
import struct
import subprocess
import sys
import tempfile
import time

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
NXVK = os.environ.get("NXVK") or os.path.join(ROOT, "nxvk")
DTYPES = {"f32": np.dtype("<f4"), "f64": np.dtype("<f8"), "i32": np.dtype("<i4"), "u8": np.dtype("u1"),
          "f16": np.dtype("<f2"), "bf16": np.dtype("<u2"),  # bf16: its bits
          "i8": np.dtype("i1"), "i16": np.dtype("<i2"), "i64": np.dtype("<i8"), "u16": np.dtype("<u2"),
          "u32": np.dtype("<u4"), "u64": np.dtype("<u8"), "bool": np.dtype("?")}


class PortError(Exception):
    pass


class Port:
    """One server process and the frames of nxvk-port(7), FRAMES."""

    def __init__(self, *args, env=None, stdout=subprocess.PIPE):
        full_env = dict(os.environ)
        full_env.pop("NXVK_TEST_HOOKS", None)
        full_env.update(env or {})
        self.proc = subprocess.Popen([NXVK, "port", *args], stdin=subprocess.PIPE, stdout=stdout,
                                     stderr=subprocess.PIPE, env=full_env)
        self.next_id = 1

    @staticmethod
    def payload(header, data=b""):
        h = header if isinstance(header, bytes) else json.dumps(header).encode()
        return struct.pack(">I", len(h)) + h + data

    def send_raw(self, b):
        self.proc.stdin.write(b)
        self.proc.stdin.flush()

    def send_payload(self, payload):
        self.send_raw(struct.pack(">I", len(payload)) + payload)

    def send(self, header, data=b""):
        self.send_payload(self.payload(header, data))

    def read_exact(self, n, timeout=120):
        fd = self.proc.stdout.fileno()
        out = bytearray()
        deadline = time.time() + timeout
        while len(out) < n:
            left = deadline - time.time()
            if left <= 0 or not select.select([fd], [], [], left)[0]:
                raise PortError("no reply within %ds" % timeout)
            chunk = os.read(fd, n - len(out))
            if not chunk:
                raise PortError("server closed its output after %d of %d bytes" % (len(out), n))
            out += chunk
        return bytes(out)

    def recv(self):
        n = struct.unpack(">I", self.read_exact(4))[0]
        payload = self.read_exact(n)
        h = struct.unpack(">I", payload[:4])[0]
        return json.loads(payload[4:4 + h].decode("utf-8")), payload[4 + h:]

    def call(self, header, data=b""):
        if isinstance(header, dict) and "id" not in header:
            header = dict(header, id=self.next_id)
            self.next_id += 1
        self.send(header, data)
        return self.recv()

    def ok(self, header, data=b""):
        r, b = self.call(header, data)
        if r.get("ok") is not True:
            raise PortError("%s failed: %s" % (header.get("cmd"), r.get("error")))
        return r, b

    def put(self, array):
        a = np.ascontiguousarray(array)
        name = {("f", 4): "f32", ("f", 8): "f64", ("i", 4): "i32", ("u", 1): "u8"}[(a.dtype.kind, a.dtype.itemsize)]
        r, _ = self.ok({"cmd": "put", "dtype": name, "shape": list(a.shape)}, a.astype(DTYPES[name]).tobytes())
        return r["handle"]

    def get(self, handle):
        r, b = self.ok({"cmd": "get", "handle": handle})
        return np.frombuffer(b, DTYPES[r["dtype"]]).reshape(r["shape"])

    def error(self, header, data=b""):
        r, b = self.call(header, data)
        return (r.get("error") or {}).get("code") if r.get("ok") is False and b == b"" else ("(ok)", r)

    def alive(self):
        r, b = self.call({"cmd": "ping", "echo": "alive"}, b"\x01\x02")
        return r.get("ok") is True and r.get("echo") == "alive" and b == b"\x01\x02"

    def stats(self):
        return self.ok({"cmd": "stats"})[0]

    def close(self, timeout=60):
        try:
            self.proc.stdin.close()
        except BrokenPipeError:
            pass
        rest = self.proc.stdout.read() if self.proc.stdout else b""
        try:
            rc = self.proc.wait(timeout)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            rc = -9
        self.stderr = self.proc.stderr.read().decode(errors="replace")
        return rc, rest


class Tap:
    def __init__(self):
        self.n = 0
        self.failed = 0

    def ok(self, cond, desc, diag=None):
        self.n += 1
        print("%s %d - %s" % ("ok" if cond else "not ok", self.n, desc))
        if not cond:
            self.failed += 1
            if diag is not None:
                for line in str(diag).splitlines():
                    print("#   " + line)
        sys.stdout.flush()
        return cond

    def eq(self, got, want, desc, diag=""):
        return self.ok(got == want, desc, "got  %r\nwant %r\n%s" % (got, want, diag))


# ------------------------------------------------------------------- tests

def t_ping_info(tap):
    p = Port("--max-frame", "2M")
    r, b = p.ok({"cmd": "ping", "id": {"any": ["json", 1]}, "echo": [1, "two"]}, b"payload\x00")
    tap.eq((r["id"], r["pong"], r["echo"], r["nbytes"], b), ({"any": ["json", 1]}, True, [1, "two"], 8, b"payload\x00"),
           "ping echoes id, echo and the tensor bytes")
    tap.eq(list(r)[:2], ["id", "ok"], "a reply header starts with id and ok")
    r, b = p.call({"cmd": "ping"})
    tap.eq((r["id"], r["ok"], r["nbytes"], b), (1, True, 0, b""), "ping without echo; the reply carries the id")
    p.send({"cmd": "ping"})
    tap.eq(p.recv()[0]["id"], None, "a request without id gets id null")
    info, _ = p.ok({"cmd": "info"})
    tap.eq(info["protocol"], 1, "info: protocol 1")
    tap.ok(isinstance(info["version"], str) and info["generation"] == 1, "info: version and generation 1", info)
    dev = info["device"]
    tap.ok(all(k in dev for k in ("index", "name", "vendor", "type", "driver_name", "driver_version", "api_version",
                                  "max_storage_buffer_range"))
           and dev["type"] in ("discrete", "integrated", "virtual", "cpu", "other"), "info: device fields", dev)
    tap.ok(set(info["dtypes"]) <= set(DTYPES) and "f32" in info["dtypes"], "info: dtypes", info["dtypes"])
    tab = {e["name"]: e for e in info.get("dtype_table", [])}
    tap.ok(set(tab) == set(DTYPES) and tab["bf16"]["nx"] == "bf:16" and tab["i64"]["numpy"] == "<i8" and
           tab["bool"]["numpy"] == "|b1" and tab["u8"]["nx"] == "u:8" and tab["f16"]["bytes"] == 2 and
           all(e["supported"] == (n in info["dtypes"]) for n, e in tab.items()),
           "info: dtype_table maps every dtype to Nx and numpy", info.get("dtype_table"))
    lim = info["limits"]
    tap.eq((lim["max_frame"], lim["max_header"], lim["max_rank"], lim["max_inputs"], lim["max_elements"],
            lim["max_graph_nodes"]), (2 << 20, 268435456, 8, 64, 2**31 - 1, 4096), "info: limits (max_frame from --max-frame)")
    kinds = {"unary", "binary", "compare", "select", "reduce", "dot", "movement", "source", "sort", "scan",
             "window", "conv", "linalg", "index"}
    ops = info["ops"]
    good = all(set(o) >= {"name", "kind", "arity", "dtypes", "attrs", "summary"} and o["kind"] in kinds
               and isinstance(o["arity"], int) and o["arity"] >= -1 for o in ops)
    names = {o["name"] for o in ops}
    tap.ok(good and {"add", "exp", "sum", "dot", "reshape", "iota", "gather", "indexed_add"} <= names,
           "info: ops with name kind arity dtypes attrs summary")
    tap.eq(next(o for o in ops if o["name"] == "sum")["attrs"], ["axes", "keep_axes"], "info: sum takes axes and keep_axes")
    rc, rest = p.close()
    tap.eq((rc, rest), (0, b""), "end of input: exit 0, nothing more written")
    return info


def t_put_get(tap, info):
    p = Port()
    rng = np.random.default_rng(1)
    for name in info["dtypes"]:
        dt = DTYPES[name]
        a = (rng.random((3, 5)) * 200 - 100).astype(dt) if dt.kind != "u" else rng.integers(0, 256, (3, 5)).astype(dt)
        r, _ = p.ok({"cmd": "put", "dtype": name, "shape": [3, 5]}, a.tobytes())
        tap.eq((r["dtype"], r["shape"], isinstance(r["handle"], int) and r["handle"] > 0), (name, [3, 5], True),
               "put %s: reply handle dtype shape" % name)
        g, b = p.ok({"cmd": "get", "handle": r["handle"]})
        tap.eq((g["handle"], g["dtype"], g["shape"], g["nbytes"], b), (r["handle"], name, [3, 5], a.nbytes, a.tobytes()),
               "get %s: the same bytes back" % name)
    specials = np.array([np.nan, np.inf, -np.inf, -0.0, 1e-45, 3.4e38], dtype="<f4")
    specials_bits = specials.view("<u4").copy()
    specials_bits[0] = 0x7FC00123  # a NaN payload
    h = p.ok({"cmd": "put", "dtype": "float32", "shape": [6]}, specials_bits.tobytes())[0]
    tap.eq(h["dtype"], "f32", "dtype alias float32 is answered as f32")
    tap.eq(p.ok({"cmd": "get", "handle": h["handle"]})[1], specials_bits.tobytes(),
           "NaN payload, infinities, -0 and a denormal pass through unchanged")
    s = p.ok({"cmd": "put", "dtype": "i32", "shape": []}, struct.pack("<i", -7))[0]
    tap.eq(p.ok({"cmd": "get", "handle": s["handle"]})[1], struct.pack("<i", -7), "shape [] is a one-element scalar")
    e = p.ok({"cmd": "put", "dtype": "f32", "shape": [2, 0]}, b"")[0]
    g, b = p.ok({"cmd": "get", "handle": e["handle"]})
    tap.eq((g["shape"], g["nbytes"], b), ([2, 0], 0, b""), "a zero dimension: an empty tensor of 0 bytes")
    handles = [p.put(np.zeros(1, "<f4")) for _ in range(5)]
    tap.ok(handles == sorted(handles) and len(set(handles)) == 5, "handles increase, never repeat", handles)
    p.close()


def t_op(tap):
    p = Port()
    a = np.arange(6, dtype="<f4").reshape(2, 3) - 2.5
    b = np.array([1.5, -2.0, 4.0], dtype="<f4")
    ha, hb = p.put(a), p.put(b)
    r, _ = p.ok({"cmd": "op", "op": "add", "in": [ha, hb]})
    tap.eq((r["dtype"], r["shape"], "nbytes" in r), ("f32", [2, 3], False), "op: kept result, no bytes by default")
    tap.ok(np.array_equal(p.get(r["handle"]), a + b), "op add broadcasts like numpy")
    r, data = p.ok({"cmd": "op", "op": "multiply", "in": [ha, hb], "fetch": True, "keep": False})
    tap.ok("handle" not in r and r["nbytes"] == 24 and np.array_equal(np.frombuffer(data, "<f4").reshape(2, 3), a * b),
           "op fetch true, keep false: bytes and no handle", r)
    r, data = p.ok({"cmd": "op", "op": "exp", "in": [ha], "fetch": True})
    tap.ok("handle" in r and np.allclose(np.frombuffer(data, "<f4").reshape(2, 3), np.exp(a), rtol=1e-5),
           "op fetch with keep: bytes and a handle")
    r, data = p.ok({"cmd": "op", "op": "sum", "in": [ha], "attrs": {"axes": [1], "keep_axes": True}, "fetch": True})
    tap.ok(r["shape"] == [2, 1] and np.allclose(np.frombuffer(data, "<f4"), a.sum(axis=1)), "op sum with attrs", r)
    m = p.put(np.arange(12, dtype="<f4").reshape(3, 4))
    r, data = p.ok({"cmd": "op", "op": "dot", "in": [ha, m], "fetch": True, "keep": False})
    tap.ok(np.allclose(np.frombuffer(data, "<f4").reshape(2, 4), a @ np.arange(12, dtype="<f4").reshape(3, 4)), "op dot")
    r, data = p.ok({"cmd": "op", "op": "iota", "attrs": {"shape": [2, 2], "dtype": "f64"}, "fetch": True, "keep": False})
    tap.ok(r["dtype"] == "f64" and np.array_equal(np.frombuffer(data, "<f8"), [0, 1, 2, 3]), "op with no inputs (iota)")
    r, _ = p.ok({"cmd": "op", "op": "reshape", "in": [ha], "attrs": {"shape": [3, 2]}})
    p.ok({"cmd": "free", "handle": ha})
    tap.ok(np.array_equal(p.get(r["handle"]), a.reshape(3, 2)), "a reshape shares memory; freeing the source keeps it")
    r, data = p.ok({"cmd": "op", "op": "equal", "in": [hb, hb], "fetch": True, "keep": False})
    tap.eq((r["dtype"], data), ("bool", b"\x01\x01\x01"), "comparisons give bool")
    # the new dtypes through the port: i64 wraps, u64 above 2^63, f16 rounds once
    big = np.array([2 ** 63 - 1, -5], "<i8")
    hx, _ = p.ok({"cmd": "put", "dtype": "i64", "shape": [2]}, big.tobytes())
    hy, _ = p.ok({"cmd": "put", "dtype": "s:64", "shape": [2]}, np.array([1, 2], "<i8").tobytes())
    r, data = p.ok({"cmd": "op", "op": "add", "in": [hx["handle"], hy["handle"]], "fetch": True, "keep": False})
    tap.eq((r["dtype"], list(np.frombuffer(data, "<i8"))), ("i64", [-2 ** 63, -3]),
           "i64 add through the port wraps INT64_MAX + 1 (Nx name s:64 accepted)")
    u = np.array([2 ** 64 - 1, 2 ** 63 + 1], "<u8")
    hu, _ = p.ok({"cmd": "put", "dtype": "u64", "shape": [2]}, u.tobytes())
    r, data = p.ok({"cmd": "op", "op": "divide", "in": [hu["handle"], hu["handle"]], "fetch": True, "keep": False})
    tap.eq(list(np.frombuffer(data, "<u8")), [1, 1], "u64 above 2^63 divides unsigned")
    h = np.array([65504, 1, 2.0 ** -24], "<f2")
    hh, _ = p.ok({"cmd": "put", "dtype": "f16", "shape": [3]}, h.tobytes())
    r, data = p.ok({"cmd": "op", "op": "add", "in": [hh["handle"], hh["handle"]], "fetch": True, "keep": False})
    tap.eq(np.frombuffer(data, "<f2").tobytes(), (h + h).tobytes(), "f16 add through the port is numpy's (65504 + 65504 = inf, subnormal kept)")
    p.close()
    # a device without shaderInt64: i64 is refused with an error code, never computed
    q = Port(env={"NXVK_TEST_INJECT": "no_int64"})
    code = q.error({"cmd": "put", "dtype": "i64", "shape": [1]}, b"\0" * 8)
    tap.eq(code, "unsupported_dtype", "i64 put on a device without shaderInt64: unsupported_dtype")
    tap.ok(q.alive(), "the server keeps serving after it")
    q.close()


def t_run(tap):
    p = Port()
    x = np.array([[1, 2], [3, 4]], dtype="<f4")
    hx = p.put(x)
    z = np.array([0.5, 2.0], dtype="<f4")
    graph = {"inputs": {"x": {"handle": hx},
                        "y": {"dtype": "f32", "shape": [2], "data": [10, "nan"]},
                        "z": {"dtype": "f32", "shape": [2], "bytes": True}},
             "ops": [{"op": "add", "in": ["x", "y"], "out": "s"},
                     {"op": "multiply", "in": ["s", "z"], "out": "m"},
                     {"op": "sum", "in": ["m"], "attrs": {"axes": [0]}, "out": "t"}],
             "outputs": {"t": True, "m": None}}
    before = p.stats()["handles"]
    r, data = p.ok({"cmd": "run", "graph": graph, "fetch": True}, z.tobytes())
    outs = r["outputs"]
    tap.eq([o["name"] for o in outs], ["t", "m"], "run: outputs in the graph's order")
    want_m = (x + np.array([10, np.nan], "<f4")) * z
    got_t = np.frombuffer(data[:8], "<f4")
    got_m = np.frombuffer(data[8:], "<f4").reshape(2, 2)
    tap.ok(outs[0]["nbytes"] == 8 and outs[1]["nbytes"] == 16 and np.array_equal(got_m, want_m, equal_nan=True)
           and np.allclose(got_t[:1], want_m.sum(axis=0)[:1]) and np.isnan(got_t[1]),
           "run: handle, inline (with \"nan\") and bytes inputs; fetched bytes in order", r)
    tap.eq(p.stats()["handles"], before + 2, "run keeps one handle per output, none for intermediates")
    tap.ok(np.array_equal(p.get(outs[1]["handle"]), want_m, equal_nan=True), "run: an output's handle holds it")
    r, data = p.ok({"cmd": "run", "graph": graph, "fetch": ["m"], "keep": False}, z.tobytes())
    tap.ok(all("handle" not in o for o in r["outputs"]) and "nbytes" not in r["outputs"][0]
           and len(data) == 16, "run: fetch a list of names, keep false", r)
    n = p.stats()["handles"]
    bad = dict(graph, ops=graph["ops"] + [{"op": "dot", "in": ["x", "z"], "out": "d"}], outputs={"t": True, "d": True})
    tap.eq(p.error({"cmd": "run", "graph": bad}, z.tobytes()), "shape_mismatch", "run: a failing op fails the run")
    tap.eq(p.stats()["handles"], n, "a failed run leaves no new handle")
    tap.eq(p.error({"cmd": "run", "graph": {"inputs": {"x": "x.npy"}, "ops": [], "outputs": {"x": True}}}),
           "bad_request", "run: a file name input is refused")
    tap.eq(p.error({"cmd": "run", "graph": {"inputs": {"x": {"handle": hx}}, "ops": [], "outputs": {"x": "out.npy"}}}),
           "bad_request", "run: a file name output is refused")
    tap.eq(p.error({"cmd": "run", "graph": {"inputs": {"x": {"handle": hx}}, "ops": [{"op": "exp", "in": ["q"], "out": "e"}],
                                            "outputs": {"e": True}}}), "bad_request", "run: an unknown name")
    tap.eq(p.error({"cmd": "run", "graph": graph}, z.tobytes() + b"\0\0\0\0"), "size_mismatch",
           "run: bytes no input claims")
    tap.eq(p.error({"cmd": "run", "graph": graph}, z.tobytes()[:4]), "size_mismatch", "run: too few bytes for the inputs")
    tap.eq(p.error({"cmd": "run", "graph": graph, "fetch": ["nope"]}, z.tobytes()), "bad_request",
           "run: fetch names a non-output")
    tap.ok(p.alive(), "serving after run errors")
    p.close()


def t_free_stats(tap):
    p = Port()
    s0 = p.stats()
    fields = ["handles", "lost_handles", "handle_bytes", "live_tensors", "live_bytes", "live_buffers", "peak_bytes",
              "pooled_bytes", "pinned_bytes", "buffers_created", "pipelines_created", "submits", "validation_messages", "requests",
              "errors", "generation", "device_losses"]
    tap.ok(all(isinstance(s0.get(f), int) for f in fields), "stats: every documented counter",
           [f for f in fields if f not in s0])
    tap.eq((s0["requests"], s0["errors"], s0["generation"], s0["device_losses"]), (1, 0, 1, 0),
           "stats: requests count this one; no errors; generation 1")
    hs = [p.put(np.ones((256, 256), "<f4")) for _ in range(4)]
    s = p.stats()
    tap.eq((s["handles"], s["handle_bytes"], s["live_tensors"]), (4, 4 * 256 * 256 * 4, 4), "stats: handles and their bytes")
    tap.ok(s["live_bytes"] >= 4 * 256 * 256 * 4, "stats: live_bytes covers the tensors", s)
    tap.eq(p.error({"cmd": "free", "handles": [hs[0], 99999]}), "unknown_handle", "free: one unknown handle fails the list")
    tap.eq(p.stats()["handles"], 4, "free is all or nothing")
    tap.eq(p.ok({"cmd": "free", "handles": [hs[0], hs[1], hs[0]]})[0]["freed"], 2, "free: a handle listed twice is freed once")
    tap.eq(p.ok({"cmd": "free", "handle": hs[2]})[0]["freed"], 1, "free: one handle")
    tap.eq(p.error({"cmd": "free", "handle": hs[2]}), "unknown_handle", "free: an already freed handle")
    tap.eq(p.error({"cmd": "get", "handle": hs[1]}), "unknown_handle", "get: a freed handle")
    p.ok({"cmd": "free", "handles": [hs[3]]})
    s = p.stats()
    tap.eq((s["handles"], s["handle_bytes"], s["live_tensors"]), (0, 0, 0), "after the frees: no handle, bytes or tensor left")
    tap.ok(s["live_bytes"] < 256 * 256 * 4, "live_bytes is back below one tensor's size", s)
    tap.eq(s["errors"], 3, "stats: errors counts the error replies")
    stages = ["read", "decode", "command", "engine", "reply"]
    t0 = s["time_ns"]
    tap.ok(all(isinstance(t0.get(k), int) and t0[k] >= 0 for k in stages), "stats: time_ns has every stage", t0)
    ha = p.put(np.ones(64, "<f4"))
    p.ok({"cmd": "op", "op": "exp", "in": [ha]})
    t1 = p.stats()["time_ns"]
    tap.ok(all(t1[k] >= t0[k] for k in stages) and t1["engine"] > t0["engine"] and t1["command"] > t0["command"],
           "stats: time_ns grows, the op's engine time included", (t0, t1))
    tap.ok(t1["engine"] - t0["engine"] <= t1["command"] - t0["command"], "stats: engine time is part of command time",
           (t0, t1))
    last = p.stats()["last_ns"]
    tap.ok(last["cmd"] == "stats" and all(isinstance(last[k], int) for k in stages) and last["engine"] == 0,
           "stats: last_ns is the request before (a stats, no engine time)", last)
    p.ok({"cmd": "op", "op": "exp", "in": [ha]})
    last = p.stats()["last_ns"]
    tap.ok(last["cmd"] == "op" and 0 < last["engine"] <= last["command"] and last["reply"] > 0,
           "stats: last_ns of an op: its engine time within its command time, its reply's time", last)
    # put and get: the upload and the download are the engine's work
    hb = p.put(np.ones(1 << 20, "<f4"))
    last = p.stats()["last_ns"]
    tap.ok(last["cmd"] == "put" and 0 < last["engine"] <= last["command"],
           "stats: last_ns of a put: its upload as engine time, within its command time", last)
    p.get(hb)
    last = p.stats()["last_ns"]
    tap.ok(last["cmd"] == "get" and 0 < last["engine"] <= last["command"],
           "stats: last_ns of a get: its download as engine time, within its command time", last)
    p.close()


def t_shm(tap):
    """put and get through a POSIX shared memory object ("shm"), not the
    pipe: the port reads and writes the client's bytes in place.  Sizes
    from 0 bytes to several transfer pieces (the lanes forced on with
    NXVK_STAGING=1 and 1 MiB pieces), offsets that are not page-aligned,
    a region rewritten or made anew between requests, and every field's
    errors: one line naming the field, nothing created, serving on."""
    import mmap
    name = "/nxvk-test-%d" % os.getpid()
    path = "/dev/shm" + name
    size = (5 << 20) + 8192
    fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_TRUNC, 0o600)
    os.ftruncate(fd, size)
    mm = mmap.mmap(fd, size)
    p = Port(env={"NXVK_STAGING": "1", "NXVK_XFER_MIN": "0", "NXVK_XFER_PIECE": "1M", "NXVK_XFER_THREADS": "3"})
    try:
        rng = np.random.default_rng(7)
        moved = 0
        pinned0 = p.stats()["pinned_bytes"]
        for n, off in [(0, 0), (1, 3), (1000, 4096), ((1 << 20) // 4 + 1, 8), ((5 << 20) // 4, 4100)]:
            moved += 2 * 4 * n  # the put from the region and the get into it
            a = rng.integers(0, 2**32, n, dtype=np.uint64).astype("<u4").view("<f4")
            mm[off:off + a.nbytes] = a.tobytes()
            r, b = p.ok({"cmd": "put", "dtype": "f32", "shape": [n], "shm": {"name": name, "offset": off}})
            g, gb = p.ok({"cmd": "get", "handle": r["handle"]})
            tap.ok(b == b"" and gb == a.tobytes(), "shm put: %d f32 from offset %d, the same bytes back by pipe" % (n, off))
            # get into the region at another offset, guard bytes around it
            goff = size - a.nbytes - 64 - (off % 7)
            mm[goff - 64:goff + a.nbytes + 64] = b"\xa5" * (a.nbytes + 128)
            g, gb = p.ok({"cmd": "get", "handle": r["handle"],
                          "shm": {"name": name, "offset": goff, "length": a.nbytes + 64}})
            tap.ok(gb == b"" and g["nbytes"] == a.nbytes and mm[goff:goff + a.nbytes] == a.tobytes() and
                   mm[goff - 64:goff] == b"\xa5" * 64 and mm[goff + a.nbytes:goff + a.nbytes + 64] == b"\xa5" * 64,
                   "shm get: %d f32 into offset %d, nothing written around them, no bytes in the frame" % (n, goff), g)
            p.ok({"cmd": "free", "handle": r["handle"]})
        # the mapping is registered with the device once (nxvk_host_register:
        # lavapipe has VK_EXT_external_memory_host), so every shm byte above
        # was the device's copy alone, none through staging; the pipe gets
        # (as above) are not in it
        pinned = p.stats()["pinned_bytes"] - pinned0
        tap.eq(pinned, moved, "shm: every byte of the puts and gets above moved by DMA from the registered mapping")
        # the same region rewritten: the port's kept mapping sees the new bytes
        a = np.arange(4096, dtype="<f4")
        for k in range(2):
            mm[0:a.nbytes] = (a + k).tobytes()
            r, _ = p.ok({"cmd": "put", "dtype": "f32", "shape": [4096], "shm": {"name": name}})
            tap.ok(np.array_equal(p.get(r["handle"]), a + k), "shm put %d of the same region: its current bytes" % (k + 1))
        # the name unlinked and made again (another object): the new one is read
        mm.close()
        os.close(fd)
        os.unlink(path)
        fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_TRUNC, 0o600)
        os.ftruncate(fd, size)
        mm = mmap.mmap(fd, size)
        mm[0:a.nbytes] = (a * 3).tobytes()
        r, _ = p.ok({"cmd": "put", "dtype": "f32", "shape": [4096], "shm": {"name": name}})
        tap.ok(np.array_equal(p.get(r["handle"]), a * 3), "shm: a name made anew is read afresh, not the old mapping")
        h = r["handle"]
        s0 = p.stats()
        put = {"cmd": "put", "dtype": "f32", "shape": [4]}
        cases = [
            (dict(put, shm="x"), b"", "bad_request", "shm", "shm not an object"),
            (dict(put, shm={"offset": 0}), b"", "bad_request", "shm.name", "no name"),
            (dict(put, shm={"name": 5}), b"", "bad_request", "shm.name", "a name not a string"),
            (dict(put, shm={"name": "nxvk"}), b"", "bad_request", "shm.name", "a name without its slash"),
            (dict(put, shm={"name": "/a/b"}), b"", "bad_request", "shm.name", "a name with a second slash"),
            (dict(put, shm={"name": "/.."}), b"", "bad_request", "shm.name", "the name /.."),
            (dict(put, shm={"name": "/" + "x" * 300}), b"", "bad_request", "shm.name", "a name too long"),
            (dict(put, shm={"name": name + "-none"}), b"", "bad_request", "shm.name", "a name that does not exist"),
            (dict(put, shm={"name": name, "offset": -1}), b"", "bad_request", "shm.offset", "a negative offset"),
            (dict(put, shm={"name": name, "offset": 1.5}), b"", "bad_request", "shm.offset", "an offset not whole"),
            (dict(put, shm={"name": name, "offset": "0"}), b"", "bad_request", "shm.offset", "an offset not a number"),
            (dict(put, shm={"name": name, "offset": size - 15}), b"", "size_mismatch", "shm.offset",
             "an offset whose bytes run past the end"),
            (dict(put, shm={"name": name, "offset": size + 4096}), b"", "size_mismatch", "shm.offset",
             "an offset past the end"),
            (dict(put, shm={"name": name, "length": 15}), b"", "size_mismatch", "shm.length", "put: a length not the tensor's"),
            (dict(put, shm={"name": name, "length": -4}), b"", "bad_request", "shm.length", "a negative length"),
            (dict(put, shm={"name": name, "size": 16}), b"", "bad_request", "size", "an unknown field in shm"),
            (dict(put, shm={"name": name}), b"\0" * 16, "size_mismatch", "shm", "shm and bytes in the frame"),
            ({"cmd": "get", "handle": h, "shm": {"name": name, "length": 100}}, b"", "size_mismatch", "shm.length",
             "get: room for fewer bytes than the tensor"),
            ({"cmd": "get", "handle": h, "shm": {"name": name, "offset": size - 100}}, b"", "size_mismatch",
             "shm.offset", "get: past the end"),
            ({"cmd": "get", "handle": h, "shm": {"name": "/nope/"}}, b"", "bad_request", "shm.name", "get: a bad name"),
            ({"cmd": "get", "handle": 424242, "shm": {"name": name}}, b"", "unknown_handle", "handle",
             "get: an unknown handle"),
        ]
        before = mm[:]
        for header, data, code, fieldname, desc in cases:
            r, b = p.call(header, data)
            err = r.get("error") or {}
            msg = err.get("message", "")
            tap.ok(r.get("ok") is False and err.get("code") == code and fieldname in msg and "\n" not in msg and
                   b == b"" and p.alive(), "shm error, %s: %s naming %s, serving on" % (desc, code, fieldname), r)
        s1 = p.stats()
        tap.eq((s1["handles"], s1["live_tensors"]), (s0["handles"], s0["live_tensors"]),
               "shm errors: no handle or tensor made")
        tap.ok(mm[:] == before, "shm errors: the region unchanged")
    finally:
        p.close()
        mm.close()
        os.close(fd)
        os.unlink(path)


def t_errors(tap, info):
    p = Port()
    h = p.put(np.ones((2, 2), "<f4"))
    hi = p.put(np.ones((2, 2), "<i4"))
    cases = [
        ({"cmd": "nope"}, b"", "bad_request", "an unknown command"),
        ({"id": 1}, b"", "bad_request", "no cmd"),
        ({"cmd": 5}, b"", "bad_request", "cmd not a string"),
        ({"cmd": "stats", "verbose": True}, b"", "bad_request", "a field the command does not take"),
        ({"cmd": "get", "handle": "one"}, b"", "bad_request", "a handle that is not an integer"),
        ({"cmd": "get", "handle": 0}, b"", "bad_request", "handle 0"),
        ({"cmd": "op", "op": "add", "in": [h]}, b"", "bad_request", "the wrong number of inputs"),
        ({"cmd": "op", "op": "add", "in": [h, h], "fetch": "yes"}, b"", "bad_request", "fetch not a boolean"),
        ({"cmd": "op", "op": "no_such_op", "in": [h]}, b"", "unknown_op", "unknown_op"),
        ({"cmd": "op", "op": "sum", "in": [h], "attrs": {"axis": 0}}, b"", "bad_attr", "an attribute the op does not take"),
        ({"cmd": "op", "op": "sum", "in": [h], "attrs": {"keep_axes": 1}}, b"", "bad_attr", "an attribute of the wrong type"),
        ({"cmd": "op", "op": "reshape", "in": [h], "attrs": {"shape": [3]}}, b"", "shape_mismatch", "shape_mismatch"),
        ({"cmd": "op", "op": "add", "in": [h, hi]}, b"", "dtype_mismatch", "dtype_mismatch"),
        ({"cmd": "op", "op": "exp", "in": [hi]}, b"", "unsupported_dtype", "unsupported_dtype: an op on a dtype it does not take"),
        ({"cmd": "put", "dtype": "c64", "shape": [1]}, b"\0" * 8, "unsupported_dtype", "unsupported_dtype: an unknown dtype"),
        ({"cmd": "put", "dtype": "f32", "shape": [1] * 9}, b"\0" * 4, "too_large", "too_large: rank 9"),
        ({"cmd": "put", "dtype": "u8", "shape": [65536, 32768]}, b"", "too_large", "too_large: 2^31 elements"),
        ({"cmd": "put", "dtype": "f32", "shape": [3]}, b"\0" * 11, "size_mismatch", "size_mismatch: put with too few bytes"),
        ({"cmd": "put", "dtype": "f32", "shape": [3]}, b"\0" * 13, "size_mismatch", "size_mismatch: put with too many bytes"),
        ({"cmd": "get", "handle": h}, b"\0", "size_mismatch", "size_mismatch: bytes to a command that takes none"),
        ({"cmd": "get", "handle": 424242}, b"", "unknown_handle", "unknown_handle"),
        ({"cmd": "op", "op": "exp", "in": [424242]}, b"", "unknown_handle", "unknown_handle as an op input"),
        ({"cmd": "free", "handle": 424242}, b"", "unknown_handle", "unknown_handle to free"),
    ]
    if "f64" not in info["dtypes"]:
        cases.append(({"cmd": "put", "dtype": "f64", "shape": [1]}, b"\0" * 8, "unsupported_dtype", "f64 on this device"))
    for header, data, code, desc in cases:
        got = p.error(header, data)
        tap.ok(got == code and p.alive(), "%s: %s, and serving on" % (desc, code), got)
    r, _ = p.call({"id": "mine", "cmd": "op", "op": "no_such_op", "in": []})
    tap.ok(r["id"] == "mine" and isinstance(r["error"]["message"], str) and "\n" not in r["error"]["message"]
           and r["error"]["message"], "an error reply: id, code and a one-line message", r)
    p.close()


def t_bad_frames(tap):
    p = Port("--max-frame", "64K")
    bad = [
        (b"", "a payload shorter than 4 bytes"),
        (b"\0\0", "a 2-byte payload"),
        (b"\0\0\0\0", "header length 0"),
        (b"\0\0\0\x10{}", "header length past the payload's end"),
        (b"\x10\0\0\0{}", "header length over 256 MiB"),
        (Port.payload(b'{"cmd": "ping", "echo": "\xc3\x28"}'), "a header that is not UTF-8"),
        (Port.payload(b'{"cmd": "ping", "echo": "a\x00b"}'), "a NUL byte in the header"),
        (Port.payload(b"not json"), "a header that is not JSON"),
        (Port.payload(b"[1, 2, 3]"), "a header that is not an object"),
        (Port.payload(b'{"cmd": "ping"} {}'), "text after the header's object"),
        (Port.payload(b'{"cmd": "ping", "echo": [1, 2'), "a cut header"),
    ]
    for payload, desc in bad:
        p.send_payload(payload)
        r, b = p.recv()
        tap.ok(r.get("ok") is False and r["error"]["code"] == "bad_request" and r["id"] is None and b == b""
               and p.alive(), "%s: bad_request with id null, and serving on" % desc, r)
    r, _ = p.call(b' \n {"id": 5, "cmd": "ping"} \t')
    tap.eq((r["id"], r["ok"]), (5, True), "white space around the header is fine")
    # over --max-frame: refused, read past, answered with the request's id
    hwm0 = vm_hwm(p.proc.pid)
    big = 64 << 20
    head = b'{"id": "big", "cmd": "ping"}'
    p.send_raw(struct.pack(">I", 4 + len(head) + big) + struct.pack(">I", len(head)) + head)
    chunk = b"\x5a" * (1 << 20)
    for _ in range(big >> 20):
        p.send_raw(chunk)
    r, b = p.recv()
    tap.ok(r["ok"] is False and r["error"]["code"] == "too_large" and r["id"] == "big" and b == b"",
           "a frame over --max-frame: too_large with the request's id", r)
    hwm1 = vm_hwm(p.proc.pid)
    if hwm0 is not None:
        tap.ok(hwm1 - hwm0 < 32 << 20, "the refused 64 MiB frame was never held in memory (peak RSS +%d KiB)" % ((hwm1 - hwm0) >> 10))
    tap.ok(p.alive(), "serving after an oversized frame")
    # just under the limit is served
    under = (64 << 10) - 4 - len(b'{"cmd":"ping"}')
    r, b = p.call(b'{"cmd":"ping"}', b"\1" * under)
    tap.ok(r["ok"] is True and len(b) == under, "a frame of exactly --max-frame bytes is served")
    tap.eq(p.error(b'{"cmd":"ping"}', b"\1" * (under + 1)), "too_large", "one byte more is too_large")
    rc, rest = p.close()
    tap.eq((rc, rest), (0, b""), "exit 0 at end of input after all that")


def vm_hwm(pid):
    try:
        with open("/proc/%d/status" % pid) as f:
            for line in f:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        return None
    return None


def t_truncated(tap):
    for cut, desc, want_id in [(2, "inside the 4-byte length", None), (4 + 4 + 20, "inside the payload", 9)]:
        p = Port()
        h = p.put(np.ones(4, "<f4"))
        head = b'{"id": 9, "cmd": "put", "dtype": "f32", "shape": [4]}'
        frame = struct.pack(">I", 4 + len(head) + 16) + struct.pack(">I", len(head)) + head + b"\0" * 16
        cut_at = cut if cut < 4 else 4 + 4 + len(head) + 5
        p.send_raw(frame[:cut_at])
        p.proc.stdin.close()
        r, b = p.recv()
        tap.ok(r["ok"] is False and r["error"]["code"] == "bad_request" and "truncated" in r["error"]["message"]
               and r["id"] == want_id, "end of input %s: a truncated-frame error reply (id %r)" % (desc, want_id), r)
        rc, rest = p.close()
        tap.eq((rc, rest), (0, b""), "then exit 0 (freeing handle %d)" % h)


def t_pipelining_and_eof(tap):
    p = Port()
    for i in range(200):
        p.send({"id": i, "cmd": "op", "op": "iota", "attrs": {"shape": [i % 7 + 1]}, "fetch": True, "keep": i % 2 == 0})
    ids = []
    good = True
    for i in range(200):
        r, b = p.recv()
        ids.append(r["id"])
        good &= r["ok"] and np.array_equal(np.frombuffer(b, "<i4"), np.arange(i % 7 + 1))
    tap.ok(ids == list(range(200)) and good, "200 requests sent before reading: answered in order, all right")
    s = p.stats()
    tap.eq(s["handles"], 100, "the kept ones are live")
    rc, rest = p.close()
    tap.eq((rc, rest), (0, b""), "end of input with 100 live handles: everything freed, exit 0")
    tap.ok("error" not in p.stderr, "nothing on stderr", p.stderr)


def t_epipe(tap):
    p = Port()
    p.ok({"cmd": "ping"})
    p.proc.stdout.close()  # the client stops reading
    try:
        for _ in range(50):
            p.send({"cmd": "ping"}, b"\0" * 65536)
    except BrokenPipeError:
        pass
    try:
        p.proc.stdin.close()
    except BrokenPipeError:
        pass
    try:
        rc = p.proc.wait(60)
    except subprocess.TimeoutExpired:
        p.proc.kill()
        rc = "hung"
    tap.eq(rc, 0, "a client that stops reading: EPIPE ends the server with status 0")


def t_device_lost(tap):
    p = Port()
    tap.eq(p.error({"cmd": "debug_lose_device"}), "bad_request", "debug_lose_device is unknown without NXVK_TEST_HOOKS=1")
    p.close()
    p = Port(env={"NXVK_TEST_HOOKS": "1"})
    x = np.array([1, 2, 3], "<f4")
    old = [p.put(x), p.put(x)]
    r, _ = p.ok({"cmd": "debug_lose_device"})
    tap.eq(r["generation"], 1, "debug_lose_device answers ok with the lost generation")
    tap.eq(p.error({"cmd": "get", "handle": old[0]}), "device_lost", "get of an old handle: device_lost")
    tap.eq(p.error({"cmd": "op", "op": "exp", "in": [old[0]]}), "device_lost", "op on an old handle: device_lost")
    tap.eq(p.error({"cmd": "run", "graph": {"inputs": {"a": {"handle": old[1]}}, "ops": [{"op": "exp", "in": ["a"], "out": "e"}],
                                            "outputs": {"e": True}}}), "device_lost", "run on an old handle: device_lost")
    info, _ = p.ok({"cmd": "info"})
    s = p.stats()
    tap.eq((info["generation"], s["generation"], s["device_losses"], s["lost_handles"], s["handles"]), (2, 2, 1, 2, 0),
           "the device was re-created: generation 2, old handles counted as lost")
    new = p.put(x)
    tap.ok(new > max(old) and np.array_equal(p.get(new), x), "new handles work on the new device")
    r, data = p.ok({"cmd": "op", "op": "add", "in": [new, new], "fetch": True, "keep": False})
    tap.ok(np.array_equal(np.frombuffer(data, "<f4"), 2 * x), "ops run on the new device")
    tap.eq(p.ok({"cmd": "free", "handles": old})[0]["freed"], 2, "free accepts handles from the lost device")
    tap.eq(p.error({"cmd": "get", "handle": old[0]}), "unknown_handle", "after free they are unknown")
    s = p.stats()
    tap.eq((s["lost_handles"], s["handles"]), (0, 1), "lost_handles back to 0")
    rc, _ = p.close()
    tap.eq(rc, 0, "exit 0 after a device loss")


def t_validation(tap):
    p = Port(env={"NXVK_VALIDATE": "1"})
    try:
        a = np.linspace(-1, 1, 1000, dtype="<f4")
        ha = p.put(a)
        r, data = p.ok({"cmd": "op", "op": "exp", "in": [ha], "fetch": True})
        p.ok({"cmd": "run", "graph": {"inputs": {"a": {"handle": ha}, "b": {"dtype": "f32", "shape": [1000], "bytes": True}},
                                      "ops": [{"op": "multiply", "in": ["a", "b"], "out": "m"},
                                              {"op": "sum", "in": ["m"], "out": "s"}],
                                      "outputs": {"s": True}}, "fetch": True}, a.tobytes())
        p.ok({"cmd": "free", "handles": [ha, r["handle"]]})
        s = p.stats()
        tap.eq(s["validation_messages"], 0, "NXVK_VALIDATE=1: a session with no validation message")
    except PortError as e:
        tap.ok(False, "NXVK_VALIDATE=1 session", e)
    rc, _ = p.close()
    tap.eq(rc, 0, "NXVK_VALIDATE=1: exit 0", p.stderr)


def t_cli(tap):
    r = subprocess.run([NXVK, "port", "--max-frame", "10"], stdin=subprocess.DEVNULL, capture_output=True, text=True)
    tap.ok(r.returncode == 2 and r.stderr.startswith("nxvk: error:") and r.stderr.count("\n") == 1,
           "--max-frame under 64: usage error, exit 2", r.stderr)
    r = subprocess.run([NXVK, "port", "--max-frame", "1X"], stdin=subprocess.DEVNULL, capture_output=True, text=True)
    tap.eq(r.returncode, 2, "--max-frame 1X: exit 2")
    try:
        import pty
        master, slave = pty.openpty()
        r = subprocess.run([NXVK, "port"], stdin=subprocess.DEVNULL, stdout=slave, stderr=subprocess.PIPE, text=True)
        os.close(master)
        os.close(slave)
        tap.eq(r.returncode, 2, "standard output a terminal: exit 2")
    except (ImportError, OSError) as e:
        tap.ok(False, "open a pty", e)
    r = subprocess.run([NXVK, "port"], stdin=subprocess.DEVNULL, capture_output=True)
    tap.eq((r.returncode, r.stdout), (0, b""), "empty input: exit 0, no output")
    for bad in ["-1", "1000001", "x"]:
        r = subprocess.run([NXVK, "port", "--poll-us", bad], stdin=subprocess.DEVNULL, capture_output=True, text=True)
        tap.eq(r.returncode, 2, "--poll-us %s: usage error, exit 2" % bad, r.stderr)
    # polling before each read (the GPU default) serves requests like blocking reads
    p = Port("--poll-us", "300")
    x = np.arange(1024, dtype="<f4")
    ha = p.put(x)
    outs = [p.get(p.ok({"cmd": "op", "op": "add", "in": [ha, ha]})[0]["handle"]) for _ in range(20)]
    tap.ok(all(np.array_equal(o, x + x) for o in outs), "--poll-us 300: 20 adds served right")
    p.close()


def t_hot_path(tap):
    """[speed]: once warm, the same requests create no Vulkan buffer or pipeline."""
    p = Port()
    x = np.arange(1024, dtype="<f4")

    def round_trip():
        ha, hb = p.put(x), p.put(x)
        r, _ = p.ok({"cmd": "op", "op": "add", "in": [ha, hb]})
        got = p.get(r["handle"])
        p.ok({"cmd": "free", "handles": [ha, hb, r["handle"]]})
        return got

    for _ in range(3):
        round_trip()
    s0 = p.stats()
    ok = all(np.array_equal(round_trip(), x + x) for _ in range(50))
    s1 = p.stats()
    tap.ok(ok, "hot path: 50 put+put+add+get+free round trips, all correct")
    tap.eq((s1["buffers_created"] - s0["buffers_created"], s1["pipelines_created"] - s0["pipelines_created"]), (0, 0),
           "hot path: no buffer and no pipeline created once warm", (s0, s1))
    p.close()


def t_prepare(tap):
    """prepare / exec / release: a graph parsed once, run on handles named per call."""
    p = Port()
    x = np.array([[1, 2], [3, 4]], dtype="<f4")
    y = np.array([10, -1], dtype="<f4")
    hx, hy, hk = p.put(x), p.put(y), p.put(np.array([0.5, 2.0], dtype="<f4"))
    graph = {"inputs": {"a": True, "k": {"handle": hk}, "b": True,
                        "c": {"dtype": "f32", "shape": [2], "data": [1, "nan"]}},
             "ops": [{"op": "add", "in": ["a", "b"], "out": "s"},
                     {"op": "multiply", "in": ["s", "k"], "out": "m"},
                     {"op": "add", "in": ["m", "c"], "out": "t"}],
             "outputs": {"t": True, "m": True}}
    r, _ = p.ok({"cmd": "prepare", "graph": graph})
    g = r["graph"]
    tap.ok(isinstance(g, int) and g > 0 and r["params"] == 2, "prepare: a graph number and its parameter count", r)
    want_m = (x + y) * np.array([0.5, 2.0], "<f4")
    want_t = want_m + np.array([1, np.nan], "<f4")
    n = p.stats()["handles"]
    r, data = p.ok({"cmd": "exec", "graph": g, "in": [hx, hy], "fetch": True})
    got_t = np.frombuffer(data[:16], "<f4").reshape(2, 2)
    got_m = np.frombuffer(data[16:], "<f4").reshape(2, 2)
    tap.ok([o["name"] for o in r["outputs"]] == ["t", "m"] and np.array_equal(got_t, want_t, equal_nan=True)
           and np.array_equal(got_m, want_m), "exec: parameters by handle in order, a kept handle, an inline input", r)
    tap.eq(p.stats()["handles"], n + 2, "exec keeps one handle per output")
    tap.ok(np.array_equal(p.get(r["outputs"][1]["handle"]), want_m), "exec: an output's handle holds it")
    # the same graph on other parameters
    x2 = np.array([[5, 6], [7, 8]], dtype="<f4")
    hx2 = p.put(x2)
    r, data = p.ok({"cmd": "exec", "graph": g, "in": [hx2, hy], "fetch": ["m"], "keep": False})
    tap.ok(len(data) == 16 and np.array_equal(np.frombuffer(data, "<f4").reshape(2, 2), (x2 + y) * np.array([0.5, 2.0], "<f4"))
           and all("handle" not in o for o in r["outputs"]), "exec again, other handles: fetch a list, keep false", r)
    tap.eq(p.error({"cmd": "exec", "graph": g, "in": [hx]}), "bad_request", "exec: too few handles")
    tap.eq(p.error({"cmd": "exec", "graph": g, "in": [hx, 999999]}), "unknown_handle", "exec: an unknown handle")
    tap.eq(p.error({"cmd": "exec", "graph": g + 1000, "in": [hx, hy]}), "unknown_handle", "exec: an unknown graph")
    tap.eq(p.error({"cmd": "prepare", "graph": dict(graph, inputs={"a": {"dtype": "f32", "shape": [2], "bytes": True}})}),
           "bad_request", "prepare: bytes inputs are refused")
    tap.eq(p.error({"cmd": "prepare", "graph": dict(graph, ops=[{"op": "nope", "in": ["a"], "out": "t"}])}),
           "unknown_op", "prepare: an unknown op")
    tap.eq(p.error({"cmd": "prepare", "graph": {"inputs": {"a": True}, "ops": [{"op": "exp", "in": ["q"], "out": "e"}],
                                                "outputs": {"e": True}}}), "bad_request", "prepare: an unknown name")
    # a kept tensor freed after prepare: exec says so
    p.ok({"cmd": "free", "handle": hk})
    tap.eq(p.error({"cmd": "exec", "graph": g, "in": [hx, hy]}), "unknown_handle", "exec: a kept input freed since")
    r, _ = p.ok({"cmd": "release", "graph": g})
    tap.eq(r.get("released"), 1, "release")
    tap.eq(p.error({"cmd": "exec", "graph": g, "in": [hx, hy]}), "unknown_handle", "exec after release")
    tap.eq(p.error({"cmd": "release", "graph": g}), "unknown_handle", "release twice")
    tap.ok(p.alive(), "serving after prepare/exec errors")
    p.close()


def t_early(tap):
    """"early": true: the reply (handles, dtypes, shapes) before the run; a run that fails after it."""
    p = Port("--max-bytes", "1M")
    x = np.array([1, 2, 3, 4], dtype="<f4")
    hx = p.put(x)
    graph = {"inputs": {"a": {"handle": hx}}, "ops": [{"op": "exp", "in": ["a"], "out": "e"},
                                                      {"op": "sum", "in": ["e"], "out": "s"}],
             "outputs": {"s": True, "e": True}}
    r, data = p.ok({"cmd": "run", "graph": graph, "early": True})
    outs = r["outputs"]
    tap.ok([(o["name"], o["dtype"], o["shape"]) for o in outs] == [("s", "f32", []), ("e", "f32", [4])] and data == b"",
           "early run: names, dtypes and shapes in the reply", r)
    tap.ok(np.allclose(p.get(outs[1]["handle"]), np.exp(x)) and np.allclose(p.get(outs[0]["handle"]), np.exp(x).sum()),
           "early run: its handles hold the results")
    g = p.ok({"cmd": "prepare", "graph": dict(graph, inputs={"a": True})})[0]["graph"]
    r, _ = p.ok({"cmd": "exec", "graph": g, "in": [hx], "early": True})
    tap.ok(np.allclose(p.get(r["outputs"][1]["handle"]), np.exp(x)), "early exec: its handle holds the result", r)
    st = p.stats()
    tap.eq((st["early_runs"], st["early_failures"]), (2, 0), "stats: early_runs 2, early_failures 0")
    r, data = p.ok({"cmd": "run", "graph": graph, "early": True, "fetch": True})
    tap.ok(len(data) == 20 and p.stats()["early_runs"] == 2, "early with fetch: an ordinary run (the bytes need it)", r)
    # an intermediate over the memory cap: the run fails after its reply
    big = {"inputs": {"a": {"handle": hx}},
           "ops": [{"op": "iota", "attrs": {"shape": [1048576], "dtype": "f32"}, "out": "i"},
                   {"op": "sum", "in": ["i"], "out": "s"}], "outputs": {"s": True}}
    tap.eq(p.error({"cmd": "run", "graph": big}), "alloc_failed", "the same graph, not early: alloc_failed")
    r, _ = p.ok({"cmd": "run", "graph": big, "early": True})
    h = r["outputs"][0]["handle"]
    tap.eq(p.error({"cmd": "get", "handle": h}), "alloc_failed", "early: the failed run's handle answers its error")
    tap.eq(p.error({"cmd": "op", "op": "exp", "in": [h]}), "alloc_failed", "early: and so does an op naming it")
    for _ in range(2):  # every use, not only the first, names the op that failed
        r, _ = p.call({"cmd": "get", "handle": h})
        msg = (r.get("error") or {}).get("message", "")
        tap.ok("ops[0] (iota -> i)" in msg and "memory cap" in msg,
               "early: the error names the failed op and the engine's reason", msg)
    st = p.stats()
    tap.eq((st["early_runs"], st["early_failures"]), (3, 1), "stats: early_failures 1")
    tap.eq(p.ok({"cmd": "free", "handle": h})[0]["freed"], 1, "early: the failed handle frees")
    tap.eq(p.error({"cmd": "run", "graph": graph, "early": 1}), "bad_request", "early must be true or false")
    irq = open("/proc/interrupts").read() if os.path.exists("/proc/interrupts") else ""
    gpu_irq = any(d in irq for d in ("nvidia", "amdgpu", "i915", " xe", "nouveau", "radeon"))
    tap.ok(isinstance(st.get("irq_cpus_left"), int) and (gpu_irq or st["irq_cpus_left"] == 0),
           "stats: irq_cpus_left (0 with no GPU interrupt here)", st.get("irq_cpus_left"))
    e = st.get("engine_ns") or {}
    tap.ok(e.get("recordings", 0) >= 3 and all(e.get(k, 0) > 0 for k in ("record", "submit", "wait")),
           "stats: engine_ns counts the runs' recordings and their record, submit and wait times", e)
    tap.ok(not sys.platform.startswith("linux") or 0 <= st.get("cpu", -1) < (os.cpu_count() or 1),
           "stats: cpu is the serving thread's CPU", st.get("cpu"))
    tap.ok(p.alive(), "serving after an early failure")
    rc, _ = p.close()
    tap.ok(rc == 0 and p.stderr == "", "exit 0, nothing on stderr", p.stderr)
    # what the recording would refuse is answered at once, not early: the
    # client falls back on unsupported_dtype (here i64 on a device without it)
    p = Port(env={"NXVK_TEST_INJECT": "no_int64"})
    hx = p.put(x)
    wide = {"inputs": {"a": {"handle": hx}}, "ops": [{"op": "as_type", "in": ["a"], "attrs": {"dtype": "i64"}, "out": "w"}],
            "outputs": {"w": True}}
    tap.eq(p.error({"cmd": "run", "graph": wide, "early": True}), "unsupported_dtype",
           "early: a dtype the device lacks is the run's own error reply")
    scan = {"inputs": {"a": {"handle": hx}}, "ops": [{"op": "cumulative_sum", "in": ["a"], "out": "c"}],
            "outputs": {"c": True}}
    r, _ = p.ok({"cmd": "run", "graph": scan, "early": True})
    tap.ok(np.allclose(p.get(r["outputs"][0]["handle"]), np.cumsum(x)) and p.stats()["early_runs"] == 0,
           "early: a scan (which may answer unsupported after running) is replied to after its run")
    p.close()


def t_tables(tap):
    """--max-bytes caps the client's tensors, not the engine's own lookup tables
    (NXVK_EW16_TABLE: 128 KiB per op and dtype, kept until the port closes)."""
    p = Port("--max-bytes", "1M", env={"NXVK_EW16_TABLE": "1"})
    x = np.linspace(-3, 3, 1000).astype("<f2")
    h = p.ok({"cmd": "put", "dtype": "f16", "shape": [1000]}, x.tobytes())[0]["handle"]
    # an op that takes no table first: the engine's own small buffers made
    p.ok({"cmd": "free", "handle": p.ok({"cmd": "op", "op": "add", "in": [h, h]})[0]["handle"]})
    before = p.stats()
    ops = {"exp": np.exp, "tanh": np.tanh, "sin": np.sin, "cos": np.cos, "abs": np.abs, "negate": np.negative,
           "sigmoid": lambda v: 1 / (1 + np.exp(-v)), "atan": np.arctan, "cbrt": np.cbrt, "erf": None}
    bad = []
    for name, f in ops.items():
        r, _ = p.ok({"cmd": "op", "op": name, "in": [h]})
        got = np.frombuffer(p.ok({"cmd": "get", "handle": r["handle"]})[1], "<f2").astype(np.float32)
        if f is not None:
            want = f(x.astype(np.float32)).astype(np.float16).astype(np.float32)
            if not np.allclose(got, want, rtol=2e-3, atol=1e-3):
                bad.append(name)
        p.ok({"cmd": "free", "handle": r["handle"]})
    after = p.stats()
    tap.ok(not bad, "f16 unary ops by table through the port: numpy's values", bad)
    made = after["buffers_created"] - before["buffers_created"]
    tap.ok(made >= len(ops) and after["live_bytes"] == before["live_bytes"],
           "%d tables made (%d buffers created), live_bytes as before them: the tables are not the client's"
           % (len(ops), made), (before["live_bytes"], after["live_bytes"]))
    # the cap's room is the client's still (tables counted, 7 of them would
    # have left 126 KiB): 480 KiB of f32 beside the 2 KB tensor
    r, _ = p.call({"cmd": "put", "dtype": "f32", "shape": [122880]}, bytes(491520))
    tap.ok(r.get("ok") is True, "after %d tables (%d KiB) a 480 KiB tensor still fits a 1 MiB cap"
           % (len(ops), 128 * len(ops)), r)
    rc, _ = p.close()
    tap.ok(rc == 0 and p.stderr == "", "exit 0, nothing on stderr", p.stderr)


def t_reply_printer(tap):
    """The direct reply printer and cJSON's (NXVK_PORT_CJSON_REPLY=1) give the same replies."""
    replies = []
    for env in ({}, {"NXVK_PORT_CJSON_REPLY": "1"}):
        p = Port(env=env)
        h = p.put(np.array([1.5, -2, 3], dtype="<f4"))
        got = [p.call({"cmd": "op", "op": "exp", "in": [h]})[0],
               p.call({"cmd": "get", "handle": h})[0],
               p.call({"cmd": "ping", "echo": {"s": "a\"q\"\\\n\t\u0001\u00e9", "n": [0, -7, 1.25, 1e300, 2 ** 40]}})[0],
               p.call({"cmd": "op", "op": "nope\"\n"})[0],
               p.call({"id": "x\"y", "cmd": "ping"})[0]]
        replies.append(got)
        p.close()
    tap.eq(replies[0], replies[1], "replies printed directly equal cJSON's (strings, escapes, numbers, errors)")


def run_tests():
    tap = Tap()
    info = None
    try:
        info = t_ping_info(tap)
    except Exception as e:  # one group failing must not hide the others
        tap.ok(False, "t_ping_info raised", repr(e))
    info = info or {"dtypes": ["f32"]}
    for fn, args in [(t_put_get, (info,)), (t_op, ()), (t_run, ()), (t_prepare, ()), (t_early, ()), (t_tables, ()), (t_reply_printer, ()),
                     (t_free_stats, ()), (t_shm, ()), (t_errors, (info,)),
                     (t_bad_frames, ()), (t_truncated, ()), (t_pipelining_and_eof, ()), (t_epipe, ()),
                     (t_device_lost, ()), (t_validation, ()), (t_cli, ()), (t_hot_path, ())]:
        try:
            fn(tap, *args)
        except Exception as e:
            tap.ok(False, "%s raised" % fn.__name__, repr(e))
    print("1..%d" % tap.n)
    return 1 if tap.failed else 0


# ----------------------------------------------------------------- latency

def run_latency(n=1024, iters=2000):
    """put + add + get at n f32 through the port, against the in-process
    engine (nxvk bench ops --ops add --sizes 1K: upload + dispatch + download)."""
    p = Port()
    a = np.random.default_rng(0).random(n, dtype=np.float32)
    b = np.random.default_rng(1).random(n, dtype=np.float32)

    def sequence():
        ha = p.ok({"cmd": "put", "dtype": "f32", "shape": [n]}, a.tobytes())[0]["handle"]
        hb = p.ok({"cmd": "put", "dtype": "f32", "shape": [n]}, b.tobytes())[0]["handle"]
        hs = p.ok({"cmd": "op", "op": "add", "in": [ha, hb]})[0]["handle"]
        out = p.ok({"cmd": "get", "handle": hs})[1]
        p.ok({"cmd": "free", "handles": [ha, hb, hs]})
        return out

    graph = {"inputs": {"a": {"dtype": "f32", "shape": [n], "bytes": True}, "b": {"dtype": "f32", "shape": [n], "bytes": True}},
             "ops": [{"op": "add", "in": ["a", "b"], "out": "s"}], "outputs": {"s": True}}
    both = a.tobytes() + b.tobytes()

    def one_run():
        return p.ok({"cmd": "run", "graph": graph, "fetch": True, "keep": False}, both)[1]

    def ping():
        return p.ok({"cmd": "ping"})

    assert np.array_equal(np.frombuffer(sequence(), "<f4"), a + b)
    assert np.array_equal(np.frombuffer(one_run(), "<f4"), a + b)
    results = {}
    for name, fn, k in [("ping (1 round trip)", ping, iters), ("put+put+add+get+free (5 round trips)", sequence, iters // 4),
                        ("run: a, b as bytes in, a+b fetched (1 round trip)", one_run, iters)]:
        for _ in range(20):
            fn()
        times = []
        for _ in range(k):
            t0 = time.perf_counter_ns()
            fn()
            times.append(time.perf_counter_ns() - t0)
        times.sort()
        results[name] = (times[len(times) // 2], times[0], times[-1], k)
    p.close()
    info_line = ""
    inproc = None
    with tempfile.TemporaryDirectory() as d:
        out = os.path.join(d, "b.json")
        r = subprocess.run([NXVK, "bench", "ops", "--ops", "add", "--sizes", "1K", "--json", out],
                           capture_output=True, text=True)
        if r.returncode == 0:
            rep = json.load(open(out))
            res = rep["results"][0]
            inproc = (res["e2e_ns"]["median"], res["e2e_ns"].get("min"), res["e2e_ns"].get("max"), res["gpu_ns"]["median"])
            info_line = rep["devices"][0]["name"]
    print("device: %s" % (info_line or "(nxvk bench unavailable)"))
    print("%-48s %12s %12s %12s %8s" % ("N=%d f32" % n, "median us", "min us", "max us", "runs"))
    for name, (med, lo, hi, k) in results.items():
        print("%-48s %12.1f %12.1f %12.1f %8d" % (name, med / 1e3, lo / 1e3, hi / 1e3, k))
    if inproc:
        print("%-48s %12.1f %12.1f %12.1f" % ("in-process upload+add+download (bench e2e)", inproc[0] / 1e3,
                                               (inproc[1] or 0) / 1e3, (inproc[2] or 0) / 1e3))
        print("%-48s %12.1f" % ("in-process add kernel only (GPU timestamps)", inproc[3] / 1e3))
    return 0


if __name__ == "__main__":
    if "--latency" in sys.argv[1:]:
        sys.exit(run_latency())
    sys.exit(run_tests())
