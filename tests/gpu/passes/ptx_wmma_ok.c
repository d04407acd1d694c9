/* Correct on the GPU with device-only code: inline PTX does the bias add and a
 * tensor-core product (wmma, 16x16x16 of ones: every element 16) supplies the
 * scale 16/16 = 1.  Verdict ok on the cuda backend; unsupported on the cpu
 * backend.  It exercises the cuda backend's host compile (kernel bodies become
 * stubs, so g++ never sees PTX or wmma), the JIT of sm_90a PTX, pf_scratch and
 * two kernels in one call. */
#include <passfs.h>
#include <mma.h>

using namespace nvcuda;

__device__ inline float ld(const float *p, long long i) { return p[i]; }
__device__ inline float ld(const __half *p, long long i) { return __half2float(p[i]); }
__device__ inline float ld(const __nv_bfloat16 *p, long long i) { return __bfloat162float(p[i]); }
__device__ inline void st(float *p, long long i, float v) { p[i] = v; }
__device__ inline void st(__half *p, long long i, float v) { p[i] = __float2half(v); }
__device__ inline void st(__nv_bfloat16 *p, long long i, float v) { p[i] = __float2bfloat16(v); }

/* One warp: C = A x B with A, B all ones (16x16, half), C in float. */
__global__ void ones_mma(float *c)
{
	wmma::fragment<wmma::matrix_a, 16, 16, 16, __half, wmma::row_major> a;
	wmma::fragment<wmma::matrix_b, 16, 16, 16, __half, wmma::col_major> b;
	wmma::fragment<wmma::accumulator, 16, 16, 16, float> acc;
	wmma::fill_fragment(a, __float2half(1.0f));
	wmma::fill_fragment(b, __float2half(1.0f));
	wmma::fill_fragment(acc, 0.0f);
	wmma::mma_sync(acc, a, b, acc);
	wmma::store_matrix_sync(c, acc, 16, wmma::mem_row_major);
}

__device__ __forceinline__ float ptx_add(float a, float b)
{
	float r;
	asm("add.rn.f32 %0, %1, %2;" : "=f"(r) : "f"(a), "f"(b));
	return r;
}

template <typename T>
__global__ void bias_gelu(const T *x, const T *bias, T *y, const float *mma, long long n, long long c)
{
	long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
	if (i >= n)
		return;
	float v = ptx_add(ld(x, i), ld(bias, i % c));
	T r;
	st(&r, 0, v);
	v = ld(&r, 0) * (mma[37] / 16.0f);
	float u = 0.7978845608028654f * (v + 0.044715f * v * v * v);
	st(y, i, 0.5f * v * (1.0f + tanhf(u)));
}

PASS_REPLACEMENT(pf_call *call)
{
	const pf_tensor *x = pf_in(call, 0), *b = pf_in(call, 1);
	pf_tensor *y = pf_out(call, 0);
	long long n = pf_numel(y), c = b->shape[0];
	pf_dim3 grid = pf_dim((unsigned)((n + 255) / 256)), block = pf_dim(256);
	float *mma = (float *)pf_scratch(call, 256 * sizeof(float));
	if (mma == NULL)
		return PF_ERR_SCRATCH;
	int rc = pf_launch(call, ones_mma, pf_dim(1), pf_dim(32), 0, mma);
	if (rc != PF_OK)
		return rc;
	switch (y->dtype) {
	case PF_F32:
		return pf_launch(call, bias_gelu<float>, grid, block, 0, x->data, b->data, y->data, mma, n, c);
	case PF_F16:
		return pf_launch(call, bias_gelu<__half>, grid, block, 0, x->data, b->data, y->data, mma, n, c);
	case PF_BF16:
		return pf_launch(call, bias_gelu<__nv_bfloat16>, grid, block, 0, x->data, b->data, y->data, mma, n, c);
	}
	return pf_unsupported(call, "only float32, float16 and bfloat16");
}
