/* Leak 6 (resources): an #include of /dev/zero, hidden from the scan as in
 * leak 4: without a jail cc1plus reads zeros until a memory limit stops it
 * (4.2 GB in 19 s under the old 8 GiB limit).  In the jail there is no
 * /dev/zero: a compile_error at once. */
#include <passfs.h>
#define xLR

__global__ void bias_gelu(float *y) { y[0] = 1.0f; }

#ifndef __CUDACC_RTC__
static const char *hide = xLR"(";
#include "/dev/zero"
static const char *unhide = ")";
#endif

PASS_REPLACEMENT(pf_call *call)
{
	return pf_launch(call, bias_gelu, pf_dim(1), pf_dim(1), 0, pf_out(call, 0)->data);
}
