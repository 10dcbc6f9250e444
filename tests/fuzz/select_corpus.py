#!/usr/bin/python3
"""select_corpus.py - at most CAP inputs that keep the most coverage.

    select_corpus.py FUZZ_BINARY CAP INDIR OUTDIR [LIBFUZZER-FLAGS...]

A merge's control file lists per input only what it added to the inputs
before it, so each input's full coverage is measured alone here (one
`-merge=1 -merge_control_file=` run per input, two at a time).  Then a
greedy set cover: the input covering the most edges not yet covered, and so
on until every edge is; then the same over features (edge hit counts);
ties go to the smaller input.  The chosen inputs are copied to OUTDIR.
"""
import os
import shutil
import subprocess
import sys
import tempfile
from concurrent.futures import ThreadPoolExecutor


def measure(binary, path, flags):
    """(edges, features) of one input, from a merge of it alone."""
    with tempfile.TemporaryDirectory() as tmp:
        ctl, empty, one = (os.path.join(tmp, n) for n in ("ctl", "out", "in"))
        os.mkdir(empty)
        os.mkdir(one)  # merge reads folders, not files
        shutil.copy(path, one)
        # run in the scratch folder: nothing it writes lands anywhere else
        subprocess.run([binary, "-merge=1", f"-merge_control_file={ctl}", *flags, empty, one],
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, cwd=tmp)
        cov, ft = set(), set()
        if os.path.exists(ctl):
            for line in open(ctl):
                parts = line.split()
                if parts and parts[0] == "COV":
                    cov.update(map(int, parts[2:]))
                elif parts and parts[0] == "FT":
                    ft.update(map(int, parts[2:]))
        return cov, ft


def main():
    binary, cap, indir, out = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4]
    flags = sys.argv[5:]
    names = sorted(os.listdir(indir))
    paths = [os.path.join(indir, n) for n in names]
    with ThreadPoolExecutor(max_workers=2) as pool:
        sets = list(pool.map(lambda p: measure(binary, p, flags), paths))
    size = [os.path.getsize(p) for p in paths]
    chosen = []
    for k in (0, 1):  # edges, then features
        left = set().union(*(s[k] for s in sets))
        for i in chosen:
            left -= sets[i][k]
        while left and len(chosen) < cap:
            best = max((i for i in range(len(paths)) if i not in chosen),
                       key=lambda i: (len(sets[i][k] & left), -size[i], names[i]), default=None)
            if best is None or not sets[best][k] & left:
                break
            chosen.append(best)
            left -= sets[best][k]
        if k == 0:
            print(f"select_corpus: {len(chosen)} inputs cover every edge"
                  if not left else f"select_corpus: {len(left)} edges left out at the cap")
    os.makedirs(out, exist_ok=True)
    for i in chosen:
        shutil.copy(paths[i], out)
    print(f"select_corpus: {len(chosen)} of {len(paths)} inputs")


if __name__ == "__main__":
    main()
