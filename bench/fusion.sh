#!/usr/bin/env bash
# bench/fusion.sh - does fusion win on the cpu backend?  For every bundled
# task that is pure elementwise/broadcast work (every op elementwise math or
# a view, at least one of them math: found from each tasks/*/graph.json), the
# fused single-kernel pass bench/passes/<task>.c is evaluated with each
# binary (cpu backend), runs interleaved binary by binary, and the table
# gives each binary's median score (geometric-mean eager-vs-fused speedup)
# and verdicts, the modeled H200 speedup (result.json's modeled_speedup; "-"
# for a binary without the model) and the evaluation's wall time:
#
#   bench/fusion.sh [-n RUNS] [-t TRIALS] [-k TASK]... PASSFS [PASSFS...]
#
# e.g. the branch point's build as the first binary, this tree's as the
# second: `bench/fusion.sh -n 3 BEFORE/build/passfs build/passfs`.  A binary
# in its build tree evaluates with its own source tree's pass API headers and
# op library (gpu/datadir.h), so an older build measures the older math.
set -euo pipefail
cd "$(dirname "$0")/.."
runs=1 trials= only=()
while getopts n:t:k: o; do
	case $o in
	n) runs=$OPTARG ;;
	t) trials=$OPTARG ;;
	k) only+=("$OPTARG") ;;
	*) exit 2 ;;
	esac
done
shift $((OPTIND - 1))
[ $# -ge 1 ] || { echo "usage: $0 [-n RUNS] [-t TRIALS] [-k TASK]... PASSFS [PASSFS...]" >&2; exit 2; }
py=/usr/bin/python3
[ -x $py ] || py=python3
if [ ${#only[@]} -gt 0 ]; then
	tasks=("${only[@]}")
else
	mapfile -t tasks < <($py - <<'PY'
import json, os
MATH = {"add", "sub", "mul", "div", "pow", "relu", "silu", "sigmoid", "tanh", "gelu", "exp", "rsqrt",
        "to", "where", "leaky_relu", "prelu"}
VIEWS = {"reshape", "view", "getitem", "dropout", "expand", "flatten", "contiguous"}
for t in sorted(os.listdir("tasks")):
    p = os.path.join("tasks", t, "graph.json")
    if not os.path.exists(p):
        continue
    ops = {n["op"] for v in json.load(open(p))["variants"] for n in v["nodes"]}
    if ops <= MATH | VIEWS and ops & MATH:
        print(t)
PY
)
fi
for t in "${tasks[@]}"; do
	[ -f "bench/passes/$t.c" ] || { echo "$0: no fused pass bench/passes/$t.c for the elementwise task $t" >&2; exit 1; }
done
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
extra=()
[ -n "$trials" ] && extra=(--trials "$trials")
for t in "${tasks[@]}"; do
	for ((r = 0; r < runs; r++)); do
		for ((i = 1; i <= $#; i++)); do
			bin=${!i}
			echo "fusion.sh: $t, run $((r + 1)) of $runs, binary $i" >&2
			"$bin" eval --task "$t" --tasks tasks --pass "bench/passes/$t.c" --backend cpu --json "${extra[@]}" \
				>"$tmp/r.json" 2>/dev/null || true
			$py - "$tmp/r.json" >>"$tmp/$t.$i" <<'PY'
import json, sys
try:
    r = json.load(open(sys.argv[1]))
    ok = sum(v["verdict"] == "ok" for v in r["variants"])
    print(r["verdict"], r.get("score") or 0, "%d/%d" % (ok, len(r["variants"])), r.get("modeled_speedup") or 0,
          r.get("elapsed_ms", 0) / 1e3)
except Exception as e:
    print("error", 0, "-", 0, 0)
PY
		done
	done
done
$py - "$tmp" "$#" "$(uptime | sed 's/.*load average: //')" "${tasks[@]}" <<'PY'
import statistics, sys
d, nb, load, tasks = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4:]
hdr = "%-32s" % "task" + "".join(" | %-40s" % ("binary %d: score (ok), modeled H200, eval s" % i) for i in range(1, nb + 1))
print(hdr)
print("-" * len(hdr))
for t in tasks:
    row = "%-32s" % t
    for i in range(1, nb + 1):
        rs = [l.split() for l in open("%s/%s.%d" % (d, t, i))]
        sc = statistics.median(float(r[1]) for r in rs)
        v = ",".join(sorted({r[0] for r in rs}))
        mo = statistics.median(float(r[3]) for r in rs) if all(len(r) > 4 for r in rs) else 0
        el = statistics.median(float(r[4]) for r in rs) if all(len(r) > 4 for r in rs) else 0
        row += " | %6.3f %-15s %6s %6.1f" % (sc, "(%s %s)" % (v, rs[-1][2]), "%.3f" % mo if mo else "-", el)
    print(row)
print("median of %s run(s) each; load average at the end: %s" % (len(rs), load))
PY
