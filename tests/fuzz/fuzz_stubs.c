/* fuzz_stubs.c - libFuzzer target for the two source rewrites of
 * gpu/hostcc.c built on the masker: hostcc_device_stubs (the cuda backend's
 * host compile: kernels and __device__ functions lose their bodies, asm
 * statements become (void)0) and hostcc_rewrite_shared (every
 * `extern __shared__ T name[];` rewritten).  For any text each must give a
 * NUL-terminated result of the length it reports (the shared rewrite: with
 * at least the source's lines, it only adds the `#line` after a file-scope
 * #define), never crash or read past the end.
 * Whether the output compiles is tests/unit/test_pass.c's business.
 *
 *   CC=clang cmake -B build-fuzz -DPASSFS_FUZZ=ON -DPASSFS_WERROR=OFF
 *   cmake --build build-fuzz --target fuzz_stubs
 *   ./build-fuzz/fuzz_stubs -max_total_time=120 tests/fuzz/corpus_stubs */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "hostcc.h"

static size_t lines(const char *s, size_t n)
{
	size_t k = 0;
	for (size_t i = 0; i < n; i++)
		k += s[i] == '\n';
	return k;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	/* an exact-size copy, so reading past the end is caught */
	char *src = malloc(size ? size : 1);
	if (src == NULL)
		return 0;
	memcpy(src, data, size);
	size_t nl = lines(src, size);

	size_t n = (size_t)-1;
	char *out = hostcc_device_stubs(src, size, &n);
	if (out != NULL) {
		if (n == (size_t)-1 || out[n] != '\0')
			abort();
		free(out);
	}

	n = (size_t)-1;
	out = hostcc_rewrite_shared("pass.c", src, size, &n);
	if (out != NULL) {
		if (n == (size_t)-1 || out[n] != '\0' || lines(out, n) < nl)
			abort();
		free(out);
	}
	free(src);
	return 0;
}
