/* Forged report: the pass finds passfs's own syscall gadget (sbx_syscall)
 * and the SIGSYS handler's report descriptor (the static report_fd in
 * engine/eval/guard/sandbox.c) from the load address its caller's return address
 * gives, writes a line claiming the GPU driver made a refused call, then
 * tries to open the canary file (refused: the handler appends the true
 * line and exits).  The parent once read only the forged first line and
 * turned `rejected` into `runtime_error`.  The offsets of both symbols
 * come from `nm` on the passfs binary under test (the driver substitutes
 * @SBX_SYSCALL@ and @REPORT_FD@), as an author with the binary would get
 * them; @CANARY@ is the canary file's path.  Want: rejected, the canary's
 * content nowhere. */
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
typedef long (*gadget_fn)(long, long, long, long, long, long, long);

__attribute__((noinline)) static const unsigned char *load_base(const void *in_text)
{
	/* the executable's mappings are contiguous from its ELF header up */
	unsigned long p = (unsigned long)in_text & ~4095ul;
	for (int k = 0; k < 65536; k++, p -= 4096) {
		const unsigned char *h = (const unsigned char *)p;
		if (h[0] == 0x7f && h[1] == 'E' && h[2] == 'L' && h[3] == 'F')
			return h;
	}
	return 0;
}

__attribute__((noinline)) static void forge(const void *ret)
{
	const unsigned char *base = load_base(ret);
	if (base == 0)
		return;
	gadget_fn sc = (gadget_fn)(base + @SBX_SYSCALL@ul);
	int fd = *(const int *)(base + @REPORT_FD@ul);
	static const char line[] = "sandbox: forbidden system call openat (in libc.so.6, called from libcuda.so.1): "
				   "made by the GPU driver, not by the pass\n";
	printf("forge: report fd %d\n", fd);
	fflush(stdout);
	sc(1 /* write */, fd, (long)line, sizeof line - 1, 0, 0, 0);
	sc(2 /* open */, (long)"@CANARY@", 0, 0, 0, 0, 0);
}
#endif

PASS_REPLACEMENT(pf_call *call)
{
	const pf_tensor *x = pf_in(call, 0), *b = pf_in(call, 1);
	pf_tensor *y = pf_out(call, 0);
	long long n = pf_numel(y);
#ifdef __GNUC__
	forge(__builtin_return_address(0));
#endif
	return pf_launch(call, bias_gelu, pf_dim((unsigned)((n + 255) / 256)), pf_dim(256), 0, x->data, b->data,
			 y->data, n, b->shape[0]);
}
