/* cmd_ops.c - `passfs ops`: the graph ops this build knows, one name a line,
 * in the order of the op table (engine/graph/graph_ops.c).  The PyTorch
 * oracle's coverage test (tests/oracle/test_ops_torch.py) reads it. */
#include <stdio.h>
#include <string.h>

#include "cmd.h"
#include "graph.h"

int cmd_ops(int argc, char **argv)
{
	if (argc >= 2 && (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0)) {
		printf("usage: passfs ops\n\n"
		       "Prints the graph ops this passfs knows (graph.json's \"op\" names), one a\n"
		       "line, in the op table's order.  docs/graph-format.md describes each.\n");
		return 0;
	}
	if (argc > 1) {
		fprintf(stderr, "passfs ops: takes no arguments (try 'passfs ops --help')\n");
		return 2;
	}
	for (int i = 0; i < OP_COUNT; i++) {
		const char *name = graph_op_name((enum graph_op)i);
		if (name)
			printf("%s\n", name);
	}
	return fflush(stdout) == 0 ? 0 : 1;
}
