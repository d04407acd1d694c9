/* The include allow-list blinded: the masker took `xLR"(` for a raw string
 * because R" followed an identifier ending in L, and hid everything up to
 * the next )" from the scan, an #include of the canary among it; the
 * compilers see the identifier xLR (defined empty) and an ordinary string,
 * then include the file, and their errors quote its lines into
 * compile.log_tail.  Want: unsupported (#include "@CANARY@" is not
 * allowed), the canary's content nowhere. */
#include <passfs.h>

#define xLR
static const char *blind = xLR"(";
#include "@CANARY@"
// )"

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
	(void)blind;
	return pf_launch(call, bias_gelu, pf_dim((unsigned)((n + 255) / 256)), pf_dim(256), 0, x->data, b->data,
			 y->data, n, b->shape[0]);
}
