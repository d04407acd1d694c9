/* eager.c - the eager baseline executor (eager.h).
 *
 * Planning walks the variant's nodes in order and keeps, for every graph
 * value, a view: (buffer, element offset, shape, strides, dtype).  View-like
 * ops only rewrite views; compute ops append steps (kernel launches) whose
 * parameter blocks (gpu/oplib/oplib.h) are filled at plan time, with device
 * pointers patched in at run time from (buffer, byte offset) pairs.  Buffers
 * are the caller's inputs and outputs and scratch buffers; scratch buffers are
 * packed into one arena by their lifetimes (first and last step touching
 * them), so memory is reused as PyTorch's caching allocator would. */
#define _GNU_SOURCE
#include "eager.h"

#include <dirent.h>
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "blas.h"
#include "datadir.h"
#include "dnn.h"
#include "hostcc.h"
#include "oplib/oplib.h"
#include "sha256.h"

#define MAXD GRAPH_MAX_DIMS
#define EW_BLOCK 256
#define MAX_FIX 6
#define ARENA_ALIGN 256
#define CACHE_MAX_AGE_S (30 * 24 * 3600)

/* BK_CONST: a constant the plan owns (a vector of ones of dtype `ext`, for
 * cuBLAS bias prefills), in the arena for the plan's whole life, uploaded
 * once when the arena is allocated. */
enum { BK_INPUT, BK_OUTPUT, BK_SCRATCH, BK_CONST };

/* What a step does: a launch of an op-library kernel, or a library call. */
enum { STEP_KERNEL, STEP_BLAS_GEMM, STEP_DNN_CONV };

struct buf {
	int kind, ext;          /* ext: the input or output index */
	size_t bytes;
	int first, last;        /* steps that touch it (-1: none yet) */
	size_t off;             /* in the arena */
};

struct view {
	int buf;
	int64_t off;            /* elements */
	int ndim;
	int64_t shape[MAXD], stride[MAXD];
	enum graph_dtype dt;
};

union params {
	opl_ew ew;
	opl_softmax sm;
	opl_layer_norm ln;
	opl_batch_norm bn;
	opl_reduce rd;
	opl_gemm gm;
	opl_conv cv;
	opl_pool pl;
	opl_avg_pool ap;
	opl_upsample up;
	struct blas_gemm bg;
	struct dnn_conv dc;
};

struct fix {
	size_t field;           /* byte offset of a pointer inside the params */
	int buf;
	int64_t byte_off;
};

struct step {
	int kind;               /* STEP_* */
	int kernel;             /* STEP_KERNEL: index into the module's names */
	int ws_buf;             /* STEP_DNN_CONV: the workspace buffer */
	pf_dim3 grid, block;
	size_t psize;
	union params p;
	int nfix;
	struct fix fix[MAX_FIX];
};

/* A launch trampoline of a host-compiled module (gpu/hostcc.h). */
typedef int (*tramp_fn)(pf_call *c, pf_dim3 g, pf_dim3 b, size_t smem, void **args, int nargs);

/* A compiled op library shared by the plans of one eager_prepare_task: a
 * gpu_module, or on the cpu backend the shared object itself (see
 * "the op library" below for why). */
struct shared_mod {
	struct gpu_module *mod;
	void *handle;
	int refs;
	int from_cache;
	double compile_ms;
	struct blas_handle *blas;       /* cuBLAS handle of these plans (cuda backend) */
	struct dnn_handle *dnn;         /* cuDNN handle */
};

struct eager_plan {
	struct gpu_dev *dev;
	int is_cpu;             /* launch geometry for the cpu backend (see spread()) */
	char *variant;
	int n_inputs, n_outputs;
	size_t *out_bytes;
	int nbufs, capbufs;
	struct buf *bufs;
	int nsteps, capsteps;
	struct step *steps;
	int nnames, capnames;
	char **names;
	struct shared_mod *mod;
	struct gpu_kernel **kernels;    /* per name (gpu_module) */
	tramp_fn *tramps;               /* per name (cpu shared object) */
	void *arena;
	size_t arena_bytes;
	int use_blas;                   /* plan GEMMs as cuBLAS calls where they fit */
	int use_dnn;                    /* plan conv2d as cuDNN calls where they fit */
	int n_blas, n_dnn;              /* steps that are cuBLAS / cuDNN calls */
	int ones_buf[3];                /* BK_CONST ones per dtype (f32, f16, bf16), -1: none */
	char libs[96];                  /* eager_libraries() */
	char note[600];                 /* eager_library_note() */
};

/* ---- small helpers ------------------------------------------------------- */

static const char *tname(enum graph_dtype dt)
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

static int64_t vnumel(const struct view *v)
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

static int64_t pow2_at_least(int64_t n, int64_t lo, int64_t hi)
{
	int64_t t = lo;
	while (t < hi && t < n)
		t *= 2;
	return t;
}

static unsigned grid_for(int64_t work, int64_t per_block, int64_t cap)
{
	int64_t g = (work + per_block - 1) / per_block;
	if (g < 1)
		g = 1;
	if (g > cap)
		g = cap;
	return (unsigned)g;
}

/* ---- plan building --------------------------------------------------------- */

struct build {
	struct eager_plan *p;
	const struct graph_variant *v;
	const struct graph_node *n;
	struct view *vals;
	char *err;
	size_t errlen;
};

static int berr(struct build *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int berr(struct build *b, const char *fmt, ...)
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

static int oom(struct build *b)
{
	return berr(b, "out of memory");
}

static int new_buf(struct build *b, int kind, int ext, size_t bytes)
{
	struct eager_plan *p = b->p;
	if (p->nbufs == p->capbufs) {
		int cap = p->capbufs ? p->capbufs * 2 : 32;
		struct buf *nb = realloc(p->bufs, sizeof(*nb) * (size_t)cap);
		if (nb == NULL)
			return oom(b);
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
static int new_tensor(struct build *b, enum graph_dtype dt, int ndim, const int64_t *shape, struct view *out)
{
	memset(out, 0, sizeof(*out));
	out->ndim = ndim;
	out->dt = dt;
	for (int i = 0; i < ndim; i++)
		out->shape[i] = shape[i];
	contig_strides(ndim, out->shape, out->stride);
	int k = new_buf(b, BK_SCRATCH, -1, (size_t)vnumel(out) * graph_dtype_size(dt));
	if (k < 0)
		return -1;
	out->buf = k;
	return 0;
}

static int new_tensor_like(struct build *b, const struct graph_value *gv, struct view *out)
{
	return new_tensor(b, gv->dtype, gv->shape.ndim, gv->shape.d, out);
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
			return oom(b);
		p->names = nn;
		p->capnames = cap;
	}
	if ((p->names[p->nnames] = strdup(name)) == NULL)
		return oom(b);
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
			oom(b);
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

static int add_step(struct build *b, const char *name, pf_dim3 grid, pf_dim3 block, const void *params,
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
static void step_ptr(struct build *b, int si, size_t field, const struct view *v)
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
 * launches (step_ptr). */
static int add_lib_step(struct build *b, int kind, const void *params, size_t psize)
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
static void spread(struct build *b, int64_t total, unsigned block, pf_dim3 *grid, long long *per)
{
	int64_t p = 1;
	if (b->p->is_cpu) {
		p = total / ((int64_t)block * 64);
		p = p < 1 ? 1 : p > 4096 ? 4096 : p;
	}
	*per = p;
	*grid = (pf_dim3){grid_for(total, (int64_t)block * p, 1 << 22), 1, 1};
}

/* Row ops (softmax, layer_norm, reductions): a thread per row on the cpu
 * backend (no barriers, so no fibers) and for short rows on a GPU; else a
 * block per row. */
static int use_thread_rows(struct build *b, int64_t n)
{
	return b->p->is_cpu || n <= 32;
}

/* ---- elementwise emission ---------------------------------------------------- */

struct ew_opnd {
	const struct view *v;   /* NULL: scalar */
	double scalar;
	enum graph_dtype dt;    /* of the tensor (ignored for scalars) */
};

enum { EW_UNARY = 1, EW_BINARY = 2, EW_WHERE = 3 };

/* Strides of v broadcast to the nd-dim shape `shape` (right-aligned, size-1
 * dims broadcast with stride 0). */
static int bcast_strides(struct build *b, const struct view *v, int nd, const int64_t *shape, int64_t *st)
{
	for (int d = 0; d < nd; d++) {
		int sd = d - (nd - v->ndim);
		if (sd < 0 || v->shape[sd] == 1)
			st[d] = 0;
		else if (v->shape[sd] == shape[d])
			st[d] = v->stride[sd];
		else
			return berr(b, "internal: operand dim %d (%lld) does not broadcast to %lld", sd,
				    (long long)v->shape[sd], (long long)shape[d]);
	}
	return 0;
}

static int emit_ew(struct build *b, int family, int op, const struct view *out, const struct ew_opnd *in, int nin,
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
		} else if (bcast_strides(b, in[k].v, nd, out->shape, st[k + 1])) {
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
	e.n = vnumel(out);
	e.alpha = alpha;
	if (e.n == 0)
		return 0;
	char name[160];
	const char *to = tname(out->dt);
	const char *ta = in[0].v ? tname(in[0].dt) : to;
	if (family == EW_UNARY) {
		snprintf(name, sizeof(name), "ew_unary<%d, %s, %s>", op, to, ta);
	} else if (family == EW_BINARY) {
		const char *tb = in[1].v ? tname(in[1].dt) : to;
		snprintf(name, sizeof(name), "ew_binary<%d, %s, %s, %s>", op, to, ta, tb);
	} else {
		const char *tx = in[1].v ? tname(in[1].dt) : to, *ty = in[2].v ? tname(in[2].dt) : to;
		snprintf(name, sizeof(name), "ew_where<%s, %s, %s>", to, tx, ty);
	}
	pf_dim3 grid;
	spread(b, e.n, EW_BLOCK, &grid, &e.per);
	int si = add_step(b, name, grid, (pf_dim3){EW_BLOCK, 1, 1}, &e, sizeof(e));
	if (si < 0)
		return -1;
	step_ptr(b, si, offsetof(opl_ew, out), out);
	for (int k = 0; k < nin; k++)
		step_ptr(b, si, offsetof(opl_ew, in) + sizeof(void *) * (size_t)k, in[k].v);
	return 0;
}

/* dst (a view) = src converted to dst's dtype. */
static int emit_copy(struct build *b, const struct view *dst, const struct view *src)
{
	struct ew_opnd o = {src, 0, src->dt};
	return emit_ew(b, EW_UNARY, OPL_COPY, dst, &o, 1, 1.0);
}

static int emit_fill(struct build *b, const struct view *dst, double value)
{
	struct ew_opnd o = {NULL, value, dst->dt};
	return emit_ew(b, EW_UNARY, OPL_COPY, dst, &o, 1, 1.0);
}

/* *out = in if it is contiguous (and of dtype dt, DT_INVALID: any), else a
 * contiguous copy. */
static int materialise(struct build *b, const struct view *in, enum graph_dtype dt, struct view *out)
{
	if (dt == DT_INVALID)
		dt = in->dt;
	if (is_contig(in) && in->dt == dt) {
		*out = *in;
		return 0;
	}
	if (new_tensor(b, dt, in->ndim, in->shape, out))
		return -1;
	return emit_copy(b, out, in);
}

/* ---- views ---------------------------------------------------------------------- */

/* PyTorch's computeStride: strides for viewing `in` as shape (ndim, shape)
 * without a copy; 0 when that is impossible. */
static int view_strides(const struct view *in, int ndim, const int64_t *shape, int64_t *st)
{
	int64_t numel = vnumel(in);
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

static int reshape_view(struct build *b, const struct view *in, int ndim, const int64_t *shape, struct view *out)
{
	int64_t st[MAXD];
	struct view src = *in;
	if (!view_strides(in, ndim, shape, st)) {
		if (materialise(b, in, DT_INVALID, &src))
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

static int64_t jint(json_t *attrs, const char *k)
{
	return json_integer_value(json_object_get(attrs, k));
}

static int jints(json_t *attrs, const char *k, int64_t *out, int max)
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

static double jnum(json_t *attrs, const char *k, double dflt)
{
	json_t *j = json_object_get(attrs, k);
	return json_is_number(j) ? json_number_value(j) : dflt;
}

static int do_getitem(struct build *b, const struct view *in, json_t *index, struct view *out)
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
				return berr(b, "internal: index has more items than dims");
			r.off += json_integer_value(e) * in->stride[d++];
		} else if (json_is_array(e)) {
			if (d >= in->ndim)
				return berr(b, "internal: index has more items than dims");
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
			return berr(b, "internal: index item %zu is not normalised", i);
		}
	}
	while (d < in->ndim) {          /* not expected after normalisation */
		r.shape[r.ndim] = in->shape[d];
		r.stride[r.ndim++] = in->stride[d++];
	}
	*out = r;
	return 0;
}

/* ---- op helpers --------------------------------------------------------------- */

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

static int op_unary(struct build *b, int opcode)
{
	struct view *out = result_view(b, 0);
	if (new_tensor_like(b, result_value(b, 0), out))
		return -1;
	struct ew_opnd in = ew_operand(b, 0);
	return emit_ew(b, EW_UNARY, opcode, out, &in, 1, 1.0);
}

static int op_binary(struct build *b, int opcode)
{
	struct view *out = result_view(b, 0);
	double alpha = jnum(b->n->attrs, "alpha", 1.0);
	struct ew_opnd in[2] = {ew_operand(b, 0), ew_operand(b, 1)};
	if (new_tensor_like(b, result_value(b, 0), out))
		return -1;
	return emit_ew(b, EW_BINARY, opcode, out, in, 2, alpha);
}

static int op_where(struct build *b)
{
	struct view *out = result_view(b, 0);
	struct ew_opnd in[3] = {ew_operand(b, 0), ew_operand(b, 1), ew_operand(b, 2)};
	if (new_tensor_like(b, result_value(b, 0), out))
		return -1;
	return emit_ew(b, EW_WHERE, 0, out, in, 3, 1.0);
}

static int op_prelu(struct build *b)
{
	const struct view *x = opnd_view(b, 0), *w = opnd_view(b, 1);
	struct view *out = result_view(b, 0), wv;
	if (new_tensor_like(b, result_value(b, 0), out))
		return -1;
	/* The weight broadcast along dim 1 (one value: everywhere). */
	wv = *w;
	wv.ndim = x->ndim;
	int64_t wn = vnumel(w), wst = w->ndim ? w->stride[0] : 0;
	for (int d = 0; d < x->ndim; d++) {
		wv.shape[d] = 1;
		wv.stride[d] = 0;
	}
	if (wn != 1 && x->ndim >= 2) {
		wv.shape[1] = wn;
		wv.stride[1] = wst;
	}
	struct ew_opnd in[2] = {{x, 0, x->dt}, {&wv, 0, w->dt}};
	return emit_ew(b, EW_BINARY, OPL_PRELU, out, in, 2, 1.0);
}

static int op_to(struct build *b)
{
	struct view *out = result_view(b, 0);
	const struct view *x = opnd_view(b, 0);
	if (new_tensor_like(b, result_value(b, 0), out))
		return -1;
	return emit_copy(b, out, x);
}

static unsigned row_block(struct build *b, int64_t n)
{
	return (unsigned)pow2_at_least(n, 32, b->p->is_cpu ? 32 : 256);
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
	if (use_thread_rows(b, n)) {
		unsigned bl = b->p->is_cpu ? 32 : 128;
		snprintf(name, sizeof(name), "softmax_thread<%s, %s>", tname(x->dt), tname(out->dt));
		si = add_step(b, name, (pf_dim3){grid_for(s.rows, bl, 1 << 20), 1, 1}, (pf_dim3){bl, 1, 1}, &s,
			      sizeof(s));
	} else {
		snprintf(name, sizeof(name), "softmax_block<%s, %s>", tname(x->dt), tname(out->dt));
		si = add_step(b, name, (pf_dim3){grid_for(s.rows, 1, 1 << 20), 1, 1},
			      (pf_dim3){row_block(b, n), 1, 1}, &s, sizeof(s));
	}
	if (si < 0)
		return -1;
	step_ptr(b, si, offsetof(opl_softmax, out), out);
	step_ptr(b, si, offsetof(opl_softmax, in), x);
	return 0;
}

static int op_softmax(struct build *b)
{
	struct view x, *out = result_view(b, 0);
	int64_t dim = jint(b->n->attrs, "dim");
	if (materialise(b, opnd_view(b, 0), DT_INVALID, &x) || new_tensor_like(b, result_value(b, 0), out))
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

static int op_layer_norm(struct build *b)
{
	struct view x, w, bias, *out = result_view(b, 0);
	const struct view *wv = opnd_view(b, 1), *bv = opnd_view(b, 2);
	int64_t ns[MAXD];
	int cnt = jints(b->n->attrs, "normalized_shape", ns, MAXD);
	if (materialise(b, opnd_view(b, 0), DT_INVALID, &x) || new_tensor_like(b, result_value(b, 0), out))
		return -1;
	enum graph_dtype tw = wv ? wv->dt : bv ? bv->dt : x.dt;
	if (wv && materialise(b, wv, tw, &w))
		return -1;
	if (bv && materialise(b, bv, tw, &bias))
		return -1;
	opl_layer_norm l = {0};
	l.m = 1;
	for (int i = 0; i < cnt; i++)
		l.m *= ns[i];
	l.rows = l.m ? vnumel(&x) / l.m : 0;
	l.eps = jnum(b->n->attrs, "eps", 1e-5);
	if (l.rows == 0)
		return 0;
	char name[128];
	int si;
	if (use_thread_rows(b, l.m)) {
		unsigned bl = b->p->is_cpu ? 32 : 128;
		snprintf(name, sizeof(name), "layer_norm_thread<%s, %s>", tname(x.dt), tname(tw));
		si = add_step(b, name, (pf_dim3){grid_for(l.rows, bl, 1 << 20), 1, 1}, (pf_dim3){bl, 1, 1}, &l,
			      sizeof(l));
	} else {
		snprintf(name, sizeof(name), "layer_norm<%s, %s>", tname(x.dt), tname(tw));
		si = add_step(b, name, (pf_dim3){grid_for(l.rows, 1, 1 << 20), 1, 1},
			      (pf_dim3){row_block(b, l.m), 1, 1}, &l, sizeof(l));
	}
	if (si < 0)
		return -1;
	step_ptr(b, si, offsetof(opl_layer_norm, out), out);
	step_ptr(b, si, offsetof(opl_layer_norm, in), &x);
	step_ptr(b, si, offsetof(opl_layer_norm, w), wv ? &w : NULL);
	step_ptr(b, si, offsetof(opl_layer_norm, b), bv ? &bias : NULL);
	return 0;
}

static int op_batch_norm(struct build *b)
{
	struct view x, prm[4], *out = result_view(b, 0);
	const struct view *pv[4];
	if (materialise(b, opnd_view(b, 0), DT_INVALID, &x) || new_tensor_like(b, result_value(b, 0), out))
		return -1;
	for (int i = 0; i < 4; i++)
		pv[i] = opnd_view(b, i + 1);
	enum graph_dtype tp = pv[0]->dt;
	for (int i = 0; i < 4; i++)
		if (pv[i] && materialise(b, pv[i], tp, &prm[i]))
			return -1;
	opl_batch_norm bn = {0};
	bn.n = x.shape[0];
	bn.c = x.shape[1];
	bn.inner = 1;
	for (int d = 2; d < x.ndim; d++)
		bn.inner *= x.shape[d];
	bn.eps = jnum(b->n->attrs, "eps", 1e-5);
	int64_t total = bn.n * bn.c * bn.inner;
	if (total == 0)
		return 0;
	char name[128];
	snprintf(name, sizeof(name), "batch_norm_eval<%s, %s>", tname(x.dt), tname(tp));
	pf_dim3 grid;
	spread(b, total, EW_BLOCK, &grid, &bn.per);
	int si = add_step(b, name, grid, (pf_dim3){EW_BLOCK, 1, 1}, &bn, sizeof(bn));
	if (si < 0)
		return -1;
	step_ptr(b, si, offsetof(opl_batch_norm, out), out);
	step_ptr(b, si, offsetof(opl_batch_norm, in), &x);
	step_ptr(b, si, offsetof(opl_batch_norm, mean), &prm[0]);
	step_ptr(b, si, offsetof(opl_batch_norm, var), &prm[1]);
	step_ptr(b, si, offsetof(opl_batch_norm, w), pv[2] ? &prm[2] : NULL);
	step_ptr(b, si, offsetof(opl_batch_norm, b), pv[3] ? &prm[3] : NULL);
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

static int op_reduce(struct build *b, int mean)
{
	const struct view *x = opnd_view(b, 0);
	struct view *out = result_view(b, 0);
	int red[MAXD] = {0};
	json_t *dim = json_object_get(b->n->attrs, "dim");
	if (new_tensor_like(b, result_value(b, 0), out))
		return -1;
	if (json_is_null(dim) || dim == NULL) {
		for (int d = 0; d < x->ndim; d++)
			red[d] = 1;
	} else {
		int64_t dims[MAXD];
		int cnt = jints(b->n->attrs, "dim", dims, MAXD);
		for (int i = 0; i < cnt; i++)
			if (dims[i] >= 0 && dims[i] < x->ndim)
				red[dims[i]] = 1;
	}
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
	r.nout = vnumel(out);
	r.ondim = coalesce(r.ondim, r.oshape, r.ostride);
	r.rndim = coalesce(r.rndim, r.rshape, r.rstride);
	r.scale = mean ? 1.0 / (double)r.nred : 1.0;
	if (r.nout == 0)
		return 0;
	if (r.nred == 0)                /* sum of nothing: 0; mean: NaN */
		return emit_fill(b, out, mean ? NAN : 0.0);
	char name[128];
	int si;
	/* A thread per output for short reductions, many outputs, and on the
	 * cpu backend; else a block per output. */
	if (use_thread_rows(b, r.nred) || r.nred <= 64 || (r.nout >= 16384 && r.nred <= 512)) {
		unsigned bl = b->p->is_cpu ? 32 : 128;
		snprintf(name, sizeof(name), "reduce_thread<%s, %s>", tname(x->dt), tname(out->dt));
		si = add_step(b, name, (pf_dim3){grid_for(r.nout, bl, 1 << 20), 1, 1}, (pf_dim3){bl, 1, 1}, &r,
			      sizeof(r));
	} else {
		snprintf(name, sizeof(name), "reduce_block<%s, %s>", tname(x->dt), tname(out->dt));
		si = add_step(b, name, (pf_dim3){grid_for(r.nout, 1, 1 << 20), 1, 1},
			      (pf_dim3){row_block(b, r.nred), 1, 1}, &r, sizeof(r));
	}
	if (si < 0)
		return -1;
	step_ptr(b, si, offsetof(opl_reduce, out), out);
	step_ptr(b, si, offsetof(opl_reduce, in), x);
	return 0;
}

/* ---- GEMM ------------------------------------------------------------------------- */

struct gemm_desc {
	const struct view *a, *b, *c, *bias;
	int64_t m, n, k, sam, sak, sbk, sbn, sbias_m, sbias_n;
	int nb;
	int64_t bshape[MAXD], sab[MAXD], sbb[MAXD];
	double alpha;
};

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
		int k = new_buf(b, BK_CONST, (int)dt, bytes);
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
		int si = add_lib_step(b, STEP_BLAS_GEMM, &pre, sizeof(pre));
		if (si < 0)
			return -1;
		step_ptr(b, si, offsetof(struct blas_gemm, a), pa);
		step_ptr(b, si, offsetof(struct blas_gemm, b), pb);
		step_ptr(b, si, offsetof(struct blas_gemm, c), g->c);
	}
	int si = add_lib_step(b, STEP_BLAS_GEMM, &prod, sizeof(prod));
	if (si < 0)
		return -1;
	step_ptr(b, si, offsetof(struct blas_gemm, a), g->a);
	step_ptr(b, si, offsetof(struct blas_gemm, b), g->b);
	step_ptr(b, si, offsetof(struct blas_gemm, c), g->c);
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
				return berr(b, "more than %d batch dims that cannot be merged", OPL_GEMM_BATCH_DIMS);
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
		grid = (pf_dim3){grid_for(tiles, 64, INT32_MAX), 1, grid_for(p.batch, 1, 65535)};
		snprintf(name, sizeof(name), "gemm_thread<%s, %s, %s>", tname(g->a->dt), tname(g->b->dt),
			 tname(g->c->dt));
	} else {
		grid = (pf_dim3){grid_for(p.n, 64, INT32_MAX), grid_for(p.m, 64, 65535), grid_for(p.batch, 1, 65535)};
		snprintf(name, sizeof(name), "gemm<%s, %s, %s>", tname(g->a->dt), tname(g->b->dt), tname(g->c->dt));
	}
	int si = add_step(b, name, grid, block, &p, sizeof(p));
	if (si < 0)
		return -1;
	step_ptr(b, si, offsetof(opl_gemm, c), g->c);
	step_ptr(b, si, offsetof(opl_gemm, a), g->a);
	step_ptr(b, si, offsetof(opl_gemm, b), g->b);
	step_ptr(b, si, offsetof(opl_gemm, bias), g->bias);
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
		return emit_fill(b, out, 0.0);
	return emit_gemm(b, &g);
}

static int op_matmul(struct build *b)
{
	struct view *out = result_view(b, 0);
	const struct graph_value *gv = result_value(b, 0);
	if (new_tensor_like(b, gv, out))
		return -1;
	return plan_matmul(b, opnd_view(b, 0), opnd_view(b, 1), out, gv, 1.0);
}

/* baddbmm: the GEMM with alpha, then out += beta * input (broadcast) in the
 * result's compute type.  beta = 0 skips the input altogether, so NaN and
 * Inf in it do not reach the result (PyTorch's rule).  Returns 0 or -1. */
static int op_baddbmm(struct build *b)
{
	struct view *out = result_view(b, 0);
	const struct graph_value *gv = result_value(b, 0);
	double beta = jnum(b->n->attrs, "beta", 1.0), alpha = jnum(b->n->attrs, "alpha", 1.0);
	if (new_tensor_like(b, gv, out) || plan_matmul(b, opnd_view(b, 1), opnd_view(b, 2), out, gv, alpha))
		return -1;
	if (beta == 0.0)
		return 0;
	struct ew_opnd in[2] = {{out, 0, out->dt}, ew_operand(b, 0)};
	return emit_ew(b, EW_BINARY, OPL_ADD, out, in, 2, beta);
}

/* arange: out[i] = start + i * step, computed in double (PyTorch's CPU
 * accumulation type for float and int64) and converted once.  Integer
 * results take start and step converted to the integer type first, as
 * PyTorch's integer kernels do.  Returns 0 or -1. */
static int op_arange(struct build *b)
{
	struct view *out = result_view(b, 0);
	if (new_tensor_like(b, result_value(b, 0), out))
		return -1;
	opl_ew e;
	memset(&e, 0, sizeof(e));
	double start = jnum(b->n->attrs, "start", 0.0), step = jnum(b->n->attrs, "step", 1.0);
	if (!graph_dtype_is_float(out->dt)) {
		start = trunc(start);
		step = trunc(step);
	}
	e.n = vnumel(out);
	e.ndim = 1;
	e.shape[0] = e.n;
	e.ostride[0] = 1;
	e.scalar[0] = start;
	e.scalar[1] = step;
	if (e.n == 0)
		return 0;
	char name[64];
	snprintf(name, sizeof(name), "ew_arange<%s>", tname(out->dt));
	pf_dim3 grid;
	spread(b, e.n, EW_BLOCK, &grid, &e.per);
	int si = add_step(b, name, grid, (pf_dim3){EW_BLOCK, 1, 1}, &e, sizeof(e));
	if (si < 0)
		return -1;
	step_ptr(b, si, offsetof(opl_ew, out), out);
	return 0;
}

/* leaky_relu is prelu's formula with the slope as a Python scalar operand.
 * Returns 0 or -1 with the error set. */
static int op_leaky_relu(struct build *b)
{
	struct view *out = result_view(b, 0);
	struct ew_opnd in[2] = {ew_operand(b, 0), {NULL, jnum(b->n->attrs, "negative_slope", 0.01), DT_INVALID}};
	if (new_tensor_like(b, result_value(b, 0), out))
		return -1;
	return emit_ew(b, EW_BINARY, OPL_PRELU, out, in, 2, 1.0);
}

static int op_linear(struct build *b)
{
	const struct view *x = opnd_view(b, 0), *w = opnd_view(b, 1), *bias = opnd_view(b, 2);
	struct view *out = result_view(b, 0), x2, bias_c;
	const struct graph_value *gv = result_value(b, 0);
	if (new_tensor_like(b, gv, out))
		return -1;
	int64_t k = x->shape[x->ndim - 1], rows = k ? vnumel(x) / k : 0;
	int64_t shp2[2] = {rows, k};
	if (reshape_view(b, x, 2, shp2, &x2))
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
		if (simple && bcast_strides(b, bias, out->ndim, out->shape, st))
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
		if (emit_fill(b, out, 0.0))
			return -1;
		separate_bias = bias != NULL;
	} else if (emit_gemm(b, &g)) {
		return -1;
	}
	if (separate_bias) {
		struct ew_opnd in[2] = {{out, 0, out->dt}, {bias, 0, bias->dt}};
		return emit_ew(b, EW_BINARY, OPL_ADD, out, in, 2, 1.0);
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
	if (materialise(b, x, DT_INVALID, &xc))
		return -1;
	memset(&wsv, 0, sizeof(wsv));
	wsv.dt = DT_F32;
	if ((wsv.buf = new_buf(b, BK_SCRATCH, -1, 0)) < 0)
		return -1;
	int si = add_lib_step(b, STEP_DNN_CONV, &dc, sizeof(dc));
	if (si < 0)
		return -1;
	b->p->steps[si].ws_buf = wsv.buf;
	step_ptr(b, si, offsetof(struct dnn_conv, x), &xc);
	step_ptr(b, si, offsetof(struct dnn_conv, w), w);
	step_ptr(b, si, offsetof(struct dnn_conv, bias), bias);
	step_ptr(b, si, offsetof(struct dnn_conv, y), out);
	step_ptr(b, si, offsetof(struct dnn_conv, ws), &wsv);
	return 1;
}

static int op_conv2d(struct build *b)
{
	const struct view *x = opnd_view(b, 0), *bv = opnd_view(b, 2);
	struct view w, bias, *out = result_view(b, 0);
	if (new_tensor_like(b, result_value(b, 0), out))
		return -1;
	if (materialise(b, opnd_view(b, 1), x->dt, &w))
		return -1;
	if (bv && materialise(b, bv, x->dt, &bias))
		return -1;
	int64_t st[2] = {1, 1}, pd[2] = {0, 0}, dl[2] = {1, 1};
	jints(b->n->attrs, "stride", st, 2);
	jints(b->n->attrs, "padding", pd, 2);
	jints(b->n->attrs, "dilation", dl, 2);
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
	c.groups = jint(b->n->attrs, "groups");
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
		pf_dim3 grid = {grid_for(tiles, 64, INT32_MAX), 1, grid_for(c.groups, 1, 65535)};
		snprintf(name, sizeof(name), "conv2d_thread<%s>", tname(x->dt));
		si = add_step(b, name, grid, (pf_dim3){64, 1, 1}, &c, sizeof(c));
	} else if (!b->p->is_cpu && cout_g >= 8 && kk >= 8) {
		snprintf(name, sizeof(name), "conv2d_gemm<%s>", tname(x->dt));
		pf_dim3 grid = {grid_for(c.n * c.oh * c.ow, 64, INT32_MAX), grid_for(cout_g, 64, 65535),
				grid_for(c.groups, 1, 65535)};
		si = add_step(b, name, grid, (pf_dim3){256, 1, 1}, &c, sizeof(c));
	} else {
		pf_dim3 grid;
		spread(b, total, 128, &grid, &c.per);
		snprintf(name, sizeof(name), "conv2d_direct<%s>", tname(x->dt));
		si = add_step(b, name, grid, (pf_dim3){128, 1, 1}, &c, sizeof(c));
	}
	if (si < 0)
		return -1;
	step_ptr(b, si, offsetof(opl_conv, out), out);
	step_ptr(b, si, offsetof(opl_conv, x), x);
	step_ptr(b, si, offsetof(opl_conv, w), &w);
	step_ptr(b, si, offsetof(opl_conv, bias), bv ? &bias : NULL);
	return 0;
}

static int op_aap2d(struct build *b)
{
	struct view x, *out = result_view(b, 0);
	if (materialise(b, opnd_view(b, 0), DT_INVALID, &x) || new_tensor_like(b, result_value(b, 0), out))
		return -1;
	opl_pool p = {0};
	p.h = x.shape[x.ndim - 2];
	p.w = x.shape[x.ndim - 1];
	p.oh = out->shape[out->ndim - 2];
	p.ow = out->shape[out->ndim - 1];
	p.nc = p.h * p.w != 0 ? vnumel(&x) / (p.h * p.w) : 0;
	int64_t total = vnumel(out);
	if (total == 0)
		return 0;
	if (p.h * p.w == 0)
		return emit_fill(b, out, NAN);
	char name[128];
	pf_dim3 grid;
	spread(b, total, 128, &grid, &p.per);
	snprintf(name, sizeof(name), "adaptive_avg_pool2d<%s>", tname(x.dt));
	int si = add_step(b, name, grid, (pf_dim3){128, 1, 1}, &p, sizeof(p));
	if (si < 0)
		return -1;
	step_ptr(b, si, offsetof(opl_pool, out), out);
	step_ptr(b, si, offsetof(opl_pool, in), &x);
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

static int op_interpolate(struct build *b)
{
	struct view x, *out = result_view(b, 0);
	if (materialise(b, opnd_view(b, 0), DT_INVALID, &x) || new_tensor_like(b, result_value(b, 0), out))
		return -1;
	json_t *attrs = b->n->attrs, *sf = json_object_get(attrs, "scale_factor");
	const char *mode = json_string_value(json_object_get(attrs, "mode"));
	int bilinear = mode && strcmp(mode, "bilinear") == 0;
	int align = json_is_true(json_object_get(attrs, "align_corners"));
	opl_upsample u = {0};
	u.nsp = x.ndim - 2;
	if (u.nsp < 1 || u.nsp > 3 || (bilinear && u.nsp != 2))
		return berr(b, "unsupported input rank %d", x.ndim);
	u.nc = x.shape[0] * x.shape[1];
	u.nout = vnumel(out);
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
	snprintf(name, sizeof(name), "%s<%s>", bilinear ? "upsample_bilinear" : "upsample_nearest", tname(x.dt));
	pf_dim3 grid;
	spread(b, u.nout, EW_BLOCK, &grid, &u.per);
	int si = add_step(b, name, grid, (pf_dim3){EW_BLOCK, 1, 1}, &u, sizeof(u));
	if (si < 0)
		return -1;
	step_ptr(b, si, offsetof(opl_upsample, out), out);
	step_ptr(b, si, offsetof(opl_upsample, in), &x);
	return 0;
}

/* ---- attention -------------------------------------------------------------------------- */

static int op_sdpa(struct build *b)
{
	const struct view *q = opnd_view(b, 0), *k = opnd_view(b, 1), *v = opnd_view(b, 2), *mask = opnd_view(b, 3);
	struct view *out = result_view(b, 0), scores;
	const struct graph_value *gv = result_value(b, 0);
	json_t *attrs = b->n->attrs;
	if (new_tensor_like(b, gv, out))
		return -1;
	int nb = gv->shape.ndim - 2;
	int64_t L = q->shape[q->ndim - 2], E = q->shape[q->ndim - 1], S = k->shape[k->ndim - 2];
	int64_t sshape[MAXD];
	for (int d = 0; d < nb; d++)
		sshape[d] = gv->shape.d[d];
	sshape[nb] = L;
	sshape[nb + 1] = S;
	if (new_tensor(b, q->dt == DT_F64 ? DT_F64 : DT_F32, nb + 2, sshape, &scores))
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
	if (E == 0 ? emit_fill(b, &scores, 0.0) : emit_gemm(b, &g))
		return -1;

	/* the mask: bool (false = -inf) or added */
	if (mask) {
		struct ew_opnd in[3];
		if (mask->dt == DT_BOOL) {
			in[0] = (struct ew_opnd){mask, 0, DT_BOOL};
			in[1] = (struct ew_opnd){&scores, 0, scores.dt};
			in[2] = (struct ew_opnd){NULL, -INFINITY, scores.dt};
			if (emit_ew(b, EW_WHERE, 0, &scores, in, 3, 1.0))
				return -1;
		} else {
			in[0] = (struct ew_opnd){&scores, 0, scores.dt};
			in[1] = (struct ew_opnd){mask, 0, mask->dt};
			if (emit_ew(b, EW_BINARY, OPL_ADD, &scores, in, 2, 1.0))
				return -1;
		}
	}
	int causal = json_is_true(json_object_get(attrs, "is_causal"));
	int64_t rows = vnumel(&scores) / (S ? S : 1);
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
		return emit_fill(b, out, 0.0);
	return emit_gemm(b, &h);
}

/* ---- data movement ------------------------------------------------------------------------ */

static int op_cat(struct build *b)
{
	struct view *out = result_view(b, 0);
	int64_t dim = jint(b->n->attrs, "dim"), at = 0;
	if (new_tensor_like(b, result_value(b, 0), out))
		return -1;
	for (int i = 0; i < b->n->n_operands; i++) {
		const struct view *x = opnd_view(b, i);
		struct view dst = *out;
		dst.shape[dim] = x->shape[dim];
		dst.off = out->off + at * out->stride[dim];
		at += x->shape[dim];
		if (emit_copy(b, &dst, x))
			return -1;
	}
	return 0;
}

static int op_pad(struct build *b)
{
	const struct view *x = opnd_view(b, 0);
	struct view *out = result_view(b, 0);
	int64_t pads[2 * MAXD];
	int cnt = jints(b->n->attrs, "pad", pads, 2 * MAXD);
	json_t *val = json_object_get(b->n->attrs, "value");
	double value = json_is_number(val) ? json_number_value(val) : 0.0;
	if (new_tensor_like(b, result_value(b, 0), out))
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
	if (grows && emit_fill(b, out, value))
		return -1;
	return emit_copy(b, &dst, &src);
}

/* The view ops: metadata only, no launch. */
static int view_same(struct build *b)
{
	*result_view(b, 0) = *opnd_view(b, 0);
	return 0;
}

static int view_transpose(struct build *b)
{
	const struct view *x = opnd_view(b, 0);
	struct view *r = result_view(b, 0);
	*r = *x;
	if (x->ndim > 0) {
		int64_t a = jint(b->n->attrs, "dim0"), c = jint(b->n->attrs, "dim1");
		r->shape[a] = x->shape[c];
		r->stride[a] = x->stride[c];
		r->shape[c] = x->shape[a];
		r->stride[c] = x->stride[a];
	}
	return 0;
}

static int view_permute(struct build *b)
{
	const struct view *x = opnd_view(b, 0);
	struct view *r = result_view(b, 0);
	int64_t dims[MAXD];
	int cnt = jints(b->n->attrs, "dims", dims, MAXD);
	*r = *x;
	for (int i = 0; i < cnt; i++) {
		r->shape[i] = x->shape[dims[i]];
		r->stride[i] = x->stride[dims[i]];
	}
	return 0;
}

static int view_expand(struct build *b)
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

static int view_reshape(struct build *b)
{
	const struct graph_value *gv = result_value(b, 0);
	return reshape_view(b, opnd_view(b, 0), gv->shape.ndim, gv->shape.d, result_view(b, 0));
}

static int view_getitem(struct build *b)
{
	const struct graph_node *n = b->n;
	json_t *idx = json_object_get(n->attrs, "index");
	if (n->operands[0].kind == OPND_TUPLE) {
		const struct graph_node *src = &b->v->nodes[n->operands[0].node];
		int64_t k = json_integer_value(json_array_get(idx, 0));
		*result_view(b, 0) = b->vals[src->first_value + k];
		return 0;
	}
	return do_getitem(b, opnd_view(b, 0), idx, result_view(b, 0));
}

/* split, chunk */
static int view_split(struct build *b)
{
	const struct view *x = opnd_view(b, 0);
	int64_t dim = jint(b->n->attrs, "dim"), at = 0;
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

static int view_tensor_split(struct build *b)
{
	const struct view *x = opnd_view(b, 0);
	int64_t dim = jint(b->n->attrs, "dim");
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

static int view_unbind(struct build *b)
{
	const struct view *x = opnd_view(b, 0);
	int64_t dim = jint(b->n->attrs, "dim");
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

static int op_gelu(struct build *b)
{
	const char *a = json_string_value(json_object_get(b->n->attrs, "approximate"));
	return op_unary(b, a && strcmp(a, "tanh") == 0 ? OPL_GELU_TANH : OPL_GELU);
}

/* avg_pool2d: pool.cu's kernel over a contiguous copy of the input. */
static int op_avg_pool2d(struct build *b)
{
	struct view x, *out = result_view(b, 0);
	json_t *a = b->n->attrs, *dv = json_object_get(a, "divisor_override");
	int64_t k[2], st[2], pd[2];
	if (materialise(b, opnd_view(b, 0), DT_INVALID, &x) || new_tensor_like(b, result_value(b, 0), out))
		return -1;
	jints(a, "kernel_size", k, 2);
	jints(a, "stride", st, 2);
	jints(a, "padding", pd, 2);
	opl_avg_pool p = {0};
	p.h = x.shape[x.ndim - 2];
	p.w = x.shape[x.ndim - 1];
	p.oh = out->shape[out->ndim - 2];
	p.ow = out->shape[out->ndim - 1];
	p.nc = vnumel(&x) / (p.h * p.w);        /* h, w > 0: the graph checks */
	p.kh = k[0], p.kw = k[1], p.sh = st[0], p.sw = st[1], p.ph = pd[0], p.pw = pd[1];
	p.divisor = json_is_integer(dv) ? json_integer_value(dv) : 0;
	p.count_include_pad = json_is_true(json_object_get(a, "count_include_pad"));
	int64_t total = vnumel(out);
	if (total == 0)
		return 0;
	char name[128];
	pf_dim3 grid;
	spread(b, total, 128, &grid, &p.per);
	snprintf(name, sizeof(name), "avg_pool2d<%s>", tname(x.dt));
	int si = add_step(b, name, grid, (pf_dim3){128, 1, 1}, &p, sizeof(p));
	if (si < 0)
		return -1;
	step_ptr(b, si, offsetof(opl_avg_pool, out), out);
	step_ptr(b, si, offsetof(opl_avg_pool, in), &x);
	return 0;
}

/* unfold: a view, as in PyTorch: the dim's stride times step, and a new last
 * dim of `size` with the dim's stride (windows may overlap). */
static int view_unfold(struct build *b)
{
	const struct view *x = opnd_view(b, 0);
	struct view *r = result_view(b, 0);
	const struct graph_value *gv = result_value(b, 0);
	int64_t d = jint(b->n->attrs, "dimension"), step = jint(b->n->attrs, "step");
	*r = *x;
	r->ndim = gv->shape.ndim;
	r->shape[d] = gv->shape.d[d];
	r->stride[d] = x->stride[d] * step;
	r->shape[r->ndim - 1] = gv->shape.d[r->ndim - 1];
	r->stride[r->ndim - 1] = x->stride[d];
	return 0;
}

/* ---- the walk ----------------------------------------------------------------------------- */

/* Each graph op's lowering, keyed by the op (engine/graph/graph_ops.c is the
 * hub; tests/unit/test_ops_table.c fails on an op without a row): fn(b), or
 * fn_arg(b, arg). */
struct lowering {
	int (*fn)(struct build *b);
	int (*fn_arg)(struct build *b, int arg);
	int arg;
};
#define L(f) {f, NULL, 0}
#define LA(f, a) {NULL, f, a}

static const struct lowering lowerings[OP_COUNT] = {
	[OP_ADD] = LA(op_binary, OPL_ADD),
	[OP_SUB] = LA(op_binary, OPL_SUB),
	[OP_MUL] = LA(op_binary, OPL_MUL),
	[OP_DIV] = LA(op_binary, OPL_DIV),
	[OP_POW] = LA(op_binary, OPL_POW),
	[OP_WHERE] = L(op_where),
	[OP_SIGMOID] = LA(op_unary, OPL_SIGMOID),
	[OP_RELU] = LA(op_unary, OPL_RELU),
	[OP_SILU] = LA(op_unary, OPL_SILU),
	[OP_TANH] = LA(op_unary, OPL_TANH),
	[OP_EXP] = LA(op_unary, OPL_EXP),
	[OP_RSQRT] = LA(op_unary, OPL_RSQRT),
	[OP_GELU] = L(op_gelu),
	[OP_PRELU] = L(op_prelu),
	[OP_TO] = L(op_to),
	[OP_SOFTMAX] = L(op_softmax),
	[OP_LAYER_NORM] = L(op_layer_norm),
	[OP_BATCH_NORM] = L(op_batch_norm),
	[OP_SUM] = LA(op_reduce, 0),
	[OP_MEAN] = LA(op_reduce, 1),
	[OP_LINEAR] = L(op_linear),
	[OP_MATMUL] = L(op_matmul),
	[OP_BMM] = L(op_matmul),
	[OP_CONV2D] = L(op_conv2d),
	[OP_BADDBMM] = L(op_baddbmm),
	[OP_ARANGE] = L(op_arange),
	[OP_LEAKY_RELU] = L(op_leaky_relu),
	[OP_ADAPTIVE_AVG_POOL2D] = L(op_aap2d),
	[OP_INTERPOLATE] = L(op_interpolate),
	[OP_SDPA] = L(op_sdpa),
	[OP_CAT] = L(op_cat),
	[OP_PAD] = L(op_pad),
	[OP_DROPOUT] = L(view_same),
	[OP_CONTIGUOUS] = L(view_same),
	[OP_TRANSPOSE] = L(view_transpose),
	[OP_PERMUTE] = L(view_permute),
	[OP_EXPAND] = L(view_expand),
	[OP_RESHAPE] = L(view_reshape),
	[OP_VIEW] = L(view_reshape),
	[OP_FLATTEN] = L(view_reshape),
	[OP_GETITEM] = L(view_getitem),
	[OP_SPLIT] = L(view_split),
	[OP_CHUNK] = L(view_split),
	[OP_TENSOR_SPLIT] = L(view_tensor_split),
	[OP_UNBIND] = L(view_unbind),
	[OP_AVG_POOL2D] = L(op_avg_pool2d),
	[OP_UNFOLD] = L(view_unfold),
};

int eager_op_lowered(enum graph_op op)
{
	return op >= 0 && op < OP_COUNT && (lowerings[op].fn || lowerings[op].fn_arg);
}

static int plan_node(struct build *b)
{
	enum graph_op op = b->n->op;
	if (!eager_op_lowered(op))
		return berr(b, "op not supported by the eager executor");
	const struct lowering *l = &lowerings[op];
	return l->fn ? l->fn(b) : l->fn_arg(b, l->arg);
}

/* Packs scratch buffers into one arena: biggest first, each at the lowest
 * aligned offset that overlaps no placed buffer alive at the same time. */
static size_t pack_arena(struct eager_plan *p)
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

static void plan_release(struct eager_plan *p)
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
	plan_release(p);
}

/* Plans v without compiling (nor laying out the arena: prepare_plans does,
 * once cuDNN's workspaces are known); use_blas / use_dnn: GEMMs /
 * convolutions that fit become cuBLAS / cuDNN calls. */
static struct eager_plan *plan_variant(struct gpu_dev *d, const struct graph_variant *v, int use_blas, int use_dnn,
				       char *err, size_t errlen)
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
	p->is_cpu = gpu_backend_of(d) == GPU_BACKEND_CPU && !(geo && strcmp(geo, "gpu") == 0);
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
		if ((x->buf = new_buf(&b, BK_INPUT, i, (size_t)graph_shape_numel(&gv->shape) * graph_dtype_size(gv->dtype))) < 0)
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
		if ((dst.buf = new_buf(&b, BK_OUTPUT, j, bytes)) < 0 || emit_copy(&b, &dst, src))
			goto fail;
	}
	free(b.vals);
	return p;
fail:
	free(b.vals);
	plan_release(p);
	return NULL;
}

/* ---- the op library: source and compile ------------------------------------------------ */

const char *eager_oplib_dir(void)
{
	const char *env = getenv("PASSFS_OPLIB_DIR");
	if (env && *env)
		return env;
	return datadir_get(DATADIR_OPLIB);
}

static int append(char **buf, size_t *len, size_t *cap, const char *s, size_t n)
{
	if (*len + n + 1 > *cap) {
		size_t c = *cap ? *cap : 65536;
		while (c < *len + n + 1)
			c *= 2;
		char *nb = realloc(*buf, c);
		if (nb == NULL)
			return -1;
		*buf = nb;
		*cap = c;
	}
	memcpy(*buf + *len, s, n);
	*len += n;
	(*buf)[*len] = 0;
	return 0;
}

/* The op library source: passfs.h, then each file of OPL_FILES under a
 * #line naming it.  malloc'd, or NULL with a message. */
static char *oplib_source(char *err, size_t errlen)
{
	static const char *files[] = {OPL_FILES};
	const char *dir = eager_oplib_dir();
	char *src = NULL, line[600];
	size_t len = 0, cap = 0;
	const char *head = "#include <passfs.h>\n";
	if (append(&src, &len, &cap, head, strlen(head)))
		goto oom;
	for (size_t i = 0; i < sizeof(files) / sizeof(files[0]); i++) {
		char path[4096];
		snprintf(path, sizeof(path), "%s/%s", dir, files[i]);
		FILE *f = fopen(path, "rb");
		if (f == NULL) {
			snprintf(err, errlen, "eager: cannot read the op library %s: %s", path, strerror(errno));
			free(src);
			return NULL;
		}
		int n = snprintf(line, sizeof(line), "#line 1 \"%s\"\n", files[i]);
		if (append(&src, &len, &cap, line, (size_t)n)) {
			fclose(f);
			goto oom;
		}
		char chunk[65536];
		size_t got;
		while ((got = fread(chunk, 1, sizeof(chunk), f)) > 0)
			if (append(&src, &len, &cap, chunk, got)) {
				fclose(f);
				goto oom;
			}
		fclose(f);
		if (append(&src, &len, &cap, "\n", 1))
			goto oom;
	}
	return src;
oom:
	free(src);
	snprintf(err, errlen, "eager: out of memory reading the op library");
	return NULL;
}

static double now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

static int cmp_name(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* ---- the op library on the cpu backend: compiled once, kept on disk ----------
 *
 * The cpu backend compiles a module with g++ (seconds for the op library);
 * the same source and kernel list give the same object, so eager keeps it
 * under $XDG_CACHE_HOME/passfs/oplib (else ~/.cache/passfs/oplib), named by
 * the SHA-256 of everything that determines it: the op library source, the
 * name expressions, the pass API headers the host compile includes
 * (passfs.h, passfs_abi.h, pf_emu.h), the compiler's --version line, and the
 * compile pipeline's flags and trampolines: gpu/hostcc.c's text when the
 * source tree is there, else the passfs binary's size and mtime.  A hit is
 * one dlopen.  Eager compiles through gpu/hostcc
 * and launches through the trampolines with gpu_run_blocks, which is what
 * the cpu backend's own gpu_module_compile / gpu_launch do, minus the NVRTC
 * gate and ELF check (this source is passfs's own).  PASSFS_CACHE_DIR=off
 * turns the disk cache off (a path moves it).  Entries unused for 30 days
 * are pruned.  (On the cuda backend gpu_module_compile has its own cache.) */

struct eager_call {
	pf_call call;
	struct gpu_dev *dev;
	int failed;
	char msg[512];
};

static int rt_fail(pf_call *c, int code, const char *msg)
{
	struct eager_call *ec = c->priv;
	if (!ec->failed) {
		ec->failed = 1;
		snprintf(ec->msg, sizeof(ec->msg), "%s", msg ? msg : "launch failed");
	}
	return code;
}

static int rt_run_blocks(pf_call *c, pf_dim3 grid, void (*fn)(void *ctx, pf_dim3 idx), void *ctx)
{
	struct eager_call *ec = c->priv;
	return gpu_run_blocks(ec->dev, grid, fn, ctx);
}

static const struct pf_runtime eager_runtime = {
	.abi_version = PF_ABI_VERSION,
	.fail = rt_fail,
	.run_blocks = rt_run_blocks,
};

static int append_file(char **buf, size_t *len, size_t *cap, const char *path)
{
	FILE *f = fopen(path, "rb");
	char chunk[65536];
	size_t got;
	if (f == NULL)
		return append(buf, len, cap, path, strlen(path));   /* absent: its name still counts */
	while ((got = fread(chunk, 1, sizeof(chunk), f)) > 0)
		if (append(buf, len, cap, chunk, got)) {
			fclose(f);
			return -1;
		}
	fclose(f);
	return 0;
}

/* The host compiler's identity: the first line of `$PASSFS_CXX --version`. */
static const char *compiler_id(void)
{
	static char id[256];
	static int done;
	if (!done) {
		const char *cxx = getenv("PASSFS_CXX");
		char cmd[600];
		snprintf(cmd, sizeof(cmd), "%s --version 2>/dev/null", cxx && *cxx ? cxx : "g++");
		FILE *f = popen(cmd, "r");
		if (f) {
			if (fgets(id, sizeof(id), f) == NULL)
				id[0] = 0;
			pclose(f);
		}
		done = 1;
	}
	return id;
}

static int cache_key(const char *src, char *const *names, int nn, char key[65])
{
	char *buf = NULL, line[512];
	size_t len = 0, cap = 0;
	struct stat st;
	const char *inc = hostcc_include_dir();
	static const char *headers[] = {"passfs.h", "passfs_abi.h", "pf_emu.h"};
	int n = snprintf(line, sizeof(line), "passfs oplib 1\n%s\n%s\n", PASSFS_VERSION, compiler_id());
	if (append(&buf, &len, &cap, line, (size_t)n))
		goto oom;
	/* The compile pipeline (flags, trampolines): its source in a source
	 * tree build, so rebuilding passfs for other reasons keeps the cache;
	 * else the binary that holds it. */
	const char *hostcc_src = datadir_hostcc_source();
	if (hostcc_src != NULL && stat(hostcc_src, &st) == 0) {
		if (append_file(&buf, &len, &cap, hostcc_src))
			goto oom;
	} else if (stat("/proc/self/exe", &st) == 0) {
		n = snprintf(line, sizeof(line), "exe %lld %lld.%09ld\n", (long long)st.st_size,
			     (long long)st.st_mtim.tv_sec, st.st_mtim.tv_nsec);
		if (append(&buf, &len, &cap, line, (size_t)n))
			goto oom;
	}
	for (size_t i = 0; i < sizeof(headers) / sizeof(headers[0]); i++) {
		char path[4096];
		snprintf(path, sizeof(path), "%s/%s", inc, headers[i]);
		if (append_file(&buf, &len, &cap, path))
			goto oom;
	}
	if (append(&buf, &len, &cap, src, strlen(src)))
		goto oom;
	for (int i = 0; i < nn; i++)
		if (append(&buf, &len, &cap, "\n", 1) || append(&buf, &len, &cap, names[i], strlen(names[i])))
			goto oom;
	sha256_hex(buf, len, key);
	free(buf);
	return 0;
oom:
	free(buf);
	return -1;
}

/* The cache directory, created (0700) if needed; -1 when there is none.
 * PASSFS_CACHE_DIR as the cuda backend's module cache reads it: "off", "0"
 * or empty turn caching off, a path replaces the default. */
static int cache_dir(char *dir, size_t len)
{
	if (gpu_cache_dir("oplib", dir, len) != 0)
		return -1;
	return access(dir, W_OK | X_OK) == 0 ? 0 : -1;
}

/* Copies src to dst through a temporary file and a rename, so a reader
 * never sees half a file. */
static int cache_store(const char *src, const char *dst)
{
	char tmp[4400];
	snprintf(tmp, sizeof(tmp), "%.4300s.%ld.tmp", dst, (long)getpid());
	int in = open(src, O_RDONLY | O_CLOEXEC), out = -1, rc = -1;
	if (in < 0)
		return -1;
	out = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (out >= 0) {
		char buf[65536];
		ssize_t got;
		rc = 0;
		while (rc == 0 && (got = read(in, buf, sizeof(buf))) > 0)
			rc = write(out, buf, (size_t)got) == got ? 0 : -1;
		if (close(out) != 0)
			rc = -1;
		if (rc == 0)
			rc = rename(tmp, dst);
		if (rc != 0)
			unlink(tmp);
	}
	close(in);
	return rc;
}

static void cache_prune(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	time_t now = time(NULL);
	if (d == NULL)
		return;
	while ((e = readdir(d)) != NULL) {
		char path[4400];
		struct stat st;
		if (strncmp(e->d_name, "oplib-", 6) != 0)
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, e->d_name);
		if (stat(path, &st) == 0 && now - st.st_mtime > CACHE_MAX_AGE_S)
			unlink(path);
	}
	closedir(d);
}

/* Loads (or compiles and caches) the op library for the sorted names. */
static int cpu_oplib_load(const char *src, char *const *names, int nn, struct shared_mod *sm, char *err,
			  size_t errlen)
{
	char key[65], dir[4096], path[4300];
	int have_dir = cache_dir(dir, sizeof(dir)) == 0;
	if (have_dir && cache_key(src, names, nn, key) == 0) {
		snprintf(path, sizeof(path), "%s/oplib-%s.so", dir, key);
		if ((sm->handle = gpu_dlopen(path, RTLD_NOW | RTLD_LOCAL)) != NULL) {
			sm->from_cache = 1;
			utimensat(AT_FDCWD, path, NULL, 0);     /* recently used: not pruned */
			return 0;
		}
	} else {
		have_dir = 0;
	}
	struct hostcc_request hr = {.label = "oplib.cu", .src = src, .len = strlen(src),
				    .names = (const char *const *)names, .n_names = nn, .timeout_s = 600};
	struct hostcc_output ho;
	double t0 = now_ms();
	if (hostcc_compile(&hr, &ho, err, errlen) != HOSTCC_OK) {
		if (ho.log && *ho.log) {
			size_t used = strlen(err);
			snprintf(err + used, errlen - used, ": %.*s", (int)strcspn(ho.log, "\n"), ho.log);
		}
		hostcc_output_free(&ho);
		return -1;
	}
	sm->compile_ms = now_ms() - t0;
	const char *load = ho.so_path;
	if (have_dir && cache_store(ho.so_path, path) == 0) {
		load = path;
		cache_prune(dir);
	}
	sm->handle = gpu_dlopen(load, RTLD_NOW | RTLD_LOCAL);
	hostcc_output_free(&ho);
	if (sm->handle == NULL) {
		const char *e = dlerror();
		snprintf(err, errlen, "eager: cannot load the compiled op library: %s", e ? e : "?");
		return -1;
	}
	return 0;
}

/* Compiles one module holding every name of the given plans, shared by
 * them, and resolves each plan's kernels. */
static int compile_plans(struct gpu_dev *d, struct eager_plan **plans, int np, struct blas_handle *blas,
			 struct dnn_handle *dnn, char *err, size_t errlen)
{
	char **names = NULL, *src = NULL, *log = NULL;
	int nn = 0, cap = 0, rc = -1;
	struct shared_mod *sm = NULL;
	for (int i = 0; i < np; i++)
		for (int k = 0; k < plans[i]->nnames; k++) {
			int seen = 0;
			for (int j = 0; j < nn && !seen; j++)
				seen = strcmp(names[j], plans[i]->names[k]) == 0;
			if (seen)
				continue;
			if (nn == cap) {
				cap = cap ? cap * 2 : 32;
				char **x = realloc(names, sizeof(char *) * (size_t)cap);
				if (x == NULL)
					goto oom;
				names = x;
			}
			names[nn++] = plans[i]->names[k];
		}
	if (nn > 1)
		qsort(names, (size_t)nn, sizeof(char *), cmp_name);
	if ((sm = calloc(1, sizeof(*sm))) == NULL)
		goto oom;
	if (nn > 0) {
		if ((src = oplib_source(err, errlen)) == NULL)
			goto out;
		if (gpu_backend_of(d) == GPU_BACKEND_CPU) {
			if (cpu_oplib_load(src, names, nn, sm, err, errlen))
				goto out;
		} else {
			double t0 = now_ms();
			if (gpu_module_compile(d, "oplib.cu", src, (const char *const *)names, nn, &sm->mod, &log,
					       err, errlen)) {
				if (log && *log) {
					size_t used = strlen(err);
					snprintf(err + used, errlen - used, ": %.*s", (int)strcspn(log, "\n"), log);
				}
				goto out;
			}
			sm->compile_ms = now_ms() - t0;
		}
	}
	for (int i = 0; i < np; i++) {
		struct eager_plan *p = plans[i];
		size_t n = (size_t)(p->nnames ? p->nnames : 1);
		if (sm->handle ? (p->tramps = calloc(n, sizeof(*p->tramps))) == NULL
			       : (p->kernels = calloc(n, sizeof(*p->kernels))) == NULL)
			goto oom;
		for (int k = 0; k < p->nnames; k++) {
			if (sm->handle) {
				char sym[32];
				char **at = bsearch(&p->names[k], names, (size_t)nn, sizeof(char *), cmp_name);
				void *fn = NULL;
				if (at) {
					snprintf(sym, sizeof(sym), "pf_tramp_%d", (int)(at - names));
					fn = dlsym(sm->handle, sym);
				}
				memcpy(&p->tramps[k], &fn, sizeof(fn));
				if (fn != NULL)
					continue;
			} else if ((p->kernels[k] = gpu_module_kernel(sm->mod, p->names[k])) != NULL) {
				continue;
			}
			snprintf(err, errlen, "eager: the op library has no kernel '%s'", p->names[k]);
			goto out;
		}
	}
	for (int i = 0; i < np; i++) {  /* every plan resolved: they share it */
		plans[i]->mod = sm;
		sm->refs++;
	}
	sm->blas = blas;
	sm->dnn = dnn;
	rc = 0;
	goto out;
oom:
	snprintf(err, errlen, "eager: out of memory");
out:
	if (sm && sm->refs == 0) {      /* failed: no plan holds it */
		if (sm->mod)
			gpu_module_free(sm->mod);
		if (sm->handle)
			gpu_dlclose(sm->handle);
		free(sm);
	}
	free(names);
	free(src);
	free(log);
	return rc;
}

/* Whether GEMMs and convolutions should be planned as cuBLAS / cuDNN calls:
 * the cuda backend, and PASSFS_EAGER_BLAS is not "0". */
static int libs_wanted(struct gpu_dev *d)
{
	const char *env = getenv("PASSFS_EAGER_BLAS");
	if (env && strcmp(env, "0") == 0)
		return 0;
	return gpu_backend_of(d) == GPU_BACKEND_CUDA;
}

static void plans_free(struct eager_plan **plans, int np)
{
	for (int i = 0; i < np; i++) {
		plan_release(plans[i]);
		plans[i] = NULL;
	}
}

/* cuDNN's part of planning, once the handle exists: each convolution's
 * descriptors, algorithm and workspace size (the workspace buffer takes
 * it). */
static int dnn_finalize(struct eager_plan *p, struct dnn_handle *h, char *err, size_t errlen)
{
	for (int i = 0; i < p->nsteps; i++) {
		struct step *s = &p->steps[i];
		if (s->kind != STEP_DNN_CONV)
			continue;
		if (dnn_conv_setup(h, &s->p.dc, err, errlen))
			return -1;
		p->bufs[s->ws_buf].bytes = s->p.dc.ws_bytes;
	}
	return 0;
}

static void note_add(char *note, size_t len, const char *what)
{
	size_t used = strlen(note), n = strlen(what);
	if (used > 0 && used + 2 < len) {
		memcpy(note + used, "; ", 2);
		used += 2;
	}
	if (n > len - used - 1)
		n = len - used - 1;
	memcpy(note + used, what, n);
	note[used + n] = 0;
}

/* Plans the np variants, creates the libraries' handles their steps need
 * (when a library cannot be loaded or set up, plans again without it and
 * notes why: those ops then run on the op library's kernels), lays out each
 * plan's arena, and compiles the kernels for all of them at once. */
static int prepare_plans(struct gpu_dev *d, const struct graph_variant *vs, int np, struct eager_plan **plans,
			 char *err, size_t errlen)
{
	int use_blas = libs_wanted(d), use_dnn = use_blas, n_blas = 0, n_dnn = 0;
	struct blas_handle *blas = NULL;
	struct dnn_handle *dnn = NULL;
	char note[600] = "", why[300];
	for (int i = 0; i < np; i++)
		plans[i] = NULL;
	for (int again = 1; again;) {
		again = 0;
		n_blas = n_dnn = 0;
		for (int i = 0; i < np; i++) {
			if ((plans[i] = plan_variant(d, &vs[i], use_blas, use_dnn, err, errlen)) == NULL)
				goto fail;
			n_blas += plans[i]->n_blas;
			n_dnn += plans[i]->n_dnn;
		}
		if (n_blas > 0 && blas == NULL && (blas = blas_create(d, why, sizeof(why))) == NULL) {
			note_add(note, sizeof(note), why);
			use_blas = 0;
			again = 1;
		}
		if (!again && n_dnn > 0 && dnn == NULL && (dnn = dnn_create(d, why, sizeof(why))) == NULL) {
			note_add(note, sizeof(note), why);
			use_dnn = 0;
			again = 1;
		}
		for (int i = 0; i < np && !again && n_dnn > 0; i++)
			if (dnn_finalize(plans[i], dnn, why, sizeof(why))) {
				note_add(note, sizeof(note), why);
				use_dnn = 0;
				again = 1;
			}
		if (again)
			plans_free(plans, np);
	}
	if (n_blas == 0) {      /* a handle from an earlier round no plan uses */
		blas_destroy(blas);
		blas = NULL;
	}
	if (n_dnn == 0) {
		dnn_destroy(dnn);
		dnn = NULL;
	}
	for (int i = 0; i < np; i++) {
		struct eager_plan *p = plans[i];
		snprintf(p->note, sizeof(p->note), "%s", note);
		snprintf(p->libs, sizeof(p->libs), "%s%s%s", p->n_blas ? blas_version() : "",
			 p->n_blas && p->n_dnn ? ", " : "", p->n_dnn ? dnn_version() : "");
		if ((p->arena_bytes = pack_arena(p)) == SIZE_MAX) {
			snprintf(err, errlen, "eager: variant '%s': out of memory", p->variant);
			goto fail;
		}
	}
	if (compile_plans(d, plans, np, blas, dnn, err, errlen) == 0)
		return 0;
fail:
	blas_destroy(blas);
	dnn_destroy(dnn);
	plans_free(plans, np);
	return -1;
}

struct eager_plan *eager_prepare(struct gpu_dev *d, const struct graph_variant *v, char *err, size_t errlen)
{
	struct eager_plan *p = NULL;
	return prepare_plans(d, v, 1, &p, err, errlen) ? NULL : p;
}

int eager_prepare_task(struct gpu_dev *d, const struct graph_task *t, struct eager_plan **plans, char *err,
		       size_t errlen)
{
	return prepare_plans(d, t->variants, t->n_variants, plans, err, errlen);
}

/* ---- running ----------------------------------------------------------------------------- */

/* Writes the plan's constants (BK_CONST: vectors of ones) into the arena,
 * once, when it is allocated. */
static int upload_consts(struct eager_plan *p, char *err, size_t errlen)
{
	for (int i = 0; i < p->nbufs; i++) {
		const struct buf *x = &p->bufs[i];
		if (x->kind != BK_CONST)
			continue;
		enum graph_dtype dt = (enum graph_dtype)x->ext;
		size_t es = graph_dtype_size(dt), n = x->bytes / es;
		unsigned char *host = malloc(x->bytes ? x->bytes : 1);
		if (host == NULL) {
			snprintf(err, errlen, "eager: variant '%s': out of memory", p->variant);
			return -1;
		}
		for (size_t k = 0; k < n; k++) {
			float one = 1.0f;
			uint16_t h = dt == DT_F16 ? 0x3c00 : 0x3f80;   /* 1.0 in float16, bfloat16 */
			if (dt == DT_F32)
				memcpy(host + k * es, &one, es);
			else
				memcpy(host + k * es, &h, es);
		}
		int rc = gpu_copy_to_device(p->dev, (char *)p->arena + x->off, host, x->bytes);
		free(host);
		if (rc) {
			snprintf(err, errlen, "eager: variant '%s': cannot write constants to the device", p->variant);
			return -1;
		}
	}
	return 0;
}

int eager_run(struct eager_plan *p, void *const *inputs, void **outputs, char *err, size_t errlen)
{
	if (p->arena == NULL && p->arena_bytes > 0) {
		p->arena = gpu_alloc(p->dev, p->arena_bytes);
		if (p->arena == NULL) {
			snprintf(err, errlen, "eager: variant '%s': cannot allocate %zu bytes of scratch memory",
				 p->variant, p->arena_bytes);
			return -1;
		}
		if (upload_consts(p, err, errlen))
			return -1;
	}
	for (int i = 0; i < p->nsteps; i++) {
		struct step *s = &p->steps[i];
		for (int k = 0; k < s->nfix; k++) {
			const struct buf *x = &p->bufs[s->fix[k].buf];
			char *base = x->kind == BK_INPUT ? (char *)inputs[x->ext]
				   : x->kind == BK_OUTPUT ? (char *)outputs[x->ext]
							  : (char *)p->arena + x->off;
			void *ptr = base ? base + s->fix[k].byte_off : NULL;
			memcpy((char *)&s->p + s->fix[k].field, &ptr, sizeof(ptr));
		}
		if (s->kind == STEP_BLAS_GEMM || s->kind == STEP_DNN_CONV) {
			if (s->kind == STEP_BLAS_GEMM ? blas_gemm_run(p->mod->blas, &s->p.bg, err, errlen)
						      : dnn_conv_run(p->mod->dnn, &s->p.dc, err, errlen)) {
				size_t used = strlen(err);
				snprintf(err + used, errlen - used, " (eager: variant '%s', step %d)", p->variant, i);
				return -1;
			}
			continue;
		}
		void *args[1] = {&s->p};
		if (p->tramps) {
			struct eager_call ec = {.call = {.rt = &eager_runtime, .backend = PF_BACKEND_CPU}, .dev = p->dev};
			ec.call.priv = &ec;
			int rc = p->tramps[s->kernel](&ec.call, s->grid, s->block, 0, args, 1);
			if (rc != PF_OK || ec.failed) {
				snprintf(err, errlen, "eager: variant '%s', launch %d (%s): %s", p->variant, i,
					 p->names[s->kernel], ec.failed ? ec.msg : "launch failed");
				return -1;
			}
		} else if (gpu_launch(p->dev, p->kernels[s->kernel], s->grid, s->block, 0, args, 1, err, errlen)) {
			size_t used = strlen(err);
			snprintf(err + used, errlen - used, " (eager: variant '%s', launch %d: %s)", p->variant, i,
				 p->names[s->kernel]);
			return -1;
		}
	}
	return gpu_sync(p->dev, err, errlen);
}

int eager_launch_count(const struct eager_plan *p)
{
	return p->nsteps;
}

size_t eager_scratch_bytes(const struct eager_plan *p)
{
	return p->arena_bytes;
}

double eager_compile_ms(const struct eager_plan *p)
{
	return p->mod && !p->mod->from_cache ? p->mod->compile_ms : 0.0;
}

const char *eager_libraries(const struct eager_plan *p)
{
	return p->libs;
}

const char *eager_library_note(const struct eager_plan *p)
{
	return p->note;
}
