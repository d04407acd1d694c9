#!/usr/bin/env bash
# The evaluation options are one table (fs/evalopt.c) for `passfs eval`,
# `watch` and `mount` (also as `-o key=value`): the same bad value gets the
# same refusal from each, exit status 2, before anything starts; every
# command's --help lists the same option lines.
source "$(dirname "$0")/../lib/cli.sh"
# refuses CMD... : passfs CMD... exits 2 with one line naming the option
refuses() {
	local want=$1
	shift
	local out rc
	out=$(timeout 10 "$PASSFS" "$@" 2>&1 >/dev/null)
	rc=$?
	if [ $rc -eq 2 ] && [ "$(printf '%s\n' "$out" | wc -l)" -eq 1 ] && printf '%s' "$out" | grep -q -- "$want"; then
		ok "$* -> $out"
	else
		bad "$*: exit $rc, '$out' (want 2 and '$want')"
	fi
}
for cmd in "eval --task t" "watch $tmp/w" "mount $tmp/m"; do
	# shellcheck disable=SC2086
	{
		refuses "--trials needs a whole number from 1 to 100000, not '0'" $cmd --trials 0
		refuses "--warmup needs a value" $cmd --warmup ""
		refuses "--timeout needs a number of seconds above 0 and at most 86400, not '90000'" $cmd --timeout 90000
		refuses "--lock-timeout needs a number of seconds above 0 and at most 86400, not '-1'" $cmd --lock-timeout -1
		refuses "--backend must be auto, cpu or cuda, not 'gpu'" $cmd --backend gpu
	}
done
refuses "-o trials needs a whole number from 1 to 100000, not 'x'" mount -o trials=x "$tmp/m"
refuses "-o lock_timeout needs a number of seconds above 0" mount -o lock_timeout=0 "$tmp/m"
# the option lines of --help: the same text in all three
for cmd in eval watch mount; do
	"$PASSFS" $cmd --help | grep -E '^  --(backend|trials|warmup|timeout|lock-timeout|cold)' >"$tmp/$cmd.help"
done
if cmp -s "$tmp/eval.help" "$tmp/watch.help" && cmp -s "$tmp/watch.help" "$tmp/mount.help" && [ -s "$tmp/eval.help" ]; then
	ok "--help: the same evaluation option lines in eval, watch and mount"
else
	bad "--help option lines differ: $(diff "$tmp/eval.help" "$tmp/mount.help" | head -5)"
fi

# --pass FILE is read whole: a pass over the 1 MiB cap is judged with its real
# size (it was cut at 2 MiB and named as 2097152 bytes), and one past 16 MiB is
# not read at all (exit 1, named)
head -c 3145728 /dev/zero | tr '\0' ' ' >"$tmp/big.c"
cat tests/passes/ok_fused.c >>"$tmp/big.c"
size=$(stat -c %s "$tmp/big.c")
"$PASSFS" eval --tasks tests/passes/tasks --task tiny_bias_gelu --backend cpu --pass "$tmp/big.c" --json \
	>"$tmp/big.json" 2>/dev/null
if /usr/bin/python3 -c 'import json,sys; r=json.load(open(sys.argv[1])); sys.exit(0 if r["verdict"] == "compile_error" and ("%s bytes" % sys.argv[2]) in r["message"] else 1)' "$tmp/big.json" "$size"; then
	ok "a 3 MiB pass: compile_error with its real size ($size bytes)"
else
	bad "3 MiB pass: $(head -c 300 "$tmp/big.json")"
fi
head -c $((17 << 20)) /dev/zero >"$tmp/huge.c"
out=$("$PASSFS" eval --tasks tests/passes/tasks --task tiny_bias_gelu --backend cpu --pass "$tmp/huge.c" 2>&1 >/dev/null)
rc=$?
if [ $rc -eq 1 ] && printf '%s' "$out" | grep -q "huge.c: over 16 MiB, not read"; then ok "a 17 MiB pass: exit 1, $out"
else bad "17 MiB pass: exit $rc, $out"; fi
finish
