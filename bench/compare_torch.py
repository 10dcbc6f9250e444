#!/usr/bin/env python3
"""compare_torch.py - nxvk against PyTorch (cuBLAS and its elementwise kernels)
on the same GPU, in one invocation.

Runs the matmul GFLOPS ladder (torch.matmul, TF32 off, f32 and f64) and the
op sweeps (add, exp, sum over all elements, f32 and f64) through PyTorch,
timed with CUDA events: a warm-up, then repeated runs until --min-time
seconds (or exactly --repeat runs), median with min and max, as nxvk bench
does.  With --nxvk PATH it also runs `nxvk bench ops` and `nxvk bench matmul`
with --json at the same sizes and prints nxvk/PyTorch ratios side by side
(ratio > 1: nxvk is faster).  --out writes everything as one JSON file from
which every ratio can be recomputed.

--ops adds gather and scatter sweeps: take, gather, indexed_add and
indexed_put against torch.index_select, torch.gather, torch.index_add and
torch.index_put (out of place, as Nx's ops are), n indices uniform in
[0, n) on a 1-D tensor of n; e.g. the 16M figures:
  bench/compare_torch.py --nxvk ./nxvk --ops take,gather,indexed_add,indexed_put \
      --sizes 16M --dtype f32 --matmul-sizes 128

nxvk's dot variant coopmat (f32 tensors, inputs rounded to f16, f32 sums on
tensor cores) is compared with torch.matmul on torch.float16 tensors of the
same sizes (cuBLAS f16, with f32 accumulation: reduced-precision reductions
off), the rows PyTorch gives as "matmul" in dtype "f16"; its ratios carry
variant "coopmat".  nxvk's f16 rows (f16 tensors, coopmat where the device
has cooperative matrices) are compared with the same f16 rows, its bf16
rows (bf16 tensors on VK_KHR_cooperative_matrix) with torch.matmul on
torch.bfloat16 tensors (f32 accumulation), and f16/bf16
--shapes with torch.matmul in that dtype, e.g. the coopmat sweep's
  bench/compare_torch.py --nxvk-json coopmat.json --min-time 0.3
or bf16 on tensor cores against PyTorch's bf16 matmul, in one call:
  bench/compare_torch.py --nxvk ./nxvk --matmul-dtype bf16 --matmul-sizes 1024,2048,4096,8192 \
      --ops add --sizes 1M --dtype f32
(--matmul-dtype f16 or bf16 runs nxvk's ladder on the variant coopmat only).

Where torch or CUDA is missing it says "no CUDA: PyTorch figures skipped"
and still runs nxvk, so it can be smoke-tested anywhere with python3.
"""
import argparse
import datetime
import json
import math
import os
import shlex
import statistics
import subprocess
import sys
import tempfile
import time

SWEEP_OPS = ["add", "exp", "sum"]
# ops --ops may add (nxvk bench ops times the same cases): torch.sort (values
# and indices) and torch.cumsum of one row of n, and max_pool2d (window_max)
# and avg_pool2d (window_sum: the sum, PyTorch's divided by 4, the same
# bytes) 2x2 stride 2 on [p, n/p], p the largest power of two <= sqrt(n)
# dividing n, as nxvk's sized cases (src/cli/cases.c); torch.mean of all n
# (floats); tanh sin log erf, torch's of the same name (floats)
MORE_OPS = ["sort", "cumulative_sum", "window_max", "window_sum", "mean", "tanh", "sin", "log", "erf"]
# with --ops: gather and scatter (nxvk's sized case: a 1-D tensor of n, n i32
# indices uniform in [0, n), n updates), against the out-of-place PyTorch ops
# Nx's semantics match: index_select, gather, index_add, index_put
INDEX_OPS = ["take", "gather", "indexed_add", "indexed_put"]
DEFAULT_SIZES = "1K,16K,256K,1M,4M,16M,64M"
DEFAULT_MATMUL = "128,256,512,1024,2048,4096"
# --conv: a ResNet-50 stage, N=32, 64 -> 64 channels, 56x56, 3x3, padding 1;
# nxvk bench ops plans conv at 32 * 64 * 56 * 56 elements as exactly this
CONV_SIZE = 32 * 64 * 56 * 56


def parse_size(text):
    mult = {"K": 1 << 10, "M": 1 << 20, "G": 1 << 30}
    t = text.strip().upper()
    if t and t[-1] in mult:
        return int(t[:-1]) * mult[t[-1]]
    return int(t)


def size_label(n):
    for suffix, m in (("G", 1 << 30), ("M", 1 << 20), ("K", 1 << 10)):
        if n >= m and n % m == 0:
            return "%d%s" % (n // m, suffix)
    return str(n)


def stats(ns):
    return {"median": statistics.median(ns), "min": min(ns), "max": max(ns), "repeats": len(ns)}


# ---------------------------------------------------------------- PyTorch


def load_torch():
    """(torch, None) when CUDA can be used, else (None, why)."""
    try:
        import torch  # noqa: PLC0415 - optional dependency
    except Exception as e:  # ImportError, or a broken install
        return None, "torch is not installed (%s)" % e.__class__.__name__
    if not torch.cuda.is_available():
        return None, "torch %s sees no CUDA device" % torch.__version__
    return torch, None


RUN_NS = 500e3        # a timed run lasts about this long, as in nxvk bench
MAX_CALLS = 64


def time_cuda(torch, fn, min_time, repeat, warmup=0.2):
    """Median/min/max in ns of one fn(), timed with two CUDA events around
    runs of back-to-back calls lasting ~0.5 ms (nxvk bench times its kernels
    the same way: one short kernel per synchronize leaves the GPU idle and
    its clocks low), after warmup seconds of untimed runs (the GPU's clocks
    rise only under load)."""
    fn()
    torch.cuda.synchronize()
    t0 = time.monotonic()
    while time.monotonic() - t0 < warmup:
        fn()
        torch.cuda.synchronize()

    def run(calls):
        a = torch.cuda.Event(enable_timing=True)
        b = torch.cuda.Event(enable_timing=True)
        a.record()
        for _ in range(calls):
            fn()
        b.record()
        b.synchronize()
        return a.elapsed_time(b) * 1e6 / calls  # ms -> ns per call

    single = min(run(1) for _ in range(3))
    calls = max(1, min(MAX_CALLS, math.ceil(RUN_NS / single))) if single > 0 else MAX_CALLS
    times = []
    start = time.monotonic()
    while True:
        times.append(run(calls))
        if repeat and len(times) >= repeat:
            break
        if not repeat and len(times) >= 3 and time.monotonic() - start >= min_time:
            break
        if len(times) >= 1000:
            break
    return stats(times)


def parse_dims(text):
    """'MxKxN' or 'BxMxKxN' -> (B or 0, M, K, N), as nxvk bench --shapes."""
    d = [parse_size(x) for x in text.lower().split("x")]
    if len(d) not in (3, 4):
        raise ValueError("%r is not MxKxN or BxMxKxN" % text)
    return tuple([0] + d if len(d) == 3 else d)


def torch_bench(torch, args, sizes, msizes, dtypes, shapes=(), half_sizes=None):
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    # f16 products summed in f32, as nxvk's coopmat variant does
    torch.backends.cuda.matmul.allow_fp16_reduced_precision_reduction = False
    dev = torch.device("cuda")
    tdt = {"f32": torch.float32, "f64": torch.float64, "f16": torch.float16, "bf16": torch.bfloat16,
           "i32": torch.int32, "i64": torch.int64}
    results = []
    gen = torch.Generator(device=dev)
    gen.manual_seed(1)

    def rand(shape, dt):  # uniform in [0.5, 1.5), integers in [1, 100], as nxvk bench uses
        if dt in ("i32", "i64"):
            return torch.randint(1, 101, shape, generator=gen, device=dev, dtype=tdt[dt])
        return torch.rand(shape, generator=gen, device=dev, dtype=tdt[dt]) + 0.5

    # the result's own rounding: f32 1e-4, f64 1e-12, f16 2^-11, bf16 2^-8
    matmul_tol = {"f32": 1e-4, "f64": 1e-12, "f16": 2e-3, "bf16": 1.6e-2}

    def square_matmul(dt, n):
        """torch.matmul of n x n in dt, checked first (a few rows against an
        f64 product), then timed: one result row."""
        a, b = rand((n, n), dt), rand((n, n), dt)
        c = torch.empty((n, n), device=dev, dtype=tdt[dt])
        rows = min(n, 8)
        want = a[:rows].double() @ b.double()
        got = (a @ b)[:rows].double()
        rel = ((got - want).abs().max() / want.abs().max()).item()
        if rel > matmul_tol[dt]:
            sys.exit("compare_torch: torch.matmul %s n=%d is off by %.3g (relative)" % (dt, n, rel))
        st = time_cuda(torch, lambda: torch.matmul(a, b, out=c), args.min_time, args.repeat, args.warmup)
        flops = 2.0 * n * n * n
        results.append({"mode": "matmul", "name": "matmul", "dtype": dt, "size": n, "gpu_ns": st,
                        "flops": flops, "gflops": flops / st["median"],
                        "gflops_min": flops / st["max"], "gflops_max": flops / st["min"]})
        del a, b, c

    for dt in dtypes:
        for n in (msizes if dt in ("f32", "f64") else []):  # the ladder is f32/f64's
            square_matmul(dt, n)
        for text in (shapes if dt in ("f32", "f64", "f16", "bf16") else []):
            bt, m, k, n = parse_dims(text)
            lead = (bt,) if bt else ()
            a, b = rand(lead + (m, k), dt), rand(lead + (k, n), dt)
            c = torch.empty(lead + (m, n), device=dev, dtype=tdt[dt])
            st = time_cuda(torch, lambda: torch.matmul(a, b, out=c), args.min_time, args.repeat, args.warmup)
            flops = 2.0 * max(bt, 1) * m * n * k
            nbytes = float(a.element_size()) * max(bt, 1) * (m * k + k * n + m * n)  # A, B, C once
            results.append({"mode": "shapes", "name": "matmul", "dtype": dt, "dims": text, "size": m,
                            "gpu_ns": st, "flops": flops, "gflops": flops / st["median"],
                            "bytes": nbytes, "gbps": nbytes / st["median"]})
            del a, b, c
        for op in [o for o in args.ops if o in INDEX_OPS]:
            for n in sizes:
                t, u = rand((n,), dt), rand((n,), dt)
                idx = torch.randint(0, n, (n,), generator=gen, device=dev, dtype=torch.int64)
                out = torch.empty((n,), device=dev, dtype=tdt[dt])
                esz = t.element_size()
                # bytes as nxvk bench counts them (its indices are i32): every operand and the result
                # once, so the GB/s ratio is the time ratio (torch.gather wants int64 indices)
                if op == "take":
                    fn = lambda: torch.index_select(t, 0, idx, out=out)  # noqa: E731
                    nbytes = 2 * n * esz + 4 * n
                elif op == "gather":
                    fn = lambda: torch.gather(t, 0, idx, out=out)  # noqa: E731
                    nbytes = 2 * n * esz + 4 * n
                elif op == "indexed_add":
                    fn = lambda: torch.index_add(t, 0, idx, u)  # noqa: E731
                    nbytes = 3 * n * esz + 4 * n
                else:
                    fn = lambda: torch.index_put(t, (idx,), u)  # noqa: E731
                    nbytes = 3 * n * esz + 4 * n
                st = time_cuda(torch, fn, args.min_time, args.repeat, args.warmup)
                results.append({"mode": "ops", "name": op, "dtype": dt, "size": n, "gpu_ns": st,
                                "bytes": nbytes, "gbps": nbytes / st["median"]})
                del t, u, idx, out
        for op in [o for o in args.ops if o not in INDEX_OPS]:
            if op in ("exp", "tanh", "sin", "log", "erf", "window_max", "window_sum", "mean") and dt in ("i32", "i64"):
                continue  # exp takes floats (nxvk's and PyTorch's integer exp would differ in dtype)
            for n in sizes:
                x, y = rand((n,), dt), rand((n,), dt)
                out = torch.empty((n,), device=dev, dtype=tdt[dt])
                esz = x.element_size()
                if op == "add":
                    fn = lambda: torch.add(x, y, out=out)  # noqa: E731
                    nbytes = 3 * n * esz
                elif op == "exp":
                    fn = lambda: torch.exp(x, out=out)  # noqa: E731
                    nbytes = 2 * n * esz
                elif op in ("tanh", "sin", "log", "erf"):  # the 16-bit table's unary ops (NXVK_EW16_TABLE)
                    fn = {"tanh": lambda: torch.tanh(x, out=out), "sin": lambda: torch.sin(x, out=out),  # noqa: E731
                          "log": lambda: torch.log(x, out=out), "erf": lambda: torch.erf(x, out=out)}[op]
                    nbytes = 2 * n * esz
                elif op == "sort":
                    fn = lambda: torch.sort(x)  # noqa: E731
                    nbytes = 2 * n * esz
                elif op == "cumulative_sum":
                    fn = lambda: torch.cumsum(x, 0, out=out)  # noqa: E731
                    nbytes = 2 * n * esz
                elif op in ("window_max", "window_sum"):
                    p = 1
                    while (2 * p) * (2 * p) <= n:
                        p *= 2
                    while p > 1 and n % p:
                        p //= 2
                    x4 = x.view(1, 1, p, n // p)
                    pool = torch.nn.functional.max_pool2d if op == "window_max" else torch.nn.functional.avg_pool2d
                    fn = lambda: pool(x4, 2, 2)  # noqa: E731
                    nbytes = (n + (p // 2) * (n // p // 2)) * esz
                elif op == "mean":
                    fn = lambda: torch.mean(x)  # noqa: E731
                    nbytes = (n + 1) * esz
                else:
                    # the sum in the input's dtype, as nxvk's (PyTorch widens integer sums to int64)
                    fn = lambda: torch.sum(x, dtype=x.dtype)  # noqa: E731
                    nbytes = (n + 1) * esz
                st = time_cuda(torch, fn, args.min_time, args.repeat, args.warmup)
                results.append({"mode": "ops", "name": op, "dtype": dt, "size": n, "gpu_ns": st,
                                "bytes": nbytes, "gbps": nbytes / st["median"]})
                del x, y, out
        torch.cuda.empty_cache()
    # the counterpart of nxvk's coopmat variant: f16 (or bf16) inputs, f32 accumulation
    torch.backends.cuda.matmul.allow_bf16_reduced_precision_reduction = False
    for hdt, hsizes in sorted((half_sizes or {}).items()):
        for n in hsizes:
            square_matmul(hdt, n)
    if getattr(args, "conv", False):
        # torch.nn.functional.conv2d through cuDNN, TF32 off (set above)
        for dt in [d for d in dtypes if d in ("f32", "f64", "f16", "bf16")]:
            x = rand((32, 64, 56, 56), dt)
            w = rand((64, 64, 3, 3), dt)
            fn = lambda: torch.nn.functional.conv2d(x, w, padding=1)  # noqa: E731
            st = time_cuda(torch, fn, args.min_time, args.repeat, args.warmup)
            flops = 2.0 * 32 * 64 * 56 * 56 * 64 * 9
            results.append({"mode": "ops", "name": "conv", "dtype": dt, "size": CONV_SIZE, "gpu_ns": st,
                            "gflops": flops / st["median"], "shape": [32, 64, 56, 56]})
            del x, w
    torch.cuda.empty_cache()
    return {"version": torch.__version__, "cuda": torch.version.cuda,
            "device": torch.cuda.get_device_name(0), "allow_tf32": False,
            "allow_fp16_reduced_precision_reduction": False, "results": results}


def torch_dtype_for(r):
    """The PyTorch dtype an nxvk row is compared with: f16 for coopmat."""
    return "f16" if r.get("variant") == "coopmat" and r["dtype"] == "f32" else r["dtype"]


def torch_transfers(torch, args, nbytes, n_add):
    """Host <-> device copies of nbytes (pinned and pageable host memory) and a
    64M-element f32 add end to end from pageable memory (numpy in, numpy out),
    wall clock with the device synchronised, medians of --min-time seconds."""
    import numpy as np
    dev = torch.device("cuda")

    def wall(fn):
        fn()
        torch.cuda.synchronize()
        ts, t_end = [], time.perf_counter() + max(args.min_time, 0.05)
        while len(ts) < 3 or time.perf_counter() < t_end:
            t0 = time.perf_counter()
            fn()
            torch.cuda.synchronize()
            ts.append((time.perf_counter() - t0) * 1e9)
            if args.repeat and len(ts) >= args.repeat:
                break
        return stats(ts)

    out = []
    n = nbytes // 4
    d = torch.empty(n, dtype=torch.float32, device=dev)
    for kind in ("pinned", "pageable"):
        h = torch.empty(n, dtype=torch.float32, pin_memory=(kind == "pinned"))
        h.fill_(1.5)
        st = wall(lambda: d.copy_(h, non_blocking=True))
        out.append({"name": "h2d", "host": kind, "bytes": nbytes, "wall_ns": st, "gbps": nbytes / st["median"]})
        st = wall(lambda: h.copy_(d, non_blocking=True))
        out.append({"name": "d2h", "host": kind, "bytes": nbytes, "wall_ns": st, "gbps": nbytes / st["median"]})
        del h
    del d
    rng = np.random.default_rng(1)
    a = rng.random(n_add, dtype=np.float32) + 0.5
    b = rng.random(n_add, dtype=np.float32) + 0.5
    st = wall(lambda: (torch.from_numpy(a).to(dev) + torch.from_numpy(b).to(dev)).cpu().numpy())
    out.append({"name": "add_e2e", "host": "pageable", "size": n_add, "wall_ns": st})
    torch.cuda.empty_cache()
    return out


def print_transfers(nx, pt):
    """nxvk's h2d/d2h (bench peak) and 64M add end to end (bench ops e2e)
    beside PyTorch's pinned and pageable figures."""
    def nx_row(name, variants=("upload", "download")):
        return next((r for r in nx if r["mode"] == "peak" and r["name"] == name and
                     r.get("variant") in variants), None)
    print("\ntransfers (wall clock)      nxvk          nxvk pinned   PyTorch pinned   PyTorch pageable   "
          "nxvk / pageable   pinned / pinned")
    rows = []
    for name in ("h2d", "d2h"):
        r = nx_row(name)
        rp = nx_row(name, ("pinned-upload", "pinned-download"))
        pin = next((p for p in pt if p["name"] == name and p["host"] == "pinned"), None)
        pag = next((p for p in pt if p["name"] == name and p["host"] == "pageable"), None)
        g = r["gbps"] if r else None
        gp = rp["gbps"] if rp else None
        ratio = g / pag["gbps"] if g and pag else None
        ratio_p = gp / pin["gbps"] if gp and pin else None
        print("%-26s  %-12s  %-12s  %-15s  %-17s  %-16s  %s" % (
            "%s %s" % (name, size_label(r["size"]) if r else ""), fmt(g, "%.2f GB/s"), fmt(gp, "%.2f GB/s"),
            fmt(pin and pin["gbps"], "%.2f GB/s"), fmt(pag and pag["gbps"], "%.2f GB/s"), fmt(ratio), fmt(ratio_p)))
        rows.append({"name": name, "nxvk_gbps": g, "nxvk_pinned_gbps": gp, "torch_pinned_gbps": pin and pin["gbps"],
                     "torch_pageable_gbps": pag and pag["gbps"], "ratio_pageable": ratio, "ratio_pinned": ratio_p})
    e = next((r for r in nx if r["mode"] == "ops" and r["name"] == "add" and r["dtype"] == "f32" and
              r["size"] == 64 << 20 and r.get("e2e_ns")), None)
    pe = next((p for p in pt if p["name"] == "add_e2e"), None)
    nx_ms = e["e2e_ns"]["median"] / 1e6 if e else None
    pt_ms = pe["wall_ns"]["median"] / 1e6 if pe else None
    ratio = pt_ms / nx_ms if nx_ms and pt_ms else None
    print("%-26s  %-12s  %-12s  %-15s  %-17s  %s" % ("add 64M f32 end to end", fmt(nx_ms, "%.1f ms"), "-", "-",
                                                     fmt(pt_ms, "%.1f ms"), fmt(ratio)))
    rows.append({"name": "add_e2e", "nxvk_ms": nx_ms, "torch_pageable_ms": pt_ms, "ratio_pageable": ratio})
    return rows


# ------------------------------------------------------------------- nxvk


def run_nxvk(args, mode, extra):
    fd, path = tempfile.mkstemp(suffix=".json")
    os.close(fd)
    cmd = [args.nxvk, "bench", mode] + extra + ["--json", path] + shlex.split(args.nxvk_args)
    print("$ " + " ".join(shlex.quote(c) for c in cmd), flush=True)
    try:
        rc = subprocess.run(cmd).returncode
        if rc != 0:
            sys.exit("compare_torch: nxvk bench %s failed (exit %d)" % (mode, rc))
        with open(path) as f:
            return json.load(f)
    finally:
        os.unlink(path)


# ------------------------------------------------------------------ report


def ratios(nx, pt):
    """nxvk/PyTorch throughput per (mode, dtype, size[, op]); > 1: nxvk faster."""
    out = []
    ptm = {(r["mode"], r["name"] if r["mode"] == "ops" else "", r["dtype"], r["size"]): r for r in pt}
    pts = {(r["dtype"], r["dims"]): r for r in pt if r["mode"] == "shapes"}
    for r in nx:
        if r["mode"] == "shapes":
            p = pts.get((r["dtype"], r.get("dims")))
            if p and r.get("gflops"):
                out.append({"mode": "shapes", "name": r["name"], "variant": r["variant"], "dtype": r["dtype"],
                            "size": r["size"], "dims": r["dims"], "unit": "GFLOPS", "nxvk": r["gflops"],
                            "torch": p["gflops"], "ratio": r["gflops"] / p["gflops"]})
        elif r["mode"] == "matmul":
            p = ptm.get(("matmul", "", torch_dtype_for(r), r["size"]))
            if p and r.get("gflops"):
                out.append({"mode": "matmul", "name": r["name"], "variant": r["variant"], "dtype": r["dtype"],
                            "size": r["size"], "unit": "GFLOPS", "nxvk": r["gflops"], "torch": p["gflops"],
                            "ratio": r["gflops"] / p["gflops"]})
        elif r["mode"] == "ops" and r["name"] == "conv":
            p = ptm.get(("ops", "conv", r["dtype"], r["size"]))
            if p and r.get("gflops"):
                out.append({"mode": "ops", "name": "conv", "variant": "", "dtype": r["dtype"],
                            "size": r["size"], "unit": "GFLOPS", "nxvk": r["gflops"], "torch": p["gflops"],
                            "ratio": r["gflops"] / p["gflops"]})
        elif r["mode"] == "ops":
            p = ptm.get(("ops", r["name"], r["dtype"], r["size"]))
            if p and r.get("gbps"):
                out.append({"mode": "ops", "name": r["name"], "variant": "", "dtype": r["dtype"],
                            "size": r["size"], "unit": "GB/s", "nxvk": r["gbps"], "torch": p["gbps"],
                            "ratio": r["gbps"] / p["gbps"]})
    return out


def fmt(v, spec="%.2f"):
    return "-" if v is None else spec % v


def print_side_by_side(nx, pt, rat):
    rmap = {(x["mode"], x["name"], x["variant"], x["dtype"], x["size"]): x for x in rat}
    ptm = {(r["mode"], r["name"] if r["mode"] == "ops" else "", r["dtype"], r["size"]): r for r in pt}
    print("\nmatmul: GFLOPS (kernel time); ratio = nxvk / PyTorch (> 1: nxvk faster); f32 coopmat rows\n"
          "against PyTorch's f16 matmul, f16 and bf16 rows against its matmul in that dtype (f32 accumulation)")
    print("%-10s %-5s %6s %12s %12s %8s" % ("nxvk", "dtype", "n", "nxvk", "PyTorch", "ratio"))
    for r in nx:
        if r["mode"] != "matmul":
            continue
        p = ptm.get(("matmul", "", torch_dtype_for(r), r["size"]))
        x = rmap.get(("matmul", r["name"], r["variant"], r["dtype"], r["size"]))
        print("%-10s %-5s %6d %12s %12s %8s" % (r["variant"], r["dtype"], r["size"], fmt(r.get("gflops")),
                                               fmt(p and p["gflops"]), fmt(x and x["ratio"], "%.3f")))
    shaped = [r for r in nx if r["mode"] == "shapes"]
    if shaped:
        smap = {(x["dtype"], x["dims"]): x for x in rat if x["mode"] == "shapes"}
        pts = {(r["dtype"], r["dims"]): r for r in pt if r["mode"] == "shapes"}
        print("\nmatmul shapes: GFLOPS of the default variant; ratio = nxvk / PyTorch; GB/s = bytes of A, B\n"
              "and C / kernel time (skinny products: a pass over memory)")
        print("%-5s %18s %12s %12s %8s %10s %10s" % ("dtype", "shape", "nxvk", "PyTorch", "ratio", "nxvk GB/s",
                                                    "torch GB/s"))
        for r in shaped:
            p, x = pts.get((r["dtype"], r["dims"])), smap.get((r["dtype"], r["dims"]))
            print("%-5s %18s %12s %12s %8s %10s %10s" % (r["dtype"], r["dims"], fmt(r.get("gflops")),
                                                        fmt(p and p["gflops"]), fmt(x and x["ratio"], "%.3f"),
                                                        fmt(r.get("gbps"), "%.0f"), fmt(p and p.get("gbps"), "%.0f")))
    print("\nops: GB/s (bytes read + written / kernel time); ratio = nxvk / PyTorch")
    print("%-6s %-5s %8s %12s %12s %8s" % ("op", "dtype", "size", "nxvk", "PyTorch", "ratio"))
    for r in nx:
        if r["mode"] != "ops":
            continue
        p = ptm.get(("ops", r["name"], r["dtype"], r["size"]))
        key = "gflops" if r["name"] == "conv" else "gbps"  # conv: GFLOPS, the others GB/s
        # each row's own ratio: several runs of one case (tuning candidates) share rmap's key
        ratio = r[key] / p[key] if p and p.get(key) and r.get(key) else None
        print("%-6s %-5s %8s %12s %12s %8s" % (r["name"], r["dtype"], size_label(r["size"]), fmt(r.get(key)),
                                              fmt(p and p.get(key)), fmt(ratio, "%.3f")))
    if not nx:
        for p in pt:
            v = p.get("gflops", p.get("gbps"))
            print("PyTorch %s %s %s %s: %.2f %s" % (p["mode"], p["name"], p["dtype"], size_label(p["size"]), v,
                                                   "GFLOPS" if "gflops" in p else "GB/s"))


def write_atomic(path, obj):
    d = os.path.dirname(os.path.abspath(path))
    fd, tmp = tempfile.mkstemp(dir=d, prefix=".compare_torch.")
    try:
        with os.fdopen(fd, "w") as f:
            json.dump(obj, f, indent=1)
            f.write("\n")
        os.replace(tmp, path)
    except BaseException:
        os.unlink(tmp)
        raise


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--nxvk", metavar="PATH", help="also run this nxvk binary's bench with --json")
    ap.add_argument("--nxvk-args", default="", metavar="ARGS",
                    help="more arguments for nxvk bench, e.g. '--device 0 --min-time 1'")
    ap.add_argument("--nxvk-json", metavar="FILE", action="append", default=[],
                    help="use the results of an earlier `nxvk bench ... --json FILE` (e.g. of `bench all`) "
                         "instead of running nxvk; sizes and dtypes default to its own")
    ap.add_argument("--sizes", help="op sweep sizes in elements (K M G = x1024; default %s)" % DEFAULT_SIZES)
    ap.add_argument("--matmul-sizes", help="ladder sizes n of n x n matrices (default %s)" % DEFAULT_MATMUL)
    ap.add_argument("--shapes", help="matmul shapes MxKxN or BxMxKxN, comma-separated (default: none, or "
                    "those of --nxvk-json)")
    ap.add_argument("--dtype", help="comma list of f32 f64 f16 bf16 i32 i64 (default f32,f64)")
    ap.add_argument("--matmul-dtype", metavar="D,...",
                    help="with --nxvk: the matmul ladder's dtypes, f32 f64 f16 bf16 (default: the f32 and f64 of "
                         "--dtype); f16 and bf16 run nxvk's variant coopmat only, against torch.matmul in that dtype")
    ap.add_argument("--warmup", type=float, default=0.2, help="seconds of untimed runs before each measurement")
    ap.add_argument("--min-time", type=float, default=0.5, help="seconds per PyTorch measurement")
    ap.add_argument("--repeat", type=int, default=0, help="exactly N timed PyTorch runs")
    ap.add_argument("--ops", default=",".join(SWEEP_OPS),
                    help="op sweep: comma list of %s (default %s)" % (" ".join(SWEEP_OPS + MORE_OPS + INDEX_OPS),
                                                                     ",".join(SWEEP_OPS)))
    ap.add_argument("--conv", action="store_true",
                    help="also conv2d of a ResNet-50 stage (N=32, 64->64, 56x56, 3x3, padding 1): "
                         "torch.nn.functional.conv2d (cuDNN, TF32 off) and nxvk bench ops --ops conv")
    ap.add_argument("--transfers", action="store_true",
                    help="also host <-> device copies of 256 MiB (PyTorch pinned and pageable) and a 64M-element "
                         "f32 add end to end from numpy, against nxvk bench peak's h2d/d2h and bench ops' add 64M "
                         "e2e (from --nxvk-json, or run with --nxvk)")
    ap.add_argument("--out", metavar="FILE", help="write nxvk, PyTorch and the ratios as one JSON file")
    args = ap.parse_args()
    args.ops = [o.strip() for o in args.ops.split(",") if o.strip()]
    if not args.ops or any(o not in SWEEP_OPS + MORE_OPS + INDEX_OPS for o in args.ops):
        ap.error("--ops takes a comma list of %s" % " ".join(SWEEP_OPS + MORE_OPS + INDEX_OPS))
    if args.nxvk and args.nxvk_json:
        ap.error("give --nxvk or --nxvk-json, not both")
    nx_runs, nx_results, nx_xfer = [], [], []
    for path in args.nxvk_json:
        with open(path) as f:
            run = json.load(f)
        nx_runs.append(run)
        nx_results += [r for r in run["results"] if r["mode"] in ("ops", "matmul", "shapes")]
        nx_xfer += [r for r in run["results"] if r["mode"] == "peak"]
    # PyTorch runs at the sizes and dtypes of the nxvk results it is compared with
    def from_results(mode, ops_only=False):
        v = sorted(set(r["size"] for r in nx_results if r["mode"] == mode and
                       (not ops_only or r["name"] in args.ops)))
        return ",".join(str(x) for x in v) if v else None
    if args.sizes is None:
        args.sizes = from_results("ops", True) or DEFAULT_SIZES
    if args.matmul_sizes is None:
        args.matmul_sizes = from_results("matmul") or DEFAULT_MATMUL
    if args.shapes is None:
        args.shapes = ",".join(sorted(set(r["dims"] for r in nx_results if r["mode"] == "shapes")))
    if args.dtype is None:
        # every dtype the nxvk runs hold (f16 bf16 i64 too: issue 28's bandwidth rows)
        d = sorted(set(r["dtype"] for r in nx_results if r["dtype"] in ("f32", "f64", "f16", "bf16", "i32", "i64")))
        args.dtype = ",".join(d) if d else "f32,f64"
    try:
        sizes = [parse_size(s) for s in args.sizes.split(",")]
        msizes = [parse_size(s) for s in args.matmul_sizes.split(",") if s]  # "": no ladder
        shapes = [x for x in args.shapes.split(",") if x]
        for x in shapes:
            parse_dims(x)
    except ValueError as e:
        ap.error("bad size: %s" % e)
    dtypes = [d.strip() for d in args.dtype.split(",")]
    if not dtypes or any(d not in ("f32", "f64", "f16", "bf16", "i32", "i64") for d in dtypes):
        ap.error("--dtype takes a comma list of f32 f64 f16 bf16 i32 i64")
    mm_dtypes = [d for d in dtypes if d in ("f32", "f64")]
    half_mm = []
    if args.matmul_dtype is not None:
        md = [d.strip() for d in args.matmul_dtype.split(",") if d.strip()]
        if not md or any(d not in ("f32", "f64", "f16", "bf16") for d in md):
            ap.error("--matmul-dtype takes a comma list of f32 f64 f16 bf16")
        mm_dtypes = [d for d in md if d in ("f32", "f64")]
        half_mm = [d for d in md if d in ("f16", "bf16")]

    if args.nxvk:
        ops = run_nxvk(args, "ops", ["--ops", ",".join(args.ops), "--sizes", args.sizes, "--dtype", args.dtype])
        nx_runs = [ops]
        nx_results = list(ops["results"])
        if args.conv:
            cv = run_nxvk(args, "ops", ["--ops", "conv", "--sizes", str(CONV_SIZE), "--dtype",
                                        ",".join(d for d in dtypes if d in ("f32", "f64", "f16", "bf16"))])
            nx_runs.append(cv)
            nx_results += list(cv["results"])
        if mm_dtypes and (msizes or shapes):
            mm = run_nxvk(args, "matmul", ["--sizes", args.matmul_sizes, "--dtype", ",".join(mm_dtypes)] +
                          (["--shapes", ",".join(shapes)] if shapes else []))
            nx_runs.append(mm)
            nx_results += [r for r in mm["results"] if r["mode"] in ("matmul", "shapes")]
        if half_mm and msizes:
            # f16 / bf16 tensors on tensor cores (the variant coopmat; its inputs stay 16-bit, no conversion timed)
            hm = run_nxvk(args, "matmul", ["--sizes", args.matmul_sizes, "--dtype", ",".join(half_mm),
                                           "--variant", "coopmat"])
            nx_runs.append(hm)
            nx_results += [r for r in hm["results"] if r["mode"] == "matmul"]
        if args.transfers:
            pk = run_nxvk(args, "peak", ["--bytes", "256M"])
            ad = run_nxvk(args, "ops", ["--ops", "add", "--sizes", "64M", "--dtype", "f32"])
            nx_runs += [pk, ad]
            nx_xfer += [r for r in pk["results"] if r["mode"] == "peak"] + list(ad["results"])

    torch, why = load_torch()
    if torch is None:
        print("\nno CUDA: PyTorch figures skipped (%s)" % why)
        pt = {"skipped": "no CUDA: " + why}
        pt_results = []
    else:
        print("\nPyTorch %s, CUDA %s, %s (TF32 off)" % (torch.__version__, torch.version.cuda,
                                                       torch.cuda.get_device_name(0)), flush=True)
        half_sizes = {
            "f16": sorted(set(r["size"] for r in nx_results
                              if r["mode"] == "matmul" and ((r.get("variant") == "coopmat" and r["dtype"] == "f32")
                                                            or r["dtype"] == "f16"))),
            "bf16": sorted(set(r["size"] for r in nx_results if r["mode"] == "matmul" and r["dtype"] == "bf16")),
        }
        pt = torch_bench(torch, args, sizes, msizes, dtypes, shapes, half_sizes)
        pt_results = pt["results"]

    rat = ratios(nx_results, pt_results)
    print_side_by_side(nx_results, pt_results, rat)
    xfer = None
    if args.transfers:
        pt_x = torch_transfers(torch, args, 256 << 20, 64 << 20) if torch is not None else []
        xfer = {"torch": pt_x, "rows": print_transfers(nx_xfer + nx_results, pt_x)}
    if args.out:
        write_atomic(args.out, {
            "tool": "bench/compare_torch.py",
            "date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
            "command": " ".join(shlex.quote(a) for a in sys.argv),
            "nxvk": {"runs": nx_runs, "results": nx_results} if nx_runs else None,
            "torch": pt,
            "ratios": rat,
            "transfers": xfer,
        })
    return 0


if __name__ == "__main__":
    sys.exit(main())
