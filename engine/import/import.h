/* import.h - convert GraphNet/PassNet samples (model.py + weight_meta.py) into
 * a passfs task (graph.json, docs/graph-format.md).
 *
 * A sample is the generated Python of one fusible subgraph:
 *
 *     class GraphModule(torch.nn.Module):
 *         def forward(self, in_0, w_0):
 *             tmp_0 = torch.nn.functional.linear(in_0, w_0, None)
 *             return (tmp_0,)
 *
 * and a weight_meta.py with one class per forward argument (name, shape,
 * dtype, mean/std, min_val/max_val, data).  The importer reads both with a
 * small tokenizer and recursive-descent evaluator for the Python subset that
 * GraphNet generates (no Python at run time), maps every PyTorch call to a
 * graph op with PyTorch's own signature and defaults, and builds one variant
 * per sample.  docs/importer.md lists the syntax, the mapping and the errors.
 *
 * Everything here works on texts in memory, so it can be fuzzed; reading the
 * files is the caller's job (fs/cmd_import.c).
 */
#ifndef PASSFS_IMPORT_H
#define PASSFS_IMPORT_H

#include <stddef.h>
#include <jansson.h>

#include "graph.h"

#define IMPORT_ERR_LEN 1024

/* One sample, i.e. one variant of the task.  Texts need not be
 * NUL-terminated; nothing is kept after import_build() returns. */
struct import_sample {
	const char *name;        /* the sample's name (its dir basename): source,
				  * summary and messages; required */
	const char *model_label; /* prefixes messages about model.py, e.g.
				  * "samples/h14_albert/model.py"; required */
	const char *model;
	size_t model_len;
	const char *meta_label;  /* same for weight_meta.py */
	const char *meta;        /* NULL: the sample has no weight_meta.py (an
				  * error that says so) */
	size_t meta_len;
	const char *variant;     /* variant name, or NULL to derive one from the
				  * dtype: "float32_0", "float16_1", ... */
};

/* Called once per warning (an unused forward argument or node that was
 * dropped); msg is one line without a newline, valid during the call. */
typedef void (*import_warn_fn)(void *ctx, const char *msg);

struct import_options {
	const char *id;          /* task id; required */
	const char *source;      /* graph.json "source"; NULL: the sample names
				  * joined with ", " */
	import_warn_fn warn;     /* may be NULL: warnings are dropped */
	void *warn_ctx;
};

/* Builds the task from n >= 1 samples: parses each model.py and
 * weight_meta.py, checks that all samples have the same forward arguments,
 * op sequence and wiring, drops unused arguments and nodes (with a warning),
 * names the variants, then validates and infers the result with
 * graph_load_json().
 *
 * Returns 0 and sets *json_out to a new reference to the task document
 * (caller json_decref()s it) and, when task_out is non-NULL, *task_out to the
 * loaded task (caller graph_task_free()s it; its variants are in the order of
 * the samples).  Returns -1 with one line in err on failure, naming the file
 * and line ("x/model.py:7: unsupported call torch.roll"), the two samples that
 * differ, or the graph validator's message; nothing is returned then.  Never
 * crashes on any input: sizes, nesting and counts are bounded. */
int import_build(const struct import_sample *samples, int n,
		 const struct import_options *opt, json_t **json_out,
		 struct graph_task **task_out, char *err, size_t errlen);

/* The model a sample dir name refers to, for summaries: strips a fixture
 * prefix ("h14_") and GraphNet's "_0_start5_end10_0" suffix, so
 * "h14_albert-xlarge-v1_0_start5_end10_0" gives "albert-xlarge-v1".  Writes
 * at most len bytes (NUL included) into buf and returns buf. */
char *import_model_name(const char *sample_name, char *buf, size_t len);

/* The i-th call the importer turns into a graph op (0, 1, ...): a torch
 * function's dotted path, a Tensor method's name, or a Python operator
 * ("+"); *op is its op (engine/graph/graph_ops.c).  NULL past the last.
 * tests/unit/test_ops_table.c checks every one names an op of the table. */
const char *import_call(int i, enum graph_op *op);

#endif
