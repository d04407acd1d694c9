/* A fused pass for the task `passfs import` makes of
 * tests/import-samples/tensor_split_rope (tests/cli/import_eval.sh):
 *   lo, hi = in_1.tensor_split(2, -1)          in_1 [S, 2E]: columns [0, E) and [E, 2E)
 *   t = in_0 * hi + in_0 * lo                  in_0 [B, H, S, E], lo/hi broadcast over B, H
 *   a, _, c, d = t.tensor_split([3, 1, -2], 2)  rows [0, 3), [3, 1) (empty), [1, S-2), [S-2, S)
 *   tmp_5 = c.tensor_split(3, 3)[2]            columns [E - E/3, E) of c (E = 16: 6, 5, 5)
 * One thread per element of t: it computes the value once and stores it in
 * every output whose slice holds it (rows 1 and 2 go to both a and c).
 * float32 only (the sample's dtype). */
#include <passfs.h>

/* tensor_split(x, sections, dim) of a dim of size n: section j starts at
 * j * (n / sections) + min(j, n % sections) (the first n % sections are one longer) */
__device__ inline long long section_start(long long n, long long sections, long long j)
{
	return j * (n / sections) + (j < n % sections ? j : n % sections);
}

__global__ void rope_split(const float *x, const float *tab, float *a, float *c, float *d, float *t5, long long BH,
			   long long S, long long E)
{
	long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
	if (i >= BH * S * E)
		return;
	long long e = i % E, s = (i / E) % S, bh = i / (E * S);
	float xv = x[i];
	float lo = tab[s * 2 * E + e], hi = tab[s * 2 * E + E + e];
	float p = xv * hi, q = xv * lo;
	float v = p + q;
	/* the split points along S: 3, 1 and S - 2 (the -2 counted from the end) */
	long long i1 = 3, i2 = 1, i3 = S - 2;
	if (s < i1)
		a[(bh * i1 + s) * E + e] = v;
	if (s >= i2 && s < i3) {
		long long cs = i3 - i2, r = s - i2;
		c[(bh * cs + r) * E + e] = v;
		long long e0 = section_start(E, 3, 2), e1 = section_start(E, 3, 3);
		if (e >= e0 && e < e1)
			t5[(bh * cs + r) * (e1 - e0) + (e - e0)] = v;
	}
	if (s >= i3)
		d[(bh * (S - i3) + (s - i3)) * E + e] = v;
}

PASS_REPLACEMENT(pf_call *call)
{
	const pf_tensor *x = pf_in(call, 0), *tab = pf_in(call, 1);
	if (x->dtype != PF_F32)
		return pf_unsupported(call, "only float32");
	long long S = x->shape[2], E = x->shape[3], BH = x->shape[0] * x->shape[1];
	long long n = pf_numel(x);
	return pf_launch(call, rope_split, (unsigned)((n + 127) / 128), 128, 0, x->data, tab->data,
			 pf_out(call, 0)->data, pf_out(call, 1)->data, pf_out(call, 2)->data, pf_out(call, 3)->data, BH,
			 S, E);
}
