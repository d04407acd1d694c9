#!/usr/bin/env bash
# es_t.sh - `passfs es-t`: docs/scoring.md check values, --json, b/p
# overrides, and one clear line plus exit 2 for each kind of bad input.
#
#   PASSFS=build/passfs bash tests/cli/es_t.sh
set -euo pipefail

PASSFS=${PASSFS:?set PASSFS to the passfs binary}
PY=/usr/bin/python3
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
failures=0

fail() {
	echo "FAIL: $*" >&2
	failures=$((failures + 1))
}

# expect_score WANT FILE [ARGS...]: the last line of the table is "score WANT".
expect_score() {
	local want=$1 file=$2 out last
	shift 2
	if ! out=$("$PASSFS" es-t "$@" "$file" 2>&1); then
		fail "es-t $* $file exited non-zero: $out"
		return
	fi
	last=$(printf '%s\n' "$out" | tail -n 1)
	[[ $last == "score $want" ]] || fail "es-t $* $file: last line '$last', want 'score $want'"
}

# expect_bad PATTERN FILE [ARGS...]: exit 2, nothing on stdout, and one
# stderr line that matches PATTERN (grep -E).
expect_bad() {
	local pattern=$1 file=$2 rc=0
	shift 2
	"$PASSFS" es-t "$@" "$file" >"$dir/out" 2>"$dir/err" || rc=$?
	if [[ $rc != 2 ]]; then
		fail "es-t $* $file: exit $rc, want 2 (stderr: $(cat "$dir/err"))"
	elif [[ -s $dir/out ]]; then
		fail "es-t $* $file: printed to stdout on bad input: $(cat "$dir/out")"
	elif [[ $(wc -l <"$dir/err") != 1 ]] || ! grep -Eq -- "$pattern" "$dir/err"; then
		fail "es-t $* $file: stderr '$(cat "$dir/err")' does not match '$pattern' in one line"
	fi
}

# write NAME JSON: a records file in the temp dir.
write() {
	printf '%s\n' "$2" >"$dir/$1.json"
}

# ---- check values --------------------------------------------------------
write c1 '{"variants": [{"dtype": "float32", "speedup": 1.5, "status": "ok", "min_t": -5}]}'
write c2 '{"variants": [{"dtype": "float32", "speedup": 1.2, "status": "ok", "min_t": null}]}'
write c2m '{"variants": [{"dtype": "float32", "speedup": 1.2, "status": "mismatch"}]}'
write c3 '{"variants": [{"dtype": "float32", "status": "compile_error"},
                        {"dtype": "float16", "status": "timeout", "speedup": null, "min_t": "none"}]}'
write eager '{"variants": [{"dtype": "float32", "speedup": 1, "status": "ok", "min_t": -10},
                           {"dtype": "int64", "speedup": 1, "status": "ok", "min_t": -10}]}'
expect_score 1.496595 "$dir/c1.json"
expect_score 0.147207 "$dir/c2.json"
expect_score 0.147207 "$dir/c2m.json"
expect_score 0.100000 "$dir/c3.json"
expect_score 1.000000 "$dir/eager.json"
expect_score 1.496595 - <"$dir/c1.json"

# The table: 15 lines t=-10..4 then the score, ES_t to 6 decimals.
out=$("$PASSFS" es-t "$dir/c1.json")
[[ $(printf '%s\n' "$out" | wc -l) == 16 ]] || fail "table has $(printf '%s\n' "$out" | wc -l) lines, want 16"
printf '%s\n' "$out" | grep -Eq '^t=-6 +ES_t=0\.100000$' || fail "no 't=-6 ES_t=0.100000' line in: $out"
printf '%s\n' "$out" | grep -Eq '^t=-5 +ES_t=1\.500000$' || fail "no 't=-5 ES_t=1.500000' line in: $out"
printf '%s\n' "$out" | grep -Eq '^t=4 +ES_t=1\.500000$' || fail "no 't=4 ES_t=1.500000' line in: $out"

# ---- --json --------------------------------------------------------------
if ! "$PASSFS" es-t --json "$dir/c2.json" >"$dir/c2.out"; then
	fail "es-t --json c2 exited non-zero"
elif ! msg=$("$PY" - "$dir/c2.out" <<'EOF' 2>&1
import json, sys
d = json.load(open(sys.argv[1]))
want = {str(t): (0.1 if t <= 0 else 1.0) for t in range(-10, 5)}
assert set(d["curve"]) == set(want), sorted(d["curve"])
assert list(d["curve"]) == [str(t) for t in range(-10, 5)], list(d["curve"])
for t, v in want.items():
    assert abs(d["curve"][t] - v) < 1e-9, (t, d["curve"][t], v)
assert abs(d["score"] - 0.147207) < 5e-7, d["score"]
EOF
); then
	fail "es-t --json c2: $msg"
fi

# ---- b and p: from the file, and the flags win over the file --------------
# All failures: the score is b.
expect_score 0.500000 "$dir/c3.json" --b 0.5
expect_score 0.250000 "$dir/c3.json" --b=0.25
write c3b '{"b": 0.5, "variants": [{"dtype": "float32", "status": "runtime_error"}]}'
expect_score 0.500000 "$dir/c3b.json"
expect_score 0.200000 "$dir/c3b.json" --b 0.2
# A 2x slowdown correct everywhere: s^(1+p) = 0.5 (p = 0), 0.25 (p = 1).
write slow '{"variants": [{"dtype": "float32", "speedup": 0.5, "status": "ok", "min_t": -10}]}'
write slowp '{"p": 1, "variants": [{"dtype": "float32", "speedup": 0.5, "status": "ok", "min_t": -10}]}'
expect_score 0.500000 "$dir/slow.json"
expect_score 0.250000 "$dir/slow.json" --p 1
expect_score 0.250000 "$dir/slowp.json"
expect_score 0.500000 "$dir/slowp.json" --p 0
if ! "$PASSFS" es-t --json --b 0.3 --p 2 "$dir/c3.json" |
	"$PY" -c 'import json,sys; d=json.load(sys.stdin); assert abs(d["score"]-0.3)<1e-9 and d["b"]==0.3 and d["p"]==2, d' 2>/dev/null; then
	fail "es-t --json --b 0.3 --p 2: score/b/p not as given"
fi

# ---- help ----------------------------------------------------------------
for h in --help -h; do
	if ! "$PASSFS" es-t "$h" >"$dir/help" 2>"$dir/help.err"; then
		fail "es-t $h exited non-zero"
	elif ! grep -q '^usage: passfs es-t' "$dir/help" || [[ -s $dir/help.err ]]; then
		fail "es-t $h: no usage on stdout (or something on stderr)"
	fi
done

# ---- bad input: exit 2, one line naming the file and the problem ----------
v_ok='{"dtype": "float32", "speedup": 1.5, "status": "ok", "min_t": -5}'
write bad_json '{"variants": [
  {"dtype": "float32",, "status": "ok"}]}'
write empty '{"variants": []}'
write no_variants '{"b": 0.1}'
write no_speedup "{\"variants\": [$v_ok, {\"dtype\": \"float32\", \"status\": \"ok\", \"min_t\": 0}]}"
write bad_status '{"variants": [{"name": "f16_b8", "dtype": "float16", "status": "great"}]}'
write neg_speedup "{\"variants\": [$v_ok, $v_ok, {\"dtype\": \"float32\", \"speedup\": -1, \"status\": \"ok\", \"min_t\": 0}]}"
write zero_speedup '{"variants": [{"dtype": "float32", "speedup": 0, "status": "ok", "min_t": 0}]}'
write min_t_high '{"variants": [{"dtype": "float32", "speedup": 1, "status": "ok", "min_t": 5}]}'
write min_t_frac '{"variants": [{"dtype": "float32", "speedup": 1, "status": "ok", "min_t": -2.5}]}'
write bad_dtype '{"variants": [{"dtype": "float8", "speedup": 1, "status": "ok", "min_t": 0}]}'
write b_zero "{\"b\": 0, \"variants\": [$v_ok]}"
write b_big "{\"b\": 1.5, \"variants\": [$v_ok]}"
write typo "{\"variants\": [{\"dtype\": \"float32\", \"speedup\": 1, \"status\": \"ok\", \"min-t\": 0}]}"
write mismatch_t '{"variants": [{"dtype": "float32", "status": "mismatch", "min_t": -3}]}'
write timeout_t '{"variants": [{"dtype": "float32", "status": "timeout", "speedup": 2, "min_t": -3}]}'
# a mismatch with a level (the evaluator's "close only from -2"): paid from
# there, exactly as an ok with the same level
write mismatch_level '{"variants": [{"dtype": "float16", "status": "mismatch", "speedup": 2, "min_t": -2}]}'
write ok_level '{"variants": [{"dtype": "float16", "status": "ok", "speedup": 2, "min_t": -2}]}'

expect_bad "$dir/missing\.json: cannot open" "$dir/missing.json"
expect_bad "bad_json\.json:2:[0-9]+: invalid JSON" "$dir/bad_json.json"
expect_bad 'empty\.json: "variants" is empty' "$dir/empty.json"
expect_bad 'no_variants\.json: missing field "variants"' "$dir/no_variants.json"
expect_bad 'no_speedup\.json: variants\[1\]: status ok needs field "speedup"' "$dir/no_speedup.json"
expect_bad "bad_status\.json: variants\[0\] \('f16_b8'\): unknown status 'great'" "$dir/bad_status.json"
expect_bad 'neg_speedup\.json: variants\[2\]: speedup must be > 0 \(got -1\)' "$dir/neg_speedup.json"
expect_bad 'zero_speedup\.json: variants\[0\]: speedup must be > 0' "$dir/zero_speedup.json"
expect_bad 'min_t_high\.json: variants\[0\]: min_t must be an integer in -10\.\.4.*got 5' "$dir/min_t_high.json"
expect_bad 'min_t_frac\.json: variants\[0\]: min_t must be an integer.*got -2\.5' "$dir/min_t_frac.json"
expect_bad "bad_dtype\.json: variants\[0\]: unknown dtype 'float8'" "$dir/bad_dtype.json"
expect_bad 'b_zero\.json: b must be in \(0, 1\]' "$dir/b_zero.json"
expect_bad 'b_big\.json: b must be in \(0, 1\]' "$dir/b_big.json"
expect_bad 'typo\.json: variants\[0\]: unknown field "min-t"' "$dir/typo.json"
expect_bad 'mismatch_t\.json: variants\[0\]: status mismatch with a min_t needs field "speedup"' "$dir/mismatch_t.json"
expect_bad 'timeout_t\.json: variants\[0\]: status timeout has no passing level' "$dir/timeout_t.json"
expect_score 0.441341 "$dir/mismatch_level.json"
expect_score 0.441341 "$dir/ok_level.json"
expect_bad '<stdin>:1:[0-9]+: invalid JSON' - </dev/null
expect_bad '--b must be in \(0, 1\]' "$dir/c1.json" --b 2
expect_bad '--b: not a number' "$dir/c1.json" --b x
expect_bad '--p must be >= 0' "$dir/c1.json" --p -1
expect_bad "unknown option '--frob'" "$dir/c1.json" --frob
expect_bad 'one RECORDS\.json only' "$dir/c1.json" "$dir/c2.json"
rc=0
"$PASSFS" es-t >/dev/null 2>"$dir/err" || rc=$?
[[ $rc == 2 ]] && grep -q 'missing RECORDS.json' "$dir/err" || fail "es-t without a file: exit $rc, $(cat "$dir/err")"

if ((failures > 0)); then
	echo "es_t.sh: $failures check(s) failed" >&2
	exit 1
fi
echo "es_t.sh: all checks passed"
