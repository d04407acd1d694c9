#!/usr/bin/env bash
# A pass evaluated on imported tasks: `passfs import` turns the samples
# tests/import-samples/unbind_qkv and baddbmm_bloom into tasks, and `passfs
# eval` scores the hand-written fused passes of tests/passes/imported/ on
# them (cpu backend): verdict ok on every variant.  The same passes with one
# mistake each (the wrong unbind element, alpha ignored) must be mismatch, so
# the ok is the graph's arithmetic, not a lenient check.
source "$(dirname "$0")/../lib/cli.sh"
BACKEND=${BACKEND:-cpu}
# verdict TASK PASS WANT: eval --json, the verdict and every variant's must be WANT
verdict() {
	local task=$1 pfile=$2 want=$3 out
	if ! out=$(timeout 300 "$PASSFS" eval --tasks "$tmp/tasks" --task "$task" --pass "$pfile" --backend "$BACKEND" \
		--json --trials 3 --warmup 1 2>"$tmp/err"); then
		bad "$task $(basename "$pfile"): eval failed: $(tail -1 "$tmp/err")"
		return
	fi
	local got
	got=$(printf '%s' "$out" | /usr/bin/python3 -c "
import json, sys
r = json.load(sys.stdin)
vs = [v['verdict'] for v in r['variants']]
print(r['verdict'] if vs and all(v == r['verdict'] for v in vs) else 'mixed %s %s' % (r['verdict'], vs),
      r['message'])")
	case $got in
	"$want "*) ok "$task $(basename "$pfile"): $got" ;;
	*) bad "$task $(basename "$pfile"): want $want, got $got" ;;
	esac
}
mkdir -p "$tmp/tasks"
for s in unbind_qkv baddbmm_bloom; do
	if "$PASSFS" import "tests/import-samples/$s" --out "$tmp/tasks/$s" >"$tmp/imp.out" 2>"$tmp/err"; then
		ok "import $s: $(head -1 "$tmp/imp.out")"
	else
		bad "import $s: $(tail -1 "$tmp/err")"
		continue
	fi
	verdict "$s" "tests/passes/imported/$s.c" ok
done
# the mistakes: unbind's element 1 instead of 2; baddbmm's alpha left out
sed 's/x\[i \* c + 2\]/x[i * c + 1]/' tests/passes/imported/unbind_qkv.c >"$tmp/unbind_wrong_element.c"
sed 's/0\.125f \* acc/acc/' tests/passes/imported/baddbmm_bloom.c >"$tmp/baddbmm_no_alpha.c"
for f in "$tmp/unbind_wrong_element.c" "$tmp/baddbmm_no_alpha.c"; do
	if cmp -s "$f" "tests/passes/imported/$(case $f in *unbind*) echo unbind_qkv ;; *) echo baddbmm_bloom ;; esac).c"; then
		bad "$(basename "$f"): the edit did not apply"
	fi
done
verdict unbind_qkv "$tmp/unbind_wrong_element.c" mismatch
verdict baddbmm_bloom "$tmp/baddbmm_no_alpha.c" mismatch
finish
