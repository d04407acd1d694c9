#!/usr/bin/env bash
# bench/fs.sh - median latency of the file operations an agent does on a task
# directory, on three file systems side by side:
#
#   passfs   `passfs mount` (cpu backend; the state directory under
#            --state-in, default $TMPDIR or /tmp)
#   minifs   bench/minifs.c: a minimal libfuse3 low-level file system serving
#            the same bytes, with passfs's caching settings (the FUSE floor)
#   tmpfs    a copy of the same files in /dev/shm
#
#   bench/fs.sh [-n N] [-m M] [-r ROUNDS] [--tasks DIR] [--task ID]
#               [--pin CPUS | --pin-split FS/CLIENT] [--state-in DIR]
#
# The timing loop is C (bench/fslat.c, CLOCK_MONOTONIC around each
# operation): N timed runs per operation (default 2000), M for the pass.c
# write (default 500), the three file systems interleaved in 20 batches;
# ROUNDS runs of it (default 3), and each cell is the median of the rounds'
# medians.  --pin runs the daemons and the timing loop under `taskset -c
# CPUS` (one CPU: no cross-CPU wake-ups, the steadiest numbers on a small
# VM); --pin-split 1/0 runs the daemons on CPU 1 and the loop on CPU 0.
# --state-in puts passfs's state directory there (default $TMPDIR or /tmp; a save's
# durable write is the one cost that depends on it).  Needs /dev/fuse,
# fusermount3 (or root) and the build (cmake --build build; BUILD=dir points
# elsewhere).  Prints a markdown table; docs/benchmarks-fs.md has the last
# ones and how they were measured.
set -uo pipefail
cd "$(dirname "$0")/.."
BUILD=${BUILD:-build}
N=2000
M=500
ROUNDS=3
TASKS=tasks
TASK=""
PIN=""        # taskset for the daemons
PINC=""       # taskset for the timing loop
STATE_IN=${TMPDIR:-/tmp}
while [ $# -gt 0 ]; do
	case $1 in
	-n) N=$2; shift 2 ;;
	-m) M=$2; shift 2 ;;
	-r) ROUNDS=$2; shift 2 ;;
	--tasks) TASKS=$2; shift 2 ;;
	--task) TASK=$2; shift 2 ;;
	--pin) PIN="taskset -c $2"; PINC=$PIN; shift 2 ;;
	--pin-split) PIN="taskset -c ${2%%/*}"; PINC="taskset -c ${2#*/}"; shift 2 ;;
	--state-in) STATE_IN=$2; shift 2 ;;
	*) echo "usage: bench/fs.sh [-n N] [-m M] [-r ROUNDS] [--tasks DIR] [--task ID] [--pin CPUS | --pin-split FS/CLIENT] [--state-in DIR]" >&2; exit 2 ;;
	esac
done
for b in passfs passfs_minifs passfs_fslat; do
	[ -x "$BUILD/$b" ] || { echo "bench/fs.sh: $BUILD/$b is not built (cmake --build $BUILD)" >&2; exit 1; }
done
[ -e /dev/fuse ] || { echo "bench/fs.sh: /dev/fuse is missing" >&2; exit 1; }
if [ -z "$TASK" ]; then
	TASK=$(for d in "$TASKS"/*/; do [ -f "$d/graph.json" ] && basename "$d"; done | head -1)
fi

tmp=$(mktemp -d "${TMPDIR:-/tmp}/passfs-bench.XXXXXX")
shm=$(mktemp -d /dev/shm/passfs-bench.XXXXXX)
state=$(mktemp -d "$STATE_IN/passfs-bench-state.XXXXXX")
mini_pid=""
daemon=""
cleanup() {
	fusermount3 -u "$tmp/passfs" 2>/dev/null
	# The daemon finishes writing its state before it exits.
	for _ in $(seq 100); do
		[ -n "$daemon" ] && kill -0 "$daemon" 2>/dev/null || break
		sleep 0.05
	done
	fusermount3 -u "$tmp/mini" 2>/dev/null
	[ -n "$mini_pid" ] && kill "$mini_pid" 2>/dev/null
	[ -n "${KEEP:-}" ] && cp "$tmp/lat" "$KEEP"
	rm -rf "$tmp" "$shm" "$state"
}
trap cleanup EXIT

# passfs: one evaluation of the 4 KiB text first, so result.json is a done
# result and every write below is answered from history (no evaluation runs
# during the measurements).
out=$($PIN "$BUILD/passfs" mount --tasks "$TASKS" --state "$state" --backend cpu --trials 1 --warmup 0 \
	"$tmp/passfs") || exit 1
daemon=$(printf '%s\n' "$out" | sed -n 's/.*daemon pid \([0-9]*\).*/\1/p' | head -1)
P=$tmp/passfs/$TASK
"$BUILD/passfs_fslat" -n 1 -m 1 -w 0 "$P" >/dev/null || exit 1
cat "$P/result.json" >/dev/null
grep -q '"state": "done"' "$P/result.json" || { echo "bench/fs.sh: no result on passfs" >&2; exit 1; }

# minifs: the same bytes, read through the passfs mount.
mkdir -p "$tmp/mini"
$PIN "$BUILD/passfs_minifs" "$P" "$tmp/mini" 2>"$tmp/mini.err" &
mini_pid=$!
for _ in $(seq 100); do
	mountpoint -q "$tmp/mini" && break
	sleep 0.05
done
mountpoint -q "$tmp/mini" || { echo "bench/fs.sh: minifs did not mount: $(cat "$tmp/mini.err")" >&2; exit 1; }

# tmpfs: a copy.
mkdir -p "$shm/$TASK"
for f in README.md graph.json pass.c result.json es_t status; do
	cat "$P/$f" >"$shm/$TASK/$f" 2>/dev/null || : >"$shm/$TASK/$f"
done
cmp -s "$P/graph.json" "$tmp/mini/$TASK/graph.json" && cmp -s "$P/result.json" "$tmp/mini/$TASK/result.json" ||
	{ echo "bench/fs.sh: minifs does not serve the same bytes" >&2; exit 1; }

# One timing process, the three file systems interleaved per operation.
for r in $(seq "$ROUNDS"); do
	$PINC "$BUILD/passfs_fslat" -n "$N" -m "$M" "$P" "$tmp/mini/$TASK" "$shm/$TASK" |
		awk -v r="$r" '{ split("passfs mini shm", fs, " "); $1 = fs[$1 + 1] " " r; print }' >>"$tmp/lat" || exit 1
done

python3 - "$tmp/lat" "$TASK" "$N" "$M" "$ROUNDS" "$(stat -c %s "$P/graph.json")" "$(stat -c %s "$P/result.json")" <<'EOF'
import statistics, sys
path, task, n, m, rounds, gsize, rsize = sys.argv[1:]
med = {}
for line in open(path):
    fs, r, key, median, p10, p90, runs = line.split()
    med.setdefault((fs, key), []).append(float(median))
rows = [
    ("stat_graph", "`stat graph.json`", "1 day"),
    ("stat_result", "`stat result.json`", "0"),
    ("stat_pass", "`stat pass.c`", "1 s"),
    ("read_graph", f"open + read + close `graph.json` ({int(gsize)} B)", "1 day, keep_cache"),
    ("read_result", f"open + read + close `result.json`, idle ({int(rsize)} B)", "0, keep_cache"),
    ("ls_l", "`ls -l` of the task dir (readdir + 8 lstat)", "as above"),
    ("open_close_pass", "open(O_WRONLY) + close `pass.c`, nothing written (no fire)", "1 s, no keep_cache"),
    ("write_pass", "open(O_TRUNC) + write 4 KiB + close `pass.c` (fires)", "1 s, no keep_cache"),
]
def cell(fs, key):
    v = med.get((fs, key))
    return statistics.median(v) if v else float("nan")
print(f"task {task}; medians in microseconds of {n} runs ({m} for the write), median of {rounds} rounds")
print()
print("| operation | attr timeout, caching (passfs = minifs) | passfs | minifs | tmpfs | passfs / minifs |")
print("|---|---|---:|---:|---:|---:|")
worst = 0
for key, name, cache in rows:
    p, mi, t = cell("passfs", key), cell("mini", key), cell("shm", key)
    ratio = p / mi if mi > 0 else float("nan")
    worst = max(worst, ratio)
    flag = "" if ratio <= 1.5 else " (over 1.5x)"
    print(f"| {name} | {cache} | {p:.1f} | {mi:.1f} | {t:.1f} | {ratio:.2f}{flag} |")
print()
print(f"worst passfs/minifs ratio: {worst:.2f} (target: 1.5)")
EOF
