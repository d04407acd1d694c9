#!/usr/bin/env bash
# CUDA_MODULE_LOADING per worker, against the mock driver (tests/gpu/mock/
# libcuda_mock.c logs, at cuInit, the process and the setting it sees, and
# the process of each kernel lookup and launch).  The pass worker enters its
# sandbox after loading the pass, so it must load every kernel with its
# module (EAGER); eager's worker is not sandboxed and keeps the driver's
# default (lazy), under which cuBLAS loads only the kernels it runs instead
# of all of them at its first call.  A setting in the environment is left as
# it is, in both.  Skipped without cc or NVRTC.
. tests/lib/cli.sh
T=tests/passes/tasks

. tests/gpu/mock/build.sh
export PASSFS_LIBCUDA=$tmp/libcuda_mock.so PASSFS_CUPTI=0 PASSFS_CACHE_DIR=$tmp/cache PASSFS_LOCK_DIR=$tmp

# eval LOG: ok_fused on the mock, logging to LOG; the verdict must show the
# comparison was reached (the mock runs no kernel: the outputs keep the
# poison)
eval_logged() {
	local log=$1 out
	rm -f "$log"
	out=$(MOCK_CUDA_LOG=$log timeout 300 "$PASSFS" eval --tasks "$T" --task tiny_bias_gelu --backend cuda --json \
		--pass tests/passes/ok_fused.c 2>"$tmp/err") || { echo "exit $?: $(tail -3 "$tmp/err")"; return 1; }
	printf '%s' "$out" | /usr/bin/python3 -c "
import json, sys
r = json.load(sys.stdin)
ok = r['device'].startswith('Mock GPU') and all(v['verdict'] == 'rejected' and 'poison' in v['message'] for v in r['variants'])
print('' if ok else 'verdict %s: %s' % (r['verdict'], r['message']))
sys.exit(0 if ok else 1)"
}

# settings LOG: "PASS EAGER", the module loading seen at cuInit by the
# process that looked up the pass's kernel and by the one that launched the
# op library's (eager's); "?" where no such process logged
settings() {
	/usr/bin/python3 - "$1" <<'EOF'
import sys
setting, pas, eag = {}, set(), set()
for line in open(sys.argv[1]):
    f = line.split()
    if f[0] == 'init':
        setting[f[1]] = f[2].split('=', 1)[1]
    elif f[0] == 'function' and f[1].startswith('_Z9bias_gelu'):
        pas.add(f[-1])
    elif f[0] == 'launch' and f[1].startswith('_Z9ew_binary'):
        eag.add(f[-1])
def one(pids):
    vals = sorted({setting.get(p, '?') for p in pids})
    return ','.join(vals) if vals else '?'
print(one(pas), one(eag))
EOF
}

unset CUDA_MODULE_LOADING
if msg=$(eval_logged "$tmp/default.log"); then
	ok "ok_fused reaches the comparison"
	got=$(settings "$tmp/default.log")
	[ "$got" = "EAGER (unset)" ] &&
		ok "the pass worker loads kernels eagerly, eager's worker keeps the driver's default" ||
		bad "module loading (pass worker, eager's worker): $got; $(grep '^init' "$tmp/default.log" | tr '\n' ' ')"
else
	bad "ok_fused: $msg"
fi

for v in LAZY EAGER; do
	if msg=$(CUDA_MODULE_LOADING=$v eval_logged "$tmp/$v.log"); then
		got=$(settings "$tmp/$v.log")
		[ "$got" = "$v $v" ] && ok "CUDA_MODULE_LOADING=$v in the environment is left alone" ||
			bad "CUDA_MODULE_LOADING=$v: (pass worker, eager's worker) saw $got"
	else
		bad "CUDA_MODULE_LOADING=$v: $msg"
	fi
done
finish
