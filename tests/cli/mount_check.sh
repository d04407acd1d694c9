#!/usr/bin/env bash
# The quick check (docs/mount.md, "check.c"): writing <task>/check.c checks
# those bytes - compiled, run on every variant's public and secret inputs,
# nothing timed - into <task>/check.json, and touches nothing of pass.c's:
# result.json, es_t, summary.json and the history stay as they were.  In the
# mount a read of check.json after the write waits for the check; a write in
# place, a rename onto check.c (sed -i) and each verdict (ok, mismatch,
# compile_error with its log) are checked; then the same in watch mode,
# where check.json is polled.
NAME=mount_check
. tests/lib/cli.sh
. tests/lib/mount.sh
T=tests/passes/tasks
TASK=tiny_bias_gelu
D=$MNT/$TASK

out=$("$PASSFS" mount --tasks "$T" --state "$STATE" --backend cpu --trials 1 --warmup 0 "$MNT" 2>"$tmp/mount.err") ||
	{ bad "mount: $(cat "$tmp/mount.err")"; finish; exit; }
daemon=$(echo "$out" | sed -n 's/.*daemon pid \([0-9]*\).*/\1/p' | head -1)

# One python for the whole sequence: each step prints "ok ..." or "FAIL ...".
# $1 the task directory, $2 "mount" (check.json waits) or "watch" (poll it).
run_checks() {
	python3 - "$1" "$2" >"$tmp/py.out" 2>&1 <<'PY'
import hashlib, json, os, subprocess, sys, time
d, mode = sys.argv[1], sys.argv[2]
root = os.path.dirname(d)
def ok(m): print("ok   %s: %s" % (mode, m))
def bad(m): print("FAIL %s: %s" % (mode, m))
def snap():
    return {f: open(os.path.join(d, f), "rb").read() for f in ("result.json", "es_t")} | \
           {"summary.json": open(os.path.join(root, "summary.json"), "rb").read()}
def check_json(src):
    """check.json once it judges these bytes (the mount: the first read
    waits; watch: polled)"""
    sha = hashlib.sha256(src).hexdigest()
    deadline = time.monotonic() + 60
    while True:
        try:
            j = json.load(open(os.path.join(d, "check.json")))
        except (OSError, ValueError) as e:
            j = {"error": str(e)}
        if j.get("state") == "done" and j.get("check_sha256") == sha:
            return j
        if mode == "mount" or time.monotonic() > deadline:
            return j
        time.sleep(0.05)
def write(name, src):
    with open(os.path.join(d, name), "wb") as f:
        f.write(src)

j = json.load(open(os.path.join(d, "check.json")))
if j.get("state") == "idle" and "check.c" in j.get("message", ""):
    ok("before any check, check.json says idle and names check.c")
else:
    bad("check.json before any check: %s" % j)

before = snap()
src = open("tests/passes/ok_fused.c", "rb").read()
t = time.monotonic()
write("check.c", src)
j = check_json(src)
took = time.monotonic() - t
vs = j.get("variants", [])
if j.get("state") == "done" and j.get("worst") == "ok" and len(vs) == 6 and \
        all(v["verdict"] == "ok" and v["min_t"] is not None and "speedup" not in v for v in vs):
    ok("ok_fused.c as check.c: worst ok, 6 variants ok with their level, nothing timed (%.2f s)" % took)
else:
    bad("ok_fused.c as check.c (%.2f s): %s" % (took, json.dumps(j)[:600]))
if mode == "mount" and j.get("check_seq") != 1:
    bad("the first check's seq is %s" % j.get("check_seq"))

src = open("tests/passes/mismatch_scaled.c", "rb").read()
write("check.c.tmp", src)
os.replace(os.path.join(d, "check.c.tmp"), os.path.join(d, "check.c"))   # a rename onto check.c
j = check_json(src)
if j.get("worst") == "mismatch" and "variant" in j.get("message", "") and \
        any(v["verdict"] == "mismatch" for v in j.get("variants", [])):
    ok("a rename onto check.c is checked: worst mismatch, the message names the variant")
else:
    bad("mismatch_scaled.c renamed onto check.c: %s" % json.dumps(j)[:600])

src = open("tests/passes/compile_error.c", "rb").read()
write("check.c", src)
j = check_json(src)
if j.get("worst") == "compile_error" and "check.c(" in j.get("compile_log", "") and \
        j.get("compile", {}).get("verdict") == "compile_error":
    ok("compile_error.c as check.c: worst compile_error, compile_log names check.c's line")
else:
    bad("compile_error.c as check.c: %s" % json.dumps(j)[:600])

after = snap()
changed = [f for f in before if before[f] != after[f]]
if not changed:
    ok("result.json, es_t and summary.json are byte for byte as before the checks")
else:
    bad("checks changed %s" % changed)
PY
	local rc=$? l
	while IFS= read -r l; do
		case $l in
		"ok   "*) ok "${l#ok   }" ;;
		"FAIL "*) bad "${l#FAIL }" ;;
		*) echo "     $l" ;;
		esac
	done <"$tmp/py.out"
	[ $rc -eq 0 ] || bad "$2: the python steps exited $rc"
}
run_checks "$D" mount
hist=$(find "$STATE/$TASK/history" -type f 2>/dev/null | wc -l)
[ "$hist" -eq 0 ] && ok "mount: no history entry from checks" || bad "mount: checks left $hist history files"
[ ! -e "$STATE/$TASK/result.json" ] && ok "mount: no result.json in the state directory from checks" ||
	bad "mount: a check wrote the state directory's result.json"

# pass.c and check.c side by side: a check after an evaluation leaves its result
cp tests/passes/ok_fused.c "$D/pass.c"
r1=$(cat "$D/result.json"); e1=$(cat "$D/es_t")
cp tests/passes/mismatch_scaled.c "$D/check.c"
w=$(python3 -c "import json,sys; print(json.load(open(sys.argv[1]))['worst'])" "$D/check.json")
r2=$(cat "$D/result.json"); e2=$(cat "$D/es_t")
if [ "$w" = mismatch ] && [ "$r1" = "$r2" ] && [ "$e1" = "$e2" ] && [ -n "$e1" ] &&
	echo "$r1" | grep -q '"verdict": "ok"'; then
	ok "mount: a check after pass.c's evaluation: check.json mismatch, result.json and es_t unchanged"
else
	bad "mount: check after evaluation: worst=$w es_t '$e1' -> '$e2', result changed: $([ "$r1" = "$r2" ] && echo no || echo yes)"
fi
grep -q '`<task>/check.json`' "$MNT/README.md" && grep -q 'check.c' "$MNT/README.md" &&
	ok "mount: the README names check.c and check.json" || bad "mount: the README does not name check.c/check.json"

# watch mode
W=$tmp/w
watch_beside "$W" --tasks "$T" --state "$tmp/wstate" --backend cpu --trials 1 --warmup 0
run_checks "$W/$TASK" watch
hist=$(find "$tmp/wstate/$TASK/history" -type f 2>/dev/null | wc -l)
[ "$hist" -eq 0 ] && ok "watch: no history entry from checks" || bad "watch: checks left $hist history files"
finish
