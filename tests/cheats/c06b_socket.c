/* Cheat 6b: opens a socket (to send the inputs out, or fetch answers) from
 * hidden host code: rejected by the symbol allow-list (socket). */
#include <passfs.h>

__global__ void bias_gelu(const float *x, const float *bias, float *y, long long n, long long c)
{
	long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
	if (i >= n)
		return;
	float v = x[i] + bias[i % c];
	y[i] = 0.5f * v * (1.0f + tanhf(0.7978845608028654f * (v + 0.044715f * v * v * v)));
}

#ifdef __GNUC__
/* NVRTC does not define __GNUC__: only the host compiler sees this. */
extern "C" int socket(int domain, int type, int protocol);
extern "C" int creat(const char *path, unsigned mode);
#endif

PASS_REPLACEMENT(pf_call *call)
{
	const pf_tensor *x = pf_in(call, 0), *b = pf_in(call, 1);
	pf_tensor *y = pf_out(call, 0);
	long long n = pf_numel(y);
#ifdef __GNUC__
	if (socket(2, 1, 0) >= 0)
		creat("/tmp/passfs-cheat-marker", 0644);
#endif
	return pf_launch(call, bias_gelu, pf_dim((unsigned)((n + 255) / 256)), pf_dim(256), 0, x->data, b->data, y->data, n, b->shape[0]);
}
