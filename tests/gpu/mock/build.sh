# tests/gpu/mock/build.sh - sourced by the mock-driver tests (tests/cli/cuda_*.sh)
# from the repository root with $tmp set: exits 0 with "skip: ..." when the
# cuda backend cannot be exercised here (no C compiler for the mocks, no
# NVRTC), else builds the mock driver (which is also the mock CUPTI), the mock
# cuBLAS and the mock cuDNN into $tmp.
if ! command -v cc >/dev/null 2>&1; then
	echo "skip: no C compiler for the mock driver"
	exit 0
fi
if ! ls /usr/local/cuda/lib64/libnvrtc.so* >/dev/null 2>&1 && [ -z "${PASSFS_NVRTC:-}" ] &&
	! ldconfig -p 2>/dev/null | grep -q libnvrtc; then
	echo "skip: no NVRTC (the cuda backend compiles with it)"
	exit 0
fi
cc -O1 -shared -fPIC -o "$tmp/libcuda_mock.so" tests/gpu/mock/libcuda_mock.c || exit 1
cc -O1 -shared -fPIC -o "$tmp/libcublas_mock.so" tests/gpu/mock/libcublas_mock.c -lm || exit 1
cc -O1 -shared -fPIC -o "$tmp/libcudnn_mock.so" tests/gpu/mock/libcudnn_mock.c -lm || exit 1
