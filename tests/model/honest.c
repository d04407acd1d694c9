/* The honest twin of the model cheats: a bias add in one kernel,
 * a thread an element.  Each cheat here must score no more than this. */
#include <passfs.h>

__global__ void bias_add(const float *x, const float *bias, float *y, long long n, long long c)
{
	long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
	if (i >= n)
		return;
	y[i] = x[i] + bias[i % c];
}

PASS_REPLACEMENT(pf_call *call)
{
	const pf_tensor *x = pf_in(call, 0), *b = pf_in(call, 1);
	pf_tensor *y = pf_out(call, 0);
	if (y->dtype != PF_F32)
		return pf_unsupported(call, "only float32");
	long long n = pf_numel(y);
	return pf_launch(call, bias_add, pf_dim((unsigned)((n + 255) / 256)), pf_dim(256), 0, x->data, b->data,
			 y->data, n, b->shape[0]);
}
