/* Lowered precision: the float32 task computed in float16 (inputs converted,
 * gelu in half, result converted back).  Not a violation, so it runs and
 * scores, but ES_t's tolerance levels must make it score below the honest
 * float32 pass (tests/cheats/honest_f32.c), however fast it is. */
#include <passfs.h>

__global__ void bias_gelu_f16(const float *x, const float *bias, float *y, long long n, long long c)
{
	long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
	if (i >= n)
		return;
	__half v = __hadd(__float2half(x[i]), __float2half(bias[i % c]));
	__half v3 = __hmul(__hmul(v, v), v);
	__half u = __hmul(__float2half(0.7978845608028654f), __hadd(v, __hmul(__float2half(0.044715f), v3)));
	__half t = __float2half(tanhf(__half2float(u)));
	y[i] = __half2float(__hmul(__hmul(__float2half(0.5f), v), __hadd(__float2half(1.0f), t)));
}

PASS_REPLACEMENT(pf_call *call)
{
	const pf_tensor *x = pf_in(call, 0), *b = pf_in(call, 1);
	pf_tensor *y = pf_out(call, 0);
	if (y->dtype != PF_F32)
		return pf_unsupported(call, "only float32");
	long long n = pf_numel(y);
	return pf_launch(call, bias_gelu_f16, pf_dim((unsigned)((n + 255) / 256)), pf_dim(256), 0, x->data,
			 b->data, y->data, n, b->shape[0]);
}
