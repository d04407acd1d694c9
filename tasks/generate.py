#!/usr/bin/env python3
"""Generates the bundled passfs tasks: tasks/<id>/graph.json and tasks/README.md.

Every task is a fusible op sequence taken from a real model, written out at the
shapes that model uses (the comment above each builder names the model and the
code it comes from).  Each task has several variants: the same sequence at a few
batch sizes / sequence lengths / stages, in float32, float16 and bfloat16, like
PassBench's variants.  Every variant is kept small enough for passfs's CPU backend
to evaluate: at most ~2 GFLOP and at most 32 Mi elements per tensor.

The schema is docs/graph-format.md.  The output is deterministic (plain Python,
stdlib only, no randomness): a test regenerates the files into a temporary
directory and compares them byte for byte with the committed ones.

    python3 tasks/generate.py               # rewrite tasks/ in place
    python3 tasks/generate.py --out DIR     # write DIR/<id>/graph.json, DIR/README.md
    python3 tasks/generate.py --list        # print the task ids

Input generation fields follow PassNet's rule (passfs applies it): floats are
randn * std * 0.2 + mean, clamped to min/max; ints are uniform in [min, max];
bools are uniform > 0.5; `data` gives literal values.  Activations use mean 0,
std 1; weights carry the statistics a trained model would show (layer-norm weight
around 1, running_var positive, ...).
"""

import argparse
import json
import math
import os
import sys

F32, F16, BF16 = "float32", "float16", "bfloat16"
ALL = (F32, F16, BF16)
SHORT = {F32: "f32", F16: "f16", BF16: "bf16"}

# torch.finfo(dtype).min: what HF models use as "minus infinity" in masks.
FINFO_MIN = {F32: -3.4028234663852886e38, F16: -65504.0, BF16: -3.3895313892515355e38}

ALL_SLICE = [None, None, None]  # x[:]


# ----------------------------------------------------------------------------
# A tiny graph builder


class G:
    """One variant under construction: inputs, nodes (t0, t1, ...), outputs."""

    def __init__(self, dtype):
        self.dt = dtype
        self.inputs = []
        self.nodes = []
        self.n = 0

    def input(self, name, shape, dtype=None, mean=None, std=None, lo=None, hi=None, data=None):
        d = {"name": name, "shape": list(shape), "dtype": dtype or self.dt}
        for key, val in (("mean", mean), ("std", std), ("min", lo), ("max", hi), ("data", data)):
            if val is not None:
                d[key] = val
        self.inputs.append(d)
        return name

    def act(self, name, shape, dtype=None):
        """An activation: mean 0, std 1."""
        return self.input(name, shape, dtype, mean=0.0, std=1.0)

    def param(self, name, shape, mean=0.0, std=0.02, **kw):
        return self.input(name, shape, mean=mean, std=std, **kw)

    def conv_w(self, name, cout, cin_per_group, kh, kw=None):
        kw = kh if kw is None else kw
        fan_in = cin_per_group * kh * kw
        return self.param(name, [cout, cin_per_group, kh, kw], std=round(math.sqrt(2.0 / fan_in), 4))

    def ln_params(self, prefix, c):
        w = self.param(prefix + "_w", [c], mean=1.0, std=0.02)
        b = self.param(prefix + "_b", [c], mean=0.0, std=0.02)
        return w, b

    def bn_params(self, prefix, c):
        """running_mean, running_var, weight, bias (F.batch_norm's order)."""
        rm = self.param(prefix + "_mean", [c], mean=0.0, std=0.1)
        rv = self.param(prefix + "_var", [c], mean=1.0, std=0.5, lo=0.0)
        w = self.param(prefix + "_w", [c], mean=1.0, std=0.1)
        b = self.param(prefix + "_b", [c], mean=0.0, std=0.1)
        return rm, rv, w, b

    def op(self, op, *inputs, name=None, **attrs):
        if name is None:
            name = "t%d" % self.n
            self.n += 1
        node = {"name": name, "op": op, "inputs": list(inputs)}
        if attrs:
            node["attrs"] = attrs
        self.nodes.append(node)
        return name


TASKS = []


class Task:
    def __init__(self, tid, model, summary, source, variants, build):
        self.id = tid
        self.model = model
        self.summary = summary
        self.source = source
        self.variants = variants  # [(name, dtype, params)]
        self.build = build


def vset(shapes, dtypes=ALL):
    """Variants: every dtype x every (suffix, params) shape."""
    return [("%s_%s" % (SHORT[dt], suffix), dt, params) for dt in dtypes for suffix, params in shapes]


def task(tid, model, summary, source, variants):
    def deco(fn):
        TASKS.append(Task(tid, model, summary, source, variants, fn))
        return fn
    return deco


# ----------------------------------------------------------------------------
# Transformers: ViT / DeiT / BERT / ALBERT / ELECTRA / GPT-2 / T5 / Llama / ...


# timm VisionTransformer Block (vit_base_patch16_224): x = x + drop_path(attn(norm1(x)));
# then norm2(x) (LayerNorm eps 1e-6) feeds the MLP.  Both the sum and the norm are live.
@task("vit_residual_layernorm", "ViT-B/16 (timm)",
      "ViT-B/16 block: residual add, then layer_norm (eps 1e-6)",
      "timm VisionTransformer Block: x = x + attn(norm1(x)); norm2(x)",
      vset([("b1", dict(B=1)), ("b8", dict(B=8)), ("b32", dict(B=32))]))
def _(g, B, N=197, C=768):
    x = g.act("x", [B, N, C])
    a = g.act("attn_out", [B, N, C])
    w, b = g.ln_params("norm2", C)
    t0 = g.op("add", x, a)
    t1 = g.op("layer_norm", t0, w, b, normalized_shape=[C], eps=1e-6)
    return [t0, t1]


# HF BertEmbeddings / AlbertEmbeddings tail (PassNet samples bert_L-2_H-768, albert-xlarge-v1):
# embeddings += token_type_embeddings; LayerNorm(eps 1e-12); dropout(0.1, eval);
# plus the SDPA mask prep: attention_mask[:, None, None, :].expand(bsz, 1, tgt, src).
@task("bert_embeddings_layernorm_mask", "BERT-base / ALBERT-xlarge (HF)",
      "BERT/ALBERT embeddings: add, layer_norm (eps 1e-12), dropout; attention mask [:, None, None, :] expanded",
      "HF BertEmbeddings.forward + _prepare_4d_attention_mask (PassNet h14/h17)",
      vset([("albert_b1_s128", dict(B=1, S=128, H=128)),
            ("bert_b8_s128", dict(B=8, S=128, H=768)),
            ("bert_b4_s512", dict(B=4, S=512, H=768))]))
def _(g, B, S, H):
    mask = g.input("attention_mask", [B, S], "int64", lo=0, hi=1)
    emb = g.act("inputs_embeds", [B, S, H])
    tt = g.act("token_type_embeddings", [B, S, H])
    w, b = g.ln_params("ln", H)
    t0 = g.op("add", emb, tt)
    t1 = g.op("layer_norm", t0, w, b, normalized_shape=[H], eps=1e-12)
    t2 = g.op("dropout", t1, p=0.1, training=False)
    t3 = g.op("getitem", mask, index=[ALL_SLICE, None, None, ALL_SLICE])
    t4 = g.op("expand", t3, size=[B, 1, S, S])
    return [t2, t4]


# HF ModuleUtilsMixin.get_extended_attention_mask (BERT/RoBERTa eager path):
# extended = attention_mask[:, None, None, :].to(dtype); (1.0 - extended) * finfo(dtype).min
@task("bert_extended_attention_mask", "BERT-base / RoBERTa (HF)",
      "BERT extended attention mask: mask[:, None, None, :], to(dtype), 1.0 - m, * finfo.min",
      "HF modeling_utils.get_extended_attention_mask",
      vset([("b1_s128", dict(B=1, S=128)), ("b16_s128", dict(B=16, S=128)), ("b8_s512", dict(B=8, S=512))]))
def _(g, B, S):
    mask = g.input("attention_mask", [B, S], "int64", lo=0, hi=1)
    t0 = g.op("getitem", mask, index=[ALL_SLICE, None, None, ALL_SLICE])
    t1 = g.op("to", t0, dtype=g.dt)
    t2 = g.op("sub", 1.0, t1)
    t3 = g.op("mul", t2, FINFO_MIN[g.dt])
    return [t3]


# HF BertSelfAttention eager (bert-base-uncased: 12 heads x 64):
# scores = q @ k.transpose(-1, -2) / sqrt(64) + mask; softmax; dropout; @ v;
# permute(0, 2, 1, 3).contiguous().view(B, S, 768)
@task("bert_attention_probs_context", "BERT-base (HF)",
      "BERT self-attention core: q @ k^T, / 8, + mask, softmax, dropout, @ v, permute, view",
      "HF BertSelfAttention.forward (eager attention)",
      vset([("b1_s128", dict(B=1, S=128)), ("b8_s128", dict(B=8, S=128)), ("b2_s512", dict(B=2, S=512))]))
def _(g, B, S, NH=12, HD=64):
    q = g.act("query", [B, NH, S, HD])
    k = g.act("key", [B, NH, S, HD])
    v = g.act("value", [B, NH, S, HD])
    m = g.input("attention_mask", [B, 1, 1, S], mean=-1.0, std=5.0, hi=0.0)
    t0 = g.op("transpose", k, dim0=-1, dim1=-2)
    t1 = g.op("matmul", q, t0)
    t2 = g.op("div", t1, 8.0)
    t3 = g.op("add", t2, m)
    t4 = g.op("softmax", t3, dim=-1)
    t5 = g.op("dropout", t4, p=0.1, training=False)
    t6 = g.op("matmul", t5, v)
    t7 = g.op("permute", t6, dims=[0, 2, 1, 3])
    t8 = g.op("contiguous", t7)
    t9 = g.op("view", t8, shape=[B, S, NH * HD])
    return [t9]


# HF ElectraSelfAttention, KBLab electra generator (hidden 256, 4 heads x 64), PassNet h24:
# scores / 8.0 + mask, softmax, dropout, matmul(probs, v), permute, contiguous, view
@task("electra_attention_softmax_context", "ELECTRA generator (HF, KBLab)",
      "ELECTRA attention from the scores: / 8.0, + mask, softmax, dropout, @ v, permute, view",
      "HF ElectraSelfAttention.forward (PassNet h24 KBLab_electra_gen)",
      vset([("b1_s128", dict(B=1, S=128)), ("b8_s128", dict(B=8, S=128)), ("b8_s512", dict(B=8, S=512))]))
def _(g, B, S, NH=4, HD=64):
    m = g.input("attention_mask", [B, 1, 1, S], mean=-1.0, std=5.0, hi=0.0)
    v = g.act("value", [B, NH, S, HD])
    s = g.act("scores", [B, NH, S, S])
    t0 = g.op("div", s, 8.0)
    t1 = g.op("add", t0, m)
    t2 = g.op("softmax", t1, dim=-1)
    t3 = g.op("dropout", t2, p=0.1, training=False)
    t4 = g.op("matmul", t3, v)
    t5 = g.op("permute", t4, dims=[0, 2, 1, 3])
    t6 = g.op("contiguous", t5)
    t7 = g.op("view", t6, shape=[B, S, NH * HD])
    return [t7]


# HF GPT2Attention._attn (gpt2, 12 heads x 64): matmul(q, k^T) / 8; causal bias buffer
# bias[:, :, k_len - q_len:k_len, :k_len]; where(mask, w, finfo.min); softmax; type(v.dtype);
# dropout; matmul(w, v); _merge_heads: permute(0, 2, 1, 3).contiguous().view(B, S, 768)
@task("gpt2_causal_attention_where", "GPT-2 small (HF)",
      "GPT-2 eager attention: q @ k^T / 8, causal bias slice, where(mask, w, finfo.min), softmax, @ v, merge heads",
      "HF GPT2Attention._attn + _merge_heads",
      vset([("b1_s128", dict(B=1, S=128)), ("b4_s256", dict(B=4, S=256)), ("b2_s512", dict(B=2, S=512))]))
def _(g, B, S, NH=12, HD=64):
    q = g.act("query", [B, NH, S, HD])
    k = g.act("key", [B, NH, S, HD])
    v = g.act("value", [B, NH, S, HD])
    bias = g.input("bias", [1, 1, 1024, 1024], "bool")
    t0 = g.op("transpose", k, dim0=-1, dim1=-2)
    t1 = g.op("matmul", q, t0)
    t2 = g.op("div", t1, 8.0)
    t3 = g.op("getitem", bias, index=[ALL_SLICE, ALL_SLICE, [0, S, None], [None, S, None]])
    t4 = g.op("where", t3, t2, FINFO_MIN[g.dt])
    t5 = g.op("softmax", t4, dim=-1)
    t6 = g.op("to", t5, dtype=g.dt)
    t7 = g.op("dropout", t6, p=0.1, training=False)
    t8 = g.op("matmul", t7, v)
    t9 = g.op("permute", t8, dims=[0, 2, 1, 3])
    t10 = g.op("contiguous", t9)
    t11 = g.op("view", t10, shape=[B, S, NH * HD])
    return [t11]


# HF GPT2Attention: query, key, value = c_attn(h).split(768, dim=2); _split_heads:
# view(B, S, 12, 64).permute(0, 2, 1, 3) for each
@task("gpt2_qkv_split_heads", "GPT-2 small (HF)",
      "GPT-2 qkv split: split(768, dim=2), getitem, view to heads, permute",
      "HF GPT2Attention.forward: c_attn(...).split + _split_heads",
      vset([("b1_s128", dict(B=1, S=128)), ("b8_s512", dict(B=8, S=512)), ("b4_s1024", dict(B=4, S=1024))]))
def _(g, B, S, NH=12, HD=64):
    x = g.act("c_attn_out", [B, S, 3 * NH * HD])
    t0 = g.op("split", x, split_size=NH * HD, dim=2)
    outs = []
    for i in range(3):
        ti = g.op("getitem", t0, index=[i])
        tv = g.op("view", ti, shape=[B, S, NH, HD])
        outs.append(g.op("permute", tv, dims=[0, 2, 1, 3]))
    return outs


# HF GPT2SdpaAttention (gpt2, 12 heads x 64): F.scaled_dot_product_attention(q, k, v,
# attn_mask=None, dropout_p=0.0, is_causal=True); transpose(1, 2).contiguous(); view(B, S, 768)
@task("gpt2_sdpa_causal_merge_heads", "GPT-2 small (HF, SDPA)",
      "GPT-2 SDPA attention, is_causal=True, then transpose, contiguous, view back to [B, S, 768]",
      "HF GPT2SdpaAttention.forward",
      vset([("b1_s128", dict(B=1, S=128)), ("b4_s256", dict(B=4, S=256)), ("b2_s512", dict(B=2, S=512))]))
def _(g, B, S, NH=12, HD=64):
    q = g.act("query", [B, NH, S, HD])
    k = g.act("key", [B, NH, S, HD])
    v = g.act("value", [B, NH, S, HD])
    t0 = g.op("scaled_dot_product_attention", q, k, v, dropout_p=0.0, is_causal=True)
    t1 = g.op("transpose", t0, dim0=1, dim1=2)
    t2 = g.op("contiguous", t1)
    t3 = g.op("view", t2, shape=[B, S, NH * HD])
    return [t3]


# HF NewGELUActivation ("gelu_new", GPT-2 / GPT-J MLP) after the c_fc bias add:
# 0.5 * x * (1.0 + tanh(sqrt(2 / pi) * (x + 0.044715 * pow(x, 3.0))))
@task("gpt2_gelu_new_explicit", "GPT-2 small / medium (HF)",
      "GPT-2 MLP: bias add, then tanh GELU written out with pow, mul, add, tanh",
      "HF activations.NewGELUActivation applied to c_fc(x) (addmm output + bias)",
      vset([("b1_s128", dict(B=1, S=128, F=3072)), ("b8_s128", dict(B=8, S=128, F=3072)),
            ("medium_b4_s512", dict(B=4, S=512, F=4096))]))
def _(g, B, S, F):
    x = g.act("fc_out", [B, S, F])
    b = g.param("fc_bias", [F], std=0.02)
    t0 = g.op("add", x, b)
    t1 = g.op("pow", t0, 3.0)
    t2 = g.op("mul", 0.044715, t1)
    t3 = g.op("add", t0, t2)
    t4 = g.op("mul", 0.7978845608028654, t3)
    t5 = g.op("tanh", t4)
    t6 = g.op("add", 1.0, t5)
    t7 = g.op("mul", 0.5, t0)
    t8 = g.op("mul", t7, t6)
    return [t8]


# HF GPT2MLP with activation_function="gelu_pytorch_tanh" (GPT-2, CodeGen, Phi): bias add
# then F.gelu(x, approximate="tanh")
@task("gpt2_bias_gelu_tanh", "GPT-2 (HF, gelu_pytorch_tanh)",
      "GPT-2 MLP: bias add then gelu(approximate='tanh')",
      "HF PytorchGELUTanh applied to c_fc(x) + bias",
      vset([("b1_s128", dict(B=1, S=128)), ("b8_s256", dict(B=8, S=256)), ("b4_s1024", dict(B=4, S=1024))]))
def _(g, B, S, F=3072):
    x = g.act("fc_out", [B, S, F])
    b = g.param("fc_bias", [F], std=0.02)
    t0 = g.op("add", x, b)
    t1 = g.op("gelu", t0, approximate="tanh")
    return [t1]


# timm Mlp in ViT-B/16: fc1 (matmul) + bias, GELU (erf), Dropout(0.0)
@task("vit_bias_gelu_erf", "ViT-B/16 (timm)",
      "ViT MLP: fc1 bias add, gelu (erf), dropout(p=0)",
      "timm layers.Mlp.forward (fc1 split into matmul + bias add)",
      vset([("b1", dict(B=1)), ("b8", dict(B=8)), ("b32", dict(B=32))]))
def _(g, B, N=197, F=3072):
    x = g.act("fc1_out", [B, N, F])
    b = g.param("fc1_bias", [F], std=0.02)
    t0 = g.op("add", x, b)
    t1 = g.op("gelu", t0)
    t2 = g.op("dropout", t1, p=0.0, training=False)
    return [t2]


# timm Block (deit_tiny_patch16_224, dim 192, mlp 768): x + mlp(norm2(x)) with
# Mlp = fc1, GELU, Dropout, fc2, Dropout
@task("deit_tiny_mlp_residual", "DeiT-Tiny (timm)",
      "DeiT-Tiny MLP branch: layer_norm, linear, gelu, dropout, linear, dropout, residual add",
      "timm VisionTransformer Block: x + drop_path(mlp(norm2(x)))",
      vset([("b1", dict(B=1)), ("b4", dict(B=4)), ("b16", dict(B=16))]))
def _(g, B, N=197, C=192, F=768):
    x = g.act("x", [B, N, C])
    lw, lb = g.ln_params("norm2", C)
    w1 = g.param("fc1_w", [F, C], std=0.02)
    b1 = g.param("fc1_b", [F], std=0.02)
    w2 = g.param("fc2_w", [C, F], std=0.02)
    b2 = g.param("fc2_b", [C], std=0.02)
    t0 = g.op("layer_norm", x, lw, lb, normalized_shape=[C], eps=1e-6)
    t1 = g.op("linear", t0, w1, b1)
    t2 = g.op("gelu", t1)
    t3 = g.op("dropout", t2, p=0.0, training=False)
    t4 = g.op("linear", t3, w2, b2)
    t5 = g.op("dropout", t4, p=0.0, training=False)
    t6 = g.op("add", x, t5)
    return [t6]


# timm Attention with fused_attn (vit_base_patch16_clip_224, PassNet t09):
# F.scaled_dot_product_attention(q, k, v); transpose(1, 2).reshape(B, N, C)
@task("clip_sdpa_transpose_reshape", "ViT-B/16 CLIP (timm)",
      "CLIP ViT-B/16 attention: scaled_dot_product_attention, transpose(1, 2), reshape to [B, 197, 768]",
      "timm Attention.forward, fused_attn path (PassNet t09 vit_base_clip_quickgelu)",
      vset([("b1", dict(B=1)), ("b4", dict(B=4)), ("b16", dict(B=16))]))
def _(g, B, N=197, NH=12, HD=64):
    q = g.act("q", [B, NH, N, HD])
    k = g.act("k", [B, NH, N, HD])
    v = g.act("v", [B, NH, N, HD])
    t0 = g.op("scaled_dot_product_attention", q, k, v, dropout_p=0.0)
    t1 = g.op("transpose", t0, dim0=1, dim1=2)
    t2 = g.op("reshape", t1, shape=[B, N, NH * HD])
    return [t2]


# HF MarianAttention SDPA path (Helsinki-NLP opus-mt, 8 heads x 64; PassNet h12):
# sdpa(q, k, v, attn_mask=additive [B, 1, S, S], scale=0.125); transpose(1, 2);
# contiguous; reshape(B, S, -1); contiguous
@task("marian_sdpa_additive_mask", "MarianMT opus-mt (HF)",
      "MarianMT attention: SDPA with an additive [B,1,S,S] mask and scale=0.125, transpose, reshape",
      "HF MarianSdpaAttention.forward (PassNet h12 Neurora_opus_heb_eng)",
      vset([("b1_s25", dict(B=1, S=25)), ("b8_s128", dict(B=8, S=128)), ("b8_s256", dict(B=8, S=256))]))
def _(g, B, S, NH=8, HD=64):
    m = g.input("attn_mask", [B, 1, S, S], mean=-50.0, std=100.0, hi=0.0)
    q = g.act("query", [B, NH, S, HD])
    k = g.act("key", [B, NH, S, HD])
    v = g.act("value", [B, NH, S, HD])
    t0 = g.op("scaled_dot_product_attention", q, k, v, m, dropout_p=0.0, scale=0.125, is_causal=False)
    t1 = g.op("transpose", t0, dim0=1, dim1=2)
    t2 = g.op("contiguous", t1)
    t3 = g.op("reshape", t2, shape=[B, S, -1])
    t4 = g.op("contiguous", t3)
    return [t4]


# HF LlamaSdpaAttention (TinyLlama-1.1B: 32 query heads, 4 kv heads, head_dim 64):
# repeat_kv: kv[:, :, None, :, :].expand(B, 4, 8, S, 64).reshape(B, 32, S, 64);
# sdpa(q, k, v, attn_mask=bool [B, 1, S, S]); transpose(1, 2).contiguous(); reshape(B, S, 2048)
@task("llama_repeat_kv_sdpa_bool_mask", "TinyLlama-1.1B (HF)",
      "Llama GQA attention: repeat_kv (None index, expand, reshape), SDPA with a bool mask, transpose, reshape",
      "HF LlamaSdpaAttention.forward + repeat_kv (boolean sdpa mask)",
      vset([("b1_s128", dict(B=1, S=128)), ("b8_s128", dict(B=8, S=128)), ("b2_s256", dict(B=2, S=256))]))
def _(g, B, S, NH=32, NKV=4, HD=64):
    q = g.act("query", [B, NH, S, HD])
    k = g.act("key", [B, NKV, S, HD])
    v = g.act("value", [B, NKV, S, HD])
    m = g.input("attention_mask", [B, 1, S, S], "bool")
    rep = NH // NKV
    kv = []
    for t in (k, v):
        a = g.op("getitem", t, index=[ALL_SLICE, ALL_SLICE, None, ALL_SLICE, ALL_SLICE])
        b = g.op("expand", a, size=[B, NKV, rep, S, HD])
        kv.append(g.op("reshape", b, shape=[B, NH, S, HD]))
    t0 = g.op("scaled_dot_product_attention", q, kv[0], kv[1], m, dropout_p=0.0)
    t1 = g.op("transpose", t0, dim0=1, dim1=2)
    t2 = g.op("contiguous", t1)
    t3 = g.op("reshape", t2, shape=[B, S, NH * HD])
    return [t3]


# HF LlamaMLP (TinyLlama-1.1B, intermediate 5632): act_fn(gate_proj(x)) * up_proj(x), SiLU
@task("llama_swiglu", "TinyLlama-1.1B (HF)",
      "Llama MLP gating: silu(gate) * up",
      "HF LlamaMLP.forward: down_proj(act_fn(gate_proj(x)) * up_proj(x))",
      vset([("b1_s128", dict(B=1, S=128)), ("b4_s512", dict(B=4, S=512)), ("b8_s512", dict(B=8, S=512))]))
def _(g, B, S, F=5632):
    gate = g.act("gate", [B, S, F])
    up = g.act("up", [B, S, F])
    t0 = g.op("silu", gate)
    t1 = g.op("mul", t0, up)
    return [t1]


# HF T5LayerNorm (RMSNorm, t5-base 768 / t5-large 1024, eps 1e-6):
# variance = h.to(float32).pow(2).mean(-1, keepdim=True); h = h * rsqrt(variance + eps);
# if weight is half: h = h.to(weight.dtype); weight * h
@task("t5_rmsnorm", "T5-base / T5-large (HF)",
      "T5 RMSNorm: to(float32), pow(2), mean(-1, keepdim), + eps, rsqrt, mul, to(dtype), * weight",
      "HF T5LayerNorm.forward",
      vset([("b1_s128", dict(B=1, S=128, D=768)), ("b8_s512", dict(B=8, S=512, D=768)),
            ("large_b4_s512", dict(B=4, S=512, D=1024))]))
def _(g, B, S, D):
    x = g.act("hidden_states", [B, S, D])
    w = g.param("weight", [D], mean=1.0, std=0.1)
    t0 = g.op("to", x, dtype=F32)
    t1 = g.op("pow", t0, 2)
    t2 = g.op("mean", t1, dim=-1, keepdim=True)
    t3 = g.op("add", t2, 1e-6)
    t4 = g.op("rsqrt", t3)
    t5 = g.op("mul", x, t4)
    t6 = g.op("to", t5, dtype=g.dt)  # HF skips it for float32 weights; kept so variants share one op sequence
    t7 = g.op("mul", w, t6)
    return [t7]


# HF T5Attention eager (t5-small: 8 heads x 64): scores = matmul(q, k.transpose(3, 2));
# position_bias = position_bias + mask; scores += position_bias;
# softmax(scores.float(), -1).type_as(scores); dropout; matmul(w, v);
# unshape: transpose(1, 2).contiguous().view(B, -1, 512)
@task("t5_attention_position_bias", "T5-small (HF)",
      "T5 attention: q @ k^T, + position bias + mask, float softmax, cast back, dropout, @ v, unshape",
      "HF T5Attention.forward (eager)",
      vset([("b1_s128", dict(B=1, S=128)), ("b8_s128", dict(B=8, S=128)), ("b2_s512", dict(B=2, S=512))]))
def _(g, B, S, NH=8, HD=64):
    q = g.act("query_states", [B, NH, S, HD])
    k = g.act("key_states", [B, NH, S, HD])
    v = g.act("value_states", [B, NH, S, HD])
    pb = g.input("position_bias", [1, NH, S, S], mean=0.0, std=10.0)
    m = g.input("mask", [B, 1, 1, S], mean=-1.0, std=5.0, hi=0.0)
    t0 = g.op("transpose", k, dim0=3, dim1=2)
    t1 = g.op("matmul", q, t0)
    t2 = g.op("add", pb, m)
    t3 = g.op("add", t1, t2)
    t4 = g.op("to", t3, dtype=F32)
    t5 = g.op("softmax", t4, dim=-1)
    t6 = g.op("to", t5, dtype=g.dt)
    t7 = g.op("dropout", t6, p=0.1, training=False)
    t8 = g.op("matmul", t7, v)
    t9 = g.op("transpose", t8, dim0=1, dim1=2)
    t10 = g.op("contiguous", t9)
    t11 = g.op("view", t10, shape=[B, -1, NH * HD])
    return [t11]


# sentence-transformers mean pooling (all-MiniLM-L6-v2, hidden 384):
# mask = attention_mask.unsqueeze(-1).expand(token_embeddings.size()).float();
# sum(token_embeddings * mask, 1) / mask.sum(1)   (the clamp(min=1e-9) is left out)
@task("sbert_masked_mean_pooling", "all-MiniLM-L6-v2 (sentence-transformers)",
      "Sentence-BERT masked mean pooling: mask[..., None], expand, float, mul, sum, sum, div",
      "sentence-transformers Pooling mean_tokens / HF model card mean_pooling()",
      vset([("b1_s128", dict(B=1, S=128)), ("b16_s128", dict(B=16, S=128)), ("b32_s256", dict(B=32, S=256))]))
def _(g, B, S, H=384):
    tok = g.act("token_embeddings", [B, S, H])
    mask = g.input("attention_mask", [B, S], "int64", lo=0, hi=1)
    t0 = g.op("getitem", mask, index=["...", None])
    t1 = g.op("expand", t0, size=[B, S, H])
    t2 = g.op("to", t1, dtype=F32)
    t3 = g.op("mul", tok, t2)
    t4 = g.op("sum", t3, dim=1)
    t5 = g.op("sum", t2, dim=1)
    t6 = g.op("div", t4, t5)
    return [t6]


# HF BertPooler: first_token = hidden_states[:, 0]; tanh(dense(first_token))
@task("bert_pooler_tanh", "BERT-base (HF)",
      "BERT pooler: hidden_states[:, 0], linear 768->768, tanh",
      "HF BertPooler.forward",
      vset([("b1_s128", dict(B=1, S=128)), ("b8_s512", dict(B=8, S=512)), ("b32_s128", dict(B=32, S=128))]))
def _(g, B, S, H=768):
    h = g.act("hidden_states", [B, S, H])
    w = g.param("dense_w", [H, H], std=0.02)
    b = g.param("dense_b", [H], std=0.02)
    t0 = g.op("getitem", h, index=[ALL_SLICE, 0])
    t1 = g.op("linear", t0, w, b)
    t2 = g.op("tanh", t1)
    return [t2]


# timm Attention (ViTPose-S backbone: dim 384, 12 heads x 32, 16x12 = 192 tokens; ViT-S/16:
# 6 heads x 64, 197 tokens): qkv = linear(x).reshape(B, N, 3, H, D).permute(2, 0, 3, 1, 4);
# q, k, v = qkv[0], qkv[1], qkv[2]   (PassNet v39)
@task("vit_small_qkv_split", "ViTPose-S / ViT-S/16 (timm, mmpose)",
      "ViT-S qkv projection: linear, reshape, permute(2, 0, 3, 1, 4), getitem 0/1/2",
      "timm Attention.forward (PassNet v39 ViTPose-S)",
      vset([("vitpose_b1", dict(B=1, N=192, NH=12, HD=32)), ("vitpose_b8", dict(B=8, N=192, NH=12, HD=32)),
            ("vits_b4", dict(B=4, N=197, NH=6, HD=64))]))
def _(g, B, N, NH, HD):
    C = NH * HD
    x = g.act("x", [B, N, C])
    w = g.param("qkv_w", [3 * C, C], std=0.02)
    b = g.param("qkv_b", [3 * C], std=0.02)
    t0 = g.op("linear", x, w, b)
    t1 = g.op("reshape", t0, shape=[B, N, 3, NH, HD])
    t2 = g.op("permute", t1, dims=[2, 0, 3, 1, 4])
    return [g.op("getitem", t2, index=[i]) for i in range(3)]


# timm Attention, non-fused path (vit_small_patch16_224: 6 heads x 64):
# q = q * scale; attn = q @ k.transpose(-2, -1); softmax; attn_drop; x = attn @ v;
# x.transpose(1, 2).reshape(B, N, C)
@task("vit_small_attention_scale_softmax", "ViT-S/16 (timm)",
      "ViT-S attention core: q * scale, q @ k^T, softmax, dropout, @ v, transpose, reshape",
      "timm Attention.forward with fused_attn=False",
      vset([("b1", dict(B=1)), ("b8", dict(B=8)), ("b32", dict(B=32))]))
def _(g, B, N=197, NH=6, HD=64):
    q = g.act("q", [B, NH, N, HD])
    k = g.act("k", [B, NH, N, HD])
    v = g.act("v", [B, NH, N, HD])
    t0 = g.op("mul", q, 0.125)
    t1 = g.op("transpose", k, dim0=-2, dim1=-1)
    t2 = g.op("matmul", t0, t1)
    t3 = g.op("softmax", t2, dim=-1)
    t4 = g.op("dropout", t3, p=0.0, training=False)
    t5 = g.op("matmul", t4, v)
    t6 = g.op("transpose", t5, dim0=1, dim1=2)
    t7 = g.op("reshape", t6, shape=[B, N, NH * HD])
    return [t7]


# timm PatchEmbed + VisionTransformer._pos_embed (ViT-B/16, DeiT-S/16; PassNet t08 crossvit):
# x = proj(x).flatten(2).transpose(1, 2); cat((cls_token.expand(B, -1, -1), x), 1);
# x + pos_embed; pos_drop (p=0)
@task("vit_patch_embed_cls_pos", "ViT-B/16, DeiT-S/16 (timm)",
      "ViT patch embedding: conv 16x16 stride 16, flatten, transpose, cls token expand + cat, + pos_embed, dropout",
      "timm PatchEmbed.forward + VisionTransformer._pos_embed",
      vset([("vitb_b1", dict(B=1, C=768)), ("vitb_b4", dict(B=4, C=768)), ("deits_b16", dict(B=16, C=384))]))
def _(g, B, C, IMG=224, P=16):
    n = (IMG // P) ** 2
    img = g.act("pixel_values", [B, 3, IMG, IMG])
    w = g.conv_w("proj_w", C, 3, P)
    b = g.param("proj_b", [C], std=0.02)
    cls = g.param("cls_token", [1, 1, C], std=0.02)
    pos = g.param("pos_embed", [1, n + 1, C], std=0.02)
    t0 = g.op("conv2d", img, w, b, stride=[P, P])
    t1 = g.op("flatten", t0, start_dim=2)
    t2 = g.op("transpose", t1, dim0=1, dim1=2)
    t3 = g.op("expand", cls, size=[B, -1, -1])
    t4 = g.op("cat", t3, t2, dim=1)
    t5 = g.op("add", t4, pos)
    t6 = g.op("dropout", t5, p=0.0, training=False)
    return [t6]


# Swin Transformer (swin_tiny_patch4_window7_224) SwinTransformerBlock, non-shifted:
# x = norm1(x); x.view(B, H, W, C); window_partition: view(B, H/7, 7, W/7, 7, C)
# .permute(0, 1, 3, 2, 4, 5).contiguous().view(-1, 7, 7, C); view(-1, 49, C)
@task("swin_window_partition", "Swin-T (microsoft/Swin-Transformer)",
      "Swin block entry: layer_norm, view to [B,H,W,C], window partition (view, permute, contiguous, view)",
      "SwinTransformerBlock.forward + window_partition",
      vset([("s1_b1", dict(B=1, R=56, C=96)), ("s2_b8", dict(B=8, R=28, C=192)),
            ("s1_b32", dict(B=32, R=56, C=96)), ("s3_b32", dict(B=32, R=14, C=384))]))
def _(g, B, R, C, WS=7):
    x = g.act("x", [B, R * R, C])
    w, b = g.ln_params("norm1", C)
    t0 = g.op("layer_norm", x, w, b, normalized_shape=[C], eps=1e-5)
    t1 = g.op("view", t0, shape=[B, R, R, C])
    t2 = g.op("view", t1, shape=[B, R // WS, WS, R // WS, WS, C])
    t3 = g.op("permute", t2, dims=[0, 1, 3, 2, 4, 5])
    t4 = g.op("contiguous", t3)
    t5 = g.op("view", t4, shape=[-1, WS, WS, C])
    t6 = g.op("view", t5, shape=[-1, WS * WS, C])
    return [t6]


# Swin Transformer WindowAttention (swin_tiny, shifted block with mask):
# qkv.reshape(B_, N, 3, nH, C/nH).permute(2, 0, 3, 1, 4); q, k, v = qkv[0..2]; q = q * scale;
# attn = q @ k^T; rel bias = table[index].view(N, N, -1).permute(2, 0, 1).contiguous();
# attn + bias.unsqueeze(0); attn.view(B_/nW, nW, nH, N, N) + mask.unsqueeze(1).unsqueeze(0);
# view(-1, nH, N, N); softmax; dropout; (attn @ v).transpose(1, 2).reshape(B_, N, C)
# (the gathered relative-position table is an input: indexing by a tensor is not a graph op)
@task("swin_window_attention_bias_mask", "Swin-T (microsoft/Swin-Transformer)",
      "Swin window attention: qkv reshape/permute/getitem, q*scale, q @ k^T, + rel-pos bias, + shift mask, softmax, @ v",
      "WindowAttention.forward (shifted window, mask given)",
      vset([("s1_b4", dict(B=4, R=56, NH=3)), ("s2_b8", dict(B=8, R=28, NH=6)), ("s3_b32", dict(B=32, R=14, NH=12))]))
def _(g, B, R, NH, WS=7, HD=32):
    N = WS * WS
    nW = (R // WS) ** 2
    BW = B * nW
    C = NH * HD
    qkv = g.act("qkv", [BW, N, 3 * C])
    table = g.param("rel_pos_bias", [N * N, NH], std=0.5)
    mask = g.input("attn_mask", [nW, N, N], mean=-50.0, std=250.0, lo=-100.0, hi=0.0)
    t0 = g.op("reshape", qkv, shape=[BW, N, 3, NH, HD])
    t1 = g.op("permute", t0, dims=[2, 0, 3, 1, 4])
    q = g.op("getitem", t1, index=[0])
    k = g.op("getitem", t1, index=[1])
    v = g.op("getitem", t1, index=[2])
    t2 = g.op("mul", q, HD ** -0.5)
    t3 = g.op("transpose", k, dim0=-2, dim1=-1)
    t4 = g.op("matmul", t2, t3)
    t5 = g.op("view", table, shape=[N, N, -1])
    t6 = g.op("permute", t5, dims=[2, 0, 1])
    t7 = g.op("contiguous", t6)
    t8 = g.op("getitem", t7, index=[None])
    t9 = g.op("add", t4, t8)
    t10 = g.op("view", t9, shape=[BW // nW, nW, NH, N, N])
    t11 = g.op("getitem", mask, index=[None, ALL_SLICE, None])
    t12 = g.op("add", t10, t11)
    t13 = g.op("view", t12, shape=[-1, NH, N, N])
    t14 = g.op("softmax", t13, dim=-1)
    t15 = g.op("dropout", t14, p=0.0, training=False)
    t16 = g.op("matmul", t15, v)
    t17 = g.op("transpose", t16, dim0=1, dim1=2)
    t18 = g.op("reshape", t17, shape=[BW, N, C])
    return [t18]


# ConvNeXt Block (facebookresearch/ConvNeXt convnext_tiny: dims 96/192/384):
# dwconv 7x7 (groups=C); permute(0, 2, 3, 1); LayerNorm(eps 1e-6); pwconv1 (linear C->4C);
# GELU; pwconv2 (4C->C); gamma * x; permute(0, 3, 1, 2); input + drop_path(x)
@task("convnext_block", "ConvNeXt-T (facebookresearch)",
      "ConvNeXt block: depthwise conv 7x7, permute, layer_norm, linear, gelu, linear, * layer scale, permute, residual add",
      "convnext.py Block.forward",
      vset([("s1_b1", dict(B=1, C=96, R=56)), ("s2_b2", dict(B=2, C=192, R=28)), ("s3_b4", dict(B=4, C=384, R=14))]))
def _(g, B, C, R):
    x = g.act("x", [B, C, R, R])
    dw = g.conv_w("dwconv_w", C, 1, 7)
    dwb = g.param("dwconv_b", [C], std=0.02)
    lw, lb = g.ln_params("norm", C)
    w1 = g.param("pwconv1_w", [4 * C, C], std=0.02)
    b1 = g.param("pwconv1_b", [4 * C], std=0.02)
    w2 = g.param("pwconv2_w", [C, 4 * C], std=0.02)
    b2 = g.param("pwconv2_b", [C], std=0.02)
    gamma = g.param("gamma", [C], mean=0.1, std=0.5)
    t0 = g.op("conv2d", x, dw, dwb, padding=[3, 3], groups=C)
    t1 = g.op("permute", t0, dims=[0, 2, 3, 1])
    t2 = g.op("layer_norm", t1, lw, lb, normalized_shape=[C], eps=1e-6)
    t3 = g.op("linear", t2, w1, b1)
    t4 = g.op("gelu", t3)
    t5 = g.op("linear", t4, w2, b2)
    t6 = g.op("mul", gamma, t5)
    t7 = g.op("permute", t6, dims=[0, 3, 1, 2])
    t8 = g.op("add", x, t7)
    return [t8]


# Segment Anything LayerNorm2d (image-encoder neck, 256 ch at 64x64) and ConvNeXt's
# channels_first LayerNorm (96 ch at 56x56): u = x.mean(1, keepdim); s = (x - u).pow(2)
# .mean(1, keepdim); x = (x - u) / sqrt(s + eps); w[:, None, None] * x + b[:, None, None]
# (sqrt written as pow(., 0.5): the graph format has no sqrt op)
@task("sam_layernorm2d", "SAM ViT-B neck / ConvNeXt (channels_first LN)",
      "LayerNorm2d written out: mean(1), sub, pow(2), mean, + eps, pow(0.5), div, weight[:, None, None] * x + bias",
      "segment_anything/modeling/common.py LayerNorm2d.forward",
      vset([("sam_b1", dict(B=1, C=256, R=64)), ("sam_b8", dict(B=8, C=256, R=64)),
            ("convnext_b32", dict(B=32, C=96, R=56))]))
def _(g, B, C, R):
    x = g.act("x", [B, C, R, R])
    w, b = g.ln_params("ln", C)
    t0 = g.op("mean", x, dim=1, keepdim=True)
    t1 = g.op("sub", x, t0)
    t2 = g.op("pow", t1, 2)
    t3 = g.op("mean", t2, dim=1, keepdim=True)
    t4 = g.op("sub", x, t0)
    t5 = g.op("add", t3, 1e-6)
    t6 = g.op("pow", t5, 0.5)
    t7 = g.op("div", t4, t6)
    t8 = g.op("getitem", w, index=[ALL_SLICE, None, None])
    t9 = g.op("mul", t8, t7)
    t10 = g.op("getitem", b, index=[ALL_SLICE, None, None])
    t11 = g.op("add", t9, t10)
    return [t11]


# ----------------------------------------------------------------------------
# CNNs: ResNet / MobileNet / ShuffleNet / EfficientNet / SE-ResNet / YOLO


# torchvision ShuffleNetV2 InvertedResidual (shufflenet_v2_x1_0, PassNet v37):
# out = cat((x1, branch2(x2)), 1); channel_shuffle: view(B, 2, C/2, H, W), transpose(1, 2),
# contiguous, view(B, C, H, W); next block: x.chunk(2, dim=1)
@task("shufflenet_channel_shuffle", "ShuffleNetV2 x1.0 (torchvision)",
      "ShuffleNetV2 channel shuffle: cat, view, transpose, contiguous, view, chunk(2), getitem",
      "torchvision shufflenetv2.channel_shuffle + InvertedResidual.forward (PassNet v37)",
      vset([("st2_b1", dict(B=1, C=116, R=28)), ("st3_b8", dict(B=8, C=232, R=14)),
            ("st4_b32", dict(B=32, C=464, R=7))]))
def _(g, B, C, R):
    a = g.act("x1", [B, C // 2, R, R])
    b = g.act("branch2_out", [B, C // 2, R, R])
    t0 = g.op("cat", a, b, dim=1)
    t1 = g.op("view", t0, shape=[B, 2, C // 2, R, R])
    t2 = g.op("transpose", t1, dim0=1, dim1=2)
    t3 = g.op("contiguous", t2)
    t4 = g.op("view", t3, shape=[B, C, R, R])
    t5 = g.op("chunk", t4, chunks=2, dim=1)
    t6 = g.op("getitem", t5, index=[0])
    t7 = g.op("getitem", t5, index=[1])
    return [t6, t7]


# torchvision ResNet-50 Bottleneck: conv2 (3x3, pad 1, no bias) -> bn2 -> relu
@task("resnet50_conv3x3_bn_relu", "ResNet-50 (torchvision)",
      "ResNet-50 bottleneck middle: conv2d 3x3 (no bias), batch_norm (eval), relu",
      "torchvision resnet.Bottleneck.forward: relu(bn2(conv2(out)))",
      vset([("l1_b1", dict(B=1, C=64, R=56)), ("l2_b4", dict(B=4, C=128, R=28)), ("l3_b8", dict(B=8, C=256, R=14))]))
def _(g, B, C, R):
    x = g.act("x", [B, C, R, R])
    w = g.conv_w("conv2_w", C, C, 3)
    rm, rv, bw, bb = g.bn_params("bn2", C)
    t0 = g.op("conv2d", x, w, None, stride=[1, 1], padding=[1, 1])
    t1 = g.op("batch_norm", t0, rm, rv, bw, bb, training=False, momentum=0.1, eps=1e-5)
    t2 = g.op("relu", t1)
    return [t2]


# torchvision ResNet-50 Bottleneck tail: conv3 (1x1, C -> 4C) -> bn3; out += identity; relu
@task("resnet50_conv1x1_bn_add_relu", "ResNet-50 (torchvision)",
      "ResNet-50 bottleneck tail: conv2d 1x1, batch_norm, residual add, relu",
      "torchvision resnet.Bottleneck.forward: relu(bn3(conv3(out)) + identity)",
      vset([("l1_b1", dict(B=1, C=64, R=56)), ("l2_b8", dict(B=8, C=128, R=28)), ("l3_b16", dict(B=16, C=256, R=14))]))
def _(g, B, C, R):
    x = g.act("x", [B, C, R, R])
    idn = g.act("identity", [B, 4 * C, R, R])
    w = g.conv_w("conv3_w", 4 * C, C, 1)
    rm, rv, bw, bb = g.bn_params("bn3", 4 * C)
    t0 = g.op("conv2d", x, w)
    t1 = g.op("batch_norm", t0, rm, rv, bw, bb, training=False, momentum=0.1, eps=1e-5)
    t2 = g.op("add", t1, idn)
    t3 = g.op("relu", t2)
    return [t3]


# torchvision ResNet-50 head: avgpool (AdaptiveAvgPool2d(1)), flatten(1), fc 2048 -> 1000
@task("resnet50_head_pool_linear", "ResNet-50 (torchvision)",
      "ResNet-50 head: adaptive_avg_pool2d(1), flatten(1), linear 2048->1000",
      "torchvision resnet.ResNet._forward_impl tail",
      vset([("b1", dict(B=1)), ("b8", dict(B=8)), ("b32", dict(B=32))]))
def _(g, B, C=2048, R=7, K=1000):
    x = g.act("x", [B, C, R, R])
    w = g.param("fc_w", [K, C], std=0.02)
    b = g.param("fc_b", [K], std=0.02)
    t0 = g.op("adaptive_avg_pool2d", x, output_size=1)
    t1 = g.op("flatten", t0, start_dim=1)
    t2 = g.op("linear", t1, w, b)
    return [t2]


# DETR backbone FrozenBatchNorm2d (ResNet-50 at 800x1066) followed by the ReLU:
# w, b, rv, rm = [p.reshape(1, -1, 1, 1)]; scale = w * (rv + eps).rsqrt();
# bias = b - rm * scale; x * scale + bias
@task("detr_frozen_batchnorm_relu", "DETR ResNet-50 backbone (facebookresearch/detr)",
      "DETR FrozenBatchNorm2d written out: reshape params, + eps, rsqrt, mul, sub, x * scale + bias, relu",
      "detr/models/backbone.py FrozenBatchNorm2d.forward",
      vset([("conv1_b1", dict(B=1, C=64, H=400, W=533)), ("layer2_b2", dict(B=2, C=512, H=100, W=134)),
            ("layer4_b8", dict(B=8, C=2048, H=25, W=34))]))
def _(g, B, C, H, W):
    x = g.act("x", [B, C, H, W])
    w = g.param("weight", [C], mean=1.0, std=0.1)
    b = g.param("bias", [C], mean=0.0, std=0.1)
    rm = g.param("running_mean", [C], mean=0.0, std=0.1)
    rv = g.param("running_var", [C], mean=1.0, std=0.5, lo=0.0)
    w4 = g.op("reshape", w, shape=[1, -1, 1, 1])
    b4 = g.op("reshape", b, shape=[1, -1, 1, 1])
    rv4 = g.op("reshape", rv, shape=[1, -1, 1, 1])
    rm4 = g.op("reshape", rm, shape=[1, -1, 1, 1])
    t0 = g.op("add", rv4, 1e-5)
    t1 = g.op("rsqrt", t0)
    t2 = g.op("mul", w4, t1)
    t3 = g.op("mul", rm4, t2)
    t4 = g.op("sub", b4, t3)
    t5 = g.op("mul", x, t2)
    t6 = g.op("add", t5, t4)
    t7 = g.op("relu", t6)
    return [t7]


# HF DetrAttention (detr-resnet-50 encoder, 8 heads x 32, tokens = H/32 * W/32; PassNet h16):
# q = q_proj(h) * scaling; _shape -> view(B, S, 8, 32).transpose(1, 2).contiguous();
# view(B*8, -1, 32); bmm(q, k^T); view(B, 8, S, S) + mask; view(B*8, S, S); softmax; dropout;
# bmm(probs, v); view(B, 8, S, 32); transpose(1, 2); reshape(B, S, 256)
@task("detr_attention_bmm", "DETR ResNet-50 (HF)",
      "DETR encoder attention: scale q, reshape to heads, bmm q @ k^T, + mask, softmax, dropout, bmm @ v, merge heads",
      "HF DetrAttention.forward",
      vset([("s400_b8", dict(B=8, S=400)), ("s850_b2", dict(B=2, S=850)), ("s256_b16", dict(B=16, S=256))],
           (F32, F16)))
def _(g, B, S, NH=8, HD=32):
    E = NH * HD
    q = g.act("q_proj_out", [B, S, E])
    k = g.act("key_states", [B, NH, S, HD])
    v = g.act("value_states", [B, NH, S, HD])
    m = g.input("attention_mask", [B, 1, S, S], mean=-1.0, std=5.0, hi=0.0)
    t0 = g.op("mul", q, HD ** -0.5)
    t1 = g.op("view", t0, shape=[B, S, NH, HD])
    t2 = g.op("transpose", t1, dim0=1, dim1=2)
    t3 = g.op("contiguous", t2)
    t4 = g.op("view", t3, shape=[B * NH, -1, HD])
    t5 = g.op("view", k, shape=[B * NH, -1, HD])
    t6 = g.op("view", v, shape=[B * NH, -1, HD])
    t7 = g.op("transpose", t5, dim0=1, dim1=2)
    t8 = g.op("bmm", t4, t7)
    t9 = g.op("view", t8, shape=[B, NH, S, S])
    t10 = g.op("add", t9, m)
    t11 = g.op("view", t10, shape=[B * NH, S, S])
    t12 = g.op("softmax", t11, dim=-1)
    t13 = g.op("dropout", t12, p=0.0, training=False)
    t14 = g.op("bmm", t13, t6)
    t15 = g.op("view", t14, shape=[B, NH, S, HD])
    t16 = g.op("transpose", t15, dim0=1, dim1=2)
    t17 = g.op("reshape", t16, shape=[B, S, E])
    return [t17]


# HF DeformableDetrMultiscaleDeformableAttention (8 heads, n_points 4; PassNet h26):
# softmax(attention_weights, -1).view(B, Q, 8, L, 4); spatial_shapes[..., 1], [..., 0]
@task("deformable_detr_attention_weights", "Deformable DETR (HF)",
      "Deformable DETR: softmax over levels*points, view to [B, Q, 8, L, 4], spatial_shapes[..., 1] and [..., 0]",
      "HF DeformableDetrMultiscaleDeformableAttention.forward (PassNet h26)",
      vset([("l1_q625_b4", dict(B=4, L=1, Q=625)), ("l4_enc_b1", dict(B=1, L=4, Q=17821)),
            ("l4_dec_b8", dict(B=8, L=4, Q=300))]))
def _(g, B, L, Q, NH=8, P=4):
    shapes = [[25, 25]] if L == 1 else [[100, 134], [50, 67], [25, 34], [13, 17]]
    ss = g.input("spatial_shapes", [L, 2], "int64", data=[v for s in shapes for v in s])
    aw = g.act("attention_weights", [B, Q, NH, L * P])
    t0 = g.op("softmax", aw, dim=-1)
    t1 = g.op("view", t0, shape=[B, Q, NH, L, P])
    t2 = g.op("getitem", ss, index=["...", 1])
    t3 = g.op("getitem", ss, index=["...", 0])
    return [t1, t2, t3]


# torchvision/PyTorch-hub MobileNetV1 depthwise block: conv 3x3 groups=C (stride 1 or 2),
# BatchNorm2d, ReLU
@task("mobilenetv1_depthwise_conv_bn_relu", "MobileNetV1",
      "MobileNetV1 depthwise block: conv2d 3x3 groups=C (stride 1/2), batch_norm, relu",
      "MobileNet conv_dw: Conv2d(C, C, 3, stride, 1, groups=C, bias=False), BatchNorm2d, ReLU",
      vset([("dw1_b1", dict(B=1, C=32, R=112, S=1)), ("dw2_b8", dict(B=8, C=64, R=112, S=2)),
            ("dw12_b32", dict(B=32, C=512, R=14, S=1))]))
def _(g, B, C, R, S):
    x = g.act("x", [B, C, R, R])
    w = g.conv_w("dw_w", C, 1, 3)
    rm, rv, bw, bb = g.bn_params("bn", C)
    t0 = g.op("conv2d", x, w, None, stride=[S, S], padding=[1, 1], groups=C)
    t1 = g.op("batch_norm", t0, rm, rv, bw, bb, training=False, momentum=0.1, eps=1e-5)
    t2 = g.op("relu", t1)
    return [t2]


# torchvision SqueezeExcitation in EfficientNet-B0 MBConv: scale = sigmoid(fc2(silu(fc1(
# avgpool(x))))); scale * input   (fc1/fc2 are 1x1 convs with bias)
@task("efficientnet_b0_squeeze_excitation", "EfficientNet-B0 (torchvision)",
      "EfficientNet SE block: adaptive_avg_pool2d(1), conv 1x1, silu, conv 1x1, sigmoid, mul",
      "torchvision ops.SqueezeExcitation.forward (activation SiLU)",
      vset([("mb2_b1", dict(B=1, C=96, R=112, RC=4)), ("mb4_b8", dict(B=8, C=144, R=56, RC=6)),
            ("mb11_b32", dict(B=32, C=480, R=14, RC=20))]))
def _(g, B, C, R, RC):
    x = g.act("x", [B, C, R, R])
    w1 = g.conv_w("fc1_w", RC, C, 1)
    b1 = g.param("fc1_b", [RC], std=0.02)
    w2 = g.conv_w("fc2_w", C, RC, 1)
    b2 = g.param("fc2_b", [C], std=0.02)
    t0 = g.op("adaptive_avg_pool2d", x, output_size=1)
    t1 = g.op("conv2d", t0, w1, b1)
    t2 = g.op("silu", t1)
    t3 = g.op("conv2d", t2, w2, b2)
    t4 = g.op("sigmoid", t3)
    t5 = g.op("mul", t4, x)
    return [t5]


# timm SEModule in seresnet50 Bottleneck: x_se = x.mean((2, 3), keepdim=True); fc1 (1x1 conv);
# relu; fc2; x * sigmoid(x_se); then + shortcut and relu
@task("seresnet50_se_residual", "SE-ResNet-50 (timm)",
      "SE-ResNet bottleneck tail: mean over (2,3), conv 1x1, relu, conv 1x1, sigmoid, mul, residual add, relu",
      "timm SEModule.forward + Bottleneck.forward tail",
      vset([("l1_b1", dict(B=1, C=256, R=56)), ("l3_b8", dict(B=8, C=1024, R=14)),
            ("l1_b32", dict(B=32, C=256, R=56))]))
def _(g, B, C, R):
    RC = C // 16
    x = g.act("x", [B, C, R, R])
    sc = g.act("shortcut", [B, C, R, R])
    w1 = g.conv_w("fc1_w", RC, C, 1)
    b1 = g.param("fc1_b", [RC], std=0.02)
    w2 = g.conv_w("fc2_w", C, RC, 1)
    b2 = g.param("fc2_b", [C], std=0.02)
    t0 = g.op("mean", x, dim=[2, 3], keepdim=True)
    t1 = g.op("conv2d", t0, w1, b1)
    t2 = g.op("relu", t1)
    t3 = g.op("conv2d", t2, w2, b2)
    t4 = g.op("sigmoid", t3)
    t5 = g.op("mul", x, t4)
    t6 = g.op("add", t5, sc)
    t7 = g.op("relu", t6)
    return [t7]


# ultralytics Conv (YOLOv8n backbone, k3 s2): act(bn(conv(x))), BatchNorm2d(eps=1e-3,
# momentum=0.03), SiLU
@task("yolov8_conv_bn_silu", "YOLOv8n (ultralytics)",
      "YOLOv8 Conv: conv2d 3x3 stride 2 (no bias), batch_norm (eps 1e-3), silu",
      "ultralytics nn/modules/conv.py Conv.forward",
      vset([("l1_b1", dict(B=1, CI=16, CO=32, R=320)), ("l3_b4", dict(B=4, CI=32, CO=64, R=160)),
            ("l5_b8", dict(B=8, CI=64, CO=128, R=80))]))
def _(g, B, CI, CO, R):
    x = g.act("x", [B, CI, R, R])
    w = g.conv_w("conv_w", CO, CI, 3)
    rm, rv, bw, bb = g.bn_params("bn", CO)
    t0 = g.op("conv2d", x, w, None, stride=[2, 2], padding=[1, 1])
    t1 = g.op("batch_norm", t0, rm, rv, bw, bb, training=False, momentum=0.03, eps=1e-3)
    t2 = g.op("silu", t1)
    return [t2]


# ultralytics C2f.forward_split (YOLOv8n, fused Conv = conv with bias + SiLU):
# y = list(cv1(x).split((self.c, self.c), 1))
@task("yolov8_c2f_cv1_split", "YOLOv8n (ultralytics)",
      "YOLOv8 C2f entry: conv2d 1x1 with bias, silu, split([c, c], 1), getitem",
      "ultralytics nn/modules/block.py C2f.forward_split (fused Conv)",
      vset([("l2_b1", dict(B=1, C=32, R=160)), ("l4_b8", dict(B=8, C=64, R=80)), ("l6_b16", dict(B=16, C=128, R=40))]))
def _(g, B, C, R):
    x = g.act("x", [B, C, R, R])
    w = g.conv_w("cv1_w", C, C, 1)
    b = g.param("cv1_b", [C], std=0.1)
    t0 = g.op("conv2d", x, w, b)
    t1 = g.op("silu", t0)
    t2 = g.op("split", t1, split_size=[C // 2, C // 2], dim=1)
    t3 = g.op("getitem", t2, index=[0])
    t4 = g.op("getitem", t2, index=[1])
    return [t3, t4]


# ultralytics neck: nn.Upsample(None, 2, "nearest") then Concat([up, skip], 1)
# (YOLOv8n at 640: 256 ch 20x20 + P4 128 ch 40x40; YOLOv8s at 1280: 512 ch 40x40 + 256 ch)
@task("yolov8_upsample_concat", "YOLOv8n / YOLOv8s (ultralytics)",
      "YOLOv8 neck: interpolate nearest scale_factor 2, cat with the skip feature",
      "ultralytics Upsample + Concat modules",
      vset([("n640_b1", dict(B=1, C=256, CS=128, R=20)), ("n640_b16", dict(B=16, C=256, CS=128, R=20)),
            ("s1280_b4", dict(B=4, C=512, CS=256, R=40))]))
def _(g, B, C, CS, R):
    x = g.act("x", [B, C, R, R])
    skip = g.act("skip", [B, CS, 2 * R, 2 * R])
    t0 = g.op("interpolate", x, scale_factor=2.0, mode="nearest")
    t1 = g.op("cat", t0, skip, dim=1)
    return [t1]


# YOLOv5 Focus (models/common.py): conv(cat([x[..., ::2, ::2], x[..., 1::2, ::2],
# x[..., ::2, 1::2], x[..., 1::2, 1::2]], 1)), Conv = conv + bn + export-friendly SiLU
# (x * sigmoid(x))
@task("yolov5_focus_swish", "YOLOv5s (ultralytics yolov5 v5.0)",
      "YOLOv5 Focus: four strided slices x[..., ::2, ::2] etc., cat, conv 3x3, batch_norm, x * sigmoid(x)",
      "yolov5 models/common.py Focus.forward + Conv with SiLU written as x * sigmoid(x)",
      vset([("i640_b1", dict(B=1, IMG=640)), ("i640_b2", dict(B=2, IMG=640)), ("i320_b8", dict(B=8, IMG=320))]))
def _(g, B, IMG, CO=32):
    x = g.act("images", [B, 3, IMG, IMG])
    w = g.conv_w("conv_w", CO, 12, 3)
    rm, rv, bw, bb = g.bn_params("bn", CO)
    s0, s1 = [None, None, 2], [1, None, 2]
    parts = [g.op("getitem", x, index=["...", a, b]) for a, b in ((s0, s0), (s1, s0), (s0, s1), (s1, s1))]
    t4 = g.op("cat", *parts, dim=1)
    t5 = g.op("conv2d", t4, w, None, stride=[1, 1], padding=[1, 1])
    t6 = g.op("batch_norm", t5, rm, rv, bw, bb, training=False, momentum=0.03, eps=1e-3)
    t7 = g.op("sigmoid", t6)
    t8 = g.op("mul", t6, t7)
    return [t8]


# ultralytics Pose head (YOLO11l-pose, 17 keypoints x 3 = 51; PassNet v29): the last cv4
# conv of one scale, view(B, 51, -1), cat with the other two scales along -1
@task("yolo11_pose_head_conv_view_cat", "YOLO11l-pose (ultralytics)",
      "YOLO11 pose head: conv2d 1x1 (64->51, bias), view(B, 51, -1), cat of three scales on -1",
      "ultralytics Pose.forward (PassNet v29 yolo11l-pose)",
      vset([("i640_b1", dict(B=1, R=20)), ("i640_b16", dict(B=16, R=20)), ("i320_b8", dict(B=8, R=10))]))
def _(g, B, R, C=64, K=51):
    bias = g.param("cv4_b", [K], mean=0.0, std=0.7)
    w = g.conv_w("cv4_w", K, C, 1)
    x = g.act("x", [B, C, R, R])
    p3 = g.act("kpt_p3", [B, K, 16 * R * R])
    p4 = g.act("kpt_p4", [B, K, 4 * R * R])
    t0 = g.op("conv2d", x, w, bias, stride=[1, 1], padding=[0, 0], dilation=[1, 1], groups=1)
    t1 = g.op("view", t0, shape=[B, K, -1])
    t2 = g.op("cat", p3, p4, t1, dim=-1)
    return [t2]


# ----------------------------------------------------------------------------
# Segmentation and detection heads: BiSeNetV2, PIDNet, CGNet, DANet, UNet


# mmseg BiSeNetV2 BGALayer (128 ch; detail 1/8, semantic 1/32; PassNet v31):
# sigmoid(interpolate(semantic_up, size, bilinear)) * detail_dw;
# interpolate(detail_down * sigmoid(semantic_dw), size, bilinear)
@task("bisenetv2_bga_interp_sigmoid", "BiSeNetV2 (mmsegmentation)",
      "BiSeNetV2 bilateral guided aggregation: bilinear interpolate, sigmoid, mul; sigmoid, mul, bilinear interpolate",
      "mmseg models/backbones/bisenetv2.py BGALayer.forward (PassNet v31)",
      vset([("i512_b1", dict(B=1, H=64, W=64)), ("i512_b16", dict(B=16, H=64, W=64)),
            ("city_b2", dict(B=2, H=128, W=256))]))
def _(g, B, H, W, C=128):
    h, w = H // 4, W // 4
    dd = g.act("detail_down", [B, C, h, w])
    ddw = g.act("detail_dw", [B, C, H, W])
    su = g.act("semantic_up", [B, C, h, w])
    sdw = g.act("semantic_dw", [B, C, h, w])
    t0 = g.op("interpolate", su, size=[H, W], mode="bilinear", align_corners=False)
    t1 = g.op("sigmoid", t0)
    t2 = g.op("mul", ddw, t1)
    t3 = g.op("sigmoid", sdw)
    t4 = g.op("mul", dd, t3)
    t5 = g.op("interpolate", t4, size=[H, W], mode="bilinear", align_corners=False)
    return [t2, t5]


# PIDNet-L (mmseg) DAPPM/compression: conv 1x1 (1024 -> 256, no bias), + residual,
# bilinear interpolate to 1/8 resolution (PassNet v36)
@task("pidnet_conv_add_interp", "PIDNet-L (mmsegmentation)",
      "PIDNet: conv2d 1x1 1024->256 (no bias), add, bilinear interpolate to the 1/8 size",
      "mmseg PIDNet forward (PassNet v36 PIDNet-l)",
      vset([("i512_b1", dict(B=1, H=8, W=8)), ("i512_b16", dict(B=16, H=8, W=8)), ("city_b2", dict(B=2, H=16, W=32))]))
def _(g, B, H, W, CI=1024, CO=256):
    w = g.conv_w("conv_w", CO, CI, 1)
    r = g.act("residual", [B, CO, H, W])
    x = g.act("x", [B, CI, H, W])
    t0 = g.op("conv2d", x, w, None)
    t1 = g.op("add", r, t0)
    t2 = g.op("interpolate", t1, size=[8 * H, 8 * W], mode="bilinear", align_corners=False)
    return [t2]


# mmseg CGNet ContextGuidedBlock tail (PassNet v32): cat([loc, sur], 1); BatchNorm2d
# (eps 1e-3); PReLU(128); GlobalContextExtractor: adaptive_avg_pool2d(1).view(B, C)
@task("cgnet_cat_bn_prelu_pool", "CGNet (mmsegmentation)",
      "CGNet context-guided block: cat, batch_norm (eps 1e-3), prelu (per channel), adaptive_avg_pool2d(1), view",
      "mmseg models/backbones/cgnet.py ContextGuidedBlock.forward (PassNet v32)",
      vset([("l2_b1", dict(B=1, H=28, W=28)), ("l2_b32", dict(B=32, H=28, W=28)), ("city_b2", dict(B=2, H=128, W=256))]))
def _(g, B, H, W, C=128):
    pw = g.param("prelu_w", [C], mean=0.2, std=0.3)
    rm, rv, bw, bb = g.bn_params("bn", C)
    loc = g.act("loc", [B, C // 2, H, W])
    sur = g.act("sur", [B, C // 2, H, W])
    t0 = g.op("cat", loc, sur, dim=1)
    t1 = g.op("batch_norm", t0, rm, rv, bw, bb, training=False, momentum=0.1, eps=1e-3)
    t2 = g.op("prelu", t1, pw)
    t3 = g.op("adaptive_avg_pool2d", t2, output_size=1)
    t4 = g.op("view", t3, shape=[B, C])
    return [t2, t4]


# DANet PAM_Module (junfu1115/DANet, 512 channels, query/key 64):
# q = query_conv(x).view(B, -1, HW).permute(0, 2, 1); k = key_conv(x).view(B, -1, HW);
# energy = bmm(q, k); softmax(-1); v = value_conv(x).view(B, -1, HW);
# out = bmm(v, attention.permute(0, 2, 1)).view(B, C, H, W); gamma * out + x
# (spatial sizes kept at 32x32 and below for the CPU budget; DANet runs 64x64)
@task("danet_position_attention", "DANet ResNet-101 (DANet, mmseg)",
      "DANet position attention: view/permute, bmm, softmax, bmm with permuted attention, view, gamma * out + x",
      "DANet encoding/nn/da_att.py PAM_Module.forward",
      vset([("r32_b1", dict(B=1, R=32)), ("r24_b4", dict(B=4, R=24)), ("r16_b16", dict(B=16, R=16))]))
def _(g, B, R, C=512, CQ=64):
    N = R * R
    q = g.act("query", [B, CQ, R, R])
    k = g.act("key", [B, CQ, R, R])
    v = g.act("value", [B, C, R, R])
    x = g.act("x", [B, C, R, R])
    gamma = g.param("gamma", [1], mean=0.1, std=0.1)
    t0 = g.op("view", q, shape=[B, -1, N])
    t1 = g.op("permute", t0, dims=[0, 2, 1])
    t2 = g.op("view", k, shape=[B, -1, N])
    t3 = g.op("bmm", t1, t2)
    t4 = g.op("softmax", t3, dim=-1)
    t5 = g.op("view", v, shape=[B, -1, N])
    t6 = g.op("permute", t4, dims=[0, 2, 1])
    t7 = g.op("bmm", t5, t6)
    t8 = g.op("view", t7, shape=[B, C, R, R])
    t9 = g.op("mul", gamma, t8)
    t10 = g.op("add", t9, x)
    return [t10]


# milesial Pytorch-UNet Up (bilinear=True, first up block, 512 ch): x1 = Upsample(2, bilinear,
# align_corners=True)(x1); F.pad(x1, [dX // 2, dX - dX // 2, dY // 2, dY - dY // 2]);
# cat([x2, x1], 1)   (572x572, Carvana 959x640 and 256x256 inputs)
@task("unet_up_pad_cat", "UNet (milesial Pytorch-UNet)",
      "UNet decoder entry: bilinear upsample x2 (align_corners=True), pad to the skip size, cat",
      "milesial Pytorch-UNet unet_parts.py Up.forward",
      vset([("i572_b1", dict(B=1, H=35, W=35, H2=71, W2=71)), ("carvana_b2", dict(B=2, H=40, W=59, H2=80, W2=119)),
            ("i256_b16", dict(B=16, H=16, W=16, H2=32, W2=32))]))
def _(g, B, H, W, H2, W2, C=512):
    x1 = g.act("x1", [B, C, H, W])
    x2 = g.act("x2", [B, C, H2, W2])
    dy, dx = H2 - 2 * H, W2 - 2 * W
    t0 = g.op("interpolate", x1, scale_factor=2.0, mode="bilinear", align_corners=True)
    t1 = g.op("pad", t0, pad=[dx // 2, dx - dx // 2, dy // 2, dy - dy // 2])
    t2 = g.op("cat", x2, t1, dim=1)
    return [t2]


# ----------------------------------------------------------------------------
# Hybrid / attention variants: HaloNet, CoaT, MobileViT, wav2vec2, AFT


# timm halonet rel_logits_1d (eca_halonext26ts: block 8, window 12, dim_head 16; PassNet t04):
# x = q @ rel_k.transpose(-1, -2); x.reshape(-1, W, rel); pad [0, 1]; flatten(1);
# pad [0, rel - W]; reshape(-1, W + 1, rel); x[:, :W, win - 1:];
# reshape(B, H, 1, W, win).expand(-1, -1, win, -1, -1).permute(0, 1, 3, 2, 4)
@task("halonext_rel_logits_pad", "ECA-HaloNeXt26ts (timm)",
      "HaloNet relative logits: matmul, reshape, pad, flatten, pad, reshape, slice, reshape, expand, permute",
      "timm layers/bottleneck_attn.py rel_logits_1d (PassNet t04 eca_halonext26ts)",
      vset([("b1", dict(N=32)), ("b8", dict(N=256)), ("b32", dict(N=1024))]))
def _(g, N, BS=8, WIN=12, HD=16):
    rel = 2 * WIN - 1
    q = g.act("q", [N, BS, BS, HD])
    rk = g.param("rel_k", [rel, HD], mean=-0.02, std=0.05)
    t0 = g.op("transpose", rk, dim0=-1, dim1=-2)
    t1 = g.op("matmul", q, t0)
    t2 = g.op("reshape", t1, shape=[-1, BS, rel])
    t3 = g.op("pad", t2, pad=[0, 1], mode="constant")
    t4 = g.op("flatten", t3, start_dim=1)
    t5 = g.op("pad", t4, pad=[0, rel - BS], mode="constant")
    t6 = g.op("reshape", t5, shape=[-1, BS + 1, rel])
    t7 = g.op("getitem", t6, index=[ALL_SLICE, [None, BS, None], [WIN - 1, None, None]])
    t8 = g.op("reshape", t7, shape=[N, BS, 1, BS, WIN])
    t9 = g.op("expand", t8, size=[-1, -1, WIN, -1, -1])
    t10 = g.op("permute", t9, dims=[0, 1, 3, 2, 4])
    return [t10]


# timm CoaT FactorAttnConvRelPosEnc (coat_lite_medium stage 3: 8 heads x 32, 28x28, split
# [64, 96, 96]; coat_mini stage 1: 8 heads x 19, 56x56, split [38, 57, 57]; PassNet t02/t10):
# factor_att = q @ k_softmax_T_dot_v; ConvRelPosEnc: q[:, :, 1:, :], v[:, :, 1:, :],
# v_img.transpose(-1, -2).reshape(B, C, H, W), split(channel splits, dim=1)
@task("coat_factor_attention_split", "CoaT-Lite Medium / CoaT Mini (timm)",
      "CoaT factorized attention: matmul, drop cls with [:, :, 1:, :] slices, transpose, reshape to image, split",
      "timm models/coat.py FactorAttnConvRelPosEnc + ConvRelPosEnc.forward (PassNet t02/t10)",
      vset([("litem_b1", dict(B=1, HD=32, R=28)), ("litem_b16", dict(B=16, HD=32, R=28)),
            ("mini_b4", dict(B=4, HD=19, R=56))]))
def _(g, B, HD, R, NH=8):
    N = R * R + 1
    C = NH * HD
    q = g.act("q", [B, NH, N, HD])
    v = g.act("v", [B, NH, N, HD])
    kv = g.input("k_softmax_T_dot_v", [B, NH, HD, HD], mean=0.0, std=0.05)
    t0 = g.op("matmul", q, kv)
    rest = [1, None, None]
    t1 = g.op("getitem", q, index=[ALL_SLICE, ALL_SLICE, rest, ALL_SLICE])
    t2 = g.op("getitem", v, index=[ALL_SLICE, ALL_SLICE, rest, ALL_SLICE])
    t3 = g.op("transpose", t2, dim0=-1, dim1=-2)
    t4 = g.op("reshape", t3, shape=[B, C, R, R])
    t5 = g.op("split", t4, split_size=[2 * HD, 3 * HD, 3 * HD], dim=1)
    t6 = g.op("getitem", t5, index=[0])
    t7 = g.op("getitem", t5, index=[1])
    t8 = g.op("getitem", t5, index=[2])
    return [t0, t1, t6, t7, t8]


# HF MobileViTV2LinearSelfAttention (mobilevitv2-1.0: 128/192/256 ch, 2x2 patches):
# qkv = qkv_proj(x) (1x1 conv, C -> 1 + 2C); split([1, C, C], dim=1); softmax(query, -1);
# dropout; key * scores; sum(-1, keepdim); relu(value) * context.expand_as(value); out_proj
@task("mobilevitv2_linear_attention", "MobileViTv2-1.0 (HF / ml-cvnets)",
      "MobileViTv2 separable self-attention: conv 1x1, split [1, C, C], softmax, mul, sum, relu, expand, mul, conv 1x1",
      "HF MobileViTV2LinearSelfAttention.forward",
      vset([("s3_b1", dict(B=1, C=128, N=256)), ("s4_b8", dict(B=8, C=192, N=64)), ("s5_b32", dict(B=32, C=256, N=16))]))
def _(g, B, C, N, P=4):
    x = g.act("x", [B, C, P, N])
    wq = g.conv_w("qkv_proj_w", 1 + 2 * C, C, 1)
    bq = g.param("qkv_proj_b", [1 + 2 * C], std=0.02)
    wo = g.conv_w("out_proj_w", C, C, 1)
    bo = g.param("out_proj_b", [C], std=0.02)
    t0 = g.op("conv2d", x, wq, bq)
    t1 = g.op("split", t0, split_size=[1, C, C], dim=1)
    query = g.op("getitem", t1, index=[0])
    key = g.op("getitem", t1, index=[1])
    value = g.op("getitem", t1, index=[2])
    t2 = g.op("softmax", query, dim=-1)
    t3 = g.op("dropout", t2, p=0.0, training=False)
    t4 = g.op("mul", key, t3)
    t5 = g.op("sum", t4, dim=-1, keepdim=True)
    t6 = g.op("relu", value)
    t7 = g.op("expand", t5, size=[B, C, P, N])
    t8 = g.op("mul", t6, t7)
    t9 = g.op("conv2d", t8, wo, bo)
    return [t9]


# HF MobileViTLayer.unfolding (mobilevit-small: 144/192/240 ch at 32/16/8, 2x2 patches):
# reshape(B*C*nph, 2, npw, 2).transpose(1, 2).reshape(B, C, N, 4).transpose(1, 3)
# .reshape(B*4, N, -1)
@task("mobilevit_unfold_patches", "MobileViT-S (HF)",
      "MobileViT unfolding: reshape, transpose, reshape, transpose, reshape (image to patch sequences)",
      "HF MobileViTLayer.unfolding",
      vset([("s3_b1", dict(B=1, C=144, R=32)), ("s4_b8", dict(B=8, C=192, R=16)), ("s5_b32", dict(B=32, C=240, R=8))]))
def _(g, B, C, R, P=2):
    x = g.act("features", [B, C, R, R])
    n = R // P
    t0 = g.op("reshape", x, shape=[B * C * n, P, n, P])
    t1 = g.op("transpose", t0, dim0=1, dim1=2)
    t2 = g.op("reshape", t1, shape=[B, C, n * n, P * P])
    t3 = g.op("transpose", t2, dim0=1, dim1=3)
    t4 = g.op("reshape", t3, shape=[B * P * P, n * n, -1])
    return [t4]


# HF Wav2Vec2Model: extract_features.transpose(1, 2); Wav2Vec2FeatureProjection: layer_norm
# (512, eps 1e-5), projection 512 -> 768, dropout; returns both (frames: 49 per second)
@task("wav2vec2_feature_projection", "wav2vec2-base / HuBERT-base (HF)",
      "wav2vec2 feature projection: transpose(1, 2), layer_norm, linear 512->768, dropout; both results returned",
      "HF Wav2Vec2Model.forward + Wav2Vec2FeatureProjection.forward",
      vset([("t499_b1", dict(B=1, T=499)), ("t499_b4", dict(B=4, T=499)), ("t249_b8", dict(B=8, T=249))]))
def _(g, B, T, CI=512, CO=768):
    x = g.act("extract_features", [B, CI, T])
    lw, lb = g.ln_params("layer_norm", CI)
    w = g.param("projection_w", [CO, CI], std=0.02)
    b = g.param("projection_b", [CO], std=0.02)
    t0 = g.op("transpose", x, dim0=1, dim1=2)
    t1 = g.op("layer_norm", t0, lw, lb, normalized_shape=[CI], eps=1e-5)
    t2 = g.op("linear", t1, w, b)
    t3 = g.op("dropout", t2, p=0.1, training=False)
    return [t3, t1]


# Attention Free Transformer, AFT-Full (rish-16/aft-pytorch, hidden 512, max_seqlen 1024):
# temp_wbias = wbias[:T, :T].unsqueeze(0); Q_sig = sigmoid(Q);
# temp = exp(temp_wbias) @ (exp(K) * V); weighted = temp / (exp(temp_wbias) @ exp(K));
# Yt = Q_sig * weighted  (the duplicated exp calls are as written in the model)
@task("aft_full_attention", "AFT-Full (aft-pytorch)",
      "Attention Free Transformer: wbias slice + None, sigmoid, exp, mul, matmul, exp, matmul, div, mul",
      "aft-pytorch AFTFull.forward",
      vset([("b1_t128", dict(B=1, T=128)), ("b8_t256", dict(B=8, T=256)), ("b2_t512", dict(B=2, T=512))]))
def _(g, B, T, D=512, MAXT=1024):
    q = g.act("Q", [B, T, D])
    k = g.act("K", [B, T, D])
    v = g.act("V", [B, T, D])
    wb = g.param("wbias", [MAXT, MAXT], std=0.05)
    t0 = g.op("getitem", wb, index=[[None, T, None], [None, T, None]])
    t1 = g.op("getitem", t0, index=[None])
    t2 = g.op("sigmoid", q)
    t3 = g.op("exp", t1)
    t4 = g.op("exp", k)
    t5 = g.op("mul", t4, v)
    t6 = g.op("matmul", t3, t5)
    t7 = g.op("exp", t1)
    t8 = g.op("exp", k)
    t9 = g.op("matmul", t7, t8)
    t10 = g.op("div", t6, t9)
    t11 = g.op("mul", t2, t10)
    t12 = g.op("view", t11, shape=[B, T, D])
    return [t12]


# timm Attention, non-fused path, as timm writes it since 0.9 (vit_small_patch16_224: 6 heads x 64;
# deit_tiny_patch16_224: 3 x 64; vit_base_patch16_224: 12 x 64):
# qkv = self.qkv(x).reshape(B, N, 3, H, D).permute(2, 0, 3, 1, 4); q, k, v = qkv.unbind(0);
# q = q * self.scale; attn = q @ k.transpose(-2, -1); attn.softmax(dim=-1); attn_drop;
# x = attn @ v; x.transpose(1, 2).reshape(B, N, C)
@task("timm_qkv_unbind_attention", "ViT-S/16, DeiT-Ti/16, ViT-B/16 (timm)",
      "timm attention from the qkv projection: reshape, permute, unbind(0) into q, k, v, scale, q @ k^T, "
      "softmax, dropout, @ v, merge heads",
      "timm Attention.forward with fused_attn=False (q, k, v = qkv.unbind(0))",
      vset([("vits_b1", dict(B=1, NH=6)), ("deitti_b16", dict(B=16, NH=3)), ("vitb_b4", dict(B=4, NH=12))]))
def _(g, B, NH, N=197, HD=64):
    C = NH * HD
    qkv = g.act("qkv", [B, N, 3 * C])
    t0 = g.op("reshape", qkv, shape=[B, N, 3, NH, HD])
    t1 = g.op("permute", t0, dims=[2, 0, 3, 1, 4])
    t2 = g.op("unbind", t1, dim=0)
    q = g.op("getitem", t2, index=[0], name="q")
    k = g.op("getitem", t2, index=[1], name="k")
    v = g.op("getitem", t2, index=[2], name="v")
    t3 = g.op("mul", q, HD ** -0.5)
    t4 = g.op("transpose", k, dim0=-2, dim1=-1)
    t5 = g.op("matmul", t3, t4)
    t6 = g.op("softmax", t5, dim=-1)
    t7 = g.op("dropout", t6, p=0.0, training=False)
    t8 = g.op("matmul", t7, v)
    t9 = g.op("transpose", t8, dim0=1, dim1=2)
    return [g.op("reshape", t9, shape=[B, N, C])]


# HF BloomAttention (bloom-560m: 16 heads x 64; bloom-1b7: 16 x 128): alibi [B*H, 1, S] is the
# baddbmm input, broadcast over the queries; key_layer is already [B*H, D, S]:
# scores = alibi.baddbmm(batch1=query_layer, batch2=key_layer, beta=self.beta (1.0),
#                        alpha=self.inv_norm_factor (1/sqrt(D)));
# view(B, H, S, S) + causal_mask; softmax(dim=-1, dtype=torch.float32).to(query dtype);
# attention_dropout; view(B*H, S, S); bmm(probs, value_layer); _merge_heads:
# view(B, H, S, D).permute(0, 2, 1, 3).reshape(B, S, H*D)   (PassNet-style baddbmm sample:
# tests/import-samples/baddbmm_bloom)
@task("bloom_alibi_baddbmm_attention", "BLOOM-560m / BLOOM-1b7 (HF)",
      "BLOOM attention: alibi.baddbmm(q, k, beta=1, alpha=1/sqrt(D)), view, + causal mask, float32 softmax, "
      "to, dropout, bmm @ v, merge heads",
      "HF BloomAttention.forward",
      vset([("560m_b1_s128", dict(B=1, S=128, HD=64)), ("560m_b4_s256", dict(B=4, S=256, HD=64)),
            ("1b7_b1_s384", dict(B=1, S=384, HD=128))]))
def _(g, B, S, HD, NH=16):
    alibi = g.input("alibi", [B * NH, 1, S], mean=-1.0, std=2.0)
    q = g.act("query_layer", [B * NH, S, HD])
    k = g.act("key_layer", [B * NH, HD, S])
    v = g.act("value_layer", [B * NH, S, HD])
    m = g.input("causal_mask", [B, 1, S, S], mean=-1.0, std=5.0, hi=0.0)
    t0 = g.op("baddbmm", alibi, q, k, beta=1.0, alpha=1.0 / math.sqrt(HD))
    t1 = g.op("view", t0, shape=[B, NH, S, -1])
    t2 = g.op("add", t1, m)
    t3 = g.op("softmax", t2, dim=-1, dtype=F32)
    t4 = g.op("to", t3, dtype=g.dt)
    t5 = g.op("dropout", t4, p=0.0, training=False)
    t6 = g.op("view", t5, shape=[B * NH, S, -1])
    t7 = g.op("bmm", t6, v)
    t8 = g.op("view", t7, shape=[B, NH, S, HD])
    t9 = g.op("permute", t8, dims=[0, 2, 1, 3])
    return [g.op("reshape", t9, shape=[B, S, NH * HD])]


# timm ResNet-D downsample shortcut (resnet50d, `avg_down=True`; the test_resnet sample the import
# survey recorded): AvgPool2d(2, 2, ceil_mode=True, count_include_pad=False), conv 1x1 C -> 2C,
# BatchNorm; Bottleneck: x = conv3 branch + shortcut; act3 (ReLU).  At 200 px stage 3 sees a
# 25x25 map, where ceil_mode gives 13x13 and the last row and column of windows are cut.
@task("resnetd_avg_down_shortcut", "ResNet-50-D (timm)",
      "ResNet-D downsample shortcut: avg_pool2d 2x2 (ceil_mode, count_include_pad=False), conv2d 1x1, "
      "batch_norm, residual add, relu",
      "timm resnet.py downsample_avg + Bottleneck.forward",
      vset([("l2_b1", dict(B=1, C=256, R=56)), ("l3_i200_b8", dict(B=8, C=512, R=25)),
            ("l4_b8", dict(B=8, C=1024, R=14))]))
def _(g, B, C, R):
    x = g.act("shortcut", [B, C, R, R])
    ro = (R + 1) // 2
    branch = g.act("branch", [B, 2 * C, ro, ro])
    w = g.conv_w("down_conv_w", 2 * C, C, 1)
    rm, rv, bw, bb = g.bn_params("down_bn", 2 * C)
    t0 = g.op("avg_pool2d", x, kernel_size=2, stride=2, ceil_mode=True, count_include_pad=False)
    t1 = g.op("conv2d", t0, w)
    t2 = g.op("batch_norm", t1, rm, rv, bw, bb, training=False, momentum=0.1, eps=1e-5)
    t3 = g.op("add", branch, t2)
    return [g.op("relu", t3)]


# timm HaloAttn (eca_halonext26ts: block 8, halo 2, window 12, 8 heads, dim_head_qk 16,
# dim_head_v = dim_out / 8; the unfold the import survey recorded):
# kv = F.pad(kv, [halo] * 4); kv.unfold(2, win, block).unfold(3, win, block)
#   .reshape(B * heads, qk + v, num_blocks, -1).permute(0, 2, 3, 1);
# k, v = torch.split(kv, [qk, v], dim=-1)
@task("halonext_kv_unfold_windows", "ECA-HaloNeXt26ts (timm)",
      "HaloNet key/value windows: pad, unfold x2 (12x12 windows every 8), reshape, permute, split into k and v",
      "timm layers/halo_attn.py HaloAttn.forward (PassNet t04/t05 eca_halonext26ts)",
      vset([("s3_b1", dict(B=1, R=16, DV=32)), ("s3_b16", dict(B=16, R=16, DV=32)),
            ("s4_b32", dict(B=32, R=8, DV=64))]))
def _(g, B, R, DV, NH=8, QK=16, BS=8, HALO=2):
    win = BS + 2 * HALO
    nb = (R // BS) ** 2
    kv = g.act("kv", [B, NH * (QK + DV), R, R])
    t0 = g.op("pad", kv, pad=[HALO] * 4)
    t1 = g.op("unfold", t0, dimension=2, size=win, step=BS)
    t2 = g.op("unfold", t1, dimension=3, size=win, step=BS)
    t3 = g.op("reshape", t2, shape=[B * NH, QK + DV, nb, -1])
    t4 = g.op("permute", t3, dims=[0, 2, 3, 1])
    t5 = g.op("split", t4, split_size=[QK, DV], dim=-1)
    return [g.op("getitem", t5, index=[0], name="k"), g.op("getitem", t5, index=[1], name="v")]


# ----------------------------------------------------------------------------
# Output


def build_task(t):
    variants = []
    for vname, dt, params in t.variants:
        g = G(dt)
        outs = t.build(g, **params)
        variants.append({"name": vname, "inputs": g.inputs, "nodes": g.nodes, "outputs": list(outs)})
    doc = {"id": t.id, "summary": t.summary, "source": t.source, "variants": variants}
    return doc


def _inline(v):
    """True when v goes on one line: no list of objects anywhere inside it."""
    if isinstance(v, dict):
        return all(_inline(x) for x in v.values())
    if isinstance(v, list):
        return all(not isinstance(x, dict) and _inline(x) for x in v)
    return True


def dump(v, indent=0):
    """JSON with indent 2, but input specs, nodes and arrays of numbers on one line."""
    if _inline(v):
        return json.dumps(v, separators=(", ", ": "))
    pad = " " * (indent + 2)
    if isinstance(v, dict):
        items = ["%s%s: %s" % (pad, json.dumps(k), dump(x, indent + 2)) for k, x in v.items()]
        return "{\n" + ",\n".join(items) + "\n" + " " * indent + "}"
    items = [pad + dump(x, indent + 2) for x in v]
    return "[\n" + ",\n".join(items) + "\n" + " " * indent + "]"


def task_ops(doc):
    ops = []
    for v in doc["variants"]:
        for n in v["nodes"]:
            if n["op"] not in ops:
                ops.append(n["op"])
    return ops


def readme(docs):
    lines = [
        "# Bundled tasks",
        "",
        "A *task* is one fusible op sequence taken from a real model, with several",
        "*variants*: the same sequence at a few shapes (batch size, sequence length,",
        "stage) and dtypes (float32, float16, bfloat16), as in PassBench. Each task is a",
        "directory holding one `graph.json` (schema: `docs/graph-format.md`). A pass",
        "replaces the whole variant graph: it gets the variant's inputs in order and",
        "writes its outputs; passfs checks it against op-by-op eager execution on every",
        "variant and scores it with ES_t.",
        "",
        "The tasks are written out by `tasks/generate.py` (plain Python 3, no",
        "dependencies, deterministic). Each builder in it names the model and the code",
        "the op sequence comes from, at that model's real shapes; every variant stays",
        "under ~2 GFLOP and 32 Mi elements per tensor so the CPU backend can evaluate it.",
        "Inputs carry PassNet-style generation fields: activations mean 0 / std 1, weights",
        "with realistic statistics (layer-norm weight around 1, running_var >= 0, ...),",
        "int masks as uniform ints in [min, max], bool masks uniform > 0.5, literal data",
        "where the values matter (Deformable DETR's spatial shapes).",
        "",
        "Regenerate after editing the generator (the committed files must be exactly",
        "what it writes; `tests/oracle/test_tasks_torch.py` checks that):",
        "",
        "    python3 tasks/generate.py              # rewrites tasks/*/graph.json and this README",
        "    python3 tasks/generate.py --out DIR    # writes elsewhere",
        "",
        "Check them:",
        "",
        "    passfs tasks --tasks tasks                     # validates every task, lists them",
        "    passfs tasks --tasks tasks --show ID           # one task, node by node, inferred shapes",
        "    /usr/bin/python3 tests/oracle/test_tasks_torch.py   # PyTorch oracle (PASSFS=build/passfs)",
        "",
        "More tasks from PassNet / GraphNet samples (a directory with `model.py` and",
        "`weight_meta.py` per sample; several samples of the same subgraph at different",
        "shapes become the variants of one task):",
        "",
        "    passfs import SAMPLE_DIR... --out tasks/NEW_ID",
        "",
        "Imported tasks are not made by the generator; keep them in a separate task",
        "directory (`--tasks DIR`) or add an equivalent builder to `generate.py`.",
        "",
        "## Tasks",
        "",
        "%d tasks, %d variants. Shapes: the variant-name suffixes (b = batch, s/t = sequence"
        % (len(docs), sum(len(d["variants"]) for d in docs)),
        "length, l/s/st = stage or layer, i = input image size, r = spatial size).",
        "",
        "| id | model | ops | variants |",
        "|---|---|---|---|",
    ]
    for t, d in zip(TASKS, docs):
        dts = []
        shapes = []
        for vname, dt, _ in t.variants:
            if SHORT[dt] not in dts:
                dts.append(SHORT[dt])
            sfx = vname.split("_", 1)[1]
            if sfx not in shapes:
                shapes.append(sfx)
        lines.append("| `%s` | %s | %s | %d: %s x %s |" % (
            t.id, t.model, ", ".join(task_ops(d)), len(d["variants"]), "/".join(dts), ", ".join(shapes)))
    lines.append("")
    return "\n".join(lines)


def write_if_changed(path, text):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    try:
        with open(path, encoding="utf-8") as f:
            if f.read() == text:
                return
    except FileNotFoundError:
        pass
    with open(path, "w", encoding="utf-8") as f:
        f.write(text)


def main(argv):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", default=os.path.dirname(os.path.abspath(__file__)),
                    help="output directory (default: the directory of this script, tasks/)")
    ap.add_argument("--list", action="store_true", help="print the task ids and exit")
    args = ap.parse_args(argv)
    ids = [t.id for t in TASKS]
    assert len(set(ids)) == len(ids), "duplicate task id"
    if args.list:
        print("\n".join(ids))
        return 0
    docs = [build_task(t) for t in TASKS]
    for d in docs:
        write_if_changed(os.path.join(args.out, d["id"], "graph.json"), dump(d) + "\n")
    write_if_changed(os.path.join(args.out, "README.md"), readme(docs))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
