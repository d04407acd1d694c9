/* Cheat 7d: inline asm spelled by token pasting, so the source scan never
 * sees the word asm: pf_emu.h makes asm/__asm__/__asm macros on the cpu
 * backend, so the pasted keyword is a compile error there (and on a GPU
 * the sandbox would stop the syscall). */
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
/* NVRTC does not define __GNUC__: only the host compiler sees this. */
#define PF_CHEAT_CAT(a, b) a##b
#endif

PASS_REPLACEMENT(pf_call *call)
{
	const pf_tensor *x = pf_in(call, 0), *b = pf_in(call, 1);
	pf_tensor *y = pf_out(call, 0);
	long long n = pf_numel(y);
#ifdef __GNUC__
	long ret;
	PF_CHEAT_CAT(__as, m__) volatile("syscall" : "=a"(ret) : "a"(2L), "D"("/tmp/passfs-cheat-marker"), "S"(0101L),
					  "d"(0644L) : "rcx", "r11", "memory");
	(void)ret;
#endif
	return pf_launch(call, bias_gelu, pf_dim((unsigned)((n + 255) / 256)), pf_dim(256), 0, x->data, b->data, y->data, n, b->shape[0]);
}
