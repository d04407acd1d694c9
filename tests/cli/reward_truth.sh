#!/usr/bin/env bash
# Reward truth (docs/scoring.md): the verdict and score say what
# happened.  Passes that are not close to eager at t <= -1 (all zeros, a
# constant, outputs 1.2x, 1.6x or 10x off), or no closer than a constant
# would be, are never `ok` and score at most 0.15; an honest bfloat16 pass that is bit-equal to eager on the public
# inputs and one ulp off on every other input set is `ok` in 20 of 20
# evaluations (each with a fresh secret seed and fresh timed inputs), never
# `rejected`.  Each evaluation also checks the `worst` element and
# the message that names it.
source "$(dirname "$0")/../lib/cli.sh"
BACKEND=${BACKEND:-cpu}
P=tests/truth/passes

# run NAME TASKS TASK PASSFILE PYCOND [eval args]: evaluates and checks PYCOND
# (a python expression on r, the result, and v0, its first variant).
run() {
	local name=$1 tasks=$2 task=$3 file=$4 cond=$5
	shift 5
	if ! "$PASSFS" eval --tasks "$tasks" --task "$task" --backend "$BACKEND" --json --pass "$file" \
		--warmup 1 --trials 6 "$@" >"$tmp/$name.json" 2>"$tmp/$name.err"; then
		bad "$name: passfs eval failed: $(tail -c 300 "$tmp/$name.err")"
		return
	fi
	local why
	if why=$(COND="$cond" /usr/bin/python3 - "$tmp/$name.json" <<'PY'
import json, os, sys
r = json.load(open(sys.argv[1]))
v0 = r['variants'][0]
ok = eval('(' + os.environ['COND'] + ')')
if not ok:
    print('verdict %s score %s message %s; variant 0: %s' % (r['verdict'], r['score'], r['message'],
          json.dumps({k: v0.get(k) for k in ('verdict', 'min_t', 'close_from_t', 'worst', 'message')})))
sys.exit(0 if ok else 1)
PY
	); then
		ok "$name"
	else
		bad "$name: $why"
	fi
}

# Not close at any t <= -1: wrong values, b up to t = 0 and 1 from t = 1, so
# 0.147207 exactly; min_t null, close_from_t says how close it came, the
# message names the worst element and its level.
wrong="r['verdict'] == 'mismatch' and r['score'] <= 0.15 and abs(r['score'] - 0.147207) < 1e-6 and
  all(v['verdict'] == 'mismatch' and v['min_t'] is None and v['worst']['output'] == 't1' and
      len(v['worst']['index']) == 3 for v in r['variants']) and
  r['es_t']['0'] == 0.1 and r['es_t']['-1'] == 0.1 and r['es_t']['1'] == 1 and
  'output t1[' in r['message'] and 'ok needs' in r['message']"
for c in 0.0f 0.5f; do
	sed "s/CONSTANT_VALUE/$c/" $P/constant.c >"$tmp/constant_$c.c"
	run "constant $c" tests/cheats/tasks cheat_bias_gelu "$tmp/constant_$c.c" "$wrong and
	  all(v['worst']['pass'] == float('$c'.rstrip('f')) for v in r['variants'])"
done
for k in 1.6f 10.0f; do
	sed "s/SCALE_FACTOR/$k/" $P/scaled.c >"$tmp/scaled_$k.c"
	run "scaled x$k" tests/cheats/tasks cheat_bias_gelu "$tmp/scaled_$k.c" "$wrong and
	  all(abs(v['worst']['pass'] / v['worst']['eager'] - float('$k'.rstrip('f'))) < 1e-3 for v in r['variants'])"
done
# 1.2x may come within t = -1 on some element sets: never ok, and where it
# is not close at -1 it scores as wrong values.
sed "s/SCALE_FACTOR/1.2f/" $P/scaled.c >"$tmp/scaled_1.2f.c"
run "scaled x1.2f" tests/cheats/tasks cheat_bias_gelu "$tmp/scaled_1.2f.c" \
	"r['verdict'] == 'mismatch' and all(v['verdict'] == 'mismatch' for v in r['variants']) and
	 (r['score'] <= 0.15 or any(v['min_t'] is not None for v in r['variants']))"

# The honest pass itself: ok from t = -10, its worst element within tolerance.
run honest tests/cheats/tasks cheat_bias_gelu tests/cheats/honest_f32.c \
	"r['verdict'] == 'ok' and all(v['min_t'] == -10 and v['worst']['abs_err'] < 1e-5 for v in r['variants'])"

# One ulp off everywhere but the public set: 20 evaluations, 20 ok.
"$PASSFS" eager --tasks tests/truth/tasks --task truth_add_bf16 --backend "$BACKEND" --out "$tmp/eager" >/dev/null 2>&1 ||
	bad "passfs eager truth_add_bf16 failed"
head=$(/usr/bin/python3 -c "import struct, sys; print('0x%016xull' % struct.unpack('<Q', open(sys.argv[1], 'rb').read(8))[0])" \
	"$tmp/eager/bf16_r4/inputs/0.bin")
sed "s/PUBLIC_HEAD/$head/" $P/bf16_ulp.c >"$tmp/bf16_ulp.c"
okn=0
RUNS=${TRUTH_RUNS:-20}        # tests/gpu/check.sh runs fewer within its budget
for i in $(seq 1 "$RUNS"); do
	"$PASSFS" eval --tasks tests/truth/tasks --task truth_add_bf16 --backend "$BACKEND" --json --pass "$tmp/bf16_ulp.c" \
		--warmup 1 --trials 8 >"$tmp/bf16_$i.json" 2>/dev/null &&
		/usr/bin/python3 -c "
import json, sys
r = json.load(open(sys.argv[1]))
sys.exit(0 if r['verdict'] == 'ok' and all(v['verdict'] == 'ok' and -6 <= v['min_t'] <= -5 and
         v['worst']['rel_err'] <= 2 ** -7 for v in r['variants']) else 1)" "$tmp/bf16_$i.json" &&
		okn=$((okn + 1))
done
if [ "$okn" -eq "$RUNS" ]; then
	ok "bf16 one ulp off outside the public set: ok in $RUNS of $RUNS evaluations"
else
	bad "bf16 one ulp off outside the public set: ok in only $okn of $RUNS evaluations ($(/usr/bin/python3 -c "
import json, sys; r = json.load(open(sys.argv[1])); print(r['verdict'], r['message'])" "$tmp/bf16_1.json" 2>&1))"
fi

# All zeros on a real task whose outputs are all within 0.1 (bert_pooler_tanh:
# tanh of small activations): close from t = -1, but so is any constant, so it
# counts as wrong values (it used to be `ok` at a 10-125x "speedup").
sed "s/CONSTANT_VALUE/0.0f/" $P/constant.c >"$tmp/zeros.c"
run "zeros on bert_pooler_tanh" tasks bert_pooler_tanh "$tmp/zeros.c" \
	"r['verdict'] == 'mismatch' and abs(r['score'] - 0.147207) < 1e-6 and
	 all(v['verdict'] == 'mismatch' and v['min_t'] is None and 'no closer than a constant' in v['message']
	     for v in r['variants'])" --trials 2 --warmup 0

# (A pass right on the public inputs and wrong on the secret ones is still
# `rejected`: tests/cli/cheats.sh, c04_public_seed_only.)
finish
