/* Cheat 10b: asks pf_scratch for far more than any device has (64 GiB, then
 * 300 small blocks), ignoring the NULLs.  pf_scratch refuses past its limit
 * (4 GiB or 256 blocks per call) and the refusal sticks to the call:
 * runtime_error with pf_scratch's message, nothing allocated. */
#include <passfs.h>

__global__ void bias_gelu(const float *x, const float *bias, float *y, long long n, long long c)
{
	long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
	if (i >= n)
		return;
	float v = x[i] + bias[i % c];
	y[i] = 0.5f * v * (1.0f + tanhf(0.7978845608028654f * (v + 0.044715f * v * v * v)));
}

PASS_REPLACEMENT(pf_call *call)
{
	const pf_tensor *x = pf_in(call, 0), *b = pf_in(call, 1);
	pf_tensor *y = pf_out(call, 0);
	long long n = pf_numel(y);
	void *big = pf_scratch(call, (size_t)64 << 30);
	for (int k = 0; k < 300; k++)
		(void)pf_scratch(call, 1024);
	(void)big;
	return pf_launch(call, bias_gelu, pf_dim((unsigned)((n + 255) / 256)), pf_dim(256), 0, x->data, b->data, y->data, n, b->shape[0]);
}
