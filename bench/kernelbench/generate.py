#!/usr/bin/env python3
"""generate.py - writes bench/kernelbench/tasks/<id>/graph.json and
bench/kernelbench/problems.json from the table below.

Each entry is one KernelBench level1 problem (ScalingIntelligence/KernelBench,
KernelBench/level1/<file>) as the passfs ops express it, at the problem's full
shape (recorded only) and at two scaled-down shapes (the task's variants).
The scaled shapes shrink one or two dims so that eager's plan keeps the
structure it has at the full shape (same kernels, same launch geometry, enough
threads to fill an H200), see README.md, "Scaling".

    python3 bench/kernelbench/generate.py      (from the repository root)

stdlib only; rerunning it rewrites the same files.
"""
import json
import math
import os

HERE = os.path.dirname(os.path.abspath(__file__))
F32 = "float32"
F16 = "float16"
# torch.rand (uniform [0, 1)): mean 0.5, std 1/sqrt(12); passfs draws
# randn * std * 0.2 + mean, so std = 0.2887 / 0.2
RAND = {"mean": 0.5, "std": 1.4434}
# H100 SXM peak rates used to classify a problem's bound (README.md)
PEAK = {"fp32": 67e12, "tf32": 494.7e12, "fp16": 989.4e12}


def numel(shape):
    return math.prod(shape)


def inp(name, shape, dtype=F32, mean=None, std=None):
    d = {"name": name, "shape": list(shape), "dtype": dtype}
    d["mean"] = RAND["mean"] if mean is None else mean
    d["std"] = RAND["std"] if std is None else std
    return d


def node(name, op, inputs, **attrs):
    n = {"name": name, "op": op, "inputs": list(inputs)}
    if attrs:
        n["attrs"] = attrs
    return n


# ---------------------------------------------------------------------------
# Builders: params -> (inputs, nodes, outputs, work).  `work` is the quantity
# eager's time is linear in (elements streamed, or the GEMM's m*n*k); a
# variant's scale is work(full) / work(variant).


def unary(op, **attrs):
    def build(p):
        x = (p["B"], p["D"])
        return [inp("x", x)], [node("t0", op, ["x"], **attrs)], ["t0"], numel(x)
    return build


def swish(p):
    x = (p["B"], p["D"])
    return [inp("x", x)], [node("t0", "sigmoid", ["x"]), node("t1", "mul", ["x", "t0"])], ["t1"], numel(x)


def mat_scalar(p):
    a = (p["M"], p["N"])
    return [inp("A", a)], [node("t0", "mul", ["A", 3.14])], ["t0"], numel(a)


def new_gelu(p):
    # 0.5 * x * (1.0 + torch.tanh(math.sqrt(2.0 / math.pi) * (x + 0.044715 * torch.pow(x, 3.0))))
    x = (p["B"], p["D"])
    nodes = [
        node("t0", "mul", ["x", 0.5]),
        node("t1", "pow", ["x", 3.0]),
        node("t2", "mul", ["t1", 0.044715]),
        node("t3", "add", ["x", "t2"]),
        node("t4", "mul", ["t3", math.sqrt(2.0 / math.pi)]),
        node("t5", "tanh", ["t4"]),
        node("t6", "add", ["t5", 1.0]),
        node("t7", "mul", ["t0", "t6"]),
    ]
    return [inp("x", x)], nodes, ["t7"], numel(x)


def softmax(p):
    x = (p["B"], p["D"])
    return [inp("x", x)], [node("t0", "softmax", ["x"], dim=1)], ["t0"], numel(x)


def rms_norm(p):
    # rms = torch.sqrt(torch.mean(x ** 2, dim=1, keepdim=True) + eps); x / rms
    x = (p["B"], 64, p["H"], p["W"])
    nodes = [
        node("t0", "pow", ["x", 2]),
        node("t1", "mean", ["t0"], dim=1, keepdim=True),
        node("t2", "add", ["t1", 1e-5]),
        node("t3", "pow", ["t2", 0.5]),          # torch.sqrt: one elementwise launch either way
        node("t4", "div", ["x", "t3"]),
    ]
    return [inp("x", x)], nodes, ["t4"], numel(x)


def layer_norm(p):
    ns = (64, p["H"], p["W"])
    x = (16,) + ns
    ins = [inp("x", x), inp("weight", ns, mean=1.0, std=0.5), inp("bias", ns, mean=0.0, std=0.5)]
    return ins, [node("t0", "layer_norm", ["x", "weight", "bias"], normalized_shape=list(ns), eps=1e-5)], \
        ["t0"], numel(x)


def avg_pool1d(p):
    # nn.AvgPool1d(8, stride=1, padding=4): ATen's avg_pool1d is avg_pool2d
    # on x.unsqueeze(-2), squeezed back (views)
    B, C, L = p["B"], p["C"], 65536
    lo = (L + 2 * 4 - 8) // 1 + 1
    nodes = [
        node("t0", "view", ["x"], shape=[B, C, 1, L]),
        node("t1", "avg_pool2d", ["t0"], kernel_size=[1, 8], stride=[1, 1], padding=[0, 4]),
        node("t2", "view", ["t1"], shape=[B, C, lo]),
    ]
    return [inp("x", (B, C, L))], nodes, ["t2"], B * C * L


def avg_pool2d(p):
    x = (p["B"], p["C"], 2048, 2048)
    return [inp("x", x)], [node("t0", "avg_pool2d", ["x"], kernel_size=11)], ["t0"], numel(x)


def reduce_dim1(op, keepdim):
    def build(p):
        x = (p["B"], 4096, p["D2"])
        attrs = {"dim": 1, "keepdim": True} if keepdim else {"dim": 1}
        return [inp("x", x)], [node("t0", op, ["x"], **attrs)], ["t0"], numel(x)
    return build


def mse(p):
    x = (p["B"], 32768)
    nodes = [node("t0", "sub", ["predictions", "targets"]), node("t1", "pow", ["t0", 2]),
             node("t2", "mean", ["t1"], dim=None)]
    return [inp("predictions", x), inp("targets", x)], nodes, ["t2"], numel(x)


def hinge(p):
    # torch.mean(torch.clamp(1 - predictions * targets, min=0)); targets (32768,)
    # broadcast over predictions' last dim; clamp(min=0) is relu (one launch)
    x = (p["B"], 32768)
    nodes = [node("t0", "mul", ["predictions", "targets"]), node("t1", "sub", [1, "t0"]),
             node("t2", "relu", ["t1"]), node("t3", "mean", ["t2"], dim=None)]
    return [inp("predictions", x), inp("targets", (32768,), mean=0.0, std=5.0)], nodes, ["t3"], numel(x)


def matmul(ta=False, tb=False):
    """torch.matmul(A[.T], B[.T]); A given [M,K] (or [K,M] when ta), B [K,N] (or [N,K])."""
    def build(p):
        M, K, N = p["M"], p["K"], p["N"]
        a = (K, M) if ta else (M, K)
        b = (N, K) if tb else (K, N)
        nodes, ia, ib = [], "A", "B"
        if ta:
            nodes.append(node("At", "transpose", ["A"], dim0=0, dim1=1))
            ia = "At"
        if tb:
            nodes.append(node("Bt", "transpose", ["B"], dim0=0, dim1=1))
            ib = "Bt"
        nodes.append(node("C", "matmul", [ia, ib]))
        return [inp("A", a), inp("B", b)], nodes, ["C"], M * K * N
    return build


def bmm(p):
    a, b = (p["b"], p["m"], p["k"]), (p["b"], p["k"], p["n"])
    return [inp("A", a), inp("B", b)], [node("C", "bmm", ["A", "B"])], ["C"], p["b"] * p["m"] * p["k"] * p["n"]


def matvec(p):
    return [inp("A", (p["M"], p["K"])), inp("B", (p["K"], 1))], [node("C", "matmul", ["A", "B"])], ["C"], \
        p["M"] * p["K"]


def tensor3_matmul(p):
    a, b = (p["N"], p["M"], p["K"]), (p["K"], p["L"])
    return [inp("A", a), inp("B", b)], [node("C", "matmul", ["A", "B"])], ["C"], \
        p["N"] * p["M"] * p["K"] * p["L"]


def tensor4_matmul(p):
    # torch.einsum("bijl,lk->bijk", A, B): one GEMM of [b*i*j, l] x [l, k]
    a, b = (p["b"], p["i"], p["j"], p["l"]), (p["l"], p["k"])
    return [inp("A", a), inp("B", b)], [node("C", "matmul", ["A", "B"])], ["C"], numel(a) * p["k"]


def conv_std(p):
    # nn.Conv2d(16, 128, 3, bias=False)
    x, w = (p["B"], 16, p["H"], p["H"]), (128, 16, 3, 3)
    oh = p["H"] - 2
    return [inp("x", x), inp("weight", w, mean=0.0, std=0.5)], [node("t0", "conv2d", ["x", "weight"])], ["t0"], \
        p["B"] * oh * oh
    # work: output pixels (x 128 x 16 x 9 MACs each)


def conv_depthwise(p):
    # nn.Conv2d(C, C, 3, groups=C, bias=False)
    C = p["C"]
    x, w = (p["B"], C, 512, 512), (C, 1, 3, 3)
    return [inp("x", x), inp("weight", w, mean=0.0, std=0.5)], \
        [node("t0", "conv2d", ["x", "weight"], groups=C)], ["t0"], p["B"] * C


def conv_pointwise(p):
    # nn.Conv2d(64, 128, kernel_size=1, bias=False)
    x, w = (p["B"], 64, p["H"], p["H"]), (128, 64, 1, 1)
    return [inp("x", x), inp("weight", w, mean=0.0, std=0.5)], [node("t0", "conv2d", ["x", "weight"])], ["t0"], \
        p["B"] * p["H"] * p["H"]


def sdpa(p):
    q = (p["B"], p["H"], 512, 1024)
    ins = [inp("Q", q, F16), inp("K", q, F16), inp("V", q, F16)]
    return ins, [node("t0", "scaled_dot_product_attention", ["Q", "K", "V"])], ["t0"], p["B"] * p["H"]


# ---------------------------------------------------------------------------
# Full-shape traffic and FLOPs: the minimum eager moves (each kernel reads its
# operands and writes its result once) and the arithmetic; used only to tell a
# bandwidth-bound measurement from one that is not (README.md, "H100 -> H200").

EW = 1610612736          # 4096 * 393216


def gemm_bytes(m, k, n, b=1, es=4):
    return es * b * (m * k + k * n + m * n)


# (file, task id, summary, builder, full params, [(variant params)], bytes, flops, peak, note)
PROBLEMS = [
    ("5_Matrix_scalar_multiplication.py", "kb_5_matrix_scalar", "A * s, A [65536, 16384]", mat_scalar,
     {"M": 65536, "N": 16384}, [{"M": 512, "N": 16384}, {"M": 128, "N": 16384}],
     2 * 4 * 65536 * 16384, 65536 * 16384, "fp32", "rows scaled"),
    ("19_ReLU.py", "kb_19_relu", "torch.relu, x [4096, 393216]", unary("relu"),
     {"B": 4096, "D": 393216}, [{"B": 32, "D": 393216}, {"B": 8, "D": 393216}],
     2 * 4 * EW, EW, "fp32", "rows scaled"),
    ("20_LeakyReLU.py", "kb_20_leaky_relu", "F.leaky_relu(0.01), x [4096, 393216]",
     unary("leaky_relu", negative_slope=0.01),
     {"B": 4096, "D": 393216}, [{"B": 32, "D": 393216}, {"B": 8, "D": 393216}],
     2 * 4 * EW, 2 * EW, "fp32", "rows scaled"),
    ("21_Sigmoid.py", "kb_21_sigmoid", "torch.sigmoid, x [4096, 393216]", unary("sigmoid"),
     {"B": 4096, "D": 393216}, [{"B": 32, "D": 393216}, {"B": 8, "D": 393216}],
     2 * 4 * EW, 4 * EW, "fp32", "rows scaled"),
    ("22_Tanh.py", "kb_22_tanh", "torch.tanh, x [4096, 393216]", unary("tanh"),
     {"B": 4096, "D": 393216}, [{"B": 32, "D": 393216}, {"B": 8, "D": 393216}],
     2 * 4 * EW, 10 * EW, "fp32", "rows scaled"),
    ("25_Swish.py", "kb_25_swish", "x * torch.sigmoid(x) (2 launches), x [4096, 393216]", swish,
     {"B": 4096, "D": 393216}, [{"B": 32, "D": 393216}, {"B": 8, "D": 393216}],
     5 * 4 * EW, 5 * EW, "fp32", "rows scaled"),
    ("26_GELU_.py", "kb_26_gelu", "F.gelu (erf), x [4096, 393216]", unary("gelu", approximate="none"),
     {"B": 4096, "D": 393216}, [{"B": 32, "D": 393216}, {"B": 8, "D": 393216}],
     2 * 4 * EW, 20 * EW, "fp32", "rows scaled"),
    ("88_MinGPTNewGelu.py", "kb_88_mingpt_new_gelu", "minGPT NewGELU as 8 eager launches, x [8192, 8192]",
     new_gelu, {"B": 8192, "D": 8192}, [{"B": 1024, "D": 8192}, {"B": 256, "D": 8192}],
     18 * 4 * 8192 * 8192, 10 * 8192 * 8192, "fp32", "rows scaled"),
    ("23_Softmax.py", "kb_23_softmax", "torch.softmax(dim=1), x [4096, 393216]", softmax,
     {"B": 4096, "D": 393216}, [{"B": 4096, "D": 3072}, {"B": 4096, "D": 768}],
     2 * 4 * EW, 4 * EW, "fp32",
     "row length scaled, the 4096 rows (a block each, 256 threads: eager's geometry) kept"),
    ("36_RMSNorm_.py", "kb_36_rmsnorm", "x / sqrt(mean(x**2, dim=1, keepdim) + eps), x [112, 64, 512, 512]",
     rms_norm, {"B": 112, "H": 512, "W": 512}, [{"B": 1, "H": 512, "W": 256}, {"B": 1, "H": 256, "W": 256}],
     4 * (5 * 112 * 64 * 512 * 512 + 6 * 112 * 512 * 512), 4 * 112 * 64 * 512 * 512, "fp32",
     "batch and spatial scaled; the 64-channel reduction (a thread per output) kept"),
    ("40_LayerNorm.py", "kb_40_layernorm", "nn.LayerNorm((64, 256, 256)), x [16, 64, 256, 256]", layer_norm,
     {"H": 256, "W": 256}, [{"H": 128, "W": 64}, {"H": 64, "W": 32}],
     4 * (2 * 16 * 64 * 256 * 256 + 2 * 64 * 256 * 256), 8 * 16 * 64 * 256 * 256, "fp32",
     "normalized size scaled, the 16 rows (16 blocks: the kernel's parallelism) kept"),
    ("44_Average_Pooling_1D.py", "kb_44_avg_pool1d", "nn.AvgPool1d(8, 1, 4), x [64, 128, 65536]", avg_pool1d,
     {"B": 64, "C": 128}, [{"B": 1, "C": 128}, {"B": 1, "C": 32}],
     4 * (64 * 128 * 65536 + 64 * 128 * 65537), 8 * 64 * 128 * 65537, "fp32", "batch and channels scaled"),
    ("45_Average_Pooling_2D.py", "kb_45_avg_pool2d", "nn.AvgPool2d(11), x [16, 64, 2048, 2048]", avg_pool2d,
     {"B": 16, "C": 64}, [{"B": 1, "C": 4}, {"B": 1, "C": 1}],
     4 * (16 * 64 * 2048 * 2048 + 16 * 64 * 186 * 186), 121 * 16 * 64 * 186 * 186, "fp32",
     "batch and channels scaled, the 2048x2048 planes kept"),
    ("47_Sum_reduction_over_a_dimension.py", "kb_47_sum_dim1", "torch.sum(dim=1, keepdim), x [128, 4096, 4095]",
     reduce_dim1("sum", True), {"B": 128, "D2": 4095}, [{"B": 1, "D2": 4095}, {"B": 1, "D2": 2048}],
     4 * (128 * 4096 * 4095 + 128 * 4095), 128 * 4096 * 4095, "fp32",
     "outputs scaled (>= 2048, so no split), the 4096-long reduction kept"),
    ("48_Mean_reduction_over_a_dimension.py", "kb_48_mean_dim1", "torch.mean(dim=1), x [128, 4096, 4095]",
     reduce_dim1("mean", False), {"B": 128, "D2": 4095}, [{"B": 1, "D2": 4095}, {"B": 1, "D2": 2048}],
     4 * (128 * 4096 * 4095 + 128 * 4095), 128 * 4096 * 4095, "fp32",
     "outputs scaled (>= 2048, so no split), the 4096-long reduction kept"),
    ("94_MSELoss.py", "kb_94_mse_loss", "torch.mean((p - t) ** 2), p, t [32768, 32768]", mse,
     {"B": 32768}, [{"B": 256}, {"B": 64}],
     4 * 6 * 32768 * 32768, 3 * 32768 * 32768, "fp32", "rows scaled; the mean stays a whole-tensor reduction"),
    ("100_HingeLoss.py", "kb_100_hinge_loss", "torch.mean(torch.clamp(1 - p * t, min=0)), p [32768, 32768]",
     hinge, {"B": 32768}, [{"B": 256}, {"B": 64}],
     4 * 7 * 32768 * 32768, 4 * 32768 * 32768, "fp32",
     "rows scaled; targets [32768] kept; the mean stays a whole-tensor reduction"),
    ("1_Square_matrix_multiplication_.py", "kb_1_matmul_square", "torch.matmul, 4096 x 4096 x 4096", matmul(),
     {"M": 4096, "K": 4096, "N": 4096}, [{"M": 1024, "K": 1024, "N": 1024}, {"M": 1024, "K": 256, "N": 1024}],
     gemm_bytes(4096, 4096, 4096), 2 * 4096 ** 3, "fp32", "M, N and K scaled"),
    ("13_Matmul_for_symmetric_matrices.py", "kb_13_matmul_symmetric", "torch.matmul of symmetric A, B, N = 4096",
     matmul(), {"M": 4096, "K": 4096, "N": 4096},
     [{"M": 1024, "K": 1024, "N": 1024}, {"M": 1024, "K": 256, "N": 1024}],
     gemm_bytes(4096, 4096, 4096), 2 * 4096 ** 3, "fp32",
     "M, N and K scaled; symmetry does not change the GEMM (inputs not symmetric here)"),
    ("2_Standard_matrix_multiplication_.py", "kb_2_matmul", "torch.matmul, M 2048, K 8192, N 4096", matmul(),
     {"M": 2048, "K": 8192, "N": 4096}, [{"M": 512, "K": 2048, "N": 1024}, {"M": 512, "K": 512, "N": 1024}],
     gemm_bytes(2048, 8192, 4096), 2 * 2048 * 8192 * 4096, "fp32", "M, N and K scaled"),
    ("16_Matmul_with_transposed_A.py", "kb_16_matmul_at", "torch.matmul(A.T, B), M 2048, K 8192, N 4096",
     matmul(ta=True), {"M": 2048, "K": 8192, "N": 4096},
     [{"M": 512, "K": 2048, "N": 1024}, {"M": 512, "K": 512, "N": 1024}],
     gemm_bytes(2048, 8192, 4096), 2 * 2048 * 8192 * 4096, "fp32", "M, N and K scaled"),
    ("17_Matmul_with_transposed_B.py", "kb_17_matmul_bt", "torch.matmul(A, B.T), M 2048, K 8192, N 4096",
     matmul(tb=True), {"M": 2048, "K": 8192, "N": 4096},
     [{"M": 512, "K": 2048, "N": 1024}, {"M": 512, "K": 512, "N": 1024}],
     gemm_bytes(2048, 8192, 4096), 2 * 2048 * 8192 * 4096, "fp32", "M, N and K scaled"),
    ("18_Matmul_with_transposed_both.py", "kb_18_matmul_at_bt", "torch.matmul(A.T, B.T), M 2048, K 8192, N 4096",
     matmul(ta=True, tb=True), {"M": 2048, "K": 8192, "N": 4096},
     [{"M": 512, "K": 2048, "N": 1024}, {"M": 512, "K": 512, "N": 1024}],
     gemm_bytes(2048, 8192, 4096), 2 * 2048 * 8192 * 4096, "fp32", "M, N and K scaled"),
    ("3_Batched_matrix_multiplication.py", "kb_3_bmm", "torch.bmm, 128 x (512 x 1024 x 2048)", bmm,
     {"b": 128, "m": 512, "k": 1024, "n": 2048},
     [{"b": 2, "m": 512, "k": 512, "n": 2048}, {"b": 2, "m": 512, "k": 128, "n": 2048}],
     gemm_bytes(512, 1024, 2048, 128), 2 * 128 * 512 * 1024 * 2048, "fp32", "batch and K scaled"),
    ("4_Matrix_vector_multiplication_.py", "kb_4_matvec", "torch.matmul, A [2048, 1048576] x B [1048576, 1]",
     matvec, {"M": 2048, "K": 1048576}, [{"M": 2048, "K": 4096}, {"M": 2048, "K": 1024}],
     gemm_bytes(2048, 1048576, 1), 2 * 2048 * 1048576, "fp32", "K scaled"),
    ("6_Matmul_with_large_K_dimension_.py", "kb_6_matmul_large_k", "torch.matmul, M 256, K 524288, N 256",
     matmul(), {"M": 256, "K": 524288, "N": 256}, [{"M": 256, "K": 16384, "N": 256}, {"M": 256, "K": 4096, "N": 256}],
     gemm_bytes(256, 524288, 256), 2 * 256 * 524288 * 256, "fp32",
     "K scaled (split-K into 8 parts at every size, as at the full shape)"),
    ("7_Matmul_with_small_K_dimension_.py", "kb_7_matmul_small_k", "torch.matmul, M 32768, K 64, N 32768",
     matmul(), {"M": 32768, "K": 64, "N": 32768}, [{"M": 4096, "K": 64, "N": 4096}, {"M": 4096, "K": 64, "N": 1024}],
     gemm_bytes(32768, 64, 32768), 2 * 32768 * 32768 * 64, "fp32", "M and N scaled"),
    ("8_Matmul_with_irregular_shapes_.py", "kb_8_matmul_irregular", "torch.matmul, M 8205, K 2949, N 5921",
     matmul(), {"M": 8205, "K": 2949, "N": 5921}, [{"M": 1026, "K": 185, "N": 5921}, {"M": 1026, "K": 46, "N": 5921}],
     gemm_bytes(8205, 2949, 5921), 2 * 8205 * 2949 * 5921, "fp32",
     "M and K scaled (1026 rows: 17 tiles of 64, filling whole waves as the full shape does)"),
    ("9_Tall_skinny_matrix_multiplication_.py", "kb_9_matmul_tall_skinny", "torch.matmul, M 32768, K 32, N 32768",
     matmul(), {"M": 32768, "K": 32, "N": 32768}, [{"M": 4096, "K": 32, "N": 4096}, {"M": 4096, "K": 32, "N": 1024}],
     gemm_bytes(32768, 32, 32768), 2 * 32768 * 32768 * 32, "fp32", "M and N scaled"),
    ("10_3D_tensor_matrix_multiplication.py", "kb_10_matmul_3d", "torch.matmul, A [16, 1024, 2048] x B [2048, 768]",
     tensor3_matmul, {"N": 16, "M": 1024, "K": 2048, "L": 768},
     [{"N": 2, "M": 1024, "K": 512, "L": 768}, {"N": 2, "M": 1024, "K": 128, "L": 768}],
     gemm_bytes(16 * 1024, 2048, 768), 2 * 16 * 1024 * 2048 * 768, "fp32", "batch and K scaled"),
    ("11_4D_tensor_matrix_multiplication.py", "kb_11_matmul_4d",
     "torch.einsum('bijl,lk->bijk') as one matmul, A [8, 256, 512, 256] x B [256, 768]", tensor4_matmul,
     {"b": 8, "i": 256, "j": 512, "l": 256, "k": 768},
     [{"b": 1, "i": 8, "j": 512, "l": 256, "k": 768}, {"b": 1, "i": 8, "j": 512, "l": 64, "k": 768}],
     gemm_bytes(8 * 256 * 512, 256, 768), 2 * 8 * 256 * 512 * 256 * 768, "fp32", "b, i and l (K) scaled"),
    ("63_conv_standard_2D__square_input__square_kernel.py", "kb_63_conv2d_3x3",
     "nn.Conv2d(16, 128, 3), x [16, 16, 1024, 1024]", conv_std, {"B": 16, "H": 1024},
     [{"B": 1, "H": 253}, {"B": 1, "H": 131}],
     4 * (16 * 16 * 1024 * 1024 + 16 * 128 * 1022 * 1022), 2 * 16 * 128 * 1022 * 1022 * 16 * 9, "tf32",
     "batch and spatial scaled (output tiles filling whole waves, as at the full shape)"),
    ("82_conv_depthwise_2D_square_input_square_kernel.py", "kb_82_conv2d_depthwise",
     "nn.Conv2d(64, 64, 3, groups=64), x [16, 64, 512, 512]", conv_depthwise, {"B": 16, "C": 64},
     [{"B": 1, "C": 16}, {"B": 1, "C": 4}],
     4 * (16 * 64 * 512 * 512 + 16 * 64 * 510 * 510), 2 * 9 * 16 * 64 * 510 * 510, "fp32",
     "batch and channels (= groups) scaled, the 512x512 planes kept"),
    ("87_conv_pointwise_2D.py", "kb_87_conv2d_pointwise", "nn.Conv2d(64, 128, 1), x [16, 64, 1024, 1024]",
     conv_pointwise, {"B": 16, "H": 1024}, [{"B": 1, "H": 256}, {"B": 1, "H": 128}],
     4 * (16 * 64 * 1024 * 1024 + 16 * 128 * 1024 * 1024), 2 * 16 * 1024 * 1024 * 64 * 128, "tf32",
     "batch and spatial scaled"),
    ("97_ScaledDotProductAttention.py", "kb_97_sdpa", "F.scaled_dot_product_attention, q, k, v f16 [32, 32, 512, 1024]",
     sdpa, {"B": 32, "H": 32}, [{"B": 1, "H": 4}, {"B": 1, "H": 2}],
     2 * 4 * 32 * 32 * 512 * 1024, 4 * 32 * 32 * 512 * 512 * 1024, "fp16", "batch x heads scaled"),
]

# Problems the ops cannot express faithfully (README.md says why).
LEFT_OUT = {
    "12_Matmul_with_diagonal_matrices_.py": "torch.diag has no op",
    "14_Matmul_for_upper_triangular_matrices.py": "torch.triu has no op",
    "15_Matmul_for_lower_triangular_matrices.py": "torch.tril has no op",
    "24_LogSoftmax.py": "no log op",
    "27_SELU_.py": "one torch kernel; only a multi-launch decomposition (exp, where, ...) is expressible",
    "28_HardSigmoid.py": "no clamp/min/max op",
    "29_Softplus.py": "no log op",
    "30_Softsign.py": "no abs op",
    "31_ELU.py": "one torch kernel; only a multi-launch decomposition is expressible",
    "32_HardTanh.py": "no clamp/min/max op",
    "33_BatchNorm.py": "the module runs in training mode (batch statistics); passfs batch_norm is eval only",
    "34_InstanceNorm.py": "one torch kernel; only a multi-launch decomposition is expressible",
    "35_GroupNorm_.py": "one torch kernel; only a multi-launch decomposition is expressible",
    "37_FrobeniusNorm_.py": "torch.norm is one reduction kernel; pow+sum+pow would add a full pass",
    "38_L1Norm_.py": "no abs op",
    "39_L2Norm_.py": "torch.norm(dim=1) is one reduction kernel; pow+sum+pow would add a full pass",
    "41_Max_Pooling_1D.py": "no max pooling op",
    "42_Max_Pooling_2D.py": "no max pooling op",
    "43_Max_Pooling_3D.py": "no 3-D ops",
    "46_Average_Pooling_3D.py": "no 3-D pooling",
    "49_Max_reduction_over_a_dimension.py": "no max reduction",
    "51_Argmax_over_a_dimension.py": "no argmax",
    "52_Argmin_over_a_dimension.py": "no argmin",
    "53_Min_reduction_over_a_dimension.py": "no min reduction",
    "89_cumsum.py": "no cumsum", "90_cumprod.py": "no cumprod", "91_cumsum_reverse.py": "no cumsum",
    "92_cumsum_exclusive.py": "no cumsum", "93_masked_cumsum.py": "no cumsum",
    "95_CrossEntropyLoss.py": "no log / gather",
    "96_HuberLoss.py": "no abs / where-by-comparison for smooth_l1",
    "98_KLDivLoss.py": "no log",
    "99_TripletMarginLoss.py": "no norm / clamp",
    "conv (50, 54-62, 64-81, 83-86)": "not generated: 3-D, 1-D, transposed and dilated/strided variants have no op "
                                      "or no faithful mapping; three 2-D convolutions (63, 82, 87) stand for the class",
}

KB_DEFS = {"repo": "shadowfall09/KernelBench", "commit": "2bce940c631c01086c262eef9c9efc9d3693e1de",
           "note": "a fork mirroring ScalingIntelligence/KernelBench's level1 problems (upstream's own files were "
                   "not all readable here); shapes cross-checked against upstream's 92/94/100 files, against "
                   "sfc-gh-goliaro/KernelBench (19, 40, 44) and against the published times (bytes / time)"}


FAMILY = {
    "5": "elementwise", "19": "elementwise", "20": "elementwise", "21": "elementwise", "22": "elementwise",
    "25": "elementwise", "26": "elementwise", "88": "elementwise",
    "23": "row op", "36": "row op", "40": "row op", "47": "reduction", "48": "reduction",
    "94": "reduction", "100": "reduction", "44": "pooling", "45": "pooling",
    "63": "conv", "82": "conv", "87": "conv", "97": "attention",
}


def variant_name(scale):
    return "f32_s%d" % round(scale)


def main():
    tasks_dir = os.path.join(HERE, "tasks")
    problems = []
    for (fname, tid, summary, build, full, vps, nbytes, flops, peak, note) in PROBLEMS:
        fin, _, _, fwork = build(full)
        variants, rows = [], []
        for vp in vps:
            ins, nodes, outs, work = build(vp)
            scale = fwork / work
            dt = ins[0]["dtype"]
            name = variant_name(scale).replace("f32", "f16" if dt == F16 else "f32")
            variants.append({"name": name, "inputs": ins, "nodes": nodes, "outputs": outs})
            rows.append({"variant": name, "params": vp, "inputs": {i["name"]: i["shape"] for i in ins},
                         "scale": scale})
        doc = {"id": tid, "summary": "KernelBench level1 %s: %s" % (fname, summary),
               "source": "ScalingIntelligence/KernelBench KernelBench/level1/%s (shapes from %s@%s), scaled "
                         "down per variant (bench/kernelbench/problems.json)" % (fname, KB_DEFS["repo"],
                                                                                KB_DEFS["commit"][:12]),
               "variants": variants}
        os.makedirs(os.path.join(tasks_dir, tid), exist_ok=True)
        with open(os.path.join(tasks_dir, tid, "graph.json"), "w", encoding="utf-8") as f:
            json.dump(doc, f, indent=1)
            f.write("\n")
        family = FAMILY.get(fname.split("_")[0], "gemm")
        problems.append({"file": fname, "task": tid, "family": family, "summary": summary, "full_params": full,
                         "full_inputs": {i["name"]: i["shape"] for i in fin}, "variants": rows,
                         "time_scaling": "linear", "scaled_along": note,
                         "full_bytes": nbytes, "full_flops": flops, "flop_peak": peak})
    out = {"about": "KernelBench level1 problems as passfs tasks (bench/kernelbench/README.md). scale = the "
                    "full shape's work / the variant's (elements streamed; m*n*k for GEMMs; output pixels for "
                    "convolutions; batch*heads for attention); time_scaling: how eager's time grows with it. "
                    "full_bytes: the least DRAM traffic eager's kernels need at the full shape (each reads its "
                    "operands and writes its result once); full_flops: arithmetic at the full shape; "
                    "flop_peak: the unit it runs on under PyTorch's defaults (fp32 CUDA cores for matmul, "
                    "TF32 tensor cores for cuDNN convolutions, fp16 tensor cores).",
           "definitions": KB_DEFS, "problems": problems, "left_out": LEFT_OUT}
    with open(os.path.join(HERE, "problems.json"), "w", encoding="utf-8") as f:
        json.dump(out, f, indent=1)
        f.write("\n")
    print("%d tasks written to %s" % (len(problems), tasks_dir))


if __name__ == "__main__":
    main()
