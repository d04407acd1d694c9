#!/usr/bin/env bash
# The modeled H200 time on the cpu backend (docs/result-format.md,
# modeled_h200_ms; docs/backends.md, "The modeled H200 time"): each side's
# launches, and the bytes its kernels touched, counted page by page in an
# untimed call, must be what the kernels move: for bias + gelu, eager's two
# launches read x and the bias, write t, read t and write y; the fused
# pass's one launch reads x and the bias and writes y.
source "$(dirname "$0")/../lib/cli.sh"
T=tests/passes/tasks
"$PASSFS" eval --tasks "$T" --task tiny_bias_gelu --backend cpu --pass tests/passes/ok_fused.c --trials 3 --json \
	>"$tmp/r.json" 2>"$tmp/err"
if out=$(/usr/bin/python3 - "$tmp/r.json" "$T/tiny_bias_gelu/graph.json" <<'PY'
import json, math, sys
r = json.load(open(sys.argv[1]))
g = json.load(open(sys.argv[2]))
size = {"float32": 4, "float16": 2, "bfloat16": 2}
logs = []
for v, gv in zip(r["variants"], g["variants"]):
    assert v["verdict"] == "ok", (v["name"], v["verdict"])
    tr = v["traffic"]
    n = math.prod(gv["inputs"][0]["shape"])
    c = math.prod(gv["inputs"][1]["shape"])
    e = size[gv["inputs"][0]["dtype"]]
    page = 4096
    assert tr["eager"]["launches"] == 2 and tr["pass"]["launches"] == 1, (v["name"], tr)
    want_p = (2 * n + c) * e          # x, bias in; y out
    want_e = (4 * n + c) * e          # x, bias -> t; t -> y
    assert want_p <= tr["pass"]["bytes"] <= want_p + 3 * page, (v["name"], "pass", tr["pass"]["bytes"], want_p)
    assert want_e <= tr["eager"]["bytes"] <= want_e + 5 * page, (v["name"], "eager", tr["eager"]["bytes"], want_e)
    m = v["modeled_h200_ms"]
    for side in ("eager", "pass"):
        want = tr[side]["launches"] * 0.003 + tr[side]["bytes"] / 4.3e9
        assert abs(m[side] - want) <= 1e-6 + 1e-4 * want, (v["name"], side, m[side], want)
    assert abs(v["modeled_speedup"] - m["eager"] / m["pass"]) <= 1e-3 * v["modeled_speedup"], v["name"]
    logs.append(math.log(m["eager"] / m["pass"]))
gm = math.exp(sum(logs) / len(logs))
assert abs(r["modeled_speedup"] - gm) <= 1e-3 * gm, (r["modeled_speedup"], gm)
print("%d variants; pass %d B / eager %d B on the first; modeled speedup %.3f" %
      (len(logs), r["variants"][0]["traffic"]["pass"]["bytes"], r["variants"][0]["traffic"]["eager"]["bytes"], gm))
PY
); then ok "traffic and modeled time: $out"; else bad "traffic and modeled time: $out $(head -c 300 "$tmp/err")"; fi
# the model is information: the score is the measured speedups' (never the model's)
score=$(/usr/bin/python3 -c 'import json,sys; r=json.load(open(sys.argv[1])); print(r["score"] != r["modeled_speedup"])' "$tmp/r.json")
[ "$score" = True ] && ok "the score is not the modeled speedup" || bad "score equals the modeled speedup"
# the summary (no --json) prints the model under its own heading
"$PASSFS" eval --tasks "$T" --task tiny_bias_gelu --backend cpu --pass tests/passes/ok_fused.c --trials 3 \
	>"$tmp/sum.txt" 2>/dev/null
if grep -q 'PASS H200 ms\*' "$tmp/sum.txt" && grep -Eq '^f32_b1_s64 +[0-9.]+ +[0-9.]+ +[0-9.]+ +2 +1$' "$tmp/sum.txt" &&
	grep -q 'the score is the measured speedup' "$tmp/sum.txt"; then
	ok "the summary shows the modeled H200 times, launches 2 against 1"
else
	bad "summary: $(tail -10 "$tmp/sum.txt")"
fi
# a pass that crashes (a null write) is still a crash, with the fault handler
# the traffic counter installs in every cpu worker
cat >"$tmp/crash.c" <<'C'
#include <passfs.h>
__global__ void k(float *p) { p[threadIdx.x] = 1.0f; }
PASS_REPLACEMENT(pf_call *call)
{
	return pf_launch(call, k, 1, 32, 0, (float *)0);
}
C
v=$("$PASSFS" eval --tasks "$T" --task tiny_bias_gelu --backend cpu --pass "$tmp/crash.c" --json 2>/dev/null |
	/usr/bin/python3 -c 'import json,sys; r=json.load(sys.stdin); print(r["verdict"], r["variants"][0].get("message", ""))')
case "$v" in
*SIGSEGV*|*"signal 11"*|*segmentation*|crashed*) ok "a null write is still a crash: ${v:0:120}" ;;
*) bad "a null write: '$v'" ;;
esac
finish
