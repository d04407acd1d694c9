#!/usr/bin/env bash
# Every verdict of `passfs eval`, reached by a real pass in tests/passes/ on the
# cpu backend (BACKEND=cuda: on the GPU, from tests/gpu/check.sh), with the
# message a person needs.
set -uo pipefail
PASSFS=${PASSFS:-./build/passfs}
BACKEND=${BACKEND:-cpu}
T=tests/passes/tasks
WORK=$(mktemp -d "${TMPDIR:-/tmp}/passfs-eval.XXXXXX")
trap 'rm -rf "$WORK"' EXIT
ERR=$WORK/err
fails=0
pass=0

check() { # name, expected verdict, python condition on r (the result), eval args...
	local name=$1 want=$2 cond=$3
	shift 3
	local out
	out=$("$PASSFS" eval --tasks "$T" --task tiny_bias_gelu --backend "$BACKEND" --json "$@" 2>"$ERR")
	local rc=$?
	if [ $rc -ne 0 ]; then
		echo "FAIL $name: exit $rc: $(cat "$ERR")"
		fails=$((fails + 1))
		return
	fi
	if printf '%s' "$out" | /usr/bin/python3 -c "
import json, sys
r = json.load(sys.stdin)
ok = r['verdict'] == '$want' and ($cond)
if not ok:
    print('verdict', r['verdict'], 'score', r['score'], 'message', r['message'])
sys.exit(0 if ok else 1)"; then
		echo "ok   $name: $want"
		pass=$((pass + 1))
	else
		echo "FAIL $name: wanted $want"
		fails=$((fails + 1))
	fi
}

check ok ok "r['score'] > 1 and all(v['verdict'] == 'ok' and v['speedup'] > 0 for v in r['variants']) and len(r['pass_sha256']) == 64" \
	--pass tests/passes/ok_fused.c
check mismatch mismatch "abs(r['score'] - 0.147207) < 1e-6 and r['es_t']['0'] == 0.1 and r['es_t']['1'] == 1 and 'not close at any t' in r['message'] and r['variants'][0]['worst']['output'] == 't1'" \
	--pass tests/passes/mismatch_scaled.c
check compile_error compile_error "r['score'] == 0.1 and 'compile_error.c:' in r['message'] and r['compile']['log_tail'] != ''" \
	--pass tests/passes/compile_error.c
if [ "$BACKEND" = cuda ]; then
	# A GPU runs inline PTX: the pass writes lane ids, far from eager.
	check unsupported_ptx mismatch "all(v['verdict'] == 'mismatch' for v in r['variants'])" \
		--pass tests/passes/unsupported_ptx.c
else
	check unsupported_ptx unsupported "r['score'] == 0.1 and 'unsupported_ptx.c:9:' in r['message'] and 'needs a GPU' in r['message']" \
		--pass tests/passes/unsupported_ptx.c
fi
check declines_f16 unsupported "sum(v['verdict'] == 'ok' for v in r['variants']) == 2 and 'only float32' in r['message'] and 0.1 < r['score'] < 1" \
	--pass tests/passes/declines_f16.c
if [ "$BACKEND" = cuda ]; then
	# The null store faults on the GPU: the message names the kernel.
	check crash runtime_error "r['score'] == 0.1 and 'bias_gelu' in r['message'] and 'CUDA_ERROR_ILLEGAL_ADDRESS' in r['message']" \
		--pass tests/passes/crash_null.c
else
	check crash runtime_error "r['score'] == 0.1 and 'Segmentation fault' in r['message']" \
		--pass tests/passes/crash_null.c
fi
check no_launch rejected "r['score'] == 0.1 and 'poison' in r['message']" \
	--pass tests/passes/no_launch.c
check template not_implemented "r['score'] == 0.1 and all(v['verdict'] == 'not_implemented' for v in r['variants'])"
# --cold: a cache flush before every timed call on both sides (inside the
# pass worker's sandbox too); the verdict is unchanged.
check cold ok "r['timing']['cold'] is True and all(v['verdict'] == 'ok' for v in r['variants'])" \
	--pass tests/passes/ok_fused.c --cold --warmup 1 --trials 3
# A batch per variant: the same verdict and checks as one batch.
PASSFS_BATCH_BYTES=1 check batches ok "all(v['verdict'] == 'ok' and v['min_t'] is not None for v in r['variants'])" \
	--pass tests/passes/ok_fused.c --warmup 1 --trials 3
start=$(date +%s)
cp tests/passes/timeout_spin.c "$WORK/spin_$$.c"
# A pass that hangs: the first variant gets the whole limit, the rest 1 s
# each (a tenth of it, at least 1 s), so the hang costs about one limit, not
# one per variant.
check timeout timeout "r['score'] == 0.1 and 'did not finish within 2.5 s' in r['message'] and
    all('within 1 s (the limit once variant ' + repr(r['variants'][0]['name']) + ' timed out)' in v['message']
        for v in r['variants'][1:])" \
	--pass "$WORK/spin_$$.c" --timeout 2.5
# The machine stays usable: no worker is left spinning.
sleep 0.5
# (Only this evaluation's processes, by the pass's private name: other tests
# may evaluate timeout_spin.c in parallel.)
if pgrep -f "spin_$$.c" >/dev/null; then
	echo "FAIL timeout: a passfs worker is still running"
	fails=$((fails + 1))
fi
# SIGTERM (or Ctrl-C) mid-evaluation: the hanging pass's worker is killed,
# the compile directory removed, exit 143 at once with one line.
# The pass is a copy under this test's own name: other tests running at the
# same time evaluate tests/passes/timeout_spin.c too, and the check below
# looks for this evaluation's processes alone.
mkdir -p "$WORK/tmp"
SPIN="$WORK/sigterm_spin_$$.c"
cp tests/passes/timeout_spin.c "$SPIN"
TMPDIR="$WORK/tmp" "$PASSFS" eval --tasks "$T" --task tiny_bias_gelu --backend "$BACKEND" --timeout 20 \
	--pass "$SPIN" >/dev/null 2>"$ERR" &
evpid=$!
for _ in $(seq 200); do
	grep -q 'passfs eval: variant' "$ERR" && break
	sleep 0.05
done
sleep 0.5
t0=$(date +%s%N)
kill -TERM $evpid
wait $evpid
rc=$?
ms=$((($(date +%s%N) - t0) / 1000000))
left=$(find "$WORK/tmp" -mindepth 1 -maxdepth 1 | wc -l)
if [ $rc -eq 143 ] && [ $ms -lt 3000 ] && [ "$left" -eq 0 ] &&
	grep -q '^passfs eval: stopped by Terminated; nothing was scored$' "$ERR" &&
	! pgrep -f "$SPIN" >/dev/null; then
	echo "ok   SIGTERM mid-evaluation: exit 143 in $ms ms, workers and compile directory gone"
	pass=$((pass + 1))
else
	echo "FAIL SIGTERM mid-evaluation: exit $rc in $ms ms, $left left in TMPDIR: $(tail -2 "$ERR")"
	fails=$((fails + 1))
fi
echo "$pass passed, $fails failed"
[ $fails -eq 0 ]
