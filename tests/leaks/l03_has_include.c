/* Leak 3: __has_include of a path answers whether it exists: one bit per
 * compile, through #error (compile_error or not).  Here the answer would
 * be in the message; the canary file exists. */
#include <passfs.h>

#if __has_include("@CANARY_FILE@")
#error the canary file exists
#endif

__global__ void bias_gelu(float *y) { y[0] = 1.0f; }

PASS_REPLACEMENT(pf_call *call)
{
	return pf_launch(call, bias_gelu, pf_dim(1), pf_dim(1), 0, pf_out(call, 0)->data);
}
