#!/usr/bin/env bash
# fsync(2) of pass.c on a mount (docs/mount.md): the bytes written so far
# are durable in the state directory when fsync returns, without an
# evaluation (that comes with the close).  Written and fsynced, then the
# daemon is SIGKILLed before the close: STATE/<id>/pass.c holds those bytes,
# nothing was evaluated, and the next mount evaluates them.
NAME=mount_fsync
source "$(dirname "$0")/../lib/cli.sh"
source "$(dirname "$0")/../lib/mount.sh"
T=tests/passes/tasks
TASK=tiny_bias_gelu

mount_it() {
	"$PASSFS" mount --tasks "$T" --state "$STATE" --backend cpu --trials 1 --warmup 0 --wait-timeout 60 "$MNT" \
		2>"$tmp/mount.err" | sed -n 's/.*daemon pid \([0-9]*\).*/\1/p' | head -1
}
daemon=$(mount_it)
[ -n "$daemon" ] || { bad "mount: $(cat "$tmp/mount.err")"; finish; }

sed 's|^|/* fsynced */ |;1!s|^/\* fsynced \*/ ||' tests/passes/ok_fused.c >"$tmp/want.c"
# write and fsync, then hold the file open until the daemon is killed
/usr/bin/python3 - "$MNT/$TASK/pass.c" "$tmp/want.c" "$tmp/synced" <<'PY' &
import os, sys, time
fd = os.open(sys.argv[1], os.O_WRONLY | os.O_TRUNC)
os.write(fd, open(sys.argv[2], "rb").read())
os.fsync(fd)
open(sys.argv[3], "w").close()
time.sleep(30)          # never closed: the daemon dies first
PY
writer=$!
for _ in $(seq 1 100); do [ -e "$tmp/synced" ] && break; sleep 0.05; done
[ -e "$tmp/synced" ] && ok "fsync of pass.c returned" || bad "fsync did not return"
if cmp -s "$STATE/$TASK/pass.c" "$tmp/want.c"; then ok "the fsynced bytes are in the state directory before the close"
else bad "state pass.c: $(head -c 100 "$STATE/$TASK/pass.c" 2>&1)"; fi
n=$(ls "$STATE/$TASK/history/"*.json 2>/dev/null | wc -l)
[ "$n" -eq 0 ] && ok "fsync evaluated nothing" || bad "$n history entries after fsync alone"

kill -KILL "$daemon"
kill "$writer" 2>/dev/null
wait "$writer" 2>/dev/null
fusermount3 -u "$MNT" 2>/dev/null || umount -l "$MNT" 2>/dev/null
sleep 0.2
daemon=$(mount_it)
[ -n "$daemon" ] || { bad "second mount: $(cat "$tmp/mount.err")"; finish; }
sha=$(sha256sum "$tmp/want.c" | cut -c1-64)
if grep -q "\"pass_sha256\": \"$sha\"" "$MNT/$TASK/result.json" && grep -q '"verdict": "ok"' "$MNT/$TASK/result.json"; then
	ok "the next mount evaluated the fsynced bytes: ok"
else
	bad "after the restart: $(head -c 300 "$MNT/$TASK/result.json")"
fi
finish
