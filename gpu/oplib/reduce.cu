/* reduce.cu - row-wise ops: softmax, layer_norm, batch_norm (eval), and
 * sum/mean over any set of dims.  Accumulation in float (double for double,
 * int64 for integer sums); every block reduction goes through shared memory
 * (opl_block_reduce), blockDim.x a power of two <= 256.  The *_thread
 * variants give one row to one thread, for short rows. */

/* Input element j of a softmax row, converted to the result dtype first
 * (softmax's dtype argument converts the input before the op). */
template <typename TI, typename TO, typename A>
static __device__ __forceinline__ A softmax_ld(const TI *x, long long j, long long inner)
{
	return opl_cast<A>::from(opl_cast<TO>::from(x[j * inner]));
}

template <typename TI, typename TO>
static __device__ __forceinline__ void softmax_row_setup(const opl_softmax &p, long long r, const TI **x,
							 TO **y, long long *lim)
{
	long long base = (r / p.inner) * p.n * p.inner + r % p.inner;
	*x = static_cast<const TI *>(p.in) + base;
	*y = static_cast<TO *>(p.out) + base;
	*lim = p.n;
	if (p.causal_l > 0 && r % p.causal_l + 1 < p.n)
		*lim = r % p.causal_l + 1;
}

/* One block per row: max, sum of exp(x - max), then exp(x - max) / sum. */
template <typename TI, typename TO>
__global__ void softmax_block(opl_softmax p)
{
	typedef typename opl_acc<TO>::type A;
	__shared__ A sh[256];
	for (long long r = blockIdx.x; r < p.rows; r += gridDim.x) {
		const TI *x;
		TO *y;
		long long lim;
		softmax_row_setup(p, r, &x, &y, &lim);
		A m = -opl_inf(A(0));
		for (long long j = threadIdx.x; j < lim; j += blockDim.x)
			m = opl_max_op<A>()(m, softmax_ld<TI, TO, A>(x, j, p.inner));
		m = opl_block_reduce(m, sh, opl_max_op<A>());
		A s = 0;
		for (long long j = threadIdx.x; j < lim; j += blockDim.x)
			s += opl_exp(softmax_ld<TI, TO, A>(x, j, p.inner) - m);
		s = opl_block_reduce(s, sh, opl_sum_op<A>());
		for (long long j = threadIdx.x; j < p.n; j += blockDim.x) {
			A v = j < lim ? opl_exp(softmax_ld<TI, TO, A>(x, j, p.inner) - m) / s : A(0);
			y[j * p.inner] = opl_cast<TO>::from(v);
		}
	}
}

/* One thread per row (rows of a few dozen elements). */
template <typename TI, typename TO>
__global__ void softmax_thread(opl_softmax p)
{
	typedef typename opl_acc<TO>::type A;
	for (long long r = opl_gtid(); r < p.rows; r += opl_gsize()) {
		const TI *x;
		TO *y;
		long long lim;
		softmax_row_setup(p, r, &x, &y, &lim);
		A m = -opl_inf(A(0));
		for (long long j = 0; j < lim; j++)
			m = opl_max_op<A>()(m, softmax_ld<TI, TO, A>(x, j, p.inner));
		A s = 0;
		for (long long j = 0; j < lim; j++)
			s += opl_exp(softmax_ld<TI, TO, A>(x, j, p.inner) - m);
		for (long long j = 0; j < p.n; j++) {
			A v = j < lim ? opl_exp(softmax_ld<TI, TO, A>(x, j, p.inner) - m) / s : A(0);
			y[j * p.inner] = opl_cast<TO>::from(v);
		}
	}
}

/* layer_norm over rows of m contiguous elements: two passes (the mean, as
 * x[0] + mean(x - x[0]); then the variance of x - mean) for accuracy, biased
 * variance, rstd = 1/sqrt(var + eps); y = (x - mean) * rstd * w + b. */
template <typename T, typename TW>
__global__ void layer_norm(opl_layer_norm p)
{
	typedef typename opl_acc<T>::type A;
	__shared__ A sh[256];
	const TW *w = static_cast<const TW *>(p.w), *b = static_cast<const TW *>(p.b);
	for (long long r = blockIdx.x; r < p.rows; r += gridDim.x) {
		const T *x = static_cast<const T *>(p.in) + r * p.m;
		T *y = static_cast<T *>(p.out) + r * p.m;
		/* the sum of x - x[0], not of x: rows far from zero relative to
		 * their spread keep their mean's precision */
		const A shift = opl_cast<A>::from(x[0]);
		A s = 0;
		for (long long j = threadIdx.x; j < p.m; j += blockDim.x)
			s += opl_cast<A>::from(x[j]) - shift;
		A mean = shift + opl_block_reduce(s, sh, opl_sum_op<A>()) / A(p.m);
		A v = 0;
		for (long long j = threadIdx.x; j < p.m; j += blockDim.x) {
			A d = opl_cast<A>::from(x[j]) - mean;
			v += d * d;
		}
		A var = opl_block_reduce(v, sh, opl_sum_op<A>()) / A(p.m);
		A rstd = A(1) / opl_sqrt(var + A(p.eps));
		for (long long j = threadIdx.x; j < p.m; j += blockDim.x) {
			A o = (opl_cast<A>::from(x[j]) - mean) * rstd;
			if (w)
				o = o * opl_cast<A>::from(w[j]);
			if (b)
				o = o + opl_cast<A>::from(b[j]);
			y[j] = opl_cast<T>::from(o);
		}
	}
}

/* The same, one thread per row. */
template <typename T, typename TW>
__global__ void layer_norm_thread(opl_layer_norm p)
{
	typedef typename opl_acc<T>::type A;
	const TW *w = static_cast<const TW *>(p.w), *b = static_cast<const TW *>(p.b);
	for (long long r = opl_gtid(); r < p.rows; r += opl_gsize()) {
		const T *x = static_cast<const T *>(p.in) + r * p.m;
		T *y = static_cast<T *>(p.out) + r * p.m;
		const A shift = opl_cast<A>::from(x[0]);
		A s = 0;
		for (long long j = 0; j < p.m; j++)
			s += opl_cast<A>::from(x[j]) - shift;
		A mean = shift + s / A(p.m), v = 0;
		for (long long j = 0; j < p.m; j++) {
			A d = opl_cast<A>::from(x[j]) - mean;
			v += d * d;
		}
		A rstd = A(1) / opl_sqrt(v / A(p.m) + A(p.eps));
		for (long long j = 0; j < p.m; j++) {
			A o = (opl_cast<A>::from(x[j]) - mean) * rstd;
			if (w)
				o = o * opl_cast<A>::from(w[j]);
			if (b)
				o = o + opl_cast<A>::from(b[j]);
			y[j] = opl_cast<T>::from(o);
		}
	}
}

/* batch_norm in eval mode: y = (x - mean[c]) / sqrt(var[c] + eps) * w[c] + b[c]. */
template <typename T, typename TP>
__global__ void batch_norm_eval(opl_batch_norm p)
{
	typedef typename opl_acc<T>::type A;
	const T *x = static_cast<const T *>(p.in);
	T *y = static_cast<T *>(p.out);
	const TP *mean = static_cast<const TP *>(p.mean), *var = static_cast<const TP *>(p.var);
	const TP *w = static_cast<const TP *>(p.w), *b = static_cast<const TP *>(p.b);
	const A eps = A(p.eps);
	opl_foreach(p.n * p.c * p.inner, p.per, [&](long long i) {
		long long c = (i / p.inner) % p.c;
		A invstd = A(1) / opl_sqrt(opl_cast<A>::from(var[c]) + eps);
		A o = (opl_cast<A>::from(x[i]) - opl_cast<A>::from(mean[c])) * invstd;
		if (w)
			o = o * opl_cast<A>::from(w[c]);
		if (b)
			o = o + opl_cast<A>::from(b[c]);
		y[i] = opl_cast<T>::from(o);
	});
}

/* Offset of multi-index `i` (row-major over shape) with the given strides. */
static __device__ __forceinline__ long long reduce_offset(unsigned long long i, int nd, const long long *shape,
							  const long long *stride)
{
	long long off = 0;
	for (int d = nd - 1; d > 0; d--) {
		unsigned long long s = (unsigned long long)shape[d];
		off += (long long)(i % s) * stride[d];
		i /= s;
	}
	return nd > 0 ? off + (long long)i * stride[0] : 0;
}

/* Adds the elements r = first, first + step, ... < n of one reduction to
 * acc, in runs of 256 summed separately (a two-level sum: its rounding error
 * grows with 256 + n / 256 rather than n, close to PyTorch's cascaded sums). */
template <typename TI, typename TO, typename A>
static __device__ __forceinline__ A reduce_span(const opl_reduce &p, const TI *x, long long base, long long first,
						long long step)
{
	A total = A(0);
	for (long long r0 = first; r0 < p.nred; r0 += 256 * step) {
		A run = A(0);
		long long end = r0 + 256 * step < p.nred ? r0 + 256 * step : p.nred;
		for (long long r = r0; r < end; r += step)
			run += opl_cast<A>::from(opl_cast<TO>::from(
				x[base + reduce_offset((unsigned long long)r, p.rndim, p.rshape, p.rstride)]));
		total += run;
	}
	return total;
}

/* Sum (scale 1) or mean (scale 1/n) over the reduced dims, one block per
 * output element. */
template <typename TI, typename TO>
__global__ void reduce_block(opl_reduce p)
{
	typedef typename opl_acc<TO>::type A;
	__shared__ A sh[256];
	const TI *x = static_cast<const TI *>(p.in);
	TO *y = static_cast<TO *>(p.out);
	for (long long o = blockIdx.x; o < p.nout; o += gridDim.x) {
		long long base = reduce_offset((unsigned long long)o, p.ondim, p.oshape, p.ostride);
		A s = reduce_span<TI, TO, A>(p, x, base, threadIdx.x, blockDim.x);
		s = opl_block_reduce(s, sh, opl_sum_op<A>());
		if (threadIdx.x == 0)
			y[o] = opl_cast<TO>::from(s * opl_cast<A>::from(p.scale));
	}
}

/* Same, one thread per output element (short reductions). */
template <typename TI, typename TO>
__global__ void reduce_thread(opl_reduce p)
{
	typedef typename opl_acc<TO>::type A;
	const TI *x = static_cast<const TI *>(p.in);
	TO *y = static_cast<TO *>(p.out);
	for (long long o = opl_gtid(); o < p.nout; o += opl_gsize()) {
		long long base = reduce_offset((unsigned long long)o, p.ondim, p.oshape, p.ostride);
		A s = reduce_span<TI, TO, A>(p, x, base, 0, 1);
		y[o] = opl_cast<TO>::from(s * opl_cast<A>::from(p.scale));
	}
}
