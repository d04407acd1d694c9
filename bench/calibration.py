#!/usr/bin/env python3
"""calibration.py - the cpu backend's modeled H200 eager time against the GPU.

Reads the anchor's rows (tests/gpu/anchor.py --json, which tests/gpu/check.sh
writes to $OUT/anchor.json on an H200: per variant passfs eager's measured
median on the GPU, PyTorch eager's and torch.compile's), runs
`passfs eager --model --json` (the cpu backend's model, counted here, as a
cpu-backend evaluation counts it) on the same tasks, and prints per variant:

  modeled_ms   eager's modeled H200 time (what cpu-backend passes are scored against)
  gpu_ms       passfs eager measured on the H200 (end-to-end median of 100)
  torch_ms     PyTorch eager on the H200, same protocol
  ind_ms       torch.compile (inductor), same protocol
  mod/gpu      modeled / measured passfs eager: the model's error on its own plan
  mod/torch    modeled / PyTorch eager: how far the scored baseline is from the
               one the paper's speedups are relative to

then per ratio the geometric mean, the median and how many variants fall
within 1.5x.  Nothing is fitted: the model's constants (gpu/traffic.h) stay
what they are, and the table says how far they are from the GPU.

    bench/calibration.py ANCHOR_JSON [--passfs build/passfs] [--markdown]

Exit status 0 when the table was printed, 2 on bad input.
"""
import argparse
import json
import math
import os
import statistics
import subprocess
import sys
import tempfile

REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), ".."))


def summary(name, xs):
    if not xs:
        return "%s: -" % name
    gm = math.exp(sum(math.log(x) for x in xs) / len(xs))
    within = sum(1 for x in xs if 1 / 1.5 <= x <= 1.5)
    return "%s: geomean %.2f, median %.2f, %d of %d within 1.5x (range %.2f-%.2f)" % (
        name, gm, statistics.median(xs), within, len(xs), min(xs), max(xs))


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("anchor", help="the anchor's rows (tests/gpu/anchor.py --json)")
    ap.add_argument("--passfs", default=os.path.join(REPO, "build", "passfs"))
    ap.add_argument("--markdown", action="store_true", help="a Markdown table (docs/benchmarks.md)")
    args = ap.parse_args()
    try:
        with open(args.anchor, encoding="utf-8") as f:
            doc = json.load(f)
        rows = doc["rows"]
    except (OSError, ValueError, KeyError, TypeError) as e:
        print("calibration: %s: not the anchor's rows: %s" % (args.anchor, e), file=sys.stderr)
        return 2
    if not os.access(args.passfs, os.X_OK):
        print("calibration: no passfs binary at %s" % args.passfs, file=sys.stderr)
        return 2
    tasks = []
    for r in rows:
        key = (r.get("tasks_dir") or "tasks", r["task"])
        if key not in tasks:
            tasks.append(key)
    model = {}
    with tempfile.TemporaryDirectory(prefix="passfs_calib_") as cache:
        env = dict(os.environ, PASSFS_CACHE_DIR=os.environ.get("PASSFS_CACHE_DIR", cache))
        for tdir, tid in tasks:
            p = subprocess.run([args.passfs, "eager", "--model", "--json", "--tasks", os.path.join(REPO, tdir),
                                "--task", tid], capture_output=True, text=True, env=env)
            if p.returncode != 0:
                print("calibration: %s: passfs eager --model: %s" % (
                    tid, (p.stderr.strip().splitlines() or ["exit %d" % p.returncode])[-1]), file=sys.stderr)
                continue
            for v in json.loads(p.stdout)["variants"]:
                model[(tid, v["name"])] = v
    cols = ("task/variant", "modeled_ms", "gpu_ms", "torch_ms", "ind_ms", "mod/gpu", "mod/torch")
    if args.markdown:
        print("| " + " | ".join(cols) + " |")
        print("|" + "---|" * len(cols))
    else:
        print("%-46s %10s %10s %10s %10s %8s %9s" % cols)
    r_gpu, r_torch = [], []

    def f(x, spec="%.4f"):
        return "-" if x is None else spec % x
    for r in rows:
        m = model.get((r["task"], r["variant"]), {}).get("modeled_h200_ms")
        g, t, i = r.get("passfs_ms"), r.get("torch_ms"), r.get("inductor_ms")
        a = m / g if m and g else None
        b = m / t if m and t else None
        if a:
            r_gpu.append(a)
        if b:
            r_torch.append(b)
        cells = ("%s/%s" % (r["task"], r["variant"]), f(m), f(g), f(t), f(i), f(a, "%.2f"), f(b, "%.2f"))
        if args.markdown:
            print("| " + " | ".join(cells) + " |")
        else:
            print("%-46s %10s %10s %10s %10s %8s %9s" % ((cells[0][:46],) + cells[1:]))
    print()
    print("measured on %s (torch %s); modeled by the cpu backend on this machine" % (
        doc.get("device", "?"), doc.get("torch", "?")))
    print(summary("modeled / measured passfs eager", r_gpu))
    print(summary("modeled / PyTorch eager", r_torch))
    return 0


if __name__ == "__main__":
    sys.exit(main())
