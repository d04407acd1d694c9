#!/usr/bin/env bash
# One daemon per state directory (engine/service/state.h, state_lock): two
# daemons on one --state numbered their evaluations alike, one history entry
# was lost and pass.c and result.json came from different daemons.  A second
# `passfs watch` (or mount) on a state directory in use is refused, naming
# the directory and the first daemon's pid and command line, and nothing of
# the first's is touched; once the first has stopped, the second starts.
source "$(dirname "$0")/../lib/cli.sh"
T=tests/passes/tasks
S=$tmp/state
pid=
cleanup() {
	[ -n "$pid" ] && kill -TERM "$pid" 2>/dev/null && wait "$pid" 2>/dev/null
	[ -n "${MNT:-}" ] && fusermount3 -u "$MNT" 2>/dev/null
	rm -rf "$tmp"
}
trap cleanup EXIT

"$PASSFS" watch --tasks "$T" --state "$S" --backend cpu --quiet "$tmp/w1" >"$tmp/out1" 2>&1 &
pid=$!
for _ in $(seq 1 100); do [ -s "$tmp/w1/tiny_bias_gelu/status" ] && break; sleep 0.05; done
echo '/* the first daemon */' >>"$tmp/w1/tiny_bias_gelu/pass.c"
sleep 0.3

t0=$(date +%s)
timeout 30 "$PASSFS" watch --tasks "$T" --state "$S" --backend cpu --quiet "$tmp/w2" >"$tmp/out2" 2>&1 &
p2=$!
wait $p2
rc=$?
took=$(($(date +%s) - t0))
if [ $rc -ne 0 ] && grep -q "state directory $S is in use by another passfs (pid $pid: .*passfs watch" "$tmp/out2" &&
	grep -q -- "--state with another directory" "$tmp/out2"; then
	ok "a second watch on the same state: exit $rc in ${took}s, the first named: $(head -c 120 "$tmp/out2")"
else
	bad "second watch: rc $rc: $(cat "$tmp/out2")"
fi
[ ! -e "$tmp/w2/tiny_bias_gelu/pass.c" ] && ok "the refused daemon wrote no tree" || bad "the refused daemon wrote $tmp/w2"
kill -0 "$pid" 2>/dev/null && ok "the first daemon still runs" || bad "the first daemon is gone"

# a mount on the same state: refused too (with /dev/fuse)
if [ -e /dev/fuse ] && command -v fusermount3 >/dev/null; then
	mkdir -p "$tmp/m"
	"$PASSFS" mount --tasks "$T" --state "$S" --backend cpu "$tmp/m" >"$tmp/out3" 2>&1
	rc=$?
	if [ $rc -ne 0 ] && grep -q "is in use by another passfs (pid $pid" "$tmp/out3" && ! mountpoint -q "$tmp/m"; then
		ok "a mount on the same state: refused (exit $rc), nothing mounted"
	else
		MNT=$tmp/m
		bad "mount on the same state: rc $rc: $(cat "$tmp/out3")"
	fi
fi

# the first stops; then the state directory is free
kill -TERM "$pid"
wait "$pid"
pid=
"$PASSFS" watch --tasks "$T" --state "$S" --backend cpu --quiet "$tmp/w3" >"$tmp/out4" 2>&1 &
pid=$!
for _ in $(seq 1 100); do [ -s "$tmp/w3/tiny_bias_gelu/status" ] && break; sleep 0.05; done
if kill -0 "$pid" 2>/dev/null && grep -q 'the first daemon' "$tmp/w3/tiny_bias_gelu/pass.c"; then
	ok "after the first stopped, a new watch takes the state (and its pass.c)"
else
	bad "restart on the freed state: $(cat "$tmp/out4")"
fi
if grep -q "^$pid .*passfs watch" "$S/.lock"; then ok "the lock names its holder: $(head -c 80 "$S/.lock")"
else bad "lock file: $(cat "$S/.lock")"; fi
finish
