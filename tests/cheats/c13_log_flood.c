/* Limit: prints about 2 MiB on its first call (a pass's stdout and stderr go
 * to a pipe the evaluator drains).  The log kept is capped (16 KiB in
 * memory, the last 4 KiB in result.json, marked log_truncated); the pass is otherwise correct, so
 * the verdict is ok and the evaluation is not held up. */
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
#ifdef __GNUC__
	static int calls;
	if (calls++ == 0)
		for (int k = 0; k < 32768; k++)
			printf("log flood line %6d: ................................................\n", k);
#endif
	return pf_launch(call, bias_gelu, pf_dim((unsigned)((n + 255) / 256)), pf_dim(256), 0, x->data, b->data,
			 y->data, n, b->shape[0]);
}
