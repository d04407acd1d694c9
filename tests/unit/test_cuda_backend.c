/* test_cuda_backend.c - the parts of the cuda backend that need no GPU: the
 * failure of --backend cuda without one (and with the driver's stub library),
 * the driver entry points (resolved in the stub), the launch argument check,
 * the arch name and the NVRTC target (PTX for the newest arch NVRTC knows
 * on a newer GPU, with the real NVRTC), the L2 flush size, the benchmark lock, CUPTI record
 * accounting from synthetic records, the host compile with device stubs (a
 * pass with inline PTX and wmma compiles for the cuda backend, its PTX
 * assembles for sm_90a with the toolkit's ptxas; its kernel table keeps
 * distinct addresses), and the backend-neutral calls on the cpu
 * backend.  tests/gpu/check.sh runs the rest on a GPU. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "backend.h"
#include "cupti.h"
#include "hostcc.h"
#include "nvrtc.h"
#include "pass.h"

static int passed, failed;
#define CHECK(cond) CHECK_MSG(cond, "")
#define CHECK_MSG(cond, msg)                                                                       \
	do {                                                                                       \
		if (cond) {                                                                        \
			passed++;                                                                  \
		} else {                                                                           \
			failed++;                                                                  \
			fprintf(stderr, "FAIL %s:%d: %s [%s]\n", __FILE__, __LINE__, #cond, (msg)); \
		}                                                                                  \
	} while (0)

static const char *stub_library(void)
{
	static const char *const paths[] = {
		"/usr/local/cuda/lib64/stubs/libcuda.so", "/usr/local/cuda/lib/stubs/libcuda.so",
		"/usr/local/cuda/targets/x86_64-linux/lib/stubs/libcuda.so", NULL
	};
	for (int i = 0; paths[i]; i++)
		if (access(paths[i], R_OK) == 0)
			return paths[i];
	return NULL;
}

/* --backend cuda without a GPU: one line, the reason in parentheses. */
static void test_open_without_gpu(void)
{
	char why[256], err[512] = "";
	struct gpu_dev *d = NULL;
	if (gpu_cuda_probe(why, sizeof why) > 0) {
		printf("note: a GPU is present; the no-GPU failure is not checked\n");
		return;
	}
	CHECK(gpu_open("cuda", &d, err, sizeof err) == -1 && d == NULL);
	CHECK_MSG(strncmp(err, "--backend cuda: ", 16) == 0 && strchr(err, '\n') == NULL, err);
	/* the cached answer: asking again costs nothing and says the same */
	char err2[512] = "";
	CHECK(gpu_open("cuda", &d, err2, sizeof err2) == -1 && strcmp(err, err2) == 0);
}

/* With the toolkit's stub libcuda every call fails with
 * CUDA_ERROR_STUB_LIBRARY: the probe (in its own child) must say so. */
static void test_stub_driver(void)
{
	const char *stub = stub_library();
	if (stub == NULL) {
		printf("note: no stub libcuda.so; driver symbol checks skipped\n");
		return;
	}
	char why[2048];
	int rc = gpu_cuda_check_symbols(stub, why, sizeof why);
	CHECK_MSG(rc == 0, why);
	/* a library that is not a driver at all */
	rc = gpu_cuda_check_symbols("libm.so.6", why, sizeof why);
	CHECK_MSG(rc == -1 && strstr(why, "missing: cuInit") != NULL, why);

	/* The probe's answer is cached for the process and inherited by forked
	 * children: ask in a fresh process (this binary, re-executed). */
	pid_t pid = fork();
	if (pid == 0) {
		setenv("PASSFS_LIBCUDA", stub, 1);
		execl("/proc/self/exe", "test_cuda_backend", "--stub-probe", (char *)NULL);
		_exit(127);
	}
	int st = 0;
	waitpid(pid, &st, 0);
	CHECK_MSG(WIFEXITED(st) && WEXITSTATUS(st) == 0, "probe with the stub driver");
}

/* In the re-executed process, PASSFS_LIBCUDA naming the stub. */
static int stub_probe(void)
{
	char w[256] = "", err[512] = "";
	struct gpu_dev *d = NULL;
	int n = gpu_cuda_probe(w, sizeof w);
	int bad = n != 0 || strstr(w, "cuInit failed") == NULL || strstr(w, "STUB") == NULL;
	bad |= gpu_open("cuda", &d, err, sizeof err) != -1 || strstr(err, "STUB") == NULL;
	/* auto falls back to the cpu backend */
	char err2[512] = "";
	bad |= gpu_open("auto", &d, err2, sizeof err2) != 0 || gpu_backend_of(d) != GPU_BACKEND_CPU;
	if (bad)
		fprintf(stderr, "stub probe: n=%d why='%s' err='%s' auto='%s'\n", n, w, err, err2);
	else
		printf("stub driver: %s\n", err);
	gpu_close(d);
	return bad;
}

static void test_check_args(void)
{
	char err[256];
	size_t want[3] = {8, 4, 16};
	size_t good[3] = {8, 4, 16}, bad[3] = {8, 8, 16};
	CHECK(gpu_cuda_check_args("k", 3, want, 3, good, err, sizeof err) == 0);
	CHECK(gpu_cuda_check_args("k", 3, want, 3, NULL, err, sizeof err) == 0);
	CHECK(gpu_cuda_check_args("k<float>", 3, want, 2, good, err, sizeof err) == -1);
	CHECK_MSG(strcmp(err, "k<float>: kernel expects 3 arguments, got 2") == 0, err);
	CHECK(gpu_cuda_check_args("k", 3, want, 3, bad, err, sizeof err) == -1);
	CHECK_MSG(strstr(err, "argument 1 has 8 bytes on the host, the kernel's parameter 4") != NULL, err);
	CHECK(gpu_cuda_check_args("k", 1, want, 1, NULL, err, sizeof err) == 0);
	CHECK_MSG(gpu_cuda_check_args("k", 1, want, 0, NULL, err, sizeof err) == -1 &&
		  strstr(err, "expects 1 argument, got 0"), err);
	/* unknown parameters (driver without cuFuncGetParamInfo): not checked */
	CHECK(gpu_cuda_check_args("k", -1, NULL, 7, bad, err, sizeof err) == 0);
}

static void test_arch_and_l2(void)
{
	char a[16];
	gpu_cuda_arch_name(9, 0, a, sizeof a);
	CHECK_MSG(strcmp(a, "sm_90a") == 0, a);
	gpu_cuda_arch_name(8, 0, a, sizeof a);
	CHECK_MSG(strcmp(a, "sm_80") == 0, a);
	gpu_cuda_arch_name(8, 9, a, sizeof a);
	CHECK_MSG(strcmp(a, "sm_89") == 0, a);
	gpu_cuda_arch_name(10, 0, a, sizeof a);
	CHECK_MSG(strcmp(a, "sm_100") == 0, a);

	const size_t MiB = 1 << 20;
	CHECK(gpu_l2_flush_bytes(0) == 256 * MiB);
	CHECK(gpu_l2_flush_bytes(-5) == 256 * MiB);
	CHECK(gpu_l2_flush_bytes(1) == 8 * MiB);                  /* floor */
	CHECK(gpu_l2_flush_bytes(40 * MiB) == 80 * MiB);          /* A100 */
	CHECK(gpu_l2_flush_bytes(60 * MiB) == 120 * MiB);         /* H100/H200 */
	CHECK(gpu_l2_flush_bytes(50331648 + 1) == 97 * MiB);      /* rounded up */
	CHECK(gpu_l2_flush_bytes(4718592) == 9 * MiB);            /* 4.5 MiB (T4) */
}

static void test_lock(void)
{
	char path[512], err[256];
	const char *tmp = getenv("TMPDIR");
	snprintf(path, sizeof path, "%s/passfs-test-lock-%d", tmp && *tmp == '/' ? tmp : "/tmp", (int)getpid());
	unlink(path);
	int fd = gpu_lockfile_acquire(path, 0, NULL, err, sizeof err);
	CHECK_MSG(fd >= 0, err);
	struct stat st;
	CHECK(stat(path, &st) == 0 && (st.st_mode & 0777) == 0666);
	/* a second open file description is refused while the first holds it,
	 * after the timeout */
	int fd2 = gpu_lockfile_acquire(path, 30, NULL, err, sizeof err);
	CHECK_MSG(fd2 == -1 && strstr(err, "busy") != NULL, err);
	/* a cancelled wait ends at once, well before its timeout */
	int cancel = 1;
	struct timespec c0, c1;
	clock_gettime(CLOCK_MONOTONIC, &c0);
	fd2 = gpu_lockfile_acquire(path, 5000, &cancel, err, sizeof err);
	clock_gettime(CLOCK_MONOTONIC, &c1);
	CHECK_MSG(fd2 == -1 && strcmp(err, "cancelled") == 0 && c1.tv_sec - c0.tv_sec < 2, err);
	/* another process too */
	pid_t pid = fork();
	if (pid == 0) {
		char e[256];
		_exit(gpu_lockfile_acquire(path, 0, NULL, e, sizeof e) == -1 ? 0 : 1);
	}
	int ws = 0;
	waitpid(pid, &ws, 0);
	CHECK(WIFEXITED(ws) && WEXITSTATUS(ws) == 0);
	/* released: a waiter gets it */
	close(fd);
	fd2 = gpu_lockfile_acquire(path, 1000, NULL, err, sizeof err);
	CHECK_MSG(fd2 >= 0, err);
	if (fd2 >= 0)
		close(fd2);
	unlink(path);

	/* the cpu backend has no device lock: no-op */
	struct gpu_dev *d;
	if (gpu_open("cpu", &d, err, sizeof err) == 0) {
		CHECK(gpu_bench_lock(d, 0, NULL, err, sizeof err) == 0);
		gpu_bench_unlock(d);
		CHECK(gpu_l2_flush(d, err, sizeof err) == 0);
		int fds[4];
		CHECK(gpu_driver_fds(d, fds, 4) == 0);
		CHECK(gpu_trace_enable(d, err, sizeof err) == -1 && strstr(err, "needs the cuda backend"));
		struct gpu_trace tr;
		CHECK(gpu_trace_begin(d, err, sizeof err) == -1);
		CHECK(gpu_trace_end(d, &tr, err, sizeof err) == -1 && tr.n_kernels == 0);
		struct gpu_module *m;
		char *log;
		const char *names[1] = {"k"}, *low[1] = {"_Z1kv"};
		CHECK(gpu_module_load(d, "x", ".version 8.0", 13, names, low, 1, &m, &log, err, sizeof err) == -1 &&
		      m == NULL && strstr(err, "needs the cuda backend"));
		gpu_close(d);
	}
}

/* One synthetic record in CUPTI's layout (cupti.h's offsets). */
static void *record(unsigned char *buf, uint32_t kind, uint64_t start, uint64_t end, uint32_t stream,
		    const char *name)
{
	memset(buf, 0, 256);
	memcpy(buf + CUPTI_REC_KIND, &kind, 4);
	memcpy(buf + CUPTI_REC_START, &start, 8);
	memcpy(buf + CUPTI_REC_END, &end, 8);
	if (kind == CUPTI_KIND_CONCURRENT_KERNEL || kind == CUPTI_KIND_KERNEL) {
		memcpy(buf + CUPTI_REC_KERNEL_STREAM, &stream, 4);
		memcpy(buf + CUPTI_REC_KERNEL_NAME, &name, sizeof name);
	} else {
		memcpy(buf + CUPTI_REC_COPY_STREAM, &stream, 4);
	}
	return buf;
}

static int close_to(double a, double b)
{
	return a - b < 1e-9 && b - a < 1e-9;
}

static void test_cupti_records(void)
{
	unsigned char b[256];
	struct cupti_acc a;
	struct gpu_trace t;
	cupti_acc_reset(&a, 1000000);
	/* before the window: ignored */
	CHECK(cupti_acc_record(&a, record(b, CUPTI_KIND_CONCURRENT_KERNEL, 999000, 1500000, 7, "_Z4prevv")) == 0);
	/* two kernels on two streams (one escaping to a side stream), 2 ms and 0.5 ms */
	CHECK(cupti_acc_record(&a, record(b, CUPTI_KIND_CONCURRENT_KERNEL, 1000000, 3000000, 7, "_Z1av")) == 1);
	CHECK(cupti_acc_record(&a, record(b, CUPTI_KIND_CONCURRENT_KERNEL, 2500000, 3000000, 13, "_Z1bv")) == 1);
	CHECK(cupti_acc_record(&a, record(b, CUPTI_KIND_CONCURRENT_KERNEL, 3100000, 3600000, 7, "_Z1av")) == 1);
	/* a copy and a memset */
	CHECK(cupti_acc_record(&a, record(b, CUPTI_KIND_MEMCPY, 4000000, 4250000, 7, NULL)) == 1);
	CHECK(cupti_acc_record(&a, record(b, CUPTI_KIND_MEMSET, 4300000, 4400000, 7, NULL)) == 1);
	/* other kinds, and a broken record, are not counted */
	CHECK(cupti_acc_record(&a, record(b, 5, 5000000, 6000000, 7, NULL)) == 0);
	CHECK(cupti_acc_record(&a, record(b, CUPTI_KIND_MEMCPY, 6000000, 5000000, 7, NULL)) == 0);
	cupti_acc_result(&a, &t);
	CHECK(t.n_kernels == 3 && t.n_memcpy == 1 && t.n_memset == 1);
	CHECK_MSG(close_to(t.kernel_ms, 3.0), "kernel_ms");
	CHECK(close_to(t.memcpy_ms, 0.25) && close_to(t.memset_ms, 0.1));
	CHECK_MSG(close_to(t.span_ms, 3.4), "span 1.0 .. 4.4 ms");
	CHECK(t.n_streams == 2);
	CHECK(t.n_names == 2 && strcmp(t.kernels[0].name, "_Z1av") == 0 && t.kernels[0].count == 2 &&
	      close_to(t.kernels[0].ms, 2.5) && strcmp(t.kernels[1].name, "_Z1bv") == 0);
	CHECK(t.dropped == 0);
	/* a kernel CUPTI could not time (start = end = 0) is not counted but
	 * marks the sums short */
	cupti_acc_reset(&a, 1000000);
	CHECK(cupti_acc_record(&a, record(b, CUPTI_KIND_CONCURRENT_KERNEL, 1000000, 2000000, 7, "_Z1av")) == 1);
	CHECK(cupti_acc_record(&a, record(b, CUPTI_KIND_CONCURRENT_KERNEL, 0, 0, 7, "_Z1bv")) == 0);
	cupti_acc_result(&a, &t);
	CHECK(t.n_kernels == 1 && t.dropped == 1);
	/* more distinct kernels than the table holds: all counted, 8 named */
	cupti_acc_reset(&a, 0);
	char names[12][16];
	for (int i = 0; i < 12; i++) {
		snprintf(names[i], sizeof names[i], "_Z1k%dv", i);
		cupti_acc_record(&a, record(b, CUPTI_KIND_KERNEL, 10, 20, 1, names[i]));
	}
	cupti_acc_result(&a, &t);
	CHECK(t.n_kernels == 12 && t.n_names == GPU_TRACE_MAX_KERNELS);
	/* a closed accumulator counts nothing */
	a.open = 0;
	CHECK(cupti_acc_record(&a, record(b, CUPTI_KIND_KERNEL, 10, 20, 1, "x")) == 0);

	/* PASSFS_CUPTI=0 turns it off with a clear reason */
	char err[256];
	setenv("PASSFS_CUPTI", "0", 1);
	CHECK(cupti_load(err, sizeof err) == -1 && strstr(err, "PASSFS_CUPTI=0") != NULL);
	unsetenv("PASSFS_CUPTI");
	if (cupti_load(err, sizeof err) == 0)
		printf("note: libcupti loads (entry points resolved)\n");
	else
		printf("note: %s\n", err);
}

static int count_lines(const char *s, size_t n)
{
	int k = 0;
	for (size_t i = 0; i < n; i++)
		k += s[i] == '\n';
	return k;
}

static void test_device_stubs(void)
{
	static const char src[] =
		"#include <passfs.h>\n"
		"#define DEV __device__ __forceinline__\n"
		"#define HD __host__ __device__\n"
		"struct __align__(16) P {\n"
		"\tfloat a;\n"
		"\t__device__ float get() const { asm(\"mov.f32 %0, 1.0;\" : \"=f\"(x)); return a; }\n"
		"};\n"
		"DEV float f(float x) { return x * 2; /* { */ }\n"
		"HD float g(float x) { asm volatile(\"nop;\"\n\t:::\"memory\"); return x; }\n"
		"template <typename T>\n"
		"__global__ void k(T *p,\n"
		"\t\t  int n)\n"
		"{\n"
		"\textern __shared__ float s[];\n"
		"#pragma unroll\n"
		"\tfor (int i = 0; i < n; i++) { p[i] = f(s[i]); }\n"
		"}\n"
		"extern \"C\" {\n"
		"__global__ void k2(int *p) { p[0] = '}'; }\n"
		"}\n"
		"static int helper(int x) { __asm__ __volatile__(\"\" ::: \"memory\"); return x; }\n"
		"__device__ float table[2] = {1, 2};\n"
		"__host__ __device__ constexpr int cdiv(int a, int b) { return (a + b - 1) / b; }\n"
		"template <int N> static __global__ void sk(int *p) { p[0] = N; }\n"
		"static __device__ int sd(int x) { return x; }\n"
		"PASS_REPLACEMENT(pf_call *c) { return helper(0); }\n";
	size_t n;
	char *out = hostcc_device_stubs(src, sizeof src - 1, &n);
	CHECK(out != NULL);
	if (out == NULL)
		return;
	CHECK_MSG(count_lines(out, n) == count_lines(src, sizeof src - 1), out);
	CHECK_MSG(strstr(out, "__device__ float get() const { __builtin_trap(); }") != NULL, out);
	CHECK_MSG(strstr(out, "DEV float f(float x) { __builtin_trap(); }") != NULL, out);
	CHECK_MSG(strstr(out, "HD float g(float x) { (void)0\n; return x; }") != NULL, out);
	CHECK_MSG(strstr(out, "{ __builtin_trap(); \n\n#pragma unroll\n\n}") != NULL, out);
	CHECK_MSG(strstr(out, "__global__ void k2(int *p) { __builtin_trap(); }") != NULL, out);
	CHECK_MSG(strstr(out, "static int helper(int x) { (void)0; return x; }") != NULL, out);
	CHECK_MSG(strstr(out, "__device__ float table[2] = {1, 2};") != NULL, out);
	CHECK_MSG(strstr(out, "{ return (a + b - 1) / b; }") != NULL, out);
	/* a kernel's stub is exported (found by its symbol); other functions keep static */
	CHECK_MSG(strstr(out, "template <int N>        __global__ void sk(int *p) { __builtin_trap(); }") != NULL, out);
	CHECK_MSG(strstr(out, "static __device__ int sd(int x) { __builtin_trap(); }") != NULL, out);
	CHECK_MSG(strstr(out, "PASS_REPLACEMENT(pf_call *c) { return helper(0); }") != NULL, out);
	CHECK_MSG(strstr(out, "extern __shared__") == NULL && strstr(out, "asm") == NULL, out);
	free(out);

	/* unbalanced braces: the rest is left for the compiler to report */
	static const char broken[] = "__global__ void k() { if (1) {\n";
	out = hostcc_device_stubs(broken, sizeof broken - 1, &n);
	CHECK(out != NULL && n == sizeof broken - 1 && memcmp(out, broken, n) == 0);
	free(out);
}

static char *slurp(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	if (f == NULL)
		return NULL;
	fseek(f, 0, SEEK_END);
	long n = ftell(f);
	rewind(f);
	char *b = malloc((size_t)n + 1);
	if (b && fread(b, 1, (size_t)n, f) != (size_t)n) {
		free(b);
		b = NULL;
	}
	fclose(f);
	if (b) {
		b[n] = '\0';
		*len = (size_t)n;
	}
	return b;
}

/* The GPU test passes compile for the cuda backend (NVRTC for sm_90a when
 * it can be loaded, the host object with device stubs), and are refused for
 * the cpu backend where they use what only a GPU runs. */
/* ptxas -arch=ARCH on the PTX: 0 when it assembles or there is no ptxas
 * (a "skip" line), else -1 with ptxas's output in msg. */
static int ptx_assembles(const char *ptx, const char *arch, char *msg, size_t len)
{
	const char *ptxas = "/usr/local/cuda/bin/ptxas";
	if (access(ptxas, X_OK) != 0) {
		printf("skip: no %s to assemble the PTX with\n", ptxas);
		return 0;
	}
	char dir[512];
	const char *tmp = getenv("TMPDIR");
	snprintf(dir, sizeof dir, "%s/passfs-ptxas-XXXXXX", tmp && *tmp == '/' ? tmp : "/tmp");
	if (mkdtemp(dir) == NULL)
		return -1;
	char in[600], out[600], log[600], cmd[2400];
	snprintf(in, sizeof in, "%s/k.ptx", dir);
	snprintf(out, sizeof out, "%s/k.cubin", dir);
	snprintf(log, sizeof log, "%s/log", dir);
	FILE *f = fopen(in, "w");
	int rc = -1;
	if (f != NULL && fputs(ptx, f) >= 0 && fclose(f) == 0) {
		snprintf(cmd, sizeof cmd, "%s -arch=%s -o %s %s >%s 2>&1", ptxas, arch, out, in, log);
		rc = system(cmd) == 0 ? 0 : -1;
	}
	msg[0] = 0;
	FILE *lf = fopen(log, "r");
	if (lf != NULL) {
		size_t n = fread(msg, 1, len - 1, lf);
		msg[n] = 0;
		fclose(lf);
	}
	unlink(in);
	unlink(out);
	unlink(log);
	rmdir(dir);
	return rc;
}

static void test_gpu_passes_compile(void)
{
	static const char *const files[] = {"tests/gpu/passes/ptx_wmma_ok.c", "tests/gpu/passes/async_escape.c",
					    "tests/gpu/passes/fault_oob.c", "tests/passes/ok_fused.c",
					    "tests/passes/unsupported_ptx.c"};
	int have_nvrtc = nvrtc_available(NULL, 0);
	char bad[600];
	if (access("/usr/local/cuda/bin/ptxas", X_OK) == 0)
		CHECK_MSG(ptx_assembles(".version 8.0\n.target sm_90a\n.address_size 64\nnot_an_instruction;\n", "sm_90a",
					bad, sizeof bad) == -1 && bad[0],
			  "ptxas must refuse bad PTX");
	for (size_t f = 0; f < sizeof files / sizeof files[0]; f++) {
		size_t len;
		char *src = slurp(files[f], &len);
		CHECK_MSG(src != NULL, files[f]);
		if (src == NULL)
			continue;
		struct pass_options o = {.arch = "sm_90a", .allow_device_only = 1, .skip_nvrtc = !have_nvrtc};
		struct pass_module *m = NULL;
		struct pass_diag dg;
		int rc = pass_compile_opts("pass.c", src, len, &o, &m, &dg);
		char msg[6000];
		snprintf(msg, sizeof msg, "%s: %.600s | %.4100s", files[f], dg.message, dg.log);
		CHECK_MSG(rc == 0 && dg.verdict == PASS_OK, msg);
		if (rc == 0 && have_nvrtc) {
			CHECK_MSG(m->ptx != NULL && strstr(m->ptx, ".target sm_90a") != NULL && m->lowered != NULL, files[f]);
			/* the driver JIT-compiles this PTX at load: the toolkit's
			 * assembler (the same back end) must take it */
			if (m->ptx != NULL)
				CHECK_MSG(ptx_assembles(m->ptx, "sm_90a", msg, sizeof msg) == 0, msg);
		}
		if (rc == 0) {
			/* every kernel-table entry has its own address */
			struct pass_loaded l;
			char err[512];
			CHECK_MSG(pass_load(m, &l, err, sizeof err) == 0, err);
			for (int i = 0; i < l.n_kernels; i++)
				for (int j = i + 1; j < l.n_kernels; j++)
					CHECK_MSG(l.kernels[i].addr != l.kernels[j].addr, l.kernels[j].name);
			CHECK(l.n_kernels == m->names.n);
			pass_unload(&l);
		}
		pass_module_free(m);
		if (f == 0) {
			/* the cpu backend cannot run it */
			struct pass_options oc = {.skip_nvrtc = 1};
			rc = pass_compile_opts("pass.c", src, len, &oc, &m, &dg);
			CHECK_MSG(rc == -1 && dg.verdict == PASS_UNSUPPORTED && strstr(dg.message, "needs a GPU"),
				  dg.message);
			pass_module_free(m);
		}
		free(src);
	}
}

/* A worker is forked from a daemon whose other threads use the backends
 * (other evaluations): a lock another thread held at the fork must not
 * leave the child stuck.  A thread asks for the probe's answer without
 * pause (it takes the probe's lock each time) while children are forked
 * that ask for it too. */
static volatile int stop_asking;

static void *keep_asking(void *arg)
{
	(void)arg;
	char why[256];
	while (!stop_asking)
		gpu_cuda_probe(why, sizeof why);
	return NULL;
}

/* While `busy` runs in a thread, forks n children with gpu_fork_worker
 * (each runs `child` under a 5 s alarm; 0 is success); returns how many
 * did not exit 0. */
static int forks_while(void *(*busy)(void *), int n, int (*child)(void))
{
	stop_asking = 0;
	pthread_t t;
	if (pthread_create(&t, NULL, busy, NULL) != 0)
		return -1;
	int bad = 0;
	for (int i = 0; i < n; i++) {
		pid_t pid = gpu_fork_worker(NULL, 0);
		if (pid == 0) {
			alarm(5);
			_exit(child());
		}
		int st = 0;
		waitpid(pid, &st, 0);
		bad += !(WIFEXITED(st) && WEXITSTATUS(st) == 0);
	}
	stop_asking = 1;
	pthread_join(t, NULL);
	if (bad)
		fprintf(stderr, "  %d of %d children failed\n", bad, n);
	return bad;
}

static int ask_probe(void)
{
	char w[256];
	gpu_cuda_probe(w, sizeof w);
	return 0;
}

static void test_fork_while_locked(void)
{
	char why[256];
	gpu_cuda_probe(why, sizeof why);        /* answered and cached */
	CHECK_MSG(forks_while(keep_asking, 40, ask_probe) == 0,
		  "children forked while another thread held the probe's lock got stuck");
}

/* The same for the dynamic loader: a child forked while another thread was
 * inside dlopen finds the loader locked or inconsistent, unless the fork
 * waits for the load (gpu_fork_worker, gpu_dlopen). */
static void *keep_loading(void *arg)
{
	(void)arg;
	while (!stop_asking) {
		void *h = gpu_dlopen("libz.so.1", RTLD_NOW | RTLD_LOCAL);
		if (h != NULL)
			gpu_dlclose(h);
	}
	return NULL;
}

static int load_libz(void)
{
	return gpu_dlopen("libz.so.1", RTLD_NOW | RTLD_LOCAL) != NULL ? 0 : 2;
}

static void test_fork_while_loading(void)
{
	void *probe = dlopen("libz.so.1", RTLD_NOW | RTLD_LOCAL);
	if (probe == NULL) {
		printf("skip: no libz.so.1 to load\n");
		return;
	}
	dlclose(probe);
	CHECK_MSG(forks_while(keep_loading, 100, load_libz) == 0,
		  "children forked while another thread loaded a library could not load one");
}

/* A daemon runs evaluations side by side: a worker forked for one must not
 * hold another's pipe, or that one's reader waits for end of file as long
 * as the worker lives (seen: an evaluation "compiling" for 40 s while
 * another's pass spun).  The child keeps 0-2 and keep[] only. */
static void test_fork_closes_others(void)
{
	int other[2], mine[2], go[2];
	if (pipe(other) || pipe(mine) || pipe(go)) {
		CHECK_MSG(0, "pipes");
		return;
	}
	int keep[2] = {mine[1], go[0]};
	pid_t pid = gpu_fork_worker(keep, 2);
	if (pid == 0) {
		/* report which descriptors are open, then wait to be let go */
		char r[3] = {fcntl(other[1], F_GETFD) < 0 && errno == EBADF ? 'c' : 'o',
			     fcntl(other[0], F_GETFD) < 0 && errno == EBADF ? 'c' : 'o',
			     fcntl(1, F_GETFD) >= 0 ? 'o' : 'c'};
		if (write(mine[1], r, 3) != 3)
			_exit(2);
		char b;
		_exit(read(go[0], &b, 1) == 1 ? 0 : 3);
	}
	close(mine[1]);
	close(go[0]);
	char r[3] = {0};
	CHECK_MSG(pid > 0 && read(mine[0], r, 3) == 3, "the child reports");
	CHECK_MSG(r[0] == 'c' && r[1] == 'c', "the child closed another evaluation's pipe");
	CHECK_MSG(r[2] == 'o', "the child kept stdout");
	/* with the child alive, the other pipe's reader sees end of file */
	close(other[1]);
	struct pollfd pf = {other[0], POLLIN, 0};
	char b;
	CHECK_MSG(poll(&pf, 1, 2000) == 1 && read(other[0], &b, 1) == 0,
		  "the other pipe's reader sees end of file while the child lives");
	if (write(go[1], "x", 1) != 1)
		CHECK_MSG(0, "let the child go");
	int st = 0;
	waitpid(pid, &st, 0);
	CHECK_MSG(WIFEXITED(st) && WEXITSTATUS(st) == 0, "the child used its kept descriptor");
	close(other[0]);
	close(mine[0]);
	close(go[1]);
	/* more than 16 to keep is refused, not cut short */
	int many[17] = {0};
	CHECK_MSG(gpu_close_fds_except(many, 17) == -1 && errno == EINVAL, "17 kept descriptors are refused");
}

/* Kernel names in result.json: CUPTI gives lowered names. */
static void test_demangle(void)
{
	char out[256];
	CHECK_MSG(gpu_demangle("_Z9bias_geluIfEvPKfPfi", out, sizeof out) == 0 &&
			  strcmp(out, "void bias_gelu<float>(float const*, float*, int)") == 0,
		  "a template kernel demangles");
	/* a plain function's mangled name has no return type */
	CHECK_MSG(gpu_demangle("_Z5touchPf", out, sizeof out) == 0 && strcmp(out, "touch(float*)") == 0,
		  "a plain kernel demangles");
	/* not mangled (an extern "C" kernel, a vendor's name): copied, -1 */
	CHECK_MSG(gpu_demangle("sm90_xmma_gemm_f32f32", out, sizeof out) == -1 &&
			  strcmp(out, "sm90_xmma_gemm_f32f32") == 0,
		  "a plain name is copied");
	/* cut short by the record's name field: not demangled */
	CHECK_MSG(gpu_demangle("_Z9bias_gel", out, sizeof out) == -1 && strcmp(out, "_Z9bias_gel") == 0,
		  "a cut name is copied");
	/* a small buffer */
	CHECK_MSG(gpu_demangle("_Z9bias_geluIfEvPKfPfi", out, 8) == 0 && strcmp(out, "void bi") == 0,
		  "a small buffer is filled");
}

/* The NVRTC target: the device's own arch where this NVRTC knows it; on a
 * GPU newer than the NVRTC, where every compile for the device's arch fails,
 * PTX for the newest arch NVRTC knows (no cubin), which the driver
 * JIT-compiles. */
static void test_target_arch(void)
{
	if (!nvrtc_available(NULL, 0)) {
		printf("note: no NVRTC: the compile target is not checked\n");
		return;
	}
	int archs[256], newest = -1;
	int n = nvrtc_supported_archs(archs, 256);
	CHECK_MSG(n > 0, "NVRTC lists no archs");
	for (int i = 0; i < n; i++)
		if (archs[i] > newest)
			newest = archs[i];
	if (newest < 0)
		return;
	char t[16], note[320], want[32], msg[700];
	CHECK_MSG(gpu_cuda_target_arch(9, 0, t, sizeof t, note, sizeof note) == 0 && strcmp(t, "sm_90a") == 0 &&
			  note[0] == '\0',
		  t);
	snprintf(want, sizeof want, "compute_%d", newest);
	/* the next major above NVRTC's newest (13.0 for NVRTC 13.0's sm_121),
	 * and one far above */
	int majors[2] = {newest / 10 + 1, 99};
	for (int k = 0; k < 2; k++) {
		int rc = gpu_cuda_target_arch(majors[k], 0, t, sizeof t, note, sizeof note);
		char own[32];
		snprintf(own, sizeof own, "sm_%d0", majors[k]);
		snprintf(msg, sizeof msg, "%d.0: %s: %s", majors[k], t, note);
		CHECK_MSG(rc == 1 && strcmp(t, want) == 0 && strstr(note, own) != NULL && strstr(note, want) != NULL,
			  msg);
	}
	static const char *const names[] = {"k"};
	const char *src = "extern \"C\" __global__ void k(float *y) { y[threadIdx.x] = 1.0f; }\n";
	struct nvrtc_output no;
	char err[600];
	/* the device's own arch is what fails: why the fallback exists */
	char own[16];
	gpu_cuda_arch_name(majors[0], 0, own, sizeof own);
	struct nvrtc_request r = {.label = "k.cu", .src = src, .arch = own, .names = names, .n_names = 1,
				  .want_cubin = 1};
	CHECK_MSG(nvrtc_compile(&r, &no, err, sizeof err) != NVRTC_GATE_OK, own);
	nvrtc_output_free(&no);
	gpu_cuda_target_arch(majors[0], 0, t, sizeof t, note, sizeof note);
	r.arch = t;
	enum nvrtc_status st = nvrtc_compile(&r, &no, err, sizeof err);
	char target[32];
	snprintf(target, sizeof target, ".target sm_%d", newest);
	CHECK_MSG(st == NVRTC_GATE_OK && no.ptx != NULL && strstr(no.ptx, target) != NULL && no.cubin == NULL &&
			  no.n_lowered == 1 && strcmp(no.lowered[0], "k") == 0,
		  err);
	nvrtc_output_free(&no);
	/* a GPU NVRTC knows still gets its cubin */
	r.arch = "sm_90a";
	st = nvrtc_compile(&r, &no, err, sizeof err);
	CHECK_MSG(st == NVRTC_GATE_OK && no.ptx != NULL && strstr(no.ptx, ".target sm_90a") != NULL &&
			  no.cubin != NULL && no.cubin_size > 0,
		  err);
	nvrtc_output_free(&no);
}

int main(int argc, char **argv)
{
	if (argc > 1 && strcmp(argv[1], "--stub-probe") == 0)
		return stub_probe();
	test_open_without_gpu();
	test_stub_driver();
	test_check_args();
	test_arch_and_l2();
	test_target_arch();
	test_lock();
	test_cupti_records();
	test_device_stubs();
	test_gpu_passes_compile();
	test_demangle();
	test_fork_while_locked();
	test_fork_while_loading();
	test_fork_closes_others();
	printf("%d passed, %d failed\n", passed, failed);
	return failed ? 1 : 0;
}
