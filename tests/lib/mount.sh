# tests/lib/mount.sh - sourced by the FUSE tests (tests/cli/mount_*.sh) from
# the repository root, after tests/lib/cli.sh, with NAME set to the test's
# name: skips the test (exit 0) where /dev/fuse is absent, fails it where
# fusermount3 is missing; sets $MNT and $STATE under $tmp and makes the exit
# trap unmount $MNT, stop $daemon (set it to the daemon's pid; SIGTERM, then
# SIGKILL after 2 s) and run mount_cleanup_more (define it for more to
# remove) before removing $tmp.  watch_beside starts a watcher beside the
# mount (below).
PASSFS=$(realpath "$PASSFS")
if [ ! -e /dev/fuse ]; then
	echo "SKIP $NAME: /dev/fuse is absent here (tests/cli/watch.sh covers the tree without FUSE)"
	exit 0
fi
if ! command -v fusermount3 >/dev/null; then
	echo "FAIL $NAME: fusermount3 is missing (install fuse3: ./tests/deps.sh)"
	exit 1
fi
MNT=$tmp/mnt
STATE=$tmp/state
daemon=""
mount_cleanup() {
	fusermount3 -u "$MNT" 2>/dev/null
	# The daemon lets a running evaluation finish before it exits: with a
	# spinning pass that is minutes of CPU taken from the tests after this
	# one.  Two seconds, then SIGKILL (its workers die with it).
	if [ -n "$daemon" ] && kill "$daemon" 2>/dev/null; then
		for _ in $(seq 20); do
			kill -0 "$daemon" 2>/dev/null || break
			sleep 0.1
		done
		kill -KILL "$daemon" 2>/dev/null
	fi
	if declare -F mount_cleanup_more >/dev/null; then mount_cleanup_more; fi
	rm -rf "$tmp"
}
trap mount_cleanup EXIT

# watch_beside DIR ARGS...: a `passfs watch` of DIR beside the mount (its
# stdout in $tmp/wout, stderr in $tmp/werr), stopped by the exit trap; returns
# once its banner is out (or it died).
watch_beside() {
	local dir=$1
	shift
	"$PASSFS" watch "$@" "$dir" >"$tmp/wout" 2>"$tmp/werr" &
	wpid=$!
	mount_cleanup_more() { kill "$wpid" 2>/dev/null; wait "$wpid" 2>/dev/null; }
	for _ in $(seq 200); do
		grep -qs 'Ctrl-C' "$tmp/wout" && break
		kill -0 "$wpid" 2>/dev/null || break
		sleep 0.05
	done
}
