/* The "escaping work" cheat: the replacement launches a slow (about 3 ms),
 * correct kernel and returns at once, before the GPU has done the work.  A
 * harness that stops its clock when the call returns, or syncs only its own
 * stream, would time ~10 us and report a huge speedup.  passfs syncs the whole
 * context before stopping the clock (and CUPTI counts kernels on every stream),
 * so the verdict is ok with speedup < 1 and pass_ms >= the kernel's time.
 * (A pass has no API to create streams: returning early is the escape route
 * open to it.) */
#include <passfs.h>

__device__ inline float ld(const float *p, long long i) { return p[i]; }
__device__ inline float ld(const __half *p, long long i) { return __half2float(p[i]); }
__device__ inline float ld(const __nv_bfloat16 *p, long long i) { return __bfloat162float(p[i]); }
__device__ inline void st(float *p, long long i, float v) { p[i] = v; }
__device__ inline void st(__half *p, long long i, float v) { p[i] = __float2half(v); }
__device__ inline void st(__nv_bfloat16 *p, long long i, float v) { p[i] = __float2bfloat16(v); }

template <typename T>
__global__ void slow_bias_gelu(const T *x, const T *bias, T *y, long long n, long long c, int spin)
{
	long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
	if (i >= n)
		return;
	float v = ld(x, i) + ld(bias, i % c);
	/* a dependent chain the compiler cannot drop: ~4 cycles per step */
	float acc = v;
	for (int k = 0; k < spin; k++)
		acc = acc * 0.999999f + 1e-7f;
	T r;
	st(&r, 0, v);
	v = ld(&r, 0);
	float u = 0.7978845608028654f * (v + 0.044715f * v * v * v);
	st(y, i, 0.5f * v * (1.0f + tanhf(u)) + (acc == 1234.5f ? 1.0f : 0.0f));
}

PASS_REPLACEMENT(pf_call *call)
{
	const pf_tensor *x = pf_in(call, 0), *b = pf_in(call, 1);
	pf_tensor *y = pf_out(call, 0);
	long long n = pf_numel(y), c = b->shape[0];
	pf_dim3 grid = pf_dim((unsigned)((n + 255) / 256)), block = pf_dim(256);
	int spin = 1000000;
	switch (y->dtype) {
	case PF_F32:
		return pf_launch(call, slow_bias_gelu<float>, grid, block, 0, x->data, b->data, y->data, n, c, spin);
	case PF_F16:
		return pf_launch(call, slow_bias_gelu<__half>, grid, block, 0, x->data, b->data, y->data, n, c, spin);
	case PF_BF16:
		return pf_launch(call, slow_bias_gelu<__nv_bfloat16>, grid, block, 0, x->data, b->data, y->data, n, c,
				 spin);
	}
	return pf_unsupported(call, "only float32, float16 and bfloat16");
}
