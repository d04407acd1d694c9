/* llama_swiglu: silu(gate) * up in one kernel (bench/fusion.sh). */
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
__global__ void swiglu(const T *g, const T *u, T *y, long long n)
{
	long long i0 = ((long long)blockIdx.x * blockDim.x + threadIdx.x) * VEC;
	if (i0 >= n)
		return;
	int m = n - i0 < VEC ? (int)(n - i0) : VEC;
	for (int e = 0; e < m; e++) {
		float a = ld(g, i0 + e);
		float s = rt<T>(a / (1.0f + expf(-a)));
		st(y, i0 + e, s * ld(u, i0 + e));
	}
}

PASS_REPLACEMENT(pf_call *call)
{
	const pf_tensor *g = pf_in(call, 0), *u = pf_in(call, 1);
	pf_tensor *y = pf_out(call, 0);
	long long n = pf_numel(y);
	pf_dim3 gr = grid_for(n), blk = pf_dim(256);
	switch (y->dtype) {
	case PF_F32:
		return pf_launch(call, swiglu<float>, gr, blk, 0, g->data, u->data, y->data, n);
	case PF_F16:
		return pf_launch(call, swiglu<__half>, gr, blk, 0, g->data, u->data, y->data, n);
	case PF_BF16:
		return pf_launch(call, swiglu<__nv_bfloat16>, gr, blk, 0, g->data, u->data, y->data, n);
	}
	return pf_unsupported(call, "only float32, float16 and bfloat16");
}
