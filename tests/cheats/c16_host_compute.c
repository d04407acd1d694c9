/* Cheat 16: computes the outputs in host code, reading the inputs and
 * writing the output through the tensors' device pointers, and launches an
 * empty kernel so that a launch happens.  On a GPU those pointers fault in
 * host code; on the cpu backend they are host memory, and a pass scored by
 * the modeled GPU time (launches, their traffic and threads) would look
 * free.  The counted calls close device memory to host code between
 * launches: rejected, naming the host touch (docs/integrity.md). */
#include <passfs.h>

__global__ void nothing(float *y) { (void)y; }

PASS_REPLACEMENT(pf_call *call)
{
	const pf_tensor *x = pf_in(call, 0), *b = pf_in(call, 1);
	pf_tensor *y = pf_out(call, 0);
	if (y->dtype != PF_F32)
		return pf_unsupported(call, "only float32");
	long long n = pf_numel(y), c = b->shape[0];
	const float *xd = (const float *)x->data, *bd = (const float *)b->data;
	float *yd = (float *)y->data;
	for (long long i = 0; i < n; i++) {
		float v = xd[i] + bd[i % c];
		yd[i] = 0.5f * v * (1.0f + tanhf(0.7978845608028654f * (v + 0.044715f * v * v * v)));
	}
	return pf_launch(call, nothing, pf_dim(1), pf_dim(32), 0, y->data);
}
