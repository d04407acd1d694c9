#!/usr/bin/python3
"""Oracle test for `passfs import`: PyTorch itself says what the outputs are.

For every sample in ../shared/passnet-samples that has a weight_meta.py:
import it with passfs, ask `passfs tasks --show ID --json` for the inferred
outputs, run the sample's model.py in torch on inputs built from
weight_meta.py, and compare every output's shape and dtype, in order.  Also:
the samples without weight_meta.py must fail naming weight_meta.py (and, with
a weight_meta.py written here, import as two variants that match torch); a broken
model.py must fail naming model.py and its line; one model.py with three
PassNet weight_meta variants (v2-weight-meta/) gives three variants that all
match torch.

Run from the repository root with PASSFS pointing at the binary (ctest does).
float16 does not run on the CPU in torch 1.13, so a sample whose ops lack CPU
kernels for its dtype is run on the "meta" device (shapes and dtypes only,
which is all this test compares).
"""
import inspect
import json
import math
import os
import shutil
import subprocess
import sys
import tempfile
import warnings

import torch
import torch.nn.functional as F

REPO = os.getcwd()
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from samples import samples_dir  # noqa: E402
SAMPLES = samples_dir() or os.path.join(REPO, "..", "shared", "passnet-samples")
PASSFS = os.environ.get("PASSFS") or os.path.join(REPO, "build", "passfs")

DTYPES = {
    "torch.float32": torch.float32, "torch.float16": torch.float16,
    "torch.bfloat16": torch.bfloat16, "torch.float64": torch.float64,
    "torch.int64": torch.int64, "torch.int32": torch.int32, "torch.bool": torch.bool,
}


# ---- what torch 1.13 lacks ---------------------------------------------------

def _sdpa(query, key, value, attn_mask=None, dropout_p=0.0, is_causal=False, scale=None,
          enable_gqa=False):
    """torch.nn.functional.scaled_dot_product_attention (PyTorch 2.x), reference form."""
    assert not enable_gqa
    L, S = query.size(-2), key.size(-2)
    s = 1.0 / math.sqrt(query.size(-1)) if scale is None else scale
    attn = query @ key.transpose(-2, -1) * s
    if is_causal:
        keep = torch.ones(L, S, dtype=torch.bool, device=query.device).tril()
        attn = attn.masked_fill(~keep, float("-inf"))
    if attn_mask is not None:
        if attn_mask.dtype == torch.bool:
            attn = attn.masked_fill(~attn_mask, float("-inf"))
        else:
            attn = attn + attn_mask.to(attn.dtype)
    attn = torch.softmax(attn, dim=-1)
    if dropout_p > 0:
        attn = torch.dropout(attn, dropout_p, True)
    return attn @ value


def install_shims():
    if not hasattr(F, "scaled_dot_product_attention"):
        F.scaled_dot_product_attention = _sdpa


# ---- running a sample in torch -----------------------------------------------

def load_meta(path):
    ns = {}
    with open(path) as f:
        exec(compile(f.read(), path, "exec"), ns)
    entries = {}
    for v in ns.values():
        if inspect.isclass(v) and hasattr(v, "name") and hasattr(v, "shape"):
            entries[v.name] = v
    return entries


def make_input(meta, device):
    dtype = DTYPES[meta.dtype]
    shape = list(meta.shape)
    data = getattr(meta, "data", None)
    if device == "meta":
        return torch.empty(shape, dtype=dtype, device="meta")
    if data is not None:
        return torch.tensor(data, dtype=dtype).reshape(shape)
    if dtype in (torch.int64, torch.int32):
        lo = getattr(meta, "min_val", None)
        hi = getattr(meta, "max_val", None)
        lo = 0 if lo is None else int(lo)
        hi = lo + 8 if hi is None else int(hi)
        return torch.randint(lo, max(hi, lo + 1), shape, dtype=dtype)
    if dtype == torch.bool:
        return torch.rand(shape) > 0.5
    mean = getattr(meta, "mean", None) or 0.0
    std = getattr(meta, "std", None)
    std = 0.1 if std is None else std
    x = torch.randn(shape, dtype=torch.float32) * std * 0.2 + mean
    lo, hi = getattr(meta, "min_val", None), getattr(meta, "max_val", None)
    if lo is not None or hi is not None:
        x = x.clamp(min=lo, max=hi)
    return x.to(dtype)


def run_torch(model_path, meta_path):
    """[(shape, dtype name)] of forward()'s outputs, and the device used."""
    ns = {}
    with open(model_path) as f:
        exec(compile(f.read(), model_path, "exec"), ns)
    module = ns["GraphModule"]()
    params = list(inspect.signature(module.forward).parameters)
    meta = load_meta(meta_path)
    last = None
    for device in ("cpu", "meta"):
        try:
            with torch.no_grad():
                args = [make_input(meta[p], device) for p in params]
                out = module(*args)
        except (RuntimeError, NotImplementedError) as e:
            last = e
            continue
        if not isinstance(out, (tuple, list)):
            out = (out,)
        return [(list(t.shape), str(t.dtype).replace("torch.", "")) for t in out], device
    raise last


# ---- running passfs ------------------------------------------------------------

def passfs(*args):
    p = subprocess.run([PASSFS] + list(args), stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                       universal_newlines=True, timeout=120)
    return p.returncode, p.stdout, p.stderr


def passfs_outputs(tasks_dir, task_id):
    rc, out, err = passfs("tasks", "--tasks", tasks_dir, "--show", task_id, "--json")
    if rc != 0:
        raise AssertionError("passfs tasks --show failed: " + err.strip())
    doc = json.loads(out)
    return {v["name"]: [(o["shape"], o["dtype"]) for o in v["outputs"]] for v in doc["variants"]}, \
        [v["name"] for v in doc["variants"]]


def compare(expected, got):
    if len(expected) != len(got):
        return "torch returns %d outputs, passfs has %d" % (len(expected), len(got))
    for i, (e, g) in enumerate(zip(expected, got)):
        if list(e[0]) != list(g[0]) or e[1] != g[1]:
            return "output %d: torch %s%s, passfs %s%s" % (i, e[1], e[0], g[1], g[0])
    return None


# ---- the checks ------------------------------------------------------------------

class Results:
    def __init__(self):
        self.passed = self.failed = 0

    def ok(self, name, detail=""):
        self.passed += 1
        print("ok    %s%s" % (name, "  " + detail if detail else ""))

    def fail(self, name, why):
        self.failed += 1
        print("FAIL  %s: %s" % (name, why))


def check_sample(res, tmp, d):
    name = os.path.basename(d)
    rc, out, err = passfs("import", d, "--out", os.path.join(tmp, name))
    if rc != 0:
        res.fail(name, "import failed: " + err.strip())
        return
    try:
        got, names = passfs_outputs(tmp, name)
        expected, device = run_torch(os.path.join(d, "model.py"), os.path.join(d, "weight_meta.py"))
    except Exception as e:  # a failure of this sample, not of the test run
        res.fail(name, "%s: %s" % (type(e).__name__, e))
        return
    why = compare(expected, got[names[0]])
    if why:
        res.fail(name, why)
    else:
        res.ok(name, "%s %s" % (names[0], device))


def check_missing_meta(res, tmp, d):
    name = os.path.basename(d)
    rc, out, err = passfs("import", d, "--out", os.path.join(tmp, name))
    if rc != 0 and "weight_meta.py" in err and "\n" not in err.strip():
        res.ok(name, "refused: " + err.strip())
    else:
        res.fail(name, "expected a one-line error naming weight_meta.py, got rc=%d: %r" % (rc, err))
    if os.path.exists(os.path.join(tmp, name)):
        res.fail(name, "a failed import left %s behind" % os.path.join(tmp, name))


BROKEN_MODEL = """import torch

class GraphModule(torch.nn.Module):

    def forward(self, in_0, in_1, in_2, w_0, w_1):
        tmp_0 = in_1 + in_2
        tmp_1 = torch.roll(tmp_0, 1)
        return (tmp_1,)
"""


def check_broken_model(res, tmp):
    """An unsupported call is an error naming model.py and the line."""
    src = os.path.join(SAMPLES, "h14_albert-xlarge-v1_0_start5_end10_0")
    d = os.path.join(tmp, "broken_sample")
    os.mkdir(d)
    shutil.copy(os.path.join(src, "weight_meta.py"), d)
    with open(os.path.join(d, "model.py"), "w") as f:
        f.write(BROKEN_MODEL)
    rc, out, err = passfs("import", d, "--out", os.path.join(tmp, "broken"))
    want = os.path.join(d, "model.py") + ":7: unsupported call torch.roll"
    if rc != 0 and want in err:
        res.ok("broken model.py", err.strip())
    else:
        res.fail("broken model.py", "expected %r, got rc=%d: %r" % (want, rc, err))


# A model.py written for the three PassNet weight_meta variants of one BiSeNetV2
# subgraph in v2-weight-meta/ (batch norm in eval, residual add, relu).
BISENET_MODEL = """import torch

class GraphModule(torch.nn.Module):

    def forward(self, in_0, in_1, in_2, in_3, in_4, in_5):
        tmp_0 = torch.nn.functional.batch_norm(in_4, in_0, in_1, in_3, in_2, False, 0.1, 1e-05)
        tmp_1 = tmp_0 + in_5
        tmp_2 = torch.nn.functional.relu(tmp_1, inplace=True)
        return (tmp_2,)
"""


def check_variants(res, tmp):
    vdir = os.path.join(SAMPLES, "v2-weight-meta")
    metas = sorted(os.path.join(vdir, f) for f in os.listdir(vdir) if f.endswith(".weight_meta.py"))
    d = os.path.join(tmp, "bisenet_sample")
    os.mkdir(d)
    with open(os.path.join(d, "model.py"), "w") as f:
        f.write(BISENET_MODEL)
    args = ["import", d, "--out", os.path.join(tmp, "bisenet")]
    for m in metas:
        args += ["--weight-meta", m]
    rc, out, err = passfs(*args)
    if rc != 0:
        res.fail("v2-weight-meta variants", "import failed: " + err.strip())
        return
    got, names = passfs_outputs(tmp, "bisenet")
    want_names = [os.path.basename(m).split(".")[-3] for m in metas]
    if names != want_names:
        res.fail("v2-weight-meta variants", "variant names %s, expected %s" % (names, want_names))
        return
    for m, vname in zip(metas, names):
        expected, device = run_torch(os.path.join(d, "model.py"), m)
        why = compare(expected, got[vname])
        if why:
            res.fail("v2-weight-meta " + vname, why)
        else:
            res.ok("v2-weight-meta " + vname, device)


# weight_meta.py files written here for the two samples that come without one,
# so their model.py (method forms .sigmoid() and .sum(dim=, keepdim=), split,
# @) is checked too; each is imported as two variants (two sample dirs).
SYNTH_META = {
    "x01_bat_resnext26ts_0_start6_end11_1": [
        ("in_0", [1, 16, 8, 8]), ("in_1", [1, 4, 8, 8]), ("w_0", [2]), ("w_1", [2, 16, 1, 1])],
    "x02_botnet26t_256_0_start2_end12_0": [("in_0", [4, 768, 8, 8])],
}


def write_meta(path, entries, dtype):
    with open(path, "w") as f:
        for name, shape in entries:
            f.write("class Program_weight_tensor_meta_%s:\n\tname = \"%s\"\n\toriginal_name = \"%s\"\n"
                    "\tshape = %r\n\tdtype = \"%s\"\n\tdevice = \"cuda:0\"\n\tmean = 0.000\n"
                    "\tstd = 0.020\n\n\n" % (name, name, name, shape, dtype))


def check_synthesized(res, tmp):
    for sample, entries in sorted(SYNTH_META.items()):
        src = os.path.join(SAMPLES, sample)
        if not os.path.isfile(os.path.join(src, "model.py")):
            res.fail(sample, "sample missing")
            continue
        dirs = []
        for dtype in ("torch.float32", "torch.bfloat16"):
            d = os.path.join(tmp, "%s.%s" % (sample, dtype[6:]))
            os.mkdir(d)
            shutil.copy(os.path.join(src, "model.py"), d)
            write_meta(os.path.join(d, "weight_meta.py"), entries, dtype)
            dirs.append(d)
        task = sample[:3] + "_synth"
        rc, out, err = passfs("import", *dirs, "--out", os.path.join(tmp, task))
        if rc != 0:
            res.fail(sample + " (written weight_meta)", "import failed: " + err.strip())
            continue
        got, names = passfs_outputs(tmp, task)
        if names != ["float32_0", "bfloat16_0"]:
            res.fail(sample + " (written weight_meta)", "variant names %s" % names)
            continue
        for d, vname in zip(dirs, names):
            expected, device = run_torch(os.path.join(d, "model.py"), os.path.join(d, "weight_meta.py"))
            why = compare(expected, got[vname])
            if why:
                res.fail("%s %s (written weight_meta)" % (sample, vname), why)
            else:
                res.ok("%s %s (written weight_meta)" % (sample, vname), device)


def check_cli(res, tmp):
    """--force, --id, the output directory and usage errors."""
    d = os.path.join(SAMPLES, "h16_detr-resnet-101-panoptic_0_start24_end26_6")
    out = os.path.join(tmp, "cli_task")
    problems = []

    def expect(cond, what):
        if not cond:
            problems.append(what)

    rc, so, se = passfs("import", d, "--out", out)
    expect(rc == 0 and so == "float32_0: tmp_1 float32[1,8,400,400]\n", "first import: %d %r %r" % (rc, so, se))
    with open(os.path.join(out, "graph.json")) as f:
        doc = json.load(f)
    expect(doc["id"] == "cli_task" and doc["source"] == os.path.basename(d) and
           doc["summary"] == "bmm > view (detr-resnet-101-panoptic)", "document: %r" % {
               k: doc.get(k) for k in ("id", "summary", "source")})
    rc, so, se = passfs("import", d, "--out", out)
    expect(rc == 1 and "already exists (pass --force to overwrite)" in se, "no --force: %d %r" % (rc, se))
    rc, so, se = passfs("import", d, "--out", out + "/", "--force", "--id", "other.id")
    with open(os.path.join(out, "graph.json")) as f:
        expect(json.load(f)["id"] == "other.id", "--id not used")
    expect(rc == 0, "--force: %d %r" % (rc, se))
    expect(sorted(os.listdir(out)) == ["graph.json"], "leftovers in the task dir: %s" % os.listdir(out))
    rc, so, se = passfs("import", d, "--out", os.path.join(tmp, "no", "such", "dir"))
    expect(rc == 2 and "does not exist" in se, "missing parent: %d %r" % (rc, se))
    rc, so, se = passfs("import", d, "--out", os.path.join(tmp, "bad name"))
    expect(rc == 2 and "pass --id" in se, "bad id: %d %r" % (rc, se))
    rc, so, se = passfs("import", d)
    expect(rc == 2 and "--out TASK_DIR is required" in se, "no --out: %d %r" % (rc, se))
    rc, so, se = passfs("import", "--out", out)
    expect(rc == 2 and "no SAMPLE_DIR" in se, "no sample: %d %r" % (rc, se))
    rc, so, se = passfs("import", d, "--out", out, "--bogus")
    expect(rc == 2 and "unknown option '--bogus'" in se, "bad option: %d %r" % (rc, se))
    rc, so, se = passfs("import", os.path.join(tmp, "nonexistent"), "--out", os.path.join(tmp, "t2"))
    expect(rc == 2 and "nonexistent" in se and not os.path.exists(os.path.join(tmp, "t2")),
           "missing sample: %d %r" % (rc, se))
    rc, so, se = passfs("import", "--help")
    expect(rc == 0 and so.startswith("usage: passfs import") and "--weight-meta" in so, "--help")
    rc, so, se = passfs("import", d, d, "--out", os.path.join(tmp, "two"))
    expect(rc == 0 and so.splitlines() == ["float32_0: tmp_1 float32[1,8,400,400]",
                                            "float32_1: tmp_1 float32[1,8,400,400]"], "two dirs: %r %r" % (so, se))
    rc, so, se = passfs("import", d, os.path.join(SAMPLES, "h27_fairseq-dense-355M_0_start52_end55_3"),
                        "--out", os.path.join(tmp, "mixed"))
    expect(rc == 2 and "differ" in se and "h16_" in se and "h27_" in se, "different graphs: %d %r" % (rc, se))
    if problems:
        res.fail("command line", "; ".join(problems))
    else:
        res.ok("command line")


def main():
    warnings.filterwarnings("ignore", category=UserWarning)  # F.sigmoid is deprecated
    install_shims()
    torch.manual_seed(0)
    if samples_dir() is None:
        # The samples are test data outside the repository; without them
        # there is nothing to compare.
        print("SKIP  no PassNet samples (set PASSFS_SAMPLES, or put them at ../shared/passnet-samples)")
        return 0
    if not os.access(PASSFS, os.X_OK):
        print("FAIL  no passfs binary at %s (set PASSFS)" % PASSFS)
        return 1
    res = Results()
    tmp = tempfile.mkdtemp(prefix="passfs-import-oracle-")
    try:
        for entry in sorted(os.listdir(SAMPLES)):
            d = os.path.join(SAMPLES, entry)
            if not os.path.isfile(os.path.join(d, "model.py")):
                continue
            if os.path.isfile(os.path.join(d, "weight_meta.py")):
                check_sample(res, tmp, d)
            else:
                check_missing_meta(res, tmp, d)
        check_broken_model(res, tmp)
        check_cli(res, tmp)
        check_synthesized(res, tmp)
        check_variants(res, tmp)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    print("%d passed, %d failed" % (res.passed, res.failed))
    return 1 if res.failed else 0


if __name__ == "__main__":
    sys.exit(main())
