#!/usr/bin/env bash
# A read of result.json that comes back before its evaluation ends (the wait
# timed out) says when to read again (docs/result-format.md, "estimate"):
# the first evaluation has nothing to estimate from (null, and why); a later
# one is estimated from the task's previous evaluation, less what has run.
NAME=mount_estimate
. tests/lib/cli.sh
. tests/lib/mount.sh
T=tests/passes/tasks
TASK=tiny_bias_gelu
export PASSFS_CACHE_DIR="$tmp/cache"
# many trials: each evaluation takes seconds, past the 1 s wait
out=$("$PASSFS" mount --tasks "$T" --state "$STATE" --backend cpu --trials 60 --warmup 2 --wait-timeout 1 "$MNT" 2>"$tmp/mount.err") ||
	{ bad "mount: $(cat "$tmp/mount.err")"; finish; exit; }
daemon=$(echo "$out" | sed -n 's/.*daemon pid \([0-9]*\).*/\1/p' | head -1)
python3 - "$MNT/$TASK" >"$tmp/py.out" 2>&1 <<'PY'
import json, os, shutil, sys, time
d = sys.argv[1]
def ok(m): print("ok   " + m)
def bad(m): print("FAIL " + m)
def read():
    return json.load(open(os.path.join(d, "result.json")))
def done(seq, limit=180):
    t0 = time.monotonic()
    while time.monotonic() - t0 < limit:
        j = read()
        if j.get("seq") == seq and j.get("state") == "done":
            return j
    return None
shutil.copyfile("tests/passes/ok_fused.c", os.path.join(d, "pass.c"))
t0 = time.monotonic()
j = read()                      # waits 1 s (--wait-timeout 1), then answers
e = j.get("estimate")
if j.get("state") != "done" and e and e["read_again_in_s"] is None and "no evaluation" in e["based_on"]:
    ok("first evaluation: %s" % e["based_on"])
else:
    bad("first evaluation's early read: state %r estimate %r" % (j.get("state"), e))
r1 = done(1)
took = time.monotonic() - t0
if r1 is None or "estimate" in r1:
    bad("the finished result: %r" % (r1 and r1.get("estimate")))
    sys.exit()
ok("seq 1 done in about %.1f s, no estimate in it" % took)
src = open("tests/passes/ok_fused.c").read() + "\n/* again */\n"
open(os.path.join(d, "pass.c"), "w").write(src)
t1 = time.monotonic()
j = read()
ran = time.monotonic() - t1
e = j.get("estimate")
if j.get("state") == "done" and j.get("seq") == 2:
    bad("seq 2 finished within the 1 s wait: nothing to check")
elif e and isinstance(e.get("read_again_in_s"), int) and "evaluation 1 of this task took" in e["based_on"] \
        and 1 <= e["read_again_in_s"] <= took + 2 and j.get("stale") is True and j.get("pending_seq") == 2:
    ok("a later evaluation's early read: read again in %d s (%s; %.1f s in)" % (e["read_again_in_s"], e["based_on"], ran))
else:
    bad("a later evaluation's early read: %r" % ({k: j.get(k) for k in ("seq", "state", "stale", "pending_seq", "estimate")}))
r2 = done(2)
if r2 is not None and "estimate" not in r2:
    ok("seq 2 done, no estimate in it")
else:
    bad("seq 2: %r" % (r2 and r2.get("estimate")))
PY
relay "$tmp/py.out"
finish
