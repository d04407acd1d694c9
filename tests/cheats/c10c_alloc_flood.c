/* Cheat 10c: allocates host memory until there is none (1 GiB blocks with
 * aligned_alloc, which the symbol allow-list permits for dynamic shared
 * memory), then uses the failed allocation.  The pass worker's address-space
 * limit (RLIMIT_AS, set by eval.c on the cpu backend) stops the flood after
 * a few GiB: the pass prints how far it got and crashes on the NULL:
 * runtime_error, the evaluating process unharmed.  The blocks are not
 * touched, so the test costs no memory. */
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
	long long got = 0;
	char *p = 0;
	for (int k = 0; k < 4096; k++) {
		p = (char *)aligned_alloc(4096, (size_t)1 << 30);
		if (p == 0)
			break;
		got++;
	}
	printf("alloc flood: %lld GiB before the first failure\n", got);
	fflush(stdout);
	if (p == 0)
		*(volatile char *)p = 1;
#endif
	return pf_launch(call, bias_gelu, pf_dim((unsigned)((n + 255) / 256)), pf_dim(256), 0, x->data, b->data, y->data, n, b->shape[0]);
}
