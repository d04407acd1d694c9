/* blas.c - cuBLAS loaded at run time for the eager baseline (blas.h).
 *
 * The entry points are declared here with cuBLAS's C ABI (enums are ints,
 * handles and streams pointers); the values used are in blas.h and checked
 * against the real headers by tests/unit/test_blas.c.  Symbols are looked
 * up by their exported names (cublasCreate_v2, cublasSetStream_v2, ...:
 * what cublas_v2.h's macros expand to). */
#define _GNU_SOURCE
#include "blas.h"

#include <dlfcn.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "gpu.h"

typedef int (*fn_create)(void **handle);
typedef int (*fn_destroy)(void *handle);
typedef int (*fn_set_stream)(void *handle, void *stream);
typedef int (*fn_set_math)(void *handle, int mode);
typedef int (*fn_get_property)(int type, int *value);
typedef const char *(*fn_status_text)(int status);
typedef int (*fn_gemm_ex)(void *handle, int transa, int transb, int m, int n, int k, const void *alpha,
			  const void *a, int atype, int lda, const void *b, int btype, int ldb, const void *beta,
			  void *c, int ctype, int ldc, int compute, int algo);
typedef int (*fn_gemm_sb_ex)(void *handle, int transa, int transb, int m, int n, int k, const void *alpha,
			     const void *a, int atype, int lda, long long stride_a, const void *b, int btype, int ldb,
			     long long stride_b, const void *beta, void *c, int ctype, int ldc, long long stride_c,
			     int batch, int compute, int algo);

static struct {
	pthread_mutex_t lock;
	int tried, ok;
	char err[400];
	char version[64];
	void *lib;
	fn_create create;
	fn_destroy destroy;
	fn_set_stream set_stream;
	fn_set_math set_math;
	fn_get_property get_property;
	fn_status_text status_name, status_string;      /* optional */
	fn_gemm_ex gemm_ex;
	fn_gemm_sb_ex gemm_sb_ex;
} cb = {.lock = PTHREAD_MUTEX_INITIALIZER};

void blas_after_fork(void)
{
	pthread_mutex_init(&cb.lock, NULL);
}

struct blas_handle {
	void *h;
	struct gpu_vendor_owner own;
};

/* ---- the mapping ------------------------------------------------------------------------ */

static int fits_int(long long v)
{
	return v >= 0 && v <= INT_MAX;
}

/* An operand of R x C (column-major view wanted) whose element (r, c) is at
 * r * sr + c * sc: stored as is (op N, ld = sc) when its rows are
 * contiguous, else as its transpose (op T, ld = sr) when its columns are.
 * A size-1 dim's stride does not matter; its leading dimension is then the
 * smallest valid one. */
static int map_operand(long long r, long long c, long long sr, long long sc, int *op, long long *ld)
{
	long long rmin = r > 1 ? r : 1, cmin = c > 1 ? c : 1;
	if (r == 1 || sr == 1) {
		long long l = c == 1 ? rmin : sc;
		if (l >= rmin) {
			*op = BLAS_OP_N;
			*ld = l;
			return 0;
		}
	}
	if (c == 1 || sc == 1) {
		long long l = r == 1 ? cmin : sr;
		if (l >= cmin) {
			*op = BLAS_OP_T;
			*ld = l;
			return 0;
		}
	}
	return -1;
}

int blas_gemm_map(const struct blas_rm_gemm *g, struct blas_gemm *out, char *why, size_t whylen)
{
	int ta, tb, tc;
	long long lda, ldb, ldc;
	memset(out, 0, sizeof(*out));
	if (g->m < 1 || g->n < 1 || g->k < 1 || g->batch < 1) {
		snprintf(why, whylen, "empty GEMM (m %lld, n %lld, k %lld, batch %lld)", g->m, g->n, g->k, g->batch);
		return -1;
	}
	if (!fits_int(g->m) || !fits_int(g->n) || !fits_int(g->k) || !fits_int(g->batch)) {
		snprintf(why, whylen, "a size beyond 32 bits");
		return -1;
	}
	if (g->sam < 0 || g->sak < 0 || g->sbk < 0 || g->sbn < 0 || g->scm < 0 || g->scn < 0 || g->sab < 0 ||
	    g->sbb < 0 || g->scb < 0) {
		snprintf(why, whylen, "a negative stride");
		return -1;
	}
	/* cuBLAS's A = B^T (n x k): element (j, p) at j * sbn + p * sbk */
	if (map_operand(g->n, g->k, g->sbn, g->sbk, &ta, &lda)) {
		snprintf(why, whylen, "B's strides (%lld, %lld) have no unit stride over [%lld, %lld]", g->sbk, g->sbn,
			 g->k, g->n);
		return -1;
	}
	/* cuBLAS's B = A^T (k x m): element (p, i) at p * sak + i * sam */
	if (map_operand(g->k, g->m, g->sak, g->sam, &tb, &ldb)) {
		snprintf(why, whylen, "A's strides (%lld, %lld) have no unit stride over [%lld, %lld]", g->sam, g->sak,
			 g->m, g->k);
		return -1;
	}
	/* C^T (n x m): element (j, i) at j * scn + i * scm, as is */
	if (map_operand(g->n, g->m, g->scn, g->scm, &tc, &ldc) || tc != BLAS_OP_N) {
		snprintf(why, whylen, "C's strides (%lld, %lld) are not row-major", g->scm, g->scn);
		return -1;
	}
	if (!fits_int(lda) || !fits_int(ldb) || !fits_int(ldc)) {
		snprintf(why, whylen, "a leading dimension beyond 32 bits");
		return -1;
	}
	if (g->batch > 1 && g->scb < (long long)(g->m - 1) * g->scm + g->n) {
		snprintf(why, whylen, "C's batches overlap (batch stride %lld)", g->scb);
		return -1;
	}
	switch (g->dt) {
	case BLAS_F32: out->dtype = BLAS_CUDA_R_32F; break;
	case BLAS_F16: out->dtype = BLAS_CUDA_R_16F; break;
	case BLAS_BF16: out->dtype = BLAS_CUDA_R_16BF; break;
	default:
		snprintf(why, whylen, "element type %d", (int)g->dt);
		return -1;
	}
	out->transa = ta;
	out->transb = tb;
	out->m = (int)g->n;
	out->n = (int)g->m;
	out->k = (int)g->k;
	out->lda = (int)lda;
	out->ldb = (int)ldb;
	out->ldc = (int)ldc;
	out->batch = (int)g->batch;
	if (g->batch > 1) {
		out->stride_a = g->sbb;
		out->stride_b = g->sab;
		out->stride_c = g->scb;
	}
	out->alpha = (float)g->alpha;
	out->beta = (float)g->beta;
	return 0;
}

/* ---- the library ------------------------------------------------------------------------- */

static void *sym(const char *name, int required, char *miss, size_t misslen)
{
	void *p = dlsym(cb.lib, name);
	if (p == NULL && required && miss[0] == 0)
		snprintf(miss, misslen, "%s", name);
	return p;
}

static void *open_lib(char *err, size_t errlen)
{
	static const char *const names[] = {"libcublas.so.13", "libcublas.so.12", "libcublas.so",
					     "/usr/local/cuda/lib64/libcublas.so.13", "/usr/local/cuda/lib64/libcublas.so.12",
					     "/usr/local/cuda/lib64/libcublas.so"};
	return gpu_dlopen_vendor("PASSFS_CUBLAS", "libcublas", names, (int)(sizeof(names) / sizeof(names[0])), err, errlen);
}

static int load_locked(void)
{
	char miss[80] = "";
	if ((cb.lib = open_lib(cb.err, sizeof(cb.err))) == NULL)
		return -1;
	*(void **)&cb.create = sym("cublasCreate_v2", 1, miss, sizeof(miss));
	*(void **)&cb.destroy = sym("cublasDestroy_v2", 1, miss, sizeof(miss));
	*(void **)&cb.set_stream = sym("cublasSetStream_v2", 1, miss, sizeof(miss));
	*(void **)&cb.set_math = sym("cublasSetMathMode", 1, miss, sizeof(miss));
	*(void **)&cb.get_property = sym("cublasGetProperty", 1, miss, sizeof(miss));
	*(void **)&cb.gemm_ex = sym("cublasGemmEx", 1, miss, sizeof(miss));
	*(void **)&cb.gemm_sb_ex = sym("cublasGemmStridedBatchedEx", 1, miss, sizeof(miss));
	*(void **)&cb.status_name = sym("cublasGetStatusName", 0, miss, sizeof(miss));
	*(void **)&cb.status_string = sym("cublasGetStatusString", 0, miss, sizeof(miss));
	if (miss[0]) {
		snprintf(cb.err, sizeof(cb.err), "libcublas has no %s", miss);
		goto fail;
	}
	int v[3] = {0, 0, 0};
	if (cb.get_property(BLAS_LIB_MAJOR_VERSION, &v[0]) != BLAS_STATUS_SUCCESS ||
	    cb.get_property(BLAS_LIB_MINOR_VERSION, &v[1]) != BLAS_STATUS_SUCCESS ||
	    cb.get_property(BLAS_LIB_PATCH_LEVEL, &v[2]) != BLAS_STATUS_SUCCESS) {
		snprintf(cb.err, sizeof(cb.err), "cublasGetProperty failed");
		goto fail;
	}
	/* cublasComputeType_t (CUBLAS_COMPUTE_32F) arrived with cuBLAS 11 */
	if (v[0] < 11) {
		snprintf(cb.err, sizeof(cb.err), "cuBLAS %d.%d.%d is too old (11 or later needed)", v[0], v[1], v[2]);
		goto fail;
	}
	snprintf(cb.version, sizeof(cb.version), "cublas %d.%d.%d", v[0], v[1], v[2]);
	return 0;
fail:
	gpu_dlclose(cb.lib);
	cb.lib = NULL;
	return -1;
}

int blas_load(char *err, size_t errlen)
{
	pthread_mutex_lock(&cb.lock);
	if (!cb.tried) {
		cb.tried = 1;
		cb.ok = load_locked() == 0;
	}
	int ok = cb.ok;
	pthread_mutex_unlock(&cb.lock);
	if (!ok)
		snprintf(err, errlen, "cuBLAS: %s", cb.err);
	return ok ? 0 : -1;
}

const char *blas_version(void)
{
	return cb.ok ? cb.version : "";
}

static void status_msg(int st, const char *call, char *err, size_t errlen)
{
	const char *name = cb.status_name ? cb.status_name(st) : NULL;
	const char *text = cb.status_string ? cb.status_string(st) : NULL;
	if (name && text)
		snprintf(err, errlen, "%s failed: %s: %s", call, name, text);
	else
		snprintf(err, errlen, "%s failed: cuBLAS status %d", call, st);
}

struct blas_handle *blas_create(struct gpu_dev *d, char *err, size_t errlen)
{
	if (blas_load(err, errlen))
		return NULL;
	struct blas_handle *h = calloc(1, sizeof(*h));
	if (h == NULL) {
		snprintf(err, errlen, "cuBLAS: out of memory");
		return NULL;
	}
	if (gpu_vendor_context(d, "cuBLAS", &h->own, err, errlen)) {
		free(h);
		return NULL;
	}
	int st = cb.create(&h->h);
	if (st != BLAS_STATUS_SUCCESS) {
		status_msg(st, "cublasCreate", err, errlen);
		free(h);
		return NULL;
	}
	if ((st = cb.set_stream(h->h, NULL)) != BLAS_STATUS_SUCCESS) {
		status_msg(st, "cublasSetStream", err, errlen);
		goto fail;
	}
	if ((st = cb.set_math(h->h, BLAS_DEFAULT_MATH)) != BLAS_STATUS_SUCCESS) {
		status_msg(st, "cublasSetMathMode", err, errlen);
		goto fail;
	}
	return h;
fail:
	cb.destroy(h->h);
	free(h);
	return NULL;
}

int blas_gemm_run(struct blas_handle *h, const struct blas_gemm *g, char *err, size_t errlen)
{
	if (h == NULL) {
		snprintf(err, errlen, "cuBLAS: no handle");
		return -1;
	}
	if (gpu_vendor_use(&h->own, "cuBLAS", err, errlen))
		return -1;
	int st;
	if (g->batch == 1)
		st = cb.gemm_ex(h->h, g->transa, g->transb, g->m, g->n, g->k, &g->alpha, g->b, g->dtype, g->lda, g->a,
				g->dtype, g->ldb, &g->beta, g->c, g->dtype, g->ldc, BLAS_COMPUTE_32F, BLAS_GEMM_DEFAULT);
	else
		st = cb.gemm_sb_ex(h->h, g->transa, g->transb, g->m, g->n, g->k, &g->alpha, g->b, g->dtype, g->lda,
				   g->stride_a, g->a, g->dtype, g->ldb, g->stride_b, &g->beta, g->c, g->dtype, g->ldc,
				   g->stride_c, g->batch, BLAS_COMPUTE_32F, BLAS_GEMM_DEFAULT);
	if (st != BLAS_STATUS_SUCCESS) {
		char call[200];
		snprintf(call, sizeof(call), "%s (m %d, n %d, k %d, batch %d, op %c%c, ld %d/%d/%d)",
			 g->batch == 1 ? "cublasGemmEx" : "cublasGemmStridedBatchedEx", g->m, g->n, g->k, g->batch,
			 g->transa == BLAS_OP_N ? 'N' : 'T', g->transb == BLAS_OP_N ? 'N' : 'T', g->lda, g->ldb,
			 g->ldc);
		status_msg(st, call, err, errlen);
		return -1;
	}
	return 0;
}

void blas_destroy(struct blas_handle *h)
{
	if (h == NULL)
		return;
	if (gpu_vendor_mine(&h->own) && cb.destroy)
		cb.destroy(h->h);
	free(h);
}
