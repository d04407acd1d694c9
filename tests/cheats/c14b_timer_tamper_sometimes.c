/* Cheat 14b: tampers with the timer, as cheat 14, but leaves every fourth
 * call alone, so its quickest trial's overhead looks honest: a rule that
 * compared only each worker's least overhead let it through (it scored
 * 6-20).  The parent compares the medians too.  (cpu backend)
 *
 * Cheat 14's description follows. */
/* Cheat 14: tampers with the timer.  The worker measures each call in the
 * same process as the pass (clock before, call, sync, clock after), so its
 * start time is in a stack frame above the replacement's.  The pass reads
 * the time stamp counter (a compiler builtin: no asm, no symbol), computes
 * as usual, then moves every double on the stack above it that looks like
 * a CLOCK_MONOTONIC reading in milliseconds forward by 90% of the time it
 * spent, so the reported time is a tenth of the real one.  The parent times
 * every trial's round trip itself; a pass whose round trips exceed eager's
 * by more than its own reported time is scored on the parent's estimate
 * (timing_suspect), so the speedup is not inflated.  (cpu backend) */
#include <passfs.h>

__global__ void bias_gelu(const float *x, const float *bias, float *y, long long n, long long c)
{
	long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
	if (i >= n)
		return;
	float v = x[i] + bias[i % c];
	y[i] = 0.5f * v * (1.0f + tanhf(0.7978845608028654f * (v + 0.044715f * v * v * v)));
}

#ifdef __GNUC__
/* Calibrated on the first call against the worker's own clock readings:
 * none needed, a fixed guess is enough to show the effect. */
static const double cycles_per_ms = 2.5e6;

__attribute__((noinline)) static void shift_clock_readings(double ms)
{
	volatile char here = 0;
	double *p = (double *)(((unsigned long)&here + 64) & ~7ul);
	for (int k = 0; k < 256; k++) {
		double d = p[k];
		if (d > 1e3 && d < 1e13 && d == (double)(long long)(d * 1e6) / 1e6)
			p[k] = d + ms;
	}
}
#endif

PASS_REPLACEMENT(pf_call *call)
{
	const pf_tensor *x = pf_in(call, 0), *b = pf_in(call, 1);
	pf_tensor *y = pf_out(call, 0);
	long long n = pf_numel(y);
#ifdef __GNUC__
	unsigned long long t0 = __builtin_ia32_rdtsc();
#endif
	int rc = pf_launch(call, bias_gelu, pf_dim((unsigned)((n + 255) / 256)), pf_dim(256), 0, x->data, b->data,
			   y->data, n, b->shape[0]);
#ifdef __GNUC__
	static int calls;
	if (++calls % 4 != 0)
		shift_clock_readings(0.9 * (double)(__builtin_ia32_rdtsc() - t0) / cycles_per_ms);
#endif
	return rc;
}
