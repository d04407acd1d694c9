#!/usr/bin/env bash
# One wait per evaluation per process (docs/mount.md): an editor tool's view
# opens result.json (or es_t) several times in one process - OpenHands'
# OHEditor about six times: binary check, line count, read - and each open
# used to wait the whole --wait-timeout, so one view of a running task took
# six timeouts.  Here a pass that spins keeps the task running; one python
# process opens result.json and es_t six times the way OHEditor does (open,
# read a little, close): only the first open waits, the view returns within
# about one timeout, es_t reads as an empty file (never ENODATA).  A new
# process (cat) waits again, and so does the same process for the next
# evaluation.
NAME=mount_wait_once
. tests/lib/cli.sh
. tests/lib/mount.sh
T=tests/passes/tasks
TASK=tiny_bias_gelu
D=$MNT/$TASK
WAIT=2
out=$("$PASSFS" mount --tasks "$T" --state "$STATE" --backend cpu --trials 1 --warmup 0 --timeout 60 \
	--wait-timeout $WAIT "$MNT" 2>"$tmp/mount.err") || { bad "mount: $(cat "$tmp/mount.err")"; finish; exit; }
daemon=$(echo "$out" | sed -n 's/.*daemon pid \([0-9]*\).*/\1/p' | head -1)

cp tests/passes/timeout_spin.c "$D/pass.c"
view() { # the OHEditor open pattern on result.json and es_t, in one process
	python3 - "$D" <<'EOF2'
import os, sys, time
d = sys.argv[1]
t0 = time.monotonic()
times = []
for k in range(6):
    f = ("result.json", "es_t")[k % 2]
    t = time.monotonic()
    with open(os.path.join(d, f), "rb") as fh:   # binary check: a little
        head = fh.read(512)
    with open(os.path.join(d, f), "rb") as fh:   # then the whole file
        body = fh.read()
    if f == "es_t":
        assert body == b"", body                  # empty while running
    times.append(time.monotonic() - t)
total = time.monotonic() - t0
# the next evaluation (a new save, queued behind the spinning one): the
# same process waits again
with open(os.path.join(d, "pass.c"), "a") as fh:
    fh.write("\n/* another save */\n")
t = time.monotonic()
open(os.path.join(d, "result.json"), "rb").read()
again = time.monotonic() - t
print("%.2f %s again %.2f" % (total, " ".join("%.2f" % x for x in times), again))
EOF2
}
r=$(view) || bad "view raised: $r"
total=${r%% *}
echo "     view: $r"
if python3 -c "import sys; t=float(sys.argv[1]); sys.exit(0 if $WAIT - 0.3 <= t <= 2 * $WAIT + 1 else 1)" "$total"; then
	ok "an OHEditor-style view of a running task waits once ($total s with --wait-timeout $WAIT)"
else
	bad "an OHEditor-style view of a running task took $total s (--wait-timeout $WAIT; six waits would be $((6 * 2 * WAIT)))"
fi
again=${r##* }
if python3 -c "import sys; sys.exit(0 if float(sys.argv[1]) >= $WAIT - 0.3 else 1)" "$again"; then
	ok "the same process waits again for the next evaluation ($again s)"
else
	bad "the same process did not wait for the next evaluation ($again s)"
fi
t0=$(date +%s.%N)
cat "$D/result.json" >/dev/null
t1=$(date +%s.%N)
if python3 -c "import sys; sys.exit(0 if float(sys.argv[2]) - float(sys.argv[1]) >= $WAIT - 0.3 else 1)" "$t0" "$t1"; then
	ok "a new process (cat) still waits"
else
	bad "a new process (cat) did not wait: $(python3 -c "import sys; print(float(sys.argv[2]) - float(sys.argv[1]))" "$t0" "$t1") s"
fi
finish
