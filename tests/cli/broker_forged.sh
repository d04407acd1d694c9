#!/usr/bin/env bash
# Answers a front end believes (docs/broker.md, "Signed answers"): anyone
# who can write to the broker can XADD an answer to a job's reply stream.
# A forger here watches the job stream and answers first.  A result whose
# pinned fields are malformed ("verdict": 5, "score": "NaN") is refused
# with or without a key; with PASSFS_BROKER_KEY on the front end, a
# well-formed answer without the key's signature is refused too, and a real
# worker holding the same key is believed.  Skips without redis-server.
source "$(dirname "$0")/../lib/cli.sh"
source "$(dirname "$0")/../lib/broker.sh"
T=tests/passes/tasks
TASK=tiny_bias_gelu
EV=(--tasks "$T" --task "$TASK" --backend cpu --trials 1 --warmup 0 --json)

# forge JSON: answers the next queued job on passfs:jobs:cpu with rc 0 and JSON
forge() {
	local json=$1 id rkey
	for _ in $(seq 100); do
		line=$(rcli --raw XRANGE passfs:jobs:cpu - + COUNT 1 | tr -d '\000' | tr '\n' ' ')
		id=$(printf '%s' "$line" | awk '{for (i = 1; i < NF; i++) if ($i == "id") print $(i + 1)}')
		rkey=$(printf '%s' "$line" | awk '{for (i = 1; i < NF; i++) if ($i == "reply") print $(i + 1)}')
		[ -n "$id" ] && [ -n "$rkey" ] && break
		sleep 0.1
	done
	[ -n "$rkey" ] || return 1
	rcli XDEL passfs:jobs:cpu "$(rcli --raw XRANGE passfs:jobs:cpu - + COUNT 1 | tr -d '\000' | head -1)" >/dev/null
	rcli XADD "$rkey" '*' t R rc 0 msg "" json "$json" worker evil >/dev/null
}

good='{"task": "tiny_bias_gelu", "verdict": "ok", "score": 99.0, "es_t": {"-3": 99.0}, "variants": []}'
bad_json='{"task": "tiny_bias_gelu", "verdict": 5, "score": "NaN", "variants": []}'

# 1: malformed, no key
timeout 60 "$PASSFS" eval "${EV[@]}" --pass tests/passes/ok_fused.c --broker "$BURL" >"$tmp/r1.json" 2>"$tmp/r1.err" &
ev=$!
forge "$bad_json" || bad "no job appeared to forge an answer for"
wait $ev
rc=$?
if [ $rc -ne 0 ] && grep -q "malformed: \"verdict\" is not a verdict" "$tmp/r1.err"; then
	ok "a malformed answer is refused: $(tail -1 "$tmp/r1.err")"
else
	bad "malformed answer: exit $rc, $(cat "$tmp/r1.err" "$tmp/r1.json" | head -c 400)"
fi

# 2: well-formed but unsigned, with a key on the front end
head -c 32 /dev/urandom >"$tmp/broker.key"
chmod 600 "$tmp/broker.key"
PASSFS_BROKER_KEY="$tmp/broker.key" timeout 60 "$PASSFS" eval "${EV[@]}" --pass tests/passes/ok_fused.c \
	--broker "$BURL" >"$tmp/r2.json" 2>"$tmp/r2.err" &
ev=$!
forge "$good" || bad "no job appeared to forge an answer for"
wait $ev
rc=$?
if [ $rc -ne 0 ] && grep -q "not signed with the broker key" "$tmp/r2.err" && ! grep -q '"score": 99' "$tmp/r2.json"; then
	ok "an unsigned answer is refused under a key: $(tail -1 "$tmp/r2.err")"
else
	bad "unsigned answer: exit $rc, $(cat "$tmp/r2.err" "$tmp/r2.json" | head -c 400)"
fi
# the same well-formed forgery is taken without a key (as documented)
timeout 60 "$PASSFS" eval "${EV[@]}" --pass tests/passes/ok_fused.c --broker "$BURL" >"$tmp/r3.json" 2>"$tmp/r3.err" &
ev=$!
forge "$good" || bad "no job appeared to forge an answer for"
wait $ev
if grep -q '"score": 99' "$tmp/r3.json"; then
	ok "without a key a well-formed answer is taken (what the key is for)"
else
	bad "no key: $(head -c 300 "$tmp/r3.json") $(cat "$tmp/r3.err")"
fi

# 3: a real worker with the key is believed
PASSFS_BROKER_KEY="$tmp/broker.key" worker_start w1 --beat 0.5 --lease 5
PASSFS_BROKER_KEY="$tmp/broker.key" timeout 120 "$PASSFS" eval "${EV[@]}" --pass tests/passes/ok_fused.c \
	--broker "$BURL" >"$tmp/r4.json" 2>"$tmp/r4.err"
rc=$?
v=$(python3 -c "import json,sys; r=json.load(open(sys.argv[1])); print(r['verdict'], r.get('worker'))" "$tmp/r4.json" 2>/dev/null)
if [ $rc -eq 0 ] && [ "$v" = "ok w1" ]; then
	ok "a signed answer from a worker with the key: $v"
else
	bad "signed answer: exit $rc, '$v', $(cat "$tmp/r4.err")"
fi
finish
