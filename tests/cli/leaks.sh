#!/usr/bin/env bash
# leaks.sh - a pass reads nothing of the machine (tests/leaks/, docs/integrity.md
# "The compile jail").  Each pass in tests/leaks/ tries one way to make a
# compiler read a file or the environment back to its author: #line naming a
# file, #line naming /proc/self/environ, __has_include of a path, an #include
# or #line hidden from the source scan, an #include of /dev/zero, .incbin in a
# section attribute.  Every run makes a fresh canary: a file with random lines
# in a new temporary directory, and PASSFS_CANARY_<random>=<random> in the
# evaluator's environment.  Each pass is evaluated with `passfs eval`; no 8-byte
# piece of the canary may appear in result.json, stderr, the state or the cache
# directory, and the verdict must be the refusal expected.  The hidden ones run
# under each fallback of the jail too (PASSFS_JAIL=landlock, =limits), where
# the log filter must still hold; and one goes through `passfs watch` (the
# daemon path, with its history) and one through `passfs mount`.
#
#   PASSFS=build/passfs bash tests/cli/leaks.sh
. tests/lib/cli.sh
PY=/usr/bin/python3
T=tests/cheats/tasks
TASK=cheat_bias_gelu
L=tests/leaks

# The canary: random per run.
CAN_DIR=$(mktemp -d "${TMPDIR:-/tmp}/passfs-canary.XXXXXX")
trap 'rm -rf "$tmp" "$CAN_DIR"' EXIT
CANARY=$CAN_DIR/secret.txt
for _ in 1 2 3 4 5 6; do
	$PY -c 'import secrets; print("cx" + secrets.token_hex(16))'
done >"$CANARY"
chmod 0600 "$CANARY"
CAN_VAR=PASSFS_CANARY_$($PY -c 'import secrets; print(secrets.token_hex(4))')
CAN_VAL=$($PY -c 'import secrets; print("ev" + secrets.token_hex(20))')
export "$CAN_VAR=$CAN_VAL"
export PASSFS_CACHE_DIR=$tmp/cache XDG_STATE_HOME=$tmp/xdg-state XDG_CACHE_HOME=$tmp/xdg-cache
mkdir -p "$tmp/passes" "$tmp/xdg-state" "$tmp/xdg-cache"

# field FILE EXPR: a Python expression on r, the JSON document in FILE ('' when
# it cannot be read).
field() {
	$PY -c 'import json, sys
try:
    r = json.load(open(sys.argv[1]))
    v = eval(sys.argv[2])
    print("" if v is None else v if isinstance(v, str) else json.dumps(v))
except Exception:
    print("")' "$1" "$2"
}

# leaked FILE...: prints the files holding an 8-byte piece of the canary
# file's lines or of the environment variable's value (none: prints nothing).
leaked() {
	CANARY="$CANARY" CAN_VAL="$CAN_VAL" $PY - "$@" <<'EOF'
import os, sys
secrets = [l.strip() for l in open(os.environ["CANARY"]) if l.strip()] + [os.environ["CAN_VAL"]]
pieces = {s[i:i + 8].encode() for s in secrets for i in range(len(s) - 7)}
for root in sys.argv[1:]:
    paths = [root] if os.path.isfile(root) else [os.path.join(d, f) for d, _, fs in os.walk(root) for f in fs]
    for p in paths:
        try:
            data = open(p, "rb").read()
        except OSError:
            continue
        hit = next((x for x in pieces if x in data), None)
        if hit is not None:
            print("%s holds %r" % (p, hit.decode()))
EOF
}

# check NAME WANT [ENV=VALUE...]: evaluates tests/leaks/NAME.c (the canary's
# path filled in); WANT is a regular expression over the verdict.  $NEVER, when
# set, is text the result must not hold (a probe's answer).
NEVER=
check() {
	local name=$1 want=$2
	shift 2
	local tag=$name${1:+.${1#PASSFS_JAIL=}}
	sed "s|@CANARY_FILE@|$CANARY|g" "$L/$name.c" >"$tmp/passes/$name.c"
	local t0=$(date +%s.%N)
	env "$@" "$PASSFS" eval --tasks "$T" --task "$TASK" --backend cpu --json --pass "$tmp/passes/$name.c" \
		--trials 2 --warmup 0 >"$tmp/$tag.json" 2>"$tmp/$tag.err"
	local rc=$? secs
	secs=$($PY -c "import time; print('%.1f' % (time.time() - $t0))")
	if [ $rc -ne 0 ]; then
		bad "$tag: passfs eval exited $rc: $(tail -c 300 "$tmp/$tag.err")"
		return
	fi
	local where verdict
	where=$(leaked "$tmp/$tag.json" "$tmp/$tag.err" "$tmp/xdg-state" "$tmp/xdg-cache" "$tmp/cache")
	verdict=$($PY -c 'import json, sys; r = json.load(open(sys.argv[1])); print(r["verdict"], "|", r["message"][:140])' \
		"$tmp/$tag.json")
	if [ -n "$where" ]; then
		bad "$tag: the canary leaked: $where (verdict $verdict)"
	elif [ -n "$NEVER" ] && grep -q "$NEVER" "$tmp/$tag.json"; then
		bad "$tag: the probe answered: '$NEVER' in result.json (verdict $verdict)"
	elif ! [[ ${verdict%% *} =~ ^($want)$ ]]; then
		bad "$tag: verdict $verdict, wanted $want"
	else
		ok "$(printf '%-24s %5s s  %s' "$tag" "$secs" "$verdict")"
	fi
	echo "$secs" >"$tmp/$tag.secs"
}

check l01_line_file compile_error
check l02_line_environ compile_error
NEVER="the canary file exists" check l03_has_include compile_error
check l04_masked_include 'compile_error|unsupported'
check l05_masked_environ 'compile_error|unsupported'
check l06_zero_bomb 'compile_error|unsupported'
# the jail, not a memory limit, ends it: no /dev/zero to read (before: 4 GiB
# of zeros read in about 9 s here)
if [ -f "$tmp/l06_zero_bomb.secs" ] && $PY -c "import sys; sys.exit(0 if float('$(cat "$tmp/l06_zero_bomb.secs")') < 5 else 1)"; then
	ok "l06_zero_bomb ended within 5 s"
else
	bad "l06_zero_bomb took $(cat "$tmp/l06_zero_bomb.secs" 2>/dev/null) s"
fi
check l07_incbin 'compile_error|rejected'

# The fallbacks: where the jail is weaker, the scan and the log filter hold.
for mode in landlock limits; do
	check l01_line_file compile_error PASSFS_JAIL=$mode
	check l04_masked_include 'compile_error|unsupported' PASSFS_JAIL=$mode
	check l05_masked_environ 'compile_error|unsupported' PASSFS_JAIL=$mode
	if [ "$(field "$tmp/l05_masked_environ.$mode.json" 'r["compile"]["jail"]')" = "$mode" ] &&
		[ -n "$(field "$tmp/l05_masked_environ.$mode.json" 'r["compile"].get("jail_note")')" ]; then
		ok "PASSFS_JAIL=$mode: result.json names the jail and says why not the full one"
	else
		bad "PASSFS_JAIL=$mode: compile: $(field "$tmp/l05_masked_environ.$mode.json" 'r["compile"]' | head -c 300)"
	fi
done
[[ "$(field "$tmp/l01_line_file.json" 'r["compile"]["jail"]')" =~ ^(namespaces|landlock|limits)$ ]] &&
	ok "result.json names the compile jail: $(field "$tmp/l01_line_file.json" 'r["compile"]["jail"]')" ||
	bad "no compile.jail in result.json"

# The daemon path: `passfs watch` (an evaluator process per evaluation, the
# history in the state directory).
W=$tmp/w
sed "s|@CANARY_FILE@|$CANARY|g" "$L/l05_masked_environ.c" >"$tmp/passes/watch.c"
"$PASSFS" watch --tasks "$T" --state "$tmp/state" --backend cpu --trials 1 --warmup 0 --quiet "$W" \
	>"$tmp/watch.out" 2>"$tmp/watch.err" &
wpid=$!
for _ in $(seq 1 200); do
	[ -s "$W/$TASK/status" ] && break
	sleep 0.05
done
cp "$tmp/passes/watch.c" "$W/$TASK/pass.c"
sha=$(sha256sum "$tmp/passes/watch.c" | cut -d' ' -f1)
done_=0
for _ in $(seq 1 600); do
	if [ -s "$W/$TASK/result.json" ] && grep -q "$sha" "$W/$TASK/result.json" 2>/dev/null &&
		grep -q '"state": *"done"' "$W/$TASK/result.json" 2>/dev/null; then
		done_=1
		break
	fi
	sleep 0.1
done
kill -TERM "$wpid" 2>/dev/null
wait "$wpid" 2>/dev/null
if [ $done_ -ne 1 ]; then
	bad "watch: no result for the pass: $(head -c 300 "$W/$TASK/result.json" 2>/dev/null) $(tail -c 300 "$tmp/watch.err")"
else
	where=$(leaked "$W" "$tmp/state" "$tmp/watch.out" "$tmp/watch.err")
	if [ -n "$where" ]; then
		bad "watch: the canary leaked: $where"
	else
		ok "watch: $(field "$W/$TASK/result.json" 'r["verdict"] + " | " + r["message"][:100]'), nothing of the canary in the tree or the state"
	fi
fi

# The mount: the same daemon path over FUSE (skipped where /dev/fuse is
# absent); the read of result.json waits for the evaluation.
if [ -e /dev/fuse ] && command -v fusermount3 >/dev/null; then
	M=$tmp/m
	mkdir -p "$M"
	sed "s|@CANARY_FILE@|$CANARY|g" "$L/l01_line_file.c" >"$tmp/passes/mount.c"
	if "$PASSFS" mount --tasks "$T" --state "$tmp/mstate" --backend cpu --trials 1 --warmup 0 --wait-timeout 60 \
		"$M" >"$tmp/mount.out" 2>"$tmp/mount.err"; then
		cp "$tmp/passes/mount.c" "$M/$TASK/pass.c"
		cat "$M/$TASK/result.json" >"$tmp/mount.result.json"
		cat "$M/$TASK/es_t" >"$tmp/mount.es_t"
		fusermount3 -u "$M"
		where=$(leaked "$tmp/mount.result.json" "$tmp/mount.es_t" "$tmp/mstate" "$tmp/mount.out" "$tmp/mount.err")
		verdict=$(field "$tmp/mount.result.json" 'r["verdict"]')
		if [ -n "$where" ]; then
			bad "mount: the canary leaked: $where"
		elif [ "$verdict" != compile_error ]; then
			bad "mount: verdict '$verdict', want compile_error: $(head -c 300 "$tmp/mount.result.json")"
		else
			ok "mount: compile_error, nothing of the canary in result.json, es_t or the state"
		fi
	else
		bad "mount failed: $(tail -c 300 "$tmp/mount.err")"
	fi
else
	echo "SKIP mount: /dev/fuse or fusermount3 is absent"
fi
finish
