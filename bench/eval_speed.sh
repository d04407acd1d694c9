#!/usr/bin/env bash
# bench/eval_speed.sh - wall time of `passfs eval` end to end (compile,
# workers, checks, timing) on the 6-variant test task with a correct pass.
#
#   bench/eval_speed.sh [-n RUNS] [-b BACKEND] [-t TASK] [-p PASS] PASSFS [PASSFS...]
#
# Several binaries (e.g. two builds to compare) are run interleaved, run by
# run, so load on the machine hits them alike.  Prints one row per binary:
# median, min and max wall seconds and the median of result.json's
# elapsed_ms, then each binary's median relative to the first's.
set -euo pipefail
cd "$(dirname "$0")/.."
runs=7 backend=cpu task=tiny_bias_gelu pass=tests/passes/ok_fused.c tasks=tests/passes/tasks
while getopts n:b:t:p:T: o; do
	case $o in
	n) runs=$OPTARG ;;
	b) backend=$OPTARG ;;
	t) task=$OPTARG ;;
	p) pass=$OPTARG ;;
	T) tasks=$OPTARG ;;
	*) exit 2 ;;
	esac
done
shift $((OPTIND - 1))
[ $# -ge 1 ] || { echo "usage: $0 [-n RUNS] [-b BACKEND] [-t TASK] [-p PASS] PASSFS [PASSFS...]" >&2; exit 2; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
for ((r = 0; r < runs; r++)); do
	for ((i = 1; i <= $#; i++)); do
		bin=${!i}
		t0=$(date +%s%N)
		"$bin" eval --tasks "$tasks" --task "$task" --pass "$pass" --backend "$backend" --json >"$tmp/r.json"
		t1=$(date +%s%N)
		/usr/bin/python3 -c "
import json, sys
r = json.load(open('$tmp/r.json'))
assert r['verdict'] == 'ok', r['message']
print($(( (t1 - t0) / 1000 )) / 1e6, r['elapsed_ms'] / 1e3)" >>"$tmp/$i.txt"
	done
done
/usr/bin/python3 - "$tmp" "$@" <<'PY'
import statistics, sys
d, bins = sys.argv[1], sys.argv[2:]
print("%-40s %5s %8s %8s %8s %10s %6s" % ("binary", "runs", "median", "min", "max", "elapsed", "ratio"))
base = None
for i, b in enumerate(bins, 1):
    rows = [tuple(map(float, l.split())) for l in open("%s/%d.txt" % (d, i))]
    wall = [w for w, _ in rows]
    med = statistics.median(wall)
    base = base or med
    print("%-40s %5d %7.2fs %7.2fs %7.2fs %9.2fs %6.2f" % (b[-40:], len(rows), med, min(wall), max(wall),
                                                        statistics.median(e for _, e in rows), med / base))
PY
