#!/usr/bin/env bash
# The eager baseline's cuBLAS and cuDNN paths without a GPU: `passfs eager
# --backend cuda` against the mock driver (tests/gpu/mock/libcuda_mock.c: host
# memory, no kernels run), a mock cuBLAS (libcublas_mock.c: a naive
# column-major reference GEMM) and a mock cuDNN (libcudnn_mock.c: a naive
# convolution), which check their arguments as the libraries do and log
# every call, on tasks written here whose graphs are GEMMs or convolutions
# only (so every output is computed by a mock):
#   - blas_gemms: matmul with plain, transposed and permuted operands, bmm, a
#     batch broadcasting A, 4-D batches, matrix-vector and vector-matrix
#     products, linear with and without bias, 1x1 conv2d with and without
#     bias;
#   - dnn_convs: 3x3 with padding and bias, strided/dilated/asymmetric,
#     grouped, depthwise 5x5, 1x1 with stride 2, an unbatched input;
# each in float32, float16 and bfloat16.  The outputs must match `passfs
# eager --backend cpu` on the same seed at the DESIGN tolerances.  Also: the
# calls made (count, transposes, broadcast batch stride, math modes: the
# mocks refuse TF32 for float32), the cuDNN workspace comes from the arena,
# ops the libraries cannot take stay on the op library's kernels,
# PASSFS_EAGER_BLAS=0 makes no call, no PASSFS_CUBLAS with a mock driver
# means no cuBLAS (and a note), a failing call is reported.  Skipped without
# cc, NVRTC or python3+numpy.
. tests/lib/cli.sh

. tests/gpu/mock/build.sh
if ! /usr/bin/python3 -c 'import numpy' 2>/dev/null; then
	echo "skip: no python3 with numpy for the comparison"
	exit 0
fi
export PASSFS_CUPTI=0 PASSFS_CACHE_DIR=$tmp/cache PASSFS_LOCK_DIR=$tmp
unset PASSFS_EAGER_BLAS PASSFS_CUBLAS PASSFS_CUDNN PASSFS_LIBCUDA
MOCKS=(PASSFS_LIBCUDA="$tmp/libcuda_mock.so" PASSFS_CUBLAS="$tmp/libcublas_mock.so" PASSFS_CUDNN="$tmp/libcudnn_mock.so")


# ---- the tasks -------------------------------------------------------------------
/usr/bin/python3 - "$tmp/tasks" <<'EOF'
import json, os, sys
root = sys.argv[1]

def task(tid, variants):
    os.makedirs(f"{root}/{tid}")
    with open(f"{root}/{tid}/graph.json", "w") as f:
        json.dump({"id": tid, "summary": "cuBLAS mock test", "variants": variants}, f, indent=1)

def gemms(dt):
    shapes = {
        "a": [33, 17], "b": [17, 29], "at": [17, 33], "bt": [29, 17],
        "p": [4, 8, 16], "q": [4, 16, 12], "qt": [4, 12, 16],
        "x1": [1, 7, 9], "y5": [5, 9, 6], "xp": [7, 5, 9],
        "x4": [2, 3, 7, 9], "y4": [2, 3, 9, 6],
        "lx": [2, 5, 24], "lw": [16, 24], "lb": [16], "l2": [6, 24],
        "cx": [2, 8, 5, 6], "cw": [12, 8, 1, 1], "cb": [12], "v9": [9],
        "lw1": [1, 24], "lb1": [1], "cw1": [1, 8, 1, 1], "cb1": [1],
    }
    # std 5: randn * 5 * 0.2, values of order 1
    inputs = [{"name": k, "shape": s, "dtype": dt, "std": 5.0} for k, s in shapes.items()]
    n = lambda name, op, ins, **attrs: dict({"name": name, "op": op, "inputs": ins}, **({"attrs": attrs} if attrs else {}))
    nodes = [
        n("mm", "matmul", ["a", "b"]),
        n("at_t", "transpose", ["at"], dim0=0, dim1=1),
        n("bt_t", "transpose", ["bt"], dim0=0, dim1=1),
        n("mmt", "matmul", ["at_t", "bt_t"]),
        n("bmm1", "bmm", ["p", "q"]),
        n("qt_t", "transpose", ["qt"], dim0=1, dim1=2),
        n("bmm2", "bmm", ["p", "qt_t"]),
        n("bc", "matmul", ["x1", "y5"]),
        n("xpp", "permute", ["xp"], dims=[1, 0, 2]),
        n("bp", "matmul", ["xpp", "y5"]),
        n("m4", "matmul", ["x4", "y4"]),
        n("lin", "linear", ["lx", "lw", "lb"]),
        n("lin2", "linear", ["l2", "lw"]),
        n("conv", "conv2d", ["cx", "cw", "cb"]),
        n("conv0", "conv2d", ["cx", "cw"]),
        n("mv", "matmul", ["x1", "v9"]),
        n("vm", "matmul", ["v9", "y5"]),
        n("lin1", "linear", ["lx", "lw1", "lb1"]),     # one output feature: bias [1]
        n("conv1", "conv2d", ["cx", "cw1", "cb1"]),    # one output channel
    ]
    outs = ["mm", "mmt", "bmm1", "bmm2", "bc", "bp", "m4", "lin", "lin2", "conv", "conv0", "mv", "vm", "lin1", "conv1"]
    return {"name": dt, "inputs": inputs, "nodes": nodes, "outputs": outs}

task("blas_gemms", [gemms("float32"), gemms("float16"), gemms("bfloat16")])

# GEMMs cuBLAS is not used for: an operand broadcast along a matrix dim
# (no unit stride), and float64.
def fallback(name, dt):
    return {"name": name, "inputs": [
        {"name": "x", "shape": [7, 9], "dtype": dt},
        {"name": "y", "shape": [9, 1], "dtype": dt}],
        "nodes": [{"name": "ye", "op": "expand", "inputs": ["y"], "attrs": {"size": [9, 6]}},
                  {"name": "r", "op": "matmul", "inputs": ["x", "ye"]}],
        "outputs": ["r"]}
task("blas_fallback", [fallback("f32", "float32"), fallback("f64", "float64")])

def convs(dt):
    shapes = {"x": [2, 6, 9, 10], "x3": [6, 9, 10], "w": [8, 6, 3, 3], "b": [8], "w2": [4, 6, 3, 3],
              "wg": [6, 3, 3, 3], "bg": [6], "wd": [6, 1, 5, 5], "bd": [6], "w1": [5, 6, 1, 1]}
    inputs = [{"name": k, "shape": s, "dtype": dt, "std": 5.0} for k, s in shapes.items()]
    n = lambda name, ins, **attrs: {"name": name, "op": "conv2d", "inputs": ins, "attrs": attrs}
    nodes = [
        n("c3", ["x", "w", "b"], padding=1),
        n("cs", ["x", "w2"], stride=[2, 1], padding=[1, 2], dilation=[2, 1]),
        n("cg", ["x", "wg", "bg"], padding=1, groups=2),
        n("dw", ["x", "wd", "bd"], padding=2, groups=6),
        n("c1s", ["x", "w1"], stride=2),
        n("cu", ["x3", "w"], padding=[0, 1]),
    ]
    return {"name": dt, "inputs": inputs, "nodes": nodes, "outputs": [x["name"] for x in nodes]}
task("dnn_convs", [convs("float32"), convs("float16"), convs("bfloat16")])
EOF
[ -f "$tmp/tasks/blas_gemms/graph.json" ] || { echo "FAIL: cannot write the tasks"; exit 1; }

run_eager() { # out dir, backend, extra env...
	local out=$1 backend=$2
	shift 2
	env "$@" timeout 300 "$PASSFS" eager --tasks "$tmp/tasks" --task "${TASK:-blas_gemms}" --backend "$backend" \
		--out "$out" >"$out.log" 2>&1
}

# ---- cuBLAS (mock) against the cpu backend ---------------------------------------------
if run_eager "$tmp/cpu" cpu; then ok "cpu reference"; else bad "cpu reference: $(tail -3 "$tmp/cpu.log")"; fi
if run_eager "$tmp/cuda" cuda "${MOCKS[@]}" MOCK_CUBLAS_LOG="$tmp/blas.log" MOCK_CUDNN_LOG="$tmp/dnn.log" \
	MOCK_CUDA_LOG="$tmp/launch.log" && grep -q 'Mock GPU.*, cublas 13.0.77)' "$tmp/cuda.log"; then
	ok "passfs eager --backend cuda with the mock cuBLAS"
else
	bad "cuda with the mock cuBLAS: $(tail -3 "$tmp/cuda.log")"
fi

cat >"$tmp/compare.py" <<'EOF'
import json, sys
import numpy as np
cpu, cuda, libs, steps = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
# ES_t tolerances (docs/scoring.md, docs/eager.md)
tol = {"float32": (1e-5, 10 ** (-5 * 1.1772)), "float16": (1e-3, 10 ** -1.8), "bfloat16": (1e-2, 10 ** -0.7184)}

def load(path, dt, shape):
    if dt == "float32":
        a = np.fromfile(path, dtype=np.float32)
    elif dt == "float16":
        a = np.fromfile(path, dtype=np.float16).astype(np.float32)
    else:
        a = (np.fromfile(path, dtype=np.uint16).astype(np.uint32) << 16).view(np.float32)
    return a.reshape(shape)

bad = 0
for v in ["float32", "float16", "bfloat16"]:
    mc = json.load(open(f"{cpu}/{v}/manifest.json"))
    mg = json.load(open(f"{cuda}/{v}/manifest.json"))
    if mg.get("libraries") != libs or mc.get("libraries") != "":
        print(f"FAIL {v}: libraries cuda {mg.get('libraries')!r}, cpu {mc.get('libraries')!r}")
        bad += 1
    if mg["launches"] != steps:
        print(f"FAIL {v}: {mg['launches']} steps on cuda, want {steps}")
        bad += 1
    names = [o["name"] for o in mg["outputs"]]
    for i, (oc, og) in enumerate(zip(mc["outputs"], mg["outputs"])):
        x = load(f"{cpu}/{v}/{oc['file']}", v, oc["shape"])
        y = load(f"{cuda}/{v}/{og['file']}", v, og["shape"])
        atol, rtol = tol[v]
        err = np.abs(x.astype(np.float64) - y.astype(np.float64))
        ok = bool(np.all(err <= atol + rtol * np.abs(x.astype(np.float64)))) and np.isfinite(y).all()
        # outputs of order 1 or more: a wrong mapping cannot pass
        scale = float(np.abs(x).max())
        if not ok or scale < 0.5:
            print(f"FAIL {v} {names[i]}: max err {err.max():.3g} (max |ref| {scale:.3g})")
            bad += 1
        else:
            print(f"ok   {v} {names[i]} {og['shape']}: max err {err.max():.3g}")
sys.exit(1 if bad else 0)
EOF
# blas_gemms: 15 GEMMs and 4 bias prefills per variant
if /usr/bin/python3 "$tmp/compare.py" "$tmp/cpu" "$tmp/cuda" "cublas 13.0.77" 19; then
	ok "cuBLAS results match the cpu backend"
else
	bad "cuBLAS results differ from the cpu backend"
fi
if [ ! -s "$tmp/dnn.log" ]; then ok "no cuDNN handle for a task without convolutions"; else bad "cuDNN called: $(head -2 "$tmp/dnn.log")"; fi

calls=$(grep -c '^gemm .* 0$' "$tmp/blas.log" 2>/dev/null)
if [ "${calls:-0}" -eq 57 ] && ! grep -q '^gemm .* [1-9][0-9]*$' "$tmp/blas.log"; then
	ok "57 GEMM calls, all accepted"
else
	bad "GEMM calls: ${calls:-0} accepted, want 57; $(grep -v ' 0$' "$tmp/blas.log" | head -3)"
fi
# mmt: both operands transposed (op T T, lda 17, ldb 33); linear: W^T (op T);
# bc: A broadcast over the batch (cuBLAS's strideB 0); bp: permuted A (ldb 45)
if grep -q '^gemm ex T T 29 33 17 17 33 29 ' "$tmp/blas.log" && grep -q '^gemm ex T N 16 10 24 24 24 16 ' "$tmp/blas.log" &&
	grep -q '^gemm sb N N 6 7 9 6 9 6 54 0 42 5 ' "$tmp/blas.log" &&
	grep -q '^gemm sb N N 6 7 9 6 45 6 54 9 42 5 ' "$tmp/blas.log"; then
	ok "operand mapping (transposes, leading dims, batch strides) as expected"
else
	bad "operand mapping: $(head -20 "$tmp/blas.log")"
fi
if [ "$(grep -c '^create' "$tmp/blas.log")" -eq 1 ] && [ "$(grep -c '^destroy' "$tmp/blas.log")" -eq 1 ]; then
	ok "one handle for the task, destroyed with the plans"
else
	bad "handles: $(grep -c '^create' "$tmp/blas.log") created, $(grep -c '^destroy' "$tmp/blas.log") destroyed"
fi
if ! grep -q '^launch' "$tmp/launch.log" 2>/dev/null; then
	ok "no op-library kernel launched for a GEMM-only task"
else
	bad "kernels launched: $(sort -u "$tmp/launch.log" | head -3)"
fi

# ---- PASSFS_EAGER_BLAS=0: the op library's GEMM, no call ------------------------------------------
rm -f "$tmp/blas.log" "$tmp/launch.log"
if run_eager "$tmp/off" cuda "${MOCKS[@]}" MOCK_CUBLAS_LOG="$tmp/blas.log" \
	MOCK_CUDA_LOG="$tmp/launch.log" PASSFS_EAGER_BLAS=0 &&
	[ ! -s "$tmp/blas.log" ] && grep -q 'launch _Z4gemm' "$tmp/launch.log" &&
	grep -q '"libraries": ""' "$tmp/off/float16/manifest.json"; then
	ok "PASSFS_EAGER_BLAS=0: op-library GEMM kernels, no cuBLAS call"
else
	bad "PASSFS_EAGER_BLAS=0: $(head -3 "$tmp/blas.log" 2>/dev/null) $(tail -2 "$tmp/off.log")"
fi

# ---- GEMMs cuBLAS cannot take stay on the kernels ------------------------------------------------
rm -f "$tmp/blas.log" "$tmp/launch.log"
if TASK=blas_fallback run_eager "$tmp/fb" cuda PASSFS_LIBCUDA="$tmp/libcuda_mock.so" \
	PASSFS_CUBLAS="$tmp/libcublas_mock.so" MOCK_CUBLAS_LOG="$tmp/blas.log" MOCK_CUDA_LOG="$tmp/launch.log" &&
	[ ! -s "$tmp/blas.log" ] && [ "$(grep -c 'launch _Z4gemm' "$tmp/launch.log")" -eq 2 ]; then
	ok "broadcast operand and float64: op-library kernels, no handle created"
else
	bad "fallback: $(head -3 "$tmp/blas.log" 2>/dev/null) $(grep -c 'launch _Z4gemm' "$tmp/launch.log" 2>/dev/null) $(tail -2 "$tmp/fb.log")"
fi

# ---- a mock driver without PASSFS_CUBLAS: no cuBLAS, and a note --------------------------------
rm -f "$tmp/launch.log"
if run_eager "$tmp/nolib" cuda PASSFS_LIBCUDA="$tmp/libcuda_mock.so" MOCK_CUDA_LOG="$tmp/launch.log" &&
	grep -q 'note: cuBLAS: not loaded: PASSFS_LIBCUDA' "$tmp/nolib.log" &&
	grep -q '"library_note": "cuBLAS: not loaded' "$tmp/nolib/float32/manifest.json" &&
	grep -q 'launch _Z4gemm' "$tmp/launch.log"; then
	ok "no cuBLAS: kernels, with a note saying why"
else
	bad "no cuBLAS: $(tail -3 "$tmp/nolib.log")"
fi

# ---- a failing call is reported ---------------------------------------------------------------
if run_eager "$tmp/failing" cuda PASSFS_LIBCUDA="$tmp/libcuda_mock.so" PASSFS_CUBLAS="$tmp/libcublas_mock.so" \
	MOCK_CUBLAS_FAIL=13; then
	bad "an injected cuBLAS failure was not reported"
elif grep -q 'cublasGemmEx (m 29, n 33, k 17, batch 1, op NN, ld 29/17/29) failed: CUBLAS_STATUS_EXECUTION_FAILED' "$tmp/failing.log" &&
	grep -q "variant 'float32', step 0" "$tmp/failing.log"; then
	ok "a failing cuBLAS call names the call and the step"
else
	bad "failure message: $(tail -2 "$tmp/failing.log")"
fi

# ---- cuDNN (mock) against the cpu backend ---------------------------------------------------
rm -f "$tmp/launch.log"
if TASK=dnn_convs run_eager "$tmp/cpu_conv" cpu; then ok "cpu reference (convolutions)"; else bad "cpu reference (convolutions): $(tail -3 "$tmp/cpu_conv.log")"; fi
if TASK=dnn_convs run_eager "$tmp/cuda_conv" cuda "${MOCKS[@]}" MOCK_CUDNN_LOG="$tmp/dnn.log" MOCK_CUBLAS_LOG="$tmp/blas2.log" \
	MOCK_CUDA_LOG="$tmp/launch.log" && grep -q 'Mock GPU.*, cudnn 9.1.77)' "$tmp/cuda_conv.log"; then
	ok "passfs eager --backend cuda with the mock cuDNN"
else
	bad "cuda with the mock cuDNN: $(tail -3 "$tmp/cuda_conv.log")"
fi
if /usr/bin/python3 "$tmp/compare.py" "$tmp/cpu_conv" "$tmp/cuda_conv" "cudnn 9.1.77" 6; then
	ok "cuDNN results match the cpu backend"
else
	bad "cuDNN results differ from the cpu backend"
fi
convs=$(grep -c '^conv .* 0$' "$tmp/dnn.log" 2>/dev/null)
adds=$(grep -c '^add 0$' "$tmp/dnn.log" 2>/dev/null)
# algorithm 1 with its workspace (4096 + 4 per output channel); math: FMA (3)
# for float32, tensor ops (1) for float16 (2) and bfloat16 (9)
if [ "${convs:-0}" -eq 18 ] && [ "${adds:-0}" -eq 9 ] && [ "$(grep -c '^conv ' "$tmp/dnn.log")" -eq 18 ] &&
	grep -q '^conv 2 6 9 10 8 3 3 1 1 1 1 1 1 1 1 4128 3 0 0$' "$tmp/dnn.log" &&
	grep -q '^conv 2 6 9 10 4 3 3 1 1 2 2 1 2 1 1 4112 1 2 0$' "$tmp/dnn.log" &&
	grep -q '^conv 2 6 9 10 6 5 5 6 2 2 1 1 1 1 1 4120 1 9 0$' "$tmp/dnn.log" &&
	grep -q '^conv 1 6 9 10 8 3 3 1 0 1 1 1 1 1 1 4128 3 0 0$' "$tmp/dnn.log" &&
	[ "$(grep -c '^create' "$tmp/dnn.log")" -eq 1 ] && [ "$(grep -c '^destroy' "$tmp/dnn.log")" -eq 1 ]; then
	ok "18 convolutions and 9 bias adds, descriptors, math modes and workspaces as expected"
else
	bad "cuDNN calls: ${convs:-0} convolutions, ${adds:-0} adds; $(grep -v ' 0$' "$tmp/dnn.log" | head -3)"
fi
if [ ! -s "$tmp/blas2.log" ] && ! grep -q '^launch' "$tmp/launch.log" 2>/dev/null; then
	ok "no cuBLAS handle and no kernel for a convolution-only task"
else
	bad "convolutions: $(head -2 "$tmp/blas2.log" 2>/dev/null) $(sort -u "$tmp/launch.log" 2>/dev/null | head -2)"
fi
# a tensor-op (TF32) candidate first for float32: passed over for the next,
# algorithm 0 (no workspace) with FMA math; the results still match
rm -f "$tmp/dnn.log"
if TASK=dnn_convs run_eager "$tmp/cuda_conv_tf32" cuda "${MOCKS[@]}" MOCK_CUDNN_LOG="$tmp/dnn.log" MOCK_CUDNN_TF32_FIRST=1 &&
	grep -q '^conv 2 6 9 10 8 3 3 1 1 1 1 1 1 1 0 0 3 0 0$' "$tmp/dnn.log" &&
	! grep -q '^conv .* 1 [0-9]* 3 0 0$' "$tmp/dnn.log" &&
	grep -q '^conv 2 6 9 10 4 3 3 1 1 2 2 1 2 1 1 4112 1 2 0$' "$tmp/dnn.log" &&
	/usr/bin/python3 "$tmp/compare.py" "$tmp/cpu_conv" "$tmp/cuda_conv_tf32" "cudnn 9.1.77" 6; then
	ok "float32 passes over a tensor-op (TF32) algorithm"
else
	bad "TF32 candidate: $(grep '^conv' "$tmp/dnn.log" | head -3) $(tail -2 "$tmp/cuda_conv_tf32.log")"
fi
rm -f "$tmp/dnn.log" "$tmp/launch.log"
if TASK=dnn_convs run_eager "$tmp/conv_off" cuda "${MOCKS[@]}" MOCK_CUDNN_LOG="$tmp/dnn.log" MOCK_CUDA_LOG="$tmp/launch.log" \
	PASSFS_EAGER_BLAS=0 && [ ! -s "$tmp/dnn.log" ] && grep -q 'launch _Z1[0-9]conv2d_' "$tmp/launch.log"; then
	ok "PASSFS_EAGER_BLAS=0: op-library convolutions, no cuDNN call"
else
	bad "PASSFS_EAGER_BLAS=0 (convolutions): $(head -2 "$tmp/dnn.log" 2>/dev/null) $(tail -2 "$tmp/conv_off.log")"
fi

finish
