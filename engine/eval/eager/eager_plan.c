/* eager_plan.c - planning a variant (eager_int.h): the walk over its nodes,
 * view-like ops as metadata, elementwise chains emitted as one kernel
 * source, and the table of lowerings by op. */
#define _GNU_SOURCE
#include "eager_int.h"

/* ---- small helpers ------------------------------------------------------- */

const char *eg_tname(enum graph_dtype dt)
{
	switch (dt) {
	case DT_F32: return "float";
	case DT_F16: return "__half";
	case DT_BF16: return "__nv_bfloat16";
	case DT_F64: return "double";
	case DT_I64: return "long long";
	case DT_I32: return "int";
	case DT_BOOL: return "bool";
	default: return "void";
	}
}

int64_t eg_vnumel(const struct view *v)
{
	int64_t n = 1;
	for (int i = 0; i < v->ndim; i++)
		n *= v->shape[i];
	return n;
}

static void contig_strides(int ndim, const int64_t *shape, int64_t *stride)
{
	int64_t s = 1;
	for (int i = ndim - 1; i >= 0; i--) {
		stride[i] = s;
		s *= shape[i] > 1 ? shape[i] : 1;
	}
}

static int is_contig(const struct view *v)
{
	int64_t s = 1;
	for (int i = v->ndim - 1; i >= 0; i--) {
		if (v->shape[i] != 1 && v->stride[i] != s)
			return 0;
		s *= v->shape[i];
	}
	return 1;
}

int64_t eg_pow2_at_least(int64_t n, int64_t lo, int64_t hi)
{
	int64_t t = lo;
	while (t < hi && t < n)
		t *= 2;
	return t;
}

unsigned eg_grid_for(int64_t work, int64_t per_block, int64_t cap)
{
	int64_t g = (work + per_block - 1) / per_block;
	if (g < 1)
		g = 1;
	if (g > cap)
		g = cap;
	return (unsigned)g;
}
int eg_berr(struct build *b, const char *fmt, ...)
{
	char msg[400];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (b->n)
		snprintf(b->err, b->errlen, "eager: variant '%s', node '%s' (%s): %s", b->v->name, b->n->name,
			 graph_op_name(b->n->op), msg);
	else
		snprintf(b->err, b->errlen, "eager: variant '%s': %s", b->v->name, msg);
	return -1;
}

int eg_build_oom(struct build *b)
{
	return eg_berr(b, "out of memory");
}

int eg_new_buf(struct build *b, int kind, int ext, size_t bytes)
{
	struct eager_plan *p = b->p;
	if (p->nbufs == p->capbufs) {
		int cap = p->capbufs ? p->capbufs * 2 : 32;
		struct buf *nb = realloc(p->bufs, sizeof(*nb) * (size_t)cap);
		if (nb == NULL)
			return eg_build_oom(b);
		p->bufs = nb;
		p->capbufs = cap;
	}
	struct buf *x = &p->bufs[p->nbufs];
	x->kind = kind;
	x->ext = ext;
	x->bytes = bytes;
	x->first = x->last = -1;
	x->off = 0;
	return p->nbufs++;
}

/* A fresh contiguous scratch tensor. */
int eg_new_tensor(struct build *b, enum graph_dtype dt, int ndim, const int64_t *shape, struct view *out)
{
	memset(out, 0, sizeof(*out));
	out->ndim = ndim;
	out->dt = dt;
	for (int i = 0; i < ndim; i++)
		out->shape[i] = shape[i];
	contig_strides(ndim, out->shape, out->stride);
	int k = eg_new_buf(b, BK_SCRATCH, -1, (size_t)eg_vnumel(out) * graph_dtype_size(dt));
	if (k < 0)
		return -1;
	out->buf = k;
	return 0;
}

int eg_new_tensor_like(struct build *b, const struct graph_value *gv, struct view *out)
{
	return eg_new_tensor(b, gv->dtype, gv->shape.ndim, gv->shape.d, out);
}

static int intern(struct build *b, const char *name)
{
	struct eager_plan *p = b->p;
	for (int i = 0; i < p->nnames; i++)
		if (strcmp(p->names[i], name) == 0)
			return i;
	if (p->nnames == p->capnames) {
		int cap = p->capnames ? p->capnames * 2 : 16;
		char **nn = realloc(p->names, sizeof(char *) * (size_t)cap);
		if (nn == NULL)
			return eg_build_oom(b);
		p->names = nn;
		p->capnames = cap;
	}
	if ((p->names[p->nnames] = strdup(name)) == NULL)
		return eg_build_oom(b);
	return p->nnames++;
}

/* Appends a launch; returns its index or -1. */
/* Appends a step of `kind` with its params; returns it, or NULL (out of
 * memory, reported). */
static struct step *new_step(struct build *b, int kind, const void *params, size_t psize)
{
	struct eager_plan *p = b->p;
	if (p->nsteps == p->capsteps) {
		int cap = p->capsteps ? p->capsteps * 2 : 32;
		struct step *ns = realloc(p->steps, sizeof(*ns) * (size_t)cap);
		if (ns == NULL) {
			eg_build_oom(b);
			return NULL;
		}
		p->steps = ns;
		p->capsteps = cap;
	}
	struct step *s = &p->steps[p->nsteps];
	memset(s, 0, sizeof(*s));
	s->kind = kind;
	s->kernel = -1;
	s->psize = psize;
	memcpy(&s->p, params, psize);
	return s;
}

int eg_add_step(struct build *b, const char *name, pf_dim3 grid, pf_dim3 block, const void *params,
		    size_t psize)
{
	int k = intern(b, name);
	struct step *s = k < 0 ? NULL : new_step(b, STEP_KERNEL, params, psize);
	if (s == NULL)
		return -1;
	s->kernel = k;
	s->grid = grid;
	s->block = block;
	return b->p->nsteps++;
}

/* Points the pointer at `field` of step si's params at view v (NULL: left
 * NULL) and extends the buffer's lifetime over the step. */
void eg_step_ptr(struct build *b, int si, size_t field, const struct view *v)
{
	struct step *s = &b->p->steps[si];
	if (v == NULL)
		return;
	struct fix *f = &s->fix[s->nfix++];
	f->field = field;
	f->buf = v->buf;
	f->byte_off = v->off * (int64_t)graph_dtype_size(v->dt);
	struct buf *x = &b->p->bufs[v->buf];
	if (x->first < 0)
		x->first = si;
	if (x->last < si)
		x->last = si;
}

/* Appends a library call (kind STEP_BLAS_GEMM: params is a struct
 * blas_gemm; STEP_DNN_CONV: a struct dnn_conv); returns its index or -1.  Pointers are fixed up as for
 * launches (eg_step_ptr). */
int eg_add_lib_step(struct build *b, int kind, const void *params, size_t psize)
{
	struct eager_plan *p = b->p;
	if (new_step(b, kind, params, psize) == NULL)
		return -1;
	if (kind == STEP_BLAS_GEMM)
		p->n_blas++;
	if (kind == STEP_DNN_CONV)
		p->n_dnn++;
	return p->nsteps++;
}

/* Launch geometry for `total` independent elements, `block` threads a block:
 * on a GPU one element per thread and grid-stride beyond 2^22 blocks; on the
 * cpu backend runs of `per` consecutive elements per thread (a CUDA thread
 * is a plain loop there), leaving ~64 blocks for the worker threads. */
void eg_spread(struct build *b, int64_t total, unsigned block, pf_dim3 *grid, long long *per)
{
	int64_t p = 1;
	if (b->p->is_cpu) {
		p = total / ((int64_t)block * 64);
		p = p < 1 ? 1 : p > 4096 ? 4096 : p;
	} else if (b->p->for_model && total >= (int64_t)block * 4 * 132 * 8) {
		/* counted for the model: 4 elements a thread, as PyTorch's
		 * vectorised elementwise kernels take them (and a quarter of
		 * the emulated threads), while there are threads to fill a
		 * GPU */
		p = 4;
	}
	*per = p;
	*grid = (pf_dim3){eg_grid_for(total, (int64_t)block * p, 1 << 22), 1, 1};
}

/* Row ops (softmax, layer_norm, reductions): a thread per row on the cpu
 * backend (no barriers, so no fibers) and for short rows on a GPU; else a
 * block per row. */
int eg_use_thread_rows(struct build *b, int64_t n)
{
	return b->p->is_cpu || n <= 32;
}

/* Strides of v broadcast to the nd-dim shape `shape` (right-aligned, size-1
 * dims broadcast with stride 0). */
int eg_bcast_strides(struct build *b, const struct view *v, int nd, const int64_t *shape, int64_t *st)
{
	for (int d = 0; d < nd; d++) {
		int sd = d - (nd - v->ndim);
		if (sd < 0 || v->shape[sd] == 1)
			st[d] = 0;
		else if (v->shape[sd] == shape[d])
			st[d] = v->stride[sd];
		else
			return eg_berr(b, "internal: operand dim %d (%lld) does not broadcast to %lld", sd,
				    (long long)v->shape[sd], (long long)shape[d]);
	}
	return 0;
}

int eg_emit_ew(struct build *b, int family, int op, const struct view *out, const struct ew_opnd *in, int nin,
		   double alpha)
{
	opl_ew e;
	int64_t st[4][MAXD];            /* out, in0..2 */
	int nd = out->ndim;
	memset(&e, 0, sizeof(e));
	for (int d = 0; d < nd; d++)
		st[0][d] = out->stride[d];
	for (int k = 0; k < nin; k++) {
		if (in[k].v == NULL) {
			for (int d = 0; d < nd; d++)
				st[k + 1][d] = 0;
			e.scalar[k] = in[k].scalar;
		} else if (eg_bcast_strides(b, in[k].v, nd, out->shape, st[k + 1])) {
			return -1;
		}
	}
	/* Coalesce: drop size-1 dims, merge neighbours contiguous in every operand. */
	int m = 0;
	for (int d = 0; d < nd; d++) {
		if (out->shape[d] == 1)
			continue;
		int merge = m > 0;
		for (int k = 0; merge && k <= nin; k++) {
			int64_t prev = k == 0 ? e.ostride[m - 1] : e.istride[k - 1][m - 1];
			merge = prev == st[k][d] * out->shape[d];
		}
		if (merge) {
			e.shape[m - 1] *= out->shape[d];
		} else {
			e.shape[m] = out->shape[d];
			m++;
		}
		e.ostride[m - 1] = st[0][d];
		for (int k = 0; k < nin; k++)
			e.istride[k][m - 1] = st[k + 1][d];
	}
	if (m == 0) {
		e.shape[0] = 1;
		m = 1;
	}
	e.ndim = m;
	e.n = eg_vnumel(out);
	e.alpha = alpha;
	if (e.n == 0)
		return 0;
	char name[160];
	const char *to = eg_tname(out->dt);
	const char *ta = in[0].v ? eg_tname(in[0].dt) : to;
	if (family == EW_UNARY) {
		snprintf(name, sizeof(name), "ew_unary<%d, %s, %s>", op, to, ta);
	} else if (family == EW_BINARY) {
		const char *tb = in[1].v ? eg_tname(in[1].dt) : to;
		snprintf(name, sizeof(name), "ew_binary<%d, %s, %s, %s>", op, to, ta, tb);
	} else {
		const char *tx = in[1].v ? eg_tname(in[1].dt) : to, *ty = in[2].v ? eg_tname(in[2].dt) : to;
		snprintf(name, sizeof(name), "ew_where<%s, %s, %s>", to, tx, ty);
	}
	pf_dim3 grid;
	eg_spread(b, e.n, EW_BLOCK, &grid, &e.per);
	int si = eg_add_step(b, name, grid, (pf_dim3){EW_BLOCK, 1, 1}, &e, sizeof(e));
	if (si < 0)
		return -1;
	eg_step_ptr(b, si, offsetof(opl_ew, out), out);
	for (int k = 0; k < nin; k++)
		eg_step_ptr(b, si, offsetof(opl_ew, in) + sizeof(void *) * (size_t)k, in[k].v);
	return 0;
}

/* dst (a view) = src converted to dst's dtype. */
int eg_emit_copy(struct build *b, const struct view *dst, const struct view *src)
{
	struct ew_opnd o = {src, 0, src->dt};
	return eg_emit_ew(b, EW_UNARY, OPL_COPY, dst, &o, 1, 1.0);
}

int eg_emit_fill(struct build *b, const struct view *dst, double value)
{
	struct ew_opnd o = {NULL, value, dst->dt};
	return eg_emit_ew(b, EW_UNARY, OPL_COPY, dst, &o, 1, 1.0);
}

/* *out = in if it is contiguous (and of dtype dt, DT_INVALID: any), else a
 * contiguous copy. */
int eg_materialise(struct build *b, const struct view *in, enum graph_dtype dt, struct view *out)
{
	if (dt == DT_INVALID)
		dt = in->dt;
	if (is_contig(in) && in->dt == dt) {
		*out = *in;
		return 0;
	}
	if (eg_new_tensor(b, dt, in->ndim, in->shape, out))
		return -1;
	return eg_emit_copy(b, out, in);
}

/* ---- views ---------------------------------------------------------------------- */

/* PyTorch's computeStride: strides for viewing `in` as shape (ndim, shape)
 * without a copy; 0 when that is impossible. */
static int view_strides(const struct view *in, int ndim, const int64_t *shape, int64_t *st)
{
	int64_t numel = eg_vnumel(in);
	if (numel == 0 || in->ndim == 0) {
		contig_strides(ndim, shape, st);
		return 1;
	}
	int view_d = ndim - 1;
	int64_t chunk_base = in->stride[in->ndim - 1], tensor_numel = 1, view_numel = 1;
	for (int td = in->ndim - 1; td >= 0; td--) {
		tensor_numel *= in->shape[td];
		if (td == 0 || (in->shape[td - 1] != 1 && in->stride[td - 1] != tensor_numel * chunk_base)) {
			while (view_d >= 0 && (view_numel < tensor_numel || shape[view_d] == 1)) {
				st[view_d] = view_numel * chunk_base;
				view_numel *= shape[view_d];
				view_d--;
			}
			if (view_numel != tensor_numel)
				return 0;
			if (td > 0) {
				chunk_base = in->stride[td - 1];
				tensor_numel = 1;
				view_numel = 1;
			}
		}
	}
	return view_d == -1;
}

int eg_reshape_view(struct build *b, const struct view *in, int ndim, const int64_t *shape, struct view *out)
{
	int64_t st[MAXD];
	struct view src = *in;
	if (!view_strides(in, ndim, shape, st)) {
		if (eg_materialise(b, in, DT_INVALID, &src))
			return -1;
		contig_strides(ndim, shape, st);
	}
	*out = src;
	out->ndim = ndim;
	for (int i = 0; i < ndim; i++) {
		out->shape[i] = shape[i];
		out->stride[i] = st[i];
	}
	return 0;
}

int64_t eg_jint(json_t *attrs, const char *k)
{
	return json_integer_value(json_object_get(attrs, k));
}

int eg_jints(json_t *attrs, const char *k, int64_t *out, int max)
{
	json_t *j = json_object_get(attrs, k);
	if (json_is_integer(j)) {
		out[0] = json_integer_value(j);
		return 1;
	}
	int n = (int)json_array_size(j);
	if (n > max)
		n = max;
	for (int i = 0; i < n; i++)
		out[i] = json_integer_value(json_array_get(j, (size_t)i));
	return n;
}

double eg_jnum(json_t *attrs, const char *k, double dflt)
{
	json_t *j = json_object_get(attrs, k);
	return json_is_number(j) ? json_number_value(j) : dflt;
}

int eg_do_getitem(struct build *b, const struct view *in, json_t *index, struct view *out)
{
	struct view r = *in;
	r.ndim = 0;
	int d = 0;
	for (size_t i = 0; i < json_array_size(index); i++) {
		json_t *e = json_array_get(index, i);
		if (json_is_null(e)) {
			r.shape[r.ndim] = 1;
			r.stride[r.ndim++] = 0;
		} else if (json_is_integer(e)) {
			if (d >= in->ndim)
				return eg_berr(b, "internal: index has more items than dims");
			r.off += json_integer_value(e) * in->stride[d++];
		} else if (json_is_array(e)) {
			if (d >= in->ndim)
				return eg_berr(b, "internal: index has more items than dims");
			int64_t start = json_integer_value(json_array_get(e, 0));
			int64_t stop = json_integer_value(json_array_get(e, 1));
			int64_t step = json_integer_value(json_array_get(e, 2));
			int64_t len = stop > start ? (stop - start + step - 1) / step : 0;
			if (len > 0)
				r.off += start * in->stride[d];
			r.shape[r.ndim] = len;
			r.stride[r.ndim++] = in->stride[d] * step;
			d++;
		} else {
			return eg_berr(b, "internal: index item %zu is not normalised", i);
		}
	}
	while (d < in->ndim) {          /* not expected after normalisation */
		r.shape[r.ndim] = in->shape[d];
		r.stride[r.ndim++] = in->stride[d++];
	}
	*out = r;
	return 0;
}

static const struct lowering lowerings[OP_COUNT] = {
	[OP_ADD] = LA(eg_op_binary, OPL_ADD),
	[OP_SUB] = LA(eg_op_binary, OPL_SUB),
	[OP_MUL] = LA(eg_op_binary, OPL_MUL),
	[OP_DIV] = LA(eg_op_binary, OPL_DIV),
	[OP_POW] = LA(eg_op_binary, OPL_POW),
	[OP_WHERE] = L(eg_op_where),
	[OP_SIGMOID] = LA(eg_op_unary, OPL_SIGMOID),
	[OP_RELU] = LA(eg_op_unary, OPL_RELU),
	[OP_SILU] = LA(eg_op_unary, OPL_SILU),
	[OP_TANH] = LA(eg_op_unary, OPL_TANH),
	[OP_EXP] = LA(eg_op_unary, OPL_EXP),
	[OP_RSQRT] = LA(eg_op_unary, OPL_RSQRT),
	[OP_GELU] = L(eg_op_gelu),
	[OP_PRELU] = L(eg_op_prelu),
	[OP_TO] = L(eg_op_to),
	[OP_SOFTMAX] = L(eg_op_softmax),
	[OP_LAYER_NORM] = L(eg_op_layer_norm),
	[OP_BATCH_NORM] = L(eg_op_batch_norm),
	[OP_SUM] = LA(eg_op_reduce, 0),
	[OP_MEAN] = LA(eg_op_reduce, 1),
	[OP_LINEAR] = L(eg_op_linear),
	[OP_MATMUL] = L(eg_op_matmul),
	[OP_BMM] = L(eg_op_matmul),
	[OP_CONV2D] = L(eg_op_conv2d),
	[OP_BADDBMM] = L(eg_op_baddbmm),
	[OP_ARANGE] = L(eg_op_arange),
	[OP_LEAKY_RELU] = L(eg_op_leaky_relu),
	[OP_ADAPTIVE_AVG_POOL2D] = L(eg_op_aap2d),
	[OP_INTERPOLATE] = L(eg_op_interpolate),
	[OP_SDPA] = L(eg_op_sdpa),
	[OP_CAT] = L(eg_op_cat),
	[OP_PAD] = L(eg_op_pad),
	[OP_DROPOUT] = L(eg_view_same),
	[OP_CONTIGUOUS] = L(eg_view_same),
	[OP_TRANSPOSE] = L(eg_view_transpose),
	[OP_PERMUTE] = L(eg_view_permute),
	[OP_EXPAND] = L(eg_view_expand),
	[OP_RESHAPE] = L(eg_view_reshape),
	[OP_VIEW] = L(eg_view_reshape),
	[OP_FLATTEN] = L(eg_view_reshape),
	[OP_GETITEM] = L(eg_view_getitem),
	[OP_SPLIT] = L(eg_view_split),
	[OP_CHUNK] = L(eg_view_split),
	[OP_TENSOR_SPLIT] = L(eg_view_tensor_split),
	[OP_UNBIND] = L(eg_view_unbind),
	[OP_AVG_POOL2D] = L(eg_op_avg_pool2d),
	[OP_UNFOLD] = L(eg_view_unfold),
};

int eager_op_lowered(enum graph_op op)
{
	return op >= 0 && op < OP_COUNT && (lowerings[op].fn || lowerings[op].fn_arg);
}

static int plan_node(struct build *b)
{
	enum graph_op op = b->n->op;
	if (!eager_op_lowered(op))
		return eg_berr(b, "op not supported by the eager executor");
	const struct lowering *l = &lowerings[op];
	return l->fn ? l->fn(b) : l->fn_arg(b, l->arg);
}

/* Packs scratch buffers into one arena: biggest first, each at the lowest
 * aligned offset that overlaps no placed buffer alive at the same time. */
size_t eg_pack_arena(struct eager_plan *p)
{
	int n = 0;
	int *order = malloc(sizeof(int) * (size_t)(p->nbufs ? p->nbufs : 1));
	size_t total = 0;
	if (order == NULL)
		return SIZE_MAX;
	for (int i = 0; i < p->nbufs; i++)
		if ((p->bufs[i].kind == BK_SCRATCH || p->bufs[i].kind == BK_CONST) && p->bufs[i].first >= 0)
			order[n++] = i;
	for (int i = 1; i < n; i++) {     /* insertion sort by size, descending */
		int k = order[i], j = i - 1;
		while (j >= 0 && p->bufs[order[j]].bytes < p->bufs[k].bytes) {
			order[j + 1] = order[j];
			j--;
		}
		order[j + 1] = k;
	}
	for (int i = 0; i < n; i++) {
		struct buf *x = &p->bufs[order[i]];
		size_t need = (x->bytes + ARENA_ALIGN - 1) / ARENA_ALIGN * ARENA_ALIGN, off = 0;
		if (need == 0)
			need = ARENA_ALIGN;
		for (int again = 1; again;) {
			again = 0;
			for (int j = 0; j < i; j++) {
				struct buf *y = &p->bufs[order[j]];
				size_t yneed = (y->bytes + ARENA_ALIGN - 1) / ARENA_ALIGN * ARENA_ALIGN;
				if (yneed == 0)
					yneed = ARENA_ALIGN;
				int live = x->first <= y->last && y->first <= x->last;
				if (live && off < y->off + yneed && y->off < off + need) {
					off = y->off + yneed;
					again = 1;
				}
			}
		}
		x->off = off;
		if (off + need > total)
			total = off + need;
	}
	free(order);
	return total;
}

void eg_plan_release(struct eager_plan *p)
{
	if (p == NULL)
		return;
	if (p->arena)
		gpu_free(p->dev, p->arena);
	for (int i = 0; i < p->nsteps; i++)
		if (p->steps[i].kind == STEP_DNN_CONV)
			dnn_conv_release(&p->steps[i].p.dc);
	if (p->mod && --p->mod->refs == 0) {
		blas_destroy(p->mod->blas);
		dnn_destroy(p->mod->dnn);
		if (p->mod->mod)
			gpu_module_free(p->mod->mod);
		if (p->mod->handle)
			gpu_dlclose(p->mod->handle);
		free(p->mod);
	}
	free(p->tramps);
	for (int i = 0; i < p->nnames; i++)
		free(p->names[i]);
	free(p->names);
	free(p->kernels);
	free(p->steps);
	free(p->bufs);
	free(p->out_bytes);
	free(p->variant);
	free(p);
}

void eager_free(struct eager_plan *p)
{
	eg_plan_release(p);
}

/* Plans v without compiling (nor laying out the arena: prepare_plans does,
 * once cuDNN's workspaces are known); use_blas / use_dnn: GEMMs /
 * convolutions that fit become cuBLAS / cuDNN calls. */
struct eager_plan *eg_plan_variant(struct gpu_dev *d, const struct graph_variant *v, int use_blas, int use_dnn,
				int gpu_geometry, char *err, size_t errlen)
{
	struct eager_plan *p = calloc(1, sizeof(*p));
	struct build b = {p, v, NULL, NULL, err, errlen};
	if (p == NULL || (p->variant = strdup(v->name)) == NULL ||
	    (b.vals = calloc((size_t)v->n_values + 1, sizeof(struct view))) == NULL ||
	    (p->out_bytes = calloc((size_t)v->n_outputs + 1, sizeof(size_t))) == NULL) {
		snprintf(err, errlen, "eager: variant '%s': out of memory", v->name);
		goto fail;
	}
	p->dev = d;
	p->use_blas = use_blas;
	p->use_dnn = use_dnn;
	for (int i = 0; i < 3; i++)
		p->ones_buf[i] = -1;
	/* PASSFS_EAGER_GEOMETRY=gpu plans the GPU's launches on the cpu backend
	 * too (slower there: barriers become fiber switches), so tests without
	 * a GPU exercise the kernels a GPU runs. */
	const char *geo = getenv("PASSFS_EAGER_GEOMETRY");
	p->is_cpu = gpu_backend_of(d) == GPU_BACKEND_CPU && !gpu_geometry && !(geo && strcmp(geo, "gpu") == 0);
	p->for_model = gpu_geometry;
	p->n_inputs = v->n_inputs;
	p->n_outputs = v->n_outputs;
	for (int i = 0; i < v->n_inputs; i++) {
		const struct graph_value *gv = &v->values[i];
		struct view *x = &b.vals[i];
		x->ndim = gv->shape.ndim;
		x->dt = gv->dtype;
		for (int k = 0; k < x->ndim; k++)
			x->shape[k] = gv->shape.d[k];
		contig_strides(x->ndim, x->shape, x->stride);
		if ((x->buf = eg_new_buf(&b, BK_INPUT, i, (size_t)graph_shape_numel(&gv->shape) * graph_dtype_size(gv->dtype))) < 0)
			goto fail;
	}
	for (int i = 0; i < v->n_nodes; i++) {
		b.n = &v->nodes[i];
		if (plan_node(&b))
			goto fail;
	}
	b.n = NULL;
	/* Outputs: a scratch buffer holding exactly the output, contiguous, is
	 * redirected to the caller's buffer; anything else is copied there. */
	for (int j = 0; j < v->n_outputs; j++) {
		const struct graph_value *gv = &v->values[v->outputs[j]];
		const struct view *src = &b.vals[v->outputs[j]];
		size_t bytes = (size_t)graph_shape_numel(&gv->shape) * graph_dtype_size(gv->dtype);
		struct buf *sb = &p->bufs[src->buf];
		p->out_bytes[j] = bytes;
		if (sb->kind == BK_SCRATCH && src->off == 0 && is_contig(src) && sb->bytes == bytes && bytes > 0 &&
		    src->dt == gv->dtype) {
			sb->kind = BK_OUTPUT;
			sb->ext = j;
			continue;
		}
		struct view dst;
		memset(&dst, 0, sizeof(dst));
		dst.ndim = gv->shape.ndim;
		dst.dt = gv->dtype;
		for (int k = 0; k < dst.ndim; k++)
			dst.shape[k] = gv->shape.d[k];
		contig_strides(dst.ndim, dst.shape, dst.stride);
		if ((dst.buf = eg_new_buf(&b, BK_OUTPUT, j, bytes)) < 0 || eg_emit_copy(&b, &dst, src))
			goto fail;
	}
	free(b.vals);
	return p;
fail:
	free(b.vals);
	eg_plan_release(p);
	return NULL;
}
