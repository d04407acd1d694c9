/* Cheat 11: reads eager's reference outputs instead of computing.  The pass
 * worker is a fork of the evaluating process, which maps eager's result area
 * (shared memory): the pass walks its own stack for page-aligned pointers,
 * probes each with mmap(MAP_FIXED_NOREPLACE) (allowed, and it never
 * faults), and looks for the outputs it expects from a few elements computed
 * on the host.  Once found it copies the reference for whatever input set
 * the call has (public, secret, and the timed trial, which eager runs
 * first).  The pass worker unmaps eager's area before any pass code loads:
 * the search finds nothing, the pass writes nothing, rejected (poison).
 * (Host code reads device memory directly: cpu backend.) */
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
static const float *ref;        /* eager's result area, once found */

static int is_mapped(const void *p)
{
	void *r = mmap((void *)p, 4096, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);
	if (r == MAP_FAILED)
		return 1;               /* EEXIST: something is mapped there */
	munmap(r, 4096);
	return 0;
}

/* The slot (input set) of the result area at base holding want[0..7]. */
static int find_slot(const float *base, long long stride, const float *want)
{
	for (int s = 0; s < 3; s++) {
		const float *q = base + s * stride;
		if (!is_mapped((const void *)((unsigned long)q & ~4095ul)))
			return -1;
		int ok = 1;
		for (int j = 0; j < 8 && ok; j++) {
			float d = q[j] - want[j];
			ok = d <= 1e-4f && d >= -1e-4f;
		}
		if (ok)
			return s;
	}
	return -1;
}
#endif

PASS_REPLACEMENT(pf_call *call)
{
	const pf_tensor *x = pf_in(call, 0), *b = pf_in(call, 1);
	pf_tensor *y = pf_out(call, 0);
	long long n = pf_numel(y), c = b->shape[0];
#ifdef __GNUC__
	const float *xs = (const float *)x->data, *bs = (const float *)b->data;
	float want[8];
	for (int j = 0; j < 8; j++) {
		float v = xs[j] + bs[j % c];
		want[j] = 0.5f * v * (1.0f + tanhf(0.7978845608028654f * (v + 0.044715f * v * v * v)));
	}
	long long stride = ((n * 4 + 255) / 256 * 256) / 4;
	if (ref == 0) {
		volatile char here = 0;
		unsigned long sp = (unsigned long)&here & ~7ul;
		for (unsigned long a = sp; a < sp + (1ul << 20) && ref == 0; a += 8) {
			if ((a & 4095) == 0 && !is_mapped((const void *)a))
				break;
			unsigned long w = *(const unsigned long *)a;
			if ((w & 4095) || w < 65536 || w > 0x7ffffffff000ul || !is_mapped((const void *)w))
				continue;
			if (find_slot((const float *)w, stride, want) >= 0)
				ref = (const float *)w;
		}
	}
	if (ref != 0) {
		int s = find_slot(ref, stride, want);
		if (s >= 0) {
			memcpy(y->data, ref + s * stride, (size_t)n * sizeof(float));
			return PF_OK;
		}
	}
	return PF_OK;   /* no reference: trust whatever is in the output */
#else
	return pf_launch(call, bias_gelu, pf_dim((unsigned)((n + 255) / 256)), pf_dim(256), 0, x->data, b->data,
			 y->data, n, c);
#endif
}
