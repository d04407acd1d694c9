/* Model cheat 9: m07 without a name - the honest GEMM (honest_matmul.c),
 * each CUDA thread restarting its own timed stretch just before it
 * returns, through the running fiber's record found by address:
 * &threadIdx is the record's first member, and the offsets of the
 * scheduler pointer in it and of the stretch's start in the scheduler come
 * from the header, as an attacker with the sources computes them
 * (tests/cli/model_cheats.sh writes them in for S_OFF and TSEG_OFF).  This
 * channel is open (docs/integrity.md, "Left open"): what it must not do is
 * take the pass's modeled time below its kernel floor, the memory
 * roofline of the bytes the kernel saw it touch. */
#include <passfs.h>

#define S_OFF 0
#define TSEG_OFF 0

__global__ void mm(const float *a, const float *b, float *c, int n)
{
	int i = blockIdx.y * blockDim.y + threadIdx.y, j = blockIdx.x * blockDim.x + threadIdx.x;
	if (i >= n || j >= n)
		return;
	float s = 0;
	for (int k = 0; k < n; k++)
		s += a[i * n + k] * b[k * n + j];
	c[i * n + j] = s;
#if defined(__GNUC__) && S_OFF > 0
	char *rec = (char *)&threadIdx;
	char *sched = *(char **)(rec + S_OFF);
	*(unsigned long long *)(sched + TSEG_OFF) = __builtin_ia32_rdtsc();
#endif
}

PASS_REPLACEMENT(pf_call *call)
{
	const pf_tensor *a = pf_in(call, 0), *b = pf_in(call, 1);
	pf_tensor *c = pf_out(call, 0);
	if (c->dtype != PF_F32 || a->ndim != 2 || a->shape[0] != a->shape[1])
		return pf_unsupported(call, "only square float32 matrices");
	int n = (int)a->shape[0];
	return pf_launch(call, mm, pf_dim((unsigned)(n + 15) / 16, (unsigned)(n + 15) / 16), pf_dim(16, 16), 0,
			 a->data, b->data, c->data, n);
}
