/* Kernels picked from tables of kernel pointers (verdict ok): two
 * equivalent forms of the kernel per dtype, the launch picks one by the
 * batch size.  kf32[i] is no name: the launch finds the kernel by its
 * address. */
#include <passfs.h>

__device__ inline float ld(const float *p, long long i) { return p[i]; }
__device__ inline float ld(const __half *p, long long i) { return __half2float(p[i]); }
__device__ inline float ld(const __nv_bfloat16 *p, long long i) { return __bfloat162float(p[i]); }
__device__ inline void st(float *p, long long i, float v) { p[i] = v; }
__device__ inline void st(__half *p, long long i, float v) { p[i] = __float2half(v); }
__device__ inline void st(__nv_bfloat16 *p, long long i, float v) { p[i] = __float2bfloat16(v); }

template <typename T, int FORM>
__global__ void bias_gelu(const T *x, const T *bias, T *y, long long n, long long c)
{
	long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
	if (i >= n)
		return;
	/* Eager rounds the sum to the dtype before gelu: do the same. */
	float v = ld(x, i) + ld(bias, i % c);
	T r;
	st(&r, 0, v);
	v = ld(&r, 0);
	if (FORM == 0)
		st(y, i, 0.5f * v * (1.0f + tanhf(0.7978845608028654f * (v + 0.044715f * v * v * v))));
	else
		st(y, i, v * (0.5f + 0.5f * tanhf(0.7978845608028654f * v * (1.0f + 0.044715f * v * v))));
}

static void (*const kf32[])(const float *, const float *, float *, long long, long long) = {
	bias_gelu<float, 0>, bias_gelu<float, 1>
};
static void (*const kf16[])(const __half *, const __half *, __half *, long long, long long) = {
	bias_gelu<__half, 0>, bias_gelu<__half, 1>
};
static void (*const kbf16[])(const __nv_bfloat16 *, const __nv_bfloat16 *, __nv_bfloat16 *, long long,
			     long long) = {bias_gelu<__nv_bfloat16, 0>, bias_gelu<__nv_bfloat16, 1>};

PASS_REPLACEMENT(pf_call *call)
{
	const pf_tensor *x = pf_in(call, 0), *b = pf_in(call, 1);
	pf_tensor *y = pf_out(call, 0);
	long long n = pf_numel(y), c = b->shape[0];
	pf_dim3 grid = pf_dim((unsigned)((n + 255) / 256)), block = pf_dim(256);
	int i = x->shape[0] == 1;       /* one form for batch 1, the other for the rest */

	switch (y->dtype) {
	case PF_F32:
		return pf_launch(call, kf32[i], grid, block, 0, x->data, b->data, y->data, n, c);
	case PF_F16:
		return pf_launch(call, kf16[i], grid, block, 0, x->data, b->data, y->data, n, c);
	case PF_BF16:
		return pf_launch(call, kbf16[i], grid, block, 0, x->data, b->data, y->data, n, c);
	}
	return pf_unsupported(call, "only float32, float16 and bfloat16");
}
