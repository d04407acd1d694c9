#!/usr/bin/env bash
# passfs mount: what the file system refuses and what it allows, checked with
# python's os calls (errno names, as root too: root ignores mode bits, so the
# handlers must refuse), and which operations on pass.c never fire an
# evaluation.  mount_basic.sh covers the errno of open-for-write, truncate,
# unlink, rename, chmod, chown and utime on every read-only file; this test
# covers the rest of docs/mount.md's table:
#   - read-only files: O_RDONLY|O_TRUNC, O_APPEND, rename within the root,
#     chmod of directories, mknod of a regular file;
#   - scratch files: create, write, read back, stat, rename, rename over
#     another, O_EXCL, unlink; none of it fires;
#   - caps: pass.c over 1 MiB by pwrite, ftruncate, O_APPEND and a rename
#     onto it (EFBIG, bytes unchanged, no fire; a write across the cap is a
#     short write up to it, as POSIX has it); a scratch file over 16 MiB
#     (EFBIG); the 4097th scratch file of a task, and renaming pass.c away
#     at that cap (ENOSPC; tests/cli/mount_git.sh covers directories and
#     the 64 MiB byte cap);
#   - no fire: read, an open for writing that writes nothing, touch, chmod,
#     utime, fsync, rename away, unlink; a reader's close does not clear a
#     writer's "wrote" flag (exactly one fire at the writer's close).
# Skips only when /dev/fuse is absent.
NAME=mount_readonly
. tests/lib/cli.sh
. tests/lib/mount.sh
T=tests/passes/tasks
TASK=tiny_bias_gelu

out=$("$PASSFS" mount --tasks "$T" --state "$STATE" --backend cpu --trials 1 --warmup 0 \
	--timeout 5 --wait-timeout 60 "$MNT" 2>"$tmp/mount.err")
daemon=$(printf '%s\n' "$out" | sed -n 's/.*daemon pid \([0-9]*\).*/\1/p' | head -1)
if [ -z "$daemon" ] || ! mountpoint -q "$MNT"; then
	echo "FAIL mount: $(cat "$tmp/mount.err")"
	echo "mount_readonly: 0 passed, 1 failed"
	exit 1
fi

python3 - "$MNT" "$TASK" "$STATE" <<'EOF'
import errno, json, os, stat, subprocess, sys, time

mnt, task, state = sys.argv[1:]
d = os.path.join(mnt, task)
P = os.path.join(d, "pass.c")
npass = nfail = 0

def ok(msg):
    global npass
    npass += 1
    print(f"ok   {msg}")

def bad(msg):
    global nfail
    nfail += 1
    print(f"FAIL {msg}")

def ename(e):
    return errno.errorcode.get(e, str(e))

def expect(what, err, fn, *a):
    try:
        r = fn(*a)
    except OSError as e:
        if e.errno == err:
            ok(f"{what}: {ename(err)}")
        else:
            bad(f"{what}: {ename(e.errno)} instead of {ename(err)}")
        return
    if isinstance(r, int) and r >= 0 and fn is os.open:
        os.close(r)
    bad(f"{what}: succeeded, expected {ename(err)}")

def works(what, fn, *a):
    try:
        fn(*a)
    except OSError as e:
        bad(f"{what}: {ename(e.errno)}")
        return False
    ok(what)
    return True

def seq():
    # result.json waits while an evaluation of pass.c is due.
    with open(os.path.join(d, "result.json")) as f:
        return json.load(f)["seq"]

def read(p):
    with open(p, "rb") as f:
        return f.read()

def fires(what, n, fn):
    """fn() must fire exactly n evaluations."""
    s0 = seq()
    try:
        fn()
    except OSError as e:
        bad(f"{what}: {ename(e.errno)}")
        return
    time.sleep(0.2)             # release is asynchronous
    s1 = seq()
    if s1 - s0 == n:
        ok(f"{what}: {n} evaluation{'s' if n != 1 else ''} fired")
    else:
        bad(f"{what}: {s1 - s0} evaluations fired, expected {n}")

# A first evaluation, so seq is well defined.
with open(P, "w") as f:
    f.write("// not a pass: readonly test start\n")
seq()

# ---- read-only files: what mount_basic.sh does not cover -------------------------
g = os.path.join(d, "graph.json")
graph = read(g)
for name in ("graph.json", "result.json", "README.md"):
    p = os.path.join(d, name)
    expect(f"{name} open O_RDONLY|O_TRUNC", errno.EACCES, os.open, p, os.O_RDONLY | os.O_TRUNC)
    expect(f"{name} open O_WRONLY|O_APPEND", errno.EACCES, os.open, p, os.O_WRONLY | os.O_APPEND)
    expect(f"{name} open O_CREAT|O_WRONLY (exists)", errno.EACCES, os.open, p, os.O_WRONLY | os.O_CREAT, 0o644)
expect("graph.json open O_CREAT|O_EXCL", errno.EEXIST, os.open, g, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
if read(g) == graph:
    ok("graph.json unchanged")
else:
    bad("graph.json changed")
expect("rename a task directory", errno.EACCES, os.rename, d, d + ".x")
expect("rename root README.md", errno.EACCES, os.rename, os.path.join(mnt, "README.md"), os.path.join(mnt, "R"))
expect("chmod a task directory", errno.EPERM, os.chmod, d, 0o700)
expect("chmod the root", errno.EPERM, os.chmod, mnt, 0o700)
expect("mknod a regular file", errno.EPERM, os.mknod, os.path.join(d, "node"), stat.S_IFREG | 0o644)
expect("mkdir in the root", errno.EPERM, os.mkdir, os.path.join(mnt, "newdir"))
expect("unlink a task directory", errno.EISDIR, os.unlink, d)
if stat.S_IMODE(os.stat(g).st_mode) == 0o444 and stat.S_IMODE(os.stat(os.path.join(d, "result.json")).st_mode) == 0o444:
    ok("read-only files show mode 0444")
else:
    bad("read-only files do not show mode 0444")

# ---- scratch files work, and never fire -------------------------------------------
s = os.path.join(d, ".pass.c.swp")
def scratch_life():
    fd = os.open(s, os.O_RDWR | os.O_CREAT | os.O_EXCL, 0o600)
    os.pwrite(fd, b"hello scratch", 0)
    os.pwrite(fd, b"!", 20)                    # a hole reads as zeros
    os.close(fd)
    assert read(s) == b"hello scratch" + b"\0" * 7 + b"!", read(s)
    st = os.stat(s)
    assert st.st_size == 21 and stat.S_IMODE(st.st_mode) == 0o600, st
    assert ".pass.c.swp" in os.listdir(d)
    os.rename(s, os.path.join(d, "sed12345"))
    assert not os.path.exists(s) and read(os.path.join(d, "sed12345"))[:5] == b"hello"
    with open(os.path.join(d, "4913"), "w") as f:
        f.write("probe")
    os.rename(os.path.join(d, "4913"), os.path.join(d, "sed12345"))   # over another
    assert read(os.path.join(d, "sed12345")) == b"probe"
    os.truncate(os.path.join(d, "sed12345"), 2)
    assert read(os.path.join(d, "sed12345")) == b"pr"
    os.chmod(os.path.join(d, "sed12345"), 0o640)
    assert stat.S_IMODE(os.stat(os.path.join(d, "sed12345")).st_mode) == 0o640
    try:
        os.open(os.path.join(d, "sed12345"), os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
        raise AssertionError("O_EXCL on an existing scratch file succeeded")
    except FileExistsError:
        pass
    os.unlink(os.path.join(d, "sed12345"))
    assert sorted(os.listdir(d)) == ["README.md", "check.json", "es_t", "graph.json", "pass.c", "result.json", "status"], os.listdir(d)
try:
    fires("scratch files: create, write, hole, stat, rename, rename over, truncate, chmod, O_EXCL, unlink", 0, scratch_life)
except AssertionError as e:
    bad(f"scratch files: {e}")

# ---- caps ---------------------------------------------------------------------------
before = read(P)
CAP = 1 << 20
def efbig_pwrite():
    fd = os.open(P, os.O_WRONLY)
    try:
        expect("pass.c pwrite at 1 MiB", errno.EFBIG, os.pwrite, fd, b"x", CAP)
        expect("pass.c ftruncate to 1 MiB + 1", errno.EFBIG, os.ftruncate, fd, CAP + 1)
    finally:
        os.close(fd)
fires("failed writes past the cap", 0, efbig_pwrite)
if read(P) == before:
    ok("pass.c unchanged by the refused writes")
else:
    bad("pass.c changed by refused writes")

def short_write():
    # A write across the cap is cut at the cap (POSIX, as for RLIMIT_FSIZE);
    # the next byte is EFBIG.
    fd = os.open(P, os.O_WRONLY)
    try:
        n = os.pwrite(fd, b"xyz", CAP - 1)
        if n == 1 and os.fstat(fd).st_size == CAP:
            ok("pass.c pwrite across 1 MiB: a short write up to the cap")
        else:
            bad(f"pass.c pwrite across 1 MiB wrote {n} bytes, size {os.fstat(fd).st_size}")
        expect("pass.c pwrite of the next byte", errno.EFBIG, os.pwrite, fd, b"z", CAP)
    finally:
        os.close(fd)
fires("a write across the cap", 1, short_write)
with open(P, "w") as f:
    f.write("// not a pass: small again\n")

def efbig_append():
    # Grow to exactly 1 MiB by ftruncate, then O_APPEND one byte: EFBIG.
    fd = os.open(P, os.O_WRONLY)
    os.ftruncate(fd, CAP)
    os.close(fd)
    fd = os.open(P, os.O_WRONLY | os.O_APPEND)
    try:
        expect("pass.c O_APPEND past 1 MiB", errno.EFBIG, os.write, fd, b"z")
    finally:
        os.close(fd)
fires("ftruncate to exactly 1 MiB, then a refused append", 1, efbig_append)
if os.stat(P).st_size == CAP:
    ok("pass.c may be exactly 1 MiB")
else:
    bad(f"pass.c is {os.stat(P).st_size} bytes, expected exactly 1 MiB")
with open(P, "w") as f:
    f.write("// not a pass: back to small\n")

big = os.path.join(d, "big.tmp")
with open(big, "wb") as f:
    f.write(b"y" * (CAP + 1))
expect("rename a 1 MiB + 1 scratch file onto pass.c", errno.EFBIG, os.rename, big, P)
if read(P) == b"// not a pass: back to small\n" and os.path.exists(big):
    ok("after the refused rename: pass.c and the scratch file unchanged")
else:
    bad("the refused rename changed pass.c or lost the scratch file")
expect("scratch file truncate to 16 MiB + 1", errno.EFBIG, os.truncate, big, (16 << 20) + 1)
fd = os.open(big, os.O_WRONLY)
expect("scratch file pwrite at 16 MiB", errno.EFBIG, os.pwrite, fd, b"x", 16 << 20)
os.close(fd)
os.unlink(big)

made = []
err = None
for i in range(5000):
    p = os.path.join(d, f"scratch{i:04d}")
    try:
        os.close(os.open(p, os.O_WRONLY | os.O_CREAT, 0o644))
        made.append(p)
    except OSError as e:
        err = e.errno
        break
if err == errno.ENOSPC and len(made) == 4096:
    ok(f"scratch files: {len(made)} created, the next one ENOSPC")
else:
    bad(f"scratch files: {len(made)} created, then {ename(err) if err else 'no error'} (expected 4096, ENOSPC)")
expect("rename pass.c away at the scratch cap", errno.ENOSPC, os.rename, P, os.path.join(d, "pass.c~"))
works("rename a scratch file to a new name at the cap", os.rename, made[0], made[0] + ".renamed")
made[0] += ".renamed"
for p in made:
    os.unlink(p)
works("after unlinking them: a new scratch file", lambda: os.close(os.open(os.path.join(d, "again"), os.O_WRONLY | os.O_CREAT, 0o644)))
os.unlink(os.path.join(d, "again"))

# ---- what never fires ------------------------------------------------------------------
with open(P, "w") as f:
    f.write("// not a pass: no-fire checks\n")
seq()
fires("cat pass.c", 0, lambda: read(P))
fires("open O_RDWR, write nothing, close", 0, lambda: os.close(os.open(P, os.O_RDWR)))
fires("open O_WRONLY, fsync, close", 0, lambda: (lambda fd: (os.fsync(fd), os.close(fd)))(os.open(P, os.O_WRONLY)))
def touch():
    if subprocess.run(["touch", P]).returncode != 0:
        raise OSError(errno.EIO, "touch failed")
fires("touch pass.c (open for writing + utimensat)", 0, touch)
fires("chmod pass.c", 0, lambda: os.chmod(P, 0o600))
if stat.S_IMODE(os.stat(P).st_mode) == 0o644:
    ok("chmod pass.c accepted and ignored (mode stays 0644)")
else:
    bad(f"pass.c mode is {oct(stat.S_IMODE(os.stat(P).st_mode))} after chmod")
fires("utime pass.c", 0, lambda: os.utime(P, (1, 1)))
fires("chown pass.c to its owner", 0, lambda: os.chown(P, os.getuid(), os.getgid()))
fires("rename pass.c away", 0, lambda: os.rename(P, P + "~"))
fires("rename it back onto pass.c", 1, lambda: os.rename(P + "~", P))
saved = read(P)
fires("unlink pass.c", 0, lambda: os.unlink(P))
if not os.path.exists(P) and "pass.c" not in os.listdir(d):
    ok("after unlink pass.c is absent")
else:
    bad("pass.c still there after unlink")
def create_again():
    with open(P, "wb") as f:
        f.write(saved + b"// created again\n")
fires("create pass.c when absent", 1, create_again)

def reader_and_writer():
    w = os.open(P, os.O_WRONLY)
    os.pwrite(w, b"/* w */", 0)
    r = os.open(P, os.O_RDONLY)
    os.read(r, 10)
    os.close(r)                 # must not clear the writer's flag
    time.sleep(0.1)
    os.close(w)
fires("a reader closes while a writer is open, then the writer closes", 1, reader_and_writer)

def two_writers():
    a = os.open(P, os.O_WRONLY)
    b = os.open(P, os.O_WRONLY)
    os.pwrite(a, b"/* a */", 0)
    os.close(b)                 # wrote nothing: no fire
    time.sleep(0.1)
    os.close(a)
fires("two writers, one writes", 1, two_writers)

print(f"mount_readonly: {npass} passed, {nfail} failed")
sys.exit(1 if nfail else 0)
EOF
rc=$?
if ! kill -0 "$daemon" 2>/dev/null; then
	echo "FAIL the daemon died"
	rc=1
fi
fusermount3 -u "$MNT"
if grep -qE "AddressSanitizer|LeakSanitizer|runtime error" "$STATE/mount.log" 2>/dev/null; then
	echo "FAIL the daemon's log has a sanitizer report:"
	grep -E -A20 "AddressSanitizer|LeakSanitizer|runtime error" "$STATE/mount.log" | head -60
	rc=1
fi
exit $rc
