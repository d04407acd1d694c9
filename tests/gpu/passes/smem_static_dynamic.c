/* Correct everywhere: bias add + gelu(tanh) with the bias staged in 8 KiB of
 * static shared memory and each value passed through 44 KiB of dynamic
 * shared memory.  Together 52 KiB: more than the 48 KiB a launch gets without
 * an opt-in, and the dynamic part alone is under 48 KiB - so the cuda
 * backend must count the static part and raise the kernel's limit
 * (cuFuncSetAttribute) itself.  Verdict ok on both backends. */
#include <passfs.h>

#define BIAS_MAX 2048                   /* 8 KiB of float: static */
#define DYN_BYTES (44 * 1024)           /* dynamic */

__device__ inline float ld(const float *p, long long i) { return p[i]; }
__device__ inline float ld(const __half *p, long long i) { return __half2float(p[i]); }
__device__ inline float ld(const __nv_bfloat16 *p, long long i) { return __bfloat162float(p[i]); }
__device__ inline void st(float *p, long long i, float v) { p[i] = v; }
__device__ inline void st(__half *p, long long i, float v) { p[i] = __float2half(v); }
__device__ inline void st(__nv_bfloat16 *p, long long i, float v) { p[i] = __float2bfloat16(v); }

template <typename T>
__global__ void bias_gelu_smem(const T *x, const T *bias, T *y, long long n, int c)
{
	__shared__ float sb[BIAS_MAX];
	extern __shared__ float dyn[];
	for (int j = threadIdx.x; j < c; j += blockDim.x)
		sb[j] = ld(bias, j);
	long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
	/* the last float of the dynamic area too, so all of it is asked for */
	int slot = threadIdx.x == 0 ? DYN_BYTES / 4 - 1 : threadIdx.x;
	dyn[slot] = i < n ? ld(x, i) : 0.0f;
	__syncthreads();
	if (i >= n)
		return;
	float v = dyn[slot] + sb[i % c];
	T r;
	st(&r, 0, v);
	v = ld(&r, 0);
	float u = 0.7978845608028654f * (v + 0.044715f * v * v * v);
	st(y, i, 0.5f * v * (1.0f + tanhf(u)));
}

PASS_REPLACEMENT(pf_call *call)
{
	const pf_tensor *x = pf_in(call, 0), *b = pf_in(call, 1);
	pf_tensor *y = pf_out(call, 0);
	long long n = pf_numel(y);
	int c = (int)b->shape[0];
	if (c > BIAS_MAX)
		return pf_unsupported(call, "bias longer than the static tile");
	long long grid = (n + 255) / 256;
	switch (y->dtype) {
	case PF_F32:
		return pf_launch(call, bias_gelu_smem<float>, grid, 256, DYN_BYTES, x->data, b->data, y->data, n, c);
	case PF_F16:
		return pf_launch(call, bias_gelu_smem<__half>, grid, 256, DYN_BYTES, x->data, b->data, y->data, n, c);
	case PF_BF16:
		return pf_launch(call, bias_gelu_smem<__nv_bfloat16>, grid, 256, DYN_BYTES, x->data, b->data, y->data,
				 n, c);
	}
	return pf_unsupported(call, "only float32, float16 and bfloat16");
}
