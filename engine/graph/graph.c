/* graph.c - loading graph.json: structure checks, name resolution, the
 * per-variant walk that calls the op table (graph_ops.c), cross-variant checks,
 * and the readable rendering. */
#define PASSFS_GRAPH_INTERNAL
#include "file.h"
#include "graph_util.h"
#include "map.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_VARIANTS 1024
#define MAX_INPUTS 1024
#define MAX_NODES 8192
#define MAX_NAME 128

/* ---- small shared helpers ------------------------------------------------ */

int graph_err(struct gctx *c, const char *fmt, ...)
{
	char msg[GRAPH_ERR_LEN];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (c->err == NULL || c->errlen == 0)
		return -1;
	size_t n = (size_t)snprintf(c->err, c->errlen, "%s: ", c->label ? c->label : "graph");
	if (n < c->errlen && c->variant)
		n += (size_t)snprintf(c->err + n, c->errlen - n, "variant '%s', ", c->variant);
	if (n < c->errlen && c->node)
		n += (size_t)snprintf(c->err + n, c->errlen - n, "node '%s'%s%s%s: ", c->node,
				      c->op ? " (" : "", c->op ? c->op : "", c->op ? ")" : "");
	else if (n < c->errlen && c->variant)   /* "variant 'x', " -> "variant 'x': " */
		c->err[n - 2] = ':', c->err[n - 1] = ' ';
	if (n < c->errlen)
		snprintf(c->err + n, c->errlen - n, "%s", msg);
	return -1;
}

/* ---- dtypes and shapes ------------------------------------------------------- */

static const struct {
	const char *name;
	size_t size;
} dtypes[DT_COUNT] = {
	[DT_F32] = {"float32", 4}, [DT_F16] = {"float16", 2}, [DT_BF16] = {"bfloat16", 2},
	[DT_F64] = {"float64", 8}, [DT_I64] = {"int64", 8},   [DT_I32] = {"int32", 4},
	[DT_BOOL] = {"bool", 1},
};

const char *graph_dtype_name(enum graph_dtype dt)
{
	return dt >= 0 && dt < DT_COUNT ? dtypes[dt].name : NULL;
}

enum graph_dtype graph_dtype_parse(const char *s)
{
	static const struct {
		const char *alias;
		enum graph_dtype dt;
	} aliases[] = {{"float", DT_F32}, {"half", DT_F16}, {"double", DT_F64}, {"long", DT_I64},
		       {"int", DT_I32}};
	if (s == NULL)
		return DT_INVALID;
	if (strncmp(s, "torch.", 6) == 0)
		s += 6;
	for (int i = 0; i < DT_COUNT; i++)
		if (strcmp(dtypes[i].name, s) == 0)
			return (enum graph_dtype)i;
	for (size_t i = 0; i < sizeof(aliases) / sizeof(aliases[0]); i++)
		if (strcmp(aliases[i].alias, s) == 0)
			return aliases[i].dt;
	return DT_INVALID;
}

size_t graph_dtype_size(enum graph_dtype dt)
{
	return dt >= 0 && dt < DT_COUNT ? dtypes[dt].size : 0;
}

int graph_dtype_is_float(enum graph_dtype dt)
{
	return dt == DT_F32 || dt == DT_F16 || dt == DT_BF16 || dt == DT_F64;
}

int64_t graph_shape_numel(const struct graph_shape *s)
{
	int64_t n = 1;
	for (int i = 0; i < s->ndim; i++)
		n *= s->d[i];
	return n;
}

char *graph_shape_str(const struct graph_shape *s, char *buf, size_t len)
{
	size_t n = 0;
	if (len == 0)
		return buf;
	buf[0] = 0;
	n += (size_t)snprintf(buf, len, "[");
	for (int i = 0; i < s->ndim && n < len; i++)
		n += (size_t)snprintf(buf + n, len - n, "%s%lld", i ? "," : "", (long long)s->d[i]);
	if (n < len)
		snprintf(buf + n, len - n, "]");
	return buf;
}

/* ---- freeing ------------------------------------------------------------------ */

static void index_free(struct graph_variant *v);

static void variant_free(struct graph_variant *v)
{
	index_free(v);
	free(v->name);
	for (int i = 0; i < v->n_inputs; i++)
		free(v->gen[i].data);
	free(v->gen);
	for (int i = 0; i < v->n_nodes; i++) {
		free(v->nodes[i].name);
		free(v->nodes[i].operands);
		json_decref(v->nodes[i].attrs);
	}
	free(v->nodes);
	for (int i = 0; i < v->n_values; i++)
		free(v->values[i].name);
	free(v->values);
	free(v->outputs);
}

void graph_task_free(struct graph_task *t)
{
	if (t == NULL)
		return;
	for (int i = 0; i < t->n_variants; i++)
		variant_free(&t->variants[i]);
	free(t->variants);
	free(t->id);
	free(t->summary);
	free(t->source);
	free(t);
}

/* ---- parsing ----------------------------------------------------------------------- */

static int check_keys(struct gctx *c, json_t *obj, const char *what, const char *const *allowed)
{
	const char *key;
	json_t *val;
	json_object_foreach(obj, key, val) {
		int ok = 0;
		for (const char *const *a = allowed; *a; a++)
			ok |= strcmp(*a, key) == 0;
		if (!ok)
			return graph_err(c, "%s: unknown field '%s'", what, key);
	}
	return 0;
}

static int valid_ident(const char *s, int allow_dash_start)
{
	size_t n = strlen(s);
	if (n == 0 || n > MAX_NAME)
		return 0;
	if (!allow_dash_start && !(isalpha((unsigned char)s[0]) || s[0] == '_'))
		return 0;
	for (size_t i = 0; i < n; i++)
		if (!(isalnum((unsigned char)s[i]) || s[i] == '_' || s[i] == '.' ||
		      (allow_dash_start && s[i] == '-')))
			return 0;
	return 1;
}

static int get_string(struct gctx *c, json_t *obj, const char *key, const char *what,
		      const char **out)
{
	json_t *j = json_object_get(obj, key);
	if (j == NULL)
		return graph_err(c, "%s: missing field '%s'", what, key);
	if (!json_is_string(j))
		return graph_err(c, "%s: field '%s' must be a string", what, key);
	*out = json_string_value(j);
	return 0;
}

static int parse_shape(struct gctx *c, json_t *j, const char *what, struct graph_shape *s)
{
	if (!json_is_array(j))
		return graph_err(c, "%s: 'shape' must be an array of integers", what);
	if (json_array_size(j) > GRAPH_MAX_DIMS)
		return graph_err(c, "%s: shape has %zu dims, at most %d supported", what, json_array_size(j),
			    GRAPH_MAX_DIMS);
	s->ndim = (int)json_array_size(j);
	int64_t numel = 1;
	for (int i = 0; i < s->ndim; i++) {
		json_t *e = json_array_get(j, (size_t)i);
		if (!json_is_integer(e) || json_integer_value(e) < 0)
			return graph_err(c, "%s: shape entry %d must be an integer >= 0", what, i);
		s->d[i] = json_integer_value(e);
		if (s->d[i] > GRAPH_MAX_NUMEL || (s->d[i] && numel > GRAPH_MAX_NUMEL / s->d[i]))
			return graph_err(c, "%s: shape is too large (over 2^40 elements)", what);
		numel *= s->d[i] ? s->d[i] : 1;
	}
	return 0;
}

/* Adds a value; returns its index or -1 (out of memory). */
static int add_value(struct graph_variant *v, int *cap, const char *name, enum graph_dtype dt,
		     const struct graph_shape *s, int node, int elem)
{
	if (v->n_values == *cap) {
		int nc = *cap ? *cap * 2 : 16;
		void *p = realloc(v->values, sizeof(*v->values) * (size_t)nc);
		if (p == NULL)
			return -1;
		v->values = p;
		*cap = nc;
	}
	struct graph_value *val = &v->values[v->n_values];
	val->name = strdup(name);
	val->dtype = dt;
	val->shape = *s;
	val->node = node;
	val->elem = elem;
	return val->name ? v->n_values++ : -1;
}

/* Name lookup while a variant loads: an open-addressing hash table from a
 * name to its value index, or to -2 - node for a tuple (tuple elements are
 * values too, but only the tuple's name refers to them).  Keys point at the
 * names owned by values and nodes. */
struct graph_name_index {
	struct base_map map;    /* name -> (void *)(intptr_t)index */
};

static void index_free(struct graph_variant *v)
{
	if (v->index) {
		base_map_free(&v->index->map);
		free(v->index);
		v->index = NULL;
	}
}

static int index_put(struct graph_variant *v, const char *name, int val)
{
	if (v->index == NULL && (v->index = calloc(1, sizeof(*v->index))) == NULL)
		return -1;
	return base_map_put(&v->index->map, name, (void *)(intptr_t)val);
}

/* Returns the value index, or -2 - node index for a tuple, or -1. */
static int lookup(const struct graph_variant *v, const char *name)
{
	if (v->index == NULL)
		return -1;
	return (int)base_map_get_int(&v->index->map, name, strlen(name), -1);
}

static int parse_input(struct gctx *c, struct graph_variant *v, int *cap, json_t *j, int idx)
{
	static const char *const keys[] = {"name", "shape", "dtype", "mean", "std", "min", "max",
					   "data", "original_name", NULL};
	char what[64];
	const char *name = NULL, *dts = NULL;
	struct graph_shape s;
	snprintf(what, sizeof(what), "input %d", idx);
	if (!json_is_object(j))
		return graph_err(c, "%s must be an object", what);
	if (check_keys(c, j, what, keys) || get_string(c, j, "name", what, &name))
		return -1;
	snprintf(what, sizeof(what), "input '%.40s'", name);
	if (!valid_ident(name, 0))
		return graph_err(c, "%s: names must match [A-Za-z_][A-Za-z0-9_.]* (at most %d bytes)", what, MAX_NAME);
	if (lookup(v, name) != -1)
		return graph_err(c, "%s: duplicate name", what);
	if (get_string(c, j, "dtype", what, &dts))
		return -1;
	enum graph_dtype dt = graph_dtype_parse(dts);
	if (dt == DT_INVALID)
		return graph_err(c, "%s: invalid dtype '%s' (float32, float16, bfloat16, float64, int64, int32, bool)",
			    what, dts);
	if (parse_shape(c, json_object_get(j, "shape"), what, &s))
		return -1;
	struct graph_input_gen *g = &v->gen[idx];
	static const char *const nums[] = {"mean", "std", "min", "max"};
	int *has[] = {&g->has_mean, &g->has_std, &g->has_min, &g->has_max};
	double *val[] = {&g->mean, &g->std, &g->min, &g->max};
	for (int i = 0; i < 4; i++) {
		json_t *e = json_object_get(j, nums[i]);
		if (e == NULL || json_is_null(e))
			continue;
		if (!json_is_number(e) || !isfinite(json_number_value(e)))
			return graph_err(c, "%s: '%s' must be a finite number", what, nums[i]);
		*has[i] = 1;
		*val[i] = json_number_value(e);
	}
	if (g->has_std && g->std < 0)
		return graph_err(c, "%s: 'std' must be >= 0", what);
	if (g->has_min && g->has_max && g->min > g->max)
		return graph_err(c, "%s: 'min' %g is greater than 'max' %g", what, g->min, g->max);
	json_t *data = json_object_get(j, "data");
	if (data && !json_is_null(data)) {
		int64_t numel = graph_shape_numel(&s);
		if (!json_is_array(data))
			return graph_err(c, "%s: 'data' must be an array of numbers", what);
		if ((int64_t)json_array_size(data) != numel)
			return graph_err(c, "%s: 'data' has %zu values, shape needs %lld", what,
				    json_array_size(data), (long long)numel);
		g->n_data = json_array_size(data);
		g->data = calloc(g->n_data ? g->n_data : 1, sizeof(double));
		if (g->data == NULL)
			return graph_err(c, "out of memory");
		for (size_t i = 0; i < g->n_data; i++) {
			json_t *e = json_array_get(data, i);
			if (json_is_boolean(e))
				g->data[i] = json_is_true(e);
			else if (json_is_number(e) && isfinite(json_number_value(e)))
				g->data[i] = json_number_value(e);
			else
				return graph_err(c, "%s: data[%zu] must be a finite number", what, i);
		}
	}
	if (add_value(v, cap, name, dt, &s, -1, 0) < 0 ||
	    index_put(v, v->values[v->n_values - 1].name, v->n_values - 1))
		return graph_err(c, "out of memory");
	return 0;
}

static int parse_operand(struct gctx *c, struct graph_variant *v, json_t *jnodes, int self, json_t *e,
			 int i, struct graph_operand *o, int scalars_ok, int *uses)
{
	memset(o, 0, sizeof(*o));
	if (json_is_null(e)) {
		o->kind = OPND_NONE;
		return 0;
	}
	if (json_is_number(e) || json_is_boolean(e)) {
		if (!scalars_ok)
			return graph_err(c, "operand %d is a number; this op takes tensors only", i);
		o->kind = OPND_SCALAR;
		o->scalar = json_is_boolean(e) ? json_is_true(e) : json_number_value(e);
		o->scalar_is_int = json_is_integer(e);
		o->scalar_is_bool = json_is_boolean(e);
		if (!isfinite(o->scalar) && !json_is_boolean(e))
			return graph_err(c, "operand %d: the number must be finite", i);
		return 0;
	}
	if (!json_is_string(e))
		return graph_err(c, "operand %d must be a name, a number or null", i);
	const char *name = json_string_value(e);
	int k = lookup(v, name);
	if (k == -1) {
		for (size_t later = (size_t)self; later < json_array_size(jnodes); later++)
			if (strcmp(name, json_string_value(json_object_get(json_array_get(jnodes, later),
									    "name")) ?: "") == 0)
				return graph_err(c, "operand %d '%s' is defined later: nodes must come in topological order (a cycle is not allowed)",
					    i, name);
		return graph_err(c, "operand %d '%s' is not an input or an earlier node", i, name);
	}
	if (k <= -2) {
		o->kind = OPND_TUPLE;
		o->node = -2 - k;
		uses[v->nodes[o->node].first_value]++;
	} else {
		o->kind = OPND_VALUE;
		o->value = k;
		uses[k]++;
	}
	return 0;
}

static int parse_node(struct gctx *c, struct graph_variant *v, int *cap, json_t *jnodes, int idx,
		      int **uses, int *uses_cap)
{
	static const char *const keys[] = {"name", "op", "inputs", "attrs", NULL};
	char what[64];
	const char *name = NULL, *opn = NULL;
	struct graph_node *n = &v->nodes[idx];
	json_t *j = json_array_get(jnodes, (size_t)idx);
	snprintf(what, sizeof(what), "node %d", idx);
	if (!json_is_object(j))
		return graph_err(c, "%s must be an object", what);
	if (get_string(c, j, "name", what, &name))
		return -1;
	c->node = name;
	if (check_keys(c, j, "node", keys))
		return -1;
	if (!valid_ident(name, 0))
		return graph_err(c, "names must match [A-Za-z_][A-Za-z0-9_.]* (at most %d bytes)", MAX_NAME);
	if (lookup(v, name) != -1)
		return graph_err(c, "duplicate name (an input or an earlier node is called that)");
	if (get_string(c, j, "op", "node", &opn))
		return -1;
	n->op = graph_op_parse(opn);
	if (n->op == OP_INVALID)
		return graph_err(c, "unknown op '%s' (docs/graph-format.md lists the ops)", opn);
	c->op = graph_op_name(n->op);
	n->name = strdup(name);
	json_t *ins = json_object_get(j, "inputs");
	if (!json_is_array(ins))
		return graph_err(c, "'inputs' must be an array");
	int mn, mx, sok;
	graph_op_arity(n->op, &mn, &mx, &sok);
	int cnt = (int)json_array_size(ins);
	if (cnt < mn || (mx >= 0 && cnt > mx)) {
		if (mn == mx)
			return graph_err(c, "takes %d operand%s, got %d", mn, mn == 1 ? "" : "s", cnt);
		if (mx < 0)
			return graph_err(c, "takes at least %d operand%s, got %d", mn, mn == 1 ? "" : "s", cnt);
		return graph_err(c, "takes %d to %d operands, got %d", mn, mx, cnt);
	}
	if (cnt > MAX_INPUTS)
		return graph_err(c, "too many operands");
	n->operands = calloc((size_t)(cnt ? cnt : 1), sizeof(*n->operands));
	n->n_operands = cnt;
	if (n->operands == NULL || n->name == NULL)
		return graph_err(c, "out of memory");
	for (int i = 0; i < cnt; i++) {
		if (parse_operand(c, v, jnodes, idx, json_array_get(ins, (size_t)i), i, &n->operands[i], sok,
				  *uses))
			return -1;
		/* Operand 0 is the tensor an op works on; null is only for optional
		 * operands after it. */
		if (i == 0 && n->operands[i].kind == OPND_NONE)
			return graph_err(c, "operand 0 cannot be null");
	}
	json_t *attrs = json_object_get(j, "attrs");
	if (attrs && !json_is_object(attrs))
		return graph_err(c, "'attrs' must be an object");
	n->attrs = attrs ? json_deep_copy(attrs) : json_object();
	if (n->attrs == NULL)
		return graph_err(c, "out of memory");

	int nres;
	struct graph_value *tmp = malloc(sizeof(*tmp) * GRAPH_MAX_RESULTS);
	if (tmp == NULL)
		return graph_err(c, "out of memory");
	if (graph_infer_node(c, v, n, tmp, &nres)) {
		free(tmp);
		return -1;
	}
	n->n_results = nres;
	n->first_value = v->n_values;
	for (int k = 0; k < nres; k++) {
		char nm[MAX_NAME + 16];
		if (n->is_tuple)
			snprintf(nm, sizeof(nm), "%s[%d]", name, k);
		else
			snprintf(nm, sizeof(nm), "%s", name);
		if (add_value(v, cap, nm, tmp[k].dtype, &tmp[k].shape, idx, k) < 0) {
			free(tmp);
			return graph_err(c, "out of memory");
		}
	}
	free(tmp);
	if (index_put(v, n->name, n->is_tuple ? -2 - idx : n->first_value))
		return graph_err(c, "out of memory");
	if (v->n_values > *uses_cap) {
		int nc = *cap;
		int *p = realloc(*uses, sizeof(int) * (size_t)nc);
		if (p == NULL)
			return graph_err(c, "out of memory");
		memset(p + *uses_cap, 0, sizeof(int) * (size_t)(nc - *uses_cap));
		*uses = p;
		*uses_cap = nc;
	}
	c->node = c->op = NULL;
	return 0;
}

static int parse_variant(struct gctx *c, json_t *j, int idx, struct graph_variant *v)
{
	static const char *const keys[] = {"name", "inputs", "nodes", "outputs", NULL};
	char what[48];
	const char *name = NULL;
	int cap = 0, uses_cap = 0, *uses = NULL, rc = -1;
	snprintf(what, sizeof(what), "variant %d", idx);
	if (!json_is_object(j))
		return graph_err(c, "%s must be an object", what);
	if (get_string(c, j, "name", what, &name))
		return -1;
	if (!valid_ident(name, 1))
		return graph_err(c, "%s: name '%.40s' must match [A-Za-z0-9_.-]+", what, name);
	v->name = strdup(name);
	c->variant = v->name;
	if (check_keys(c, j, "variant", keys))
		return -1;
	json_t *ins = json_object_get(j, "inputs"), *nodes = json_object_get(j, "nodes"),
	       *outs = json_object_get(j, "outputs");
	if (!json_is_array(ins))
		return graph_err(c, "'inputs' must be an array");
	if (!json_is_array(nodes))
		return graph_err(c, "'nodes' must be an array");
	if (!json_is_array(outs))
		return graph_err(c, "'outputs' must be an array");
	if (json_array_size(ins) > MAX_INPUTS || json_array_size(nodes) > MAX_NODES)
		return graph_err(c, "too large (at most %d inputs and %d nodes)", MAX_INPUTS, MAX_NODES);
	if (json_array_size(nodes) == 0 && json_array_size(outs) == 0)
		return graph_err(c, "the graph is empty (no nodes and no outputs)");
	if (json_array_size(outs) == 0)
		return graph_err(c, "'outputs' is empty: a graph must produce something");
	v->n_inputs = (int)json_array_size(ins);
	v->gen = calloc((size_t)v->n_inputs + 1, sizeof(*v->gen));
	v->nodes = calloc(json_array_size(nodes) + 1, sizeof(*v->nodes));
	if (v->gen == NULL || v->nodes == NULL)
		return graph_err(c, "out of memory");
	for (int i = 0; i < v->n_inputs; i++)
		if (parse_input(c, v, &cap, json_array_get(ins, (size_t)i), i))
			return -1;
	uses_cap = cap;
	uses = calloc((size_t)(cap ? cap : 1), sizeof(int));
	if (uses == NULL)
		return graph_err(c, "out of memory");
	/* nodes[] is zeroed, so freeing after a failure part way is safe. */
	v->n_nodes = (int)json_array_size(nodes);
	for (int i = 0; i < v->n_nodes; i++)
		if (parse_node(c, v, &cap, nodes, i, &uses, &uses_cap))
			goto out;
	v->n_outputs = (int)json_array_size(outs);
	v->outputs = calloc((size_t)v->n_outputs, sizeof(int));
	if (v->outputs == NULL) {
		graph_err(c, "out of memory");
		goto out;
	}
	for (int i = 0; i < v->n_outputs; i++) {
		json_t *e = json_array_get(outs, (size_t)i);
		if (!json_is_string(e)) {
			graph_err(c, "outputs[%d] must be a name", i);
			goto out;
		}
		int k = lookup(v, json_string_value(e));
		if (k == -1) {
			graph_err(c, "output '%s' is not an input or a node", json_string_value(e));
			goto out;
		}
		if (k <= -2) {
			graph_err(c, "output '%s' is a tuple; list its elements through getitem nodes",
			     json_string_value(e));
			goto out;
		}
		for (int p = 0; p < i; p++)
			if (v->outputs[p] == k) {
				graph_err(c, "output '%s' is listed twice", json_string_value(e));
				goto out;
			}
		v->outputs[i] = k;
		uses[k]++;
	}
	for (int i = 0; i < v->n_inputs; i++)
		if (uses[i] == 0) {
			graph_err(c, "input '%s' is never used (remove it, or it would be an argument the pass must take for nothing)",
			     v->values[i].name);
			goto out;
		}
	for (int i = 0; i < v->n_nodes; i++) {
		struct graph_node *n = &v->nodes[i];
		int used = 0;
		for (int k = 0; k < n->n_results; k++)
			used |= uses[n->first_value + k] > 0;
		if (!used) {
			c->node = n->name;
			c->op = graph_op_name(n->op);
			graph_err(c, "the result is never used and is not an output (dead node)");
			goto out;
		}
	}
	rc = 0;
out:
	free(uses);
	index_free(v);
	return rc;
}

/* Variants of one task must present the same interface to a pass: the same
 * inputs (names and order) and the same number of outputs, and be the same op
 * sequence. */
static int check_consistent(struct gctx *c, struct graph_task *t)
{
	const struct graph_variant *a = &t->variants[0];
	for (int i = 1; i < t->n_variants; i++) {
		const struct graph_variant *b = &t->variants[i];
		c->variant = b->name;
		for (int k = 0; k < i; k++)
			if (strcmp(t->variants[k].name, b->name) == 0)
				return graph_err(c, "duplicate variant name");
		if (b->n_inputs != a->n_inputs)
			return graph_err(c, "has %d inputs, variant '%s' has %d: every variant needs the same inputs",
				    b->n_inputs, a->name, a->n_inputs);
		for (int k = 0; k < a->n_inputs; k++)
			if (strcmp(a->values[k].name, b->values[k].name) != 0)
				return graph_err(c, "input %d is '%s', variant '%s' calls it '%s'", k,
					    b->values[k].name, a->name, a->values[k].name);
		if (b->n_outputs != a->n_outputs)
			return graph_err(c, "has %d outputs, variant '%s' has %d", b->n_outputs, a->name, a->n_outputs);
		if (b->n_nodes != a->n_nodes)
			return graph_err(c, "has %d nodes, variant '%s' has %d: variants are one op sequence at other shapes",
				    b->n_nodes, a->name, a->n_nodes);
		for (int k = 0; k < a->n_nodes; k++)
			if (a->nodes[k].op != b->nodes[k].op)
				return graph_err(c, "node %d is %s, variant '%s' has %s there", k,
					    graph_op_name(b->nodes[k].op), a->name, graph_op_name(a->nodes[k].op));
	}
	c->variant = NULL;
	return 0;
}

int graph_load_json(const char *label, json_t *root, struct graph_task **out, char *err, size_t errlen)
{
	static const char *const keys[] = {"id", "summary", "source", "variants", NULL};
	struct gctx c = {.label = label, .err = err, .errlen = errlen};
	const char *id = NULL, *summary = NULL;
	*out = NULL;
	if (!json_is_object(root))
		return graph_err(&c, "the top level must be a JSON object");
	if (check_keys(&c, root, "top level", keys) || get_string(&c, root, "id", "top level", &id) ||
	    get_string(&c, root, "summary", "top level", &summary))
		return -1;
	if (!valid_ident(id, 1) || strchr(id, '.') == id)
		return graph_err(&c, "id '%.40s' must match [A-Za-z0-9_.-]+ (at most %d bytes, not starting with '.')",
			    id, MAX_NAME);
	json_t *src = json_object_get(root, "source");
	if (src && !json_is_string(src) && !json_is_null(src))
		return graph_err(&c, "'source' must be a string");
	json_t *vars = json_object_get(root, "variants");
	if (!json_is_array(vars) || json_array_size(vars) == 0)
		return graph_err(&c, "'variants' must be a non-empty array");
	if (json_array_size(vars) > MAX_VARIANTS)
		return graph_err(&c, "too many variants (at most %d)", MAX_VARIANTS);
	struct graph_task *t = calloc(1, sizeof(*t));
	if (t == NULL)
		return graph_err(&c, "out of memory");
	t->id = strdup(id);
	t->summary = strdup(summary);
	t->source = json_is_string(src) ? strdup(json_string_value(src)) : NULL;
	t->variants = calloc(json_array_size(vars), sizeof(*t->variants));
	if (t->variants == NULL) {
		graph_task_free(t);
		return graph_err(&c, "out of memory");
	}
	for (size_t i = 0; i < json_array_size(vars); i++) {
		t->n_variants++;
		c.variant = c.node = c.op = NULL;
		if (parse_variant(&c, json_array_get(vars, i), (int)i, &t->variants[i])) {
			graph_task_free(t);
			return -1;
		}
	}
	c.node = c.op = NULL;
	if (check_consistent(&c, t)) {
		graph_task_free(t);
		return -1;
	}
	*out = t;
	return 0;
}

int graph_load_buffer(const char *label, const char *buf, size_t len, struct graph_task **out,
		      char *err, size_t errlen)
{
	json_error_t je;
	struct gctx c = {.label = label, .err = err, .errlen = errlen};
	*out = NULL;
	json_t *root = json_loadb(buf, len, JSON_REJECT_DUPLICATES, &je);
	if (root == NULL)
		return graph_err(&c, "invalid JSON at line %d, column %d: %s", je.line, je.column, je.text);
	int rc = graph_load_json(label, root, out, err, errlen);
	json_decref(root);
	return rc;
}

int graph_load_file(const char *path, struct graph_task **out, char *err, size_t errlen)
{
	struct gctx c = {.label = path, .err = err, .errlen = errlen};
	*out = NULL;
	size_t len = 0;
	int e = 0;
	char *buf = base_read_file(path, PF_CAP_GRAPH_JSON, &len, &e);
	if (buf == NULL) {
		if (e == EFBIG)
			return graph_err(&c, "file is larger than %zu MiB", PF_CAP_GRAPH_JSON >> 20);
		if (e == ENOMEM)
			return graph_err(&c, "out of memory");
		return graph_err(&c, "cannot open: %s", strerror(e));
	}
	int rc = graph_load_buffer(path, buf, len, out, err, errlen);
	free(buf);
	return rc;
}

int graph_find_value(const struct graph_variant *v, const char *name)
{
	for (int i = 0; i < v->n_values; i++)
		if (strcmp(v->values[i].name, name) == 0)
			return i;
	return -1;
}

/* ---- rendering ---------------------------------------------------------------------- */

static int render_index(json_t *idx, char **buf, size_t *len)
{
	for (size_t i = 0; i < json_array_size(idx); i++) {
		json_t *e = json_array_get(idx, i);
		const char *sep = i ? ", " : "";
		if (json_is_null(e)) {
			if (strbuf_printf_bare(buf, len, "%sNone", sep))
				return -1;
		} else if (json_is_integer(e)) {
			if (strbuf_printf_bare(buf, len, "%s%lld", sep, (long long)json_integer_value(e)))
				return -1;
		} else if (json_is_array(e)) {
			long long a = json_integer_value(json_array_get(e, 0));
			long long b = json_integer_value(json_array_get(e, 1));
			long long s = json_integer_value(json_array_get(e, 2));
			if (strbuf_printf_bare(buf, len, "%s%lld:%lld", sep, a, b) ||
			    (s != 1 && strbuf_printf_bare(buf, len, ":%lld", s)))
				return -1;
		}
	}
	return 0;
}

static int render_operand(const struct graph_variant *v, const struct graph_operand *o, char **buf,
			  size_t *len)
{
	switch (o->kind) {
	case OPND_NONE:
		return strbuf_printf_bare(buf, len, "None");
	case OPND_VALUE:
		return strbuf_printf_bare(buf, len, "%s", v->values[o->value].name);
	case OPND_TUPLE:
		return strbuf_printf_bare(buf, len, "%s", v->nodes[o->node].name);
	case OPND_SCALAR:
		if (o->scalar_is_bool)
			return strbuf_printf_bare(buf, len, "%s", o->scalar ? "True" : "False");
		return strbuf_printf_bare(buf, len, o->scalar_is_int ? "%.0f" : "%.9g", o->scalar);
	}
	return 0;
}

static int render_node(const struct graph_variant *v, const struct graph_node *n, char **buf,
		       size_t *len)
{
	char *line = NULL;
	size_t ll = 0;
	int rc = -1;
	if (strbuf_printf_bare(&line, &ll, "%s = ", n->name))
		goto out;
	if (n->op == OP_GETITEM) {
		if (render_operand(v, &n->operands[0], &line, &ll) || strbuf_printf_bare(&line, &ll, "[") ||
		    render_index(json_object_get(n->attrs, "index"), &line, &ll) ||
		    strbuf_printf_bare(&line, &ll, "]"))
			goto out;
	} else {
		if (strbuf_printf_bare(&line, &ll, "%s(", graph_op_name(n->op)))
			goto out;
		for (int i = 0; i < n->n_operands; i++)
			if ((i && strbuf_printf_bare(&line, &ll, ", ")) || render_operand(v, &n->operands[i], &line, &ll))
				goto out;
		const char *key;
		json_t *val;
		int first = n->n_operands == 0;
		json_object_foreach(n->attrs, key, val) {
			if (strcmp(key, "sizes") == 0 || strcmp(key, "starts") == 0 || json_is_null(val) ||
			    (graph_attr_is_default(n->op, key, val) && !graph_attr_semantic(key)))
				continue;       /* derived (shown in the result), or a default that says nothing */
			char *s = json_dumps(val, JSON_COMPACT | JSON_ENCODE_ANY | JSON_REAL_PRECISION(9));
			int bad = s == NULL || strbuf_printf_bare(&line, &ll, "%s%s=%s", first ? "" : ", ", key, s);
			free(s);
			if (bad)
				goto out;
			first = 0;
		}
		/* attributes that change the meaning, left out of graph.json:
		 * their defaults, spelled out (dropout(x, p=0.1, training=false)) */
		const char *an;
		for (int i = 0; (an = graph_attr_name(n->op, i)) != NULL; i++) {
			const char *d = graph_attr_default(n->op, an);
			if (!graph_attr_semantic(an) || d == NULL || json_object_get(n->attrs, an) != NULL ||
			    strcmp(d, "null") == 0)
				continue;
			if (strbuf_printf_bare(&line, &ll, "%s%s=%s", first ? "" : ", ", an, d))
				goto out;
			first = 0;
		}
		if (strbuf_printf_bare(&line, &ll, ")"))
			goto out;
	}
	rc = 0;
	for (int k = 0; k < n->n_results && rc == 0; k++) {
		const struct graph_value *r = &v->values[n->first_value + k];
		char sb[200];
		graph_shape_str(&r->shape, sb, sizeof(sb));
		size_t w = strlen(line);
		const char *lead = k == 0 ? line : "";
		int pad = (int)(k == 0 ? (w < 56 ? 56 - w : 1) : 56);
		if (n->is_tuple)
			rc = strbuf_printf_bare(buf, len, "%s%*s%s[%d] %s%s\n", lead, pad, "", k ? "  " : "", k,
					 graph_dtype_name(r->dtype), sb);
		else
			rc = strbuf_printf_bare(buf, len, "%s%*s%s%s\n", lead, pad, "", graph_dtype_name(r->dtype), sb);
	}
out:
	free(line);
	return rc;
}

int graph_render_variant(const struct graph_variant *v, char **buf, size_t *len, const char *indent)
{
	char sb[200];
	if (strbuf_printf_bare(buf, len, "%svariant %s\n", indent, v->name))
		return -1;
	for (int i = 0; i < v->n_inputs; i++) {
		const struct graph_value *x = &v->values[i];
		if (strbuf_printf_bare(buf, len, "%s  in  %-12s %s%s\n", indent, x->name, graph_dtype_name(x->dtype),
				graph_shape_str(&x->shape, sb, sizeof(sb))))
			return -1;
	}
	for (int i = 0; i < v->n_nodes; i++)
		if (strbuf_printf_bare(buf, len, "%s  ", indent) || render_node(v, &v->nodes[i], buf, len))
			return -1;
	if (strbuf_printf_bare(buf, len, "%s  out", indent))
		return -1;
	for (int i = 0; i < v->n_outputs; i++)
		if (strbuf_printf_bare(buf, len, "%s%s", i ? ", " : " ", v->values[v->outputs[i]].name))
			return -1;
	return strbuf_printf_bare(buf, len, "\n");
}

char *graph_op_sequence(const struct graph_task *t)
{
	char *buf = NULL;
	size_t len = 0;
	const struct graph_variant *v = &t->variants[0];
	if (strbuf_printf_bare(&buf, &len, "%s", ""))
		return NULL;
	for (int i = 0; i < v->n_nodes; i++)
		if (strbuf_printf_bare(&buf, &len, "%s%s", i ? " > " : "", graph_op_name(v->nodes[i].op))) {
			free(buf);
			return NULL;
		}
	return buf;
}
