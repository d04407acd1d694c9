#!/usr/bin/env bash
# --backend auto and PASSFS_CUDA_DEVICE: a named GPU that is not there is an
# error, never a silent run on the cpu backend (whose scores are another
# machine's); without PASSFS_CUDA_DEVICE auto falls back to the cpu backend
# when there is no GPU, and picks the GPU when there is one (the mock driver,
# tests/gpu/mock, when it can be built here).
. tests/lib/cli.sh
T=tests/passes/tasks
export PASSFS_CACHE_DIR=$tmp/cache PASSFS_LOCK_DIR=$tmp PASSFS_CUPTI=0
ev() { # prints the result's backend, or exits non-zero
	timeout 300 "$PASSFS" eval --tasks "$T" --task tiny_bias_gelu --backend auto --json \
		--pass tests/passes/ok_fused.c 2>"$tmp/err" |
		/usr/bin/python3 -c 'import json,sys; print(json.load(sys.stdin)["backend"])' 2>/dev/null
}
refused() { # name, PASSFS_CUDA_DEVICE, text the error must hold
	local out rc
	out=$(PASSFS_CUDA_DEVICE=$2 ev)
	rc=$?
	if [ $rc -ne 0 ] && [ -z "$out" ] && grep -qF -- "PASSFS_CUDA_DEVICE=$2" "$tmp/err" &&
		grep -qF -- "$3" "$tmp/err"; then
		ok "$1: $(tail -1 "$tmp/err")"
	else
		bad "$1: exit $rc, backend '$out': $(tail -2 "$tmp/err")"
	fi
}

# no driver at all
export PASSFS_LIBCUDA=$tmp/no-such-libcuda.so
refused "no driver, PASSFS_CUDA_DEVICE=0" 0 "--backend cpu"
refused "no driver, PASSFS_CUDA_DEVICE=gpu1" gpu1 "--backend auto"
b=$(ev)
if [ "$b" = cpu ]; then ok "no driver, no PASSFS_CUDA_DEVICE: the cpu backend"; else bad "no driver: backend '$b': $(tail -2 "$tmp/err")"; fi

# the mock driver (one GPU)
if (. tests/gpu/mock/build.sh) >"$tmp/mock.log" 2>&1 && [ -f "$tmp/libcuda_mock.so" ]; then
	export PASSFS_LIBCUDA=$tmp/libcuda_mock.so
	refused "one GPU, PASSFS_CUDA_DEVICE=3" 3 "this machine has 1 GPU"
	b=$(PASSFS_CUDA_DEVICE=0 ev)
	if [ "$b" = cuda ]; then ok "one GPU, PASSFS_CUDA_DEVICE=0: the cuda backend"; else bad "mock, device 0: backend '$b': $(tail -2 "$tmp/err")"; fi
else
	echo "note: $(tail -1 "$tmp/mock.log"); the mock-driver checks not run"
fi
finish
