#!/usr/bin/env bash
# The cuda backend's timing path without a GPU: `passfs eval --backend cuda`
# against the mock driver (tests/gpu/mock/libcuda_mock.c, which is also a mock
# CUPTI: records for every launch, copy and memset while collection is on)
# and the mock cuBLAS (eager's GEMM), on a matmul task.  The pass
# (tests/gpu/mock/host_matmul.c) launches one kernel and computes on the host
# (the mock's device memory is host memory), so the evaluation gets through
# the checks to the timing.  Checked:
#   - eager.libraries names the mock cuBLAS;
#   - CUPTI: result.json's timing.gpu_time is "cupti", per variant the pass's
#     kernel count (1) and GPU time (the mock's 2 us kernel), per kernel too,
#     the kernel list with the mock's resource numbers;
#   - a pass kernel whose GPU span outlasts its end-to-end window
#     (MOCK_CUPTI_SLOW): timing_suspect, pass_ms is the span;
#   - --cold: an L2-sized memset before every timed call (2 x the mock's
#     50 MiB L2), and none without it;
#   - the benchmark lock: held by another process, the evaluation waits
#     (lock_wait_ms), or gives up after --lock-timeout with a clear error;
#   - worker reuse: one eager and one pass worker initialise CUDA for all the
#     variants (both start before the compile); a faulting variant gets its
#     own fresh pass worker after it; a pass that does not compile ends the
#     workers started for it.
# Skipped without cc, NVRTC or flock.
. tests/lib/cli.sh

if ! command -v flock >/dev/null 2>&1; then
	echo "skip: no flock"
	exit 0
fi
. tests/gpu/mock/build.sh
unset PASSFS_CUPTI PASSFS_EAGER_BLAS PASSFS_CUDNN
export PASSFS_LIBCUDA=$tmp/libcuda_mock.so PASSFS_CUPTI_LIB=$tmp/libcuda_mock.so \
	PASSFS_CUBLAS=$tmp/libcublas_mock.so PASSFS_CACHE_DIR=$tmp/cache PASSFS_LOCK_DIR=$tmp
LOCK="$tmp/passfs-gpu-0000_00_00.0.lock"  # the bus id, colons as _


mkdir -p "$tmp/tasks/mm"
/usr/bin/python3 - "$tmp/tasks/mm/graph.json" <<'PY'
import json, sys
def v(name, m, k, n):
    return {"name": name,
            "inputs": [{"name": "a", "shape": [m, k], "dtype": "float32", "std": 5.0},
                       {"name": "b", "shape": [k, n], "dtype": "float32", "std": 5.0}],
            "nodes": [{"name": "c", "op": "matmul", "inputs": ["a", "b"]}], "outputs": ["c"]}
json.dump({"id": "mm", "summary": "matmul (mock timing test)",
           "variants": [v("s16", 16, 32, 24), v("s40", 40, 24, 33), v("s8", 8, 8, 8)]}, open(sys.argv[1], "w"))
PY

# ev NAME ARGS...: eval --json into $tmp/NAME.json (exit status in $tmp/NAME.rc)
ev() {
	local name=$1
	shift
	timeout 300 "$PASSFS" eval --tasks "$tmp/tasks" --task mm --backend cuda --json --warmup 2 --trials 10 \
		--pass tests/gpu/mock/host_matmul.c "$@" >"$tmp/$name.json" 2>"$tmp/$name.err"
	echo $? >"$tmp/$name.rc"
}
# py NAME CONDITION: the condition on r (the result) holds
py() {
	/usr/bin/python3 - "$tmp/$1.json" "$2" <<'PY'
import json, sys
try:
    r = json.load(open(sys.argv[1]))
except Exception as e:
    print("no result:", e)
    sys.exit(1)
vs = r.get("variants", [])
ok = eval("(" + sys.argv[2] + ")")
if not ok:
    print("verdict", r.get("verdict"), "|", r.get("message"), "| timing", r.get("timing"))
    for v in vs:
        print("  ", {k: v.get(k) for k in ("name", "verdict", "pass_ms", "pass_gpu_ms", "pass_gpu_span_ms",
                                          "pass_kernels", "eager_kernels", "timing_suspect", "lock_wait_ms",
                                          "message")})
sys.exit(0 if ok else 1)
PY
}

# (The GPU-span rule must not fire on this honest pass.  The round-trip rule
# is not asserted here: with the mock's few-microsecond pass, a machine
# running three tests on two cores flags an honest variant about once in 17
# (docs/integrity.md); cheats.sh asserts no false alarm on honest passes of
# realistic size.)
MOCK_CUDA_LOG=$tmp/plain.log ev plain --trials 30
if py plain "r['verdict'] == 'ok' and len(vs) == 3 and r['timing']['gpu_time'] == 'cupti' and
    r['timing']['cold'] is False and all(v['pass_kernels'] == 1 and 0.0015 < v['pass_gpu_ms'] < 0.0025 and
    v['pass_gpu_span_ms'] >= v['pass_gpu_ms'] and 'GPU span' not in v.get('integrity_note', '') for v in vs)"; then
	ok "CUPTI: one 2 us kernel per pass call, on every variant"
else
	bad "CUPTI fields ($(tail -2 "$tmp/plain.err"))"
fi
if py plain "all([(k['name'][:7], k.get('kernel'), k['ms'], k['calls']) for k in v['pass_gpu_kernels']] ==
    [('_Z5touc', 'touch(float*)', 0.002, 1)] and v['eager_gpu_kernels'] == [] for v in vs)"; then
	ok "per-kernel GPU time: the pass's one kernel (demangled), 2 us, once per call (eager: cuBLAS, no kernel records)"
else
	bad "CUPTI fields ($(tail -2 "$tmp/plain.err"))"
fi
if py plain "[(k['name'], k['registers'], k['max_threads_per_block'], k['local_bytes']) for k in r['kernels']] ==
    [('touch', 32, 1024, 0)] and k['lowered'].startswith('_Z5touch') if (k := r['kernels'][0]) else False"; then
	ok "the pass's kernel and its resources"
else
	bad "kernel list"
fi
# Plausibility: the device's peak memory bandwidth (clock x 2 x bus width) for
# the bytes its L2 cannot hold.  The default mock (H100: 3.35 TB/s, 50 MiB L2)
# holds the whole variant: no bound.
if py plain "all('roofline_ms' not in v and not v.get('implausible') for v in vs)"; then
	ok "roofline: a variant that fits in the L2 gets no bound"
else
	bad "roofline with a 50 MiB L2"
fi
# 1 MHz x 5120 bits = 1.28 GB/s, 1 KiB of L2: (bytes - 1024) / 1.28e6 ms
MOCK_CUDA_L2=1024 MOCK_CUDA_MEM_KHZ=1000 ev roof
if py roof "r['verdict'] == 'ok' and all(abs(v['roofline_ms'] - (4 * (m*k + k*n + m*n) - 1024) / 1.28e6) < 2e-6
    for v, (m, k, n) in zip(vs, [(16, 32, 24), (40, 24, 33), (8, 8, 8)]) if 4 * (m*k + k*n + m*n) > 1024)"; then
	ok "roofline: the device's bandwidth for the bytes beyond its L2"
else
	bad "roofline values"
fi
# 2 bytes per ms: every pass median is impossibly fast - a flag, not a verdict
MOCK_CUDA_L2=1024 MOCK_CUDA_MEM_KHZ=1 MOCK_CUDA_MEM_BITS=8 ev slowmem
if py slowmem "r['verdict'] == 'ok' and all(v.get('implausible') and 'L2 cannot hold' in v.get('integrity_note', '')
    for v in vs[:2])"; then
	ok "roofline: a pass faster than the memory allows is flagged implausible"
else
	bad "implausible flag"
fi

n_init=$(grep -c '^init ' "$tmp/plain.log")
# the probe, one eager worker, one pass worker
if [ "$n_init" -eq 3 ]; then
	ok "3 variants, one eager and one pass worker (CUDA initialised 3 times with the probe)"
else
	bad "worker reuse: CUDA initialised $n_init times: $(grep '^init ' "$tmp/plain.log" | tr '\n' ' ')"
fi
if py plain "r['eager']['libraries'].startswith('cublas ') and 'cudnn' not in r['eager']['libraries']"; then
	ok "result.json names the library eager used (cuBLAS)"
else
	bad "eager libraries"
fi
if ! grep -q '^memset ' "$tmp/plain.log"; then
	ok "no L2 flush without --cold"
else
	bad "an L2-sized memset without --cold"
fi

MOCK_CUPTI_SLOW=touch:5 ev slow
if py slow "r['verdict'] == 'ok' and all(v.get('timing_suspect') and v['pass_ms'] >= 5 and v['speedup'] < 1 and
    'GPU span' in v.get('integrity_note', '') for v in vs)"; then
	ok "GPU work outlasting the host's window: scored on the GPU span"
else
	bad "slow kernel span"
fi

MOCK_CUDA_LOG=$tmp/cold.log ev cold --cold
n_flush=$(grep -c '^memset 104857600$' "$tmp/cold.log")
# (2 warm-up + 10 timed + 10 traced) calls x 2 sides x 3 variants, more on a retry
if py cold "r['verdict'] == 'ok' and r['timing']['cold'] is True" && [ "$n_flush" -ge 132 ]; then
	ok "--cold: a 100 MiB flush before each of $n_flush timed calls"
else
	bad "--cold: $n_flush flushes"
fi

# hold_lock FILE: another process holds the benchmark lock, from when this
# returns until FILE exists (at most 60 s) - no sleep races with a loaded machine
hold_lock() {
	flock "$LOCK" sh -c 'touch "$1.held"; i=0
		while [ ! -e "$1" ] && [ $i -lt 1200 ]; do sleep 0.05; i=$((i + 1)); done' _ "$1" &
	holder=$!
	while [ ! -e "$1.held" ] && kill -0 $holder 2>/dev/null; do sleep 0.02; done
}
hold_lock "$tmp/release1"
ev waited &
evpid=$!
# the evaluation has reached the lock when it announces its first variant
for _ in $(seq 1 3000); do
	grep -q 'passfs eval: variant' "$tmp/waited.err" 2>/dev/null && break
	sleep 0.02
done
sleep 0.8
touch "$tmp/release1"
wait $evpid
wait $holder
if py waited "r['verdict'] == 'ok' and vs[0].get('lock_wait_ms', 0) >= 500"; then
	ok "the benchmark lock held elsewhere: the evaluation waited for it"
else
	bad "lock wait"
fi
hold_lock "$tmp/release2"
ev gaveup --lock-timeout 0.5
touch "$tmp/release2"
wait $holder
if [ "$(cat "$tmp/gaveup.rc")" = 1 ] && grep -q "the GPU is busy: another benchmark held .*passfs-gpu-0000_00_00.0.lock for over 500 ms" "$tmp/gaveup.err"; then
	ok "--lock-timeout: gives up with a clear error"
else
	bad "lock timeout: rc $(cat "$tmp/gaveup.rc"): $(tail -2 "$tmp/gaveup.err")"
fi

MOCK_CUDA_FAULT=touch MOCK_CUDA_LOG=$tmp/fault.log ev fault
n_init=$(grep -c '^init ' "$tmp/fault.log")
if py fault "all(v['verdict'] == 'runtime_error' and 'CUDA_ERROR_ILLEGAL_ADDRESS' in v.get('message', '')
    and 'touch' in v.get('message', '') for v in vs)" && [ "$n_init" -eq 5 ]; then
	ok "a fault ends its pass worker only: a fresh one per variant (CUDA initialised $n_init times)"
else
	bad "fault: CUDA initialised $n_init times"
fi

# A batch per variant (PASSFS_BATCH_BYTES=1): each batch gets its own pair of
# workers, and only the first starts before the compile.
PASSFS_BATCH_BYTES=1 MOCK_CUDA_LOG=$tmp/batches.log ev batches
n_init=$(grep -c '^init ' "$tmp/batches.log")
if py batches "r['verdict'] == 'ok' and len(vs) == 3 and all(v['pass_kernels'] == 1 for v in vs)" &&
	[ "$n_init" -eq 7 ]; then
	ok "a batch per variant: all ok, a worker pair each (CUDA initialised 7 times with the probe)"
else
	bad "batches: CUDA initialised $n_init times"
fi

# The human summary shows the GPU times and the kernel table too.
summary=$(timeout 300 "$PASSFS" eval --tasks "$tmp/tasks" --task mm --backend cuda --warmup 1 --trials 3 \
	--pass tests/gpu/mock/host_matmul.c 2>/dev/null)
if printf '%s\n' "$summary" | grep -q 'PASS GPU ms' && printf '%s\n' "$summary" | grep -Eq '^touch +32 +0 +0$'; then
	ok "the summary lists GPU times and the kernel's resources"
else
	bad "summary: $summary"
fi

# Both workers start before the compile; a pass that does not compile ends them.
MOCK_CUDA_LOG=$tmp/cerr.log ev cerr --pass tests/passes/compile_error.c
n_init=$(grep -c '^init ' "$tmp/cerr.log")
if py cerr "r['verdict'] == 'compile_error' and all(v['verdict'] == 'compile_error' for v in vs)" &&
	[ "$n_init" -eq 3 ] && ! grep -q '^launch ' "$tmp/cerr.log"; then
	ok "a compile error with the workers already started: verdict compile_error, nothing launched"
else
	bad "compile error with early workers (CUDA initialised $n_init times)"
fi

finish
