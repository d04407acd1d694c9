#!/usr/bin/env bash
# The broker restarted in the middle of a job (tests/passes/timeout_spin.c,
# seconds long): without its data (the job and the reply stream lost) the
# front end queues the job again and the job is answered; with its data (an
# append-only file) the job simply completes; a broker gone for good ends
# the front end's wait with one clear error after $PASSFS_BROKER_RETRY
# seconds, not a hang.  Skips without redis-server.
source "$(dirname "$0")/../lib/cli.sh"
source "$(dirname "$0")/../lib/broker.sh"
T=tests/passes/tasks
EV=(--tasks "$T" --task tiny_bias_gelu --backend cpu --trials 1 --warmup 0 --timeout 3 --json)
field() { python3 -c "import json,sys; print(json.load(open(sys.argv[1])).get(sys.argv[2]))" "$1" "$2"; }
wait_count() { # file pattern count
	for _ in $(seq 300); do [ "$(grep -c "$2" "$1" 2>/dev/null)" -ge "$3" ] && return 0; sleep 0.1; done
	return 1
}
spin() { # name: a spinning job in the background, its pid in $front
	timeout 180 "$PASSFS" eval "${EV[@]}" --pass tests/passes/timeout_spin.c --broker "$BURL" >"$tmp/$1.json" 2>"$tmp/$1.err" &
	front=$!
	bg_pids="$bg_pids $front"
}

worker_start w1 --beat 0.5 --lease 3
for mode in lost kept; do
	n=$(grep -c ": evaluating" "$tmp/w1.log")
	spin "$mode"
	wait_count "$tmp/w1.log" ": evaluating" $((n + 1)) || bad "$mode: the job never started"
	sleep 1
	if [ $mode = lost ]; then broker_restart; else broker_restart --keep; fi
	wait "$front"
	rc=$?
	v=$(field "$tmp/$mode.json" verdict 2>/dev/null)
	if [ $rc -eq 0 ] && [ "$v" = timeout ]; then
		ok "restart, data $mode: the job was answered (verdict $v)"
	else
		bad "restart, data $mode: exit $rc, verdict $v: $(cat "$tmp/$mode.err")"
	fi
	if [ $mode = lost ]; then
		grep -q "queueing it again" "$tmp/$mode.err" && ok "the front end queued the lost job again" ||
			bad "no re-queue: $(cat "$tmp/$mode.err")"
		# from here on, the server keeps its data
		broker_down
		broker_up --appendonly yes || exit 1
	fi
done

export PASSFS_BROKER_RETRY=3
spin gone
n=$(grep -c ": evaluating" "$tmp/w1.log")
sleep 1
broker_down
t0=$(date +%s)
wait "$front"
rc=$?
t=$(($(date +%s) - t0))
if [ $rc -eq 1 ] && [ $t -le 20 ] && grep -q "went away" "$tmp/gone.err" && [ "$(wc -l <"$tmp/gone.err")" -eq 1 ]; then
	ok "a broker gone for good: one clear error after ${t} s ($(cat "$tmp/gone.err"))"
else
	bad "broker gone: exit $rc after ${t} s: $(cat "$tmp/gone.err")"
fi
finish
