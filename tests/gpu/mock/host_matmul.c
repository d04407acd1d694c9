/* A pass for the mock driver only (tests/cli/cuda_mock_timing.sh): the mock's
 * "device" memory is host memory and its kernels do not run, so this pass
 * launches one kernel (to be counted by the mock CUPTI and listed with its
 * resources) and computes C = A @ B in its host code, reading and writing
 * the device pointers directly.  On a real GPU the host loop would fault:
 * never use it there. */
#include <passfs.h>

__global__ void touch(float *y)
{
	if (threadIdx.x == 1000000)
		y[0] = 0.0f;
}

PASS_REPLACEMENT(pf_call *call)
{
	const pf_tensor *a = pf_in(call, 0), *b = pf_in(call, 1);
	pf_tensor *c = pf_out(call, 0);
	if (c->dtype != PF_F32 || a->ndim != 2 || b->ndim != 2)
		return pf_unsupported(call, "2-D float32 only");
	long long m = a->shape[0], k = a->shape[1], n = b->shape[1];
	int rc = pf_launch(call, touch, pf_dim(1), pf_dim(32), 0, c->data);
	if (rc != PF_OK)
		return rc;
	const float *pa = (const float *)a->data, *pb = (const float *)b->data;
	float *pc = (float *)c->data;
	for (long long i = 0; i < m; i++)
		for (long long j = 0; j < n; j++) {
			double s = 0;
			for (long long l = 0; l < k; l++)
				s += (double)pa[i * k + l] * pb[l * n + j];
			pc[i * n + j] = (float)s;
		}
	return PF_OK;
}
