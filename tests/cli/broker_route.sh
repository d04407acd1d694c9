#!/usr/bin/env bash
# Jobs go to the stream of the backend they ask for (docs/broker.md "Streams
# and keys"): with two cpu workers, cpu and auto jobs are evaluated (on cpu)
# while a cuda job stays queued on passfs:jobs:cuda, untouched, and `broker
# status` reports it per stream, with each consumer's device; an idle job
# on passfs:jobs:auto is reclaimed like one on a backend's stream; a job
# left by a version 2 front end on passfs:jobs is refused by name.  And
# `passfs worker --gpus`: its usage errors (exit 2), and on a machine without
# a GPU one clear line at start (exit 1), never a hang.  Skips without
# redis-server.
source "$(dirname "$0")/../lib/cli.sh"
source "$(dirname "$0")/../lib/broker.sh"
T=tests/passes/tasks
EV=(--tasks "$T" --task tiny_bias_gelu --trials 1 --warmup 0 --json)
field() { python3 -c "import json,sys; print(json.load(open(sys.argv[1])).get(sys.argv[2]))" "$1" "$2"; }

# --gpus: usage errors, each one line naming the problem, exit 2
usage() { # want-pattern args...
	local want=$1
	shift
	out=$(timeout 20 "$PASSFS" worker --broker "$BURL" "$@" 2>&1)
	rc=$?
	if [ $rc -eq 2 ] && [ "$(printf '%s\n' "$out" | wc -l)" -eq 1 ] && printf '%s' "$out" | grep -q -- "$want"; then
		ok "worker $*: usage error ($out)"
	else
		bad "worker $*: exit $rc, '$out'"
	fi
}
usage "not '0,,1'" --gpus 0,,1
usage "not 'x'" --gpus x
usage "not '-1'" --gpus -1
usage "not '0,'" --gpus 0,
usage "GPU 1 twice" --gpus 1,1
usage "no CUDA ordinal" --gpus 4096
usage "exclude each other" --gpus 0 --slots 2
usage "exclude each other" --slots 2 --gpus all
usage "needs the cuda backend" --gpus 0 --backend cpu
# no GPU here: --gpus, and a cuda worker, fail at start with the reason
if [ -e /dev/nvidiactl ]; then
	echo "note: this machine has a GPU; the no-GPU checks are skipped"
else
	for a in "--gpus 0" "--gpus all" "--gpus 0,1,3 --backend cuda" "--backend cuda"; do
		# shellcheck disable=SC2086
		out=$(timeout 30 "$PASSFS" worker --broker "$BURL" --name nogpu $a 2>&1)
		rc=$?
		if [ $rc -eq 1 ] && [ "$(printf '%s\n' "$out" | wc -l)" -eq 1 ] && printf '%s' "$out" | grep -q "no CUDA device on this machine"; then
			ok "worker $a without a GPU: exit 1 at start ($out)"
		else
			bad "worker $a without a GPU: exit $rc, '$out'"
		fi
	done
	[ -z "$(rcli --raw KEYS 'passfs:worker:nogpu')" ] && ok "and none of them served" || bad "a worker without its GPU beat"
fi

# routing: two cpu workers; a cuda job waits on its stream
worker_start r1 --beat 0.5 --lease 3
worker_start r2 --beat 0.5 --lease 3
PASSFS_BROKER_WAIT=300 "$PASSFS" eval "${EV[@]}" --backend cuda --pass tests/passes/ok_fused.c --broker "$BURL" \
	>"$tmp/cuda.json" 2>"$tmp/cuda.err" &
cuda_front=$!
bg_pids="$bg_pids $cuda_front"
for _ in $(seq 100); do [ "$(rcli XLEN passfs:jobs:cuda)" = 1 ] && break; sleep 0.1; done
[ "$(rcli XLEN passfs:jobs:cuda)" = 1 ] && ok "a cuda job is queued on passfs:jobs:cuda" ||
	bad "passfs:jobs:cuda holds $(rcli XLEN passfs:jobs:cuda): $(cat "$tmp/cuda.err")"
pids=""
for i in 1 2 3 4; do
	if [ "$i" -le 2 ]; then b=cpu; else b=auto; fi
	timeout 120 "$PASSFS" eval "${EV[@]}" --backend $b --pass tests/passes/ok_fused.c --broker "$BURL" \
		>"$tmp/j$i.json" 2>"$tmp/j$i.err" &
	pids="$pids $!"
done
for p in $pids; do wait "$p"; done
for i in 1 2 3 4; do
	if [ "$i" -le 2 ]; then b=cpu; else b=auto; fi
	v=$(field "$tmp/j$i.json" verdict 2>/dev/null)
	be=$(field "$tmp/j$i.json" backend 2>/dev/null)
	w=$(field "$tmp/j$i.json" worker 2>/dev/null)
	if [ "$v" = ok ] && [ "$be" = cpu ] && { [ "$w" = r1 ] || [ "$w" = r2 ]; }; then
		ok "a job asking $b: evaluated on cpu by $w"
	else
		bad "a job asking $b: verdict $v, backend $be, worker $w: $(cat "$tmp/j$i.err")"
	fi
done
n=$(cat "$tmp"/r1.log "$tmp"/r2.log | grep -c ": evaluating")
[ "$n" -eq 4 ] && ok "the cpu workers evaluated the 4 cpu and auto jobs, nothing else" || bad "$n evaluations: $(cat "$tmp"/r?.log)"
grep -q "refused" "$tmp"/r1.log "$tmp"/r2.log && bad "a worker refused a job: $(grep refused "$tmp"/r?.log)" ||
	ok "no worker refused a job (none was handed one of another backend)"
sleep 1 # a heartbeat since the last job
st=$("$PASSFS" broker status --broker "$BURL" 2>&1)
if printf '%s\n' "$st" | grep -q "^passfs:jobs:cuda  *1  *0$" && printf '%s\n' "$st" | grep -q "^passfs:jobs:cpu  *0  *0$" &&
	printf '%s\n' "$st" | grep -q "^passfs:jobs:auto  *0  *0$" && printf '%s\n' "$st" | grep -q "queued 1   in flight 0"; then
	ok "broker status: the cuda job queued on its stream, the others empty"
else
	bad "broker status, streams: $st"
fi
if printf '%s\n' "$st" | grep -q "^r1\.0  *cpu  *(idle)  *cpu" && printf '%s\n' "$st" | grep -q "^r2\.0  *cpu  *(idle)" &&
	printf '%s\n' "$st" | grep -q "^r1  *cpu "; then
	ok "broker status: each consumer with its device"
else
	bad "broker status, consumers: $st"
fi
kill -0 "$cuda_front" 2>/dev/null && ok "the cuda job's front end still waits" || bad "the cuda front end ended: $(cat "$tmp/cuda.err")"
kill -TERM "$cuda_front"
wait "$cuda_front" 2>/dev/null
if grep -q "stopped by" "$tmp/cuda.err" && [ "$(rcli --raw KEYS 'passfs:cancel:*' | grep -c .)" = 1 ]; then
	ok "SIGTERM gives the waiting cuda job up (its cancel marker set)"
else
	bad "cuda front end: $(cat "$tmp/cuda.err"); cancel markers: $(rcli --raw KEYS 'passfs:cancel:*')"
fi

# an idle job on the auto stream is reclaimed too: a consumer that took
# it and stopped (ghost; queued and taken in one transaction, so that no
# worker reads it first), then the lease (3 s)
JOBV=3
printf '%s\n' MULTI "XADD passfs:jobs:auto * v $JOBV id idle1 graph 0000 reply passfs:reply:idle1 job garbage" \
	"XREADGROUP GROUP workers ghost COUNT 1 STREAMS passfs:jobs:auto >" EXEC | rcli >/dev/null
m=$(sleep 3; answer idle1)
case $m in *"refused the job"*"malformed"*) ok "an idle job on passfs:jobs:auto is reclaimed and answered: $m" ;;
*) bad "auto stream reclaim: '$m'" ;; esac
grep -q "reclaimed stream entry .* of passfs:jobs:auto" "$tmp"/r?.log && ok "the worker's log names the stream" ||
	bad "no reclaim line: $(tail -n 3 "$tmp"/r1.log "$tmp"/r2.log)"

# version 2's one stream: what an old front end queues is refused by name
rcli XADD passfs:jobs '*' v 2 id old1 graph 0000 reply passfs:reply:old1 job x >/dev/null
m=$(answer old1)
case $m in *"refused the job"*"broker version 2"*"upgrade the front end"*) ok "a version 2 job on passfs:jobs: $m" ;;
*) bad "version 2 job: '$m'" ;; esac
sleep 0.5
p=0
for s in cpu auto; do p=$((p + $(rcli XPENDING passfs:jobs:$s workers | head -1) + $(rcli XLEN passfs:jobs:$s))); done
p=$((p + $(rcli XPENDING passfs:jobs workers | head -1) + $(rcli XLEN passfs:jobs)))
[ "$p" = 0 ] && ok "the cpu, auto and version 2 streams are empty" || bad "left on the streams: $p"
finish
