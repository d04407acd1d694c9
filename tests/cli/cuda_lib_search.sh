#!/usr/bin/env bash
# Where passfs looks for CUPTI: a toolkit without its development files has
# only the versioned library (libcupti.so.13, not libcupti.so), and it must
# still be found there.  In a private mount namespace a tmpfs hides
# /usr/local (the toolkit, and the loader cache's entries into it) and holds
# only /usr/local/cuda/extras/CUPTI/lib64/libcupti.so.13 - the mock driver,
# which is also a mock CUPTI; `passfs doctor` must report it loaded.
# Skipped without cc, NVRTC (the mock's build wants it), unshare or the
# namespace.
. tests/lib/cli.sh

. tests/gpu/mock/build.sh
case $(readlink -f "$PASSFS") in
/usr/local/*)
	echo "skip: $PASSFS is under /usr/local, which the test hides"
	exit 0
	;;
esac
if ! command -v unshare >/dev/null 2>&1 || ! unshare -rm true 2>/dev/null; then
	echo "skip: no private mount namespace (unshare -rm)"
	exit 0
fi

# cupti_found DIR FILE: doctor's cupti line with only DIR/FILE under
# /usr/local; no other place to find it (no wheels, no library dirs)
cupti_found() {
	env -u PASSFS_CUPTI_LIB -u PASSFS_CUPTI -u PASSFS_CUDA_LIBDIRS -u VIRTUAL_ENV -u CONDA_PREFIX -u LD_LIBRARY_PATH \
		HOME="$tmp" PASSFS_CACHE_DIR=off PASSFS_LOCK_DIR="$tmp" \
		unshare -rm sh -c 'mount -t tmpfs none /usr/local && mkdir -p "/usr/local/$1" &&
			cp "$2" "/usr/local/$1/$3" && exec "$4" doctor' sh "$1" "$tmp/libcuda_mock.so" "$2" \
		"$(readlink -f "$PASSFS")" 2>&1 | grep '^  [a-zA-Z]* *cupti '
}

for dir in cuda/extras/CUPTI/lib64 cuda/lib64 cuda/targets/x86_64-linux/lib; do
	for f in libcupti.so.13 libcupti.so.12; do
		line=$(cupti_found "$dir" "$f")
		case $line in
		*'ok    cupti       loads'*) ok "CUPTI found as /usr/local/$dir/$f" ;;
		*) bad "/usr/local/$dir/$f: ${line:-no cupti line}" ;;
		esac
	done
done
finish
