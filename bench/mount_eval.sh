#!/usr/bin/env bash
# bench/mount_eval.sh - time from saving pass.c on a mount to reading its
# result: `cp PASS pass.c; cat result.json` (the read waits for the
# evaluation), on the 6-variant test task, for a correct pass (a whole
# evaluation) and a pass that does not compile (the shortest one: compile,
# then the result).  Each save appends a new comment, so nothing is answered
# from history.
#
#   bench/mount_eval.sh [-n RUNS] [-b BACKEND] PASSFS [PASSFS...]
#
# Several binaries (two builds to compare) each get a mount, used in turn,
# save by save, so load on the machine hits them alike.  Prints one row per
# binary and pass: median, min and max seconds, and the median relative to
# the first binary's.  Needs /dev/fuse.
set -euo pipefail
cd "$(dirname "$0")/.."
runs=7 backend=cpu
while getopts n:b: o; do
	case $o in
	n) runs=$OPTARG ;;
	b) backend=$OPTARG ;;
	*) exit 2 ;;
	esac
done
shift $((OPTIND - 1))
[ $# -ge 1 ] || { echo "usage: $0 [-n RUNS] [-b BACKEND] PASSFS [PASSFS...]" >&2; exit 2; }
tmp=$(mktemp -d)
cleanup() {
	for ((i = 1; i <= $#; i++)); do
		fusermount3 -u "$tmp/m$i" 2>/dev/null || true
	done
	rm -rf "$tmp"
}
trap 'cleanup "$@"' EXIT
for ((i = 1; i <= $#; i++)); do
	bin=$(realpath "${!i}")
	mkdir -p "$tmp/m$i"
	"$bin" mount --tasks tests/passes/tasks --state "$tmp/s$i" --backend "$backend" "$tmp/m$i" >/dev/null
done
T=tiny_bias_gelu
for kind in ok compile_error; do
	src=tests/passes/ok_fused.c
	[ $kind = compile_error ] && src=tests/passes/compile_error.c
	for ((r = 0; r < runs; r++)); do
		for ((i = 1; i <= $#; i++)); do
			{ cat "$src"; echo "// run $kind $r"; } >"$tmp/pass.c"
			/usr/bin/python3 - "$tmp/pass.c" "$tmp/m$i/$T" "$kind" >>"$tmp/$i.$kind.txt" <<'PY'
import json, shutil, sys, time
src, d, kind = sys.argv[1:4]
t0 = time.monotonic()
shutil.copyfile(src, d + "/pass.c")
r = json.load(open(d + "/result.json"))
t1 = time.monotonic()
assert r["state"] == "done" and r["verdict"] == kind, (r["state"], r["verdict"], r.get("message"))
print(t1 - t0)
PY
		done
	done
done
/usr/bin/python3 - "$tmp" "$@" <<'PY'
import statistics, sys
tmp, bins = sys.argv[1], sys.argv[2:]
print("%-40s %-14s %8s %8s %8s %8s" % ("binary", "pass", "median", "min", "max", "ratio"))
for kind in ("ok", "compile_error"):
    base = None
    for i, b in enumerate(bins, 1):
        xs = [float(x) for x in open("%s/%d.%s.txt" % (tmp, i, kind))]
        m = statistics.median(xs)
        base = base or m
        print("%-40s %-14s %8.3f %8.3f %8.3f %8.2f" % (b[-40:], kind, m, min(xs), max(xs), m / base))
PY
