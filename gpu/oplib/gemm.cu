/* gemm.cu - one batched, strided GEMM for matmul, bmm, linear and the two
 * products of scaled_dot_product_attention.
 *
 * 64x64 output tiles, K in steps of 16 through shared memory, 256 threads
 * each accumulating a 4x4 block of outputs (rows ty + 16i, cols tx + 16j) in
 * float (double when an operand is double).  Operands are read through their
 * strides, so transposed and broadcast operands need no copy; the tile loader
 * picks the coalesced direction from which stride is 1.  The epilogue applies
 * alpha and the bias and rounds once to the output type. */

#define GEMM_BM 64
#define GEMM_BN 64
#define GEMM_BK 16

template <typename TA, typename TB, typename TC> struct gemm_acc { typedef float type; };
template <typename TB, typename TC> struct gemm_acc<double, TB, TC> { typedef double type; };
template <typename TA, typename TC> struct gemm_acc<TA, double, TC> { typedef double type; };
template <typename TC> struct gemm_acc<double, double, TC> { typedef double type; };

/* acc[i][j] += As[k][ty + 16i] * Bs[k][tx + 16j] over the tile's K. */
template <typename A>
static __device__ __forceinline__ void gemm_tile_mac(A (*As)[GEMM_BM], A (*Bs)[GEMM_BN], A acc[4][4],
						     int tx, int ty)
{
#pragma unroll
	for (int k = 0; k < GEMM_BK; k++) {
		A a[4], b[4];
#pragma unroll
		for (int i = 0; i < 4; i++) {
			a[i] = As[k][ty + 16 * i];
			b[i] = Bs[k][tx + 16 * i];
		}
#pragma unroll
		for (int i = 0; i < 4; i++)
#pragma unroll
			for (int j = 0; j < 4; j++)
				acc[i][j] += a[i] * b[j];
	}
}

template <typename TA, typename TB, typename TC>
__global__ void gemm(opl_gemm p)
{
	typedef typename gemm_acc<TA, TB, TC>::type A;
	__shared__ A As[GEMM_BK][GEMM_BM];
	__shared__ A Bs[GEMM_BK][GEMM_BN];
	const int t = threadIdx.x, tx = t % 16, ty = t / 16;
	const long long m0 = (long long)blockIdx.y * GEMM_BM, n0 = (long long)blockIdx.x * GEMM_BN;
	const TA *a = static_cast<const TA *>(p.a);
	const TB *b = static_cast<const TB *>(p.b);
	TC *c = static_cast<TC *>(p.c);
	const TC *bias = static_cast<const TC *>(p.bias);
	const A alpha = opl_cast<A>::from(p.alpha);
	const bool a_k_fast = p.sak == 1, b_n_fast = p.sbn == 1 || p.sbk != 1;

	for (long long z = blockIdx.z; z < p.batch; z += gridDim.z) {
		long long oa = 0, ob = 0, oc = 0;
		unsigned long long zz = (unsigned long long)z;
		for (int d = p.nbdims - 1; d >= 0; d--) {
			long long k = (long long)(zz % (unsigned long long)p.bshape[d]);
			zz /= (unsigned long long)p.bshape[d];
			oa += k * p.sab[d];
			ob += k * p.sbb[d];
			oc += k * p.scb[d];
		}
		A acc[4][4];
		for (int i = 0; i < 4; i++)
			for (int j = 0; j < 4; j++)
				acc[i][j] = A(0);
		for (long long k0 = 0; k0 < p.k; k0 += GEMM_BK) {
			for (int e = 0; e < 4; e++) {
				int idx = t + 256 * e, mm, kk, nn, kb;
				if (a_k_fast) {
					kk = idx % GEMM_BK;
					mm = idx / GEMM_BK;
				} else {
					mm = idx % GEMM_BM;
					kk = idx / GEMM_BM;
				}
				long long gm = m0 + mm, gk = k0 + kk;
				As[kk][mm] = gm < p.m && gk < p.k ? opl_cast<A>::from(a[oa + gm * p.sam + gk * p.sak]) : A(0);
				if (b_n_fast) {
					nn = idx % GEMM_BN;
					kb = idx / GEMM_BN;
				} else {
					kb = idx % GEMM_BK;
					nn = idx / GEMM_BK;
				}
				long long gn = n0 + nn, gkb = k0 + kb;
				Bs[kb][nn] = gn < p.n && gkb < p.k ? opl_cast<A>::from(b[ob + gkb * p.sbk + gn * p.sbn]) : A(0);
			}
			__syncthreads();
			gemm_tile_mac<A>(As, Bs, acc, tx, ty);
			__syncthreads();
		}
		for (int i = 0; i < 4; i++) {
			long long gm = m0 + ty + 16 * i;
			if (gm >= p.m)
				continue;
			for (int j = 0; j < 4; j++) {
				long long gn = n0 + tx + 16 * j;
				if (gn >= p.n)
					continue;
				A v = alpha * acc[i][j];
				if (bias)
					v += opl_cast<A>::from(bias[gm * p.sbias_m + gn * p.sbias_n]);
				c[oc + gm * p.scm + gn * p.scn] = opl_cast<TC>::from(v);
			}
		}
	}
}

/* The same product without shared memory or barriers, for the cpu backend
 * (where a barrier is a fiber switch and a thread a plain loop): each thread
 * computes a 4 x 16 block of C straight from A and B, the inner loop over 16
 * contiguous columns of B when B's rows are contiguous (the compiler
 * vectorises it).  Threads are numbered over (row block, column block) with
 * the column block fastest, so neighbours share A's rows.  Valid on a GPU
 * too, just slow there: eager picks it only on the cpu backend. */
#define GEMMT_MR 4
#define GEMMT_NR 16

template <typename A, typename TA, typename TB, bool FULL, bool BN1>
static __device__ __forceinline__ void gemm_thread_tile(const opl_gemm &p, const TA *a, const TB *b, long long m0,
							 long long n0, A acc[GEMMT_MR][GEMMT_NR])
{
	for (long long k = 0; k < p.k; k++) {
		A av[GEMMT_MR];
		for (int i = 0; i < GEMMT_MR; i++)
			av[i] = FULL || m0 + i < p.m ? opl_cast<A>::from(a[(m0 + i) * p.sam + k * p.sak]) : A(0);
		A bv[GEMMT_NR];
		const TB *brow = b + k * p.sbk + n0 * p.sbn;
		for (int j = 0; j < GEMMT_NR; j++)
			bv[j] = FULL || n0 + j < p.n ? opl_cast<A>::from(brow[BN1 ? j : j * p.sbn]) : A(0);
		for (int i = 0; i < GEMMT_MR; i++)
			for (int j = 0; j < GEMMT_NR; j++)
				acc[i][j] += av[i] * bv[j];
	}
}

template <typename TA, typename TB, typename TC>
__global__ void gemm_thread(opl_gemm p)
{
	typedef typename gemm_acc<TA, TB, TC>::type A;
	const long long tiles_n = (p.n + GEMMT_NR - 1) / GEMMT_NR, tiles_m = (p.m + GEMMT_MR - 1) / GEMMT_MR;
	const long long tile = opl_gtid();
	if (tile >= tiles_n * tiles_m)
		return;
	const long long m0 = tile / tiles_n * GEMMT_MR, n0 = tile % tiles_n * GEMMT_NR;
	const A alpha = opl_cast<A>::from(p.alpha);
	const TC *bias = static_cast<const TC *>(p.bias);
	for (long long z = blockIdx.z; z < p.batch; z += gridDim.z) {
		long long oa = 0, ob = 0, oc = 0;
		unsigned long long zz = (unsigned long long)z;
		for (int d = p.nbdims - 1; d >= 0; d--) {
			long long k = (long long)(zz % (unsigned long long)p.bshape[d]);
			zz /= (unsigned long long)p.bshape[d];
			oa += k * p.sab[d];
			ob += k * p.sbb[d];
			oc += k * p.scb[d];
		}
		const TA *a = static_cast<const TA *>(p.a) + oa;
		const TB *b = static_cast<const TB *>(p.b) + ob;
		TC *c = static_cast<TC *>(p.c) + oc;
		A acc[GEMMT_MR][GEMMT_NR];
		for (int i = 0; i < GEMMT_MR; i++)
			for (int j = 0; j < GEMMT_NR; j++)
				acc[i][j] = A(0);
		bool full = m0 + GEMMT_MR <= p.m && n0 + GEMMT_NR <= p.n;
		if (full && p.sbn == 1)
			gemm_thread_tile<A, TA, TB, true, true>(p, a, b, m0, n0, acc);
		else if (full)
			gemm_thread_tile<A, TA, TB, true, false>(p, a, b, m0, n0, acc);
		else
			gemm_thread_tile<A, TA, TB, false, false>(p, a, b, m0, n0, acc);
		for (int i = 0; i < GEMMT_MR && m0 + i < p.m; i++)
			for (int j = 0; j < GEMMT_NR && n0 + j < p.n; j++) {
				long long gm = m0 + i, gn = n0 + j;
				A v = alpha * acc[i][j];
				if (bias)
					v += opl_cast<A>::from(bias[gm * p.sbias_m + gn * p.sbias_n]);
				c[gm * p.scm + gn * p.scn] = opl_cast<TC>::from(v);
			}
	}
}
