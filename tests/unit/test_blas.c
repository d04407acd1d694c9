/* test_blas.c - gpu/blas.c and gpu/dnn.c without a GPU:
 *   - blas.h's and dnn.h's enum values (and cuDNN's algorithm result struct)
 *     against the CUDA headers (library_types.h, cublas_api.h, cudnn.h) when
 *     they are installed (skipped, saying so, when not);
 *   - blas_gemm_map: fixed cases (which operand is transposed, leading
 *     dimensions, batch strides, refusals) and random strided row-major
 *     GEMMs, each computed directly and through the mapped column-major call
 *     (with cuBLAS's argument checks), which must agree exactly;
 *   - dnn_conv_init's checks;
 *   - blas_load's and dnn_load's refusals and messages, in child processes
 *     (the load is once per process), and the real libraries' versions
 *     when present. */
#define _GNU_SOURCE
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "blas.h"
#include "dnn.h"

#if defined(PASSFS_TEST_CUDA_HEADERS) && __has_include(<cublas_api.h>)
#include <cublas_api.h>
#include <library_types.h>
#define HAVE_CUBLAS_HEADERS 1
#endif
#if defined(PASSFS_TEST_CUDA_HEADERS) && __has_include(<cudnn.h>)
#include <cudnn.h>
#define HAVE_CUDNN_HEADERS 1
#endif

static int failures;

#define CHECK(cond, ...)                                              \
	do {                                                          \
		if (!(cond)) {                                        \
			fprintf(stderr, "%s:%d: ", __FILE__, __LINE__); \
			fprintf(stderr, __VA_ARGS__);                 \
			fputc('\n', stderr);                          \
			failures++;                                   \
		}                                                     \
	} while (0)

static void test_constants(void)
{
#ifdef HAVE_CUBLAS_HEADERS
	CHECK(BLAS_CUDA_R_32F == CUDA_R_32F, "CUDA_R_32F");
	CHECK(BLAS_CUDA_R_64F == CUDA_R_64F, "CUDA_R_64F");
	CHECK(BLAS_CUDA_R_16F == CUDA_R_16F, "CUDA_R_16F");
	CHECK(BLAS_CUDA_R_16BF == CUDA_R_16BF, "CUDA_R_16BF");
	CHECK(BLAS_LIB_MAJOR_VERSION == MAJOR_VERSION, "MAJOR_VERSION");
	CHECK(BLAS_LIB_MINOR_VERSION == MINOR_VERSION, "MINOR_VERSION");
	CHECK(BLAS_LIB_PATCH_LEVEL == PATCH_LEVEL, "PATCH_LEVEL");
	CHECK(BLAS_STATUS_SUCCESS == CUBLAS_STATUS_SUCCESS, "CUBLAS_STATUS_SUCCESS");
	CHECK(BLAS_STATUS_NOT_INITIALIZED == CUBLAS_STATUS_NOT_INITIALIZED, "CUBLAS_STATUS_NOT_INITIALIZED");
	CHECK(BLAS_STATUS_INVALID_VALUE == CUBLAS_STATUS_INVALID_VALUE, "CUBLAS_STATUS_INVALID_VALUE");
	CHECK(BLAS_STATUS_NOT_SUPPORTED == CUBLAS_STATUS_NOT_SUPPORTED, "CUBLAS_STATUS_NOT_SUPPORTED");
	CHECK(BLAS_OP_N == CUBLAS_OP_N, "CUBLAS_OP_N");
	CHECK(BLAS_OP_T == CUBLAS_OP_T, "CUBLAS_OP_T");
	CHECK(BLAS_DEFAULT_MATH == CUBLAS_DEFAULT_MATH, "CUBLAS_DEFAULT_MATH");
	CHECK(BLAS_COMPUTE_32F == CUBLAS_COMPUTE_32F, "CUBLAS_COMPUTE_32F");
	CHECK(BLAS_GEMM_DEFAULT == CUBLAS_GEMM_DEFAULT, "CUBLAS_GEMM_DEFAULT");
	/* the ABI blas.c assumes: enums are ints, long long strides */
	CHECK(sizeof(cublasOperation_t) == sizeof(int) && sizeof(cudaDataType) == sizeof(int) &&
		      sizeof(cublasComputeType_t) == sizeof(int) && sizeof(cublasGemmAlgo_t) == sizeof(int),
	      "enum sizes");
	printf("ok   constants match the CUDA headers (cuBLAS %d.%d.%d)\n", CUBLAS_VER_MAJOR, CUBLAS_VER_MINOR,
	       CUBLAS_VER_PATCH);
#else
	printf("skip constants: no CUDA headers (cublas_api.h) at build time\n");
#endif
}

static void test_dnn_constants(void)
{
#ifdef HAVE_CUDNN_HEADERS
	/* the legacy API is deprecated in cuDNN 9; its declarations are what is
	 * compared here */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
	CHECK(DNN_STATUS_SUCCESS == CUDNN_STATUS_SUCCESS, "CUDNN_STATUS_SUCCESS");
	CHECK(DNN_DATA_FLOAT == CUDNN_DATA_FLOAT, "CUDNN_DATA_FLOAT");
	CHECK(DNN_DATA_HALF == CUDNN_DATA_HALF, "CUDNN_DATA_HALF");
	CHECK(DNN_DATA_BFLOAT16 == CUDNN_DATA_BFLOAT16, "CUDNN_DATA_BFLOAT16");
	CHECK(DNN_TENSOR_NCHW == CUDNN_TENSOR_NCHW, "CUDNN_TENSOR_NCHW");
	CHECK(DNN_CROSS_CORRELATION == CUDNN_CROSS_CORRELATION, "CUDNN_CROSS_CORRELATION");
	CHECK(DNN_DEFAULT_MATH == CUDNN_DEFAULT_MATH, "CUDNN_DEFAULT_MATH");
	CHECK(DNN_TENSOR_OP_MATH == CUDNN_TENSOR_OP_MATH, "CUDNN_TENSOR_OP_MATH");
	CHECK(DNN_FMA_MATH == CUDNN_FMA_MATH, "CUDNN_FMA_MATH");
	CHECK(DNN_FWD_ALGO_COUNT == CUDNN_CONVOLUTION_FWD_ALGO_COUNT, "CUDNN_CONVOLUTION_FWD_ALGO_COUNT");
	CHECK(sizeof(struct dnn_fwd_perf) == sizeof(cudnnConvolutionFwdAlgoPerf_t), "perf size %zu vs %zu",
	      sizeof(struct dnn_fwd_perf), sizeof(cudnnConvolutionFwdAlgoPerf_t));
	CHECK(offsetof(struct dnn_fwd_perf, algo) == offsetof(cudnnConvolutionFwdAlgoPerf_t, algo) &&
		      offsetof(struct dnn_fwd_perf, status) == offsetof(cudnnConvolutionFwdAlgoPerf_t, status) &&
		      offsetof(struct dnn_fwd_perf, memory) == offsetof(cudnnConvolutionFwdAlgoPerf_t, memory) &&
		      offsetof(struct dnn_fwd_perf, math_type) == offsetof(cudnnConvolutionFwdAlgoPerf_t, mathType),
	      "perf field offsets");
	CHECK(sizeof(cudnnDataType_t) == sizeof(int) && sizeof(cudnnMathType_t) == sizeof(int) &&
		      sizeof(cudnnConvolutionFwdAlgo_t) == sizeof(int) && sizeof(cudnnStatus_t) == sizeof(int),
	      "enum sizes");
#pragma GCC diagnostic pop
	printf("ok   cuDNN constants and cudnnConvolutionFwdAlgoPerf_t match the headers (cuDNN %d.%d.%d)\n",
	       CUDNN_MAJOR, CUDNN_MINOR, CUDNN_PATCHLEVEL);
#else
	printf("skip cuDNN constants: no cudnn.h at build time\n");
#endif
}

static void test_dnn_init(void)
{
	struct dnn_conv c;
	char why[200];
	long long x[4] = {2, 8, 9, 10}, w[4] = {12, 4, 3, 3}, o[2] = {5, 9}, a[7] = {1, 1, 2, 1, 1, 1, 2};
	/* (9 + 2 - 2 - 1) / 2 + 1 = 5, (10 + 2 - 2 - 1) / 1 + 1 = 10: ow 9 is wrong */
	CHECK(dnn_conv_init(&c, BLAS_F16, x, w, o, a, 1, why, sizeof why) == -1 && strstr(why, "output size"),
	      "wrong output size: %s", why);
	o[1] = 10;
	CHECK(dnn_conv_init(&c, BLAS_F16, x, w, o, a, 1, why, sizeof why) == 0, "%s", why);
	CHECK(c.n == 2 && c.c == 8 && c.k == 12 && c.kh == 3 && c.oh == 5 && c.ow == 10 && c.groups == 2 &&
		      c.stride_h == 2 && c.has_bias == 1 && c.dt == BLAS_F16 && c.xd == NULL,
	      "fields");
	a[6] = 3;       /* groups must divide the channels */
	CHECK(dnn_conv_init(&c, BLAS_F16, x, w, o, a, 0, why, sizeof why) == -1 && strstr(why, "groups"), "groups: %s",
	      why);
	a[6] = 2;
	long long big[4] = {1 << 16, 1 << 16, 1, 1}, wb[4] = {12, 1 << 15, 1, 1}, ob[2] = {1, 1},
		  ab[7] = {0, 0, 1, 1, 1, 1, 2};
	CHECK(dnn_conv_init(&c, BLAS_F32, big, wb, ob, ab, 0, why, sizeof why) == -1 && strstr(why, "2^31"),
	      "2^31 elements: %s", why);
	CHECK(dnn_conv_init(&c, (enum blas_dtype)7, x, w, o, a, 0, why, sizeof why) == -1, "bad dtype accepted");
	memset(&c, 0, sizeof c);
	dnn_conv_release(&c);   /* nothing to release: no crash */
	printf("ok   dnn_conv_init\n");
}

static struct blas_rm_gemm rm(long long m, long long n, long long k, long long sam, long long sak, long long sbk,
			      long long sbn)
{
	struct blas_rm_gemm g = {.m = m, .n = n, .k = k, .sam = sam, .sak = sak, .sbk = sbk, .sbn = sbn, .scm = n,
				 .scn = 1, .batch = 1, .dt = BLAS_F32, .alpha = 1.0};
	return g;
}

static void test_fixed(void)
{
	struct blas_gemm o;
	char why[200];
	/* contiguous A [4, 3], B [3, 5]: C^T = B^T A^T, both as stored */
	struct blas_rm_gemm g = rm(4, 5, 3, 3, 1, 5, 1);
	CHECK(blas_gemm_map(&g, &o, why, sizeof why) == 0, "%s", why);
	CHECK(o.transa == BLAS_OP_N && o.transb == BLAS_OP_N && o.m == 5 && o.n == 4 && o.k == 3 && o.lda == 5 &&
		      o.ldb == 3 && o.ldc == 5 && o.batch == 1,
	      "contiguous: op %d%d m %d n %d k %d ld %d %d %d", o.transa, o.transb, o.m, o.n, o.k, o.lda, o.ldb, o.ldc);
	/* linear: B = W^T with W [5, 3] contiguous (sbk 1, sbn 3): op T, lda 3 */
	g = rm(4, 5, 3, 3, 1, 1, 3);
	CHECK(blas_gemm_map(&g, &o, why, sizeof why) == 0, "%s", why);
	CHECK(o.transa == BLAS_OP_T && o.lda == 3 && o.transb == BLAS_OP_N && o.ldb == 3, "linear: op %d%d ld %d %d",
	      o.transa, o.transb, o.lda, o.ldb);
	/* A transposed (A = X^T, X [3, 4]): op T on cuBLAS's B, ldb 4 */
	g = rm(4, 5, 3, 1, 4, 5, 1);
	CHECK(blas_gemm_map(&g, &o, why, sizeof why) == 0, "%s", why);
	CHECK(o.transb == BLAS_OP_T && o.ldb == 4 && o.transa == BLAS_OP_N, "A^T: op %d%d ldb %d", o.transa,
	      o.transb, o.ldb);
	/* padded rows (a slice of a wider matrix) keep their leading dimension */
	g = rm(4, 5, 3, 8, 1, 16, 1);
	CHECK(blas_gemm_map(&g, &o, why, sizeof why) == 0 && o.lda == 16 && o.ldb == 8, "padded: ld %d %d", o.lda,
	      o.ldb);
	/* neither stride of A is 1 */
	g = rm(4, 5, 3, 6, 2, 5, 1);
	CHECK(blas_gemm_map(&g, &o, why, sizeof why) == -1 && strstr(why, "A's strides"), "no unit stride: %s", why);
	/* a broadcast (stride 0) over B's columns */
	g = rm(4, 5, 3, 3, 1, 1, 0);
	CHECK(blas_gemm_map(&g, &o, why, sizeof why) == -1 && strstr(why, "B's strides"), "stride 0: %s", why);
	/* overlapping rows: leading dimension below the rows */
	g = rm(4, 5, 3, 2, 1, 5, 1);
	CHECK(blas_gemm_map(&g, &o, why, sizeof why) == -1, "ld < rows accepted");
	/* vectors: m = 1 and n = 1, any stride on the size-1 dims */
	g = rm(1, 1, 7, 0, 3, 2, 0);
	CHECK(blas_gemm_map(&g, &o, why, sizeof why) == 0, "dot: %s", why);
	CHECK(o.m == 1 && o.n == 1 && o.ldc >= 1 && o.lda >= 1 && o.ldb >= 1, "dot: ld %d %d %d", o.lda, o.ldb,
	      o.ldc);
	/* batch strides go to the swapped operands; C must not overlap */
	g = rm(4, 5, 3, 3, 1, 5, 1);
	g.batch = 6;
	g.sab = 12;
	g.sbb = 0;
	g.scb = 20;
	g.dt = BLAS_BF16;
	g.alpha = 0.5;
	g.beta = 1;
	CHECK(blas_gemm_map(&g, &o, why, sizeof why) == 0, "%s", why);
	CHECK(o.batch == 6 && o.stride_a == 0 && o.stride_b == 12 && o.stride_c == 20 && o.dtype == BLAS_CUDA_R_16BF &&
		      o.alpha == 0.5f && o.beta == 1.0f,
	      "batched: %d %lld %lld %lld type %d", o.batch, o.stride_a, o.stride_b, o.stride_c, o.dtype);
	g.scb = 19;
	CHECK(blas_gemm_map(&g, &o, why, sizeof why) == -1 && strstr(why, "overlap"), "overlapping C: %s", why);
	g.scb = 20;
	g.sab = -12;
	CHECK(blas_gemm_map(&g, &o, why, sizeof why) == -1, "negative stride accepted");
	/* 32-bit limits */
	g = rm(4, 5, 3, 3, 1, 5, 1);
	g.k = 1LL << 31;
	CHECK(blas_gemm_map(&g, &o, why, sizeof why) == -1, "k beyond int accepted");
	g = rm(4, 5, 3, 1LL << 32, 1, 5, 1);
	CHECK(blas_gemm_map(&g, &o, why, sizeof why) == -1, "ld beyond int accepted");
	g = rm(0, 5, 3, 3, 1, 5, 1);
	CHECK(blas_gemm_map(&g, &o, why, sizeof why) == -1, "m = 0 accepted");
	/* C not row-major */
	g = rm(4, 5, 3, 3, 1, 5, 1);
	g.scm = 1;
	g.scn = 4;
	CHECK(blas_gemm_map(&g, &o, why, sizeof why) == -1 && strstr(why, "C's"), "column-major C: %s", why);
}

/* ---- random GEMMs: row-major directly vs the mapped column-major call ---- */

static uint64_t rng = 0x9e3779b97f4a7c15ull;
static unsigned rnd(unsigned n)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return (unsigned)(rng % n);
}

/* cuBLAS's documented argument checks */
static int cublas_args_ok(const struct blas_gemm *o)
{
	int m1 = o->m > 1 ? o->m : 1, n1 = o->n > 1 ? o->n : 1, k1 = o->k > 1 ? o->k : 1;
	return o->m >= 0 && o->n >= 0 && o->k >= 0 && o->batch >= 1 &&
	       o->lda >= (o->transa == BLAS_OP_N ? m1 : k1) && o->ldb >= (o->transb == BLAS_OP_N ? k1 : n1) &&
	       o->ldc >= m1;
}

/* Column-major reference with cuBLAS's semantics. */
static void colmajor(const struct blas_gemm *o, const double *A, const double *B, double *C)
{
	for (int b = 0; b < o->batch; b++)
		for (int j = 0; j < o->n; j++)
			for (int i = 0; i < o->m; i++) {
				double acc = 0;
				for (int p = 0; p < o->k; p++) {
					double x = o->transa == BLAS_OP_N ? A[b * o->stride_a + i + (long long)p * o->lda]
									   : A[b * o->stride_a + p + (long long)i * o->lda];
					double y = o->transb == BLAS_OP_N ? B[b * o->stride_b + p + (long long)j * o->ldb]
									   : B[b * o->stride_b + j + (long long)p * o->ldb];
					acc += x * y;
				}
				double *c = &C[b * o->stride_c + i + (long long)j * o->ldc];
				*c = o->alpha * acc + (o->beta != 0 ? o->beta * *c : 0);
			}
}

static void test_random(void)
{
	int mapped = 0, refused = 0, before = failures;
	for (int t = 0; t < 3000; t++) {
		long long m = 1 + rnd(5), n = 1 + rnd(5), k = 1 + rnd(5), batch = 1 + rnd(3);
		if (rnd(4) == 0)
			m = 1;
		if (rnd(4) == 0)
			n = 1;
		/* each operand row-major, column-major (padded or not), or odd */
		long long sam, sak, sbk, sbn;
		int la = rnd(4), lb = rnd(4);
		long long pa = rnd(3), pb = rnd(3);
		if (la == 0) { sam = k + pa; sak = 1; }
		else if (la == 1) { sam = 1; sak = m + pa; }
		else if (la == 2) { sam = 2 * k + pa; sak = 2; }
		else { sam = rnd(2); sak = 1 + rnd(3); }
		if (lb == 0) { sbk = n + pb; sbn = 1; }
		else if (lb == 1) { sbk = 1; sbn = k + pb; }
		else if (lb == 2) { sbk = 2; sbn = 2 * k + pb; }
		else { sbk = rnd(2); sbn = rnd(3); }
		long long ea = (m - 1) * sam + (k - 1) * sak + 1, eb = (k - 1) * sbk + (n - 1) * sbn + 1;
		long long sab = rnd(3) == 0 ? 0 : ea + rnd(3), sbb = rnd(3) == 0 ? 0 : eb + rnd(3);
		long long scb = m * n + rnd(2);
		struct blas_rm_gemm g = {.m = m, .n = n, .k = k, .sam = sam, .sak = sak, .sbk = sbk, .sbn = sbn,
					 .scm = n, .scn = 1, .batch = batch, .sab = sab, .sbb = sbb, .scb = scb,
					 .dt = BLAS_F32, .alpha = rnd(2) ? 1.0 : -0.5, .beta = rnd(2) ? 0.0 : 1.0};
		struct blas_gemm o;
		char why[200];
		if (blas_gemm_map(&g, &o, why, sizeof why)) {
			refused++;
			/* a layout the mapping must take */
			CHECK(!(la <= 1 && lb <= 1), "refused a plain layout (la %d lb %d m %lld n %lld k %lld): %s", la, lb,
			      m, n, k, why);
			continue;
		}
		mapped++;
		CHECK(cublas_args_ok(&o), "case %d: cuBLAS would refuse: op %d%d m %d n %d k %d ld %d %d %d", t, o.transa,
		      o.transb, o.m, o.n, o.k, o.lda, o.ldb, o.ldc);
		size_t na = (size_t)((batch - 1) * sab + ea), nb = (size_t)((batch - 1) * sbb + eb),
		       nc = (size_t)((batch - 1) * scb + m * n);
		/* the column-major call may read a size-1 dim's "stride" past the
		 * row-major extent only through its leading dimension, which
		 * does not move a valid element; pad to be safe */
		double *A = calloc(na + 64, sizeof(double)), *B = calloc(nb + 64, sizeof(double));
		double *C1 = calloc(nc + 64, sizeof(double)), *C2 = calloc(nc + 64, sizeof(double));
		for (size_t i = 0; i < na; i++)
			A[i] = (double)((int)rnd(17) - 8);
		for (size_t i = 0; i < nb; i++)
			B[i] = (double)((int)rnd(17) - 8);
		for (size_t i = 0; i < nc; i++)
			C1[i] = C2[i] = (double)((int)rnd(9) - 4);
		for (long long b = 0; b < batch; b++)
			for (long long i = 0; i < m; i++)
				for (long long j = 0; j < n; j++) {
					double acc = 0;
					for (long long p = 0; p < k; p++)
						acc += A[b * sab + i * sam + p * sak] * B[b * sbb + p * sbk + j * sbn];
					double *c = &C1[b * scb + i * g.scm + j];
					*c = g.alpha * acc + (g.beta != 0 ? g.beta * *c : 0);
				}
		colmajor(&o, B, A, C2);         /* cuBLAS's A is the row-major B */
		int same = memcmp(C1, C2, (nc + 64) * sizeof(double)) == 0;
		CHECK(same, "case %d (m %lld n %lld k %lld batch %lld, A %lld/%lld, B %lld/%lld): results differ", t, m, n,
		      k, batch, sam, sak, sbk, sbn);
		free(A);
		free(B);
		free(C1);
		free(C2);
	}
	CHECK(mapped > 1500, "only %d of 3000 mapped", mapped);
	if (failures == before)
		printf("ok   random GEMMs: %d mapped and equal, %d refused\n", mapped, refused);
}

/* ---- loading ---- */

static int which_lib;    /* 0: cuBLAS, 1: cuDNN */

/* A driver path that is not the system's: a name in a private directory
 * under $TMPDIR (or /tmp), made by main and removed at the end.  The file is
 * never created; only the name is compared. */
static char mock_dir[512], mock_driver[600];

static int in_child(const char *env_set[][2], int n, char *msg, size_t msglen)
{
	int fd[2];
	if (pipe(fd))
		return -1;
	pid_t pid = fork();
	if (pid == 0) {
		close(fd[0]);
		for (int i = 0; i < n; i++) {
			if (env_set[i][1])
				setenv(env_set[i][0], env_set[i][1], 1);
			else
				unsetenv(env_set[i][0]);
		}
		char err[400] = "";
		int rc = which_lib ? dnn_load(err, sizeof err) : blas_load(err, sizeof err);
		dprintf(fd[1], "%s", rc == 0 ? (which_lib ? dnn_version() : blas_version()) : err);
		_exit(rc == 0 ? 0 : 1);
	}
	close(fd[1]);
	ssize_t got = read(fd[0], msg, msglen - 1);
	msg[got > 0 ? got : 0] = 0;
	close(fd[0]);
	int st;
	waitpid(pid, &st, 0);
	return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

static void test_load(void)
{
	char msg[400];
	const char *missing[][2] = {{"PASSFS_CUBLAS", "/nonexistent/libcublas.so.13"}, {"PASSFS_LIBCUDA", NULL}};
	CHECK(in_child(missing, 2, msg, sizeof msg) == 1 && strstr(msg, "cannot load PASSFS_CUBLAS=/nonexistent"),
	      "missing library: %s", msg);
	/* a library without the entry points */
	const char *wrong[][2] = {{"PASSFS_CUBLAS", "libm.so.6"}, {"PASSFS_LIBCUDA", NULL}};
	CHECK(in_child(wrong, 2, msg, sizeof msg) == 1 && strstr(msg, "libcublas has no cublasCreate_v2"),
	      "wrong library: %s", msg);
	/* a mock driver without PASSFS_CUBLAS: the system's cuBLAS would not
	 * use it, so none is loaded */
	const char *mockdrv[][2] = {{"PASSFS_CUBLAS", NULL}, {"PASSFS_LIBCUDA", mock_driver}};
	CHECK(in_child(mockdrv, 2, msg, sizeof msg) == 1 && strstr(msg, "PASSFS_LIBCUDA names another driver"),
	      "mock driver: %s", msg);
	/* the real library, when installed: its version */
	const char *real[][2] = {{"PASSFS_CUBLAS", NULL}, {"PASSFS_LIBCUDA", NULL}};
	int rc = in_child(real, 2, msg, sizeof msg);
	if (rc == 0) {
		CHECK(strncmp(msg, "cublas ", 7) == 0, "version: %s", msg);
#ifdef HAVE_CUBLAS_HEADERS
		char want[40];
		snprintf(want, sizeof want, "cublas %d.", CUBLAS_VER_MAJOR);
		if (strncmp(msg, want, strlen(want)) != 0)
			printf("note: loaded %s, headers are %d.%d\n", msg, CUBLAS_VER_MAJOR, CUBLAS_VER_MINOR);
#endif
		printf("ok   loaded %s\n", msg);
	} else {
		CHECK(strstr(msg, "no libcublas") != NULL, "no library: %s", msg);
		printf("skip the real library: %s\n", msg);
	}
}

static void test_dnn_load(void)
{
	char msg[400];
	which_lib = 1;
	const char *missing[][2] = {{"PASSFS_CUDNN", "/nonexistent/libcudnn.so.9"}, {"PASSFS_LIBCUDA", NULL}};
	CHECK(in_child(missing, 2, msg, sizeof msg) == 1 && strstr(msg, "cannot load PASSFS_CUDNN=/nonexistent"),
	      "missing library: %s", msg);
	const char *wrong[][2] = {{"PASSFS_CUDNN", "libm.so.6"}, {"PASSFS_LIBCUDA", NULL}};
	CHECK(in_child(wrong, 2, msg, sizeof msg) == 1 && strstr(msg, "libcudnn has no cudnnCreate"),
	      "wrong library: %s", msg);
	const char *mockdrv[][2] = {{"PASSFS_CUDNN", NULL}, {"PASSFS_LIBCUDA", mock_driver}};
	CHECK(in_child(mockdrv, 2, msg, sizeof msg) == 1 && strstr(msg, "PASSFS_LIBCUDA names another driver"),
	      "mock driver: %s", msg);
	const char *real[][2] = {{"PASSFS_CUDNN", NULL}, {"PASSFS_LIBCUDA", NULL}};
	int rc = in_child(real, 2, msg, sizeof msg);
	if (rc == 0) {
		CHECK(strncmp(msg, "cudnn ", 6) == 0, "version: %s", msg);
#ifdef HAVE_CUDNN_HEADERS
		char want[40];
		snprintf(want, sizeof want, "cudnn %d.%d.%d", CUDNN_MAJOR, CUDNN_MINOR, CUDNN_PATCHLEVEL);
		if (strcmp(msg, want) != 0)
			printf("note: loaded %s, headers are %s\n", msg, want + 6);
#endif
		printf("ok   loaded %s\n", msg);
	} else {
		CHECK(strstr(msg, "no libcudnn") != NULL, "no library: %s", msg);
		printf("skip the real cuDNN: %s\n", msg);
	}
	which_lib = 0;
}

int main(void)
{
	const char *tmp = getenv("TMPDIR");
	snprintf(mock_dir, sizeof mock_dir, "%s/passfs-test-blas-XXXXXX", tmp && *tmp == '/' ? tmp : "/tmp");
	if (mkdtemp(mock_dir) == NULL) {
		perror(mock_dir);
		return 1;
	}
	snprintf(mock_driver, sizeof mock_driver, "%s/libcuda_mock.so", mock_dir);
	test_constants();
	test_dnn_constants();
	test_dnn_init();
	test_fixed();
	test_random();
	test_load();
	test_dnn_load();
	rmdir(mock_dir);
	if (failures) {
		fprintf(stderr, "%d failure(s)\n", failures);
		return 1;
	}
	printf("test_blas: all passed\n");
	return 0;
}
