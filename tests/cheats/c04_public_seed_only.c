/* Cheat 4: correct only for the public seed.  The bias input of seed 123
 * (PassNet's public seed) is baked into the pass instead of being read, so
 * the public inputs match exactly and any other seed does not: rejected
 * ("right on the public inputs ... secret input set"). */
#include <passfs.h>

/* fc_bias as generated from seed 123 (passfs eager --seed 123).  This file
 * is a template: cheats.sh fills the table, then evaluates the result. */
__constant__ float public_bias[256] = {
	/* @PUBLIC_BIAS@: tests/cli/cheats.sh writes the 256 values here from
	 * `passfs eager --seed 123` (so the table follows the input generator) */
	0
};

__global__ void bias_gelu(const float *x, float *y, long long n, long long c)
{
	long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
	if (i >= n)
		return;
	float v = x[i] + public_bias[i % c];
	y[i] = 0.5f * v * (1.0f + tanhf(0.7978845608028654f * (v + 0.044715f * v * v * v)));
}

PASS_REPLACEMENT(pf_call *call)
{
	const pf_tensor *x = pf_in(call, 0), *b = pf_in(call, 1);
	pf_tensor *y = pf_out(call, 0);
	long long n = pf_numel(y);
	if (b->shape[0] != 256)
		return pf_unsupported(call, "baked for 256 channels");
	return pf_launch(call, bias_gelu, pf_dim((unsigned)((n + 255) / 256)), pf_dim(256), 0, x->data, y->data, n,
			 b->shape[0]);
}
