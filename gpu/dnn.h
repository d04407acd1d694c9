/* dnn.h - cuDNN for the eager baseline's conv2d on the cuda backend, loaded at
 * run time (dlopen) like cuBLAS (blas.h): no CUDA header needed to build.
 *
 * What PyTorch eager does for conv2d on a GPU without cudnn.benchmark, eager
 * does here, with cuDNN's legacy descriptor API: NCHW tensor descriptors
 * (the input made contiguous first, as PyTorch's cudnn_convolution does), a
 * filter descriptor, a cross-correlation descriptor with padding, stride,
 * dilation and the group count, float32 compute; the algorithm is cuDNN's
 * heuristic choice (cudnnGetConvolutionForwardAlgorithm_v7: the first that
 * succeeds), its workspace taken from the plan's scratch arena; then
 * cudnnConvolutionForward and, with a bias, cudnnAddTensor (PyTorch adds the
 * bias in a separate elementwise kernel after the convolution too).
 *
 * Math: float16/bfloat16 with CUDNN_TENSOR_OP_MATH (PyTorch's choice);
 * float32 with CUDNN_FMA_MATH, i.e. no TF32.  That departs from PyTorch's
 * default (torch.backends.cudnn.allow_tf32 = True): eager's outputs are the
 * reference a pass is checked against at float32 tolerances (atol 1e-5),
 * which TF32's 10-bit mantissa would not meet.
 *
 * The library: $PASSFS_CUDNN when set (nothing else is tried), else
 * libcudnn.so.9, .so.8, libcudnn.so, then the same under
 * /usr/local/cuda/lib64; not loaded when PASSFS_LIBCUDA names another
 * driver than libcuda.so.1 and PASSFS_CUDNN is unset (as for cuBLAS).
 *
 * Errors: -1 and one line in err. */
#ifndef PASSFS_DNN_H
#define PASSFS_DNN_H

#include <stddef.h>

#include "blas.h"

struct gpu_dev;

/* Enum values of cudnn_graph.h / cudnn_ops.h / cudnn_cnn.h used here;
 * tests/unit/test_blas.c checks them against the headers when installed. */
#define DNN_STATUS_SUCCESS 0
#define DNN_DATA_FLOAT 0
#define DNN_DATA_HALF 2
#define DNN_DATA_BFLOAT16 9
#define DNN_TENSOR_NCHW 0
#define DNN_CROSS_CORRELATION 1
#define DNN_DEFAULT_MATH 0
#define DNN_TENSOR_OP_MATH 1
#define DNN_FMA_MATH 3
#define DNN_FWD_ALGO_COUNT 8

/* cudnnConvolutionFwdAlgoPerf_t, field for field (checked by test_blas). */
struct dnn_fwd_perf {
	int algo;
	int status;
	float time;
	size_t memory;
	int determinism;
	int math_type;
	int reserved[3];
};

/* One convolution: x contiguous [n, c, h, w], w contiguous [k, c / groups,
 * kh, kw], y contiguous [n, k, oh, ow], bias contiguous [k] (has_bias).
 * The caller fills the sizes and attributes (dnn_conv_init checks them)
 * and the device pointers (eager patches them before each run); ws is the
 * workspace of ws_bytes, which dnn_conv_setup decides. */
struct dnn_conv {
	const void *x, *w, *bias;
	void *y, *ws;
	enum blas_dtype dt;
	int n, c, h, w_, k, kh, kw, oh, ow, groups;
	int pad_h, pad_w, stride_h, stride_w, dil_h, dil_w;
	int has_bias;
	/* dnn_conv_setup: */
	void *xd, *wd, *yd, *bd, *cd;   /* descriptors */
	int algo, math;
	size_t ws_bytes;
};

/* Fills the sizes of c from 64-bit values and checks that cuDNN can take
 * them (int range, positive sizes, groups dividing c and k, output sizes
 * consistent with the attributes).  No library needed.  Returns 0, or -1
 * with the reason. */
int dnn_conv_init(struct dnn_conv *c, enum blas_dtype dt, const long long x[4], const long long wshape[4],
		  const long long oh_ow[2], const long long attrs[7], int has_bias, char *why, size_t whylen);

/* Loads cuDNN once per process.  Returns 0, or -1 with the reason. */
int dnn_load(char *err, size_t errlen);
/* "cudnn 9.1.0" once loaded (cudnnGetVersion), else "". */
const char *dnn_version(void);

/* A handle on device d (cuda backend; CUDA initialised first as for
 * blas_create), on the legacy default stream.  NULL with the reason. */
struct dnn_handle *dnn_create(struct gpu_dev *d, char *err, size_t errlen);
/* Descriptors, algorithm and workspace size for c (after dnn_conv_init).
 * Returns 0, or -1 with the reason (c then holds no descriptor). */
int dnn_conv_setup(struct dnn_handle *h, struct dnn_conv *c, char *err, size_t errlen);
/* y = conv(x, w) (+ bias), asynchronous on the legacy default stream. */
int dnn_conv_run(struct dnn_handle *h, const struct dnn_conv *c, char *err, size_t errlen);
/* Destroys c's descriptors (safe on a zeroed or already released c). */
void dnn_conv_release(struct dnn_conv *c);
void dnn_destroy(struct dnn_handle *h);

/* In a forked child: the loader's lock starts unlocked (gpu.c, atfork). */
void dnn_after_fork(void);

#endif
