/* fuzz_graph.c - libFuzzer target for the graph.json loader: any bytes must
 * give either a task or an error message, never a crash, leak or hang.
 *
 *   CC=clang cmake -B build-fuzz -DPASSFS_FUZZ=ON -DPASSFS_WERROR=OFF
 *   cmake --build build-fuzz --target fuzz_graph
 *   ./build-fuzz/fuzz_graph -max_total_time=300 -dict=tests/fuzz/graph.dict tests/fuzz/corpus_graph
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "graph.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct graph_task *t = NULL;
	char err[GRAPH_ERR_LEN];
	if (graph_load_buffer("fuzz.json", (const char *)data, size, &t, err, sizeof(err)) == 0) {
		char *buf = NULL;
		size_t len = 0;
		for (int i = 0; i < t->n_variants; i++)
			graph_render_variant(&t->variants[i], &buf, &len, "  ");
		free(buf);
		free(graph_op_sequence(t));
		graph_task_free(t);
	} else if (memchr(err, 0, sizeof(err)) == NULL || err[0] == 0) {
		abort();        /* every failure must leave a message */
	}
	return 0;
}
