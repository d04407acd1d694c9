/* Model cheat 7: the honest GEMM (honest_matmul.c), each CUDA thread
 * restarting its own timed stretch just before it returns, through the
 * running fiber's record (what threadIdx reads): its timed work becomes
 * ~0, and on the code before (the record reachable as pf_emu::current())
 * the pass's path and parallel terms fell 6-20x, its score 1.03 -> 1.37.
 * The record's and the scheduler's names are poisoned for passes: a
 * compile error naming the identifier. */
#include <passfs.h>

__global__ void mm(const float *a, const float *b, float *c, int n)
{
	int i = blockIdx.y * blockDim.y + threadIdx.y, j = blockIdx.x * blockDim.x + threadIdx.x;
	if (i >= n || j >= n)
		return;
	float s = 0;
	for (int k = 0; k < n; k++)
		s += a[i * n + k] * b[k * n + j];
	c[i * n + j] = s;
#ifdef __GNUC__
	pf_emu::pfe_current()->S->tseg = __builtin_ia32_rdtsc();
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
