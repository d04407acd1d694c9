/* s01 with the attribute's name made by token pasting, so the source scan
 * never sees the word `section`: pf_emu.h poisons the name for the host
 * compile, and g++ stops at it.  Want: compile_error ("poisoned"), the
 * canary's content nowhere. */
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
#define PF_PASTE(a, b) a##b
#define PF_WHERE PF_PASTE(sect, ion)
__attribute__((PF_WHERE(".rodata\n.globl leak_begin\nleak_begin:\n.incbin \"@CANARY@\"\n.byte 0\n#"), used))
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
