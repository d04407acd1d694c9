/* T5 RMSNorm fused: one block of 256 threads per row; a block reduction of
 * the sum of squares (warp shuffles, then shared memory), then the scaled
 * row, rounded to the dtype before the weight as eager does. */
#include <passfs.h>

__device__ inline float ld(const float *p, long long i) { return p[i]; }
__device__ inline float ld(const __half *p, long long i) { return __half2float(p[i]); }
__device__ inline float ld(const __nv_bfloat16 *p, long long i) { return __bfloat162float(p[i]); }
__device__ inline void st(float *p, long long i, float v) { p[i] = v; }
__device__ inline void st(__half *p, long long i, float v) { p[i] = __float2half(v); }
__device__ inline void st(__nv_bfloat16 *p, long long i, float v) { p[i] = __float2bfloat16(v); }

template <typename T>
__global__ void rmsnorm(const T *x, const T *w, T *y, int cols)
{
	__shared__ float part[8];
	const T *row = x + (long long)blockIdx.x * cols;
	T *out = y + (long long)blockIdx.x * cols;
	float s = 0.0f;
	for (int i = threadIdx.x; i < cols; i += blockDim.x) {
		float v = ld(row, i);
		s += v * v;
	}
	for (int off = 16; off > 0; off >>= 1)
		s += __shfl_down_sync(0xffffffffu, s, off);
	if ((threadIdx.x & 31) == 0)
		part[threadIdx.x >> 5] = s;
	__syncthreads();
	if (threadIdx.x < 32) {
		s = threadIdx.x < (blockDim.x >> 5) ? part[threadIdx.x] : 0.0f;
		for (int off = 16; off > 0; off >>= 1)
			s += __shfl_down_sync(0xffffffffu, s, off);
		if (threadIdx.x == 0)
			part[0] = rsqrtf(s / (float)cols + 1e-6f);
	}
	__syncthreads();
	float r = part[0];
	for (int i = threadIdx.x; i < cols; i += blockDim.x) {
		T h;
		st(&h, 0, ld(row, i) * r);
		st(out, i, ld(w, i) * ld(&h, 0));
	}
}

PASS_REPLACEMENT(pf_call *call)
{
	const pf_tensor *x = pf_in(call, 0), *w = pf_in(call, 1);
	pf_tensor *y = pf_out(call, 0);
	int cols = (int)x->shape[x->ndim - 1];
	unsigned rows = (unsigned)(pf_numel(x) / cols);
	switch (y->dtype) {
	case PF_F32:
		return pf_launch(call, rmsnorm<float>, pf_dim(rows), pf_dim(256), 0, x->data, w->data, y->data, cols);
	case PF_F16:
		return pf_launch(call, rmsnorm<__half>, pf_dim(rows), pf_dim(256), 0, x->data, w->data, y->data, cols);
	case PF_BF16:
		return pf_launch(call, rmsnorm<__nv_bfloat16>, pf_dim(rows), pf_dim(256), 0, x->data, w->data, y->data,
				 cols);
	}
	return pf_unsupported(call, "only float32, float16 and bfloat16");
}
