#!/usr/bin/env bash
# Eager's model counted ahead (docs/service.md, "Eager's model ahead"): when
# a watch or a mount starts, every task's eager model is counted in the
# background, so a task's first evaluation reads it from the cache; the count
# pauses for an evaluation (its process stopped) and is taken up again after;
# --no-warm and PASSFS_WARM=0 turn it off; nothing of it outlives the daemon.
source "$(dirname "$0")/../lib/cli.sh"
unset PASSFS_WARM           # the suite turns it off for the other tests
PASSFS=$(realpath "$PASSFS")
wait_for() {     # file pattern seconds
	for _ in $(seq $(($3 * 10))); do
		grep -qs -- "$2" "$1" && return 0
		sleep 0.1
	done
	return 1
}
counts_alive() { pgrep -f -- "eager --model --tasks $1" >/dev/null; }

# 1. counted ahead, then read from the cache
export PASSFS_CACHE_DIR="$tmp/cache1"
"$PASSFS" watch --tasks tests/passes/tasks --state "$tmp/s1" "$tmp/w1" >"$tmp/w1.out" 2>"$tmp/w1.err" &
w1=$!
if wait_for "$tmp/w1.err" "is ready for all 1 task" 120; then
	ok "watch: $(grep -c 'counting eager' "$tmp/w1.err") start line, then ready"
else
	bad "watch: not ready: $(tail -n 3 "$tmp/w1.err")"
fi
# summary.json says so
for _ in $(seq 50); do
	ahead=$(python3 -c 'import json, sys; a = json.load(open(sys.argv[1])).get("eager_model_ahead"); print(a and "%s %d/%d" % (a["state"], a["tasks_ready"], a["tasks"]))' "$tmp/w1/summary.json" 2>/dev/null)
	[ "$ahead" = "done 1/1" ] && break
	sleep 0.1
done
[ "$ahead" = "done 1/1" ] && ok "summary.json: eager_model_ahead $ahead" || bad "summary.json: eager_model_ahead '$ahead'"
cached=$("$PASSFS" eager --model --json --tasks tests/passes/tasks --task tiny_bias_gelu 2>/dev/null |
	python3 -c 'import json, sys; v = json.load(sys.stdin)["variants"]; print(sum(x["cached"] for x in v), len(v))')
[ "$cached" = "6 6" ] && ok "every variant's model is in the cache ($cached)" || bad "cached: '$cached'"
kill "$w1"; wait "$w1" 2>/dev/null

# 2. an evaluation stops the count, which is taken up after it
export PASSFS_CACHE_DIR="$tmp/cache2"
"$PASSFS" watch --tasks tests/eager/tasks --state "$tmp/s2" --trials 1 --warmup 0 "$tmp/w2" >"$tmp/w2.out" \
	2>"$tmp/w2.err" &
w2=$!
wait_for "$tmp/w2.out" "Ctrl-C" 30 || bad "watch 2 did not start: $(tail -n 2 "$tmp/w2.err")"
for _ in $(seq 100); do counts_alive tests/eager/tasks && break; sleep 0.1; done
counts_alive tests/eager/tasks && ok "a count runs in the background" || bad "no count running"
cp tests/passes/ok_fused.c "$tmp/w2/long_rows/pass.c"     # not this task's pass: any evaluation does
if wait_for "$tmp/w2.err" "paused for an evaluation" 30; then ok "the count paused for the evaluation"; else
	bad "no pause: $(tail -n 3 "$tmp/w2.err")"; fi
# while the evaluation runs, no count shares the CPU with it
during=0
for _ in $(seq 20); do
	st=$(cat "$tmp/w2/long_rows/status" 2>/dev/null)
	case $st in done*) break ;; esac
	counts_alive tests/eager/tasks && during=$((during + 1))
	sleep 0.1
done
[ "$during" -eq 0 ] && ok "no count during the evaluation" || bad "a count ran $during times during the evaluation"
n=$(ls tests/eager/tasks | wc -l)
if wait_for "$tmp/w2.err" "is ready for all $n tasks" 300; then ok "taken up again: ready for all $n tasks"; else
	bad "not ready after the evaluation: $(tail -n 3 "$tmp/w2.err")"; fi
kill "$w2"; wait "$w2" 2>/dev/null
counts_alive tests/eager/tasks && bad "a count outlived the watcher" || ok "nothing left after the watcher"

# 3. off: --no-warm, PASSFS_WARM=0
export PASSFS_CACHE_DIR="$tmp/cache3"
"$PASSFS" watch --no-warm --tasks tests/passes/tasks --state "$tmp/s3" "$tmp/w3" >"$tmp/w3.out" 2>"$tmp/w3.err" &
w3=$!
PASSFS_WARM=0 "$PASSFS" watch --tasks tests/passes/rank-tasks --state "$tmp/s4" "$tmp/w4" >"$tmp/w4.out" \
	2>"$tmp/w4.err" &
w4=$!
wait_for "$tmp/w3.out" "Ctrl-C" 30; wait_for "$tmp/w4.out" "Ctrl-C" 30; sleep 2
if grep -qs 'counting eager' "$tmp/w3.err" "$tmp/w4.err" || counts_alive tests/passes; then
	bad "counted though turned off"
else
	ok "--no-warm and PASSFS_WARM=0: nothing counted"
fi
off=$(python3 -c 'import json, sys; print([json.load(open(f)).get("eager_model_ahead", "absent") for f in sys.argv[1:]])' \
	"$tmp/w3/summary.json" "$tmp/w4/summary.json" 2>&1)
[ "$off" = "[None, None]" ] && ok "summary.json: eager_model_ahead null when off" || bad "summary.json when off: $off"

kill "$w3" "$w4"; wait "$w3" "$w4" 2>/dev/null

# 4. the mount too (where FUSE works), and nothing left after the unmount
if [ -e /dev/fuse ] && command -v fusermount3 >/dev/null; then
	export PASSFS_CACHE_DIR="$tmp/cache5"
	"$PASSFS" mount --tasks tests/passes/tasks --state "$tmp/s5" "$tmp/m5" >"$tmp/m5.out" 2>&1 ||
		bad "mount: $(cat "$tmp/m5.out")"
	if wait_for "$tmp/s5/mount.log" "is ready for all 1 task" 120; then ok "mount: counted ahead (mount.log)"; else
		bad "mount: $(tail -n 3 "$tmp/s5/mount.log" 2>&1)"; fi
	fusermount3 -u "$tmp/m5"
	sleep 1
	counts_alive tests/passes/tasks && bad "a count outlived the mount" || ok "mount: nothing left after the unmount"
	# -o no_warm, beside --wait-timeout (its own option)
	"$PASSFS" mount -o no_warm --wait-timeout 3 --tasks tests/passes/tasks --state "$tmp/s6" "$tmp/m6" \
		>"$tmp/m6.out" 2>&1 || bad "mount -o no_warm: $(cat "$tmp/m6.out")"
	sleep 2
	if grep -qs 'counting eager' "$tmp/s6/mount.log" || counts_alive tests/passes/tasks; then
		bad "mount -o no_warm counted"
	else
		ok "mount -o no_warm: nothing counted"
	fi
	fusermount3 -u "$tmp/m6"
fi
finish
