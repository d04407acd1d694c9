/* Cheat 7c: a raw system call with no libc symbol, no inline asm and no new
 * executable memory.  The constant 0xc3050f stored by gadget_holder() puts
 * the bytes 0f 05 c3 (syscall; ret) inside the pass's own machine code; the
 * pass finds them and calls them through a variadic function pointer with
 * two double arguments, so the caller sets al (and so rax) to 2: open(path,
 * O_WRONLY|O_CREAT, 0644).  Neither the source scan nor the symbol
 * allow-list can see this; the seccomp filter kills the worker at the open:
 * rejected, and the marker file is never created. */
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
__attribute__((noinline)) static unsigned gadget_holder(volatile unsigned *p)
{
	*p = 0xc3050fu;
	return *p;
}
#endif

PASS_REPLACEMENT(pf_call *call)
{
	const pf_tensor *x = pf_in(call, 0), *b = pf_in(call, 1);
	pf_tensor *y = pf_out(call, 0);
	long long n = pf_numel(y);
#ifdef __GNUC__
	volatile unsigned slot;
	gadget_holder(&slot);
	const unsigned char *code = (const unsigned char *)(void *)&gadget_holder;
	for (int k = 0; k < 256; k++)
		if (code[k] == 0x0f && code[k + 1] == 0x05 && code[k + 2] == 0xc3) {
			long (*fn)(const char *, long, long, ...) = (long (*)(const char *, long, long, ...))(void *)(code + k);
			fn("/tmp/passfs-cheat-marker", 0101, 0644, 1.0, 2.0);
			break;
		}
#endif
	return pf_launch(call, bias_gelu, pf_dim((unsigned)((n + 255) / 256)), pf_dim(256), 0, x->data, b->data, y->data, n, b->shape[0]);
}
