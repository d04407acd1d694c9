/* pf_launch inside a templated host function: run<T> launches bias_gelu<T>
 * for each dtype (verdict ok).  The kernel argument names a template
 * parameter, which means nothing at file scope: the pass compiler finds the
 * kernels through the instantiations, not through a name expression. */
#include <passfs.h>

__device__ inline float ld(const float *p, long long i) { return p[i]; }
__device__ inline float ld(const __half *p, long long i) { return __half2float(p[i]); }
__device__ inline float ld(const __nv_bfloat16 *p, long long i) { return __bfloat162float(p[i]); }
__device__ inline void st(float *p, long long i, float v) { p[i] = v; }
__device__ inline void st(__half *p, long long i, float v) { p[i] = __float2half(v); }
__device__ inline void st(__nv_bfloat16 *p, long long i, float v) { p[i] = __float2bfloat16(v); }

template <typename T>
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
	float u = 0.7978845608028654f * (v + 0.044715f * v * v * v);
	st(y, i, 0.5f * v * (1.0f + tanhf(u)));
}

template <typename T>
static int run(pf_call *call, const pf_tensor *x, const pf_tensor *b, pf_tensor *y)
{
	long long n = pf_numel(y);
	return pf_launch(call, bias_gelu<T>, pf_dim((unsigned)((n + 255) / 256)), pf_dim(256), 0, x->data,
			 b->data, y->data, n, b->shape[0]);
}

PASS_REPLACEMENT(pf_call *call)
{
	const pf_tensor *x = pf_in(call, 0), *b = pf_in(call, 1);
	pf_tensor *y = pf_out(call, 0);
	switch (y->dtype) {
	case PF_F32:
		return run<float>(call, x, b, y);
	case PF_F16:
		return run<__half>(call, x, b, y);
	case PF_BF16:
		return run<__nv_bfloat16>(call, x, b, y);
	}
	return pf_unsupported(call, "only float32, float16 and bfloat16");
}
