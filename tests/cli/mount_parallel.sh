#!/usr/bin/env bash
# Two evaluations at once in one daemon (passfs mount --parallel 2): each pass
# worker maps its own evaluation's inputs and pass results, and nothing of the
# other evaluation's (the shared memory is never inherited by a fork,
# MADV_DONTFORK) and no eager results at all.  Two copies of the test task get
# a pass that spins in its kernel, so both pass workers are alive at once;
# their /proc/PID/maps are read while they spin.  Each worker, eager's too,
# holds only its own descriptors (a fork from the daemon closes the rest), and
# a pass worker's oom_score_adj is 1000, and each pass worker's memory holds
# its own task's pass.c and not the other's (each evaluation runs in a fresh
# process, not in the daemon that holds every task's pass).  Then SIGTERM: the hanging
# evaluations are stopped after the 5 s grace, leave no result, and the next
# mount evaluates them again.  Skips without /dev/fuse.
NAME=mount_parallel
. tests/lib/cli.sh
. tests/lib/mount.sh

mkdir -p "$tmp/tasks"
for t in spin_a spin_b; do
	mkdir -p "$tmp/tasks/$t"
	sed "s/\"id\": \"tiny_bias_gelu\"/\"id\": \"$t\"/" tests/passes/tasks/tiny_bias_gelu/graph.json \
		>"$tmp/tasks/$t/graph.json"
done
start_daemon() {
	local out
	out=$("$PASSFS" mount --tasks "$tmp/tasks" --state "$STATE" --backend cpu --trials 1 --warmup 0 --timeout 60 \
		--parallel 2 "$MNT" 2>"$tmp/mount.err")
	daemon=$(printf '%s\n' "$out" | sed -n 's/.*daemon pid \([0-9]*\).*/\1/p' | head -1)
}
start_daemon
if [ -z "$daemon" ]; then
	echo "FAIL mount: $(cat "$tmp/mount.err")"
	exit 1
fi
# each copy marked, so a worker's memory shows whose pass.c it holds
{ cat tests/passes/timeout_spin.c; echo "/* isolation mark: task-A-7d1e5c0a */"; } >"$MNT/spin_a/pass.c"
{ cat tests/passes/timeout_spin.c; echo "/* isolation mark: task-B-7d1e5c0a */"; } >"$MNT/spin_b/pass.c"

# the daemon's descendants: its evaluation processes (children) and their
# workers (grandchildren)
descendants() {
	local p
	for p in $(pgrep -P "$1"); do
		echo "$p"
		descendants "$p"
	done
}
# the workers (and compile children): the children of the daemon's
# evaluation processes (passfs --passfs-evaluator), and any other child of
# the daemon (an evaluation run inside the daemon would fork them there)
workers() {
	local c
	for c in $(pgrep -P "$daemon"); do
		if tr '\0' ' ' <"/proc/$c/cmdline" 2>/dev/null | grep -q -- '--passfs-evaluator'; then
			pgrep -P "$c"
		else
			echo "$c"
		fi
	done
}
# those that map a pass result area: the pass workers
pass_workers() {
	for p in $(workers); do
		grep -q 'memfd:passfs-pass' "/proc/$p/maps" 2>/dev/null && echo "$p"
	done
}
found=""
for _ in $(seq 1 300); do
	found=$(pass_workers | tr '\n' ' ')
	[ "$(echo $found | wc -w)" -ge 2 ] && break
	sleep 0.05
done
if [ "$(echo $found | wc -w)" -lt 2 ]; then
	bad "two pass workers at once (found: '$found')"
	# what each evaluation was doing: the daemon's descendants, each task's
	# state and the daemon's errors
	for p in $(descendants "$daemon"); do
		echo "  child $p: $(tr '\0' ' ' <"/proc/$p/cmdline" 2>/dev/null | cut -c1-80)" \
			"state $(awk '{print $3}' "/proc/$p/stat" 2>/dev/null)" \
			"wchan $(cat "/proc/$p/wchan" 2>/dev/null)" \
			"maps $(grep -o 'memfd:passfs-[a-z]*' "/proc/$p/maps" 2>/dev/null | tr '\n' ' ')"
	done
	for t in spin_a spin_b; do
		echo "  $t/status: $(head -c 300 "$MNT/$t/status" 2>/dev/null)"
	done
	echo "  daemon stderr: $(tail -c 600 "$tmp/mount.err")"
else
	ok "two evaluations at once: pass workers $found"
	for p in $found; do
		maps=$(grep -o 'memfd:passfs-[a-z]*' "/proc/$p/maps" | sort | uniq -c | tr -s ' ' | tr '\n' ';')
		n_in=$(grep -c 'memfd:passfs-in' "/proc/$p/maps")
		n_pass=$(grep -c 'memfd:passfs-pass' "/proc/$p/maps")
		n_eager=$(grep -c 'memfd:passfs-eager' "/proc/$p/maps")
		if [ "$n_in" -eq 1 ] && [ "$n_pass" -eq 1 ] && [ "$n_eager" -eq 0 ]; then
			ok "pass worker $p maps its own inputs and results only ($maps)"
		else
			bad "pass worker $p maps $maps"
		fi
		# Each evaluation runs in a fresh process (exec'd), so a pass worker
		# - a fork of it - holds its own pass.c and nothing of the daemon's:
		# not the other task's pass.c.  (Read from /proc/PID/mem: root.)
		if [ "$(id -u)" = 0 ]; then
			marks=$(/usr/bin/python3 - "$p" <<'PY'
import re, sys
pid = sys.argv[1]
found = set()
with open("/proc/%s/maps" % pid) as maps, open("/proc/%s/mem" % pid, "rb", 0) as mem:
    for line in maps:
        f = line.split()
        lo, hi = (int(x, 16) for x in f[0].split("-"))
        if f[1][0] != "r" or hi - lo > (512 << 20) or line.rstrip().endswith(("[vvar]", "[vsyscall]")):
            continue
        try:
            mem.seek(lo)
            data = mem.read(hi - lo)
        except OSError:
            continue
        found.update(m.decode() for m in re.findall(rb"task-[AB]-7d1e5c0a", data))
print(" ".join(sorted(found)))
PY
)
			case "$marks" in
			task-A-7d1e5c0a | task-B-7d1e5c0a) ok "pass worker $p holds its own pass.c only ($marks)" ;;
			*) bad "pass worker $p holds the pass.c of: '$marks' (expected its own task's alone)" ;;
			esac
		fi
		# out of memory, the kernel ends the pass worker first
		adj=$(cat "/proc/$p/oom_score_adj" 2>/dev/null)
		if [ "$adj" = 1000 ]; then
			ok "pass worker $p is the first the OOM killer takes"
		else
			bad "pass worker $p oom_score_adj '$adj', not 1000"
		fi
	done
fi
# Each worker holds its own descriptors only: its socket, report pipe and
# memfds (at most 4 above stderr).  One forked while the other evaluation
# had its compile pipe or worker sockets open must not keep them: that
# evaluation's reads wait for end of file as long as this worker lives.
for p in $(workers); do
	grep -q 'memfd:passfs-' "/proc/$p/maps" 2>/dev/null || continue
	fds=$(ls /proc/$p/fd 2>/dev/null | awk '$1 > 2' | wc -l)
	if [ "$fds" -le 4 ]; then
		ok "worker $p holds $fds descriptors of its own"
	else
		bad "worker $p holds $fds descriptors: $(ls -l /proc/$p/fd | awk 'NR>1 && $9 > 2 {print $9"->"$11}' | tr '\n' ' ')"
	fi
done
# Shutdown with both evaluations spinning (a 60 s step limit, then 6 s for
# each later variant: 90 s, well past the checks above even on a loaded
# machine): the daemon gives them 5 s, then stops them and exits - it does
# not sit them out - and records no result for them, so the next mount
# evaluates both pass.c files again.  The next mount comes up at once: the
# evaluation it fires at start does not hold the mount command's output open.
t0=$(date +%s.%N)
kill -TERM "$daemon"
for _ in $(seq 300); do
	kill -0 "$daemon" 2>/dev/null || break
	sleep 0.1
done
secs=$(python3 -c "import sys; print(f'{float(sys.argv[2]) - float(sys.argv[1]):.1f}')" "$t0" "$(date +%s.%N)")
if ! kill -0 "$daemon" 2>/dev/null && python3 -c "import sys; sys.exit(0 if float('$secs') < 20 else 1)"; then
	ok "SIGTERM with two hanging evaluations: the daemon exits in $secs s"
else
	bad "SIGTERM with two hanging evaluations: the daemon took $secs s"
fi
if grep -q 'spin_a: seq 1: stopped at shutdown' "$STATE/mount.log" && ! ls "$STATE/spin_a/history/"*.json >/dev/null 2>&1; then
	ok "the stopped evaluation left no result (log: $(grep -c 'stopped at shutdown' "$STATE/mount.log") stopped)"
else
	bad "stopped evaluation: $(tail -3 "$STATE/mount.log"); $(ls "$STATE/spin_a/history/" 2>&1 | tr '\n' ' ')"
fi
daemon=""
t0=$(date +%s.%N)
start_daemon
secs=$(python3 -c "import sys; print(f'{float(sys.argv[2]) - float(sys.argv[1]):.1f}')" "$t0" "$(date +%s.%N)")
if [ -n "$daemon" ] && python3 -c "import sys; sys.exit(0 if float('$secs') < 10 else 1)"; then
	ok "remount returns in $secs s with evaluations firing at start"
else
	bad "remount took $secs s (daemon '$daemon')"
fi
sa=$(cat "$MNT/spin_a/status" 2>/dev/null)
sb=$(cat "$MNT/spin_b/status" 2>/dev/null)
case "$sa $sb" in
*idle* | *done* | " ") bad "remount: spin_a '$sa', spin_b '$sb' (not evaluated again); log: $(tail -4 "$STATE/mount.log" | tr '\n' ' ')" ;;
*) ok "remount: both pass.c files are evaluated again ($sa, $sb)" ;;
esac
finish
