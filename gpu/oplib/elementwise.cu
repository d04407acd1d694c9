/* elementwise.cu - the strided N-d elementwise family: unary math, casts and
 * copies (which is how every non-contiguous view gets materialised: transpose,
 * permute, expand, getitem, cat and pad pieces), binary ops with broadcasting
 * and Python-scalar operands, and where.
 *
 * Each thread takes runs of p.per elements (1 on a GPU: a coalesced
 * grid-stride loop).  The output and every operand are strided views over one
 * shape (opl_ew); the host coalesces dims first, so a contiguous op runs with
 * ndim 1 and no index arithmetic.  Indices are 32-bit when the element count
 * allows it (cheaper division). */

/* Offsets of element i in the output and in NIN operands. */
template <int NIN, typename I>
static __device__ __forceinline__ void ew_offsets(const opl_ew &p, I i, long long *oo, long long *io)
{
	long long o = 0, a = 0, b = 0, c = 0;
	for (int d = p.ndim - 1; d > 0; d--) {
		I s = (I)p.shape[d];
		long long k = (long long)(i % s);
		i /= s;
		o += k * p.ostride[d];
		if (NIN > 0) a += k * p.istride[0][d];
		if (NIN > 1) b += k * p.istride[1][d];
		if (NIN > 2) c += k * p.istride[2][d];
	}
	long long k = (long long)i;
	*oo = o + k * p.ostride[0];
	if (NIN > 0) io[0] = a + k * p.istride[0][0];
	if (NIN > 1) io[1] = b + k * p.istride[1][0];
	if (NIN > 2) io[2] = c + k * p.istride[2][0];
}

template <int OP, typename C> static __device__ __forceinline__ C ew_unary_fn(C x)
{
	if constexpr (OP == OPL_SIGMOID) {
		return C(1) / (C(1) + opl_exp(-x));
	} else if constexpr (OP == OPL_RELU) {
		return x != x ? x : (x > C(0) ? x : C(0));
	} else if constexpr (OP == OPL_SILU) {
		return x / (C(1) + opl_exp(-x));
	} else if constexpr (OP == OPL_TANH) {
		return opl_tanh(x);
	} else if constexpr (OP == OPL_EXP) {
		return opl_exp(x);
	} else if constexpr (OP == OPL_RSQRT) {
		return C(1) / opl_sqrt(x);
	} else if constexpr (OP == OPL_GELU) {
		return x * C(0.5) * (C(1) + opl_erf(x * C(0.70710678118654752440)));
	} else if constexpr (OP == OPL_GELU_TANH) {
		const C beta = C(0.79788456080286535588);  /* sqrt(2) * 2/sqrt(pi) / 2 */
		C inner = beta * (x + C(0.044715) * x * x * x);
		return C(0.5) * x * (C(1) + opl_tanh(inner));
	} else {
		return x;
	}
}

/* Calls f(out offset, operand offsets) for every element.  Each thread takes
 * runs of p.per consecutive elements (grid-stride between runs, see
 * opl_foreach); inside a run the offsets advance along the innermost dim and
 * are recomputed only when it wraps. */
template <int NIN, typename I, typename F>
static __device__ __forceinline__ void ew_for(const opl_ew &p, F f)
{
	const I n = (I)p.n, per = (I)p.per, step = (I)opl_gsize() * per;
	const int last = p.ndim - 1;
	const I inner = (I)p.shape[last];
	const long long so = p.ostride[last], s0 = p.istride[0][last], s1 = p.istride[1][last],
			s2 = p.istride[2][last];
	for (I i0 = (I)opl_gtid() * per; i0 < n; i0 += step) {
		I end = n - i0 > per ? i0 + per : n;
		long long oo, io[3] = {0, 0, 0};
		ew_offsets<NIN, I>(p, i0, &oo, io);
		I c = i0 % inner;
		for (I i = i0; i < end;) {
			f(oo, io);
			if (++i == end)
				break;
			if (++c == inner) {
				c = 0;
				ew_offsets<NIN, I>(p, i, &oo, io);
			} else {
				oo += so;
				if (NIN > 0) io[0] += s0;
				if (NIN > 1) io[1] += s1;
				if (NIN > 2) io[2] += s2;
			}
		}
	}
}

template <int OP, typename TO, typename TA, typename I>
static __device__ __forceinline__ void ew_unary_loop(const opl_ew &p)
{
	typedef typename opl_acc<TO>::type C;
	TO *out = static_cast<TO *>(p.out);
	const void *in = p.in[0];
	const double sc = p.scalar[0];
	ew_for<1, I>(p, [&](long long oo, const long long *io) {
		if constexpr (OP == OPL_COPY) {
			out[oo] = in ? opl_cast<TO>::from(opl_ld<TA>(in, io[0])) : opl_cast<TO>::from(sc);
		} else {
			C x = in ? opl_cast<C>::from(opl_cast<TO>::from(opl_ld<TA>(in, io[0])))
				 : opl_cast<C>::from(opl_cast<TO>::from(sc));
			out[oo] = opl_cast<TO>::from(ew_unary_fn<OP, C>(x));
		}
	});
}

/* out = OP(in0), converting in0 (TA) to the result dtype TO first, as
 * PyTorch's type promotion does; OPL_COPY is a plain cast/copy, and with a
 * NULL in0 a fill with scalar[0]. */
template <int OP, typename TO, typename TA>
__global__ void ew_unary(opl_ew p)
{
	if (p.n < (1LL << 30) && p.per * blockDim.x < (1LL << 28))
		ew_unary_loop<OP, TO, TA, unsigned>(p);
	else
		ew_unary_loop<OP, TO, TA, unsigned long long>(p);
}

template <int OP, typename C> static __device__ __forceinline__ C ew_binary_fn(C a, C b, C alpha, bool b_scalar)
{
	if constexpr (OP == OPL_ADD) {
		return a + alpha * b;
	} else if constexpr (OP == OPL_SUB) {
		return a - alpha * b;
	} else if constexpr (OP == OPL_MUL) {
		return a * b;
	} else if constexpr (OP == OPL_DIV) {
		return a / b;
	} else if constexpr (OP == OPL_POW) {
		/* PyTorch's pow(tensor, scalar) special cases */
		if (b_scalar) {
			if (b == C(2))
				return a * a;
			if (b == C(3))
				return a * a * a;
			if constexpr (!opl_is_int<C>::value) {
				if (b == C(0.5))
					return opl_sqrt(a);
				if (b == C(-0.5))
					return C(1) / opl_sqrt(a);
				if (b == C(-1))
					return C(1) / a;
				if (b == C(-2))
					return C(1) / (a * a);
			}
		}
		return opl_pow(a, b);
	} else if constexpr (OP == OPL_PRELU) {
		return a > C(0) ? a : b * a;
	} else {
		return a;
	}
}

template <int OP, typename TO, typename TA, typename TB, typename I>
static __device__ __forceinline__ void ew_binary_loop(const opl_ew &p)
{
	typedef typename opl_acc<TO>::type C;
	TO *out = static_cast<TO *>(p.out);
	const void *ina = p.in[0], *inb = p.in[1];
	const C alpha = opl_cast<C>::from(p.alpha);
	const bool b_scalar = inb == 0;
	/* Python scalars enter the computation in the compute type directly. */
	const C sa = opl_cast<C>::from(p.scalar[0]), sb = opl_cast<C>::from(p.scalar[1]);
	ew_for<2, I>(p, [&](long long oo, const long long *io) {
		C a = ina ? opl_cast<C>::from(opl_cast<TO>::from(opl_ld<TA>(ina, io[0]))) : sa;
		C b = inb ? opl_cast<C>::from(opl_cast<TO>::from(opl_ld<TB>(inb, io[1]))) : sb;
		out[oo] = opl_cast<TO>::from(ew_binary_fn<OP, C>(a, b, alpha, b_scalar));
	});
}

/* out = OP(in0, in1) in the compute type of the result dtype TO (operands
 * converted to TO first); alpha scales in1 for add and sub. */
template <int OP, typename TO, typename TA, typename TB>
__global__ void ew_binary(opl_ew p)
{
	if (p.n < (1LL << 30) && p.per * blockDim.x < (1LL << 28))
		ew_binary_loop<OP, TO, TA, TB, unsigned>(p);
	else
		ew_binary_loop<OP, TO, TA, TB, unsigned long long>(p);
}

template <typename TO, typename TX, typename TY, typename I>
static __device__ __forceinline__ void ew_where_loop(const opl_ew &p)
{
	TO *out = static_cast<TO *>(p.out);
	const void *inc = p.in[0], *inx = p.in[1], *iny = p.in[2];
	const TO sx = opl_cast<TO>::from(p.scalar[1]), sy = opl_cast<TO>::from(p.scalar[2]);
	ew_for<3, I>(p, [&](long long oo, const long long *io) {
		TO r;
		if (opl_ld<bool>(inc, io[0]))
			r = inx ? opl_cast<TO>::from(opl_ld<TX>(inx, io[1])) : sx;
		else
			r = iny ? opl_cast<TO>::from(opl_ld<TY>(iny, io[2])) : sy;
		out[oo] = r;
	});
}

/* out = in0 ? in1 : in2 (in0 bool; in1/in2 tensors or scalars). */
template <typename TO, typename TX, typename TY>
__global__ void ew_where(opl_ew p)
{
	if (p.n < (1LL << 30) && p.per * blockDim.x < (1LL << 28))
		ew_where_loop<TO, TX, TY, unsigned>(p);
	else
		ew_where_loop<TO, TX, TY, unsigned long long>(p);
}

/* out[i] = scalar[0] + i * scalar[1] over a contiguous 1-D out (arange),
 * computed in double and converted once. */
template <typename TO>
__global__ void ew_arange(opl_ew p)
{
	TO *out = static_cast<TO *>(p.out);
	const double start = p.scalar[0], step = p.scalar[1];
	opl_foreach(p.n, p.per, [&](long long i) { out[i] = opl_cast<TO>::from(start + (double)i * step); });
}
