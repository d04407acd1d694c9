#!/usr/bin/env bash
# tests/gpu/check.sh - the device check for the cuda backend: one script for a
# machine with a GPU (written for an H200 with CUDA 13, PyTorch and
# TorchInductor; about 4-5 minutes), run from a copy of the repository:
#
#   bash tests/gpu/check.sh            # OUT=/some/dir to keep the table and logs
#
# Steps (each with a time limit; a failed step does not stop the others, and
# steps that need the binary are skipped when the build failed):
#   1 env        nvidia-smi, compilers, torch
#   2 build      cmake Release (warnings not fatal here) into build-gpu/; or,
#                when build-prebuilt/ is there (tests/gpu/prepare.sh, run on a
#                development machine and carried along: the GPU machine may
#                have no jansson or libfuse3 to build with), those binaries
#   3 device     `passfs doctor` (must pick cuda and pass, its built-in
#                end-to-end evaluation included), then unit tests
#                on the GPU: test_cuda_device (launches, CUPTI,
#                escape, faults, big shared memory, L2 flush, lock, module
#                cache, CUDA inside the sandbox), test_cuda_backend,
#                test_cuda_pack, test_sandbox
#   4 sandbox    what the real driver does inside the pass worker's seccomp
#                sandbox: which open functions libcuda imports (passfs serves
#                the driver's re-opens of its device paths through its own),
#                then one eval with PASSFS_SANDBOX_AUDIT (refused calls are
#                logged and carried out): an empty log passes; the log's
#                lines go to the summary
#   5 speed      `passfs eval` of a 6-variant task with a correct pass, twice:
#                wall time (target < 1.5 s warm) and scores within 2%
#   5b modload   a matmul task (eager: cuBLAS) with a correct tiled GEMM pass
#                (tests/gpu/tasks/gemm_f32, tests/gpu/passes/gemm_tiled.c)
#                under CUDA_MODULE_LOADING=EAGER (what passfs sets) and LAZY:
#                wall time and the eager kernels CUPTI saw, side by side
#   6 verdicts   tests/cli/eval_verdicts.sh with BACKEND=cuda (every verdict)
#   7 gpu-passes tests/gpu/passes: inline PTX + wmma (ok), static + dynamic
#                shared memory over 48 KiB (ok), the escaping slow
#                kernel (ok, speedup < 1: the sync caught it; CUPTI's kernel
#                time shows the ~3 ms), a faulting kernel (runtime_error
#                naming it), then the GPU still works with CUPTI times and
#                kernel resources in result.json; --cold; two evaluations at
#                once (the second waits for the benchmark lock)
#   8 cheats     tests/cli/cheats.sh with BACKEND=cuda: the hack suite's GPU
#                expectations (c08's late kernel timed, %globaltimer refused,
#                the host memory flood stopped by RLIMIT_DATA, ...)
#   9 truth      tests/cli/reward_truth.sh with BACKEND=cuda (5 bf16 runs), and
#                the launch forms (templated helper, #undef'd macro, kernel
#                table: kernels found by their exported symbols) verdict ok
#  10 fusion     the fused passes of bench/passes on three elementwise tasks,
#                and the block-per-row and thread-per-row RMSNorm passes on
#                t5_rmsnorm: the GPU's measured score beside the cpu backend's
#                modeled one for the same pass (docs/backends.md, "The modeled
#                H200 time"; the values docs/benchmarks.md quotes): the model's
#                calibration, and whether it ranks the two RMSNorm passes as
#                the GPU does
#  11 anchor     tests/gpu/anchor.py: passfs eager vs PyTorch eager and
#                torch.compile on 10 tasks (outputs compared, 25 + 100 trials)
# Then a summary, and the anchor's table; with OUT set, both go to
# $OUT/gpu-check.txt, the anchor's rows to $OUT/anchor.json (bench/calibration.py)
# and every step's log to $OUT/logs/.
#
# Environment: CHECK_BUDGET_S (total seconds, default 290: later steps shrink
# or are skipped to fit), BUILD_DIR (build-gpu), PYTHON (a python with torch;
# default: python3 if it imports torch, else /usr/bin/python3), JOBS.
#
# On a GPU machine where nothing can be installed:
#   here:  bash tests/gpu/prepare.sh
#   there: OUT=$OUT bash tests/gpu/check.sh      (carrying build-prebuilt)
set -u
cd "$(dirname "$0")/../.." || exit 2
REPO=$(pwd)
START=$(date +%s)
BUDGET=${CHECK_BUDGET_S:-290}
BUILD=${BUILD_DIR:-build-gpu}
PREBUILT=0
if [ -z "${BUILD_DIR:-}" ] && [ -f build-prebuilt/.prebuilt ]; then
	BUILD=build-prebuilt
	PREBUILT=1
fi
# Binaries built elsewhere know that checkout's paths: point them at this one.
export PASSFS_INCLUDE_DIR=$REPO/gpu/include PASSFS_OPLIB_DIR=$REPO/gpu/oplib PASSFS_TASKS=$REPO/tasks
JOBS=${JOBS:-$(nproc 2>/dev/null || echo 4)}
PASSFS=$REPO/$BUILD/passfs
LOGS=$(mktemp -d "${TMPDIR:-/tmp}/passfs-gpu-check.XXXXXX")
OUTDIR=${OUT:-}
if [ -n "$OUTDIR" ]; then
	mkdir -p "$OUTDIR/logs"
fi
# Fresh, private state for this run: module cache, GPU lock directory.
export PASSFS_CACHE_DIR=$LOGS/module-cache PASSFS_LOCK_DIR=$LOGS
PYTHON=${PYTHON:-}
if [ -z "$PYTHON" ]; then
	if python3 -c 'import torch' >/dev/null 2>&1; then PYTHON=python3; else PYTHON=/usr/bin/python3; fi
fi
# cuBLAS, cuDNN, CUPTI and NVRTC may come only with PyTorch's wheels
# (site-packages/nvidia/cu13/lib, nvidia/cudnn/lib, ...: namespace packages,
# no __file__).  passfs searches the usual Python sites itself
# (gpu_wheel_lib); this interpreter's own nvidia directories, wherever it
# lives, are handed to it in PASSFS_CUDA_LIBDIRS and to their dependencies in
# LD_LIBRARY_PATH.
wheel_dirs=$("$PYTHON" -c '
import os
try:
    import nvidia
    roots = list(nvidia.__path__)
except Exception:
    roots = []
print(":".join(os.path.join(r, d, "lib") for r in roots for d in sorted(os.listdir(r))
               if os.path.isdir(os.path.join(r, d, "lib"))))' 2>/dev/null)
if [ -n "$wheel_dirs" ]; then
	export PASSFS_CUDA_LIBDIRS=$wheel_dirs${PASSFS_CUDA_LIBDIRS:+:$PASSFS_CUDA_LIBDIRS}
	export LD_LIBRARY_PATH=$wheel_dirs${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
fi

names=()
results=()
secs=()
notes=()
built=0

elapsed() { echo $(($(date +%s) - START)); }

# step NAME LIMIT_S NEEDS_BUILD(0/1) COMMAND...: runs with a time limit
# (shrunk to the budget left), shows the log's tail, records the outcome.
step() {
	local name=$1 limit=$2 needs=$3
	shift 3
	local i=$((${#names[@]} + 1)) left log rc t0 dt
	left=$((BUDGET - $(elapsed)))
	log=$LOGS/$i-$name.log
	names+=("$name")
	echo
	echo "=== [$i] $name (limit ${limit}s, $(elapsed)s elapsed)"
	if [ "$needs" = 1 ] && [ $built -ne 1 ]; then
		echo "--- skipped: no build"
		results+=(skipped); secs+=(0); notes+=("no build")
		return
	fi
	if [ $left -lt 10 ]; then
		echo "--- skipped: the time budget (${BUDGET}s) is spent"
		results+=(skipped); secs+=(0); notes+=("no time left")
		return
	fi
	[ "$limit" -gt "$left" ] && limit=$left
	t0=$(date +%s)
	# the step functions are exported: timeout runs them in a child bash
	timeout -k 10 "$limit" bash -c '"$@"' step "$@" >"$log" 2>&1
	rc=$?
	dt=$(($(date +%s) - t0))
	if [ $rc -eq 0 ]; then
		tail -n 25 "$log"
		results+=(ok); notes+=("")
	else
		tail -n 60 "$log"
		if [ $rc -eq 124 ] || [ $rc -eq 137 ]; then
			echo "--- TIMED OUT after ${limit}s"
			results+=(FAILED); notes+=("timed out after ${limit}s")
		else
			echo "--- FAILED (exit $rc)"
			results+=(FAILED); notes+=("exit $rc")
		fi
	fi
	secs+=("$dt")
	if [ -n "$OUTDIR" ]; then cp "$log" "$OUTDIR/logs/" 2>/dev/null; fi
	return 0
}

# ---- the steps -----------------------------------------------------------

s_env() {
	echo "host: $(uname -srm), $(nproc) CPUs"
	nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm --format=csv,noheader || echo "nvidia-smi failed"
	nvidia-smi -q 2>/dev/null | grep -iE 'persistence mode|compute mode' | head -2
	for t in cmake g++ cc pkg-config "$PYTHON"; do
		printf '%-16s %s\n' "$t" "$(command -v "$t" || echo MISSING)"
	done
	pkg-config --modversion jansson >/dev/null 2>&1 && echo "jansson $(pkg-config --modversion jansson)" ||
		echo "jansson: MISSING (the build needs libjansson-dev)"
	ls /usr/local/cuda/lib64/libnvrtc.so* /usr/local/cuda/lib64/libcupti.so* 2>/dev/null | head -4
	"$PYTHON" -c 'import torch; print("torch", torch.__version__, "cuda", torch.version.cuda, "gpu", torch.cuda.is_available())' ||
		echo "torch: not importable with $PYTHON"
	command -v nvidia-smi >/dev/null
}

s_build() {
	if [ "$PREBUILT" = 1 ]; then
		echo "using the binaries carried in $BUILD/ (tests/gpu/prepare.sh):"
		cat "$BUILD/.prebuilt"
		"$PASSFS" --help >/dev/null && return 0
		echo "the carried passfs does not run here"
		return 1
	fi
	cmake -S . -B "$BUILD" -DCMAKE_BUILD_TYPE=Release -DPASSFS_WERROR=OFF >/dev/null &&
		cmake --build "$BUILD" -j "$JOBS" 2>&1 | grep -E 'error|warning|Error' | head -40
	test -x "$BUILD/passfs"
}

s_device() {
	local rc=0
	echo "--- passfs doctor"
	"$PASSFS" doctor >"$LOGS/doctor.txt" || rc=1
	cat "$LOGS/doctor.txt"
	grep -q 'auto picks cuda' "$LOGS/doctor.txt" || { echo "passfs doctor: auto does not pick cuda"; rc=1; }
	for t in test_cuda_device test_cuda_abi test_cuda_backend test_cuda_pack test_sandbox test_cpu_backend; do
		echo "--- $t"
		if [ -x "$BUILD/$t" ]; then
			"$BUILD/$t" || rc=1
		else
			echo "missing $BUILD/$t"
			rc=1
		fi
	done
	return $rc
}

# eval_json OUTFILE ARGS...: one `passfs eval --backend cuda --json`
eval_json() {
	local out=$1
	shift
	"$PASSFS" eval --tasks tests/passes/tasks --task tiny_bias_gelu --backend cuda --json "$@" >"$out"
}

s_speed() {
	local a b t0 t1 t2
	t0=$(date +%s%N)
	eval_json "$LOGS/speed1.json" --pass tests/passes/ok_fused.c || return 1
	t1=$(date +%s%N)
	eval_json "$LOGS/speed2.json" --pass tests/passes/ok_fused.c || return 1
	t2=$(date +%s%N)
	a=$(((t1 - t0) / 1000000))
	b=$(((t2 - t1) / 1000000))
	/usr/bin/python3 - "$LOGS/speed1.json" "$LOGS/speed2.json" "$a" "$b" <<'PY'
import json, sys
r1, r2 = (json.load(open(p)) for p in sys.argv[1:3])
a, b = float(sys.argv[3]) / 1e3, float(sys.argv[4]) / 1e3
print("device:", r1.get("device"), "| backend:", r1["backend"], "| verdict:", r1["verdict"])
for v in r1["variants"]:
    print("  %-14s %-8s speedup %-8s eager %-8s pass %-8s ms  iqr %s/%s  gpu %s/%s ms, %s/%s kernels" % (
        v["name"], v["verdict"], v.get("speedup"), v.get("eager_ms"), v.get("pass_ms"),
        v.get("eager_iqr_ratio"), v.get("pass_iqr_ratio"), v.get("eager_gpu_ms"), v.get("pass_gpu_ms"),
        v.get("eager_kernels"), v.get("pass_kernels")))
print("eager libraries:", r1.get("eager", {}).get("libraries"), "| gpu time:", r1.get("timing", {}).get("gpu_time"))
drift = abs(r1["score"] - r2["score"]) / max(r1["score"], 1e-9)
print("eval wall time: %.2f s cold (module cache empty), %.2f s warm (target < 1.5 s); elapsed_ms %s / %s"
      % (a, b, r1.get("elapsed_ms"), r2.get("elapsed_ms")))
print("scores %.4f and %.4f: %.1f%% apart (target < 2%%)" % (r1["score"], r2["score"], 100 * drift))
ok = r1["backend"] == "cuda" and r1["verdict"] == "ok" and r2["verdict"] == "ok"
if b >= 1.5:
    print("note: the warm eval took %.2f s, over the 1.5 s target" % b)
if drift >= 0.02:
    print("note: the scores differ by more than 2%")
sys.exit(0 if ok else 1)
PY
}

# A matmul task (eager: cuBLAS) with a correct tiled GEMM pass, under the
# module loading passfs sets (EAGER: every kernel loads with its module, before
# the pass worker's sandbox) and under CUDA_MODULE_LOADING=LAZY (the
# driver's default): the eval's wall time (cuBLAS's start-up is in it) and
# whether CUPTI saw the same eager kernels.  Informational but for the verdicts.
s_modload() {
	local mode t0 t1 rc=0
	for mode in EAGER LAZY; do
		t0=$(date +%s%N)
		CUDA_MODULE_LOADING=$mode "$PASSFS" eval --tasks tests/gpu/tasks --task gemm_f32 --backend cuda --json \
			--pass tests/gpu/passes/gemm_tiled.c >"$LOGS/modload-$mode.json" || rc=1
		t1=$(date +%s%N)
		echo $(((t1 - t0) / 1000000)) >"$LOGS/modload-$mode.ms"
	done
	/usr/bin/python3 - "$LOGS" <<'PY' || rc=1
import json, os, sys
d = sys.argv[1]
rs = {}
for mode in ("EAGER", "LAZY"):
    r = json.load(open(os.path.join(d, "modload-%s.json" % mode)))
    ms = int(open(os.path.join(d, "modload-%s.ms" % mode)).read())
    rs[mode] = r
    print("%-5s wall %.2f s  verdict %s  libraries: %s" % (mode, ms / 1e3, r["verdict"],
                                                          r.get("eager", {}).get("libraries")))
    for v in r["variants"]:
        print("   %-18s speedup %-8s eager %s ms (gpu %s ms, %s kernels)  pass %s ms" % (
            v["name"], v.get("speedup"), v.get("eager_ms"), v.get("eager_gpu_ms"), v.get("eager_kernels"),
            v.get("pass_ms")))
same = [v.get("eager_kernels") for v in rs["EAGER"]["variants"]] == [v.get("eager_kernels") for v in rs["LAZY"]["variants"]]
print("eager kernel counts %s under both modes" % ("the same" if same else "DIFFER"))
sys.exit(0 if all(r["verdict"] == "ok" for r in rs.values()) else 1)
PY
	return $rc
}

s_sandbox() {
	local lib
	lib=$(ldconfig -p 2>/dev/null | awk '/libcuda\.so\.1 /{print $NF; exit}')
	echo "libcuda: ${lib:-not found by ldconfig}"
	[ -n "$lib" ] && nm -D --undefined-only "$lib" 2>/dev/null |
		grep -E ' (open|open64|openat|openat64|__open_2|__open64_2|__openat_2|__openat64_2|syscall)(@|$)'
	rm -f "$LOGS/sandbox-audit.txt"
	PASSFS_SANDBOX_AUDIT=$LOGS/sandbox-audit.txt eval_json "$LOGS/sandbox.json" --pass tests/passes/ok_fused.c ||
		return 1
	/usr/bin/python3 -c 'import json,sys; r=json.load(open(sys.argv[1])); print("verdict", r["verdict"], "|", r["message"][:200])' "$LOGS/sandbox.json"
	if [ -s "$LOGS/sandbox-audit.txt" ]; then
		echo "calls the sandbox would refuse (audit log, first lines):"
		sed 's/ = -\{0,1\}[0-9]*$//' "$LOGS/sandbox-audit.txt" | sort | uniq -c | sort -rn | head -20
		return 1
	fi
	echo "audit log empty: the driver made no call the sandbox refuses"
}

s_verdicts() {
	BACKEND=cuda PASSFS=$PASSFS bash tests/cli/eval_verdicts.sh
}

s_cheats() {
	BACKEND=cuda PASSFS=$PASSFS bash tests/cli/cheats.sh
}

s_gpu_passes() {
	local rc=0
	eval_json "$LOGS/ptx.json" --pass tests/gpu/passes/ptx_wmma_ok.c || rc=1
	eval_json "$LOGS/escape.json" --pass tests/gpu/passes/async_escape.c || rc=1
	eval_json "$LOGS/smem.json" --pass tests/gpu/passes/smem_static_dynamic.c || rc=1
	eval_json "$LOGS/fault.json" --pass tests/gpu/passes/fault_oob.c || rc=1
	eval_json "$LOGS/after.json" --pass tests/passes/ok_fused.c || rc=1
	eval_json "$LOGS/cold.json" --cold --pass tests/passes/ok_fused.c || rc=1
	# two at once on one GPU: the lock serialises their variants
	eval_json "$LOGS/lock1.json" --pass tests/passes/ok_fused.c &
	local bg=$!
	eval_json "$LOGS/lock2.json" --pass tests/passes/ok_fused.c || rc=1
	wait $bg || rc=1
	/usr/bin/python3 - "$LOGS" <<'PY' || rc=1
import json, os, sys
d = sys.argv[1]
def load(n):
    try:
        return json.load(open(os.path.join(d, n)))
    except Exception as e:
        return {"verdict": "missing (%s)" % e, "message": "", "variants": []}
bad = 0
def expect(name, cond, r, detail=""):
    global bad
    print("%s %-34s verdict %-14s %s" % ("ok  " if cond else "FAIL", name, r.get("verdict"), detail or r.get("message", "")[:150]))
    bad += not cond
p = load("ptx.json")
expect("inline PTX + wmma: ok", p["verdict"] == "ok" and all(v["verdict"] == "ok" for v in p["variants"]), p)
e = load("escape.json")
vs = e["variants"]
detail = "; ".join("%s speedup %s pass %s ms" % (v["name"], v.get("speedup"), v.get("pass_ms")) for v in vs[:3])
expect("escaping slow kernel timed in full", e["verdict"] == "ok" and vs and
       all(v.get("speedup") is not None and v["speedup"] < 1 and v["pass_ms"] >= 1.0 for v in vs), e, detail)
m = load("smem.json")
expect("8 KiB static + 44 KiB dynamic smem: ok", m["verdict"] == "ok" and all(v["verdict"] == "ok" for v in m["variants"]),
       m)
f = load("fault.json")
expect("faulting kernel named", f["verdict"] == "runtime_error" and "oob_store<" in f["message"] and
       "ILLEGAL_ADDRESS" in f["message"], f)
a = load("after.json")
expect("the GPU works after the fault", a["verdict"] == "ok", a)
av = a["variants"]
expect("CUPTI kernel times in result.json", a.get("timing", {}).get("gpu_time") == "cupti" and av and
       all((v.get("pass_gpu_ms") or 0) > 0 and v.get("pass_kernels", 0) >= 1 and v.get("eager_kernels", 0) >= 1
           for v in av), a,
       "; ".join("%s pass %s/%s gpu ms, %s kernels; eager %s/%s, %s kernels" % (
           v["name"], v.get("pass_ms"), v.get("pass_gpu_ms"), v.get("pass_kernels"), v.get("eager_ms"),
           v.get("eager_gpu_ms"), v.get("eager_kernels")) for v in av[:2]))
ks = a.get("kernels", [])
expect("kernel resources in result.json", ks and all(isinstance(k.get("registers"), int) and k["registers"] > 0
                                                     for k in ks), a,
       "; ".join("%s: %s regs, %s B smem, %s B local" % (k.get("name"), k.get("registers"), k.get("shared_bytes"),
                                                          k.get("local_bytes")) for k in ks[:3]))
expect("escape: CUPTI saw the slow kernel", vs and all((v.get("pass_gpu_ms") or 0) >= 1.0 for v in vs), e,
       "; ".join("%s pass_gpu_ms %s" % (v["name"], v.get("pass_gpu_ms")) for v in vs[:3]))
c = load("cold.json")
expect("--cold", c["verdict"] == "ok" and c.get("timing", {}).get("cold") is True, c,
       "; ".join("%s eager %s ms cold vs %s warm" % (v["name"], v.get("eager_ms"), w.get("eager_ms"))
                 for v, w in zip(c["variants"][:3], av[:3])))
l1, l2 = load("lock1.json"), load("lock2.json")
waits = [v.get("lock_wait_ms", 0) for r in (l1, l2) for v in r["variants"]]
expect("two evaluations at once: the lock", l1["verdict"] == "ok" and l2["verdict"] == "ok" and max(waits) > 0, l2,
       "longest wait %.1f ms, %d of %d variants waited" % (max(waits or [0]), sum(w > 0 for w in waits), len(waits)))
sys.exit(1 if bad else 0)
PY
	return $rc
}

# Reward truth and the launch forms on the real driver: the constant and
# scaled passes never ok, the bf16 one-ulp pass ok (5 runs here), and the
# templated, macro and kernel-table launches ok (kernels found by symbol).
s_truth() {
	local rc=0
	BACKEND=cuda TRUTH_RUNS=5 PASSFS=$PASSFS bash tests/cli/reward_truth.sh || rc=1
	for p in launch_template launch_macro launch_table; do
		eval_json "$LOGS/$p.json" --pass tests/passes/$p.c || rc=1
		/usr/bin/python3 -c 'import json,sys; r=json.load(open(sys.argv[1])); print(sys.argv[2], r["verdict"], r["score"], "|", r["message"][:150]); sys.exit(0 if r["verdict"] == "ok" else 1)' "$LOGS/$p.json" "$p" || rc=1
	done
	return $rc
}

s_fusion() {
	local tp t p rc=0
	# the cpu backend's scores (modeled H200 speedup) for these passes
	# (docs/benchmarks.md, "Ranking like a GPU")
	declare -A modeled=([gpt2_bias_gelu_tanh:bench/passes/gpt2_bias_gelu_tanh.c]=1.65
		[detr_frozen_batchnorm_relu:bench/passes/detr_frozen_batchnorm_relu.c]=3.67
		[llama_swiglu:bench/passes/llama_swiglu.c]=2.12
		[t5_rmsnorm:bench/passes/t5_rmsnorm.c]=3.26
		[t5_rmsnorm:tests/passes/rmsnorm_row_per_thread.c]=1.04)
	printf '%-30s %-38s %-8s %10s %10s  %s\n' task pass verdict measured modeled "per variant (measured)"
	for tp in gpt2_bias_gelu_tanh:bench/passes/gpt2_bias_gelu_tanh.c \
		detr_frozen_batchnorm_relu:bench/passes/detr_frozen_batchnorm_relu.c llama_swiglu:bench/passes/llama_swiglu.c \
		t5_rmsnorm:bench/passes/t5_rmsnorm.c t5_rmsnorm:tests/passes/rmsnorm_row_per_thread.c; do
		t=${tp%%:*} p=${tp#*:}
		"$PASSFS" eval --task "$t" --pass "$p" --backend cuda --json >"$LOGS/fusion-$t-${p##*/}.json" 2>/dev/null ||
			rc=1
		/usr/bin/python3 - "$LOGS/fusion-$t-${p##*/}.json" "$t" "$p" "${modeled[$tp]}" <<'PY' || rc=1
import json, sys
try:
    r = json.load(open(sys.argv[1]))
except Exception:
    print("%-30s %-38s no result" % (sys.argv[2], sys.argv[3][-38:]))
    sys.exit(1)
per = " ".join("%s" % v.get("speedup") for v in r["variants"])
print("%-30s %-38s %-8s %10.3f %10s  %s" % (sys.argv[2], sys.argv[3][-38:], r["verdict"], r.get("score") or 0, sys.argv[4], per))
sys.exit(0 if r["verdict"] == "ok" and r["backend"] == "cuda" else 1)
PY
	done
	return $rc
}

s_anchor() {
	local deadline=$1
	"$PYTHON" tests/gpu/anchor.py --passfs "$PASSFS" --deadline "$deadline" --table "$LOGS/anchor.txt" \
		--json "$LOGS/anchor.json"
}

# ---- run -------------------------------------------------------------------

echo "passfs device check: $(date -u +%FT%TZ), budget ${BUDGET}s, logs in $LOGS"
export REPO BUILD PREBUILT JOBS PASSFS LOGS PYTHON
export -f s_env s_build s_device eval_json s_sandbox s_speed s_modload s_verdicts s_gpu_passes s_cheats s_truth s_fusion s_anchor
step env 30 0 s_env
step build 180 0 s_build
[ "${results[-1]}" = ok ] && built=1
step device 120 1 s_device
step sandbox 40 1 s_sandbox
step speed 60 1 s_speed
step modload 45 1 s_modload
step verdicts 150 1 s_verdicts
step gpu-passes 90 1 s_gpu_passes
step cheats 50 1 s_cheats
step truth 40 1 s_truth
step fusion 45 1 s_fusion
# the anchor gets what is left, less a margin for the summary; torch.compile
# stops starting new variants 20 s before its own limit
left=$((BUDGET - $(elapsed) - 10))
[ $left -gt 240 ] && left=240
step anchor "$left" 1 s_anchor $((left > 40 ? left - 20 : 20))

# ---- summary ---------------------------------------------------------------

summary=$LOGS/summary.txt
{
	echo "passfs device check, $(date -u +%FT%TZ), $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>/dev/null | head -1)"
	printf '%-12s %-8s %6s  %s\n' step result seconds note
	failed=0
	for k in "${!names[@]}"; do
		printf '%-12s %-8s %6s  %s\n' "${names[$k]}" "${results[$k]}" "${secs[$k]}" "${notes[$k]}"
		[ "${results[$k]}" = ok ] || failed=$((failed + 1))
	done
	echo "total $(elapsed)s; $failed step(s) not ok"
	if [ -s "$LOGS/sandbox-audit.txt" ]; then
		echo
		echo "the driver's calls the sandbox refuses (PASSFS_SANDBOX_AUDIT):"
		sed 's/ = -\{0,1\}[0-9]*$//' "$LOGS/sandbox-audit.txt" | sort -u | head -15
	fi
	if [ -s "$LOGS/anchor.txt" ]; then
		echo
		echo "anchor (passfs eager vs PyTorch eager vs torch.compile; ms = median of 100 after warm-up):"
		cat "$LOGS/anchor.txt"
	fi
} >"$summary"
echo
echo "=== summary"
cat "$summary"
if [ -n "$OUTDIR" ]; then
	cp "$summary" "$OUTDIR/gpu-check.txt"
	# the anchor's rows, for bench/calibration.py (the modeled H200 times beside them)
	[ -s "$LOGS/anchor.json" ] && cp "$LOGS/anchor.json" "$OUTDIR/anchor.json"
	echo "(written to $OUTDIR/gpu-check.txt, logs in $OUTDIR/logs/; anchor rows in $OUTDIR/anchor.json)"
fi
grep -q '^total .*; 0 step(s) not ok' "$summary"
