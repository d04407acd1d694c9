#!/usr/bin/env bash
# tests/gpu/prepare.sh - builds, on a development machine, the binaries the
# device check needs, for a GPU machine that may lack passfs's build
# dependencies (jansson, libfuse3, pkg-config) and cannot install them:
#
#   bash tests/gpu/prepare.sh          # writes build-prebuilt/ (git-ignored)
#
# Release build with jansson, libfuse3 and hiredis linked statically
# (-DPASSFS_STATIC_DEPS=ON), then passfs and the GPU unit tests are copied
# into build-prebuilt/ with a marker file.  tests/gpu/check.sh uses that
# directory instead of building when it finds the marker, and points the
# binaries at this checkout's headers, op library and tasks (the paths compiled
# into them are this machine's).  Carry it to the GPU machine with the
# working tree (the device runner's `carry: ["build-prebuilt"]`).  Needs the
# CUDA headers here (/usr/local/cuda) so the cuda backend's tests are built.
# PREPARE_BUILD_DIR (build-gpu-static) and PREBUILT_DIR (build-prebuilt) move
# the build and the result (tests/gpu/rehearse.sh builds in a directory of
# its own).
set -euo pipefail
cd "$(dirname "$0")/../.."
B=${PREPARE_BUILD_DIR:-build-gpu-static}
OUTD=${PREBUILT_DIR:-build-prebuilt}
cmake -S . -B "$B" -DCMAKE_BUILD_TYPE=Release -DPASSFS_STATIC_DEPS=ON -DPASSFS_WERROR=OFF >/dev/null
cmake --build "$B" -j "$(nproc)" --target passfs test_cuda_device test_cuda_abi test_cuda_backend test_cuda_pack \
	test_sandbox test_cpu_backend >/dev/null
rm -rf "$OUTD"
mkdir -p "$OUTD"
for f in passfs test_cuda_device test_cuda_abi test_cuda_backend test_cuda_pack test_sandbox test_cpu_backend; do
	cp "$B/$f" "$OUTD/"
	strip "$OUTD/$f" 2>/dev/null || true
done
{
	echo "built $(date -u +%FT%TZ) on $(uname -srm) from $(git rev-parse --short HEAD 2>/dev/null || echo '?')"
	echo "libraries needed at run time:"
	ldd "$OUTD/passfs" | sed 's/^/  /'
} >"$OUTD/.prebuilt"
cat "$OUTD/.prebuilt"
# The GPU machine has none of passfs's packages: anything beyond libc, libm,
# libdl, libpthread, the vDSO and the loader would stop passfs from starting.
extra=$(ldd "$OUTD/passfs" | awk '{print $1}' |
	grep -Ev '^(linux-vdso\.so\.1|lib(c|m|dl|pthread|rt)\.so\.[0-9]+|/lib64/ld-linux-x86-64\.so\.2)$' || true)
if [ -n "$extra" ]; then
	echo "prepare.sh: $OUTD/passfs needs libraries a GPU machine may lack: $(echo $extra)" >&2
	exit 1
fi
echo "$(du -sh "$OUTD" | cut -f1) in $OUTD/"
