/* import_calls.c - calls (import_int.h): binding a call's arguments to a
 * signature, the tables of torch functions and tensor methods and the graph
 * ops they become, and the calls that need code of their own. */
#define _POSIX_C_SOURCE 200809L
#include "import_int.h"

static int parse_spec(const char *spec, struct param *ps, int max)
{
	int n = 0, kwonly = 0, slot = 0;
	const char *s = spec;
	while (*s) {
		while (*s == ' ')
			s++;
		if (!*s)
			break;
		if (*s == '*') {
			kwonly = 1;
			s++;
			continue;
		}
		if (n >= max)
			return -1;
		struct param *q = &ps[n++];
		memset(q, 0, sizeof(*q));
		size_t k = 0;
		while (*s && *s != ':' && *s != '>' && k < sizeof(q->py) - 1)
			q->py[k++] = *s++;
		if (*s == '>') {
			s++;
			k = 0;
			while (*s && *s != ':' && k < sizeof(q->attr) - 1)
				q->attr[k++] = *s++;
		} else {
			memcpy(q->attr, q->py, sizeof(q->py));
		}
		if (*s++ != ':')
			return -1;
		q->kind = *s++;
		q->kwonly = kwonly;
		q->slot = -1;
		while (*s && *s != ' ') {
			if (*s == '?')
				q->optional = 1;
			else if (*s == 'n')
				q->nullable = 1;
			else if (*s == '#')
				q->slot = s[1] - '0', s++;
			else if (*s == '=') {
				s++;
				k = 0;
				while (*s && *s != ' ' && k < sizeof(q->dflt) - 1)
					q->dflt[k++] = *s++;
				continue;
			}
			s++;
		}
		if (strchr("TSL", q->kind) && q->slot < 0)
			q->slot = slot;
		if (strchr("TSL", q->kind))
			slot = q->slot + 1;
	}
	return n;
}

static int ints_of(struct prog *p, const struct pv *v, const char *what, int allow_int)
{
	if (allow_int && v->k == PV_INT)
		return 0;
	if (v->k != PV_SEQ) {
		imp_perr(p, p->line, "%s: expected %s, got %s", what,
		     allow_int ? "an int or a tuple of ints" : "a tuple of ints", imp_kind_name(v));
		return -1;
	}
	for (int i = 0; i < v->n; i++)
		if (v->items[i]->k != PV_INT) {
			imp_perr(p, p->line, "%s: expected ints, got %s", what, imp_kind_name(v->items[i]));
			return -1;
		}
	return 0;
}

/* Binds args to the spec and builds the node (operands and attrs).  On
 * return *inplace is set from an X parameter.  0 or -1. */
static int bind_call(struct prog *p, const char *fname, const char *spec, struct callargs *a,
		     struct nodebuild *b, int *inplace)
{
	struct param ps[16];
	int np = parse_spec(spec, ps, 16);
	struct pv *val[16] = {0};
	if (np < 0) {
		imp_perr(p, p->line, "internal error: bad spec for %s", fname);
		return -1;
	}
	*inplace = 0;
	int pi = 0;
	for (int k = 0; k < a->npos; k++) {
		while (pi < np && ps[pi].kwonly)
			pi++;
		if (pi >= np) {
			int maxpos = 0;
			for (int q = 0; q < np; q++)
				maxpos += !ps[q].kwonly;
			imp_perr(p, p->line, "%s takes at most %d positional arguments (%d given)", fname,
			     maxpos, a->npos);
			return -1;
		}
		if (ps[pi].kind == 'v') {
			int rest = a->npos - k;
			if (rest == 1 && a->pos[k]->k == PV_SEQ) {
				val[pi] = a->pos[k];
			} else {
				struct pv *s = imp_pv_seq(p, rest, 0);
				if (s == NULL)
					return -1;
				for (int q = 0; q < rest; q++)
					s->items[q] = a->pos[k + q];
				val[pi] = s;
			}
			pi++;
			break;
		}
		val[pi++] = a->pos[k];
	}
	for (int k = 0; k < a->nkw; k++) {
		int q;
		for (q = 0; q < np; q++)
			if (!strcmp(ps[q].py, a->kwname[k]) && ps[q].kind != 'v')
				break;
		if (q == np) {
			/* the variadic shape of view/reshape/permute/expand may be a keyword too */
			for (q = 0; q < np; q++)
				if (!strcmp(ps[q].py, a->kwname[k]))
					break;
		}
		if (q == np) {
			imp_perr(p, p->line, "unknown keyword argument '%s' for %s", a->kwname[k], fname);
			return -1;
		}
		if (val[q]) {
			imp_perr(p, p->line, "%s got multiple values for argument '%s'", fname, ps[q].py);
			return -1;
		}
		val[q] = a->kw[k];
	}
	b->call = fname;
	int nslots = 0;
	int have_slot[MAX_ARGS] = {0};
	for (int q = 0; q < np; q++) {
		struct param *ps_q = &ps[q];
		struct pv *v = val[q];
		char what[128];
		snprintf(what, sizeof(what), "%s argument '%s'", fname, ps_q->py);
		if (v && v->k == PV_NONE && ps_q->nullable && !strchr("TS", ps_q->kind))
			v = NULL;      /* None where PyTorch's default is None: the default */
		if (v == NULL) {
			if (!ps_q->optional) {
				imp_perr(p, p->line, "%s: missing argument '%s'", fname, ps_q->py);
				return -1;
			}
			if (ps_q->dflt[0]) {
				json_t *d = json_loads(ps_q->dflt, JSON_DECODE_ANY, NULL);
				if (imp_nb_attr(p, b, ps_q->attr, d))
					return -1;
			}
			continue;
		}
		switch (ps_q->kind) {
		case 'T': case 'S': {
			struct opnd o = {0};
			if (v->k == PV_NONE && ps_q->kind == 'T' && ps_q->nullable) {
				o.k = O_NULL;
			} else if (ps_q->kind == 'S' && imp_is_num(v)) {
				o.k = O_SCALAR;
				o.scalar = imp_const_json(p, v, what, 0);
				if (o.scalar == NULL)
					return -1;
			} else {
				if ((o.gv = imp_use_tensor(p, v, what)) < 0)
					return -1;
				o.k = O_VALUE;
			}
			int s = ps_q->slot;
			if (s >= MAX_ARGS - 1) {
				json_decref(o.scalar);
				imp_perr(p, p->line, "internal error: slot");
				return -1;
			}
			b->ops[s] = o;
			have_slot[s] = 1;
			if (s + 1 > nslots)
				nslots = s + 1;
			if (nslots > b->nops)
				b->nops = nslots;       /* so imp_nb_free() sees the scalars on failure */
			break;
		}
		case 'L': {
			if (v->k != PV_SEQ || v->n == 0) {
				imp_perr(p, p->line, "%s: expected a non-empty tuple or list of tensors, got %s",
				     what, imp_kind_name(v));
				return -1;
			}
			if (ps_q->slot + v->n >= MAX_ARGS) {
				imp_perr(p, p->line, "%s: too many tensors", what);
				return -1;
			}
			for (int e = 0; e < v->n; e++) {
				int s = ps_q->slot + e;
				if ((b->ops[s].gv = imp_use_tensor(p, v->items[e], what)) < 0)
					return -1;
				b->ops[s].k = O_VALUE;
				have_slot[s] = 1;
				if (s + 1 > nslots)
					nslots = s + 1;
			}
			break;
		}
		case 'i':
			if (v->k != PV_INT) {
				imp_perr(p, p->line, "%s: expected an int, got %s", what, imp_kind_name(v));
				return -1;
			}
			if (imp_nb_attr(p, b, ps_q->attr, json_integer(v->i)))
				return -1;
			break;
		case 'f': case 'N':
			if (v->k != PV_INT && v->k != PV_FLOAT) {
				imp_perr(p, p->line, "%s: expected a number, got %s", what, imp_kind_name(v));
				return -1;
			}
			if (!isfinite(imp_num_val(v))) {
				imp_perr(p, p->line, "%s: not a finite number", what);
				return -1;
			}
			if (imp_nb_attr(p, b, ps_q->attr,
				    ps_q->kind == 'N' && v->k == PV_INT ? json_integer(v->i) : json_real(imp_num_val(v))))
				return -1;
			break;
		case 'b': case 'B': case 'X':
			if (v->k != PV_BOOL) {
				imp_perr(p, p->line, "%s: expected True or False, got %s", what, imp_kind_name(v));
				return -1;
			}
			if (ps_q->kind == 'X')
				*inplace = (int)v->i;
			if (imp_nb_attr(p, b, ps_q->attr, json_boolean(v->i)))
				return -1;
			break;
		case 's':
			if (v->k != PV_STR) {
				imp_perr(p, p->line, "%s: expected a string, got %s", what, imp_kind_name(v));
				return -1;
			}
			if (imp_nb_attr(p, b, ps_q->attr, imp_const_json(p, v, what, 0)))
				return -1;
			break;
		case 'd':
			if (v->k != PV_DTYPE) {
				imp_perr(p, p->line, "%s: expected a dtype such as torch.float16, got %s", what,
				     imp_kind_name(v));
				return -1;
			}
			if (imp_nb_attr(p, b, ps_q->attr, json_string(v->s)))
				return -1;
			break;
		case 'I': case 'V': case 'v':
			if (ints_of(p, v, what, ps_q->kind == 'I' || ps_q->kind == 'V'))
				return -1;
			if (v->k == PV_INT && ps_q->kind != 'I') {
				json_t *arr = json_array();
				if (arr == NULL || json_array_append_new(arr, json_integer(v->i))) {
					json_decref(arr);
					imp_prog_oom(p);
					return -1;
				}
				if (imp_nb_attr(p, b, ps_q->attr, arr))
					return -1;
			} else if (imp_nb_attr(p, b, ps_q->attr, imp_const_json(p, v, what, 0))) {
				return -1;
			}
			break;
		case 'a':
			if (imp_nb_attr(p, b, ps_q->attr, imp_const_json(p, v, what, 0)))
				return -1;
			break;
		case 'Z':
			if (!(v->k == PV_NONE || (v->k == PV_BOOL && !v->i))) {
				imp_perr(p, p->line, "%s: only None/False is supported", what);
				return -1;
			}
			break;
		case '-':
			break;
		default:
			imp_perr(p, p->line, "internal error: spec kind '%c'", ps_q->kind);
			return -1;
		}
	}
	for (int s = 0; s < nslots; s++)
		if (!have_slot[s])
			b->ops[s].k = O_NULL;
	b->nops = nslots;
	return 0;
}

static const struct fdef funcs[] = {
	{"torch.nn.functional.linear", OP_LINEAR, "input:T weight:T bias:T?n", 0},
	{"torch._C._nn.linear", OP_LINEAR, "input:T weight:T bias:T?n", 0},
	{"torch.conv2d", OP_CONV2D, "input:T weight:T bias:T?n stride:a? padding:a? dilation:a? groups:i?", 0},
	{"torch.nn.functional.conv2d", OP_CONV2D,
	 "input:T weight:T bias:T?n stride:a? padding:a? dilation:a? groups:i?", 0},
	{"torch.nn.functional.interpolate", OP_INTERPOLATE, INTERP_SPEC, 0},
	{"torch.nn.functional.layer_norm", OP_LAYER_NORM,
	 "input:T normalized_shape:V weight:T?n bias:T?n eps:f?", 0},
	{"torch.layer_norm", OP_LAYER_NORM,
	 "input:T normalized_shape:V weight:T?n bias:T?n eps:f? cudnn_enable:-?", 0},
	{"torch.nn.functional.dropout", OP_DROPOUT, "input:T p:f? training:b?=true inplace:b?", F_VIEW},
	{"torch.dropout", OP_DROPOUT, "input:T p:f train>training:b", F_VIEW},
	{"torch.nn.functional.batch_norm", OP_BATCH_NORM,
	 "input:T running_mean:T running_var:T weight:T?n bias:T?n training:b? momentum:f?n eps:f?", 0},
	{"torch.batch_norm", OP_BATCH_NORM,
	 "input:T#0 weight:T?n#3 bias:T?n#4 running_mean:T#1 running_var:T#2 training:b momentum:f eps:f "
	 "cudnn_enabled:-", 0},
	{"torch.nn.functional.softmax", OP_SOFTMAX, "input:T dim:i?n _stacklevel:-? dtype:d?n", 0},
	{"torch.softmax", OP_SOFTMAX, "input:T dim:i dtype:d?n", 0},
	{"torch.nn.functional.gelu", OP_GELU, "input:T approximate:s?", 0},
	{"torch._C._nn.gelu", OP_GELU, "input:T approximate:s?", 0},
	{"torch.nn.functional.relu", OP_RELU, "input:T inplace:X?", 0},
	{"torch.relu", OP_RELU, "input:T", 0},
	{"torch.relu_", OP_RELU, "input:T", F_INPLACE},
	{"torch.nn.functional.relu_", OP_RELU, "input:T", F_INPLACE},
	{"torch.nn.functional.silu", OP_SILU, "input:T inplace:X?", 0},
	{"torch.sigmoid", OP_SIGMOID, "input:T", 0},
	{"torch.sigmoid_", OP_SIGMOID, "input:T", F_INPLACE},
	{"torch.nn.functional.sigmoid", OP_SIGMOID, "input:T", 0},
	{"torch.tanh", OP_TANH, "input:T", 0},
	{"torch.nn.functional.tanh", OP_TANH, "input:T", 0},
	{"torch.exp", OP_EXP, "input:T", 0},
	{"torch.rsqrt", OP_RSQRT, "input:T", 0},
	{"torch.prelu", OP_PRELU, "input:T weight:T", 0},
	{"torch.nn.functional.prelu", OP_PRELU, "input:T weight:T", 0},
	{"torch.matmul", OP_MATMUL, "input:T other:T", 0},
	{"torch.bmm", OP_BMM, "input:T mat2:T", 0},
	{"torch.nn.functional.adaptive_avg_pool2d", OP_ADAPTIVE_AVG_POOL2D, "input:T output_size:a", 0},
	{"torch._C._nn.adaptive_avg_pool2d", OP_ADAPTIVE_AVG_POOL2D, "input:T output_size:a", 0},
	{"torch.nn.functional.scaled_dot_product_attention", OP_SDPA, SDPA_SPEC, 0},
	{"torch._C._nn.scaled_dot_product_attention", OP_SDPA, SDPA_SPEC, 0},
	{"torch.sum", OP_SUM, REDUCE_SPEC, 0},
	{"torch.mean", OP_MEAN, REDUCE_SPEC, 0},
	{"torch.transpose", OP_TRANSPOSE, "input:T dim0:i dim1:i", F_VIEW},
	{"torch.permute", OP_PERMUTE, "input:T dims:V", F_VIEW},
	{"torch.reshape", OP_RESHAPE, "input:T shape:V", F_VIEW},
	{"torch.flatten", OP_FLATTEN, "input:T start_dim:i? end_dim:i?", F_VIEW},
	{"torch.cat", OP_CAT, "tensors:L dim:i?", 0},
	{"torch.concat", OP_CAT, "tensors:L dim:i?", 0},
	{"torch.split", OP_SPLIT, "tensor:T split_size_or_sections>split_size:I dim:i?", F_VIEW | F_TUPLE},
	{"torch.functional.split", OP_SPLIT, "tensor:T split_size_or_sections>split_size:I dim:i?",
	 F_VIEW | F_TUPLE},
	{"torch.chunk", OP_CHUNK, "input:T chunks:i dim:i?", F_VIEW | F_TUPLE},
	{"torch.nn.functional.pad", OP_PAD, "input:T pad:V mode:s? value:f?n", 0},
	{"torch._C._nn.pad", OP_PAD, "input:T pad:V mode:s? value:f?n", 0},
	{"torch.add", OP_ADD, ADD_SPEC, F_ELEM},
	{"torch.sub", OP_SUB, ADD_SPEC, F_ELEM},
	{"torch.subtract", OP_SUB, ADD_SPEC, F_ELEM},
	{"torch.mul", OP_MUL, "input:S other:S", F_ELEM},
	{"torch.multiply", OP_MUL, "input:S other:S", F_ELEM},
	{"torch.div", OP_DIV, "input:S other:S * rounding_mode:Z?", F_ELEM},
	{"torch.divide", OP_DIV, "input:S other:S * rounding_mode:Z?", F_ELEM},
	{"torch.true_divide", OP_DIV, "input:S other:S", F_ELEM},
	{"torch.pow", OP_POW, "input:S exponent:S", F_ELEM},
	{"torch.where", OP_WHERE, "condition:T input:S other:S", 0},
	{"torch.nn.functional.leaky_relu", OP_LEAKY_RELU, "input:T negative_slope:f? inplace:X?", 0},
	{"torch._C._nn.leaky_relu", OP_LEAKY_RELU, "input:T negative_slope:f?", 0},
	{"torch.nn.functional.leaky_relu_", OP_LEAKY_RELU, "input:T negative_slope:f?", F_INPLACE},
	{"torch._C._nn.leaky_relu_", OP_LEAKY_RELU, "input:T negative_slope:f?", F_INPLACE},
	{"torch.unbind", OP_UNBIND, "input:T dim:i?", F_VIEW | F_TUPLE},
	{"torch.tensor_split", OP_TENSOR_SPLIT, TSPLIT_SPEC, F_VIEW | F_TUPLE | F_TSPLIT},
	{"torch.baddbmm", OP_BADDBMM, BADDBMM_SPEC, 0},
	{"torch.nn.functional.avg_pool2d", OP_AVG_POOL2D, AVG_POOL2D_SPEC, 0},
	{"torch._C._nn.avg_pool2d", OP_AVG_POOL2D, AVG_POOL2D_SPEC, 0},
	{NULL, OP_INVALID, NULL, 0}};

/* Methods: self is bound to the first parameter.  A name ending in '_' is the
 * in-place form of the method without it (for the F_ELEM and unary ones). */
static const struct fdef methods[] = {
	{"view", OP_VIEW, "input:T shape:v", F_VIEW},
	{"reshape", OP_RESHAPE, "input:T shape:v", F_VIEW},
	{"transpose", OP_TRANSPOSE, "input:T dim0:i dim1:i", F_VIEW},
	{"permute", OP_PERMUTE, "input:T dims:v", F_VIEW},
	{"contiguous", OP_CONTIGUOUS, "input:T memory_format:-?", F_VIEW},
	{"expand", OP_EXPAND, "input:T size:v implicit:-?", F_VIEW},
	{"flatten", OP_FLATTEN, "input:T start_dim:i? end_dim:i?", F_VIEW},
	{"chunk", OP_CHUNK, "input:T chunks:i dim:i?", F_VIEW | F_TUPLE},
	{"split", OP_SPLIT, "input:T split_size:I dim:i?", F_VIEW | F_TUPLE},
	{"sum", OP_SUM, REDUCE_SPEC, 0},
	{"mean", OP_MEAN, REDUCE_SPEC, 0},
	{"softmax", OP_SOFTMAX, "input:T dim:i dtype:d?n", 0},
	{"sigmoid", OP_SIGMOID, "input:T", 0},
	{"relu", OP_RELU, "input:T", 0},
	{"tanh", OP_TANH, "input:T", 0},
	{"exp", OP_EXP, "input:T", 0},
	{"rsqrt", OP_RSQRT, "input:T", 0},
	{"add", OP_ADD, "input:T other:S * alpha:N?", F_ELEM},
	{"sub", OP_SUB, "input:T other:S * alpha:N?", F_ELEM},
	{"mul", OP_MUL, "input:T other:S", F_ELEM},
	{"div", OP_DIV, "input:T other:S * rounding_mode:Z?", F_ELEM},
	{"pow", OP_POW, "input:T exponent:S", F_ELEM},
	{"matmul", OP_MATMUL, "input:T other:T", 0},
	{"bmm", OP_BMM, "input:T mat2:T", 0},
	{"where", OP_WHERE, "input:S#1 condition:T#0 other:S#2", 0},
	{"unbind", OP_UNBIND, "input:T dim:i?", F_VIEW | F_TUPLE},
	{"tensor_split", OP_TENSOR_SPLIT, TSPLIT_SPEC, F_VIEW | F_TUPLE | F_TSPLIT},
	{"baddbmm", OP_BADDBMM, BADDBMM_SPEC, 0},
	{"unfold", OP_UNFOLD, "input:T dimension:i size:i step:i", F_VIEW},
	{NULL, OP_INVALID, NULL, 0}};

static const char *const inplace_methods[] = {
	"add_", "sub_", "mul_", "div_", "pow_", "sigmoid_", "relu_", "tanh_", "exp_", "rsqrt_", NULL};

/* Casting methods: name -> dtype. */
const struct name_dtype imp_cast_methods[] = {
	{"float", "float32"}, {"half", "float16"}, {"bfloat16", "bfloat16"}, {"double", "float64"},
	{"long", "int64"}, {"int", "int32"}, {"bool", "bool"}, {NULL, NULL}};

/* torch.X names that are dtypes (graph names) or are not supported ones. */
const struct name_dtype imp_torch_dtypes[] = {
	{"float32", "float32"}, {"float", "float32"}, {"float16", "float16"}, {"half", "float16"},
	{"bfloat16", "bfloat16"}, {"float64", "float64"}, {"double", "float64"},
	{"int64", "int64"}, {"long", "int64"}, {"int32", "int32"}, {"int", "int32"},
	{"bool", "bool"}, {"uint8", NULL}, {"int8", NULL}, {"int16", NULL}, {"short", NULL},
	{"complex64", NULL}, {"complex128", NULL}, {"cfloat", NULL}, {"cdouble", NULL},
	{"float8_e4m3fn", NULL}, {"float8_e5m2", NULL}, {"uint16", NULL}, {"uint32", NULL},
	{"uint64", NULL}, {NULL, NULL}};

const struct sym_op imp_operators[] = {
	{"+", OP_ADD}, {"-", OP_SUB}, {"*", OP_MUL}, {"/", OP_DIV}, {"**", OP_POW}, {"@", OP_MATMUL},
	{NULL, OP_INVALID}};

const char *import_call(int i, enum graph_op *op)
{
	static const struct fdef *const tables[] = {funcs, methods};
	for (int t = 0; t < 2; t++)
		for (const struct fdef *f = tables[t]; f->name; f++)
			if (i-- == 0) {
				*op = f->op;
				return f->name;
			}
	for (int k = 0; imp_operators[k].sym; k++)
		if (i-- == 0) {
			*op = imp_operators[k].op;
			return imp_operators[k].sym;
		}
	return NULL;
}

/* ---- calls -------------------------------------------------------------------- */

/* tensor_split's indices_or_sections, as bound, becomes the graph's
 * `sections` (an int) or `indices` (a list of ints).  0, or -1 with the error
 * set when neither or several of the three are given or the kind is wrong. */
static int tsplit_attr(struct prog *p, const char *fname, struct nodebuild *b)
{
	json_t *ios = b->attrs ? json_object_get(b->attrs, "indices_or_sections") : NULL;
	int given = (ios != NULL) + (b->attrs && json_object_get(b->attrs, "sections") != NULL) +
		    (b->attrs && json_object_get(b->attrs, "indices") != NULL);
	if (given != 1) {
		imp_perr(p, p->line, "%s: needs exactly one of indices_or_sections, sections and indices", fname);
		return -1;
	}
	if (ios == NULL)
		return 0;
	json_incref(ios);
	json_object_del(b->attrs, "indices_or_sections");
	int ok = json_is_integer(ios) || json_is_array(ios);
	for (size_t i = 0; ok && json_is_array(ios) && i < json_array_size(ios); i++)
		ok = json_is_integer(json_array_get(ios, i));
	if (!ok) {
		json_decref(ios);
		imp_perr(p, p->line, "%s argument 'indices_or_sections': expected an int or a tuple of ints", fname);
		return -1;
	}
	/* the graph's order: sections/indices before dim */
	json_t *dim = json_object_get(b->attrs, "dim");
	json_incref(dim);
	json_object_del(b->attrs, "dim");
	int rc = imp_nb_attr(p, b, json_is_integer(ios) ? "sections" : "indices", ios);
	if (rc == 0 && dim)
		rc = imp_nb_attr(p, b, "dim", dim);
	else
		json_decref(dim);
	return rc;
}

static struct pv *emit_call(struct prog *p, const struct fdef *f, const char *fname, struct callargs *a,
			    struct pv *self_for_inplace)
{
	struct nodebuild nb = {.op = graph_op_name(f->op)};
	int inplace = 0;
	if (bind_call(p, fname, f->spec, a, &nb, &inplace) || ((f->flags & F_TSPLIT) && tsplit_attr(p, fname, &nb))) {
		imp_nb_free(&nb);
		return NULL;
	}
	if (f->flags & F_ELEM) {
		int any = 0;
		for (int i = 0; i < nb.nops; i++)
			any |= nb.ops[i].k == O_VALUE;
		if (!any) {
			imp_nb_free(&nb);
			return imp_perr(p, p->line, "%s: needs at least one tensor operand", fname);
		}
	}
	int g = imp_emit_node(p, &nb, f->flags & F_VIEW, f->flags & F_TUPLE);
	if (g < 0)
		return NULL;
	if ((inplace || (f->flags & F_INPLACE)) && !(f->flags & F_TUPLE)) {
		struct pv *self = self_for_inplace;
		if (self == NULL && a->npos > 0)
			self = a->pos[0];
		for (int k = 0; self == NULL && k < a->nkw; k++)
			if (!strcmp(a->kwname[k], "input"))
				self = a->kw[k];
		if (self == NULL || self->k != PV_TENSOR)
			return imp_perr(p, p->line, "%s: in-place on %s", fname, self ? imp_kind_name(self) : "nothing");
		imp_make_inplace(p, self, g);
		return self;
	}
	return imp_tensor_pv(p, g, f->flags & F_TUPLE);
}

/* x.to(...), x.type(...), x.float() ... */
static struct pv *call_cast(struct prog *p, struct pv *self, const char *m, struct callargs *a)
{
	const char *dtype = NULL;
	char fname[64];
	snprintf(fname, sizeof(fname), "Tensor.%s", m);
	for (int i = 0; imp_cast_methods[i].name; i++)
		if (!strcmp(imp_cast_methods[i].name, m)) {
			if (a->npos)
				return imp_perr(p, p->line, "%s() takes no positional arguments", fname);
			for (int k = 0; k < a->nkw; k++)
				if (strcmp(a->kwname[k], "memory_format"))
					return imp_perr(p, p->line, "unknown keyword argument '%s' for %s", a->kwname[k],
						    fname);
			dtype = imp_cast_methods[i].dtype;
		}
	if (!strcmp(m, "to") || !strcmp(m, "type")) {
		int is_type = m[0] == 't' && m[1] == 'y';
		for (int k = 0; k < a->npos; k++) {
			struct pv *v = a->pos[k];
			if (v->k == PV_DTYPE && !dtype) {
				dtype = v->s;
			} else if (v->k == PV_STR && is_type && !dtype) {
				enum graph_dtype dt = graph_dtype_parse(v->s);
				if (dt == DT_INVALID || strncmp(v->s, "torch.", 6))
					return imp_perr(p, p->line, "%s: unsupported type '%.40s'", fname, v->s);
				dtype = graph_dtype_name(dt);
			} else if ((v->k == PV_STR || v->k == PV_DEVICE) && !is_type && k == 0) {
				/* a device: no effect on values */
			} else if (v->k == PV_BOOL && k > 0) {
				/* non_blocking, copy */
			} else if (v->k == PV_TENSOR) {
				return imp_perr(p, p->line, "%s(other_tensor) is not supported; use a dtype", fname);
			} else {
				return imp_perr(p, p->line, "%s: unsupported argument %d (%s)", fname, k + 1,
					    imp_kind_name(v));
			}
		}
		for (int k = 0; k < a->nkw; k++) {
			const char *kn = a->kwname[k];
			struct pv *v = a->kw[k];
			if (!strcmp(kn, "dtype")) {
				if (v->k != PV_DTYPE)
					return imp_perr(p, p->line, "%s: dtype must be a torch dtype, got %s", fname,
						    imp_kind_name(v));
				if (dtype)
					return imp_perr(p, p->line, "%s got multiple dtypes", fname);
				dtype = v->s;
			} else if ((!strcmp(kn, "device") && !is_type) || !strcmp(kn, "non_blocking") ||
				   (!strcmp(kn, "copy") && !is_type) || (!strcmp(kn, "memory_format") && !is_type)) {
				/* no effect on values */
			} else {
				return imp_perr(p, p->line, "unknown keyword argument '%s' for %s", kn, fname);
			}
		}
		if (is_type && !dtype)
			return imp_perr(p, p->line, "%s() without a dtype is not supported", fname);
	}
	int g = imp_use_tensor(p, self, fname);
	if (g < 0)
		return NULL;
	if (dtype == NULL)
		return self;    /* only a device move: the same tensor */
	struct nodebuild nb = {.op = graph_op_name(OP_TO), .call = "to"};
	nb.ops[0].k = O_VALUE;
	nb.ops[0].gv = g;
	nb.nops = 1;
	if (imp_nb_attr(p, &nb, "dtype", json_string(dtype))) {
		imp_nb_free(&nb);
		return NULL;
	}
	/* a cast to the same dtype returns self in PyTorch: treat it as a view */
	return imp_tensor_pv(p, imp_emit_node(p, &nb, 1, 0), 0);
}

/* x.unsqueeze(d) / torch.unsqueeze(x, d) as getitem with None. */
static struct pv *call_unsqueeze(struct prog *p, const char *fname, struct pv *self, struct callargs *a,
				 int first)
{
	struct pv *x = self, *d = NULL;
	int npos = a->npos - first;
	if (!self) {
		if (a->npos < 1)
			return imp_perr(p, p->line, "%s: missing argument 'input'", fname);
		x = a->pos[0];
	}
	if (npos == 1 && a->nkw == 0)
		d = a->pos[first];
	else if (npos == 0 && a->nkw == 1 && !strcmp(a->kwname[0], "dim"))
		d = a->kw[0];
	if (d == NULL)
		return imp_perr(p, p->line, "%s takes exactly one argument 'dim'", fname);
	if (d->k != PV_INT)
		return imp_perr(p, p->line, "%s: dim must be an int, got %s", fname, imp_kind_name(d));
	if (d->i > GRAPH_MAX_DIMS || d->i < -GRAPH_MAX_DIMS - 1)
		return imp_perr(p, p->line, "%s: dim %lld out of range", fname, d->i);
	struct pv *items[GRAPH_MAX_DIMS + 2];
	int n = 0;
	struct pv *full = imp_pv_new(p, PV_SLICE);
	if (full == NULL || (full->items = imp_palloc(p, 3 * sizeof(struct pv *))) == NULL)
		return NULL;
	full->n = 3;
	full->items[0] = full->items[1] = full->items[2] = &import_pv_none_obj;
	if (d->i >= 0) {
		for (long long k = 0; k < d->i; k++)
			items[n++] = full;
		items[n++] = &import_pv_none_obj;
	} else {
		items[n++] = &import_pv_ellipsis_obj;
		items[n++] = &import_pv_none_obj;
		for (long long k = 0; k < -d->i - 1; k++)
			items[n++] = full;
	}
	return imp_getitem(p, x, items, n, 1);
}

/* A conv1d attribute (int, one-int tuple or, for padding, a string) as
 * conv2d's pair with `h` for the unit height; strings stay.  NULL (absent)
 * stays absent.  0, or -1 with the error set. */
static int conv1d_pair(struct prog *p, const char *fname, struct nodebuild *b, const char *key, long long h)
{
	json_t *v = b->attrs ? json_object_get(b->attrs, key) : NULL;
	if (v == NULL || json_is_string(v))
		return 0;
	if (json_is_array(v) && json_array_size(v) == 1)
		v = json_array_get(v, 0);
	if (!json_is_integer(v)) {
		imp_perr(p, p->line, "%s argument '%s': expected an int or a 1-tuple of ints%s", fname, key,
		     strcmp(key, "padding") ? "" : " or a string");
		return -1;
	}
	json_t *pair = json_pack("[II]", h, json_integer_value(v));
	return imp_nb_attr(p, b, key, pair);
}

/* torch.conv1d / F.conv1d as conv2d over a unit height, which is how
 * PyTorch itself runs it: x[..., None, :] and w[..., None, :] in, conv2d
 * with (1, s) stride, (0, p) padding, (1, d) dilation, then [..., 0, :]
 * drops the height.  Returns the result or NULL with the error set. */
static struct pv *call_conv1d(struct prog *p, const char *fname, struct callargs *a)
{
	struct nodebuild nb = {.op = graph_op_name(OP_CONV2D)};
	int inplace = 0;
	if (bind_call(p, fname, CONV1D_SPEC, a, &nb, &inplace) || conv1d_pair(p, fname, &nb, "stride", 1) ||
	    conv1d_pair(p, fname, &nb, "padding", 0) || conv1d_pair(p, fname, &nb, "dilation", 1)) {
		imp_nb_free(&nb);
		return NULL;
	}
	struct pv *full = imp_pv_new(p, PV_SLICE);
	if (full == NULL || (full->items = imp_palloc(p, 3 * sizeof(struct pv *))) == NULL) {
		imp_nb_free(&nb);
		return NULL;
	}
	full->n = 3;
	full->items[0] = full->items[1] = full->items[2] = &import_pv_none_obj;
	struct pv *zero = imp_pv_int(p, 0);
	struct pv *add_h[3] = {&import_pv_ellipsis_obj, &import_pv_none_obj, full}, *drop_h[3] = {&import_pv_ellipsis_obj, zero, full};
	for (int k = 0; k < 2; k++) {
		struct pv *t = zero ? imp_tensor_pv(p, nb.ops[k].gv, 0) : NULL;
		struct pv *u = t ? imp_getitem(p, t, add_h, 3, 1) : NULL;
		if (u == NULL) {
			imp_nb_free(&nb);
			return NULL;
		}
		nb.ops[k].gv = u->gv;
	}
	nb.call = fname;
	struct pv *r = imp_tensor_pv(p, imp_emit_node(p, &nb, 0, 0), 0);
	return r ? imp_getitem(p, r, drop_h, 3, 1) : NULL;
}

/* torch.arange(end) / (start, end, step=1), keywords too; dtype= and the
 * ignored device/layout/pin_memory/requires_grad.  A node with no operands;
 * the numbers keep their kind (the graph infers the dtype from them as
 * PyTorch does).  Returns the result or NULL with the error set. */
static struct pv *call_arange(struct prog *p, const char *fname, struct callargs *a)
{
	static const char *const names[3] = {"start", "end", "step"};
	struct pv *num[3] = {0}, *dtype = NULL;
	int have_end_kw = 0;
	for (int k = 0; k < a->nkw; k++)
		have_end_kw |= !strcmp(a->kwname[k], "end");
	if (a->npos > 3)
		return imp_perr(p, p->line, "%s takes at most 3 positional arguments (%d given)", fname, a->npos);
	if (a->npos == 1 && !have_end_kw)
		num[1] = a->pos[0];
	else
		for (int k = 0; k < a->npos; k++)
			num[k] = a->pos[k];
	for (int k = 0; k < a->nkw; k++) {
		const char *kn = a->kwname[k];
		int q = -1;
		for (int i = 0; i < 3; i++)
			if (!strcmp(kn, names[i]))
				q = i;
		if (q >= 0) {
			if (num[q])
				return imp_perr(p, p->line, "%s got multiple values for argument '%s'", fname, kn);
			num[q] = a->kw[k];
		} else if (!strcmp(kn, "dtype")) {
			if (a->kw[k]->k != PV_DTYPE && a->kw[k]->k != PV_NONE)
				return imp_perr(p, p->line, "%s argument 'dtype': expected a dtype such as torch.float16, "
					    "got %s", fname, imp_kind_name(a->kw[k]));
			dtype = a->kw[k]->k == PV_DTYPE ? a->kw[k] : NULL;
		} else if (strcmp(kn, "device") && strcmp(kn, "layout") && strcmp(kn, "pin_memory") &&
			   strcmp(kn, "requires_grad")) {
			return imp_perr(p, p->line, "unknown keyword argument '%s' for %s", kn, fname);
		}
	}
	if (num[1] == NULL)
		return imp_perr(p, p->line, "%s: missing argument 'end'", fname);
	struct nodebuild nb = {.op = graph_op_name(OP_ARANGE), .call = fname};
	for (int i = 0; i < 3; i++) {
		struct pv *v = num[i];
		if (v == NULL)
			continue;
		if (v->k != PV_INT && v->k != PV_FLOAT) {
			imp_nb_free(&nb);
			return imp_perr(p, p->line, "%s argument '%s': expected a number, got %s", fname, names[i],
				    imp_kind_name(v));
		}
		if (!isfinite(imp_num_val(v))) {
			imp_nb_free(&nb);
			return imp_perr(p, p->line, "%s argument '%s': not a finite number", fname, names[i]);
		}
		if (imp_nb_attr(p, &nb, names[i], v->k == PV_INT ? json_integer(v->i) : json_real(v->f))) {
			imp_nb_free(&nb);
			return NULL;
		}
	}
	if (dtype && imp_nb_attr(p, &nb, "dtype", json_string(dtype->s))) {
		imp_nb_free(&nb);
		return NULL;
	}
	return imp_tensor_pv(p, imp_emit_node(p, &nb, 0, 0), 0);
}

struct pv *imp_call_value(struct prog *p, struct pv *fn, struct callargs *a)
{
	if (p->meta_mode)
		return imp_perr(p, p->line, "calls are not allowed in weight_meta.py");
	if (fn->k == PV_PATH) {
		const char *name = fn->s;
		if (!strcmp(name, "slice")) {
			if (a->nkw || a->npos < 1 || a->npos > 3)
				return imp_perr(p, p->line, "slice() takes 1 to 3 positional arguments");
			struct pv *s = imp_pv_new(p, PV_SLICE);
			if (s == NULL || (s->items = imp_palloc(p, 3 * sizeof(struct pv *))) == NULL)
				return NULL;
			s->n = 3;
			s->items[0] = s->items[1] = s->items[2] = &import_pv_none_obj;
			if (a->npos == 1)
				s->items[1] = a->pos[0];
			else
				for (int k = 0; k < a->npos; k++)
					s->items[k] = a->pos[k];
			for (int k = 0; k < 3; k++)
				if (s->items[k]->k != PV_INT && s->items[k]->k != PV_NONE)
					return imp_perr(p, p->line, "slice() bounds must be ints or None, got %s",
						    imp_kind_name(s->items[k]));
			return s;
		}
		if (!strcmp(name, "device") || !strcmp(name, "torch.device"))
			return imp_pv_new(p, PV_DEVICE);
		if (!strcmp(name, "torch.unsqueeze"))
			return call_unsqueeze(p, name, NULL, a, 1);
		if (!strcmp(name, "torch.conv1d") || !strcmp(name, "torch.nn.functional.conv1d"))
			return call_conv1d(p, name, a);
		if (!strcmp(name, "torch.arange"))
			return call_arange(p, name, a);
		for (int i = 0; funcs[i].name; i++)
			if (!strcmp(funcs[i].name, name))
				return emit_call(p, &funcs[i], name, a, NULL);
		return imp_perr(p, p->line, "unsupported call %s", name);
	}
	if (fn->k == PV_METHOD) {
		const char *m = fn->s;
		struct pv *self = fn->self;
		char fname[80];
		snprintf(fname, sizeof(fname), "Tensor.%.40s", m);
		if (self->k == PV_GTUPLE)
			return imp_perr(p, p->line,
				    "%s: %s is a tuple (a split, chunk, unbind or tensor_split result); index or "
				    "unpack it first",
				    fname, imp_gv_label(p, self->gv));
		if (!strcmp(m, "unsqueeze"))
			return call_unsqueeze(p, fname, self, a, 0);
		if (!strcmp(m, "to") || !strcmp(m, "type"))
			return call_cast(p, self, m, a);
		for (int i = 0; imp_cast_methods[i].name; i++)
			if (!strcmp(imp_cast_methods[i].name, m))
				return call_cast(p, self, m, a);
		if (!strcmp(m, "view") && a->npos == 1 && a->pos[0]->k == PV_DTYPE)
			return imp_perr(p, p->line, "Tensor.view(dtype) (a bit cast) is not supported");
		size_t ml = strlen(m);
		int inplace = 0;
		char base[48];
		for (int i = 0; inplace_methods[i]; i++)
			if (!strcmp(inplace_methods[i], m))
				inplace = 1;
		snprintf(base, sizeof(base), "%.*s", (int)(inplace ? ml - 1 : ml), m);
		for (int i = 0; methods[i].name; i++) {
			if (strcmp(methods[i].name, base))
				continue;
			if (a->npos >= MAX_ARGS)
				return imp_perr(p, p->line, "too many arguments");
			struct callargs *b = malloc(sizeof(*b));
			if (b == NULL)
				return imp_prog_oom(p);
			*b = *a;
			b->pos[0] = self;
			memcpy(b->pos + 1, a->pos, (size_t)a->npos * sizeof(a->pos[0]));
			b->npos = a->npos + 1;
			struct fdef f = methods[i];
			if (inplace)
				f.flags |= F_INPLACE;
			struct pv *r = emit_call(p, &f, fname, b, self);
			free(b);
			return r;
		}
		return imp_perr(p, p->line, "unsupported call %s", fname);
	}
	return imp_perr(p, p->line, "%s is not callable", imp_kind_name(fn));
}
