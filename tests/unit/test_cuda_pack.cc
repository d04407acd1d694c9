/* test_cuda_pack.cc - pf_launch on the cuda backend (pf_call.backend ==
 * PF_BACKEND_CUDA) packs the arguments as cuLaunchKernel wants them: one
 * pointer per parameter, pointing at a value already converted to the
 * parameter's type, plus each parameter's size; the kernel goes by its host
 * address, which the worker maps through the kernel table (engine/eval/pass_run.c).
 * A runtime that records the launch stands in for the worker. */
#pragma GCC diagnostic ignored "-Wunknown-pragmas"
#define PASSFS_RUNTIME /* this file is a runtime: it implements run_blocks */
#include <passfs.h>

#include <stdio.h>
#include <string.h>

static int passed, failed;
#define CHECK(cond)                                                               \
	do {                                                                      \
		if (cond) {                                                       \
			passed++;                                                 \
		} else {                                                          \
			failed++;                                                 \
			fprintf(stderr, "FAIL %s:%d: %s\n", __FILE__, __LINE__, #cond); \
		}                                                                 \
	} while (0)

struct params {
	long long shape[2];
	float scale;
};

/* Never run here: only their signatures and addresses matter. */
__global__ void k_mixed(const float *, float, long long, params, __half) {}
__global__ void k_none() {}
template <typename T, int N> __global__ void k_tmpl(T *, unsigned char) {}

/* What the recording runtime saw. */
static struct {
	int launches, fails;
	const void *kernel;
	pf_dim3 grid, block;
	size_t smem;
	int nargs;
	unsigned char vals[8][32];
	size_t sizes[8];
	char msg[200];
} seen;

static int rec_launch(pf_call *, const void *kernel, pf_dim3 grid, pf_dim3 block, size_t smem, void **args,
		      int nargs, const size_t *sizes)
{
	seen.launches++;
	seen.kernel = kernel;
	seen.grid = grid;
	seen.block = block;
	seen.smem = smem;
	seen.nargs = nargs;
	for (int i = 0; i < nargs && i < 8; i++) {
		seen.sizes[i] = sizes[i];
		memcpy(seen.vals[i], args[i], sizes[i] < 32 ? sizes[i] : 32);
	}
	return PF_OK;
}

static int rec_fail(pf_call *, int code, const char *msg)
{
	seen.fails++;
	snprintf(seen.msg, sizeof seen.msg, "%s", msg);
	return code;
}

static int no_blocks(pf_call *, pf_dim3, pf_dim3, void (*)(void *, pf_dim3), void *, pf_launch_stats *)
{
	seen.fails += 100;      /* the cuda path must never run blocks on the host */
	return PF_ERR_LAUNCH;
}

int main()
{
	pf_runtime rt;
	memset(&rt, 0, sizeof rt);
	rt.abi_version = PF_ABI_VERSION;
	rt.launch = rec_launch;
	rt.fail = rec_fail;
	rt.run_blocks = no_blocks;
	pf_call call = {&rt, nullptr, PF_BACKEND_CUDA};

	float buf[4];
	void *data = buf;       /* pf_tensor::data is void * */
	params p = {{3, 5}, 0.25f};
	int rc = pf_launch(&call, k_mixed, pf_dim(7, 2), pf_dim(128), 1024, data, 2.5 /* double */, 9 /* int */, p,
			   __float2half(1.5f));
	CHECK(rc == PF_OK && seen.launches == 1 && seen.fails == 0);
	CHECK(seen.kernel == reinterpret_cast<const void *>(&k_mixed));
	CHECK(seen.grid.x == 7 && seen.grid.y == 2 && seen.grid.z == 1 && seen.block.x == 128 && seen.smem == 1024);
	CHECK(seen.nargs == 5);
	CHECK(seen.sizes[0] == sizeof(float *) && seen.sizes[1] == 4 && seen.sizes[2] == 8 &&
	      seen.sizes[3] == sizeof(params) && seen.sizes[4] == 2);
	const float *px;
	memcpy(&px, seen.vals[0], sizeof px);
	CHECK(px == buf);
	float s;
	memcpy(&s, seen.vals[1], 4);
	CHECK(s == 2.5f);       /* converted to the parameter's type, as <<<>>> would */
	long long n;
	memcpy(&n, seen.vals[2], 8);
	CHECK(n == 9);
	params q;
	memcpy(&q, seen.vals[3], sizeof q);
	CHECK(q.shape[0] == 3 && q.shape[1] == 5 && q.scale == 0.25f);
	__half h;
	memcpy(&h, seen.vals[4], 2);
	CHECK(__half2float(h) == 1.5f);

	/* no parameters */
	rc = pf_launch(&call, k_none, pf_dim(1), pf_dim(1), 0);
	CHECK(rc == PF_OK && seen.launches == 2 && seen.nargs == 0);

	/* a template instance, by its own address */
	rc = pf_launch(&call, k_tmpl<float, 4>, pf_dim(1), pf_dim(32), 0, data, 300 /* wraps like a cast */);
	CHECK(rc == PF_OK && seen.kernel == reinterpret_cast<const void *>(&k_tmpl<float, 4>));
	CHECK(seen.nargs == 2 && seen.sizes[1] == 1 && seen.vals[1][0] == (unsigned char)300);

	/* a bad configuration is refused before the runtime's launcher */
	rc = pf_launch(&call, k_none, pf_dim(1), pf_dim(2048), 0);
	CHECK(rc == PF_ERR_LAUNCH && seen.launches == 3 && seen.fails == 1 && strstr(seen.msg, "block"));
	rc = pf_launch(&call, k_none, pf_dim(0), pf_dim(32), 0);
	CHECK(rc == PF_ERR_LAUNCH && seen.launches == 3 && seen.fails == 2);

	/* the trampoline path (gpu_module_compile on the cpu backend) never
	 * reaches the cuda launcher with a wrong count */
	void *argv[1] = {&data};
	rc = pf_emu::launch_checked(&call, k_tmpl<float, 4>, pf_dim(1), pf_dim(1), 0, argv, 1);
	CHECK(rc == PF_ERR_LAUNCH && seen.launches == 3 && strstr(seen.msg, "expects 2 arguments, got 1"));

	printf("%d passed, %d failed\n", passed, failed);
	return failed ? 1 : 0;
}
