/* gpt2_bias_gelu_tanh: bias add + gelu(tanh) in one kernel (bench/fusion.sh). */
#include <passfs.h>

/* Each thread takes VEC consecutive elements (what a GPU kernel does with
 * 16-byte vector loads); the broadcast index is computed once per thread. */
#define VEC 8

__device__ __forceinline__ float ld(const float *p, long long i) { return p[i]; }
__device__ __forceinline__ float ld(const __half *p, long long i) { return __half2float(p[i]); }
__device__ __forceinline__ float ld(const __nv_bfloat16 *p, long long i) { return __bfloat162float(p[i]); }
__device__ __forceinline__ void st(float *p, long long i, float v) { p[i] = v; }
__device__ __forceinline__ void st(__half *p, long long i, float v) { p[i] = __float2half(v); }
__device__ __forceinline__ void st(__nv_bfloat16 *p, long long i, float v) { p[i] = __float2bfloat16(v); }
/* Eager rounds every op's result to the dtype: so does the fused kernel. */
template <typename T> __device__ __forceinline__ float rt(float v)
{
	T r;
	st(&r, 0, v);
	return ld(&r, 0);
}

static pf_dim3 grid_for(long long n) { return pf_dim((unsigned)((n + 256LL * VEC - 1) / (256LL * VEC))); }

__device__ __forceinline__ float gelu_tanh(float v)
{
	float u = 0.79788456080286535588f * (v + 0.044715f * v * v * v);
	return 0.5f * v * (1.0f + tanhf(u));
}

template <typename T>
__global__ void bias_gelu_tanh(const T *x, const T *b, T *y, long long n, long long c)
{
	long long i0 = ((long long)blockIdx.x * blockDim.x + threadIdx.x) * VEC;
	if (i0 >= n)
		return;
	/* the broadcast index: a 32-bit remainder where the sizes allow
	 * (a 64-bit division costs several times more, on a GPU too) */
	long long j = n <= 0xffffffffLL ? (long long)((unsigned)i0 % (unsigned)c) : i0 % c;
	int m = n - i0 < VEC ? (int)(n - i0) : VEC;
	if (m == VEC && j + VEC <= c) {
		/* the common case: a whole vector, its bias in one row */
#pragma unroll
		for (int e = 0; e < VEC; e++)
			st(y, i0 + e, gelu_tanh(rt<T>(ld(x, i0 + e) + ld(b, j + e))));
		return;
	}
	for (int e = 0; e < m; e++) {
		st(y, i0 + e, gelu_tanh(rt<T>(ld(x, i0 + e) + ld(b, j))));
		if (++j == c)
			j = 0;
	}
}

PASS_REPLACEMENT(pf_call *call)
{
	const pf_tensor *x = pf_in(call, 0), *b = pf_in(call, 1);
	pf_tensor *y = pf_out(call, 0);
	long long n = pf_numel(y), c = b->shape[0];
	pf_dim3 g = grid_for(n), blk = pf_dim(256);
	switch (y->dtype) {
	case PF_F32:
		return pf_launch(call, bias_gelu_tanh<float>, g, blk, 0, x->data, b->data, y->data, n, c);
	case PF_F16:
		return pf_launch(call, bias_gelu_tanh<__half>, g, blk, 0, x->data, b->data, y->data, n, c);
	case PF_BF16:
		return pf_launch(call, bias_gelu_tanh<__nv_bfloat16>, g, blk, 0, x->data, b->data, y->data, n, c);
	}
	return pf_unsupported(call, "only float32, float16 and bfloat16");
}
