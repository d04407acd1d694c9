/* Model cheat 2: cheat 16 (host code computes the outputs through the
 * device pointers, an empty kernel launches) with the guard switched off
 * first: one mprotect gives the device pages back their access, so the
 * guard's closed pages never fault and it sees no host touch.  On the
 * runtime's records the call is one empty launch (3 us).  The kernel's
 * accounting still sees every page the host code referenced and the CPU it
 * spent: it scores no more than honest.c. */
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

__global__ void nothing(float *y) { (void)y; }

PASS_REPLACEMENT(pf_call *call)
{
	const pf_tensor *x = pf_in(call, 0), *b = pf_in(call, 1);
	pf_tensor *y = pf_out(call, 0);
	if (y->dtype != PF_F32)
		return pf_unsupported(call, "only float32");
	long long n = pf_numel(y), c = b->shape[0];
#ifdef __GNUC__
	open_pages(x->data, n * 4);
	open_pages(b->data, c * 4);
	open_pages(y->data, n * 4);
#endif
	const float *xd = (const float *)x->data, *bd = (const float *)b->data;
	float *yd = (float *)y->data;
	for (long long i = 0; i < n; i++) {
		float v = xd[i] + bd[i % c];
		yd[i] = v;
	}
	return pf_launch(call, nothing, pf_dim(1), pf_dim(32), 0, y->data);
}
