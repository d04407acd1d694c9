/* A kernel that faults on the GPU: it stores 2^40 elements past its output
 * (CUDA_ERROR_ILLEGAL_ADDRESS).  Verdict runtime_error, with a message naming
 * the kernel (oob_store<float> ...); the worker ends, nothing else does. */
#include <passfs.h>

template <typename T>
__global__ void oob_store(const T *x, T *y, long long n)
{
	long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
	if (i < n)
		y[i + (1LL << 40)] = x[i];
}

PASS_REPLACEMENT(pf_call *call)
{
	const pf_tensor *x = pf_in(call, 0);
	pf_tensor *y = pf_out(call, 0);
	long long n = pf_numel(y);
	pf_dim3 grid = pf_dim((unsigned)((n + 255) / 256)), block = pf_dim(256);
	switch (y->dtype) {
	case PF_F32:
		return pf_launch(call, oob_store<float>, grid, block, 0, x->data, y->data, n);
	case PF_F16:
		return pf_launch(call, oob_store<__half>, grid, block, 0, x->data, y->data, n);
	case PF_BF16:
		return pf_launch(call, oob_store<__nv_bfloat16>, grid, block, 0, x->data, y->data, n);
	}
	return pf_unsupported(call, "only float32, float16 and bfloat16");
}
