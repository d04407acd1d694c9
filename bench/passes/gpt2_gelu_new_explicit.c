/* gpt2_gelu_new_explicit: bias add, pow, mul, add, mul, tanh, add, mul, mul in one kernel, rounding each result to the dtype as eager does (bench/fusion.sh). */
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

template <typename T>
__global__ void gelu_new(const T *x, const T *b, T *y, long long n, long long c)
{
	long long i0 = ((long long)blockIdx.x * blockDim.x + threadIdx.x) * VEC;
	if (i0 >= n)
		return;
	long long j = i0 % c;
	int m = n - i0 < VEC ? (int)(n - i0) : VEC;
	for (int e = 0; e < m; e++) {
		float v = rt<T>(ld(x, i0 + e) + ld(b, j));
		float t1 = rt<T>(v * v * v), t2 = rt<T>(0.044715f * t1), t3 = rt<T>(v + t2);
		float t4 = rt<T>(0.7978845608028654f * t3), t5 = rt<T>(tanhf(t4)), t6 = rt<T>(1.0f + t5);
		float t7 = rt<T>(0.5f * v);
		st(y, i0 + e, t7 * t6);
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
		return pf_launch(call, gelu_new<float>, g, blk, 0, x->data, b->data, y->data, n, c);
	case PF_F16:
		return pf_launch(call, gelu_new<__half>, g, blk, 0, x->data, b->data, y->data, n, c);
	case PF_BF16:
		return pf_launch(call, gelu_new<__nv_bfloat16>, g, blk, 0, x->data, b->data, y->data, n, c);
	}
	return pf_unsupported(call, "only float32, float16 and bfloat16");
}
