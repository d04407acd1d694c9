/* import.c - GraphNet/PassNet samples to graph.json (see import.h).
 *
 * The pipeline, per sample:
 *
 *   model.py --tokenize--> tokens --split--> logical lines
 *            --evaluate statement by statement--> nodes (struct prog)
 *   weight_meta.py --same tokenizer, literal evaluation--> input entries
 *
 * then, over all samples: dead-code elimination, a structural comparison of
 * the programs (variants must be the same graph), one JSON variant per sample,
 * and graph_load_json() as the judge of the result.
 *
 * The evaluator runs the forward body like Python would, on symbolic values: a
 * Python name is bound to a value object (struct pv); a tensor object refers
 * to a graph value (struct gval), the SSA name of its current contents.  An
 * in-place op (`x += y`, `relu(x, inplace=True)`) creates a new graph value
 * and points the tensor object at it, so every alias follows; other objects
 * that share its storage (views of it, or what it is a view of) keep the old
 * contents in the graph, which would be wrong, so they are marked stale and
 * using one later is an error rather than a silently different graph.
 *
 * Memory: everything a program allocates lives in its arena and dies with it,
 * except jansson objects (operand scalars and attrs), released in prog_free().
 */
#define _POSIX_C_SOURCE 200809L
#include "import_int.h"

/* ---- programs ------------------------------------------------------------------ */

static void prog_free(struct prog *p)
{
	if (p == NULL)
		return;
	for (int i = 0; i < p->nnodes; i++) {
		for (int k = 0; k < p->nodes[i].nops; k++)
			json_decref(p->nodes[i].ops[k].scalar);
		json_decref(p->nodes[i].attrs);
	}
	free(p->nodes);
	free(p->gv);
	free(p->toks);
	free(p->meta);
	base_map_free(&p->env);
	base_map_free(&p->aliases);
	base_map_free(&p->names);
	base_map_free(&p->suffix);
	imp_arena_free(&p->ar);
}

/* Drops nodes whose values nothing uses, then unused arguments; warns. */
static void prune(struct prog *p, const struct import_options *opt)
{
	for (int i = 0; i < p->nout; i++)
		p->gv[p->outputs[i]].used = 1;
	for (int i = p->nnodes - 1; i >= 0; i--) {
		struct gnode *n = &p->nodes[i];
		if (!p->gv[n->value].used) {
			n->alive = 0;
			continue;
		}
		for (int k = 0; k < n->nops; k++)
			if (n->ops[k].k == O_VALUE)
				p->gv[n->ops[k].gv].used = 1;
	}
	char msg[512];
	for (int i = 0; i < p->nnodes; i++)
		if (p->nodes[i].dup_output && opt && opt->warn) {
			struct gnode *n = &p->nodes[i];
			snprintf(msg, sizeof(msg), "%s:%d: %s is returned more than once; the repeat is the copy %s",
				 p->label, n->line, p->gv[n->ops[0].gv].name, p->gv[n->value].name);
			opt->warn(opt->warn_ctx, msg);
		}
	for (int i = 0; i < p->nnodes; i++)
		if (!p->nodes[i].alive && opt && opt->warn) {
			snprintf(msg, sizeof(msg), "%s:%d: %s (%s) is never used; dropped", p->label,
				 p->nodes[i].line, p->gv[p->nodes[i].value].name, p->nodes[i].op);
			opt->warn(opt->warn_ctx, msg);
		}
	for (int i = 0; i < p->nargs; i++)
		if (!p->gv[i].used && opt && opt->warn) {
			snprintf(msg, sizeof(msg), "%s: forward argument %s is never used; dropped", p->label,
				 p->gv[i].py);
			opt->warn(opt->warn_ctx, msg);
		}
}

/* Compares the structure of two programs; 0 or -1 with the first difference. */
static int compare_progs(const struct prog *a, const struct prog *b, const char *an, const char *bn,
			 char *err, size_t errlen)
{
	if (a->nargs != b->nargs) {
		snprintf(err, errlen, "samples %s and %s differ: forward() takes %d arguments in the first, %d in "
			 "the second", an, bn, a->nargs, b->nargs);
		return -1;
	}
	for (int i = 0; i < a->nargs; i++)
		if (strcmp(a->gv[i].py, b->gv[i].py)) {
			snprintf(err, errlen, "samples %s and %s differ: forward() argument %d is %s in the first, "
				 "%s in the second", an, bn, i + 1, a->gv[i].py, b->gv[i].py);
			return -1;
		}
	int i = 0, j = 0;
	for (;;) {
		while (i < a->nnodes && !a->nodes[i].alive)
			i++;
		while (j < b->nnodes && !b->nodes[j].alive)
			j++;
		if (i >= a->nnodes || j >= b->nnodes)
			break;
		const struct gnode *x = &a->nodes[i], *y = &b->nodes[j];
		const char *xn = a->gv[x->value].name, *yn = b->gv[y->value].name;
		int same = !strcmp(x->op, y->op) && !strcmp(xn, yn) && x->nops == y->nops;
		for (int k = 0; same && k < x->nops; k++) {
			same = x->ops[k].k == y->ops[k].k;
			if (same && x->ops[k].k == O_VALUE)
				same = !strcmp(a->gv[x->ops[k].gv].name, b->gv[y->ops[k].gv].name);
		}
		if (!same) {
			snprintf(err, errlen, "samples %s and %s differ: %s = %s(...) at %s:%d, but %s = %s(...) at "
				 "%s:%d (operands or op differ)", an, bn, xn, x->op, a->label, x->line, yn, y->op,
				 b->label, y->line);
			return -1;
		}
		i++;
		j++;
	}
	if (i < a->nnodes || j < b->nnodes) {
		const struct prog *l = i < a->nnodes ? a : b;
		const struct gnode *x = i < a->nnodes ? &a->nodes[i] : &b->nodes[j];
		snprintf(err, errlen, "samples %s and %s differ: only %s has %s = %s(...) at %s:%d", an, bn,
			 l == a ? an : bn, l->gv[x->value].name, x->op, l->label, x->line);
		return -1;
	}
	if (a->nout != b->nout) {
		snprintf(err, errlen, "samples %s and %s differ: %d outputs in the first, %d in the second", an, bn,
			 a->nout, b->nout);
		return -1;
	}
	for (int k = 0; k < a->nout; k++)
		if (strcmp(a->gv[a->outputs[k]].name, b->gv[b->outputs[k]].name)) {
			snprintf(err, errlen, "samples %s and %s differ: output %d is %s in the first, %s in the second",
				 an, bn, k + 1, a->gv[a->outputs[k]].name, b->gv[b->outputs[k]].name);
			return -1;
		}
	return 0;
}

static int flatten_data(struct prog *p, struct pv *v, json_t *arr, int as_int, const char *cls, int line,
			int depth)
{
	if (depth > 16) {
		imp_perr(p, line, "entry %s: data nested too deeply", cls);
		return -1;
	}
	for (int i = 0; i < v->n; i++) {
		struct pv *e = v->items[i];
		json_t *j;
		if (e->k == PV_SEQ) {
			if (flatten_data(p, e, arr, as_int, cls, line, depth + 1))
				return -1;
			continue;
		}
		if (!imp_is_num(e) || (e->k == PV_FLOAT && !isfinite(e->f))) {
			imp_perr(p, line, "entry %s: data must hold finite numbers, found %s", cls, imp_kind_name(e));
			return -1;
		}
		if (as_int && e->k == PV_FLOAT && e->f != floor(e->f)) {
			imp_perr(p, line, "entry %s: data of an integer tensor holds %g", cls, e->f);
			return -1;
		}
		if (as_int)
			j = json_integer(e->k == PV_FLOAT ? (long long)e->f : e->i);
		else
			j = json_real(imp_num_val(e));
		if (j == NULL || json_array_append_new(arr, j)) {
			imp_prog_oom(p);
			return -1;
		}
	}
	return 0;
}

static int is_forward_arg(const struct prog *m, const char *name)
{
	for (int i = 0; i < m->nargs; i++)
		if (!strcmp(m->gv[i].py, name))
			return 1;
	return 0;
}

/* The JSON of one variant: model program m, weight_meta w. */
static json_t *variant_json(struct prog *m, struct prog *w, const int *argmeta, const char *vname,
			    const struct import_options *opt)
{
	json_t *v = json_object(), *ins = json_array(), *nodes = json_array(), *outs = json_array();
	if (!v || !ins || !nodes || !outs || json_object_set_new(v, "name", json_string(vname)) ||
	    json_object_set(v, "inputs", ins) || json_object_set(v, "nodes", nodes) ||
	    json_object_set(v, "outputs", outs))
		goto oom;
	for (int i = 0; i < m->nargs; i++) {
		if (!m->gv[i].used)
			continue;
		if (argmeta[i] < 0) {
			imp_perr(w, 0, "no entry with name = \"%s\" (forward argument %d of %s)", m->gv[i].py, i + 1,
			     m->label);
			goto fail;
		}
		struct meta_entry *e = &w->meta[argmeta[i]];
		json_t *in = json_object(), *shape = json_array();
		if (json_array_append_new(ins, in) || json_object_set_new(in, "name", json_string(m->gv[i].name)) ||
		    json_object_set_new(in, "shape", shape) ||
		    json_object_set_new(in, "dtype", json_string(e->dtype)))
			goto oom;
		for (int d = 0; d < e->ndim; d++)
			if (json_array_append_new(shape, json_integer(e->shape[d])))
				goto oom;
		static const char *const keys[] = {"mean", "std", "min", "max"};
		for (int k = 0; k < 4; k++)
			if (e->has[k] && json_object_set_new(in, keys[k], e->num_is_int[k] && k >= 2
							     ? json_integer((long long)e->num[k]) : json_real(e->num[k])))
				goto oom;
		if (e->data) {
			json_t *d = json_array();
			int as_int = !graph_dtype_is_float(graph_dtype_parse(e->dtype));
			if (d == NULL || json_object_set_new(in, "data", d))
				goto oom;
			if (flatten_data(w, e->data, d, as_int, e->name, e->line, 0))
				goto fail;
		}
	}
	if (opt && opt->warn)
		for (int k = 0; k < w->nmeta; k++) {
			if (!is_forward_arg(m, w->meta[k].name)) {
				char msg[512];
				snprintf(msg, sizeof(msg), "%s:%d: entry '%s' is not an argument of forward(); ignored",
					 w->label, w->meta[k].line, w->meta[k].name);
				opt->warn(opt->warn_ctx, msg);
			}
		}
	for (int i = 0; i < m->nnodes; i++) {
		struct gnode *n = &m->nodes[i];
		if (!n->alive)
			continue;
		json_t *j = json_object(), *in = json_array();
		if (json_array_append_new(nodes, j) || json_object_set_new(j, "name", json_string(m->gv[n->value].name)) ||
		    json_object_set_new(j, "op", json_string(n->op)) || json_object_set_new(j, "inputs", in))
			goto oom;
		for (int k = 0; k < n->nops; k++) {
			json_t *o = n->ops[k].k == O_NULL ? json_null()
				: n->ops[k].k == O_SCALAR ? json_deep_copy(n->ops[k].scalar)
				: json_string(m->gv[n->ops[k].gv].name);
			if (json_array_append_new(in, o))
				goto oom;
		}
		if (n->attrs && json_object_set_new(j, "attrs", json_deep_copy(n->attrs)))
			goto oom;
	}
	for (int k = 0; k < m->nout; k++)
		if (json_array_append_new(outs, json_string(m->gv[m->outputs[k]].name)))
			goto oom;
	json_decref(ins);
	json_decref(nodes);
	json_decref(outs);
	return v;
oom:
	imp_prog_oom(w);
fail:
	json_decref(ins);
	json_decref(nodes);
	json_decref(outs);
	json_decref(v);
	return NULL;
}

char *import_model_name(const char *name, char *buf, size_t len)
{
	if (len == 0)
		return buf;
	const char *s = name;
	/* fixture prefix: one lowercase letter, two digits, '_' */
	if (islower((unsigned char)s[0]) && isdigit((unsigned char)s[1]) && isdigit((unsigned char)s[2]) &&
	    s[3] == '_' && s[4])
		s += 4;
	size_t n = strlen(s);
	/* GraphNet suffix: [_G]_startA_endB[_K] */
	const char *st = NULL;
	for (const char *q = s; (q = strstr(q, "_start")) != NULL; q++)
		st = q;
	if (st && st > s) {
		const char *q = st + 6;
		int ok = isdigit((unsigned char)*q);
		while (isdigit((unsigned char)*q))
			q++;
		ok = ok && !strncmp(q, "_end", 4) && isdigit((unsigned char)q[4]);
		if (ok) {
			n = (size_t)(st - s);
			/* a graph index before _start */
			size_t k = n;
			while (k > 0 && isdigit((unsigned char)s[k - 1]))
				k--;
			if (k < n && k > 1 && s[k - 1] == '_')
				n = k - 1;
		}
	}
	if (n >= len)
		n = len - 1;
	memcpy(buf, s, n);
	buf[n] = 0;
	return buf;
}

/* "add > layer_norm > sigmoid x5 (albert-xlarge-v1)" */
static char *make_summary(const struct prog *m, const struct import_sample *s, int n)
{
	size_t cap = 4096, len = 0;
	char *out = malloc(cap);
	if (out == NULL)
		return NULL;
	out[0] = 0;
	const char *prev = NULL;
	int run = 0;
	for (int i = 0; i <= m->nnodes; i++) {
		const char *op = NULL;
		if (i < m->nnodes) {
			if (!m->nodes[i].alive)
				continue;
			op = m->nodes[i].op;
		}
		if (prev && op && !strcmp(prev, op)) {
			run++;
			continue;
		}
		if (prev) {
			int w = run > 1 ? snprintf(out + len, cap - len, "%s%s x%d", len ? " > " : "", prev, run)
					: snprintf(out + len, cap - len, "%s%s", len ? " > " : "", prev);
			if (w < 0 || (size_t)w >= cap - len) {
				/* keep the line bounded */
				snprintf(out + cap - 8, 8, " ...");
				len = strlen(out);
				break;
			}
			len += (size_t)w;
		}
		prev = op;
		run = 1;
	}
	if (len == 0)
		len += (size_t)snprintf(out, cap, "identity");
	char model[256];
	import_model_name(s[0].name, model, sizeof(model));
	for (int i = 1; i < n; i++) {
		char other[256];
		if (strcmp(import_model_name(s[i].name, other, sizeof(other)), model)) {
			snprintf(model + strlen(model), sizeof(model) - strlen(model), " and others");
			break;
		}
	}
	if (model[0] && len + strlen(model) + 10 < cap)
		snprintf(out + len, cap - len, " (%s)", model);
	/* one printable ASCII line, whatever the directory names hold */
	for (char *q = out; *q; q++)
		if ((unsigned char)*q < 0x20 || (unsigned char)*q >= 0x7f)
			*q = '?';
	return out;
}

/* The float dtype holding most input elements (the activations' dtype; ties
 * go to the earlier argument), else the first input's dtype. */
static const char *variant_dtype(const struct prog *m, const struct prog *w, const int *argmeta)
{
	double count[DT_COUNT] = {0};
	int first = -1, order[DT_COUNT], norder = 0;
	for (int i = 0; i < m->nargs; i++) {
		if (!m->gv[i].used || argmeta[i] < 0)
			continue;
		const struct meta_entry *e = &w->meta[argmeta[i]];
		enum graph_dtype dt = graph_dtype_parse(e->dtype);
		if (dt == DT_INVALID)
			continue;
		if (first < 0)
			first = dt;
		double numel = 1;
		for (int d = 0; d < e->ndim; d++)
			numel *= (double)e->shape[d];
		int seen = 0;
		for (int k = 0; k < norder; k++)
			seen |= order[k] == (int)dt;
		if (!seen)
			order[norder++] = dt;
		count[dt] += numel + 1;   /* +1: an empty tensor still counts */
	}
	int best = -1;
	for (int k = 0; k < norder; k++) {
		int d = order[k];
		if (graph_dtype_is_float((enum graph_dtype)d) && (best < 0 || count[d] > count[best]))
			best = d;
	}
	if (best < 0)
		best = first;
	return best < 0 ? "float32" : graph_dtype_name((enum graph_dtype)best);
}

static int valid_variant_name(const char *s)
{
	size_t n = strlen(s);
	if (n == 0 || n > MAX_NAME_LEN)
		return 0;
	for (size_t i = 0; i < n; i++)
		if (!(isalnum((unsigned char)s[i]) || s[i] == '_' || s[i] == '.' || s[i] == '-'))
			return 0;
	return 1;
}

/* After inference: an in-place op keeps its target's dtype and shape in
 * PyTorch; a graph op that would change them is not the same program. */
static int check_inplace(struct prog *m, const struct graph_task *t, const struct import_sample *s,
			 char *err, size_t errlen)
{
	for (int i = 0; i < m->nnodes; i++) {
		struct gnode *n = &m->nodes[i];
		if (!n->alive || n->inplace_src < 0)
			continue;
		for (int vi = 0; vi < t->n_variants; vi++) {
			const struct graph_variant *v = &t->variants[vi];
			int a = graph_find_value(v, m->gv[n->value].name);
			int b = graph_find_value(v, m->gv[n->inplace_src].name);
			if (a < 0 || b < 0)
				continue;
			const struct graph_value *x = &v->values[a], *y = &v->values[b];
			int same = x->dtype == y->dtype && x->shape.ndim == y->shape.ndim;
			for (int d = 0; same && d < x->shape.ndim; d++)
				same = x->shape.d[d] == y->shape.d[d];
			if (!same) {
				char s1[128], s2[128];
				graph_shape_str(&y->shape, s1, sizeof(s1));
				graph_shape_str(&x->shape, s2, sizeof(s2));
				snprintf(err, errlen,
					 "%s:%d: in-place %s on %s %s%s would give %s%s in variant '%s'; "
					 "PyTorch keeps the target's dtype and shape: not supported",
					 s[vi].model_label, n->line, n->op, m->gv[n->inplace_src].name,
					 graph_dtype_name(y->dtype), s1, graph_dtype_name(x->dtype), s2, v->name);
				return -1;
			}
		}
	}
	return 0;
}

/* Python's rule for `a, b = t`: t must have exactly as many elements as
 * there are names; a tuple op's length is known only now.  Returns 0, or -1
 * with err naming the sample, line and variant. */
static int check_unpack(struct prog *m, const struct graph_task *t, const struct import_sample *s, char *err,
			size_t errlen)
{
	for (int i = 0; i < m->nnodes; i++) {
		struct gnode *n = &m->nodes[i];
		if (!n->alive || !n->unpacked)
			continue;
		for (int vi = 0; vi < t->n_variants; vi++) {
			const struct graph_variant *v = &t->variants[vi];
			for (int k = 0; k < v->n_nodes; k++) {
				const struct graph_node *g = &v->nodes[k];
				if (strcmp(g->name, m->gv[n->value].name) || g->n_results == n->unpacked)
					continue;
				snprintf(err, errlen, "%s:%d: cannot unpack the %d tensors of %s (%s) into %d names "
					 "in variant '%s'", s[vi].model_label, n->unpack_line, g->n_results, g->name,
					 n->op, n->unpacked, v->name);
				return -1;
			}
		}
	}
	return 0;
}

/* The validator names variants and nodes; say which sample and line they are. */
static void explain_graph_error(const struct prog *models, const struct import_sample *s, char *const *vnames,
				int n, char *err, size_t errlen)
{
	char key[160];
	for (int i = 0; i < n; i++) {
		snprintf(key, sizeof(key), "variant '%s'", vnames[i]);
		if (!strstr(err, key))
			continue;
		const struct prog *m = &models[i];
		size_t l = strlen(err);
		for (int k = 0; k < m->nnodes; k++) {
			snprintf(key, sizeof(key), "node '%s'", m->gv[m->nodes[k].value].name);
			if (m->nodes[k].alive && strstr(err, key)) {
				snprintf(err + l, errlen - l, " (at %s:%d)", m->label, m->nodes[k].line);
				return;
			}
		}
		snprintf(err + l, errlen - l, " (variant %s is %s)", vnames[i], s[i].name);
		return;
	}
}

int import_build(const struct import_sample *s, int n, const struct import_options *opt,
		 json_t **json_out, struct graph_task **task_out, char *err, size_t errlen)
{
	struct prog *models = NULL, *metas = NULL;
	json_t *root = NULL, *vars = NULL;
	struct graph_task *task = NULL;
	char **vnames = NULL;
	int **argmeta = NULL;
	char *summary = NULL;
	int rc = -1;
	*json_out = NULL;
	if (task_out)
		*task_out = NULL;
	if (errlen)
		err[0] = 0;
	if (n < 1 || n > MAX_SAMPLES || opt == NULL || opt->id == NULL) {
		snprintf(err, errlen, "import: need 1 to %d samples and a task id", MAX_SAMPLES);
		return -1;
	}
	models = calloc((size_t)n, sizeof(*models));
	metas = calloc((size_t)n, sizeof(*metas));
	vnames = calloc((size_t)n, sizeof(*vnames));
	argmeta = calloc((size_t)n, sizeof(*argmeta));
	if (!models || !metas || !vnames || !argmeta) {
		snprintf(err, errlen, "out of memory");
		goto out;
	}
	for (int i = 0; i < n; i++) {
		struct prog *m = &models[i], *w = &metas[i];
		m->label = s[i].model_label ? s[i].model_label : "model.py";
		m->text = s[i].model ? s[i].model : "";
		m->len = s[i].model ? s[i].model_len : 0;
		m->err = err;
		m->errlen = errlen;
		w->label = s[i].meta_label ? s[i].meta_label : "weight_meta.py";
		w->text = s[i].meta;
		w->len = s[i].meta_len;
		w->err = err;
		w->errlen = errlen;
		if (s[i].name == NULL) {
			snprintf(err, errlen, "import: sample %d has no name", i + 1);
			goto out;
		}
		if (m->len > MAX_TEXT || w->len > MAX_TEXT) {
			snprintf(err, errlen, "%s: larger than %zu MiB", m->len > MAX_TEXT ? m->label : w->label,
				 MAX_TEXT >> 20);
			goto out;
		}
		if (s[i].meta == NULL) {
			/* name the sample's directory, as the model label shows it */
			const char *ml = m->label;
			size_t dl = strlen(ml);
			if (dl >= 8 && !strcmp(ml + dl - 8, "model.py"))
				dl -= 8;
			else
				ml = s[i].name, dl = strlen(ml);
			snprintf(err, errlen, "%.*s%s: no weight_meta.py (needed for input shapes and dtypes)",
				 (int)(dl > 400 ? 400 : dl), ml, dl && ml[dl - 1] == '/' ? "" : "/");
			goto out;
		}
		if (imp_parse_model(m) || imp_parse_meta(w))
			goto out;
		if ((argmeta[i] = imp_map_args(m, w)) == NULL)
			goto out;
		prune(m, i == 0 ? opt : NULL);
		if (i > 0 && compare_progs(&models[0], m, s[0].name, s[i].name, err, errlen))
			goto out;
	}

	/* variant names: given ones first, then dtype_K skipping taken names */
	for (int i = 0; i < n; i++) {
		if (!s[i].variant)
			continue;
		if (!valid_variant_name(s[i].variant)) {
			snprintf(err, errlen, "%s: variant name '%.60s' must match [A-Za-z0-9_.-]+", s[i].name,
				 s[i].variant);
			goto out;
		}
		for (int k = 0; k < i; k++)
			if (vnames[k] && !strcmp(vnames[k], s[i].variant)) {
				snprintf(err, errlen, "%s and %s: both are variant '%s'", s[k].name, s[i].name,
					 s[i].variant);
				goto out;
			}
		if ((vnames[i] = strdup(s[i].variant)) == NULL)
			goto nomem;
	}
	for (int i = 0; i < n; i++) {
		if (vnames[i])
			continue;
		const char *dt = variant_dtype(&models[i], &metas[i], argmeta[i]);
		char buf[64];
		for (int k = 0;; k++) {
			snprintf(buf, sizeof(buf), "%s_%d", dt, k);
			int taken = 0;
			for (int q = 0; q < n && !taken; q++)
				taken = vnames[q] && !strcmp(vnames[q], buf);
			if (!taken)
				break;
		}
		if ((vnames[i] = strdup(buf)) == NULL)
			goto nomem;
	}

	root = json_object();
	vars = json_array();
	summary = make_summary(&models[0], s, n);
	if (!root || !vars || !summary || json_object_set_new(root, "id", json_string(opt->id)) ||
	    json_object_set_new(root, "summary", json_string(summary)))
		goto nomem;
	if (json_object_get(root, "id") == NULL) {
		snprintf(err, errlen, "task id is not valid UTF-8");
		goto out;
	}
	{
		size_t cap = 256, len = 0;
		char *src = NULL;
		if (opt->source) {
			src = strdup(opt->source);
		} else if ((src = malloc(cap))) {
			src[0] = 0;
			for (int i = 0; i < n && src; i++) {
				size_t need = len + strlen(s[i].name) + 3;
				if (need > cap) {
					cap = need * 2;
					char *ns = realloc(src, cap);
					if (ns == NULL) {
						free(src);
						src = NULL;
						break;
					}
					src = ns;
				}
				len += (size_t)sprintf(src + len, "%s%s", i ? ", " : "", s[i].name);
			}
		}
		json_t *js = src ? json_string(src) : NULL;
		free(src);
		if (js == NULL || json_object_set_new(root, "source", js)) {
			snprintf(err, errlen, "out of memory, or a sample name is not valid UTF-8");
			goto out;
		}
	}
	if (json_object_set(root, "variants", vars))
		goto nomem;
	for (int i = 0; i < n; i++) {
		json_t *v = variant_json(&models[i], &metas[i], argmeta[i], vnames[i], opt);
		if (v == NULL)
			goto out;
		if (json_array_append_new(vars, v))
			goto nomem;
	}
	if (graph_load_json(opt->id, root, &task, err, errlen)) {
		explain_graph_error(models, s, vnames, n, err, errlen);
		goto out;
	}
	if (check_inplace(&models[0], task, s, err, errlen) || check_unpack(&models[0], task, s, err, errlen))
		goto out;
	*json_out = root;
	root = NULL;
	if (task_out) {
		*task_out = task;
		task = NULL;
	}
	rc = 0;
	goto out;
nomem:
	snprintf(err, errlen, "out of memory");
out:
	if (models)
		for (int i = 0; i < n; i++)
			prog_free(&models[i]);
	if (metas)
		for (int i = 0; i < n; i++)
			prog_free(&metas[i]);
	free(models);
	free(metas);
	if (vnames)
		for (int i = 0; i < n; i++)
			free(vnames[i]);
	free(vnames);
	free(argmeta);
	free(summary);
	json_decref(vars);
	json_decref(root);
	graph_task_free(task);
	/* one line, whatever the input's strings held */
	if (rc && errlen)
		for (char *q = err; *q; q++)
			if ((unsigned char)*q < 0x20 || *q == 0x7f)
				*q = ' ';
	return rc;
}
