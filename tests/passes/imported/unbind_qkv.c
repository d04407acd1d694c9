/* A fused pass for the task `passfs import` makes of
 * tests/import-samples/unbind_qkv (tests/cli/import_eval.sh): timm's
 * q, k, v = qkv.reshape(B, N, 3, H, D).permute(2, 0, 3, 1, 4).unbind(0),
 * then softmax(q @ k^T) @ v, and a product of two slices of in_1 along its
 * last dim (unbind(-1)[0] * unbind(-1)[2]).  float32 only. */
#include <passfs.h>

/* out [B, H, N, D]: one thread per element; qkv [B, N, 3 * H * D] is read
 * in place (q at h * D, k at (H + h) * D, v at (2H + h) * D of a row). */
__global__ void attention(const float *qkv, float *out, long long B, long long H, long long N, long long D)
{
	long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
	if (i >= B * H * N * D)
		return;
	long long d = i % D, n = (i / D) % N, h = (i / (D * N)) % H, b = i / (D * N * H);
	long long row = 3 * H * D;
	const float *q = qkv + (b * N + n) * row + h * D;
	const float *kb = qkv + b * N * row + (H + h) * D, *vb = qkv + b * N * row + (2 * H + h) * D;
	float m = -INFINITY;
	for (long long j = 0; j < N; j++) {
		float s = 0.f;
		for (long long e = 0; e < D; e++)
			s += q[e] * kb[j * row + e];
		m = s > m ? s : m;
	}
	float den = 0.f, num = 0.f;
	for (long long j = 0; j < N; j++) {
		float s = 0.f;
		for (long long e = 0; e < D; e++)
			s += q[e] * kb[j * row + e];
		float p = expf(s - m);
		den += p;
		num += p * vb[j * row + d];
	}
	out[i] = num / den;
}

/* out [B, N] = x[..., 0] * x[..., 2] of x [B, N, C]. */
__global__ void slices_mul(const float *x, float *out, long long n, long long c)
{
	long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
	if (i < n)
		out[i] = x[i * c] * x[i * c + 2];
}

PASS_REPLACEMENT(pf_call *call)
{
	const pf_tensor *qkv = pf_in(call, 0), *x = pf_in(call, 1);
	pf_tensor *att = pf_out(call, 0), *prod = pf_out(call, 1);
	if (qkv->dtype != PF_F32)
		return pf_unsupported(call, "only float32");
	long long B = att->shape[0], H = att->shape[1], N = att->shape[2], D = att->shape[3];
	long long n = pf_numel(att);
	int rc = pf_launch(call, attention, (unsigned)((n + 127) / 128), 128, 0, qkv->data, att->data, B, H, N, D);
	if (rc != PF_OK)
		return rc;
	long long m = pf_numel(prod);
	return pf_launch(call, slices_mul, (unsigned)((m + 127) / 128), 128, 0, x->data, prod->data, m,
			 x->shape[x->ndim - 1]);
}
