/* T5 RMSNorm with a thread per row: each thread sums its row's squares, then
 * scales the row - no barriers, so the cpu backend emulates it at plain-C
 * speed, while a GPU runs it badly (a few thousand threads, each walking a
 * row alone).  The block-per-row pass is bench/passes/t5_rmsnorm.c;
 * tests/cli/eval_rank.sh checks that the cpu backend ranks them as a GPU
 * would (docs/backends.md, "The modeled H200 time"). */
#include <passfs.h>

__device__ inline float ld(const float *p, long long i) { return p[i]; }
__device__ inline float ld(const __half *p, long long i) { return __half2float(p[i]); }
__device__ inline float ld(const __nv_bfloat16 *p, long long i) { return __bfloat162float(p[i]); }
__device__ inline void st(float *p, long long i, float v) { p[i] = v; }
__device__ inline void st(__half *p, long long i, float v) { p[i] = __float2half(v); }
__device__ inline void st(__nv_bfloat16 *p, long long i, float v) { p[i] = __float2bfloat16(v); }

template <typename T>
__global__ void rmsnorm(const T *x, const T *w, T *y, int cols, unsigned rows)
{
	unsigned r0 = blockIdx.x * blockDim.x + threadIdx.x;
	if (r0 >= rows)
		return;
	const T *row = x + (long long)r0 * cols;
	T *out = y + (long long)r0 * cols;
	float s = 0.0f;
	for (int i = 0; i < cols; i++) {
		float v = ld(row, i);
		s += v * v;
	}
	float r = rsqrtf(s / (float)cols + 1e-6f);
	for (int i = 0; i < cols; i++) {
		T h;
		st(&h, 0, ld(row, i) * r);
		st(out, i, ld(w, i) * ld(&h, 0));
	}
}

PASS_REPLACEMENT(pf_call *call)
{
	const pf_tensor *x = pf_in(call, 0), *w = pf_in(call, 1);
	pf_tensor *y = pf_out(call, 0);
	int cols = (int)x->shape[x->ndim - 1];
	unsigned rows = (unsigned)(pf_numel(x) / cols);
	switch (y->dtype) {
	case PF_F32:
		return pf_launch(call, rmsnorm<float>, pf_dim((rows + 127) / 128), pf_dim(128), 0, x->data, w->data,
				 y->data, cols, rows);
	case PF_F16:
		return pf_launch(call, rmsnorm<__half>, pf_dim((rows + 127) / 128), pf_dim(128), 0, x->data, w->data,
				 y->data, cols, rows);
	case PF_BF16:
		return pf_launch(call, rmsnorm<__nv_bfloat16>, pf_dim((rows + 127) / 128), pf_dim(128), 0, x->data, w->data,
				 y->data, cols, rows);
	}
	return pf_unsupported(call, "only float32, float16 and bfloat16");
}
