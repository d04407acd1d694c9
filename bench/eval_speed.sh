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
#
#   bench/eval_speed.sh -P [-x] [-b BACKEND] [-k TASK]... PASSFS
#
# Where the time goes: every bundled task (or each -k TASK) evaluated once
# with its fused pass from bench/passes/ where there is one, else (and with
# -x always) the task's template pass (which runs eager and the checks, then
# stops: no timing), and
# a table of result.json's profile (docs/result-format.md): seconds per phase
# per task, the totals, and each phase's share.
set -euo pipefail
cd "$(dirname "$0")/.."
runs=7 backend=cpu task=tiny_bias_gelu pass=tests/passes/ok_fused.c tasks=tests/passes/tasks profile=0 only=() template=0
while getopts n:b:t:p:T:Pxk: o; do
	case $o in
	n) runs=$OPTARG ;;
	b) backend=$OPTARG ;;
	t) task=$OPTARG ;;
	p) pass=$OPTARG ;;
	T) tasks=$OPTARG ;;
	P) profile=1 ;;
	x) template=1 ;;
	k) only+=("$OPTARG") ;;
	*) exit 2 ;;
	esac
done
shift $((OPTIND - 1))
if [ $profile = 1 ]; then
	[ $# -eq 1 ] || { echo "usage: $0 -P [-x] [-b BACKEND] [-k TASK]... PASSFS" >&2; exit 2; }
	tmp=$(mktemp -d)
	trap 'rm -rf "$tmp"' EXIT
	if [ ${#only[@]} -gt 0 ]; then list=("${only[@]}"); else mapfile -t list < <(ls tasks | while read -r d; do [ -f "tasks/$d/graph.json" ] && echo "$d"; done); fi
	for t in "${list[@]}"; do
		pa=()
		[ $template = 0 ] && [ -f "bench/passes/$t.c" ] && pa=(--pass "bench/passes/$t.c")
		echo "eval_speed.sh: $t" >&2
		"$1" eval --tasks tasks --task "$t" "${pa[@]}" --backend "$backend" --json >"$tmp/$t.json" 2>/dev/null || true
	done
	/usr/bin/python3 - "$tmp" "$(uptime | sed 's/.*load average: //')" "${list[@]}" <<'PY'
import json, sys
d, load, tasks = sys.argv[1], sys.argv[2], sys.argv[3:]
cols = None
tot = {}
rows = []
for t in tasks:
    try:
        r = json.load(open("%s/%s.json" % (d, t)))
        p = r["profile"]
    except Exception:
        rows.append((t, None, None, None))
        continue
    cols = cols or [k for k in p]
    for k in cols:
        tot[k] = tot.get(k, 0) + p.get(k, 0)
    tot["elapsed_ms"] = tot.get("elapsed_ms", 0) + r["elapsed_ms"]
    rows.append((t, r["elapsed_ms"], p, r["verdict"]))
if not cols:
    sys.exit("no profile in any result (an older binary?)")
names = [k[:-3] for k in cols]
print("%-36s %-15s %8s" % ("task", "verdict", "total") + "".join(" %11s" % n for n in names))
for t, el, p, v in rows:
    if p is None:
        print("%-36s %-15s %8s" % (t, "error", "-"))
        continue
    print("%-36s %-15s %7.1fs" % (t, v, el / 1e3) + "".join(" %10.1fs" % (p.get(k, 0) / 1e3) for k in cols))
print("%-36s %-15s %7.1fs" % ("all", "", tot["elapsed_ms"] / 1e3) + "".join(" %10.1fs" % (tot[k] / 1e3) for k in cols))
print("%-36s %-15s %8s" % ("share", "", "") + "".join(" %10.1f%%" % (100 * tot[k] / tot["elapsed_ms"]) for k in cols))
print("load average at the end: %s" % load)
PY
	exit 0
fi
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
