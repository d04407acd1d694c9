#!/usr/bin/env bash
# history.sh - `passfs history export`: one JSON line per evaluated pass.
#
# Makes three evaluations through `passfs watch` (a compile error, a correct
# pass, the correct pass again: answered from history), then exports the state
# directory and checks: one parseable line per history entry, in seq order,
# each with the pass source whose sha256 is pass_sha256, a verdict, a score
# and per-variant records; --task filters; '--out -' writes to stdout; a bad
# task is exit 1, a missing --out exit 2.
#
#   PASSFS=build/passfs bash tests/cli/history.sh
set -uo pipefail
PASSFS=${PASSFS:-./build/passfs}
PY=/usr/bin/python3
TASKS=tests/passes/tasks
ID=tiny_bias_gelu
tmp=$(mktemp -d)
W=$tmp/w
T=$W/$ID
pid=
fails=0
passes=0

cleanup() {
	if [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null; then
		kill -TERM "$pid"
		wait "$pid"
	fi
	rm -rf "$tmp"
}
trap cleanup EXIT

ok() { echo "ok   $*"; passes=$((passes + 1)); }
fail() { echo "FAIL $*"; fails=$((fails + 1)); }

wait_result() { # SEQ: until result.json is evaluation SEQ of pass.c's bytes, done
	local sha
	sha=$(sha256sum "$T/pass.c" | cut -c1-64)
	for _ in $(seq 1 1200); do
		if [ "$(cat "$T/status" 2>/dev/null)" = done ] && grep -q "\"pass_sha256\": \"$sha\"" "$T/result.json" &&
			grep -q "^  \"seq\": $1,\$" "$T/result.json"; then
			return 0
		fi
		sleep 0.1
	done
	fail "no result $1 for $sha: $(head -c 300 "$T/result.json")"
	exit 1
}

"$PASSFS" watch --quiet --tasks "$TASKS" --state "$tmp/state" --backend cpu --trials 1 --warmup 0 "$W" 2>"$tmp/err" &
pid=$!
for _ in $(seq 1 200); do
	[ -s "$T/status" ] && break
	sleep 0.05
done
n=0
for p in compile_error.c ok_fused.c ok_fused.c; do
	cp "tests/passes/$p" "$T/pass.c"
	n=$((n + 1))
	wait_result $n
done
kill -TERM "$pid"
wait "$pid"
pid=

out=$tmp/h.jsonl
# a mount's state directory holds its log beside the task directories
echo "a log line" >"$tmp/state/mount.log"
if "$PASSFS" history export --state "$tmp/state" --out "$out" 2>"$tmp/err"; then
	ok "export: exit 0 ($(cat "$tmp/err"))"
else
	fail "export: $(cat "$tmp/err")"
fi
$PY - "$out" tests/passes <<'EOF' && ok "3 lines, parseable, sources and fields" || fail "export content"
import hashlib, json, sys
lines = open(sys.argv[1]).read().splitlines()
assert len(lines) == 3, len(lines)
rows = [json.loads(l) for l in lines]
assert [r["seq"] for r in rows] == [1, 2, 3], [r["seq"] for r in rows]
want = [open(sys.argv[2] + "/" + p).read() for p in ("compile_error.c", "ok_fused.c", "ok_fused.c")]
for r, src in zip(rows, want):
    assert r["task"] == "tiny_bias_gelu"
    assert r["pass"] == src
    assert r["pass_sha256"] == hashlib.sha256(src.encode()).hexdigest()
    assert r["time"].endswith("Z") and r["time"][4] == "-" and "T" in r["time"], r["time"]
    assert isinstance(r["score"], float) and len(r["variants"]) == 6
    for v in r["variants"]:
        assert set(v) == {"name", "verdict", "speedup", "min_t"}, v
assert rows[0]["verdict"] == "compile_error" and rows[0]["score"] == 0.1
assert all(v["speedup"] is None and v["min_t"] is None for v in rows[0]["variants"])
assert rows[1]["verdict"] == "ok" and all(v["speedup"] > 0 for v in rows[1]["variants"])
assert rows[2]["reused_from"] == 2 and "reused_from" not in rows[1]
assert rows[2]["score"] == rows[1]["score"]
EOF

n=$("$PASSFS" history export --state "$tmp/state" --task "$ID" --out - 2>/dev/null | wc -l)
[ "$n" = 3 ] && ok "--task $ID --out -: 3 lines" || fail "--task --out -: $n lines"
"$PASSFS" history export --state "$tmp/state" --task no_such_task --out "$tmp/x.jsonl" 2>"$tmp/err"
rc=$?
[ $rc -eq 1 ] && grep -q no_such_task "$tmp/err" && [ ! -e "$tmp/x.jsonl" ] && ok "unknown task: exit 1" ||
	fail "unknown task: exit $rc, $(cat "$tmp/err")"
"$PASSFS" history export --state "$tmp/state" 2>/dev/null
[ $? -eq 2 ] && ok "no --out: exit 2" || fail "no --out: not exit 2"
"$PASSFS" history 2>/dev/null
[ $? -eq 2 ] && ok "no subcommand: exit 2" || fail "no subcommand: not exit 2"

echo "history.sh: $passes passed, $fails failed"
[ $fails -eq 0 ]
