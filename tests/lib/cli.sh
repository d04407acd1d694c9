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
finish() {
	echo "$pass passed, $fails failed"
	[ "$fails" -eq 0 ]
}
