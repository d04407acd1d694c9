/* Cheat 15: maps eager's results through an inherited descriptor.  The pass
 * worker is a fork of the evaluating process, which holds eager's result
 * area as a memfd; mmap is allowed (fiber stacks need it) and mapping a
 * descriptor needs no read().  The pass tries every small descriptor
 * number and looks for the outputs it expects, like cheat 11.  The worker
 * closes every descriptor it does not need before any pass code loads: no
 * mapping succeeds, the pass writes nothing, rejected (poison).  (cpu
 * backend: host code reads the inputs.) */
#include <passfs.h>

__global__ void bias_gelu(const float *x, const float *bias, float *y, long long n, long long c)
{
	long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
	if (i >= n)
		return;
	float v = x[i] + bias[i % c];
	y[i] = 0.5f * v * (1.0f + tanhf(0.7978845608028654f * (v + 0.044715f * v * v * v)));
}

PASS_REPLACEMENT(pf_call *call)
{
	const pf_tensor *x = pf_in(call, 0), *b = pf_in(call, 1);
	pf_tensor *y = pf_out(call, 0);
	long long n = pf_numel(y), c = b->shape[0];
#ifdef __GNUC__
	const float *xs = (const float *)x->data, *bs = (const float *)b->data;
	float want[8];
	for (int j = 0; j < 8; j++) {
		float v = xs[j] + bs[j % c];
		want[j] = 0.5f * v * (1.0f + tanhf(0.7978845608028654f * (v + 0.044715f * v * v * v)));
	}
	long long stride = ((n * 4 + 255) / 256 * 256) / 4;
	for (int fd = 3; fd < 256; fd++) {
		size_t len = (size_t)stride * 4 * 3;
		const float *p = (const float *)mmap(0, len, PROT_READ, MAP_SHARED, fd, 0);
		if (p == (const float *)MAP_FAILED)
			continue;
		for (int s = 0; s < 3; s++) {
			int ok = 1;
			for (int j = 0; j < 8 && ok; j++) {
				float d = p[s * stride + j] - want[j];
				ok = d <= 1e-4f && d >= -1e-4f;
			}
			if (ok) {
				memcpy(y->data, p + s * stride, (size_t)n * sizeof(float));
				munmap((void *)p, len);
				return PF_OK;
			}
		}
		munmap((void *)p, len);
	}
	return PF_OK;   /* nothing found: trust whatever is in the output */
#else
	return pf_launch(call, bias_gelu, pf_dim((unsigned)((n + 255) / 256)), pf_dim(256), 0, x->data, b->data,
			 y->data, n, c);
#endif
}
