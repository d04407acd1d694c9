#!/usr/bin/env bash
# passfs eval --broker through one worker (engine/broker, docs/broker.md), on
# a redis-server of the test's own: the same verdicts as a local evaluation,
# "worker" in the result; an unreachable broker is one clear line; a
# malformed, an oversized and a wrongly-hashed job are answered with an
# error naming the reason and acknowledged; AUTH and SELECT work, a wrong password is
# one clear line, and the password shows neither in ps nor in messages;
# `passfs broker status` lists the worker.  Skips without redis-server.
source "$(dirname "$0")/../lib/cli.sh"
source "$(dirname "$0")/../lib/broker.sh"
T=tests/passes/tasks
TASK=tiny_bias_gelu
EV=(--tasks "$T" --task "$TASK" --backend cpu --trials 1 --warmup 0 --secret-seed 7 --json)
field() { python3 -c "import json,sys; print(json.load(open(sys.argv[1])).get(sys.argv[2]))" "$1" "$2"; }

worker_start w1 --beat 0.5 --lease 5
for p in ok_fused compile_error mismatch_scaled; do
	"$PASSFS" eval "${EV[@]}" --pass tests/passes/$p.c >"$tmp/local_$p.json" 2>/dev/null
	timeout 120 "$PASSFS" eval "${EV[@]}" --pass tests/passes/$p.c --broker "$BURL" >"$tmp/remote_$p.json" 2>"$tmp/remote_$p.err"
	rc=$?
	lv=$(field "$tmp/local_$p.json" verdict)
	rv=$(field "$tmp/remote_$p.json" verdict 2>/dev/null)
	w=$(field "$tmp/remote_$p.json" worker 2>/dev/null)
	if [ $rc -eq 0 ] && [ "$lv" = "$rv" ] && [ "$w" = w1 ]; then
		ok "$p: verdict $rv through the broker, as local; worker w1"
	else
		bad "$p: local $lv, broker $rv (exit $rc, worker $w): $(cat "$tmp/remote_$p.err")"
	fi
done
dev=$(field "$tmp/remote_ok_fused.json" device)
case $dev in cpu*) ok "the result keeps the device ($dev)" ;; *) bad "device: $dev" ;; esac

out=$("$PASSFS" eval "${EV[@]}" --broker redis://127.0.0.1:1 2>&1)
rc=$?
if [ $rc -eq 1 ] && [ "$(printf '%s\n' "$out" | wc -l)" -eq 1 ] && printf '%s' "$out" | grep -q "cannot reach the broker"; then
	ok "unreachable broker: one line ($out)"
else
	bad "unreachable broker: exit $rc, '$out'"
fi
out=$("$PASSFS" eval "${EV[@]}" --broker rediss://127.0.0.1:1 2>&1)
printf '%s' "$out" | grep -q "not supported" && ok "rediss:// refused clearly" || bad "rediss://: $out"

# malformed jobs, written to the stream by hand, of this build's job version
# (BROKER_JOB_VERSION, engine/broker/broker.h) so the worker reaches the check
JOBV=3
rcli XADD passfs:jobs:cpu '*' v $JOBV id bad1 graph 0000 reply passfs:reply:bad1 job garbage >/dev/null
m=$(answer bad1)
case $m in *"refused the job"*"malformed"*) ok "malformed job: $m" ;; *) bad "malformed job: '$m'" ;; esac
rcli XADD passfs:jobs:cpu '*' v 9 id bad2 graph 0000 reply passfs:reply:bad2 job x >/dev/null
m=$(answer bad2)
case $m in *"version 9"*) ok "job of another version: $m" ;; *) bad "version: '$m'" ;; esac
head -c 2200000 /dev/zero | tr '\0' a >"$tmp/big"
rcli -x XADD passfs:jobs:cpu '*' v $JOBV id bad3 graph 0000 reply passfs:reply:bad3 job <"$tmp/big" >/dev/null
m=$(answer bad3)
case $m in *"oversized"*) ok "oversized job: $m" ;; *) bad "oversized job: '$m'" ;; esac
# a genuine job whose graph was replaced under its sha
sha=$(rcli --raw KEYS 'passfs:graph:*' | head -1)
rcli SET "$sha" '{"not": "the graph"}' >/dev/null
timeout 60 "$PASSFS" eval "${EV[@]}" --pass tests/passes/ok_fused.c --broker "$BURL" >/dev/null 2>"$tmp/swap.err"
rc=$?
if [ $rc -eq 1 ] && grep -q "does not match its sha256" "$tmp/swap.err"; then
	ok "a graph replaced under its sha256 is refused: $(cat "$tmp/swap.err")"
else
	bad "graph swap: exit $rc, $(cat "$tmp/swap.err")"
fi
timeout 60 "$PASSFS" eval "${EV[@]}" --pass tests/passes/ok_fused.c --broker "$BURL" >"$tmp/healed.json" 2>"$tmp/healed.err"
[ "$(field "$tmp/healed.json" verdict)" = ok ] && ok "the next job stores the graph again and is evaluated" || bad "after the swap: $(cat "$tmp/healed.err")"
pend=$(rcli XPENDING passfs:jobs:cpu workers | head -1)
[ "$pend" = 0 ] && ok "every refused job acknowledged" || bad "pending after refusals: $pend"

st=$("$PASSFS" broker status --broker "$BURL" 2>&1)
if printf '%s' "$st" | grep -q "^w1 .*cpu" && printf '%s' "$st" | grep -q "queued 0"; then
	ok "broker status lists w1 and an empty queue"
else
	bad "broker status: $st"
fi

# AUTH: a broker with a password
kill "$WPID"
wait "$WPID" 2>/dev/null
broker_down
REDIS_AUTH=s3cr3tpw
broker_up --requirepass "$REDIS_AUTH" || exit 1
PURL=redis://:$REDIS_AUTH@127.0.0.1:$BPORT
"$PASSFS" worker --broker "$PURL" --name wa --backend cpu >"$tmp/wa.log" 2>&1 &
WPID=$!
bg_pids="$bg_pids $WPID"
sleep 0.5
if grep -q "$REDIS_AUTH" "/proc/$WPID/cmdline"; then bad "the password shows in the worker's argv"; else ok "the worker's argv hides the password"; fi
PASSFS_BROKER=$PURL timeout 120 "$PASSFS" eval "${EV[@]}" --pass tests/passes/ok_fused.c >"$tmp/auth.json" 2>"$tmp/auth.err"
if [ "$(field "$tmp/auth.json" worker)" = wa ]; then ok "AUTH through \$PASSFS_BROKER: evaluated by wa"; else bad "auth: $(cat "$tmp/auth.err")"; fi
if grep -q "$REDIS_AUTH" "$tmp/auth.json" "$tmp/wa.log"; then bad "the password is in a result or a log"; else ok "no password in the result or the worker's log"; fi
# SELECT: a worker on database 5 serves the jobs queued there, wa (database 0) none of them
"$PASSFS" worker --broker "$PURL/5" --name wd --backend cpu >"$tmp/wd.log" 2>&1 &
bg_pids="$bg_pids $!"
timeout 120 "$PASSFS" eval "${EV[@]}" --pass tests/passes/ok_fused.c --broker "$PURL/5" >"$tmp/db5.json" 2>"$tmp/db5.err"
[ "$(field "$tmp/db5.json" worker)" = wd ] && ok "redis://.../5: evaluated by the worker on database 5" || bad "db 5: $(cat "$tmp/db5.err")"
out=$("$PASSFS" eval "${EV[@]}" --broker "redis://:wrong@127.0.0.1:$BPORT" 2>&1)
if printf '%s' "$out" | grep -q "refused the credentials" && ! printf '%s' "$out" | grep -q wrong; then
	ok "a wrong password: one clear line without it ($out)"
else
	bad "wrong password: $out"
fi
finish
