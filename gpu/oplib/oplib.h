/* oplib.h - the op library's parameter blocks: what the eager executor
 * (engine/eval/eager/eager.c, C17) and the kernels (the .cu files here, CUDA C) agree on.
 *
 * Every op-library kernel takes exactly one argument: one of the structs
 * below, by value.  The host fills it at plan time; device pointers are
 * patched in just before each launch.  Only fixed-layout members (long long,
 * int, float, double, pointers) so the C compiler, the host C++ compiler and
 * NVRTC lay them out identically on x86-64 and the GPU.
 *
 * Shapes and strides are in elements.  Pointers already include the view's
 * offset.  Templates over element types use these type names in their name
 * expressions: float, __half, __nv_bfloat16, double, long long, int, bool.
 *
 * The source that eager compiles is this header followed by the .cu files of
 * OPLIB_FILES (in that order), each preceded by a #line directive. */
#ifndef PASSFS_OPLIB_H
#define PASSFS_OPLIB_H

#define OPL_MAX_DIMS 8
#define OPL_FILES "oplib.h", "common.cu", "elementwise.cu", "reduce.cu", "gemm.cu", \
	"conv.cu", "spatial.cu", "pool.cu"

/* Elementwise ops (template argument OP of ew_unary / ew_binary). */
#define OPL_COPY 0              /* unary: copy / cast (also fill, from a scalar) */
#define OPL_SIGMOID 1
#define OPL_RELU 2
#define OPL_SILU 3
#define OPL_TANH 4
#define OPL_EXP 5
#define OPL_RSQRT 6
#define OPL_GELU 7              /* erf form */
#define OPL_GELU_TANH 8
#define OPL_ADD 20              /* binary: a + alpha * b */
#define OPL_SUB 21              /* a - alpha * b */
#define OPL_MUL 22
#define OPL_DIV 23
#define OPL_POW 24
#define OPL_PRELU 25            /* a > 0 ? a : b * a (also leaky_relu, b the slope) */

/* An elementwise launch: out[i] = f(in0[i], in1[i], in2[i]) over `shape`,
 * every operand strided (stride 0 broadcasts).  An operand whose pointer is
 * NULL is the Python scalar in scalar[k].  ew_unary<OP, TO, TA>,
 * ew_binary<OP, TO, TA, TB> and ew_where<TO, TX, TY> (in0 = the bool
 * condition) read this; ew_arange<TO> reads scalar[0] (start) and scalar[1]
 * (step) and writes a contiguous out. */
typedef struct opl_ew {
	void *out;
	const void *in[3];
	long long n;                            /* numel of shape */
	long long shape[OPL_MAX_DIMS];
	long long ostride[OPL_MAX_DIMS];
	long long istride[3][OPL_MAX_DIMS];
	double scalar[3];
	double alpha;
	long long per;                          /* elements per thread step (see common.cu) */
	int ndim;
	int pad_;
} opl_ew;

/* Softmax over rows: element j of row r is at (r / inner) * n * inner +
 * (r % inner) + j * inner, in and out alike (contiguous [outer, n, inner]).
 * causal_l > 0 (attention, inner == 1): in row r only j <= r % causal_l count
 * (the rest are -inf).  softmax_block<TI, TO> runs one block per row,
 * softmax_thread<TI, TO> one thread per row (short rows; and on the cpu
 * backend, where a thread is a plain loop and a barrier a context switch). */
typedef struct opl_softmax {
	void *out;
	const void *in;
	long long rows, n, inner;
	long long causal_l;
} opl_softmax;

/* layer_norm<T, TW> (a block per row) or layer_norm_thread<T, TW> (a thread
 * per row) over the trailing m elements of each of `rows` contiguous rows; w
 * and b (length m, dtype TW) may be NULL. */
typedef struct opl_layer_norm {
	void *out;
	const void *in, *w, *b;
	long long rows, m;
	double eps;
} opl_layer_norm;

/* batch_norm_eval<T, TP>: x contiguous [outer, c, inner]; per-channel
 * running mean/var and optional weight/bias (dtype TP). */
typedef struct opl_batch_norm {
	void *out;
	const void *in, *mean, *var, *w, *b;
	long long n, c, inner;
	double eps;
	long long per;
} opl_batch_norm;

/* Sum over a set of dims: out[o] = scale * sum_r in[off(o) + off(r)], the
 * kept dims (ondim, oshape, ostride: strides into in) and the reduced dims
 * (rndim, rshape, rstride).  out is contiguous over oshape.
 * reduce_block<TI, TO> (block per output) or reduce_thread<TI, TO>; or,
 * for few outputs of long reductions, reduce_part<TI, TO> (split blocks an
 * output, each one's sum into part, in the accumulator type: float, double
 * or int64) then reduce_finish<TI, TO> (a block per output). */
typedef struct opl_reduce {
	void *out;
	const void *in;
	void *part;                     /* nout * split partial sums */
	long long nout, nred, split;
	long long oshape[OPL_MAX_DIMS], ostride[OPL_MAX_DIMS];
	long long rshape[OPL_MAX_DIMS], rstride[OPL_MAX_DIMS];
	double scale;
	int ondim, rndim;
} opl_reduce;

#define OPL_GEMM_BATCH_DIMS 6

/* Batched GEMM: C[b] = alpha * A[b] @ B[b] (+ bias), A [m, k], B [k, n], C
 * [m, n], all strided; the batch is up to OPL_GEMM_BATCH_DIMS dims (bshape)
 * with a stride per operand (0 broadcasts).  bias (dtype TC, may be NULL) is
 * read at m * sbias_m + n * sbias_n.  gemm<TA, TB, TC>; float accumulation
 * (double when any operand is double). */
typedef struct opl_gemm {
	void *c;
	const void *a, *b, *bias;
	long long m, n, k;
	long long sam, sak, sbk, sbn, scm, scn;
	long long sbias_m, sbias_n;
	long long batch;
	long long bshape[OPL_GEMM_BATCH_DIMS];
	long long sab[OPL_GEMM_BATCH_DIMS], sbb[OPL_GEMM_BATCH_DIMS], scb[OPL_GEMM_BATCH_DIMS];
	double alpha;
	int nbdims;
	int pad_;
} opl_gemm;

/* conv2d: x [n, cin, h, w] (strided), weight contiguous [cout, cin/groups,
 * kh, kw], bias [cout] or NULL, out contiguous [n, cout, oh, ow].
 * conv2d_gemm<T> (implicit GEMM per group) or conv2d_direct<T> (a thread
 * per output; depthwise and other thin groups). */
typedef struct opl_conv {
	void *out;
	const void *x, *w, *bias;
	long long n, cin, h, w_, cout, oh, ow, kh, kw;
	long long sn, sc, sh, sw;                       /* strides of x */
	long long stride_h, stride_w, pad_h, pad_w, dil_h, dil_w, groups;
	long long per;                                  /* conv2d_direct */
} opl_conv;

/* adaptive_avg_pool2d<T>: in contiguous [nc, h, w] -> out [nc, oh, ow]. */
typedef struct opl_pool {
	void *out;
	const void *in;
	long long nc, h, w, oh, ow;
	long long per;
} opl_pool;

/* avg_pool2d<T>: in contiguous [nc, h, w] -> out contiguous [nc, oh, ow];
 * kernel kh x kw, stride sh, sw, padding ph, pw; divisor 0: the window's
 * (see pool.cu), else divisor_override. */
typedef struct opl_avg_pool {
	void *out;
	const void *in;
	long long nc, h, w, oh, ow, kh, kw, sh, sw, ph, pw;
	long long divisor;
	long long per;
	int count_include_pad;
	int pad_;
} opl_avg_pool;

/* upsample_nearest<T> (1 to 3 spatial dims) and upsample_bilinear<T> (2):
 * in contiguous [nc, in_size...], out contiguous [nc, out_size...].  scale[d]
 * is PyTorch's source-index scale (float, as its kernels compute it). */
typedef struct opl_upsample {
	void *out;
	const void *in;
	long long nc, nout;
	long long in_size[3], out_size[3];
	long long per;
	float scale[3];
	int nsp;
	int align_corners;
} opl_upsample;

#endif
