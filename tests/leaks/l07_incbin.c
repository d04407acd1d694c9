/* Leak 7: assembly without asm.  A newline in a section attribute goes
 * verbatim into g++'s assembly, so `.incbin "FILE"` embeds the canary file
 * in the object, and the replacement prints it: the print lands in the
 * worker's log and result.json.  In the jail the assembler cannot open the
 * file. */
#include <passfs.h>

__global__ void bias_gelu(float *y) { y[0] = 1.0f; }

#ifndef __CUDACC_RTC__
__attribute__((section(".rodata.leak\n.globl leak_blob\nleak_blob:\n.incbin \"@CANARY_FILE@\"\n.byte 0\n"
		       ".section .rodata.leak2"), used))
static const char pad[1] = {0};
extern "C" const char leak_blob[];
#endif

PASS_REPLACEMENT(pf_call *call)
{
#ifndef __CUDACC_RTC__
	printf("blob: %s\n", leak_blob);
#endif
	return pf_launch(call, bias_gelu, pf_dim(1), pf_dim(1), 0, pf_out(call, 0)->data);
}
