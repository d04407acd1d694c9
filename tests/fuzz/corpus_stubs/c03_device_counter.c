/* Cheat 3: counts calls in a __device__ global (state that survives between
 * calls; the same trick caches results).  Rejected by the device-code scan,
 * naming the line of the atomicAdd. */
#include <passfs.h>

__device__ unsigned int calls;

__global__ void bias_gelu(const float *x, const float *bias, float *y, long long n, long long c)
{
	long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
	if (i >= n)
		return;
	if (i == 0)
		atomicAdd(&calls, 1u);
	float v = x[i] + bias[i % c];
	y[i] = 0.5f * v * (1.0f + tanhf(0.7978845608028654f * (v + 0.044715f * v * v * v)));
}

PASS_REPLACEMENT(pf_call *call)
{
	const pf_tensor *x = pf_in(call, 0), *b = pf_in(call, 1);
	pf_tensor *y = pf_out(call, 0);
	long long n = pf_numel(y);
	return pf_launch(call, bias_gelu, pf_dim((unsigned)((n + 255) / 256)), pf_dim(256), 0, x->data, b->data, y->data, n, b->shape[0]);
}
