/* spatial.cu - adaptive_avg_pool2d and interpolate (nearest for 1-3 spatial
 * dims, bilinear for 2), a thread per output element, PyTorch's CUDA index
 * rules in float. */

/* Window [start, end) of output cell i of o over an input of n. */
static __device__ __forceinline__ void aap_window(long long i, long long o, long long n, long long *s, long long *e)
{
	*s = (i * n) / o;
	*e = ((i + 1) * n + o - 1) / o;
}

template <typename T>
__global__ void adaptive_avg_pool2d(opl_pool p)
{
	typedef typename opl_acc<T>::type A;
	const T *x = static_cast<const T *>(p.in);
	T *y = static_cast<T *>(p.out);
	opl_foreach(p.nc * p.oh * p.ow, p.per, [&](long long i) {
		long long ox = i % p.ow, oy = (i / p.ow) % p.oh, c = i / (p.ow * p.oh);
		long long y0, y1, x0, x1;
		aap_window(oy, p.oh, p.h, &y0, &y1);
		aap_window(ox, p.ow, p.w, &x0, &x1);
		const T *xc = x + c * p.h * p.w;
		A s = A(0);
		for (long long yy = y0; yy < y1; yy++)
			for (long long xx = x0; xx < x1; xx++)
				s += opl_cast<A>::from(xc[yy * p.w + xx]);
		y[i] = opl_cast<T>::from(s / A((y1 - y0) * (x1 - x0)));
	});
}

/* Nearest: src = min(floor(dst * scale), in - 1) per spatial dim. */
template <typename T>
__global__ void upsample_nearest(opl_upsample p)
{
	const T *x = static_cast<const T *>(p.in);
	T *y = static_cast<T *>(p.out);
	long long in_plane = 1;
	for (int d = 0; d < p.nsp; d++)
		in_plane *= p.in_size[d];
	opl_foreach(p.nout, p.per, [&](long long i) {
		long long r = i, src = 0, mul = 1;
		for (int d = p.nsp - 1; d >= 0; d--) {
			long long o = r % p.out_size[d];
			r /= p.out_size[d];
			long long s = (long long)floorf((float)o * p.scale[d]);
			if (s > p.in_size[d] - 1)
				s = p.in_size[d] - 1;
			src += s * mul;
			mul *= p.in_size[d];
		}
		y[i] = x[r * in_plane + src];
	});
}

/* Bilinear (PyTorch's upsample_bilinear2d): source coordinate scale * dst
 * with align_corners, else scale * (dst + 0.5) - 0.5 clamped at 0. */
template <typename T>
__global__ void upsample_bilinear(opl_upsample p)
{
	typedef typename opl_acc<T>::type A;
	const T *x = static_cast<const T *>(p.in);
	T *y = static_cast<T *>(p.out);
	const long long ih = p.in_size[0], iw = p.in_size[1], oh = p.out_size[0], ow = p.out_size[1];
	opl_foreach(p.nout, p.per, [&](long long i) {
		long long ox = i % ow, oy = (i / ow) % oh, c = i / (ow * oh);
		float hr, wr;
		if (p.align_corners) {
			hr = p.scale[0] * (float)oy;
			wr = p.scale[1] * (float)ox;
		} else {
			hr = p.scale[0] * ((float)oy + 0.5f) - 0.5f;
			wr = p.scale[1] * ((float)ox + 0.5f) - 0.5f;
			hr = hr < 0.f ? 0.f : hr;
			wr = wr < 0.f ? 0.f : wr;
		}
		long long h1 = (long long)hr, w1 = (long long)wr;
		long long h1p = h1 < ih - 1 ? 1 : 0, w1p = w1 < iw - 1 ? 1 : 0;
		A h1l = (A)(hr - (float)h1), w1l = (A)(wr - (float)w1);
		A h0l = A(1) - h1l, w0l = A(1) - w1l;
		const T *xc = x + c * ih * iw + h1 * iw + w1;
		A v = h0l * (w0l * opl_cast<A>::from(xc[0]) + w1l * opl_cast<A>::from(xc[w1p])) +
		      h1l * (w0l * opl_cast<A>::from(xc[h1p * iw]) + w1l * opl_cast<A>::from(xc[h1p * iw + w1p]));
		y[i] = opl_cast<T>::from(v);
	});
}
