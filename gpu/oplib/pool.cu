/* pool.cu - avg_pool2d, a thread per output element, with the window rules
 * of PyTorch's CPU and CUDA kernels: the window is clipped to the padded
 * input for the count_include_pad divisor and to the input for the sum (and
 * for the divisor without count_include_pad); divisor_override replaces
 * both.  Accumulation in the compute type (float for float/half/bfloat16). */

template <typename T>
__global__ void avg_pool2d(opl_avg_pool p)
{
	typedef typename opl_acc<T>::type A;
	const T *x = static_cast<const T *>(p.in);
	T *y = static_cast<T *>(p.out);
	opl_foreach(p.nc * p.oh * p.ow, p.per, [&](long long i) {
		long long ox = i % p.ow, oy = (i / p.ow) % p.oh, c = i / (p.ow * p.oh);
		long long h0 = oy * p.sh - p.ph, w0 = ox * p.sw - p.pw;
		long long h1 = h0 + p.kh, w1 = w0 + p.kw;
		h1 = h1 < p.h + p.ph ? h1 : p.h + p.ph;
		w1 = w1 < p.w + p.pw ? w1 : p.w + p.pw;
		long long padded = (h1 - h0) * (w1 - w0);
		h0 = h0 > 0 ? h0 : 0;
		w0 = w0 > 0 ? w0 : 0;
		h1 = h1 < p.h ? h1 : p.h;
		w1 = w1 < p.w ? w1 : p.w;
		if (h0 >= h1 || w0 >= w1) {
			y[i] = opl_cast<T>::from(A(0));
			return;
		}
		const T *xc = x + c * p.h * p.w;
		A s = A(0);
		for (long long yy = h0; yy < h1; yy++)
			for (long long xx = w0; xx < w1; xx++)
				s += opl_cast<A>::from(xc[yy * p.w + xx]);
		long long div = p.divisor ? p.divisor : p.count_include_pad ? padded : (h1 - h0) * (w1 - w0);
		y[i] = opl_cast<T>::from(s / A(div));
	});
}
