/* graph_ops.c - the op table: attribute checking, normalisation and shape and
 * dtype inference with PyTorch semantics, one function per op family.
 *
 * Every infer_* function sees operands already resolved to values (or scalars,
 * or nothing for an absent optional operand) and attributes already checked for
 * their JSON kind and defaulted by check_attrs().  It validates what only the
 * op knows (ranges, shapes), rewrites attributes into their normal form (dims
 * non-negative, indices resolved) and writes the result types. */
#define PASSFS_GRAPH_INTERNAL
#include "graph_util.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- attribute specs ---------------------------------------------------- */

enum akind { AK_INT, AK_INTS, AK_INT_OR_INTS, AK_NUM, AK_NUM_OR_NUMS, AK_BOOL, AK_STR,
	     AK_DTYPE, AK_ANY };
#define F_REQ 1
#define F_NULL 2

struct aspec {
	const char *name;
	enum akind kind;
	int flags;
	const char *dflt;       /* JSON text of the default, NULL when required */
};

#define NO_ATTRS {{NULL, 0, 0, NULL}}

static const struct aspec a_none[] = NO_ATTRS;
static const struct aspec a_addsub[] = {{"alpha", AK_NUM, 0, "1"}, {NULL, 0, 0, NULL}};
static const struct aspec a_gelu[] = {{"approximate", AK_STR, 0, "\"none\""}, {NULL, 0, 0, NULL}};
static const struct aspec a_relu[] = {{"inplace", AK_BOOL, 0, "false"}, {NULL, 0, 0, NULL}};
static const struct aspec a_dropout[] = {
	{"p", AK_NUM, 0, "0.5"}, {"training", AK_BOOL, 0, "false"}, {"inplace", AK_BOOL, 0, "false"},
	{NULL, 0, 0, NULL}};
static const struct aspec a_softmax[] = {
	{"dim", AK_INT, F_REQ, NULL}, {"dtype", AK_DTYPE, F_NULL, "null"}, {NULL, 0, 0, NULL}};
static const struct aspec a_layer_norm[] = {
	{"normalized_shape", AK_INT_OR_INTS, F_REQ, NULL}, {"eps", AK_NUM, 0, "1e-5"},
	{NULL, 0, 0, NULL}};
static const struct aspec a_batch_norm[] = {
	{"training", AK_BOOL, 0, "false"}, {"momentum", AK_NUM, F_NULL, "0.1"},
	{"eps", AK_NUM, 0, "1e-5"}, {NULL, 0, 0, NULL}};
static const struct aspec a_conv2d[] = {
	{"stride", AK_INT_OR_INTS, 0, "1"}, {"padding", AK_ANY, 0, "0"},
	{"dilation", AK_INT_OR_INTS, 0, "1"}, {"groups", AK_INT, 0, "1"}, {NULL, 0, 0, NULL}};
static const struct aspec a_interpolate[] = {
	{"size", AK_INT_OR_INTS, F_NULL, "null"}, {"scale_factor", AK_NUM_OR_NUMS, F_NULL, "null"},
	{"mode", AK_STR, 0, "\"nearest\""}, {"align_corners", AK_BOOL, F_NULL, "null"},
	{"recompute_scale_factor", AK_BOOL, F_NULL, "null"}, {"antialias", AK_BOOL, 0, "false"},
	{NULL, 0, 0, NULL}};
static const struct aspec a_aap2d[] = {{"output_size", AK_ANY, F_REQ, NULL}, {NULL, 0, 0, NULL}};
static const struct aspec a_sdpa[] = {
	{"dropout_p", AK_NUM, 0, "0"}, {"is_causal", AK_BOOL, 0, "false"},
	{"scale", AK_NUM, F_NULL, "null"}, {"enable_gqa", AK_BOOL, 0, "false"}, {NULL, 0, 0, NULL}};
static const struct aspec a_reduce[] = {
	{"dim", AK_INT_OR_INTS, F_NULL, "null"}, {"keepdim", AK_BOOL, 0, "false"},
	{"dtype", AK_DTYPE, F_NULL, "null"}, {NULL, 0, 0, NULL}};
static const struct aspec a_transpose[] = {
	{"dim0", AK_INT, F_REQ, NULL}, {"dim1", AK_INT, F_REQ, NULL}, {NULL, 0, 0, NULL}};
static const struct aspec a_permute[] = {{"dims", AK_INTS, F_REQ, NULL}, {NULL, 0, 0, NULL}};
static const struct aspec a_reshape[] = {{"shape", AK_INT_OR_INTS, F_REQ, NULL}, {NULL, 0, 0, NULL}};
static const struct aspec a_flatten[] = {
	{"start_dim", AK_INT, 0, "0"}, {"end_dim", AK_INT, 0, "-1"}, {NULL, 0, 0, NULL}};
static const struct aspec a_expand[] = {{"size", AK_INT_OR_INTS, F_REQ, NULL}, {NULL, 0, 0, NULL}};
static const struct aspec a_getitem[] = {{"index", AK_ANY, F_REQ, NULL}, {NULL, 0, 0, NULL}};
static const struct aspec a_cat[] = {{"dim", AK_INT, 0, "0"}, {NULL, 0, 0, NULL}};
static const struct aspec a_split[] = {
	{"split_size", AK_INT_OR_INTS, F_REQ, NULL}, {"dim", AK_INT, 0, "0"}, {NULL, 0, 0, NULL}};
static const struct aspec a_chunk[] = {
	{"chunks", AK_INT, F_REQ, NULL}, {"dim", AK_INT, 0, "0"}, {NULL, 0, 0, NULL}};
static const struct aspec a_pad[] = {
	{"pad", AK_INTS, F_REQ, NULL}, {"mode", AK_STR, 0, "\"constant\""},
	{"value", AK_NUM, F_NULL, "null"}, {NULL, 0, 0, NULL}};
static const struct aspec a_to[] = {{"dtype", AK_DTYPE, F_REQ, NULL}, {NULL, 0, 0, NULL}};
static const struct aspec a_leaky_relu[] = {
	{"negative_slope", AK_NUM, 0, "0.01"}, {"inplace", AK_BOOL, 0, "false"}, {NULL, 0, 0, NULL}};
static const struct aspec a_unbind[] = {{"dim", AK_INT, 0, "0"}, {NULL, 0, 0, NULL}};
static const struct aspec a_tensor_split[] = {
	{"sections", AK_INT, F_NULL, "null"}, {"indices", AK_INTS, F_NULL, "null"}, {"dim", AK_INT, 0, "0"},
	{NULL, 0, 0, NULL}};
static const struct aspec a_baddbmm[] = {
	{"beta", AK_NUM, 0, "1"}, {"alpha", AK_NUM, 0, "1"}, {NULL, 0, 0, NULL}};
static const struct aspec a_arange[] = {
	{"start", AK_NUM, 0, "0"}, {"end", AK_NUM, F_REQ, NULL}, {"step", AK_NUM, 0, "1"},
	{"dtype", AK_DTYPE, F_NULL, "null"}, {NULL, 0, 0, NULL}};
static const struct aspec a_avg_pool2d[] = {
	{"kernel_size", AK_INT_OR_INTS, F_REQ, NULL}, {"stride", AK_INT_OR_INTS, F_NULL, "null"},
	{"padding", AK_INT_OR_INTS, 0, "0"}, {"ceil_mode", AK_BOOL, 0, "false"},
	{"count_include_pad", AK_BOOL, 0, "true"}, {"divisor_override", AK_INT, F_NULL, "null"},
	{NULL, 0, 0, NULL}};
static const struct aspec a_unfold[] = {
	{"dimension", AK_INT, F_REQ, NULL}, {"size", AK_INT, F_REQ, NULL}, {"step", AK_INT, F_REQ, NULL},
	{NULL, 0, 0, NULL}};

/* ---- operand helpers ----------------------------------------------------- */

struct icx {                    /* what an infer function works with */
	struct gctx *c;
	const struct graph_variant *v;
	struct graph_node *n;
	struct graph_value *res;
	int *nres;
};

static const struct graph_value *opv(struct icx *x, int i)
{
	if (i >= x->n->n_operands || x->n->operands[i].kind != OPND_VALUE)
		return NULL;
	return &x->v->values[x->n->operands[i].value];
}

static int64_t aint(struct icx *x, const char *k)
{
	return json_integer_value(json_object_get(x->n->attrs, k));
}

static double anum(struct icx *x, const char *k)
{
	return json_number_value(json_object_get(x->n->attrs, k));
}

static int abool(struct icx *x, const char *k)
{
	return json_is_true(json_object_get(x->n->attrs, k));
}

static const char *astr(struct icx *x, const char *k)
{
	return json_string_value(json_object_get(x->n->attrs, k));
}

static int anull(struct icx *x, const char *k)
{
	json_t *j = json_object_get(x->n->attrs, k);
	return j == NULL || json_is_null(j);
}

static void aset_int(struct icx *x, const char *k, int64_t val)
{
	json_object_set_new(x->n->attrs, k, json_integer(val));
}

/* Reads an int-or-list attribute into out (at most max entries).  A single int
 * is returned as one entry with *was_scalar set. */
static int aints(struct icx *x, const char *k, int64_t *out, int max, int *cnt, int *was_scalar)
{
	json_t *j = json_object_get(x->n->attrs, k);
	if (was_scalar)
		*was_scalar = 0;
	if (json_is_integer(j)) {
		out[0] = json_integer_value(j);
		*cnt = 1;
		if (was_scalar)
			*was_scalar = 1;
		return 0;
	}
	if ((int)json_array_size(j) > max)
		return graph_err(x->c, "attribute '%s' has %zu entries, at most %d allowed", k,
			    json_array_size(j), max);
	*cnt = (int)json_array_size(j);
	for (int i = 0; i < *cnt; i++)
		out[i] = json_integer_value(json_array_get(j, i));
	return 0;
}

static void aset_ints(struct icx *x, const char *k, const int64_t *vals, int cnt)
{
	json_t *a = json_array();
	for (int i = 0; i < cnt; i++)
		json_array_append_new(a, json_integer(vals[i]));
	json_object_set_new(x->n->attrs, k, a);
}

/* Wraps a PyTorch dim (negative counts from the end) into [0, ndim). */
static int wrap_dim(struct icx *x, const char *what, int64_t d, int ndim, int64_t *out)
{
	int n = ndim > 0 ? ndim : 1;    /* PyTorch lets 0-dim tensors use dim 0 / -1 */
	*out = 0;
	if (d < -n || d >= n)
		return graph_err(x->c, "%s %lld is out of range for a %d-dim tensor (expected -%d..%d)",
			    what, (long long)d, ndim, n, n - 1);
	*out = d < 0 ? d + n : d;
	return 0;
}

static const char *shp(const struct graph_shape *s, char *buf)
{
	return graph_shape_str(s, buf, 160);
}

static int set_result(struct icx *x, enum graph_dtype dt, const struct graph_shape *s)
{
	int64_t numel = 1;
	for (int i = 0; i < s->ndim; i++) {
		if (s->d[i] < 0)
			return graph_err(x->c, "result dim %d would be negative (%lld)", i, (long long)s->d[i]);
		if (s->d[i] > GRAPH_MAX_NUMEL)
			return graph_err(x->c, "result is too large");
		numel *= s->d[i] ? s->d[i] : 1;
		if (numel > GRAPH_MAX_NUMEL)
			return graph_err(x->c, "result is too large (over 2^40 elements)");
	}
	int k = (*x->nres)++;
	x->res[k].dtype = dt;
	x->res[k].shape = *s;
	return 0;
}

/* ---- dtypes: PyTorch's promotion ----------------------------------------- */

static int category(enum graph_dtype d)
{
	return d == DT_BOOL ? 0 : graph_dtype_is_float(d) ? 2 : 1;
}

static enum graph_dtype promote2(enum graph_dtype a, enum graph_dtype b)
{
	if (a == DT_INVALID)
		return b;
	if (b == DT_INVALID || a == b)
		return a;
	if (a == DT_BOOL)
		return b;
	if (b == DT_BOOL)
		return a;
	int fa = graph_dtype_is_float(a), fb = graph_dtype_is_float(b);
	if (fa && !fb)
		return a;
	if (fb && !fa)
		return b;
	if (!fa)                        /* both ints */
		return (a == DT_I64 || b == DT_I64) ? DT_I64 : DT_I32;
	if (a == DT_F64 || b == DT_F64)
		return DT_F64;
	return DT_F32;                  /* f32 with anything, or f16 with bf16 */
}

/* c10's combine_categories: a lower-priority class raises the dtype only when
 * it is of a higher category (bool < int < float). */
static enum graph_dtype combine(enum graph_dtype higher, enum graph_dtype lower)
{
	if (higher == DT_INVALID)
		return lower;
	if (graph_dtype_is_float(higher))
		return higher;
	if (higher == DT_BOOL || (lower != DT_INVALID && category(lower) == 2))
		return promote2(higher, lower);
	return higher;
}

static enum graph_dtype scalar_dtype(const struct graph_operand *o)
{
	if (o->scalar_is_bool)
		return DT_BOOL;
	return o->scalar_is_int ? DT_I64 : DT_F32;  /* Python float: the default dtype */
}

/* Result dtype of operands [from, to) (torch.result_type). */
static enum graph_dtype result_type(struct icx *x, int from, int to)
{
	enum graph_dtype dim = DT_INVALID, zero = DT_INVALID, wrapped = DT_INVALID;
	for (int i = from; i < to && i < x->n->n_operands; i++) {
		const struct graph_operand *o = &x->n->operands[i];
		if (o->kind == OPND_SCALAR) {
			wrapped = promote2(wrapped, scalar_dtype(o));
		} else if (o->kind == OPND_VALUE) {
			const struct graph_value *t = &x->v->values[o->value];
			if (t->shape.ndim > 0)
				dim = promote2(dim, t->dtype);
			else
				zero = promote2(zero, t->dtype);
		}
	}
	return combine(dim, combine(zero, wrapped));
}

static int need_float(struct icx *x, int i)
{
	const struct graph_value *t = opv(x, i);
	if (t && !graph_dtype_is_float(t->dtype))
		return graph_err(x->c, "operand %d ('%s') is %s; this op needs a floating-point tensor",
			    i, t->name, graph_dtype_name(t->dtype));
	return 0;
}

/* ---- shapes --------------------------------------------------------------- */

static int broadcast(struct icx *x, struct graph_shape *acc, const struct graph_shape *s,
		     const char *name)
{
	char b1[160], b2[160];
	struct graph_shape r;
	r.ndim = acc->ndim > s->ndim ? acc->ndim : s->ndim;
	for (int i = 0; i < r.ndim; i++) {
		int ia = acc->ndim - r.ndim + i, is = s->ndim - r.ndim + i;
		int64_t a = ia >= 0 ? acc->d[ia] : 1, b = is >= 0 ? s->d[is] : 1;
		if (a != b && a != 1 && b != 1)
			return graph_err(x->c, "shapes %s and %s (of '%s') do not broadcast (dim %d: %lld vs %lld)",
				    shp(acc, b1), shp(s, b2), name, i - r.ndim,
				    (long long)a, (long long)b);
		r.d[i] = a == 1 ? b : a;
	}
	*acc = r;
	return 0;
}

/* Broadcast shape of the tensor operands in [from, to). */
static int broadcast_operands(struct icx *x, int from, int to, struct graph_shape *out)
{
	out->ndim = 0;
	for (int i = from; i < to && i < x->n->n_operands; i++) {
		const struct graph_value *t = opv(x, i);
		if (t && broadcast(x, out, &t->shape, t->name))
			return -1;
	}
	return 0;
}

/* ---- elementwise ---------------------------------------------------------- */

static int infer_binary(struct icx *x)
{
	struct graph_shape s;
	if (opv(x, 0) == NULL && opv(x, 1) == NULL)
		return graph_err(x->c, "needs at least one tensor operand (both are numbers)");
	if (broadcast_operands(x, 0, 2, &s))
		return -1;
	enum graph_dtype dt = result_type(x, 0, 2);
	if (x->n->op == OP_DIV && !graph_dtype_is_float(dt))
		dt = DT_F32;            /* true division */
	if (x->n->op == OP_SUB && dt == DT_BOOL)
		return graph_err(x->c, "subtraction of bool tensors is not supported (PyTorch refuses it)");
	if (x->n->op == OP_POW && opv(x, 1) == NULL && x->n->operands[1].kind == OPND_SCALAR &&
	    !x->n->operands[1].scalar_is_int && !graph_dtype_is_float(dt))
		dt = DT_F32;
	return set_result(x, dt, &s);
}

static int infer_where(struct icx *x)
{
	const struct graph_value *cond = opv(x, 0);
	struct graph_shape s;
	if (cond == NULL)
		return graph_err(x->c, "the condition (operand 0) must be a tensor");
	if (cond->dtype != DT_BOOL)
		return graph_err(x->c, "the condition '%s' is %s; it must be bool", cond->name,
			    graph_dtype_name(cond->dtype));
	if (broadcast_operands(x, 0, 3, &s))
		return -1;
	return set_result(x, result_type(x, 1, 3), &s);
}

static int infer_unary(struct icx *x)
{
	const struct graph_value *t = opv(x, 0);
	enum graph_dtype dt = t->dtype;
	switch (x->n->op) {
	case OP_RELU:
		if (dt == DT_BOOL)
			return graph_err(x->c, "relu of a bool tensor is not supported");
		break;
	case OP_SILU:
	case OP_GELU:
	case OP_LEAKY_RELU:
		if (need_float(x, 0))
			return -1;
		break;
	default:                        /* sigmoid, tanh, exp, rsqrt: ints become float */
		if (!graph_dtype_is_float(dt))
			dt = DT_F32;
	}
	if (x->n->op == OP_GELU) {
		const char *a = astr(x, "approximate");
		if (strcmp(a, "none") != 0 && strcmp(a, "tanh") != 0)
			return graph_err(x->c, "approximate must be \"none\" or \"tanh\", not \"%s\"", a);
	}
	return set_result(x, dt, &t->shape);
}

static int infer_identity(struct icx *x)
{
	const struct graph_value *t = opv(x, 0);
	if (x->n->op == OP_DROPOUT) {
		double p = anum(x, "p");
		if (abool(x, "training"))
			return graph_err(x->c, "training=true: passfs evaluates in eval mode, where dropout is the identity");
		if (!(p >= 0 && p <= 1))
			return graph_err(x->c, "p must be between 0 and 1, not %g", p);
	}
	return set_result(x, t->dtype, &t->shape);
}

static int infer_to(struct icx *x)
{
	enum graph_dtype dt = graph_dtype_parse(astr(x, "dtype"));
	return set_result(x, dt, &opv(x, 0)->shape);
}

static int infer_softmax(struct icx *x)
{
	const struct graph_value *t = opv(x, 0);
	int64_t d;
	enum graph_dtype dt = t->dtype;
	if (wrap_dim(x, "dim", aint(x, "dim"), t->shape.ndim, &d))
		return -1;
	aset_int(x, "dim", d);
	if (!anull(x, "dtype"))
		dt = graph_dtype_parse(astr(x, "dtype"));
	if (!graph_dtype_is_float(dt))
		return graph_err(x->c, "softmax of %s: needs a floating-point tensor (or a float dtype attribute)",
			    graph_dtype_name(dt));
	return set_result(x, dt, &t->shape);
}

static int infer_prelu(struct icx *x)
{
	const struct graph_value *t = opv(x, 0), *w = opv(x, 1);
	if (w == NULL)
		return graph_err(x->c, "weight (operand 1) must be a tensor");
	if (need_float(x, 0))
		return -1;
	int64_t wn = graph_shape_numel(&w->shape);
	int64_t ch = t->shape.ndim >= 2 ? t->shape.d[1] : 1;
	if (w->shape.ndim > 1)
		return graph_err(x->c, "weight '%s' must be 1-D or a scalar, it has %d dims", w->name, w->shape.ndim);
	if (wn != 1 && wn != ch)
		return graph_err(x->c, "weight '%s' has %lld elements; expected 1 or the %lld channels of '%s'",
			    w->name, (long long)wn, (long long)ch, t->name);
	return set_result(x, result_type(x, 0, 2), &t->shape);
}

/* ---- normalisation ---------------------------------------------------------- */

static int check_param(struct icx *x, int i, const int64_t *dims, int nd, const char *role)
{
	const struct graph_value *p = opv(x, i);
	char b1[160];
	if (i >= x->n->n_operands || x->n->operands[i].kind == OPND_NONE)
		return 0;
	if (p == NULL)
		return graph_err(x->c, "%s (operand %d) must be a tensor or null", role, i);
	int ok = p->shape.ndim == nd;
	for (int k = 0; ok && k < nd; k++)
		ok = p->shape.d[k] == dims[k];
	if (!ok) {
		struct graph_shape want = {.ndim = nd};
		memcpy(want.d, dims, sizeof(int64_t) * (size_t)nd);
		char b2[160];
		return graph_err(x->c, "%s '%s' has shape %s, expected %s", role, p->name,
			    shp(&p->shape, b1), shp(&want, b2));
	}
	return 0;
}

static int infer_layer_norm(struct icx *x)
{
	const struct graph_value *t = opv(x, 0);
	int64_t ns[GRAPH_MAX_DIMS];
	int cnt;
	char b1[160];
	if (need_float(x, 0) || aints(x, "normalized_shape", ns, GRAPH_MAX_DIMS, &cnt, NULL))
		return -1;
	if (cnt == 0 || cnt > t->shape.ndim)
		return graph_err(x->c, "normalized_shape has %d dims; '%s' has shape %s", cnt, t->name,
			    shp(&t->shape, b1));
	for (int k = 0; k < cnt; k++)
		if (ns[k] != t->shape.d[t->shape.ndim - cnt + k])
			return graph_err(x->c, "normalized_shape does not match the last %d dims of '%s' %s",
				    cnt, t->name, shp(&t->shape, b1));
	aset_ints(x, "normalized_shape", ns, cnt);
	if (!(anum(x, "eps") >= 0))
		return graph_err(x->c, "eps must be >= 0");
	if (check_param(x, 1, ns, cnt, "weight") || check_param(x, 2, ns, cnt, "bias"))
		return -1;
	return set_result(x, t->dtype, &t->shape);
}

static int infer_batch_norm(struct icx *x)
{
	const struct graph_value *t = opv(x, 0);
	char b1[160];
	if (need_float(x, 0))
		return -1;
	if (t->shape.ndim < 2)
		return graph_err(x->c, "input '%s' %s needs at least 2 dims (N, C, ...)", t->name, shp(&t->shape, b1));
	if (abool(x, "training"))
		return graph_err(x->c, "training=true: passfs evaluates batch_norm in eval mode (running statistics)");
	for (int i = 1; i <= 2; i++)
		if (x->n->operands[i].kind == OPND_NONE)
			return graph_err(x->c, "%s (operand %d) is required in eval mode",
				    i == 1 ? "running_mean" : "running_var", i);
	int64_t c = t->shape.d[1];
	static const char *roles[] = {"", "running_mean", "running_var", "weight", "bias"};
	for (int i = 1; i < x->n->n_operands; i++)
		if (check_param(x, i, &c, 1, roles[i]))
			return -1;
	if (!(anum(x, "eps") >= 0))
		return graph_err(x->c, "eps must be >= 0");
	return set_result(x, t->dtype, &t->shape);
}

/* ---- linear algebra ----------------------------------------------------------- */

static int infer_matmul(struct icx *x)
{
	const struct graph_value *a = opv(x, 0), *b = opv(x, 1);
	char b1[160], b2[160];
	if (a == NULL || b == NULL)
		return graph_err(x->c, "both operands must be tensors");
	if (need_float(x, 0) || need_float(x, 1))
		return -1;
	const struct graph_shape *sa = &a->shape, *sb = &b->shape;
	if (sa->ndim == 0 || sb->ndim == 0)
		return graph_err(x->c, "both operands need at least 1 dim ('%s' %s, '%s' %s)", a->name,
			    shp(sa, b1), b->name, shp(sb, b2));
	int64_t k_a = sa->d[sa->ndim - 1];
	int64_t k_b = sb->ndim == 1 ? sb->d[0] : sb->d[sb->ndim - 2];
	if (k_a != k_b)
		return graph_err(x->c, "inner dims differ: '%s' %s @ '%s' %s (%lld vs %lld)", a->name,
			    shp(sa, b1), b->name, shp(sb, b2), (long long)k_a, (long long)k_b);
	if (x->n->op == OP_BMM && (sa->ndim != 3 || sb->ndim != 3 || sa->d[0] != sb->d[0]))
		return graph_err(x->c, "bmm needs two 3-D tensors with the same batch: '%s' %s, '%s' %s",
			    a->name, shp(sa, b1), b->name, shp(sb, b2));
	struct graph_shape batch_a = {0}, batch_b = {0}, r;
	if (sa->ndim > 2) {
		batch_a.ndim = sa->ndim - 2;
		memcpy(batch_a.d, sa->d, sizeof(int64_t) * (size_t)batch_a.ndim);
	}
	if (sb->ndim > 2) {
		batch_b.ndim = sb->ndim - 2;
		memcpy(batch_b.d, sb->d, sizeof(int64_t) * (size_t)batch_b.ndim);
	}
	if (broadcast(x, &batch_a, &batch_b, b->name))
		return -1;
	r = batch_a;
	if (sa->ndim >= 2)
		r.d[r.ndim++] = sa->d[sa->ndim - 2];
	if (sb->ndim >= 2)
		r.d[r.ndim++] = sb->d[sb->ndim - 1];
	if (a->dtype != b->dtype)
		return graph_err(x->c, "operands have different dtypes (%s and %s); matmul does not promote",
			    graph_dtype_name(a->dtype), graph_dtype_name(b->dtype));
	return set_result(x, a->dtype, &r);
}

/* baddbmm(input, batch1, batch2): beta * input + alpha * (batch1 @ batch2),
 * input broadcast to the [b, n, p] result; one dtype throughout, as PyTorch
 * requires.  Returns 0, or -1 with the error set. */
static int infer_baddbmm(struct icx *x)
{
	const struct graph_value *in = opv(x, 0), *a = opv(x, 1), *b = opv(x, 2);
	char b1[160], b2[160];
	if (a == NULL || b == NULL)
		return graph_err(x->c, "batch1 and batch2 (operands 1 and 2) must be tensors");
	if (need_float(x, 1))
		return -1;
	const struct graph_shape *sa = &a->shape, *sb = &b->shape;
	if (sa->ndim != 3 || sb->ndim != 3 || sa->d[0] != sb->d[0] || sa->d[2] != sb->d[1])
		return graph_err(x->c, "batch1 '%s' %s and batch2 '%s' %s must be [b, n, m] and [b, m, p]",
			    a->name, shp(sa, b1), b->name, shp(sb, b2));
	if (a->dtype != b->dtype || in->dtype != a->dtype)
		return graph_err(x->c, "operands have different dtypes (%s, %s, %s); baddbmm does not promote",
			    graph_dtype_name(in->dtype), graph_dtype_name(a->dtype), graph_dtype_name(b->dtype));
	struct graph_shape r = {3, {sa->d[0], sa->d[1], sb->d[2]}}, s = r;
	if (broadcast(x, &s, &in->shape, in->name))
		return -1;
	if (s.ndim != 3 || memcmp(s.d, r.d, sizeof(int64_t) * 3) != 0)
		return graph_err(x->c, "input '%s' %s does not broadcast to the result %s", in->name,
			    shp(&in->shape, b1), shp(&r, b2));
	return set_result(x, a->dtype, &r);
}

static int infer_linear(struct icx *x)
{
	const struct graph_value *t = opv(x, 0), *w = opv(x, 1);
	char b1[160], b2[160];
	if (w == NULL)
		return graph_err(x->c, "weight (operand 1) must be a tensor");
	if (need_float(x, 0) || need_float(x, 1))
		return -1;
	if (t->shape.ndim < 1 || (w->shape.ndim != 2 && w->shape.ndim != 1))
		return graph_err(x->c, "input '%s' %s and weight '%s' %s: weight must be [out, in]", t->name,
			    shp(&t->shape, b1), w->name, shp(&w->shape, b2));
	int64_t in = w->shape.d[w->shape.ndim - 1];
	if (t->shape.d[t->shape.ndim - 1] != in)
		return graph_err(x->c, "input '%s' %s has last dim %lld, weight '%s' %s expects %lld",
			    t->name, shp(&t->shape, b1), (long long)t->shape.d[t->shape.ndim - 1],
			    w->name, shp(&w->shape, b2), (long long)in);
	if (t->dtype != w->dtype)
		return graph_err(x->c, "input is %s but weight is %s; linear does not promote",
			    graph_dtype_name(t->dtype), graph_dtype_name(w->dtype));
	struct graph_shape r = t->shape;
	if (w->shape.ndim == 2)
		r.d[r.ndim - 1] = w->shape.d[0];
	else
		r.ndim--;
	if (x->n->n_operands > 2 && x->n->operands[2].kind != OPND_NONE) {
		const struct graph_value *bias = opv(x, 2);
		struct graph_shape tmp = r;
		if (bias == NULL)
			return graph_err(x->c, "bias (operand 2) must be a tensor or null");
		if (broadcast(x, &tmp, &bias->shape, bias->name))
			return -1;
		if (tmp.ndim != r.ndim || memcmp(tmp.d, r.d, sizeof(int64_t) * (size_t)r.ndim) != 0)
			return graph_err(x->c, "bias '%s' %s does not broadcast to the result %s", bias->name,
				    shp(&bias->shape, b1), shp(&r, b2));
	}
	return set_result(x, t->dtype, &r);
}

/* Reads an int-or-pair attribute into two values. */
static int pair_attr(struct icx *x, const char *k, int64_t out[2], int64_t min)
{
	int64_t v[GRAPH_MAX_DIMS];
	int cnt, sc;
	if (aints(x, k, v, GRAPH_MAX_DIMS, &cnt, &sc))
		return -1;
	if (cnt == 1) {
		out[0] = out[1] = v[0];
	} else if (cnt == 2) {
		out[0] = v[0];
		out[1] = v[1];
	} else {
		return graph_err(x->c, "attribute '%s' needs 1 or 2 values, it has %d", k, cnt);
	}
	if (out[0] < min || out[1] < min)
		return graph_err(x->c, "attribute '%s' must be >= %lld", k, (long long)min);
	aset_ints(x, k, out, 2);
	return 0;
}

static int infer_conv2d(struct icx *x)
{
	const struct graph_value *t = opv(x, 0), *w = opv(x, 1);
	int64_t st[2], dl[2], pd[2], groups = aint(x, "groups");
	char b1[160], b2[160];
	if (w == NULL)
		return graph_err(x->c, "weight (operand 1) must be a tensor");
	if (need_float(x, 0) || need_float(x, 1))
		return -1;
	if (t->shape.ndim != 4 && t->shape.ndim != 3)
		return graph_err(x->c, "input '%s' %s must be 4-D [N,C,H,W] (or 3-D unbatched)", t->name,
			    shp(&t->shape, b1));
	if (w->shape.ndim != 4)
		return graph_err(x->c, "weight '%s' %s must be 4-D [C_out, C_in/groups, kH, kW]", w->name,
			    shp(&w->shape, b1));
	if (t->dtype != w->dtype)
		return graph_err(x->c, "input is %s but weight is %s; conv2d does not promote",
			    graph_dtype_name(t->dtype), graph_dtype_name(w->dtype));
	if (pair_attr(x, "stride", st, 1) || pair_attr(x, "dilation", dl, 1))
		return -1;
	if (groups < 1)
		return graph_err(x->c, "groups must be >= 1, not %lld", (long long)groups);
	int b = t->shape.ndim == 4;
	int64_t cin = t->shape.d[b], h = t->shape.d[b + 1], wd = t->shape.d[b + 2];
	int64_t cout = w->shape.d[0], kh = w->shape.d[2], kw = w->shape.d[3];
	json_t *p = json_object_get(x->n->attrs, "padding");
	if (json_is_string(p)) {
		const char *ps = json_string_value(p);
		if (strcmp(ps, "valid") == 0) {
			pd[0] = pd[1] = 0;
		} else if (strcmp(ps, "same") == 0) {
			if (st[0] != 1 || st[1] != 1)
				return graph_err(x->c, "padding \"same\" needs stride 1");
			/* PyTorch pads the extra element on the right; keep the
			 * symmetric part here and record the total. */
			pd[0] = dl[0] * (kh - 1) / 2;
			pd[1] = dl[1] * (kw - 1) / 2;
			if ((dl[0] * (kh - 1)) % 2 || (dl[1] * (kw - 1)) % 2)
				return graph_err(x->c, "padding \"same\" with an even kernel is not supported");
		} else {
			return graph_err(x->c, "padding must be ints, \"same\" or \"valid\", not \"%s\"", ps);
		}
		aset_ints(x, "padding", pd, 2);
	} else if (json_is_integer(p) || json_is_array(p)) {
		for (size_t i = 0; i < json_array_size(p); i++)
			if (!json_is_integer(json_array_get(p, i)))
				return graph_err(x->c, "padding must be a list of ints");
		if (pair_attr(x, "padding", pd, 0))
			return -1;
	} else {
		return graph_err(x->c, "padding must be an int, a list of 2 ints, \"same\" or \"valid\"");
	}
	if (cin % groups || cout % groups || w->shape.d[1] * groups != cin)
		return graph_err(x->c, "weight '%s' %s does not fit input '%s' %s with groups=%lld", w->name,
			    shp(&w->shape, b1), t->name, shp(&t->shape, b2), (long long)groups);
	struct graph_shape r = t->shape;
	int64_t oh = (h + 2 * pd[0] - dl[0] * (kh - 1) - 1);
	int64_t ow = (wd + 2 * pd[1] - dl[1] * (kw - 1) - 1);
	if (oh < 0 || ow < 0)
		return graph_err(x->c, "kernel %lldx%lld (dilated) is larger than the padded input %s",
			    (long long)kh, (long long)kw, shp(&t->shape, b1));
	r.d[b] = cout;
	r.d[b + 1] = oh / st[0] + 1;
	r.d[b + 2] = ow / st[1] + 1;
	if (x->n->n_operands > 2 && check_param(x, 2, &cout, 1, "bias"))
		return -1;
	return set_result(x, t->dtype, &r);
}

static int infer_sdpa(struct icx *x)
{
	const struct graph_value *q = opv(x, 0), *k = opv(x, 1), *v = opv(x, 2);
	char b1[160], b2[160], b3[160];
	for (int i = 0; i < 3; i++)
		if (opv(x, i) == NULL)
			return graph_err(x->c, "q, k and v (operands 0-2) must be tensors");
	if (need_float(x, 0))
		return -1;
	if (q->dtype != k->dtype || q->dtype != v->dtype)
		return graph_err(x->c, "q, k and v must have one dtype (%s, %s, %s)", graph_dtype_name(q->dtype),
			    graph_dtype_name(k->dtype), graph_dtype_name(v->dtype));
	int nq = q->shape.ndim, nk = k->shape.ndim, nv = v->shape.ndim;
	if (nq < 2 || nk < 2 || nv < 2)
		return graph_err(x->c, "q, k and v need at least 2 dims");
	if (q->shape.d[nq - 1] != k->shape.d[nk - 1] || k->shape.d[nk - 2] != v->shape.d[nv - 2])
		return graph_err(x->c, "q %s, k %s, v %s: need q[...,L,E], k[...,S,E], v[...,S,Ev]",
			    shp(&q->shape, b1), shp(&k->shape, b2), shp(&v->shape, b3));
	struct graph_shape batch = {0}, bk = {0}, bv = {0};
	batch.ndim = nq - 2;
	memcpy(batch.d, q->shape.d, sizeof(int64_t) * (size_t)batch.ndim);
	bk.ndim = nk - 2;
	memcpy(bk.d, k->shape.d, sizeof(int64_t) * (size_t)bk.ndim);
	bv.ndim = nv - 2;
	memcpy(bv.d, v->shape.d, sizeof(int64_t) * (size_t)bv.ndim);
	if (broadcast(x, &batch, &bk, k->name) || broadcast(x, &batch, &bv, v->name))
		return -1;
	int64_t L = q->shape.d[nq - 2], S = k->shape.d[nk - 2];
	if (anum(x, "dropout_p") != 0)
		return graph_err(x->c, "dropout_p must be 0 (passfs evaluates in eval mode)");
	if (abool(x, "enable_gqa"))
		return graph_err(x->c, "enable_gqa is not supported");
	if (!anull(x, "scale") && !(anum(x, "scale") > 0))
		return graph_err(x->c, "scale must be positive");
	if (x->n->n_operands > 3 && x->n->operands[3].kind != OPND_NONE) {
		const struct graph_value *m = opv(x, 3);
		if (m == NULL)
			return graph_err(x->c, "attn_mask (operand 3) must be a tensor or null");
		if (abool(x, "is_causal"))
			return graph_err(x->c, "attn_mask and is_causal=true cannot be used together");
		if (m->dtype != DT_BOOL && m->dtype != q->dtype)
			return graph_err(x->c, "attn_mask '%s' is %s; it must be bool or %s like q", m->name,
				    graph_dtype_name(m->dtype), graph_dtype_name(q->dtype));
		struct graph_shape full = batch;
		full.d[full.ndim++] = L;
		full.d[full.ndim++] = S;
		struct graph_shape tmp = full;
		if (broadcast(x, &tmp, &m->shape, m->name))
			return -1;
		if (tmp.ndim != full.ndim || memcmp(tmp.d, full.d, sizeof(int64_t) * (size_t)full.ndim))
			return graph_err(x->c, "attn_mask '%s' %s does not broadcast to %s", m->name,
				    shp(&m->shape, b1), shp(&full, b2));
	}
	struct graph_shape r = batch;
	r.d[r.ndim++] = L;
	r.d[r.ndim++] = v->shape.d[nv - 1];
	return set_result(x, q->dtype, &r);
}

/* ---- spatial ------------------------------------------------------------------- */

static int infer_interpolate(struct icx *x)
{
	const struct graph_value *t = opv(x, 0);
	const char *mode = astr(x, "mode");
	int sp = t->shape.ndim - 2;
	char b1[160];
	if (need_float(x, 0))
		return -1;
	if (sp < 1 || sp > 3)
		return graph_err(x->c, "input '%s' %s must be 3-D to 5-D [N, C, spatial...]", t->name, shp(&t->shape, b1));
	if (strcmp(mode, "nearest") == 0) {
		if (!anull(x, "align_corners"))
			return graph_err(x->c, "align_corners only applies to bilinear; PyTorch refuses it with mode \"nearest\"");
	} else if (strcmp(mode, "bilinear") == 0) {
		if (sp != 2)
			return graph_err(x->c, "mode \"bilinear\" needs a 4-D input, '%s' is %s", t->name, shp(&t->shape, b1));
		if (anull(x, "align_corners"))
			json_object_set_new(x->n->attrs, "align_corners", json_false());
	} else {
		return graph_err(x->c, "mode must be \"nearest\" or \"bilinear\", not \"%s\"", mode);
	}
	if (abool(x, "antialias"))
		return graph_err(x->c, "antialias=true is not supported");
	int has_size = !anull(x, "size"), has_scale = !anull(x, "scale_factor");
	if (has_size == has_scale)
		return graph_err(x->c, "give exactly one of size and scale_factor");
	struct graph_shape r = t->shape;
	if (has_size) {
		int64_t sz[GRAPH_MAX_DIMS];
		int cnt, sc;
		if (aints(x, "size", sz, GRAPH_MAX_DIMS, &cnt, &sc))
			return -1;
		if (cnt != sp && !sc)
			return graph_err(x->c, "size has %d entries; '%s' has %d spatial dims", cnt, t->name, sp);
		for (int i = 0; i < sp; i++) {
			r.d[2 + i] = sc ? sz[0] : sz[i];
			if (r.d[2 + i] < 1)
				return graph_err(x->c, "size entries must be >= 1");
		}
		aset_ints(x, "size", r.d + 2, sp);
	} else {
		json_t *j = json_object_get(x->n->attrs, "scale_factor");
		json_t *norm = json_array();
		if (json_is_array(j) && (int)json_array_size(j) != sp) {
			json_decref(norm);
			return graph_err(x->c, "scale_factor has %zu entries; '%s' has %d spatial dims",
				    json_array_size(j), t->name, sp);
		}
		for (int i = 0; i < sp; i++) {
			double f = json_number_value(json_is_array(j) ? json_array_get(j, (size_t)i) : j);
			if (!(f > 0) || f > 1e6) {
				json_decref(norm);
				return graph_err(x->c, "scale_factor must be positive");
			}
			r.d[2 + i] = (int64_t)floor((double)t->shape.d[2 + i] * f);
			json_array_append_new(norm, json_real(f));
		}
		json_object_set_new(x->n->attrs, "scale_factor", norm);
		/* The output size, for consumers; the kernel still uses 1/scale_factor as
		 * PyTorch does when recompute_scale_factor is not true. */
		aset_ints(x, "size", r.d + 2, sp);
		if (abool(x, "recompute_scale_factor"))
			json_object_set_new(x->n->attrs, "scale_factor", json_null());
	}
	return set_result(x, t->dtype, &r);
}

static int infer_aap2d(struct icx *x)
{
	const struct graph_value *t = opv(x, 0);
	json_t *o = json_object_get(x->n->attrs, "output_size");
	char b1[160];
	if (need_float(x, 0))
		return -1;
	if (t->shape.ndim != 3 && t->shape.ndim != 4)
		return graph_err(x->c, "input '%s' %s must be 3-D or 4-D", t->name, shp(&t->shape, b1));
	int64_t os[2];
	for (int i = 0; i < 2; i++) {
		json_t *e = json_is_array(o) ? json_array_get(o, (size_t)i) : o;
		if (json_is_array(o) && json_array_size(o) != 2)
			return graph_err(x->c, "output_size must be an int or a list of 2 (int or null)");
		if (json_is_null(e))
			os[i] = t->shape.d[t->shape.ndim - 2 + i];
		else if (json_is_integer(e) && json_integer_value(e) >= 0)
			os[i] = json_integer_value(e);
		else
			return graph_err(x->c, "output_size must be an int or a list of 2 (int or null)");
	}
	aset_ints(x, "output_size", os, 2);
	struct graph_shape r = t->shape;
	r.d[r.ndim - 2] = os[0];
	r.d[r.ndim - 1] = os[1];
	return set_result(x, t->dtype, &r);
}

static int infer_pad(struct icx *x)
{
	const struct graph_value *t = opv(x, 0);
	int64_t p[2 * GRAPH_MAX_DIMS];
	int cnt;
	char b1[160];
	if (aints(x, "pad", p, 2 * GRAPH_MAX_DIMS, &cnt, NULL))
		return -1;
	if (cnt % 2 || cnt / 2 > t->shape.ndim)
		return graph_err(x->c, "pad has %d entries; needs an even number, at most 2 per dim of '%s' %s",
			    cnt, t->name, shp(&t->shape, b1));
	if (strcmp(astr(x, "mode"), "constant") != 0)
		return graph_err(x->c, "pad mode \"%s\" is not supported (only \"constant\")", astr(x, "mode"));
	struct graph_shape r = t->shape;
	for (int i = 0; i < cnt / 2; i++) {
		int d = t->shape.ndim - 1 - i;
		if (p[2 * i] < -GRAPH_MAX_NUMEL || p[2 * i] > GRAPH_MAX_NUMEL ||
		    p[2 * i + 1] < -GRAPH_MAX_NUMEL || p[2 * i + 1] > GRAPH_MAX_NUMEL)
			return graph_err(x->c, "pad value out of range");
		r.d[d] += p[2 * i] + p[2 * i + 1];
		if (r.d[d] < 0)
			return graph_err(x->c, "negative padding removes more than dim %d of '%s' %s holds", d,
				    t->name, shp(&t->shape, b1));
	}
	return set_result(x, t->dtype, &r);
}

/* ---- reductions -------------------------------------------------------------------- */

static int infer_reduce(struct icx *x)
{
	const struct graph_value *t = opv(x, 0);
	int keep = abool(x, "keepdim");
	int red[GRAPH_MAX_DIMS] = {0};
	enum graph_dtype dt = t->dtype;
	if (!anull(x, "dtype"))
		dt = graph_dtype_parse(astr(x, "dtype"));
	else if (x->n->op == OP_SUM && !graph_dtype_is_float(dt))
		dt = DT_I64;
	if (x->n->op == OP_MEAN && !graph_dtype_is_float(dt))
		return graph_err(x->c, "mean of %s: needs a floating-point tensor or a float dtype attribute",
			    graph_dtype_name(dt));
	if (anull(x, "dim")) {
		for (int i = 0; i < t->shape.ndim; i++)
			red[i] = 1;
	} else {
		int64_t dims[GRAPH_MAX_DIMS], w[GRAPH_MAX_DIMS];
		int cnt, sc;
		if (aints(x, "dim", dims, GRAPH_MAX_DIMS, &cnt, &sc))
			return -1;
		for (int i = 0; i < cnt; i++) {
			if (wrap_dim(x, "dim", dims[i], t->shape.ndim, &w[i]))
				return -1;
			if (t->shape.ndim > 0) {
				if (red[w[i]])
					return graph_err(x->c, "dim %lld appears twice", (long long)dims[i]);
				red[w[i]] = 1;
			}
		}
		if (cnt == 0)           /* PyTorch: an empty dim list reduces everything */
			for (int i = 0; i < t->shape.ndim; i++)
				red[i] = 1;
		/* Normal form: a sorted list of non-negative dims. */
		int n = 0;
		for (int i = 0; i < t->shape.ndim; i++)
			if (red[i])
				w[n++] = i;
		aset_ints(x, "dim", w, n);
	}
	struct graph_shape r = {0};
	for (int i = 0; i < t->shape.ndim; i++) {
		if (!red[i])
			r.d[r.ndim++] = t->shape.d[i];
		else if (keep)
			r.d[r.ndim++] = 1;
	}
	return set_result(x, dt, &r);
}

/* ---- views and data movement ---------------------------------------------------------- */

static int infer_transpose(struct icx *x)
{
	const struct graph_value *t = opv(x, 0);
	int64_t a, b;
	if (wrap_dim(x, "dim0", aint(x, "dim0"), t->shape.ndim, &a) ||
	    wrap_dim(x, "dim1", aint(x, "dim1"), t->shape.ndim, &b))
		return -1;
	aset_int(x, "dim0", a);
	aset_int(x, "dim1", b);
	struct graph_shape r = t->shape;
	if (r.ndim > 0) {
		r.d[a] = t->shape.d[b];
		r.d[b] = t->shape.d[a];
	}
	return set_result(x, t->dtype, &r);
}

static int infer_permute(struct icx *x)
{
	const struct graph_value *t = opv(x, 0);
	int64_t dims[GRAPH_MAX_DIMS], w[GRAPH_MAX_DIMS];
	int cnt, seen[GRAPH_MAX_DIMS] = {0};
	char b1[160];
	if (aints(x, "dims", dims, GRAPH_MAX_DIMS, &cnt, NULL))
		return -1;
	if (cnt != t->shape.ndim)
		return graph_err(x->c, "dims has %d entries but '%s' %s has %d dims", cnt, t->name,
			    shp(&t->shape, b1), t->shape.ndim);
	struct graph_shape r = t->shape;
	for (int i = 0; i < cnt; i++) {
		if (wrap_dim(x, "dims entry", dims[i], t->shape.ndim, &w[i]))
			return -1;
		if (seen[w[i]]++)
			return graph_err(x->c, "dims repeats dim %lld: not a permutation", (long long)dims[i]);
		r.d[i] = t->shape.d[w[i]];
	}
	aset_ints(x, "dims", w, cnt);
	return set_result(x, t->dtype, &r);
}

static int infer_reshape(struct icx *x)
{
	const struct graph_value *t = opv(x, 0);
	int64_t s[GRAPH_MAX_DIMS];
	int cnt, infer_at = -1;
	char b1[160];
	if (aints(x, "shape", s, GRAPH_MAX_DIMS, &cnt, NULL))
		return -1;
	int64_t numel = graph_shape_numel(&t->shape), known = 1;
	for (int i = 0; i < cnt; i++) {
		if (s[i] == -1) {
			if (infer_at >= 0)
				return graph_err(x->c, "shape has more than one -1");
			infer_at = i;
		} else if (s[i] < 0) {
			return graph_err(x->c, "shape entry %d is %lld; sizes must be >= 0 (or -1 once)", i,
				    (long long)s[i]);
		} else {
			if (s[i] > GRAPH_MAX_NUMEL)
				return graph_err(x->c, "shape entry %d is too large", i);
			known *= s[i];
			if (known > GRAPH_MAX_NUMEL)
				return graph_err(x->c, "shape is too large");
		}
	}
	struct graph_shape r = {.ndim = cnt};
	memcpy(r.d, s, sizeof(int64_t) * (size_t)cnt);
	if (infer_at >= 0) {
		if (known == 0 || numel % known)
		{
			char b2[160];
			return graph_err(x->c, "shape %s cannot hold the %lld elements of '%s' %s (-1 has no whole solution)",
				    shp(&r, b2), (long long)numel, t->name, shp(&t->shape, b1));
		}
		r.d[infer_at] = numel / known;
		aset_ints(x, "shape", r.d, r.ndim);
	} else if (known != numel) {
		char b2[160];
		return graph_err(x->c, "shape %s is %lld elements, '%s' %s has %lld", shp(&r, b2),
			    (long long)known, t->name, shp(&t->shape, b1), (long long)numel);
	}
	return set_result(x, t->dtype, &r);
}

static int infer_flatten(struct icx *x)
{
	const struct graph_value *t = opv(x, 0);
	int64_t s, e;
	if (wrap_dim(x, "start_dim", aint(x, "start_dim"), t->shape.ndim, &s) ||
	    wrap_dim(x, "end_dim", aint(x, "end_dim"), t->shape.ndim, &e))
		return -1;
	if (s > e)
		return graph_err(x->c, "start_dim %lld comes after end_dim %lld", (long long)s, (long long)e);
	aset_int(x, "start_dim", s);
	aset_int(x, "end_dim", e);
	struct graph_shape r = {0};
	if (t->shape.ndim == 0) {
		r.ndim = 1;
		r.d[0] = 1;
		return set_result(x, t->dtype, &r);
	}
	for (int i = 0; i < s; i++)
		r.d[r.ndim++] = t->shape.d[i];
	int64_t m = 1;
	for (int64_t i = s; i <= e; i++)
		m *= t->shape.d[i];
	r.d[r.ndim++] = m;
	for (int i = (int)e + 1; i < t->shape.ndim; i++)
		r.d[r.ndim++] = t->shape.d[i];
	return set_result(x, t->dtype, &r);
}

static int infer_expand(struct icx *x)
{
	const struct graph_value *t = opv(x, 0);
	int64_t s[GRAPH_MAX_DIMS];
	int cnt;
	char b1[160];
	if (aints(x, "size", s, GRAPH_MAX_DIMS, &cnt, NULL))
		return -1;
	if (cnt < t->shape.ndim)
		return graph_err(x->c, "size has %d entries, fewer than the %d dims of '%s' %s", cnt,
			    t->shape.ndim, t->name, shp(&t->shape, b1));
	struct graph_shape r = {.ndim = cnt};
	int lead = cnt - t->shape.ndim;
	for (int i = 0; i < cnt; i++) {
		int64_t src = i >= lead ? t->shape.d[i - lead] : -2;
		if (s[i] == -1) {
			if (i < lead)
				return graph_err(x->c, "size entry %d is -1 for a new leading dim", i);
			r.d[i] = src;
		} else if (s[i] < 0) {
			return graph_err(x->c, "size entry %d is %lld", i, (long long)s[i]);
		} else {
			if (i >= lead && src != 1 && src != s[i])
				return graph_err(x->c, "cannot expand dim %d of '%s' %s from %lld to %lld", i - lead,
					    t->name, shp(&t->shape, b1), (long long)src, (long long)s[i]);
			r.d[i] = s[i];
		}
	}
	aset_ints(x, "size", r.d, r.ndim);
	return set_result(x, t->dtype, &r);
}

/* Resolves one slice item [start, stop, step] against a dim of size n, Python
 * style; writes the normal form back and the result length. */
static int resolve_slice(struct icx *x, json_t *item, int64_t n, json_t **norm, int64_t *len)
{
	int64_t v[3] = {0, n, 1};
	int given[3] = {0, 0, 0};
	if (json_array_size(item) != 3)
		return graph_err(x->c, "index slice must be [start, stop, step] (ints or null)");
	for (int i = 0; i < 3; i++) {
		json_t *e = json_array_get(item, (size_t)i);
		if (json_is_null(e))
			continue;
		if (!json_is_integer(e))
			return graph_err(x->c, "index slice must be [start, stop, step] (ints or null)");
		v[i] = json_integer_value(e);
		given[i] = 1;
	}
	if (v[2] < 1)
		return graph_err(x->c, "slice step must be >= 1 (PyTorch has no negative steps), not %lld",
			    (long long)v[2]);
	for (int i = 0; i < 2; i++) {
		if (!given[i])
			continue;
		if (v[i] < 0)
			v[i] += n;
		if (v[i] < 0)
			v[i] = 0;
		if (v[i] > n)
			v[i] = n;
	}
	if (v[1] < v[0])
		v[1] = v[0];
	*len = (v[1] - v[0] + v[2] - 1) / v[2];
	*norm = json_pack("[III]", (json_int_t)v[0], (json_int_t)v[1], (json_int_t)v[2]);
	return 0;
}

static int infer_getitem_tuple(struct icx *x)
{
	json_t *idx = json_object_get(x->n->attrs, "index");
	const struct graph_node *src = &x->v->nodes[x->n->operands[0].node];
	if (json_is_array(idx) && json_array_size(idx) == 1)
		idx = json_array_get(idx, 0);
	if (!json_is_integer(idx))
		return graph_err(x->c, "'%s' is a tuple; index it with a single integer", src->name);
	int64_t k = json_integer_value(idx);
	if (k < -src->n_results || k >= src->n_results)
		return graph_err(x->c, "index %lld is out of range for the %d-tuple '%s'", (long long)k,
			    src->n_results, src->name);
	if (k < 0)
		k += src->n_results;
	json_object_set_new(x->n->attrs, "index", json_pack("[I]", (json_int_t)k));
	const struct graph_value *e = &x->v->values[src->first_value + k];
	return set_result(x, e->dtype, &e->shape);
}

static int infer_getitem(struct icx *x)
{
	if (x->n->operands[0].kind == OPND_TUPLE)
		return infer_getitem_tuple(x);
	const struct graph_value *t = opv(x, 0);
	json_t *idx = json_object_get(x->n->attrs, "index");
	char b1[160];
	if (!json_is_array(idx))
		idx = json_pack("[O]", idx);    /* a bare item, as x[2] */
	else
		json_incref(idx);
	size_t ni = json_array_size(idx);
	int consumed = 0, ellipsis = -1;
	int rc = -1;
	for (size_t i = 0; i < ni; i++) {
		json_t *e = json_array_get(idx, i);
		if (json_is_string(e)) {
			if (strcmp(json_string_value(e), "...") != 0) {
				graph_err(x->c, "index item %zu: the only string allowed is \"...\"", i);
				goto out;
			}
			if (ellipsis >= 0) {
				graph_err(x->c, "index has more than one \"...\"");
				goto out;
			}
			ellipsis = (int)i;
		} else if (json_is_integer(e) || json_is_array(e)) {
			consumed++;
		} else if (!json_is_null(e)) {
			graph_err(x->c, "index item %zu must be an int, [start, stop, step], null or \"...\"", i);
			goto out;
		}
	}
	if (consumed > t->shape.ndim) {
		graph_err(x->c, "too many indices (%d) for '%s' %s", consumed, t->name, shp(&t->shape, b1));
		goto out;
	}
	struct graph_shape r = {0};
	json_t *norm = json_array();
	int d = 0;
	for (size_t i = 0; i <= ni; i++) {
		json_t *e = i < ni ? json_array_get(idx, i) : NULL;
		int fill = 0;
		if (i == ni)            /* trailing dims not named: full slices */
			fill = t->shape.ndim - d;
		else if ((int)i == ellipsis)
			fill = t->shape.ndim - consumed;
		for (int k = 0; k < fill; k++, d++) {
			if (r.ndim >= GRAPH_MAX_DIMS)
				goto toomany;
			r.d[r.ndim++] = t->shape.d[d];
			json_array_append_new(norm, json_pack("[IIi]", (json_int_t)0,
							      (json_int_t)t->shape.d[d], 1));
		}
		if (i == ni || (int)i == ellipsis)
			continue;
		if (json_is_null(e)) {
			if (r.ndim >= GRAPH_MAX_DIMS)
				goto toomany;
			r.d[r.ndim++] = 1;
			json_array_append_new(norm, json_null());
		} else if (json_is_integer(e)) {
			int64_t k = json_integer_value(e), n = t->shape.d[d];
			if (k < -n || k >= n) {
				json_decref(norm);
				graph_err(x->c, "index %lld is out of range for dim %d of '%s' %s (size %lld)",
				     (long long)k, d, t->name, shp(&t->shape, b1), (long long)n);
				goto out;
			}
			json_array_append_new(norm, json_integer(k < 0 ? k + n : k));
			d++;
		} else {
			json_t *s = NULL;
			int64_t len = 0;
			if (resolve_slice(x, e, t->shape.d[d], &s, &len)) {
				json_decref(norm);
				goto out;
			}
			if (r.ndim >= GRAPH_MAX_DIMS) {
				json_decref(s);
				goto toomany;
			}
			r.d[r.ndim++] = len;
			json_array_append_new(norm, s);
			d++;
		}
	}
	json_object_set_new(x->n->attrs, "index", norm);
	rc = set_result(x, t->dtype, &r);
	goto out;
toomany:
	json_decref(norm);
	graph_err(x->c, "the result would have more than %d dims", GRAPH_MAX_DIMS);
out:
	json_decref(idx);
	return rc;
}

static int infer_cat(struct icx *x)
{
	const struct graph_value *first = NULL;
	int64_t dim = 0, total = 0;
	char b1[160], b2[160];
	for (int i = 0; i < x->n->n_operands; i++) {
		const struct graph_value *t = opv(x, i);
		if (t == NULL)
			return graph_err(x->c, "operand %d must be a tensor", i);
		if (first == NULL) {
			first = t;
			if (t->shape.ndim == 0)
				return graph_err(x->c, "'%s' is 0-dim; cat needs at least 1 dim", t->name);
			if (wrap_dim(x, "dim", aint(x, "dim"), t->shape.ndim, &dim))
				return -1;
		}
		if (t->shape.ndim != first->shape.ndim)
			return graph_err(x->c, "'%s' %s and '%s' %s have different ranks", first->name,
				    shp(&first->shape, b1), t->name, shp(&t->shape, b2));
		for (int k = 0; k < t->shape.ndim; k++)
			if (k != dim && t->shape.d[k] != first->shape.d[k])
				return graph_err(x->c, "'%s' %s and '%s' %s differ in dim %d (cat is along dim %lld)",
					    first->name, shp(&first->shape, b1), t->name,
					    shp(&t->shape, b2), k, (long long)dim);
		total += t->shape.d[dim];
	}
	aset_int(x, "dim", dim);
	struct graph_shape r = first->shape;
	r.d[dim] = total;
	return set_result(x, result_type(x, 0, x->n->n_operands), &r);
}

/* The results of a split along dim: cnt pieces of sizes[i] (starting at
 * starts[i] when given: tensor_split's pieces may overlap or be empty).
 * Returns 0, or -1 with the error set. */
static int split_into(struct icx *x, const int64_t *starts, const int64_t *sizes, int cnt, int64_t dim)
{
	const struct graph_value *t = opv(x, 0);
	if (cnt > GRAPH_MAX_RESULTS)
		return graph_err(x->c, "would produce %d tensors; at most %d allowed", cnt, GRAPH_MAX_RESULTS);
	aset_int(x, "dim", dim);
	if (starts)
		aset_ints(x, "starts", starts, cnt);
	aset_ints(x, "sizes", sizes, cnt);
	for (int i = 0; i < cnt; i++) {
		struct graph_shape r = t->shape;
		r.d[dim] = sizes[i];
		if (set_result(x, t->dtype, &r))
			return -1;
	}
	x->n->is_tuple = 1;
	return 0;
}

static int infer_split(struct icx *x)
{
	const struct graph_value *t = opv(x, 0);
	int64_t dim;
	char b1[160];
	if (t->shape.ndim == 0)
		return graph_err(x->c, "cannot split a 0-dim tensor");
	if (wrap_dim(x, "dim", aint(x, "dim"), t->shape.ndim, &dim))
		return -1;
	int64_t n = t->shape.d[dim];
	json_t *ss = json_object_get(x->n->attrs, "split_size");
	int64_t *sizes;
	int cnt = 0, rc;
	if (json_is_integer(ss)) {
		int64_t k = json_integer_value(ss);
		if (k < 1)
			return graph_err(x->c, "split_size must be >= 1, not %lld", (long long)k);
		int64_t parts = n == 0 ? 1 : (n + k - 1) / k;
		if (parts > GRAPH_MAX_RESULTS)
			return graph_err(x->c, "would produce %lld tensors; at most %d allowed", (long long)parts,
				    GRAPH_MAX_RESULTS);
		sizes = calloc((size_t)parts, sizeof(int64_t));
		for (int64_t i = 0; i < parts; i++)
			sizes[cnt++] = (i + 1) * k <= n ? k : n - i * k;
	} else {
		size_t m = json_array_size(ss);
		int64_t sum = 0;
		if (m == 0 || m > GRAPH_MAX_RESULTS)
			return graph_err(x->c, "split_size must be an int or a list of 1..%d sizes", GRAPH_MAX_RESULTS);
		sizes = calloc(m, sizeof(int64_t));
		for (size_t i = 0; i < m; i++) {
			sizes[cnt] = json_integer_value(json_array_get(ss, i));
			if (sizes[cnt] < 0 || sizes[cnt] > GRAPH_MAX_NUMEL) {
				free(sizes);
				return graph_err(x->c, "split sizes must be >= 0");
			}
			sum += sizes[cnt++];
		}
		if (sum != n) {
			free(sizes);
			return graph_err(x->c, "split sizes sum to %lld but dim %lld of '%s' %s is %lld",
				    (long long)sum, (long long)dim, t->name, shp(&t->shape, b1), (long long)n);
		}
	}
	rc = split_into(x, NULL, sizes, cnt, dim);
	free(sizes);
	return rc;
}

static int infer_chunk(struct icx *x)
{
	const struct graph_value *t = opv(x, 0);
	int64_t dim, chunks = aint(x, "chunks");
	if (t->shape.ndim == 0)
		return graph_err(x->c, "cannot chunk a 0-dim tensor");
	if (chunks < 1 || chunks > GRAPH_MAX_RESULTS)
		return graph_err(x->c, "chunks must be 1..%d, not %lld", GRAPH_MAX_RESULTS, (long long)chunks);
	if (wrap_dim(x, "dim", aint(x, "dim"), t->shape.ndim, &dim))
		return -1;
	int64_t n = t->shape.d[dim];
	int64_t each = (n + chunks - 1) / chunks;
	int64_t sizes[GRAPH_MAX_RESULTS];
	int cnt = 0;
	if (each == 0) {                /* PyTorch: an empty dim gives `chunks` empty pieces */
		for (int64_t i = 0; i < chunks; i++)
			sizes[cnt++] = 0;
	} else {
		for (int64_t at = 0; at < n; at += each)
			sizes[cnt++] = at + each <= n ? each : n - at;
	}
	return split_into(x, NULL, sizes, cnt, dim);
}

/* unbind: one result per index along dim, with that dim dropped.  Returns 0,
 * or -1 with the error set. */
static int infer_unbind(struct icx *x)
{
	const struct graph_value *t = opv(x, 0);
	int64_t dim;
	if (t->shape.ndim == 0)
		return graph_err(x->c, "cannot unbind a 0-dim tensor");
	if (wrap_dim(x, "dim", aint(x, "dim"), t->shape.ndim, &dim))
		return -1;
	int64_t n = t->shape.d[dim];
	if (n > GRAPH_MAX_RESULTS)
		return graph_err(x->c, "would produce %lld tensors; at most %d allowed", (long long)n, GRAPH_MAX_RESULTS);
	aset_int(x, "dim", dim);
	struct graph_shape r = t->shape;
	r.ndim--;
	for (int k = (int)dim; k < r.ndim; k++)
		r.d[k] = t->shape.d[k + 1];
	for (int64_t i = 0; i < n; i++)
		if (set_result(x, t->dtype, &r))
			return -1;
	x->n->is_tuple = 1;
	return 0;
}

/* PyTorch's slice bounds (at::slice with step 1): negative counts from the
 * end, then clamped to [0, n], an end before the start meaning empty. */
static void slice_bounds(int64_t n, int64_t start, int64_t end, int64_t *lo, int64_t *len)
{
	if (start < 0)
		start += n;
	if (end < 0)
		end += n;
	start = start < 0 ? 0 : start > n ? n : start;
	end = end < start ? start : end > n ? n : end;
	*lo = start;
	*len = end - start;
}

/* tensor_split: `sections` pieces (the first n % sections one longer), or
 * the slices between `indices`.  Normal form adds `starts` and `sizes` (the
 * pieces may overlap: indices need not increase).  Returns 0, or -1 with the
 * error set. */
static int infer_tensor_split(struct icx *x)
{
	const struct graph_value *t = opv(x, 0);
	int64_t dim, starts[GRAPH_MAX_RESULTS], sizes[GRAPH_MAX_RESULTS];
	int cnt = 0;
	if (t->shape.ndim == 0)
		return graph_err(x->c, "cannot tensor_split a 0-dim tensor");
	if (anull(x, "sections") == anull(x, "indices"))
		return graph_err(x->c, "needs exactly one of 'sections' and 'indices'");
	if (wrap_dim(x, "dim", aint(x, "dim"), t->shape.ndim, &dim))
		return -1;
	int64_t n = t->shape.d[dim];
	if (!anull(x, "sections")) {
		int64_t k = aint(x, "sections");
		if (k < 1 || k > GRAPH_MAX_RESULTS)
			return graph_err(x->c, "sections must be 1..%d, not %lld", GRAPH_MAX_RESULTS, (long long)k);
		for (int64_t i = 0, at = 0; i < k; i++) {
			starts[cnt] = at;
			sizes[cnt] = n / k + (i < n % k);
			at += sizes[cnt++];
		}
	} else {
		json_t *ix = json_object_get(x->n->attrs, "indices");
		size_t m = json_array_size(ix);
		if (m + 1 > GRAPH_MAX_RESULTS)
			return graph_err(x->c, "would produce %zu tensors; at most %d allowed", m + 1, GRAPH_MAX_RESULTS);
		int64_t from = 0;
		for (size_t i = 0; i <= m; i++) {
			int64_t to = i < m ? json_integer_value(json_array_get(ix, i)) : n;
			if (to > GRAPH_MAX_NUMEL || to < -GRAPH_MAX_NUMEL)
				return graph_err(x->c, "index %lld is out of range", (long long)to);
			slice_bounds(n, from, to, &starts[cnt], &sizes[cnt]);
			cnt++;
			from = to;
		}
	}
	return split_into(x, starts, sizes, cnt, dim);
}

/* arange: no operands; ceil((end - start) / step) elements.  The dtype is
 * PyTorch's inference when not given: int64 when start, end and step are all
 * integers, else the default float32.  An integer dtype takes the bounds
 * truncated to integers for its checks and values (and, for int64 only, for
 * the length too: PyTorch's arange_out computes it in the accumulation type
 * there, in double otherwise).  Normal form: dtype resolved.  Returns 0, or
 * -1 with the error set. */
static int infer_arange(struct icx *x)
{
	json_t *a = x->n->attrs;
	double start = anum(x, "start"), end = anum(x, "end"), step = anum(x, "step");
	enum graph_dtype dt;
	if (x->n->n_operands != 0)
		return graph_err(x->c, "takes no operands");
	if (!anull(x, "dtype"))
		dt = graph_dtype_parse(astr(x, "dtype"));
	else if (json_is_integer(json_object_get(a, "start")) && json_is_integer(json_object_get(a, "end")) &&
		 json_is_integer(json_object_get(a, "step")))
		dt = DT_I64;
	else
		dt = DT_F32;
	if (dt == DT_BOOL)
		return graph_err(x->c, "arange of dtype bool is not supported (PyTorch refuses it)");
	double len = ceil((end - start) / step);
	if (!graph_dtype_is_float(dt)) {
		start = trunc(start);
		end = trunc(end);
		step = trunc(step);
		if (dt == DT_I64)
			len = ceil((end - start) / step);
	}
	if (step == 0)
		return graph_err(x->c, "step must be nonzero");
	if ((step > 0 && end < start) || (step < 0 && end > start))
		return graph_err(x->c, "upper bound and larger bound inconsistent with step sign (start %g, end %g, "
			    "step %g)", start, end, step);
	if (!(len <= (double)GRAPH_MAX_NUMEL))
		return graph_err(x->c, "result is too large");
	json_object_set_new(a, "dtype", json_string(graph_dtype_name(dt)));
	struct graph_shape r = {1, {(int64_t)len}};
	return set_result(x, dt, &r);
}

/* ---- pooling windows and unfold ------------------------------------------------------------ */

/* PyTorch's pooling_output_shape (dilation 1): floor division, or ceil with
 * the last window made to start inside the input or its left padding. */
static int64_t pool_out(int64_t n, int64_t k, int64_t pad, int64_t s, int ceil_mode)
{
	int64_t num = n + 2 * pad - (k - 1) - 1 + (ceil_mode ? s - 1 : 0);
	int64_t o = (num >= 0 ? num / s : -((-num + s - 1) / s)) + 1;
	if (ceil_mode && (o - 1) * s >= n + pad)
		o--;
	return o;
}

/* avg_pool2d: F.avg_pool2d's checks and output size.  Normal form:
 * kernel_size, stride (null or [] = kernel_size) and padding as [h, w].
 * Returns 0, or -1 with the error set. */
static int infer_avg_pool2d(struct icx *x)
{
	const struct graph_value *t = opv(x, 0);
	int64_t k[2], st[2], pd[2];
	char b1[160];
	if (need_float(x, 0))
		return -1;
	if (t->shape.ndim != 3 && t->shape.ndim != 4)
		return graph_err(x->c, "input '%s' %s must be 3-D [C,H,W] or 4-D [N,C,H,W]", t->name, shp(&t->shape, b1));
	for (int i = t->shape.ndim - 3; i < t->shape.ndim; i++)
		if (t->shape.d[i] == 0)
			return graph_err(x->c, "input '%s' %s: only the batch dim may be 0", t->name, shp(&t->shape, b1));
	if (pair_attr(x, "kernel_size", k, 1))
		return -1;
	json_t *s = json_object_get(x->n->attrs, "stride");
	if (json_is_null(s) || (json_is_array(s) && json_array_size(s) == 0)) {
		st[0] = k[0];
		st[1] = k[1];
		aset_ints(x, "stride", st, 2);
	} else if (pair_attr(x, "stride", st, 1)) {
		return -1;
	}
	if (pair_attr(x, "padding", pd, 0))
		return -1;
	if (k[0] > GRAPH_MAX_NUMEL || k[1] > GRAPH_MAX_NUMEL || st[0] > GRAPH_MAX_NUMEL || st[1] > GRAPH_MAX_NUMEL)
		return graph_err(x->c, "kernel_size and stride must be at most 2^40");
	if (pd[0] > k[0] / 2 || pd[1] > k[1] / 2)
		return graph_err(x->c, "padding [%lld, %lld] must be at most half of kernel_size [%lld, %lld]",
			    (long long)pd[0], (long long)pd[1], (long long)k[0], (long long)k[1]);
	if (!anull(x, "divisor_override") && aint(x, "divisor_override") == 0)
		return graph_err(x->c, "divisor_override must not be 0");
	int64_t h = t->shape.d[t->shape.ndim - 2], w = t->shape.d[t->shape.ndim - 1];
	if (k[0] > h + 2 * pd[0] || k[1] > w + 2 * pd[1])
		return graph_err(x->c, "kernel_size [%lld, %lld] is larger than the padded input %s", (long long)k[0],
			    (long long)k[1], shp(&t->shape, b1));
	int ceil_mode = abool(x, "ceil_mode");
	struct graph_shape r = t->shape;
	r.d[r.ndim - 2] = pool_out(h, k[0], pd[0], st[0], ceil_mode);
	r.d[r.ndim - 1] = pool_out(w, k[1], pd[1], st[1], ceil_mode);
	return set_result(x, t->dtype, &r);
}

/* Tensor.unfold(dimension, size, step): a view with dimension cut into
 * windows of `size` every `step`, the window appended as a new last dim.
 * Normal form: dimension non-negative.  Returns 0, or -1 with the error set. */
static int infer_unfold(struct icx *x)
{
	const struct graph_value *t = opv(x, 0);
	int64_t d, size = aint(x, "size"), step = aint(x, "step");
	char b1[160];
	if (t->shape.ndim == 0)
		return graph_err(x->c, "unfold of a 0-dim tensor is not supported");
	if (t->shape.ndim >= GRAPH_MAX_DIMS)
		return graph_err(x->c, "the result would have more than %d dims", GRAPH_MAX_DIMS);
	if (wrap_dim(x, "dimension", aint(x, "dimension"), t->shape.ndim, &d))
		return -1;
	if (step < 1)
		return graph_err(x->c, "step is %lld but must be > 0", (long long)step);
	if (size < 0 || size > t->shape.d[d])
		return graph_err(x->c, "size %lld must be 0..%lld (dim %lld of '%s' %s)", (long long)size,
			    (long long)t->shape.d[d], (long long)d, t->name, shp(&t->shape, b1));
	aset_int(x, "dimension", d);
	struct graph_shape r = t->shape;
	r.d[d] = (t->shape.d[d] - size) / step + 1;
	r.d[r.ndim++] = size;
	return set_result(x, t->dtype, &r);
}

/* ---- the table -----------------------------------------------------------------------------
 *
 * The hub of the ops: every layer's table is keyed by enum graph_op (graph.h):
 * the importer's call tables (engine/import/import.c funcs[], methods[],
 * operators[]), the eager lowerings (engine/eval/eager/eager.c lowerings[])
 * and the PyTorch oracle (tests/oracle/graph_torch.py OPS, checked against
 * `passfs ops`).  docs/testing.md, "Adding an op", lists the places. */

struct opinfo {
	const char *name;
	int min_in, max_in, scalars_ok, is_view;
	const struct aspec *attrs;
	int (*infer)(struct icx *);
};

static const struct opinfo ops[OP_COUNT] = {
	[OP_ADD] = {"add", 2, 2, 1, 0, a_addsub, infer_binary},
	[OP_SUB] = {"sub", 2, 2, 1, 0, a_addsub, infer_binary},
	[OP_MUL] = {"mul", 2, 2, 1, 0, a_none, infer_binary},
	[OP_DIV] = {"div", 2, 2, 1, 0, a_none, infer_binary},
	[OP_POW] = {"pow", 2, 2, 1, 0, a_none, infer_binary},
	[OP_WHERE] = {"where", 3, 3, 1, 0, a_none, infer_where},
	[OP_SIGMOID] = {"sigmoid", 1, 1, 0, 0, a_none, infer_unary},
	[OP_RELU] = {"relu", 1, 1, 0, 0, a_relu, infer_unary},
	[OP_SILU] = {"silu", 1, 1, 0, 0, a_relu, infer_unary},
	[OP_TANH] = {"tanh", 1, 1, 0, 0, a_none, infer_unary},
	[OP_EXP] = {"exp", 1, 1, 0, 0, a_none, infer_unary},
	[OP_RSQRT] = {"rsqrt", 1, 1, 0, 0, a_none, infer_unary},
	[OP_GELU] = {"gelu", 1, 1, 0, 0, a_gelu, infer_unary},
	[OP_DROPOUT] = {"dropout", 1, 1, 0, 1, a_dropout, infer_identity},
	[OP_SOFTMAX] = {"softmax", 1, 1, 0, 0, a_softmax, infer_softmax},
	[OP_PRELU] = {"prelu", 2, 2, 0, 0, a_none, infer_prelu},
	[OP_LAYER_NORM] = {"layer_norm", 1, 3, 0, 0, a_layer_norm, infer_layer_norm},
	[OP_BATCH_NORM] = {"batch_norm", 3, 5, 0, 0, a_batch_norm, infer_batch_norm},
	[OP_LINEAR] = {"linear", 2, 3, 0, 0, a_none, infer_linear},
	[OP_MATMUL] = {"matmul", 2, 2, 0, 0, a_none, infer_matmul},
	[OP_BMM] = {"bmm", 2, 2, 0, 0, a_none, infer_matmul},
	[OP_CONV2D] = {"conv2d", 2, 3, 0, 0, a_conv2d, infer_conv2d},
	[OP_INTERPOLATE] = {"interpolate", 1, 1, 0, 0, a_interpolate, infer_interpolate},
	[OP_ADAPTIVE_AVG_POOL2D] = {"adaptive_avg_pool2d", 1, 1, 0, 0, a_aap2d, infer_aap2d},
	[OP_SDPA] = {"scaled_dot_product_attention", 3, 4, 0, 0, a_sdpa, infer_sdpa},
	[OP_SUM] = {"sum", 1, 1, 0, 0, a_reduce, infer_reduce},
	[OP_MEAN] = {"mean", 1, 1, 0, 0, a_reduce, infer_reduce},
	[OP_TRANSPOSE] = {"transpose", 1, 1, 0, 1, a_transpose, infer_transpose},
	[OP_PERMUTE] = {"permute", 1, 1, 0, 1, a_permute, infer_permute},
	[OP_RESHAPE] = {"reshape", 1, 1, 0, 1, a_reshape, infer_reshape},
	[OP_VIEW] = {"view", 1, 1, 0, 1, a_reshape, infer_reshape},
	[OP_FLATTEN] = {"flatten", 1, 1, 0, 1, a_flatten, infer_flatten},
	[OP_EXPAND] = {"expand", 1, 1, 0, 1, a_expand, infer_expand},
	[OP_CONTIGUOUS] = {"contiguous", 1, 1, 0, 1, a_none, infer_identity},
	[OP_GETITEM] = {"getitem", 1, 1, 0, 1, a_getitem, infer_getitem},
	[OP_CAT] = {"cat", 1, -1, 0, 0, a_cat, infer_cat},
	[OP_SPLIT] = {"split", 1, 1, 0, 1, a_split, infer_split},
	[OP_CHUNK] = {"chunk", 1, 1, 0, 1, a_chunk, infer_chunk},
	[OP_PAD] = {"pad", 1, 1, 0, 0, a_pad, infer_pad},
	[OP_TO] = {"to", 1, 1, 0, 0, a_to, infer_to},
	[OP_LEAKY_RELU] = {"leaky_relu", 1, 1, 0, 0, a_leaky_relu, infer_unary},
	[OP_UNBIND] = {"unbind", 1, 1, 0, 1, a_unbind, infer_unbind},
	[OP_TENSOR_SPLIT] = {"tensor_split", 1, 1, 0, 1, a_tensor_split, infer_tensor_split},
	[OP_BADDBMM] = {"baddbmm", 3, 3, 0, 0, a_baddbmm, infer_baddbmm},
	[OP_ARANGE] = {"arange", 0, 0, 0, 0, a_arange, infer_arange},
	[OP_AVG_POOL2D] = {"avg_pool2d", 1, 1, 0, 0, a_avg_pool2d, infer_avg_pool2d},
	[OP_UNFOLD] = {"unfold", 1, 1, 0, 1, a_unfold, infer_unfold},
};

const char *graph_op_name(enum graph_op op)
{
	return op >= 0 && op < OP_COUNT ? ops[op].name : NULL;
}

/* A row left out of ops[] (an enum value without its row) has no name: it is
 * never parsed, so no other field of it is ever used (tests/unit/test_ops_table.c
 * fails on such a row). */
enum graph_op graph_op_parse(const char *s)
{
	if (s == NULL)
		return OP_INVALID;
	for (int i = 0; i < OP_COUNT; i++)
		if (ops[i].name && strcmp(ops[i].name, s) == 0 && ops[i].infer && ops[i].attrs)
			return (enum graph_op)i;
	return OP_INVALID;
}

int graph_op_infers(enum graph_op op)
{
	return op >= 0 && op < OP_COUNT && ops[op].name && ops[op].attrs && ops[op].infer;
}

int graph_op_is_view(enum graph_op op)
{
	return op >= 0 && op < OP_COUNT && ops[op].is_view;
}

void graph_op_arity(enum graph_op op, int *min_in, int *max_in, int *scalars_ok)
{
	*min_in = ops[op].min_in;
	*max_in = ops[op].max_in;
	*scalars_ok = ops[op].scalars_ok;
}

int graph_attr_semantic(const char *key)
{
	static const char *const keys[] = {"training", "dim", "dtype", "is_causal", "dropout_p", "approximate",
					   "keepdim", "eps", "align_corners", "mode", "scale", "correction", NULL};
	for (int i = 0; keys[i]; i++)
		if (strcmp(keys[i], key) == 0)
			return 1;
	return 0;
}

const char *graph_attr_default(enum graph_op op, const char *key)
{
	for (const struct aspec *a = ops[op].attrs; a->name; a++)
		if (strcmp(a->name, key) == 0)
			return a->dflt;
	return NULL;
}

const char *graph_attr_name(enum graph_op op, int i)
{
	for (const struct aspec *a = ops[op].attrs; a->name; a++, i--)
		if (i == 0)
			return a->name;
	return NULL;
}

int graph_attr_is_default(enum graph_op op, const char *key, json_t *val)
{
	for (const struct aspec *a = ops[op].attrs; a->name; a++) {
		if (strcmp(a->name, key) != 0 || a->dflt == NULL)
			continue;
		json_t *d = json_loads(a->dflt, JSON_DECODE_ANY, NULL);
		int same = d && json_equal(d, val);
		/* 1 and 1.0 are the same default */
		if (!same && d && json_is_number(d) && json_is_number(val))
			same = json_number_value(d) == json_number_value(val);
		json_decref(d);
		return same;
	}
	return 0;
}

static int kind_ok(enum akind k, json_t *j)
{
	switch (k) {
	case AK_INT:
		return json_is_integer(j);
	case AK_NUM:
		return json_is_number(j);
	case AK_BOOL:
		return json_is_boolean(j);
	case AK_STR:
		return json_is_string(j);
	case AK_DTYPE:
		return json_is_string(j) && graph_dtype_parse(json_string_value(j)) != DT_INVALID;
	case AK_ANY:
		return 1;
	case AK_INTS:
	case AK_INT_OR_INTS:
	case AK_NUM_OR_NUMS:
		if (k == AK_INT_OR_INTS && json_is_integer(j))
			return 1;
		if (k == AK_NUM_OR_NUMS && json_is_number(j))
			return 1;
		if (!json_is_array(j))
			return 0;
		for (size_t i = 0; i < json_array_size(j); i++) {
			json_t *e = json_array_get(j, i);
			if (k == AK_NUM_OR_NUMS ? !json_is_number(e) : !json_is_integer(e))
				return 0;
		}
		return 1;
	}
	return 0;
}

static const char *kind_text(enum akind k)
{
	static const char *t[] = {"an integer", "a list of integers", "an integer or a list of integers",
				  "a number", "a number or a list of numbers", "true or false",
				  "a string", "a dtype name (float32, float16, bfloat16, float64, int64, int32, bool)",
				  "a value"};
	return t[k];
}

static int check_attrs(struct gctx *c, struct graph_node *n)
{
	const struct aspec *spec = ops[n->op].attrs;
	const char *key;
	json_t *val;
	json_object_foreach(n->attrs, key, val) {
		int known = 0;
		for (const struct aspec *a = spec; a->name; a++)
			known |= strcmp(a->name, key) == 0;
		if (!known) {
			char list[256] = "";
			size_t used = 0;
			for (const struct aspec *a = spec; a->name && used < sizeof(list) - 64; a++)
				used += (size_t)snprintf(list + used, sizeof(list) - used, "%s%s",
							 a == spec ? "" : ", ", a->name);
			return graph_err(c, "unknown attribute '%s' (%s takes: %s)", key, ops[n->op].name,
				    used ? list : "none");
		}
	}
	for (const struct aspec *a = spec; a->name; a++) {
		json_t *j = json_object_get(n->attrs, a->name);
		if (j == NULL) {
			if (a->flags & F_REQ)
				return graph_err(c, "missing attribute '%s' (%s)", a->name, kind_text(a->kind));
			json_object_set_new(n->attrs, a->name, json_loads(a->dflt, JSON_DECODE_ANY, NULL));
			continue;
		}
		if (json_is_null(j) && (a->flags & F_NULL))
			continue;
		if (!kind_ok(a->kind, j))
			return graph_err(c, "attribute '%s' must be %s%s", a->name, kind_text(a->kind),
				    (a->flags & F_NULL) ? " or null" : "");
	}
	return 0;
}

int graph_infer_node(struct gctx *c, const struct graph_variant *v, struct graph_node *n,
		     struct graph_value *res, int *nres)
{
	struct icx x = {c, v, n, res, nres};
	*nres = 0;
	if (check_attrs(c, n))
		return -1;
	for (int i = 0; i < n->n_operands; i++)
		if (n->operands[i].kind == OPND_TUPLE && n->op != OP_GETITEM)
			return graph_err(c, "operand %d ('%s') is a tuple; pick an element with getitem first", i,
				    v->nodes[n->operands[i].node].name);
	/* Every op but getitem and cat reads operand 0 as a tensor. */
	if (n->op != OP_GETITEM && n->op != OP_CAT && n->op != OP_ARANGE && !ops[n->op].scalars_ok &&
	    opv(&x, 0) == NULL)
		return graph_err(c, "operand 0 must be a tensor");
	if (n->op == OP_GETITEM && n->operands[0].kind != OPND_VALUE && n->operands[0].kind != OPND_TUPLE)
		return graph_err(c, "operand 0 must be a tensor or a tuple");
	return ops[n->op].infer(&x);
}
