#!/usr/bin/env bash
# The launch forms of docs/pass-api.md beyond `pf_launch(call, kernel<...>,
# ...)` in the replacement: a templated host function launching kern<T>
# (tests/passes/launch_template.c), the kernel through a macro that is
# #undef'd (launch_macro.c), tables of kernel pointers (launch_table.c).
# None of them is a name the pass compiler can look up at the end of the
# file, so the kernels are found by their addresses.  On the cpu backend
# each must be correct at a tight tolerance; on the cuda backend (the mock
# driver: tests/gpu/mock/, skipped without NVRTC or cc) each must launch
# the kernels it reaches by their lowered names.  A static kernel reached
# through a template parameter works on both; one in an unnamed namespace
# works on the cpu backend and fails on the cuda backend with the message
# saying what to change.
. tests/lib/cli.sh
T=tests/passes/tasks

# eval NAME BACKEND PYTHON-CONDITION ARGS...: one passfs eval, the condition on r
eval_check() {
	local name=$1 backend=$2 cond=$3
	shift 3
	local out rc
	out=$(timeout 300 "$PASSFS" eval --tasks "$T" --task tiny_bias_gelu --backend "$backend" --json \
		--warmup 0 --trials 2 "$@" 2>"$tmp/err")
	rc=$?
	if [ $rc -ne 0 ]; then
		bad "$name: exit $rc: $(tail -3 "$tmp/err")"
		return
	fi
	if printf '%s' "$out" | /usr/bin/python3 -c "
import json, sys
r = json.load(sys.stdin)
ok = $cond
if not ok:
    print('verdict', r['verdict'], 'message', r['message'])
sys.exit(0 if ok else 1)"; then
		ok "$name"
	else
		bad "$name"
	fi
}

correct="r['verdict'] == 'ok' and len(r['variants']) == 6 and all(v['verdict'] == 'ok' and v['min_t'] is not None and v['min_t'] <= -3 for v in r['variants'])"
for form in template macro table; do
	eval_check "cpu: launch_$form is correct" cpu "$correct" --pass tests/passes/launch_$form.c
done
for form in static anon; do
	eval_check "cpu: launch_$form is correct" cpu \
		"r['verdict'] == 'unsupported' and sum(v['verdict'] == 'ok' and v['min_t'] <= -3 for v in r['variants']) == 2" \
		--pass tests/passes/launch_$form.c
done

. tests/gpu/mock/build.sh
export PASSFS_LIBCUDA=$tmp/libcuda_mock.so PASSFS_CUPTI=0 PASSFS_CACHE_DIR=$tmp/cache PASSFS_LOCK_DIR=$tmp
# the mock runs no kernel: a pass that got through to the comparison leaves
# its outputs holding the poison
reached="r['backend'] == 'cuda' and all(v['verdict'] == 'rejected' and 'poison' in v['message'] for v in r['variants'])"
# launched FORM LOWERED...: every lowered name is in the mock's launch log
launched() {
	local form=$1 missing=""
	shift
	for k in "$@"; do
		grep -q "^launch $k " "$tmp/launches.$form" || missing="$missing $k"
	done
	if [ -z "$missing" ]; then
		ok "cuda: launch_$form launched its kernels by their lowered names"
	else
		bad "cuda: launch_$form did not launch$missing: $(grep '^launch' "$tmp/launches.$form" | sort -u | head -5)"
	fi
}
for form in template macro table; do
	MOCK_CUDA_LOG=$tmp/launches.$form eval_check "cuda: launch_$form reaches the comparison" cuda "$reached" \
		--pass tests/passes/launch_$form.c
done
launched template _Z9bias_geluIfEvPKT_S2_PS0_xx _Z9bias_geluI6__halfEvPKT_S3_PS1_xx \
	_Z9bias_geluI13__nv_bfloat16EvPKT_S3_PS1_xx
launched macro _Z9bias_geluIfEvPKT_S2_PS0_xx _Z9bias_geluI6__halfEvPKT_S3_PS1_xx \
	_Z9bias_geluI13__nv_bfloat16EvPKT_S3_PS1_xx
launched table _Z9bias_geluIfLi0EEvPKT_S2_PS0_xx _Z9bias_geluIfLi1EEvPKT_S2_PS0_xx
MOCK_CUDA_LOG=$tmp/launches.static eval_check "cuda: launch_static reaches the comparison" cuda \
	"r['backend'] == 'cuda' and sum(v['verdict'] == 'rejected' and 'poison' in v['message'] for v in r['variants']) == 2" \
	--pass tests/passes/launch_static.c
launched static _Z9bias_geluIfEvPKT_S2_PS0_xx
eval_check "cuda: a kernel in an unnamed namespace through a template parameter is named as the problem" cuda \
	"r['verdict'] == 'runtime_error' and 'unnamed namespace' in r['message']" \
	--pass tests/passes/launch_anon.c
finish
