#!/usr/bin/env python3
"""kernelbench.py - eager's modeled H200 time against KernelBench's published GPU times.

For each KernelBench level1 problem that the passfs ops express
(bench/kernelbench/problems.json; the tasks are bench/kernelbench/tasks/<id>,
written by bench/kernelbench/generate.py), runs `passfs eager --model --json`
on its task (two variants at two scaled-down shapes), extrapolates the modeled
time to the problem's full shape, and sets it beside the published PyTorch
eager time (bench/kernelbench/timings.json: KernelBench's H100_modal results,
whose entries ran on an H100 80GB HBM3 or on an H200).  Prints per problem:

  class      bw: bandwidth-bound (the eager kernels' least DRAM traffic at
             3.35 TB/s is at least half the measured H100 time and more than
             the FLOPs at peak); flop: the FLOPs at the peak of the unit
             PyTorch uses explain it; other: neither does (parallelism,
             latency or instruction bound)
  modeled    eager's modeled time at the full shape, ms: the line through the
             two variants' modeled times against 1/scale, at 1/scale = 1
             (README.md, "Scaling"); with one variant, launches + (modeled -
             launches) * scale
  lin        the two variants' own estimates launches + (modeled - launches)
             * scale, smaller variant / larger: 1.00 when the model is linear
             in the work with only the launches fixed
  measured   PyTorch eager, ms, on an H200: an H200 entry as published; an
             H100 entry of class bw times 3.35 / 4.8 (HBM3 -> HBM3e); other
             H100 entries as published (the two GPUs have the same SMs,
             clocks and dense FP32/TF32/FP16 rates, so compute- or
             latency-bound work is converted by 1.0)
  published  the entry's own mean and GPU (H100 / H200)
  ratio      modeled / measured
  inductor   torch.compile (inductor, default) as published, and its GPU
  term       the largest of the modeled time's terms on the larger variant:
             mem (bytes at 4.3 TB/s), par (threads spread over the GPU),
             path (the slowest threads), lib (a GEMM/conv priced as
             cuBLAS/cuDNN), host

then the Spearman rank correlation of modeled against measured, the geometric
mean of the ratios, how many fall within 1.5x, and the problems outside 1.5x.
Nothing is fitted.

    bench/kernelbench.py [--passfs build/passfs] [--only ID,...] [--markdown]

--only takes task ids (kb_19_relu), problem files (19_ReLU.py) or problem
numbers (19).  Run from the repository root; stdlib only.  Exit 0 when the
table printed (a measurement, not a test), 2 on bad input.
"""
import argparse
import json
import math
import os
import subprocess
import sys
import tempfile
import time

REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), ".."))
KB = os.path.join(REPO, "bench", "kernelbench")
H100_BW, H200_BW = 3.35e9, 4.8e9          # bytes per ms (H100 SXM HBM3, H200 HBM3e)
PEAK_PER_MS = {"fp32": 67e9, "tf32": 494.7e9, "fp16": 989.4e9}   # H100 SXM dense FLOP/ms


def die(msg):
    print("kernelbench: " + msg, file=sys.stderr)
    sys.exit(2)


def load_json(path):
    try:
        with open(path, encoding="utf-8") as f:
            return json.load(f)
    except (OSError, ValueError) as e:
        die("%s: %s" % (path, e))


def gpu_tag(hw):
    return "H200" if "H200" in hw else "H100" if "H100" in hw else hw


def ranks(xs):
    order = sorted(range(len(xs)), key=lambda i: xs[i])
    r = [0.0] * len(xs)
    i = 0
    while i < len(order):
        j = i
        while j + 1 < len(order) and xs[order[j + 1]] == xs[order[i]]:
            j += 1
        for k in range(i, j + 1):
            r[order[k]] = (i + j) / 2.0 + 1
        i = j + 1
    return r


def spearman(xs, ys):
    if len(xs) < 3:
        return float("nan")
    rx, ry = ranks(xs), ranks(ys)
    mx, my = sum(rx) / len(rx), sum(ry) / len(ry)
    sxy = sum((a - mx) * (b - my) for a, b in zip(rx, ry))
    sxx = sum((a - mx) ** 2 for a in rx)
    syy = sum((b - my) ** 2 for b in ry)
    return sxy / math.sqrt(sxx * syy) if sxx > 0 and syy > 0 else float("nan")


def geomean(xs):
    return math.exp(sum(math.log(x) for x in xs) / len(xs)) if xs else float("nan")


def classify(prob, mean_ms):
    """bw / flop / other for a published time (README.md, "H100 -> H200")."""
    t_bw = prob["full_bytes"] / H100_BW
    t_fl = prob["full_flops"] / PEAK_PER_MS[prob["flop_peak"]]
    if t_bw >= 0.5 * mean_ms and t_bw >= t_fl:
        return "bw"
    if t_fl >= 0.5 * mean_ms and t_fl > t_bw:
        return "flop"
    return "other"


def extrapolate(rows):
    """rows: [(scale, modeled_ms, launch_ms)], largest variant first.
    Returns (full-shape ms, lin check or None)."""
    lin = [l + (m - l) * s for s, m, l in rows]
    if len(rows) < 2:
        return lin[0], None
    (s1, m1, _), (s2, m2, _) = rows[0], rows[1]
    f1, f2 = 1.0 / s1, 1.0 / s2
    if f1 == f2:
        return lin[0], None
    k = (m1 - m2) / (f1 - f2)
    full = m1 + k * (1.0 - f1)
    if not (k > 0 and full > 0):
        return lin[0], lin[1] / lin[0]
    return full, lin[1] / lin[0]


def dominant(v):
    terms = {"mem": v.get("memory_ms", 0), "path": v.get("path_ms", 0), "par": v.get("parallel_ms", 0)}
    t = max(terms, key=terms.get)
    dev = terms[t] + v.get("launch_ms", 0)
    if v.get("host_ms", 0) > dev:
        return "host"
    return t


def run_model(passfs, task, env):
    p = subprocess.run([passfs, "eager", "--model", "--json", "--tasks", os.path.join(KB, "tasks"), "--task", task],
                       capture_output=True, text=True, env=env)
    if p.returncode != 0:
        raise RuntimeError((p.stderr.strip().splitlines() or ["exit %d" % p.returncode])[-1])
    return {v["name"]: v for v in json.loads(p.stdout)["variants"]}


def select(problems, only):
    if not only:
        return problems
    want = [w.strip() for w in only.split(",") if w.strip()]
    out = []
    for w in want:
        hit = [p for p in problems if w in (p["task"], p["file"], p["file"].split("_")[0])]
        if not hit:
            die("--only: no problem %r (task id, problem file or number)" % w)
        out.extend(h for h in hit if h not in out)
    return out


def fmt(x, nd=3):
    if x is None or (isinstance(x, float) and math.isnan(x)):
        return "-"
    if x >= 100:
        return "%.0f" % x
    if x >= 10:
        return "%.1f" % x
    return ("%%.%df" % nd) % x


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--passfs", default=os.path.join(REPO, "build", "passfs"))
    ap.add_argument("--only", default="", help="comma-separated task ids, problem files or numbers")
    ap.add_argument("--markdown", action="store_true", help="a Markdown table")
    args = ap.parse_args()
    pdoc = load_json(os.path.join(KB, "problems.json"))
    tdoc = load_json(os.path.join(KB, "timings.json"))
    try:
        problems, timings = pdoc["problems"], tdoc["problems"]
        for p in problems:
            _ = (p["task"], p["file"], p["full_bytes"], p["full_flops"], PEAK_PER_MS[p["flop_peak"]],
                 [(v["variant"], float(v["scale"])) for v in p["variants"]])
            t = timings[p["file"]]
            _ = (float(t["eager"]["mean_ms"]), t["eager"]["hardware"])
    except (KeyError, TypeError, ValueError) as e:
        die("problems.json / timings.json: malformed or missing entry: %r" % (e,))
    if not os.access(args.passfs, os.X_OK):
        die("no passfs binary at %s" % args.passfs)
    problems = select(problems, args.only)

    results, failed = [], []
    t0 = time.time()
    with tempfile.TemporaryDirectory(prefix="passfs_kb_") as cache:
        env = dict(os.environ, PASSFS_CACHE_DIR=cache)      # a fresh model cache each run
        for p in problems:
            t1 = time.time()
            try:
                vs = run_model(args.passfs, p["task"], env)
            except (RuntimeError, ValueError, KeyError) as e:
                failed.append((p["task"], str(e)))
                print("kernelbench: %s: passfs eager --model: %s" % (p["task"], e), file=sys.stderr)
                continue
            rows, missing = [], [v["variant"] for v in p["variants"] if v["variant"] not in vs]
            if missing:
                failed.append((p["task"], "variants missing: %s" % ", ".join(missing)))
                continue
            pv = sorted(p["variants"], key=lambda v: v["scale"])
            for v in pv:
                m = vs[v["variant"]]
                rows.append((float(v["scale"]), m["modeled_h200_ms"], m.get("launch_ms", 0.0)))
            modeled, lin = extrapolate(rows)
            t = timings[p["file"]]
            mean, hw = float(t["eager"]["mean_ms"]), t["eager"]["hardware"]
            cls = classify(p, mean)
            if gpu_tag(hw) == "H200":
                measured, conv = mean, "as published"
            elif cls == "bw":
                measured, conv = mean * H100_BW / H200_BW, "x3.35/4.8"
            else:
                measured, conv = mean, "x1.0"
            ind = t.get("inductor")
            results.append({"problem": p["file"][:-3], "task": p["task"], "family": p.get("family", ""),
                            "class": cls, "modeled": modeled, "lin": lin, "measured": measured,
                            "published": mean, "gpu": gpu_tag(hw), "conv": conv,
                            "ratio": modeled / measured,
                            "inductor": (float(ind["mean_ms"]), gpu_tag(ind["hardware"])) if ind else None,
                            "term": dominant(vs[pv[0]["variant"]]), "launches": vs[pv[0]["variant"]].get("launches")})
            print("kernelbench: %-26s %5.1f s" % (p["task"], time.time() - t1), file=sys.stderr)

    head = ["problem", "class", "term", "modeled ms", "lin", "measured ms", "published", "ratio", "inductor"]
    lines = []
    for r in results:
        ind = "%s %s" % (fmt(r["inductor"][0]), r["inductor"][1]) if r["inductor"] else "-"
        lines.append([r["problem"], r["class"], r["term"], fmt(r["modeled"]),
                      "%.2f" % r["lin"] if r["lin"] is not None else "-", fmt(r["measured"]),
                      "%s %s" % (fmt(r["published"]), r["gpu"]), "%.2f" % r["ratio"], ind])
    if args.markdown:
        print("| " + " | ".join(head) + " |")
        print("|" + "|".join("---" if i < 3 else "---:" for i in range(len(head))) + "|")
        for l in lines:
            print("| " + " | ".join(l) + " |")
    else:
        w = [max(len(head[i]), *(len(l[i]) for l in lines)) if lines else len(head[i]) for i in range(len(head))]
        print("  ".join(h.ljust(w[i]) if i < 3 else h.rjust(w[i]) for i, h in enumerate(head)))
        for l in lines:
            print("  ".join(c.ljust(w[i]) if i < 3 else c.rjust(w[i]) for i, c in enumerate(l)))
    print()
    xs = [r["modeled"] for r in results]
    ys = [r["measured"] for r in results]
    ratios = [r["ratio"] for r in results]
    within = [r for r in results if 1 / 1.5 <= r["ratio"] <= 1.5]
    outside = [r for r in results if not 1 / 1.5 <= r["ratio"] <= 1.5]
    print("problems: %d (%d failed to model)" % (len(results), len(failed)))
    print("Spearman rank correlation, modeled vs measured: %.3f" % spearman(xs, ys))
    print("geometric mean of modeled / measured: %.3f (range %s-%s)" % (
        geomean(ratios), fmt(min(ratios)) if ratios else "-", fmt(max(ratios)) if ratios else "-"))
    print("within 1.5x: %d of %d" % (len(within), len(results)))
    fams = []
    for r in results:
        if r["family"] not in fams:
            fams.append(r["family"])
    for f in fams:
        rs = [r["ratio"] for r in results if r["family"] == f]
        print("  %-12s %2d problems, geomean ratio %.2f, %d within 1.5x" % (
            f, len(rs), geomean(rs), sum(1 for x in rs if 1 / 1.5 <= x <= 1.5)))
    print("outside 1.5x: " + (", ".join("%s (%.2f)" % (r["problem"], r["ratio"])
                                       for r in sorted(outside, key=lambda r: r["ratio"])) or "none"))
    for tid, why in failed:
        print("failed: %s: %s" % (tid, why))
    print("(%s; passfs %s; %.0f s)" % (time.strftime("%Y-%m-%d"), os.path.relpath(args.passfs, REPO)
                                       if args.passfs.startswith(REPO) else args.passfs, time.time() - t0))
    return 0


if __name__ == "__main__":
    sys.exit(main())
