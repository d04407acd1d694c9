#!/usr/bin/env bash
# passfs mount and passfs watch with --broker (docs/broker.md): a broker
# that cannot be reached is one clear line and no mount; with a worker,
# saving pass.c evaluates it there and result.json names the worker; the
# password of the URL is in neither the daemon's argv, its log nor
# result.json; the worker's phases show in status, and a front end that
# closes cancels its job on the worker.  Skips without redis-server or
# /dev/fuse.
NAME=broker_mount
source "$(dirname "$0")/../lib/cli.sh"
source "$(dirname "$0")/../lib/broker.sh"
. tests/lib/mount.sh
mount_cleanup_more() { broker_stop_all; }
T=tests/passes/tasks
TASK=tiny_bias_gelu
D=$MNT/$TASK
OPTS=(--tasks "$T" --state "$STATE" --backend cpu --trials 1 --warmup 0 --timeout 3)
field() { python3 -c "import json,sys; print(json.load(open(sys.argv[1])).get(sys.argv[2]))" "$1" "$2"; }

out=$("$PASSFS" mount "${OPTS[@]}" --broker redis://127.0.0.1:1 "$MNT" 2>&1)
rc=$?
if [ $rc -eq 1 ] && [ "$(printf '%s\n' "$out" | wc -l)" -eq 1 ] && printf '%s' "$out" | grep -q "cannot reach the broker" &&
	! mountpoint -q "$MNT"; then
	ok "unreachable broker at mount: one line, no mount ($out)"
else
	bad "unreachable broker at mount: exit $rc: $out"
fi

broker_down
REDIS_AUTH=mountpw42
broker_up --requirepass "$REDIS_AUTH" || exit 1
PURL=redis://default:$REDIS_AUTH@127.0.0.1:$BPORT
"$PASSFS" worker --broker "$PURL" --name wm --backend cpu --beat 0.5 >"$tmp/wm.log" 2>&1 &
bg_pids="$bg_pids $!"
out=$("$PASSFS" mount "${OPTS[@]}" --wait-timeout 60 --broker "$PURL" "$MNT" 2>&1)
daemon=$(printf '%s' "$out" | sed -n 's/.*daemon pid \([0-9]*\).*/\1/p' | head -1)
if [ -n "$daemon" ] && mountpoint -q "$MNT"; then ok "mounted with --broker"; else bad "mount: $out"; exit 1; fi
cp tests/passes/ok_fused.c "$D/pass.c"
cat "$D/result.json" >"$tmp/r.json"
v=$(field "$tmp/r.json" verdict)
w=$(field "$tmp/r.json" worker)
[ "$v" = ok ] && [ "$w" = wm ] && ok "result.json: verdict $v from worker $w" || bad "result.json: $(head -c 600 "$tmp/r.json")"
[ -n "$(cat "$D/es_t")" ] && ok "es_t: $(cat "$D/es_t")" || bad "es_t empty"
cp tests/passes/compile_error.c "$D/pass.c"
v=$(python3 -c "import json; print(json.load(open('$D/result.json'))['verdict'])")
[ "$v" = compile_error ] && ok "a second save: $v" || bad "second save: $v"
if grep -q "$REDIS_AUTH" "/proc/$daemon/cmdline" "$STATE/mount.log" "$D/result.json" 2>/dev/null; then
	bad "the password shows in the daemon's argv, its log or result.json"
else
	ok "no password in the daemon's argv, its log or result.json"
fi
fusermount3 -u "$MNT"

# watch --broker, the URL from the environment
PASSFS_BROKER=$PURL "$PASSFS" watch --quiet "${OPTS[@]}" "$tmp/w" >"$tmp/watch.out" 2>&1 &
wpid=$!
bg_pids="$bg_pids $wpid"
for _ in $(seq 100); do [ -f "$tmp/w/$TASK/pass.c" ] && break; sleep 0.1; done
cp tests/passes/ok_fused.c "$tmp/w/$TASK/pass.c"
for _ in $(seq 300); do grep -q done "$tmp/w/$TASK/status" 2>/dev/null && break; sleep 0.1; done
w=$(field "$tmp/w/$TASK/result.json" worker 2>/dev/null)
[ "$w" = wm ] && ok "watch with \$PASSFS_BROKER: result.json from worker $w" || bad "watch: $(cat "$tmp/w/$TASK/status" "$tmp/watch.out")"
if tr '\0' '\n' <"/proc/$wpid/environ" | grep -q "$REDIS_AUTH"; then bad "the watcher's environment still holds the URL"; else ok "the watcher dropped \$PASSFS_BROKER from its environment"; fi

# the phases come back from the worker; stopping the watcher cancels the job there
cp tests/passes/timeout_spin.c "$tmp/w/$TASK/pass.c"
for _ in $(seq 300); do grep -q running "$tmp/w/$TASK/status" 2>/dev/null && break; sleep 0.1; done
grep -q running "$tmp/w/$TASK/status" && ok "status shows the worker's phase: $(head -1 "$tmp/w/$TASK/status")" ||
	bad "status never showed running: $(cat "$tmp/w/$TASK/status")"
kill -TERM "$wpid"
wait "$wpid"
for _ in $(seq 150); do grep -q "cancelled" "$tmp/wm.log" && break; sleep 0.1; done
grep -q ": cancelled" "$tmp/wm.log" && ok "the watcher's close cancelled the job on the worker" || bad "worker log: $(tail -3 "$tmp/wm.log")"
finish
