/* graph.h - the graph IR: parse, validate and infer a task's graph.json.
 *
 * A task file holds several variants; each variant is a complete graph (inputs,
 * nodes in topological order, outputs).  graph_load_file() parses the JSON,
 * validates every variant and infers each value's shape and dtype with PyTorch
 * semantics.  The schema is docs/graph-format.md.
 *
 * Ownership: a struct graph_task owns everything reachable from it (names,
 * attribute JSON, arrays); graph_task_free() releases it all.  Node attributes
 * are kept as jansson objects, normalised by validation: defaults are filled in
 * and dims are wrapped to be non-negative, so consumers never re-apply PyTorch's
 * defaults themselves.
 */
#ifndef PASSFS_GRAPH_H
#define PASSFS_GRAPH_H

#include <stddef.h>
#include <stdint.h>
#include <jansson.h>

/* Size caps, one per kind of file the engine reads whole (the max given to
 * base/file.h's base_read_file): every reader of that kind uses its cap. */
#define PF_CAP_GRAPH_JSON ((size_t)256 << 20)   /* a task's graph.json: 256 MiB */
#define PF_CAP_PASS_C (1u << 20)                 /* a pass's source, pass.c: 1 MiB */

#define GRAPH_MAX_DIMS 8
#define GRAPH_ERR_LEN 512

enum graph_dtype {
	DT_F32, DT_F16, DT_BF16, DT_F64, DT_I64, DT_I32, DT_BOOL,
	DT_COUNT,
	DT_INVALID = -1
};

/* "float32" ... "bool"; NULL for an invalid value. */
const char *graph_dtype_name(enum graph_dtype dt);
/* Parses a dtype name; also accepts "torch.float32" and the aliases "float",
 * "half", "long", "int".  DT_INVALID when unknown. */
enum graph_dtype graph_dtype_parse(const char *s);
/* Bytes per element. */
size_t graph_dtype_size(enum graph_dtype dt);
int graph_dtype_is_float(enum graph_dtype dt);

struct graph_shape {
	int ndim;
	int64_t d[GRAPH_MAX_DIMS];
};

int64_t graph_shape_numel(const struct graph_shape *s);
/* Writes "[1,197,768]" into buf; returns buf. */
char *graph_shape_str(const struct graph_shape *s, char *buf, size_t len);

enum graph_op {
	OP_ADD, OP_SUB, OP_MUL, OP_DIV, OP_POW, OP_WHERE,
	OP_SIGMOID, OP_RELU, OP_SILU, OP_TANH, OP_EXP, OP_RSQRT, OP_GELU,
	OP_DROPOUT, OP_SOFTMAX, OP_PRELU, OP_LAYER_NORM, OP_BATCH_NORM,
	OP_LINEAR, OP_MATMUL, OP_BMM, OP_CONV2D, OP_INTERPOLATE,
	OP_ADAPTIVE_AVG_POOL2D, OP_SDPA, OP_SUM, OP_MEAN,
	OP_TRANSPOSE, OP_PERMUTE, OP_RESHAPE, OP_VIEW, OP_FLATTEN, OP_EXPAND,
	OP_CONTIGUOUS, OP_GETITEM, OP_CAT, OP_SPLIT, OP_CHUNK, OP_PAD, OP_TO,
	OP_LEAKY_RELU, OP_UNBIND, OP_TENSOR_SPLIT, OP_BADDBMM, OP_ARANGE,
	OP_AVG_POOL2D, OP_UNFOLD,
	OP_COUNT,
	OP_INVALID = -1
};

/* The op's graph.json name ("scaled_dot_product_attention" for OP_SDPA);
 * NULL for a value out of range or without its row in the op table
 * (engine/graph/graph_ops.c). */
const char *graph_op_name(enum graph_op op);
/* The op named s, or OP_INVALID (s NULL, unknown, or an op without a full
 * row in the table). */
enum graph_op graph_op_parse(const char *s);
/* True when the op's row is complete: name, attributes and shape inference. */
int graph_op_infers(enum graph_op op);
/* True for ops whose result is a view of (or identical to) their first
 * operand in PyTorch eager: they cost no kernel there. */
int graph_op_is_view(enum graph_op op);

/* One tensor value: a graph input or one result of a node. */
struct graph_value {
	char *name;             /* owned */
	enum graph_dtype dtype;
	struct graph_shape shape;
	int node;               /* producing node index, -1 for an input */
	int elem;               /* element index inside a tuple result, else 0 */
};

enum graph_operand_kind { OPND_NONE, OPND_VALUE, OPND_TUPLE, OPND_SCALAR };

struct graph_operand {
	enum graph_operand_kind kind;
	int value;              /* OPND_VALUE: index into variant->values */
	int node;               /* OPND_TUPLE: the node producing the tuple */
	double scalar;          /* OPND_SCALAR */
	int scalar_is_int;      /* the JSON number was an integer */
	int scalar_is_bool;     /* the JSON literal was true/false */
};

struct graph_node {
	char *name;             /* owned */
	enum graph_op op;
	int n_operands;
	struct graph_operand *operands;   /* owned */
	json_t *attrs;          /* owned reference; normalised (see top) */
	int n_results;          /* 1, or the tuple length (split, chunk, unbind, tensor_split) */
	int first_value;        /* index of result 0 in variant->values */
	int is_tuple;
};

struct graph_input_gen {
	int has_mean, has_std, has_min, has_max;
	double mean, std, min, max;
	double *data;           /* owned; NULL unless literal data is given */
	size_t n_data;
};

struct graph_variant {
	char *name;
	int n_inputs;           /* values[0 .. n_inputs-1] are the inputs */
	struct graph_input_gen *gen;      /* n_inputs entries */
	int n_nodes;
	struct graph_node *nodes;
	int n_values;
	struct graph_value *values;
	int n_outputs;
	int *outputs;           /* indices into values */
	struct graph_name_index *index;   /* internal: name lookup while loading; NULL after */
};

struct graph_task {
	char *id;
	char *summary;
	char *source;           /* may be NULL */
	int n_variants;
	struct graph_variant *variants;
};

/* Loads, validates and infers `path`.  Returns 0 and sets *out (caller frees
 * with graph_task_free), or -1 with a one-line message in err that starts
 * with the path, names the variant and node where there is one. */
int graph_load_file(const char *path, struct graph_task **out, char *err, size_t errlen);

/* Same, from a JSON text already in memory; `label` stands in for the path in
 * messages.  The text need not be NUL-terminated. */
int graph_load_buffer(const char *label, const char *buf, size_t len,
		      struct graph_task **out, char *err, size_t errlen);

/* Same, from a parsed JSON document (the caller keeps its reference). */
int graph_load_json(const char *label, json_t *root, struct graph_task **out,
		    char *err, size_t errlen);

void graph_task_free(struct graph_task *t);

/* Index of the value called `name` in v, or -1. */
int graph_find_value(const struct graph_variant *v, const char *name);

/* Appends the readable rendering of a variant (docs/graph-format.md,
 * "Rendering") to a malloc'd string; *buf and *len grow as needed.  Returns 0, or
 * -1 when out of memory. */
int graph_render_variant(const struct graph_variant *v, char **buf, size_t *len, const char *indent);

/* The op sequence of variant 0 as "add > layer_norm" (malloc'd). */
char *graph_op_sequence(const struct graph_task *t);

#endif
