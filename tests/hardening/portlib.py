"""portlib.py - a scripted `nxvk port` session for the hardening tests.

Frames as nxvk-port(7) says: a 4-byte big-endian length, then the payload
(4-byte big-endian header length, the JSON header, the tensor bytes).  A
session writes every request at once, closes standard input and reads the
replies until the server exits, so no test can hang on a reply that never
comes (a timeout ends it).
"""
import json
import struct
import subprocess


def payload(header, data=b"", hlen=None):
    h = header if isinstance(header, bytes) else json.dumps(header, separators=(",", ":")).encode()
    return struct.pack(">I", len(h) if hlen is None else hlen) + h + data


def frame(header, data=b"", hlen=None):
    p = payload(header, data, hlen)
    return struct.pack(">I", len(p)) + p


def raw_frame(p):
    return struct.pack(">I", len(p)) + p


def parse_replies(out):
    """[(header dict, tensor bytes)] from the server's standard output."""
    replies, i = [], 0
    while i + 4 <= len(out):
        n = struct.unpack(">I", out[i:i + 4])[0]
        p = out[i + 4:i + 4 + n]
        if len(p) < n or n < 4:
            raise ValueError(f"truncated reply frame at byte {i}")
        h = struct.unpack(">I", p[:4])[0]
        replies.append((json.loads(p[4:4 + h].decode()), p[4 + h:]))
        i += 4 + n
    if i != len(out):
        raise ValueError(f"{len(out) - i} stray bytes after the last reply")
    return replies


def session(cmd, stdin_bytes, timeout=120, env=None):
    """Run the server on stdin_bytes; (exit status, replies, stderr text)."""
    r = subprocess.run(cmd, input=stdin_bytes, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                       timeout=timeout, env=env)
    return r.returncode, parse_replies(r.stdout), r.stderr.decode(errors="replace")
