/* Cheat 8: leaves work running when the replacement returns.  The outputs
 * are written first, then a second kernel keeps the device busy (here a
 * long dependent loop; on a GPU it would overlap the next call), hoping the
 * timer stops when the replacement returns.  The cpu backend runs launches
 * synchronously, so the work is timed (pass_ms includes it); on the cuda
 * backend the worker's context-wide sync must catch it: a GPU item for
 * tests/gpu/check.sh (docs/integrity.md). */
#include <passfs.h>

__global__ void bias_gelu(const float *x, const float *bias, float *y, long long n, long long c)
{
	long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
	if (i >= n)
		return;
	float v = x[i] + bias[i % c];
	y[i] = 0.5f * v * (1.0f + tanhf(0.7978845608028654f * (v + 0.044715f * v * v * v)));
}

__global__ void busy(float *sink, long long iters)
{
	float a = 1.0f;
	for (long long k = 0; k < iters; k++)
		a = a * 1.0000001f + 1e-7f;
	if (a == 12345.0f)
		sink[0] = a;    /* never true; keeps the loop */
}

PASS_REPLACEMENT(pf_call *call)
{
	const pf_tensor *x = pf_in(call, 0), *b = pf_in(call, 1);
	pf_tensor *y = pf_out(call, 0);
	long long n = pf_numel(y);
	int rc = pf_launch(call, bias_gelu, pf_dim((unsigned)((n + 255) / 256)), pf_dim(256), 0, x->data, b->data, y->data, n, b->shape[0]);
	if (rc != PF_OK)
		return rc;
	void *sink = pf_scratch(call, 64);
	if (sink == 0)
		return PF_ERR_SCRATCH;
	/* ~20 ms of one thread's dependent multiply-adds */
	return pf_launch(call, busy, pf_dim(1), pf_dim(1), 0, sink, 20000000LL);
}
