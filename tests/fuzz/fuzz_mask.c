/* fuzz_mask.c - libFuzzer target for hostcc_mask, the masker every source
 * scan reads through: for any text it must keep the length and every
 * newline where it was, change bytes only into blanks and end with a NUL;
 * never crash or read past the end.  (Masking the output again is not the
 * identity: a splice blanked inside a literal no longer continues it.)  Agreement with g++'s lexer is tests/unit/test_lexer.c's business
 * (one g++ run per case is too slow for a fuzzer).
 *
 *   CC=clang cmake -B build-fuzz -DPASSFS_FUZZ=ON -DPASSFS_WERROR=OFF
 *   cmake --build build-fuzz --target fuzz_mask
 *   ./build-fuzz/fuzz_mask -max_total_time=120 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "hostcc.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	/* an exact-size copy, so reading past the end is caught */
	char *src = malloc(size ? size : 1);
	if (src == NULL)
		return 0;
	memcpy(src, data, size);
	char *m = hostcc_mask(src, size);
	if (m == NULL) {
		free(src);
		return 0;
	}
	if (m[size] != '\0')
		abort();
	for (size_t i = 0; i < size; i++) {
		if ((src[i] == '\n') != (m[i] == '\n'))
			abort();
		if (m[i] != src[i] && m[i] != ' ')
			abort();
	}
	free(m);
	free(src);
	return 0;
}
