/* libcudnn_mock.c - a stand-in for libcudnn (the legacy descriptor API) for
 * tests on machines without a GPU (PASSFS_CUDNN=<this library>), used with
 * the mock driver (libcuda_mock.c), whose "device" memory is host memory:
 * cudnnConvolutionForward computes a naive cross-correlation on the
 * pointers directly (accumulation in double, one rounding to the output
 * type), cudnnAddTensor a broadcast add.
 *
 * Checked as cuDNN documents it, so a wrong descriptor fails:
 *   - a handle from another process, or none: CUDNN_STATUS_NOT_INITIALIZED;
 *   - non-positive sizes or strides, a filter whose channels times the
 *     group count are not the input's, an output descriptor that is not
 *     cudnnGetConvolution2dForwardOutputDim's, a workspace smaller than the
 *     algorithm's (or NULL), an AddTensor operand whose dims are neither the
 *     output's nor 1, different data types: CUDNN_STATUS_BAD_PARAM;
 *   - and stricter than cuDNN, to hold passfs to its documented choices: a
 *     convolution mode other than cross-correlation, a compute type other
 *     than float, float32 with a math type other than CUDNN_FMA_MATH (no
 *     TF32), float16/bfloat16 without CUDNN_TENSOR_OP_MATH, a stream other
 *     than the legacy default one: CUDNN_STATUS_NOT_SUPPORTED.
 *
 * The heuristic (cudnnGetConvolutionForwardAlgorithm_v7) answers algorithm
 * 1 (IMPLICIT_PRECOMP_GEMM), whose workspace is 4096 bytes plus 4 per output
 * channel, then algorithm 0 (no workspace).  The forward pass fills the
 * workspace with a pattern first, so one that overlaps live data spoils a
 * result.
 *
 *   MOCK_CUDNN_TF32_FIRST=1  float32's first candidate has tensor-op math
 *   MOCK_CUDNN_LOG=path   appends one line per call: "create", "destroy",
 *                         "conv n c h w k kh kw groups pad_h pad_w str_h str_w
 *                         dil_h dil_w algo ws_bytes math dtype status",
 *                         "add status".
 *
 * Version: cudnnGetVersion answers 90177 (9.1.77).
 * Built by tests/cli/cuda_blas_mock.sh: cc -shared -fPIC -o libcudnn_mock.so this -lm. */
#define _GNU_SOURCE
#include "mock_common.h"
#include <fcntl.h>
#include <math.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

enum {
	ST_SUCCESS = 0,
	ST_NOT_INITIALIZED = 1001,
	ST_BAD_PARAM = 2000,
	ST_BAD_PARAM_NULL_POINTER = 2002,
	ST_NOT_SUPPORTED = 3000,
};
enum { D_FLOAT = 0, D_HALF = 2, D_BF16 = 9 };
enum { MATH_DEFAULT = 0, MATH_TENSOR_OP = 1, MATH_FMA = 3 };
#define CROSS_CORRELATION 1

struct handle {
	unsigned magic;
	pid_t pid;
	void *stream;
};
struct tensor {
	int set, dt, n, c, h, w, sn, sc, sh, sw;
};
struct filter {
	int set, dt, format, k, c, h, w;
};
struct conv {
	int set, pad_h, pad_w, u, v, dil_h, dil_w, mode, compute, groups, math;
};
struct perf {
	int algo;
	int status;
	float time;
	size_t memory;
	int determinism;
	int math_type;
	int reserved[3];
};
#define MAGIC 0xd1a5u

static void logf_(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void logf_(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	mock_log("MOCK_CUDNN_LOG", fmt, ap);
	va_end(ap);
}

static struct handle *valid(void *p)
{
	struct handle *h = p;
	return h && h->magic == MAGIC && h->pid == getpid() ? h : NULL;
}

size_t cudnnGetVersion(void) { return 90177; }

const char *cudnnGetErrorString(int st)
{
	switch (st) {
	case ST_SUCCESS: return "CUDNN_STATUS_SUCCESS";
	case ST_NOT_INITIALIZED: return "CUDNN_STATUS_NOT_INITIALIZED";
	case ST_BAD_PARAM: return "CUDNN_STATUS_BAD_PARAM";
	case ST_BAD_PARAM_NULL_POINTER: return "CUDNN_STATUS_BAD_PARAM_NULL_POINTER";
	case ST_NOT_SUPPORTED: return "CUDNN_STATUS_NOT_SUPPORTED";
	default: return "CUDNN_STATUS_UNKNOWN";
	}
}

int cudnnCreate(void **out)
{
	if (out == NULL)
		return ST_BAD_PARAM_NULL_POINTER;
	struct handle *h = calloc(1, sizeof(*h));
	h->magic = MAGIC;
	h->pid = getpid();
	*out = h;
	logf_("create\n");
	return ST_SUCCESS;
}

int cudnnDestroy(void *p)
{
	struct handle *h = valid(p);
	if (h == NULL)
		return ST_NOT_INITIALIZED;
	h->magic = 0;
	free(h);
	logf_("destroy\n");
	return ST_SUCCESS;
}

int cudnnSetStream(void *p, void *stream)
{
	struct handle *h = valid(p);
	if (h == NULL)
		return ST_NOT_INITIALIZED;
	h->stream = stream;
	return ST_SUCCESS;
}

int cudnnCreateTensorDescriptor(void **d) { *d = calloc(1, sizeof(struct tensor)); return ST_SUCCESS; }
int cudnnDestroyTensorDescriptor(void *d) { free(d); return ST_SUCCESS; }
int cudnnCreateFilterDescriptor(void **d) { *d = calloc(1, sizeof(struct filter)); return ST_SUCCESS; }
int cudnnDestroyFilterDescriptor(void *d) { free(d); return ST_SUCCESS; }
int cudnnCreateConvolutionDescriptor(void **d)
{
	struct conv *c = calloc(1, sizeof(struct conv));
	c->groups = 1;
	*d = c;
	return ST_SUCCESS;
}
int cudnnDestroyConvolutionDescriptor(void *d) { free(d); return ST_SUCCESS; }

static int dtype_ok(int dt)
{
	return dt == D_FLOAT || dt == D_HALF || dt == D_BF16;
}

int cudnnSetTensor4dDescriptorEx(void *p, int dt, int n, int c, int h, int w, int sn, int sc, int sh, int sw)
{
	struct tensor *t = p;
	if (t == NULL)
		return ST_BAD_PARAM_NULL_POINTER;
	if (n <= 0 || c <= 0 || h <= 0 || w <= 0 || sn <= 0 || sc <= 0 || sh <= 0 || sw <= 0)
		return ST_BAD_PARAM;
	if (!dtype_ok(dt))
		return ST_NOT_SUPPORTED;
	*t = (struct tensor){1, dt, n, c, h, w, sn, sc, sh, sw};
	return ST_SUCCESS;
}

int cudnnSetFilter4dDescriptor(void *p, int dt, int format, int k, int c, int h, int w)
{
	struct filter *f = p;
	if (f == NULL)
		return ST_BAD_PARAM_NULL_POINTER;
	if (k <= 0 || c <= 0 || h <= 0 || w <= 0 || format != 0)
		return ST_BAD_PARAM;
	if (!dtype_ok(dt))
		return ST_NOT_SUPPORTED;
	*f = (struct filter){1, dt, format, k, c, h, w};
	return ST_SUCCESS;
}

int cudnnSetConvolution2dDescriptor(void *p, int pad_h, int pad_w, int u, int v, int dil_h, int dil_w, int mode,
				    int compute)
{
	struct conv *c = p;
	if (c == NULL)
		return ST_BAD_PARAM_NULL_POINTER;
	if (pad_h < 0 || pad_w < 0 || u <= 0 || v <= 0 || dil_h <= 0 || dil_w <= 0 || (mode != 0 && mode != 1))
		return ST_BAD_PARAM;
	c->set = 1;
	c->pad_h = pad_h;
	c->pad_w = pad_w;
	c->u = u;
	c->v = v;
	c->dil_h = dil_h;
	c->dil_w = dil_w;
	c->mode = mode;
	c->compute = compute;
	return ST_SUCCESS;
}

int cudnnSetConvolutionGroupCount(void *p, int groups)
{
	struct conv *c = p;
	if (c == NULL || groups < 1)
		return ST_BAD_PARAM;
	c->groups = groups;
	return ST_SUCCESS;
}

int cudnnSetConvolutionMathType(void *p, int math)
{
	struct conv *c = p;
	if (c == NULL || math < 0 || math > 3)
		return ST_BAD_PARAM;
	c->math = math;
	return ST_SUCCESS;
}

int cudnnGetConvolution2dForwardOutputDim(void *cp, void *xp, void *wp, int *n, int *c, int *h, int *w)
{
	struct conv *cv = cp;
	struct tensor *x = xp;
	struct filter *f = wp;
	if (!cv || !x || !f || !cv->set || !x->set || !f->set)
		return ST_BAD_PARAM;
	if (f->c * cv->groups != x->c || f->k % cv->groups)
		return ST_BAD_PARAM;
	int sh = x->h + 2 * cv->pad_h - cv->dil_h * (f->h - 1) - 1, sw = x->w + 2 * cv->pad_w - cv->dil_w * (f->w - 1) - 1;
	if (sh < 0 || sw < 0)
		return ST_BAD_PARAM;
	*n = x->n;
	*c = f->k;
	*h = sh / cv->u + 1;
	*w = sw / cv->v + 1;
	return ST_SUCCESS;
}

static size_t ws_need(int algo, const struct filter *f)
{
	return algo == 1 ? 4096 + 4 * (size_t)f->k : 0;
}

/* The checks every convolution call makes; 0 or a status. */
static int check_conv(void *hp, struct tensor *x, struct filter *f, struct conv *cv, struct tensor *y)
{
	struct handle *h = valid(hp);
	int n, c, oh, ow;
	if (h == NULL)
		return ST_NOT_INITIALIZED;
	if (!x || !f || !cv || !y || !y->set)
		return ST_BAD_PARAM;
	int st = cudnnGetConvolution2dForwardOutputDim(cv, x, f, &n, &c, &oh, &ow);
	if (st)
		return st;
	if (y->n != n || y->c != c || y->h != oh || y->w != ow || x->dt != f->dt || x->dt != y->dt)
		return ST_BAD_PARAM;
	if (cv->mode != CROSS_CORRELATION || cv->compute != D_FLOAT || h->stream != NULL)
		return ST_NOT_SUPPORTED;
	if (x->dt == D_FLOAT ? cv->math != MATH_FMA : cv->math != MATH_TENSOR_OP)
		return ST_NOT_SUPPORTED;
	return ST_SUCCESS;
}

int cudnnGetConvolutionForwardAlgorithm_v7(void *hp, void *xp, void *wp, void *cp, void *yp, int requested,
					   int *returned, struct perf *perf)
{
	int st = check_conv(hp, xp, wp, cp, yp);
	if (st)
		return st;
	if (requested < 1 || returned == NULL || perf == NULL)
		return ST_BAD_PARAM;
	struct conv *cv = cp;
	int n = requested < 2 ? requested : 2;
	for (int i = 0; i < n; i++) {
		memset(&perf[i], 0, sizeof(perf[i]));
		perf[i].algo = i == 0 ? 1 : 0;
		perf[i].status = ST_SUCCESS;
		perf[i].time = -1;
		perf[i].memory = ws_need(perf[i].algo, wp);
		perf[i].math_type = cv->math;
	}
	/* MOCK_CUDNN_TF32_FIRST=1: for float32 the first candidate is a tensor-op
	 * (TF32) algorithm, as cuDNN may offer one; passfs must pass it over */
	const char *tf = getenv("MOCK_CUDNN_TF32_FIRST");
	if (tf != NULL && *tf == '1' && ((struct tensor *)xp)->dt == D_FLOAT)
		perf[0].math_type = MATH_TENSOR_OP;
	*returned = n;
	return ST_SUCCESS;
}

int cudnnGetConvolutionForwardWorkspaceSize(void *hp, void *xp, void *wp, void *cp, void *yp, int algo,
					    size_t *bytes)
{
	int st = check_conv(hp, xp, wp, cp, yp);
	if (st)
		return st;
	if (algo < 0 || algo > 7 || bytes == NULL)
		return ST_BAD_PARAM;
	*bytes = ws_need(algo, wp);
	return ST_SUCCESS;
}

/* ---- elements ---- */

static enum mock_elem elem(int dt)
{
	return dt == D_FLOAT ? MOCK_F32 : dt == D_HALF ? MOCK_F16 : MOCK_BF16;
}

static double load(const void *base, int dt, long long i)
{
	return mock_load(base, elem(dt), i);
}

static void store(void *base, int dt, long long i, double v)
{
	mock_store(base, elem(dt), i, v);
}

int cudnnConvolutionForward(void *hp, const void *alpha, void *xp, const void *x, void *wp, const void *w, void *cp,
			    int algo, void *ws, size_t ws_bytes, const void *beta, void *yp, void *y)
{
	struct tensor *xd = xp, *yd = yp;
	struct filter *f = wp;
	struct conv *cv = cp;
	int st = check_conv(hp, xd, f, cv, yd);
	if (st == ST_SUCCESS && (alpha == NULL || beta == NULL || x == NULL || w == NULL || y == NULL))
		st = ST_BAD_PARAM_NULL_POINTER;
	if (st == ST_SUCCESS && (algo < 0 || algo > 7 || ws_bytes < ws_need(algo, f) || (ws_need(algo, f) && !ws)))
		st = ST_BAD_PARAM;
	if (xd && f && cv)
		logf_("conv %d %d %d %d %d %d %d %d %d %d %d %d %d %d %d %zu %d %d %d\n", xd->n, xd->c, xd->h, xd->w, f->k,
		      f->h, f->w, cv->groups, cv->pad_h, cv->pad_w, cv->u, cv->v, cv->dil_h, cv->dil_w, algo, ws_bytes,
		      cv->math, xd->dt, st);
	if (st)
		return st;
	if (ws_bytes)
		memset(ws, 0x5a, ws_bytes);
	float al = *(const float *)alpha, be = *(const float *)beta;
	int cg = f->c, kg = f->k / cv->groups;
	for (int n = 0; n < yd->n; n++)
		for (int k = 0; k < yd->c; k++)
			for (int oy = 0; oy < yd->h; oy++)
				for (int ox = 0; ox < yd->w; ox++) {
					int g = k / kg;
					double acc = 0;
					for (int c = 0; c < cg; c++)
						for (int r = 0; r < f->h; r++)
							for (int s = 0; s < f->w; s++) {
								int iy = oy * cv->u - cv->pad_h + r * cv->dil_h;
								int ix = ox * cv->v - cv->pad_w + s * cv->dil_w;
								if (iy < 0 || iy >= xd->h || ix < 0 || ix >= xd->w)
									continue;
								long long xi = (long long)n * xd->sn +
									       (long long)(g * cg + c) * xd->sc +
									       (long long)iy * xd->sh + (long long)ix * xd->sw;
								long long wi = (((long long)k * cg + c) * f->h + r) * f->w + s;
								acc += load(x, xd->dt, xi) * load(w, f->dt, wi);
							}
					long long yi = (long long)n * yd->sn + (long long)k * yd->sc + (long long)oy * yd->sh +
						       (long long)ox * yd->sw;
					double v = al * acc;
					if (be != 0.0f)
						v += be * load(y, yd->dt, yi);
					store(y, yd->dt, yi, v);
				}
	return ST_SUCCESS;
}

int cudnnAddTensor(void *hp, const void *alpha, void *ap, const void *a, const void *beta, void *cp, void *c)
{
	struct tensor *ad = ap, *cd = cp;
	int st = ST_SUCCESS;
	if (valid(hp) == NULL)
		st = ST_NOT_INITIALIZED;
	else if (!ad || !cd || !ad->set || !cd->set || !alpha || !beta || !a || !c)
		st = ST_BAD_PARAM;
	else if ((ad->n != 1 && ad->n != cd->n) || (ad->c != 1 && ad->c != cd->c) || (ad->h != 1 && ad->h != cd->h) ||
		 (ad->w != 1 && ad->w != cd->w) || ad->dt != cd->dt)
		st = ST_BAD_PARAM;
	logf_("add %d\n", st);
	if (st)
		return st;
	float al = *(const float *)alpha, be = *(const float *)beta;
	for (int n = 0; n < cd->n; n++)
		for (int k = 0; k < cd->c; k++)
			for (int y = 0; y < cd->h; y++)
				for (int x = 0; x < cd->w; x++) {
					long long ai = (long long)(ad->n == 1 ? 0 : n) * ad->sn +
						       (long long)(ad->c == 1 ? 0 : k) * ad->sc +
						       (long long)(ad->h == 1 ? 0 : y) * ad->sh +
						       (long long)(ad->w == 1 ? 0 : x) * ad->sw;
					long long ci = (long long)n * cd->sn + (long long)k * cd->sc + (long long)y * cd->sh +
						       (long long)x * cd->sw;
					store(c, cd->dt, ci, al * load(a, ad->dt, ai) + be * load(c, cd->dt, ci));
				}
	return ST_SUCCESS;
}
