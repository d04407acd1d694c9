#!/usr/bin/env bash
# bench/eager_model.sh - eager's modeled H200 time (what cpu-backend passes are
# scored against) per variant, from `passfs eager --model --json`, for one or
# more passfs binaries side by side, each counted afresh (a new model cache per
# binary).  Prints per variant each binary's modeled ms, the kernel floor (the
# counted bytes at 4.3 TB/s plus 3 us a launch, of the first binary), each
# binary's modeled / floor, and the geometric mean of the ratios per binary.
#
#   bench/eager_model.sh [-t TASKS_DIR] [-b PASSFS]... [TASK...]
#
# Default: build/passfs, every task of the tasks directory (default: tasks).
# Example (before and after a change to eager's plan, the reduction tasks):
#   bench/eager_model.sh -b /tmp/old/build/passfs -b build/passfs \
#       -t tests/eager/tasks reduce_split_sum reduce_split_mean
set -euo pipefail
cd "$(dirname "$0")/.."
tasks_dir=tasks bins=()
while getopts t:b: o; do
	case $o in
	t) tasks_dir=$OPTARG ;;
	b) bins+=("$OPTARG") ;;
	*) echo "usage: $0 [-t TASKS_DIR] [-b PASSFS]... [TASK...]" >&2; exit 2 ;;
	esac
done
shift $((OPTIND - 1))
[ ${#bins[@]} -gt 0 ] || bins=(build/passfs)
if [ $# -gt 0 ]; then ids=("$@"); else
	ids=(); for d in "$tasks_dir"/*/graph.json; do ids+=("$(basename "$(dirname "$d")")"); done
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
for b in "${!bins[@]}"; do
	mkdir -p "$tmp/cache$b"
	for id in "${ids[@]}"; do
		PASSFS_CACHE_DIR="$tmp/cache$b" "${bins[$b]}" eager --model --json --tasks "$tasks_dir" \
			--task "$id" >"$tmp/$b.$id.json" 2>"$tmp/$b.$id.err" ||
			echo "${0##*/}: ${bins[$b]} on $id: $(tail -1 "$tmp/$b.$id.err")" >&2
	done
done
python3 - "$tmp" "${#bins[@]}" "${ids[@]}" <<'EOF'
import json, math, os, sys
tmp, nb, ids = sys.argv[1], int(sys.argv[2]), sys.argv[3:]
def load(b, t):
    p = os.path.join(tmp, "%d.%s.json" % (b, t))
    try:
        return {v["name"]: v for v in json.load(open(p))["variants"]}
    except (OSError, ValueError, KeyError):
        return {}
head = "%-48s" % "task/variant" + "".join("%12s" % ("ms[%d]" % b) for b in range(nb)) + "%12s" % "floor_ms" \
    + "".join("%9s" % ("x[%d]" % b) for b in range(nb))
print(head)
logs = [[] for _ in range(nb)]
for t in ids:
    runs = [load(b, t) for b in range(nb)]
    for name in runs[0] or (runs[-1] if runs else {}):
        vs = [r.get(name) for r in runs]
        ms = [v.get("modeled_h200_ms") if v else None for v in vs]
        floor = next((v["kernel_floor"]["floor_ms"] for v in vs if v), None)
        line = "%-48s" % ("%s/%s" % (t, name))[:48]
        line += "".join("%12s" % ("%.4f" % m if m is not None else "-") for m in ms)
        line += "%12s" % ("%.4f" % floor if floor else "-")
        for b, m in enumerate(ms):
            if m is not None and floor:
                logs[b].append(math.log(m / floor))
                line += "%9.2f" % (m / floor)
            else:
                line += "%9s" % "-"
        print(line)
print("geomean modeled / floor: " + ", ".join(
    "[%d] %.3f over %d" % (b, math.exp(sum(l) / len(l)), len(l)) if l else "[%d] -" % b for b, l in enumerate(logs)))
EOF
