/* Cheat 7b: a raw system call with no libc symbol and no inline asm: write
 * x86-64 machine code for open(path, O_WRONLY|O_CREAT, 0644) into an
 * anonymous mapping, make it executable, call it.  mmap and mprotect are on
 * the symbol allow-list (fiber stacks need them); the sandbox refuses any
 * executable mapping: the worker is killed at the mprotect, rejected, and
 * the marker file is never created. */
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
static const unsigned char code[] = {
	0xb8, 0x02, 0x00, 0x00, 0x00,   /* mov eax, 2 (open) */
	0xbe, 0x41, 0x00, 0x00, 0x00,   /* mov esi, O_WRONLY | O_CREAT */
	0xba, 0xa4, 0x01, 0x00, 0x00,   /* mov edx, 0644 */
	0x0f, 0x05,                     /* syscall (rdi: the path, the first argument) */
	0xc3,                           /* ret */
};
#endif

PASS_REPLACEMENT(pf_call *call)
{
	const pf_tensor *x = pf_in(call, 0), *b = pf_in(call, 1);
	pf_tensor *y = pf_out(call, 0);
	long long n = pf_numel(y);
#ifdef __GNUC__
	unsigned char *p = (unsigned char *)mmap(0, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p != MAP_FAILED) {
		memcpy(p, code, sizeof(code));
		if (mprotect(p, 4096, PROT_READ | PROT_EXEC) == 0)
			((long (*)(const char *))(void *)p)("/tmp/passfs-cheat-marker");
	}
#endif
	return pf_launch(call, bias_gelu, pf_dim((unsigned)((n + 255) / 256)), pf_dim(256), 0, x->data, b->data, y->data, n, b->shape[0]);
}
