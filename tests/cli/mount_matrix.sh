#!/usr/bin/env bash
# The acceptance matrix of `passfs mount` (docs/mount.md): every
# way real tools save a file -- in place, append, temp file + rename, unlink +
# create, rename away + create, truncate by path, overwrite without truncation
# -- must fire exactly one evaluation, of the final bytes, and a `cat
# result.json` right after the command must show the result of exactly those
# bytes (its pass_sha256 is the sha256 of pass.c as read back through the
# mount); each row also checks that the tool saved the way it is listed to
# (same inode: in place; new inode: pass.c replaced).  Then 300 back-to-back
# saves, each of which must fire once on its own bytes, and the fsx-style
# checker (tests/fsx/fsx.c: random writes, truncations, appends against a
# reference copy; FSX_OPS, FSX_SEED replay a run).
#
# One mount of the tiny test task (cpu backend, one trial, no warm-up), every
# tool in turn against it, each with a pass variant no earlier row wrote (so
# no result comes from history).  One line per tool, then "N passed, N
# failed".  Tools: tests/deps.sh installs them (rsync, vim, git, patch,
# python3); a missing tool is a failure, not a skip.  Skips only when
# /dev/fuse is absent.
NAME=mount_matrix
. tests/lib/cli.sh
. tests/lib/mount.sh
FSX=${PASSFS_FSX:-$(dirname "$PASSFS")/passfs_fsx}
FSX_OPS=${FSX_OPS:-3000}
T=tests/passes/tasks
TASK=tiny_bias_gelu
OK=tests/passes/ok_fused.c

# The state on tmpfs when there is one: fires take microseconds instead of
# disk writes, which is what lets back-to-back saves race their releases.
if [ -d /dev/shm ] && [ -w /dev/shm ]; then
	STATE=$(mktemp -d /dev/shm/passfs-matrix-state.XXXXXX)
fi
D=$MNT/$TASK
G=$tmp/git                      # the git dir whose work tree is the task dir
RUN=$$.$RANDOM                  # makes every variant's bytes new
mount_cleanup_more() {
	case $STATE in /dev/shm/*) rm -rf "$STATE" ;; esac
}
history_count() { ls "$STATE/$TASK/history/"*.json 2>/dev/null | wc -l; }
# The seq of the latest fire (result.json waits while an evaluation is due).
seq_now() { python3 -c "import json,sys; print(json.load(open(sys.argv[1]))['seq'])" "$D/result.json"; }
now() { date +%s.%N; }

# A pass variant: ok_fused.c with a line of its own, so its bytes are new.
variant() { # name -> path
	local v=$tmp/v_$1.c
	{ cat "$OK"; printf '// matrix %s %s\n' "$1" "$RUN"; } >"$v"
	echo "$v"
}

# One row: run the command, read result.json and pass.c back at once, then
# check: one fire (seq + 1, history + 1, also a moment later), the bytes are
# the expected ones, result.json judged exactly those bytes, the evaluation
# was real (not reused), no scratch file was left behind, and the tool saved
# the way NOTES.md says it does: $INODE "same" (in place) or "new" (pass.c
# replaced: temp + rename, unlink + create, rename away + create).
INODE=any
row() { # name, expected-bytes file, command...
	local name=$1 exp=$2
	shift 2
	local seq0 hist0 t0 t1 rc ino0 ino1
	ino0=$(stat -c %i "$D/pass.c")
	seq0=$(seq_now)
	hist0=$(history_count)
	t0=$(now)
	"$@" >"$tmp/cmd.out" 2>&1
	rc=$?
	cat "$D/result.json" >"$tmp/r.json"
	t1=$(now)
	cat "$D/pass.c" >"$tmp/back"
	ino1=$(stat -c %i "$D/pass.c")
	ls -A "$D" >"$tmp/ls"
	sleep 0.2                   # a late second fire would show by now
	local seq1 hist1
	seq1=$(seq_now)
	hist1=$(history_count)
	local why
	why=$(python3 - "$tmp/r.json" "$tmp/back" "$exp" "$seq0" "$seq1" "$hist0" "$hist1" "$rc" "$tmp/ls" <<'EOF'
import hashlib, json, sys
rj, back, exp, seq0, seq1, hist0, hist1, rc, lsf = sys.argv[1:]
seq0, seq1, hist0, hist1, rc = map(int, (seq0, seq1, hist0, hist1, rc))
why = []
try:
    r = json.load(open(rj))
except Exception as e:
    print(f"result.json unreadable: {e}"); sys.exit()
b = open(back, "rb").read()
if rc != 0:
    why.append(f"the command exited {rc}")
if b != open(exp, "rb").read():
    why.append(f"pass.c reads back {len(b)} bytes, not the expected {len(open(exp, 'rb').read())}")
if r.get("seq") != seq0 + 1 or seq1 != seq0 + 1:
    why.append(f"{seq1 - seq0} fires (seq {seq0} -> {r.get('seq')} right after, {seq1} later)")
if hist1 != hist0 + 1:
    why.append(f"{hist1 - hist0} evaluations recorded")
if r.get("pass_sha256") != hashlib.sha256(b).hexdigest():
    why.append("result.json right after the command judged other bytes")
if r.get("state") != "done" or r.get("verdict") is None:
    why.append(f"state {r.get('state')} verdict {r.get('verdict')}")
if "reused_from" in r:
    why.append(f"answered from history (seq {r['reused_from']}): the variant was not new")
extra = sorted(set(open(lsf).read().split()) - {"README.md", "graph.json", "pass.c", "result.json", "es_t", "check.json", "status"})
if extra:
    why.append("left behind: " + " ".join(extra))
print("; ".join(why) if why else f"OK seq {r['seq']}, verdict {r['verdict']}")
EOF
	)
	local how=same
	[ "$ino0" != "$ino1" ] && how=new
	if [ "$INODE" != any ] && [ "$INODE" != "$how" ]; then
		case $why in OK*) why="" ;; *) why="$why; " ;; esac
		why="${why}expected a $INODE inode, got $how ($ino0 -> $ino1)"
	fi
	local secs
	secs=$(python3 -c "import sys; print(f'{float(sys.argv[2]) - float(sys.argv[1]):.2f}')" "$t0" "$t1")
	if [ "${why#OK }" != "$why" ]; then
		ok "$(printf '%-26s %s, %s inode, command + cat %s s' "$name" "${why#OK }" "$how" "$secs")"
	else
		bad "$(printf '%-26s %s' "$name" "$why")"
		sed 's/^/     | /' "$tmp/cmd.out" | head -5
	fi
	# Remove whatever a failing row left, so later rows are judged alone.
	for f in $(comm -23 <(sort "$tmp/ls") <("$PASSFS" tasks --files | sort)); do
		rm -f "$D/$f"
	done
}

# The current bytes, as read through the mount.
cur() { cat "$D/pass.c" >"$tmp/cur"; echo "$tmp/cur"; }

for tool in vim git patch rsync python3 sed dd truncate; do
	command -v $tool >/dev/null || bad "tool $tool is missing (install it: ./tests/deps.sh)"
done

# ---- mount ---------------------------------------------------------------------
out=$("$PASSFS" mount --tasks "$T" --state "$STATE" --backend cpu --trials 1 --warmup 0 \
	--timeout 5 --wait-timeout 60 "$MNT" 2>"$tmp/mount.err")
daemon=$(printf '%s\n' "$out" | sed -n 's/.*daemon pid \([0-9]*\).*/\1/p' | head -1)
if [ -z "$daemon" ] || ! mountpoint -q "$MNT"; then
	bad "mount: $(cat "$tmp/mount.err")"
	echo "mount_matrix: $pass passed, $fails failed"
	exit 1
fi
echo "     mounted $TASK at $MNT (daemon $daemon)"
# A first evaluation, so every row starts from state done.
cp "$OK" "$D/pass.c"
cat "$D/result.json" >/dev/null

# ---- in place: open(O_TRUNC), write, close --------------------------------------
INODE=same
v=$(variant echo)
row "echo >" "$v" bash -c 'echo "$(cat "$1")" >"$2"' _ "$v" "$D/pass.c"

v=$(variant heredoc)
row "cat > <<EOF" "$v" bash -c 'cat >"$2" <<EOF
$(cat "$1")
EOF' _ "$v" "$D/pass.c"

{ cat "$(cur)"; echo "// appended $RUN"; } >"$tmp/exp_append"
row ">>" "$tmp/exp_append" bash -c 'echo "// appended $1" >>"$2"' _ "$RUN" "$D/pass.c"

v=$(variant tee)
row "tee" "$v" bash -c 'tee "$2" <"$1" >/dev/null' _ "$v" "$D/pass.c"

v=$(variant cp)
row "cp" "$v" cp "$v" "$D/pass.c"

v=$(variant cp_a)
row "cp -a" "$v" cp -a "$v" "$D/pass.c"

v=$(variant python_open_w)
row "python3 open('w')" "$v" python3 -c "import sys; open(sys.argv[2], 'w').write(open(sys.argv[1]).read())" "$v" "$D/pass.c"

# ---- temp file + rename onto pass.c ------------------------------------------------
INODE=new
{ echo "// sed -i $RUN"; cat "$(cur)"; } >"$tmp/exp_sed"
row "sed -i" "$tmp/exp_sed" sed -i "1i // sed -i $RUN" "$D/pass.c"

# patch: a hunk in the middle of the file.
python3 - "$(cur)" "$tmp/exp_patch" "$RUN" <<'EOF'
import sys
lines = open(sys.argv[1]).read().splitlines(True)
lines.insert(len(lines) // 2, f"/* patched {sys.argv[3]} */\n")
open(sys.argv[2], "w").write("".join(lines))
EOF
diff -u "$tmp/cur" "$tmp/exp_patch" >"$tmp/p.diff"
row "patch" "$tmp/exp_patch" patch -s "$D/pass.c" "$tmp/p.diff"

v=$(variant python_os_replace)
row "python3 os.replace" "$v" python3 - "$v" "$D" <<'EOF'
import os, sys, tempfile
src, d = sys.argv[1], sys.argv[2]
fd, t = tempfile.mkstemp(dir=d, prefix=".pass.c.", suffix=".tmp")
os.write(fd, open(src, "rb").read())
os.fsync(fd)
os.close(fd)
os.chmod(t, 0o644)
os.replace(t, os.path.join(d, "pass.c"))
EOF

# The temp file's writer still open at the rename: fires at its close.
v=$(variant python_os_replace_open)
row "python3 os.replace, open" "$v" python3 - "$v" "$D" <<'EOF'
import os, sys, tempfile
src, d = sys.argv[1], sys.argv[2]
data = open(src, "rb").read()
fd, t = tempfile.mkstemp(dir=d, prefix=".pass.c.", suffix=".tmp")
os.write(fd, data[:100])
os.replace(t, os.path.join(d, "pass.c"))
os.write(fd, data[100:])
os.close(fd)
EOF

v=$(variant rsync)
row "rsync" "$v" rsync "$v" "$D/pass.c"

# ---- vim: rename away + create (backupcopy=no, and auto here), copy + in place (yes) --
# backupskip= : vim's default skips the backup for files under /tmp (where
# this mount lives), which would make every setting an in-place write.
vimrow() { # backupcopy setting, the inode expected ("new" or "same")
	{ echo "// vim $1 $RUN"; cat "$(cur)"; } >"$tmp/exp_vim"
	INODE=$2 row "vim -es backupcopy=$1" "$tmp/exp_vim" vim -es -u NONE -i NONE -N \
		-c "set backupskip= backupcopy=$1" -c "call append(0, '// vim $1 $RUN')" -c wq "$D/pass.c"
}
vimrow auto new     # the 4913 probe, then rename away + create
vimrow yes same     # a backup copy, then ftruncate + write in place
vimrow no new       # rename away + create

# ---- git: unlink + create, with a git dir outside the mount ---------------------------
INODE=new
gitw() { (cd "$D" && git --git-dir="$G" --work-tree=. "$@"); }
git init -q --bare "$G"
git --git-dir="$G" config core.bare false
# The index holds bytes the mount has never seen; checkout writes them.
v=$(variant git_checkout)
blob=$(git --git-dir="$G" hash-object -w "$v")
git --git-dir="$G" update-index --add --cacheinfo "100644,$blob,pass.c"
row "git checkout -- pass.c" "$v" gitw checkout -- pass.c

v=$(variant git_apply)
diff -u --label a/pass.c --label b/pass.c "$(cur)" "$v" >"$tmp/g.diff"
row "git apply" "$v" gitw apply "$tmp/g.diff"

# ---- in place without O_TRUNC: rsync --inplace (shorter: ftruncate), dd, truncate ----
INODE=same
{ tail -n +2 "$OK"; echo "// inplace $RUN"; } >"$tmp/exp_inplace"
if [ "$(wc -c <"$tmp/exp_inplace")" -ge "$(wc -c <"$(cur)")" ]; then
	bad "rsync --inplace: the variant should be shorter than pass.c (test bug)"
fi
row "rsync --inplace" "$tmp/exp_inplace" rsync --inplace "$tmp/exp_inplace" "$D/pass.c"

size=$(wc -c <"$(cur)")
head -c $((size - 3)) "$tmp/cur" >"$tmp/exp_trunc"
row "truncate -s" "$tmp/exp_trunc" truncate -s $((size - 3)) "$D/pass.c"

# dd conv=notrunc: overwrite the head with 512-byte blocks, keep the tail.
{ echo "// dd $RUN"; head -c 700 "$OK"; } >"$tmp/dd_in"
python3 - "$tmp/dd_in" "$(cur)" "$tmp/exp_dd" <<'EOF'
import sys
a, c = open(sys.argv[1], "rb").read(), open(sys.argv[2], "rb").read()
open(sys.argv[3], "wb").write(a + c[len(a):])
EOF
row "dd conv=notrunc" "$tmp/exp_dd" dd if="$tmp/dd_in" of="$D/pass.c" bs=512 conv=notrunc status=none

INODE=new            # mv from another file system: unlink + create
v=$(variant mv_from_tmp)
cp "$v" "$tmp/moved.c"
row "mv (from another fs)" "$v" mv "$tmp/moved.c" "$D/pass.c"

# ---- back-to-back saves: each fires once, on its own bytes ----------------------------
# Release reaches the daemon after close() returned, so the next save's
# O_TRUNC can arrive first; a fire must still judge the bytes its save left
# (never the next save's empty or partial file).  Non-compiling text: fast.
t0=$(now)
why=$(python3 - "$D" "$STATE/$TASK/history" 300 <<'EOF'
import glob, hashlib, json, os, re, sys, time
d, hist, n = sys.argv[1], sys.argv[2], int(sys.argv[3])
P = os.path.join(d, "pass.c")
def result():
    with open(os.path.join(d, "result.json")) as f:
        return json.load(f)
s0 = result()["seq"]
before = set(glob.glob(hist + "/*.c"))
for i in range(n):
    fd = os.open(P, os.O_WRONLY | os.O_TRUNC)
    os.write(fd, b"back-to-back save %d\n" % i + b"x" * 4000 + b"\n")
    os.close(fd)
r = result()
time.sleep(0.3)
s1 = result()["seq"]
last = b"back-to-back save %d\n" % (n - 1) + b"x" * 4000 + b"\n"
why = []
if s1 - s0 != n:
    why.append(f"{s1 - s0} fires for {n} saves")
judged = sorted(set(glob.glob(hist + "/*.c")) - before)
bad = [f for f in judged if not re.fullmatch(rb"back-to-back save \d+\nx{4000}\n", open(f, "rb").read())]
if bad:
    why.append(f"{len(bad)} of {len(judged)} evaluations judged bytes no save left "
               f"(e.g. {len(open(bad[0], 'rb').read())} bytes)")
if r.get("pass_sha256") != hashlib.sha256(last).hexdigest():
    why.append("result.json right after does not judge the last save")
print("; ".join(why) if why else f"OK {n} saves, {s1 - s0} fires, {len(judged)} evaluations, all of complete saves")
EOF
)
t1=$(now)
secs=$(python3 -c "import sys; print(f'{float(sys.argv[2]) - float(sys.argv[1]):.2f}')" "$t0" "$t1")
if [ "${why#OK }" != "$why" ]; then
	ok "$(printf '%-26s %s (%s s)' "back-to-back saves" "${why#OK }" "$secs")"
else
	bad "$(printf '%-26s %s' "back-to-back saves" "$why")"
fi

# ---- fsx: random writes, truncations, appends against a reference copy ----------------
if [ ! -x "$FSX" ]; then
	bad "fsx: $FSX is not built (cmake --build build)"
else
	seed=${FSX_SEED:-$(( (RANDOM << 15) | RANDOM ))}
	t0=$(now)
	"$FSX" -N "$FSX_OPS" -S "$seed" "$D/pass.c" >"$tmp/fsx.out" 2>&1
	rc=$?
	t1=$(now)
	secs=$(python3 -c "import sys; print(f'{float(sys.argv[2]) - float(sys.argv[1]):.1f}')" "$t0" "$t1")
	if [ $rc -eq 0 ]; then
		ok "$(tail -1 "$tmp/fsx.out") ($secs s, seed $seed)"
	else
		bad "fsx (replay: $FSX -N $FSX_OPS -S $seed MNT/$TASK/pass.c):"
		tail -30 "$tmp/fsx.out" | sed 's/^/     | /'
	fi
	# Its last close fired: result.json judges the final bytes.
	cat "$D/pass.c" >"$tmp/back"
	if python3 -c "import hashlib,json,sys; r=json.load(open(sys.argv[1])); sys.exit(0 if r['state']=='done' and r['pass_sha256']==hashlib.sha256(open(sys.argv[2],'rb').read()).hexdigest() else 1)" \
		"$D/result.json" "$tmp/back"; then
		ok "after fsx: result.json judges the final bytes"
	else
		bad "after fsx: result.json does not judge the final bytes"
	fi
fi

if kill -0 "$daemon" 2>/dev/null && mountpoint -q "$MNT"; then
	ok "the daemon is alive and mounted after the matrix"
else
	bad "the daemon died"
fi
fusermount3 -u "$MNT"
if grep -qE "AddressSanitizer|LeakSanitizer|runtime error" "$STATE/mount.log" 2>/dev/null; then
	bad "the daemon's log has a sanitizer report:"
	grep -E -A20 "AddressSanitizer|LeakSanitizer|runtime error" "$STATE/mount.log" | head -60
fi

echo -n "mount_matrix: "
finish
