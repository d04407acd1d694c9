#!/usr/bin/env bash
# tests/gpu/check.sh - the device check for the cuda backend: one script for a
# machine with a GPU (written for an H200 with CUDA 13, PyTorch and
# TorchInductor), run from a copy of the repository, bounded by
# CHECK_BUDGET_S (default 290 s: under 5 minutes, so that a 15-minute lease
# holds the machine's start, one run and one rerun):
#
#   OUT=/some/dir bash tests/gpu/check.sh
#
# Steps, in the order of what a short lease must bring back first (each with
# a time limit shrunk to the budget left; a failed step does not stop the
# others; steps that need the binary are skipped when the build failed):
#   1 env         nvidia-smi, compilers, torch, the nvidia wheels found
#   2 build       cmake Release (warnings not fatal here) into build-gpu/; or,
#                 when build-prebuilt/ is there (tests/gpu/prepare.sh, run on
#                 a development machine and carried along: the GPU machine
#                 may have no jansson, libfuse3 or hiredis), those binaries
#   3 device      `passfs doctor` (must pick cuda and pass, its built-in
#                 end-to-end evaluation included), then the unit tests on the
#                 GPU: test_cuda_device (launches, CUPTI, escape, faults, big
#                 shared memory, L2 flush, lock, module cache, CUDA inside the
#                 sandbox), test_cuda_abi, test_cuda_backend, test_cuda_pack,
#                 test_sandbox, test_cpu_backend
#   4 anchor      tests/gpu/anchor.py: passfs eager vs PyTorch eager and
#                 torch.compile on 10 tasks (outputs compared, 25 + 100
#                 trials); a row per variant printed as it finishes, the
#                 whole step bounded by its limit, the table kept as it grows
#   5 latency     tests/gpu/latency.py: write pass.c on a `passfs watch` tree
#                 and on a FUSE mount (when /dev/fuse is there), seconds until
#                 result.json judges those bytes, first and second write
#   6 calibration the fused passes of bench/passes on three elementwise
#                 tasks, and the block-per-row and thread-per-row RMSNorm
#                 passes on t5_rmsnorm: the GPU's measured score beside the cpu
#                 backend's modeled one for the same pass (docs/benchmarks.md)
#   7 speed       `passfs eval` of a 6-variant task with a correct pass, twice:
#                 wall time (target < 1.5 s warm) and scores within 2%
#   8 sandbox     what the real driver does inside the pass worker's seccomp
#                 sandbox: which open functions libcuda imports, then one eval
#                 with PASSFS_SANDBOX_AUDIT (refused calls are logged and
#                 carried out): an empty log passes
#   9 modload     a matmul task (eager: cuBLAS) with a correct tiled GEMM pass,
#                 as passfs loads modules (EAGER in the pass worker only,
#                 eager's worker lazy) and with CUDA_MODULE_LOADING=EAGER
#                 everywhere: wall time and the eager kernels CUPTI saw
#  10 gpu-passes  tests/gpu/passes: inline PTX + wmma, shared memory over 48
#                 KiB, the escaping slow kernel, a faulting kernel, the GPU
#                 after it, CUPTI times, --cold, two evaluations at once
#  11 verdicts    tests/cli/eval_verdicts.sh with BACKEND=cuda
#  12 cheats      tests/cli/cheats.sh with BACKEND=cuda on a subset that fits
#                 (CHEATS_ONLY; the GPU's own expectations: c08's late kernel
#                 timed, %globaltimer refused, RLIMIT_DATA, ...)
#  13 truth       tests/cli/reward_truth.sh with BACKEND=cuda (5 bf16 runs),
#                 the launch forms (templated, macro, kernel table) ok
# What comes back, rewritten after every step so a run stopped from outside
# still returns what it measured (three files, the device runner returns 8):
#   $OUT/gpu-check.txt   the steps' table, the anchor's table, the latency and
#                        calibration rows, the sandbox audit's lines
#   $OUT/anchor.json     the anchor's rows (bench/calibration.py, run back
#                        here, sets the cpu backend's modeled times beside them)
#   $OUT/logs.tar.gz     every step's log
#
# Environment: CHECK_BUDGET_S (290), CHECK_STEP_MAX_S (a cap on every step's
# limit), BUILD_DIR (build-gpu), PREBUILT_DIR (build-prebuilt), PYTHON (a python
# with torch; default: python3 if it imports torch, else /usr/bin/python3),
# JOBS, ANCHOR_TASKS / ANCHOR_TRIALS (anchor.py), CHEATS_ONLY (a regex on the
# cheat cases' names).  tests/gpu/rehearse.sh runs this script here against
# the mock driver and a fake wheel tree (the suite's rehearsal).
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
if [ -z "${BUILD_DIR:-}" ] && [ -f "${PREBUILT_DIR:-build-prebuilt}/.prebuilt" ]; then
	BUILD=${PREBUILT_DIR:-build-prebuilt}
	PREBUILT=1
fi
# Binaries built elsewhere know that checkout's paths: point them at this one.
export PASSFS_INCLUDE_DIR=$REPO/gpu/include PASSFS_OPLIB_DIR=$REPO/gpu/oplib PASSFS_TASKS=$REPO/tasks
JOBS=${JOBS:-$(nproc 2>/dev/null || echo 4)}
case $BUILD in /*) ;; *) BUILD=$REPO/$BUILD ;; esac
PASSFS=$BUILD/passfs
LOGS=$(mktemp -d "${TMPDIR:-/tmp}/passfs-gpu-check.XXXXXX")
OUTDIR=${OUT:-}
if [ -n "$OUTDIR" ]; then
	mkdir -p "$OUTDIR"
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
	[ -n "${CHECK_STEP_MAX_S:-}" ] && [ "$limit" -gt "$CHECK_STEP_MAX_S" ] && limit=$CHECK_STEP_MAX_S
	t0=$(date +%s)
	# the step functions are exported: timeout runs them in a child bash
	# (STEP_LIMIT: the steps that bound their own work, anchor and latency)
	STEP_LIMIT=$limit timeout -k 10 "$limit" bash -c '"$@"' step "$@" >"$log" 2>&1
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
	write_out
	return 0
}

# The summary as it stands, and (with OUT) the three files that come back.
write_summary() {
	local k failed=0
	echo "passfs device check, $(date -u +%FT%TZ), $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>/dev/null | head -1)"
	printf '%-12s %-8s %6s  %s\n' step result seconds note
	for k in "${!names[@]}"; do
		printf '%-12s %-8s %6s  %s\n' "${names[$k]}" "${results[$k]}" "${secs[$k]:-}" "${notes[$k]:-}"
		[ "${results[$k]}" = ok ] || failed=$((failed + 1))
	done
	echo "total $(elapsed)s of ${BUDGET}s; $failed step(s) not ok${FINAL:+; done}"
	if [ -s "$LOGS/sandbox-audit.txt" ]; then
		echo
		echo "the driver's calls the sandbox refuses (PASSFS_SANDBOX_AUDIT):"
		sed 's/ = -\{0,1\}[0-9]*$//' "$LOGS/sandbox-audit.txt" | sort -u | head -15
	fi
	if [ -s "$LOGS/anchor.txt" ]; then
		echo
		echo "anchor (passfs eager vs PyTorch eager vs torch.compile; ms = median of the timed calls after warm-up):"
		cat "$LOGS/anchor.txt"
	fi
	if [ -s "$LOGS/latency.txt" ]; then
		echo
		echo "latency (write pass.c -> result.json for those bytes):"
		cat "$LOGS/latency.txt"
	fi
	if [ -s "$LOGS/calibration.txt" ]; then
		echo
		echo "calibration (the GPU's measured score beside the cpu backend's modeled one, same pass):"
		cat "$LOGS/calibration.txt"
	fi
}

write_out() {
	write_summary >"$LOGS/summary.txt"
	[ -n "$OUTDIR" ] || return 0
	cp "$LOGS/summary.txt" "$OUTDIR/gpu-check.txt.tmp" && mv "$OUTDIR/gpu-check.txt.tmp" "$OUTDIR/gpu-check.txt"
	if [ -s "$LOGS/anchor.json" ]; then
		cp "$LOGS/anchor.json" "$OUTDIR/anchor.json.tmp" && mv "$OUTDIR/anchor.json.tmp" "$OUTDIR/anchor.json"
	fi
	tar -czf "$OUTDIR/logs.tar.gz.tmp" -C "$LOGS" --exclude=module-cache --exclude='*.lock' . 2>/dev/null &&
		mv "$OUTDIR/logs.tar.gz.tmp" "$OUTDIR/logs.tar.gz"
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
	echo "nvidia wheels (PASSFS_CUDA_LIBDIRS): ${PASSFS_CUDA_LIBDIRS:-none}"
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
	# A pass that cannot be compiled in the compile jail here: what the jail
	# lacks (NVRTC's files, its builtins, the headers), and whether passfs
	# works without the namespaces (PASSFS_JAIL=limits; the later steps then
	# use it, and the summary says so).
	if grep -qE '^ *(FAIL|note) +evaluation' "$LOGS/doctor.txt"; then
		echo "--- the evaluation failed: NVRTC and the jail"
		local lib
		lib=$(grep -oE 'NVRTC [0-9.]+.*' "$LOGS/doctor.txt" | head -1)
		echo "doctor: $lib"
		local d
		for d in ${PASSFS_CUDA_LIBDIRS//:/ } /usr/local/cuda/lib64; do
			for lib in "$d"/libnvrtc*; do
				[ -e "$lib" ] || continue
				echo "$lib -> $(realpath "$lib")"
				readelf -d "$lib" 2>/dev/null | grep -iE 'rpath|runpath|needed' | sed 's/^/    /'
			done
		done
		echo "--- passfs doctor with PASSFS_JAIL=limits"
		PASSFS_JAIL=limits "$PASSFS" doctor >"$LOGS/doctor-limits.txt" 2>&1
		grep -E 'jail|evaluation' "$LOGS/doctor-limits.txt"
		if grep -qE '^ *ok +evaluation' "$LOGS/doctor-limits.txt"; then
			echo "the compile jail fails here and PASSFS_JAIL=limits works: later steps use it"
			touch "$LOGS/jail-limits"
		fi
		rc=1
	fi
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

# A matmul task (eager: cuBLAS) with a correct tiled GEMM pass, as passfs
# loads modules (CUDA_MODULE_LOADING=EAGER in the pass worker only, before its
# sandbox; eager's worker keeps the driver's lazy loading, so cuBLAS does not
# load every kernel it has) and with EAGER everywhere: the eval's wall time
# (cuBLAS's start-up is in it) and whether CUPTI saw the same eager kernels.
s_modload() {
	local mode t0 t1 rc=0
	for mode in default EAGER; do
		t0=$(date +%s%N)
		if [ $mode = default ]; then
			env -u CUDA_MODULE_LOADING "$PASSFS" eval --tasks tests/gpu/tasks --task gemm_f32 --backend cuda --json \
				--pass tests/gpu/passes/gemm_tiled.c >"$LOGS/modload-$mode.json" || rc=1
		else
			CUDA_MODULE_LOADING=$mode "$PASSFS" eval --tasks tests/gpu/tasks --task gemm_f32 --backend cuda --json \
				--pass tests/gpu/passes/gemm_tiled.c >"$LOGS/modload-$mode.json" || rc=1
		fi
		t1=$(date +%s%N)
		echo $(((t1 - t0) / 1000000)) >"$LOGS/modload-$mode.ms"
	done
	/usr/bin/python3 - "$LOGS" <<'PY' || rc=1
import json, os, sys
d = sys.argv[1]
rs = {}
for mode in ("default", "EAGER"):
    try:
        r = json.load(open(os.path.join(d, "modload-%s.json" % mode)))
    except Exception as e:
        print("%-7s no result (%s)" % (mode, e))
        sys.exit(1)
    ms = int(open(os.path.join(d, "modload-%s.ms" % mode)).read())
    rs[mode] = r
    print("%-7s wall %.2f s  verdict %s  libraries: %s" % (mode, ms / 1e3, r["verdict"],
                                                            r.get("eager", {}).get("libraries")))
    for v in r["variants"]:
        print("   %-18s speedup %-8s eager %s ms (gpu %s ms, %s kernels)  pass %s ms" % (
            v["name"], v.get("speedup"), v.get("eager_ms"), v.get("eager_gpu_ms"), v.get("eager_kernels"),
            v.get("pass_ms")))
same = [v.get("eager_kernels") for v in rs["default"]["variants"]] == [v.get("eager_kernels") for v in rs["EAGER"]["variants"]]
print("eager kernel counts %s under both" % ("the same" if same else "DIFFER"))
sys.exit(0 if all(r["verdict"] == "ok" for r in rs.values()) else 1)
PY
	return $rc
}

s_sandbox() {
	local lib d
	lib=${PASSFS_LIBCUDA:-}
	[ -n "$lib" ] || lib=$(ldconfig -p 2>/dev/null | awk '/libcuda\.so\.1 /{print $NF; exit}')
	# a driver mounted into a container is often not in ld.so.cache
	if [ -z "$lib" ]; then
		for d in ${LD_LIBRARY_PATH//:/ } /usr/lib/x86_64-linux-gnu /usr/lib64 /usr/local/nvidia/lib64 \
			/usr/local/nvidia/lib /usr/lib/wsl/lib /run/nvidia/driver/usr/lib/x86_64-linux-gnu; do
			[ -e "$d/libcuda.so.1" ] && { lib=$d/libcuda.so.1; break; }
		done
	fi
	echo "libcuda: ${lib:-not found (ld.so.cache, LD_LIBRARY_PATH, the usual driver directories)}"
	if [ -n "$lib" ]; then
		echo "open functions it imports (passfs serves the driver's re-opens of its device paths):"
		nm -D --undefined-only "$lib" 2>/dev/null |
			grep -E ' (open|open64|openat|openat64|__open_2|__open64_2|__openat_2|__openat64_2|syscall)(@|$)' ||
			echo "  none (or nm is missing)"
	fi
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

# the cases whose GPU behaviour differs from the cpu backend's, and the
# sandbox's refusals (about 12 evaluations)
s_cheats() {
	BACKEND=cuda PASSFS=$PASSFS CHEATS_ONLY=${CHEATS_ONLY:-'^(c01|c03|c05|c06a|c07b|c08|c09a|c09b|c10a|c10c|c13)_'} \
		bash tests/cli/cheats.sh
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

s_calibration() {
	local tp t p rc=0
	set -o pipefail
	# the cpu backend's scores (modeled H200 speedup) for these passes, with
	# eager as a GPU runs it (split reductions, library GEMMs) and the call's
	# own 10 us (docs/benchmarks.md, "Ranking like a GPU")
	declare -A modeled=([gpt2_bias_gelu_tanh:bench/passes/gpt2_bias_gelu_tanh.c]=1.41
		[detr_frozen_batchnorm_relu:bench/passes/detr_frozen_batchnorm_relu.c]=2.79
		[llama_swiglu:bench/passes/llama_swiglu.c]=1.43
		[t5_rmsnorm:bench/passes/t5_rmsnorm.c]=2.33
		[t5_rmsnorm:tests/passes/rmsnorm_row_per_thread.c]=0.98)
	printf '%-30s %-38s %-8s %10s %10s  %s\n' task pass verdict measured modeled "per variant (measured)" |
		tee "$LOGS/calibration.txt"
	for tp in gpt2_bias_gelu_tanh:bench/passes/gpt2_bias_gelu_tanh.c \
		detr_frozen_batchnorm_relu:bench/passes/detr_frozen_batchnorm_relu.c llama_swiglu:bench/passes/llama_swiglu.c \
		t5_rmsnorm:bench/passes/t5_rmsnorm.c t5_rmsnorm:tests/passes/rmsnorm_row_per_thread.c; do
		t=${tp%%:*} p=${tp#*:}
		"$PASSFS" eval --task "$t" --pass "$p" --backend cuda --json >"$LOGS/fusion-$t-${p##*/}.json" 2>/dev/null ||
			rc=1
		/usr/bin/python3 - "$LOGS/fusion-$t-${p##*/}.json" "$t" "$p" "${modeled[$tp]}" <<'PY' | tee -a "$LOGS/calibration.txt" || rc=1
import json, sys
try:
    r = json.load(open(sys.argv[1]))
except Exception:
    print("%-30s %-38s no result" % (sys.argv[2], sys.argv[3][-38:]))
    sys.exit(1)
per = " ".join("%s" % v.get("speedup") for v in r["variants"])
print("%-30s %-38s %-8s %10.3f %10s  %s" % (sys.argv[2], sys.argv[3][-38:], r["verdict"], r.get("score") or 0, sys.argv[4], per))
# the pass's wall time beside CUPTI's kernel time, and eager's: a pass whose
# wall time is far above its kernels' is paying host overhead eager does not
print("    %-18s %9s %9s %6s %9s %9s %6s" % ("variant", "pass_ms", "pass_gpu", "iqr", "eager_ms", "eager_gpu", "iqr"))
for v in r["variants"]:
    print("    %-18s %9s %9s %6s %9s %9s %6s" % (v["name"][:18], v.get("pass_ms"), v.get("pass_gpu_ms"),
          v.get("pass_iqr_ratio"), v.get("eager_ms"), v.get("eager_gpu_ms"), v.get("eager_iqr_ratio")))
sys.exit(0 if r["verdict"] == "ok" and r["backend"] == "cuda" else 1)
PY
	done
	return $rc
}

# The anchor gets its step's limit less a margin; torch.compile starts no
# variant in the last 5 s.  Without a GPU for torch (the rehearsal, against
# the mock driver) torch runs on the CPU: the flow and the table, not numbers.
s_anchor() {
	local dl=$((${STEP_LIMIT:-200} - 10)) dev=()
	[ $dl -lt 20 ] && dl=20
	"$PYTHON" -c 'import torch, sys; sys.exit(0 if torch.cuda.is_available() else 1)' 2>/dev/null ||
		{ echo "torch sees no GPU: torch runs on the CPU (its columns are CPU times)"; dev=(--torch-device cpu); }
	"$PYTHON" tests/gpu/anchor.py --passfs "$PASSFS" --deadline "$dl" --table "$LOGS/anchor.txt" \
		--json "$LOGS/anchor.json" "${dev[@]}"
}

s_latency() {
	local dl=$((${STEP_LIMIT:-60} - 5))
	set -o pipefail
	"$PYTHON" tests/gpu/latency.py --passfs "$PASSFS" --backend cuda --deadline "$dl" | tee "$LOGS/latency.txt"
}

# ---- run -------------------------------------------------------------------

echo "passfs device check: $(date -u +%FT%TZ), budget ${BUDGET}s, logs in $LOGS"
export REPO BUILD PREBUILT JOBS PASSFS LOGS PYTHON
export -f s_env s_build s_device eval_json s_anchor s_latency s_calibration s_speed s_sandbox s_modload \
	s_gpu_passes s_verdicts s_cheats s_truth
step env 20 0 s_env
step build 180 0 s_build
[ "${results[-1]}" = ok ] && built=1
step device 60 1 s_device
if [ -e "$LOGS/jail-limits" ]; then
	export PASSFS_JAIL=limits
	notes[-1]="${notes[-1]}; the compile jail failed: later steps use PASSFS_JAIL=limits"
fi
step anchor 110 1 s_anchor
step latency 45 1 s_latency
step calibration 100 1 s_calibration
step speed 30 1 s_speed
step sandbox 30 1 s_sandbox
step modload 40 1 s_modload
step gpu-passes 60 1 s_gpu_passes
step verdicts 120 1 s_verdicts
step cheats 60 1 s_cheats
step truth 40 1 s_truth

FINAL=1 write_out
echo
echo "=== summary"
cat "$LOGS/summary.txt"
[ -n "$OUTDIR" ] && echo "(in $OUTDIR: gpu-check.txt, anchor.json, logs.tar.gz)"
grep -q '^total .*; 0 step(s) not ok' "$LOGS/summary.txt"
