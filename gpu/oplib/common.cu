/* common.cu - what every op-library kernel uses: the compute type of an
 * element type, conversions between element types (PyTorch's: half and
 * bfloat16 through float with round-to-nearest-even, to bool as != 0), math
 * overloads for float and double, and a shared-memory block reduction.
 *
 * Part of the op library source that eager compiles (oplib.h lists the
 * files); it needs passfs.h (for __half, __nv_bfloat16) and oplib.h first. */

/* The type arithmetic happens in: float for float/half/bfloat16 (PyTorch's
 * opmath), double for double, long long for the integer types and bool. */
template <typename T> struct opl_acc { typedef float type; };
template <> struct opl_acc<double> { typedef double type; };
template <> struct opl_acc<long long> { typedef long long type; };
template <> struct opl_acc<int> { typedef long long type; };
template <> struct opl_acc<bool> { typedef long long type; };

template <typename T> struct opl_is_int { static const bool value = false; };
template <> struct opl_is_int<long long> { static const bool value = true; };
template <> struct opl_is_int<int> { static const bool value = true; };
template <> struct opl_is_int<bool> { static const bool value = true; };

/* Widening: half and bfloat16 become float, everything else is kept. */
static __device__ __forceinline__ float opl_wide(__half v) { return __half2float(v); }
static __device__ __forceinline__ float opl_wide(__nv_bfloat16 v) { return __bfloat162float(v); }
static __device__ __forceinline__ float opl_wide(float v) { return v; }
static __device__ __forceinline__ double opl_wide(double v) { return v; }
static __device__ __forceinline__ long long opl_wide(long long v) { return v; }
static __device__ __forceinline__ int opl_wide(int v) { return v; }
static __device__ __forceinline__ bool opl_wide(bool v) { return v; }

/* opl_cast<To>::from(v): any element or compute type to To. */
template <typename To> struct opl_cast {
	template <typename F> static __device__ __forceinline__ To from(F v)
	{
		return static_cast<To>(opl_wide(v));
	}
};
template <> struct opl_cast<__half> {
	template <typename F> static __device__ __forceinline__ __half from(F v)
	{
		return __float2half_rn(static_cast<float>(opl_wide(v)));
	}
	static __device__ __forceinline__ __half from(__half v) { return v; }
};
template <> struct opl_cast<__nv_bfloat16> {
	template <typename F> static __device__ __forceinline__ __nv_bfloat16 from(F v)
	{
		return __float2bfloat16_rn(static_cast<float>(opl_wide(v)));
	}
	static __device__ __forceinline__ __nv_bfloat16 from(__nv_bfloat16 v) { return v; }
};
template <> struct opl_cast<bool> {
	template <typename F> static __device__ __forceinline__ bool from(F v)
	{
		return opl_wide(v) != 0;
	}
};

template <typename T> static __device__ __forceinline__ T opl_ld(const void *p, long long off)
{
	return static_cast<const T *>(p)[off];
}

/* Loads element `off` of a T tensor as compute type C. */
template <typename C, typename T> static __device__ __forceinline__ C opl_ldc(const void *p, long long off)
{
	return opl_cast<C>::from(static_cast<const T *>(p)[off]);
}

/* ---- math in the compute type ------------------------------------------ */

static __device__ __forceinline__ float opl_exp(float x) { return expf(x); }
static __device__ __forceinline__ double opl_exp(double x) { return exp(x); }
static __device__ __forceinline__ float opl_tanh(float x) { return tanhf(x); }
static __device__ __forceinline__ double opl_tanh(double x) { return tanh(x); }
static __device__ __forceinline__ float opl_erf(float x) { return erff(x); }
static __device__ __forceinline__ double opl_erf(double x) { return erf(x); }
static __device__ __forceinline__ float opl_sqrt(float x) { return sqrtf(x); }
static __device__ __forceinline__ double opl_sqrt(double x) { return sqrt(x); }
static __device__ __forceinline__ float opl_pow(float x, float y) { return powf(x, y); }
static __device__ __forceinline__ double opl_pow(double x, double y) { return pow(x, y); }
static __device__ __forceinline__ long long opl_pow(long long x, long long y)
{
	long long r = 1;
	if (y < 0)
		return x == 1 ? 1 : x == -1 ? ((y & 1) ? -1 : 1) : 0;
	while (y) {
		if (y & 1)
			r *= x;
		x *= x;
		y >>= 1;
	}
	return r;
}
static __device__ __forceinline__ float opl_inf(float) { return CUDART_INF_F; }
static __device__ __forceinline__ double opl_inf(double) { return (double)CUDART_INF_F; }

/* ---- block reduction ------------------------------------------------------ */

template <typename A> struct opl_sum_op {
	__device__ __forceinline__ A operator()(A x, A y) const { return x + y; }
};
template <typename A> struct opl_max_op {
	__device__ __forceinline__ A operator()(A x, A y) const { return x > y || x != x ? x : y; }
};

/* Reduces v over the block (blockDim.x a power of two, <= 256) through the
 * shared array sh (>= blockDim.x entries); every thread gets the result. */
template <typename A, typename F>
static __device__ __forceinline__ A opl_block_reduce(A v, A *sh, F f)
{
	unsigned t = threadIdx.x;
	sh[t] = v;
	__syncthreads();
	for (unsigned s = blockDim.x / 2; s > 0; s >>= 1) {
		if (t < s)
			sh[t] = f(sh[t], sh[t + s]);
		__syncthreads();
	}
	A r = sh[0];
	__syncthreads();
	return r;
}

/* The global index of this thread and the grid's thread count (1-D grids). */
static __device__ __forceinline__ long long opl_gtid(void)
{
	return (long long)blockIdx.x * blockDim.x + threadIdx.x;
}
static __device__ __forceinline__ long long opl_gsize(void)
{
	return (long long)gridDim.x * blockDim.x;
}

/* Calls f(i) for every i in [0, total): each thread takes runs of `per`
 * consecutive indices, grid-stride.  per = 1 is the classic coalesced
 * grid-stride loop (the GPU); on the CPU emulation the host picks a large
 * per, so a CUDA thread (a plain loop there) walks memory sequentially and
 * its fixed cost is paid once per run rather than once per element. */
template <typename F>
static __device__ __forceinline__ void opl_foreach(long long total, long long per, F f)
{
	long long step = opl_gsize() * per;
	for (long long i0 = opl_gtid() * per; i0 < total; i0 += step) {
		long long end = i0 + per < total ? i0 + per : total;
		for (long long i = i0; i < end; i++)
			f(i);
	}
}
