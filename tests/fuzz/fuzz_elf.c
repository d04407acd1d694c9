/* fuzz_elf.c - libFuzzer target for the ELF policy of gpu/elfcheck.c
 * (elfcheck_buffer), which reads an object the author's source produced
 * before anything loads it: for any bytes it must accept, refuse or call
 * the image unreadable, with a message unless it accepts; never crash or
 * read outside the image (offsets, counts and string indexes in the file
 * are all untrusted).
 *
 *   CC=clang cmake -B build-fuzz -DPASSFS_FUZZ=ON -DPASSFS_WERROR=OFF
 *   cmake --build build-fuzz --target fuzz_elf
 *   ./build-fuzz/fuzz_elf -max_total_time=120 tests/fuzz/corpus_elf
 *
 * The corpus holds small shared objects built as hostcc.c builds a pass
 * (-shared -nostdlib), one accepted and one refused. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "elfcheck.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	/* an exact-size, malloc-aligned copy, so reading past the end is caught */
	void *img = malloc(size ? size : 1);
	if (img == NULL)
		return 0;
	memcpy(img, data, size);
	char msg[256];
	memset(msg, 0x5a, sizeof(msg));
	enum elfcheck_result r = elfcheck_buffer(img, size, "pass.c", msg, sizeof(msg));
	if (r == ELFCHECK_REFUSED || r == ELFCHECK_ERROR) {
		if (memchr(msg, 0, sizeof(msg)) == NULL || msg[0] == '\0')
			abort();
	} else if (r != ELFCHECK_OK) {
		abort();
	}
	free(img);
	return 0;
}
