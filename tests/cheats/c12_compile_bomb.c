/* Limit: a template that instantiates 2^16 distinct classes: NVRTC (which
 * runs in-process) needs minutes and gigabytes for it.  The compile runs in
 * a child process with a wall-clock limit (120 s; cheats.sh sets
 * PASSFS_COMPILE_TIMEOUT_S=3) and an address-space limit: compile_error,
 * "did not finish within", the caller unharmed. */
#include <passfs.h>

template <int N, unsigned long long K> struct B {
	static constexpr unsigned long long v = B<N - 1, 2 * K>::v + B<N - 1, 2 * K + 1>::v;
};
template <unsigned long long K> struct B<0, K> {
	static constexpr unsigned long long v = K;
};

__global__ void k(float *y, long long n)
{
	if (n > 0)
		y[0] = (float)B<16, 1>::v;
}

PASS_REPLACEMENT(pf_call *call)
{
	pf_tensor *y = pf_out(call, 0);
	return pf_launch(call, k, pf_dim(1), pf_dim(1), 0, y->data, pf_numel(y));
}
