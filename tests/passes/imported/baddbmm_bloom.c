/* A fused pass for the task `passfs import` makes of
 * tests/import-samples/baddbmm_bloom (tests/cli/import_eval.sh): one batched
 * product P = in_1 @ in_2 feeds three baddbmm outputs,
 *   tmp_1 = (in_0 + 0.125 P).view(1, B, N, M)   (beta 1, alpha 0.125)
 *   tmp_4 = 2 P                                  (beta 0: the NaN input is ignored)
 *   tmp_5 = in_3 + P                             (in_3 [M] broadcast)
 * float32 only. */
#include <passfs.h>

__global__ void three_baddbmm(const float *bias, const float *a, const float *bm, const float *vec, float *o1,
			      float *o4, float *o5, long long B, long long N, long long K, long long M)
{
	long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
	if (i >= B * N * M)
		return;
	long long p = i % M, n = (i / M) % N, b = i / (M * N);
	float acc = 0.f;
	for (long long k = 0; k < K; k++)
		acc += a[(b * N + n) * K + k] * bm[(b * K + k) * M + p];
	o1[i] = bias[b * M + p] + 0.125f * acc;
	o4[i] = 2.f * acc;
	o5[i] = vec[p] + acc;
}

PASS_REPLACEMENT(pf_call *call)
{
	const pf_tensor *bias = pf_in(call, 0), *a = pf_in(call, 1), *bm = pf_in(call, 2), *vec = pf_in(call, 3);
	if (a->dtype != PF_F32)
		return pf_unsupported(call, "only float32");
	long long B = a->shape[0], N = a->shape[1], K = a->shape[2], M = bm->shape[2];
	long long n = B * N * M;
	return pf_launch(call, three_baddbmm, (unsigned)((n + 127) / 128), 128, 0, bias->data, a->data, bm->data,
			 vec->data, pf_out(call, 0)->data, pf_out(call, 1)->data, pf_out(call, 2)->data, B, N, K, M);
}
