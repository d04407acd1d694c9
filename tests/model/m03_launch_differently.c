/* Model cheat 3: launches differently from call to call (an extra empty
 * kernel on every other call), so that the counted calls do not pair
 * launch for launch.  That used to drop the model and score the measured
 * cpu speedup instead, whichever was the better for the pass.  Now such a
 * variant is scored the worse of the two (scored_worse_of_two). */
#include <passfs.h>

__global__ void bias_add(const float *x, const float *bias, float *y, long long n, long long c)
{
	long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
	if (i >= n)
		return;
	y[i] = x[i] + bias[i % c];
}

__global__ void nothing(float *y) { (void)y; }

static int calls;

PASS_REPLACEMENT(pf_call *call)
{
	const pf_tensor *x = pf_in(call, 0), *b = pf_in(call, 1);
	pf_tensor *y = pf_out(call, 0);
	if (y->dtype != PF_F32)
		return pf_unsupported(call, "only float32");
	long long n = pf_numel(y);
	if (calls++ % 2) {
		int rc = pf_launch(call, nothing, pf_dim(1), pf_dim(32), 0, y->data);
		if (rc)
			return rc;
	}
	return pf_launch(call, bias_add, pf_dim((unsigned)((n + 255) / 256)), pf_dim(256), 0, x->data, b->data,
			 y->data, n, b->shape[0]);
}
