#!/usr/bin/env bash
# The evaluation process's protocol (engine/eval/evaluator.c), spoken from
# outside by a client written from the documented layout (evaluator_client.py), not with
# passfs's own encoder: a request of another protocol version, or something
# that is no request at all, is refused with one line that says which,
# exit status 2, and no evaluation; a well-formed request gets its phases,
# a message of an unknown type is skipped, and a 'C' message stops a pass
# that spins with the answer "cancelled", long before its step limit; a
# request with check_only set (the sixth i32) answers every variant's
# verdict and level with no timing (no trials).
source "$(dirname "$0")/../lib/cli.sh"
# magic "evfp" little-endian, then version 3 (this binary speaks 4)
printf 'evfp\003\000\000\000' >"$tmp/v3"
printf 'hello, evaluator' >"$tmp/junk"
for case in v3 junk; do
	out=$(timeout 10 "$PASSFS" --passfs-evaluator 3<"$tmp/$case" 2>&1 >/dev/null)
	rc=$?
	case $case in
	v3) want="protocol version 3" ;;
	junk) want="protocol version" ;;
	esac
	if [ $rc -eq 2 ] && printf '%s' "$out" | grep -q "$want"; then
		ok "$case: $out"
	else
		bad "$case: exit $rc, '$out' (want 2 and '$want')"
	fi
done

out=$(PYTHONPATH=tests/cli timeout 60 python3 - "$PASSFS" <<'PY' 2>&1
import sys, time
from evaluator_client import Evaluator, result
ev = Evaluator(sys.argv[1])
ev.request(open("tests/passes/tasks/tiny_bias_gelu/graph.json", "rb").read(),
           open("tests/passes/timeout_spin.c", "rb").read())
phases, t0 = [], None
while True:
    t, body = ev.next()
    if t == b"P":
        phases.append(body.decode())
        if body == b"running":
            ev.send(b"Z", b"a newer caller's message")   # skipped
            ev.send(b"C")
            t0 = time.time()
        continue
    assert t == b"R", t
    rc, text, _ = result(body)
    took = time.time() - t0 if t0 else -1
    print("phases=%s rc=%d message=%s took=%.1f exit=%d" % (",".join(phases), rc, text, took, ev.wait()))
    break
PY
)
echo "$out"
if printf '%s' "$out" | grep -qE '^phases=compiling,running rc=-1 message=cancelled took=[0-4]\.[0-9] exit=0$'; then
	ok "a 'C' message cancels a running evaluation: $out"
else
	bad "cancel by message: '$out'"
fi

# check_only: the level of each variant, nothing timed
out=$(PYTHONPATH=tests/cli timeout 120 python3 - "$PASSFS" <<'PY' 2>&1
import json, sys
from evaluator_client import Evaluator, result
ev = Evaluator(sys.argv[1])
ev.request(open("tests/passes/tasks/tiny_bias_gelu/graph.json", "rb").read(),
           open("tests/passes/ok_fused.c", "rb").read(), warmup=0, trials=5, check_only=1, pass_label=b"check.c")
while True:
    t, body = ev.next()
    if t == b"R":
        rc, _, text = result(body)
        doc = json.loads(text)
        vs = doc["variants"]
        print("rc=%d verdict=%s variants=%d all_ok=%s timed=%s" % (rc, doc["verdict"], len(vs),
              all(v["verdict"] == "ok" and v["min_t"] is not None for v in vs),
              any(v.get("trials") or v.get("eager_ms") for v in vs)))
        break
ev.wait()
PY
)
if printf '%s' "$out" | grep -qE '^rc=0 verdict=ok variants=6 all_ok=True timed=False$'; then
	ok "check_only: every variant judged, none timed: $out"
else
	bad "check_only: '$out'"
fi
finish
