#!/usr/bin/python3
"""Import coverage of real PassNet/GraphNet samples: `passfs import`, then values vs torch.

    bench/import_survey.py SAMPLES_DIR [--passfs BIN] [--timeout S] [--keep DIR] [--list FILE]

SAMPLES_DIR holds one directory per sample (model.py and weight_meta.py, as
PassNet stores them; nested directories are searched too).  For each sample:

1. `passfs import SAMPLE --out TASK` (its first error line is recorded as it is);
2. if it imported: `passfs eager --backend cpu` on the task, then the sample's
   own GraphModule.forward() in torch on exactly the inputs eager generated
   (the approach of tests/oracle/test_import_values_torch.py; model.py's
   `device(...)` runs on the CPU, and torch 1.13 gets a reference
   scaled_dot_product_attention);
3. the worst (largest) of the outputs' smallest passing t (the ES_t tolerance
   ladder of tests/oracle/test_eager_torch.py); an output agrees at t <= -4.
   The table also counts the inputs that are constant: weight_meta.py rounds
   std to 3 decimals, and std = 0.000 gives a constant input, against which
   agreement is weaker evidence.

Where torch 1.13 has no CPU kernel for a float16/bfloat16 op (addmm), the
sample runs with those inputs in float32 and its outputs are cast to eager's
dtype (the detail column says so); a GPU computes such ops in float32 too.

Only the first variant is compared (a sample directory is one variant).  Each
step runs under a time cap (--timeout, default 60 s per sample); a sample that
runs out is recorded as a timeout.

Prints one table row per sample, then the import rate, the agreement rate and
the unsupported calls/constructs with the number of samples each stops (the
error text with the file, line and sample-specific names taken out).  --list
FILE writes the same table as tab-separated lines.

Run from the repository root with torch installed (/usr/bin/python3 here).
"""
import argparse
import collections
import inspect
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time

import torch

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(REPO, "tests", "oracle"))
sys.dont_write_bytecode = True
import test_eager_torch as et  # noqa: E402
import test_import_torch as it  # noqa: E402

LEVEL = -4


class Timeout(Exception):
    pass


def _alarm(signum, frame):
    raise Timeout()


def find_samples(root):
    out = []
    for d, dirs, files in os.walk(root):
        dirs.sort()
        if "model.py" in files:
            out.append(d)
    return sorted(out, key=os.path.basename)


def run_forward(model_path, args):
    ns = {}
    with open(model_path) as f:
        exec(compile(f.read(), model_path, "exec"), ns)
    ns["device"] = lambda *a, **k: torch.device("cpu")
    module = ns["GraphModule"]()
    params = list(inspect.signature(module.forward).parameters)
    with torch.no_grad():
        out = module(*[args[p].clone() for p in params])
    return list(out) if isinstance(out, (tuple, list)) else [out]


def run_forward_upcast(model_path, args, dtypes):
    """run_forward with float16/bfloat16 inputs computed in float32 and the
    outputs cast to `dtypes` (eager's): torch 1.13 has no CPU kernels for some
    half-precision ops (addmm), where the GPU computes in float32 anyway."""
    up = {k: v.float() if v.dtype in (torch.float16, torch.bfloat16) else v for k, v in args.items()}
    return [r.to(dt) for r, dt in zip(run_forward(model_path, up), dtypes)]


def worst_t(outs, refs, specs):
    """(worst min_t over the outputs or None, detail of the worst)."""
    worst, detail = -10, ""
    for spec, got, ref in zip(specs, outs, refs):
        _, det = et.compare(got, ref, spec["dtype"])
        if not ref.dtype.is_floating_point:
            t = -10 if det == "exact" else None
        elif det == "no finite values":
            t = -10
        elif det.startswith("min_t "):
            s = det.split()[1].rstrip(",")
            t = None if s == "None" else int(s)
        else:
            t = None
        if t is None:
            return None, "%s: %s" % (spec["name"], det)
        if t >= worst:
            worst, detail = t, "%s: %s" % (spec["name"], det)
    return worst, detail


def construct(err):
    """The unsupported call or construct an import error names, without the
    sample-specific parts (file, line, variable names, shapes)."""
    m = re.search(r"unsupported (call|method|tensor attribute) (\S+)", err)
    if m:
        return "unsupported %s %s" % (m.group(1), m.group(2))
    m = re.search(r"unsupported (statement|syntax near) ('[^']*')", err)
    if m:
        return "unsupported %s %s" % (m.group(1), m.group(2))
    m = re.search(r"unknown keyword argument '([^']*)' for (\S+)", err)
    if m:
        return "keyword %s of %s" % (m.group(1), m.group(2))
    m = re.search(r"\(([a-z_0-9]+)\): ", err)
    if m:
        return "graph rejects %s: %s" % (m.group(1), re.sub(r".*\(%s\): " % m.group(1), "", err)[:80])
    if "no weight_meta.py" in err:
        return "no weight_meta.py"
    err = re.sub(r"^passfs import: ", "", err)
    err = re.sub(r"^\S+:\d+: ", "", err)
    return re.sub(r"'[^']*'|\b(tmp|in|w)_\d+\b|\d+", "N", err)[:100]


def survey(sample, work, passfs, timeout):
    """A result dict for one sample."""
    name = os.path.basename(sample.rstrip("/"))
    res = {"sample": name, "imported": False, "error": "", "t": None, "detail": "", "const": ""}
    tasks = os.path.join(work, "tasks")
    task = os.path.join(tasks, name)
    t0 = time.time()
    try:
        imp = subprocess.run([passfs, "import", sample, "--out", task, "--force"],
                             capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        res["error"] = "import timeout (%d s)" % timeout
        return res
    if imp.returncode != 0:
        lines = [l for l in imp.stderr.strip().splitlines() if l.startswith("passfs import:")]
        res["error"] = (lines or imp.stderr.strip().splitlines() or ["rc %d" % imp.returncode])[-1]
        return res
    res["imported"] = True
    left = max(1, int(timeout - (time.time() - t0)))
    out = os.path.join(work, "eager_" + name)
    shutil.rmtree(out, ignore_errors=True)
    try:
        ev = subprocess.run([passfs, "eager", "--tasks", tasks, "--task", name, "--backend", "cpu",
                             "--out", out], capture_output=True, text=True, timeout=left)
    except subprocess.TimeoutExpired:
        res["detail"] = "eager timeout"
        return res
    if ev.returncode != 0:
        res["detail"] = "eager failed: " + (ev.stderr.strip().splitlines() or ["?"])[-1]
        return res
    with open(os.path.join(task, "graph.json"), encoding="utf-8") as f:
        variant = json.load(f)["variants"][0]
    vdir = os.path.join(out, variant["name"])
    with open(os.path.join(vdir, "manifest.json"), encoding="utf-8") as f:
        man = json.load(f)
    inputs = {s["name"]: et.load_tensor(vdir, s) for s in man["inputs"]}
    # weight_meta.py rounds std to 3 decimals: std = 0.000 gives a constant
    # input, which makes agreement weaker evidence; count them
    const = sum(1 for v in inputs.values() if v.numel() < 2 or bool((v == v.reshape(-1)[0]).all()))
    res["const"] = "%d/%d" % (const, len(inputs))
    model = os.path.join(sample, "model.py")
    left = max(1, int(timeout - (time.time() - t0)))
    signal.signal(signal.SIGALRM, _alarm)
    signal.alarm(left)
    outs = [et.load_tensor(vdir, s) for s in man["outputs"]]
    upcast = ""
    try:
        try:
            refs = run_forward(model, inputs)
        except RuntimeError as e:
            if "not implemented for 'Half'" not in str(e) and "not implemented for 'BFloat16'" not in str(e):
                raise
            refs = run_forward_upcast(model, inputs, [o.dtype for o in outs])
            upcast = " (torch in float32, cast back: %s)" % str(e).strip().splitlines()[0]
    except Timeout:
        res["detail"] = "torch timeout"
        return res
    except KeyError as e:
        res["detail"] = "forward argument %s is no graph input" % e
        return res
    except Exception as e:  # imported, but torch could not run the sample
        res["detail"] = "torch: %s: %s" % (type(e).__name__, str(e).strip().splitlines()[0][:120])
        return res
    finally:
        signal.alarm(0)
    if len(outs) != len(refs):
        res["detail"] = "forward() returns %d outputs, eager %d" % (len(refs), len(outs))
        return res
    res["t"], res["detail"] = worst_t(outs, refs, man["outputs"])
    res["detail"] += upcast
    shutil.rmtree(out, ignore_errors=True)
    return res


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("samples")
    ap.add_argument("--passfs", default=os.environ.get("PASSFS") or os.path.join(REPO, "build", "passfs"))
    ap.add_argument("--timeout", type=int, default=60)
    ap.add_argument("--keep", help="write the tasks and eager outputs here (default: a temporary directory)")
    ap.add_argument("--list", help="also write the table, tab-separated, to this file")
    a = ap.parse_args()
    if not os.access(a.passfs, os.X_OK):
        print("import_survey: no passfs binary at %s (--passfs)" % a.passfs)
        return 2
    it.install_shims()
    samples = find_samples(a.samples)
    if not samples:
        print("import_survey: no model.py under %s" % a.samples)
        return 2
    work = a.keep or tempfile.mkdtemp(prefix="passfs-import-survey-")
    os.makedirs(os.path.join(work, "tasks"), exist_ok=True)
    rows = []
    try:
        for s in samples:
            try:
                r = survey(s, work, a.passfs, a.timeout)
            except Exception as e:  # one broken sample must not stop the survey
                r = {"sample": os.path.basename(s), "imported": os.path.exists(
                         os.path.join(work, "tasks", os.path.basename(s), "graph.json")), "t": None,
                     "detail": "survey: %s: %s" % (type(e).__name__, e), "error": ""}
                if not r["imported"]:
                    r["error"], r["detail"] = r["detail"], ""
            rows.append(r)
            t = "" if r["t"] is None else str(r["t"])
            print("%-58s %-3s %-4s %-5s %s" % (r["sample"], "yes" if r["imported"] else "no", t,
                                              r.get("const", ""), r["error"] or r["detail"]), flush=True)
    finally:
        if not a.keep:
            shutil.rmtree(work, ignore_errors=True)
    if a.list:
        with open(a.list, "w") as f:
            f.write("sample\timported\tworst_t\tconstant_inputs\terror_or_detail\n")
            for r in rows:
                f.write("%s\t%s\t%s\t%s\t%s\n" % (r["sample"], "yes" if r["imported"] else "no",
                                                  "" if r["t"] is None else r["t"], r.get("const", ""),
                                                  r["error"] or r["detail"]))
    n = len(rows)
    imported = [r for r in rows if r["imported"]]
    agree = [r for r in imported if r["t"] is not None and r["t"] <= LEVEL]
    print()
    print("samples: %d" % n)
    print("imported: %d (%.0f%%)" % (len(imported), 100.0 * len(imported) / n))
    print("agree with torch at t <= %d: %d of %d imported (%.0f%%), %d of %d samples" %
          (LEVEL, len(agree), len(imported), 100.0 * len(agree) / max(1, len(imported)), len(agree), n))
    allc = [r for r in agree if r["const"] and r["const"].split("/")[0] == r["const"].split("/")[1]]
    print("  of which every input is constant (std 0.000 in weight_meta.py): %d" % len(allc))
    stops = collections.Counter(construct(r["error"]) for r in rows if not r["imported"])
    if stops:
        print("what stops the import (samples):")
        for c, k in sorted(stops.items(), key=lambda kv: (-kv[1], kv[0])):
            print("  %3d  %s" % (k, c))
    return 0


if __name__ == "__main__":
    sys.exit(main())
