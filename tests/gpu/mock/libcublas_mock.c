/* libcublas_mock.c - a stand-in for libcublas for tests on machines without
 * a GPU (PASSFS_CUBLAS=<this library>), used with the mock driver
 * (libcuda_mock.c), whose "device" memory is host memory: the GEMMs here
 * compute on the pointers directly with a naive column-major reference
 * (accumulation in double, one rounding to the output type; float16 and
 * bfloat16 converted here, round to nearest even).
 *
 * Arguments are checked the way cuBLAS documents it, so a wrong row-major
 * to column-major mapping fails instead of computing something:
 *   - no handle, or a handle created in another process (a fork):
 *     CUBLAS_STATUS_NOT_INITIALIZED;
 *   - m, n, k or batchCount negative, transa/transb not N/T/C, lda <
 *     max(1, transa == N ? m : k), ldb < max(1, transb == N ? k : n), ldc <
 *     max(1, m), alpha or beta NULL: CUBLAS_STATUS_INVALID_VALUE;
 *   - and stricter than cuBLAS, to hold passfs to PyTorch's defaults:
 *     types other than A = B = C in {CUDA_R_32F, CUDA_R_16F, CUDA_R_16BF},
 *     a compute type other than CUBLAS_COMPUTE_32F, an algorithm other than
 *     CUBLAS_GEMM_DEFAULT, a math mode other than CUBLAS_DEFAULT_MATH (no
 *     TF32), a stream other than the legacy default one:
 *     CUBLAS_STATUS_NOT_SUPPORTED; a NULL matrix pointer:
 *     CUBLAS_STATUS_EXECUTION_FAILED.
 *
 *   MOCK_CUBLAS_LOG=path   appends one line per call: "create", "destroy",
 *                          "gemm ex|sb ta tb m n k lda ldb ldc sa sb sc batch
 *                          type alpha beta status".
 *   MOCK_CUBLAS_FAIL=status  every GEMM that passes the checks fails with
 *                          this status (an injected failure).
 *
 * Version: cublasGetProperty answers 13.0.77.
 * Built by tests/cli/cuda_blas_mock.sh: cc -shared -fPIC -o libcublas_mock.so this -lm. */
#define _GNU_SOURCE
#include "mock_common.h"
#include <fcntl.h>
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

enum {
	ST_SUCCESS = 0,
	ST_NOT_INITIALIZED = 1,
	ST_ALLOC_FAILED = 3,
	ST_INVALID_VALUE = 7,
	ST_EXECUTION_FAILED = 13,
	ST_NOT_SUPPORTED = 15,
};
enum { R_32F = 0, R_16F = 2, R_16BF = 14 };
enum { OP_N = 0, OP_T = 1, OP_C = 2 };
#define COMPUTE_32F 68
#define GEMM_DEFAULT (-1)

struct mock_handle {
	unsigned magic;
	pid_t pid;
	void *stream;
	int math;
};
#define MAGIC 0xb1a5u

static void logf_(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void logf_(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	mock_log("MOCK_CUBLAS_LOG", fmt, ap);
	va_end(ap);
}

int cublasCreate_v2(void **handle)
{
	if (handle == NULL)
		return ST_INVALID_VALUE;
	struct mock_handle *h = calloc(1, sizeof(*h));
	if (h == NULL)
		return ST_ALLOC_FAILED;
	h->magic = MAGIC;
	h->pid = getpid();
	*handle = h;
	logf_("create\n");
	return ST_SUCCESS;
}

static struct mock_handle *valid(void *handle)
{
	struct mock_handle *h = handle;
	if (h == NULL || h->magic != MAGIC || h->pid != getpid())
		return NULL;
	return h;
}

int cublasDestroy_v2(void *handle)
{
	struct mock_handle *h = valid(handle);
	if (h == NULL)
		return ST_NOT_INITIALIZED;
	h->magic = 0;
	free(h);
	logf_("destroy\n");
	return ST_SUCCESS;
}

int cublasSetStream_v2(void *handle, void *stream)
{
	struct mock_handle *h = valid(handle);
	if (h == NULL)
		return ST_NOT_INITIALIZED;
	h->stream = stream;
	return ST_SUCCESS;
}

int cublasSetMathMode(void *handle, int mode)
{
	struct mock_handle *h = valid(handle);
	if (h == NULL)
		return ST_NOT_INITIALIZED;
	h->math = mode;
	return ST_SUCCESS;
}

int cublasGetVersion_v2(void *handle, int *v)
{
	if (valid(handle) == NULL)
		return ST_NOT_INITIALIZED;
	*v = 130077;
	return ST_SUCCESS;
}

int cublasGetProperty(int type, int *value)
{
	static const int v[3] = {13, 0, 77};
	if (type < 0 || type > 2 || value == NULL)
		return ST_INVALID_VALUE;
	*value = v[type];
	return ST_SUCCESS;
}

const char *cublasGetStatusName(int st)
{
	switch (st) {
	case ST_SUCCESS: return "CUBLAS_STATUS_SUCCESS";
	case ST_NOT_INITIALIZED: return "CUBLAS_STATUS_NOT_INITIALIZED";
	case ST_INVALID_VALUE: return "CUBLAS_STATUS_INVALID_VALUE";
	case ST_EXECUTION_FAILED: return "CUBLAS_STATUS_EXECUTION_FAILED";
	case ST_NOT_SUPPORTED: return "CUBLAS_STATUS_NOT_SUPPORTED";
	default: return "CUBLAS_STATUS_UNKNOWN";
	}
}

const char *cublasGetStatusString(int st)
{
	switch (st) {
	case ST_SUCCESS: return "success";
	case ST_NOT_INITIALIZED: return "the library was not initialized";
	case ST_INVALID_VALUE: return "an invalid numeric value was used as an argument";
	case ST_EXECUTION_FAILED: return "the GPU program failed to execute";
	case ST_NOT_SUPPORTED: return "the functionality requested is not supported";
	default: return "unknown";
	}
}

/* ---- element conversions ------------------------------------------------------------ */

static size_t esize(int t)
{
	return t == R_32F ? 4 : 2;
}

static enum mock_elem elem(int t)
{
	return t == R_32F ? MOCK_F32 : t == R_16F ? MOCK_F16 : MOCK_BF16;
}

static double load(const void *base, int t, long long i)
{
	return mock_load(base, elem(t), i);
}

static void store(void *base, int t, long long i, double v)
{
	mock_store(base, elem(t), i, v);
}

/* ---- GEMM ------------------------------------------------------------------------------ */

static int gemm(const char *kind, void *handle, int ta, int tb, int m, int n, int k, const void *alpha, const void *A,
		int atype, int lda, long long sa, const void *B, int btype, int ldb, long long sb, const void *beta,
		void *C, int ctype, int ldc, long long sc, int batch, int compute, int algo)
{
	struct mock_handle *h = valid(handle);
	int st = ST_SUCCESS;
	float al = alpha ? *(const float *)alpha : NAN, be = beta ? *(const float *)beta : NAN;
	if (h == NULL)
		st = ST_NOT_INITIALIZED;
	else if (m < 0 || n < 0 || k < 0 || batch < 0 || alpha == NULL || beta == NULL)
		st = ST_INVALID_VALUE;
	else if ((ta != OP_N && ta != OP_T && ta != OP_C) || (tb != OP_N && tb != OP_T && tb != OP_C))
		st = ST_INVALID_VALUE;
	else if (lda < (ta == OP_N ? (m > 1 ? m : 1) : (k > 1 ? k : 1)) ||
		 ldb < (tb == OP_N ? (k > 1 ? k : 1) : (n > 1 ? n : 1)) || ldc < (m > 1 ? m : 1))
		st = ST_INVALID_VALUE;
	else if (atype != btype || atype != ctype || (atype != R_32F && atype != R_16F && atype != R_16BF) ||
		 compute != COMPUTE_32F || algo != GEMM_DEFAULT || h->math != 0 || h->stream != NULL)
		st = ST_NOT_SUPPORTED;
	else if (m > 0 && n > 0 && (C == NULL || (k > 0 && (A == NULL || B == NULL))))
		st = ST_EXECUTION_FAILED;
	const char *fail = getenv("MOCK_CUBLAS_FAIL");
	if (st == ST_SUCCESS && fail && *fail)
		st = atoi(fail);
	logf_("gemm %s %c %c %d %d %d %d %d %d %lld %lld %lld %d %d %g %g %d\n", kind, "NTC?"[ta >= 0 && ta < 3 ? ta : 3],
	      "NTC?"[tb >= 0 && tb < 3 ? tb : 3], m, n, k, lda, ldb, ldc, sa, sb, sc, batch, atype, (double)al,
	      (double)be, st);
	if (st != ST_SUCCESS)
		return st;
	size_t es = esize(atype);
	for (int b = 0; b < batch; b++) {
		const char *a = (const char *)A + (size_t)(b * sa) * es, *bm = (const char *)B + (size_t)(b * sb) * es;
		char *c = (char *)C + (size_t)(b * sc) * es;
		for (int j = 0; j < n; j++)
			for (int i = 0; i < m; i++) {
				double acc = 0;
				for (int p = 0; p < k; p++) {
					long long ia = ta == OP_N ? i + (long long)p * lda : p + (long long)i * lda;
					long long ib = tb == OP_N ? p + (long long)j * ldb : j + (long long)p * ldb;
					acc += load(a, atype, ia) * load(bm, btype, ib);
				}
				long long ic = i + (long long)j * ldc;
				double v = (double)al * acc;
				if (be != 0.0f)
					v += (double)be * load(c, ctype, ic);
				store(c, ctype, ic, v);
			}
	}
	return ST_SUCCESS;
}

int cublasGemmEx(void *handle, int ta, int tb, int m, int n, int k, const void *alpha, const void *A, int atype,
		 int lda, const void *B, int btype, int ldb, const void *beta, void *C, int ctype, int ldc, int compute,
		 int algo)
{
	return gemm("ex", handle, ta, tb, m, n, k, alpha, A, atype, lda, 0, B, btype, ldb, 0, beta, C, ctype, ldc, 0,
		    1, compute, algo);
}

int cublasGemmStridedBatchedEx(void *handle, int ta, int tb, int m, int n, int k, const void *alpha, const void *A,
			       int atype, int lda, long long sa, const void *B, int btype, int ldb, long long sb,
			       const void *beta, void *C, int ctype, int ldc, long long sc, int batch, int compute,
			       int algo)
{
	return gemm("sb", handle, ta, tb, m, n, k, alpha, A, atype, lda, sa, B, btype, ldb, sb, beta, C, ctype, ldc,
		    sc, batch, compute, algo);
}
