#!/usr/bin/env bash
# The evaluation process's protocol (engine/eval/evaluator.c), spoken from
# outside by a client written here from the documented layout, not with
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

out=$(timeout 60 python3 - "$PASSFS" <<'PY' 2>&1
import os, socket, struct, sys, time
passfs = sys.argv[1]
graph = open("tests/passes/tasks/tiny_bias_gelu/graph.json", "rb").read()
spin = open("tests/passes/timeout_spin.c", "rb").read()
a, b = socket.socketpair()
# the process reads descriptor 3: dup the socket there in the child
pid = os.fork()
if pid == 0:
    os.dup2(b.fileno(), 3)
    os.execv(passfs, [passfs, "--passfs-evaluator"])
b.close()
def msg(t, payload=b""):
    return t + struct.pack("<I", len(payload)) + payload
strs = [b"cpu", b"pass.c", b"graph.json", graph, spin]
q = struct.pack("<6i", 1, 2, 0, 1, 0, 0) + struct.pack("<4d", 20.0, 0.1, 0.0, 600.0) + struct.pack("<Q", 7)
for s in strs:
    q += struct.pack("<I", len(s)) + s
a.sendall(struct.pack("<II", 0x70667665, 4) + msg(b"Q", q))
def recv(n):
    d = b""
    while len(d) < n:
        c = a.recv(n - len(d))
        if not c:
            raise SystemExit("FAIL the stream ended early after %r" % d)
        d += c
    return d
phases = []
t0 = None
while True:
    t, n = recv(1), struct.unpack("<I", recv(4))[0]
    body = recv(n)
    if t == b"P":
        phases.append(body.decode())
        if body == b"running":
            a.sendall(msg(b"Z", b"a newer caller's message"))   # skipped
            a.sendall(msg(b"C"))
            t0 = time.time()
        continue
    assert t == b"R", t
    rc, mn = struct.unpack("<iI", body[:8])
    text = body[8:8 + mn].decode()
    took = time.time() - t0 if t0 else -1
    _, st = os.waitpid(pid, 0)
    print("phases=%s rc=%d message=%s took=%.1f exit=%d" % (",".join(phases), rc, text, took, os.waitstatus_to_exitcode(st)))
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
out=$(timeout 120 python3 - "$PASSFS" <<'PY' 2>&1
import json, os, socket, struct, sys
passfs = sys.argv[1]
graph = open("tests/passes/tasks/tiny_bias_gelu/graph.json", "rb").read()
ok = open("tests/passes/ok_fused.c", "rb").read()
a, b = socket.socketpair()
pid = os.fork()
if pid == 0:
    os.dup2(b.fileno(), 3)
    os.execv(passfs, [passfs, "--passfs-evaluator"])
b.close()
def msg(t, payload=b""):
    return t + struct.pack("<I", len(payload)) + payload
q = struct.pack("<6i", 0, 5, 0, 1, 0, 1) + struct.pack("<4d", 20.0, 0.1, 0.0, 600.0) + struct.pack("<Q", 7)
for s in [b"cpu", b"check.c", b"graph.json", graph, ok]:
    q += struct.pack("<I", len(s)) + s
a.sendall(struct.pack("<II", 0x70667665, 4) + msg(b"Q", q))
data = b""
while True:
    c = a.recv(65536)
    if not c:
        break
    data += c
os.waitpid(pid, 0)
i = 0
while i < len(data):
    t, n = data[i:i + 1], struct.unpack("<I", data[i + 1:i + 5])[0]
    body = data[i + 5:i + 5 + n]
    i += 5 + n
    if t == b"R":
        rc, mn = struct.unpack("<iI", body[:8])
        doc = json.loads(body[12 + mn:])
        vs = doc["variants"]
        print("rc=%d verdict=%s variants=%d all_ok=%s timed=%s" % (rc, doc["verdict"], len(vs),
              all(v["verdict"] == "ok" and v["min_t"] is not None for v in vs),
              any(v.get("trials") or v.get("eager_ms") for v in vs)))
PY
)
if printf '%s' "$out" | grep -qE '^rc=0 verdict=ok variants=6 all_ok=True timed=False$'; then
	ok "check_only: every variant judged, none timed: $out"
else
	bad "check_only: '$out'"
fi
finish
