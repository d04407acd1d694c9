# tests/lib/broker.sh - sourced by the broker tests (tests/cli/broker_*.sh)
# after tests/lib/cli.sh: skips the test (exit 0, "skip") where redis-server
# or redis-cli is missing or passfs was built without hiredis; otherwise
# starts a redis-server of the test's own on a free local port ($BPORT,
# $BURL), and gives
#   broker_restart [--keep]   stop it and start it again on the same port (its
#                             data lost, or kept with --keep: an append-only file)
#   worker_start NAME ARGS... a `passfs worker` in the background (log
#                             $tmp/NAME.log); its pid in $WPID
#   rcli ARGS...              redis-cli against it
# tests/lib/mount.sh, sourced after this, replaces the exit trap: define
# mount_cleanup_more() { broker_stop_all; } then.
# The exit trap stops the workers, the server and everything the test put
# in $bg_pids, then removes $tmp.
if ! command -v redis-server >/dev/null || ! command -v redis-cli >/dev/null; then
	echo "skip: redis-server or redis-cli is missing (./tests/deps.sh installs them)"
	exit 0
fi
if "$PASSFS" worker --broker redis://127.0.0.1:1 2>&1 | grep -q "without hiredis"; then
	echo "skip: this passfs was built without hiredis"
	exit 0
fi
bg_pids=""
BREDIS_PID=""
free_port() {
	python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'
}
BPORT=$(free_port)
BURL=redis://127.0.0.1:$BPORT
rcli() { redis-cli -p "$BPORT" "$@"; }
broker_up() { # [redis-server options]
	mkdir -p "$tmp/redis"
	redis-server --port "$BPORT" --bind 127.0.0.1 --dir "$tmp/redis" --save '' --daemonize no \
		--logfile "$tmp/redis/log" "$@" &
	BREDIS_PID=$!
	for _ in $(seq 50); do
		rcli ${REDIS_AUTH:+-a "$REDIS_AUTH" --no-auth-warning} ping 2>/dev/null | grep -q PONG && return 0
		sleep 0.1
	done
	echo "FAIL redis-server did not start on port $BPORT" >&2
	return 1
}
broker_down() {
	[ -n "$BREDIS_PID" ] || return 0
	kill "$BREDIS_PID" 2>/dev/null
	wait "$BREDIS_PID" 2>/dev/null
	BREDIS_PID=""
}
broker_restart() {
	local keep=${1:-}
	broker_down
	if [ "$keep" = --keep ]; then broker_up --appendonly yes; else rm -f "$tmp/redis/"*.rdb; broker_up; fi
}
worker_start() { # NAME ARGS...
	local name=$1
	shift
	"$PASSFS" worker --broker "$BURL" --name "$name" --backend cpu "$@" >"$tmp/$name.log" 2>&1 &
	WPID=$!
	bg_pids="$bg_pids $WPID"
}
broker_stop_all() {
	for p in $bg_pids; do kill "$p" 2>/dev/null; done
	sleep 0.3
	for p in $bg_pids; do kill -KILL "$p" 2>/dev/null; wait "$p" 2>/dev/null; done
	broker_down
}
broker_cleanup() {
	broker_stop_all
	rm -rf "$tmp"
}
# A job's answer: the msg of the R entry on passfs:reply:<job id> (waits up
# to 10 s; empty when none came).
answer() { # job id: the R entry's msg
	for _ in $(seq 100); do
		m=$(rcli --raw XRANGE "passfs:reply:$1" - + | awk 'f{print; exit} $0=="msg"{f=1}')
		[ -n "$m" ] && { printf '%s' "$m"; return; }
		sleep 0.1
	done
}

trap broker_cleanup EXIT
broker_up || exit 1

