/* Spins forever in the kernel (verdict timeout; the machine stays usable).
 * The loop reads the input through a volatile pointer: a loop over a
 * volatile local was compiled away by NVRTC on an H200 (the kernel finished
 * and the verdict was mismatch), a volatile load of memory cannot be. */
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
	volatile const unsigned char *p = (volatile const unsigned char *)x;
	while (p[0] == p[0])
		;
	st(y, i, ld(x, i));
}

PASS_REPLACEMENT(pf_call *call)
{
	const pf_tensor *x = pf_in(call, 0), *b = pf_in(call, 1);
	pf_tensor *y = pf_out(call, 0);
	long long n = pf_numel(y), c = b->shape[0];
	pf_dim3 grid = pf_dim((unsigned)((n + 255) / 256)), block = pf_dim(256);

	switch (y->dtype) {
	case PF_F32:
		return pf_launch(call, bias_gelu<float>, grid, block, 0, x->data, b->data, y->data, n, c);
	case PF_F16:
		return pf_launch(call, bias_gelu<__half>, grid, block, 0, x->data, b->data, y->data, n, c);
	case PF_BF16:
		return pf_launch(call, bias_gelu<__nv_bfloat16>, grid, block, 0, x->data, b->data, y->data, n, c);
	}
	return pf_unsupported(call, "only float32, float16 and bfloat16");
}
