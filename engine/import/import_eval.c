/* import_eval.c - the evaluator (import_int.h): expressions and statements of
 * a forward() body, run as Python would on symbolic values. */
#define _POSIX_C_SOURCE 200809L
#include "import_int.h"

/* ---- evaluation ----------------------------------------------------------------- */

static struct pv *ev_expr(struct prog *p);

static int fin_check(struct prog *p, double d)
{
	if (!isfinite(d)) {
		imp_perr(p, p->line, "arithmetic on constants gives a non-finite number");
		return -1;
	}
	return 0;
}

/* Python arithmetic on two numbers. */
static struct pv *fold(struct prog *p, const char *op, const struct pv *a, const struct pv *b)
{
	int ints = a->k != PV_FLOAT && b->k != PV_FLOAT;
	long long x = a->i, y = b->i, r;
	double fx = imp_num_val(a), fy = imp_num_val(b), fr;
	if (!strcmp(op, "+") || !strcmp(op, "-") || !strcmp(op, "*")) {
		if (ints) {
			int ovf = op[0] == '+' ? __builtin_add_overflow(x, y, &r)
				: op[0] == '-' ? __builtin_sub_overflow(x, y, &r)
				: __builtin_mul_overflow(x, y, &r);
			if (ovf)
				return imp_perr(p, p->line, "integer overflow in constant arithmetic");
			return imp_pv_int(p, r);
		}
		fr = op[0] == '+' ? fx + fy : op[0] == '-' ? fx - fy : fx * fy;
		return fin_check(p, fr) ? NULL : imp_pv_float(p, fr);
	}
	if (!strcmp(op, "/")) {
		if (fy == 0)
			return imp_perr(p, p->line, "division by zero");
		fr = fx / fy;
		return fin_check(p, fr) ? NULL : imp_pv_float(p, fr);
	}
	if (!strcmp(op, "//") || !strcmp(op, "%")) {
		if (fy == 0)
			return imp_perr(p, p->line, "division by zero");
		if (ints) {
			if (x == LLONG_MIN && y == -1)
				return imp_perr(p, p->line, "integer overflow in constant arithmetic");
			long long q = x / y, m = x % y;
			if (m != 0 && ((m < 0) != (y < 0))) {
				q -= 1;
				m += y;
			}
			return imp_pv_int(p, op[0] == '/' ? q : m);
		}
		double q = floor(fx / fy);
		fr = op[0] == '/' ? q : fx - q * fy;
		return fin_check(p, fr) ? NULL : imp_pv_float(p, fr);
	}
	if (!strcmp(op, "**")) {
		if (ints && y >= 0) {
			long long acc = 1;
			for (long long k = 0; k < y; k++) {
				if (__builtin_mul_overflow(acc, x, &acc))
					return imp_perr(p, p->line, "integer overflow in constant arithmetic");
				if (acc == 0 || acc == 1)
					break;
				if (acc == -1) {
					acc = ((y - k - 1) % 2 == 0) ? -1 : 1;
					break;
				}
			}
			return imp_pv_int(p, acc);
		}
		if (fx == 0 && fy < 0)
			return imp_perr(p, p->line, "division by zero");
		if (fx < 0 && fy != floor(fy))
			return imp_perr(p, p->line, "negative number to a fractional power");
		fr = pow(fx, fy);
		return fin_check(p, fr) ? NULL : imp_pv_float(p, fr);
	}
	return imp_perr(p, p->line, "unsupported operator '%s' on numbers", op);
}

static const char *binop_name(const char *op)
{
	for (int i = 0; imp_operators[i].sym; i++)
		if (!strcmp(op, imp_operators[i].sym))
			return graph_op_name(imp_operators[i].op);
	return NULL;
}

static int operand_of(struct prog *p, struct pv *v, struct opnd *o, const char *what)
{
	memset(o, 0, sizeof(*o));
	if (imp_is_num(v)) {
		o->k = O_SCALAR;
		o->scalar = imp_const_json(p, v, what, 0);
		return o->scalar ? 0 : -1;
	}
	o->k = O_VALUE;
	o->gv = imp_use_tensor(p, v, what);
	return o->gv < 0 ? -1 : 0;
}

/* a OP b; inplace_self: the tensor object an augmented assignment updates. */
static struct pv *binop(struct prog *p, const char *op, struct pv *a, struct pv *b, int inplace)
{
	if (imp_is_num(a) && imp_is_num(b))
		return fold(p, op, a, b);
	int ta = a->k == PV_TENSOR || a->k == PV_GTUPLE, tb = b->k == PV_TENSOR || b->k == PV_GTUPLE;
	const char *gop = binop_name(op);
	if (!(ta || tb) || !(ta || imp_is_num(a)) || !(tb || imp_is_num(b)))
		return imp_perr(p, p->line, "unsupported operand types for %s: %s and %s", op, imp_kind_name(a),
			    imp_kind_name(b));
	if (gop == NULL)
		return imp_perr(p, p->line, "unsupported operator '%s' on tensors", op);
	if (!strcmp(gop, "matmul") && !(ta && tb))
		return imp_perr(p, p->line, "'@' needs two tensors");
	struct nodebuild nb = {.op = gop, .call = op};
	char what[64];
	snprintf(what, sizeof(what), "operator %s", op);
	if (operand_of(p, a, &nb.ops[0], what) || (nb.nops = 1, operand_of(p, b, &nb.ops[1], what))) {
		imp_nb_free(&nb);
		return NULL;
	}
	nb.nops = 2;
	int g = imp_emit_node(p, &nb, 0, 0);
	if (g < 0)
		return NULL;
	if (inplace && ta) {
		imp_make_inplace(p, a, g);
		return a;
	}
	return imp_tensor_pv(p, g, 0);
}

/* Subscript items -> getitem "index" JSON. */
static json_t *index_json(struct prog *p, struct pv **items, int n)
{
	json_t *arr = json_array();
	if (arr == NULL)
		return imp_prog_oom(p);
	for (int i = 0; i < n; i++) {
		struct pv *v = items[i];
		json_t *e = NULL;
		switch (v->k) {
		case PV_INT: e = json_integer(v->i); break;
		case PV_NONE: e = json_null(); break;
		case PV_ELLIPSIS: e = json_string("..."); break;
		case PV_SLICE:
			e = json_array();
			for (int k = 0; e && k < 3; k++) {
				struct pv *s = v->items[k];
				if (s->k != PV_INT && s->k != PV_NONE) {
					json_decref(e);
					json_decref(arr);
					return imp_perr(p, p->line, "slice bounds must be ints or None, got %s",
						    imp_kind_name(s));
				}
				if (json_array_append_new(e, s->k == PV_INT ? json_integer(s->i) : json_null())) {
					json_decref(e);
					e = NULL;
				}
			}
			break;
		case PV_TENSOR: case PV_SEQ: case PV_BOOL: case PV_GTUPLE:
			json_decref(arr);
			return imp_perr(p, p->line, "indexing with %s (advanced indexing) is not supported",
				    imp_kind_name(v));
		default:
			json_decref(arr);
			return imp_perr(p, p->line, "unsupported index: %s", imp_kind_name(v));
		}
		if (e == NULL || json_array_append_new(arr, e)) {
			json_decref(arr);
			return imp_prog_oom(p);
		}
	}
	return arr;
}

struct pv *imp_getitem(struct prog *p, struct pv *base, struct pv **items, int n, int tuple_syntax)
{
	if (base->k == PV_SEQ) {
		if (n != 1 || tuple_syntax)
			return imp_perr(p, p->line, "unsupported index on %s", imp_kind_name(base));
		struct pv *ix = items[0];
		if (ix->k == PV_INT) {
			long long k = ix->i < 0 ? ix->i + base->n : ix->i;
			if (k < 0 || k >= base->n)
				return imp_perr(p, p->line, "index %lld out of range for %s of %d items", ix->i,
					    imp_kind_name(base), base->n);
			return base->items[k];
		}
		if (ix->k == PV_SLICE) {
			long long b3[3];
			for (int k = 0; k < 3; k++) {
				if (ix->items[k]->k != PV_INT && ix->items[k]->k != PV_NONE)
					return imp_perr(p, p->line, "slice bounds must be ints or None");
				b3[k] = ix->items[k]->k == PV_INT ? ix->items[k]->i : LLONG_MIN;
			}
			long long step = b3[2] == LLONG_MIN ? 1 : b3[2];
			if (step <= 0)
				return imp_perr(p, p->line, "only positive slice steps are supported on tuples");
			long long lo = b3[0] == LLONG_MIN ? 0 : b3[0], hi = b3[1] == LLONG_MIN ? base->n : b3[1];
			if (lo < 0)
				lo = lo + base->n < 0 ? 0 : lo + base->n;
			if (hi < 0)
				hi = hi + base->n < 0 ? 0 : hi + base->n;
			if (lo > base->n)
				lo = base->n;
			if (hi > base->n)
				hi = base->n;
			int cnt = 0;
			for (long long k = lo; k < hi; k += step)
				cnt++;
			struct pv *r = imp_pv_seq(p, cnt, base->is_list);
			if (r == NULL)
				return NULL;
			cnt = 0;
			for (long long k = lo; k < hi; k += step)
				r->items[cnt++] = base->items[k];
			return r;
		}
		return imp_perr(p, p->line, "unsupported index %s on %s", imp_kind_name(ix), imp_kind_name(base));
	}
	if (base->k == PV_GTUPLE) {
		if (n != 1 || tuple_syntax || items[0]->k != PV_INT)
			return imp_perr(p, p->line, "a tuple op's result can only be indexed with one int");
	} else if (base->k != PV_TENSOR) {
		return imp_perr(p, p->line, "cannot index %s", imp_kind_name(base));
	}
	struct nodebuild nb = {.op = graph_op_name(OP_GETITEM), .call = "[]"};
	if (base->k == PV_GTUPLE) {
		if (p->gv[base->gv].stale_line)
			return imp_perr(p, p->line, "%s is used after an in-place op at line %d changed what it "
				    "splits; not supported", imp_gv_label(p, base->gv), p->gv[base->gv].stale_line);
		nb.ops[0].gv = base->gv;
	} else if ((nb.ops[0].gv = imp_use_tensor(p, base, "[]")) < 0) {
		return NULL;
	}
	nb.ops[0].k = O_VALUE;
	nb.nops = 1;
	json_t *ix = index_json(p, items, n);
	if (ix == NULL || imp_nb_attr(p, &nb, "index", ix)) {
		imp_nb_free(&nb);
		return NULL;
	}
	return imp_tensor_pv(p, imp_emit_node(p, &nb, 1, 0), 0);
}

static struct pv *ev_subscript(struct prog *p, struct pv *base)
{
	struct pv *items[MAX_INDEX];
	int n = 0, comma = 0;
	int line = imp_cur(p)->line;
	while (!imp_is_op(imp_cur(p), "]")) {
		if (n >= MAX_INDEX)
			return imp_perr(p, line, "too many index items");
		struct pv *lo = &import_pv_none_obj, *hi = &import_pv_none_obj, *st = &import_pv_none_obj;
		int is_slice = 0;
		if (!imp_is_op(imp_cur(p), ":")) {
			if ((lo = ev_expr(p)) == NULL)
				return NULL;
		}
		if (imp_accept_op(p, ":")) {
			is_slice = 1;
			if (!imp_is_op(imp_cur(p), ":") && !imp_is_op(imp_cur(p), ",") && !imp_is_op(imp_cur(p), "]"))
				if ((hi = ev_expr(p)) == NULL)
					return NULL;
			if (imp_accept_op(p, ":"))
				if (!imp_is_op(imp_cur(p), ",") && !imp_is_op(imp_cur(p), "]"))
					if ((st = ev_expr(p)) == NULL)
						return NULL;
		}
		if (is_slice) {
			struct pv *s = imp_pv_new(p, PV_SLICE);
			if (s == NULL || (s->items = imp_palloc(p, 3 * sizeof(struct pv *))) == NULL)
				return NULL;
			s->n = 3;
			s->items[0] = lo;
			s->items[1] = hi;
			s->items[2] = st;
			items[n++] = s;
		} else {
			items[n++] = lo;
		}
		if (!imp_accept_op(p, ","))
			break;
		comma = 1;
	}
	if (imp_expect_op(p, "]"))
		return NULL;
	if (n == 0)
		return imp_perr(p, line, "empty subscript");
	/* x[(a, b)] is x[a, b]; x[[a, b]] is advanced indexing */
	if (n == 1 && !comma && items[0]->k == PV_SEQ && base->k != PV_SEQ) {
		struct pv *t = items[0];
		if (t->is_list)
			return imp_perr(p, line, "indexing with a list (advanced indexing) is not supported");
		if (t->n > MAX_INDEX || t->n == 0)
			return imp_perr(p, line, "unsupported index tuple");
		for (int k = 0; k < t->n; k++)
			items[k] = t->items[k];
		n = t->n;
		comma = 1;
	}
	return imp_getitem(p, base, items, n, comma);
}

/* The value of a dotted attribute on a module path: a dtype, or a longer path. */
static struct pv *path_attr(struct prog *p, const char *base, const char *name)
{
	if (!strcmp(base, "torch")) {
		for (int i = 0; imp_torch_dtypes[i].name; i++)
			if (!strcmp(imp_torch_dtypes[i].name, name)) {
				if (imp_torch_dtypes[i].dtype == NULL)
					return imp_perr(p, p->line, "unsupported dtype torch.%s", name);
				struct pv *v = imp_pv_new(p, PV_DTYPE);
				if (v)
					v->s = imp_torch_dtypes[i].dtype;
				return v;
			}
	}
	size_t bl = strlen(base), nl = strlen(name);
	if (bl + nl + 2 > MAX_PATH_LEN)
		return imp_perr(p, p->line, "dotted name too long");
	char *s = imp_palloc(p, bl + nl + 2);
	if (s == NULL)
		return NULL;
	memcpy(s, base, bl);
	s[bl] = '.';
	memcpy(s + bl + 1, name, nl + 1);
	struct pv *v = imp_pv_new(p, PV_PATH);
	if (v)
		v->s = s;
	return v;
}

static struct pv *lookup_name(struct prog *p, const char *name, int line)
{
	if (!strcmp(name, "None"))
		return &import_pv_none_obj;
	if (!strcmp(name, "True") || !strcmp(name, "False"))
		return imp_pv_bool(p, name[0] == 'T');
	if (imp_is_keyword(name))
		return imp_perr(p, line, "unsupported syntax: '%s'", name);
	void **slot = base_map_get(&p->env, name);
	if (slot) {
		if (*slot == NULL)
			return imp_perr(p, line, "name '%s' is used after del", name);
		return *slot;
	}
	if (!strcmp(name, "Ellipsis"))
		return &import_pv_ellipsis_obj;
	const char *path = NULL;
	void **al = base_map_get(&p->aliases, name);
	if (al)
		path = *al;
	else if (!strcmp(name, "torch") || !strcmp(name, "slice") || !strcmp(name, "device"))
		path = name;
	if (path == NULL)
		return imp_perr(p, line, "undefined name '%s'", name);
	struct pv *v = imp_pv_new(p, PV_PATH);
	if (v)
		v->s = path;
	return v;
}

static struct pv *ev_atom(struct prog *p)
{
	struct tok *k = imp_cur(p);
	char b[64];
	switch (k->t) {
	case TK_NAME:
		p->pos++;
		return lookup_name(p, k->s, k->line);
	case TK_INT:
		p->pos++;
		return imp_pv_int(p, k->iv);
	case TK_FLOAT:
		p->pos++;
		return imp_pv_float(p, k->fv);
	case TK_STR: {
		/* adjacent literals concatenate */
		size_t len = 0;
		int q = p->pos;
		for (; p->toks[q].t == TK_STR; q++) {
			if (len + p->toks[q].slen > MAX_TEXT)
				return imp_prog_oom(p);
			len += p->toks[q].slen;
		}
		char *s = imp_palloc(p, len + 1);
		if (s == NULL)
			return NULL;
		len = 0;
		for (; p->pos < q; p->pos++) {
			memcpy(s + len, p->toks[p->pos].s, p->toks[p->pos].slen);
			len += p->toks[p->pos].slen;
		}
		struct pv *v = imp_pv_new(p, PV_STR);
		if (v) {
			v->s = s;
			v->slen = len;
		}
		return v;
	}
	case TK_OP:
		if (imp_is_op(k, "...")) {
			p->pos++;
			return &import_pv_ellipsis_obj;
		}
		if (imp_is_op(k, "(")) {
			p->pos++;
			return imp_ev_exprlist(p, ")", 0);
		}
		if (imp_is_op(k, "[")) {
			p->pos++;
			return imp_ev_exprlist(p, "]", 1);
		}
		if (imp_is_op(k, "{"))
			return imp_perr(p, k->line, "dicts and sets are not supported");
		/* fallthrough */
	default:
		return imp_perr(p, k->line, "unexpected %s", imp_tok_desc(k, b, sizeof(b)));
	}
}

static struct pv *ev_call(struct prog *p, struct pv *fn)
{
	struct callargs *a = calloc(1, sizeof(*a));
	if (a == NULL)
		return imp_prog_oom(p);
	a->line = imp_cur(p)->line;
	struct pv *res = NULL;
	while (!imp_is_op(imp_cur(p), ")")) {
		if (imp_is_op(imp_cur(p), "*") || imp_is_op(imp_cur(p), "**")) {
			imp_perr(p, imp_cur(p)->line, "starred arguments are not supported");
			goto out;
		}
		if (a->npos + a->nkw >= MAX_ARGS) {
			imp_perr(p, imp_cur(p)->line, "too many arguments");
			goto out;
		}
		if (imp_cur(p)->t == TK_NAME && imp_is_op(&p->toks[p->pos + 1], "=")) {
			const char *kn = imp_cur(p)->s;
			for (int q = 0; q < a->nkw; q++)
				if (!strcmp(a->kwname[q], kn)) {
					imp_perr(p, imp_cur(p)->line, "keyword argument '%s' repeated", kn);
					goto out;
				}
			p->pos += 2;
			struct pv *v = ev_expr(p);
			if (v == NULL)
				goto out;
			a->kwname[a->nkw] = kn;
			a->kw[a->nkw++] = v;
		} else {
			if (a->nkw > 0) {
				imp_perr(p, imp_cur(p)->line, "positional argument after a keyword argument");
				goto out;
			}
			struct pv *v = ev_expr(p);
			if (v == NULL)
				goto out;
			a->pos[a->npos++] = v;
		}
		if (!imp_accept_op(p, ","))
			break;
	}
	if (imp_expect_op(p, ")"))
		goto out;
	res = imp_call_value(p, fn, a);
out:
	free(a);
	return res;
}

static struct pv *ev_primary(struct prog *p)
{
	struct pv *v = ev_atom(p);
	while (v) {
		struct tok *k = imp_cur(p);
		if (imp_is_op(k, ".")) {
			p->pos++;
			struct tok *nm = imp_cur(p);
			char b[64];
			if (nm->t != TK_NAME)
				return imp_perr(p, nm->line, "expected a name after '.', found %s",
					    imp_tok_desc(nm, b, sizeof(b)));
			p->pos++;
			if (v->k == PV_PATH) {
				v = path_attr(p, v->s, nm->s);
			} else if (v->k == PV_TENSOR || v->k == PV_GTUPLE) {
				if (!imp_is_op(imp_cur(p), "("))
					return imp_perr(p, nm->line, "unsupported tensor attribute .%s", nm->s);
				struct pv *m = imp_pv_new(p, PV_METHOD);
				if (m == NULL)
					return NULL;
				m->s = nm->s;
				m->self = v;
				v = m;
			} else {
				return imp_perr(p, nm->line, "unsupported attribute .%s of %s", nm->s, imp_kind_name(v));
			}
		} else if (imp_is_op(k, "(")) {
			p->pos++;
			v = ev_call(p, v);
		} else if (imp_is_op(k, "[")) {
			p->pos++;
			v = ev_subscript(p, v);
		} else {
			break;
		}
	}
	return v;
}

static struct pv *ev_factor(struct prog *p);

static struct pv *ev_power(struct prog *p)
{
	struct pv *a = ev_primary(p);
	if (a && imp_is_op(imp_cur(p), "**")) {
		if (++p->depth > MAX_DEPTH)
			return imp_perr(p, imp_cur(p)->line, "expression nested too deeply");
		p->pos++;
		struct pv *b = ev_factor(p);
		p->depth--;
		return b ? binop(p, "**", a, b, 0) : NULL;
	}
	return a;
}

static struct pv *ev_factor(struct prog *p)
{
	struct tok *k = imp_cur(p);
	if (imp_is_op(k, "-") || imp_is_op(k, "+") || imp_is_op(k, "~")) {
		if (++p->depth > MAX_DEPTH)
			return imp_perr(p, k->line, "expression nested too deeply");
		p->pos++;
		struct pv *v = ev_factor(p);
		p->depth--;
		if (v == NULL)
			return NULL;
		if (k->s[0] == '~')
			return imp_perr(p, k->line, "unsupported operator '~'");
		if (k->s[0] == '+') {
			if (imp_is_num(v) || v->k == PV_TENSOR)
				return v->k == PV_BOOL ? imp_pv_int(p, v->i) : v;
			return imp_perr(p, k->line, "bad operand for unary +: %s", imp_kind_name(v));
		}
		if (v->k == PV_FLOAT)
			return imp_pv_float(p, -v->f);
		if (v->k == PV_INT || v->k == PV_BOOL) {
			if (v->i == LLONG_MIN)
				return imp_perr(p, k->line, "integer overflow");
			return imp_pv_int(p, -v->i);
		}
		if (v->k == PV_TENSOR) {
			/* -x is x * -1: same values, dtype and shape as torch.neg */
			struct pv *m1 = imp_pv_int(p, -1);
			return m1 ? binop(p, "*", v, m1, 0) : NULL;
		}
		return imp_perr(p, k->line, "bad operand for unary -: %s", imp_kind_name(v));
	}
	return ev_power(p);
}

static struct pv *ev_term(struct prog *p)
{
	struct pv *a = ev_factor(p);
	while (a) {
		struct tok *k = imp_cur(p);
		if (!(imp_is_op(k, "*") || imp_is_op(k, "/") || imp_is_op(k, "@") || imp_is_op(k, "//") || imp_is_op(k, "%")))
			break;
		p->pos++;
		struct pv *b = ev_factor(p);
		if (b == NULL)
			return NULL;
		a = binop(p, k->s, a, b, 0);
	}
	return a;
}

static struct pv *ev_expr(struct prog *p)
{
	if (++p->depth > MAX_DEPTH)
		return imp_perr(p, imp_cur(p)->line, "expression nested too deeply");
	struct pv *a = ev_term(p);
	while (a) {
		struct tok *k = imp_cur(p);
		if (!(imp_is_op(k, "+") || imp_is_op(k, "-")))
			break;
		p->pos++;
		struct pv *b = ev_term(p);
		if (b == NULL) {
			a = NULL;
			break;
		}
		a = binop(p, k->s, a, b, 0);
	}
	p->depth--;
	return a;
}

/* expr (',' expr)* [','] up to `close` (consumed; NULL: a statement's end,
 * not consumed).  A comma, or brackets for a list, makes a SEQ. */
struct pv *imp_ev_exprlist(struct prog *p, const char *close, int is_list)
{
	struct pv *stack[64];
	struct pv **items = stack;
	int n = 0, cap = 64, comma = 0;
	struct pv *res = NULL;
	for (;;) {
		if (close ? imp_is_op(imp_cur(p), close) : imp_cur(p)->t == TK_NEWLINE)
			break;
		struct pv *v = ev_expr(p);
		if (v == NULL)
			goto out;
		if (n == cap) {
			if (cap >= (1 << 24)) {
				imp_perr(p, p->line, "sequence too long");
				goto out;
			}
			struct pv **ni = malloc((size_t)cap * 2 * sizeof(*ni));
			if (ni == NULL) {
				imp_prog_oom(p);
				goto out;
			}
			memcpy(ni, items, (size_t)n * sizeof(*ni));
			if (items != stack)
				free(items);
			items = ni;
			cap *= 2;
		}
		items[n++] = v;
		if (!imp_accept_op(p, ","))
			break;
		comma = 1;
	}
	if (close && imp_expect_op(p, close))
		goto out;
	if (!close && imp_cur(p)->t != TK_NEWLINE) {
		char b[64];
		imp_perr(p, imp_cur(p)->line, "unsupported syntax near %s", imp_tok_desc(imp_cur(p), b, sizeof(b)));
		goto out;
	}
	if (n == 1 && !comma && !is_list) {
		res = items[0];
		goto out;
	}
	if (n == 0 && !close) {
		imp_perr(p, imp_cur(p)->line, "expected an expression");
		goto out;
	}
	res = imp_pv_seq(p, n, is_list);
	if (res)
		memcpy(res->items, items, (size_t)n * sizeof(*items));
out:
	if (items != stack)
		free(items);
	return res;
}

/* ---- statements ---------------------------------------------------------------- */

/* Names the values created by the statement: `target` for `result`, the
 * rest from their hint or target_op. */
static int name_new_values(struct prog *p, const char *target, struct pv *result)
{
	if (result && (result->k == PV_TENSOR || result->k == PV_GTUPLE) &&
	    result->gv >= p->stmt_first_gv && !p->gv[result->gv].name && target) {
		if ((p->gv[result->gv].name = imp_fresh_name(p, target)) == NULL)
			return -1;
	}
	for (int g = p->stmt_first_gv; g < p->ngv; g++) {
		if (p->gv[g].name)
			continue;
		char base[MAX_NAME_LEN + 1];
		if (p->gv[g].hint)
			snprintf(base, sizeof(base), "%s", p->gv[g].hint);
		else
			snprintf(base, sizeof(base), "%.60s_%s", target ? target : "tmp",
				 p->nodes[p->gv[g].node].op);
		if ((p->gv[g].name = imp_fresh_name(p, base)) == NULL)
			return -1;
	}
	return 0;
}

static int bind_name(struct prog *p, const char *name, struct pv *v)
{
	if (base_map_put(&p->env, name, v)) {
		imp_prog_oom(p);
		return -1;
	}
	return 0;
}

/* Parses the target list in [s, e): NAME or NAME, NAME (maybe bracketed). */
static int parse_targets(struct prog *p, int s, int e, const char **names, int max, int *n, int *is_tuple)
{
	*n = 0;
	*is_tuple = 0;
	if (s < e && (imp_is_op(&p->toks[s], "(") || imp_is_op(&p->toks[s], "[")) &&
	    imp_is_op(&p->toks[e - 1], imp_is_op(&p->toks[s], "(") ? ")" : "]")) {
		s++;
		e--;
		*is_tuple = 1;
	}
	for (int i = s; i < e; i++) {
		struct tok *k = &p->toks[i];
		if (k->t != TK_NAME || imp_is_keyword(k->s)) {
			char b[64];
			imp_perr(p, k->line, "unsupported assignment target near %s", imp_tok_desc(k, b, sizeof(b)));
			return -1;
		}
		if (*n >= max) {
			imp_perr(p, k->line, "too many assignment targets");
			return -1;
		}
		names[(*n)++] = k->s;
		if (i + 1 < e) {
			if (!imp_is_op(&p->toks[i + 1], ",")) {
				char b[64];
				imp_perr(p, p->toks[i + 1].line, "unsupported assignment target near %s",
				     imp_tok_desc(&p->toks[i + 1], b, sizeof(b)));
				return -1;
			}
			*is_tuple = 1;
			i++;
		}
	}
	if (*n == 0) {
		imp_perr(p, p->toks[s < e ? s : e].line, "empty assignment target");
		return -1;
	}
	return 0;
}

/* `a, b, c = x.unbind(0)`: a getitem per name on the tuple op's result,
 * whose length the graph only knows after inference: the tuple's node
 * records the count, and import_build() checks it then.  Returns a Python
 * tuple of the n elements, or NULL with the error set. */
static struct pv *unpack_gtuple(struct prog *p, struct pv *t, int n, int line)
{
	struct gnode *node = &p->nodes[p->gv[t->gv].node];
	if (node->unpacked)
		return imp_perr(p, line, "%s is unpacked a second time (first at line %d); not supported",
			    imp_gv_label(p, t->gv), node->unpack_line);
	struct pv *seq = imp_pv_seq(p, n, 0);
	if (seq == NULL)
		return NULL;
	for (int k = 0; k < n; k++) {
		struct pv *ix = imp_pv_int(p, k);
		if (ix == NULL || (seq->items[k] = imp_getitem(p, t, &ix, 1, 0)) == NULL)
			return NULL;
	}
	node = &p->nodes[p->gv[t->gv].node];    /* getitem may have moved the array */
	node->unpacked = n;
	node->unpack_line = line;
	return seq;
}

static int exec_assign(struct prog *p, const struct lline *L, int *eqs, int neq)
{
	p->pos = eqs[neq - 1] + 1;
	struct pv *v = imp_ev_exprlist(p, NULL, 0);
	if (v == NULL)
		return -1;
	const char *first = NULL;
	for (int q = 0; q < neq; q++) {
		int s = q == 0 ? L->start : eqs[q - 1] + 1, e = eqs[q];
		const char *names[64];
		int n, tup;
		if (parse_targets(p, s, e, names, 64, &n, &tup))
			return -1;
		if (!first)
			first = names[0];
		if (!tup) {
			if (bind_name(p, names[0], v))
				return -1;
			continue;
		}
		if (v->k == PV_GTUPLE && (v = unpack_gtuple(p, v, n, L->line)) == NULL)
			return -1;
		if (v->k != PV_SEQ) {
			imp_perr(p, L->line, "cannot unpack %s", imp_kind_name(v));
			return -1;
		}
		if (v->n != n) {
			imp_perr(p, L->line, "cannot unpack %d values into %d names", v->n, n);
			return -1;
		}
		for (int k = 0; k < n; k++)
			if (bind_name(p, names[k], v->items[k]))
				return -1;
		/* name each unpacked result after its own target */
		for (int k = 0; k < n; k++) {
			struct pv *e = v->items[k];
			if ((e->k == PV_TENSOR || e->k == PV_GTUPLE) && e->gv >= p->stmt_first_gv &&
			    !p->gv[e->gv].name && (p->gv[e->gv].name = imp_fresh_name(p, names[k])) == NULL)
				return -1;
		}
	}
	return name_new_values(p, first, v);
}

static int exec_augassign(struct prog *p, const struct lline *L, int at)
{
	struct tok *t = &p->toks[L->start];
	if (at != L->start + 1 || t->t != TK_NAME || imp_is_keyword(t->s)) {
		imp_perr(p, L->line, "unsupported augmented assignment target");
		return -1;
	}
	char op[3] = {0};
	const char *aop = p->toks[at].s;
	if (!strcmp(aop, "+=") || !strcmp(aop, "-=") || !strcmp(aop, "*=") || !strcmp(aop, "/="))
		op[0] = aop[0];
	else {
		imp_perr(p, L->line, "unsupported operator '%s'", aop);
		return -1;
	}
	struct pv *a = lookup_name(p, t->s, L->line);
	if (a == NULL)
		return -1;
	p->pos = at + 1;
	struct pv *b = imp_ev_exprlist(p, NULL, 0);
	if (b == NULL)
		return -1;
	struct pv *r = binop(p, op, a, b, a->k == PV_TENSOR);
	if (r == NULL)
		return -1;
	if (bind_name(p, t->s, r))
		return -1;
	return name_new_values(p, t->s, r);
}

static int exec_return(struct prog *p, const struct lline *L)
{
	p->pos = L->start + 1;
	if (p->toks[p->pos].t == TK_NEWLINE) {
		imp_perr(p, L->line, "forward() must return tensors");
		return -1;
	}
	struct pv *v = imp_ev_exprlist(p, NULL, 0);
	if (v == NULL)
		return -1;
	if (name_new_values(p, "out", v))
		return -1;
	int n = v->k == PV_SEQ ? v->n : 1;
	if (n == 0) {
		imp_perr(p, L->line, "forward() returns nothing");
		return -1;
	}
	p->outputs = imp_palloc(p, (size_t)n * sizeof(int));
	if (p->outputs == NULL)
		return -1;
	for (int k = 0; k < n; k++) {
		struct pv *e = v->k == PV_SEQ ? v->items[k] : v;
		char what[48];
		snprintf(what, sizeof(what), "return value %d", k + 1);
		int g = imp_use_tensor(p, e, what);
		if (g < 0)
			return -1;
		p->outputs[p->nout++] = g;
	}
	/* graph outputs are distinct values: a tensor returned twice gets a
	 * contiguous() copy per repeat (the values are equal either way) */
	for (int k = 0; k < p->nout; k++) {
		int g = p->outputs[k], dup = 0;
		for (int q = 0; q < k; q++)
			dup |= p->outputs[q] == g;
		if (!dup)
			continue;
		struct nodebuild nb = {.op = graph_op_name(OP_CONTIGUOUS), .call = "return"};
		nb.ops[0].k = O_VALUE;
		nb.ops[0].gv = g;
		nb.nops = 1;
		int c = imp_emit_node(p, &nb, 0, 0);
		if (c < 0)
			return -1;
		char base[MAX_NAME_LEN + 1];
		snprintf(base, sizeof(base), "%.80s_out%d", p->gv[g].name, k);
		if ((p->gv[c].name = imp_fresh_name(p, base)) == NULL)
			return -1;
		p->outputs[k] = c;
		p->nodes[p->gv[c].node].dup_output = 1;
	}
	return 0;
}

static int exec_stmt(struct prog *p, const struct lline *L)
{
	struct tok *t = &p->toks[L->start];
	p->line = L->line;
	p->stmt_first_gv = p->ngv;
	p->depth = 0;
	if (imp_is_kw(t, "pass"))
		return L->end == L->start + 1 ? 0 : (imp_perr(p, L->line, "unsupported syntax after pass"), -1);
	if (imp_is_kw(t, "del")) {
		for (int i = L->start + 1; i < L->end; i++) {
			struct tok *k = &p->toks[i];
			if (imp_is_op(k, ","))
				continue;
			if (k->t != TK_NAME || imp_is_keyword(k->s)) {
				imp_perr(p, L->line, "unsupported del target");
				return -1;
			}
			void **slot = base_map_get(&p->env, k->s);
			if (slot == NULL || *slot == NULL) {
				imp_perr(p, L->line, "del of undefined name '%s'", k->s);
				return -1;
			}
			*slot = NULL;
		}
		return 0;
	}
	if (t->t == TK_NAME && imp_is_keyword(t->s) && !imp_is_kw(t, "None") && !imp_is_kw(t, "True") &&
	    !imp_is_kw(t, "False")) {
		imp_perr(p, L->line, "unsupported statement '%s'", t->s);
		return -1;
	}
	int eqs[64], neq = 0, depth = 0;
	for (int i = L->start; i < L->end; i++) {
		struct tok *k = &p->toks[i];
		if (k->t != TK_OP)
			continue;
		if (strchr("([{", k->s[0]) && !k->s[1])
			depth++;
		else if (strchr(")]}", k->s[0]) && !k->s[1])
			depth--;
		else if (depth == 0 && !strcmp(k->s, "=")) {
			if (neq >= 64) {
				imp_perr(p, L->line, "too many chained assignments");
				return -1;
			}
			eqs[neq++] = i;
		} else if (depth == 0 && strlen(k->s) >= 2 && k->s[strlen(k->s) - 1] == '=' &&
			   strcmp(k->s, "==") && strcmp(k->s, "<=") && strcmp(k->s, ">=") && strcmp(k->s, "!=")) {
			if (neq) {
				imp_perr(p, L->line, "unsupported syntax '%s'", k->s);
				return -1;
			}
			return exec_augassign(p, L, i);
		}
	}
	if (neq)
		return exec_assign(p, L, eqs, neq);
	/* an expression statement: a docstring or an in-place call */
	p->pos = L->start;
	struct pv *v = imp_ev_exprlist(p, NULL, 0);
	if (v == NULL)
		return -1;
	if (v->k == PV_STR)
		return 0;
	/* name what it created after the tensor it changed */
	if (v->k == PV_TENSOR && v->gv >= p->stmt_first_gv && p->gv[v->gv].hint)
		return name_new_values(p, NULL, NULL);
	imp_perr(p, L->line, "expression statement has no effect (only in-place calls are allowed)");
	return -1;
}

/* NAME ('.' NAME)* at *i into buf; 0 or -1. */
static int read_dotted(struct prog *p, int *i, int end, char *buf, size_t len)
{
	size_t bl = 0;
	for (;;) {
		if (*i >= end || p->toks[*i].t != TK_NAME || imp_is_keyword(p->toks[*i].s))
			return -1;
		size_t nl = strlen(p->toks[*i].s);
		if (bl + nl + 2 > len)
			return -1;
		memcpy(buf + bl, p->toks[*i].s, nl + 1);
		bl += nl;
		(*i)++;
		if (*i < end && imp_is_op(&p->toks[*i], ".")) {
			buf[bl++] = '.';
			buf[bl] = 0;
			(*i)++;
			continue;
		}
		return 0;
	}
}

static int put_alias(struct prog *p, const char *name, const char *path)
{
	char *s = imp_arena_strndup(&p->ar, path, strlen(path));
	if (s == NULL || base_map_put(&p->aliases, name, s)) {
		imp_prog_oom(p);
		return -1;
	}
	return 0;
}

/* `import a.b [as c], ...`, `from a.b import c [as d], ...`: records aliases
 * (`import torch.nn` binds nothing new: torch is always known). */
static int exec_import(struct prog *p, const struct lline *L)
{
	int i = L->start + 1, end = L->end;
	char mod[MAX_PATH_LEN], full[2 * MAX_PATH_LEN + 2];
	if (imp_is_kw(&p->toks[L->start], "from")) {
		if (read_dotted(p, &i, end, mod, sizeof(mod)) || i >= end || !imp_is_kw(&p->toks[i], "import"))
			goto bad;
		i++;
		for (;;) {
			if (i >= end || p->toks[i].t != TK_NAME || imp_is_keyword(p->toks[i].s))
				goto bad;
			const char *name = p->toks[i++].s, *bind = name;
			if (i < end && imp_is_kw(&p->toks[i], "as")) {
				if (i + 1 >= end || p->toks[i + 1].t != TK_NAME || imp_is_keyword(p->toks[i + 1].s))
					goto bad;
				bind = p->toks[i + 1].s;
				i += 2;
			}
			snprintf(full, sizeof(full), "%s.%s", mod, name);
			if (strlen(full) >= MAX_PATH_LEN || put_alias(p, bind, full))
				goto bad;
			if (i >= end)
				return 0;
			if (!imp_is_op(&p->toks[i], ","))
				goto bad;
			i++;
		}
	}
	for (;;) {
		if (read_dotted(p, &i, end, mod, sizeof(mod)))
			goto bad;
		if (i < end && imp_is_kw(&p->toks[i], "as")) {
			if (i + 1 >= end || p->toks[i + 1].t != TK_NAME || imp_is_keyword(p->toks[i + 1].s))
				goto bad;
			if (put_alias(p, p->toks[i + 1].s, mod))
				return -1;
			i += 2;
		}
		if (i >= end)
			return 0;
		if (!imp_is_op(&p->toks[i], ","))
			goto bad;
		i++;
	}
bad:
	if (!p->failed)
		imp_perr(p, L->line, "unsupported import statement");
	return -1;
}

/* `def forward(self, a, b: T, ...) [-> T]:` -> forward arguments. */
static int parse_forward_header(struct prog *p, const struct lline *L)
{
	p->pos = L->start + 2;
	if (imp_expect_op(p, "("))
		return -1;
	int n = 0;
	while (!imp_is_op(imp_cur(p), ")")) {
		struct tok *k = imp_cur(p);
		if (imp_is_op(k, "*") || imp_is_op(k, "**") || imp_is_op(k, "/")) {
			imp_perr(p, k->line, "forward(): starred or positional-only parameters are not supported");
			return -1;
		}
		if (k->t != TK_NAME || imp_is_keyword(k->s)) {
			char b[64];
			imp_perr(p, k->line, "forward(): expected a parameter name, found %s", imp_tok_desc(k, b, sizeof(b)));
			return -1;
		}
		p->pos++;
		if (imp_accept_op(p, ":")) {
			/* skip the annotation */
			int d = 0;
			while (imp_cur(p)->t != TK_NEWLINE && !(d == 0 && (imp_is_op(imp_cur(p), ",") || imp_is_op(imp_cur(p), ")") ||
								      imp_is_op(imp_cur(p), "=")))) {
				if (imp_is_op(imp_cur(p), "(") || imp_is_op(imp_cur(p), "[") || imp_is_op(imp_cur(p), "{"))
					d++;
				else if (imp_is_op(imp_cur(p), ")") || imp_is_op(imp_cur(p), "]") || imp_is_op(imp_cur(p), "}"))
					d--;
				p->pos++;
			}
		}
		if (imp_is_op(imp_cur(p), "=")) {
			imp_perr(p, k->line, "forward(): default values are not supported");
			return -1;
		}
		if (n == 0) {
			if (strcmp(k->s, "self")) {
				imp_perr(p, k->line, "forward(): the first parameter must be self");
				return -1;
			}
		} else {
			if (base_map_get(&p->env, k->s)) {
				imp_perr(p, k->line, "forward(): duplicate parameter '%s'", k->s);
				return -1;
			}
			int g = imp_gv_new(p, -1, -1);
			if (g < 0)
				return -1;
			p->gv[g].py = k->s;
			if ((p->gv[g].name = imp_fresh_name(p, k->s)) == NULL)
				return -1;
			struct pv *v = imp_tensor_pv(p, g, 0);
			if (v == NULL || bind_name(p, k->s, v))
				return -1;
			p->nargs++;
		}
		n++;
		if (!imp_accept_op(p, ","))
			break;
	}
	if (imp_expect_op(p, ")"))
		return -1;
	if (imp_accept_op(p, "->")) {
		while (imp_cur(p)->t != TK_NEWLINE && !imp_is_op(imp_cur(p), ":"))
			p->pos++;
	}
	if (imp_expect_op(p, ":"))
		return -1;
	if (imp_cur(p)->t != TK_NEWLINE) {
		imp_perr(p, L->line, "forward(): the body must start on the next line");
		return -1;
	}
	if (n == 0) {
		imp_perr(p, L->line, "forward() has no self parameter");
		return -1;
	}
	return 0;
}

int imp_is_class_header(struct prog *p, const struct lline *L)
{
	struct tok *k = &p->toks[L->start];
	if (!imp_is_kw(k, "class"))
		return 0;
	if (L->end - L->start < 3 || p->toks[L->start + 1].t != TK_NAME || !imp_is_op(&p->toks[L->end - 1], ":"))
		return -1;
	return 1;
}

int imp_parse_model(struct prog *p)
{
	if (imp_tokenize(p))
		return -1;
	int L = 0, have_forward = 0;
	while (L < p->nlines) {
		struct lline *ln = &p->lines[L];
		struct tok *t = &p->toks[ln->start];
		p->line = ln->line;
		if (ln->indent != 0) {
			imp_perr(p, ln->line, "unexpected indent");
			return -1;
		}
		if (imp_is_kw(t, "import") || imp_is_kw(t, "from")) {
			if (exec_import(p, ln))
				return -1;
			L++;
			continue;
		}
		if (t->t == TK_STR && ln->end == ln->start + 1) {
			L++;     /* a docstring */
			continue;
		}
		int ch = imp_is_class_header(p, ln);
		if (ch <= 0) {
			imp_perr(p, ln->line, ch < 0 ? "unsupported class header" :
			     "unsupported top-level statement (expected import or class GraphModule)");
			return -1;
		}
		L++;
		if (L >= p->nlines || p->lines[L].indent == 0) {
			imp_perr(p, ln->line, "class has no body");
			return -1;
		}
		int body = p->lines[L].indent;
		while (L < p->nlines && p->lines[L].indent > 0) {
			struct lline *m = &p->lines[L];
			struct tok *k = &p->toks[m->start];
			p->line = m->line;
			if (m->indent != body) {
				imp_perr(p, m->line, "unexpected indent");
				return -1;
			}
			if (imp_is_kw(k, "pass") || (k->t == TK_STR && m->end == m->start + 1)) {
				L++;
				continue;
			}
			if (!imp_is_kw(k, "def") || m->end - m->start < 2 || p->toks[m->start + 1].t != TK_NAME) {
				imp_perr(p, m->line, "unsupported statement in the class body (only def forward)");
				return -1;
			}
			int is_fwd = !strcmp(p->toks[m->start + 1].s, "forward");
			L++;
			if (!is_fwd) {
				/* another method: not run by forward(), so skipped */
				while (L < p->nlines && p->lines[L].indent > body)
					L++;
				continue;
			}
			if (have_forward) {
				imp_perr(p, m->line, "more than one forward()");
				return -1;
			}
			have_forward = 1;
			if (parse_forward_header(p, m))
				return -1;
			if (L >= p->nlines || p->lines[L].indent <= body) {
				imp_perr(p, m->line, "forward() has no body");
				return -1;
			}
			int fb = p->lines[L].indent, returned = 0;
			while (L < p->nlines && p->lines[L].indent > body) {
				struct lline *s = &p->lines[L];
				p->line = s->line;
				if (s->indent != fb) {
					imp_perr(p, s->line, "unexpected indent (blocks are not supported)");
					return -1;
				}
				if (returned) {
					imp_perr(p, s->line, "statement after return");
					return -1;
				}
				if (imp_is_kw(&p->toks[s->start], "return")) {
					p->stmt_first_gv = p->ngv;
					p->depth = 0;
					if (exec_return(p, s))
						return -1;
					returned = 1;
				} else if (exec_stmt(p, s)) {
					return -1;
				}
				L++;
			}
			if (!returned) {
				imp_perr(p, m->line, "forward() has no return statement");
				return -1;
			}
		}
	}
	if (!have_forward) {
		imp_perr(p, 0, "no class with a forward() method");
		return -1;
	}
	return 0;
}
