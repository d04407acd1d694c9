#!/usr/bin/env bash
# An installed passfs reads its installed data, not the source tree it was
# built from (gpu/datadir.h): `cmake --install` into a temporary prefix,
# change the installed task set (one task left out, one added that only the
# install has), then the installed binary's `passfs tasks` must list the
# installed set and `passfs doctor` must name the installed headers, op
# library and tasks and evaluate its built-in pass with them, and the task
# tree's docs/ must be the installed manuals (one changed there).  The same
# prefix moved elsewhere must still work (paths are found from the binary,
# not baked in).  The build-tree binary ($PASSFS) keeps reading the source
# tree.
. tests/lib/cli.sh
BUILD=$(dirname "$PASSFS")
unset PASSFS_TASKS PASSFS_INCLUDE_DIR PASSFS_OPLIB_DIR

if ! cmake --install "$BUILD" --prefix "$tmp/p" >"$tmp/install.log" 2>&1; then
	bad "cmake --install: $(tail -3 "$tmp/install.log")"
	finish
	exit
fi
P=$tmp/p
[ -x "$P/bin/passfs" ] && [ -f "$P/include/passfs/passfs.h" ] && [ -d "$P/share/passfs/oplib" ] &&
	[ -d "$P/share/passfs/tasks" ] && [ -f "$P/share/passfs/docs/pass-api.md" ] &&
	ok "the install has bin/, include/passfs, share/passfs/{oplib,tasks,docs}" ||
	bad "install layout: $(cd "$P" && find . -maxdepth 3 | head -20)"

# The installed task set differs from the source tree's in both directions.
gone=$(ls "$P/share/passfs/tasks" | grep -v README | head -1)
rm -rf "$P/share/passfs/tasks/$gone"
mkdir -p "$P/share/passfs/tasks/zz_installed_only"
sed "s/\"id\": \"$gone\"/\"id\": \"zz_installed_only\"/" "tasks/$gone/graph.json" \
	>"$P/share/passfs/tasks/zz_installed_only/graph.json"

# The installed manuals differ from the source tree's: the tree's docs/
# must show the installed bytes.
echo "installed-only line" >>"$P/share/passfs/docs/pass-api.md"

# check_install BIN PREFIX: the checks on one installed binary.
check_install() {
	local bin=$1 pre=$2 where=$3
	"$bin" tasks >"$tmp/tasks.out" 2>&1
	if grep -q '^zz_installed_only ' "$tmp/tasks.out" && ! grep -q "^$gone " "$tmp/tasks.out"; then
		ok "$where: passfs tasks lists the installed tasks"
	else
		bad "$where: passfs tasks: $(head -3 "$tmp/tasks.out")"
	fi
	"$bin" doctor >"$tmp/doctor.out" 2>&1
	local rc=$?
	local missing=""
	grep -qF "  ok    headers     $pre/include/passfs/passfs.h" "$tmp/doctor.out" || missing="$missing headers"
	grep -qF "  ok    op library  $pre/share/passfs/oplib" "$tmp/doctor.out" || missing="$missing oplib"
	grep -qE "^  ok    tasks       [0-9]+ in $pre/share/passfs/tasks\$" "$tmp/doctor.out" || missing="$missing tasks"
	[ -z "$missing" ] && ok "$where: doctor names the installed headers, op library and tasks" ||
		bad "$where: doctor does not name the installed$missing: $(grep -E 'headers|op library|tasks ' "$tmp/doctor.out")"
	# the evaluation ran with the installed headers and op library; it fails
	# only where doctor fails from the build tree too (tests/cli/doctor.sh)
	if [ $rc -eq 0 ] || ! "$PASSFS" doctor >/dev/null 2>&1; then
		ok "$where: doctor's evaluation ran from the install (exit $rc)"
	else
		bad "$where: doctor exit $rc from the install, 0 from the build tree: $(grep -E 'FAIL' "$tmp/doctor.out" | head -3)"
	fi
	# the task tree's docs/ (watch mode: no FUSE needed) has the installed manuals
	rm -rf "$tmp/w"
	"$bin" watch --tasks tests/passes/tasks --state "$tmp/wstate" --backend cpu "$tmp/w" >"$tmp/w.out" 2>&1 &
	local wpid=$!
	for _ in $(seq 200); do
		grep -qs 'Ctrl-C' "$tmp/w.out" && break
		kill -0 $wpid 2>/dev/null || break
		sleep 0.05
	done
	kill $wpid 2>/dev/null
	wait $wpid 2>/dev/null
	if cmp -s "$tmp/w/docs/pass-api.md" "$pre/share/passfs/docs/pass-api.md" &&
		cmp -s "$tmp/w/docs/scoring.md" "$pre/share/passfs/docs/scoring.md"; then
		ok "$where: the tree's docs/ has the installed manuals"
	else
		bad "$where: the tree's docs/ is not the installed manuals: $(tail -2 "$tmp/w.out"; ls "$tmp/w/docs" 2>&1 | head -3)"
	fi
}
check_install "$P/bin/passfs" "$(cd "$P" && pwd -P)" installed

# A relocated prefix: the binary finds the data beside it.
mv "$P" "$tmp/moved"
check_install "$tmp/moved/bin/passfs" "$(cd "$tmp/moved" && pwd -P)" relocated

# The build-tree binary still reads the source tree.
"$PASSFS" doctor >"$tmp/doctor.out" 2>&1
src=$(pwd -P)
grep -qF "  ok    headers     $src/gpu/include/passfs.h" "$tmp/doctor.out" &&
	grep -qE "^  ok    tasks       [0-9]+ in $src/tasks\$" "$tmp/doctor.out" &&
	ok "the build-tree binary reads the source tree" ||
	bad "build tree: $(grep -E 'headers|tasks ' "$tmp/doctor.out")"
finish
