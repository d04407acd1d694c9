#!/usr/bin/env bash
# Agent editor tools against a real mount, replayed call for call
# (tests/cli/editors/replay.py: OpenHands' OHEditor and SWE-agent's
# str_replace_editor, reproduced from their sources): a view of pass.c shows
# its bytes and fires nothing; a str_replace in pass.c by each tool fires
# exactly one evaluation of exactly the edited bytes; an insert (a temporary
# file moved onto pass.c) fires one; while a pass spins, OHEditor's view of
# result.json returns within 25 s (one --wait-timeout, 20 s, the default)
# and its view of es_t and SWE-agent's (a new process) raise no OSError;
# OHEditor's create of check.c is checked into check.json, and a
# str_replace in check.c is checked again.
NAME=mount_editors
. tests/lib/cli.sh
. tests/lib/mount.sh
T=tests/passes/tasks
TASK=tiny_bias_gelu
D=$MNT/$TASK
REPLAY=tests/cli/editors/replay.py

out=$("$PASSFS" mount --tasks "$T" --state "$STATE" --backend cpu --trials 1 --warmup 0 --timeout 60 \
	"$MNT" 2>"$tmp/mount.err") || { bad "mount: $(cat "$tmp/mount.err")"; finish; exit; }
daemon=$(echo "$out" | sed -n 's/.*daemon pid \([0-9]*\).*/\1/p' | head -1)

history_count() { ls "$STATE/$TASK/history/"*.json 2>/dev/null | wc -l; }
# steps JSON -> the replay's lines in $tmp/steps.out
replay() { python3 "$REPLAY" "$1" >"$tmp/steps.out" 2>&1; }
# field N KEY: KEY of the replay's Nth line (1-based)
field() { sed -n "${1}p" "$tmp/steps.out" | python3 -c "import json,sys; print(json.load(sys.stdin).get('$2'))"; }
steps() { # python expression -> JSON (paths and file texts quoted by python)
	D="$D" python3 -c "import json, os; D=os.environ['D']; print(json.dumps($1))"
}
result_is() { # sha verdict: result.json (waits) judges these bytes with this verdict
	python3 -c "import json,sys; r=json.load(open(sys.argv[1])); sys.exit(0 if r['pass_sha256']==sys.argv[2] and r['verdict']==sys.argv[3] else 1)" \
		"$D/result.json" "$1" "$2"
}

# ---- view pass.c: its bytes, no evaluation
before=$(history_count)
replay "$(steps '[["oh", "view", D + "/pass.c", {}], ["swe", "view", D + "/pass.c", {}]]')"
want=$(python3 -c "import sys; print(repr(open(sys.argv[1]).read()))" "$D/pass.c")
if [ "$(field 1 ok)" = True ] && [ "$(field 2 ok)" = True ] &&
	[ "$(sed -n 1p "$tmp/steps.out" | python3 -c "import json,sys; print(repr(json.load(sys.stdin)['out']))")" = "$want" ]; then
	ok "OHEditor and SWE-agent view pass.c: its bytes"
else
	bad "view pass.c: $(cat "$tmp/steps.out" | cut -c1-200)"
fi
sleep 0.5
[ "$(history_count)" -eq "$before" ] && ok "viewing pass.c fires nothing" || bad "viewing pass.c fired $(($(history_count) - before))"

# ---- a known pass, then str_replace by each tool: one evaluation each, the edited bytes
cp tests/passes/ok_fused.c "$D/pass.c"
cat "$D/result.json" >/dev/null
str_replace() { # tool old new label
	local before sha
	before=$(history_count)
	replay "$(steps "[[\"$1\", \"str_replace\", D + \"/pass.c\", {\"old_str\": \"$2\", \"new_str\": \"$3\"}]]")"
	# the edit as the tool makes it (SWE-agent expands the file's tabs)
	python3 -c "import sys; t, o, n = sys.argv[1:4]; s = open(sys.argv[4]).read()
s = s.expandtabs() if t == 'swe' else s
open(sys.argv[5], 'w').write(s.replace(o, n, 1))" "$1" "$2" "$3" "$tmp/prev.c" "$tmp/expect.c"
	sha=$(sha256sum "$tmp/expect.c" | cut -c1-64)
	if [ "$(field 1 ok)" != True ]; then
		bad "$4: $(cat "$tmp/steps.out")"
		return
	fi
	cmp -s "$D/pass.c" "$tmp/expect.c" && ok "$4: pass.c holds exactly the edited bytes" ||
		bad "$4: pass.c differs from the edit: $(diff "$tmp/expect.c" "$D/pass.c" | head -5)"
	result_is "$sha" ok && ok "$4: result.json judges the edited bytes (ok)" ||
		bad "$4: result.json: $(head -c 300 "$D/result.json")"
	sleep 0.5       # a second, late evaluation would show here
	local n=$(($(history_count) - before))
	[ $n -eq 1 ] && ok "$4: exactly one evaluation" || bad "$4: $n evaluations"
	cp "$D/pass.c" "$tmp/prev.c"
}
cp tests/passes/ok_fused.c "$tmp/prev.c"
str_replace oh "(n + 255) / 256)), block = pf_dim(256)" "(n + 127) / 128)), block = pf_dim(128)" "OHEditor str_replace in pass.c"
str_replace swe "(n + 127) / 128)), block = pf_dim(128)" "(n + 63) / 64)), block = pf_dim(64)" "SWE-agent str_replace in pass.c"

# insert: a temporary file elsewhere, moved onto pass.c
before=$(history_count)
replay "$(steps '[["oh", "insert", D + "/pass.c", {"insert_line": 0, "new_str": "// inserted by OHEditor"}]]')"
{ echo "// inserted by OHEditor"; cat "$tmp/prev.c"; } >"$tmp/expect.c"
if [ "$(field 1 ok)" = True ] && cmp -s "$D/pass.c" "$tmp/expect.c" &&
	result_is "$(sha256sum "$tmp/expect.c" | cut -c1-64)" ok; then
	sleep 0.5
	n=$(($(history_count) - before))
	[ $n -eq 1 ] && ok "OHEditor insert (a temporary file moved onto pass.c): the bytes, one evaluation" ||
		bad "OHEditor insert: $n evaluations"
else
	bad "OHEditor insert: $(cat "$tmp/steps.out" | cut -c1-300)"
fi

# ---- views during an evaluation (a pass that spins until --timeout)
cp tests/passes/timeout_spin.c "$D/pass.c"
replay "$(steps '[["oh", "view", D + "/result.json", {}], ["oh", "view", D + "/es_t", {}]]')"
secs=$(field 1 secs)
if [ "$(field 1 ok)" = True ] && python3 -c "import sys; sys.exit(0 if float(sys.argv[1]) <= 25 else 1)" "$secs"; then
	ok "OHEditor view of result.json during an evaluation returns in $secs s (<= 25)"
else
	bad "OHEditor view of result.json during an evaluation: $(sed -n 1p "$tmp/steps.out" | cut -c1-300)"
fi
[ "$(field 2 ok)" = True ] && ok "OHEditor view of es_t during the evaluation: no OSError ($(field 2 secs) s)" ||
	bad "OHEditor view of es_t: $(sed -n 2p "$tmp/steps.out")"
replay "$(steps '[["swe", "view", D + "/es_t", {}]]')"
[ "$(field 1 ok)" = True ] && python3 -c "import sys; sys.exit(0 if float(sys.argv[1]) <= 25 else 1)" "$(field 1 secs)" &&
	ok "SWE-agent view of es_t (a new process) during the evaluation: no OSError, $(field 1 secs) s" ||
	bad "SWE-agent view of es_t: $(cat "$tmp/steps.out")"

# ---- create check.c, then str_replace in it: each checked
replay "$(steps '[["oh", "create", D + "/check.c", {"file_text": open("tests/passes/ok_fused.c").read()}]]')"
check_is() { # sha worst
	python3 -c "import json,sys; r=json.load(open(sys.argv[1])); sys.exit(0 if r.get('check_sha256')==sys.argv[2] and r.get('worst')==sys.argv[3] else 1)" \
		"$D/check.json" "$1" "$2"
}
[ "$(field 1 ok)" = True ] && check_is "$(sha256sum tests/passes/ok_fused.c | cut -c1-64)" ok &&
	ok "OHEditor create check.c: check.json judges it ok" || bad "OHEditor create check.c: $(cat "$tmp/steps.out") $(head -c 300 "$D/check.json")"
replay "$(steps '[["swe", "str_replace", D + "/check.c", {"old_str": "0.5f * v * (1.0f", "new_str": "0.6f * v * (1.0f"}]]')"
[ "$(field 1 ok)" = True ] && check_is "$(sha256sum "$D/check.c" | cut -c1-64)" mismatch &&
	ok "SWE-agent str_replace in check.c: checked again, mismatch" || bad "SWE-agent str_replace in check.c: $(cat "$tmp/steps.out") $(head -c 300 "$D/check.json")"
finish
