/* A fused pass for the task `passfs import` makes of
 * tests/import-samples/arange_bloom (tests/cli/import_eval.sh): BLOOM's
 * alibi slopes and positions, five aranges computed in one kernel without
 * materialising any of them,
 *   tmp_4 = in_0 * arange(10)                      float32 [R, 10]
 *   tmp_6 = arange(0.0, 1.0, 0.125) * 0.5 ** arange(1, 9)   float32 [8]
 *   tmp_7 = arange(10, 0, -3)                      int64 [10, 7, 4, 1]
 *   tmp_8 = arange(0.5, 3.7, 1.5, dtype=int32)     int32: start and step
 *   tmp_9 = arange(0.5, 3.7, dtype=int64)          int64   truncated first (0, 1, 2)
 * Element counts come from the output shapes.  float32 in_0 only (the
 * sample's dtype). */
#include <passfs.h>

#define POW_START 1 /* arange(1, 9): the exponents of 0.5 */
#define FRAC_STEP 0.125f
#define DESC_START 10
#define DESC_STEP (-3)

__global__ void aranges(const float *x, float *pos, float *slopes, int64_t *desc, int32_t *i32, int64_t *i64,
			long long npos, long long cols, long long nslopes, long long ndesc, long long n32, long long n64)
{
	long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
	if (i < npos)
		pos[i] = x[i] * (float)(i % cols);
	if (i < nslopes)
		slopes[i] = ((float)i * FRAC_STEP) * powf(0.5f, (float)(POW_START + i));
	if (i < ndesc)
		desc[i] = DESC_START + DESC_STEP * i;
	/* integer aranges take start and step truncated: 0.5 -> 0, 1.5 -> 1 */
	if (i < n32)
		i32[i] = (int32_t)(0.5) + (int32_t)(1.5) * (int32_t)i;
	if (i < n64)
		i64[i] = (int64_t)(0.5) + i;
}

PASS_REPLACEMENT(pf_call *call)
{
	const pf_tensor *x = pf_in(call, 0);
	pf_tensor *pos = pf_out(call, 0), *slopes = pf_out(call, 1), *desc = pf_out(call, 2), *i32 = pf_out(call, 3),
		  *i64 = pf_out(call, 4);
	if (x->dtype != PF_F32)
		return pf_unsupported(call, "only float32");
	long long n = pf_numel(pos);
	pf_tensor *outs[] = {slopes, desc, i32, i64};
	for (int k = 0; k < 4; k++)
		n = pf_numel(outs[k]) > n ? pf_numel(outs[k]) : n;
	return pf_launch(call, aranges, (unsigned)((n + 127) / 128), 128, 0, x->data, pos->data, slopes->data,
			 desc->data, i32->data, i64->data, pf_numel(pos), pos->shape[pos->ndim - 1], pf_numel(slopes),
			 pf_numel(desc), pf_numel(i32), pf_numel(i64));
}
