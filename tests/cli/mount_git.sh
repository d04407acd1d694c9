#!/usr/bin/env bash
# passfs mount: git in a task directory, on scratch directories.  `git -C
# TASK init`, add, commit, status, diff, log fire no evaluation; git stash,
# git stash pop and git checkout -- pass.c write pass.c and fire exactly one
# each (counted in the state directory's history); pass.c moved into a
# scratch directory and back (one fire, at the move onto pass.c); nested
# mkdir/rmdir, ENOTEMPTY, ENOTDIR, EISDIR, EINVAL, names that cannot be
# shadowed; the per-task caps of 4096 entries and 64 MiB (ENOSPC); after an
# unmount and a remount pass.c is intact and the scratch tree is gone.
# Skips only when /dev/fuse is absent.
NAME=mount_git
. tests/lib/cli.sh
. tests/lib/mount.sh
T=tests/passes/tasks
TASK=tiny_bias_gelu
D=$MNT/$TASK
G=(git -c user.email=t@t -c user.name=t -c init.defaultBranch=main -C "$D")

check() { # name, command...
	local name=$1
	shift
	if "$@"; then ok "$name"; else bad "$name"; fi
}
mount_it() { # prints the daemon pid
	local out
	out=$("$PASSFS" mount --tasks "$T" --state "$STATE" --backend cpu --trials 1 --warmup 0 \
		--timeout 5 --wait-timeout 60 "$MNT" 2>"$tmp/mount.err")
	local rc=$?
	[ $rc -eq 0 ] || { cat "$tmp/mount.err" >&2; return 1; }
	printf '%s\n' "$out" | sed -n 's/.*daemon pid \([0-9]*\).*/\1/p' | head -1
}
history_count() { ls "$STATE/$TASK/history/"*.json 2>/dev/null | wc -l; }
# settle: waits for the evaluation of the current pass.c (if any), then a
# second for a stray one.
settle() {
	cat "$D/result.json" >/dev/null
	sleep 1
}
# fires N what command...: runs the command, checks that it succeeded and
# fired exactly N evaluations.
fires() {
	local n=$1 what=$2
	shift 2
	local before after rc
	before=$(history_count)
	"$@" >"$tmp/cmd.out" 2>&1
	rc=$?
	settle
	after=$(history_count)
	if [ $rc -ne 0 ]; then
		bad "$what: exit $rc: $(tail -3 "$tmp/cmd.out")"
	elif [ "$after" -ne $((before + n)) ]; then
		bad "$what: $((after - before)) evaluations, expected $n"
	else
		ok "$what: exit 0, $n evaluation(s)"
	fi
}

daemon=$(mount_it)
if [ -z "$daemon" ] || ! mountpoint -q "$MNT"; then
	bad "mount: $(cat "$tmp/mount.err" 2>/dev/null)"
	exit 1
fi
ok "mount (daemon pid $daemon)"

# ---- the git sequence ------------------------------------------------------------
cp tests/passes/ok_fused.c "$D/pass.c"
settle
fires 0 "git -C TASK init" "${G[@]}" init
check ".git is a directory in the task directory" test -d "$D/.git" -a -f "$D/.git/HEAD"
check "ls TASK lists .git with the rows" test "$(ls -A "$D" | sort | tr '\n' ' ')" = \
	"$( (echo .git; "$PASSFS" tasks --files) | sort | tr '\n' ' ')"
fires 0 "git add pass.c" "${G[@]}" add pass.c
fires 0 "git commit" "${G[@]}" commit -q -m first
committed=$(cat "$D/pass.c")
check "git log shows the commit" test "$("${G[@]}" log --format=%s)" = first
fires 0 "git status" "${G[@]}" status
fires 0 "git log" "${G[@]}" log --oneline
check "git fsck: a sound repository" "${G[@]}" fsck --no-dangling --no-progress

fires 1 "edit pass.c (printf >>)" sh -c "printf '// edited\n' >>'$D/pass.c'"
edited=$(cat "$D/pass.c")
fires 0 "git diff" "${G[@]}" diff
check "git diff shows the edit" grep -q '^+// edited' "$tmp/cmd.out"
fires 0 "git status --porcelain" "${G[@]}" status --porcelain --untracked-files=no
check "git status: pass.c modified" grep -q '^ M pass.c' "$tmp/cmd.out"
fires 1 "git stash" "${G[@]}" stash
check "after git stash: pass.c is the committed bytes" test "$(cat "$D/pass.c")" = "$committed"
sha=$(sha256sum "$D/pass.c" | cut -d' ' -f1)
check "after git stash: result.json judges those bytes" grep -q "\"pass_sha256\": *\"$sha\"" "$D/result.json"
fires 1 "git stash pop" "${G[@]}" stash pop
check "after git stash pop: pass.c is the edit" test "$(cat "$D/pass.c")" = "$edited"
fires 1 "git checkout -- pass.c" "${G[@]}" checkout -- pass.c
check "after git checkout: pass.c is the committed bytes" test "$(cat "$D/pass.c")" = "$committed"
sha=$(sha256sum "$D/pass.c" | cut -d' ' -f1)
check "after git checkout: result.json judges those bytes" grep -q "\"pass_sha256\": *\"$sha\"" "$D/result.json"

# More commits: a repository of some size, and the recipe's exclude file.
printf '/*\n!/pass.c\n' >>"$D/.git/info/exclude"
fires 0 "git status with the exclude file: clean" "${G[@]}" status --porcelain
check "git status --porcelain prints nothing" test ! -s "$tmp/cmd.out"
fires 5 "five edits and commits (one evaluation per edit)" sh -c "
	for i in 1 2 3 4 5; do
		printf '// commit %s\n' \$i >>'$D/pass.c' &&
		cat '$D/result.json' >/dev/null &&
		$(printf '%q ' "${G[@]}") commit -q -a -m c\$i || exit 1
	done"
check "git log: six commits" test "$("${G[@]}" log --oneline | wc -l)" -eq 6
fires 1 "git checkout HEAD~5 -- pass.c" "${G[@]}" checkout HEAD~5 -- pass.c
check "pass.c is the first commit's" test "$(cat "$D/pass.c")" = "$committed"
fires 1 "git reset --hard" "${G[@]}" reset -q --hard
fires 0 "git gc" "${G[@]}" gc -q
check "git fsck after gc" "${G[@]}" fsck --no-dangling --no-progress
fires 0 "git add/commit of a scratch file" sh -c "echo notes >'$D/notes.txt' && \
	$(printf '%q ' "${G[@]}") add -f notes.txt && $(printf '%q ' "${G[@]}") commit -q -m notes"

# ---- pass.c and scratch directories ----------------------------------------------
mkdir "$D/keep"
fires 0 "mv pass.c into a scratch directory" mv "$D/pass.c" "$D/keep/"
check "pass.c absent, keep/pass.c holds its bytes" \
	test ! -e "$D/pass.c" -a "$(cat "$D/keep/pass.c" 2>/dev/null)" = "$(git -C "$D" show HEAD:pass.c)"
python3 - "$D" <<'EOF' && ok "mkdir pass.c while pass.c is absent: EPERM" || bad "mkdir pass.c while absent"
import errno, os, sys
try:
    os.mkdir(os.path.join(sys.argv[1], "pass.c"))
except OSError as e:
    sys.exit(0 if e.errno == errno.EPERM else 1)
sys.exit(1)
EOF
fires 1 "mv keep/pass.c back onto pass.c" mv "$D/keep/pass.c" "$D/pass.c"
cp "$D/pass.c" "$D/keep/next.c"
printf '// via keep\n' >>"$D/keep/next.c"
fires 1 "mv keep/next.c onto pass.c (a rename onto pass.c from a scratch directory)" mv "$D/keep/next.c" "$D/pass.c"
check "pass.c ends with the moved bytes" test "$(tail -1 "$D/pass.c")" = "// via keep"
fires 0 "cp pass.c into a scratch directory, edit the copy" sh -c "cp '$D/pass.c' '$D/keep/copy.c' && echo x >>'$D/keep/copy.c'"
rm -r "$D/keep"

# ---- nested directories: the errno table ------------------------------------------
python3 - "$MNT" "$TASK" <<'EOF'
import errno, os, stat, sys
mnt, task = sys.argv[1:]
d = os.path.join(mnt, task)
bad = []
def expect(what, err, fn, *a):
    try:
        fn(*a)
    except OSError as e:
        if e.errno != err:
            bad.append(f"{what}: {errno.errorcode.get(e.errno)} instead of {errno.errorcode[err]}")
        return
    bad.append(f"{what}: succeeded")
j = lambda *p: os.path.join(d, *p)
os.makedirs(j("a", "b", "c"))
with open(j("a", "b", "c", "f"), "w") as f:
    f.write("deep")
os.mkdir(j("a", "x"))
st = os.stat(j("a"))
if not stat.S_ISDIR(st.st_mode) or st.st_nlink != 4:
    bad.append(f"stat a: mode {oct(st.st_mode)}, nlink {st.st_nlink} (expected a directory, nlink 4)")
if sorted(os.listdir(j("a"))) != ["b", "x"]:
    bad.append(f"listdir a: {os.listdir(j('a'))}")
expect("rmdir a non-empty directory", errno.ENOTEMPTY, os.rmdir, j("a"))
expect("rmdir a file", errno.ENOTDIR, os.rmdir, j("a", "b", "c", "f"))
expect("unlink a directory", errno.EISDIR, os.unlink, j("a", "x"))
expect("open a directory for writing", errno.EISDIR, os.open, j("a"), os.O_WRONLY)
expect("mkdir over a file", errno.EEXIST, os.mkdir, j("a", "b", "c", "f"))
expect("mkdir README.md (a row)", errno.EEXIST, os.mkdir, j("README.md"))
expect("mkdir in the root", errno.EPERM, os.mkdir, os.path.join(mnt, "newdir"))
expect("rmdir a task directory", errno.EPERM, os.rmdir, d)
expect("rename a directory into itself", errno.EINVAL, os.rename, j("a"), j("a", "b", "inside"))
expect("rename a directory onto a non-empty one", errno.ENOTEMPTY, os.rename, j("a", "x"), j("a", "b"))
expect("rename a directory onto a file", errno.ENOTDIR, os.rename, j("a", "x"), j("a", "b", "c", "f"))
expect("rename a file onto a directory", errno.EISDIR, os.rename, j("a", "b", "c", "f"), j("a", "x"))
expect("rename a directory onto pass.c", errno.ENOTDIR, os.rename, j("a", "x"), j("pass.c"))
expect("rename a directory onto graph.json", errno.ENOTDIR, os.rename, j("a", "x"), j("graph.json"))
expect("rename a directory to the root", errno.EACCES, os.rename, j("a", "x"), os.path.join(mnt, "x"))
expect("symlink in a scratch directory", errno.EPERM, os.symlink, "f", j("a", "l"))
# Rows exist only at the task level: in a scratch directory README.md is
# an ordinary name.
with open(j("a", "README.md"), "w") as f:
    f.write("mine")
os.rename(j("a", "b", "c", "f"), j("a", "f2"))          # across directories
os.rename(j("a", "f2"), j("moved"))                      # into the task directory
os.rename(j("moved"), j("a", "x", "back"))               # and out again
os.rename(j("a", "x"), j("a", "b", "c", "x"))            # a directory across directories
os.rename(j("a", "b", "c"), j("c2"))                     # up into the task directory
if open(j("c2", "x", "back")).read() != "deep":
    bad.append("the file did not keep its bytes across the renames")
os.mkdir(j("empty"))
os.rename(j("c2", "x"), j("empty"))                      # onto an empty directory
if os.listdir(j("empty")) != ["back"]:
    bad.append(f"rename onto an empty directory: {os.listdir(j('empty'))}")
os.chmod(j("empty"), 0o700)
if stat.S_IMODE(os.stat(j("empty")).st_mode) != 0o700:
    bad.append("chmod of a scratch directory did not stick")
os.utime(j("empty"), (1, 1))
if os.stat(j("empty")).st_mtime != 1:
    bad.append("utime of a scratch directory did not stick")
for p in ("empty/back", "a/README.md"):
    os.unlink(j(*p.split("/")))
for p in ("empty", "c2", "a/b", "a"):
    os.rmdir(j(*p.split("/")))
os.mkdir(j("gone"))                                      # a removed directory takes no entries
fd = os.open(j("gone"), os.O_RDONLY | os.O_DIRECTORY)
os.rmdir(j("gone"))
expect("create in a removed directory", errno.ENOENT, lambda: os.open("x", os.O_WRONLY | os.O_CREAT, 0o644, dir_fd=fd))
expect("mkdir in a removed directory", errno.ENOENT, lambda: os.mkdir("x", dir_fd=fd))
if os.fstat(fd).st_nlink != 0:
    bad.append(f"a removed directory shows nlink {os.fstat(fd).st_nlink}")
os.close(fd)
left = sorted(n for n in os.listdir(d) if n not in (".git", "notes.txt"))
if left != ["README.md", "check.json", "es_t", "graph.json", "pass.c", "result.json", "status"]:
    bad.append(f"left behind: {left}")
for b in bad:
    print("     " + b)
sys.exit(1 if bad else 0)
EOF
check "nested scratch directories: mkdir -p, stat, rename within and across, rmdir, the errno table" test $? -eq 0

# ---- caps ---------------------------------------------------------------------------
python3 - "$D" <<'EOF'
import errno, os, sys
d = sys.argv[1]
bad = []
def entries():
    n = 0
    for root, dirs, files in os.walk(d):
        n += len(dirs) + len(files)
    return n - 7        # the rows and pass.c are not scratch entries
os.mkdir(os.path.join(d, "fill"))
err = None
made = 0
while made < 5000:
    try:
        os.close(os.open(os.path.join(d, "fill", f"f{made:04d}"), os.O_WRONLY | os.O_CREAT, 0o644))
        made += 1
    except OSError as e:
        err = e.errno
        break
if err != errno.ENOSPC or entries() != 4096:
    bad.append(f"entries: {made} files created, then {errno.errorcode.get(err)}, {entries()} entries (expected ENOSPC at 4096)")
def expect(what, e, fn, *a):
    try:
        fn(*a)
    except OSError as x:
        if x.errno != e:
            bad.append(f"{what}: {errno.errorcode.get(x.errno)}")
        return
    bad.append(f"{what}: succeeded")
expect("mkdir at the entries cap", errno.ENOSPC, os.mkdir, os.path.join(d, "fill", "dir"))
expect("create at the entries cap", errno.ENOSPC, os.open, os.path.join(d, "x"), os.O_WRONLY | os.O_CREAT, 0o644)
expect("rename pass.c away at the entries cap", errno.ENOSPC, os.rename, os.path.join(d, "pass.c"), os.path.join(d, "pass.c~"))
os.rename(os.path.join(d, "fill", "f0000"), os.path.join(d, "renamed"))      # renames still work
os.unlink(os.path.join(d, "renamed"))
os.mkdir(os.path.join(d, "fill", "dir"))                                     # one freed: one more
for i in range(1, made):
    os.unlink(os.path.join(d, "fill", f"f{i:04d}"))
os.rmdir(os.path.join(d, "fill", "dir"))
# Bytes: 64 MiB of file bytes per task, 16 MiB per file.
def scratch_bytes():
    n = 0
    for root, dirs, files in os.walk(d):
        for f in files:
            if root != d or f not in ("README.md", "check.json", "es_t", "graph.json", "pass.c", "result.json", "status"):
                n += os.stat(os.path.join(root, f)).st_size
    return n
chunk = b"z" * (1 << 20)
err = None
for k in range(8):
    fd = os.open(os.path.join(d, "fill", f"big{k}"), os.O_WRONLY | os.O_CREAT, 0o644)
    try:
        for _ in range(16):
            os.write(fd, chunk)
    except OSError as e:
        err = e.errno
    finally:
        os.close(fd)
    if err:
        break
total = scratch_bytes()
if err != errno.ENOSPC or not (63 << 20) <= total <= (64 << 20):
    bad.append(f"bytes: {errno.errorcode.get(err)} with {total} bytes in scratch files (expected ENOSPC near 64 MiB)")
expect("truncate up at the bytes cap", errno.ENOSPC, os.truncate, os.path.join(d, "fill", f"big{k}"), 16 << 20)
os.truncate(os.path.join(d, "fill", "big0"), 0)                              # shrinking frees
with open(os.path.join(d, "fill", "small"), "w") as f:
    f.write("fits again")
for f in os.listdir(os.path.join(d, "fill")):
    os.unlink(os.path.join(d, "fill", f))
os.rmdir(os.path.join(d, "fill"))
for b in bad:
    print("     " + b)
sys.exit(1 if bad else 0)
EOF
check "caps: 4096 entries (files and directories) and 64 MiB per task, ENOSPC beyond" test $? -eq 0
fires 0 "git status after the caps" "${G[@]}" status --porcelain

# ---- remount: pass.c intact, the scratch tree gone ---------------------------------
last=$(sha256sum "$D/pass.c" | cut -d' ' -f1)
fusermount3 -u "$MNT"
for _ in $(seq 50); do kill -0 "$daemon" 2>/dev/null || break; sleep 0.1; done
daemon=$(mount_it)
if [ -z "$daemon" ] || ! mountpoint -q "$MNT"; then
	bad "remount: $(cat "$tmp/mount.err" 2>/dev/null)"
	finish
	exit
fi
check "after remount: pass.c intact" test "$(sha256sum "$D/pass.c" | cut -d' ' -f1)" = "$last"
check "after remount: scratch directories are gone (kept in memory only)" test ! -e "$D/.git" -a ! -e "$D/notes.txt"
# The README's recipe, line by line.
sed -n '/^### Versions of your pass with git/,/^### /p' "$MNT/README.md" |
	sed -n '/^```sh$/,/^```$/p' | sed '1d;$d' | sed 's/^cd \$T/cd "$D"/' |
	sed 's|^# \.\.\. edit pass.c.*|printf "// recipe edit\\n" >>pass.c \&\& cat result.json >/dev/null|' >"$tmp/recipe.sh"
check "the mount README has a git recipe with an edit" grep -q "recipe edit" "$tmp/recipe.sh"
fires 4 "after remount: the README's git recipe (edit, stash, stash pop, checkout: one evaluation each)" \
	env D="$D" bash -e "$tmp/recipe.sh"
check "the recipe's repository: one commit, pass.c as committed" \
	test "$("${G[@]}" log --oneline | wc -l)" -eq 1 -a "$(cat "$D/pass.c")" = "$("${G[@]}" show HEAD:pass.c)"
finish
