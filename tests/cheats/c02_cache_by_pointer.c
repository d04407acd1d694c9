/* Cheat 2: caches the outputs in a host static keyed by the input pointer and
 * replays them when the same pointer comes back.  The secret input set uses
 * the same device pointers: right on the public inputs, wrong on the secret
 * ones, rejected.  (Host code reads device memory directly: cpu backend.) */
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
static const void *cached_x;
static float *cached_y;
static long long cached_n;
#endif

PASS_REPLACEMENT(pf_call *call)
{
	const pf_tensor *x = pf_in(call, 0), *b = pf_in(call, 1);
	pf_tensor *y = pf_out(call, 0);
	long long n = pf_numel(y);
#ifdef __GNUC__
	if (cached_x == x->data && cached_n == n) {
		memcpy(y->data, cached_y, (size_t)n * sizeof(float));
		return PF_OK;
	}
#endif
	int rc = pf_launch(call, bias_gelu, pf_dim((unsigned)((n + 255) / 256)), pf_dim(256), 0, x->data, b->data, y->data, n, b->shape[0]);
#ifdef __GNUC__
	if (rc == PF_OK) {
		free(cached_y);
		cached_y = (float *)aligned_alloc(64, ((size_t)n * sizeof(float) + 63) / 64 * 64);
		memcpy(cached_y, y->data, (size_t)n * sizeof(float));
		cached_x = x->data;
		cached_n = n;
	}
#endif
	return rc;
}
