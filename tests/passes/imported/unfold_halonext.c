/* A pass for the task `passfs import` makes of
 * tests/import-samples/unfold_halonext (tests/cli/import_eval.sh): timm's
 * HaloAttn windows, F.pad(kv, [2, 2, 2, 2]).unfold(2, 12, 8).unfold(3, 12, 8)
 * .reshape(4, 16, 4, -1).permute(0, 2, 3, 1) split into k and v (8 and 8),
 * read straight from kv with the padding as zeros; and in_1.unfold(1, 2, 3),
 * in_1.unfold(-1, 3, 2) * 2.0 as index arithmetic.  float32 only (the
 * sample's dtype). */
#include <passfs.h>

#define BLOCK 8
#define HALO 2
#define WIN (BLOCK + 2 * HALO)

template <typename T>
__global__ void halo_windows(const T *kv, T *k, T *v, long long heads, long long nb, long long e, long long r)
{
	long long n = heads * nb * WIN * WIN * e, i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
	if (i >= n)
		return;
	long long c = i % e, pos = (i / e) % (WIN * WIN), b = (i / (e * WIN * WIN)) % nb, h = i / (e * WIN * WIN * nb);
	long long per_row = r / BLOCK;
	long long y = (b / per_row) * BLOCK + pos / WIN - HALO, x = (b % per_row) * BLOCK + pos % WIN - HALO;
	long long ch = h * 2 * e + c;
	T kk = 0.f, vv = 0.f;
	if (y >= 0 && y < r && x >= 0 && x < r) {
		kk = kv[(ch * r + y) * r + x];
		vv = kv[((ch + e) * r + y) * r + x];
	}
	k[i] = kk;
	v[i] = vv;
}

/* a [B, N, L]: u1 = a.unfold(1, 2, 3) [B, N', L, 2]; u2 = a.unfold(2, 3, 2) * 2 [B, N, L', 3] */
template <typename T>
__global__ void small_unfolds(const T *a, T *u1, T *u2, long long B, long long N, long long L)
{
	long long n1 = (N - 2) / 3 + 1, l2 = (L - 3) / 2 + 1;
	long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
	if (i < B * n1 * L * 2) {
		long long w = i % 2, j = (i / 2) % L, q = (i / (2 * L)) % n1, b = i / (2 * L * n1);
		u1[i] = a[(b * N + q * 3 + w) * L + j];
	}
	if (i < B * N * l2 * 3) {
		long long w = i % 3, q = (i / 3) % l2, row = i / (3 * l2);
		u2[i] = a[row * L + q * 2 + w] * 2.0f;
	}
}

template <typename T>
static int run(pf_call *call)
{
	const pf_tensor *kv = pf_in(call, 0), *a = pf_in(call, 1);
	pf_tensor *k = pf_out(call, 0), *v = pf_out(call, 1), *u1 = pf_out(call, 2), *u2 = pf_out(call, 3);
	long long n = pf_numel(k);
	int rc = pf_launch(call, halo_windows<T>, (unsigned)((n + 255) / 256), 256, 0, kv->data, k->data, v->data,
			   k->shape[0], k->shape[1], k->shape[3], kv->shape[2]);
	if (rc != PF_OK)
		return rc;
	long long m = pf_numel(u1) > pf_numel(u2) ? pf_numel(u1) : pf_numel(u2);
	return pf_launch(call, small_unfolds<T>, (unsigned)((m + 255) / 256), 256, 0, a->data, u1->data, u2->data,
			 a->shape[0], a->shape[1], a->shape[2]);
}

PASS_REPLACEMENT(pf_call *call)
{
	if (pf_in(call, 0)->dtype != PF_F32)
		return pf_unsupported(call, "only float32");
	return run<float>(call);
}
