/* reduce.cu - row-wise ops: softmax, layer_norm, batch_norm (eval), and
 * sum/mean over any set of dims.  Accumulation in float (double for double,
 * int64 for integer sums); every block reduction goes through shared memory
 * (opl_block_reduce), blockDim.x a power of two <= 256.  The *_thread
 * variants give one row to one thread, for short rows; reduce_part and
 * reduce_finish split a long reduction with few outputs over many blocks. */

/* The sum of f(j) for j = first, first + step, ... < n, in runs of 256
 * terms summed separately and then added: a two-level sum, whose rounding
 * error grows with 256 + n / 256 terms rather than n (a thread that walks a
 * whole row of a million floats keeps float32 accuracy, as PyTorch's cascaded
 * sums do).  The same adds as a plain loop, one more a run. */
template <typename A, typename F>
static __device__ __forceinline__ A opl_run_sum(long long first, long long n, long long step, F f)
{
	A total = A(0);
	for (long long j0 = first; j0 < n; j0 += 256 * step) {
		A run = A(0);
		long long end = j0 + 256 * step < n ? j0 + 256 * step : n;
		for (long long j = j0; j < end; j += step)
			run += f(j);
		total += run;
	}
	return total;
}

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
		A s = opl_run_sum<A>(threadIdx.x, lim, blockDim.x, [&](long long j) {
			return opl_exp(softmax_ld<TI, TO, A>(x, j, p.inner) - m);
		});
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
		A s = opl_run_sum<A>(0, lim, 1, [&](long long j) {
			return opl_exp(softmax_ld<TI, TO, A>(x, j, p.inner) - m);
		});
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
		A s = opl_run_sum<A>(threadIdx.x, p.m, blockDim.x,
				     [&](long long j) { return opl_cast<A>::from(x[j]) - shift; });
		A mean = shift + opl_block_reduce(s, sh, opl_sum_op<A>()) / A(p.m);
		A v = opl_run_sum<A>(threadIdx.x, p.m, blockDim.x, [&](long long j) {
			A d = opl_cast<A>::from(x[j]) - mean;
			return d * d;
		});
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
		A s = opl_run_sum<A>(0, p.m, 1, [&](long long j) { return opl_cast<A>::from(x[j]) - shift; });
		A mean = shift + s / A(p.m);
		A v = opl_run_sum<A>(0, p.m, 1, [&](long long j) {
			A d = opl_cast<A>::from(x[j]) - mean;
			return d * d;
		});
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

/* Adds the elements r = first, first + step, ... < end of one reduction, as
 * a two-level sum (opl_run_sum). */
template <typename TI, typename TO, typename A>
static __device__ __forceinline__ A reduce_span(const opl_reduce &p, const TI *x, long long base, long long first,
						long long end, long long step)
{
	return opl_run_sum<A>(first, end, step, [&](long long r) {
		return opl_cast<A>::from(opl_cast<TO>::from(
			x[base + reduce_offset((unsigned long long)r, p.rndim, p.rshape, p.rstride)]));
	});
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
		A s = reduce_span<TI, TO, A>(p, x, base, threadIdx.x, p.nred, blockDim.x);
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
		A s = reduce_span<TI, TO, A>(p, x, base, 0, p.nred, 1);
		y[o] = opl_cast<TO>::from(s * opl_cast<A>::from(p.scale));
	}
}

/* A reduction split over blocks, as PyTorch splits one whose outputs are too
 * few to fill a GPU: block (o, s) of nout * split sums chunk s of output o's
 * nred elements (chunk = ceil(nred / split) of them, threads striding by
 * blockDim inside it) into part[o * split + s], in the accumulator type;
 * reduce_finish then adds output o's split partial sums. */
template <typename TI, typename TO>
__global__ void reduce_part(opl_reduce p)
{
	typedef typename opl_acc<TO>::type A;
	__shared__ A sh[256];
	const TI *x = static_cast<const TI *>(p.in);
	A *part = static_cast<A *>(p.part);
	const long long chunk = (p.nred + p.split - 1) / p.split;
	for (long long g = blockIdx.x; g < p.nout * p.split; g += gridDim.x) {
		long long o = g / p.split, s = g % p.split;
		long long base = reduce_offset((unsigned long long)o, p.ondim, p.oshape, p.ostride);
		long long lo = s * chunk, hi = lo + chunk < p.nred ? lo + chunk : p.nred;
		A v = reduce_span<TI, TO, A>(p, x, base, lo + threadIdx.x, hi, blockDim.x);
		v = opl_block_reduce(v, sh, opl_sum_op<A>());
		if (threadIdx.x == 0)
			part[g] = v;
	}
}

/* out[o] = scale * (the sum of part[o * split ...]), a block per output. */
template <typename TI, typename TO>
__global__ void reduce_finish(opl_reduce p)
{
	typedef typename opl_acc<TO>::type A;
	__shared__ A sh[256];
	const A *part = static_cast<const A *>(p.part);
	TO *y = static_cast<TO *>(p.out);
	for (long long o = blockIdx.x; o < p.nout; o += gridDim.x) {
		A v = A(0);
		for (long long s = threadIdx.x; s < p.split; s += blockDim.x)
			v += part[o * p.split + s];
		v = opl_block_reduce(v, sh, opl_sum_op<A>());
		if (threadIdx.x == 0)
			y[o] = opl_cast<TO>::from(v * opl_cast<A>::from(p.scale));
	}
}
