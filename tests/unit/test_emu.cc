/* test_emu.cc - the CUDA emulation layer (gpu/include/pf_emu.h): kernels run
 * through pf_launch on a fake worker runtime (serial, and 3 pthreads running
 * blocks concurrently), checked against plain C references. */
#define PASSFS_RUNTIME /* this file is a runtime: it implements run_blocks */
#include "passfs.h"

#include <pthread.h>
#include <stdarg.h>
#include <algorithm>
#include <vector>

static int g_pass, g_fail;

#define CHECK(cond, ...)                                                      \
	do {                                                                  \
		if (cond) {                                                   \
			g_pass++;                                             \
		} else {                                                      \
			g_fail++;                                             \
			printf("FAIL %s:%d: %s: ", __FILE__, __LINE__, #cond); \
			printf(__VA_ARGS__);                                  \
			printf("\n");                                         \
		}                                                             \
	} while (0)

/* ------------------------------------------------------------------------ */
/* Fake worker runtime                                                      */

struct fake_call {
	pf_call c;
	int fails;
	int last_code;
	char last_msg[512];
	int nthreads; /* run_blocks: 0 = serial, else that many pthreads */
	/* cuda backend capture */
	const void *k_addr;
	int k_nargs;
	size_t k_sizes[8];
	long long k_vals[8];
};

static int fake_fail(pf_call *c, int code, const char *msg)
{
	fake_call *f = (fake_call *)c;
	f->fails++;
	f->last_code = code;
	snprintf(f->last_msg, sizeof f->last_msg, "%s", msg);
	return code;
}

struct rb_job {
	pf_dim3 g;
	void (*fn)(void *, pf_dim3);
	void *ctx;
	unsigned long long next, total;
};

static void *rb_worker(void *p)
{
	rb_job *j = (rb_job *)p;
	for (;;) {
		unsigned long long b = __atomic_fetch_add(&j->next, 1, __ATOMIC_RELAXED);
		if (b >= j->total)
			break;
		pf_dim3 idx = {(unsigned)(b % j->g.x), (unsigned)(b / j->g.x % j->g.y),
			       (unsigned)(b / ((unsigned long long)j->g.x * j->g.y))};
		j->fn(j->ctx, idx);
	}
	return nullptr;
}

static int fake_run_blocks(pf_call *c, pf_dim3 g, pf_dim3, void (*fn)(void *, pf_dim3), void *ctx,
			   pf_launch_stats *)
{
	fake_call *f = (fake_call *)c;
	rb_job j = {g, fn, ctx, 0, (unsigned long long)g.x * g.y * g.z};
	if (!f->nthreads) {
		rb_worker(&j);
		return PF_OK;
	}
	pthread_t th[8];
	for (int i = 0; i < f->nthreads; i++)
		pthread_create(&th[i], nullptr, rb_worker, &j);
	for (int i = 0; i < f->nthreads; i++)
		pthread_join(th[i], nullptr);
	return PF_OK;
}

static int fake_launch(pf_call *c, const void *kernel, pf_dim3, pf_dim3, size_t, void **args, int nargs,
		       const size_t *sizes)
{
	fake_call *f = (fake_call *)c;
	f->k_addr = kernel;
	f->k_nargs = nargs;
	for (int i = 0; i < nargs && i < 8; i++) {
		f->k_sizes[i] = sizes[i];
		f->k_vals[i] = 0;
		memcpy(&f->k_vals[i], args[i], sizes[i] < 8 ? sizes[i] : 8);
	}
	return PF_OK;
}

static pf_runtime g_rt;

static void fake_init(fake_call *f, int nthreads, int backend = PF_BACKEND_CPU)
{
	memset(f, 0, sizeof *f);
	g_rt.abi_version = PF_ABI_VERSION;
	g_rt.fail = fake_fail;
	g_rt.run_blocks = fake_run_blocks;
	g_rt.launch = fake_launch;
	f->c.rt = &g_rt;
	f->c.backend = backend;
	f->nthreads = nthreads;
}

static unsigned g_seed = 12345;
static float frand()
{
	g_seed = g_seed * 1664525u + 1013904223u;
	return (float)(g_seed >> 8) / 16777216.0f * 2.0f - 1.0f;
}

/* ------------------------------------------------------------------------ */
/* Kernels                                                                  */

__global__ void k_saxpy(const float *__restrict__ x, float *__restrict__ y, float a, long long n)
{
	long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
	if (i < n)
		y[i] = a * x[i] + y[i];
}

/* Every thread writes its global linear id (checks 3-D index mapping). */
__global__ void k_ids(unsigned *out)
{
	unsigned tib = threadIdx.x + blockDim.x * (threadIdx.y + blockDim.y * threadIdx.z);
	unsigned bid = blockIdx.x + gridDim.x * (blockIdx.y + gridDim.y * blockIdx.z);
	unsigned nt = blockDim.x * blockDim.y * blockDim.z;
	out[bid * nt + tib] = bid * 100000u + tib;
}

template <typename T, int BLOCK> __global__ void softmax(const T *x, T *y, int cols)
{
	__shared__ float red[BLOCK];
	const T *row = x + (long long)blockIdx.x * cols;
	T *out = y + (long long)blockIdx.x * cols;
	int t = threadIdx.x;
	float m = -INFINITY;
	for (int j = t; j < cols; j += BLOCK)
		m = fmaxf(m, (float)row[j]);
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
		sum += __expf((float)row[j] - m);
	red[t] = sum;
	__syncthreads();
	for (int s = BLOCK / 2; s > 0; s >>= 1) {
		if (t < s)
			red[t] += red[t + s];
		__syncthreads();
	}
	float inv = 1.0f / red[0];
	for (int j = t; j < cols; j += BLOCK)
		out[j] = (T)(__expf((float)row[j] - m) * inv);
}

/* Dynamic shared memory, as the pipeline's rewrite produces it: reverse each
 * block's chunk through shared memory. */
__global__ void k_reverse(const int *in, int *out)
{
	int *s = (int *)pf_emu::dyn_smem(); /* was: extern __shared__ int s[]; */
	int t = threadIdx.x, n = blockDim.x;
	s[t] = in[blockIdx.x * n + t];
	__syncthreads();
	out[blockIdx.x * n + t] = s[n - 1 - t];
}

/* The namespace-scope form of the rewrite. */
#define g_dyn ((float *)pf_emu::dyn_smem()) /* was: extern __shared__ float g_dyn[]; */
__global__ void k_dyn_scale(const float *in, float *out, float k)
{
	int t = threadIdx.x;
	g_dyn[t] = in[blockIdx.x * blockDim.x + t] * k;
	__syncthreads();
	float4 *v = reinterpret_cast<float4 *>(g_dyn);
	(void)v;
	out[blockIdx.x * blockDim.x + t] = g_dyn[(t + 1) % blockDim.x];
}

/* Warp reductions: per warp the sum by __shfl_down_sync, by __shfl_xor_sync
 * (every lane gets it), and width-16 halves; plus an inclusive scan by
 * __shfl_up_sync and a broadcast by __shfl_sync. */
__global__ void k_warp(const float *x, float *wsum_down, float *wsum_xor, float *half16, float *scan,
		       float *bcast)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	int lane = threadIdx.x & 31;
	float v = x[i];
	float a = v;
	for (int o = 16; o > 0; o >>= 1)
		a += __shfl_down_sync(0xffffffffu, a, o);
	float b = v;
	for (int o = 16; o > 0; o >>= 1)
		b += __shfl_xor_sync(0xffffffffu, b, o);
	float c = v;
	for (int o = 8; o > 0; o >>= 1)
		c += __shfl_xor_sync(0xffffffffu, c, o, 16);
	float s = v;
	for (int o = 1; o < 32; o <<= 1) {
		float u = __shfl_up_sync(0xffffffffu, s, o);
		if (lane >= o)
			s += u;
	}
	if (lane == 0)
		wsum_down[i / 32] = a;
	wsum_xor[i] = b;
	half16[i] = c;
	scan[i] = s;
	bcast[i] = __shfl_sync(0xffffffffu, v, 5);
}

/* Votes and reductions in a 48-thread block (the second warp is partial). */
__global__ void k_votes(const int *pred, unsigned *ballot, int *any, int *all, unsigned *rsum, int *rmin,
			unsigned *match, unsigned *active, long long *dshfl)
{
	int t = threadIdx.x;
	int p = pred[t];
	ballot[t] = __ballot_sync(__activemask(), p);
	any[t] = __any_sync(0xffffffffu, p);
	all[t] = __all_sync(0xffffffffu, p);
	rsum[t] = __reduce_add_sync(0xffffffffu, (unsigned)t);
	rmin[t] = __reduce_min_sync(0xffffffffu, 100 - t);
	match[t] = __match_any_sync(0xffffffffu, t % 3);
	active[t] = __activemask();
	long long big = (long long)t << 40;
	dshfl[t] = __shfl_xor_sync(0xffffffffu, big, 1);
}

/* Tiled matmul: 64x64 output tile per block of 16x16 threads (4x4 each),
 * K tiles of 16 through shared memory.  C[M,N] = A[M,K] @ B[K,N]. */
#define MM_T 64
#define MM_K 16
__global__ void __launch_bounds__(256) k_matmul(const float *A, const float *B, float *C, int M, int N, int K)
{
	__shared__ float As[MM_K][MM_T + 1];
	__shared__ float Bs[MM_K][MM_T];
	int tx = threadIdx.x, ty = threadIdx.y, tid = ty * 16 + tx;
	int row0 = blockIdx.y * MM_T, col0 = blockIdx.x * MM_T;
	float acc[4][4];
#pragma unroll
	for (int i = 0; i < 4; i++)
#pragma unroll
		for (int j = 0; j < 4; j++)
			acc[i][j] = 0.0f;
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

__global__ void k_hist(const int *v, float *hist, int *count, unsigned *maxv, int n)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i >= n)
		return;
	atomicAdd(&hist[v[i]], 1.0f);
	atomicAdd(count, 1);
	atomicMax(maxv, (unsigned)v[i]);
}

/* A __device__ helper with its own static __shared__ scratch. */
__device__ float block_sum(float v)
{
	static __shared__ float part[32];
	int lane = threadIdx.x & 31, w = threadIdx.x >> 5;
	for (int o = 16; o > 0; o >>= 1)
		v += __shfl_down_sync(0xffffffffu, v, o);
	if (lane == 0)
		part[w] = v;
	__syncthreads();
	float r = 0.0f;
	if (threadIdx.x == 0)
		for (int i = 0; i < (int)(blockDim.x + 31) / 32; i++)
			r += part[i];
	__syncthreads();
	return r;
}
__global__ void k_block_sums(const float *x, float *out)
{
	float s = block_sum(x[blockIdx.x * blockDim.x + threadIdx.x]);
	if (threadIdx.x == 0)
		out[blockIdx.x] = s;
}

__global__ void k_packed(int *out, long long a, double b, short c, const float *p)
{
	if (threadIdx.x == 0 && blockIdx.x == 0)
		out[0] = (int)(a + (long long)b + c + (long long)p[0]);
}

/* Half the threads return before the barrier. */
__global__ void k_diverge(int *out)
{
	if (threadIdx.x % 2)
		return;
	__syncthreads();
	out[threadIdx.x] = 1;
}

/* Threads wait at __syncthreads while others of their warp wait in a shuffle. */
__global__ void k_mixed_deadlock(int *out)
{
	if (threadIdx.x < 16) {
		__syncthreads();
	} else {
		out[threadIdx.x] = __shfl_sync(0xffffffffu, (int)threadIdx.x, 0);
	}
}

__global__ void k_counts(const int *pred, int *cnt, int *and_, int *or_)
{
	int p = pred[threadIdx.x];
	int c = __syncthreads_count(p);
	int a = __syncthreads_and(p);
	int o = __syncthreads_or(p);
	if (threadIdx.x == 0) {
		*cnt = c;
		*and_ = a;
		*or_ = o;
	}
}

/* Only odd blocks use a barrier. */
__global__ void k_some_blocks(int *out)
{
	__shared__ int s[128];
	int t = threadIdx.x;
	if (blockIdx.x % 2) {
		s[t] = t;
		__syncthreads();
		out[blockIdx.x * 128 + t] = s[127 - t];
	} else {
		out[blockIdx.x * 128 + t] = t;
	}
}

/* 1024 threads, deep-ish stacks, several barriers. */
__global__ void k_big_block(int *out)
{
	__shared__ int s[1024];
	int t = threadIdx.x + threadIdx.y * blockDim.x;
	volatile int local[256];
	for (int i = 0; i < 256; i++)
		local[i] = t + i;
	s[t] = local[255];
	__syncthreads();
	int v = s[(t + 1) % 1024];
	__syncthreads();
	s[t] = v * 2;
	__syncthreads();
	out[t] = s[1023 - t];
}

__global__ void k_half_math(const __half *a, const __half *b, __half *sum, __half *prod, __half *fma_,
			    __nv_bfloat16 *bsum, __half2 *h2)
{
	int i = threadIdx.x;
	sum[i] = a[i] + b[i];
	prod[i] = __hmul(a[i], b[i]);
	fma_[i] = __hfma(a[i], b[i], a[i]);
	__nv_bfloat16 x = __float2bfloat16((float)a[i]), y = __float2bfloat16((float)b[i]);
	bsum[i] = x + y;
	h2[i] = __halves2half2(a[i], b[i]) * __halves2half2(b[i], a[i]);
}

/* Each CUDA thread gets its own copy of the parameters. */
__global__ void k_param_copy(int n, int *out, const float *unused)
{
	n += threadIdx.x;
	out[threadIdx.x] = n;
	(void)unused;
}

/* Divergent warp code: lanes 0-15 and 16-31 shuffle within their halves
 * (partial masks), lanes >= 24 exit, the rest use __activemask. */
__global__ void k_partial(int *out, unsigned *amask)
{
	int lane = threadIdx.x & 31;
	int v = lane * 10;
	if (lane < 16)
		v += __shfl_down_sync(0x0000ffffu, v, 1, 16);
	else
		v += __shfl_xor_sync(0xffff0000u, v, 1);
	__syncwarp();
	if (lane >= 24)
		return;
	unsigned m = __activemask();
	amask[threadIdx.x] = m;
	out[threadIdx.x] = v + __shfl_sync(m, lane, 0);
}

/* ------------------------------------------------------------------------ */
/* References                                                               */

static void ref_softmax(const float *x, float *y, int rows, int cols)
{
	for (int r = 0; r < rows; r++) {
		const float *a = x + (long long)r * cols;
		double m = -INFINITY, s = 0;
		for (int j = 0; j < cols; j++)
			m = a[j] > m ? a[j] : m;
		for (int j = 0; j < cols; j++)
			s += exp(a[j] - m);
		for (int j = 0; j < cols; j++)
			y[(long long)r * cols + j] = (float)(exp(a[j] - m) / s);
	}
}

static float max_rel(const float *a, const float *b, long long n)
{
	float w = 0;
	for (long long i = 0; i < n; i++) {
		float d = fabsf(a[i] - b[i]) / (fabsf(b[i]) + 1e-6f);
		if (!(d <= w))
			w = d;
	}
	return w;
}

/* ------------------------------------------------------------------------ */
/* Tests                                                                    */

static void test_elementwise(int nthreads)
{
	fake_call f;
	fake_init(&f, nthreads);
	const long long n = 100003;
	std::vector<float> x(n), y(n), ref(n);
	for (long long i = 0; i < n; i++) {
		x[i] = frand();
		y[i] = frand();
		ref[i] = 2.5f * x[i] + y[i];
	}
	void *xp = x.data(), *yp = y.data();
	int rc = pf_launch(&f.c, k_saxpy, pf_dim((unsigned)((n + 255) / 256)), pf_dim(256), 0, xp, yp, 2.5, n);
	CHECK(rc == PF_OK, "rc %d (%s)", rc, f.last_msg);
	CHECK(memcmp(y.data(), ref.data(), n * sizeof(float)) == 0, "saxpy differs (threads %d)", nthreads);

	/* 3-D blocks and grids */
	pf_dim3 g = pf_dim(3, 2, 2), b = pf_dim(16, 4, 3);
	unsigned nt = 16 * 4 * 3, nb = 12;
	std::vector<unsigned> ids(nt * nb, 0xffffffffu);
	rc = pf_launch(&f.c, k_ids, g, b, 0, (void *)ids.data());
	CHECK(rc == PF_OK, "rc %d", rc);
	int bad = 0;
	for (unsigned bi = 0; bi < nb; bi++)
		for (unsigned t = 0; t < nt; t++)
			bad += ids[bi * nt + t] != bi * 100000u + t;
	CHECK(bad == 0, "%d wrong thread/block ids", bad);
}

static void test_softmax(int nthreads)
{
	fake_call f;
	fake_init(&f, nthreads);
	const int rows = 64, cols = 1000;
	std::vector<float> x((size_t)rows * cols), y(x.size()), ref(x.size());
	for (auto &v : x)
		v = frand() * 8.0f;
	ref_softmax(x.data(), ref.data(), rows, cols);
	int rc = pf_launch(&f.c, softmax<float, 256>, pf_dim(rows), pf_dim(256), 0, (const void *)x.data(),
			   (void *)y.data(), cols);
	CHECK(rc == PF_OK, "rc %d (%s)", rc, f.last_msg);
	float e = max_rel(y.data(), ref.data(), (long long)x.size());
	CHECK(e < 1e-5f, "softmax<float,256> max rel err %g (threads %d)", e, nthreads);

	/* the same template with __half and another block size */
	std::vector<__half> xh(x.size()), yh(x.size());
	for (size_t i = 0; i < x.size(); i++)
		xh[i] = __float2half(x[i]);
	rc = pf_launch(&f.c, softmax<__half, 128>, pf_dim(rows), pf_dim(128), 0, (const void *)xh.data(),
		       (void *)yh.data(), cols);
	CHECK(rc == PF_OK, "rc %d (%s)", rc, f.last_msg);
	std::vector<float> xr(x.size()), yr(x.size()), yf(x.size());
	for (size_t i = 0; i < x.size(); i++) {
		xr[i] = __half2float(xh[i]);
		yf[i] = __half2float(yh[i]);
	}
	ref_softmax(xr.data(), yr.data(), rows, cols);
	/* outputs are rounded to half: half an ulp, or the subnormal spacing */
	int bad = 0;
	for (size_t i = 0; i < x.size(); i++)
		bad += !(fabsf(yf[i] - yr[i]) <= 1e-3f * fabsf(yr[i]) + 6e-8f);
	CHECK(bad == 0, "softmax<__half,128>: %d outputs off by more than half rounding", bad);
}

static void test_dyn_smem(int nthreads)
{
	fake_call f;
	fake_init(&f, nthreads);
	const int nb = 37, bs = 200;
	std::vector<int> in(nb * bs), out(nb * bs, -1);
	for (int i = 0; i < nb * bs; i++)
		in[i] = i * 7 + 3;
	int rc = pf_launch(&f.c, k_reverse, pf_dim(nb), pf_dim(bs), bs * sizeof(int), (const void *)in.data(),
			   (void *)out.data());
	CHECK(rc == PF_OK, "rc %d (%s)", rc, f.last_msg);
	int bad = 0;
	for (int b = 0; b < nb; b++)
		for (int t = 0; t < bs; t++)
			bad += out[b * bs + t] != in[b * bs + bs - 1 - t];
	CHECK(bad == 0, "%d wrong after dynamic-shared reverse", bad);
	CHECK(((uintptr_t)pf_emu::dyn_smem() & 127) == 0, "dyn_smem not 128-aligned");

	std::vector<float> fi(nb * 64), fo(nb * 64);
	for (size_t i = 0; i < fi.size(); i++)
		fi[i] = (float)i;
	rc = pf_launch(&f.c, k_dyn_scale, pf_dim(nb), pf_dim(64), 64 * sizeof(float), (const void *)fi.data(),
		       (void *)fo.data(), 0.5f);
	CHECK(rc == PF_OK, "rc %d (%s)", rc, f.last_msg);
	bad = 0;
	for (int b = 0; b < nb; b++)
		for (int t = 0; t < 64; t++)
			bad += fo[b * 64 + t] != fi[b * 64 + (t + 1) % 64] * 0.5f;
	CHECK(bad == 0, "%d wrong (namespace-scope dynamic shared)", bad);
}

static void test_warp(int nthreads)
{
	fake_call f;
	fake_init(&f, nthreads);
	const int nb = 5, bs = 128, n = nb * bs;
	std::vector<float> x(n), down(n / 32), xr(n), h16(n), scan(n), bc(n);
	for (int i = 0; i < n; i++)
		x[i] = (float)((i * 37) % 101 - 50); /* integers: sums are exact */
	int rc = pf_launch(&f.c, k_warp, pf_dim(nb), pf_dim(bs), 0, (const void *)x.data(), (void *)down.data(),
			   (void *)xr.data(), (void *)h16.data(), (void *)scan.data(), (void *)bc.data());
	CHECK(rc == PF_OK, "rc %d (%s)", rc, f.last_msg);
	int bad_down = 0, bad_xor = 0, bad16 = 0, bad_scan = 0, bad_bc = 0;
	for (int w = 0; w < n / 32; w++) {
		float s = 0;
		for (int l = 0; l < 32; l++)
			s += x[w * 32 + l];
		bad_down += down[w] != s;
		float run = 0;
		for (int l = 0; l < 32; l++) {
			int i = w * 32 + l;
			bad_xor += xr[i] != s;
			float hs = 0;
			for (int k = 0; k < 16; k++)
				hs += x[w * 32 + (l & 16) + k];
			bad16 += h16[i] != hs;
			run += x[i];
			bad_scan += scan[i] != run;
			bad_bc += bc[i] != x[w * 32 + 5];
		}
	}
	CHECK(bad_down == 0, "%d wrong __shfl_down_sync warp sums", bad_down);
	CHECK(bad_xor == 0, "%d wrong __shfl_xor_sync sums", bad_xor);
	CHECK(bad16 == 0, "%d wrong width-16 sums", bad16);
	CHECK(bad_scan == 0, "%d wrong __shfl_up_sync scan", bad_scan);
	CHECK(bad_bc == 0, "%d wrong __shfl_sync broadcast", bad_bc);
}

static void test_votes()
{
	fake_call f;
	fake_init(&f, 0);
	const int n = 48;
	int pred[n], any[n], all[n], rmin[n];
	unsigned ballot[n], rsum[n], match[n], active[n];
	long long dsh[n];
	for (int i = 0; i < n; i++)
		pred[i] = (i % 5 == 0) || i >= 32;
	int rc = pf_launch(&f.c, k_votes, pf_dim(1), pf_dim(n), 0, (const void *)pred, (void *)ballot, (void *)any,
			   (void *)all, (void *)rsum, (void *)rmin, (void *)match, (void *)active, (void *)dsh);
	CHECK(rc == PF_OK, "rc %d (%s)", rc, f.last_msg);
	unsigned b0 = 0;
	for (int l = 0; l < 32; l++)
		if (pred[l])
			b0 |= 1u << l;
	CHECK(ballot[3] == b0 && ballot[31] == b0, "ballot %08x, want %08x", ballot[3], b0);
	CHECK(ballot[40] == 0xffffu, "partial-warp ballot %08x, want 0000ffff", ballot[40]);
	CHECK(any[0] == 1 && all[0] == 0 && all[40] == 1, "any %d all %d all(partial) %d", any[0], all[0], all[40]);
	CHECK(rsum[7] == 496u && rsum[33] == (32u + 47u) * 16u / 2u, "reduce_add %u %u", rsum[7], rsum[33]);
	CHECK(rmin[0] == 100 - 31 && rmin[47] == 100 - 47, "reduce_min %d %d", rmin[0], rmin[47]);
	unsigned m0 = 0;
	for (int l = 0; l < 32; l++)
		if (l % 3 == 0)
			m0 |= 1u << l;
	CHECK(match[0] == m0 && match[3] == m0 && match[1] == ((m0 << 1) & 0xffffffffu), "match_any %08x %08x",
	      match[0], match[1]);
	CHECK(active[0] == 0xffffffffu && active[40] == 0xffffu, "activemask %08x %08x", active[0], active[40]);
	CHECK(dsh[6] == (7ll << 40) && dsh[7] == (6ll << 40), "64-bit shuffle %llx", (unsigned long long)dsh[6]);
}

static void test_matmul(int nthreads)
{
	fake_call f;
	fake_init(&f, nthreads);
	const int M = 128, K = 96, N = 80;
	std::vector<float> A(M * K), B(K * N), C(M * N, -1.0f), R(M * N);
	for (auto &v : A)
		v = frand();
	for (auto &v : B)
		v = frand();
	for (int i = 0; i < M; i++)
		for (int j = 0; j < N; j++) {
			double s = 0;
			for (int k = 0; k < K; k++)
				s += (double)A[i * K + k] * B[k * N + j];
			R[i * N + j] = (float)s;
		}
	int rc = pf_launch(&f.c, k_matmul, pf_dim((N + 63) / 64, (M + 63) / 64), pf_dim(16, 16), 0,
			   (const void *)A.data(), (const void *)B.data(), (void *)C.data(), M, N, K);
	CHECK(rc == PF_OK, "rc %d (%s)", rc, f.last_msg);
	float w = 0;
	for (int i = 0; i < M * N; i++)
		w = fmaxf(w, fabsf(C[i] - R[i]));
	CHECK(w < 1e-4f, "matmul max abs err %g (threads %d)", w, nthreads);
}

static void test_atomics()
{
	fake_call f;
	fake_init(&f, 4);
	const int n = 200000, bins = 64;
	std::vector<int> v(n);
	std::vector<float> hist(bins, 0.0f);
	std::vector<int> ref(bins, 0);
	unsigned mx = 0;
	for (int i = 0; i < n; i++) {
		g_seed = g_seed * 1664525u + 1013904223u;
		v[i] = (int)((g_seed >> 10) % bins);
		ref[v[i]]++;
		mx = v[i] > (int)mx ? (unsigned)v[i] : mx;
	}
	int count = 0;
	unsigned maxv = 0;
	int rc = pf_launch(&f.c, k_hist, pf_dim((n + 127) / 128), pf_dim(128), 0, (const void *)v.data(),
			   (void *)hist.data(), &count, &maxv, n);
	CHECK(rc == PF_OK, "rc %d (%s)", rc, f.last_msg);
	int bad = 0;
	for (int i = 0; i < bins; i++)
		bad += hist[i] != (float)ref[i];
	CHECK(bad == 0, "%d histogram bins differ (concurrent float atomicAdd)", bad);
	CHECK(count == n && maxv == mx, "count %d maxv %u", count, maxv);

	/* host-side calls of the other atomics */
	unsigned u = 5;
	CHECK(atomicInc(&u, 5) == 5 && u == 0, "atomicInc wrap: %u", u);
	CHECK(atomicDec(&u, 7) == 0 && u == 7, "atomicDec wrap: %u", u);
	int iv = 10;
	CHECK(atomicCAS(&iv, 10, 3) == 10 && iv == 3, "atomicCAS %d", iv);
	CHECK(atomicCAS(&iv, 10, 4) == 3 && iv == 3, "atomicCAS fail %d", iv);
	CHECK(atomicMin(&iv, -2) == 3 && iv == -2, "atomicMin %d", iv);
	CHECK(atomicExch(&iv, 9) == -2 && iv == 9, "atomicExch %d", iv);
	CHECK(atomicAnd(&iv, 1) == 9 && iv == 1 && atomicOr(&iv, 6) == 1 && iv == 7 && atomicXor(&iv, 2) == 7 && iv == 5,
	      "and/or/xor %d", iv);
	unsigned long long ull = 1;
	atomicAdd(&ull, 1ull << 40);
	CHECK(ull == (1ull << 40) + 1, "atomicAdd ull");
	double d = 1.5;
	atomicAdd(&d, 2.25);
	CHECK(d == 3.75, "atomicAdd double %g", d);
	__half h = __float2half(1.0f);
	atomicAdd(&h, __float2half(0.5f));
	CHECK(__half2float(h) == 1.5f, "atomicAdd half %g", (double)__half2float(h));
}

static void test_half_bits()
{
	CHECK(__half_as_ushort(__float2half(1.0f / 3.0f)) == 0x3555, "half(1/3) = %04x",
	      __half_as_ushort(__float2half(1.0f / 3.0f)));
	CHECK(__half_as_ushort(__float2half(65504.0f)) == 0x7bff, "65504");
	CHECK(__half_as_ushort(__float2half(65519.0f)) == 0x7bff, "65519 -> max");
	CHECK(__half_as_ushort(__float2half(65520.0f)) == 0x7c00, "65520 -> inf");
	CHECK(__half_as_ushort(__float2half(0x1p-24f)) == 0x0001, "min subnormal");
	CHECK(__half_as_ushort(__float2half(0x1p-25f)) == 0x0000, "2^-25 ties to even (0)");
	CHECK(__half_as_ushort(__float2half(3 * 0x1p-25f)) == 0x0002, "3*2^-25 ties to even (2)");
	CHECK(__half_as_ushort(__float2half(-0.0f)) == 0x8000, "-0");
	CHECK(__hisnan(__float2half(NAN)), "NaN");
	CHECK(__half_as_ushort(__float2half(1.0f + 0x1p-11f)) == 0x3c00, "1+2^-11 ties to even");
	CHECK(__half_as_ushort(__float2half(1.0f + 3 * 0x1p-11f)) == 0x3c02, "1+3*2^-11 ties to even (up)");
	/* double -> half rounds once: 1 + 2^-11 + 2^-40 is above the tie */
	CHECK(__half_as_ushort(__double2half(1.0 + 0x1p-11 + 0x1p-40)) == 0x3c01, "double2half single rounding: %04x",
	      __half_as_ushort(__double2half(1.0 + 0x1p-11 + 0x1p-40)));
	CHECK(__half_as_ushort(__float2half_rz(1.0f / 3.0f)) == 0x3555, "rz");
	CHECK(__half_as_ushort(__float2half_ru(1.0f / 3.0f)) == 0x3556, "ru");
	CHECK(__half_as_ushort(__float2half_rd(-1.0f / 3.0f)) == 0xb556, "rd negative");
	/* every half round-trips through float, in both implementations */
	int bad = 0, bad_soft = 0;
	for (unsigned u = 0; u < 65536; u++) {
		__half h = __ushort_as_half((unsigned short)u);
		float fv = __half2float(h);
		bool nan = (u & 0x7fff) > 0x7c00;
		if (!nan && __half_as_ushort(__float2half(fv)) != u)
			bad++;
		float fs = pf_emu::h2f_soft((unsigned short)u);
		if (nan ? !(fs != fs) : (pf_emu::f2u(fs) != pf_emu::f2u(fv) || pf_emu::f2h_soft(fs) != u))
			bad_soft++;
	}
	CHECK(bad == 0, "%d halfs do not round-trip", bad);
	CHECK(bad_soft == 0, "%d halfs differ in the bit-manipulation path", bad_soft);
	/* the bit-manipulation rounding agrees with the hardware one (F16C if enabled) */
	int diff = 0;
	unsigned s = 99;
	for (int i = 0; i < 2000000; i++) {
		s = s * 1664525u + 1013904223u;
		unsigned bits = (i & 1) ? s : (s & 0x8fffffffu) | 0x30000000u; /* half the samples near half's range */
		float fv = pf_emu::u2f(bits);
		if (fv != fv)
			continue;
		unsigned short hw = __half_as_ushort(__float2half(fv)), sw = pf_emu::f2h_soft(fv);
		diff += hw != sw;
	}
	CHECK(diff == 0, "%d float->half roundings differ between the two paths", diff);

	/* bfloat16 */
	CHECK(__bfloat16_as_ushort(__float2bfloat16(1.00390625f)) == 0x3f80, "bf16(1.00390625) ties to even: %04x",
	      __bfloat16_as_ushort(__float2bfloat16(1.00390625f)));
	CHECK(__bfloat16_as_ushort(__float2bfloat16(1.01171875f)) == 0x3f82, "bf16(1.01171875) ties to even (up)");
	CHECK(__bfloat16_as_ushort(__float2bfloat16(1.0f / 3.0f)) == 0x3eab, "bf16(1/3) %04x",
	      __bfloat16_as_ushort(__float2bfloat16(1.0f / 3.0f)));
	CHECK(__bfloat162float(__float2bfloat16(-2.5f)) == -2.5f, "bf16 -2.5");
	CHECK(__hisnan(__float2bfloat16(NAN)), "bf16 NaN");
	CHECK(__bfloat16_as_ushort(__float2bfloat16(3.4e38f)) == 0x7f80, "bf16 overflow to inf");
	CHECK(__bfloat16_as_ushort(__float2bfloat16_rz(1.0f / 3.0f)) == 0x3eaa, "bf16 rz");
	CHECK(__bfloat16_as_ushort(__double2bfloat16(1.0 + 0x1p-8 + 0x1p-40)) == 0x3f81, "double2bfloat16");
	bad = 0;
	for (unsigned u = 0; u < 65536; u++) {
		bool nan = (u & 0x7fff) > 0x7f80;
		__nv_bfloat16 b = __ushort_as_bfloat16((unsigned short)u);
		if (!nan && __bfloat16_as_ushort(__float2bfloat16(__bfloat162float(b))) != u)
			bad++;
	}
	CHECK(bad == 0, "%d bfloat16 do not round-trip", bad);
	float2 f2 = __half22float2(__floats2half2_rn(0.25f, -3.0f));
	CHECK(f2.x == 0.25f && f2.y == -3.0f && __low2float(__floats2half2_rn(1.5f, 2.0f)) == 1.5f &&
		      __high2float(__floats2bfloat162_rn(1.5f, 2.0f)) == 2.0f,
	      "half2 / bfloat162 conversions");
}

static void test_half_arith()
{
	fake_call f;
	fake_init(&f, 0);
	const int n = 64;
	__half a[n], b[n], sum[n], prod[n], fm[n];
	__nv_bfloat16 bs[n];
	__half2 h2[n];
	for (int i = 0; i < n; i++) {
		a[i] = __float2half(frand() * 10.0f);
		b[i] = __float2half(frand() * 10.0f);
	}
	int rc = pf_launch(&f.c, k_half_math, pf_dim(1), pf_dim(n), 0, (const void *)a, (const void *)b, (void *)sum,
			   (void *)prod, (void *)fm, (void *)bs, (void *)h2);
	CHECK(rc == PF_OK, "rc %d (%s)", rc, f.last_msg);
	int bad = 0;
	for (int i = 0; i < n; i++) {
		float x = __half2float(a[i]), y = __half2float(b[i]);
		bad += __half_as_ushort(sum[i]) != __half_as_ushort(__float2half(x + y));
		bad += __half_as_ushort(prod[i]) != __half_as_ushort(__float2half(x * y));
		bad += __half_as_ushort(fm[i]) != __half_as_ushort(__float2half((float)((double)x * y + x)));
		float bx = __bfloat162float(__float2bfloat16(x)), by = __bfloat162float(__float2bfloat16(y));
		bad += __bfloat16_as_ushort(bs[i]) != __bfloat16_as_ushort(__float2bfloat16(bx + by));
		bad += __half_as_ushort(h2[i].x) != __half_as_ushort(prod[i]) ||
		       __half_as_ushort(h2[i].y) != __half_as_ushort(prod[i]);
	}
	CHECK(bad == 0, "%d half/bf16 arithmetic results not rounded per operation", bad);
	/* rounding after every operation: 2048 + 1 == 2048 in half */
	__half big = __float2half(2048.0f), one = __float2half(1.0f);
	CHECK(__half2float(big + one) == 2048.0f, "2048+1 in half");
	CHECK(__half2float(__hadd(big, one + one)) == 2050.0f, "2048+2 in half");
	CHECK(big > one && !(big < one) && big != one && one == __float2half(1.0f), "half comparisons");
	CHECK(__half2float(hsqrt(__float2half(4.0f))) == 2.0f && __half2float(hexp(__float2half(0.0f))) == 1.0f,
	      "hsqrt / hexp");
	CHECK(__half2float(__hmax(__float2half(NAN), one)) == 1.0f && __hisnan(__hmax_nan(__float2half(NAN), one)),
	      "__hmax NaN handling");
	CHECK(__half2float(-one) == -1.0f && __half2float(__habs(-big)) == 2048.0f, "neg / abs");
	__half acc = __float2half(0.0f);
	for (int i = 0; i < 4096; i++)
		acc += one;
	CHECK(__half2float(acc) == 2048.0f, "half accumulation saturates at 2048: %g", (double)__half2float(acc));
	__nv_bfloat16 bb = __float2bfloat16(256.0f);
	CHECK(__bfloat162float(bb + __float2bfloat16(1.0f)) == 256.0f, "bf16 256+1 == 256");
	CHECK(__float2int_rn(2.5f) == 2 && __float2int_rn(3.5f) == 4 && __float2int_rz(-2.7f) == -2 &&
		      __float2int_rn(NAN) == 0 && __float2int_rn(1e20f) == INT_MAX,
	      "__float2int_*");
	CHECK(__popc(0xf0f0u) == 8 && __clz(1) == 31 && __clz(0) == 32 && __ffs(8) == 4 && __brev(1u) == 0x80000000u &&
		      __umulhi(0x80000000u, 4u) == 2u && __mul24(-3, 5) == -15,
	      "integer intrinsics");
	CHECK(__int_as_float(0x3f800000) == 1.0f && __float_as_uint(-0.0f) == 0x80000000u &&
		      __longlong_as_double(__double_as_longlong(2.5)) == 2.5,
	      "bit casts");
	CHECK(min(3, 4) == 3 && max(2.5f, 1.0f) == 2.5f && min(7u, 9u) == 7u && max(-1ll, 4ll) == 4ll &&
		      std::min(2, 3) == 2,
	      "min/max overloads");
	CHECK(fabsf(normcdff(0.0f) - 0.5f) < 1e-7f && fabsf(rsqrtf(4.0f) - 0.5f) < 1e-7f &&
		      __saturatef(1.5f) == 1.0f && __saturatef(-1.0f) == 0.0f && fabsf(__expf(1.0f) - 2.7182818f) < 1e-6f &&
		      fabsf(erfinvf(erff(0.3f)) - 0.3f) < 1e-6f,
	      "float math");
}

static void test_block_sums(int nthreads)
{
	fake_call f;
	fake_init(&f, nthreads);
	const int nb = 9, bs = 96;
	std::vector<float> x(nb * bs), out(nb);
	for (int i = 0; i < nb * bs; i++)
		x[i] = (float)(i % 13);
	int rc = pf_launch(&f.c, k_block_sums, pf_dim(nb), pf_dim(bs), 0, (const void *)x.data(), (void *)out.data());
	CHECK(rc == PF_OK, "rc %d (%s)", rc, f.last_msg);
	int bad = 0;
	for (int b = 0; b < nb; b++) {
		float s = 0;
		for (int t = 0; t < bs; t++)
			s += x[b * bs + t];
		bad += out[b] != s;
	}
	CHECK(bad == 0, "%d wrong block sums (static __shared__ in a __device__ function)", bad);
}

/* Each thread's stack address, across a barrier (so every thread has a
 * fiber of its own). */
__global__ void k_stack_addr(unsigned long long *out)
{
	volatile int here = 0;
	__syncthreads();
	out[blockIdx.x * blockDim.x + threadIdx.x] = (unsigned long long)(uintptr_t)&here + (unsigned long long)here;
}

/* The fibers of an OS thread are regions of one reservation, region i for
 * fiber i: where a region lands is then the same in every process, and so
 * is which fibers' stack tops share cache sets (with a mapping per region it
 * changed from process to process, and a sixth of some processes' threads ran
 * 5-10x slower: the model's path term moved 10x between evaluations). */
static void test_fiber_layout()
{
	fake_call f;
	fake_init(&f, 0);         /* both blocks on this thread */
	const int bs = 256;
	std::vector<unsigned long long> a(2 * bs);
	int rc = pf_launch(&f.c, k_stack_addr, pf_dim(2), pf_dim(bs), 0, (void *)a.data());
	CHECK(rc == PF_OK, "rc %d (%s)", rc, f.last_msg);
	unsigned long long lo = ~0ull, hi = 0;
	std::vector<unsigned long long> regions;
	for (int t = 0; t < bs; t++) {
		unsigned long long r = a[t] / PF_EMU_REGION;
		regions.push_back(r);
		lo = r < lo ? r : lo;
		hi = r > hi ? r : hi;
		/* the second block reuses the first's fibers */
		CHECK(a[bs + t] / PF_EMU_REGION == r, "thread %d of block 1 ran on another fiber", t);
	}
	std::sort(regions.begin(), regions.end());
	CHECK(std::unique(regions.begin(), regions.end()) == regions.end(), "two threads shared a fiber");
	CHECK(hi - lo == bs - 1, "the %d fibers' regions span %llu regions, not %d in a row", bs, hi - lo + 1, bs);
}

static void test_packed()
{
	fake_call f;
	fake_init(&f, 0);
	int out = 0;
	long long a = 1000;
	double b = 20.0;
	short c = 3;
	float pv = 400.0f;
	const float *p = &pv;
	int *op = &out;
	void *args[5] = {&op, &a, &b, &c, &p};
	int rc = pf_emu::launch_packed(&f.c, k_packed, pf_dim(1), pf_dim(32), 0, args);
	CHECK(rc == PF_OK && out == 1423, "launch_packed rc %d out %d", rc, out);
	out = 0;
	rc = pf_emu::launch_checked(&f.c, &k_packed, pf_dim(2), pf_dim(32), 0, args, 5);
	CHECK(rc == PF_OK && out == 1423, "launch_checked rc %d out %d", rc, out);
	out = 0;
	rc = pf_emu::launch_checked(&f.c, &k_packed, pf_dim(2), pf_dim(32), 0, args, 4);
	CHECK(rc == PF_ERR_LAUNCH && out == 0 && strstr(f.last_msg, "expects 5 arguments, got 4"),
	      "wrong nargs: rc %d msg '%s'", rc, f.last_msg);
	size_t sz[5] = {8, 8, 8, 4, 8};
	rc = pf_emu::launch_checked_sizes(&f.c, &k_packed, pf_dim(1), pf_dim(1), 0, args, 5, sz);
	CHECK(rc == PF_ERR_LAUNCH && strstr(f.last_msg, "argument 3"), "wrong size: rc %d msg '%s'", rc, f.last_msg);
	static_assert(pf_emu::param_count(k_packed) == 5, "param_count");
	static_assert(pf_emu::param_sizes(k_packed)[0] == sizeof(int *) && pf_emu::param_sizes(k_packed)[3] == 2 &&
			      pf_emu::param_sizes(k_packed)[5] == 0,
		      "param_sizes");
	static_assert(pf_emu::param_count(softmax<float, 256>) == 3, "template param_count");

	/* the cuda backend gets the converted arguments packed */
	fake_call g;
	fake_init(&g, 0, PF_BACKEND_CUDA);
	void *vp = &pv;
	rc = pf_launch(&g.c, k_packed, pf_dim(1), pf_dim(32), 0, (void *)&out, 7, 2.5f, 4, vp);
	CHECK(rc == PF_OK && g.k_addr == (const void *)k_packed && g.k_nargs == 5, "cuda launch rc %d nargs %d", rc,
	      g.k_nargs);
	double dv;
	memcpy(&dv, &g.k_vals[2], 8);
	CHECK(g.k_sizes[0] == 8 && g.k_sizes[1] == 8 && g.k_vals[1] == 7 && g.k_sizes[2] == 8 && dv == 2.5 &&
		      g.k_sizes[3] == 2 && (short)g.k_vals[3] == 4 && g.k_vals[4] == (long long)(uintptr_t)&pv,
	      "cuda launch packs converted values");
	CHECK(out == 0, "cuda backend must not run the kernel on the CPU");
}

static void test_errors()
{
	fake_call f;
	fake_init(&f, 0);
	int buf[256] = {0};
	int rc = pf_launch(&f.c, k_diverge, pf_dim(1), pf_dim(2048), 0, (void *)buf);
	CHECK(rc == PF_ERR_LAUNCH && f.fails == 1 && strstr(f.last_msg, "block"), "block 2048: rc %d '%s'", rc,
	      f.last_msg);
	rc = pf_launch(&f.c, k_diverge, pf_dim(1, 70000), pf_dim(32), 0, (void *)buf);
	CHECK(rc == PF_ERR_LAUNCH && strstr(f.last_msg, "grid"), "grid.y 70000: rc %d '%s'", rc, f.last_msg);
	rc = pf_launch(&f.c, k_diverge, pf_dim(0), pf_dim(32), 0, (void *)buf);
	CHECK(rc == PF_ERR_LAUNCH, "grid 0: rc %d", rc);
	rc = pf_launch(&f.c, k_diverge, pf_dim(1), pf_dim(32), 300 * 1024, (void *)buf);
	CHECK(rc == PF_ERR_LAUNCH && strstr(f.last_msg, "shared"), "smem 300K: rc %d '%s'", rc, f.last_msg);

	for (int nt = 0; nt <= 3; nt += 3) {
		fake_init(&f, nt);
		rc = pf_launch(&f.c, k_diverge, pf_dim(4, 2), pf_dim(64), 0, (void *)buf);
		CHECK(rc == PF_ERR_LAUNCH && strstr(f.last_msg, "__syncthreads not reached by all threads of block ("),
		      "divergent barrier: rc %d '%s'", rc, f.last_msg);
	}
	fake_init(&f, 0);
	rc = pf_launch(&f.c, k_mixed_deadlock, pf_dim(1), pf_dim(32), 0, (void *)buf);
	CHECK(rc == PF_ERR_LAUNCH && strstr(f.last_msg, "deadlock"), "mixed deadlock: rc %d '%s'", rc, f.last_msg);

	/* the emulation recovers: the next launches on the same threads work */
	test_softmax(0);
	test_warp(0);
}

static void test_counts()
{
	fake_call f;
	fake_init(&f, 0);
	int pred[100], cnt = -1, a = -1, o = -1;
	for (int i = 0; i < 100; i++)
		pred[i] = i % 3 == 0;
	int rc = pf_launch(&f.c, k_counts, pf_dim(1), pf_dim(100), 0, (const void *)pred, &cnt, &a, &o);
	CHECK(rc == PF_OK && cnt == 34 && a == 0 && o == 1, "syncthreads_count %d and %d or %d", cnt, a, o);
	for (int i = 0; i < 100; i++)
		pred[i] = 1;
	rc = pf_launch(&f.c, k_counts, pf_dim(1), pf_dim(100), 0, (const void *)pred, &cnt, &a, &o);
	CHECK(rc == PF_OK && cnt == 100 && a == 1 && o == 1, "syncthreads_count %d and %d or %d", cnt, a, o);
}

static void test_mixed_blocks(int nthreads)
{
	fake_call f;
	fake_init(&f, nthreads);
	std::vector<int> out(16 * 128, -1);
	int rc = pf_launch(&f.c, k_some_blocks, pf_dim(16), pf_dim(128), 0, (void *)out.data());
	CHECK(rc == PF_OK, "rc %d", rc);
	int bad = 0;
	for (int b = 0; b < 16; b++)
		for (int t = 0; t < 128; t++)
			bad += out[b * 128 + t] != ((b % 2) ? 127 - t : t);
	CHECK(bad == 0, "%d wrong (barriers in some blocks only)", bad);

	std::vector<int> big(1024, -1);
	rc = pf_launch(&f.c, k_big_block, pf_dim(2), pf_dim(32, 32), 0, (void *)big.data());
	CHECK(rc == PF_OK, "rc %d (%s)", rc, f.last_msg);
	bad = 0;
	for (int t = 0; t < 1024; t++) {
		int src = 1023 - t;
		bad += big[t] != ((src + 1) % 1024 + 255) * 2;
	}
	CHECK(bad == 0, "%d wrong in a 1024-thread block", bad);
}

static void test_semantics()
{
	fake_call f;
	fake_init(&f, 0);
	int out[64];
	/* arguments converted as a launch would: long long -> int, void * -> int *,
	 * nullptr -> const float * */
	long long n = 1000;
	int rc = pf_launch(&f.c, k_param_copy, pf_dim(1), pf_dim(64), 0, n, (void *)out, nullptr);
	int bad = 0;
	for (int t = 0; t < 64; t++)
		bad += out[t] != 1000 + t;
	CHECK(rc == PF_OK && bad == 0, "per-thread parameter copies: rc %d, %d wrong", rc, bad);

	int po[64];
	unsigned am[64];
	memset(po, 0xff, sizeof po);
	rc = pf_launch(&f.c, k_partial, pf_dim(1), pf_dim(64), 0, (void *)po, (void *)am);
	CHECK(rc == PF_OK, "rc %d (%s)", rc, f.last_msg);
	bad = 0;
	for (int t = 0; t < 64; t++) {
		int lane = t & 31;
		int v = lane * 10;
		if (lane < 16)
			v += (lane + 1 < 16) ? (lane + 1) * 10 : v;
		else
			v += (lane ^ 1) * 10;
		if (lane >= 24)
			bad += po[t] != -1;
		else
			bad += po[t] != v || am[t] != 0x00ffffffu;
	}
	CHECK(bad == 0, "%d wrong in divergent warp code (partial masks, exited lanes)", bad);
}


/* ---- expf, tanhf, erff (pf_emu.h's fmath) ------------------------------ */
/* The op library's math (gpu/oplib/common.cu: opl_exp, opl_tanh, opl_erf)
 * and a pass's (expf, tanhf, erff, the float overloads exp/tanh/erf, __expf)
 * must be the same function, bit for bit, and within the documented 1 ulp
 * of the exact value (CUDA documents 2); glibc's double functions are the
 * reference. */
#include "../../gpu/oplib/oplib.h"
#include "../../gpu/oplib/common.cu"

static double ulp_err(float r, double ref)
{
	if (ref != ref)
		return r != r ? 0.0 : 1e30;
	if (r != r)
		return 1e30;
	double a = fabs(ref);
	if (a > (double)FLT_MAX) /* rounds to inf */
		return (r == (float)ref) ? 0.0 : 1e30;
	int e;
	frexp(a < (double)FLT_MIN ? (double)FLT_MIN : a, &e);
	double spacing = ldexp(1.0, e - 24);
	double d = fabs((double)r - ref) / spacing;
	return isinf(r) ? (a > 3.4028235677973366e38 ? 0.0 : 1e30) : d;
}

static void test_fast_math()
{
	double worst[3] = {0, 0, 0};
	float at[3] = {0, 0, 0};
	long mism = 0;
	float first_bad = 0;
	for (uint64_t b = 0; b < (1ull << 32); b += 997) {
		uint32_t u = (uint32_t)b;
		float x;
		memcpy(&x, &u, 4);
		float r[3] = {expf(x), tanhf(x), erff(x)};
		double ref[3] = {::exp((double)x), ::tanh((double)x), ::erf((double)x)};
		for (int k = 0; k < 3; k++) {
			double e = ulp_err(r[k], ref[k]);
			if (e > worst[k]) {
				worst[k] = e;
				at[k] = x;
			}
		}
		float o[3] = {opl_exp(x), opl_tanh(x), opl_erf(x)};
		float f[3] = {exp(x), tanh(x), erf(x)};
		float g = __expf(x);
		if (memcmp(o, r, sizeof o) != 0 || memcmp(f, r, sizeof f) != 0 || memcmp(&g, &r[0], 4) != 0) {
			if (!mism++)
				first_bad = x;
		}
	}
	const char *names[3] = {"expf", "tanhf", "erff"};
	for (int k = 0; k < 3; k++)
		CHECK(worst[k] <= 1.0, "%s: %.3f ulp at %a (bound 1)", names[k], worst[k], (double)at[k]);
	CHECK(mism == 0, "%ld inputs where the op library's and a pass's math differ (first %a)", mism,
	      (double)first_bad);
	printf("fmath: max ulp expf %.3f tanhf %.3f erff %.3f over 2^32/997 floats\n", worst[0], worst[1], worst[2]);
	/* special values */
	CHECK(expf(INFINITY) == INFINITY && expf(-INFINITY) == 0.0f && expf(89.0f) == INFINITY, "expf at inf");
	CHECK(expf(-104.0f) == 0.0f && expf(0.0f) == 1.0f, "expf at -104, 0");
	CHECK(tanhf(INFINITY) == 1.0f && tanhf(-INFINITY) == -1.0f && erff(-INFINITY) == -1.0f, "tanhf/erff at inf");
	CHECK(signbit(tanhf(-0.0f)) && signbit(erff(-0.0f)), "tanhf/erff keep -0");
	CHECK(isnan(expf(NAN)) && isnan(tanhf(NAN)) && isnan(erff(NAN)), "NaN in, NaN out");
	CHECK(tanhf(1e-30f) == 1e-30f && erff(0.5f) == (float)::erf(0.5), "tiny tanhf, erff(0.5)");
	/* double arguments still reach libm */
	CHECK(tanh(0.5) == ::tanh(0.5) && exp(1.5) == ::exp(1.5) && erf(0.25) == ::erf(0.25), "double overloads");
}

int main()
{
	test_half_bits();
	test_half_arith();
	test_fiber_layout();
	for (int nt = 0; nt <= 3; nt += 3) {
		test_elementwise(nt);
		test_softmax(nt);
		test_dyn_smem(nt);
		test_warp(nt);
		test_matmul(nt);
		test_block_sums(nt);
		test_mixed_blocks(nt);
	}
	test_votes();
	test_atomics();
	test_packed();
	test_counts();
	test_semantics();
	test_errors();
	test_fast_math();
	printf("%d passed, %d failed\n", g_pass, g_fail);
	return g_fail ? 1 : 0;
}
