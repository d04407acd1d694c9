/* Leak 1: a #line naming another file.  g++ quotes the named file's line N
 * under every error on line N, so failing lines after `#line 1 "FILE"` read
 * the file back into compile.log_tail.  Host-only (NVRTC does not quote
 * from disk).  @CANARY_FILE@ is replaced by the driver with a fresh file. */
#include <passfs.h>

__global__ void bias_gelu(float *y) { y[0] = 1.0f; }

#ifndef __CUDACC_RTC__
#line 1 "@CANARY_FILE@"
int leak1 = no_such_1;
int leak2 = no_such_2;
int leak3 = no_such_3;
int leak4 = no_such_4;
#endif

PASS_REPLACEMENT(pf_call *call)
{
	return pf_launch(call, bias_gelu, pf_dim(1), pf_dim(1), 0, pf_out(call, 0)->data);
}
