#!/usr/bin/env bash
# The cuda backend end to end without a GPU: `passfs eval --backend cuda` and
# `passfs eager --backend cuda` against a mock driver (tests/gpu/mock/
# libcuda_mock.c, built here with cc; PASSFS_LIBCUDA points at it).  The mock
# keeps "device" memory on the host and runs no kernel, so a pass's outputs
# keep the poison: verdict rejected, which proves the pipeline reached the
# comparison - probe, lazy CUDA initialisation in each worker, NVRTC for
# sm_90a, module load by lowered names, the kernel table lookup in
# pf_launch, the argument check against the kernel's parameters
# (cuFuncGetParamInfo), the sandbox with the driver's descriptors (the
# mock's launches and syncs issue an ioctl on them).  A kernel fault
# (MOCK_CUDA_FAULT) must give runtime_error naming the kernel, and so must a
# parameter whose size differs between host and device; device-only code
# (inline PTX, wmma) must compile and run; a GPU newer than NVRTC gets PTX.
# Skipped without cc or NVRTC.
. tests/lib/cli.sh
T=tests/passes/tasks

. tests/gpu/mock/build.sh
export PASSFS_LIBCUDA=$tmp/libcuda_mock.so PASSFS_CUPTI=0 PASSFS_CACHE_DIR=$tmp/cache PASSFS_LOCK_DIR=$tmp

check() { # name, python condition on r, eval args...
	local name=$1 cond=$2
	shift 2
	local out rc
	out=$(timeout 300 "$PASSFS" eval --tasks "$T" --task tiny_bias_gelu --backend cuda --json "$@" 2>"$tmp/err")
	rc=$?
	if [ $rc -ne 0 ]; then
		bad "$name: exit $rc: $(tail -3 "$tmp/err")"
		return
	fi
	if printf '%s' "$out" | /usr/bin/python3 -c "
import json, sys
r = json.load(sys.stdin)
ok = r['backend'] == 'cuda' and r['device'].startswith('Mock GPU') and ($cond)
if not ok:
    print('verdict', r['verdict'], 'message', r['message'])
sys.exit(0 if ok else 1)"; then
		ok "$name"
	else
		bad "$name"
	fi
}

# the mock runs no kernel: a pass that got through to the comparison leaves
# its outputs holding the poison
reached="all(v['verdict'] == 'rejected' and 'poison' in v['message'] for v in r['variants'])"
MOCK_CUDA_LOG=$tmp/launches check "ok_fused reaches the comparison" \
	"$reached" \
	--pass tests/passes/ok_fused.c
if grep -q 'launch _Z9ew_binary' "$tmp/launches" && grep -q 'launch _Z9bias_geluIfEv' "$tmp/launches" &&
	grep -q 'launch _Z9bias_geluI6__halfEv' "$tmp/launches"; then
	ok "eager and pass kernels launched by their lowered names"
else
	bad "launches: $(sort -u "$tmp/launches" 2>/dev/null | head -5)"
fi
# the pass's kernels come from NVRTC's cubin (no JIT in the worker); a cubin
# the driver refuses falls back to the PTX
if grep -q '^function _Z9bias_geluIfEv.* from cubin' "$tmp/launches" && ! grep -q 'from ptx' "$tmp/launches"; then
	ok "the pass is loaded from its cubin"
else
	bad "module loads: $(grep '^function' "$tmp/launches" | sort -u | head -5)"
fi
MOCK_CUDA_LOG=$tmp/launches2 MOCK_CUDA_REFUSE_CUBIN=_Z9bias_gelu check "a refused cubin falls back to the PTX" \
	"$reached" \
	--pass tests/passes/ok_fused.c
grep -q '^function _Z9bias_geluIfEv.* from ptx' "$tmp/launches2" && ok "the refused pass cubin's PTX was loaded" ||
	bad "module loads: $(grep '^function' "$tmp/launches2" | sort -u | head -5)"
# The launch-time argument check runs: the backend asked the driver for
# each parameter (cuFuncGetParamInfo) of the pass's kernels, which the mock
# reads from the cubin and from the PTX alike (offset:size each)
params='^params _Z9bias_geluIfEvPKT_S2_PS0_xx 5 0:8,8:8,16:8,24:8,32:8 pid'
if grep -q "$params" "$tmp/launches" && grep -q "$params" "$tmp/launches2"; then
	ok "the pass kernels' parameters were read, from the cubin and from the PTX"
else
	bad "parameters: $(grep '^params _Z9bias' "$tmp/launches" "$tmp/launches2" | sort -u | head -4)"
fi
# a kernel whose parameter is a double on the device and a float on the host:
# the launch is refused, naming the kernel and the argument, and never made
MOCK_CUDA_LOG=$tmp/launches_mismatch check "host and device disagreeing on a parameter's size is refused" \
	"r['verdict'] == 'runtime_error' and all('bias_gelu<' in v['message'] and 'argument 5 has 4 bytes on the host' in v['message'] and 'parameter 8 on the device' in v['message'] for v in r['variants'])" \
	--pass tests/gpu/passes/param_mismatch.c
grep -q '^params _Z9bias_geluIfEvPKT_S2_PS0_xxd 6 .*,40:8 pid' "$tmp/launches_mismatch" &&
	! grep -q '^launch _Z9bias_gelu' "$tmp/launches_mismatch" && ok "the mismatched kernel was never launched" ||
	bad "mismatch: $(grep '_Z9bias_gelu' "$tmp/launches_mismatch" | sort -u | head -4)"
# A GPU newer than the NVRTC here (which fails every compile for an arch it
# does not know): the pass and the op library are PTX for the newest arch
# NVRTC knows, JIT-compiled by the driver, and the result says so
MOCK_CUDA_CC=99.0 MOCK_CUDA_LOG=$tmp/launches_new check "a GPU newer than NVRTC reaches the comparison" \
	"$reached and 'sm_990' in r['compile'].get('note', '') and 'JIT-compiled by the driver' in r['compile']['note']" \
	--pass tests/passes/ok_fused.c
if grep -q '^function _Z9bias_geluIfEv.* from ptx' "$tmp/launches_new" && grep -q '^launch _Z9ew_binary' "$tmp/launches_new" &&
	! grep -q 'from cubin' "$tmp/launches_new"; then
	ok "on a GPU newer than NVRTC the pass and the op library load from PTX"
else
	bad "module loads: $(grep '^function' "$tmp/launches_new" | sort -u | head -5)"
fi
MOCK_CUDA_FAULT=oob_store check "a faulting kernel is named" \
	"r['verdict'] == 'runtime_error' and 'CUDA_ERROR_ILLEGAL_ADDRESS' in r['message'] and 'oob_store<float>' in r['message']" \
	--pass tests/gpu/passes/fault_oob.c
check "inline PTX and wmma compile and run" \
	"$reached" \
	--pass tests/gpu/passes/ptx_wmma_ok.c
# 8 KiB static + 44 KiB dynamic shared memory: the default limit is 48 KiB
# less the static part (the mock enforces it as the driver does), so the
# backend must raise the kernel's limit
check "static plus dynamic shared memory over 48 KiB is opted in" \
	"$reached" \
	--pass tests/gpu/passes/smem_static_dynamic.c
check "inline PTX is not refused on the cuda backend" \
	"all(v['verdict'] == 'rejected' for v in r['variants'])" \
	--pass tests/passes/unsupported_ptx.c

# The driver inside the sandbox: opening its device path again (as the
# NVIDIA driver does for each host mapping) is served from pre-opened
# descriptors; more than the pool holds is named as the driver's doing.  A
# call no sandbox allows, made while pass code may have run (every launch),
# is the pass's: the worker's line blaming the driver is kept in the message
# but cannot be told from one the pass wrote itself.
# reaches NAME: ok_fused, under the caller's MOCK_* settings, gets through to
# the comparison
reaches() { check "$1" "$reached" --pass tests/passes/ok_fused.c; }
MOCK_CUDA_REOPEN=8 reaches "the driver reopens its device in the sandbox"
MOCK_CUDA_LATE_FD=1 reaches "a descriptor the driver opened after cuInit is the driver's"
MOCK_CUDA_FDS=150 reaches "a driver holding 100 descriptors with gaps works in the sandbox"
MOCK_CUDA_REOPEN=9 check "the driver runs out of pre-opened descriptors" \
	"r['verdict'] == 'runtime_error' and 'CUDA error 304' in r['message'] and 'opened /dev/null more often than the 8 descriptors' in r['message']" \
	--pass tests/passes/ok_fused.c
MOCK_CUDA_SYSCALL=1 check "a refused call in the driver after pass code ran is the pass's" \
	"r['verdict'] == 'rejected' and 'called from libcuda_mock.so' in r['message'] and 'the worker says the GPU driver made the call, but pass code had run in it' in r['message']" \
	--pass tests/passes/ok_fused.c
# The pass's host memory on the cuda backend (no address-space limit there:
# the driver reserves terabytes): RLIMIT_DATA stops the flood after a few GiB
# (before: 4096 untouched GiB, and a pass that touched them took the machine).
check "a host memory flood stops at the data limit" \
	"r['verdict'] == 'runtime_error' and 'Segmentation fault' in r['message'] and all(0 < int(v['log_tail'].split('alloc flood: ')[1].split()[0]) < 64 for v in r['variants'])" \
	--pass tests/cheats/c10c_alloc_flood.c --tasks tests/cheats/tasks --task cheat_bias_gelu
rm -f "$tmp/audit"
MOCK_CUDA_SYSCALL=1 PASSFS_SANDBOX_AUDIT=$tmp/audit check "audit mode logs the driver's call and goes on" \
	"r.get('sandbox_audit') == '$tmp/audit' and $reached" \
	--pass tests/passes/ok_fused.c
if grep -q '^audit: getsid from libc.so.6 called from libcuda_mock.so = ' "$tmp/audit" 2>/dev/null; then
	ok "the audit log names the call and its caller"
else
	bad "audit log: $(head -5 "$tmp/audit" 2>/dev/null)"
fi

if timeout 300 "$PASSFS" eager --tasks "$T" --task tiny_bias_gelu --backend cuda --out "$tmp/eager" >"$tmp/eager.log" 2>&1 &&
	grep -q 'Mock GPU' "$tmp/eager.log"; then
	ok "passfs eager --backend cuda"
else
	bad "passfs eager --backend cuda: $(tail -3 "$tmp/eager.log")"
fi
finish
