/* blas.h - cuBLAS for the eager baseline on the cuda backend, loaded at run
 * time (dlopen) like the driver, so the build needs no CUDA header and one
 * binary runs with and without a GPU.
 *
 * What PyTorch eager does for mm/bmm/addmm on a GPU, eager does here:
 * cublasGemmEx (one matrix) or cublasGemmStridedBatchedEx (a batch with
 * element strides, 0 broadcasting an operand), float32 without TF32
 * (CUBLAS_COMPUTE_32F and the default math mode, as with PyTorch's default
 * torch.backends.cuda.matmul.allow_tf32 = False), float16/bfloat16 operands
 * with float32 compute and accumulation, on the legacy default stream (the
 * one the cuda backend launches on, so library calls and kernels are
 * ordered).
 *
 * Split in three:
 *   - blas_gemm_map(): pure arithmetic, row-major strided GEMM -> the
 *     column-major call (which operand is cuBLAS's A, op N or T, leading
 *     dimensions); fails for what cuBLAS cannot take.  No library needed.
 *   - blas_load(): the library, once per process (dlopen + dlsym).
 *   - blas_create() / blas_gemm_run() / blas_destroy(): a handle, created
 *     in the process that uses the device (a CUDA context does not survive
 *     fork) after CUDA is initialised there, and the calls.
 *
 * The library: $PASSFS_CUBLAS when set (a path or name; nothing else is
 * tried), else libcublas.so.13, .so.12, libcublas.so, then the same names
 * under /usr/local/cuda/lib64.  When PASSFS_LIBCUDA names a driver other
 * than libcuda.so.1 (a test's mock) and PASSFS_CUBLAS is unset, cuBLAS is
 * not loaded: it would talk to the system's driver, not that one.
 *
 * Errors: -1 and one line in err. */
#ifndef PASSFS_BLAS_H
#define PASSFS_BLAS_H

#include <stddef.h>

struct gpu_dev;

/* The enum values of the CUDA headers this file's callers need
 * (library_types.h, cublas_api.h); tests/unit/test_blas.c checks them
 * against the real headers when they are installed. */
#define BLAS_CUDA_R_32F 0
#define BLAS_CUDA_R_64F 1
#define BLAS_CUDA_R_16F 2
#define BLAS_CUDA_R_16BF 14
#define BLAS_LIB_MAJOR_VERSION 0        /* libraryPropertyType */
#define BLAS_LIB_MINOR_VERSION 1
#define BLAS_LIB_PATCH_LEVEL 2
#define BLAS_STATUS_SUCCESS 0
#define BLAS_STATUS_NOT_INITIALIZED 1
#define BLAS_STATUS_INVALID_VALUE 7
#define BLAS_STATUS_NOT_SUPPORTED 15
#define BLAS_OP_N 0
#define BLAS_OP_T 1
#define BLAS_DEFAULT_MATH 0
#define BLAS_COMPUTE_32F 68
#define BLAS_GEMM_DEFAULT (-1)

/* Element types blas_gemm_map accepts (A, B and C share one). */
enum blas_dtype { BLAS_F32 = 0, BLAS_F16 = 1, BLAS_BF16 = 2 };

/* A GEMM in row-major terms, strides in elements: for b < batch,
 *   C[b][i][j] = alpha * sum_p A[b][i][p] * B[b][p][j] + beta * C[b][i][j]
 * with A[b][i][p] at a + b*sab + i*sam + p*sak, B[b][p][j] at b + b*sbb +
 * p*sbk + j*sbn, C[b][i][j] at c + b*scb + i*scm + j*scn.  Strides of size-1
 * dims are ignored; batch strides may be 0 (broadcast A or B). */
struct blas_rm_gemm {
	long long m, n, k;
	long long sam, sak, sbk, sbn, scm, scn;
	long long batch, sab, sbb, scb;
	enum blas_dtype dt;
	double alpha, beta;
};

/* The column-major call: C^T = op(B^T) op(A^T), i.e. cuBLAS's A is the
 * row-major B and cuBLAS's B the row-major A.  a, b and c are the
 * row-major operands' device pointers (the caller fills them in; eager
 * patches them before each run).  Everything else is filled by
 * blas_gemm_map.  batch == 1: cublasGemmEx, else
 * cublasGemmStridedBatchedEx. */
struct blas_gemm {
	const void *a, *b;
	void *c;
	int transa, transb;             /* BLAS_OP_N / BLAS_OP_T, of cuBLAS's A and B */
	int m, n, k;                    /* cuBLAS's: m = row-major n, n = row-major m */
	int lda, ldb, ldc;
	long long stride_a, stride_b, stride_c;
	int batch;
	int dtype;                      /* BLAS_CUDA_R_* for A, B and C */
	float alpha, beta;              /* scale type float (CUBLAS_COMPUTE_32F) */
};

/* Maps a row-major GEMM onto the column-major call.  Returns 0, or -1 with
 * the reason in why: an operand with neither stride 1 over its matrix dims
 * (or a leading dimension below its rows), C not row-contiguous, a count or
 * leading dimension beyond int, C batches that overlap, m, n or k not
 * positive, batch < 1. */
int blas_gemm_map(const struct blas_rm_gemm *in, struct blas_gemm *out, char *why, size_t whylen);

/* Loads cuBLAS once per process (thread-safe).  Returns 0, or -1 with the
 * reason (also on later calls). */
int blas_load(char *err, size_t errlen);
/* "cublas 13.1.0" once loaded (cublasGetProperty), else "". */
const char *blas_version(void);

/* A handle on device d (cuda backend): initialises CUDA on d in this
 * process if needed (gpu_sync), then cublasCreate, the legacy default
 * stream, the default math mode.  NULL with the reason on failure. */
struct blas_handle *blas_create(struct gpu_dev *d, char *err, size_t errlen);
/* One GEMM (asynchronous, on the legacy default stream).  Refused when the
 * handle belongs to another process.  Returns 0, or -1 with cuBLAS's status
 * name and text. */
int blas_gemm_run(struct blas_handle *h, const struct blas_gemm *g, char *err, size_t errlen);
/* Destroys the handle (in the process that created it; in another one only
 * the memory is freed).  NULL is ignored. */
void blas_destroy(struct blas_handle *h);

/* In a forked child: the loader's lock starts unlocked (gpu.c, atfork). */
void blas_after_fork(void);

#endif
