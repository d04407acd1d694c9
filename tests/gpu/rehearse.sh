#!/usr/bin/env bash
# tests/gpu/rehearse.sh - the device check (tests/gpu/check.sh) rehearsed
# here, without a GPU, as a GPU machine that has only the driver and
# PyTorch's wheels would run it:
#
#   - the binaries carried there: tests/gpu/prepare.sh's static build, in a
#     directory of this test's own;
#   - the mock driver (tests/gpu/mock/libcuda_mock.c, which is also the mock
#     CUPTI) named by PASSFS_LIBCUDA, and a fake `nvidia-smi` (as libcuda.so.1
#     on the library path the mock would also be NVRTC's, which calls into
#     what a mock does not have; passfs then loads cuBLAS and cuDNN only when
#     named, PASSFS_CUBLAS and PASSFS_CUDNN point into the wheel tree: the
#     search of the wheels for them is tests/unit/test_wheels.c's);
#   - a fake site-packages tree laid out as PyTorch's CUDA wheels are
#     (nvidia/cu13/lib: NVRTC - this machine's, hard-linked -, the mock cuBLAS
#     and the mock CUPTI; nvidia/cu13/include: the CUDA headers, hard-linked;
#     nvidia/cudnn/lib: the mock cuDNN), found through the python check.sh
#     runs (`import nvidia`: a namespace package);
#   - a clean environment (env -i) in a mount namespace where /usr/local/cuda
#     is an empty directory: nothing of the CUDA toolkit is there to be found
#     (hiredis stays: Debian's torch links it; prepare.sh refuses a binary
#     that needs it).
#
# check.sh's steps fail against the mock (it runs no kernel: every output
# keeps its poison); what is checked is that the script works: the carried
# binary starts, every step runs (none skipped), the driver, NVRTC, CUPTI,
# cuBLAS and cuDNN are found where the wheels put them, the anchor's table
# and the latency rows are printed and written, and at most 8 files land in
# $OUT (what the device runner returns).  Skipped without cc, NVRTC or
# unshare.
source "$(dirname "$0")/../lib/cli.sh"
. tests/gpu/mock/build.sh
if ! unshare -m --propagation private true 2>/dev/null; then
	echo "skip: no mount namespace here (unshare -m needs root)"
	exit 0
fi
nvrtc=$(ls /usr/local/cuda/lib64/libnvrtc.so.[0-9]* 2>/dev/null | head -1)
if [ -z "$nvrtc" ]; then
	echo "skip: no NVRTC in /usr/local/cuda/lib64 to lay out as a wheel"
	exit 0
fi

# 1. the carried binaries
if PREPARE_BUILD_DIR=$tmp/build-static PREBUILT_DIR=$tmp/prebuilt bash tests/gpu/prepare.sh >"$tmp/prepare.log" 2>&1
then
	ok "prepare.sh: a prebuilt set with no shared library beyond libc's"
else
	bad "prepare.sh: $(tail -n 5 "$tmp/prepare.log")"
	finish
fi

# 2. the wheel tree, the driver, nvidia-smi
# the site reached through a link, as a venv often is: NVRTC's builtins were
# then out of the compile jail's view (tests/cli/nvrtc_jail.sh)
mkdir -p "$tmp/py-real"
ln -s "$tmp/py-real" "$tmp/py"
site=$tmp/py/lib/python3/site-packages
cu=$site/nvidia/cu13/lib
dnn=$site/nvidia/cudnn/lib
mkdir -p "$cu" "$dnn" "$tmp/bin" "$tmp/driver" "$tmp/home" "$tmp/out"
link() { cp -l "$1" "$2" 2>/dev/null || cp "$1" "$2"; }
link "$nvrtc" "$cu/libnvrtc.so.${nvrtc##*.so.}"
for b in /usr/local/cuda/lib64/libnvrtc-builtins.so.[0-9]*; do
	[ -e "$b" ] && link "$b" "$cu/${b##*/}"
done
cp "$tmp/libcublas_mock.so" "$cu/libcublas.so.13"
cp "$tmp/libcuda_mock.so" "$cu/libcupti.so.13"
cp "$tmp/libcudnn_mock.so" "$dnn/libcudnn.so.9"
mkdir -p "$site/nvidia/cu13/include"
cp -r -l -L /usr/local/cuda/include/. "$site/nvidia/cu13/include/" 2>/dev/null ||
	cp -r -L /usr/local/cuda/include/. "$site/nvidia/cu13/include/"
cp "$tmp/libcuda_mock.so" "$tmp/driver/libcuda.so.1"
cat >"$tmp/bin/nvidia-smi" <<'EOF'
#!/bin/sh
# a stand-in for the driver's tool: what check.sh asks of it
case "$*" in
*--query-gpu*) echo "Mock GPU, 000.00, 143771 MiB, 1980 MHz" ;;
*) echo "Persistence Mode : Enabled"; echo "Compute Mode : Default" ;;
esac
EOF
chmod +x "$tmp/bin/nvidia-smi"

# 3. the run: a clean environment in a namespace without the toolkit or hiredis
hide='mount -t tmpfs tmpfs /usr/local/cuda/ && exec "$@"'
start=$(date +%s)
unshare -m --propagation private sh -c "$hide" hide env -i \
	PATH="$tmp/bin:/usr/bin:/bin" HOME="$tmp/home" TMPDIR="$tmp" LANG=C.UTF-8 \
	PYTHONPATH="$site" PYTHON=/usr/bin/python3 \
	PASSFS_LIBCUDA="$tmp/driver/libcuda.so.1" MOCK_CUDA_LOG="$tmp/mock.log" \
	PASSFS_CUBLAS="$cu/libcublas.so.13" PASSFS_CUDNN="$dnn/libcudnn.so.9" \
	PREBUILT_DIR="$tmp/prebuilt" OUT="$tmp/out" \
	CHECK_BUDGET_S="${REHEARSE_BUDGET_S:-260}" CHECK_STEP_MAX_S="${REHEARSE_STEP_MAX_S:-40}" \
	ANCHOR_TASKS=tests/passes/tasks/tiny_bias_gelu,tests/eager/tasks/reduce_split_sum ANCHOR_TRIALS=3 \
	CHEATS_ONLY='^(c01|c06a)_' \
	bash tests/gpu/check.sh >"$tmp/check.out" 2>&1
rc=$?
took=$(($(date +%s) - start))
# REHEARSE_KEEP=DIR keeps what came back and the script's output there
if [ -n "${REHEARSE_KEEP:-}" ]; then
	mkdir -p "$REHEARSE_KEEP" && cp -r "$tmp/out" "$tmp/check.out" "$REHEARSE_KEEP/"
fi
sum=$tmp/out/gpu-check.txt
if [ -s "$sum" ]; then ok "check.sh ran in ${took}s (exit $rc: the mock runs no kernel) and wrote gpu-check.txt"
else bad "no gpu-check.txt: $(tail -n 20 "$tmp/check.out")"; finish; fi

# every step ran, none was skipped, the carried binary started
steps="env build device anchor latency calibration speed sandbox modload gpu-passes verdicts cheats truth"
missing= skipped=
for s in $steps; do
	line=$(grep -E "^$s +(ok|FAILED|skipped) " "$sum" | head -1)
	[ -n "$line" ] || missing="$missing $s"
	case $line in *skipped*) skipped="$skipped $s" ;; esac
done
if [ -z "$missing" ] && [ -z "$skipped" ]; then ok "all 13 steps ran, in the summary's table"
else bad "steps missing:${missing:-none}; skipped:${skipped:-none}: $(sed -n '1,20p' "$sum")"; fi
if grep -qE '^build +ok ' "$sum" && grep -q 'using the binaries carried' "$tmp/check.out"; then
	ok "the carried binary starts without the CUDA toolkit"
else bad "build step: $(grep -E '^build ' "$sum")"; fi
if grep -qE '^env +ok ' "$sum"; then ok "env step ok (the fake nvidia-smi, the python)"; else bad "env: $(grep -E '^env ' "$sum")"; fi

# what the steps found, from their logs
mkdir -p "$tmp/logs"
tar -xzf "$tmp/out/logs.tar.gz" -C "$tmp/logs" 2>/dev/null
dl=$(ls "$tmp/logs"/*-device.log 2>/dev/null | head -1)
if [ -n "$dl" ] && grep -q 'auto picks cuda: Mock GPU' "$dl" && grep -q "nvrtc .*CUDA headers $site/nvidia/cu13/" "$dl" &&
	grep -qE '^ +ok +cublas ' "$dl" && grep -qE '^ +ok +cudnn ' "$dl" && grep -qE '^ +ok +cupti ' "$dl"; then
	ok "doctor: the mock driver picked; NVRTC, the CUDA headers and CUPTI found in the wheel tree, cuBLAS and cuDNN load"
else
	bad "doctor in the rehearsal: $(grep -E 'backend|nvrtc|cublas|cudnn|cupti' "${dl:-/dev/null}" | head -8)"
fi
if grep -q "PASSFS_CUDA_LIBDIRS): $cu" "$tmp/logs"/*-env.log 2>/dev/null; then ok "check.sh handed the wheel directories to passfs"
else bad "wheel dirs: $(grep -h 'nvidia wheels' "$tmp/logs"/*-env.log 2>/dev/null)"; fi

# the anchor's table: a row per variant of both tasks, in the summary and the JSON
out=
n=$(/usr/bin/python3 -c '
import json, sys
n = 0
for t in ("tests/passes/tasks/tiny_bias_gelu", "tests/eager/tasks/reduce_split_sum"):
    n += len(json.load(open(t + "/graph.json"))["variants"])
print(n)')
if grep -q 'passfs_ms .*torch_ms .*induct_ms' "$sum" && out=$(/usr/bin/python3 - "$tmp/out/anchor.json" "$n" 2>&1 <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
rows = d["rows"]
assert len(rows) == int(sys.argv[2]), (len(rows), sys.argv[2])
assert d["passfs_backend"] == "cuda" and d["device"] == "cpu", (d["passfs_backend"], d["device"])
assert all(r["passfs_ms"] is not None and r["torch_ms"] is not None for r in rows), rows[0]
print("%d rows, first passfs %.4f ms" % (len(rows), rows[0]["passfs_ms"]))
PY
); then ok "the anchor's table in gpu-check.txt and anchor.json: $out"
else bad "anchor: $out $(grep -A3 'anchor' "$sum" | head -5)"; fi

# latency: a row per write on the watch tree (and the mount, or why not)
if grep -qE '^watch +cold +[0-9.]+ ' "$sum" && grep -qE '^watch +warm +[0-9.]+ ' "$sum" && grep -qE '^mount ' "$sum"; then
	ok "latency rows: $(grep -E '^(watch|mount) ' "$sum" | awk '{print $1 "/" $2 " " $3 "s"}' | tr '\n' ' ')"
else bad "latency: $(grep -A6 '^latency' "$sum")"; fi
if grep -q '^calibration (' "$sum"; then ok "calibration rows in gpu-check.txt"; else bad "no calibration rows"; fi

# what comes back
files=$(find "$tmp/out" -type f | wc -l)
if [ "$files" -le 8 ] && [ -s "$tmp/out/logs.tar.gz" ] && [ -s "$tmp/out/anchor.json" ]; then
	ok "$files files in \$OUT (at most 8): $(cd "$tmp/out" && find . -type f | sed 's|^\./||' | sort | tr '\n' ' ')"
else bad "$files files in \$OUT: $(cd "$tmp/out" && find . -type f | head -12 | tr '\n' ' ')"; fi
nlogs=$(ls "$tmp/logs"/[0-9]*-*.log 2>/dev/null | wc -l)
if [ "$nlogs" -eq 13 ]; then ok "logs.tar.gz holds the 13 steps' logs"; else bad "logs.tar.gz holds $nlogs step logs"; fi
if [ "$took" -le $((${REHEARSE_BUDGET_S:-260} + 30)) ]; then ok "within the budget (${took}s)"
else bad "took ${took}s, budget ${REHEARSE_BUDGET_S:-260}s"; fi
finish
