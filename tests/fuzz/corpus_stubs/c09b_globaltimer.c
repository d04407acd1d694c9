/* Cheat 9b: reads %globaltimer (the GPU's nanosecond clock) through inline
 * PTX.  On the cpu backend inline PTX is refused by the source scan
 * ("needs a GPU", verdict unsupported, score b); on the cuda backend the
 * device-code scan rejects the %globaltimer read: a GPU item for
 * tests/gpu/check.sh. */
#include <passfs.h>

__global__ void bias_gelu(const float *x, const float *bias, float *y, long long n, long long c)
{
	long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
	if (i >= n)
		return;
	unsigned long long t;
	asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
	float v = x[i] + bias[i % c];
	y[i] = 0.5f * v * (1.0f + tanhf(0.7978845608028654f * (v + 0.044715f * v * v * v)));
	if (t == 0)
		y[i] = 0.0f;
}

PASS_REPLACEMENT(pf_call *call)
{
	const pf_tensor *x = pf_in(call, 0), *b = pf_in(call, 1);
	pf_tensor *y = pf_out(call, 0);
	long long n = pf_numel(y);
	return pf_launch(call, bias_gelu, pf_dim((unsigned)((n + 255) / 256)), pf_dim(256), 0, x->data, b->data, y->data, n, b->shape[0]);
}
