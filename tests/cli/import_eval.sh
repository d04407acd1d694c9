#!/usr/bin/env bash
# A pass evaluated on imported tasks: `passfs import` turns the samples
# tests/import-samples/unbind_qkv, baddbmm_bloom, unfold_halonext,
# tensor_split_rope, leaky_relu_darknet, conv1d_wav2vec2 and arange_bloom
# into tasks, and `passfs eval` scores the hand-written passes of
# tests/passes/imported/ on them (cpu backend): verdict ok on every variant.
# The same passes with one mistake each (the wrong unbind element, alpha
# ignored, the halo's offset left out, tensor_split's sections all of size
# n / sections, leaky_relu's slope 0.01 for 0.1, the grouped conv's bias left
# out, the alibi exponents' arange started at 0) must be mismatch, so the ok
# is the graph's arithmetic, not a lenient check.
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
for s in unbind_qkv baddbmm_bloom unfold_halonext tensor_split_rope leaky_relu_darknet conv1d_wav2vec2 arange_bloom; do
	if "$PASSFS" import "tests/import-samples/$s" --out "$tmp/tasks/$s" >"$tmp/imp.out" 2>"$tmp/err"; then
		ok "import $s: $(head -1 "$tmp/imp.out")"
	else
		bad "import $s: $(tail -1 "$tmp/err")"
		continue
	fi
	verdict "$s" "tests/passes/imported/$s.c" ok
done
# the mistakes: unbind's element 1 instead of 2; baddbmm's alpha left out;
# the windows read without the halo's offset; tensor_split(c, 3) without the
# longer first sections (its last section read at [10, 15) for [11, 16));
# the conv block's leaky_relu at 0.01 (the default) instead of 0.1; the
# grouped conv1d without its bias; 0.5 ** arange(0, 8) instead of arange(1, 9)
mistake() { # TASK SED-SCRIPT NAME: the task's pass edited, must be mismatch
	sed "$2" "tests/passes/imported/$1.c" >"$tmp/$3.c"
	if cmp -s "$tmp/$3.c" "tests/passes/imported/$1.c"; then
		bad "$3: the edit did not apply"
	else
		verdict "$1" "$tmp/$3.c" mismatch
	fi
}
mistake unbind_qkv 's/x\[i \* c + 2\]/x[i * c + 1]/' unbind_wrong_element
mistake baddbmm_bloom 's/0\.125f \* acc/acc/' baddbmm_no_alpha
mistake unfold_halonext 's/ - HALO, x = / , x = /; s/pos % WIN - HALO;/pos % WIN;/' unfold_no_halo
mistake tensor_split_rope 's/ + (j < n % sections ? j : n % sections)//' tensor_split_even_sections
mistake leaky_relu_darknet 's/^#define SLOPE 0\.1f/#define SLOPE 0.01f/' leaky_relu_default_slope
mistake conv1d_wav2vec2 's/float acc = b2\[o\];/float acc = 0.f;/' conv1d_no_bias
mistake arange_bloom 's/^#define POW_START 1 /#define POW_START 0 /' arange_wrong_start
finish
