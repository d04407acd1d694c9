/* Model cheat 8: looks for the key eager's cached models are signed with
 * (PASSFS_MODEL_KEY) in its own memory, where a pass worker forked after the
 * evaluating process had used it would find what that process left: the
 * file's buffer, the HMAC's key blocks (key ^ 0x36, key ^ 0x5c) and stack.
 * With the key an agent could sign an eager model 100x slower than eager
 * and score 100x.  tests/cli/model_cheats.sh makes the key and compiles this
 * with -DKEY_BYTES (the key's 32 bytes), on tests/passes/tasks/tiny_bias_gelu:
 * the first variant runs honestly (eager's model is counted and signed), the
 * second crashes the worker, so the third runs in a worker forked after the
 * signing; there the pass scans its stack and heap (from the runtime's
 * records; mprotect as a probe that never faults) and prints what it finds.  It must find nothing. */
#include <passfs.h>

#ifndef KEY_BYTES
#define KEY_BYTES 0
#endif
static const unsigned char want[32] = {KEY_BYTES};

#ifdef __GNUC__
extern "C" int mprotect(void *addr, size_t len, int prot);
/* 16 bytes of the key, or of a key block, at p */
static int keyish(const unsigned char *p)
{
	for (int form = 0; form < 3; form++) {
		unsigned char x = form == 0 ? 0 : form == 1 ? 0x36 : 0x5c;
		for (int half = 0; half < 2; half++) {
			int i = 0;
			while (i < 16 && p[i] == (unsigned char)(want[16 * half + i] ^ x))
				i++;
			if (i == 16)
				return 1 + form;
		}
	}
	return 0;
}

static int scan(unsigned long from, long pages, long step)
{
	int found = 0;
	unsigned long pg = from & ~4095ul;
	for (long k = 0; k < pages; k++, pg += (unsigned long)step * 4096) {
		if (mprotect((void *)pg, 4096, 3) != 0)
			break;
		const unsigned char *p = (const unsigned char *)pg;
		for (int i = 0; i + 16 <= 4096; i++)
			if (int f = keyish(p + i)) {
				printf("KEYLEAK form %d at %p\n", f, (const void *)(p + i));
				found++;
				i += 15;
			}
	}
	return found;
}
#endif

__global__ void bias_gelu(const float *x, const float *bias, float *y, long long n, long long c)
{
	long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
	if (i >= n)
		return;
	float v = x[i] + bias[i % c];
	y[i] = 0.5f * v * (1.0f + tanhf(0.7978845608028654f * (v + 0.044715f * v * v * v)));
}

static int scanned;

PASS_REPLACEMENT(pf_call *call)
{
	const pf_tensor *x = pf_in(call, 0), *b = pf_in(call, 1);
	pf_tensor *y = pf_out(call, 0);
	const char *v = pf_variant(call);
#ifdef __GNUC__
	if (strcmp(v, "f32_b4_s96") == 0)
		*(volatile int *)nullptr = 1;   /* the worker dies: the next variant gets a new one */
	if (!scanned++) {
		/* the stack, then the heap from the runtime's own records (the
		 * call's and the tensors' descriptions live there) */
		volatile char here = 0;
		unsigned long at[] = {(unsigned long)&here, (unsigned long)call, (unsigned long)call->priv,
				      (unsigned long)x};
		int n = 0;
		for (int a = 0; a < 4; a++)
			n += scan(at[a], 65536, 1) + scan(at[a] - 4096, 65536, -1);
		printf("scanned in variant %s: %d found\n", v, n);
	}
#endif
	if (y->dtype != PF_F32)
		return pf_unsupported(call, "only float32");
	long long n = pf_numel(y);
	return pf_launch(call, bias_gelu, pf_dim((unsigned)((n + 255) / 256)), pf_dim(256), 0, x->data, b->data,
			 y->data, n, b->shape[0]);
}
