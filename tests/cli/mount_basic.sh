#!/usr/bin/env bash
# passfs mount end to end on the tiny test task (cpu backend, one trial, no
# warm-up): the tree, the template, a cp that fires and a cat that waits for
# its result, a broken pass, read-only files refusing writes even for root
# (errno checked with python's os calls), sed -i and a vim-style save firing
# exactly once, scratch files, O_NONBLOCK and ^C on a waiting read, and
# persistence across unmount (fusermount3 -u) and SIGTERM.  Skips only when
# /dev/fuse is absent.
NAME=mount_basic
. tests/lib/cli.sh
. tests/lib/mount.sh
T=tests/passes/tasks
TASK=tiny_bias_gelu

D=$MNT/$TASK

check() { # name, command...
	local name=$1
	shift
	if "$@"; then ok "$name"; else bad "$name"; fi
}

mount_it() { # [extra options]: prints the daemon pid
	local out
	out=$("$PASSFS" mount --tasks "$T" --state "$STATE" --backend cpu --trials 1 --warmup 0 \
		--timeout 1 "$@" "$MNT" 2>"$tmp/mount.err")
	local rc=$?
	echo "$out" >"$tmp/mount.out"
	[ $rc -eq 0 ] || { cat "$tmp/mount.err" >&2; return 1; }
	sed -n 's/.*daemon pid \([0-9]*\).*/\1/p' "$tmp/mount.out" | head -1
}
history_count() { ls "$STATE/$TASK/history/"*.json 2>/dev/null | wc -l; }
json() { # file, python expression on r
	python3 -c "import json,sys; r=json.load(open(sys.argv[1])); sys.exit(0 if ($2) else 1)" "$1"
}
now() { date +%s.%N; }
# A process that exited may linger as a zombie when nobody reaps it.
alive() { [ -e "/proc/$1" ] && ! grep -q '^[0-9]* (.*) Z' "/proc/$1/stat" 2>/dev/null; }
elapsed() { python3 -c "import sys; print(f'{float(sys.argv[2]) - float(sys.argv[1]):.3f}')" "$1" "$2"; }

# ---- mount ---------------------------------------------------------------
daemon=$(mount_it --wait-timeout 60)
if [ -z "$daemon" ] || ! mountpoint -q "$MNT"; then
	bad "mount: $(cat "$tmp/mount.err" 2>/dev/null)"
	exit 1
fi
ok "mount (daemon pid $daemon)"
check "mount prints what to do next" grep -q "fusermount3 -u" "$tmp/mount.out"
out=$("$PASSFS" mount --tasks "$T" --state "$STATE" "$MNT" 2>&1)
rc=$?
check "busy mount point: one line naming it busy, exit 1" \
	test $rc -eq 1 -a "$(printf '%s\n' "$out" | wc -l)" -eq 1 -a -n "$(printf '%s' "$out" | grep busy)"

# ---- the tree ----------------------------------------------------------------
check "ls root" test "$(ls "$MNT" | tr '\n' ' ')" = "README.md docs report.html summary.json $TASK "
check "ls task" test "$(ls "$D" | sort | tr '\n' ' ')" = "$("$PASSFS" tasks --files | sort | tr '\n' ' ')"
check "root README.md" grep -q "pass.c" "$MNT/README.md"
check "task README.md" grep -q "$TASK" "$D/README.md"
check "graph.json is the task's file" cmp -s "$D/graph.json" "$T/$TASK/graph.json"
check "pass.c is the template" grep -q "PASS_REPLACEMENT" "$D/pass.c"
check "stat size of pass.c = bytes read" test "$(stat -c %s "$D/pass.c")" -eq "$(cat "$D/pass.c" | wc -c)"
check "status idle before any evaluation" test "$(cat "$D/status")" = idle
check "result.json idle before any evaluation" json "$D/result.json" "r['state'] == 'idle'"
check "es_t before any evaluation: an empty file, no error" python3 - "$D/es_t" <<'EOF'
import os, sys
# agents' editor tools crash on a read error (ENODATA): empty, size 0
sys.exit(0 if open(sys.argv[1]).read() == "" and os.stat(sys.argv[1]).st_size == 0 else 1)
EOF
check "summary.json" json "$MNT/summary.json" "r['tasks'][0]['id'] == '$TASK'"

# ---- cp fires, cat waits ------------------------------------------------------
t0=$(now)
cp tests/passes/ok_fused.c "$D/pass.c"
cat "$D/result.json" >"$tmp/r1.json"
t1=$(now)
echo "     cp + cat result.json took $(elapsed "$t0" "$t1") s"
sha=$(sha256sum tests/passes/ok_fused.c | cut -d' ' -f1)
check "cp then cat: the read waited for verdict ok of those bytes" \
	json "$tmp/r1.json" "r['state'] == 'done' and r['verdict'] == 'ok' and r['pass_sha256'] == '$sha'"
check "pass.c reads back what cp wrote" cmp -s "$D/pass.c" tests/passes/ok_fused.c
check "es_t holds the score" python3 -c "import sys; v=float(open('$D/es_t').read()); sys.exit(0 if v > 0 else 1)"
check "status done" test "$(cat "$D/status")" = done
check "stat, ls -l and cat agree on result.json's size" \
	test "$(stat -c %s "$D/result.json")" -eq "$(wc -c <"$D/result.json")" -a \
	"$(ls -l "$D/result.json" | awk '{print $5}')" -eq "$(wc -c <"$D/result.json")"
check "summary.json shows the score" json "$MNT/summary.json" "r['tasks'][0]['verdict'] == 'ok'"

# ---- a broken pass written with printf > ---------------------------------------
printf 'this is not C at all\n' >"$D/pass.c"
check "printf > pass.c then cat: compile_error" json "$D/result.json" \
	"r['verdict'] == 'compile_error' and r['state'] == 'done'"

# ---- read-only files, even for root ------------------------------------------------
check "read-only files refuse writes with EACCES/EPERM, as root too" python3 - "$MNT" "$TASK" <<'EOF'
import errno, os, sys
mnt, task = sys.argv[1], sys.argv[2]
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
open(os.path.join(d, "scratch.tmp"), "w").write("x")
files = [os.path.join(d, f) for f in ("README.md", "graph.json", "result.json", "es_t", "status")]
files += [os.path.join(mnt, "README.md"), os.path.join(mnt, "summary.json")]
for f in files:
    n = os.path.relpath(f, mnt)
    expect(f"{n} open O_WRONLY", errno.EACCES, os.open, f, os.O_WRONLY)
    expect(f"{n} open O_RDWR", errno.EACCES, os.open, f, os.O_RDWR)
    expect(f"{n} open O_TRUNC", errno.EACCES, os.open, f, os.O_WRONLY | os.O_TRUNC)
    expect(f"{n} truncate", errno.EACCES, os.truncate, f, 0)
    expect(f"{n} unlink", errno.EACCES, os.unlink, f)
    expect(f"{n} rename away", errno.EACCES, os.rename, f, f + ".moved")
    expect(f"{n} chmod", errno.EPERM, os.chmod, f, 0o666)
    expect(f"{n} chown", errno.EPERM, os.chown, f, 1, 1)
    expect(f"{n} utime", errno.EPERM, os.utime, f, (1, 1))
for f in files[:5]:
    expect(f"rename onto {os.path.basename(f)}", errno.EACCES, os.rename, os.path.join(d, "scratch.tmp"), f)
expect("mkdir named like a read-only file", errno.EEXIST, os.mkdir, os.path.join(d, "graph.json"))
expect("symlink", errno.EPERM, os.symlink, "pass.c", os.path.join(d, "link"))
expect("link", errno.EPERM, os.link, os.path.join(d, "pass.c"), os.path.join(d, "hard"))
expect("mknod fifo", errno.EPERM, os.mkfifo, os.path.join(d, "fifo"))
expect("create in the root", errno.EACCES, os.open, os.path.join(mnt, "new"), os.O_WRONLY | os.O_CREAT, 0o644)
expect("rmdir a task", errno.EPERM, os.rmdir, d)
expect("write past 1 MiB to pass.c", errno.EFBIG, os.truncate, os.path.join(d, "pass.c"), (1 << 20) + 1)
os.unlink(os.path.join(d, "scratch.tmp"))
for b in bad:
    print("     " + b)
sys.exit(1 if bad else 0)
EOF
check "read-only files unchanged" cmp -s "$D/graph.json" "$T/$TASK/graph.json"

# ---- sed -i: a scratch file renamed onto pass.c, exactly one evaluation ------------
cp tests/passes/ok_fused.c "$D/pass.c"
cat "$D/result.json" >/dev/null
before=$(history_count)
sed -i '1i // edited by sed -i' "$D/pass.c"
cat "$D/result.json" >"$tmp/r2.json"
sleep 1
after=$(history_count)
sha=$(sha256sum "$D/pass.c" | cut -d' ' -f1)
check "sed -i fires exactly once ($before -> $after history entries)" test "$after" -eq $((before + 1))
check "sed -i then cat: the result of the edited bytes" json "$tmp/r2.json" \
	"r['pass_sha256'] == '$sha' and r['verdict'] == 'ok' and r['state'] == 'done'"
check "no scratch file left behind by sed" test "$(ls "$D" | wc -l)" -eq 7

# ---- vim-style save: rename away, create, write, unlink the backup -------------------
before=$(history_count)
python3 - "$D" <<'EOF'
import os, sys
d = sys.argv[1]
p = os.path.join(d, "pass.c")
src = open(p).read()
open(os.path.join(d, "4913"), "w").close()           # vim's probe file
os.unlink(os.path.join(d, "4913"))
os.rename(p, p + "~")                                  # backup by renaming
assert not os.path.exists(p)
assert open(p + "~").read() == src                     # the backup holds the bytes
with open(p, "w") as f:                                # create when absent
    f.write("// saved vim-style\n" + src)
    f.flush()
    os.fsync(f.fileno())
os.chmod(p, 0o644)
os.unlink(p + "~")
EOF
cat "$D/result.json" >"$tmp/r3.json"
sleep 1
after=$(history_count)
sha=$(sha256sum "$D/pass.c" | cut -d' ' -f1)
check "vim-style save fires exactly once ($before -> $after)" test "$after" -eq $((before + 1))
check "vim-style save: result of the new bytes" json "$tmp/r3.json" "r['pass_sha256'] == '$sha'"

# ---- while an evaluation runs: O_NONBLOCK and status never wait, ^C -------------
# timeout_spin.c spins until the 1 s step limit (--timeout 1) on every variant:
# seconds of evaluation, long enough to look at it while it runs.
printf '// spin %s\n' "$RANDOM$RANDOM" | cat - tests/passes/timeout_spin.c >"$tmp/spin.c"
cp "$tmp/spin.c" "$D/pass.c"
# The times are taken around the read and from the ^C on, inside python: a
# loaded machine can take a second to start python itself.
python3 - "$D" >"$tmp/nb.out" <<'EOF'
import json, os, sys, time
t = time.monotonic()
fd = os.open(os.path.join(sys.argv[1], "result.json"), os.O_RDONLY | os.O_NONBLOCK)
r = json.loads(os.read(fd, 1 << 20))
os.close(fd)
print(r["state"], "%.3f" % (time.monotonic() - t))
EOF
read -r state nb_s <"$tmp/nb.out"
check "O_NONBLOCK read while busy returns at once ($nb_s s, state $state)" \
	python3 -c "import sys; sys.exit(0 if float('$nb_s') < 1.0 and '$state' in ('pending','compiling','running') else 1)"
check "status while busy never blocks" bash -c "s=\$(timeout 2 cat '$D/status'); [ \"\$s\" != done ]"
python3 - "$D" >"$tmp/int.out" <<'EOF'
import os, signal, subprocess, sys, time
p = subprocess.Popen(["cat", os.path.join(sys.argv[1], "result.json")], stdout=subprocess.DEVNULL,
                     stderr=subprocess.DEVNULL)
time.sleep(0.5)
t = time.monotonic()
p.send_signal(signal.SIGINT)
try:
    rc = p.wait(timeout=10)
except subprocess.TimeoutExpired:
    p.kill()
    rc = p.wait()
print(rc, "%.3f" % (time.monotonic() - t))
EOF
read -r rc int_s <"$tmp/int.out"
check "^C on a waiting cat returns at once ($int_s s after the signal, exit $rc)" \
	python3 -c "import sys; sys.exit(0 if float('$int_s') < 1.0 and $rc != 0 else 1)"
check "ls -l of the task dir while busy" bash -c "timeout 2 ls -l '$D' >/dev/null"
t0=$(now)
cat "$D/result.json" >"$tmp/r4.json"
t1=$(now)
echo "     cat result.json waited $(elapsed "$t0" "$t1") s for the spinning pass"
check "the waited result is the spinning pass's timeout" json "$tmp/r4.json" \
	"r['pass_sha256'] == '$(sha256sum "$tmp/spin.c" | cut -d' ' -f1)' and r['state'] == 'done' and r['verdict'] == 'timeout'"

# ---- unmount, the daemon exits; remount: same pass.c and result.json ---------------
cp "$D/pass.c" "$tmp/pass.before"
cp "$D/result.json" "$tmp/result.before"
fusermount3 -u "$MNT"
gone=0
for _ in $(seq 100); do
	alive "$daemon" || { gone=1; break; }
	sleep 0.1
done
check "the daemon exits after fusermount3 -u" test $gone -eq 1
check "the mount is gone" bash -c "! mountpoint -q '$MNT'"
daemon=$(mount_it --wait-timeout 2)
check "remount" test -n "$daemon"
check "remount: same pass.c" cmp -s "$D/pass.c" "$tmp/pass.before"
check "remount: same result.json" cmp -s "$D/result.json" "$tmp/result.before"

# ---- --wait-timeout: a read answers with the state as it is -------------------------
printf '// spin again %s\n' "$RANDOM$RANDOM" | cat - tests/passes/timeout_spin.c >"$tmp/spin2.c"
cp "$tmp/spin2.c" "$D/pass.c"
t0=$(now)
cat "$D/result.json" >"$tmp/r5.json"
t1=$(now)
check "--wait-timeout 2: the read answers after $(elapsed "$t0" "$t1") s, still busy" python3 -c "
import json, sys
r = json.load(open('$tmp/r5.json')); t = float('$(elapsed "$t0" "$t1")')
sys.exit(0 if 1.5 <= t < 5 and r['state'] in ('pending', 'compiling', 'running') else 1)"

# ---- SIGTERM unmounts cleanly (the running evaluation finishes first) ----------------
kill -TERM "$daemon"
gone=0
for _ in $(seq 300); do

	alive "$daemon" || { gone=1; break; }
	sleep 0.1
done
check "SIGTERM: the daemon exits" test $gone -eq 1
check "SIGTERM: the mount is gone" bash -c "! mountpoint -q '$MNT'"
daemon=""

# Sanitizer builds (tests/run.sh) report into the daemon's log.
if grep -qE "AddressSanitizer|LeakSanitizer|runtime error" "$STATE/mount.log" 2>/dev/null; then
	bad "the daemon's log has a sanitizer report:"
	grep -E -A20 "AddressSanitizer|LeakSanitizer|runtime error" "$STATE/mount.log" | head -60
else
	ok "no sanitizer report in the daemon's log"
fi

echo -n "mount_basic: "
finish
