/* test_cuda_device.c - the cuda backend on a real GPU (skipped, passing, where
 * there is none): compile and load with NVRTC for the device's arch, kernel
 * attributes and parameter checks, launches and copies, CUPTI windows (an
 * asynchronous slow kernel is counted by the context-wide sync and by CUPTI),
 * dynamic shared memory above 48 KiB, the L2 flush, the benchmark lock, the
 * module cache, a faulting kernel (the message names it; the device stays
 * broken), and CUDA calls after the seccomp sandbox is entered - what the pass
 * worker does.  Each case runs in its own process: a CUDA context does not
 * survive fork, and a faulted one is unusable.  tests/gpu/check.sh runs it. */
#define _GNU_SOURCE
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "backend.h"
#include "sandbox.h"

static int failed_here;
#define CHECK(cond, ...)                                                                \
	do {                                                                            \
		if (!(cond)) {                                                          \
			failed_here++;                                                  \
			fprintf(stderr, "FAIL %s:%d: %s: ", __FILE__, __LINE__, #cond); \
			fprintf(stderr, __VA_ARGS__);                                   \
			fputc('\n', stderr);                                            \
		}                                                                       \
	} while (0)

static const char *const src =
	"extern \"C\" __global__ void fill(float *y, float v, long long n)\n"
	"{\n"
	"\tlong long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;\n"
	"\tif (i < n) y[i] = v;\n"
	"}\n"
	"template <typename T> __global__ void spin(T *y, int n)\n"
	"{\n"
	"\tT a = y[0];\n"
	"\tfor (int k = 0; k < n; k++) a = a * (T)0.999999f + (T)1e-7f;\n"
	"\tif (a == (T)1234.5f) y[1] = a;\n"
	"}\n"
	"__global__ void oob(float *y) { y[(1LL << 40) + threadIdx.x] = 1.0f; }\n"
	"__global__ void rev(float *y)\n"
	"{\n"
	"\textern __shared__ float s[];\n"
	"\ts[threadIdx.x] = (float)threadIdx.x;\n"
	"\t__syncthreads();\n"
	"\ty[threadIdx.x] = s[blockDim.x - 1 - threadIdx.x];\n"
	"}\n";
static const char *const names[] = {"fill", "spin<float>", "oob", "rev"};

static pf_dim3 dim1(unsigned x)
{
	return (pf_dim3){x, 1, 1};
}

static double now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

struct env {
	struct gpu_dev *d;
	struct gpu_module *m;
	struct gpu_kernel *fill, *spin, *oob, *rev;
	float *buf;
	long long n;
};

static int setup(struct env *e, int trace)
{
	char err[1024];
	char *log = NULL;
	memset(e, 0, sizeof *e);
	if (gpu_open("cuda", &e->d, err, sizeof err)) {
		fprintf(stderr, "gpu_open: %s\n", err);
		return -1;
	}
	if (trace && gpu_trace_enable(e->d, err, sizeof err))
		fprintf(stderr, "note: no CUPTI: %s\n", err);
	double t0 = now_ms();
	if (gpu_module_compile(e->d, "device_test.cu", src, names, 4, &e->m, &log, err, sizeof err)) {
		fprintf(stderr, "compile: %s\n%s\n", err, log ? log : "");
		free(log);
		return -1;
	}
	free(log);
	printf("  compile+load %.1f ms (%s, %s)\n", now_ms() - t0, gpu_device_name(e->d), gpu_arch(e->d));
	e->fill = gpu_module_kernel(e->m, "fill");
	e->spin = gpu_module_kernel(e->m, "spin<float>");
	e->oob = gpu_module_kernel(e->m, "oob");
	e->rev = gpu_module_kernel(e->m, "rev");
	e->n = 1 << 20;
	e->buf = gpu_alloc(e->d, (size_t)e->n * sizeof(float));
	if (!e->fill || !e->spin || !e->oob || !e->rev || !e->buf) {
		fprintf(stderr, "setup: kernels or memory missing\n");
		return -1;
	}
	return 0;
}

static int launch_fill(struct env *e, float v, char *err, size_t errlen)
{
	void *p = e->buf;
	long long n = e->n;
	void *args[3] = {&p, &v, &n};
	size_t sizes[3] = {sizeof p, sizeof v, sizeof n};
	return gpu_launch_sized(e->d, e->fill, dim1((unsigned)((n + 255) / 256)), dim1(256), 0, args, 3, sizes,
				err, errlen);
}

static void case_basic(void)
{
	struct env e;
	char err[1024];
	if (setup(&e, 0))
		exit(1);
	CHECK(gpu_module_kernel_count(e.m) == 4, "%d kernels", gpu_module_kernel_count(e.m));
	struct gpu_kernel_info ki;
	CHECK(gpu_kernel_info(e.fill, &ki) == 0, "info");
	printf("  fill: %d regs, %d B shared, %d B local, %d params (%lld B), max %d threads\n", ki.num_regs,
	       ki.shared_bytes, ki.local_bytes, ki.n_params, ki.param_bytes, ki.max_threads_per_block);
	CHECK(ki.num_regs > 0 && ki.local_bytes == 0 && ki.max_threads_per_block >= 256, "attributes");
	CHECK(ki.n_params == -1 || (ki.n_params == 3 && ki.param_bytes == 24), "params %d", ki.n_params);
	CHECK(strcmp(ki.lowered, "fill") == 0, "lowered %s", ki.lowered);
	CHECK(launch_fill(&e, 3.0f, err, sizeof err) == 0, "%s", err);
	CHECK(gpu_sync(e.d, err, sizeof err) == 0, "%s", err);
	float *h = malloc((size_t)e.n * sizeof(float));
	CHECK(gpu_copy_to_host(e.d, h, e.buf, (size_t)e.n * sizeof(float)) == 0, "copy back");
	long long bad = 0;
	for (long long i = 0; i < e.n; i++)
		bad += h[i] != 3.0f;
	CHECK(bad == 0, "%lld wrong elements", bad);
	/* the argument checks (when the driver has cuFuncGetParamInfo) */
	if (ki.n_params == 3) {
		void *p = e.buf;
		double v = 1;
		long long n = 1;
		void *args[3] = {&p, &v, &n};
		size_t sizes[3] = {8, 8, 8};
		CHECK(gpu_launch_sized(e.d, e.fill, dim1(1), dim1(1), 0, args, 3, sizes, err, sizeof err) == -1 &&
		      strstr(err, "argument 1 has 8 bytes"), "%s", err);
		CHECK(gpu_launch(e.d, e.fill, dim1(1), dim1(1), 0, args, 2, err, sizeof err) == -1 &&
		      strstr(err, "expects 3 arguments, got 2"), "%s", err);
	}
	/* dynamic shared memory over the 48 KiB default: opted in automatically */
	void *p = e.buf;
	void *args[1] = {&p};
	CHECK(gpu_launch(e.d, e.rev, dim1(1), dim1(256), 100 * 1024, args, 1, err, sizeof err) == 0, "%s", err);
	CHECK(gpu_sync(e.d, err, sizeof err) == 0, "%s", err);
	CHECK(gpu_copy_to_host(e.d, h, e.buf, 256 * sizeof(float)) == 0 && h[0] == 255.0f && h[255] == 0.0f,
	      "reversed: %g %g", h[0], h[255]);
	/* memset, L2 flush, lock, driver descriptors */
	CHECK(gpu_memset(e.d, e.buf, 0, 4096) == 0 && gpu_sync(e.d, err, sizeof err) == 0, "memset");
	double t0 = now_ms();
	CHECK(gpu_l2_flush(e.d, err, sizeof err) == 0 && gpu_sync(e.d, err, sizeof err) == 0, "%s", err);
	t0 = now_ms();
	for (int i = 0; i < 10; i++)
		gpu_l2_flush(e.d, err, sizeof err);
	gpu_sync(e.d, err, sizeof err);
	printf("  L2 flush: %.3f ms each\n", (now_ms() - t0) / 10);
	CHECK(gpu_bench_lock(e.d, 1000, NULL, err, sizeof err) == 0, "%s", err);
	gpu_bench_unlock(e.d);
	int fds[64];
	int nf = gpu_driver_fds(e.d, fds, 64), np = gpu_driver_fds(NULL, fds, 64);
	printf("  driver descriptors: %d\n", nf);
	CHECK(nf > 0 && np >= nf, "driver fds %d / %d", nf, np);
	/* the module cache: the same compile again */
	struct gpu_module *m2 = NULL;
	char *log = NULL;
	t0 = now_ms();
	CHECK(gpu_module_compile(e.d, "device_test.cu", src, names, 4, &m2, &log, err, sizeof err) == 0, "%s", err);
	printf("  second compile (cache): %.1f ms\n", now_ms() - t0);
	free(log);
	gpu_module_free(m2);
	free(h);
	gpu_close(e.d);
}

static void case_trace(void)
{
	struct env e;
	char err[1024];
	if (setup(&e, 1))
		exit(1);
	struct gpu_trace t;
	if (gpu_trace_begin(e.d, err, sizeof err)) {
		printf("  skipped: %s\n", err);
		gpu_close(e.d);
		return;
	}
	for (int i = 0; i < 3; i++)
		launch_fill(&e, 1.0f, err, sizeof err);
	CHECK(gpu_trace_end(e.d, &t, err, sizeof err) == 0, "%s", err);
	printf("  3 fills: %d kernels, %.4f ms kernel, span %.4f ms, %d stream(s), dropped %llu\n", t.n_kernels,
	       t.kernel_ms, t.span_ms, t.n_streams, t.dropped);
	CHECK(t.n_kernels == 3 && t.kernel_ms > 0 && t.n_names == 1 && strstr(t.kernels[0].name, "fill"),
	      "%d kernels", t.n_kernels);
	CHECK(t.dropped == 0, "dropped");
	/* work left running when the "call" returns: the launch returns at once,
	 * the sync waits, CUPTI counts it */
	void *p = e.buf;
	int n = 2000000;
	void *args[2] = {&p, &n};
	CHECK(gpu_memset(e.d, e.buf, 0, 8) == 0 && gpu_sync(e.d, err, sizeof err) == 0, "reset");
	CHECK(gpu_trace_begin(e.d, err, sizeof err) == 0, "%s", err);
	double t0 = now_ms();
	CHECK(gpu_launch(e.d, e.spin, dim1(132), dim1(128), 0, args, 2, err, sizeof err) == 0, "%s", err);
	double returned = now_ms() - t0;
	CHECK(gpu_sync(e.d, err, sizeof err) == 0, "%s", err);
	double synced = now_ms() - t0;
	CHECK(gpu_trace_end(e.d, &t, err, sizeof err) == 0, "%s", err);
	printf("  slow kernel: launch returned after %.3f ms, sync after %.3f ms, CUPTI %.3f ms\n", returned, synced,
	       t.kernel_ms);
	CHECK(t.n_kernels == 1 && t.kernel_ms > 1.0 && synced >= t.kernel_ms && returned < t.kernel_ms,
	      "escape not caught: %d kernels", t.n_kernels);
	/* records before the window are not counted */
	launch_fill(&e, 2.0f, err, sizeof err);
	gpu_sync(e.d, err, sizeof err);
	CHECK(gpu_trace_begin(e.d, err, sizeof err) == 0, "%s", err);
	CHECK(gpu_trace_end(e.d, &t, err, sizeof err) == 0 && t.n_kernels == 0, "%d stale kernels", t.n_kernels);
	gpu_close(e.d);
}

/* Host time per launch (a small kernel, launches then one sync), with and
 * without CUPTI: the tracing overhead both eager and a pass pay per launch. */
static void case_overhead(int trace)
{
	struct env e;
	char err[1024];
	if (setup(&e, trace))
		exit(1);
	for (int i = 0; i < 100; i++)
		launch_fill(&e, 1.0f, err, sizeof err);
	gpu_sync(e.d, err, sizeof err);
	double best = 1e9;
	for (int r = 0; r < 5; r++) {
		if (trace)
			gpu_trace_begin(e.d, err, sizeof err);
		double t0 = now_ms();
		for (int i = 0; i < 1000; i++)
			launch_fill(&e, 1.0f, err, sizeof err);
		gpu_sync(e.d, err, sizeof err);
		double ms = now_ms() - t0;
		if (trace) {
			struct gpu_trace t;
			gpu_trace_end(e.d, &t, err, sizeof err);
			CHECK(t.n_kernels == 1000 && t.dropped == 0, "%d kernels, %llu dropped", t.n_kernels, t.dropped);
		}
		if (ms < best)
			best = ms;
	}
	printf("  1000 launches + sync, CUPTI %s: %.1f us per launch\n", trace ? "on " : "off", best);
	gpu_close(e.d);
}

static void case_fault(void)
{
	struct env e;
	char err[1024];
	if (setup(&e, 0))
		exit(1);
	void *p = e.buf;
	void *args[1] = {&p};
	CHECK(gpu_launch(e.d, e.oob, dim1(1), dim1(32), 0, args, 1, err, sizeof err) == 0, "%s", err);
	CHECK(gpu_sync(e.d, err, sizeof err) == -1, "the fault was not reported");
	printf("  fault: %s\n", err);
	CHECK(strstr(err, "ILLEGAL_ADDRESS") && strstr(err, "oob"), "%s", err);
	char err2[1024];
	CHECK(gpu_sync(e.d, err2, sizeof err2) == -1 && strcmp(err, err2) == 0, "the device must stay broken: %s",
	      err2);
	CHECK(gpu_alloc(e.d, 100) == NULL, "alloc on a broken device");
	gpu_close(e.d);
}

/* What the pass worker does: CUDA set up, then the sandbox, then launches,
 * syncs, copies, allocations and CUPTI windows.  A forbidden system call
 * ends the process with a report naming it. */
static void case_sandbox(void)
{
	struct env e;
	char err[1024];
	if (setup(&e, 1))
		exit(1);
	CHECK(launch_fill(&e, 1.0f, err, sizeof err) == 0 && gpu_sync(e.d, err, sizeof err) == 0, "%s", err);
	/* as the pass worker: no io descriptors, every other open descriptor
	 * the driver's; a forbidden call is reported on stderr */
	fflush(stdout);
	struct sandbox_limits lim = {.report_fd = 2, .adopt_open_fds = 1};
	if (sandbox_enter(&lim, err, sizeof err)) {
		fprintf(stderr, "sandbox_enter: %s\n", err);
		exit(1);
	}
	struct gpu_trace t;
	int traced = gpu_trace_begin(e.d, err, sizeof err) == 0;
	CHECK(launch_fill(&e, 5.0f, err, sizeof err) == 0, "%s", err);
	CHECK(gpu_sync(e.d, err, sizeof err) == 0, "%s", err);
	float h[4];
	CHECK(gpu_copy_to_host(e.d, h, e.buf, sizeof h) == 0 && h[0] == 5.0f, "copy in the sandbox");
	CHECK(gpu_copy_to_device(e.d, e.buf, h, sizeof h) == 0, "copy to the device in the sandbox");
	void *fresh = gpu_alloc(e.d, (size_t)64 << 20);  /* a new cuMemAlloc, not from the cache */
	CHECK(fresh != NULL, "alloc in the sandbox");
	CHECK(gpu_memset(e.d, fresh, 1, (size_t)64 << 20) == 0 && gpu_sync(e.d, err, sizeof err) == 0, "%s", err);
	if (traced)
		CHECK(gpu_trace_end(e.d, &t, err, sizeof err) == 0 && t.n_kernels == 1, "%s", err);
	/* let the driver's threads run a while under the filter */
	struct timespec ts = {0, 300 * 1000 * 1000};
	nanosleep(&ts, NULL);
	CHECK(gpu_sync(e.d, err, sizeof err) == 0, "%s", err);
	printf("  sandboxed: launches, syncs, copies, alloc, memset%s: ok\n", traced ? ", CUPTI" : "");
	_exit(failed_here ? 1 : 0);
}

static int run_case(const char *name, void (*fn)(void))
{
	printf("case %s\n", name);
	fflush(stdout);
	pid_t pid = fork();
	if (pid == 0) {
		alarm(120);
		fn();
		fflush(stdout);
		_exit(failed_here ? 1 : 0);
	}
	int st = 0;
	waitpid(pid, &st, 0);
	if (WIFSIGNALED(st)) {
		printf("FAIL case %s: %s\n", name, strsignal(WTERMSIG(st)));
		return 1;
	}
	if (WEXITSTATUS(st) == 159)
		printf("FAIL case %s: a forbidden system call in the sandbox (see the report above)\n", name);
	else if (WEXITSTATUS(st) != 0)
		printf("FAIL case %s: exit %d\n", name, WEXITSTATUS(st));
	return WEXITSTATUS(st) != 0;
}

static void overhead_off(void)
{
	case_overhead(0);
}

static void overhead_on(void)
{
	case_overhead(1);
}

int main(void)
{
	char why[256];
	if (gpu_cuda_probe(why, sizeof why) <= 0) {
		printf("skip: no GPU (%s)\n", why);
		return 0;
	}
	int failed = 0;
	failed += run_case("basic", case_basic);
	failed += run_case("trace", case_trace);
	failed += run_case("overhead (no CUPTI)", overhead_off);
	failed += run_case("overhead (CUPTI)", overhead_on);
	failed += run_case("fault", case_fault);
	failed += run_case("sandbox", case_sandbox);
	printf("%d case(s) failed\n", failed);
	return failed ? 1 : 0;
}
