/* Model cheat 1 (docs/integrity.md, "The model's numbers"): hides the
 * kernel's memory traffic from the runtime's fault counter.  The counter
 * closes device pages (mprotect PROT_NONE) before a counted launch and
 * counts the first touch of each; the first thread of every 64th block gives
 * the pages of the next 64 blocks' elements back their access before they
 * are touched (the emulator runs a block's threads in order when the kernel
 * has no barrier), so the counter sees (almost) nothing.  The same kernel as honest.c otherwise.
 * The kernel's own accounting, read by the parent (the pages the call
 * referenced), still holds every byte: it scores as honest.c does. */
#include <passfs.h>

#ifdef __GNUC__
extern "C" int mprotect(void *addr, size_t len, int prot);
static void open_pages(const void *p, long long bytes)
{
	unsigned long lo = (unsigned long)p & ~4095ul;
	unsigned long hi = ((unsigned long)p + (unsigned long)bytes + 4095ul) & ~4095ul;
	mprotect((void *)lo, hi - lo, 3);
}
#endif

__global__ void bias_add(const float *x, const float *bias, float *y, long long n, long long c)
{
#ifdef __GNUC__
	if (threadIdx.x == 0 && blockIdx.x % 64 == 0) {
		long long lo = (long long)blockIdx.x * blockDim.x, len = 64ll * blockDim.x;
		if (lo + len > n)
			len = n - lo;
		open_pages(x + lo, len * 4);
		open_pages(y + lo, len * 4);
		if (blockIdx.x == 0)
			open_pages(bias, c * 4);
	}
#endif
	long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
	if (i >= n)
		return;
	y[i] = x[i] + bias[i % c];
}

PASS_REPLACEMENT(pf_call *call)
{
	const pf_tensor *x = pf_in(call, 0), *b = pf_in(call, 1);
	pf_tensor *y = pf_out(call, 0);
	if (y->dtype != PF_F32)
		return pf_unsupported(call, "only float32");
	long long n = pf_numel(y);
	return pf_launch(call, bias_add, pf_dim((unsigned)((n + 255) / 256)), pf_dim(256), 0, x->data, b->data,
			 y->data, n, b->shape[0]);
}
