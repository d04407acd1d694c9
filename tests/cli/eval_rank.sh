#!/usr/bin/env bash
# The cpu backend ranks passes as a GPU would (docs/scoring.md, "Which
# speedup is scored"; docs/backends.md, "The modeled H200 time").  On the
# row reduction tiny_rmsnorm, a block-per-row pass (a block reduction with
# shuffles and barriers) against a thread-per-row one: the CPU runs the
# thread-per-row pass far faster (no barriers), a GPU far slower (2048
# threads, each walking a row alone).  The score must follow the GPU: the
# modeled speedup is scored, the block pass ranks first and beats eager, and
# the measured speedup stays beside it (ranking the other way).  With
# PASSFS_CPU_SPEEDUP=measured the measured one is scored.
source "$(dirname "$0")/../lib/cli.sh"
T=tests/passes/rank-tasks   # (a tasks directory of its own: other tests count tests/passes/tasks)
# a cache of our own: eager's model is counted here, not read from a run before
export PASSFS_CACHE_DIR="$tmp/cache"
run() { # NAME PASS [env...]
	local name=$1 pass=$2
	shift 2
	env "$@" "$PASSFS" eval --tasks "$T" --task tiny_rmsnorm --backend cpu --pass "$pass" --json \
		>"$tmp/$name.json" 2>"$tmp/$name.err"
}
run block bench/passes/t5_rmsnorm.c
run row tests/passes/rmsnorm_row_per_thread.c
if out=$(/usr/bin/python3 - "$tmp/block.json" "$tmp/row.json" <<'PY'
import json, math, sys
b, r = (json.load(open(p)) for p in sys.argv[1:3])
for name, x in (("block", b), ("row", r)):
    assert x["verdict"] == "ok", (name, x["verdict"], x.get("message"))
    for v in x["variants"]:
        assert v["speedup_source"] == "modeled_h200", (name, v["name"], v.get("speedup_source"), v.get("note"))
        assert abs(v["speedup"] - v["modeled_speedup"]) <= 1e-3 * v["speedup"], (name, v["name"])
        assert v["measured_speedup"] > 0, (name, v["name"])
        t = v["traffic"]
        # eager is counted on the GPU's launches: one a node, an element
        # (or, for the mean, a row) a block of threads, not the cpu plan's
        assert t["eager"]["launches"] == 8 and t["eager"]["threads"] >= 2048 * 256, (name, t["eager"])
gm = lambda x, k: math.exp(sum(math.log(v[k]) for v in x["variants"]) / len(x["variants"]))
mb, mr = gm(b, "speedup"), gm(r, "speedup")
cb, cr = gm(b, "measured_speedup"), gm(r, "measured_speedup")
assert b["variants"][0]["traffic"]["pass"]["threads"] == 2048 * 256, b["variants"][0]["traffic"]["pass"]
assert r["variants"][0]["traffic"]["pass"]["threads"] == 2048, r["variants"][0]["traffic"]["pass"]
assert mb > 1.5, ("the fused block reduction must beat eager's 8 launches", mb)
assert mb > 1.5 * mr, ("block per row must rank well above thread per row", mb, mr)
assert b["score"] > r["score"], (b["score"], r["score"])
assert cr > cb, ("measured on the CPU the ranking is the other way", cr, cb)
print("block %.2f (score %.2f), thread per row %.2f (score %.2f); measured on the CPU %.2f and %.2f" %
      (mb, b["score"], mr, r["score"], cb, cr))
PY
); then ok "ranked as on a GPU: $out"; else bad "ranking: $out $(tail -c 300 "$tmp/block.err") $(tail -c 300 "$tmp/row.err")"; fi
# eager's model was kept: a second evaluation reads it back unchanged
run block2 bench/passes/t5_rmsnorm.c
if out=$(/usr/bin/python3 - "$tmp/block.json" "$tmp/block2.json" <<'PY'
import json, sys
a, b = (json.load(open(p)) for p in sys.argv[1:3])
for x, y in zip(a["variants"], b["variants"]):
    assert x["modeled_h200_ms"]["eager"] == y["modeled_h200_ms"]["eager"], (x["name"], x["modeled_h200_ms"], y["modeled_h200_ms"])
print("eager %s ms both times" % [v["modeled_h200_ms"]["eager"] for v in a["variants"]])
PY
) && ls "$PASSFS_CACHE_DIR"/eager-* >/dev/null 2>&1; then
	ok "eager's model is cached: $out"
else
	bad "eager's model cache: $out $(ls -R "$PASSFS_CACHE_DIR" | head -5)"
fi
# PASSFS_CPU_SPEEDUP=measured: the measured speedup is scored
run measured tests/passes/rmsnorm_row_per_thread.c PASSFS_CPU_SPEEDUP=measured
if out=$(/usr/bin/python3 - "$tmp/measured.json" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
assert r["verdict"] == "ok", r["verdict"]
for v in r["variants"]:
    assert v["speedup_source"] == "measured" and "measured_speedup" not in v, v["name"]
    assert abs(v["speedup"] - v["modeled_speedup"]) > 1e-3 * v["speedup"], (v["name"], v["speedup"], v["modeled_speedup"])
print("scored %s, modeled %s" % ([v["speedup"] for v in r["variants"]], [v["modeled_speedup"] for v in r["variants"]]))
PY
); then ok "PASSFS_CPU_SPEEDUP=measured scores the measured speedup: $out"; else bad "measured: $out $(tail -c 300 "$tmp/measured.err")"; fi
finish
