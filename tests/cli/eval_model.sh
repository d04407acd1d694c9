#!/usr/bin/env bash
# The modeled H200 time on the cpu backend (docs/result-format.md,
# modeled_h200_ms; docs/backends.md, "The modeled H200 time"): each side's
# launches, and the bytes its kernels touched, counted page by page in a
# counted call, must be what the kernels move: for bias + gelu, eager's two
# launches read x and the bias, write t, read t and write y; the fused
# pass's one launch reads x and the bias and writes y.  The time is made of
# them, of the threads' work and of the host's, and it is what the score's
# speedup is (docs/scoring.md).
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
    host = v["modeled_host_ms"]
    for side in ("eager", "pass"):
        s = tr[side]
        # per launch 3 us + the largest of memory, path and parallel (between
        # the largest of the three, each summed over the launches, and the
        # sum of all three), or the host's time where that is longer
        assert abs(s["memory_ms"] - s["bytes"] / 4.3e9) <= 1e-6 + 1e-4 * s["memory_ms"], (v["name"], side, s)
        base = s["launches"] * 0.003
        lo = base + max(s["memory_ms"], s["path_ms"], s["parallel_ms"])
        hi = base + s["memory_ms"] + s["path_ms"] + s["parallel_ms"]
        h = host[side] - s["launches"] * 0.003     # a launch's own host work is in its 3 us
        # then the call's own cost (the sync that ends it), once a side
        assert abs(s["call_ms"] - 0.010) < 1e-12, (v["name"], side, s)
        lo, hi = max(lo, h) + s["call_ms"], max(hi, h) + s["call_ms"]
        assert lo - 1e-5 <= m[side] <= hi + 1e-5, (v["name"], side, m[side], lo, hi, s)
        assert s["threads"] > 0 and s["path_ms"] > 0 and s["parallel_ms"] > 0 and host[side] >= 0, (v["name"], side, s)
    # eager on the GPU's launches: an element a thread, both kernels
    assert tr["eager"]["threads"] >= 2 * n, (v["name"], tr["eager"]["threads"], n)
    assert abs(v["modeled_speedup"] - m["eager"] / m["pass"]) <= 1e-3 * v["modeled_speedup"], v["name"]
    # the scored speedup is the modeled one; the measured one beside it
    assert v["speedup_source"] == "modeled_h200" and v["speedup"] == v["modeled_speedup"], (v["name"], v.get("speedup_source"))
    assert v["measured_speedup"] > 0, v["name"]
    # how sure the pass's model is: its timed counted calls (3, or 8 when
    # short), the second least and the largest of their own models over
    # the least, and the scored model at or under the least call's
    ms = v["model_spread"]
    assert ms["calls"] in (3, 8) and 0 <= ms["spread"] <= ms["largest"], (v["name"], ms)
    logs.append(math.log(m["eager"] / m["pass"]))
gm = math.exp(sum(logs) / len(logs))
assert abs(r["modeled_speedup"] - gm) <= 1e-3 * gm, (r["modeled_speedup"], gm)
print("%d variants; pass %d B / eager %d B on the first; modeled speedup %.3f" %
      (len(logs), r["variants"][0]["traffic"]["pass"]["bytes"], r["variants"][0]["traffic"]["eager"]["bytes"], gm))
PY
); then ok "traffic and modeled time: $out"; else bad "traffic and modeled time: $out $(head -c 300 "$tmp/err")"; fi
# the counted calls are verified runs: every variant had more runs checked
# than its timed trials
chk=$(/usr/bin/python3 -c 'import json,sys; r=json.load(open(sys.argv[1])); print(all(v["timed_checks"] >= 4 for v in r["variants"]))' "$tmp/r.json")
[ "$chk" = True ] && ok "the counted calls are verified" || bad "counted calls not verified: $chk"
# the summary (no --json) prints the model under its own heading
"$PASSFS" eval --tasks "$T" --task tiny_bias_gelu --backend cpu --pass tests/passes/ok_fused.c --trials 3 \
	>"$tmp/sum.txt" 2>/dev/null
if grep -q 'PASS H200 ms\*' "$tmp/sum.txt" && grep -Eq '^f32_b1_s64 +[0-9.]+ +[0-9.]+ +[0-9.]+ +[0-9.]+ +2 +1$' "$tmp/sum.txt" &&
	grep -q "the score's SPEEDUP is the modeled one" "$tmp/sum.txt"; then
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
