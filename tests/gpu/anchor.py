#!/usr/bin/env python3
"""anchor.py - the eager baseline against PyTorch on the GPU (tests/gpu/check.sh).

For each task (default: 8 bundled tasks with a spread of ops and the eager
suite's 2 split-reduction tasks, tests/eager/tasks) and each of its
variants:

  1. `passfs eager --backend cuda --task ID --out DIR --trials 100` writes the
     variant's inputs and passfs's eager outputs (raw files + manifest.json,
     see fs/cmd_eager.c) and eager_ms, the median of 100 end-to-end runs after
     one warm-up run (each run ends with a context-wide sync);
  2. the same inputs go to torch on cuda and the graph runs with
     tests/oracle/graph_torch.py's executor (scaled_dot_product_attention as
     F.scaled_dot_product_attention, i.e. PyTorch's own fused kernels; TF32 off,
     so both sides compute in float32): passfs's outputs are compared with
     torch's at the ES_t tolerance levels (docs/scoring.md) -> min_t, max error;
  3. torch eager and torch.compile (inductor, dynamic=False) are timed with
     the PassBench protocol: 25 warm-up + 100 timed calls, each
     synchronize -> clock -> call -> synchronize -> clock, median.

Prints a line per variant as it finishes (passfs eager ms, torch eager ms,
their ratio, min_t), then a line per variant torch.compile reaches, then the
table - task, variant, passfs eager ms, torch eager ms, inductor ms,
passfs/torch, torch/inductor, min_t, max abs error - and a summary: the median
passfs/torch ratio (the target: <= 1.25, an honest baseline) and how many
variants agree with torch.  --deadline bounds the whole run: no task starts
after it, passfs's own runs get what is left of it, and torch.compile (the slow
part, seconds per variant) runs after everything else, variant 0 of every task
first, then the last, then the rest, until the deadline; what it did not reach
shows "-".  The table and the JSON rows are rewritten after every row, and on
SIGTERM, so a run stopped from outside still leaves what it measured.

A task is an id of --tasks-dir, or a path (with a "/") to a task's directory.
With --json FILE the rows also go to FILE as a JSON list (task, variant,
passfs_ms, torch_ms, inductor_ms, min_t, max_abs, ok, note, tasks_dir), which
bench/calibration.py sets beside the cpu backend's modeled H200 times.

--torch-device cpu runs torch on the CPU beside passfs's cuda backend (a
rehearsal against a mock driver: the flow and the table, not the numbers).

Exit status: 0 when every variant ran and agreed with torch within tolerance
(timings are information, not pass/fail), 1 otherwise, 2 on a setup error.
"""
import argparse
import json
import math
import os
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time

REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
sys.path.insert(0, os.path.join(REPO, "tests", "oracle"))

DEFAULT_TASKS = [
    "gpt2_bias_gelu_tanh",          # elementwise
    "llama_swiglu",                 # elementwise, two inputs
    "vit_residual_layernorm",       # layer_norm
    "t5_rmsnorm",                   # reduction chain
    "bert_attention_probs_context",  # matmul + softmax
    "gpt2_sdpa_causal_merge_heads",  # attention
    "yolov8_conv_bn_silu",          # conv2d + batch_norm
    "resnet50_head_pool_linear",    # pool + linear
    "tests/eager/tasks/reduce_split_sum",   # whole-tensor sums, split over blocks
    "tests/eager/tasks/reduce_split_mean",  # few long rows, split over blocks
]
K = {"float32": 1.1772, "float16": 0.6, "bfloat16": 0.3592}
# The level at which passfs eager must agree with torch on the GPU (as the CPU
# oracle, tests/oracle/test_eager_torch.py, asks of the cpu backend).
LEVEL = {"float32": -5, "float64": -5, "float16": -3, "bfloat16": -2}
WARMUP, TRIALS = 25, 100


def tolerance(dtype, t):
    t = min(t, 1)
    if dtype == "float64":
        return 10.0 ** (1.4 * t), 10.0 ** (1.4 * t)
    return 10.0 ** t, 10.0 ** (K[dtype] * t)


def compare(torch, got, ref, dtype):
    """(ok, min_t, max_abs, detail) for passfs's output `got` against torch's `ref`."""
    if tuple(got.shape) != tuple(ref.shape):
        return False, None, float("inf"), "shape %s, torch %s" % (list(got.shape), list(ref.shape))
    if not ref.dtype.is_floating_point:
        ok = bool((got.to(ref.device) == ref).all())
        return ok, (-10 if ok else None), 0.0 if ok else float("inf"), "exact" if ok else "ints differ"
    g, r = got.to(ref.device).double(), ref.double()
    gn, rn = torch.isnan(g), torch.isnan(r)
    if not torch.equal(gn, rn):
        return False, None, float("inf"), "NaN in %d places, torch %d" % (int(gn.sum()), int(rn.sum()))
    inf = torch.isinf(g) | torch.isinf(r)
    if not torch.equal(g[inf], r[inf]):
        return False, None, float("inf"), "infinities differ"
    fin = ~(gn | inf)
    g, r = g[fin], r[fin]
    err = (g - r).abs()
    maxabs = float(err.max()) if err.numel() else 0.0
    absr = r.abs()
    min_t = None
    for t in range(-10, 2):
        atol, rtol = tolerance(dtype, t)
        if bool((err <= atol + rtol * absr).all()):
            min_t = t
            break
    ok = min_t is not None and min_t <= LEVEL.get(dtype, 1)
    return ok, min_t, maxabs, ""


def load_tensor(torch, graph_torch, vdir, spec):
    dt = graph_torch.DTYPES[spec["dtype"]]
    with open(os.path.join(vdir, spec["file"]), "rb") as f:
        data = f.read()
    shape = tuple(spec["shape"])
    if not data:
        return torch.empty(shape, dtype=dt)
    return torch.frombuffer(bytearray(data), dtype=dt).reshape(shape)


def time_fn(sync, fn, warmup=WARMUP, trials=TRIALS):
    """Median ms of `trials` calls after `warmup`: sync, clock, call, sync, clock."""
    for _ in range(warmup):
        fn()
    sync()
    times = []
    for _ in range(trials):
        sync()
        t0 = time.perf_counter()
        fn()
        sync()
        times.append((time.perf_counter() - t0) * 1e3)
    return statistics.median(times)


def fmt(x, spec="%.4f"):
    return "-" if x is None else spec % x


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--passfs", default=os.environ.get("PASSFS", os.path.join(REPO, "build", "passfs")))
    ap.add_argument("--tasks-dir", default=os.path.join(REPO, "tasks"))
    ap.add_argument("--tasks", default=os.environ.get("ANCHOR_TASKS", ",".join(DEFAULT_TASKS)),
                    help="comma-separated task ids, or paths to task directories")
    ap.add_argument("--deadline", type=float, default=float(os.environ.get("ANCHOR_DEADLINE_S", "200")),
                    help="seconds from start for the whole run (no task or torch.compile starts after it)")
    ap.add_argument("--trials", type=int, default=int(os.environ.get("ANCHOR_TRIALS", str(TRIALS))),
                    help="timed calls per variant on each side (default %d)" % TRIALS)
    ap.add_argument("--torch-device", choices=["cuda", "cpu"], default=None,
                    help="where torch runs (default: the backend's device)")
    ap.add_argument("--no-inductor", action="store_true")
    ap.add_argument("--table", help="also write the table to this file")
    ap.add_argument("--json", help="also write the rows to this file (a JSON list)")
    ap.add_argument("--backend", default="cuda", choices=["cuda", "cpu"],
                    help="cpu: the same flow on the cpu backend and torch's CPU, to test this script "
                         "without a GPU (no inductor)")
    args = ap.parse_args()
    start = time.time()

    def left():
        return args.deadline - (time.time() - start)

    try:
        import torch
        import graph_torch
    except Exception as e:  # noqa: BLE001 - report any import failure plainly
        print("anchor: cannot import torch / graph_torch: %s" % e)
        return 2
    back = args.backend
    dev = args.torch_device or back
    if dev == "cuda" and not torch.cuda.is_available():
        print("anchor: torch sees no GPU (--torch-device cpu runs torch on the CPU)")
        return 2
    sync = torch.cuda.synchronize if dev == "cuda" else (lambda: None)
    if dev == "cpu":
        args.no_inductor = True
    if not os.access(args.passfs, os.X_OK):
        print("anchor: no passfs binary at %s" % args.passfs)
        return 2
    import torch.nn.functional as F
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    if hasattr(F, "scaled_dot_product_attention"):
        graph_torch.OPS["scaled_dot_product_attention"] = (
            lambda q, k, v, attn_mask=None, dropout_p=0.0, is_causal=False, scale=None:
            F.scaled_dot_product_attention(q, k, v, attn_mask=attn_mask, dropout_p=dropout_p,
                                           is_causal=is_causal, scale=scale))
    try:
        import torch._dynamo
        torch._dynamo.config.cache_size_limit = 256
    except Exception:  # noqa: BLE001
        pass
    device_name = torch.cuda.get_device_name(0) if dev == "cuda" else "cpu"
    trials = args.trials if dev == "cuda" else min(args.trials, 3)
    warmup = WARMUP if dev == "cuda" else 1
    print("anchor: torch %s on %s, passfs %s (--backend %s), %d trials, deadline %.0f s" % (
        torch.__version__, device_name, args.passfs, back, trials, args.deadline))
    print("%-30s %-18s %10s %10s %8s %5s  %s" % ("task", "variant", "passfs_ms", "torch_ms", "pf/torch", "min_t",
                                                 "note"), flush=True)

    shm = "/dev/shm" if os.access("/dev/shm", os.W_OK) else None
    tmp = tempfile.mkdtemp(prefix="passfs_anchor_", dir=shm)
    libs = set()
    rows = []           # dicts, in task / variant order
    state = {"errors": 0}

    def ratio(a, b):
        return a / b if a and b else None

    def table():
        lines = []
        hdr = "%-30s %-18s %10s %10s %10s %8s %8s %5s %9s  %s" % (
            "task", "variant", "passfs_ms", "torch_ms", "induct_ms", "pf/torch", "tr/ind", "min_t", "max_err", "note")
        lines.append(hdr)
        lines.append("-" * len(hdr))
        ratios, ind = [], []
        for r in rows:
            pr, ir = ratio(r["passfs"], r["torch"]), ratio(r["torch"], r["inductor"])
            if pr:
                ratios.append(pr)
            if ir:
                ind.append(ir)
            lines.append("%-30s %-18s %10s %10s %10s %8s %8s %5s %9s  %s%s" % (
                r["task"][:30], r["variant"][:18], fmt(r["passfs"]), fmt(r["torch"]), fmt(r["inductor"]),
                fmt(pr, "%.2f"), fmt(ir, "%.2f"), "-" if r["min_t"] is None else str(r["min_t"]),
                "-" if r["max_abs"] is None else "%.1e" % r["max_abs"], "" if r["ok"] else "MISMATCH ", r["note"]))
        n_ok = sum(1 for r in rows if r["ok"])
        lines.append("")
        lines.append("passfs eager's vendor libraries: %s" % ("; ".join(sorted(libs)) or "-"))
        if ratios:
            med = statistics.median(ratios)
            within = sum(1 for x in ratios if x <= 1.25)
            lines.append("passfs eager / torch eager (%s): median %.2f (target <= 1.25: %s), %d of %d variants within "
                         "1.25x, geomean %.2f" % (device_name, med, "met" if med <= 1.25 else "NOT met", within,
                                                  len(ratios),
                                                  math.exp(sum(math.log(x) for x in ratios) / len(ratios))))
        if ind:
            lines.append("torch eager / inductor: geomean %.2f over %d variants (inductor slower than eager on %d)" % (
                math.exp(sum(math.log(x) for x in ind) / len(ind)), len(ind), sum(1 for x in ind if x < 1)))
        lines.append("outputs agree with torch (%s): %d of %d variants (%d task errors); %.0f s" % (
            dev, n_ok, len(rows), state["errors"], time.time() - start))
        return "\n".join(lines), n_ok

    def save():
        """The table and the rows as they stand, each replaced whole."""
        text, _ = table()
        outs = []
        if args.table:
            outs.append((args.table, text + "\n"))
        if args.json:
            keep = [{"task": r["task"], "variant": r["variant"], "passfs_ms": r["passfs"], "torch_ms": r["torch"],
                     "inductor_ms": r["inductor"], "min_t": r["min_t"], "max_abs": r["max_abs"], "ok": r["ok"],
                     "note": r["note"], "tasks_dir": os.path.relpath(r["tasks_dir"], REPO)} for r in rows]
            outs.append((args.json, json.dumps({"device": device_name, "torch": torch.__version__,
                                                "passfs_backend": back, "complete": state.get("complete", False),
                                                "rows": keep}, indent=1)))
        for path, body in outs:
            with open(path + ".tmp", "w", encoding="utf-8") as f:
                f.write(body)
            os.replace(path + ".tmp", path)

    def on_term(signum, frame):
        raise SystemExit(128 + signum)
    signal.signal(signal.SIGTERM, on_term)

    try:
        for entry in [t for t in args.tasks.split(",") if t]:
            tdir, tid = args.tasks_dir, entry
            if "/" in entry:
                path = entry if os.path.isabs(entry) else os.path.join(REPO, entry)
                tdir, tid = os.path.dirname(path.rstrip("/")), os.path.basename(path.rstrip("/"))
            gpath = os.path.join(tdir, tid, "graph.json")
            if not os.path.isfile(gpath):
                print("anchor: no task %s" % tid)
                state["errors"] += 1
                continue
            doc = graph_torch.load(gpath)
            if left() < 5:
                for v in doc["variants"]:
                    rows.append({"task": tid, "variant": v["name"], "passfs": None, "torch": None, "inductor": None,
                                 "min_t": None, "max_abs": None, "ok": False, "note": "not reached: deadline",
                                 "tasks_dir": tdir})
                print("%-30s (not reached: the deadline)" % tid[:30], flush=True)
                continue
            out = os.path.join(tmp, tid)
            t0 = time.time()
            try:
                p = subprocess.run([args.passfs, "eager", "--tasks", tdir, "--task", tid, "--backend",
                                    back, "--trials", str(trials), "--out", out],
                                   capture_output=True, text=True, timeout=max(5, min(300, left())))
            except subprocess.TimeoutExpired:
                print("FAIL %s: passfs eager did not finish before the deadline" % tid, flush=True)
                state["errors"] += 1
                continue
            if p.returncode != 0:
                msg = (p.stderr.strip().splitlines() or ["exit %d" % p.returncode])[-1]
                print("FAIL %s: passfs eager: %s" % (tid, msg), flush=True)
                state["errors"] += 1
                continue
            eager_s = time.time() - t0
            for v in doc["variants"]:
                row = {"task": tid, "variant": v["name"], "passfs": None, "torch": None, "inductor": None,
                       "min_t": None, "max_abs": None, "ok": False, "note": "", "tasks_dir": tdir}
                rows.append(row)
                vdir = os.path.join(out, v["name"])
                try:
                    with open(os.path.join(vdir, "manifest.json"), encoding="utf-8") as f:
                        man = json.load(f)
                    row["passfs"] = man.get("eager_ms")
                    libs.add(man.get("libraries") or "op library only")
                    if man.get("library_note"):
                        row["note"] = "lib: " + man["library_note"][:60]
                    names = [s["name"] for s in man["inputs"]]
                    ins = [load_tensor(torch, graph_torch, vdir, s).to(dev) for s in man["inputs"]]
                    env = dict(zip(names, ins))
                    with torch.no_grad():
                        refs = graph_torch.run_variant(v, device=dev, inputs=env)
                    good, worst_t, worst_abs = True, -10, 0.0
                    for spec, ref in zip(man["outputs"], refs):
                        ok, mt, mabs, det = compare(torch, load_tensor(torch, graph_torch, vdir, spec), ref,
                                                    spec["dtype"])
                        good &= ok
                        worst_t = None if (mt is None or worst_t is None) else max(worst_t, mt)
                        worst_abs = max(worst_abs, mabs)
                        if det:
                            row["note"] = det
                    good &= len(refs) == len(man["outputs"])
                    row.update(ok=good, min_t=worst_t, max_abs=worst_abs)

                    def run_torch(v=v, env=env):
                        with torch.no_grad():
                            return graph_torch.run_variant(v, device=dev, inputs=env)
                    row["torch"] = time_fn(sync, run_torch, warmup, trials)
                    row["_fn"], row["_ins"], row["_names"] = v, ins, names
                except Exception as e:  # noqa: BLE001 - one broken variant must not stop the rest
                    row["note"] = "%s: %s" % (type(e).__name__, str(e).splitlines()[0] if str(e) else "")
                print("%-30s %-18s %10s %10s %8s %5s  %s%s" % (
                    tid[:30], v["name"][:18], fmt(row["passfs"]), fmt(row["torch"]),
                    fmt(ratio(row["passfs"], row["torch"]), "%.2f"),
                    "-" if row["min_t"] is None else str(row["min_t"]), "" if row["ok"] else "MISMATCH ",
                    row["note"]), flush=True)
                save()
            print("     (%s: passfs eager, compile + %d variants x %d runs, %.1f s)" % (
                tid, len(doc["variants"]), trials + 1, eager_s), flush=True)
            shutil.rmtree(out, ignore_errors=True)

        # torch.compile, by priority, within the deadline
        if not args.no_inductor:
            by_task = {}
            for r in rows:
                if "_fn" in r:
                    by_task.setdefault(r["task"], []).append(r)
            order = []
            for rs in by_task.values():
                order.append(rs[0])
            for rs in by_task.values():
                if len(rs) > 1:
                    order.append(rs[-1])
            for rs in by_task.values():
                order.extend(rs[1:-1])
            for r in order:
                if left() < 5:
                    r["note"] = r["note"] or "inductor: time budget"
                    continue
                try:
                    v, names = r["_fn"], r["_names"]

                    def graph(*xs, v=v, names=names):
                        return graph_torch.run_variant(v, device="cuda", inputs=dict(zip(names, xs)))
                    comp = torch.compile(graph, dynamic=False)
                    ins = r["_ins"]

                    def run_comp(comp=comp, ins=ins):
                        with torch.no_grad():
                            return comp(*ins)
                    t0 = time.time()
                    run_comp()
                    r["compile_s"] = time.time() - t0
                    r["inductor"] = time_fn(sync, run_comp, warmup, trials)
                except Exception as e:  # noqa: BLE001
                    r["note"] = "inductor: %s" % (str(e).splitlines()[0][:80] if str(e) else type(e).__name__)
                print("inductor %-30s %-18s %10s ms (compile %.1f s), torch/inductor %s" % (
                    r["task"][:30], r["variant"][:18], fmt(r["inductor"]), r.get("compile_s", 0),
                    fmt(ratio(r["torch"], r["inductor"]), "%.2f")), flush=True)
                save()
        state["complete"] = True
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
        text, n_ok = table()
        print()
        print(text, flush=True)
        save()
    return 0 if state["errors"] == 0 and rows and n_ok == len(rows) else 1


if __name__ == "__main__":
    sys.exit(main())
