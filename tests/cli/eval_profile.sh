#!/usr/bin/env bash
# result.json's "profile" (docs/result-format.md): every phase is there, none
# negative, they add up to elapsed_ms, the phases that ran took time; and
# `passfs eval --profile` prints them (to stderr with --json).
source "$(dirname "$0")/../lib/cli.sh"
T=tests/passes/tasks
"$PASSFS" eval --tasks "$T" --task tiny_bias_gelu --backend cpu --pass tests/passes/ok_fused.c --trials 3 --json \
	--profile >"$tmp/r.json" 2>"$tmp/err"
if out=$(/usr/bin/python3 - "$tmp/r.json" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
p = r["profile"]
want = ["setup_ms", "compile_ms", "workers_ms", "inputs_ms", "eager_ms", "pass_checks_ms", "compare_ms",
        "trial_calls_ms", "trial_other_ms", "model_ms", "other_ms"]
assert sorted(p) == sorted(want), "fields %s" % sorted(p)
assert all(isinstance(p[k], (int, float)) and p[k] >= 0 for k in want), p
s = sum(p.values())
assert abs(s - r["elapsed_ms"]) <= 0.01 * r["elapsed_ms"] + 1, "sum %.1f, elapsed %.1f" % (s, r["elapsed_ms"])
for k in ("compile_ms", "inputs_ms", "eager_ms", "pass_checks_ms", "trial_calls_ms", "model_ms"):
    assert p[k] > 0, "%s is 0" % k
calls = sum(v["eager_ms"] + v["pass_ms"] for v in r["variants"]) * 3
assert p["trial_calls_ms"] >= 0.5 * calls, "trial_calls_ms %.1f, medians say >= %.1f" % (p["trial_calls_ms"], calls)
print("%d phases, sum %.1f ms = elapsed %.1f ms" % (len(p), s, r["elapsed_ms"]))
PY
); then ok "result.json profile: $out"; else bad "result.json profile: $out"; fi
if grep -q '^profile (' "$tmp/err" && grep -q 'trial_calls_ms' "$tmp/err"; then
	ok "--profile with --json prints the breakdown to stderr"
else
	bad "--profile with --json: $(head -c 300 "$tmp/err")"
fi
"$PASSFS" eval --tasks "$T" --task tiny_bias_gelu --backend cpu --pass tests/passes/ok_fused.c --trials 3 --profile \
	>"$tmp/out" 2>/dev/null
n=$(sed -n '/^profile (/,$p' "$tmp/out" | grep -c '_ms ')
if [ "$n" -eq 11 ]; then ok "--profile prints 11 phases after the summary"; else bad "--profile: $n phase lines: $(tail -12 "$tmp/out")"; fi
"$PASSFS" eval --help | grep -q -- '--profile' && ok "--help lists --profile" || bad "--help lacks --profile"
# a pass that answers "not implemented": its worker is killed at once after
# each variant (no 50 ms grace per variant: 300 ms over these 6)
printf '#include <passfs.h>\nPASS_REPLACEMENT(pf_call *call)\n{\n\treturn pf_not_implemented(call);\n}\n' >"$tmp/ni.c"
other=$("$PASSFS" eval --tasks "$T" --task tiny_bias_gelu --backend cpu --pass "$tmp/ni.c" --json 2>/dev/null |
	/usr/bin/python3 -c 'import json, sys; r = json.load(sys.stdin); print(r["verdict"], r["profile"]["other_ms"])')
if [ "${other%% *}" = not_implemented ] && /usr/bin/python3 -c "import sys; sys.exit(0 if ${other#* } < 200 else 1)"; then
	ok "not implemented: other_ms ${other#* } (workers killed at once)"
else
	bad "not implemented: '$other' (want not_implemented and other_ms < 200)"
fi
finish
