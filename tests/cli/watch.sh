#!/usr/bin/env bash
# watch.sh - `passfs watch`: the task tree as plain files, driven by inotify.
#
# Starts a watcher on a temporary directory with the small test task (cpu
# backend, one trial), writes pass.c with `cp` and with `sed -i` (a temp file
# renamed onto pass.c), polls status until done and checks that result.json
# names the sha256 of the bytes written; stops the watcher with SIGTERM (exit
# 0), edits pass.c while it is stopped and checks that the restarted watcher
# evaluates that edit; kills it with SIGKILL during an evaluation and checks
# that the restarted watcher finishes the job.
#
#   PASSFS=build/passfs bash tests/cli/watch.sh
set -uo pipefail
PASSFS=${PASSFS:-./build/passfs}
PY=/usr/bin/python3
TASKS=tests/passes/tasks
ID=tiny_bias_gelu
tmp=$(mktemp -d)
W=$tmp/w
T=$W/$ID
pid=
fails=0
passes=0

cleanup() {
	if [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null; then
		kill -TERM "$pid"
		wait "$pid"
	fi
	rm -rf "$tmp"
}
trap cleanup EXIT

ok() { echo "ok   $*"; passes=$((passes + 1)); }
fail() { echo "FAIL $*"; fails=$((fails + 1)); }

start() {
	"$PASSFS" watch --tasks "$TASKS" --state "$tmp/state" --backend cpu --trials 1 --warmup 0 "$W" \
		>"$tmp/out" 2>"$tmp/err" &
	pid=$!
	for _ in $(seq 1 200); do
		[ -s "$T/status" ] && grep -q 'Ctrl-C' "$tmp/out" && return 0
		kill -0 "$pid" 2>/dev/null || break
		sleep 0.05
	done
	fail "watcher did not start: $(cat "$tmp/err")"
	exit 1
}

stop() { # SIGTERM; the watcher must exit 0
	kill -TERM "$pid"
	wait "$pid"
	local rc=$?
	pid=
	if [ $rc -eq 0 ]; then ok "SIGTERM: exit 0"; else fail "SIGTERM: exit $rc: $(cat "$tmp/err")"; fi
}

# wait_result: until status says done and result.json judges pass.c's bytes.
wait_result() {
	local sha
	sha=$(sha256sum "$T/pass.c" | cut -c1-64)
	for _ in $(seq 1 1200); do
		if [ "$(cat "$T/status")" = done ] && grep -q "\"pass_sha256\": \"$sha\"" "$T/result.json"; then
			return 0
		fi
		sleep 0.1
	done
	fail "no result for sha256 $sha: status $(cat "$T/status"); $(head -c 400 "$T/result.json")"
	return 1
}

# field KEY: a top-level field of result.json.
field() {
	$PY -c "import json,sys; print(json.load(open(sys.argv[1]))[sys.argv[2]])" "$T/result.json" "$1"
}

start

# The tree.
for f in README.md summary.json "$ID/README.md" "$ID/graph.json" "$ID/pass.c" "$ID/result.json" "$ID/status"; do
	[ -f "$W/$f" ] || fail "missing $f"
done
[ -f "$T/es_t" ] && [ ! -s "$T/es_t" ] && ok "es_t empty before any evaluation" || fail "es_t is not an empty file before any evaluation"
[ "$(cat "$T/status")" = idle ] && ok "status idle at start" || fail "status $(cat "$T/status"), want idle"
grep -q 'PASS_REPLACEMENT' "$T/pass.c" && grep -q 'pf_not_implemented' "$T/pass.c" &&
	ok "pass.c is the template" || fail "pass.c is not the template"
cmp -s "$T/graph.json" "$TASKS/$ID/graph.json" && ok "graph.json copied" || fail "graph.json differs"
grep -q 'Watch mode' "$W/README.md" && grep -q 'pf_launch' "$W/README.md" && ok "root README (watch mode)" ||
	fail "root README lacks the watch note or the API"
grep -q 'pf_in(call, 0)' "$T/README.md" && grep -q 'f16_b1_s64' "$T/README.md" && ok "task README" ||
	fail "task README lacks the I/O order or the variants"
[ "$(stat -c %a "$T/result.json")" = 444 ] && ok "result.json mode 0444" || fail "result.json mode $(stat -c %a "$T/result.json")"

# cp: IN_CLOSE_WRITE on pass.c.
cp tests/passes/ok_fused.c "$T/pass.c"
if wait_result; then
	ok "cp: evaluated"
	[ "$(field verdict)" = ok ] && ok "cp: verdict ok" || fail "cp: verdict $(field verdict)"
	[ "$(field seq)" = 1 ] && ok "cp: seq 1" || fail "cp: seq $(field seq)"
	[ -s "$T/es_t" ] && ok "es_t written: $(cat "$T/es_t")" || fail "es_t missing after done"
fi

# sed -i: a temp file renamed onto pass.c (IN_MOVED_TO).
sed -i '$a // edited by sed -i' "$T/pass.c"
if wait_result; then
	ok "sed -i: evaluated"
	[ "$(field seq)" = 2 ] && ok "sed -i: seq 2" || fail "sed -i: seq $(field seq)"
	[ "$(field verdict)" = ok ] && ok "sed -i: verdict ok" || fail "sed -i: verdict $(field verdict)"
fi

# The same bytes again: answered from history at once (a new seq).
cp tests/passes/ok_fused.c "$T/pass.c"
if wait_result; then
	[ "$(field reused_from)" = 1 ] && ok "same bytes: reused_from 1" || fail "same bytes: not reused"
fi

# summary.json
$PY - "$W/summary.json" <<'EOF' && ok "summary.json" || fail "summary.json: $(cat "$W/summary.json")"
import json, sys
s = json.load(open(sys.argv[1]))
assert s["evaluated"] == 1 and s["aggregate"] > 0 and s["tasks"][0]["id"] == "tiny_bias_gelu", s
assert s["tasks"][0]["verdict"] == "ok" and s["tasks"][0]["seq"] == 3, s
EOF

n=$(ls "$tmp/state/$ID/history/"*.json | wc -l)
[ "$n" = 3 ] && ok "3 history entries" || fail "$n history entries, want 3"

stop

# An edit while the watcher is down is evaluated at the next start.
printf '// edited while stopped\n' >>"$T/pass.c"
start
if wait_result; then
	[ "$(field seq)" = 4 ] && ok "edit while stopped: seq 4" || fail "edit while stopped: seq $(field seq)"
fi
grep -q 'edited while the watcher was stopped' "$tmp/err" && ok "edit while stopped reported" ||
	fail "no line about the edit made while stopped"

# kill -9 during an evaluation: the saved pass.c is evaluated after a restart.
printf '// before kill -9\n' >>"$T/pass.c"
for _ in $(seq 1 200); do
	case $(cat "$T/status") in pending | compiling | running) break ;; esac
	sleep 0.02
done
kill -KILL "$pid"
wait "$pid" 2>/dev/null
pid=
start
if wait_result; then
	[ "$(field seq)" = 5 ] && ok "kill -9: the interrupted evaluation ran after the restart (seq 5)" ||
		fail "kill -9: seq $(field seq)"
	grep -q 'before kill -9' "$tmp/state/$ID/pass.c" && ok "kill -9: state pass.c kept" ||
		fail "kill -9: state pass.c lost the edit"
fi
stop

echo "watch.sh: $passes passed, $fails failed"
[ $fails -eq 0 ]
