/* test_cpu_backend.c - gpu/cpu.c through gpu.h: compile a CUDA source with
 * plain, template and shared-memory kernels, launch them over device
 * memory, check the results; wrong launches are errors, not crashes;
 * "--backend cuda" fails with one clear line where there is no GPU. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backend.h"
#include "gpu.h"
#include "nvrtc.h"
#include "pool.h"

#include "check.h"

static const char *kernels_src =
	"#include <passfs.h>\n"
	"\n"
	"__global__ void saxpy(float a, const float *x, float *y, int n)\n"
	"{\n"
	"\tint i = blockIdx.x * blockDim.x + threadIdx.x;\n"
	"\tif (i < n)\n"
	"\t\ty[i] = a * x[i] + y[i];\n"
	"}\n"
	"\n"
	"/* one partial sum per block, with a shared-memory tree (barriers) */\n"
	"template <typename T, int BLOCK>\n"
	"__global__ void block_sum(const T *x, T *out, int n)\n"
	"{\n"
	"\t__shared__ T red[BLOCK];\n"
	"\tint i = blockIdx.x * BLOCK + threadIdx.x;\n"
	"\tred[threadIdx.x] = i < n ? x[i] : (T)0;\n"
	"\t__syncthreads();\n"
	"\tfor (int s = BLOCK / 2; s > 0; s >>= 1) {\n"
	"\t\tif (threadIdx.x < s)\n"
	"\t\t\tred[threadIdx.x] += red[threadIdx.x + s];\n"
	"\t\t__syncthreads();\n"
	"\t}\n"
	"\tif (threadIdx.x == 0)\n"
	"\t\tout[blockIdx.x] = red[0];\n"
	"}\n"
	"\n"
	"extern __shared__ float file_scope_dyn[];\n"
	"\n"
	"/* reverses each block's chunk through dynamic shared memory */\n"
	"__global__ void reverse_chunks(const float *x, float *y)\n"
	"{\n"
	"\textern __shared__ __align__(16) float dyn[];\n"
	"\tint base = blockIdx.x * blockDim.x;\n"
	"\tdyn[threadIdx.x] = x[base + threadIdx.x];\n"
	"\t__syncthreads();\n"
	"\ty[base + threadIdx.x] = file_scope_dyn[blockDim.x - 1 - threadIdx.x];\n"
	"}\n"
	"\n"
	"/* writes its block and thread coordinates: checks the grid walk */\n"
	"__global__ void grid3d(int *out)\n"
	"{\n"
	"\tint b = (blockIdx.z * gridDim.y + blockIdx.y) * gridDim.x + blockIdx.x;\n"
	"\tint t = b * blockDim.x * blockDim.y + threadIdx.y * blockDim.x + threadIdx.x;\n"
	"\tout[t] = blockIdx.x + 10 * blockIdx.y + 100 * blockIdx.z + 1000 * threadIdx.y;\n"
	"}\n"
	"\n"
	"__global__ void bad_barrier(int *out)\n"
	"{\n"
	"\tif (threadIdx.x == 0)\n"
	"\t\treturn;\n"
	"\t__syncthreads();\n"
	"\tout[threadIdx.x] = 1;\n"
	"}\n";

static const char *const names[] = {
	"saxpy", "block_sum<float, 128>", "block_sum<double,64>", "reverse_chunks", "grid3d",
	"bad_barrier",
};
#define N_NAMES ((int)(sizeof names / sizeof names[0]))

static void test_open(void)
{
	struct gpu_dev *d = NULL;
	char err[256] = "";

	CHECK(gpu_open("bogus", &d, err, sizeof err) == -1 && d == NULL);
	CHECK_MSG(strstr(err, "--backend bogus: unknown backend") != NULL, err);

	char why[256];
	int have_gpu = gpu_cuda_probe(why, sizeof why) > 0;
	if (!have_gpu) {
		static const char head[] = "--backend cuda: no CUDA driver (libcuda.so.1) or no GPU on this machine (";
		err[0] = '\0';
		CHECK(gpu_open("cuda", &d, err, sizeof err) == -1 && d == NULL);
		/* one line: the fixed head, then the probe's reason */
		CHECK_MSG(strncmp(err, head, sizeof head - 1) == 0 && strchr(err, '\n') == NULL &&
			  err[strlen(err) - 1] == ')', err);
	} else {
		printf("note: a GPU is present; the '--backend cuda' failure message is not checked\n");
	}

	/* auto: cuda when a GPU exists, else cpu */
	CHECK(gpu_open("auto", &d, err, sizeof err) == 0 && d != NULL);
	if (d != NULL) {
		CHECK(gpu_backend_of(d) == (have_gpu ? GPU_BACKEND_CUDA : GPU_BACKEND_CPU));
		gpu_close(d);
	}
}

static void test_pool(void)
{
	setenv("PASSFS_CPU_THREADS", "3", 1);
	CHECK(pool_default_threads() == 3);
	unsetenv("PASSFS_CPU_THREADS");
	CHECK(pool_default_threads() >= 1);
}

static struct gpu_dev *dev;
static struct gpu_module *mod;

static void test_compile(void)
{
	char err[512] = "", *log = NULL;
	int rc = gpu_module_compile(dev, "kernels.cu", kernels_src, names, N_NAMES, &mod, &log, err,
				    sizeof err);
	CHECK_MSG(rc == 0 && mod != NULL, err);
	if (rc != 0 && log != NULL)
		fprintf(stderr, "%s\n", log);
	free(log);
	if (mod == NULL)
		return;
	CHECK(gpu_module_kernel(mod, "saxpy") != NULL);
	CHECK(gpu_module_kernel(mod, "block_sum<float,128>") != NULL);  /* spacing is free */
	CHECK(gpu_module_kernel(mod, "block_sum<float, 64>") == NULL);
	CHECK(gpu_module_kernel(mod, "nope") == NULL);
}

static void test_saxpy(void)
{
	enum { N = 1000 };
	float hx[N], hy[N], out[N];
	for (int i = 0; i < N; i++) {
		hx[i] = (float)i;
		hy[i] = 1.0f;
	}
	float *x = gpu_alloc(dev, sizeof hx), *y = gpu_alloc(dev, sizeof hy);
	CHECK(x != NULL && y != NULL);
	CHECK((uintptr_t)x % 256 == 0 && (uintptr_t)y % 256 == 0);
	CHECK(gpu_copy_to_device(dev, x, hx, sizeof hx) == 0);
	CHECK(gpu_copy_to_device(dev, y, hy, sizeof hy) == 0);
	float a = 2.0f;
	int n = N;
	void *args[] = {&a, &x, &y, &n};
	char err[256] = "";
	int rc = gpu_launch(dev, gpu_module_kernel(mod, "saxpy"), (pf_dim3){(N + 255) / 256, 1, 1},
			    (pf_dim3){256, 1, 1}, 0, args, 4, err, sizeof err);
	CHECK_MSG(rc == 0, err);
	CHECK(gpu_sync(dev, err, sizeof err) == 0);
	CHECK(gpu_copy_to_host(dev, out, y, sizeof out) == 0);
	int bad = 0;
	for (int i = 0; i < N; i++)
		bad += out[i] != 2.0f * i + 1.0f;
	CHECK(bad == 0);

	/* a wrong argument count is refused before anything runs */
	err[0] = '\0';
	rc = gpu_launch(dev, gpu_module_kernel(mod, "saxpy"), (pf_dim3){1, 1, 1}, (pf_dim3){32, 1, 1}, 0,
			args, 3, err, sizeof err);
	CHECK(rc == -1);
	CHECK_MSG(strstr(err, "saxpy: kernel expects 4 arguments, got 3") != NULL, err);
	/* so is a block of 2048 threads */
	err[0] = '\0';
	rc = gpu_launch(dev, gpu_module_kernel(mod, "saxpy"), (pf_dim3){1, 1, 1}, (pf_dim3){2048, 1, 1},
			0, args, 4, err, sizeof err);
	CHECK(rc == -1);
	CHECK_MSG(strstr(err, "invalid block dimensions") != NULL, err);
	/* and a missing kernel */
	CHECK(gpu_launch(dev, NULL, (pf_dim3){1, 1, 1}, (pf_dim3){1, 1, 1}, 0, args, 4, err, sizeof err) == -1);
	gpu_free(dev, x);
	gpu_free(dev, y);
}

static void test_block_sum(void)
{
	enum { N = 10000 };
	float *hx = malloc(N * sizeof(float));
	double *dx = malloc(N * sizeof(double));
	for (int i = 0; i < N; i++) {
		hx[i] = (float)(i % 7);
		dx[i] = i * 0.5;
	}
	int nb = (N + 127) / 128, nbd = (N + 63) / 64;
	float *x = gpu_alloc(dev, N * sizeof(float)), *part = gpu_alloc(dev, nb * sizeof(float));
	double *xd = gpu_alloc(dev, N * sizeof(double)), *partd = gpu_alloc(dev, nbd * sizeof(double));
	gpu_copy_to_device(dev, x, hx, N * sizeof(float));
	gpu_copy_to_device(dev, xd, dx, N * sizeof(double));
	int n = N;
	char err[256] = "";
	void *args[] = {&x, &part, &n};
	CHECK_MSG(gpu_launch(dev, gpu_module_kernel(mod, "block_sum<float, 128>"), (pf_dim3){nb, 1, 1},
			     (pf_dim3){128, 1, 1}, 0, args, 3, err, sizeof err) == 0, err);
	void *argsd[] = {&xd, &partd, &n};
	CHECK_MSG(gpu_launch(dev, gpu_module_kernel(mod, "block_sum<double,64>"), (pf_dim3){nbd, 1, 1},
			     (pf_dim3){64, 1, 1}, 0, argsd, 3, err, sizeof err) == 0, err);
	float *hp = malloc(nb * sizeof(float));
	double *hpd = malloc(nbd * sizeof(double));
	gpu_copy_to_host(dev, hp, part, nb * sizeof(float));
	gpu_copy_to_host(dev, hpd, partd, nbd * sizeof(double));
	double sum = 0, want = 0, sumd = 0, wantd = 0;
	for (int b = 0; b < nb; b++)
		sum += hp[b];
	for (int b = 0; b < nbd; b++)
		sumd += hpd[b];
	for (int i = 0; i < N; i++) {
		want += hx[i];
		wantd += dx[i];
	}
	CHECK(sum == want);
	CHECK(sumd == wantd);
	gpu_free(dev, x);
	gpu_free(dev, part);
	gpu_free(dev, xd);
	gpu_free(dev, partd);
	free(hx);
	free(dx);
	free(hp);
	free(hpd);
}

static void test_dynamic_shared(void)
{
	enum { B = 64, NB = 5, N = B * NB };
	float hx[N], out[N];
	for (int i = 0; i < N; i++)
		hx[i] = (float)i;
	float *x = gpu_alloc(dev, sizeof hx), *y = gpu_alloc(dev, sizeof hx);
	gpu_copy_to_device(dev, x, hx, sizeof hx);
	char err[256] = "";
	void *args[] = {&x, &y};
	CHECK_MSG(gpu_launch(dev, gpu_module_kernel(mod, "reverse_chunks"), (pf_dim3){NB, 1, 1},
			     (pf_dim3){B, 1, 1}, B * sizeof(float), args, 2, err, sizeof err) == 0, err);
	gpu_copy_to_host(dev, out, y, sizeof out);
	int bad = 0;
	for (int b = 0; b < NB; b++)
		for (int t = 0; t < B; t++)
			bad += out[b * B + t] != hx[b * B + B - 1 - t];
	CHECK(bad == 0);
	gpu_free(dev, x);
	gpu_free(dev, y);
}

static void test_grid3d(void)
{
	pf_dim3 g = {3, 4, 5}, b = {8, 2, 1};
	int n = 3 * 4 * 5 * 8 * 2;
	int *o = gpu_alloc(dev, n * sizeof(int));
	int *h = malloc(n * sizeof(int));
	gpu_memset(dev, o, 0xff, n * sizeof(int));
	char err[256] = "";
	void *args[] = {&o};
	CHECK_MSG(gpu_launch(dev, gpu_module_kernel(mod, "grid3d"), g, b, 0, args, 1, err, sizeof err) == 0, err);
	gpu_copy_to_host(dev, h, o, n * sizeof(int));
	int bad = 0;
	for (unsigned z = 0; z < g.z; z++)
		for (unsigned y = 0; y < g.y; y++)
			for (unsigned x = 0; x < g.x; x++)
				for (unsigned ty = 0; ty < b.y; ty++)
					for (unsigned tx = 0; tx < b.x; tx++) {
						int blk = (z * g.y + y) * g.x + x;
						int t = blk * 16 + ty * 8 + tx;
						bad += h[t] != (int)(x + 10 * y + 100 * z + 1000 * ty);
					}
	CHECK(bad == 0);
	gpu_free(dev, o);
	free(h);

	/* a barrier not every thread reaches fails the launch with a message */
	int *o2 = gpu_alloc(dev, 64 * sizeof(int));
	void *args2[] = {&o2};
	err[0] = '\0';
	CHECK(gpu_launch(dev, gpu_module_kernel(mod, "bad_barrier"), (pf_dim3){2, 1, 1}, (pf_dim3){64, 1, 1},
			 0, args2, 1, err, sizeof err) == -1);
	CHECK_MSG(strstr(err, "bad_barrier: ") == err && strstr(err, "__syncthreads") != NULL, err);
	gpu_free(dev, o2);
}

static void test_memory(void)
{
	/* above the mmap threshold, and zero bytes */
	size_t big = (size_t)80 << 20;
	unsigned char *p = gpu_alloc(dev, big);
	CHECK(p != NULL && (uintptr_t)p % 256 == 0);
	if (p != NULL) {
		CHECK(gpu_memset(dev, p, 0x5a, big) == 0);
		CHECK(p[0] == 0x5a && p[big - 1] == 0x5a);
	}
	gpu_free(dev, p);
	void *z = gpu_alloc(dev, 0);
	CHECK(z != NULL);
	gpu_free(dev, z);
	/* left allocated on purpose: gpu_close frees it */
	CHECK(gpu_alloc(dev, 1000) != NULL);
}

static void test_compile_errors(void)
{
	static const char *broken =
		"#include <passfs.h>\n"
		"__global__ void k(float *y)\n"
		"{\n"
		"\ty[0] = undefined_thing;\n"
		"}\n";
	const char *k[] = {"k"};
	struct gpu_module *m = NULL;
	char err[512] = "", *log = NULL;
	CHECK(gpu_module_compile(dev, "broken.cu", broken, k, 1, &m, &log, err, sizeof err) == -1);
	CHECK(m == NULL);
	CHECK_MSG(log != NULL && (strstr(log, "broken.cu(4)") != NULL || strstr(log, "broken.cu:4:") != NULL),
		  log ? log : "(no log)");
	free(log);

	/* a kernel name that names nothing */
	static const char *ok = "#include <passfs.h>\n__global__ void k(float *y) { y[0] = 1; }\n";
	const char *missing[] = {"k", "not_there"};
	log = NULL;
	CHECK(gpu_module_compile(dev, "ok.cu", ok, missing, 2, &m, &log, err, sizeof err) == -1);
	CHECK_MSG(log != NULL && strstr(log, "not_there") != NULL, log ? log : "(no log)");
	free(log);
}

int main(void)
{
	char why[256];
	if (!nvrtc_available(why, sizeof why))
		printf("note: %s; the NVRTC gate is skipped\n", why);
	test_pool();
	test_open();
	char err[256];
	if (gpu_open("cpu", &dev, err, sizeof err) != 0) {
		fprintf(stderr, "gpu_open(cpu): %s\n", err);
		return 1;
	}
	CHECK(strstr(gpu_device_name(dev), "emulated CUDA") != NULL);
	CHECK(strcmp(gpu_arch(dev), "sm_90") == 0);
	test_compile();
	if (mod != NULL) {
		test_saxpy();
		test_block_sum();
		test_dynamic_shared();
		test_grid3d();
	}
	test_memory();
	test_compile_errors();
	gpu_module_free(mod);
	gpu_close(dev);
	printf("%d passed, %d failed\n", n_pass, n_fail);
	return n_fail ? 1 : 0;
}
