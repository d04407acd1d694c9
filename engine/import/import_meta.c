/* import_meta.c - weight_meta.py (import_int.h): each input's name, shape,
 * dtype and value range, read by literal evaluation. */
#define _POSIX_C_SOURCE 200809L
#include "import_int.h"

/* ---- weight_meta.py ----------------------------------------------------------- */

static int meta_number(struct prog *p, struct pv *v, const char *cls, const char *field, int line,
		       double *out, int *is_int)
{
	if (v->k != PV_INT && v->k != PV_FLOAT) {
		imp_perr(p, line, "class %s: %s must be a number or None, got %s", cls, field, imp_kind_name(v));
		return -1;
	}
	*out = imp_num_val(v);
	*is_int = v->k == PV_INT;
	if (!isfinite(*out)) {
		imp_perr(p, line, "class %s: %s is not finite", cls, field);
		return -1;
	}
	return 0;
}

static int meta_entry_set(struct prog *p, struct meta_entry *e, const char *cls, const char *field,
			  struct pv *v, int line)
{
	static const char *const nums[] = {"mean", "std", "min_val", "max_val"};
	if (!strcmp(field, "name")) {
		if (v->k != PV_STR || v->slen == 0 || strlen(v->s) != v->slen) {
			imp_perr(p, line, "class %s: name must be a string", cls);
			return -1;
		}
		e->name = v->s;
		return 0;
	}
	if (!strcmp(field, "shape")) {
		if (v->k != PV_SEQ) {
			imp_perr(p, line, "class %s: shape must be a list of ints", cls);
			return -1;
		}
		if (v->n > GRAPH_MAX_DIMS) {
			imp_perr(p, line, "class %s: shape has %d dims (at most %d)", cls, v->n, GRAPH_MAX_DIMS);
			return -1;
		}
		for (int k = 0; k < v->n; k++) {
			if (v->items[k]->k != PV_INT || v->items[k]->i < 0) {
				imp_perr(p, line, "class %s: shape must be a list of ints >= 0", cls);
				return -1;
			}
			e->shape[k] = v->items[k]->i;
		}
		e->ndim = v->n;
		return 0;
	}
	if (!strcmp(field, "dtype")) {
		const char *s = v->k == PV_STR ? v->s : v->k == PV_DTYPE ? v->s : NULL;
		enum graph_dtype dt = s ? graph_dtype_parse(s) : DT_INVALID;
		if (s == NULL) {
			imp_perr(p, line, "class %s: dtype must be a string like \"torch.float32\"", cls);
			return -1;
		}
		if (dt == DT_INVALID) {
			imp_perr(p, line, "class %s: unsupported dtype '%.40s'", cls, s);
			return -1;
		}
		e->dtype = graph_dtype_name(dt);
		return 0;
	}
	for (int k = 0; k < 4; k++)
		if (!strcmp(field, nums[k])) {
			if (v->k == PV_NONE) {
				e->has[k] = 0;
				return 0;
			}
			e->has[k] = 1;
			return meta_number(p, v, cls, field, line, &e->num[k], &e->num_is_int[k]);
		}
	if (!strcmp(field, "data")) {
		if (v->k == PV_NONE) {
			e->data = NULL;
			return 0;
		}
		if (v->k != PV_SEQ) {
			imp_perr(p, line, "class %s: data must be a list of numbers", cls);
			return -1;
		}
		e->data = v;
		return 0;
	}
	return 0;       /* original_name, device, ...: not needed */
}

int imp_parse_meta(struct prog *p)
{
	if (imp_tokenize(p))
		return -1;
	p->meta_mode = 1;
	int L = 0, cap = 0;
	while (L < p->nlines) {
		struct lline *ln = &p->lines[L];
		struct tok *t = &p->toks[ln->start];
		p->line = ln->line;
		if (ln->indent != 0) {
			imp_perr(p, ln->line, "unexpected indent");
			return -1;
		}
		if (imp_is_kw(t, "import") || imp_is_kw(t, "from")) {
			L++;
			continue;
		}
		if (imp_is_class_header(p, ln) <= 0) {
			imp_perr(p, ln->line, "unsupported statement (weight_meta.py holds classes of field = value)");
			return -1;
		}
		const char *cls = p->toks[ln->start + 1].s;
		if (imp_grow(p, (void **)&p->meta, &cap, p->nmeta, sizeof(struct meta_entry), MAX_VALUES))
			return -1;
		struct meta_entry *e = &p->meta[p->nmeta++];
		memset(e, 0, sizeof(*e));
		e->line = ln->line;
		e->ndim = -1;
		L++;
		int body = L < p->nlines ? p->lines[L].indent : 0;
		if (body == 0) {
			imp_perr(p, ln->line, "class %s has no body", cls);
			return -1;
		}
		for (; L < p->nlines && p->lines[L].indent > 0; L++) {
			struct lline *m = &p->lines[L];
			struct tok *k = &p->toks[m->start];
			p->line = m->line;
			if (m->indent != body) {
				imp_perr(p, m->line, "unexpected indent");
				return -1;
			}
			if (imp_is_kw(k, "pass") || (k->t == TK_STR && m->end == m->start + 1))
				continue;
			if (k->t != TK_NAME || imp_is_keyword(k->s) || m->end - m->start < 3 ||
			    !imp_is_op(&p->toks[m->start + 1], "=")) {
				imp_perr(p, m->line, "class %s: expected field = value", cls);
				return -1;
			}
			p->pos = m->start + 2;
			p->depth = 0;
			struct pv *v = imp_ev_exprlist(p, NULL, 0);
			if (v == NULL || meta_entry_set(p, e, cls, k->s, v, m->line))
				return -1;
		}
		if (e->name == NULL || e->ndim < 0 || e->dtype == NULL) {
			imp_perr(p, e->line, "class %s: needs name, shape and dtype", cls);
			return -1;
		}
		void **prev = base_map_get(&p->names, e->name);
		if (prev) {
			imp_perr(p, e->line, "class %s: a second entry for '%s' (first at line %d)", cls, e->name,
			     ((struct meta_entry *)p->meta)[(intptr_t)*prev - 1].line);
			return -1;
		}
		if (base_map_put(&p->names, e->name, (void *)(intptr_t)p->nmeta)) {
			imp_prog_oom(p);
			return -1;
		}
	}
	return 0;
}

/* The weight_meta entry of each forward argument (index into w->meta, or -1). */
int *imp_map_args(struct prog *m, struct prog *w)
{
	int *map = imp_palloc(w, (size_t)(m->nargs ? m->nargs : 1) * sizeof(int));
	if (map == NULL)
		return NULL;
	for (int i = 0; i < m->nargs; i++) {
		void **slot = base_map_get(&w->names, m->gv[i].py);
		map[i] = slot ? (int)(intptr_t)*slot - 1 : -1;
	}
	return map;
}
