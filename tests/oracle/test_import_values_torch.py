#!/usr/bin/python3
"""Oracle test for imported samples' values: the sample's own forward() is the truth.

For every synthetic PassNet-format sample in tests/import-samples/ (one per
PyTorch call the importer maps to a less obvious graph: tensor_split, unbind,
leaky_relu, conv1d, baddbmm, arange, avg_pool2d, unfold): `$PASSFS import` it, run
`$PASSFS eager` on the task (cpu backend), load the inputs eager generated,
and run the sample's model.py forward() in torch on exactly those inputs.
Every output of the first variant must agree with eager's at ES_t level
t = -4 or tighter (same shape and dtype, NaN/Inf in the same places; the
comparison of test_eager_torch.py).  The imported graph run by the oracle's
op table (graph_torch.py) must agree with forward() the same way, so the op
mapping of both passfs and the oracle is checked against PyTorch itself.

model.py runs on the CPU: `device(...)` (GraphNet writes
`device(type='cuda', index=0)`) is bound to the CPU device.

Run from the repository root with PASSFS pointing at the binary (ctest does).
Prints one line per sample and "N passed, N failed".
"""
import glob
import inspect
import json
import os
import shutil
import subprocess
import sys
import tempfile

import torch

REPO = os.getcwd()
HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.dont_write_bytecode = True
import graph_torch  # noqa: E402
import test_eager_torch as et  # noqa: E402

PASSFS = os.environ.get("PASSFS") or os.path.join(REPO, "build", "passfs")
SAMPLES = os.path.join(REPO, "tests", "import-samples")
LEVEL = -4


def run_forward(model_path, args):
    """The outputs of model.py's GraphModule().forward(*args), a list."""
    ns = {}
    with open(model_path) as f:
        exec(compile(f.read(), model_path, "exec"), ns)
    ns["device"] = lambda *a, **k: torch.device("cpu")
    module = ns["GraphModule"]()
    with torch.no_grad():
        out = module(*[a.clone() for a in args])
    return list(out) if isinstance(out, (tuple, list)) else [out]


def forward_params(model_path):
    ns = {}
    with open(model_path) as f:
        exec(compile(f.read(), model_path, "exec"), ns)
    return list(inspect.signature(ns["GraphModule"]().forward).parameters)


def agree(got, ref, dtype):
    """(ok, detail): ok when the comparison's smallest passing t is <= LEVEL."""
    _, det = et.compare(got, ref, dtype)
    if not ref.dtype.is_floating_point:
        return det == "exact", det
    if det == "no finite values":
        return tuple(got.shape) == tuple(ref.shape), det
    if not det.startswith("min_t "):
        return False, det
    t = det.split()[1].rstrip(",")
    return t != "None" and int(t) <= LEVEL, det


def check(tmp, sdir):
    """[(ok, line)] for one sample."""
    name = os.path.basename(sdir)
    tasks = os.path.join(tmp, "tasks")
    imp = subprocess.run([PASSFS, "import", sdir, "--out", os.path.join(tasks, name)],
                         capture_output=True, text=True)
    if imp.returncode != 0:
        return [(False, "%s: import failed: %s" % (name, imp.stderr.strip()))]
    out = os.path.join(tmp, "eager_" + name)
    ev = subprocess.run([PASSFS, "eager", "--tasks", tasks, "--task", name, "--backend", "cpu", "--out", out],
                        capture_output=True, text=True)
    if ev.returncode != 0:
        return [(False, "%s: eager failed: %s" % (name, ev.stderr.strip()))]
    with open(os.path.join(tasks, name, "graph.json"), encoding="utf-8") as f:
        variant = json.load(f)["variants"][0]
    vdir = os.path.join(out, variant["name"])
    with open(os.path.join(vdir, "manifest.json"), encoding="utf-8") as f:
        man = json.load(f)
    inputs = {s["name"]: et.load_tensor(vdir, s) for s in man["inputs"]}
    model = os.path.join(sdir, "model.py")
    params = forward_params(model)
    missing = [p for p in params if p not in inputs]
    if missing:
        return [(False, "%s: forward arguments %s are not graph inputs" % (name, missing))]
    refs = run_forward(model, [inputs[p] for p in params])
    outs = [et.load_tensor(vdir, s) for s in man["outputs"]]
    with torch.no_grad():
        oracle = graph_torch.run_variant(variant, device="cpu", inputs={k: v.clone() for k, v in inputs.items()})
    if not (len(refs) == len(outs) == len(oracle)):
        return [(False, "%s: forward() returns %d outputs, eager %d, graph_torch %d" %
                 (name, len(refs), len(outs), len(oracle)))]
    lines = []
    for spec, got, orc, ref in zip(man["outputs"], outs, oracle, refs):
        ok1, d1 = agree(got, ref, spec["dtype"])
        ok2, d2 = agree(orc, ref, spec["dtype"])
        lines.append((ok1 and ok2, "%s %s %s: eager %s; graph_torch %s" % (name, spec["name"], spec["dtype"], d1, d2)))
    return lines


def main():
    if not os.access(PASSFS, os.X_OK):
        print("test_import_values_torch: no passfs binary at %s (set PASSFS)" % PASSFS)
        return 1
    samples = sorted(os.path.dirname(p) for p in glob.glob(os.path.join(SAMPLES, "*", "model.py")))
    if not samples:
        print("FAIL no samples under %s" % SAMPLES)
        return 1
    tmp = tempfile.mkdtemp(prefix="passfs-import-values-")
    os.makedirs(os.path.join(tmp, "tasks"))
    passed = failed = 0
    try:
        for s in samples:
            try:
                results = check(tmp, s)
            except Exception as e:  # one broken sample must not hide the others
                results = [(False, "%s: %s: %s" % (os.path.basename(s), type(e).__name__, e))]
            for ok, line in results:
                print("%s %s" % ("ok  " if ok else "FAIL", line))
                passed += ok
                failed += not ok
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    print("%d passed, %d failed" % (passed, failed))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
