/* A syntax error on line 8 (verdict compile_error, naming the line). */
#include <passfs.h>

__global__ void copy(const float *x, float *y, long long n)
{
	long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
	if (i < n)
		y[i] = x[i]
}

PASS_REPLACEMENT(pf_call *call)
{
	long long n = pf_numel(pf_out(call, 0));
	return pf_launch(call, copy, pf_dim((unsigned)((n + 255) / 256)), pf_dim(256), 0,
			 pf_in(call, 0)->data, pf_out(call, 0)->data, n);
}
