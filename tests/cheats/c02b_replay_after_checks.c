/* Cheat 2b: computes honestly on the first two calls (the check runs), then
 * replays the first call's outputs on every later call (the timed runs),
 * betting that timing reuses the public inputs.  Timed trials get fresh
 * rotated inputs and are verified: rejected ("timed run ... wrong"). */
#include <passfs.h>

__global__ void bias_gelu(const float *x, const float *bias, float *y, long long n, long long c)
{
	long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
	if (i >= n)
		return;
	float v = x[i] + bias[i % c];
	y[i] = 0.5f * v * (1.0f + tanhf(0.7978845608028654f * (v + 0.044715f * v * v * v)));
}

#ifdef __GNUC__
static int calls;
static float *first;
#endif

PASS_REPLACEMENT(pf_call *call)
{
	const pf_tensor *x = pf_in(call, 0), *b = pf_in(call, 1);
	pf_tensor *y = pf_out(call, 0);
	long long n = pf_numel(y);
#ifdef __GNUC__
	if (++calls > 2 && first) {
		memcpy(y->data, first, (size_t)n * sizeof(float));
		return PF_OK;
	}
#endif
	int rc = pf_launch(call, bias_gelu, pf_dim((unsigned)((n + 255) / 256)), pf_dim(256), 0, x->data, b->data, y->data, n, b->shape[0]);
#ifdef __GNUC__
	if (rc == PF_OK && calls == 1) {
		first = (float *)aligned_alloc(64, ((size_t)n * sizeof(float) + 63) / 64 * 64);
		memcpy(first, y->data, (size_t)n * sizeof(float));
	}
#endif
	return rc;
}
