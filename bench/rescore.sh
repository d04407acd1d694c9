#!/usr/bin/env bash
# bench/rescore.sh - how steady a score is: the same pass re-scored N times
# (default 4) with `passfs eval`, optionally while another evaluation runs
# beside it (-l: a loop of evaluations of LOAD_TASK with its pass), for each
# task given.  Prints, per task, every run's score as passfs scored it
# ("scored": on the cpu backend the modeled H200 speedup's, docs/scoring.md),
# then what the measured times would have scored, re-scored with `passfs
# es-t` on the same runs: the paired estimate (median of per-trial
# eager/pass ratios), the ratio of the two medians and others; then the
# spread (max - min) / median of each.  -f: every run on an empty model
# cache, so eager's model is counted afresh each time (the spread of first
# evaluations on as many machines; without it eager's model comes from the
# cache after the first run and only the pass's side moves).
#
#   bench/rescore.sh [-n RUNS] [-l] [-f] [-b PASSFS] TASK:PASS [TASK:PASS...]
#
# Example (the fused bias+gelu pass on two tasks, under load):
#   bench/rescore.sh -l t5_rmsnorm:bench/passes/t5_rmsnorm.c \
#       cheat_bias_gelu:tests/cheats/honest_f32.c
set -euo pipefail
cd "$(dirname "$0")/.."
runs=4 load=0 fresh=0 passfs=build/passfs
while getopts n:lfb: o; do
	case $o in
	n) runs=$OPTARG ;;
	l) load=1 ;;
	f) fresh=1 ;;
	b) passfs=$OPTARG ;;
	*) exit 2 ;;
	esac
done
shift $((OPTIND - 1))
[ $# -ge 1 ] || { echo "usage: $0 [-n RUNS] [-l] [-f] [-b PASSFS] TASK:PASS..." >&2; exit 2; }
tmp=$(mktemp -d)
loader=
cleanup() { [ -n "$loader" ] && kill "$loader" 2>/dev/null; wait 2>/dev/null; rm -rf "$tmp"; }
trap cleanup EXIT
source bench/lib.sh
if [ $load -eq 1 ]; then
	(while :; do "$passfs" eval --tasks tests/passes/tasks --task tiny_bias_gelu --pass tests/passes/ok_fused.c \
		--json >/dev/null 2>&1; done) &
	loader=$!
fi
printf "%-30s %-9s %s\n" TASK ESTIMATE "SCORES (spread = (max - min) / median)"
for tp in "$@"; do
	task=${tp%%:*} pass=${tp#*:}
	dir=$(tasks_of "$task")
	for ((r = 0; r < runs; r++)); do
		if [ $fresh -eq 1 ]; then export PASSFS_CACHE_DIR="$tmp/cache.$r"; fi
		"$passfs" eval --tasks "$dir" --task "$task" --pass "$pass" --json --trial-times >"$tmp/$task.$r.json" 2>/dev/null
	done
	/usr/bin/python3 - "$passfs" "$tmp" "$task" "$runs" <<'PY'
import json, math, statistics, subprocess, sys
passfs, tmp, task, runs = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])

def q(xs, f):
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(f * len(xs)))]

# Each estimator maps one variant's timed trials (eager ms, pass ms, paired by
# index) to a speedup.  "paired" is what passfs scores with.
EST = {
    "paired": lambda e, p: math.exp(statistics.median(math.log(a / b) for a, b in zip(e, p))),
    "medians": lambda e, p: statistics.median(e) / statistics.median(p),
    "q25": lambda e, p: q(e, 0.25) / q(p, 0.25),
    "minimums": lambda e, p: min(e) / min(p),
}
scores = {"scored": []}
scores.update({k: [] for k in EST})
for r in range(runs):
    doc = json.load(open("%s/%s.%d.json" % (tmp, task, r)))
    scores["scored"].append(doc["score"])
    measured = all(v.get("speedup_source", "measured") == "measured" for v in doc["variants"])
    for name, f in EST.items():
        recs = {"b": doc["b"], "p": doc["p"], "variants": []}
        for v in doc["variants"]:
            ran = v["verdict"] in ("ok", "mismatch")
            rec = {"dtype": v["dtype"] if v["dtype"] in ("float32", "float16", "bfloat16", "float64") else "float32",
                   "status": v["verdict"] if ran else "runtime_error"}
            if ran:
                rec["min_t"] = v["min_t"]
                tm = v.get("trial_ms")
                rec["speedup"] = f(tm["eager"], tm["pass"]) if tm else v["speedup"]
            recs["variants"].append(rec)
        out = subprocess.run([passfs, "es-t", "--json", "-"], input=json.dumps(recs), capture_output=True, text=True)
        scores[name].append(json.loads(out.stdout)["score"] if out.returncode == 0 else float("nan"))
    if measured and abs(scores["paired"][-1] - doc["score"]) > 1e-3 * doc["score"] and not any(
            v.get("timing_suspect") for v in doc["variants"]):
        print("note: run %d scored %.4f, the paired re-score %.4f" % (r, doc["score"], scores["paired"][-1]))
for name, xs in scores.items():
    med = statistics.median(xs)
    print("%-30s %-9s %s  spread %.1f%%" % (task, name, " ".join("%.4f" % x for x in xs),
                                             100 * (max(xs) - min(xs)) / med))
PY
done
