#!/usr/bin/env bash
# passfs doctor: every check runs and says what it found, the last one a
# built-in pass evaluated end to end (ok here); a missing host compiler or
# pass headers fail it (exit 1) and say so, and the evaluation is then not
# tried; --json carries the same; with a mock CUDA driver, auto picks cuda and
# names the device, and the evaluation runs through the cuda path to the
# comparison, where the mock (which runs no kernel) fails it; a mock GPU
# newer than NVRTC is a note naming the PTX target, and evaluates the same.
. tests/lib/cli.sh

if "$PASSFS" doctor >"$tmp/out" 2>"$tmp/err"; then
	ok "doctor exits 0 on this machine"
else
	bad "doctor: exit $?: $(cat "$tmp/out" "$tmp/err" | tail -5)"
fi
missing=""
for n in backend nvrtc compiler headers "op library" tasks sandbox jail cupti cublas cudnn fuse cache "lock dir" evaluation; do
	grep -qE "^  (ok|note|FAIL) +$n " "$tmp/out" || missing="$missing [$n]"
done
[ -z "$missing" ] && ok "every check reports a line" || bad "lines missing:$missing"
grep -q '^  ok    sandbox     seccomp: a test worker.s openat was refused' "$tmp/out" &&
	ok "the sandbox check stopped a real test worker" || bad "sandbox line: $(grep sandbox "$tmp/out")"
# The compile jail: the full one where this machine makes namespaces (as
# root, or a user namespace), else a note naming the fallback; a forced
# fallback is a note that says what holds instead, never silence.
if [ "$(id -u)" = 0 ] && unshare -m -p -n -f true 2>/dev/null || unshare -U -r -m -p -n -f true 2>/dev/null; then
	grep -qE '^  ok    jail        compilers run in namespaces \+ pivot_root: .* \(set up in [0-9.]+ ms\)$' "$tmp/out" &&
		ok "the jail check entered the compile jail" || bad "jail line: $(grep jail "$tmp/out")"
else
	grep -qE '^  note  jail        compile jail: no namespaces .*\(fallback: (landlock|limits)\)$' "$tmp/out" &&
		ok "no namespaces here: the jail line names the fallback" || bad "jail line: $(grep jail "$tmp/out")"
fi
PASSFS_JAIL=limits "$PASSFS" doctor >"$tmp/out3" 2>&1
grep -qE '^  note  jail        compile jail: no namespaces and no Landlock .*only limits.* \(fallback: limits\)$' "$tmp/out3" &&
	ok "a jail without namespaces or Landlock says so" || bad "fallback jail line: $(grep jail "$tmp/out3")"
grep -qE '^  ok    compiler    .*\((/[^)]*)\)$' "$tmp/out" && ok "the compiler ran and is named with its path" ||
	bad "compiler line: $(grep compiler "$tmp/out")"
if ! command -v nvidia-smi >/dev/null 2>&1; then
	grep -q '^  ok    backend     auto picks cpu (.*no cuda: ' "$tmp/out" &&
		ok "no GPU: auto picks cpu and says why not cuda" || bad "backend line: $(grep backend "$tmp/out")"
fi
grep -qE '^  ok    evaluation  a built-in pass evaluated end to end on (cpu|cuda) in [0-9.]+ s: ok, speedup [0-9.]+$' "$tmp/out" &&
	ok "a built-in pass evaluated end to end: ok" || bad "evaluation line: $(grep evaluation "$tmp/out")"
grep -q '^passfs can evaluate passes here' "$tmp/out" && ok "the verdict line" || bad "verdict: $(tail -1 "$tmp/out")"

"$PASSFS" doctor --json >"$tmp/j" 2>"$tmp/err"
if /usr/bin/python3 - "$tmp/j" "$tmp/out" <<'PY'; then
import json, sys
d = json.load(open(sys.argv[1]))
names = [c["name"] for c in d["checks"]]
want = ["backend", "nvrtc", "compiler", "headers", "op library", "tasks", "sandbox", "jail", "cupti", "cublas", "cudnn",
        "fuse", "cache", "lock dir", "evaluation"]
text = open(sys.argv[2]).read()
ok = (d["ok"] is True and names == want and d["backend"] in ("cpu", "cuda")
      # (the evaluation's time and speedup, the jail's set-up time differ
      # from run to run)
      and all(c["status"] in ("ok", "note", "fail") and
              (c["detail"].split(" in ")[0] if c["name"] == "evaluation" else
               c["detail"].split(" (set up in ")[0] if c["name"] == "jail" else c["detail"]) in text
              for c in d["checks"])
      and (d["cuda"]["count"] > 0) == (d["backend"] == "cuda"))
sys.exit(0 if ok else 1)
PY
	ok "--json: the same checks, in order, with the text's details"
else
	bad "--json: $(head -c 400 "$tmp/j")"
fi

PASSFS_CXX=/nonexistent/c++ "$PASSFS" doctor >"$tmp/out2" 2>&1
rc=$?
if [ $rc -eq 1 ] && grep -q "^  FAIL  compiler    '/nonexistent/c++' not found (set PASSFS_CXX)" "$tmp/out2" &&
	grep -q '^  note  evaluation  not tried: the failures above come first' "$tmp/out2" &&
	grep -q '^passfs cannot evaluate passes here: 1 check failed.' "$tmp/out2"; then
	ok "no host compiler: FAIL, exit 1"
else
	bad "no host compiler: exit $rc: $(grep -E 'compiler|cannot' "$tmp/out2")"
fi
PASSFS_INCLUDE_DIR=$tmp/nothing "$PASSFS" doctor --json >"$tmp/j2" 2>&1
rc=$?
if [ $rc -eq 1 ] && /usr/bin/python3 -c "
import json, sys
d = json.load(open('$tmp/j2'))
c = [c for c in d['checks'] if c['name'] == 'headers'][0]
sys.exit(0 if d['ok'] is False and c['status'] == 'fail' and 'no passfs.h' in c['detail'] else 1)"; then
	ok "no pass headers: fail in --json, exit 1"
else
	bad "no pass headers: exit $rc: $(head -c 300 "$tmp/j2")"
fi
"$PASSFS" doctor extra >/dev/null 2>"$tmp/err3"
rc=$?
[ $rc -eq 2 ] && grep -q "unexpected argument 'extra'" "$tmp/err3" && ok "a stray argument: exit 2" ||
	bad "stray argument: exit $rc"
"$PASSFS" doctor --help | grep -q -- '--json' && ok "--help" || bad "--help"

# a (mock) GPU: auto picks cuda and names it
. tests/gpu/mock/build.sh
PASSFS_LIBCUDA=$tmp/libcuda_mock.so PASSFS_CUBLAS=$tmp/libcublas_mock.so "$PASSFS" doctor >"$tmp/out4" 2>&1
rc=$?
# the mock runs no kernel: the built-in pass's output keeps its poison, so the
# evaluation (and only it) fails, after getting through the cuda path
if [ $rc -eq 1 ] && grep -q '^  ok    backend     auto picks cuda: Mock GPU .*(sm_90a, 132 SMs, 80 GiB at 3.35 TB/s peak' "$tmp/out4" &&
	grep -q '^  ok    cublas ' "$tmp/out4" && grep -q '^  note  cudnn .*convolutions run on passfs' "$tmp/out4" &&
	grep -q "^  FAIL  evaluation  a built-in correct pass came out rejected: variant 'f32': .*still holds the poison" "$tmp/out4" &&
	grep -q '^passfs cannot evaluate passes here: 1 check failed.' "$tmp/out4"; then
	ok "mock GPU: auto picks cuda; a missing cuDNN is a note; the evaluation reaches the comparison"
else
	bad "mock GPU: exit $rc: $(cat "$tmp/out4")"
fi
grep -q '^  note  arch ' "$tmp/out4" && bad "a GPU NVRTC knows has an arch note: $(grep ' arch ' "$tmp/out4")"
# a GPU newer than NVRTC: compiled to PTX for the newest arch NVRTC knows,
# which is a note; the evaluation still gets through to the comparison
PASSFS_LIBCUDA=$tmp/libcuda_mock.so PASSFS_CUBLAS=$tmp/libcublas_mock.so MOCK_CUDA_CC=99.0 "$PASSFS" doctor >"$tmp/out5" 2>&1
rc=$?
if [ $rc -eq 1 ] && grep -q '^  ok    backend     auto picks cuda: Mock GPU .*(sm_990, ' "$tmp/out5" &&
	grep -q "^  note  arch        NVRTC [0-9.]* cannot compile for this GPU's sm_990 .*device code is PTX for compute_[0-9]*, JIT-compiled" "$tmp/out5" &&
	grep -q "^  FAIL  evaluation  a built-in correct pass came out rejected: variant 'f32': .*still holds the poison" "$tmp/out5"; then
	ok "mock GPU newer than NVRTC: a note names the PTX target; the evaluation reaches the comparison"
else
	bad "mock GPU newer than NVRTC: exit $rc: $(cat "$tmp/out5")"
fi
finish
