/* emu_bench.cc - speed of the CUDA emulation layer (gpu/include/pf_emu.h) on
 * one OS thread, next to plain C doing the same work.
 *
 * The kernels are built as a shared object, like a pass (-fPIC: TLS through
 * __tls_get_addr, as in a dlopen'ed pass); the driver dlopens it.  Build and
 * run from the repository root (see bench/README.md):
 *
 *   g++ -std=c++17 -O2 -fPIC -shared -fno-strict-aliasing -fno-math-errno \
 *       -Wno-unknown-pragmas -mf16c -I gpu/include -DEMU_BENCH_KERNELS \
 *       bench/emu_bench.cc -o build/emu_bench_kernels.so
 *   g++ -std=c++17 -O2 -fno-strict-aliasing -fno-math-errno -mf16c \
 *       -I gpu/include bench/emu_bench.cc -o build/emu_bench -ldl
 *   ./build/emu_bench build/emu_bench_kernels.so
 */
#define PASSFS_RUNTIME /* this file is a runtime: it implements run_blocks */
#include "passfs.h"

#ifdef EMU_BENCH_KERNELS
/* ------------------------------------------------------------------------ */
/* The "pass": kernels and extern "C" entry points.                         */

__global__ void saxpy(const float *__restrict__ x, float *__restrict__ y, float a, long long n)
{
	long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
	if (i < n)
		y[i] = a * x[i] + y[i];
}

/* The op library's style: one by-value parameter block (384 bytes). */
struct big_params {
	float *y;
	const float *x;
	long long n;
	long long shape[8], ostride[8], istride[3][8];
	double scalar[3];
	float alpha;
	int ndim;
};
__global__ void saxpy_struct(big_params p)
{
	long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
	if (i < p.n)
		p.y[i] = p.alpha * p.x[i] + p.y[i];
}

template <int BLOCK> __global__ void softmax_smem(const float *x, float *y, int cols)
{
	__shared__ float red[BLOCK];
	const float *row = x + (long long)blockIdx.x * cols;
	float *out = y + (long long)blockIdx.x * cols;
	int t = threadIdx.x;
	float m = -INFINITY;
	for (int j = t; j < cols; j += BLOCK)
		m = fmaxf(m, row[j]);
	red[t] = m;
	__syncthreads();
	for (int s = BLOCK / 2; s > 0; s >>= 1) {
		if (t < s)
			red[t] = fmaxf(red[t], red[t + s]);
		__syncthreads();
	}
	m = red[0];
	__syncthreads();
	float sum = 0.0f;
	for (int j = t; j < cols; j += BLOCK)
		sum += __expf(row[j] - m);
	red[t] = sum;
	__syncthreads();
	for (int s = BLOCK / 2; s > 0; s >>= 1) {
		if (t < s)
			red[t] += red[t + s];
		__syncthreads();
	}
	float inv = 1.0f / red[0];
	for (int j = t; j < cols; j += BLOCK)
		out[j] = __expf(row[j] - m) * inv;
}

/* The same with warp shuffles and one barrier per reduction. */
template <int BLOCK> __global__ void softmax_warp(const float *x, float *y, int cols)
{
	__shared__ float part[BLOCK / 32];
	const float *row = x + (long long)blockIdx.x * cols;
	float *out = y + (long long)blockIdx.x * cols;
	int t = threadIdx.x, lane = t & 31, w = t >> 5;
	float m = -INFINITY;
	for (int j = t; j < cols; j += BLOCK)
		m = fmaxf(m, row[j]);
	for (int o = 16; o > 0; o >>= 1)
		m = fmaxf(m, __shfl_xor_sync(0xffffffffu, m, o));
	if (lane == 0)
		part[w] = m;
	__syncthreads();
	m = part[0];
	for (int i = 1; i < BLOCK / 32; i++)
		m = fmaxf(m, part[i]);
	__syncthreads();
	float sum = 0.0f;
	for (int j = t; j < cols; j += BLOCK)
		sum += __expf(row[j] - m);
	for (int o = 16; o > 0; o >>= 1)
		sum += __shfl_xor_sync(0xffffffffu, sum, o);
	if (lane == 0)
		part[w] = sum;
	__syncthreads();
	sum = 0.0f;
	for (int i = 0; i < BLOCK / 32; i++)
		sum += part[i];
	float inv = 1.0f / sum;
	for (int j = t; j < cols; j += BLOCK)
		out[j] = __expf(row[j] - m) * inv;
}

#define MM_T 64
#define MM_K 16
__global__ void __launch_bounds__(256) matmul(const float *A, const float *B, float *C, int M, int N, int K)
{
	__shared__ float As[MM_K][MM_T + 1];
	__shared__ float Bs[MM_K][MM_T];
	int tx = threadIdx.x, ty = threadIdx.y, tid = ty * 16 + tx;
	int row0 = blockIdx.y * MM_T, col0 = blockIdx.x * MM_T;
	float acc[4][4] = {};
	for (int k0 = 0; k0 < K; k0 += MM_K) {
		for (int e = tid; e < MM_T * MM_K; e += 256) {
			int r = e / MM_K, kk = e % MM_K;
			int gr = row0 + r, gk = k0 + kk;
			As[kk][r] = (gr < M && gk < K) ? A[(long long)gr * K + gk] : 0.0f;
			int kb = e / MM_T, cb = e % MM_T;
			int gkb = k0 + kb, gc = col0 + cb;
			Bs[kb][cb] = (gkb < K && gc < N) ? B[(long long)gkb * N + gc] : 0.0f;
		}
		__syncthreads();
#pragma unroll 4
		for (int kk = 0; kk < MM_K; kk++) {
			float a[4], b[4];
			for (int i = 0; i < 4; i++)
				a[i] = As[kk][ty * 4 + i];
			for (int j = 0; j < 4; j++)
				b[j] = Bs[kk][tx * 4 + j];
			for (int i = 0; i < 4; i++)
				for (int j = 0; j < 4; j++)
					acc[i][j] += a[i] * b[j];
		}
		__syncthreads();
	}
	for (int i = 0; i < 4; i++)
		for (int j = 0; j < 4; j++) {
			int r = row0 + ty * 4 + i, cc = col0 + tx * 4 + j;
			if (r < M && cc < N)
				C[(long long)r * N + cc] = acc[i][j];
		}
}

extern "C" int bench_saxpy(pf_call *c, const float *x, float *y, long long n)
{
	return pf_launch(c, saxpy, pf_dim((unsigned)((n + 255) / 256)), pf_dim(256), 0, x, y, 2.0f, n);
}
extern "C" int bench_saxpy_struct(pf_call *c, const float *x, float *y, long long n)
{
	big_params p = {};
	p.x = x;
	p.y = y;
	p.n = n;
	p.alpha = 2.0f;
	return pf_launch(c, saxpy_struct, pf_dim((unsigned)((n + 255) / 256)), pf_dim(256), 0, p);
}
extern "C" int bench_softmax(pf_call *c, const float *x, float *y, int rows, int cols, int warp)
{
	if (warp)
		return pf_launch(c, softmax_warp<256>, pf_dim(rows), pf_dim(256), 0, x, y, cols);
	return pf_launch(c, softmax_smem<256>, pf_dim(rows), pf_dim(256), 0, x, y, cols);
}
extern "C" int bench_matmul(pf_call *c, const float *A, const float *B, float *C, int M, int N, int K)
{
	return pf_launch(c, matmul, pf_dim((N + 63) / 64, (M + 63) / 64), pf_dim(16, 16), 0, A, B, C, M, N, K);
}

#else
/* ------------------------------------------------------------------------ */
/* The driver.                                                              */
#include <dlfcn.h>
#include <time.h>
#include <algorithm>
#include <vector>

static int b_fail(pf_call *, int code, const char *msg)
{
	fprintf(stderr, "launch failed: %s\n", msg);
	return code;
}
static int b_run_blocks(pf_call *, pf_dim3 g, pf_dim3, void (*fn)(void *, pf_dim3), void *ctx, pf_launch_stats *)
{
	for (unsigned z = 0; z < g.z; z++)
		for (unsigned y = 0; y < g.y; y++)
			for (unsigned x = 0; x < g.x; x++)
				fn(ctx, pf_dim3{x, y, z});
	return PF_OK;
}

static double now()
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec * 1e-9;
}

template <typename F> static double median5(F f)
{
	double t[5];
	for (int i = 0; i < 5; i++) {
		double t0 = now();
		f();
		t[i] = now() - t0;
	}
	std::sort(t, t + 5);
	return t[2];
}

/* Plain C references. */
static void c_saxpy(const float *x, float *y, long long n)
{
	for (long long i = 0; i < n; i++)
		y[i] = 2.0f * x[i] + y[i];
}
static void c_softmax(const float *x, float *y, int rows, int cols)
{
	for (int r = 0; r < rows; r++) {
		const float *a = x + (long long)r * cols;
		float *o = y + (long long)r * cols;
		float m = -INFINITY, s = 0;
		for (int j = 0; j < cols; j++)
			m = fmaxf(m, a[j]);
		for (int j = 0; j < cols; j++)
			s += expf(a[j] - m);
		float inv = 1.0f / s;
		for (int j = 0; j < cols; j++)
			o[j] = expf(a[j] - m) * inv;
	}
}
static void c_matmul(const float *A, const float *B, float *C, int M, int N, int K)
{
	for (int i = 0; i < M; i++) {
		float *c = C + (long long)i * N;
		for (int j = 0; j < N; j++)
			c[j] = 0;
		for (int k = 0; k < K; k++) {
			float a = A[(long long)i * K + k];
			const float *b = B + (long long)k * N;
			for (int j = 0; j < N; j++)
				c[j] += a * b[j];
		}
	}
}

int main(int argc, char **argv)
{
	const char *so = argc > 1 ? argv[1] : "build/emu_bench_kernels.so";
	void *h = dlopen(so, RTLD_NOW | RTLD_LOCAL);
	if (!h) {
		fprintf(stderr, "dlopen %s: %s\n", so, dlerror());
		return 1;
	}
	typedef int (*saxpy_fn)(pf_call *, const float *, float *, long long);
	typedef int (*softmax_fn)(pf_call *, const float *, float *, int, int, int);
	typedef int (*matmul_fn)(pf_call *, const float *, const float *, float *, int, int, int);
	saxpy_fn k_saxpy = (saxpy_fn)dlsym(h, "bench_saxpy");
	saxpy_fn k_saxpy_struct = (saxpy_fn)dlsym(h, "bench_saxpy_struct");
	softmax_fn k_softmax = (softmax_fn)dlsym(h, "bench_softmax");
	matmul_fn k_matmul = (matmul_fn)dlsym(h, "bench_matmul");
	if (!k_saxpy || !k_saxpy_struct || !k_softmax || !k_matmul) {
		fprintf(stderr, "missing symbols in %s\n", so);
		return 1;
	}
	pf_runtime rt = {};
	rt.abi_version = PF_ABI_VERSION;
	rt.fail = b_fail;
	rt.run_blocks = b_run_blocks;
	pf_call c = {&rt, nullptr, PF_BACKEND_CPU};

	unsigned seed = 1;
	auto rnd = [&seed]() {
		seed = seed * 1664525u + 1013904223u;
		return (float)(seed >> 8) / 16777216.0f * 2.0f - 1.0f;
	};

	const long long n = 16ll << 20;
	std::vector<float> x(n), y(n), y2(n);
	for (auto &v : x)
		v = rnd();
	double e_saxpy = median5([&] { k_saxpy(&c, x.data(), y.data(), n); });
	double c_sax = median5([&] { c_saxpy(x.data(), y2.data(), n); });
	double e_saxpy_s = median5([&] { k_saxpy_struct(&c, x.data(), y.data(), n); });

	const int rows = 4096, cols = 1024;
	std::vector<float> sx((size_t)rows * cols), sy(sx.size()), sr(sx.size());
	for (auto &v : sx)
		v = rnd() * 4.0f;
	double e_soft = median5([&] { k_softmax(&c, sx.data(), sy.data(), rows, cols, 0); });
	double c_soft = median5([&] { c_softmax(sx.data(), sr.data(), rows, cols); });
	float err = 0;
	for (size_t i = 0; i < sx.size(); i++)
		err = std::max(err, fabsf(sy[i] - sr[i]));
	double e_softw = median5([&] { k_softmax(&c, sx.data(), sy.data(), rows, cols, 1); });
	float errw = 0;
	for (size_t i = 0; i < sx.size(); i++)
		errw = std::max(errw, fabsf(sy[i] - sr[i]));

	const int M = 512, N = 512, K = 512;
	std::vector<float> A(M * K), B(K * N), C(M * N), R(M * N);
	for (auto &v : A)
		v = rnd();
	for (auto &v : B)
		v = rnd();
	double e_mm = median5([&] { k_matmul(&c, A.data(), B.data(), C.data(), M, N, K); });
	double c_mm = median5([&] { c_matmul(A.data(), B.data(), R.data(), M, N, K); });
	float errm = 0;
	for (int i = 0; i < M * N; i++)
		errm = std::max(errm, fabsf(C[i] - R[i]));

	printf("CUDA emulation on one OS thread, median of 5 (seconds)\n");
	printf("%-44s %10s %10s %8s\n", "kernel", "emulated", "plain C", "ratio");
	printf("%-44s %10.4f %10.4f %8.1f\n", "elementwise saxpy, 16M floats (fast path)", e_saxpy, c_sax,
	       e_saxpy / c_sax);
	printf("%-44s %10.4f %10.4f %8.1f\n", "  same, one 384-byte by-value struct param", e_saxpy_s, c_sax,
	       e_saxpy_s / c_sax);
	printf("%-44s %10.4f %10.4f %8.1f\n", "row softmax 4096x1024, 256 thr, __syncthreads", e_soft, c_soft,
	       e_soft / c_soft);
	printf("%-44s %10.4f %10.4f %8.1f\n", "row softmax 4096x1024, 256 thr, warp shuffles", e_softw, c_soft,
	       e_softw / c_soft);
	printf("%-44s %10.4f %10.4f %8.1f\n", "matmul 512^3, 64x64 tiles, 256 thr", e_mm, c_mm, e_mm / c_mm);
	printf("max abs error: softmax %.2g, softmax (warp) %.2g, matmul %.2g\n", err, errw, errm);
	return (err < 1e-5f && errw < 1e-5f && errm < 1e-3f) ? 0 : 1;
}
#endif
