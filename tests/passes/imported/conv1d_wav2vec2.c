/* A fused pass for the task `passfs import` makes of
 * tests/import-samples/conv1d_wav2vec2 (tests/cli/import_eval.sh):
 * wav2vec2's feature encoder, three conv1d (the importer writes each as
 * conv2d over a unit height),
 *   h     = gelu(conv1d(in_0, in_1, stride 5))                  [B, 1, L0] -> [B, C1, L1]
 *   tmp_2 = conv1d(h, in_2, in_3, stride 2, padding 1, dilation 2, groups 4)   [B, C2, L2]
 *   tmp_3 = conv1d(tmp_2, in_4, padding 'same')                 [B, C3, L2]
 * The first kernel computes tmp_2 with h recomputed on the fly (a thread
 * reads its group's C1/4 channels at 3 taps; h never reaches memory); the
 * second does the 'same' convolution of tmp_2.  float32 only (the sample's
 * dtype). */
#include <passfs.h>

#define S1 5 /* first conv's stride */
#define S2 2 /* grouped conv: stride, padding, dilation, groups */
#define P2 1
#define D2 2
#define G2 4

/* h[b, c, t] = gelu(sum_j x[b, 0, S1 t + j] * w1[c, 0, j]) */
__device__ inline float feature(const float *x, const float *w1, long long K1, long long t)
{
	float acc = 0.f;
	for (long long j = 0; j < K1; j++)
		acc += x[t * S1 + j] * w1[j];
	return 0.5f * acc * (1.0f + erff(acc * (float)M_SQRT1_2));
}

__global__ void feature_grouped(const float *x, const float *w1, const float *w2, const float *b2, float *y,
				long long B, long long L0, long long C1, long long K1, long long L1, long long C2,
				long long K2, long long L2)
{
	long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
	if (i >= B * C2 * L2)
		return;
	long long t = i % L2, o = (i / L2) % C2, b = i / (L2 * C2);
	long long cin = C1 / G2, g = o / (C2 / G2);
	float acc = b2[o];
	for (long long ci = 0; ci < cin; ci++) {
		long long c = g * cin + ci;
		for (long long k = 0; k < K2; k++) {
			long long p = t * S2 - P2 + k * D2;
			if (p >= 0 && p < L1)
				acc += feature(x + b * L0, w1 + c * K1, K1, p) * w2[(o * cin + ci) * K2 + k];
		}
	}
	y[i] = acc;
}

/* padding 'same' with stride 1, dilation 1: (K - 1) / 2 on the left */
__global__ void conv_same(const float *x, const float *w, float *y, long long B, long long C, long long L,
			  long long O, long long K)
{
	long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
	if (i >= B * O * L)
		return;
	long long t = i % L, o = (i / L) % O, b = i / (L * O);
	long long left = (K - 1) / 2;
	float acc = 0.f;
	for (long long c = 0; c < C; c++)
		for (long long k = 0; k < K; k++) {
			long long p = t + k - left;
			if (p >= 0 && p < L)
				acc += x[(b * C + c) * L + p] * w[(o * C + c) * K + k];
		}
	y[i] = acc;
}

PASS_REPLACEMENT(pf_call *call)
{
	const pf_tensor *x = pf_in(call, 0), *w1 = pf_in(call, 1), *w2 = pf_in(call, 2), *b2 = pf_in(call, 3),
			*w3 = pf_in(call, 4);
	pf_tensor *y2 = pf_out(call, 0), *y3 = pf_out(call, 1);
	if (x->dtype != PF_F32)
		return pf_unsupported(call, "only float32");
	long long B = x->shape[0], L0 = x->shape[2], C1 = w1->shape[0], K1 = w1->shape[2];
	long long L1 = (L0 - K1) / S1 + 1, C2 = y2->shape[1], K2 = w2->shape[2], L2 = y2->shape[2];
	long long n = pf_numel(y2);
	int rc = pf_launch(call, feature_grouped, (unsigned)((n + 127) / 128), 128, 0, x->data, w1->data, w2->data,
			   b2->data, y2->data, B, L0, C1, K1, L1, C2, K2, L2);
	if (rc != PF_OK)
		return rc;
	long long m = pf_numel(y3);
	return pf_launch(call, conv_same, (unsigned)((m + 127) / 128), 128, 0, y2->data, w3->data, y3->data, B, C2, L2,
			 y3->shape[1], w3->shape[2]);
}
