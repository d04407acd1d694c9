#!/usr/bin/env bash
# bench/broker.sh - what the Redis broker (docs/broker.md) adds to an
# evaluation: `passfs eval` of a tiny job (the test task, cpu, one trial, no
# warm-up) locally and through `passfs eval --broker` with W workers, on a
# redis-server of its own on a free local port.
#
#   bench/broker.sh [-n JOBS] [-w "1 2 4"] [-c CLIENTS] [PASSFS]
#
# Latency: N jobs one after another, local and through one worker,
# interleaved, for a correct pass (a whole evaluation) and for one that does
# not compile (about 0.1 s: the broker's fixed cost shows); prints the median
# and the p90 wall seconds of each and the medians' difference (what the
# broker adds: the queue, the graph fetch, the worker's process hop).  Throughput: N jobs from C front ends at once, for each
# worker count in -w; prints jobs per second and the median job latency.
set -euo pipefail
cd "$(dirname "$0")/.."
n=20 workers="1 2 4" clients=4
while getopts n:w:c: o; do
	case $o in
	n) n=$OPTARG ;;
	w) workers=$OPTARG ;;
	c) clients=$OPTARG ;;
	*) exit 2 ;;
	esac
done
shift $((OPTIND - 1))
PASSFS=$(realpath "${1:-build/passfs}")
command -v redis-server >/dev/null || { echo "bench/broker.sh: redis-server is missing" >&2; exit 1; }
tmp=$(mktemp -d)
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
url=redis://127.0.0.1:$port
redis-server --port "$port" --bind 127.0.0.1 --save '' --dir "$tmp" --logfile "$tmp/redis.log" &
rpid=$!
wpids=()
cleanup() {
	for p in "${wpids[@]}"; do kill "$p" 2>/dev/null || true; done
	kill "$rpid" 2>/dev/null || true
	wait 2>/dev/null || true
	rm -rf "$tmp"
}
trap cleanup EXIT
for _ in $(seq 50); do redis-cli -p "$port" ping 2>/dev/null | grep -q PONG && break; sleep 0.1; done
EV=(eval --tasks tests/passes/tasks --task tiny_bias_gelu --backend cpu --trials 1 --warmup 0 --json)
one() { # file [broker args]: appends one job's wall seconds
	local f=$1
	shift
	local t0 t1
	t0=$(date +%s%N)
	"$PASSFS" "${EV[@]}" "$@" >/dev/null
	t1=$(date +%s%N)
	echo "$(((t1 - t0) / 1000))" >>"$f"
}
stats() { # file: median p90 (seconds)
	python3 -c "
import statistics, sys
v = sorted(int(l) / 1e6 for l in open(sys.argv[1]))
print(f'{statistics.median(v):.3f} {v[min(len(v) - 1, int(0.9 * len(v)))]:.3f}')" "$1"
}
start_workers() { # count
	for p in "${wpids[@]}"; do kill "$p" 2>/dev/null || true; done
	for p in "${wpids[@]}"; do wait "$p" 2>/dev/null || true; done
	wpids=()
	for i in $(seq "$1"); do
		"$PASSFS" worker --broker "$url" --name "b$i" --backend cpu --quiet &
		wpids+=($!)
	done
	sleep 0.5
}

start_workers 1
one "$tmp/warm" --pass tests/passes/ok_fused.c --broker "$url"     # the op library's cache, both sides
one "$tmp/warm" --pass tests/passes/ok_fused.c
for pass in ok_fused compile_error; do
	for _ in $(seq "$n"); do
		one "$tmp/local_$pass" --pass tests/passes/$pass.c
		one "$tmp/remote_$pass" --pass tests/passes/$pass.c --broker "$url"
	done
	read -r lm lp <<<"$(stats "$tmp/local_$pass")"
	read -r rm rp <<<"$(stats "$tmp/remote_$pass")"
	echo "latency, $n jobs of tests/passes/$pass.c one after another (wall s):"
	printf '  %-18s median %s  p90 %s\n' local "$lm" "$lp" "broker, 1 worker" "$rm" "$rp"
	python3 -c "print(f'  the broker adds {($rm - $lm) * 1000:.0f} ms to the median')"
done
echo "throughput, $n jobs from $clients front ends at once:"
for w in $workers; do
	start_workers "$w"
	rm -f "$tmp/t"
	t0=$(date +%s%N)
	cpids=()
	for c in $(seq "$clients"); do
		(for _ in $(seq $(((n + clients - 1) / clients))); do
			one "$tmp/t" --pass tests/passes/ok_fused.c --broker "$url"
		done) &
		cpids+=($!)
	done
	for p in "${cpids[@]}"; do wait "$p"; done
	t1=$(date +%s%N)
	k=$(wc -l <"$tmp/t")
	read -r m p <<<"$(stats "$tmp/t")"
	python3 -c "print(f'  {$w} worker(s): {$k} jobs in {($t1 - $t0) / 1e9:.1f} s = {$k * 1e9 / ($t1 - $t0):.2f} jobs/s, median latency $m s, p90 $p s')"
done
