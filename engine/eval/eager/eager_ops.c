/* eager_ops.c - the lowerings of op families (eager_int.h): reductions,
 * normalizations and other op helpers, GEMM (cuBLAS on cuda) and attention,
 * conv (cuDNN on cuda), pooling and interpolation, data movement. */
#define _GNU_SOURCE
#include "eager_int.h"
#include "traffic.h"

/* ---- op helpers --------------------------------------------------------------- */

static int is_half(enum graph_dtype dt)
{
	return dt == DT_F16 || dt == DT_BF16;
}

static const struct view *opnd_view(struct build *b, int i)
{
	const struct graph_node *n = b->n;
	if (i >= n->n_operands || n->operands[i].kind != OPND_VALUE)
		return NULL;
	return &b->vals[n->operands[i].value];
}

static const struct graph_value *result_value(struct build *b, int k)
{
	return &b->v->values[b->n->first_value + k];
}

static struct view *result_view(struct build *b, int k)
{
	return &b->vals[b->n->first_value + k];
}

static struct ew_opnd ew_operand(struct build *b, int i)
{
	struct ew_opnd o = {NULL, 0.0, DT_INVALID};
	const struct graph_operand *op = &b->n->operands[i];
	if (op->kind == OPND_VALUE) {
		o.v = &b->vals[op->value];
		o.dt = o.v->dt;
	} else if (op->kind == OPND_SCALAR) {
		o.scalar = op->scalar;
	}
	return o;
}

int eg_op_unary(struct build *b, int opcode)
{
	struct view *out = result_view(b, 0);
	if (eg_new_tensor_like(b, result_value(b, 0), out))
		return -1;
	struct ew_opnd in = ew_operand(b, 0);
	return eg_emit_ew(b, EW_UNARY, opcode, out, &in, 1, 1.0);
}

int eg_op_binary(struct build *b, int opcode)
{
	struct view *out = result_view(b, 0);
	double alpha = eg_jnum(b->n->attrs, "alpha", 1.0);
	struct ew_opnd in[2] = {ew_operand(b, 0), ew_operand(b, 1)};
	if (eg_new_tensor_like(b, result_value(b, 0), out))
		return -1;
	return eg_emit_ew(b, EW_BINARY, opcode, out, in, 2, alpha);
}

int eg_op_where(struct build *b)
{
	struct view *out = result_view(b, 0);
	struct ew_opnd in[3] = {ew_operand(b, 0), ew_operand(b, 1), ew_operand(b, 2)};
	if (eg_new_tensor_like(b, result_value(b, 0), out))
		return -1;
	return eg_emit_ew(b, EW_WHERE, 0, out, in, 3, 1.0);
}

int eg_op_prelu(struct build *b)
{
	const struct view *x = opnd_view(b, 0), *w = opnd_view(b, 1);
	struct view *out = result_view(b, 0), wv;
	if (eg_new_tensor_like(b, result_value(b, 0), out))
		return -1;
	/* The weight broadcast along dim 1 (one value: everywhere). */
	wv = *w;
	wv.ndim = x->ndim;
	int64_t wn = eg_vnumel(w), wst = w->ndim ? w->stride[0] : 0;
	for (int d = 0; d < x->ndim; d++) {
		wv.shape[d] = 1;
		wv.stride[d] = 0;
	}
	if (wn != 1 && x->ndim >= 2) {
		wv.shape[1] = wn;
		wv.stride[1] = wst;
	}
	struct ew_opnd in[2] = {{x, 0, x->dt}, {&wv, 0, w->dt}};
	return eg_emit_ew(b, EW_BINARY, OPL_PRELU, out, in, 2, 1.0);
}

int eg_op_to(struct build *b)
{
	struct view *out = result_view(b, 0);
	const struct view *x = opnd_view(b, 0);
	if (eg_new_tensor_like(b, result_value(b, 0), out))
		return -1;
	return eg_emit_copy(b, out, x);
}

static unsigned row_block(struct build *b, int64_t n)
{
	return (unsigned)eg_pow2_at_least(n, 32, b->p->is_cpu ? 32 : 256);
}

/* Softmax of contiguous x laid out [outer, n, inner] into out (same layout);
 * causal_l > 0 masks j > r % causal_l. */
static int emit_softmax(struct build *b, const struct view *x, const struct view *out, int64_t outer, int64_t n,
			int64_t inner, int64_t causal_l)
{
	opl_softmax s = {0};
	char name[128];
	s.rows = outer * inner;
	s.n = n;
	s.inner = inner;
	s.causal_l = causal_l;
	if (s.rows == 0)
		return 0;
	int si;
	if (eg_use_thread_rows(b, n)) {
		unsigned bl = b->p->is_cpu ? 32 : 128;
		snprintf(name, sizeof(name), "softmax_thread<%s, %s>", eg_tname(x->dt), eg_tname(out->dt));
		si = eg_add_step(b, name, (pf_dim3){eg_grid_for(s.rows, bl, 1 << 20), 1, 1}, (pf_dim3){bl, 1, 1}, &s,
			      sizeof(s));
	} else {
		snprintf(name, sizeof(name), "softmax_block<%s, %s>", eg_tname(x->dt), eg_tname(out->dt));
		si = eg_add_step(b, name, (pf_dim3){eg_grid_for(s.rows, 1, 1 << 20), 1, 1},
			      (pf_dim3){row_block(b, n), 1, 1}, &s, sizeof(s));
	}
	if (si < 0)
		return -1;
	eg_step_ptr(b, si, offsetof(opl_softmax, out), out);
	eg_step_ptr(b, si, offsetof(opl_softmax, in), x);
	return 0;
}

int eg_op_softmax(struct build *b)
{
	struct view x, *out = result_view(b, 0);
	int64_t dim = eg_jint(b->n->attrs, "dim");
	if (eg_materialise(b, opnd_view(b, 0), DT_INVALID, &x) || eg_new_tensor_like(b, result_value(b, 0), out))
		return -1;
	int64_t outer = 1, inner = 1, n = x.ndim ? x.shape[dim] : 1;
	for (int d = 0; d < x.ndim; d++) {
		if (d < dim)
			outer *= x.shape[d];
		else if (d > dim)
			inner *= x.shape[d];
	}
	return emit_softmax(b, &x, out, outer, n, inner, 0);
}

int eg_op_layer_norm(struct build *b)
{
	struct view x, w, bias, *out = result_view(b, 0);
	const struct view *wv = opnd_view(b, 1), *bv = opnd_view(b, 2);
	int64_t ns[MAXD];
	int cnt = eg_jints(b->n->attrs, "normalized_shape", ns, MAXD);
	if (eg_materialise(b, opnd_view(b, 0), DT_INVALID, &x) || eg_new_tensor_like(b, result_value(b, 0), out))
		return -1;
	enum graph_dtype tw = wv ? wv->dt : bv ? bv->dt : x.dt;
	if (wv && eg_materialise(b, wv, tw, &w))
		return -1;
	if (bv && eg_materialise(b, bv, tw, &bias))
		return -1;
	opl_layer_norm l = {0};
	l.m = 1;
	for (int i = 0; i < cnt; i++)
		l.m *= ns[i];
	l.rows = l.m ? eg_vnumel(&x) / l.m : 0;
	l.eps = eg_jnum(b->n->attrs, "eps", 1e-5);
	if (l.rows == 0)
		return 0;
	char name[128];
	int si;
	if (eg_use_thread_rows(b, l.m)) {
		unsigned bl = b->p->is_cpu ? 32 : 128;
		snprintf(name, sizeof(name), "layer_norm_thread<%s, %s>", eg_tname(x.dt), eg_tname(tw));
		si = eg_add_step(b, name, (pf_dim3){eg_grid_for(l.rows, bl, 1 << 20), 1, 1}, (pf_dim3){bl, 1, 1}, &l,
			      sizeof(l));
	} else {
		snprintf(name, sizeof(name), "layer_norm<%s, %s>", eg_tname(x.dt), eg_tname(tw));
		si = eg_add_step(b, name, (pf_dim3){eg_grid_for(l.rows, 1, 1 << 20), 1, 1},
			      (pf_dim3){row_block(b, l.m), 1, 1}, &l, sizeof(l));
	}
	if (si < 0)
		return -1;
	eg_step_ptr(b, si, offsetof(opl_layer_norm, out), out);
	eg_step_ptr(b, si, offsetof(opl_layer_norm, in), &x);
	eg_step_ptr(b, si, offsetof(opl_layer_norm, w), wv ? &w : NULL);
	eg_step_ptr(b, si, offsetof(opl_layer_norm, b), bv ? &bias : NULL);
	return 0;
}

int eg_op_batch_norm(struct build *b)
{
	struct view x, prm[4], *out = result_view(b, 0);
	const struct view *pv[4];
	if (eg_materialise(b, opnd_view(b, 0), DT_INVALID, &x) || eg_new_tensor_like(b, result_value(b, 0), out))
		return -1;
	for (int i = 0; i < 4; i++)
		pv[i] = opnd_view(b, i + 1);
	enum graph_dtype tp = pv[0]->dt;
	for (int i = 0; i < 4; i++)
		if (pv[i] && eg_materialise(b, pv[i], tp, &prm[i]))
			return -1;
	opl_batch_norm bn = {0};
	bn.n = x.shape[0];
	bn.c = x.shape[1];
	bn.inner = 1;
	for (int d = 2; d < x.ndim; d++)
		bn.inner *= x.shape[d];
	bn.eps = eg_jnum(b->n->attrs, "eps", 1e-5);
	int64_t total = bn.n * bn.c * bn.inner;
	if (total == 0)
		return 0;
	char name[128];
	snprintf(name, sizeof(name), "batch_norm_eval<%s, %s>", eg_tname(x.dt), eg_tname(tp));
	pf_dim3 grid;
	eg_spread(b, total, EW_BLOCK, &grid, &bn.per);
	int si = eg_add_step(b, name, grid, (pf_dim3){EW_BLOCK, 1, 1}, &bn, sizeof(bn));
	if (si < 0)
		return -1;
	eg_step_ptr(b, si, offsetof(opl_batch_norm, out), out);
	eg_step_ptr(b, si, offsetof(opl_batch_norm, in), &x);
	eg_step_ptr(b, si, offsetof(opl_batch_norm, mean), &prm[0]);
	eg_step_ptr(b, si, offsetof(opl_batch_norm, var), &prm[1]);
	eg_step_ptr(b, si, offsetof(opl_batch_norm, w), pv[2] ? &prm[2] : NULL);
	eg_step_ptr(b, si, offsetof(opl_batch_norm, b), pv[3] ? &prm[3] : NULL);
	return 0;
}

/* Merges adjacent dims of a (shape, stride) list that are contiguous with
 * each other and drops size-1 dims; returns the new count. */
static int coalesce(int nd, long long *shape, long long *stride)
{
	int m = 0;
	for (int d = 0; d < nd; d++) {
		if (shape[d] == 1)
			continue;
		if (m > 0 && stride[m - 1] == stride[d] * shape[d]) {
			shape[m - 1] *= shape[d];
			stride[m - 1] = stride[d];
		} else {
			shape[m] = shape[d];
			stride[m] = stride[d];
			m++;
		}
	}
	return m;
}

/* Few outputs of long reductions are split over blocks, as PyTorch's
 * reduce splits a reduction whose outputs cannot fill the GPU: enough
 * blocks to fill it (REDUCE_FILL_BLOCKS, 8 blocks of 256 threads on each
 * of an H200's 132 SMs), none with fewer than REDUCE_SPLIT_MIN elements.
 * On the cpu backend's own geometry (a thread a block), enough parts for
 * the emulator's pool.  Returns the parts an output (1: no split). */
#define REDUCE_FILL_BLOCKS (132 * 8)
#define REDUCE_SPLIT_MIN 4096
#define REDUCE_SPLIT_MIN_CPU 65536
static int64_t reduce_split(struct build *b, int64_t nout, int64_t nred)
{
	int64_t fill = b->p->is_cpu ? 64 : REDUCE_FILL_BLOCKS;
	int64_t least = b->p->is_cpu ? REDUCE_SPLIT_MIN_CPU : REDUCE_SPLIT_MIN;
	if (nout >= fill)
		return 1;
	int64_t split = (fill + nout - 1) / nout, most = nred / least;
	return split < most ? split : most;
}

/* The accumulator's dtype for a sum into dt (opl_acc). */
static enum graph_dtype acc_dtype(enum graph_dtype dt)
{
	return dt == DT_F64 ? DT_F64 : dt == DT_I64 || dt == DT_I32 || dt == DT_BOOL ? DT_I64 : DT_F32;
}

/* The split reduction: reduce_part into nout * split partial sums, then
 * reduce_finish. */
static int emit_reduce_split(struct build *b, const struct view *x, const struct view *out, opl_reduce *r,
			     int64_t split)
{
	struct view part;
	int64_t np = r->nout * split;
	if (eg_new_tensor(b, acc_dtype(out->dt), 1, &np, &part))
		return -1;
	r->split = split;
	char name[128];
	unsigned bl = b->p->is_cpu ? 1 : 256;
	snprintf(name, sizeof(name), "reduce_part<%s, %s>", eg_tname(x->dt), eg_tname(out->dt));
	int si = eg_add_step(b, name, (pf_dim3){eg_grid_for(np, 1, 1 << 20), 1, 1}, (pf_dim3){bl, 1, 1}, r, sizeof(*r));
	if (si < 0)
		return -1;
	eg_step_ptr(b, si, offsetof(opl_reduce, part), &part);
	eg_step_ptr(b, si, offsetof(opl_reduce, in), x);
	snprintf(name, sizeof(name), "reduce_finish<%s, %s>", eg_tname(x->dt), eg_tname(out->dt));
	bl = b->p->is_cpu ? 1 : (unsigned)eg_pow2_at_least(split, 32, 256);
	if ((si = eg_add_step(b, name, (pf_dim3){eg_grid_for(r->nout, 1, 1 << 20), 1, 1}, (pf_dim3){bl, 1, 1}, r,
			   sizeof(*r))) < 0)
		return -1;
	eg_step_ptr(b, si, offsetof(opl_reduce, out), out);
	eg_step_ptr(b, si, offsetof(opl_reduce, part), &part);
	return 0;
}

/* out (contiguous, the kept dims of x in order) = the sum or mean of x over
 * the dims marked in red. */
static int emit_reduce(struct build *b, const struct view *x, const struct view *out, const int *red, int mean)
{
	opl_reduce r = {0};
	r.nred = 1;
	for (int d = 0; d < x->ndim; d++) {
		if (red[d]) {
			r.rshape[r.rndim] = x->shape[d];
			r.rstride[r.rndim++] = x->stride[d];
			r.nred *= x->shape[d];
		} else {
			r.oshape[r.ondim] = x->shape[d];
			r.ostride[r.ondim++] = x->stride[d];
		}
	}
	r.nout = eg_vnumel(out);
	r.ondim = coalesce(r.ondim, r.oshape, r.ostride);
	r.rndim = coalesce(r.rndim, r.rshape, r.rstride);
	r.scale = mean ? 1.0 / (double)r.nred : 1.0;
	if (r.nout == 0)
		return 0;
	if (r.nred == 0)                /* sum of nothing: 0; mean: NaN */
		return eg_emit_fill(b, out, mean ? NAN : 0.0);
	char name[128];
	int si;
	int64_t split = reduce_split(b, r.nout, r.nred);
	if (split >= 2)
		return emit_reduce_split(b, x, out, &r, split);
	/* A thread per output for short reductions, many outputs, and on the
	 * cpu backend; else a block per output. */
	if (eg_use_thread_rows(b, r.nred) || r.nred <= 64 || (r.nout >= 16384 && r.nred <= 512)) {
		unsigned bl = b->p->is_cpu ? 32 : 128;
		snprintf(name, sizeof(name), "reduce_thread<%s, %s>", eg_tname(x->dt), eg_tname(out->dt));
		si = eg_add_step(b, name, (pf_dim3){eg_grid_for(r.nout, bl, 1 << 20), 1, 1}, (pf_dim3){bl, 1, 1}, &r,
			      sizeof(r));
	} else {
		snprintf(name, sizeof(name), "reduce_block<%s, %s>", eg_tname(x->dt), eg_tname(out->dt));
		si = eg_add_step(b, name, (pf_dim3){eg_grid_for(r.nout, 1, 1 << 20), 1, 1},
			      (pf_dim3){row_block(b, r.nred), 1, 1}, &r, sizeof(r));
	}
	if (si < 0)
		return -1;
	eg_step_ptr(b, si, offsetof(opl_reduce, out), out);
	eg_step_ptr(b, si, offsetof(opl_reduce, in), x);
	return 0;
}

int eg_op_reduce(struct build *b, int mean)
{
	const struct view *x = opnd_view(b, 0);
	struct view *out = result_view(b, 0);
	int red[MAXD] = {0};
	json_t *dim = json_object_get(b->n->attrs, "dim");
	if (eg_new_tensor_like(b, result_value(b, 0), out))
		return -1;
	if (json_is_null(dim) || dim == NULL) {
		for (int d = 0; d < x->ndim; d++)
			red[d] = 1;
	} else {
		int64_t dims[MAXD];
		int cnt = eg_jints(b->n->attrs, "dim", dims, MAXD);
		for (int i = 0; i < cnt; i++)
			if (dims[i] >= 0 && dims[i] < x->ndim)
				red[dims[i]] = 1;
	}
	return emit_reduce(b, x, out, red, mean);
}

static int blas_dt(enum graph_dtype dt, enum blas_dtype *out)
{
	switch (dt) {
	case DT_F32: *out = BLAS_F32; return 0;
	case DT_F16: *out = BLAS_F16; return 0;
	case DT_BF16: *out = BLAS_BF16; return 0;
	default: return -1;
	}
}

/* The plan's vector of `len` ones of dtype dt (f32, f16 or bf16), a
 * BK_CONST buffer shared by every use in the plan. */
static int ones_view(struct build *b, enum blas_dtype bd, enum graph_dtype dt, int64_t len, struct view *out)
{
	struct eager_plan *p = b->p;
	size_t bytes = (size_t)len * graph_dtype_size(dt);
	if (p->ones_buf[bd] < 0) {
		int k = eg_new_buf(b, BK_CONST, (int)dt, bytes);
		if (k < 0)
			return -1;
		p->bufs[k].first = 0;
		p->bufs[k].last = INT32_MAX;
		p->ones_buf[bd] = k;
	}
	struct buf *x = &p->bufs[p->ones_buf[bd]];
	if (x->bytes < bytes)
		x->bytes = bytes;
	memset(out, 0, sizeof(*out));
	out->buf = p->ones_buf[bd];
	out->ndim = 1;
	out->shape[0] = len;
	out->stride[0] = 1;
	out->dt = dt;
	return 0;
}

/* The GEMM p (emit_gemm's, batch dims coalesced) as cuBLAS calls, when it
 * fits them: A, B and C of one dtype among float32/float16/bfloat16, at
 * most one batch dim, every operand with a unit stride over its matrix.
 * A bias becomes a prefill of C (a k = 1 GEMM: the bias times the plan's
 * vector of ones, so C = bias exactly) and beta = 1 in the product:
 * PyTorch's addmm without cublasLt's epilogue (copy the bias into the
 * result, then gemm with beta = 1), numerically the same as cuBLAS adding
 * it in its epilogue.  Returns 1 when emitted, 0 when it does not fit (the
 * op library's kernel runs it), -1 on error. */
static int blas_steps(struct build *b, const struct gemm_desc *g, const opl_gemm *p)
{
	enum blas_dtype bd;
	char why[200];
	if (p->nbdims > 1 || g->a->dt != g->c->dt || g->b->dt != g->c->dt || blas_dt(g->c->dt, &bd))
		return 0;
	if (g->bias && g->bias->dt != g->c->dt)
		return 0;
	struct blas_rm_gemm rm = {
		.m = p->m, .n = p->n, .k = p->k, .sam = p->sam, .sak = p->sak, .sbk = p->sbk, .sbn = p->sbn,
		.scm = p->scm, .scn = p->scn, .batch = p->batch, .dt = bd, .alpha = p->alpha,
		.beta = g->bias ? 1.0 : 0.0};
	if (p->nbdims == 1) {
		rm.sab = p->sab[0];
		rm.sbb = p->sbb[0];
		rm.scb = p->scb[0];
	}
	struct blas_gemm prod, pre;
	if (blas_gemm_map(&rm, &prod, why, sizeof(why)))
		return 0;
	struct view ones;
	const struct view *pa = NULL, *pb = NULL;
	if (g->bias) {
		/* C[b][i][j] = U[i] * V[j]: (ones, bias) for a bias along n,
		 * (bias, ones) along m */
		struct blas_rm_gemm r1 = {.m = p->m, .n = p->n, .k = 1, .sak = 1, .sbk = 1, .scm = p->scm,
					  .scn = p->scn, .batch = p->batch, .scb = rm.scb, .dt = bd, .alpha = 1.0};
		int along_n = (p->m == 1 || p->sbias_m == 0) && (p->n == 1 || p->sbias_n != 0);
		int along_m = (p->n == 1 || p->sbias_n == 0) && (p->m == 1 || p->sbias_m != 0);
		if (along_n) {
			r1.sam = 1;
			r1.sbn = p->sbias_n;
			pb = g->bias;
		} else if (along_m) {
			r1.sam = p->sbias_m;
			r1.sbn = 1;
			pa = g->bias;
		} else {
			return 0;       /* a bias varying along both, or a broadcast scalar */
		}
		if (blas_gemm_map(&r1, &pre, why, sizeof(why)))
			return 0;
		if (ones_view(b, bd, g->c->dt, pa ? p->n : p->m, &ones))
			return -1;
		if (pa == NULL)
			pa = &ones;
		else
			pb = &ones;
		int si = eg_add_lib_step(b, STEP_BLAS_GEMM, &pre, sizeof(pre));
		if (si < 0)
			return -1;
		eg_step_ptr(b, si, offsetof(struct blas_gemm, a), pa);
		eg_step_ptr(b, si, offsetof(struct blas_gemm, b), pb);
		eg_step_ptr(b, si, offsetof(struct blas_gemm, c), g->c);
	}
	int si = eg_add_lib_step(b, STEP_BLAS_GEMM, &prod, sizeof(prod));
	if (si < 0)
		return -1;
	eg_step_ptr(b, si, offsetof(struct blas_gemm, a), g->a);
	eg_step_ptr(b, si, offsetof(struct blas_gemm, b), g->b);
	eg_step_ptr(b, si, offsetof(struct blas_gemm, c), g->c);
	return 1;
}

/* C (contiguous [batch..., m, n]) = alpha * A @ B (+ bias). */
static int emit_gemm(struct build *b, struct gemm_desc *g)
{
	opl_gemm p = {0};
	int64_t scb[MAXD];
	/* contiguous C: batch strides */
	int64_t s = g->m * g->n;
	for (int d = g->nb - 1; d >= 0; d--) {
		scb[d] = s;
		s *= g->bshape[d];
	}
	/* coalesce the batch dims over all three operands */
	int m = 0;
	for (int d = 0; d < g->nb; d++) {
		if (g->bshape[d] == 1)
			continue;
		if (m > 0 && p.sab[m - 1] == g->sab[d] * g->bshape[d] && p.sbb[m - 1] == g->sbb[d] * g->bshape[d] &&
		    p.scb[m - 1] == scb[d] * g->bshape[d]) {
			p.bshape[m - 1] *= g->bshape[d];
		} else {
			if (m == OPL_GEMM_BATCH_DIMS)
				return eg_berr(b, "more than %d batch dims that cannot be merged", OPL_GEMM_BATCH_DIMS);
			p.bshape[m] = g->bshape[d];
			m++;
		}
		p.sab[m - 1] = g->sab[d];
		p.sbb[m - 1] = g->sbb[d];
		p.scb[m - 1] = scb[d];
	}
	p.m = g->m;
	p.n = g->n;
	p.k = g->k;
	p.sam = g->sam;
	p.sak = g->sak;
	p.sbk = g->sbk;
	p.sbn = g->sbn;
	p.scm = g->n;
	p.scn = 1;
	/* B shared by the whole batch and A's batch continuing its rows: one
	 * tall GEMM (linear on [batch, seq, in], matmul by a weight). */
	if (m == 1 && p.sbb[0] == 0 && (p.sab[0] == p.m * p.sam || p.m == 1) && p.scb[0] == p.m * p.n &&
	    (!g->bias || g->sbias_m == 0)) {
		if (p.m == 1)
			p.sam = p.sab[0];
		p.m *= p.bshape[0];
		m = 0;
	}
	p.nbdims = m;
	p.batch = 1;
	for (int d = 0; d < m; d++)
		p.batch *= p.bshape[d];
	p.sbias_m = g->sbias_m;
	p.sbias_n = g->sbias_n;
	p.alpha = g->alpha;
	if (p.m == 0 || p.n == 0 || p.batch == 0)
		return 0;
	if (b->p->use_blas) {
		int r = blas_steps(b, g, &p);
		if (r != 0)
			return r < 0 ? -1 : 0;
	}
	char name[160];
	pf_dim3 grid, block = {256, 1, 1};
	if (b->p->is_cpu) {
		/* barrier-free 4x16 register tiles, a thread each (gemm.cu) */
		int64_t tiles = (p.n + 15) / 16 * ((p.m + 3) / 4);
		block.x = 64;
		grid = (pf_dim3){eg_grid_for(tiles, 64, INT32_MAX), 1, eg_grid_for(p.batch, 1, 65535)};
		snprintf(name, sizeof(name), "gemm_thread<%s, %s, %s>", eg_tname(g->a->dt), eg_tname(g->b->dt),
			 eg_tname(g->c->dt));
	} else {
		grid = (pf_dim3){eg_grid_for(p.n, 64, INT32_MAX), eg_grid_for(p.m, 64, 65535), eg_grid_for(p.batch, 1, 65535)};
		snprintf(name, sizeof(name), "gemm<%s, %s, %s>", eg_tname(g->a->dt), eg_tname(g->b->dt), eg_tname(g->c->dt));
	}
	int si = eg_add_step(b, name, grid, block, &p, sizeof(p));
	if (si < 0)
		return -1;
	/* a GPU runs it in cuBLAS (blas_steps), half-precision products on
	 * tensor cores; an operand of another dtype keeps the slower rate */
	if (!b->p->is_cpu)
		b->p->steps[si].lib_ms = model_gemm_ms((double)p.m, (double)p.n, (double)p.k, (double)p.batch,
						       is_half(g->a->dt) && is_half(g->b->dt),
						       (double)graph_dtype_size(g->c->dt));
	eg_step_ptr(b, si, offsetof(opl_gemm, c), g->c);
	eg_step_ptr(b, si, offsetof(opl_gemm, a), g->a);
	eg_step_ptr(b, si, offsetof(opl_gemm, b), g->b);
	eg_step_ptr(b, si, offsetof(opl_gemm, bias), g->bias);
	return 0;
}

/* Batch strides of operand v (its leading nd_v - 2 dims, or none when it is
 * 1-D) against the output batch shape. */
static void batch_strides(const struct view *v, int mat_dims, int nb, const int64_t *bshape, int64_t *st)
{
	int vb = v->ndim - mat_dims;
	for (int d = 0; d < nb; d++) {
		int sd = d - (nb - vb);
		st[d] = sd < 0 || v->shape[sd] == 1 || bshape[d] == 1 ? 0 : v->stride[sd];
	}
}

/* out (contiguous, of the result shape gv) = alpha * (a @ bm) with
 * torch.matmul's rules.  Returns 0 or -1 with the error set. */
static int plan_matmul(struct build *b, const struct view *a, const struct view *bm, const struct view *out,
		       const struct graph_value *gv, double alpha)
{
	struct gemm_desc g = {0};
	int a1 = a->ndim == 1, b1 = bm->ndim == 1;
	g.a = a;
	g.b = bm;
	g.c = out;
	g.alpha = alpha;
	if (a1) {
		g.m = 1;
		g.sam = 0;
		g.k = a->shape[0];
		g.sak = a->stride[0];
	} else {
		g.m = a->shape[a->ndim - 2];
		g.sam = a->stride[a->ndim - 2];
		g.k = a->shape[a->ndim - 1];
		g.sak = a->stride[a->ndim - 1];
	}
	if (b1) {
		g.n = 1;
		g.sbn = 0;
		g.sbk = bm->stride[0];
	} else {
		g.n = bm->shape[bm->ndim - 1];
		g.sbn = bm->stride[bm->ndim - 1];
		g.sbk = bm->stride[bm->ndim - 2];
	}
	g.nb = gv->shape.ndim - !a1 - !b1;
	for (int d = 0; d < g.nb; d++)
		g.bshape[d] = gv->shape.d[d];
	batch_strides(a, a1 ? 1 : 2, g.nb, g.bshape, g.sab);
	batch_strides(bm, b1 ? 1 : 2, g.nb, g.bshape, g.sbb);
	if (g.k == 0)
		return eg_emit_fill(b, out, 0.0);
	return emit_gemm(b, &g);
}

int eg_op_matmul(struct build *b)
{
	struct view *out = result_view(b, 0);
	const struct graph_value *gv = result_value(b, 0);
	if (eg_new_tensor_like(b, gv, out))
		return -1;
	return plan_matmul(b, opnd_view(b, 0), opnd_view(b, 1), out, gv, 1.0);
}

/* baddbmm: the GEMM with alpha, then out += beta * input (broadcast) in the
 * result's compute type.  beta = 0 skips the input altogether, so NaN and
 * Inf in it do not reach the result (PyTorch's rule).  Returns 0 or -1. */
int eg_op_baddbmm(struct build *b)
{
	struct view *out = result_view(b, 0);
	const struct graph_value *gv = result_value(b, 0);
	double beta = eg_jnum(b->n->attrs, "beta", 1.0), alpha = eg_jnum(b->n->attrs, "alpha", 1.0);
	if (eg_new_tensor_like(b, gv, out) || plan_matmul(b, opnd_view(b, 1), opnd_view(b, 2), out, gv, alpha))
		return -1;
	if (beta == 0.0)
		return 0;
	struct ew_opnd in[2] = {{out, 0, out->dt}, ew_operand(b, 0)};
	return eg_emit_ew(b, EW_BINARY, OPL_ADD, out, in, 2, beta);
}

/* arange: out[i] = start + i * step, computed in double (PyTorch's CPU
 * accumulation type for float and int64) and converted once.  Integer
 * results take start and step converted to the integer type first, as
 * PyTorch's integer kernels do.  Returns 0 or -1. */
int eg_op_arange(struct build *b)
{
	struct view *out = result_view(b, 0);
	if (eg_new_tensor_like(b, result_value(b, 0), out))
		return -1;
	opl_ew e;
	memset(&e, 0, sizeof(e));
	double start = eg_jnum(b->n->attrs, "start", 0.0), step = eg_jnum(b->n->attrs, "step", 1.0);
	if (!graph_dtype_is_float(out->dt)) {
		start = trunc(start);
		step = trunc(step);
	}
	e.n = eg_vnumel(out);
	e.ndim = 1;
	e.shape[0] = e.n;
	e.ostride[0] = 1;
	e.scalar[0] = start;
	e.scalar[1] = step;
	if (e.n == 0)
		return 0;
	char name[64];
	snprintf(name, sizeof(name), "ew_arange<%s>", eg_tname(out->dt));
	pf_dim3 grid;
	eg_spread(b, e.n, EW_BLOCK, &grid, &e.per);
	int si = eg_add_step(b, name, grid, (pf_dim3){EW_BLOCK, 1, 1}, &e, sizeof(e));
	if (si < 0)
		return -1;
	eg_step_ptr(b, si, offsetof(opl_ew, out), out);
	return 0;
}

/* leaky_relu is prelu's formula with the slope as a Python scalar operand.
 * Returns 0 or -1 with the error set. */
int eg_op_leaky_relu(struct build *b)
{
	struct view *out = result_view(b, 0);
	struct ew_opnd in[2] = {ew_operand(b, 0), {NULL, eg_jnum(b->n->attrs, "negative_slope", 0.01), DT_INVALID}};
	if (eg_new_tensor_like(b, result_value(b, 0), out))
		return -1;
	return eg_emit_ew(b, EW_BINARY, OPL_PRELU, out, in, 2, 1.0);
}

int eg_op_linear(struct build *b)
{
	const struct view *x = opnd_view(b, 0), *w = opnd_view(b, 1), *bias = opnd_view(b, 2);
	struct view *out = result_view(b, 0), x2, bias_c;
	const struct graph_value *gv = result_value(b, 0);
	if (eg_new_tensor_like(b, gv, out))
		return -1;
	int64_t k = x->shape[x->ndim - 1], rows = k ? eg_vnumel(x) / k : 0;
	int64_t shp2[2] = {rows, k};
	if (eg_reshape_view(b, x, 2, shp2, &x2))
		return -1;
	struct gemm_desc g = {0};
	g.a = &x2;
	g.b = w;
	g.c = out;
	g.alpha = 1.0;
	g.m = rows;
	g.k = k;
	g.sam = x2.stride[0];
	g.sak = x2.stride[1];
	if (w->ndim == 2) {
		g.n = w->shape[0];
		g.sbn = w->stride[0];
		g.sbk = w->stride[1];
	} else {
		g.n = 1;
		g.sbn = 0;
		g.sbk = w->stride[0];
	}
	int separate_bias = 0;
	if (bias) {
		int64_t st[MAXD];
		int simple = w->ndim == 2 && bias->dt == out->dt;
		if (simple && eg_bcast_strides(b, bias, out->ndim, out->shape, st))
			return -1;
		for (int d = 0; simple && d < out->ndim - 1; d++)
			simple = st[d] == 0;
		if (simple) {
			bias_c = *bias;
			g.bias = &bias_c;
			g.sbias_m = 0;
			g.sbias_n = out->ndim ? st[out->ndim - 1] : 0;
		} else {
			separate_bias = 1;
		}
	}
	if (k == 0) {
		if (eg_emit_fill(b, out, 0.0))
			return -1;
		separate_bias = bias != NULL;
	} else if (emit_gemm(b, &g)) {
		return -1;
	}
	if (separate_bias) {
		struct ew_opnd in[2] = {{out, 0, out->dt}, {bias, 0, bias->dt}};
		return eg_emit_ew(b, EW_BINARY, OPL_ADD, out, in, 2, 1.0);
	}
	return 0;
}

/* ---- conv, pooling, interpolation ---------------------------------------------------- */

/* conv2d as a cuDNN call (dnn.h) when cuDNN can take it: x made contiguous
 * first (PyTorch's cudnn_convolution does the same), a workspace buffer in
 * the arena whose size is known once the handle exists (prepare_plans).
 * Returns 1 when emitted, 0 when it does not fit, -1 on error. */
static int dnn_step(struct build *b, const struct view *x, const struct view *w, const struct view *bias,
		    const struct view *out, const opl_conv *c)
{
	enum blas_dtype bd;
	char why[200];
	if (blas_dt(x->dt, &bd) || w->dt != x->dt || out->dt != x->dt || (bias && bias->dt != x->dt))
		return 0;
	long long xs[4] = {c->n, c->cin, c->h, c->w_}, ws[4] = {c->cout, c->cin / c->groups, c->kh, c->kw};
	long long o2[2] = {c->oh, c->ow};
	long long at[7] = {c->pad_h, c->pad_w, c->stride_h, c->stride_w, c->dil_h, c->dil_w, c->groups};
	struct dnn_conv dc;
	if (dnn_conv_init(&dc, bd, xs, ws, o2, at, bias != NULL, why, sizeof(why)))
		return 0;
	struct view xc, wsv;
	if (eg_materialise(b, x, DT_INVALID, &xc))
		return -1;
	memset(&wsv, 0, sizeof(wsv));
	wsv.dt = DT_F32;
	if ((wsv.buf = eg_new_buf(b, BK_SCRATCH, -1, 0)) < 0)
		return -1;
	int si = eg_add_lib_step(b, STEP_DNN_CONV, &dc, sizeof(dc));
	if (si < 0)
		return -1;
	b->p->steps[si].ws_buf = wsv.buf;
	eg_step_ptr(b, si, offsetof(struct dnn_conv, x), &xc);
	eg_step_ptr(b, si, offsetof(struct dnn_conv, w), w);
	eg_step_ptr(b, si, offsetof(struct dnn_conv, bias), bias);
	eg_step_ptr(b, si, offsetof(struct dnn_conv, y), out);
	eg_step_ptr(b, si, offsetof(struct dnn_conv, ws), &wsv);
	return 1;
}

int eg_op_conv2d(struct build *b)
{
	const struct view *x = opnd_view(b, 0), *bv = opnd_view(b, 2);
	struct view w, bias, *out = result_view(b, 0);
	if (eg_new_tensor_like(b, result_value(b, 0), out))
		return -1;
	if (eg_materialise(b, opnd_view(b, 1), x->dt, &w))
		return -1;
	if (bv && eg_materialise(b, bv, x->dt, &bias))
		return -1;
	int64_t st[2] = {1, 1}, pd[2] = {0, 0}, dl[2] = {1, 1};
	eg_jints(b->n->attrs, "stride", st, 2);
	eg_jints(b->n->attrs, "padding", pd, 2);
	eg_jints(b->n->attrs, "dilation", dl, 2);
	opl_conv c = {0};
	int o = x->ndim == 4;
	c.n = o ? x->shape[0] : 1;
	c.sn = o ? x->stride[0] : 0;
	c.cin = x->shape[o];
	c.h = x->shape[o + 1];
	c.w_ = x->shape[o + 2];
	c.sc = x->stride[o];
	c.sh = x->stride[o + 1];
	c.sw = x->stride[o + 2];
	c.cout = w.shape[0];
	c.kh = w.shape[2];
	c.kw = w.shape[3];
	c.oh = out->shape[out->ndim - 2];
	c.ow = out->shape[out->ndim - 1];
	c.stride_h = st[0];
	c.stride_w = st[1];
	c.pad_h = pd[0];
	c.pad_w = pd[1];
	c.dil_h = dl[0];
	c.dil_w = dl[1];
	c.groups = eg_jint(b->n->attrs, "groups");
	int64_t cout_g = c.cout / c.groups, kk = (c.cin / c.groups) * c.kh * c.kw;
	int64_t total = c.n * c.cout * c.oh * c.ow;
	if (total == 0)
		return 0;
	/* 1x1, stride 1, no padding, one group: out[n] = W @ x[n], a batched GEMM
	 * (when x's rows continue each other) */
	if (c.kh == 1 && c.kw == 1 && c.stride_h == 1 && c.stride_w == 1 && c.pad_h == 0 && c.pad_w == 0 &&
	    c.groups == 1 && (c.h == 1 || c.w_ == 1 || c.sh == c.w_ * c.sw)) {
		struct gemm_desc g = {0};
		g.a = &w;
		g.b = x;
		g.c = out;
		g.bias = bv ? &bias : NULL;
		g.alpha = 1.0;
		g.m = c.cout;
		g.k = c.cin;
		g.n = c.h * c.w_;
		g.sam = c.cin;
		g.sak = 1;
		g.sbk = c.sc;
		g.sbn = c.w_ == 1 ? c.sh : c.sw;
		g.sbias_m = 1;
		g.sbias_n = 0;
		g.nb = 1;
		g.bshape[0] = c.n;
		g.sab[0] = 0;
		g.sbb[0] = c.sn;
		return emit_gemm(b, &g);
	}
	if (b->p->use_dnn) {
		int r = dnn_step(b, x, &w, bv ? &bias : NULL, out, &c);
		if (r != 0)
			return r < 0 ? -1 : 0;
	}
	char name[128];
	int si;
	if (b->p->is_cpu && cout_g >= 4 && kk >= 4) {
		int64_t tiles = (c.n * c.oh * c.ow + 15) / 16 * ((cout_g + 3) / 4);
		pf_dim3 grid = {eg_grid_for(tiles, 64, INT32_MAX), 1, eg_grid_for(c.groups, 1, 65535)};
		snprintf(name, sizeof(name), "conv2d_thread<%s>", eg_tname(x->dt));
		si = eg_add_step(b, name, grid, (pf_dim3){64, 1, 1}, &c, sizeof(c));
	} else if (!b->p->is_cpu && cout_g >= 8 && kk >= 8) {
		snprintf(name, sizeof(name), "conv2d_gemm<%s>", eg_tname(x->dt));
		pf_dim3 grid = {eg_grid_for(c.n * c.oh * c.ow, 64, INT32_MAX), eg_grid_for(cout_g, 64, 65535),
				eg_grid_for(c.groups, 1, 65535)};
		si = eg_add_step(b, name, grid, (pf_dim3){256, 1, 1}, &c, sizeof(c));
	} else {
		pf_dim3 grid;
		eg_spread(b, total, 128, &grid, &c.per);
		snprintf(name, sizeof(name), "conv2d_direct<%s>", eg_tname(x->dt));
		si = eg_add_step(b, name, grid, (pf_dim3){128, 1, 1}, &c, sizeof(c));
	}
	if (si < 0)
		return -1;
	/* a GPU runs it in cuDNN: an implicit GEMM per group (tensor cores for
	 * half precision), or on CUDA cores where the groups are too thin for
	 * a product (depthwise) */
	if (!b->p->is_cpu)
		b->p->steps[si].lib_ms =
			cout_g >= 8 && kk >= 8
				? model_gemm_ms((double)(c.n * c.oh * c.ow), (double)cout_g, (double)kk,
						(double)c.groups, is_half(x->dt), (double)graph_dtype_size(out->dt))
				: model_flops_ms(2.0 * (double)total * (double)kk);
	eg_step_ptr(b, si, offsetof(opl_conv, out), out);
	eg_step_ptr(b, si, offsetof(opl_conv, x), x);
	eg_step_ptr(b, si, offsetof(opl_conv, w), &w);
	eg_step_ptr(b, si, offsetof(opl_conv, bias), bv ? &bias : NULL);
	return 0;
}

int eg_op_aap2d(struct build *b)
{
	struct view x, *out = result_view(b, 0);
	if (eg_materialise(b, opnd_view(b, 0), DT_INVALID, &x) || eg_new_tensor_like(b, result_value(b, 0), out))
		return -1;
	opl_pool p = {0};
	p.h = x.shape[x.ndim - 2];
	p.w = x.shape[x.ndim - 1];
	p.oh = out->shape[out->ndim - 2];
	p.ow = out->shape[out->ndim - 1];
	p.nc = p.h * p.w != 0 ? eg_vnumel(&x) / (p.h * p.w) : 0;
	int64_t total = eg_vnumel(out);
	if (total == 0)
		return 0;
	if (p.h * p.w == 0)
		return eg_emit_fill(b, out, NAN);
	/* to 1x1 (a global average pool): a mean over the last two dims, as
	 * PyTorch lowers it, so the reduction's plan (a block per row, or split
	 * over blocks) runs it rather than a thread per output summing a whole
	 * plane */
	if (p.oh == 1 && p.ow == 1) {
		int red[MAXD] = {0};
		red[x.ndim - 2] = red[x.ndim - 1] = 1;
		return emit_reduce(b, &x, out, red, 1);
	}
	char name[128];
	pf_dim3 grid;
	eg_spread(b, total, 128, &grid, &p.per);
	snprintf(name, sizeof(name), "adaptive_avg_pool2d<%s>", eg_tname(x.dt));
	int si = eg_add_step(b, name, grid, (pf_dim3){128, 1, 1}, &p, sizeof(p));
	if (si < 0)
		return -1;
	eg_step_ptr(b, si, offsetof(opl_pool, out), out);
	eg_step_ptr(b, si, offsetof(opl_pool, in), &x);
	return 0;
}

/* PyTorch's compute_scales_value: 1/scale_factor when one was given (and not
 * recomputed), else in/out; in float as its kernels have it. */
static float scales_value(json_t *sf, int d, int64_t in, int64_t out)
{
	if (json_is_array(sf)) {
		double f = json_number_value(json_array_get(sf, (size_t)d));
		if (f > 0)
			return (float)(1.0 / f);
	}
	return (float)in / (float)out;
}

int eg_op_interpolate(struct build *b)
{
	struct view x, *out = result_view(b, 0);
	if (eg_materialise(b, opnd_view(b, 0), DT_INVALID, &x) || eg_new_tensor_like(b, result_value(b, 0), out))
		return -1;
	json_t *attrs = b->n->attrs, *sf = json_object_get(attrs, "scale_factor");
	const char *mode = json_string_value(json_object_get(attrs, "mode"));
	int bilinear = mode && strcmp(mode, "bilinear") == 0;
	int align = json_is_true(json_object_get(attrs, "align_corners"));
	opl_upsample u = {0};
	u.nsp = x.ndim - 2;
	if (u.nsp < 1 || u.nsp > 3 || (bilinear && u.nsp != 2))
		return eg_berr(b, "unsupported input rank %d", x.ndim);
	u.nc = x.shape[0] * x.shape[1];
	u.nout = eg_vnumel(out);
	u.align_corners = align;
	for (int d = 0; d < u.nsp; d++) {
		u.in_size[d] = x.shape[2 + d];
		u.out_size[d] = out->shape[2 + d];
		if (bilinear && align)
			u.scale[d] = u.out_size[d] > 1 ? (float)(u.in_size[d] - 1) / (float)(u.out_size[d] - 1) : 0.f;
		else
			u.scale[d] = scales_value(sf, d, u.in_size[d], u.out_size[d]);
	}
	if (u.nout == 0)
		return 0;
	char name[128];
	snprintf(name, sizeof(name), "%s<%s>", bilinear ? "upsample_bilinear" : "upsample_nearest", eg_tname(x.dt));
	pf_dim3 grid;
	eg_spread(b, u.nout, EW_BLOCK, &grid, &u.per);
	int si = eg_add_step(b, name, grid, (pf_dim3){EW_BLOCK, 1, 1}, &u, sizeof(u));
	if (si < 0)
		return -1;
	eg_step_ptr(b, si, offsetof(opl_upsample, out), out);
	eg_step_ptr(b, si, offsetof(opl_upsample, in), &x);
	return 0;
}

/* ---- attention -------------------------------------------------------------------------- */

int eg_op_sdpa(struct build *b)
{
	const struct view *q = opnd_view(b, 0), *k = opnd_view(b, 1), *v = opnd_view(b, 2), *mask = opnd_view(b, 3);
	struct view *out = result_view(b, 0), scores;
	const struct graph_value *gv = result_value(b, 0);
	json_t *attrs = b->n->attrs;
	if (eg_new_tensor_like(b, gv, out))
		return -1;
	int nb = gv->shape.ndim - 2;
	int64_t L = q->shape[q->ndim - 2], E = q->shape[q->ndim - 1], S = k->shape[k->ndim - 2];
	int64_t sshape[MAXD];
	for (int d = 0; d < nb; d++)
		sshape[d] = gv->shape.d[d];
	sshape[nb] = L;
	sshape[nb + 1] = S;
	if (eg_new_tensor(b, q->dt == DT_F64 ? DT_F64 : DT_F32, nb + 2, sshape, &scores))
		return -1;
	json_t *sc = json_object_get(attrs, "scale");
	double scale = json_is_number(sc) ? json_number_value(sc) : 1.0 / sqrt((double)E);

	/* scores = scale * q @ k^T */
	struct gemm_desc g = {0};
	g.a = q;
	g.b = k;
	g.c = &scores;
	g.alpha = scale;
	g.m = L;
	g.k = E;
	g.n = S;
	g.sam = q->stride[q->ndim - 2];
	g.sak = q->stride[q->ndim - 1];
	g.sbk = k->stride[k->ndim - 1];
	g.sbn = k->stride[k->ndim - 2];
	g.nb = nb;
	for (int d = 0; d < nb; d++)
		g.bshape[d] = sshape[d];
	batch_strides(q, 2, nb, g.bshape, g.sab);
	batch_strides(k, 2, nb, g.bshape, g.sbb);
	if (E == 0 ? eg_emit_fill(b, &scores, 0.0) : emit_gemm(b, &g))
		return -1;

	/* the mask: bool (false = -inf) or added */
	if (mask) {
		struct ew_opnd in[3];
		if (mask->dt == DT_BOOL) {
			in[0] = (struct ew_opnd){mask, 0, DT_BOOL};
			in[1] = (struct ew_opnd){&scores, 0, scores.dt};
			in[2] = (struct ew_opnd){NULL, -INFINITY, scores.dt};
			if (eg_emit_ew(b, EW_WHERE, 0, &scores, in, 3, 1.0))
				return -1;
		} else {
			in[0] = (struct ew_opnd){&scores, 0, scores.dt};
			in[1] = (struct ew_opnd){mask, 0, mask->dt};
			if (eg_emit_ew(b, EW_BINARY, OPL_ADD, &scores, in, 2, 1.0))
				return -1;
		}
	}
	int causal = json_is_true(json_object_get(attrs, "is_causal"));
	int64_t rows = eg_vnumel(&scores) / (S ? S : 1);
	if (S > 0 && emit_softmax(b, &scores, &scores, rows, S, 1, causal ? L : 0))
		return -1;

	/* out = P @ v */
	struct gemm_desc h = {0};
	h.a = &scores;
	h.b = v;
	h.c = out;
	h.alpha = 1.0;
	h.m = L;
	h.k = S;
	h.n = v->shape[v->ndim - 1];
	h.sam = S;
	h.sak = 1;
	h.sbk = v->stride[v->ndim - 2];
	h.sbn = v->stride[v->ndim - 1];
	h.nb = nb;
	for (int d = 0; d < nb; d++)
		h.bshape[d] = sshape[d];
	batch_strides(&scores, 2, nb, h.bshape, h.sab);
	batch_strides(v, 2, nb, h.bshape, h.sbb);
	if (S == 0)
		return eg_emit_fill(b, out, 0.0);
	return emit_gemm(b, &h);
}

/* ---- data movement ------------------------------------------------------------------------ */

int eg_op_cat(struct build *b)
{
	struct view *out = result_view(b, 0);
	int64_t dim = eg_jint(b->n->attrs, "dim"), at = 0;
	if (eg_new_tensor_like(b, result_value(b, 0), out))
		return -1;
	for (int i = 0; i < b->n->n_operands; i++) {
		const struct view *x = opnd_view(b, i);
		struct view dst = *out;
		dst.shape[dim] = x->shape[dim];
		dst.off = out->off + at * out->stride[dim];
		at += x->shape[dim];
		if (eg_emit_copy(b, &dst, x))
			return -1;
	}
	return 0;
}

int eg_op_pad(struct build *b)
{
	const struct view *x = opnd_view(b, 0);
	struct view *out = result_view(b, 0);
	int64_t pads[2 * MAXD];
	int cnt = eg_jints(b->n->attrs, "pad", pads, 2 * MAXD);
	json_t *val = json_object_get(b->n->attrs, "value");
	double value = json_is_number(val) ? json_number_value(val) : 0.0;
	if (eg_new_tensor_like(b, result_value(b, 0), out))
		return -1;
	struct view src = *x, dst = *out;
	int grows = 0;
	for (int i = 0; i < cnt / 2; i++) {
		int d = x->ndim - 1 - i;
		int64_t lo = pads[2 * i], hi = pads[2 * i + 1];
		grows |= lo > 0 || hi > 0;
		int64_t len = x->shape[d] + (lo < 0 ? lo : 0) + (hi < 0 ? hi : 0);
		if (len < 0)
			len = 0;
		if (lo < 0)
			src.off += -lo * x->stride[d];
		else
			dst.off += lo * out->stride[d];
		src.shape[d] = dst.shape[d] = len;
	}
	if (grows && eg_emit_fill(b, out, value))
		return -1;
	return eg_emit_copy(b, &dst, &src);
}

/* The view ops: metadata only, no launch. */
int eg_view_same(struct build *b)
{
	*result_view(b, 0) = *opnd_view(b, 0);
	return 0;
}

int eg_view_transpose(struct build *b)
{
	const struct view *x = opnd_view(b, 0);
	struct view *r = result_view(b, 0);
	*r = *x;
	if (x->ndim > 0) {
		int64_t a = eg_jint(b->n->attrs, "dim0"), c = eg_jint(b->n->attrs, "dim1");
		r->shape[a] = x->shape[c];
		r->stride[a] = x->stride[c];
		r->shape[c] = x->shape[a];
		r->stride[c] = x->stride[a];
	}
	return 0;
}

int eg_view_permute(struct build *b)
{
	const struct view *x = opnd_view(b, 0);
	struct view *r = result_view(b, 0);
	int64_t dims[MAXD];
	int cnt = eg_jints(b->n->attrs, "dims", dims, MAXD);
	*r = *x;
	for (int i = 0; i < cnt; i++) {
		r->shape[i] = x->shape[dims[i]];
		r->stride[i] = x->stride[dims[i]];
	}
	return 0;
}

int eg_view_expand(struct build *b)
{
	const struct view *x = opnd_view(b, 0);
	struct view *r = result_view(b, 0);
	const struct graph_value *gv = result_value(b, 0);
	*r = *x;
	r->ndim = gv->shape.ndim;
	int lead = gv->shape.ndim - x->ndim;
	for (int i = 0; i < gv->shape.ndim; i++) {
		r->shape[i] = gv->shape.d[i];
		if (i < lead)
			r->stride[i] = 0;
		else
			r->stride[i] = x->shape[i - lead] == gv->shape.d[i] ? x->stride[i - lead] : 0;
	}
	return 0;
}

int eg_view_reshape(struct build *b)
{
	const struct graph_value *gv = result_value(b, 0);
	return eg_reshape_view(b, opnd_view(b, 0), gv->shape.ndim, gv->shape.d, result_view(b, 0));
}

int eg_view_getitem(struct build *b)
{
	const struct graph_node *n = b->n;
	json_t *idx = json_object_get(n->attrs, "index");
	if (n->operands[0].kind == OPND_TUPLE) {
		const struct graph_node *src = &b->v->nodes[n->operands[0].node];
		int64_t k = json_integer_value(json_array_get(idx, 0));
		*result_view(b, 0) = b->vals[src->first_value + k];
		return 0;
	}
	return eg_do_getitem(b, opnd_view(b, 0), idx, result_view(b, 0));
}

/* split, chunk */
int eg_view_split(struct build *b)
{
	const struct view *x = opnd_view(b, 0);
	int64_t dim = eg_jint(b->n->attrs, "dim"), at = 0;
	json_t *sizes = json_object_get(b->n->attrs, "sizes");
	for (int k = 0; k < b->n->n_results; k++) {
		struct view *e = result_view(b, k);
		int64_t len = json_integer_value(json_array_get(sizes, (size_t)k));
		*e = *x;
		e->shape[dim] = len;
		if (len > 0)
			e->off += at * x->stride[dim];
		at += len;
	}
	return 0;
}

int eg_view_tensor_split(struct build *b)
{
	const struct view *x = opnd_view(b, 0);
	int64_t dim = eg_jint(b->n->attrs, "dim");
	json_t *starts = json_object_get(b->n->attrs, "starts"), *sizes = json_object_get(b->n->attrs, "sizes");
	for (int k = 0; k < b->n->n_results; k++) {
		struct view *e = result_view(b, k);
		int64_t len = json_integer_value(json_array_get(sizes, (size_t)k));
		*e = *x;
		e->shape[dim] = len;
		if (len > 0)
			e->off += json_integer_value(json_array_get(starts, (size_t)k)) * x->stride[dim];
	}
	return 0;
}

int eg_view_unbind(struct build *b)
{
	const struct view *x = opnd_view(b, 0);
	int64_t dim = eg_jint(b->n->attrs, "dim");
	for (int k = 0; k < b->n->n_results; k++) {
		struct view *e = result_view(b, k);
		*e = *x;
		e->off += k * x->stride[dim];
		e->ndim--;
		for (int d = (int)dim; d < e->ndim; d++) {
			e->shape[d] = x->shape[d + 1];
			e->stride[d] = x->stride[d + 1];
		}
	}
	return 0;
}

int eg_op_gelu(struct build *b)
{
	const char *a = json_string_value(json_object_get(b->n->attrs, "approximate"));
	return eg_op_unary(b, a && strcmp(a, "tanh") == 0 ? OPL_GELU_TANH : OPL_GELU);
}

/* avg_pool2d: pool.cu's kernel over a contiguous copy of the input. */
int eg_op_avg_pool2d(struct build *b)
{
	struct view x, *out = result_view(b, 0);
	json_t *a = b->n->attrs, *dv = json_object_get(a, "divisor_override");
	int64_t k[2], st[2], pd[2];
	if (eg_materialise(b, opnd_view(b, 0), DT_INVALID, &x) || eg_new_tensor_like(b, result_value(b, 0), out))
		return -1;
	eg_jints(a, "kernel_size", k, 2);
	eg_jints(a, "stride", st, 2);
	eg_jints(a, "padding", pd, 2);
	opl_avg_pool p = {0};
	p.h = x.shape[x.ndim - 2];
	p.w = x.shape[x.ndim - 1];
	p.oh = out->shape[out->ndim - 2];
	p.ow = out->shape[out->ndim - 1];
	p.nc = eg_vnumel(&x) / (p.h * p.w);        /* h, w > 0: the graph checks */
	p.kh = k[0], p.kw = k[1], p.sh = st[0], p.sw = st[1], p.ph = pd[0], p.pw = pd[1];
	p.divisor = json_is_integer(dv) ? json_integer_value(dv) : 0;
	p.count_include_pad = json_is_true(json_object_get(a, "count_include_pad"));
	int64_t total = eg_vnumel(out);
	if (total == 0)
		return 0;
	char name[128];
	pf_dim3 grid;
	eg_spread(b, total, 128, &grid, &p.per);
	snprintf(name, sizeof(name), "avg_pool2d<%s>", eg_tname(x.dt));
	int si = eg_add_step(b, name, grid, (pf_dim3){128, 1, 1}, &p, sizeof(p));
	if (si < 0)
		return -1;
	eg_step_ptr(b, si, offsetof(opl_avg_pool, out), out);
	eg_step_ptr(b, si, offsetof(opl_avg_pool, in), &x);
	return 0;
}

/* unfold: a view, as in PyTorch: the dim's stride times step, and a new last
 * dim of `size` with the dim's stride (windows may overlap). */
int eg_view_unfold(struct build *b)
{
	const struct view *x = opnd_view(b, 0);
	struct view *r = result_view(b, 0);
	const struct graph_value *gv = result_value(b, 0);
	int64_t d = eg_jint(b->n->attrs, "dimension"), step = eg_jint(b->n->attrs, "step");
	*r = *x;
	r->ndim = gv->shape.ndim;
	r->shape[d] = gv->shape.d[d];
	r->stride[d] = x->stride[d] * step;
	r->shape[r->ndim - 1] = gv->shape.d[r->ndim - 1];
	r->stride[r->ndim - 1] = x->stride[d];
	return 0;
}
