#!/usr/bin/env bash
# The evaluation process's request is versioned (engine/eval/evaluator.c): a
# request of another protocol version, or something that is no request at
# all, is refused with one line that says which, exit status 2, and no
# evaluation.
source "$(dirname "$0")/../lib/cli.sh"
# magic "evfp" little-endian, then version 1 (this binary speaks 2)
printf 'evfp\001\000\000\000' >"$tmp/v1"
printf 'hello, evaluator' >"$tmp/junk"
for case in v1 junk; do
	out=$(timeout 10 "$PASSFS" --passfs-evaluator 3<"$tmp/$case" 2>&1 >/dev/null)
	rc=$?
	case $case in
	v1) want="protocol version 1" ;;
	junk) want="protocol version" ;;
	esac
	if [ $rc -eq 2 ] && printf '%s' "$out" | grep -q "$want"; then
		ok "$case: $out"
	else
		bad "$case: exit $rc, '$out' (want 2 and '$want')"
	fi
done
finish
