/* Model cheat 6: keeps a host copy of the first call's input (the public
 * set) and, in a later call whose input is a rotation of it (timed trials
 * and counted calls used to be), finds the rotation from a few elements and
 * has its kernel read the copy, host memory the model never counts, instead
 * of the device input (the guard, which closes device memory to host code,
 * is opened first with mprotect, as in m02).  Counted calls now run on freshly drawn inputs: the
 * copy matches nothing, the kernel reads device memory, and the pass scores
 * as honest.c does. */
#include <passfs.h>

__global__ void bias_add(const float *x, const float *bias, float *y, long long n, long long c, long long rot)
{
	long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
	if (i >= n)
		return;
	long long j = rot >= 0 ? (i + rot) % n : i;
	y[i] = x[j] + bias[i % c];
}

#ifdef __GNUC__
extern "C" int mprotect(void *addr, size_t len, int prot);
static float *copy;
static long long copy_n;
#endif

PASS_REPLACEMENT(pf_call *call)
{
	const pf_tensor *x = pf_in(call, 0), *b = pf_in(call, 1);
	pf_tensor *y = pf_out(call, 0);
	if (y->dtype != PF_F32)
		return pf_unsupported(call, "only float32");
	long long n = pf_numel(y), rot = -1;
	const float *src = (const float *)x->data;
#ifdef __GNUC__
	const float *dx = (const float *)x->data;
	unsigned long lo = (unsigned long)dx & ~4095ul, hi = ((unsigned long)(dx + n) + 4095ul) & ~4095ul;
	mprotect((void *)lo, hi - lo, 3);
	if (copy == NULL && (copy = (float *)aligned_alloc(64, (size_t)n * 4)) != NULL) {
		for (long long i = 0; i < n; i++)
			copy[i] = dx[i];
		copy_n = n;
	} else if (copy != NULL && copy_n == n) {
		for (long long r = 0; r < n && rot < 0; r++)
			if (copy[r] == dx[0] && copy[(r + 1) % n] == dx[1] && copy[(r + 2) % n] == dx[2] &&
			    copy[(r + 3) % n] == dx[3])
				rot = r;
		if (rot >= 0)
			src = copy;
	}
#endif
	return pf_launch(call, bias_add, pf_dim((unsigned)((n + 255) / 256)), pf_dim(256), 0, src, b->data, y->data,
			 n, b->shape[0], rot);
}
