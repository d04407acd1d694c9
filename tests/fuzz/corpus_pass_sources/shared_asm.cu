#include <cuda_fp16.h>
extern __shared__ float smem_top[];
namespace k {
__device__ int bump(int x) { int y; asm volatile("mov.u32 %0, %1;" : "=r"(y) : "r"(x)); return y; }
}
template <int N>
__global__ void scale(const float *in, float *out, long n)
{
	extern __shared__ __align__(16) unsigned char smem[];
	float *buf = (float *)smem;
	long i = blockIdx.x * (long)blockDim.x + threadIdx.x;
	if (i < n) { buf[threadIdx.x] = in[i] * N; out[i] = buf[threadIdx.x] + k::bump(1); }
}
static __host__ __device__ inline float twice(float v) { __asm__ __volatile__("" ::: "memory"); return 2 * v; }
PASS_REPLACEMENT(run)
{
	pf_launch(call, scale<4>, pf_dim3(1), pf_dim3(256), 1024, a, b, n);
	return 0;
}
