#!/usr/bin/env bash
# `passfs eager --model` (docs/eager.md, "Eager's modeled time"): eager's
# modeled H200 time per variant, the number cpu-backend passes are scored
# against, with its terms.  It must be the number `passfs eval` scores with
# (the same signed cache line, either way round), never below the kernel's
# floor, and a whole-tensor reduction must be split over blocks as a GPU's
# eager runs it: near the memory roofline, not one block's serial sum.
source "$(dirname "$0")/../lib/cli.sh"
T=tests/passes/tasks
S=tests/eager/tasks
export PASSFS_CACHE_DIR="$tmp/cache"
mkdir -p "$PASSFS_CACHE_DIR"

# 1. counted afresh, then the same numbers from the cache
"$PASSFS" eager --model --json --tasks "$T" --task tiny_bias_gelu >"$tmp/m1.json" 2>"$tmp/err1"
rc1=$?
"$PASSFS" eager --model --json --tasks "$T" --task tiny_bias_gelu >"$tmp/m2.json" 2>"$tmp/err2"
rc2=$?
if [ $rc1 -eq 0 ] && [ $rc2 -eq 0 ] && out=$(/usr/bin/python3 - "$tmp/m1.json" "$tmp/m2.json" "$T/tiny_bias_gelu/graph.json" 2>&1 <<'PY'
import json, sys
a, b, g = (json.load(open(p)) for p in sys.argv[1:])
assert a["task"] == "tiny_bias_gelu" and a["backend"] == "cpu" and "h200 model" in a["scoring"], a
assert [v["name"] for v in a["variants"]] == [v["name"] for v in g["variants"]], a["variants"]
for v, w in zip(a["variants"], b["variants"]):
    assert v["cached"] is False and w["cached"] is True, (v["cached"], w["cached"])
    for k in ("modeled_h200_ms", "memory_ms", "path_ms", "parallel_ms", "host_ms", "launches", "traffic_bytes"):
        assert v[k] == w[k], (v["name"], k, v[k], w[k])
    m, kf = v["modeled_h200_ms"], v["kernel_floor"]
    assert v["launches"] == 2 and abs(v["launch_ms"] - 0.006) < 1e-9, v
    assert m >= kf["floor_ms"] + v["call_ms"] - 1e-9 and kf["bytes"] > 0 and kf["floor_ms"] > 0, (v["name"], m, kf)
    lo = v["call_ms"] + v["launch_ms"] + max(v["memory_ms"], v["path_ms"], v["parallel_ms"])
    assert m >= lo - 1e-6, (v["name"], m, lo)
    assert abs(v["memory_ms"] - v["traffic_bytes"] / 4.3e9) <= 1e-6 + 1e-4 * v["memory_ms"], v
print("%d variants, first %.4f ms (floor %.4f)" % (len(a["variants"]), a["variants"][0]["modeled_h200_ms"],
                                                  a["variants"][0]["kernel_floor"]["floor_ms"]))
PY
); then ok "eager --model, counted then cached: $out"; else bad "eager --model: rc $rc1/$rc2 $out $(tail -n 2 "$tmp/err1" "$tmp/err2")"; fi

# 2. what eval scores against is what --model said (the cache from step 1)
"$PASSFS" eval --tasks "$T" --task tiny_bias_gelu --backend cpu --pass tests/passes/ok_fused.c --trials 3 --json \
	>"$tmp/r.json" 2>"$tmp/err3"
if out=$(/usr/bin/python3 - "$tmp/m1.json" "$tmp/r.json" 2>&1 <<'PY'
import json, sys
m, r = (json.load(open(p)) for p in sys.argv[1:])
for v, w in zip(m["variants"], r["variants"]):
    assert v["name"] == w["name"], (v["name"], w["name"])
    e = w["modeled_h200_ms"]["eager"]
    assert abs(e - v["modeled_h200_ms"]) <= 1e-6 * e, (v["name"], e, v["modeled_h200_ms"])
print("eval's eager %.4f ms = --model's" % r["variants"][0]["modeled_h200_ms"]["eager"])
PY
); then ok "eval scores against --model's number: $out"; else bad "eval vs --model: $out $(tail -n 2 "$tmp/err3")"; fi

# 3. split reductions: two launches (reduce_part, reduce_finish), and the
# variants of 8 MB or more within 4x of their floor (one block's sum of 8M
# floats models at ~350x, bench/eager_model.sh), the smaller ones (launches
# and host time dominate) within 12x
# The model's thread times move with the machine's load (docs/eager.md,
# "Eager's modeled time"): a count over the limit is made once more with a
# fresh cache, and each variant's least of the two is judged.
split_check() {
	/usr/bin/python3 - "$@" 2>&1 <<'PY'
import json, sys
best = {}
for p in sys.argv[1:]:
    for v in json.load(open(p))["variants"]:
        x = (v["modeled_h200_ms"] - v["call_ms"]) / v["kernel_floor"]["floor_ms"]   # the kernels, not the call
        if v["name"] not in best or x < best[v["name"]][0]:
            best[v["name"]] = (x, v)
assert len(best) == 5, len(best)
worst = 0
for x, v in best.values():
    worst = max(worst, x)
    assert v["launches"] == 2, (v["name"], v["launches"])       # reduce_part, reduce_finish
    assert x < (4 if v["kernel_floor"]["bytes"] >= 8 << 20 else 12), (v["name"], x, v["kernel_floor"])
print("worst modeled/floor %.2f" % worst)
PY
}
"$PASSFS" eager --model --json --tasks "$S" --task reduce_split_sum >"$tmp/s.json" 2>"$tmp/err4"
"$PASSFS" eager --model --json --tasks "$S" --task reduce_split_mean >"$tmp/t.json" 2>"$tmp/err5"
if ! out=$(split_check "$tmp/s.json" "$tmp/t.json"); then
	mkdir -p "$tmp/cache2"
	PASSFS_CACHE_DIR=$tmp/cache2 "$PASSFS" eager --model --json --tasks "$S" --task reduce_split_sum >"$tmp/s2.json" 2>>"$tmp/err4"
	PASSFS_CACHE_DIR=$tmp/cache2 "$PASSFS" eager --model --json --tasks "$S" --task reduce_split_mean >"$tmp/t2.json" 2>>"$tmp/err5"
	out="$(split_check "$tmp/s.json" "$tmp/t.json" "$tmp/s2.json" "$tmp/t2.json") (counted twice)"
fi
if [[ $out == "worst modeled/floor"* ]]; then ok "split reductions near the roofline: $out"; else bad "split reductions: $out $(tail -n 2 "$tmp/err4" "$tmp/err5")"; fi

# 4. eager's GEMMs and convolutions priced as cuBLAS/cuDNN run them (traffic.h,
# model_gemm_ms), recomputed here from the shapes: no path, the compute time
# as the parallel term, whatever the emulated kernel's threads took
"$PASSFS" eager --model --json --tasks "$S" --task lib_matmul >"$tmp/g.json" 2>"$tmp/err6"
"$PASSFS" eager --model --json --tasks "$S" --task lib_conv >"$tmp/c.json" 2>"$tmp/err7"
if out=$(/usr/bin/python3 - "$tmp/g.json" "$tmp/c.json" 2>&1 <<'PY'
import json, math, sys
FP32, TC16, EFF, TILE, SPLITK, SMS = 6.7e10, 9.89e11, 0.7, 64, 256, 132
BW = 4.3e9
def gemm_ms(m, n, k, batch, tc):
    tm = 8 * math.ceil(m / 8) if m < TILE else TILE
    tn = 8 * math.ceil(n / 8) if n < TILE else TILE
    tiles = batch * math.ceil(m / tm) * math.ceil(n / tn)
    most = 1
    if tiles < SMS:
        most = max(1, min(math.floor(k / SPLITK), math.ceil(SMS / tiles)))
    # the split whose waves are fullest, the smaller on a tie
    fill, split = max(((tiles * s) / (math.ceil(tiles * s / SMS) * SMS), -s) for s in range(1, most + 1))
    split = -split
    # then the output's store: float32 partials when split, else the output dtype
    stored = batch * m * n * (4 * split if split > 1 else (2 if tc else 4))
    return 2.0 * tiles * tm * tn * k / ((TC16 if tc else FP32) * EFF * fill) + stored / BW
want = {"f32_512": gemm_ms(512, 512, 512, 1, 0), "f16_512": gemm_ms(512, 512, 512, 1, 1),
        "bf16_batched": gemm_ms(128, 384, 256, 4, 1), "f32_gemv": gemm_ms(1, 1024, 2048, 1, 0),
        # conv: an implicit GEMM of (n*oh*ow) x cout by cin*kh*kw; depthwise on CUDA cores
        "f32_3x3": gemm_ms(2 * 28 * 28, 128, 64 * 9, 1, 0), "f16_3x3": gemm_ms(2 * 28 * 28, 128, 64 * 9, 1, 1),
        "f32_depthwise": 2.0 * 2 * 64 * 56 * 56 * 9 / (FP32 * EFF)}
seen = 0
for p in sys.argv[1:]:
    for v in json.load(open(p))["variants"]:
        w = want[v["name"]]
        assert v["launches"] == 1 and v["path_ms"] == 0, (v["name"], v["launches"], v["path_ms"])
        assert abs(v["parallel_ms"] - w) <= 1e-5 * w, (v["name"], v["parallel_ms"], w)
        # a call: its launch, or the floor, or its host time; then the call's own cost
        c = v["call_ms"]
        lo = 0.003 + max(v["memory_ms"], w)
        m = v["modeled_h200_ms"] - c
        assert abs(c - 0.010) < 1e-12, c
        assert m >= lo * (1 - 1e-5) - 2e-7 and (abs(m - lo) <= 1e-5 * lo + 2e-7 or abs(m - v["kernel_floor"]["floor_ms"]) <= 1e-6 or
                                   abs(m - (v["host_ms"] - 0.003)) <= 1e-5 * m + 2e-7), (v["name"], m, lo, v)
        seen += 1
assert seen == len(want), seen
print("%d variants, f32 512^3 %.4f ms, f16 %.4f ms" % (seen, want["f32_512"], want["f16_512"]))
PY
); then ok "GEMM and conv priced as the libraries: $out"; else bad "library pricing: $out $(tail -n 2 "$tmp/err6" "$tmp/err7")"; fi

# 5. errors
"$PASSFS" eager --model --tasks "$T" --task tiny_bias_gelu --variant nosuch >/dev/null 2>"$tmp/e1"
rc=$?
if [ $rc -eq 2 ] && grep -q "no variant 'nosuch'" "$tmp/e1"; then ok "unknown variant: exit 2, named"
else bad "unknown variant: rc $rc $(cat "$tmp/e1")"; fi
"$PASSFS" eager --json --tasks "$T" --task tiny_bias_gelu >/dev/null 2>"$tmp/e2"
rc=$?
if [ $rc -eq 2 ] && grep -q -- "--json goes with --model" "$tmp/e2"; then ok "--json without --model: exit 2"
else bad "--json without --model: rc $rc $(cat "$tmp/e2")"; fi
"$PASSFS" eager --model --out "$tmp/o" --tasks "$T" --task tiny_bias_gelu >/dev/null 2>"$tmp/e3"
rc=$?
if [ $rc -eq 2 ] && [ ! -e "$tmp/o" ]; then ok "--model with --out: exit 2, nothing written"
else bad "--model with --out: rc $rc $(cat "$tmp/e3")"; fi
"$PASSFS" eager --model --tasks "$T" --task nosuch_task >/dev/null 2>"$tmp/e4"
rc=$?
if [ $rc -eq 2 ] && grep -q "nosuch_task" "$tmp/e4"; then ok "unknown task: exit 2, named"
else bad "unknown task: rc $rc $(cat "$tmp/e4")"; fi
# the table form: a line per variant
"$PASSFS" eager --model --tasks "$T" --task tiny_bias_gelu >"$tmp/tab" 2>/dev/null
n=$(/usr/bin/python3 -c 'import json,sys; print(len(json.load(open(sys.argv[1]))["variants"]))' "$T/tiny_bias_gelu/graph.json")
if [ "$(grep -c '(cached)' "$tmp/tab")" -eq "$n" ] && head -1 "$tmp/tab" | grep -q modeled_ms; then ok "table: $n variants, cached"
else bad "table: $(cat "$tmp/tab")"; fi
finish
