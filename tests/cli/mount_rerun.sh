#!/usr/bin/env bash
# The rerun trigger (docs/mount.md, "When an evaluation fires"): a save of
# <task>/rerun evaluates the current pass.c again although its bytes were
# evaluated before - a new seq, a history entry, "rerun": true and
# "rerun_of" naming the latest result of the same bytes - while writing back the same bytes
# is still answered from history ("reused_from").  In the mount a read of
# result.json after the save waits for the rerun; `echo >`, `: >` and a
# rename onto rerun each fire one; then the same in watch mode, polled.
NAME=mount_rerun
. tests/lib/cli.sh
. tests/lib/mount.sh
T=tests/passes/tasks
TASK=tiny_bias_gelu

out=$("$PASSFS" mount --tasks "$T" --state "$STATE" --backend cpu --trials 1 --warmup 0 "$MNT" 2>"$tmp/mount.err") ||
	{ bad "mount: $(cat "$tmp/mount.err")"; finish; exit; }
daemon=$(echo "$out" | sed -n 's/.*daemon pid \([0-9]*\).*/\1/p' | head -1)

# $1 the task directory, $2 its history directory, $3 "mount" or "watch"
run_reruns() {
	python3 - "$1" "$2" "$3" >"$tmp/py.out" 2>&1 <<'PY'
import json, os, shutil, sys, time
d, hist, mode = sys.argv[1:4]
def ok(m): print("ok   %s: %s" % (mode, m))
def bad(m): print("FAIL %s: %s" % (mode, m))
def result(seq):
    """result.json once it holds evaluation seq (the mount: the read waits)"""
    deadline = time.monotonic() + 120
    while True:
        try:
            j = json.load(open(os.path.join(d, "result.json")))
            if j.get("seq") == seq and j.get("verdict"):
                return j
        except (OSError, ValueError):
            pass
        if time.monotonic() > deadline:
            return None
        time.sleep(0.2)
def entries():
    return len([f for f in os.listdir(hist)]) if os.path.isdir(hist) else 0
shutil.copyfile("tests/passes/ok_fused.c", os.path.join(d, "pass.c"))
r1 = result(1)
if r1 is None or r1["verdict"] != "ok":
    bad("the first evaluation: %s" % (r1 and r1.get("verdict")))
    sys.exit()
ok("seq 1 ok, score %.3f" % r1["score"])
seq = 1
for how in ("echo", "truncate", "rename"):
    trig = os.path.join(d, "rerun")
    if how == "echo":
        open(trig, "w").write("\n")
    elif how == "truncate":
        open(trig, "w").close()     # `: > rerun`: O_TRUNC, nothing written
    else:
        tmpf = os.path.join(d, "rerun.tmp")
        open(tmpf, "w").write("again\n")
        os.rename(tmpf, trig)
    seq += 1
    r = result(seq)
    if r is None:
        bad("%s: no result with seq %d" % (how, seq))
        continue
    if r.get("rerun") is True and r.get("rerun_of") == seq - 1 and "reused_from" not in r and r["verdict"] == "ok":
        ok("%s: seq %d evaluated again (rerun_of %d, score %.3f)" % (how, seq, seq - 1, r["score"]))
    else:
        bad("%s: seq %d: rerun %r rerun_of %r reused_from %r verdict %r" % (
            how, seq, r.get("rerun"), r.get("rerun_of"), r.get("reused_from"), r.get("verdict")))
    # the runs are distinct evaluations: their own timings
    if r.get("elapsed_ms") == r1.get("elapsed_ms") and r.get("score") == r1.get("score"):
        bad("%s: seq %d has seq 1's numbers exactly" % (how, seq))
# the same bytes written back: still answered from history, at once
shutil.copyfile("tests/passes/ok_fused.c", os.path.join(d, "pass.c"))
seq += 1
r = result(seq)
if r is not None and r.get("reused_from") == seq - 1 and "rerun" not in r and "rerun_of" not in r:
    ok("the same bytes written back: answered from seq %d" % r["reused_from"])
else:
    bad("the same bytes written back: %r" % (r and {k: r.get(k) for k in ("seq", "reused_from", "rerun")}))
n = entries()
if n >= 4:
    ok("%d history entries (the first and three reruns at least)" % n)
else:
    bad("%d history entries, want at least 4" % n)
PY
	relay "$tmp/py.out"
}

run_reruns "$MNT/$TASK" "$STATE/$TASK/history" mount
# the trajectory tells the reruns apart: rerun_of on seqs 2-4 only
"$PASSFS" history export --state "$STATE" --task "$TASK" --out - >"$tmp/hist.jsonl" 2>"$tmp/hist.err" ||
	bad "history export: $(cat "$tmp/hist.err")"
got=$(python3 -c '
import json, sys
print(" ".join("%d:%s" % (j["seq"], j.get("rerun_of", "-")) for j in map(json.loads, open(sys.argv[1]))))' "$tmp/hist.jsonl")
[ "$got" = "1:- 2:1 3:2 4:3 5:-" ] && ok "history export: seq:rerun_of $got" || bad "history export: seq:rerun_of '$got'"

# watch mode
W=$tmp/w
watch_beside "$W" --tasks "$T" --state "$tmp/wstate" --backend cpu --trials 1 --warmup 0
run_reruns "$W/$TASK" "$tmp/wstate/$TASK/history" watch
finish
