/* import_build.c - the graph being built (import_int.h): graph values, nodes
 * and their operands, and constants as JSON. */
#define _POSIX_C_SOURCE 200809L
#include "import_int.h"

/* ---- graph values and nodes ----------------------------------------------- */

int imp_gv_new(struct prog *p, int node, int root)
{
	if (imp_grow(p, (void **)&p->gv, &p->capgv, p->ngv, sizeof(struct gval), MAX_VALUES))
		return -1;
	struct gval *g = &p->gv[p->ngv];
	memset(g, 0, sizeof(*g));
	g->node = node;
	g->root = root < 0 ? p->ngv : root;
	return p->ngv++;
}

/* A fresh graph name from `base` (truncated, made unique with _1, _2...). */
const char *imp_fresh_name(struct prog *p, const char *base)
{
	char b[MAX_NAME_LEN + 1];
	snprintf(b, sizeof(b), "%s", base);
	char buf[MAX_NAME_LEN + 24];
	snprintf(buf, sizeof(buf), "%s", b);
	if (base_map_get(&p->names, buf)) {
		/* the next suffix to try for this base: linear, not quadratic, in
		 * the number of rebinds of one name */
		void **next = base_map_get(&p->suffix, b);
		long k = next ? (long)(intptr_t)*next : 1;
		do
			snprintf(buf, sizeof(buf), "%s_%ld", b, k++);
		while (base_map_get(&p->names, buf));
		if (next) {
			*next = (void *)(intptr_t)k;
		} else {
			char *key = imp_arena_strndup(&p->ar, b, strlen(b));
			if (key == NULL || base_map_put(&p->suffix, key, (void *)(intptr_t)k))
				return imp_prog_oom(p);
		}
	}
	char *s = imp_arena_strndup(&p->ar, buf, strlen(buf));
	if (s == NULL || base_map_put(&p->names, s, s))
		return imp_prog_oom(p);
	return s;
}

const char *imp_gv_label(const struct prog *p, int g)
{
	if (g < 0 || g >= p->ngv)
		return "?";
	if (p->gv[g].name)
		return p->gv[g].name;
	return "an intermediate value";
}

/* A tensor operand: checks it is usable (not stale). Returns its graph value. */
int imp_use_tensor(struct prog *p, const struct pv *v, const char *what)
{
	if (v->k == PV_GTUPLE) {
		imp_perr(p, p->line,
		     "%s: %s is a tuple (a split, chunk, unbind or tensor_split result); index or unpack it first",
		     what, imp_gv_label(p, v->gv));
		return -1;
	}
	if (v->k != PV_TENSOR) {
		imp_perr(p, p->line, "%s: expected a tensor, got %s", what, imp_kind_name(v));
		return -1;
	}
	const struct gval *g = &p->gv[v->gv];
	if (g->stale_line) {
		imp_perr(p, p->line,
		     "%s: %s is used after an in-place op at line %d changed it through an alias or view; "
		     "not supported", what, imp_gv_label(p, v->gv), g->stale_line);
		return -1;
	}
	return v->gv;
}

void imp_nb_free(struct nodebuild *b)
{
	for (int i = 0; i < b->nops; i++)
		json_decref(b->ops[i].scalar);
	json_decref(b->attrs);
	memset(b, 0, sizeof(*b));
}

int imp_nb_attr(struct prog *p, struct nodebuild *b, const char *name, json_t *v)
{
	if (v == NULL) {
		imp_prog_oom(p);
		return -1;
	}
	if (b->attrs == NULL && (b->attrs = json_object()) == NULL) {
		json_decref(v);
		imp_prog_oom(p);
		return -1;
	}
	if (json_object_set_new(b->attrs, name, v)) {
		imp_prog_oom(p);
		return -1;
	}
	return 0;
}

/* Emits the node; view: the result shares its first operand's storage.
 * Takes ownership of b's JSON.  Returns the result's graph value or -1. */
int imp_emit_node(struct prog *p, struct nodebuild *b, int view, int tuple)
{
	if (p->nnodes >= MAX_NODES) {
		imp_nb_free(b);
		imp_perr(p, p->line, "too many nodes (at most %d)", MAX_NODES);
		return -1;
	}
	if (imp_grow(p, (void **)&p->nodes, &p->capnodes, p->nnodes, sizeof(struct gnode), MAX_NODES + 1)) {
		imp_nb_free(b);
		return -1;
	}
	int root = -1;
	if (view && b->nops > 0 && b->ops[0].k == O_VALUE)
		root = p->gv[b->ops[0].gv].root;
	int g = imp_gv_new(p, p->nnodes, root);
	struct opnd *ops = g < 0 ? NULL : imp_palloc(p, (size_t)(b->nops ? b->nops : 1) * sizeof(*ops));
	if (ops == NULL) {
		imp_nb_free(b);
		return -1;
	}
	memcpy(ops, b->ops, (size_t)b->nops * sizeof(*ops));
	struct gnode *n = &p->nodes[p->nnodes++];
	memset(n, 0, sizeof(*n));
	n->op = b->op;
	n->call = b->call;
	n->line = p->line;
	n->nops = b->nops;
	n->ops = ops;
	n->attrs = b->attrs;
	n->value = g;
	n->inplace_src = -1;
	n->alive = 1;
	p->gv[g].is_tuple = tuple;
	memset(b, 0, sizeof(*b));
	return g;
}

struct pv *imp_tensor_pv(struct prog *p, int g, int tuple)
{
	if (g < 0)
		return NULL;
	struct pv *v = imp_pv_new(p, tuple ? PV_GTUPLE : PV_TENSOR);
	if (v)
		v->gv = g;
	return v;
}

/* Turns the just-emitted node g into an in-place update of tensor object
 * self: everything sharing self's storage goes stale, self moves to g. */
void imp_make_inplace(struct prog *p, struct pv *self, int g)
{
	int old = self->gv, root = p->gv[old].root;
	for (int i = 0; i < p->ngv; i++)
		if (p->gv[i].root == root && i != g && !p->gv[i].stale_line)
			p->gv[i].stale_line = p->line;
	p->gv[g].root = root;
	p->gv[g].hint = p->gv[old].name ? p->gv[old].name : p->gv[old].hint;
	p->nodes[p->gv[g].node].inplace_src = old;
	self->gv = g;
}

/* ---- constants to JSON -------------------------------------------------------- */

json_t *imp_const_json(struct prog *p, const struct pv *v, const char *what, int depth)
{
	json_t *j = NULL;
	if (depth > MAX_DEPTH)
		return imp_perr(p, p->line, "%s: nested too deeply", what);
	switch (v->k) {
	case PV_NONE: j = json_null(); break;
	case PV_BOOL: j = json_boolean(v->i); break;
	case PV_INT: j = json_integer(v->i); break;
	case PV_FLOAT:
		if (!isfinite(v->f))
			return imp_perr(p, p->line, "%s: not a finite number", what);
		j = json_real(v->f);
		break;
	case PV_STR:
		j = json_stringn(v->s, v->slen);
		if (j == NULL)
			return imp_perr(p, p->line, "%s: string is not valid UTF-8", what);
		break;
	case PV_DTYPE: j = json_string(v->s); break;
	case PV_SEQ:
		if ((j = json_array()) == NULL)
			return imp_prog_oom(p);
		for (int i = 0; i < v->n; i++) {
			json_t *e = imp_const_json(p, v->items[i], what, depth + 1);
			if (e == NULL || json_array_append_new(j, e)) {
				json_decref(j);
				return p->failed ? NULL : imp_prog_oom(p);
			}
		}
		return j;
	default:
		return imp_perr(p, p->line, "%s: expected a constant, got %s", what, imp_kind_name(v));
	}
	return j ? j : imp_prog_oom(p);
}
