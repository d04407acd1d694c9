/* Host and device disagree on a kernel parameter's type: the scale is a
 * double in the device compile (NVRTC defines __CUDACC_RTC__) and a float in
 * the host compile, so pf_launch packs 4 bytes where the kernel reads 8.  The
 * cuda backend refuses the launch, naming the kernel and the argument, from
 * the device's parameter sizes (cuFuncGetParamInfo); without that check the
 * kernel would read 4 bytes past the argument. */
#include <passfs.h>

#ifdef __CUDACC_RTC__
typedef double scale_t;
#else
typedef float scale_t;
#endif

__device__ inline float ld(const float *p, long long i) { return p[i]; }
__device__ inline float ld(const __half *p, long long i) { return __half2float(p[i]); }
__device__ inline float ld(const __nv_bfloat16 *p, long long i) { return __bfloat162float(p[i]); }
__device__ inline void st(float *p, long long i, float v) { p[i] = v; }
__device__ inline void st(__half *p, long long i, float v) { p[i] = __float2half(v); }
__device__ inline void st(__nv_bfloat16 *p, long long i, float v) { p[i] = __float2bfloat16(v); }

template <typename T>
__global__ void bias_gelu(const T *x, const T *bias, T *y, long long n, long long c, scale_t scale)
{
	long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
	if (i >= n)
		return;
	float v = ld(x, i) + ld(bias, i % c);
	T r;
	st(&r, 0, v);
	v = ld(&r, 0);
	float u = 0.7978845608028654f * (v + 0.044715f * v * v * v);
	st(y, i, (float)scale * 0.5f * v * (1.0f + tanhf(u)));
}

PASS_REPLACEMENT(pf_call *call)
{
	const pf_tensor *x = pf_in(call, 0), *b = pf_in(call, 1);
	pf_tensor *y = pf_out(call, 0);
	long long n = pf_numel(y), c = b->shape[0];
	pf_dim3 grid = pf_dim((unsigned)((n + 255) / 256)), block = pf_dim(256);
	scale_t one = 1;

	switch (y->dtype) {
	case PF_F32:
		return pf_launch(call, bias_gelu<float>, grid, block, 0, x->data, b->data, y->data, n, c, one);
	case PF_F16:
		return pf_launch(call, bias_gelu<__half>, grid, block, 0, x->data, b->data, y->data, n, c, one);
	case PF_BF16:
		return pf_launch(call, bias_gelu<__nv_bfloat16>, grid, block, 0, x->data, b->data, y->data, n, c,
				 one);
	}
	return pf_unsupported(call, "only float32, float16 and bfloat16");
}
