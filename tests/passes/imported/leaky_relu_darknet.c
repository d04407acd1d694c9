/* A fused pass for the task `passfs import` makes of
 * tests/import-samples/leaky_relu_darknet (tests/cli/import_eval.sh):
 * darknet's conv block and a double leaky_relu,
 *   tmp_2 = leaky_relu(batch_norm(conv2d(in_0, in_1, 3x3, padding 1), mean in_2, var in_3,
 *                                 weight in_5, bias in_4, eps 1e-5), 0.1)
 *   tmp_4 = leaky_relu(leaky_relu(in_0), -2.5)     (slopes 0.01, then -2.5)
 * One kernel: a thread per conv output element does the 3x3xC dot product,
 * the eval-mode normalisation and the slope; the first numel(tmp_4) threads
 * also do the elementwise output.  float32 only (the sample's dtype). */
#include <passfs.h>

#define SLOPE 0.1f
#define EPS 1e-5f

__device__ inline float leaky(float v, float slope) { return v >= 0.f ? v : v * slope; }

__global__ void conv_bn_leaky(const float *x, const float *w, const float *mean, const float *var, const float *gamma,
			      const float *beta, float *y, float *y2, long long B, long long C, long long K,
			      long long Hh, long long Ww)
{
	long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
	long long hw = Hh * Ww;
	if (i < B * C * hw) {
		/* the elementwise output: leaky_relu at 0.01, rounded, then at -2.5 */
		float u = leaky(x[i], 0.01f);
		y2[i] = leaky(u, -2.5f);
	}
	if (i >= B * K * hw)
		return;
	long long ox = i % Ww, oy = (i / Ww) % Hh, k = (i / hw) % K, b = i / (hw * K);
	float acc = 0.f;
	for (long long c = 0; c < C; c++) {
		const float *xc = x + (b * C + c) * hw, *wk = w + (k * C + c) * 9;
		for (int dy = 0; dy < 3; dy++) {
			long long iy = oy + dy - 1;
			if (iy < 0 || iy >= Hh)
				continue;
			for (int dx = 0; dx < 3; dx++) {
				long long ix = ox + dx - 1;
				if (ix >= 0 && ix < Ww)
					acc += xc[iy * Ww + ix] * wk[dy * 3 + dx];
			}
		}
	}
	float v = (acc - mean[k]) * rsqrtf(var[k] + EPS) * gamma[k] + beta[k];
	y[i] = leaky(v, SLOPE);
}

PASS_REPLACEMENT(pf_call *call)
{
	/* the graph's inputs: in_2 mean, in_3 var, in_4 bias, in_5 weight (F.batch_norm's order
	 * is mean, var, weight, bias: the sample passes in_5 before in_4) */
	const pf_tensor *x = pf_in(call, 0), *w = pf_in(call, 1);
	pf_tensor *y = pf_out(call, 0), *y2 = pf_out(call, 1);
	if (x->dtype != PF_F32)
		return pf_unsupported(call, "only float32");
	if (w->shape[2] != 3 || w->shape[3] != 3)
		return pf_unsupported(call, "only 3x3 kernels");
	long long n = pf_numel(y) > pf_numel(y2) ? pf_numel(y) : pf_numel(y2);
	return pf_launch(call, conv_bn_leaky, (unsigned)((n + 127) / 128), 128, 0, x->data, w->data,
			 pf_in(call, 2)->data, pf_in(call, 3)->data, pf_in(call, 5)->data, pf_in(call, 4)->data, y->data,
			 y2->data, x->shape[0], x->shape[1], w->shape[0], x->shape[2], x->shape[3]);
}
