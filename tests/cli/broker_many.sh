#!/usr/bin/env bash
# Many small jobs (4 front ends x 50 passfs eval --broker, 200 in all,
# passing and non-compiling passes in turn; BROKER_MANY_PER=N for N per
# front end) through 3 workers (one with 2 slots): every
# job answered with its own verdict, each evaluated exactly once (distinct
# job ids in the workers' logs, as many as jobs), nothing left queued or
# pending, and every worker took some.  Skips without redis-server.
source "$(dirname "$0")/../lib/cli.sh"
source "$(dirname "$0")/../lib/broker.sh"
T=tests/passes/tasks
EV=(--tasks "$T" --task tiny_bias_gelu --backend cpu --trials 1 --warmup 0 --json)
FRONTS=4
PER=${BROKER_MANY_PER:-50}
worker_start wa --beat 0.5
worker_start wb --beat 0.5
worker_start wc --beat 0.5 --slots 2
front() { # n
	for i in $(seq "$PER"); do
		if [ $((i % 2)) -eq 0 ]; then p=ok_fused want=ok; else p=compile_error want=compile_error; fi
		v=$(timeout 300 "$PASSFS" eval "${EV[@]}" --pass tests/passes/$p.c --broker "$BURL" 2>>"$tmp/front$1.err" |
			python3 -c "import json,sys; r=json.load(sys.stdin); print(r['verdict'], r.get('worker'))" 2>/dev/null)
		echo "$want $v" >>"$tmp/front$1.out"
	done
}
t0=$(date +%s.%N)
pids=""
for f in $(seq "$FRONTS"); do front "$f" & pids="$pids $!"; done
for p in $pids; do wait "$p"; done
t1=$(date +%s.%N)
total=$((FRONTS * PER))
got=$(cat "$tmp"/front*.out | wc -l)
right=$(cat "$tmp"/front*.out | awk '$1 == $2 && $3 ~ /^w[abc]$/' | wc -l)
[ "$got" -eq "$total" ] && [ "$right" -eq "$total" ] && ok "$total jobs answered, each with its verdict ($(python3 -c "print(f'{$t1-$t0:.1f}')") s)" ||
	bad "$right of $total right, $got answered: $(cat "$tmp"/front*.err | sort | uniq -c | head -5)"
ev=$(cat "$tmp"/w?.log | grep -c ": evaluating")
ids=$(cat "$tmp"/w?.log | sed -n 's/.*job \([0-9a-f]*\): evaluating.*/\1/p' | sort -u | wc -l)
[ "$ev" -eq "$total" ] && [ "$ids" -eq "$total" ] && ok "each job evaluated exactly once ($ev evaluations, $ids jobs)" ||
	bad "$ev evaluations of $ids distinct jobs for $total"
for w in wa wb wc; do
	n=$(grep -c ": evaluating" "$tmp/$w.log")
	[ "$n" -gt 0 ] && ok "$w evaluated $n" || bad "$w evaluated none"
done
sleep 0.5
p=$(rcli XPENDING passfs:jobs:cpu workers | head -1)
l=$(rcli XLEN passfs:jobs:cpu)
r=$(rcli --raw KEYS 'passfs:reply:*' | grep -c .)
k=$(rcli --raw KEYS 'passfs:reply:*' | head -1)
[ "$p" = 0 ] && [ "$l" = 0 ] && [ "$r" = 0 ] && ok "nothing queued, pending or unread left" ||
	bad "pending $p, stream $l, replies $r: $k: $(rcli XRANGE "$k" - + | tr '\n' ' ') ttl $(rcli TTL "$k")"
finish
