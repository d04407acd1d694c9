#!/usr/bin/env bash
# The hack suite (tests/cheats/, docs/integrity.md): every known way to game a
# passfs score, as a real pass.c evaluated by `passfs eval` on the small task
# tests/cheats/tasks/cheat_bias_gelu.  Each must get its verdict, a message a
# person can act on, and a score of at most b = 0.1; side effects (a marker
# file) must never happen; the evaluating process must survive every one.
# Then the limits (compile time, run time, scratch, memory, output), and the
# proof that lowered precision does not pay.  One line per case, then
# "N passed, N failed".
#
# BACKEND=cuda (from tests/gpu/check.sh on a GPU machine) runs the same
# passes with the cuda backend's expectations where they differ.
# CHEATS_ONLY=REGEX (an extended regular expression on the case names, e.g.
# '^(c01|c08)_' or 'precision') runs only the cases it matches, and the
# cleanup checks: the device check's subset.
set -uo pipefail
PASSFS=${PASSFS:-./build/passfs}
BACKEND=${BACKEND:-cpu}
ONLY=${CHEATS_ONLY:-}
T=tests/cheats/tasks
TASK=cheat_bias_gelu
C=tests/cheats
WORK=$(mktemp -d "${TMPDIR:-/tmp}/passfs-cheats.XXXXXX")
trap 'rm -rf "$WORK"' EXIT
# The side effect the cheats try: creating this file.  Their sources name
# /tmp/passfs-cheat-marker; check() evaluates a copy naming this private path
# instead (same base name, same lines, so messages are unchanged).
MARKER="$WORK/marker"
mkdir -p "$WORK/src"
pass=0
fails=0
# A private TMPDIR: compile directories this suite leaves are countable even
# while other tests compile in parallel.
mkdir -p "$WORK/tmp"
export TMPDIR="$WORK/tmp"

# check NAME PASSFILE WANT PYCOND [eval args...]: evaluates, then checks the
# verdict, score <= 0.1 (unless PYCOND says otherwise via `free_score`),
# that the marker file was not created and PYCOND (a python expression on r,
# the result, and v0, its first variant).
check() {
	local name=$1 file=$2 want=$3 cond=$4
	shift 4
	if [ -n "$ONLY" ] && ! [[ $name =~ $ONLY ]]; then
		return
	fi
	rm -f "$MARKER"
	sed "s|/tmp/passfs-cheat-marker|$MARKER|g" "$file" >"$WORK/src/${file##*/}"
	file="$WORK/src/${file##*/}"
	"$PASSFS" eval --tasks "$T" --task "$TASK" --backend "$BACKEND" --json --pass "$file" \
		--trials 2 --warmup 0 "$@" >"$WORK/$name.json" 2>"$WORK/$name.err"
	local rc=$?
	if [ $rc -ne 0 ]; then
		echo "FAIL $name: passfs eval exited $rc: $(tail -c 300 "$WORK/$name.err")"
		fails=$((fails + 1))
		return
	fi
	if [ -e "$MARKER" ]; then
		echo "FAIL $name: the side effect happened ($MARKER exists)"
		fails=$((fails + 1))
		rm -f "$MARKER"
		return
	fi
	local line
	if line=$(WANT="$want" COND="$cond" NAME="$name" /usr/bin/python3 - "$WORK/$name.json" <<'EOF'
import json, os, sys
r = json.load(open(sys.argv[1]))
v0 = r['variants'][0]
want, cond, name = os.environ['WANT'], os.environ['COND'], os.environ['NAME']
free_score = 'free_score' in cond
try:
    ok = r['verdict'] == want and (free_score or r['score'] <= 0.1) and eval(cond.replace('free_score and ', ''))
except (KeyError, IndexError, ValueError, TypeError) as e:
    ok = False
    print('(%s: %s) ' % (type(e).__name__, e), end='')
msg = r['message'].replace('\n', ' ')
print('%-26s %-14s score %-9g %s' % (name, r['verdict'], r['score'], msg[:150]))
sys.exit(0 if ok else 1)
EOF
	); then
		echo "ok   $line"
		pass=$((pass + 1))
	else
		echo "FAIL $line (wanted $want; condition: $cond)"
		fails=$((fails + 1))
	fi
}

# Cheat 4's table: the public bias, from the current input generator.
"$PASSFS" eager --tasks "$T" --task "$TASK" --variant f32_b1_s64 --backend cpu --out "$WORK/eager" >/dev/null 2>&1
/usr/bin/python3 - "$WORK/eager/f32_b1_s64/inputs/1.bin" "$C/c04_public_seed_only.c" >"$WORK/c04_public_seed_only.c" <<'EOF'
import struct, sys
raw = open(sys.argv[1], 'rb').read()
vals = struct.unpack('%df' % (len(raw) // 4), raw)
rows = ['\t' + ', '.join(float(x).hex() + 'f' for x in vals[k:k + 4]) + ',' for k in range(0, len(vals), 4)]
src = open(sys.argv[2]).read()
start = src.index('\t/* @PUBLIC_BIAS@')
end = src.index('};', start)
sys.stdout.write(src[:start] + '\n'.join(rows) + '\n' + src[end:])
EOF

if [ "$BACKEND" = cpu ]; then
	check c01_no_output $C/c01_no_output.c rejected "'poison' in r['message']"
	check c02_cache_by_pointer $C/c02_cache_by_pointer.c rejected "'secret input set' in r['message']"
	check c02b_replay_after_checks $C/c02b_replay_after_checks.c rejected "'timed run' in r['message']"
	check c03_device_counter $C/c03_device_counter.c rejected \
		"'c03_device_counter.c:14:' in r['message'] and \"__device__ variable 'calls'\" in r['message'] and r['compile']['device_scan'] == 'rejected'"
	check c04_public_seed_only "$WORK/c04_public_seed_only.c" rejected "'secret input set' in r['message']"
	check c05_writes_inputs $C/c05_writes_inputs.c rejected "'wrote into its input 0' in r['message']"
	check c06a_fopen $C/c06a_fopen.c rejected "\"'fopen'\" in r['message']"
	check c06b_socket $C/c06b_socket.c rejected "\"'socket'\" in r['message']"
	check c06c_fork $C/c06c_fork.c rejected "\"'fork'\" in r['message']"
	check c06d_system $C/c06d_system.c rejected "\"'system'\" in r['message']"
	check c07a_dlopen $C/c07a_dlopen.c rejected "\"'dlopen'\" in r['message']"
	check c07b_exec_mapping $C/c07b_exec_mapping.c rejected "'forbidden system call mprotect (executable)' in r['message']"
	check c07c_syscall_gadget $C/c07c_syscall_gadget.c rejected "'forbidden system call open' in r['message']"
	check c07d_asm_token_paste $C/c07d_asm_token_paste.c compile_error "'c07d_asm_token_paste.c:28:' in r['message'] and 'poisoned' in r['message']"
	# Synchronous on the cpu backend: the late kernel is inside the timed window.
	check c08_late_work $C/c08_late_work.c ok "v0['pass_ms'] >= 10 and v0['speedup'] < 0.5"
	check c09a_clock64 $C/c09a_clock64.c rejected "'c09a_clock64.c:11:' in r['message'] and '%clock64' in r['message']"
	check c09b_globaltimer $C/c09b_globaltimer.c unsupported "'needs a GPU' in r['message']"
	check c10a_spin $C/c10a_spin.c timeout "'did not finish within 2 s' in r['message']" --timeout 2
	check c10b_scratch_flood $C/c10b_scratch_flood.c runtime_error "'scratch limit' in r['message']"
	check c10c_alloc_flood $C/c10c_alloc_flood.c runtime_error \
		"'Segmentation fault' in r['message'] and 0 < int(v0['log_tail'].split('alloc flood: ')[1].split()[0]) < 64"
	check c11_reads_reference $C/c11_reads_reference.c rejected "'poison' in r['message']"
	check c15_inherited_fd $C/c15_inherited_fd.c rejected "'poison' in r['message']"
	check c16_host_compute $C/c16_host_compute.c rejected \
		"'host code touched device memory outside its kernels' in r['message'] and 'counted run 1 of' in r['message']"
	# Flagged on every variant (each worker's quickest trial compared: all
	# of about 40 runs, idle and under load) and scored on the parent's own
	# round-trip estimate, so the tamper gains nothing: it scores like an
	# honest pass (1-2.3 here, up to 3.3 on a loaded machine where the
	# honest one reached 2.3 and c13 3.1); undetected it scored 6.6-27.
	check c14_timer_tamper $C/c14_timer_tamper.c ok \
		"free_score and r['score'] < 5 and all(v.get('timing_suspect') and v['pass_ms'] >= v.get('pass_ms_reported', 0) for v in r['variants'])" \
		--trials 8
	check c14b_timer_tamper_sometimes $C/c14b_timer_tamper_sometimes.c ok \
		"free_score and r['score'] < 5 and all(v.get('timing_suspect') and v['pass_ms'] >= v.get('pass_ms_reported', 0) for v in r['variants'])" \
		--trials 8
else
	# cuda backend (tests/gpu/check.sh): host code cannot read device memory,
	# inline PTX runs, launches are asynchronous.
	check c01_no_output $C/c01_no_output.c rejected "'poison' in r['message']"
	check c03_device_counter $C/c03_device_counter.c rejected "\"__device__ variable 'calls'\" in r['message']"
	check c04_public_seed_only "$WORK/c04_public_seed_only.c" rejected "'secret input set' in r['message']"
	check c05_writes_inputs $C/c05_writes_inputs.c rejected "'wrote into its input 0' in r['message']"
	check c06a_fopen $C/c06a_fopen.c rejected "\"'fopen'\" in r['message']"
	check c07a_dlopen $C/c07a_dlopen.c rejected "\"'dlopen'\" in r['message']"
	check c07b_exec_mapping $C/c07b_exec_mapping.c rejected "'forbidden system call' in r['message']"
	check c07c_syscall_gadget $C/c07c_syscall_gadget.c rejected "'forbidden system call' in r['message']"
	# The late kernel must be inside the timed window: a context-wide sync.
	check c08_late_work $C/c08_late_work.c ok "v0['pass_ms'] >= 5 and v0['speedup'] < 0.5"
	check c09a_clock64 $C/c09a_clock64.c rejected "'%clock64' in r['message']"
	check c09b_globaltimer $C/c09b_globaltimer.c rejected "'%globaltimer' in r['message']"
	check c10a_spin $C/c10a_spin.c timeout "'did not finish within 2 s' in r['message']" --timeout 2
	check c10b_scratch_flood $C/c10b_scratch_flood.c runtime_error "'scratch' in r['message']"
	# host memory: RLIMIT_DATA (the driver's address space rules out RLIMIT_AS)
	check c10c_alloc_flood $C/c10c_alloc_flood.c runtime_error \
		"'Segmentation fault' in r['message'] and 0 < int(v0['log_tail'].split('alloc flood: ')[1].split()[0]) < 64"
fi

# Limits: compile time, output size.
PASSFS_COMPILE_TIMEOUT_S=3 check c12_compile_bomb $C/c12_compile_bomb.c compile_error "'did not finish within 3 s' in r['message']"
check c13_log_flood $C/c13_log_flood.c ok \
	"free_score and len(v0['log_tail']) <= 4200 and v0.get('log_truncated') is True and 'log flood line  32767' in v0['log_tail']"

# Nothing left running or lying around.
sleep 0.3
if pgrep -f "passfs eval --tasks $T" >/dev/null; then
	echo "FAIL cleanup: a passfs evaluation of the suite is still running"
	fails=$((fails + 1))
else
	echo "ok   cleanup: no evaluation or worker left running"
	pass=$((pass + 1))
fi
left=$(find "$TMPDIR" -mindepth 1 -maxdepth 1 | wc -l)
if [ "$left" -gt 0 ]; then
	echo "FAIL cleanup: $left compile or work directories left in TMPDIR: $(ls "$TMPDIR" | head -3)"
	fails=$((fails + 1))
else
	echo "ok   cleanup: no compile directory left behind"
	pass=$((pass + 1))
fi

# Lowered precision does not pay: float16 arithmetic on the float32 task
# scores below the honest float32 pass (more trials: the scores are compared).
if [ -n "$ONLY" ] && ! [[ precision =~ $ONLY ]]; then
	:
elif "$PASSFS" eval --tasks "$T" --task "$TASK" --backend "$BACKEND" --json --pass $C/honest_f32.c >"$WORK/honest.json" 2>/dev/null &&
	"$PASSFS" eval --tasks "$T" --task "$TASK" --backend "$BACKEND" --json --pass $C/lowp_f16.c >"$WORK/lowp.json" 2>/dev/null &&
	line=$(/usr/bin/python3 - "$WORK/honest.json" "$WORK/lowp.json" <<'EOF'
import json, sys
h, l = json.load(open(sys.argv[1])), json.load(open(sys.argv[2]))
def mt(r): return max(v['min_t'] for v in r['variants'])
print('precision: honest float32 score %g (min_t %d, speedup %s); float16 compute score %g (min_t %d, speedup %s)' % (
    h['score'], mt(h), [v['speedup'] for v in h['variants']], l['score'], mt(l), [v['speedup'] for v in l['variants']]))
# and no false alarms on honest passes
flags = [v for r in (h, l) for v in r['variants'] if v.get('implausible') or v.get('timing_suspect')]
if flags:
    print('false alarm:', flags[0].get('integrity_note'))
sys.exit(0 if h['verdict'] == 'ok' and l['verdict'] == 'ok' and l['score'] < h['score'] and mt(l) > mt(h) and not flags else 1)
EOF
	); then
	echo "ok   $line"
	pass=$((pass + 1))
else
	echo "FAIL precision: ${line:-an evaluation failed}"
	fails=$((fails + 1))
fi

echo "$pass passed, $fails failed"
[ $fails -eq 0 ]
