/* Correct on every backend: C = A x B in float32 with 32x32 tiles staged in
 * shared memory (each thread one element, the K loop in tile steps).  For
 * tests/gpu/tasks/gemm_f32, whose eager baseline is a cuBLAS GEMM on a GPU:
 * the device check evaluates it to see the cuBLAS handle's start-up in the
 * eval's wall time (under both CUDA module loading modes) and cuBLAS's
 * kernels in the CUPTI records. */
#include <passfs.h>

#define TILE 32

__global__ void gemm_tiled(const float *a, const float *b, float *c, int m, int k, int n)
{
	__shared__ float ta[TILE][TILE];
	__shared__ float tb[TILE][TILE + 1];
	int row = blockIdx.y * TILE + threadIdx.y, col = blockIdx.x * TILE + threadIdx.x;
	float acc = 0.0f;
	for (int k0 = 0; k0 < k; k0 += TILE) {
		int ka = k0 + threadIdx.x, kb = k0 + threadIdx.y;
		ta[threadIdx.y][threadIdx.x] = row < m && ka < k ? a[(long long)row * k + ka] : 0.0f;
		tb[threadIdx.y][threadIdx.x] = kb < k && col < n ? b[(long long)kb * n + col] : 0.0f;
		__syncthreads();
		for (int j = 0; j < TILE; j++)
			acc += ta[threadIdx.y][j] * tb[j][threadIdx.x];
		__syncthreads();
	}
	if (row < m && col < n)
		c[(long long)row * n + col] = acc;
}

PASS_REPLACEMENT(pf_call *call)
{
	const pf_tensor *a = pf_in(call, 0), *b = pf_in(call, 1);
	pf_tensor *c = pf_out(call, 0);
	if (a->dtype != PF_F32 || a->ndim != 2 || b->ndim != 2)
		return pf_unsupported(call, "float32 2-D matmul only");
	int m = (int)a->shape[0], k = (int)a->shape[1], n = (int)b->shape[1];
	return pf_launch(call, gemm_tiled, pf_dim((unsigned)((n + TILE - 1) / TILE), (unsigned)((m + TILE - 1) / TILE)),
			 pf_dim(TILE, TILE), 0, a->data, b->data, c->data, m, k, n);
}
