# tests/lib/cli.sh - sourced by command-level tests (tests/cli/*.sh) from the
# repository root: $PASSFS (default ./build/passfs), the counters with ok and
# bad, a temporary directory $tmp removed at exit, and finish, which prints
# the count and gives the test's exit status.
set -uo pipefail
PASSFS=${PASSFS:-./build/passfs}
fails=0
pass=0
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
ok() { echo "ok   $1"; pass=$((pass + 1)); }
bad() { echo "FAIL $1"; fails=$((fails + 1)); }
# relay FILE: counts a helper's output lines ("ok   ..." passes, any other
# line a failure), e.g. what an embedded Python check printed.
relay() {
	local line
	while read -r line; do
		case $line in
		ok*) ok "${line#ok   }" ;;
		*) bad "$line" ;;
		esac
	done <"$1"
}
finish() {
	echo "$pass passed, $fails failed"
	[ "$fails" -eq 0 ]
}
