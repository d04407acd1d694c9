/* test_ops_table.c - the op table (engine/graph/graph_ops.c) as the hub of
 * the layers: every op has a row (name, attributes, shape inference) and an
 * eager lowering (engine/eval/eager/eager.c), names parse back to their op,
 * and every call of the importer (engine/import/import.c) names an op of the
 * table.  Unknown and missing names are errors, not crashes.  The PyTorch
 * oracle's side is tests/oracle/test_ops_torch.py. */
#include <stdio.h>
#include <string.h>

#include "eager.h"
#include "graph.h"
#include "import.h"

#include "check.h"

static void test_every_op(void)
{
	for (int i = 0; i < OP_COUNT; i++) {
		enum graph_op op = (enum graph_op)i;
		const char *name = graph_op_name(op);
		char msg[96];
		snprintf(msg, sizeof(msg), "op %d (%s)", i, name ? name : "no row in graph_ops.c's ops[]");
		CHECK_MSG(name != NULL, msg);
		CHECK_MSG(graph_op_infers(op), msg);
		CHECK_MSG(eager_op_lowered(op), msg);
		if (name == NULL)
			continue;
		CHECK_MSG(graph_op_parse(name) == op, msg);
		for (int k = 0; k < i; k++)
			CHECK_MSG(graph_op_name((enum graph_op)k) == NULL ||
					  strcmp(graph_op_name((enum graph_op)k), name) != 0, msg);
	}
}

static void test_unknown(void)
{
	CHECK(graph_op_parse(NULL) == OP_INVALID);
	CHECK(graph_op_parse("") == OP_INVALID);
	CHECK(graph_op_parse("no_such_op") == OP_INVALID);
	CHECK(graph_op_name(OP_INVALID) == NULL);
	CHECK(graph_op_name(OP_COUNT) == NULL);
	CHECK(!graph_op_infers(OP_COUNT));
	CHECK(!eager_op_lowered(OP_INVALID));
	CHECK(!eager_op_lowered(OP_COUNT));
}

static void test_import_calls(void)
{
	int n = 0, used[OP_COUNT] = {0};
	enum graph_op op;
	for (const char *call; (call = import_call(n, &op)) != NULL; n++) {
		int ok = op >= 0 && op < OP_COUNT && graph_op_name(op) != NULL;
		CHECK_MSG(ok, call);
		if (ok)
			used[op] = 1;
	}
	CHECK(n > 50);
	CHECK(used[OP_LINEAR] && used[OP_ADD] && used[OP_MATMUL]);
}

int main(void)
{
	test_every_op();
	test_unknown();
	test_import_calls();
	printf("%d passed, %d failed\n", n_pass, n_fail);
	return n_fail != 0;
}
