/* Leak 2: `#line 1 "/proc/self/environ"`: the compiling process's
 * environment (the evaluator's, inherited: tokens, keys) quoted under the
 * errors; /proc/1/environ too (the jail's first process, or init). */
#include <passfs.h>

__global__ void bias_gelu(float *y) { y[0] = 1.0f; }

#ifndef __CUDACC_RTC__
#line 1 "/proc/self/environ"
int leak1 = no_such_1;
#line 1 "/proc/1/environ"
int leak2 = no_such_2;
#endif

PASS_REPLACEMENT(pf_call *call)
{
	return pf_launch(call, bias_gelu, pf_dim(1), pf_dim(1), 0, pf_out(call, 0)->data);
}
