#!/usr/bin/env bash
# bench/ranking.sh - does the cpu backend rank passes as a GPU would?  Each
# TASK:PASS is evaluated N times (default 3) with `passfs eval`; the table
# gives, per pass, the median score (what passfs scored: on the cpu backend
# the modeled H200 speedup's, docs/scoring.md), the geometric-mean modeled
# speedup, the geometric-mean measured cpu speedup (what the score was
# before), and the median evaluation time.  The default pairs are the
# block-per-row and thread-per-row RMSNorm passes on t5_rmsnorm, and the fused
# elementwise passes of bench/passes/ on their tasks.
#
#   bench/ranking.sh [-n RUNS] [-b PASSFS] [TASK:PASS...]
set -euo pipefail
cd "$(dirname "$0")/.."
runs=3 passfs=build/passfs
while getopts n:b: o; do
	case $o in
	n) runs=$OPTARG ;;
	b) passfs=$OPTARG ;;
	*) exit 2 ;;
	esac
done
shift $((OPTIND - 1))
pairs=("$@")
if [ ${#pairs[@]} -eq 0 ]; then
	pairs=(t5_rmsnorm:bench/passes/t5_rmsnorm.c t5_rmsnorm:tests/passes/rmsnorm_row_per_thread.c
		gpt2_bias_gelu_tanh:bench/passes/gpt2_bias_gelu_tanh.c gpt2_gelu_new_explicit:bench/passes/gpt2_gelu_new_explicit.c
		vit_bias_gelu_erf:bench/passes/vit_bias_gelu_erf.c llama_swiglu:bench/passes/llama_swiglu.c
		detr_frozen_batchnorm_relu:bench/passes/detr_frozen_batchnorm_relu.c
		bert_extended_attention_mask:bench/passes/bert_extended_attention_mask.c)
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
source bench/lib.sh
printf "%-30s %-38s %8s %9s %9s %7s  %s\n" TASK PASS SCORE MODELED "CPU x" "EVAL s" VERDICTS
for tp in "${pairs[@]}"; do
	task=${tp%%:*} pass=${tp#*:}
	dir=$(tasks_of "$task")
	for ((r = 0; r < runs; r++)); do
		s0=$(date +%s%N)
		"$passfs" eval --tasks "$dir" --task "$task" --pass "$pass" --json >"$tmp/r.$r.json" 2>/dev/null || true
		echo $((($(date +%s%N) - s0) / 1000000)) >"$tmp/t.$r"
	done
	/usr/bin/python3 - "$tmp" "$runs" "$task" "$pass" <<'PY'
import json, math, statistics, sys
tmp, runs, task, pass_ = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4]
sc, mo, cpu, ts, verdicts = [], [], [], [], set()
gm = lambda xs: math.exp(sum(math.log(x) for x in xs) / len(xs)) if xs else float("nan")
for r in range(runs):
    d = json.load(open("%s/r.%d.json" % (tmp, r)))
    sc.append(d["score"])
    verdicts.add(d["verdict"])
    vs = [v for v in d["variants"] if v.get("modeled_speedup")]
    mo.append(gm([v["modeled_speedup"] for v in vs]))
    cpu.append(gm([v.get("measured_speedup", v.get("speedup")) for v in vs if v.get("measured_speedup", v.get("speedup"))]))
    ts.append(float(open("%s/t.%d" % (tmp, r)).read()) / 1000)
print("%-30s %-38s %8.3f %9.3f %9.3f %7.1f  %s (scores %s)" % (
    task, pass_[-38:], statistics.median(sc), statistics.median(mo), statistics.median(cpu), statistics.median(ts),
    ",".join(sorted(verdicts)), " ".join("%.3f" % s for s in sc)))
PY
done
