/* Cheat 10a: never returns (a kernel that spins on a value that never
 * changes).  The per-call watchdog kills the worker: timeout, and the
 * evaluation (and any daemon running it) goes on. */
#include <passfs.h>

__global__ void spin(const float *x, float *y)
{
	volatile const float *p = x;
	while (p[0] == p[0] || p[0] != p[0])
		;
	y[0] = 0.0f;
}

PASS_REPLACEMENT(pf_call *call)
{
	const pf_tensor *x = pf_in(call, 0);
	pf_tensor *y = pf_out(call, 0);
	return pf_launch(call, spin, pf_dim(1), pf_dim(1), 0, x->data, y->data);
}
