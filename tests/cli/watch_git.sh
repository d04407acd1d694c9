#!/usr/bin/env bash
# watch_git.sh - git in a task directory of `passfs watch` (plain files on
# disk, inotify on each task directory): git init, add, commit, diff, status
# and log fire no evaluation, nor do files named pass.c in subdirectories
# (.git/ included); git stash, git stash pop and git checkout -- pass.c write
# pass.c and fire exactly one each (counted in the state directory's
# history).
#
#   PASSFS=build/passfs bash tests/cli/watch_git.sh
NAME=watch_git
. tests/lib/cli.sh
TASKS=tests/passes/tasks
ID=tiny_bias_gelu
W=$tmp/w
T=$W/$ID
STATE=$tmp/state
G=(git -c user.email=t@t -c user.name=t -c init.defaultBranch=main -C "$T")
pid=
stop_watcher() {
	if [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null; then
		kill -TERM "$pid"
		wait "$pid"
	fi
	rm -rf "$tmp"
}
trap stop_watcher EXIT

"$PASSFS" watch --tasks "$TASKS" --state "$STATE" --backend cpu --trials 1 --warmup 0 "$W" \
	>"$tmp/out" 2>"$tmp/err" &
pid=$!
for _ in $(seq 1 200); do
	[ -s "$T/status" ] && grep -q 'Ctrl-C' "$tmp/out" && break
	sleep 0.05
done
if ! [ -s "$T/status" ]; then
	bad "watcher did not start: $(cat "$tmp/err")"
	finish
	exit
fi

history_count() { ls "$STATE/$ID/history/"*.json 2>/dev/null | wc -l; }
# settle: until status is done and result.json judges pass.c's bytes (when
# an evaluation is expected), then a second for a stray one.
settle() {
	local sha
	sha=$(sha256sum "$T/pass.c" | cut -c1-64)
	for _ in $(seq 1 600); do
		[ "$(cat "$T/status")" = done ] && grep -q "\"pass_sha256\": \"$sha\"" "$T/result.json" && break
		sleep 0.1
	done
	sleep 1
}
fires() { # N what command...
	local n=$1 what=$2 before after rc
	shift 2
	before=$(history_count)
	"$@" >"$tmp/cmd.out" 2>&1
	rc=$?
	settle
	after=$(history_count)
	if [ $rc -ne 0 ]; then
		bad "$what: exit $rc: $(tail -3 "$tmp/cmd.out")"
	elif [ "$after" -ne $((before + n)) ]; then
		bad "$what: $((after - before)) evaluations, expected $n"
	else
		ok "$what: exit 0, $n evaluation(s)"
	fi
}

fires 1 "cp a pass" cp tests/passes/ok_fused.c "$T/pass.c"
fires 0 "git init" "${G[@]}" init -q
fires 0 "git add pass.c, git commit" sh -c "$(printf '%q ' "${G[@]}") add pass.c && $(printf '%q ' "${G[@]}") commit -q -m first"
committed=$(cat "$T/pass.c")
fires 0 "a file named pass.c in a subdirectory and in .git/" sh -c "mkdir -p '$T/sub' && echo x >'$T/sub/pass.c' && \
	echo y >'$T/.git/pass.c' && mv '$T/sub/pass.c' '$T/sub/pass.c.old' && cp '$T/sub/pass.c.old' '$T/sub/pass.c'"
rm -r "$T/sub" "$T/.git/pass.c"
fires 1 "edit pass.c" sh -c "printf '// edited\n' >>'$T/pass.c'"
edited=$(cat "$T/pass.c")
fires 0 "git diff, git status, git log" sh -c "$(printf '%q ' "${G[@]}") diff && \
	$(printf '%q ' "${G[@]}") status && $(printf '%q ' "${G[@]}") log"
fires 1 "git stash" "${G[@]}" stash
[ "$(cat "$T/pass.c")" = "$committed" ] && ok "after git stash: the committed bytes" || bad "after git stash: pass.c differs"
fires 1 "git stash pop" "${G[@]}" stash pop
[ "$(cat "$T/pass.c")" = "$edited" ] && ok "after git stash pop: the edit" || bad "after git stash pop: pass.c differs"
fires 1 "git checkout -- pass.c" "${G[@]}" checkout -- pass.c
[ "$(cat "$T/pass.c")" = "$committed" ] && ok "after git checkout: the committed bytes" || bad "after git checkout: pass.c differs"
finish
