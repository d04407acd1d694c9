#!/usr/bin/env bash
# NVRTC beside PyTorch's wheels, reached through a symbolic link (a venv
# whose path is a link, as on GPU machines), with no toolkit: pass compiles
# run in the compile jail, which shows NVRTC's real directory, and NVRTC
# loads its builtins (libnvrtc-builtins.so.X.Y) at each compile by the path
# it was loaded from.  That failed every compile with
# NVRTC_ERROR_BUILTIN_OPERATION_FAILURE (first seen on an H200); passfs now
# loads the builtins itself where it loads NVRTC (gpu/nvrtc.c,
# keep_builtins), so the jailed compile finds them.  In a mount namespace
# where /usr/local/cuda/lib64 is empty, NVRTC named by PASSFS_NVRTC and found
# on LD_LIBRARY_PATH.  Skipped without NVRTC or unshare.
source "$(dirname "$0")/../lib/cli.sh"
lib=$(ls /usr/local/cuda/lib64/libnvrtc.so.[0-9]* 2>/dev/null | head -1)
bi=$(ls /usr/local/cuda/lib64/libnvrtc-builtins.so.[0-9]*.[0-9]* 2>/dev/null | head -1)
if [ -z "$lib" ] || [ -z "$bi" ]; then echo "skip: no NVRTC in /usr/local/cuda/lib64"; exit 0; fi
if ! unshare -m --propagation private true 2>/dev/null; then echo "skip: no mount namespace here"; exit 0; fi
real=$tmp/real/lib/python3.12/site-packages/nvidia/cu13/lib
mkdir -p "$real"
cp -l "$lib" "$bi" "$real/" 2>/dev/null || cp "$lib" "$bi" "$real/"
ln -s "$tmp/real" "$tmp/venv"
W=$tmp/venv/lib/python3.12/site-packages/nvidia/cu13/lib
for how in PASSFS_NVRTC=$W/${lib##*/} LD_LIBRARY_PATH=$W; do
	unshare -m --propagation private sh -c 'mount -t tmpfs tmpfs /usr/local/cuda/lib64 && exec "$@"' hide \
		env "$how" "$PASSFS" eval --tasks tests/passes/tasks --task tiny_bias_gelu --backend cpu \
		--pass tests/passes/ok_fused.c --trials 1 --json >"$tmp/r.json" 2>"$tmp/err"
	rc=$?
	if [ $rc -eq 0 ] && /usr/bin/python3 -c 'import json,sys; r=json.load(open(sys.argv[1])); sys.exit(0 if r["verdict"] == "ok" and r["compile"]["jail"] == "namespaces" else 1)' "$tmp/r.json"; then
		ok "${how%%=*}: the pass compiles in the namespace jail, verdict ok"
	else
		bad "${how%%=*}: rc $rc: $(tail -n 2 "$tmp/err") $(head -c 300 "$tmp/r.json")"
	fi
done
finish
