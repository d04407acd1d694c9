/* fuzz_pass_scan.c - libFuzzer target for pass_scan (engine/eval/pass.c), the
 * source checks every pass.c goes through before any compiler runs: for any
 * text, with and without device-only constructs allowed, it must accept
 * (with kernel name expressions that are non-empty strings on lines of the
 * file) or refuse with a verdict and a one-sentence message; never crash,
 * leak or read past the end.
 *
 *   CC=clang cmake -B build-fuzz -DPASSFS_FUZZ=ON -DPASSFS_WERROR=OFF
 *   cmake --build build-fuzz --target fuzz_pass_scan
 *   ./build-fuzz/fuzz_pass_scan -max_total_time=120 tests/fuzz/corpus_pass_scan */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "pass.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	/* an exact-size copy, so reading past the end is caught */
	char *src = malloc(size ? size : 1);
	if (src == NULL)
		return 0;
	memcpy(src, data, size);
	size_t nl = 1;
	for (size_t i = 0; i < size; i++)
		nl += src[i] == '\n';

	for (int dev = 0; dev < 2; dev++) {
		struct pass_names names;
		memset(&names, 0, sizeof(names));
		struct pass_diag diag;
		memset(&diag, 0x5a, sizeof(diag));
		int rc = pass_scan("pass.c", src, size, dev, &names, &diag);
		if (rc == 0) {
			if (names.n < 0)
				abort();
			for (int i = 0; i < names.n; i++)
				if (names.expr[i] == NULL || names.expr[i][0] == '\0' ||
				    names.line[i] < 1 || (size_t)names.line[i] > nl)
					abort();
		} else if (rc == -1) {
			if (diag.verdict == PASS_OK ||
			    memchr(diag.message, 0, sizeof(diag.message)) == NULL || diag.message[0] == '\0')
				abort();
		} else {
			abort();
		}
		pass_names_free(&names);
	}
	free(src);
	return 0;
}
