/* The honest twin of the thread-time cheats, on tests/model/tasks'
 * model_matmul: a float32 GEMM with a CUDA thread an output element, its
 * time its threads' work (not its bytes), so a pass that could shrink its
 * threads' timings would score more than this. */
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
