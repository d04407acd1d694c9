/* fuzz_stubs.c - libFuzzer target for the two source rewrites of
 * gpu/hostcc.c built on the masker: hostcc_device_stubs (the cuda backend's
 * host compile: kernels and __device__ functions lose their bodies, asm
 * statements become (void)0) and hostcc_rewrite_shared (every
 * `extern __shared__ T name[];` rewritten).  For any text each must give a
 * NUL-terminated result of the length it reports, never crash or read
 * past the end; and the shared rewrite must keep line numbers: counting the
 * output's lines the way the compiler does (a `#line N` line makes the next
 * line N; a file-scope declaration becomes a #define on one line followed by
 * such a `#line`), the end of the output is the end of the source's last
 * line.  Sources that hold "line" themselves are not checked for that.
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

/* The line number the compiler gives the end of s[0..n), `#line N` lines
 * honoured (only those the rewrite writes: "#line N " at a line start). */
static size_t end_line(const char *s, size_t n)
{
	size_t line = 1;
	for (size_t i = 0; i < n;) {
		size_t e = i;
		while (e < n && s[e] != '\n')
			e++;
		if (e - i > 6 && memcmp(s + i, "#line ", 6) == 0 && e < n)
			line = strtoul(s + i + 6, NULL, 10);
		else if (e < n)
			line++;
		i = e + 1;
	}
	return line;
}

static int has_line(const char *s, size_t n)
{
	for (size_t i = 0; i + 4 <= n; i++)
		if (memcmp(s + i, "line", 4) == 0)
			return 1;
	return 0;
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
		if (n == (size_t)-1 || out[n] != '\0')
			abort();
		if (!has_line(src, size) && end_line(out, n) != nl + 1)
			abort();
		free(out);
	}
	free(src);
	return 0;
}
