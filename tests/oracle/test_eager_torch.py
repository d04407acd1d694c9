#!/usr/bin/python3
"""Oracle test for the eager baseline: PyTorch recomputes every variant.

For every bundled task (tasks/<id>/graph.json) and every variant: run
`$PASSFS eager --task ID --out TMP` (cpu backend), load the inputs it generated
and the outputs it computed, run the variant in torch on those inputs
(tests/oracle/graph_torch.py; every op on float16/bfloat16 tensors computed in
float32 and rounded to its result dtype, as PyTorch does on a GPU: see
run_op_opmath), and compare every output: same
shape and dtype, NaN/Inf in the same places, and the rest within the ES_t
tolerance of docs/scoring.md at the level below (docs/eager.md says why):

    float32  t = -5   atol 1e-5, rtol 10^(-5 * 1.1772)
    float64  t = -5   atol = rtol = 10^(-7)
    float16  t = -3   atol 1e-3, rtol 10^(-3 * 0.6)
    bfloat16 t = -2   atol 1e-2, rtol 10^(-2 * 0.3592)
    ints, bool        equal

Every float input and output of more than one element must vary: a constant
one would let a pass that writes a constant be "right" (the input generator's
std floor, engine/eval/inputs.h, is what keeps inputs from being constant).

Then the eager suite's tasks (tests/eager/tasks), once as planned for the cpu
backend and once with the GPU's launches (PASSFS_EAGER_GEOMETRY=gpu, the plan
eager's modeled time is counted on).  Then the same for the PassNet samples in ../shared/passnet-samples that have a
weight_meta.py, each imported with `$PASSFS import` first (skipped with a note
when the importer is not available or rejects the sample).

Prints one line per variant (with the smallest t at which it agrees) and
"N passed, N failed".  Environment: PASSFS (the binary; default build/passfs),
EAGER_TASKS (comma-separated task ids to limit the run), EAGER_BACKEND (cpu).
Run from the repository root with /usr/bin/python3 (ctest does).
"""
import glob
import json
import math
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time

import torch

REPO = os.getcwd()
sys.path.insert(0, os.path.join(REPO, "tests", "oracle"))
import graph_torch  # noqa: E402

PASSFS = os.environ.get("PASSFS") or os.path.join(REPO, "build", "passfs")
BACKEND = os.environ.get("EAGER_BACKEND", "cpu")
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from samples import samples_dir  # noqa: E402
SAMPLES = samples_dir() or os.path.join(REPO, "..", "shared", "passnet-samples")

DTYPES = graph_torch.DTYPES
K = {"float32": 1.1772, "float16": 0.6, "bfloat16": 0.3592}
LEVEL = {"float32": -5, "float64": -5, "float16": -3, "bfloat16": -2}


_run_op = graph_torch.run_op


def run_op_opmath(op, args, attrs, device):
    """Every op with float16/bfloat16 tensor operands computed in float32 and
    rounded once to the dtype the op gives: PyTorch's CUDA semantics (opmath;
    the flash / memory-efficient kernels for scaled_dot_product_attention,
    whose scores and probabilities stay in float32), which eager follows.
    torch 1.13's CPU kernels for these dtypes sometimes compute in the 16-bit
    type itself (bilinear interpolate in bfloat16) or round intermediates
    (the math-path attention), which is further from the exact value than
    eager is.  Data movement (views, cat, pad, to) is exact either way.
    Also drops relu/silu's `inplace` attribute (no effect on values), which
    graph_torch's op table does not accept."""
    if op in ("relu", "silu") and "inplace" in attrs:
        attrs = {k: v for k, v in attrs.items() if k != "inplace"}
    if device != "meta" and op not in graph_torch.MOVEMENT and \
            any(torch.is_tensor(a) and a.dtype in graph_torch.HALF for a in args):
        ref = _run_op(op, [graph_torch._meta_like(a) for a in args], attrs, "meta")
        return graph_torch._cast_like(graph_torch._call(op, [graph_torch._upcast(a) for a in args], attrs), ref)
    return _run_op(op, args, attrs, device)


graph_torch.run_op = run_op_opmath


def tolerance(dtype, t):
    """(atol, rtol) at level t (docs/scoring.md; t >= 1 counts as 1)."""
    t = min(t, 1)
    if dtype == "float64":
        return 10.0 ** (1.4 * t), 10.0 ** (1.4 * t)
    return 10.0 ** t, 10.0 ** (K[dtype] * t)


def load_tensor(d, spec):
    dt = DTYPES[spec["dtype"]]
    path = os.path.join(d, spec["file"])
    shape = tuple(spec["shape"])
    buf = bytearray(os.path.getsize(path))
    if not buf:
        return torch.empty(shape, dtype=dt)
    with open(path, "rb") as f:
        f.readinto(buf)
    return torch.frombuffer(buf, dtype=dt).reshape(shape)


def passes(err, absref, dtype, t):
    atol, rtol = tolerance(dtype, t)
    return bool((err <= absref * rtol + atol).all())


def spread_problems(variant, man, inputs, outputs):
    """What makes verification blind (docs/eager.md): a float input of
    more than one element generated constant (literal data is the task's own,
    and left alone), or a float output of more than one element that is
    constant (a pass writing that constant would be right).  Returns a list of
    problems, empty when there are none."""
    bad = []
    literal = {s["name"] for s in variant["inputs"] if "data" in s}
    for spec in man["inputs"]:
        x = inputs[spec["name"]]
        if spec["name"] in literal:
            continue
        if x.is_floating_point() and x.numel() > 1 and bool((x == x.reshape(-1)[0]).all()):
            bad.append("input %s is constant" % spec["name"])
    for spec, y in zip(man["outputs"], outputs):
        if y.is_floating_point() and y.numel() > 1 and bool((y == y.reshape(-1)[0]).all()):
            bad.append("output %s is constant (%g)" % (spec["name"], float(y.reshape(-1)[0])))
    return bad


def compare(got, ref, dtype):
    """(ok, detail): the eager output `got` against torch's `ref`."""
    if tuple(got.shape) != tuple(ref.shape):
        return False, "shape %s, torch %s" % (list(got.shape), list(ref.shape))
    if graph_torch.dtype_name(ref.dtype) != dtype:
        return False, "dtype %s, torch %s" % (dtype, graph_torch.dtype_name(ref.dtype))
    if not ref.dtype.is_floating_point:
        ok = bool((got == ref).all())
        return ok, "exact" if ok else "%d elements differ" % int((got != ref).sum())
    # float32 arithmetic is exact enough here: its rounding (6e-8 relative) is
    # far below every tolerance compared against; float64 for float64
    wide = torch.float64 if dtype == "float64" else torch.float32
    g, r = got.to(wide), ref.to(wide)
    gf, rf = torch.isfinite(g), torch.isfinite(r)
    if not (bool(gf.all()) and bool(rf.all())):
        gn, rn = torch.isnan(g), torch.isnan(r)
        if not torch.equal(gn, rn):
            return False, "NaN in %d places, torch %d" % (int(gn.sum()), int(rn.sum()))
        inf = ~gf & ~gn
        if not torch.equal(inf, ~rf & ~rn) or not torch.equal(g[inf], r[inf]):
            return False, "infinities differ"
        g, r = g[gf], r[gf]
    if g.numel() == 0:
        return True, "no finite values"
    err = (g - r).abs_()
    absr = r.abs()
    maxabs = float(err.max())
    maxrel = float((err / absr.clamp_min(1e-30)).max())
    # the smallest t in -10..1 that passes (passing is monotonic in t)
    lo, hi = -10, 2
    while lo < hi:
        mid = (lo + hi) // 2
        if passes(err, absr, dtype, mid):
            hi = mid
        else:
            lo = mid + 1
    min_t = lo if lo <= 1 else None
    ok = min_t is not None and min_t <= LEVEL[dtype]
    return ok, "min_t %s, max abs %.2e, max rel %.2e" % (min_t, maxabs, maxrel)


class EagerRun:
    """`passfs eager` on one task, started in the background: the next task's
    eager runs while this one is compared (the two halves use different
    resources: the emulated GPU's threads, and torch plus file reading)."""

    def __init__(self, tmp, tasks_dir, task_id, label, env=None):
        self.tasks_dir, self.task_id, self.label = tasks_dir, task_id, label
        self.out = os.path.join(tmp, "eager_%s_%s" % (label, task_id))
        self.t0 = time.time()
        self.proc = subprocess.Popen([PASSFS, "eager", "--tasks", tasks_dir, "--task", task_id, "--backend",
                                      BACKEND, "--out", self.out], stdout=subprocess.PIPE,
                                     stderr=subprocess.PIPE, text=True,
                                     env=dict(os.environ, **env) if env else None)

    def wait(self):
        _, err = self.proc.communicate()
        return self.proc.returncode, err, time.time() - self.t0


def check_task(run):
    """Waits for a task's eager run and compares every variant; returns (passed, failed)."""
    task_id, label, out = run.task_id, run.label, run.out
    rc, stderr, eager_s = run.wait()
    with open(os.path.join(run.tasks_dir, task_id, "graph.json"), encoding="utf-8") as f:
        doc = json.load(f)
    if rc != 0:
        msg = (stderr.strip().splitlines() or ["exit %d" % rc])[-1]
        for v in doc["variants"]:
            print("FAIL %s %s/%s: passfs eager failed: %s" % (label, task_id, v["name"], msg))
        shutil.rmtree(out, ignore_errors=True)
        return 0, len(doc["variants"])
    passed = failed = 0
    t_torch = 0.0
    for v in doc["variants"]:
        vdir = os.path.join(out, v["name"])
        try:
            with open(os.path.join(vdir, "manifest.json"), encoding="utf-8") as f:
                man = json.load(f)
            inputs = {s["name"]: load_tensor(vdir, s) for s in man["inputs"]}
            t1 = time.time()
            with torch.no_grad():
                refs = graph_torch.run_variant(v, device="cpu", inputs=inputs)
            t_torch += time.time() - t1
            details, ok = [], True
            if len(refs) != len(man["outputs"]):
                ok, details = False, ["%d outputs, torch %d" % (len(man["outputs"]), len(refs))]
            else:
                outs = [load_tensor(vdir, spec) for spec in man["outputs"]]
                for spec, got, ref in zip(man["outputs"], outs, refs):
                    good, det = compare(got, ref, spec["dtype"])
                    ok &= good
                    details.append("%s %s: %s" % (spec["name"], spec["dtype"], det))
                blind = spread_problems(v, man, inputs, outs)
                if blind:
                    ok = False
                    details.append("verification would be blind: " + ", ".join(blind))
            print("%s %s %s/%s: %s (eager %.1f ms)" % ("ok  " if ok else "FAIL", label, task_id, v["name"],
                                                     "; ".join(details), man.get("eager_ms", 0)))
        except Exception as e:  # a broken variant must not stop the others
            ok = False
            print("FAIL %s %s/%s: %s: %s" % (label, task_id, v["name"], type(e).__name__, e))
        passed += ok
        failed += not ok
        sys.stdout.flush()
    shutil.rmtree(out, ignore_errors=True)
    print("     %s: passfs eager %.1f s (overlapped), torch %.1f s" % (task_id, eager_s, t_torch))
    return passed, failed


def task_ids(tasks_dir):
    return sorted(d for d in os.listdir(tasks_dir) if os.path.isfile(os.path.join(tasks_dir, d, "graph.json")))


def collect(tmp, only):
    """(tasks_dir, id, label[, env]) of every bundled task, then every eager
    suite task (tests/eager/tasks: shapes that take plans the bundled tasks do
    not, such as split reductions) twice, with the cpu backend's launches and
    with the GPU's (PASSFS_EAGER_GEOMETRY=gpu), then every importable sample."""
    jobs = []
    tasks_dir = os.path.join(REPO, "tasks")
    for tid in task_ids(tasks_dir):
        if not only or tid in only:
            jobs.append((tasks_dir, tid, "task"))
    suite = os.path.join(REPO, "tests", "eager", "tasks")
    for tid in task_ids(suite) if os.path.isdir(suite) else []:
        if not only or tid in only:
            jobs.append((suite, tid, "suite"))
            jobs.append((suite, tid, "suite-gpu-geometry", {"PASSFS_EAGER_GEOMETRY": "gpu"}))
    samples = sorted(glob.glob(os.path.join(SAMPLES, "*", "weight_meta.py")))
    probe = subprocess.run([PASSFS, "import", "--help"], capture_output=True, text=True)
    if not samples:
        print("note: no PassNet samples under %s" % SAMPLES)
    elif probe.returncode != 0:
        print("note: `passfs import` is not available yet; PassNet samples skipped")
    else:
        stasks = os.path.join(tmp, "tasks")
        os.makedirs(stasks)
        for meta in samples:
            sdir = os.path.dirname(meta)
            sid = "s_" + "".join(c if c.isalnum() or c in "_.-" else "_" for c in os.path.basename(sdir))
            if only and sid not in only:
                continue
            imp = subprocess.run([PASSFS, "import", sdir, "--out", os.path.join(stasks, sid)],
                                 capture_output=True, text=True)
            if imp.returncode != 0:
                msg = (imp.stderr.strip().splitlines() or ["?"])[-1]
                print("note: sample %s not imported: %s" % (os.path.basename(sdir), msg))
                continue
            jobs.append((stasks, sid, "sample"))
    return jobs


def main():
    if not os.access(PASSFS, os.X_OK):
        print("test_eager_torch: no passfs binary at %s (set PASSFS)" % PASSFS)
        return 1
    torch.set_num_threads(max(1, os.cpu_count() or 1))
    only = [x for x in os.environ.get("EAGER_TASKS", "").split(",") if x]
    start = time.time()
    passed = failed = 0
    # tensors go through files: keep them in memory where there is a tmpfs
    shm = "/dev/shm" if os.path.isdir("/dev/shm") and os.access("/dev/shm", os.W_OK) else None
    tmp = tempfile.mkdtemp(prefix="passfs_eager_", dir=shm)
    # a timeout's SIGTERM unwinds through the cleanup below (by default it
    # would leave the tensors, 150 MB, in /dev/shm)
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    runs = []
    try:
        jobs = collect(tmp, only)
        if jobs:
            runs.append(EagerRun(tmp, *jobs[0]))
        for i in range(len(jobs)):
            if i + 1 < len(jobs):
                runs.append(EagerRun(tmp, *jobs[i + 1]))
            p, f = check_task(runs[i])
            passed += p
            failed += f
    finally:
        for r in runs:
            if r.proc.poll() is None:
                r.proc.kill()
                r.proc.wait()
        shutil.rmtree(tmp, ignore_errors=True)
    print("%d passed, %d failed (%.0f s)" % (passed, failed, time.time() - start))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
