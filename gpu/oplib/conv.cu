/* conv.cu - conv2d (NCHW, groups, stride, padding, dilation, bias).
 *
 * conv2d_gemm: implicit GEMM per group, the GEMM kernel's tiling (gemm.cu):
 * rows are the group's output channels, columns the (image, oy, ox)
 * positions, K the group's (ci, ky, kx); the input patch is gathered while
 * loading the B tile, zero outside the padded image.  conv2d_direct: a thread
 * per output element, for groups too thin to fill a tile (depthwise).
 * Float accumulation (double for double). */

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
