/* detr_frozen_batchnorm_relu: FrozenBatchNorm2d written out (+ eps, rsqrt, mul, sub, x * scale + shift, relu) in one kernel (bench/fusion.sh): blockIdx.y is the (n, c) plane, so a thread finds its channel without 64-bit division, and computes the channel's scale and shift once for ITER vectors of its plane. */
#include <passfs.h>

/* Each thread takes VEC consecutive elements (what a GPU kernel does with
 * 16-byte vector loads); the broadcast index is computed once per thread. */
#define VEC 8
/* Each thread takes ITER vectors, a block's width apart (each step of the
 * loop is a coalesced access across the block), and computes its channel's
 * scale and shift once for all of them. */
#define ITER 4

__device__ __forceinline__ float ld(const float *p, long long i) { return p[i]; }
__device__ __forceinline__ float ld(const __half *p, long long i) { return __half2float(p[i]); }
__device__ __forceinline__ float ld(const __nv_bfloat16 *p, long long i) { return __bfloat162float(p[i]); }
__device__ __forceinline__ void st(float *p, long long i, float v) { p[i] = v; }
__device__ __forceinline__ void st(__half *p, long long i, float v) { p[i] = __float2half(v); }
__device__ __forceinline__ void st(__nv_bfloat16 *p, long long i, float v) { p[i] = __float2bfloat16(v); }
/* Eager rounds every op's result to the dtype: so does the fused kernel. */
template <typename T> __device__ __forceinline__ float rt(float v)
{
	T r;
	st(&r, 0, v);
	return ld(&r, 0);
}

/* The per-channel scale and shift, rounded op by op as eager computes them. */
template <typename T>
__device__ __forceinline__ void params(const T *w, const T *b, const T *rm, const T *rv, long long ch, float *scale,
				       float *shift)
{
	float t4 = rt<T>(ld(rv, ch) + 1e-05f);
	float t5 = rt<T>(1.0f / sqrtf(t4));
	float t6 = rt<T>(ld(w, ch) * t5);
	float t7 = rt<T>(ld(rm, ch) * t6);
	*scale = t6;
	*shift = rt<T>(ld(b, ch) - t7);
}

template <typename T>
__global__ void frozen_bn_relu(const T *x, const T *w, const T *b, const T *rm, const T *rv, T *y, long long hw,
			       int c)
{
	long long j0 = ((long long)blockIdx.x * blockDim.x * ITER + threadIdx.x) * VEC;
	if (j0 >= hw)
		return;
	int ch = (int)(blockIdx.y % (unsigned)c);
	const long long base = (long long)blockIdx.y * hw;
	float scale, shift;
	params(w, b, rm, rv, ch, &scale, &shift);
	for (int it = 0; it < ITER; it++, j0 += (long long)blockDim.x * VEC) {
		if (j0 >= hw)
			return;
		int k = hw - j0 < VEC ? (int)(hw - j0) : VEC;
		const T *xp = x + base + j0;
		T *yp = y + base + j0;
		for (int e = 0; e < k; e++) {
			float v = rt<T>(rt<T>(ld(xp, e) * scale) + shift);
			st(yp, e, v != v ? v : (v > 0.0f ? v : 0.0f));
		}
	}
}

PASS_REPLACEMENT(pf_call *call)
{
	const pf_tensor *x = pf_in(call, 0), *w = pf_in(call, 1), *b = pf_in(call, 2), *rm = pf_in(call, 3),
			*rv = pf_in(call, 4);
	pf_tensor *y = pf_out(call, 0);
	long long hw = x->shape[2] * x->shape[3];
	int c = (int)x->shape[1];
	/* a block of up to 256 threads (a warp multiple) per ITER x VEC x
	 * threads of the plane: small planes get small blocks */
	long long need = (hw + VEC * ITER - 1) / (VEC * ITER);
	unsigned bt = need >= 256 ? 256 : (unsigned)((need + 31) / 32 * 32);
	pf_dim3 g = pf_dim((unsigned)((hw + (long long)bt * VEC * ITER - 1) / ((long long)bt * VEC * ITER)),
			   (unsigned)(x->shape[0] * c)),
		blk = pf_dim(bt);
	switch (y->dtype) {
	case PF_F32:
		return pf_launch(call, frozen_bn_relu<float>, g, blk, 0, x->data, w->data, b->data, rm->data, rv->data,
				 y->data, hw, c);
	case PF_F16:
		return pf_launch(call, frozen_bn_relu<__half>, g, blk, 0, x->data, w->data, b->data, rm->data,
				 rv->data, y->data, hw, c);
	case PF_BF16:
		return pf_launch(call, frozen_bn_relu<__nv_bfloat16>, g, blk, 0, x->data, w->data, b->data, rm->data,
				 rv->data, y->data, hw, c);
	}
	return pf_unsupported(call, "only float32, float16 and bfloat16");
}
