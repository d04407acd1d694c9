/* Leak 4: an #include the scan cannot see.  After `#define xLR`, the
 * compilers read xLR"(" as nothing and an ordinary string, while a source
 * masker that takes it for a raw string blanks everything up to the next
 * )" - here the #include of the canary file, whose lines g++ then reports
 * as code ('<line>' does not name a type).  The compile jail must make the
 * file not exist for the compilers, whatever the scan saw. */
#include <passfs.h>
#define xLR

__global__ void bias_gelu(float *y) { y[0] = 1.0f; }

#ifndef __CUDACC_RTC__
static const char *hide = xLR"(";
#include "@CANARY_FILE@"
static const char *unhide = ")";
#endif

PASS_REPLACEMENT(pf_call *call)
{
	return pf_launch(call, bias_gelu, pf_dim(1), pf_dim(1), 0, pf_out(call, 0)->data);
}
