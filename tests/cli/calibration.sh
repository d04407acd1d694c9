#!/usr/bin/env bash
# bench/calibration.py (docs/benchmarks.md, "Calibration"): the anchor's GPU
# rows set beside `passfs eager --model`.  On made-up rows whose measured
# times are known multiples of the modeled ones, every ratio printed must be
# that multiple and the summary their geometric mean; rows that are not the
# anchor's are refused with exit 2, naming the file.
source "$(dirname "$0")/../lib/cli.sh"
export PASSFS_CACHE_DIR="$tmp/cache"
mkdir -p "$PASSFS_CACHE_DIR"
T=tests/passes/tasks
"$PASSFS" eager --model --json --tasks "$T" --task tiny_bias_gelu >"$tmp/m.json" 2>"$tmp/err" ||
	bad "eager --model: $(tail -n 2 "$tmp/err")"
# gpu_ms = modeled / 2, torch_ms = modeled * 4 (the model 2x slow on its own
# plan, 4x fast against PyTorch); one row the model does not know
/usr/bin/python3 - "$tmp/m.json" "$tmp/anchor.json" <<'PY'
import json, sys
m = json.load(open(sys.argv[1]))
rows = [{"task": "tiny_bias_gelu", "variant": v["name"], "passfs_ms": v["modeled_h200_ms"] / 2,
         "torch_ms": v["modeled_h200_ms"] * 4, "inductor_ms": None, "tasks_dir": "tests/passes/tasks"}
        for v in m["variants"]]
rows.append({"task": "tiny_bias_gelu", "variant": "nosuch", "passfs_ms": 1.0, "torch_ms": 1.0,
             "inductor_ms": None, "tasks_dir": "tests/passes/tasks"})
json.dump({"device": "test", "torch": "-", "rows": rows}, open(sys.argv[2], "w"))
PY
/usr/bin/python3 bench/calibration.py --passfs "$PASSFS" "$tmp/anchor.json" >"$tmp/out" 2>"$tmp/err2"
rc=$?
n=$(/usr/bin/python3 -c 'import json,sys; print(len(json.load(open(sys.argv[1]))["variants"]))' "$tmp/m.json")
if [ $rc -eq 0 ] && [ "$(grep -c '^tiny_bias_gelu/.* 2\.00 *0\.25$' "$tmp/out")" -eq "$n" ] &&
	grep -q '^tiny_bias_gelu/nosuch  *- ' "$tmp/out" &&
	grep -q "modeled / measured passfs eager: geomean 2.00, median 2.00, 0 of $n within 1.5x" "$tmp/out" &&
	grep -q "modeled / PyTorch eager: geomean 0.25" "$tmp/out"; then
	ok "calibration table: $n variants at 2.00 / 0.25, the unknown one '-'"
else
	bad "calibration table (rc $rc): $(cat "$tmp/out" "$tmp/err2")"
fi
echo '{"not": "rows"}' >"$tmp/bad.json"
/usr/bin/python3 bench/calibration.py --passfs "$PASSFS" "$tmp/bad.json" >/dev/null 2>"$tmp/err3"
rc=$?
if [ $rc -eq 2 ] && grep -q "bad.json: not the anchor's rows" "$tmp/err3"; then ok "bad rows: exit 2, named"
else bad "bad rows: rc $rc $(cat "$tmp/err3")"; fi
/usr/bin/python3 bench/calibration.py --markdown --passfs "$PASSFS" "$tmp/anchor.json" >"$tmp/md" 2>/dev/null
if head -2 "$tmp/md" | tail -1 | grep -q '^|---|' && grep -q '^| tiny_bias_gelu/' "$tmp/md"; then ok "--markdown"
else bad "--markdown: $(head -3 "$tmp/md")"; fi
finish
