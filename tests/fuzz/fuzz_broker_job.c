/* fuzz_broker_job.c - libFuzzer target for the broker's job decoder
 * (engine/broker/broker.c, what a worker reads from the stream, which anyone
 * who can write to Redis controls): any bytes give either a job that
 * encodes back to the same bytes, or an error message; never a crash, leak
 * or hang.
 *
 *   CC=clang cmake -B build-fuzz -DPASSFS_FUZZ=ON -DPASSFS_WERROR=OFF
 *   cmake --build build-fuzz --target fuzz_broker_job
 *   ./build-fuzz/fuzz_broker_job -max_total_time=300 tests/fuzz/corpus_broker_job
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "broker.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct eval_job job;
	char *labels = NULL, err[256] = "";
	if (broker_job_decode(data, size, &job, &labels, err, sizeof err) == 0) {
		unsigned char *buf = NULL;
		size_t len = 0;
		/* what decodes, encodes back to itself (the labels and the
		 * backend are taken whole, no field is reinterpreted) */
		if (broker_job_encode(&job, &buf, &len) != 0 || len != size || memcmp(buf, data, size) != 0)
			abort();
		free(buf);
		free(labels);
	} else if (memchr(err, 0, sizeof err) == NULL || err[0] == 0) {
		abort();        /* every refusal names its reason */
	}
	return 0;
}
