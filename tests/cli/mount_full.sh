#!/usr/bin/env bash
# passfs mount with its state directory on a full file system (a small tmpfs,
# filled up): a save of pass.c is refused at close() with ENOSPC (cp says "No
# space left on device") instead of succeeding on bytes that will never be
# evaluated; result.json keeps the older result, stale, with save_error
# saying why; pass.c still reads the new bytes; once there is room, the next
# save is evaluated and save_error is gone.  Skips without /dev/fuse, or
# where a tmpfs cannot be mounted (not root).
NAME=mount_full
. tests/lib/cli.sh
. tests/lib/mount.sh
T=tests/passes/tasks
TASK=tiny_bias_gelu
D=$MNT/$TASK

FS=$tmp/statefs
mkdir -p "$FS"
if ! mount -t tmpfs -o size=1m tmpfs "$FS" 2>/dev/null; then
	echo "SKIP mount_full: cannot mount a small tmpfs here (needs root)"
	exit 0
fi
mount_cleanup_more() { umount "$FS" 2>/dev/null; }
STATE=$FS/state

out=$("$PASSFS" mount --tasks "$T" --state "$STATE" --backend cpu --trials 1 --warmup 0 --timeout 5 \
	--wait-timeout 60 "$MNT" 2>"$tmp/mount.err")
daemon=$(printf '%s\n' "$out" | sed -n 's/.*daemon pid \([0-9]*\).*/\1/p' | head -1)
if [ -z "$daemon" ]; then
	bad "mount: $(cat "$tmp/mount.err")"
	finish
	exit 1
fi
json() { # python condition on r (result.json)
	python3 -c "import json,sys; r=json.load(open(sys.argv[1])); sys.exit(0 if ($1) else 1)" "$D/result.json"
}

cp tests/passes/ok_fused.c "$D/pass.c"
json "r['verdict'] == 'ok' and 'save_error' not in r" && ok "with room: evaluated" || bad "first pass: $(head -c 300 "$D/result.json")"

# fill the state's file system
dd if=/dev/zero of="$FS/filler" bs=4k 2>/dev/null
if cp tests/passes/compile_error.c "$D/pass.c" 2>"$tmp/cp.err"; then
	bad "a save to a full state disk: cp succeeded"
elif grep -q 'No space left on device' "$tmp/cp.err"; then
	ok "a save to a full state disk: cp fails ($(head -1 "$tmp/cp.err"))"
else
	bad "a save to a full state disk: $(cat "$tmp/cp.err")"
fi
st=$(cat "$D/status")
[ "$st" = done ] && ok "status: done (nothing is pending)" || bad "status: $st"
json "r['verdict'] == 'ok' and r.get('stale') is True and 'could not be saved' in r.get('save_error', '') and
      'No space left on device' in r['save_error']" &&
	ok "result.json: the older result, stale, with save_error" || bad "result.json: $(head -c 600 "$D/result.json")"
cmp -s tests/passes/compile_error.c "$D/pass.c" && ok "pass.c holds the new bytes" || bad "pass.c lost the new bytes"

# room again: the next save is evaluated
rm -f "$FS/filler"
if cp tests/passes/compile_error.c "$D/pass.c" 2>"$tmp/cp.err"; then
	json "r['verdict'] == 'compile_error' and 'save_error' not in r and not r.get('stale')" &&
		ok "room again: the save is evaluated, save_error gone" || bad "after: $(head -c 400 "$D/result.json")"
else
	bad "room again: cp failed: $(cat "$tmp/cp.err")"
fi
finish
