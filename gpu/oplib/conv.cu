/* conv.cu - conv2d (NCHW, groups, stride, padding, dilation, bias).
 *
 * conv2d_gemm: implicit GEMM per group, the GEMM kernel's tiling (gemm.cu):
 * rows are the group's output channels, columns the (image, oy, ox)
 * positions, K the group's (ci, ky, kx); the input patch is gathered while
 * loading the B tile, zero outside the padded image.  conv2d_thread: the same
 * without barriers, for the cpu backend.  conv2d_direct: a thread per output
 * element, for groups too thin to fill a tile (depthwise).  (A 1x1 conv with
 * stride 1 and no padding is planned as a GEMM instead.)  Float accumulation
 * (double for double). */

template <typename T>
__global__ void conv2d_gemm(opl_conv p)
{
	typedef typename opl_acc<T>::type A;
	__shared__ A As[GEMM_BK][GEMM_BM];
	__shared__ A Bs[GEMM_BK][GEMM_BN];
	const int t = threadIdx.x, tx = t % 16, ty = t / 16;
	const long long cin_g = p.cin / p.groups, cout_g = p.cout / p.groups;
	const long long kk_n = cin_g * p.kh * p.kw, khw = p.kh * p.kw, ohw = p.oh * p.ow;
	const long long ncols = p.n * ohw;
	const long long m0 = (long long)blockIdx.y * GEMM_BM, n0 = (long long)blockIdx.x * GEMM_BN;
	const T *x = static_cast<const T *>(p.x), *w = static_cast<const T *>(p.w);
	const T *bias = static_cast<const T *>(p.bias);
	T *out = static_cast<T *>(p.out);

	for (long long g = blockIdx.z; g < p.groups; g += gridDim.z) {
		const T *wg = w + g * cout_g * kk_n;
		const T *xg = x + g * cin_g * p.sc;
		A acc[4][4];
		for (int i = 0; i < 4; i++)
			for (int j = 0; j < 4; j++)
				acc[i][j] = A(0);
		for (long long k0 = 0; k0 < kk_n; k0 += GEMM_BK) {
			for (int e = 0; e < 4; e++) {
				int idx = t + 256 * e;
				int kk = idx % GEMM_BK, mm = idx / GEMM_BK;
				long long gm = m0 + mm, gk = k0 + kk;
				As[kk][mm] = gm < cout_g && gk < kk_n ? opl_cast<A>::from(wg[gm * kk_n + gk]) : A(0);
				int nn = idx % GEMM_BN, kb = idx / GEMM_BN;
				long long col = n0 + nn, k = k0 + kb;
				A v = A(0);
				if (col < ncols && k < kk_n) {
					long long ci = k / khw, r = k % khw, ky = r / p.kw, kx = r % p.kw;
					long long img = col / ohw, rem = col % ohw, oy = rem / p.ow, ox = rem % p.ow;
					long long iy = oy * p.stride_h - p.pad_h + ky * p.dil_h;
					long long ix = ox * p.stride_w - p.pad_w + kx * p.dil_w;
					if (iy >= 0 && iy < p.h && ix >= 0 && ix < p.w_)
						v = opl_cast<A>::from(xg[img * p.sn + ci * p.sc + iy * p.sh + ix * p.sw]);
				}
				Bs[kb][nn] = v;
			}
			__syncthreads();
			gemm_tile_mac<A>(As, Bs, acc, tx, ty);
			__syncthreads();
		}
		for (int i = 0; i < 4; i++) {
			long long gm = m0 + ty + 16 * i;
			if (gm >= cout_g)
				continue;
			long long co = g * cout_g + gm;
			A bv = bias ? opl_cast<A>::from(bias[co]) : A(0);
			for (int j = 0; j < 4; j++) {
				long long col = n0 + tx + 16 * j;
				if (col >= ncols)
					continue;
				long long img = col / ohw, rem = col % ohw;
				out[(img * p.cout + co) * ohw + rem] = opl_cast<T>::from(acc[i][j] + bv);
			}
		}
	}
}

template <typename T>
__global__ void conv2d_direct(opl_conv p)
{
	typedef typename opl_acc<T>::type A;
	const long long cin_g = p.cin / p.groups, cout_g = p.cout / p.groups;
	const long long total = p.n * p.cout * p.oh * p.ow;
	const T *x = static_cast<const T *>(p.x), *w = static_cast<const T *>(p.w);
	const T *bias = static_cast<const T *>(p.bias);
	T *out = static_cast<T *>(p.out);
	opl_foreach(total, p.per, [&](long long i) {
		long long ox = i % p.ow, oy = (i / p.ow) % p.oh, co = (i / (p.ow * p.oh)) % p.cout;
		long long img = i / (p.ow * p.oh * p.cout), g = co / cout_g;
		A s = A(0);
		for (long long ci = 0; ci < cin_g; ci++) {
			const T *xc = x + img * p.sn + (g * cin_g + ci) * p.sc;
			const T *wc = w + (co * cin_g + ci) * p.kh * p.kw;
			for (long long ky = 0; ky < p.kh; ky++) {
				long long iy = oy * p.stride_h - p.pad_h + ky * p.dil_h;
				if (iy < 0 || iy >= p.h)
					continue;
				for (long long kx = 0; kx < p.kw; kx++) {
					long long ix = ox * p.stride_w - p.pad_w + kx * p.dil_w;
					if (ix < 0 || ix >= p.w_)
						continue;
					s += opl_cast<A>::from(wc[ky * p.kw + kx]) * opl_cast<A>::from(xc[iy * p.sh + ix * p.sw]);
				}
			}
		}
		if (bias)
			s += opl_cast<A>::from(bias[co]);
		out[i] = opl_cast<T>::from(s);
	});
}

/* The implicit GEMM without shared memory or barriers, for the cpu backend:
 * each thread computes 4 output channels x 16 output positions.  When the 16
 * positions lie on one output row and a kernel tap keeps them all inside the
 * image, their inputs are read as one strided run (contiguous for stride 1,
 * which the compiler vectorises); other taps gather with bounds checks. */
#define CONVT_MR 4
#define CONVT_NR 16

template <typename T>
__global__ void conv2d_thread(opl_conv p)
{
	typedef typename opl_acc<T>::type A;
	const long long cin_g = p.cin / p.groups, cout_g = p.cout / p.groups;
	const long long khw = p.kh * p.kw, kk_n = cin_g * khw, ohw = p.oh * p.ow, ncols = p.n * ohw;
	const long long tiles_n = (ncols + CONVT_NR - 1) / CONVT_NR, tiles_m = (cout_g + CONVT_MR - 1) / CONVT_MR;
	const long long tile = opl_gtid();
	if (tile >= tiles_n * tiles_m)
		return;
	const long long m0 = tile / tiles_n * CONVT_MR, n0 = tile % tiles_n * CONVT_NR;
	const T *x = static_cast<const T *>(p.x), *w = static_cast<const T *>(p.w);
	const T *bias = static_cast<const T *>(p.bias);
	T *out = static_cast<T *>(p.out);
	long long iy0[CONVT_NR], ix0[CONVT_NR], xoff[CONVT_NR];
	bool valid[CONVT_NR];
	for (int j = 0; j < CONVT_NR; j++) {
		long long col = n0 + j;
		valid[j] = col < ncols;
		long long c = valid[j] ? col : n0;
		long long img = c / ohw, rem = c % ohw, oy = rem / p.ow, ox = rem % p.ow;
		iy0[j] = oy * p.stride_h - p.pad_h;
		ix0[j] = ox * p.stride_w - p.pad_w;
		xoff[j] = img * p.sn;
	}
	/* all 16 on one row of one image: consecutive ox */
	const bool one_row = valid[CONVT_NR - 1] && iy0[0] == iy0[CONVT_NR - 1] && xoff[0] == xoff[CONVT_NR - 1] &&
			     ix0[CONVT_NR - 1] - ix0[0] == (CONVT_NR - 1) * p.stride_w;
	const long long step = p.stride_w * p.sw;
	for (long long g = blockIdx.z; g < p.groups; g += gridDim.z) {
		A acc[CONVT_MR][CONVT_NR];
		for (int i = 0; i < CONVT_MR; i++)
			for (int j = 0; j < CONVT_NR; j++)
				acc[i][j] = A(0);
		const T *wg = w + (g * cout_g + m0) * kk_n;
		for (long long ci = 0; ci < cin_g; ci++) {
			const T *xc = x + (g * cin_g + ci) * p.sc;
			for (long long ky = 0; ky < p.kh; ky++) {
				for (long long kx = 0; kx < p.kw; kx++) {
					long long k = ci * khw + ky * p.kw + kx;
					A a[CONVT_MR], b[CONVT_NR];
					for (int i = 0; i < CONVT_MR; i++)
						a[i] = m0 + i < cout_g ? opl_cast<A>::from(wg[i * kk_n + k]) : A(0);
					long long dy = ky * p.dil_h, dx = kx * p.dil_w;
					long long iy = iy0[0] + dy, first = ix0[0] + dx, last = ix0[CONVT_NR - 1] + dx;
					if (one_row && iy >= 0 && iy < p.h && first >= 0 && last < p.w_) {
						const T *run = xc + xoff[0] + iy * p.sh + first * p.sw;
						if (step == 1)
							for (int j = 0; j < CONVT_NR; j++)
								b[j] = opl_cast<A>::from(run[j]);
						else
							for (int j = 0; j < CONVT_NR; j++)
								b[j] = opl_cast<A>::from(run[j * step]);
					} else {
						for (int j = 0; j < CONVT_NR; j++) {
							long long yy = iy0[j] + dy, xx = ix0[j] + dx;
							b[j] = valid[j] && yy >= 0 && yy < p.h && xx >= 0 && xx < p.w_
								       ? opl_cast<A>::from(xc[xoff[j] + yy * p.sh + xx * p.sw])
								       : A(0);
						}
					}
					for (int i = 0; i < CONVT_MR; i++)
						for (int j = 0; j < CONVT_NR; j++)
							acc[i][j] += a[i] * b[j];
				}
			}
		}
		for (int i = 0; i < CONVT_MR && m0 + i < cout_g; i++) {
			long long co = g * cout_g + m0 + i;
			A bv = bias ? opl_cast<A>::from(bias[co]) : A(0);
			for (int j = 0; j < CONVT_NR && valid[j]; j++) {
				long long col = n0 + j, img = col / ohw, rem = col % ohw;
				out[(img * p.cout + co) * ohw + rem] = opl_cast<T>::from(acc[i][j] + bv);
			}
		}
	}
}
