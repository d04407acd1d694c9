#!/usr/bin/env bash
# leaks_smuggle.sh - passes that try to read a file of the machine through
# the compilers or to speak for the evaluator (tests/leaks/s*.c,
# docs/integrity.md): assembly smuggled in a section attribute (s01), the
# source scan blinded by a fake raw string (s02), a forged sandbox report
# (s03), a token-pasted section attribute (s04), #ident's string (s05), a
# report line that makes a violation look like a crash (s06).
#
# Every run makes a canary file of random content in a fresh directory; each
# pass is generated from its template with the canary's path (@CANARY@).
# Checked per pass: the verdict, and that no 8 bytes of the canary appear in
# result.json or on stderr; then all passes again through `passfs watch`
# with a fresh state directory, and no 8 bytes of the canary anywhere in
# the state directory (history) or the watched tree.  One line per check,
# then "N passed, N failed".
#
#   PASSFS=build/passfs bash tests/cli/leaks_smuggle.sh
set -uo pipefail
PASSFS=${PASSFS:-./build/passfs}
PY=/usr/bin/python3
T=tests/cheats/tasks
TASK=cheat_bias_gelu
L=tests/leaks
tmp=$(mktemp -d "${TMPDIR:-/tmp}/passfs-leaks.XXXXXX")
pid=
cleanup() {
	if [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null; then
		kill -TERM "$pid"
		wait "$pid"
	fi
	rm -rf "$tmp"
}
trap cleanup EXIT
mkdir -p "$tmp/tmp"
export TMPDIR="$tmp/tmp"
passes=0
fails=0
ok() { echo "ok   $*"; passes=$((passes + 1)); }
fail() { echo "FAIL $*"; fails=$((fails + 1)); }

# The canary: an identifier-like line (so an #include of it makes g++ quote
# it in an error) of random hex, in a directory of its own.
mkdir -p "$tmp/canary"
CANARY=$tmp/canary/secret-$RANDOM.txt
printf 'k%s\n' "$(head -c 24 /dev/urandom | od -An -tx1 | tr -d ' \n')" >"$CANARY"
chmod 0644 "$CANARY"

# leaked FILE...: prints the first 8-byte piece of the canary found in a
# file (0 when one is), else nothing (1).
leaked() {
	$PY - "$CANARY" "$@" <<'EOF'
import sys
canary = open(sys.argv[1], 'rb').read().strip()
pieces = {canary[i:i + 8] for i in range(len(canary) - 7)}
for path in sys.argv[2:]:
    try:
        data = open(path, 'rb').read()
    except OSError:
        continue
    for p in pieces:
        if p in data:
            print(f"{path}: {p.decode(errors='replace')}")
            sys.exit(0)
sys.exit(1)
EOF
}

# gen NAME: the pass with the canary's path (and, for s03, passfs's own
# symbol offsets as `nm` gives them) substituted; prints its path, or
# nothing when it cannot be made.
gen() {
	local name=$1 out=$tmp/$1.c sbx rfd
	sbx=$(nm "$PASSFS" 2>/dev/null | awk '$3 == "sbx_syscall" {print $1}')
	rfd=$(nm "$PASSFS" 2>/dev/null | awk '$3 == "report_fd" {print $1}')
	if grep -q '@SBX_SYSCALL@' "$L/$name.c" && { [ -z "$sbx" ] || [ -z "$rfd" ]; }; then
		return
	fi
	sed -e "s|@CANARY@|$CANARY|g" -e "s|@SBX_SYSCALL@|0x${sbx:-0}|g" -e "s|@REPORT_FD@|0x${rfd:-0}|g" \
		"$L/$name.c" >"$out"
	echo "$out"
}

# check NAME WANT PYCOND: evaluates the generated pass; the verdict must be
# WANT and PYCOND (python on r, the result) hold; nothing of the canary in
# result.json or stderr.
check() {
	local name=$1 want=$2 cond=$3 file
	file=$(gen "$name")
	if [ -z "$file" ]; then
		echo "skip $name: no symbols in $PASSFS (stripped?)"
		return
	fi
	"$PASSFS" eval --tasks "$T" --task "$TASK" --backend cpu --json --pass "$file" --trials 2 --warmup 0 \
		>"$tmp/$name.json" 2>"$tmp/$name.err"
	local rc=$? where
	if [ $rc -ne 0 ]; then
		fail "$name: passfs eval exited $rc: $(tail -c 300 "$tmp/$name.err")"
		return
	fi
	if where=$(leaked "$tmp/$name.json" "$tmp/$name.err"); then
		fail "$name: the canary leaked ($where)"
		return
	fi
	local got
	if got=$(WANT="$want" COND="$cond" $PY - "$tmp/$name.json" <<'EOF'
import json, os, sys
r = json.load(open(sys.argv[1]))
ok = r['verdict'] == os.environ['WANT'] and r['score'] <= 0.1 and eval(os.environ['COND'])
print(f"{r['verdict']}: {r['message'][:240]}")
sys.exit(0 if ok else 1)
EOF
	); then
		ok "$name: $got"
	else
		fail "$name: want $want ($cond), got $got"
	fi
}

check s01_section_incbin compile_error "\"the attribute 'section' is not allowed\" in r['message']"
check s02_raw_string_blind unsupported "'is not allowed' in r['message'] and 'secret-' in r['message']"
check s03_forged_report rejected "'forbidden system call' in r['message'] and 'pass code had run' in r['message']"
check s04_paste_section compile_error "'poisoned' in r['message'] and 'section' in r['message']"
check s05_ident_incbin compile_error "'#ident' in r['message']"
check s06_report_hides_violation rejected "'forbidden system call' in r['message'] and 'Segmentation fault' in r['message']"

# The same passes through `passfs watch`: the result, the history and the
# logs kept in the state directory hold nothing of the canary either.
W=$tmp/w
"$PASSFS" watch --tasks "$T" --state "$tmp/state" --backend cpu --trials 2 --warmup 0 --quiet "$W" \
	>"$tmp/watch.out" 2>"$tmp/watch.err" &
pid=$!
for _ in $(seq 1 200); do
	[ -s "$W/$TASK/status" ] && break
	sleep 0.05
done
for name in s01_section_incbin s02_raw_string_blind s03_forged_report s04_paste_section s05_ident_incbin \
	s06_report_hides_violation; do
	file=$tmp/$name.c
	[ -f "$file" ] || continue
	cp "$file" "$W/$TASK/pass.c"
	sha=$(sha256sum "$file" | cut -c1-64)
	done_=0
	for _ in $(seq 1 1200); do
		if [ "$(cat "$W/$TASK/status" 2>/dev/null)" = done ] &&
			grep -q "\"pass_sha256\": \"$sha\"" "$W/$TASK/result.json" 2>/dev/null; then
			done_=1
			break
		fi
		sleep 0.1
	done
	[ $done_ = 1 ] || fail "watch: no result for $name"
done
kill -TERM "$pid"
wait "$pid"
pid=
mapfile -t kept < <(find "$tmp/state" "$W" -type f)
if [ "${#kept[@]}" -eq 0 ]; then
	fail "watch: the state directory and the tree are empty"
elif where=$(leaked "${kept[@]}" "$tmp/watch.out" "$tmp/watch.err"); then
	fail "watch: the canary leaked into the state or the tree ($where)"
else
	n_hist=$(find "$tmp/state" -type f | wc -l)
	ok "watch: nothing of the canary in ${#kept[@]} files (state: $n_hist) or the watcher's output"
fi

echo "$passes passed, $fails failed"
[ "$fails" -eq 0 ]
