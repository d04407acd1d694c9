"""graph_torch: run a passfs graph.json variant in PyTorch (the reference oracle).

Works with Debian's torch 1.13 (CPU) at /usr/bin/python3 and with newer torch.

    import graph_torch
    doc = graph_torch.load("tasks/vit_residual_layernorm/graph.json")
    outs = graph_torch.run_variant(doc["variants"][0], device="cpu")   # tensors
    graph_torch.infer("tasks/vit_residual_layernorm/graph.json")
        # {"f32_b1": [("t0", (1, 197, 768), "float32"), ...], ...}

Semantics follow docs/graph-format.md: each node is mapped to the PyTorch call it
stands for.  `device="meta"` computes shapes and dtypes only (fast: no data, no
arithmetic); an op without a meta kernel is run on CPU zeros instead.  On CPU,
ops that torch 1.13 does not implement for float16/bfloat16 (conv2d, layer_norm,
softmax, matmul, ...) are computed in float32 and cast back to the dtype PyTorch
would give.  Inputs follow the generation rule (PassNet's): seeded randn * std *
0.2 + mean (std missing: 0.1), clamped to min/max, then to [-100, 100]; ints
uniform in [min, max]; bools uniform > 0.5; literal data as given.  The values
are not passfs's bit for bit (different generator); shapes and dtypes are.

Command line: python3 graph_torch.py [--cpu] graph.json... prints each variant's
outputs (and, with --cpu, whether they are finite).
"""

import json
import math
import sys

import torch
import torch.nn.functional as F

DTYPES = {
    "float32": torch.float32, "float16": torch.float16, "bfloat16": torch.bfloat16,
    "float64": torch.float64, "int64": torch.int64, "int32": torch.int32, "bool": torch.bool,
}
DTYPE_NAMES = {v: k for k, v in DTYPES.items()}
HALF = (torch.float16, torch.bfloat16)


class GraphError(Exception):
    """A variant that PyTorch rejects; the message names the variant and node."""


def load(path):
    with open(path, encoding="utf-8") as f:
        return json.load(f)


def dtype_name(dt):
    return DTYPE_NAMES[dt]


# ----------------------------------------------------------------------------
# Inputs


def floored_std(std, mean, dt, n):
    """passfs's std floor (engine/eval/inputs.h): a std below 0.0005, or one whose
    draws (0.2 * std) span fewer than 4 of the dtype's spacings at |mean|,
    becomes max(0.1, 0.05 * |mean|) for a tensor of more than one element."""
    if n <= 1:
        return std
    bits = {torch.float32: 23, torch.float16: 10, torch.bfloat16: 7}.get(dt, 52)
    m = abs(mean)
    spacing = 2.0 ** (math.frexp(m)[1] - 1 - bits) if m > 0 else 0.0
    if std < 0.0005 or 0.2 * std < 4 * spacing:
        return max(std, 0.1, 0.05 * m)
    return std


def make_input(spec, gen, device="cpu"):
    """One input tensor from its spec (generation rule in the module comment)."""
    shape = tuple(spec["shape"])
    dt = DTYPES[spec["dtype"]]
    if device == "meta":
        return torch.empty(shape, dtype=dt, device="meta")
    if "data" in spec:
        return torch.tensor(spec["data"], dtype=dt).reshape(shape)
    if dt == torch.bool:
        return torch.rand(shape, generator=gen) > 0.5
    if not dt.is_floating_point:
        lo = int(spec.get("min", 0))
        hi = int(spec.get("max", lo + 1))
        return torch.randint(lo, hi + 1, shape, generator=gen, dtype=torch.int64).to(dt)
    std = spec.get("std")
    std = 0.1 if std is None else std
    mean = spec.get("mean")
    mean = 0.0 if mean is None else mean
    std = floored_std(std, mean, dt, math.prod(shape))
    t = torch.randn(shape, generator=gen, dtype=torch.float32) * (std * 0.2) + mean
    if spec.get("min") is not None or spec.get("max") is not None:
        t = t.clamp(min=spec.get("min"), max=spec.get("max"))
    t = torch.nan_to_num(t).clamp(-100.0, 100.0)
    return t.to(dt)


def make_inputs(variant, device="cpu", seed=123):
    gen = torch.Generator().manual_seed(seed)
    return {s["name"]: make_input(s, gen, device) for s in variant["inputs"]}


# ----------------------------------------------------------------------------
# Ops


def _sdpa(q, k, v, attn_mask=None, dropout_p=0.0, is_causal=False, scale=None):
    """F.scaled_dot_product_attention's math (torch 1.13 lacks it)."""
    if dropout_p:
        raise GraphError("scaled_dot_product_attention: dropout_p must be 0")
    L, S = q.size(-2), k.size(-2)
    sc = 1.0 / math.sqrt(q.size(-1)) if scale is None else scale
    attn = torch.matmul(q, k.transpose(-2, -1)) * sc
    if is_causal:
        keep = torch.ones(L, S, dtype=torch.bool, device=q.device).tril()
        attn = attn.masked_fill(~keep, float("-inf"))
    if attn_mask is not None:
        if attn_mask.dtype == torch.bool:
            attn = attn.masked_fill(~attn_mask, float("-inf"))
        else:
            attn = attn + attn_mask
    attn = torch.softmax(attn, dim=-1)
    return torch.matmul(attn, v)


def _sum_mean(fn, x, dim=None, keepdim=False, dtype=None):
    dt = DTYPES[dtype] if dtype else None
    if dim is None:
        dim = list(range(x.dim()))
    return fn(x, dim=dim, keepdim=keepdim, dtype=dt)


def _index_item(it):
    if it is None:
        return None
    if it == "...":
        return Ellipsis
    if isinstance(it, list):
        return slice(*it)
    return int(it)


def _getitem(x, index):
    if isinstance(x, (tuple, list)):
        if len(index) != 1 or not isinstance(index[0], int):
            raise GraphError("getitem on a tuple takes one integer index")
        return x[index[0]]
    return x[tuple(_index_item(i) for i in index)]


def _binary(op, a, b, alpha=1):
    if op == "add":
        if alpha == 1:
            return a + b
        return torch.add(a, b, alpha=alpha) if torch.is_tensor(a) else a + alpha * b
    if op == "sub":
        if alpha == 1:
            return a - b
        return torch.sub(a, b, alpha=alpha) if torch.is_tensor(a) else a - alpha * b
    if op == "mul":
        return a * b
    if op == "div":
        return a / b
    if op == "pow":
        return a ** b
    raise AssertionError(op)


def _interpolate(x, size=None, scale_factor=None, mode="nearest", align_corners=None):
    if isinstance(scale_factor, list):
        scale_factor = tuple(scale_factor)
    return F.interpolate(x, size=size, scale_factor=scale_factor, mode=mode, align_corners=align_corners)


def _adaptive_avg_pool2d(x, output_size=None):
    if output_size is None:
        output_size = (None, None)
    elif isinstance(output_size, list):
        output_size = tuple(output_size)
    return F.adaptive_avg_pool2d(x, output_size)


def _pad(x, pad, mode="constant", value=None):
    if mode != "constant":
        raise GraphError("pad: only mode 'constant'")
    return F.pad(x, list(pad), mode="constant", value=0.0 if value is None else value)


def _dropout(x, p=0.5, training=False, inplace=False):
    if training:
        raise GraphError("dropout: training=true is not allowed")
    return F.dropout(x, p, False, False)


def _batch_norm(x, rm, rv, w=None, b=None, training=False, momentum=0.1, eps=1e-5):
    if training:
        raise GraphError("batch_norm: training=true is not allowed")
    return F.batch_norm(x, rm, rv, w, b, False, momentum, eps)


def _conv2d(x, w, b=None, stride=1, padding=0, dilation=1, groups=1):
    def tup(v):
        return tuple(v) if isinstance(v, list) else v
    return F.conv2d(x, w, b, tup(stride), tup(padding), tup(dilation), groups)


def _tensor_split(x, sections=None, indices=None, dim=0):
    return torch.tensor_split(x, sections if sections is not None else indices, dim)


def _avg_pool2d(x, kernel_size, stride=None, padding=0, ceil_mode=False, count_include_pad=True,
                divisor_override=None):
    def tup(v):
        return tuple(v) if isinstance(v, list) else v
    return F.avg_pool2d(x, tup(kernel_size), tup(stride), tup(padding), ceil_mode, count_include_pad,
                        divisor_override)


def _arange(start=0, end=None, step=1, dtype=None, device="cpu"):
    return torch.arange(start, end, step, dtype=DTYPES[dtype] if dtype else None, device=device)


OPS = {
    "add": lambda a, b, alpha=1: _binary("add", a, b, alpha),
    "sub": lambda a, b, alpha=1: _binary("sub", a, b, alpha),
    "mul": lambda a, b: _binary("mul", a, b),
    "div": lambda a, b: _binary("div", a, b),
    "pow": lambda a, b: _binary("pow", a, b),
    "where": lambda c, x, y: torch.where(c, x, y),
    "sigmoid": torch.sigmoid,
    "relu": torch.relu,
    "silu": lambda x: F.silu(x if x.dtype.is_floating_point else x.float()),
    "tanh": torch.tanh,
    "exp": torch.exp,
    "rsqrt": torch.rsqrt,
    "gelu": lambda x, approximate="none": F.gelu(x, approximate=approximate),
    "dropout": _dropout,
    "softmax": lambda x, dim, dtype=None: F.softmax(x, dim, dtype=DTYPES[dtype] if dtype else None),
    "prelu": F.prelu,
    "layer_norm": lambda x, w=None, b=None, normalized_shape=None, eps=1e-5:
        F.layer_norm(x, tuple(normalized_shape), w, b, eps),
    "batch_norm": _batch_norm,
    "linear": lambda x, w, b=None: F.linear(x, w, b),
    "matmul": torch.matmul,
    "bmm": torch.bmm,
    "conv2d": _conv2d,
    "interpolate": _interpolate,
    "adaptive_avg_pool2d": _adaptive_avg_pool2d,
    "scaled_dot_product_attention": _sdpa,
    "sum": lambda x, **kw: _sum_mean(torch.sum, x, **kw),
    "mean": lambda x, **kw: _sum_mean(torch.mean, x, **kw),
    "transpose": lambda x, dim0, dim1: x.transpose(dim0, dim1),
    "permute": lambda x, dims: x.permute(*dims),
    "reshape": lambda x, shape: x.reshape(*shape),
    "view": lambda x, shape: x.view(*shape),
    "flatten": lambda x, start_dim=0, end_dim=-1: x.flatten(start_dim, end_dim),
    "expand": lambda x, size: x.expand(*size),
    "contiguous": lambda x: x.contiguous(),
    "getitem": _getitem,
    "cat": lambda *xs, dim=0: torch.cat(xs, dim),
    "split": lambda x, split_size, dim=0: torch.split(x, split_size, dim),
    "chunk": lambda x, chunks, dim=0: torch.chunk(x, chunks, dim),
    "pad": _pad,
    "to": lambda x, dtype: x.to(DTYPES[dtype]),
    "leaky_relu": lambda x, negative_slope=0.01, inplace=False: F.leaky_relu(x, negative_slope),
    "unbind": lambda x, dim=0: torch.unbind(x, dim),
    "tensor_split": _tensor_split,
    "baddbmm": lambda i, b1, b2, beta=1, alpha=1: torch.baddbmm(i, b1, b2, beta=beta, alpha=alpha),
    "arange": _arange,
    "avg_pool2d": _avg_pool2d,
    "unfold": lambda x, dimension, size, step: x.unfold(dimension, size, step),
}

# Positional operands (beyond the required ones) that map to keyword parameters.
OPTIONAL_OPERANDS = {
    "layer_norm": ("w", "b"),
    "batch_norm": ("w", "b"),
    "linear": ("b",),
    "conv2d": ("b",),
    "scaled_dot_product_attention": ("attn_mask",),
}
REQUIRED_OPERANDS = {"layer_norm": 1, "batch_norm": 3, "linear": 2, "conv2d": 2,
                     "scaled_dot_product_attention": 3}

# Ops whose result is a view or pure data movement: no arithmetic, never upcast.
MOVEMENT = {"transpose", "permute", "reshape", "view", "flatten", "expand", "contiguous", "getitem",
            "cat", "split", "chunk", "pad", "to", "dropout", "unbind", "tensor_split", "unfold"}


def _call(op, args, attrs):
    fn = OPS[op]
    if op in OPTIONAL_OPERANDS:
        req = REQUIRED_OPERANDS[op]
        kw = dict(attrs)
        for name, val in zip(OPTIONAL_OPERANDS[op], args[req:]):
            kw[name] = val
        return fn(*args[:req], **kw)
    return fn(*args, **attrs)


def _upcast(v):
    if torch.is_tensor(v) and v.dtype in HALF:
        return v.float()
    return v


def _meta_like(v):
    if torch.is_tensor(v):
        return torch.empty_strided(v.shape, v.stride(), dtype=v.dtype, device="meta")
    if isinstance(v, (tuple, list)):
        return type(v)(_meta_like(x) for x in v)
    return v


def _cast_like(r, ref):
    if torch.is_tensor(r):
        return r.to(ref.dtype)
    return type(r)(_cast_like(x, y) for x, y in zip(r, ref))


def _cpu_zeros_like(v):
    if torch.is_tensor(v):
        return torch.zeros(v.shape, dtype=v.dtype)
    if isinstance(v, (tuple, list)):
        return type(v)(_cpu_zeros_like(x) for x in v)
    return v


def run_op(op, args, attrs, device):
    """Runs one node; handles meta gaps and half-precision gaps on CPU."""
    if device == "meta":
        try:
            return _call(op, args, attrs)
        except NotImplementedError:
            r = _call(op, [_cpu_zeros_like(a) for a in args], attrs)
            return _meta_like(r)
    try:
        return _call(op, args, attrs)
    except RuntimeError as e:
        msg = str(e)
        if op in MOVEMENT or not any(torch.is_tensor(a) and a.dtype in HALF for a in args) \
                or "not implemented for" not in msg:
            raise
    # torch 1.13 CPU lacks some float16/bfloat16 kernels: compute in float32, cast back
    # to the dtype the op gives (found on meta tensors).
    ref = _call(op, [_meta_like(a) for a in args], attrs)
    return _cast_like(_call(op, [_upcast(a) for a in args], attrs), ref)


def run_variant(variant, device="cpu", seed=123, inputs=None, trace=None):
    """Runs one variant; returns its output tensors (a list, graph order).

    trace, if a list, receives (node, result) for every node."""
    env = dict(inputs) if inputs is not None else make_inputs(variant, device, seed)
    vname = variant.get("name", "?")
    for node in variant["nodes"]:
        op = node["op"]
        if op not in OPS:
            raise GraphError("variant '%s', node '%s': unknown op '%s'" % (vname, node["name"], op))
        args = []
        for a in node.get("inputs", []):
            if isinstance(a, str):
                if a not in env:
                    raise GraphError("variant '%s', node '%s': unknown value '%s'" % (vname, node["name"], a))
                args.append(env[a])
            else:
                args.append(a)  # number or None
        attrs = node.get("attrs") or {}
        if op == "arange":  # no operand to take the device from
            attrs = dict(attrs, device=device)
        try:
            r = run_op(op, args, attrs, device)
        except GraphError:
            raise
        except Exception as e:  # torch's own error, made to name the node
            raise GraphError("variant '%s', node '%s' (%s): %s" % (
                vname, node["name"], op, str(e).strip().splitlines()[0])) from e
        env[node["name"]] = r
        if trace is not None:
            trace.append((node, r))
    outs = []
    for o in variant["outputs"]:
        v = env[o]
        if not torch.is_tensor(v):
            raise GraphError("variant '%s': output '%s' is a tuple" % (vname, o))
        outs.append(v)
    return outs


def describe(variant, outs):
    return [(name, tuple(t.shape), dtype_name(t.dtype)) for name, t in zip(variant["outputs"], outs)]


def infer(graph_path, device="meta"):
    """{variant name: [(output name, shape tuple, dtype name), ...]} for every variant."""
    doc = load(graph_path)
    return {v["name"]: describe(v, run_variant(v, device=device)) for v in doc["variants"]}


# ----------------------------------------------------------------------------
# Cost: a rough count of the work in a variant (for the task-size budget)


def _numel(shape):
    n = 1
    for d in shape:
        n *= d
    return n


def cost(variant):
    """(flops, largest tensor in elements) of a variant, from a meta run.

    Matrix products count 2 * out * K; conv 2 * out * Cin/groups * kh * kw; sdpa its two
    products; every other op the elements it writes."""
    trace = []
    env = make_inputs(variant, "meta")
    run_variant(variant, device="meta", inputs=env, trace=trace)
    biggest = max([_numel(t.shape) for t in env.values()] + [0])
    flops = 0
    vals = dict(env)
    for node, r in trace:
        vals[node["name"]] = r
        rs = r if isinstance(r, (tuple, list)) else [r]
        out = sum(_numel(t.shape) for t in rs)
        biggest = max([biggest] + [_numel(t.shape) for t in rs])
        op = node["op"]
        ins = [vals[a] if isinstance(a, str) else a for a in node["inputs"]]
        if op in ("matmul", "bmm", "linear"):
            k = ins[0].shape[-1]
            flops += 2 * out * k
        elif op == "baddbmm":
            k = ins[1].shape[-1]
            flops += 2 * out * k
        elif op == "conv2d":
            w = ins[1]
            flops += 2 * out * w.shape[1] * w.shape[2] * w.shape[3]
        elif op == "scaled_dot_product_attention":
            q, k, v = ins[:3]
            scores = _numel(q.shape[:-1]) * k.shape[-2]
            flops += 2 * scores * q.shape[-1] + 2 * scores * v.shape[-1] + 5 * scores
        elif op in ("getitem", "split", "chunk", "unbind", "tensor_split", "view", "reshape", "transpose", "permute",
                    "expand", "contiguous", "flatten", "dropout", "unfold"):
            pass
        else:
            flops += out
    return flops, biggest


def main(argv):
    device = "meta"
    paths = []
    for a in argv:
        if a == "--cpu":
            device = "cpu"
        else:
            paths.append(a)
    if not paths:
        print("usage: graph_torch.py [--cpu] graph.json...", file=sys.stderr)
        return 2
    rc = 0
    for p in paths:
        doc = load(p)
        for v in doc["variants"]:
            try:
                outs = run_variant(v, device=device)
            except GraphError as e:
                print("%s: %s" % (p, e))
                rc = 1
                continue
            desc = ", ".join("%s %s%s" % (n, d, list(s)) for n, s, d in describe(v, outs))
            extra = ""
            if device == "cpu":
                bad = [n for n, t in zip(v["outputs"], outs)
                       if t.dtype.is_floating_point and not torch.isfinite(t).all()]
                extra = "  NON-FINITE: %s" % ", ".join(bad) if bad else "  finite"
                if bad:
                    rc = 1
            print("%s %s: %s%s" % (doc["id"], v["name"], desc, extra))
    return rc


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
