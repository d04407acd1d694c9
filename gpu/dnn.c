/* dnn.c - cuDNN loaded at run time for the eager baseline's conv2d (dnn.h).
 *
 * The legacy descriptor API, declared here with cuDNN's C ABI (enums are
 * ints, handles and descriptors pointers), the values in dnn.h checked
 * against the real headers by tests/unit/test_blas.c.  cuDNN 9 keeps these
 * entry points (deprecated) in libcudnn.so.9, which loads its sub-libraries
 * itself. */
#define _GNU_SOURCE
#include "dnn.h"

#include <dlfcn.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "gpu.h"

typedef int (*fn_handle)(void **h);
typedef int (*fn_destroy)(void *p);
typedef int (*fn_set_stream)(void *h, void *stream);
typedef size_t (*fn_version)(void);
typedef const char *(*fn_errstr)(int status);
typedef int (*fn_tensor4d_ex)(void *d, int dt, int n, int c, int h, int w, int sn, int sc, int sh, int sw);
typedef int (*fn_filter4d)(void *d, int dt, int format, int k, int c, int h, int w);
typedef int (*fn_conv2d)(void *d, int pad_h, int pad_w, int u, int v, int dil_h, int dil_w, int mode, int compute);
typedef int (*fn_conv_int)(void *d, int value);
typedef int (*fn_out_dim)(void *cd, void *xd, void *wd, int *n, int *c, int *h, int *w);
typedef int (*fn_algo_v7)(void *h, void *xd, void *wd, void *cd, void *yd, int requested, int *returned,
			  struct dnn_fwd_perf *perf);
typedef int (*fn_ws_size)(void *h, void *xd, void *wd, void *cd, void *yd, int algo, size_t *bytes);
typedef int (*fn_conv_fwd)(void *h, const void *alpha, void *xd, const void *x, void *wd, const void *w, void *cd,
			   int algo, void *ws, size_t ws_bytes, const void *beta, void *yd, void *y);
typedef int (*fn_add_tensor)(void *h, const void *alpha, void *ad, const void *a, const void *beta, void *cd,
			     void *c);

static struct {
	pthread_mutex_t lock;
	int tried, ok;
	char err[400];
	char version[64];
	void *lib;
	fn_handle create, create_tensor, create_filter, create_conv;
	fn_destroy destroy, destroy_tensor, destroy_filter, destroy_conv;
	fn_set_stream set_stream;
	fn_version get_version;
	fn_errstr errstr;
	fn_tensor4d_ex tensor4d_ex;
	fn_filter4d filter4d;
	fn_conv2d conv2d;
	fn_conv_int group_count, math_type;
	fn_out_dim out_dim;
	fn_algo_v7 algo_v7;
	fn_ws_size ws_size;
	fn_conv_fwd conv_fwd;
	fn_add_tensor add_tensor;
} dn = {.lock = PTHREAD_MUTEX_INITIALIZER};

void dnn_after_fork(void)
{
	pthread_mutex_init(&dn.lock, NULL);
}

struct dnn_handle {
	void *h;
	struct gpu_vendor_owner own;
};

/* ---- checks without the library ------------------------------------------------------ */

static int pos_int(long long v)
{
	return v >= 1 && v <= INT_MAX;
}

static int numel_fits(const long long d[4])
{
	long long n = 1;
	for (int i = 0; i < 4; i++)
		if (__builtin_mul_overflow(n, d[i], &n) || n > INT_MAX)
			return 0;
	return 1;
}

int dnn_conv_init(struct dnn_conv *c, enum blas_dtype dt, const long long x[4], const long long ws[4],
		  const long long oh_ow[2], const long long a[7], int has_bias, char *why, size_t whylen)
{
	memset(c, 0, sizeof(*c));
	for (int i = 0; i < 4; i++)
		if (!pos_int(x[i]) || !pos_int(ws[i])) {
			snprintf(why, whylen, "a size outside 1..INT_MAX");
			return -1;
		}
	if (!pos_int(oh_ow[0]) || !pos_int(oh_ow[1]) || !pos_int(a[2]) || !pos_int(a[3]) || !pos_int(a[4]) ||
	    !pos_int(a[5]) || !pos_int(a[6]) || a[0] < 0 || a[1] < 0 || a[0] > INT_MAX || a[1] > INT_MAX) {
		snprintf(why, whylen, "an attribute outside cuDNN's range");
		return -1;
	}
	if (x[1] % a[6] || ws[0] % a[6] || ws[1] * a[6] != x[1]) {
		snprintf(why, whylen, "groups %lld do not fit %lld -> %lld channels", a[6], x[1], ws[0]);
		return -1;
	}
	/* the element counts must fit cuDNN's int strides too */
	long long ys[4] = {x[0], ws[0], oh_ow[0], oh_ow[1]};
	if (!numel_fits(x) || !numel_fits(ws) || !numel_fits(ys)) {
		snprintf(why, whylen, "a tensor beyond 2^31 elements");
		return -1;
	}
	for (int d = 0; d < 2; d++) {
		long long in = x[2 + d], k = ws[2 + d], pad = a[d], st = a[2 + d], dil = a[4 + d];
		long long span = in + 2 * pad - dil * (k - 1) - 1;
		if (span < 0 || span / st + 1 != oh_ow[d]) {
			snprintf(why, whylen, "output size %lld does not follow from the attributes", oh_ow[d]);
			return -1;
		}
	}
	if (dt != BLAS_F32 && dt != BLAS_F16 && dt != BLAS_BF16) {
		snprintf(why, whylen, "element type %d", (int)dt);
		return -1;
	}
	c->dt = dt;
	c->n = (int)x[0];
	c->c = (int)x[1];
	c->h = (int)x[2];
	c->w_ = (int)x[3];
	c->k = (int)ws[0];
	c->kh = (int)ws[2];
	c->kw = (int)ws[3];
	c->oh = (int)oh_ow[0];
	c->ow = (int)oh_ow[1];
	c->pad_h = (int)a[0];
	c->pad_w = (int)a[1];
	c->stride_h = (int)a[2];
	c->stride_w = (int)a[3];
	c->dil_h = (int)a[4];
	c->dil_w = (int)a[5];
	c->groups = (int)a[6];
	c->has_bias = has_bias;
	return 0;
}

/* ---- the library ------------------------------------------------------------------------ */

static void *sym(const char *name, char *miss, size_t misslen)
{
	void *p = dlsym(dn.lib, name);
	if (p == NULL && miss[0] == 0)
		snprintf(miss, misslen, "%s", name);
	return p;
}

static void *open_lib(char *err, size_t errlen)
{
	static const char *const names[] = {"libcudnn.so.9", "libcudnn.so.8", "libcudnn.so",
					     "/usr/local/cuda/lib64/libcudnn.so.9", "/usr/local/cuda/lib64/libcudnn.so.8",
					     "/usr/local/cuda/lib64/libcudnn.so"};
	return gpu_dlopen_vendor("PASSFS_CUDNN", "libcudnn", names, (int)(sizeof(names) / sizeof(names[0])), err, errlen);
}

#define SYM(field, name) (*(void **)&dn.field = sym(name, miss, sizeof(miss)))

static int load_locked(void)
{
	char miss[80] = "";
	if ((dn.lib = open_lib(dn.err, sizeof(dn.err))) == NULL)
		return -1;
	SYM(create, "cudnnCreate");
	SYM(destroy, "cudnnDestroy");
	SYM(set_stream, "cudnnSetStream");
	SYM(get_version, "cudnnGetVersion");
	SYM(errstr, "cudnnGetErrorString");
	SYM(create_tensor, "cudnnCreateTensorDescriptor");
	SYM(destroy_tensor, "cudnnDestroyTensorDescriptor");
	SYM(tensor4d_ex, "cudnnSetTensor4dDescriptorEx");
	SYM(create_filter, "cudnnCreateFilterDescriptor");
	SYM(destroy_filter, "cudnnDestroyFilterDescriptor");
	SYM(filter4d, "cudnnSetFilter4dDescriptor");
	SYM(create_conv, "cudnnCreateConvolutionDescriptor");
	SYM(destroy_conv, "cudnnDestroyConvolutionDescriptor");
	SYM(conv2d, "cudnnSetConvolution2dDescriptor");
	SYM(group_count, "cudnnSetConvolutionGroupCount");
	SYM(math_type, "cudnnSetConvolutionMathType");
	SYM(out_dim, "cudnnGetConvolution2dForwardOutputDim");
	SYM(algo_v7, "cudnnGetConvolutionForwardAlgorithm_v7");
	SYM(ws_size, "cudnnGetConvolutionForwardWorkspaceSize");
	SYM(conv_fwd, "cudnnConvolutionForward");
	SYM(add_tensor, "cudnnAddTensor");
	if (miss[0]) {
		snprintf(dn.err, sizeof(dn.err), "libcudnn has no %s", miss);
		goto fail;
	}
	/* 8.x: major * 1000 + minor * 100 + patch; 9.x: major * 10000 + minor * 100 + patch */
	size_t v = dn.get_version();
	unsigned major = v >= 90000 ? (unsigned)(v / 10000) : (unsigned)(v / 1000);
	unsigned minor = v >= 90000 ? (unsigned)(v % 10000 / 100) : (unsigned)(v % 1000 / 100);
	if (major < 8) {
		snprintf(dn.err, sizeof(dn.err), "cuDNN version %zu is too old (8 or later needed)", v);
		goto fail;
	}
	snprintf(dn.version, sizeof(dn.version), "cudnn %u.%u.%u", major, minor, (unsigned)(v % 100));
	return 0;
fail:
	gpu_dlclose(dn.lib);
	dn.lib = NULL;
	return -1;
}

int dnn_load(char *err, size_t errlen)
{
	pthread_mutex_lock(&dn.lock);
	if (!dn.tried) {
		dn.tried = 1;
		dn.ok = load_locked() == 0;
	}
	int ok = dn.ok;
	pthread_mutex_unlock(&dn.lock);
	if (!ok)
		snprintf(err, errlen, "cuDNN: %s", dn.err);
	return ok ? 0 : -1;
}

const char *dnn_version(void)
{
	return dn.ok ? dn.version : "";
}

static int dnn_fail(int st, const char *call, char *err, size_t errlen)
{
	const char *text = dn.errstr ? dn.errstr(st) : NULL;
	snprintf(err, errlen, "%s failed: %s (status %d)", call, text ? text : "?", st);
	return -1;
}

struct dnn_handle *dnn_create(struct gpu_dev *d, char *err, size_t errlen)
{
	if (dnn_load(err, errlen))
		return NULL;
	struct dnn_handle *h = calloc(1, sizeof(*h));
	if (h == NULL) {
		snprintf(err, errlen, "cuDNN: out of memory");
		return NULL;
	}
	if (gpu_vendor_context(d, "cuDNN", &h->own, err, errlen)) {
		free(h);
		return NULL;
	}
	int st = dn.create(&h->h);
	if (st != DNN_STATUS_SUCCESS) {
		dnn_fail(st, "cudnnCreate", err, errlen);
		free(h);
		return NULL;
	}
	if ((st = dn.set_stream(h->h, NULL)) != DNN_STATUS_SUCCESS) {
		dnn_fail(st, "cudnnSetStream", err, errlen);
		dn.destroy(h->h);
		free(h);
		return NULL;
	}
	return h;
}

void dnn_destroy(struct dnn_handle *h)
{
	if (h == NULL)
		return;
	if (gpu_vendor_mine(&h->own) && dn.destroy)
		dn.destroy(h->h);
	free(h);
}

static int data_type(enum blas_dtype dt)
{
	return dt == BLAS_F16 ? DNN_DATA_HALF : dt == BLAS_BF16 ? DNN_DATA_BFLOAT16 : DNN_DATA_FLOAT;
}

void dnn_conv_release(struct dnn_conv *c)
{
	if (dn.lib == NULL)
		return;
	if (c->xd)
		dn.destroy_tensor(c->xd);
	if (c->yd)
		dn.destroy_tensor(c->yd);
	if (c->bd)
		dn.destroy_tensor(c->bd);
	if (c->wd)
		dn.destroy_filter(c->wd);
	if (c->cd)
		dn.destroy_conv(c->cd);
	c->xd = c->yd = c->bd = c->wd = c->cd = NULL;
}

int dnn_conv_setup(struct dnn_handle *h, struct dnn_conv *c, char *err, size_t errlen)
{
	int st, dt = data_type(c->dt);
	c->xd = c->yd = c->bd = c->wd = c->cd = NULL;
	if ((st = dn.create_tensor(&c->xd)) || (st = dn.create_tensor(&c->yd)) ||
	    (c->has_bias && (st = dn.create_tensor(&c->bd))) || (st = dn.create_filter(&c->wd)) ||
	    (st = dn.create_conv(&c->cd))) {
		dnn_fail(st, "cuDNN: creating descriptors", err, errlen);
		goto fail;
	}
	int chw = c->c * c->h * c->w_, hw = c->h * c->w_, ochw = c->k * c->oh * c->ow, ohw = c->oh * c->ow;
	if ((st = dn.tensor4d_ex(c->xd, dt, c->n, c->c, c->h, c->w_, chw, hw, c->w_, 1))) {
		dnn_fail(st, "cudnnSetTensor4dDescriptorEx (input)", err, errlen);
		goto fail;
	}
	if ((st = dn.tensor4d_ex(c->yd, dt, c->n, c->k, c->oh, c->ow, ochw, ohw, c->ow, 1))) {
		dnn_fail(st, "cudnnSetTensor4dDescriptorEx (output)", err, errlen);
		goto fail;
	}
	if (c->has_bias && (st = dn.tensor4d_ex(c->bd, dt, 1, c->k, 1, 1, c->k, 1, 1, 1))) {
		dnn_fail(st, "cudnnSetTensor4dDescriptorEx (bias)", err, errlen);
		goto fail;
	}
	if ((st = dn.filter4d(c->wd, dt, DNN_TENSOR_NCHW, c->k, c->c / c->groups, c->kh, c->kw))) {
		dnn_fail(st, "cudnnSetFilter4dDescriptor", err, errlen);
		goto fail;
	}
	/* float32 compute for every input type (PyTorch's choice for half and
	 * bfloat16 too) */
	if ((st = dn.conv2d(c->cd, c->pad_h, c->pad_w, c->stride_h, c->stride_w, c->dil_h, c->dil_w,
			    DNN_CROSS_CORRELATION, DNN_DATA_FLOAT))) {
		dnn_fail(st, "cudnnSetConvolution2dDescriptor", err, errlen);
		goto fail;
	}
	if ((st = dn.group_count(c->cd, c->groups))) {
		dnn_fail(st, "cudnnSetConvolutionGroupCount", err, errlen);
		goto fail;
	}
	c->math = c->dt == BLAS_F32 ? DNN_FMA_MATH : DNN_TENSOR_OP_MATH;
	if ((st = dn.math_type(c->cd, c->math))) {
		dnn_fail(st, "cudnnSetConvolutionMathType", err, errlen);
		goto fail;
	}
	int on, oc, oh, ow;
	if ((st = dn.out_dim(c->cd, c->xd, c->wd, &on, &oc, &oh, &ow))) {
		dnn_fail(st, "cudnnGetConvolution2dForwardOutputDim", err, errlen);
		goto fail;
	}
	if (on != c->n || oc != c->k || oh != c->oh || ow != c->ow) {
		snprintf(err, errlen, "cuDNN: output [%d, %d, %d, %d] where the graph has [%d, %d, %d, %d]", on, oc, oh,
			 ow, c->n, c->k, c->oh, c->ow);
		goto fail;
	}
	struct dnn_fwd_perf perf[DNN_FWD_ALGO_COUNT];
	int got = 0;
	memset(perf, 0, sizeof(perf));
	if ((st = dn.algo_v7(h->h, c->xd, c->wd, c->cd, c->yd, DNN_FWD_ALGO_COUNT, &got, perf))) {
		dnn_fail(st, "cudnnGetConvolutionForwardAlgorithm_v7", err, errlen);
		goto fail;
	}
	/* The first that works; for float32 only one without tensor cores
	 * (FMA or default math: no TF32). */
	int pick = -1;
	for (int i = 0; i < got && i < DNN_FWD_ALGO_COUNT && pick < 0; i++)
		if (perf[i].status == DNN_STATUS_SUCCESS &&
		    (c->dt != BLAS_F32 || perf[i].math_type == DNN_FMA_MATH || perf[i].math_type == DNN_DEFAULT_MATH))
			pick = i;
	if (pick < 0) {
		snprintf(err, errlen, "cuDNN: no forward algorithm for this convolution (%d candidates)", got);
		goto fail;
	}
	c->algo = perf[pick].algo;
	/* half types: the math the algorithm was chosen with, as PyTorch sets it */
	if (c->dt != BLAS_F32 && perf[pick].math_type != c->math) {
		c->math = perf[pick].math_type;
		if ((st = dn.math_type(c->cd, c->math))) {
			dnn_fail(st, "cudnnSetConvolutionMathType", err, errlen);
			goto fail;
		}
	}
	if ((st = dn.ws_size(h->h, c->xd, c->wd, c->cd, c->yd, c->algo, &c->ws_bytes))) {
		dnn_fail(st, "cudnnGetConvolutionForwardWorkspaceSize", err, errlen);
		goto fail;
	}
	return 0;
fail:
	dnn_conv_release(c);
	return -1;
}

int dnn_conv_run(struct dnn_handle *h, const struct dnn_conv *c, char *err, size_t errlen)
{
	if (h == NULL) {
		snprintf(err, errlen, "cuDNN: no handle");
		return -1;
	}
	if (gpu_vendor_use(&h->own, "cuDNN", err, errlen))
		return -1;
	const float one = 1.0f, zero = 0.0f;
	int st = dn.conv_fwd(h->h, &one, c->xd, c->x, c->wd, c->w, c->cd, c->algo, c->ws, c->ws_bytes, &zero, c->yd,
			     c->y);
	if (st != DNN_STATUS_SUCCESS) {
		char call[200];
		snprintf(call, sizeof(call), "cudnnConvolutionForward ([%d, %d, %d, %d] * [%d, %d, %d, %d], groups %d, algo %d)",
			 c->n, c->c, c->h, c->w_, c->k, c->c / c->groups, c->kh, c->kw, c->groups, c->algo);
		return dnn_fail(st, call, err, errlen);
	}
	if (c->has_bias && (st = dn.add_tensor(h->h, &one, c->bd, c->bias, &one, c->yd, c->y)) != DNN_STATUS_SUCCESS)
		return dnn_fail(st, "cudnnAddTensor (bias)", err, errlen);
	return 0;
}
