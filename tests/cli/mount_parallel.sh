#!/usr/bin/env bash
# Two evaluations at once in one daemon (passfs mount --parallel 2): each pass
# worker maps its own evaluation's inputs and pass results, and nothing of the
# other evaluation's (the shared memory is never inherited by a fork,
# MADV_DONTFORK) and no eager results at all.  Two copies of the test task get
# a pass that spins in its kernel, so both pass workers are alive at once;
# their /proc/PID/maps are read while they spin.  Each worker, eager's too,
# holds only its own descriptors (a fork from the daemon closes the rest), and
# a pass worker's oom_score_adj is 1000.  Then SIGTERM: the hanging
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
	out=$("$PASSFS" mount --tasks "$tmp/tasks" --state "$STATE" --backend cpu --trials 1 --warmup 0 --timeout 20 \
		--parallel 2 "$MNT" 2>"$tmp/mount.err")
	daemon=$(printf '%s\n' "$out" | sed -n 's/.*daemon pid \([0-9]*\).*/\1/p' | head -1)
}
start_daemon
if [ -z "$daemon" ]; then
	echo "FAIL mount: $(cat "$tmp/mount.err")"
	exit 1
fi
cp tests/passes/timeout_spin.c "$MNT/spin_a/pass.c"
cp tests/passes/timeout_spin.c "$MNT/spin_b/pass.c"

# the daemon's children that map a pass result area: the pass workers
pass_workers() {
	for p in $(pgrep -P "$daemon"); do
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
	# what each evaluation was doing: the daemon's children, each task's
	# state and the daemon's errors
	for p in $(pgrep -P "$daemon"); do
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
for p in $(pgrep -P "$daemon"); do
	grep -q 'memfd:passfs-' "/proc/$p/maps" 2>/dev/null || continue
	fds=$(ls /proc/$p/fd 2>/dev/null | awk '$1 > 2' | wc -l)
	if [ "$fds" -le 4 ]; then
		ok "worker $p holds $fds descriptors of its own"
	else
		bad "worker $p holds $fds descriptors: $(ls -l /proc/$p/fd | awk 'NR>1 && $9 > 2 {print $9"->"$11}' | tr '\n' ' ')"
	fi
done
# Shutdown with both evaluations spinning (6 variants x the 20 s step limit
# each): the daemon gives them 5 s, then stops them and exits - it does not
# sit out two minutes - and records no result for them, so the next mount
# evaluates both pass.c files again.
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
start_daemon
sa=$(cat "$MNT/spin_a/status" 2>/dev/null)
sb=$(cat "$MNT/spin_b/status" 2>/dev/null)
case "$sa $sb" in
*idle* | *done* | " ") bad "remount: spin_a '$sa', spin_b '$sb' (not evaluated again)" ;;
*) ok "remount: both pass.c files are evaluated again ($sa, $sb)" ;;
esac
finish
