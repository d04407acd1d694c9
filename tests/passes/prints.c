/* Prints from a kernel and from the replacement on every call (f32 only;
 * the other variants decline): tests/cli/eval_printf.sh finds both lines,
 * with the variant's element count, in each f32 variant's log_tail. */
#include <passfs.h>

__global__ void copy_gelu(const float *x, const float *b, float *y, long long n, long long c)
{
	long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
	if (i == 0)
		printf("kernel says hello n=%lld\n", n);
	if (i >= n)
		return;
	float v = x[i] + b[i % c];
	y[i] = 0.5f * v * (1.0f + tanhf(0.7978845608028654f * (v + 0.044715f * v * v * v)));
}

PASS_REPLACEMENT(pf_call *call)
{
	const pf_tensor *x = pf_in(call, 0), *b = pf_in(call, 1);
	pf_tensor *y = pf_out(call, 0);
	if (y->dtype != PF_F32)
		return pf_unsupported(call, "f32 only");
	long long n = pf_numel(y), c = b->shape[0];
	printf("replacement says hello numel=%lld\n", n);
	return pf_launch(call, copy_gelu, pf_dim((unsigned)((n + 255) / 256)), pf_dim(256), 0, x->data, b->data, y->data, n, c);
}
