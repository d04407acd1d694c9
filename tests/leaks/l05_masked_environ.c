/* Leak 5: the #line of leak 2, hidden from the scan the way leak 4 hides
 * its #include: only the jail (no /proc) and the log filter stand. */
#include <passfs.h>
#define xLR

__global__ void bias_gelu(float *y) { y[0] = 1.0f; }

#ifndef __CUDACC_RTC__
static const char *hide = xLR"(";
#line 1 "/proc/self/environ"
int leak1 = no_such_1;
#line 1 "@CANARY_FILE@"
int leak2 = no_such_2;
int leak3 = no_such_3;
static const char *unhide = ")";
#endif

PASS_REPLACEMENT(pf_call *call)
{
	return pf_launch(call, bias_gelu, pf_dim(1), pf_dim(1), 0, pf_out(call, 0)->data);
}
