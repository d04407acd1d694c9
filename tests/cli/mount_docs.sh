#!/usr/bin/env bash
# The manuals inside the tree (docs/mount.md, "The tree"): a mount shows
# docs/ at its root with the bytes of passfs's docs/ (the source tree's, for
# the build-tree binary), read-only; the root README names each by its path
# in the tree and no longer sends the reader to "the passfs sources".  Watch
# mode writes the same files into DIR/docs, mode 0444.
NAME=mount_docs
. tests/lib/cli.sh
. tests/lib/mount.sh
T=tests/passes/tasks
DOCS="pass-api.md scoring.md result-format.md backends.md eager.md mount.md watch.md"

out=$("$PASSFS" mount --tasks "$T" --state "$STATE" --backend cpu --trials 1 --warmup 0 "$MNT" 2>"$tmp/mount.err") ||
	{ bad "mount: $(cat "$tmp/mount.err")"; finish; exit; }
daemon=$(echo "$out" | sed -n 's/.*daemon pid \([0-9]*\).*/\1/p' | head -1)

# check_tree DIR WHERE: DIR/docs holds the manuals, byte for byte, and
# DIR/README.md names them.
check_tree() {
	local d=$1 where=$2 f missing="" differ=""
	[ -d "$d/docs" ] && ok "$where: docs/ is a directory" || bad "$where: no docs/ directory: $(ls "$d")"
	for f in $DOCS; do
		if [ ! -f "$d/docs/$f" ]; then
			missing="$missing $f"
		elif ! cmp -s "$d/docs/$f" "docs/$f"; then
			differ="$differ $f"
		fi
	done
	[ -z "$missing$differ" ] && ok "$where: docs/{${DOCS// /,}} have the bytes of docs/" ||
		bad "$where: missing:$missing; different:$differ"
	local listed
	listed=$(ls "$d/docs" | tr '\n' ' ')
	[ "$listed" = "$(echo $DOCS | tr ' ' '\n' | sort | tr '\n' ' ')" ] && ok "$where: ls docs lists exactly the manuals" ||
		bad "$where: ls docs: $listed"
	local unnamed=""
	for f in $DOCS; do
		grep -qF "\`docs/$f\`" "$d/README.md" || unnamed="$unnamed $f"
	done
	[ -z "$unnamed" ] && ok "$where: README.md names docs/<file> for every manual" ||
		bad "$where: README.md does not name:$unnamed"
	grep -q "in the passfs sources" "$d/README.md" && bad "$where: README.md still points at the passfs sources" ||
		ok "$where: README.md points into the tree, not at the sources"
	grep -qF "More, in this tree (read-only): \`docs/pass-api.md\`" "$d/README.md" &&
		ok "$where: README.md's last line links the manuals by their tree path" ||
		bad "$where: README.md's last line: $(tail -1 "$d/README.md")"
}
check_tree "$MNT" mount

# read-only, in every way a tool tries
python3 - "$MNT" <<'PY' && ok "mount: docs/ and its files refuse writes, creates, unlinks, renames (EACCES/EPERM)" || bad "mount: docs/ is not read-only"
import errno, os, sys
m = sys.argv[1]
d = os.path.join(m, "docs")
def refused(fn, *a):
    try:
        fn(*a)
    except OSError as e:
        if e.errno in (errno.EACCES, errno.EPERM, errno.EROFS):
            return
        print("unexpected", fn.__name__, a, e); sys.exit(1)
    print("allowed", fn.__name__, a); sys.exit(1)
refused(open, os.path.join(d, "pass-api.md"), "w")
refused(open, os.path.join(d, "pass-api.md"), "a")
refused(open, os.path.join(d, "new.md"), "w")
refused(os.unlink, os.path.join(d, "scoring.md"))
refused(os.rename, os.path.join(d, "scoring.md"), os.path.join(d, "x.md"))
refused(os.mkdir, os.path.join(d, "sub"))
refused(os.rmdir, d)
refused(os.truncate, os.path.join(d, "pass-api.md"), 0)
st = os.stat(os.path.join(d, "pass-api.md"))
assert st.st_mode & 0o222 == 0, oct(st.st_mode)
assert os.stat(d).st_mode & 0o222 == 0, oct(os.stat(d).st_mode)
assert os.path.getsize(os.path.join(d, "pass-api.md")) == os.path.getsize("docs/pass-api.md")
PY

# watch mode writes the same tree
watch_beside "$tmp/w" --tasks "$T" --state "$tmp/wstate" --backend cpu --trials 1 --warmup 0
check_tree "$tmp/w" watch
bad_mode=$(find "$tmp/w/docs" -type f ! -perm 0444 | head -3)
[ -z "$bad_mode" ] && ok "watch: docs files are mode 0444" || bad "watch: docs files not 0444: $bad_mode"
finish
