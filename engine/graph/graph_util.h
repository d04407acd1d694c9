/* graph_util.h - small helpers shared by the graph module's files: formatted
 * errors with file/variant/node context (growable strings: base/strbuf.h). */
#ifndef PASSFS_GRAPH_UTIL_H
#define PASSFS_GRAPH_UTIL_H

#include <stdarg.h>
#include <stddef.h>

/* Where an error happened; any field may be NULL. */
struct gctx {
	const char *label;      /* file name or label */
	const char *variant;
	const char *node;
	const char *op;
	char *err;
	size_t errlen;
};

/* Writes "label: variant 'v', node 'n' (op): <msg>" into c->err; returns -1. */
int graph_err(struct gctx *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* strbuf_printf_bare(): the growable string of base/strbuf.h. */
#include "strbuf.h"


/* Internal to the graph module (graph.c, graph_ops.c). */
#ifdef PASSFS_GRAPH_INTERNAL
#include "graph.h"

#define GRAPH_MAX_RESULTS 1024   /* most tensors a split/chunk may produce */
#define GRAPH_MAX_NUMEL (INT64_C(1) << 40)

/* Checks a node's attributes against its op (unknown names, types, ranges),
 * fills in defaults, normalises them (dims wrapped, index resolved) and infers
 * the result(s) into res[0..*nres-1] (name, node and elem left to the caller).
 * The node's operands are already resolved.  Returns 0 or -1 via graph_err(). */
int graph_infer_node(struct gctx *c, const struct graph_variant *v, struct graph_node *n,
		     struct graph_value *res, int *nres);

/* True when attribute `key` of op holds its default value (the rendering
 * leaves those out). */
int graph_attr_is_default(enum graph_op op, const char *key, json_t *val);
/* Whether an attribute changes what the op computes in a way a reader must
 * not have to guess (dropout's and batch_norm's training flag, softmax's dim
 * and dtype, gelu's approximate, eps, is_causal, ...): the README's graph shows
 * these even at their defaults, and even when graph.json leaves them out. */
int graph_attr_semantic(const char *key);
/* The JSON text of op's default for attribute key, or NULL (no such
 * attribute, or it is required). */
const char *graph_attr_default(enum graph_op op, const char *key);
/* The i-th attribute name op accepts, or NULL past the last. */
const char *graph_attr_name(enum graph_op op, int i);

/* Minimum/maximum operand counts (max -1 = any) and whether number literals
 * may stand for operands. */
void graph_op_arity(enum graph_op op, int *min_in, int *max_in, int *scalars_ok);
#endif

#endif
