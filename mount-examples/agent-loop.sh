#!/usr/bin/env bash
# agent-loop.sh - the loop an agent runs against a passfs mount, as a plain
# bash script: read the task, write a pass, read the verdict, edit the pass
# with sed, read the verdict again, keep the best.
#
#   ./build/passfs mount --tasks tests/passes/tasks ./mnt     # the tiny test task
#   mount-examples/agent-loop.sh ./mnt                         # tiny_bias_gelu, tests/passes/ok_fused.c
#   mount-examples/agent-loop.sh ./mnt TASK START_PASS.c       # any task, your first pass
#
# No SDK: every step is a file operation, and `cat result.json` waits for the
# evaluation of the pass just written (up to the mount's --wait-timeout), so
# nothing polls.  The sed edits stand in for what a model would write: they
# try other thread-block sizes in the pass's kernel launch.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
MNT=${1:?usage: agent-loop.sh MOUNTPOINT [TASK [START_PASS]]}
TASK=${2:-tiny_bias_gelu}
START=${3:-$here/../tests/passes/ok_fused.c}
D=$MNT/$TASK
[ -d "$D" ] || { echo "agent-loop: no task $TASK under $MNT (ls $MNT)" >&2; exit 2; }

field() { # a field of result.json
	python3 -c 'import json, sys; print(json.load(open(sys.argv[1])).get(sys.argv[2]))' "$D/result.json" "$1"
}
show() { echo "$1: verdict $(field verdict)  score $(field score)  seq $(field seq)"; }

echo "== the task"
sed -n '1,20p' "$D/README.md"

echo "== a first pass"
cp "$START" "$D/pass.c"
show "first pass"
echo "   $(field message)"

best=$(field score)
bestfile=$(mktemp /tmp/agent-best.XXXXXX.c)
trap 'rm -f "$bestfile"' EXIT
cp "$D/pass.c" "$bestfile"

echo "== edit, read, keep the best"
for bs in 64 128 512; do
	sed -i -E -e "s/block = pf_dim\([0-9]+\)/block = pf_dim($bs)/" \
		-e "s|\(n \+ [0-9]+\) / [0-9]+|(n + $((bs - 1))) / $bs|" "$D/pass.c"
	score=$(field score)
	show "block $bs"
	if python3 -c 'import sys; a, b = sys.argv[1:]; sys.exit(0 if a != "None" and (b == "None" or float(a) > float(b)) else 1)' "$score" "$best"; then
		best=$score
		cp "$D/pass.c" "$bestfile"
	fi
done

# The best bytes were evaluated already: answered from history at once.
cp "$bestfile" "$D/pass.c"
echo "== best score $(cat "$D/es_t")"
echo "== the trajectory: passfs history export --task $TASK --out trajectory.jsonl"
