#!/usr/bin/env bash
# bench/jail.sh - what the compile jail adds to a compile.
#
#   bench/jail.sh [-n RUNS] [-p PASS] [PASSFS]
#
# Evaluates PASS (default tests/cheats/honest_f32.c, one timed trial: the
# evaluation is mostly the compile) RUNS times (default 15) under each kind
# of jail, interleaved run by run so machine load hits them alike:
#   namespaces  the full jail (the default)
#   landlock    PASSFS_JAIL=landlock: no namespaces, a Landlock ruleset
#   limits      PASSFS_JAIL=limits: limits and dropped capabilities only,
#               about what a compile cost before the jail
# and prints the medians of result.json's compile.jail_ms (entering the jail,
# from the compile child's start to the compile: the precompiled header's
# lookup, the binds, pivot_root, the fork into the pid namespace),
# compile.nvrtc_ms, compile.host_ms and the whole evaluation's wall time,
# then each kind's wall median less that of `limits`: the latency the jail
# adds per compile.
set -euo pipefail
cd "$(dirname "$0")/.."
runs=15 pass=tests/cheats/honest_f32.c
while getopts n:p: o; do
	case $o in
	n) runs=$OPTARG ;;
	p) pass=$OPTARG ;;
	*) exit 2 ;;
	esac
done
shift $((OPTIND - 1))
bin=${1:-./build/passfs}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
kinds="namespaces landlock limits"
# one evaluation first: the precompiled header exists for every kind
"$bin" eval --tasks tests/cheats/tasks --task cheat_bias_gelu --backend cpu --json --pass "$pass" \
	--trials 1 --warmup 0 >/dev/null 2>&1 || true
for ((r = 0; r < runs; r++)); do
	for k in $kinds; do
		env=()
		[ "$k" = namespaces ] || env=(PASSFS_JAIL=$k)
		t0=$(date +%s%N)
		env "${env[@]}" "$bin" eval --tasks tests/cheats/tasks --task cheat_bias_gelu --backend cpu --json \
			--pass "$pass" --trials 1 --warmup 0 >"$tmp/$k.$r.json" 2>/dev/null || true
		t1=$(date +%s%N)
		echo $(((t1 - t0) / 1000)) >"$tmp/$k.$r.wall_us"
	done
done
/usr/bin/python3 - "$tmp" "$runs" $kinds <<'EOF'
import json, statistics, sys
tmp, runs, kinds = sys.argv[1], int(sys.argv[2]), sys.argv[3:]
rows = {}
for k in kinds:
    jail, nv, host, wall, got = [], [], [], [], set()
    for r in range(runs):
        c = json.load(open("%s/%s.%d.json" % (tmp, k, r)))["compile"]
        got.add(c.get("jail"))
        jail.append(c.get("jail_ms", float("nan")))
        nv.append(c.get("nvrtc_ms", float("nan")))
        host.append(c.get("host_ms", float("nan")))
        wall.append(int(open("%s/%s.%d.wall_us" % (tmp, k, r)).read()) / 1000)
    rows[k] = [statistics.median(x) for x in (jail, nv, host, wall)] + [",".join(sorted(map(str, got)))]
print("%-11s %9s %9s %9s %9s %9s  %s" % ("kind", "jail_ms", "nvrtc_ms", "host_ms", "wall_ms", "added_ms", "result's jail"))
base = rows["limits"][3] if "limits" in rows else None
for k in kinds:
    j, n, h, w, got = rows[k]
    print("%-11s %9.2f %9.1f %9.1f %9.1f %9s  %s" % (k, j, n, h, w, "%+.1f" % (w - base) if base else "-", got))
print("medians of %d runs each (interleaved)" % runs)
EOF
