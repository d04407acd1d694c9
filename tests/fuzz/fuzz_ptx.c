/* fuzz_ptx.c - libFuzzer target for the device-code scan of
 * engine/eval/guard/integrity.c (integrity_scan_ptx): for any text it must
 * say clean (0), refused (1, with a message and a line that is 0 or
 * positive) or out of memory (-1, with a message); never crash, leak or
 * read past the terminating NUL.
 *
 *   CC=clang cmake -B build-fuzz -DPASSFS_FUZZ=ON -DPASSFS_WERROR=OFF
 *   cmake --build build-fuzz --target fuzz_ptx
 *   ./build-fuzz/fuzz_ptx -max_total_time=120 tests/fuzz/corpus_ptx */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "integrity.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	/* an exact-size copy plus its NUL, so reading past the end is caught */
	char *ptx = malloc(size + 1);
	if (ptx == NULL)
		return 0;
	memcpy(ptx, data, size);
	ptx[size] = '\0';
	char msg[256];
	memset(msg, 0x5a, sizeof(msg));
	int line = -7;
	int rc = integrity_scan_ptx(ptx, "pass.c", msg, sizeof(msg), &line, NULL);
	if (rc == 1) {
		if (memchr(msg, 0, sizeof(msg)) == NULL || msg[0] == '\0' || line < 0)
			abort();
	} else if (rc == -1) {
		if (memchr(msg, 0, sizeof(msg)) == NULL || msg[0] == '\0')
			abort();
	} else if (rc != 0) {
		abort();
	}
	free(ptx);
	return 0;
}
