/* A kernel in an unnamed namespace launched through a template parameter
 * (float32 only: the other variants are declined).  Fine on the cpu
 * backend; on a GPU the launch fails with a message that says what to
 * change: NVRTC and g++ spell such a kernel's name differently, so it cannot
 * be found by its symbol. */
#include <passfs.h>

namespace {
template <typename T>
__global__ void bias_gelu(const T *x, const T *bias, T *y, long long n, long long c)
{
	long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
	if (i >= n)
		return;
	float v = (float)x[i] + (float)bias[i % c];
	y[i] = (T)(0.5f * v * (1.0f + tanhf(0.7978845608028654f * (v + 0.044715f * v * v * v))));
}
}

template <typename T>
static int run(pf_call *call, const pf_tensor *x, const pf_tensor *b, pf_tensor *y)
{
	long long n = pf_numel(y);
	return pf_launch(call, bias_gelu<T>, pf_dim((unsigned)((n + 255) / 256)), pf_dim(256), 0, x->data,
			 b->data, y->data, n, b->shape[0]);
}

PASS_REPLACEMENT(pf_call *call)
{
	const pf_tensor *x = pf_in(call, 0), *b = pf_in(call, 1);
	pf_tensor *y = pf_out(call, 0);
	if (y->dtype != PF_F32)
		return pf_unsupported(call, "only float32");
	return run<float>(call, x, b, y);
}
