# bench/lib.sh - sourced by the bench scripts that take TASK:PASS pairs.
# tasks_of TASK: the tasks directory that holds TASK (the bundled tasks, then
# the test tasks), or a message and exit 2.
tasks_of() {
	for d in tasks tests/cheats/tasks tests/passes/tasks tests/passes/rank-tasks tests/truth/tasks; do
		[ -f "$d/$1/graph.json" ] && { echo "$d"; return; }
	done
	echo "${0##*/}: no task $1" >&2
	exit 2
}
