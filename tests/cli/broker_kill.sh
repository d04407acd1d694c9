#!/usr/bin/env bash
# A worker SIGKILLed in the middle of a job (tests/passes/timeout_spin.c,
# seconds of spinning): its evaluation process goes with it, and the job,
# idle past the lease, is taken over by another worker and answered once,
# by that worker.  Then SIGTERM drains: a worker busy with a job finishes
# and answers it before it exits; a worker stalled past the lease loses
# its job and only the first answer counts; a second SIGTERM hands the job
# back for the next worker at once; a job handed out more than 3 times (every
# worker that took it died) is refused.  Skips without redis-server.
source "$(dirname "$0")/../lib/cli.sh"
source "$(dirname "$0")/../lib/broker.sh"
T=tests/passes/tasks
TASK=tiny_bias_gelu
EV=(--tasks "$T" --task "$TASK" --backend cpu --trials 1 --warmup 0 --timeout 3 --json)
field() { python3 -c "import json,sys; print(json.load(open(sys.argv[1])).get(sys.argv[2]))" "$1" "$2"; }
wait_log() { # file pattern [tenths]
	for _ in $(seq "${3:-300}"); do grep -q "$2" "$1" 2>/dev/null && return 0; sleep 0.1; done
	return 1
}

timeout 180 "$PASSFS" eval "${EV[@]}" --pass tests/passes/timeout_spin.c --broker "$BURL" >"$tmp/r.json" 2>"$tmp/r.err" &
front=$!
bg_pids="$bg_pids $front"
for _ in $(seq 50); do [ "$(rcli XLEN passfs:jobs:cpu)" = 1 ] && break; sleep 0.1; done
st=$("$PASSFS" broker status --broker "$BURL")
printf '%s' "$st" | grep -q "queued 1   in flight 0" && ok "broker status: the job queued, no worker" || bad "status, queued: $st"
worker_start victim --beat 0.5 --lease 3
victim=$WPID
if wait_log "$tmp/victim.log" "evaluating"; then ok "the victim took the job"; else bad "the victim never took the job"; fi
sleep 1 # a heartbeat since
st=$("$PASSFS" broker status --broker "$BURL")
printf '%s' "$st" | grep -q "queued 0   in flight 1" && printf '%s' "$st" | grep -q "victim\.0" &&
	printf '%s' "$st" | grep -q "^victim .* 1 .* 1 " && ok "broker status: in flight on victim.0, victim busy" ||
	bad "status, in flight: $st"
sleep 1
evproc=$(pgrep -P "$victim" | head -1)
{ kill -KILL "$victim" && wait "$victim"; } 2>/dev/null
sleep 0.5
if [ -n "$evproc" ] && kill -0 "$evproc" 2>/dev/null && ! grep -q '^[0-9]* (.*) Z' "/proc/$evproc/stat"; then
	sleep 3
	kill -0 "$evproc" 2>/dev/null && bad "the victim's evaluation process $evproc outlived it" || ok "the victim's evaluation process went with it"
else
	ok "the victim's evaluation process went with it"
fi
worker_start heir --beat 0.5 --lease 3
wait "$front"
rc=$?
v=$(field "$tmp/r.json" verdict 2>/dev/null)
w=$(field "$tmp/r.json" worker 2>/dev/null)
if [ $rc -eq 0 ] && [ "$v" = timeout ] && [ "$w" = heir ]; then
	ok "the job completed on the heir (verdict $v)"
else
	bad "after the kill: exit $rc, verdict $v, worker $w: $(cat "$tmp/r.err")"
fi
grep -q "reclaimed" "$tmp/heir.log" && ok "the heir reclaimed it past the lease" || bad "heir log: $(cat "$tmp/heir.log")"
n=$(grep -c "evaluating" "$tmp/heir.log")
[ "$n" -eq 1 ] && ok "evaluated once by the heir" || bad "the heir evaluated $n times"
sleep 1
p=$(rcli XPENDING passfs:jobs:cpu workers | head -1)
l=$(rcli XLEN passfs:jobs:cpu)
[ "$p" = 0 ] && [ "$l" = 0 ] && ok "nothing left queued or pending" || bad "pending $p, stream length $l"

# SIGTERM drains: the job in flight is answered, then the worker exits
timeout 180 "$PASSFS" eval "${EV[@]}" --pass tests/passes/timeout_spin.c --broker "$BURL" >"$tmp/d.json" 2>"$tmp/d.err" &
front=$!
bg_pids="$bg_pids $front"
wait_log "$tmp/heir.log" "evaluating.*" 300
for _ in $(seq 100); do [ "$(grep -c evaluating "$tmp/heir.log")" -ge 2 ] && break; sleep 0.1; done
kill -TERM "$WPID"
wait "$front"
rc=$?
wait "$WPID"
wrc=$?
if [ $rc -eq 0 ] && [ "$(field "$tmp/d.json" worker)" = heir ] && [ $wrc -eq 0 ]; then
	ok "SIGTERM drained: the job in flight was answered, the worker exited 0"
else
	bad "drain: front end $rc, worker $wrc: $(cat "$tmp/d.err") $(tail -3 "$tmp/heir.log")"
fi

# a worker stalled past the lease (SIGSTOP) loses its job to another; when
# it comes back both finish, and only the first answer counts
timeout 180 "$PASSFS" eval "${EV[@]}" --pass tests/passes/timeout_spin.c --broker "$BURL" >"$tmp/s.json" 2>"$tmp/s.err" &
front=$!
bg_pids="$bg_pids $front"
worker_start stall1 --beat 0.5 --lease 3
stall1=$WPID
wait_log "$tmp/stall1.log" "evaluating" || bad "stall1 never took the job"
kill -STOP "$stall1"
worker_start stall2 --beat 0.5 --lease 3
stall2=$WPID
wait_log "$tmp/stall2.log" "reclaimed" 200 && ok "a stalled worker's job was taken over" || bad "no takeover: $(cat "$tmp/stall2.log")"
kill -CONT "$stall1"
wait "$front"
rc=$?
w=$(field "$tmp/s.json" worker 2>/dev/null)
for _ in $(seq 300); do [ "$(cat "$tmp/stall1.log" "$tmp/stall2.log" | grep -c -e "answered already" -e ": timeout in")" -ge 2 ] && break; sleep 0.1; done
dropped=$(cat "$tmp/stall1.log" "$tmp/stall2.log" | grep -c "answered already")
if [ $rc -eq 0 ] && [ -n "$w" ] && [ "$dropped" -eq 1 ]; then
	ok "both finished, one answer counted (from $w), the other dropped"
else
	bad "stalled: exit $rc, worker $w, $dropped dropped: $(tail -2 "$tmp/stall1.log" "$tmp/stall2.log")"
fi
{ kill "$stall1" "$stall2" && wait "$stall1" "$stall2"; } 2>/dev/null

# a second SIGTERM stops a worker now: its job is handed back, idle past the
# lease, and the next worker takes it at once (no lease to wait out)
timeout 180 "$PASSFS" eval "${EV[@]}" --pass tests/passes/timeout_spin.c --broker "$BURL" >"$tmp/q.json" 2>"$tmp/q.err" &
front=$!
bg_pids="$bg_pids $front"
worker_start quit1 --beat 0.5 --lease 30
quit1=$WPID
wait_log "$tmp/quit1.log" "evaluating" || bad "quit1 never took the job"
kill -TERM "$quit1"
sleep 0.3
kill -TERM "$quit1"
t0=$(date +%s)
wait "$quit1" 2>/dev/null
worker_start quit2 --beat 0.5 --lease 30
wait_log "$tmp/quit2.log" "reclaimed" 100 && t=$(($(date +%s) - t0)) && ok "stopped now: the job handed back, retaken after ${t} s (lease 30 s)" ||
	bad "no hand-back: $(tail -3 "$tmp/quit1.log") / $(tail -2 "$tmp/quit2.log")"
wait "$front"
[ "$(field "$tmp/q.json" worker 2>/dev/null)" = quit2 ] && ok "and answered by the next worker" || bad "hand-back answer: $(cat "$tmp/q.err")"
{ kill "$WPID" && wait "$WPID"; } 2>/dev/null

# a job that every worker taking it died on goes round no more: handed out
# more than 3 times, the next worker answers it with an error
eid=$(rcli XADD passfs:jobs:cpu '*' v 3 id poison1 graph 0000 reply passfs:reply:poison1 job x)
rcli XREADGROUP GROUP workers ghost COUNT 1 STREAMS passfs:jobs:cpu '>' >/dev/null
for _ in 1 2 3; do rcli XCLAIM passfs:jobs:cpu workers ghost 0 "$eid" >/dev/null; done
worker_start last --beat 0.5 --lease 2
for _ in $(seq 100); do
	m=$(rcli --raw XRANGE passfs:reply:poison1 - + | awk 'f{print; exit} $0=="msg"{f=1}')
	[ -n "$m" ] && break
	sleep 0.1
done
case $m in *"handed out 5 times"*) ok "a job handed out a 5th time is refused: $m" ;; *) bad "poison job: '$m'" ;; esac
finish
