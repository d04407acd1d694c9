#!/usr/bin/env python3
"""Checks the bundled tasks against PyTorch (the oracle) and the task rules.

For every task in tasks/:
  - passfs's inferred shapes and dtypes (`$PASSFS tasks --tasks tasks --show ID --json`)
    equal PyTorch's for every variant, inputs and outputs (graph_torch on the meta
    device: shapes only, fast); and, run on a temporary copy of the task in which every
    node (but split/chunk tuples) is an output, for every intermediate value too;
  - the task is well formed: >= 6 variants, >= 2 float dtypes, >= 3 distinct input-shape
    sets, the same inputs (names), number of outputs and op sequence on every variant
    (passfs's rule: one op sequence at other shapes), every variant within
    the CPU budget (~2 GFLOP, 32 Mi elements per tensor);
  - its cheapest variant also runs on CPU with real data: same shapes and dtypes as on
    meta, finite outputs.
And once for the set:
  - tasks/generate.py --out TMP writes byte-identical files to the committed ones;
  - >= 30 tasks; every op of the design's list appears; interpolate nearest and bilinear,
    and getitem with int, stepped slice, None and "..." items, all appear.

Prints one line per check and `N passed, N failed`; exits 1 on any failure.
PASSFS is the passfs binary (ctest sets it; default build/passfs).  --torch-only skips
the passfs comparison (for working on tasks before a binary exists).
"""

import json
import os
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
TASKS = os.path.join(ROOT, "tasks")
sys.path.insert(0, HERE)
sys.dont_write_bytecode = True  # no __pycache__ in the source tree

import torch  # noqa: E402
import graph_torch as gt  # noqa: E402

REQUIRED_OPS = [
    "transpose", "reshape", "view", "getitem", "conv2d", "contiguous", "add", "sigmoid",
    "dropout", "permute", "layer_norm", "cat", "scaled_dot_product_attention", "interpolate",
    "expand", "matmul", "mul", "linear", "bmm", "flatten", "split", "chunk", "batch_norm",
    "div", "softmax", "pad", "relu", "gelu", "silu", "prelu", "adaptive_avg_pool2d", "sum",
    "mean", "sub", "tanh", "exp", "pow", "rsqrt", "where", "to", "unbind", "baddbmm",
    "avg_pool2d", "unfold",
]
MIN_TASKS = 30
MIN_VARIANTS = 6
MAX_FLOPS = 2.2e9
MAX_ELEMS = 32 * 2 ** 20
FLOAT_DTYPES = ("float32", "float16", "bfloat16")


def passfs_binary():
    exe = os.environ.get("PASSFS") or os.path.join(ROOT, "build", "passfs")
    return exe if os.path.isfile(exe) and os.access(exe, os.X_OK) else None


def passfs_show(exe, tid, tasks_dir=TASKS):
    """passfs's view of one task as a dict, or raises with its error line."""
    p = subprocess.run([exe, "tasks", "--tasks", tasks_dir, "--show", tid, "--json"],
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=120)
    if p.returncode != 0:
        err = p.stderr.decode(errors="replace").strip().splitlines()
        raise RuntimeError("passfs exited %d: %s" % (p.returncode, err[0] if err else "(no message)"))
    return json.loads(p.stdout.decode())


def task_ids():
    return sorted(d for d in os.listdir(TASKS) if os.path.isfile(os.path.join(TASKS, d, "graph.json")))


def variant_dtype(v):
    """The variant's compute dtype: the dtype of its first float input, if any."""
    for s in v["inputs"]:
        if s["dtype"] in FLOAT_DTYPES:
            return s["dtype"]
    return None


def check_regenerate():
    """Committed tasks/ == what generate.py writes.  Returns a list of problems."""
    problems = []
    with tempfile.TemporaryDirectory() as tmp:
        p = subprocess.run([sys.executable, os.path.join(TASKS, "generate.py"), "--out", tmp],
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=120)
        if p.returncode != 0:
            return ["generate.py failed: %s" % p.stderr.decode(errors="replace").strip()[-300:]]
        made = set()
        for dirpath, _, files in os.walk(tmp):
            for f in files:
                made.add(os.path.relpath(os.path.join(dirpath, f), tmp))
        committed = {"README.md"} | {os.path.join(t, "graph.json") for t in task_ids()}
        for rel in sorted(made - committed):
            problems.append("%s is generated but not in tasks/" % rel)
        for rel in sorted(committed - made):
            problems.append("tasks/%s is not made by generate.py" % rel)
        for rel in sorted(made & committed):
            with open(os.path.join(tmp, rel), "rb") as a, open(os.path.join(TASKS, rel), "rb") as b:
                if a.read() != b.read():
                    problems.append("tasks/%s differs from generate.py's output (rerun it)" % rel)
    return problems


def check_task(tid, exe, seen):
    """Problems with one task (empty when fine); fills `seen` with coverage facts."""
    path = os.path.join(TASKS, tid, "graph.json")
    problems = []
    doc = gt.load(path)
    if doc.get("id") != tid:
        problems.append("id %r is not the directory name" % doc.get("id"))
    variants = doc["variants"]

    # Task rules.
    if len(variants) < MIN_VARIANTS:
        problems.append("%d variants, want >= %d" % (len(variants), MIN_VARIANTS))
    shape_sets = {tuple(tuple(s["shape"]) for s in v["inputs"]) for v in variants}
    if len(shape_sets) < 3:
        problems.append("%d distinct input-shape sets, want >= 3" % len(shape_sets))
    if len({(len(v["inputs"]), len(v["outputs"])) for v in variants}) != 1:
        problems.append("variants differ in their number of inputs or outputs")
    if len({tuple(s["name"] for s in v["inputs"]) for v in variants}) != 1:
        problems.append("variants differ in their input names")
    if len({tuple(n["op"] for n in v["nodes"]) for v in variants}) != 1:
        problems.append("variants differ in their op sequence")
    for v in variants:
        for n in v["nodes"]:
            seen["ops"].add(n["op"])
            a = n.get("attrs") or {}
            if n["op"] == "interpolate":
                seen["interp"].add(a.get("mode", "nearest"))
            if n["op"] == "getitem":
                for it in a.get("index", []):
                    if it is None:
                        seen["index"].add("None")
                    elif it == "...":
                        seen["index"].add("...")
                    elif isinstance(it, int):
                        seen["index"].add("int")
                    elif isinstance(it, list):
                        seen["index"].add("slice" if it[2] in (None, 1) else "stepped slice")

    # PyTorch, shapes only.
    torch_out = {}
    torch_nodes = {}  # variant -> [(node, shape, dtype)] for every non-tuple node
    costs = {}
    for v in variants:
        try:
            trace = []
            outs = gt.run_variant(v, device="meta", trace=trace)
            torch_out[v["name"]] = gt.describe(v, outs)
            torch_nodes[v["name"]] = [(n["name"], tuple(r.shape), gt.dtype_name(r.dtype))
                                      for n, r in trace if torch.is_tensor(r)]
            flops, biggest = gt.cost(v)
            costs[v["name"]] = flops
            if flops > MAX_FLOPS:
                problems.append("variant %s: %.2f GFLOP, budget %.1f" % (v["name"], flops / 1e9, MAX_FLOPS / 1e9))
            if biggest > MAX_ELEMS:
                problems.append("variant %s: a tensor of %d elements, budget %d" % (v["name"], biggest, MAX_ELEMS))
        except gt.GraphError as e:
            problems.append("torch: %s" % e)

    dts = set()
    for v in variants:
        dt = variant_dtype(v)
        if dt is None:  # no float input (a mask-only task): its float output's dtype
            dt = next((o[2] for o in torch_out.get(v["name"], []) if o[2] in FLOAT_DTYPES), None)
        dts.add(dt)
    if len(dts - {None}) < 2:
        problems.append("float dtypes %s, want >= 2" % sorted(d for d in dts if d))

    # PyTorch on CPU with data, cheapest variant: same result as meta, finite.
    if costs:
        cheap = min(variants, key=lambda v: costs.get(v["name"], float("inf")))
        try:
            outs = gt.run_variant(cheap, device="cpu")
            if gt.describe(cheap, outs) != torch_out[cheap["name"]]:
                problems.append("variant %s: CPU run gives %s, meta %s" % (
                    cheap["name"], gt.describe(cheap, outs), torch_out[cheap["name"]]))
            for name, t in zip(cheap["outputs"], outs):
                if t.dtype.is_floating_point and not torch.isfinite(t).all():
                    problems.append("variant %s: output %s is not finite on CPU" % (cheap["name"], name))
        except gt.GraphError as e:
            problems.append("torch cpu: %s" % e)

    # passfs's inference.
    if exe:
        try:
            show = passfs_show(exe, tid)
        except Exception as e:  # noqa: BLE001 - report whatever went wrong
            problems.append(str(e))
            return problems
        if show.get("id") != tid:
            problems.append("passfs says id %r" % show.get("id"))
        pnames = [v.get("name") for v in show.get("variants", [])]
        if pnames != [v["name"] for v in variants]:
            problems.append("passfs variants %s, graph.json has %s" % (pnames, [v["name"] for v in variants]))
        for pv, v in zip(show.get("variants", []), variants):
            pin = [(s["name"], tuple(s["shape"]), s["dtype"]) for s in pv.get("inputs", [])]
            win = [(s["name"], tuple(s["shape"]), s["dtype"]) for s in v["inputs"]]
            if pin != win:
                problems.append("variant %s: passfs inputs %s, graph.json %s" % (v["name"], pin, win))
            pout = [(s["name"], tuple(s["shape"]), s["dtype"]) for s in pv.get("outputs", [])]
            problems += compare(v["name"], pout, torch_out.get(v["name"]))

        # Every intermediate: the same task with each non-tuple node made an output.
        if torch_nodes and len(torch_nodes) == len(variants):
            problems += check_all_nodes(exe, doc, torch_nodes)
    return problems


def compare(vname, pout, tout):
    """Problems where passfs's (name, shape, dtype) list differs from torch's."""
    if tout is None or pout == tout:
        return []
    diffs = ["%s: passfs %s%s, torch %s%s" % (a[0], a[2], list(a[1]), b[2], list(b[1]))
             for a, b in zip(pout, tout) if a != b]
    if len(pout) != len(tout):
        diffs.append("passfs has %d outputs, torch %d" % (len(pout), len(tout)))
    return ["variant %s: %s" % (vname, "; ".join(diffs))]


def check_all_nodes(exe, doc, torch_nodes):
    """passfs's inferred shape/dtype of every node (not only the outputs) == torch's."""
    probe = json.loads(json.dumps(doc))
    for v in probe["variants"]:
        v["outputs"] = [n for n, _, _ in torch_nodes[v["name"]]]
    with tempfile.TemporaryDirectory() as tmp:
        os.mkdir(os.path.join(tmp, doc["id"]))
        with open(os.path.join(tmp, doc["id"], "graph.json"), "w") as f:
            json.dump(probe, f)
        try:
            show = passfs_show(exe, doc["id"], tmp)
        except Exception as e:  # noqa: BLE001
            return ["with every node as an output: %s" % e]
    problems = []
    for pv, v in zip(show.get("variants", []), probe["variants"]):
        pout = [(s["name"], tuple(s["shape"]), s["dtype"]) for s in pv.get("outputs", [])]
        problems += compare(v["name"], pout, torch_nodes[v["name"]])
    return problems


def main(argv):
    torch_only = "--torch-only" in argv
    t_start = time.monotonic()
    exe = None if torch_only else passfs_binary()
    passed = failed = 0

    def report(name, problems):
        nonlocal passed, failed
        if problems:
            failed += 1
            print("FAIL %s" % name)
            for p in problems[:20]:
                print("     %s" % p)
            if len(problems) > 20:
                print("     ... %d more" % (len(problems) - 20))
        else:
            passed += 1
            print("ok   %s" % name)
        sys.stdout.flush()

    if not torch_only and not exe:
        report("passfs binary", ["not found: set PASSFS to the built passfs (or pass --torch-only)"])

    report("generate.py reproduces tasks/", check_regenerate())

    seen = {"ops": set(), "interp": set(), "index": set()}
    ids = task_ids()
    for tid in ids:
        doc = gt.load(os.path.join(TASKS, tid, "graph.json"))
        report("%s (%d variants)" % (tid, len(doc["variants"])), check_task(tid, exe, seen))

    cov = []
    if len(ids) < MIN_TASKS:
        cov.append("%d tasks, want >= %d" % (len(ids), MIN_TASKS))
    missing = [op for op in REQUIRED_OPS if op not in seen["ops"]]
    if missing:
        cov.append("ops used by no task: %s" % ", ".join(missing))
    for mode in ("nearest", "bilinear"):
        if mode not in seen["interp"]:
            cov.append("no interpolate with mode %s" % mode)
    for kind in ("int", "stepped slice", "None", "..."):
        if kind not in seen["index"]:
            cov.append("no getitem with a %s item" % kind)
    report("coverage (%d tasks, %d ops)" % (len(ids), len(seen["ops"])), cov)

    print("%d passed, %d failed (%.1f s%s)" % (passed, failed, time.monotonic() - t_start,
                                               ", torch only" if torch_only else ""))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
