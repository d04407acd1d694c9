#!/usr/bin/env bash
# The rooms the build enforces (docs/architecture.md, "Rooms the build
# checks"): every global symbol of a room's library carries one of that
# room's prefixes, and every #include points down the layers, never into
# another room's private header.  The table of prefixes and layers is here;
# a new module with a prefix of its own adds it to its room's row.
source "$(dirname "$0")/../lib/cli.sh"
B=$(dirname "$PASSFS")
for a in base gpu graph import eval service broker report; do
	if [ ! -f "$B/libpassfs_$a.a" ]; then
		echo "skip: no build tree beside $PASSFS (libpassfs_$a.a)"
		exit 0
	fi
done
command -v nm >/dev/null || { bad "nm (binutils) is needed"; finish; exit; }

cat >"$tmp/rooms.py" <<'PY'
import collections, glob, os, re, subprocess, sys
build, exe, root = sys.argv[1:4]

# ---- symbols ---------------------------------------------------------------
PREFIXES = {
    "base": "base_ strbuf_ sha256_ hmac_ wire_",
    "gpu": "gpu_ pf_ traffic_ model_ hostcc_ blas_ dnn_ cupti_ nvrtc_ cpu_ cuda_ ptx_ elfcheck_ datadir_ pool_",
    "graph": "graph_ task_",
    "import": "import_ imp_",
    "eval": "eval_ eager_ eg_ inputs_ integrity_ jail_ sandbox_ sbx_ kacct_ pass_ score_ result_ worker_ "
            "evaluator_ shm_",
    "service": "svc_ state_ checks_ warm_",
    "broker": "bk_ broker_",
    "report": "report_",
    "fs": "cmd_ evalopt_ mnt_ tree_ readme_ watch_",
}
PREFIXES = {k: v.split() for k, v in PREFIXES.items()}
# what a room may define beyond its prefixes, and why
EXCEPT = {
    # the sandbox's open family, which the dlopen'ed GPU driver binds to
    "eval": {"open", "open64", "openat", "openat64", "__open_2", "__open64_2", "__openat_2", "__openat64_2"},
    "fs": {"main"},
}
# what the toolchain links into every executable, and the linker's bounds of
# the sandbox's own text section (engine/eval/guard/sandbox.c)
TOOLCHAIN = {"_start", "_init", "_fini", "_edata", "_end", "__bss_start", "__data_start", "data_start",
             "_IO_stdin_used", "__dso_handle", "__TMC_END__", "__pthread_atfork",
             "__start_passfs_open_text", "__stop_passfs_open_text"}
seen = [p for ps in PREFIXES.values() for p in ps]
dup = [p for p, n in collections.Counter(seen).items() if n > 1]
if dup:
    print("a prefix in two rooms:", dup)
else:
    print("ok   %d prefixes, each one room's" % len(seen))

def defined(path):
    out = subprocess.run(["nm", "-A", "-g", "--defined-only", path], capture_output=True, text=True, check=True).stdout
    for line in out.splitlines():
        # "lib.a:member.o:address T name", or "exe:address T name"
        parts = line.split()
        if len(parts) >= 2:
            where = parts[0].rsplit(":", 1)[0]
            yield parts[-1], where.rsplit(":", 1)[-1]

def check(room, syms):
    bad = sorted((s, w) for s, w in syms if not s.startswith(tuple(PREFIXES[room])) and s not in EXCEPT.get(room, ()))
    if bad:
        print("%s defines %d global symbols without its prefixes: %s" % (
            room, len(bad), ", ".join("%s (%s)" % (s, w) for s, w in bad[:40])))
    else:
        print("ok   %s: %d global symbols, all with its prefixes" % (room, len(syms)))

lib_syms = set()
for room in ("base", "gpu", "graph", "import", "eval", "service", "broker", "report"):
    syms = list(defined(os.path.join(build, "libpassfs_%s.a" % room)))
    lib_syms |= {s for s, _ in syms}
    check(room, syms)
fs = [(s, "passfs") for s, _ in defined(exe)
      if s not in lib_syms and s not in TOOLCHAIN and "@" not in s]
check("fs", fs)

# ---- includes --------------------------------------------------------------
# room -> the rooms it may include (itself always); gpu/include and
# gpu/oplib are gpu's, engine/eval/eager and engine/eval/guard eval's own
# rooms below it
MAY = {
    "base": [],
    "gpu": ["base"],
    "engine/graph": ["base"],
    "engine/import": ["base", "engine/graph"],
    "engine/eval/guard": ["base", "gpu"],
    "engine/eval/eager": ["base", "gpu", "engine/graph"],
    "engine/eval": ["base", "gpu", "engine/graph", "engine/eval/eager", "engine/eval/guard"],
    "engine/service": ["base", "gpu", "engine/graph", "engine/eval"],
    "engine/broker": ["base", "gpu", "engine/graph", "engine/eval"],
    "engine/report": ["base", "engine/graph", "engine/eval", "engine/service"],
    "fs": ["base", "gpu", "engine/graph", "engine/import", "engine/eval", "engine/eval/eager", "engine/eval/guard",
           "engine/service", "engine/broker", "engine/report"],
}
# private headers: only their own directory includes them
PRIVATE = {"gpu/backend.h"}

def room(path):
    p = path.split("/")
    if p[0] == "gpu":
        return "gpu"
    if p[0] == "engine":
        if p[1] == "eval" and len(p) > 3 and p[2] in ("eager", "guard"):
            return "engine/eval/" + p[2]
        return "engine/" + p[1]
    return p[0]

headers = collections.defaultdict(list)
sources = []
for top in ("base", "gpu", "engine", "fs"):
    for f in glob.glob(os.path.join(root, top, "**", "*"), recursive=True):
        rel = os.path.relpath(f, root)
        if rel.endswith(".h"):
            headers[os.path.basename(rel)].append(rel)
        if rel.endswith((".c", ".h", ".cc")) and "/oplib/" not in rel and not rel.startswith("gpu/include/"):
            sources.append(rel)
wrong = []
n_inc = 0
for rel in sorted(sources):
    text = open(os.path.join(root, rel), errors="replace").read()
    for lineno, line in enumerate(text.splitlines(), 1):
        m = re.match(r'\s*#\s*include\s*"([^"]+)"', line)
        if not m:
            continue
        cands = headers.get(os.path.basename(m.group(1)))
        if not cands:
            continue        # not the project's (a system or generated header)
        near = [c for c in cands if os.path.dirname(c) == os.path.dirname(rel)]
        tgt = (near or cands)[0]
        n_inc += 1
        a, b = room(rel), room(tgt)
        private = tgt in PRIVATE or tgt.endswith("_int.h")
        if private and os.path.dirname(tgt) != os.path.dirname(rel):
            wrong.append("%s:%d includes %s, private to %s" % (rel, lineno, tgt, os.path.dirname(tgt)))
        elif a != b and b not in MAY[a]:
            wrong.append("%s:%d includes %s: %s may not include %s" % (rel, lineno, tgt, a, b))
if wrong:
    print("includes that cross a room the wrong way:", "; ".join(wrong))
else:
    print("ok   %d includes of the project's headers, each down the layers" % n_inc)
PY
/usr/bin/python3 "$tmp/rooms.py" "$B" "$PASSFS" . >"$tmp/out" 2>&1
relay "$tmp/out"

# the check can fail: on a small tree whose gpu/ includes engine/service's
# header and whose eval library defines `cur`, both are named
t=$tmp/t
mkdir -p "$t/base" "$t/gpu" "$t/engine/service" "$t/fs" "$t/build"
printf '#include "state.h"\nint gpu_x(void) { return 1; }\n' >"$t/gpu/x.c"
printf 'int state_y(void);\n' >"$t/engine/service/state.h"
printf 'int base_a(void) { return 0; }\n' >"$t/base/a.c"
printf 'int cur(void) { return 2; }\n' >"$t/engine/e.c"
printf 'int main(void) { return 0; }\n' >"$t/fs/main.c"
cc=$(command -v cc || command -v gcc)
if (cd "$t" && $cc -c base/a.c -o build/a.o && $cc -I engine/service -c gpu/x.c -o build/x.o &&
	$cc -c engine/e.c -o build/e.o && $cc fs/main.c -o build/passfs) 2>"$tmp/ccerr" &&
	ar rcs "$t/build/libpassfs_base.a" "$t/build/a.o" && ar rcs "$t/build/libpassfs_gpu.a" "$t/build/x.o" &&
	ar rcs "$t/build/libpassfs_eval.a" "$t/build/e.o" && printf 'typedef int nothing;\n' >"$t/z.c" &&
	$cc -c "$t/z.c" -o "$t/build/z.o" && for r in graph import service broker report; do
		ar rcs "$t/build/libpassfs_$r.a" "$t/build/z.o"; done; then
	/usr/bin/python3 "$tmp/rooms.py" "$t/build" "$t/build/passfs" "$t" >"$tmp/out2" 2>&1
	if grep -q "eval defines 1 global symbols without its prefixes: cur (e.o)" "$tmp/out2" &&
		grep -q "gpu/x.c:1 includes engine/service/state.h: gpu may not include engine/service" "$tmp/out2"; then
		ok "a wrong-way include and an unprefixed symbol are named"
	else
		bad "the check missed them: $(cat "$tmp/out2")"
	fi
else
	bad "cannot build the small tree: $(cat "$tmp/ccerr")"
fi
finish
