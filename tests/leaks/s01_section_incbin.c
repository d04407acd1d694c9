/* Assembly without asm: a newline inside __attribute__((section("..."))) goes
 * verbatim into g++'s assembly output, so `.incbin "@CANARY@"` embeds the
 * canary file in the host object under a symbol of the pass's choosing; the
 * replacement prints it, and the print lands in result.json's log_tail.
 * Before: verdict ok, normal score, the file's bytes in the result.  Want:
 * compile_error naming the line (the scan refuses the attribute). */
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
__attribute__((section(".rodata\n.globl leak_begin\nleak_begin:\n.incbin \"@CANARY@\"\n.byte 0\n#"), used))
static const char anchor[1] = {0};
extern "C" const char leak_begin[];
#endif

PASS_REPLACEMENT(pf_call *call)
{
	const pf_tensor *x = pf_in(call, 0), *b = pf_in(call, 1);
	pf_tensor *y = pf_out(call, 0);
	long long n = pf_numel(y);
#ifdef __GNUC__
	printf("leak: %s\n", leak_begin);
#endif
	return pf_launch(call, bias_gelu, pf_dim((unsigned)((n + 255) / 256)), pf_dim(256), 0, x->data, b->data,
			 y->data, n, b->shape[0]);
}
