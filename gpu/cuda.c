/* cuda.c - the cuda backend: the CUDA driver API through dlopen, NVRTC for
 * the device's own architecture (or, on a GPU newer than the NVRTC, PTX for
 * the newest one NVRTC knows, JIT-compiled by the driver), CUPTI for GPU
 * time (cupti.c).
 *
 * Nothing here needs CUDA headers to build: the few driver types are
 * declared below with the driver's C ABI (CUresult is an int enum, 0 is
 * success; CUdevice an int; CUdeviceptr a 64-bit integer; handles are
 * pointers), and every entry point is looked up by its exported name - the
 * versioned one where cuda.h maps the plain name to a _v2 (cuMemAlloc_v2,
 * cuMemcpyHtoD_v2, ...).  One binary runs with and without a GPU.
 *
 * Processes.  A CUDA context does not survive fork(), and a process that
 * initialised CUDA cannot hand a usable driver to its children.  So:
 *   - the probe (is there a GPU, which one, its name, compute capability,
 *     L2 size, PCI bus id) runs cuInit in a forked child and sends the
 *     answer back over a pipe; the answer is cached, also for children
 *     forked later, which therefore never probe again;
 *   - a device opened with gpu_open is lazy: CUDA is initialised (cuInit,
 *     the primary context, CUPTI) on the first call that needs the GPU.
 * The evaluator's parent opens a device only to name it, and each worker
 * it forks opens its own: that is the pattern this supports.
 *
 * Errors.  Every failing driver call becomes one line naming the call, the
 * kernel when there is one, and the driver's error name and text.  Errors
 * that leave the context unusable (illegal address, launch failure, trap,
 * misaligned address, ...) are "sticky": the device is marked broken and
 * every later call answers with the first message, which names the
 * kernels launched since the last successful sync - so a faulting pass
 * ends its own worker with a message naming its kernel, and nothing else.
 *
 * Memory.  gpu_free keeps blocks for reuse (sizes rounded up: 512 bytes
 * below 1 MiB, 2 MiB above), as PyTorch's caching allocator does, so
 * scratch memory in a timed call costs no cuMemAlloc/cuMemFree (cuMemFree
 * synchronises the device).  The cache is dropped when an allocation
 * fails, and everything is freed by gpu_close.
 *
 * Modules.  gpu_module_compile (the op library, tests) compiles with NVRTC
 * for the device's arch and loads the cubin (no JIT; a compute_XY target
 * has only PTX, which is loaded), keeping compiled modules in an on-disk
 * cache ($PASSFS_CACHE_DIR, else $XDG_CACHE_HOME/passfs/modules, else
 * ~/.cache/passfs/modules; "off" disables it) keyed by the source, names,
 * arch and NVRTC version.
 * gpu_module_load takes what the pass compiler produced (PTX and lowered
 * names) and JIT-compiles it (CU_JIT_ERROR_LOG_BUFFER gives the log).
 * A process that asks (gpu_load_kernels_eagerly: the pass worker, which
 * enters its sandbox after loading its module) gets CUDA_MODULE_LOADING=
 * EAGER before cuInit unless the environment says otherwise, so every
 * kernel is loaded with its module; the others keep the driver's default
 * (lazy), under which eager's worker loads only the cuBLAS kernels it
 * runs rather than all of them at the library's first call. */
#define _GNU_SOURCE
#include "backend.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <dlfcn.h>

#include "clock.h"
#include "cuda_abi.h"
#include "cupti.h"
#include "file.h"
#include "hash.h"
#include "hostcc.h"
#include "nvrtc.h"
#include "proc.h"

/* --- the driver API, declared by hand ---------------------------------------- */

#define DEFAULT_DYN_SMEM (48 * 1024)
#define JIT_LOG_BYTES 16384
#define PROBE_TIMEOUT_MS 60000

static struct cu_api {
	void *handle;
	int loaded;
	char why[240];
	CUresult (*Init)(unsigned);
	CUresult (*DriverGetVersion)(int *);
	CUresult (*DeviceGetCount)(int *);
	CUresult (*DeviceGet)(CUdevice *, int);
	CUresult (*DeviceGetName)(char *, int, CUdevice);
	CUresult (*DeviceGetAttribute)(int *, int, CUdevice);
	CUresult (*DeviceTotalMem)(size_t *, CUdevice);
	CUresult (*DeviceGetPCIBusId)(char *, int, CUdevice);
	CUresult (*DevicePrimaryCtxRetain)(CUcontext *, CUdevice);
	CUresult (*DevicePrimaryCtxRelease)(CUdevice);
	CUresult (*CtxSetCurrent)(CUcontext);
	CUresult (*CtxSynchronize)(void);
	CUresult (*CtxSetLimit)(int, size_t);
	CUresult (*CtxResetPersistingL2Cache)(void);
	CUresult (*ModuleLoadDataEx)(CUmodule *, const void *, unsigned, int *, void **);
	CUresult (*ModuleUnload)(CUmodule);
	CUresult (*ModuleGetFunction)(CUfunction *, CUmodule, const char *);
	CUresult (*FuncGetAttribute)(int *, int, CUfunction);
	CUresult (*FuncSetAttribute)(CUfunction, int, int);
	CUresult (*FuncGetParamInfo)(CUfunction, size_t, size_t *, size_t *);   /* 12.4+, optional */
	CUresult (*LaunchKernel)(CUfunction, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned,
				 unsigned, CUstream, void **, void **);
	CUresult (*MemAlloc)(CUdeviceptr *, size_t);
	CUresult (*MemFree)(CUdeviceptr);
	CUresult (*MemcpyHtoD)(CUdeviceptr, const void *, size_t);
	CUresult (*MemcpyDtoH)(void *, CUdeviceptr, size_t);
	CUresult (*MemsetD8)(CUdeviceptr, unsigned char, size_t);
	CUresult (*GetErrorName)(CUresult, const char **);
	CUresult (*GetErrorString)(CUresult, const char **);
} cu;

static pthread_mutex_t cu_mu = PTHREAD_MUTEX_INITIALIZER;

#define SYM(name, field, optional) {name, (void **)&cu.field, optional}
static const struct {
	const char *name;
	void **slot;
	int optional;
} cu_syms[] = {
	SYM("cuInit", Init, 0),
	SYM("cuDriverGetVersion", DriverGetVersion, 0),
	SYM("cuDeviceGetCount", DeviceGetCount, 0),
	SYM("cuDeviceGet", DeviceGet, 0),
	SYM("cuDeviceGetName", DeviceGetName, 0),
	SYM("cuDeviceGetAttribute", DeviceGetAttribute, 0),
	SYM("cuDeviceTotalMem_v2", DeviceTotalMem, 0),
	SYM("cuDeviceGetPCIBusId", DeviceGetPCIBusId, 0),
	SYM("cuDevicePrimaryCtxRetain", DevicePrimaryCtxRetain, 0),
	SYM("cuDevicePrimaryCtxRelease_v2", DevicePrimaryCtxRelease, 0),
	SYM("cuCtxSetCurrent", CtxSetCurrent, 0),
	SYM("cuCtxSynchronize", CtxSynchronize, 0),
	SYM("cuCtxSetLimit", CtxSetLimit, 0),
	SYM("cuCtxResetPersistingL2Cache", CtxResetPersistingL2Cache, 1),
	SYM("cuModuleLoadDataEx", ModuleLoadDataEx, 0),
	SYM("cuModuleUnload", ModuleUnload, 0),
	SYM("cuModuleGetFunction", ModuleGetFunction, 0),
	SYM("cuFuncGetAttribute", FuncGetAttribute, 0),
	SYM("cuFuncSetAttribute", FuncSetAttribute, 0),
	SYM("cuFuncGetParamInfo", FuncGetParamInfo, 1),
	SYM("cuLaunchKernel", LaunchKernel, 0),
	SYM("cuMemAlloc_v2", MemAlloc, 0),
	SYM("cuMemFree_v2", MemFree, 0),
	SYM("cuMemcpyHtoD_v2", MemcpyHtoD, 0),
	SYM("cuMemcpyDtoH_v2", MemcpyDtoH, 0),
	SYM("cuMemsetD8_v2", MemsetD8, 0),
	SYM("cuGetErrorName", GetErrorName, 0),
	SYM("cuGetErrorString", GetErrorString, 0),
};
#undef SYM
#define N_CU_SYMS (sizeof cu_syms / sizeof cu_syms[0])

static const char *libcuda_path(void)
{
	const char *env = getenv("PASSFS_LIBCUDA");
	return env != NULL && *env != '\0' ? env : "libcuda.so.1";
}

/* Loads the driver library and its entry points (no CUDA call). */
static int cu_load(char *why, size_t whylen)
{
	pthread_mutex_lock(&cu_mu);
	if (!cu.loaded) {
		cu.loaded = 1;
		const char *path = libcuda_path();
		cu.handle = gpu_dlopen(path, RTLD_NOW | RTLD_LOCAL);
		if (cu.handle == NULL) {
			const char *e = dlerror();
			snprintf(cu.why, sizeof cu.why, "%s", e ? e : path);
		}
		for (size_t i = 0; cu.handle != NULL && i < N_CU_SYMS; i++) {
			*cu_syms[i].slot = dlsym(cu.handle, cu_syms[i].name);
			if (*cu_syms[i].slot == NULL && !cu_syms[i].optional) {
				snprintf(cu.why, sizeof cu.why, "the CUDA driver (%s) has no %s: too old", path,
					 cu_syms[i].name);
				/* The library stays loaded (see gpu_cuda_probe's note);
				 * the table is unusable. */
				cu.handle = NULL;
			}
		}
	}
	int rc = cu.handle != NULL ? 0 : -1;
	if (rc && why != NULL)
		snprintf(why, whylen, "%s", cu.why);
	pthread_mutex_unlock(&cu_mu);
	return rc;
}

int gpu_cuda_check_symbols(const char *path, char *why, size_t whylen)
{
	void *h = gpu_dlopen(path ? path : libcuda_path(), RTLD_NOW | RTLD_LOCAL);
	if (h == NULL) {
		const char *e = dlerror();
		snprintf(why, whylen, "%s", e ? e : "dlopen failed");
		return -1;
	}
	char list[2048] = "";
	for (size_t i = 0; i < N_CU_SYMS; i++)
		if (dlsym(h, cu_syms[i].name) == NULL) {
			strncat(list, list[0] ? ", " : "missing: ", sizeof list - strlen(list) - 1);
			strncat(list, cu_syms[i].name, sizeof list - strlen(list) - 1);
		}
	snprintf(why, whylen, "%s", list);
	/* libcuda is not unloaded (cuda.c's convention); a stub library is
	 * harmless to keep. */
	return why[0] ? -1 : 0;
}

/* Names a driver error: "CUDA_ERROR_ILLEGAL_ADDRESS: an illegal memory
 * access was encountered". */
static void cu_errstr(CUresult rc, char *buf, size_t len)
{
	const char *name = NULL, *text = NULL;
	if (cu.GetErrorName == NULL || cu.GetErrorName(rc, &name) != CUDA_SUCCESS)
		name = NULL;
	if (cu.GetErrorString == NULL || cu.GetErrorString(rc, &text) != CUDA_SUCCESS)
		text = NULL;
	if (name == NULL) {
		static const struct {
			int code;
			const char *name;
		} known[] = {
			{1, "CUDA_ERROR_INVALID_VALUE"}, {2, "CUDA_ERROR_OUT_OF_MEMORY"},
			{3, "CUDA_ERROR_NOT_INITIALIZED"}, {34, "CUDA_ERROR_STUB_LIBRARY"},
			{36, "CUDA_ERROR_CALL_REQUIRES_NEWER_DRIVER"}, {100, "CUDA_ERROR_NO_DEVICE"},
			{214, "CUDA_ERROR_ECC_UNCORRECTABLE"}, {226, "CUDA_ERROR_CONTAINED"},
			{803, "CUDA_ERROR_SYSTEM_DRIVER_MISMATCH"}, {804, "CUDA_ERROR_COMPAT_NOT_SUPPORTED_ON_DEVICE"},
			{911, "CUDA_ERROR_EXTERNAL_DEVICE"},
			{101, "CUDA_ERROR_INVALID_DEVICE"}, {209, "CUDA_ERROR_NO_BINARY_FOR_GPU"},
			{218, "CUDA_ERROR_INVALID_PTX"}, {222, "CUDA_ERROR_UNSUPPORTED_PTX_VERSION"},
			{700, "CUDA_ERROR_ILLEGAL_ADDRESS"}, {701, "CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES"},
			{702, "CUDA_ERROR_LAUNCH_TIMEOUT"}, {710, "CUDA_ERROR_ASSERT"},
			{715, "CUDA_ERROR_ILLEGAL_INSTRUCTION"}, {716, "CUDA_ERROR_MISALIGNED_ADDRESS"},
			{719, "CUDA_ERROR_LAUNCH_FAILED"},
		};
		for (size_t i = 0; i < sizeof known / sizeof known[0]; i++)
			if (known[i].code == rc)
				name = known[i].name;
	}
	if (name != NULL && text != NULL)
		snprintf(buf, len, "%s: %s", name, text);
	else if (name != NULL)
		snprintf(buf, len, "%s", name);
	else
		snprintf(buf, len, "CUDA error %d", rc);
}

/* Errors after which the context (or, for the last three, the process)
 * cannot be used again. */
static int cu_sticky(CUresult rc)
{
	return rc == CUDA_ERROR_ILLEGAL_ADDRESS || rc == CUDA_ERROR_LAUNCH_TIMEOUT || rc == CUDA_ERROR_ASSERT ||
	       (rc >= CUDA_ERROR_HARDWARE_STACK_ERROR && rc <= CUDA_ERROR_LAUNCH_FAILED) || rc == CUDA_ERROR_UNKNOWN ||
	       rc == CUDA_ERROR_ECC_UNCORRECTABLE || rc == CUDA_ERROR_CONTAINED || rc == CUDA_ERROR_EXTERNAL_DEVICE;
}

void gpu_cuda_arch_name(int major, int minor, char *out, size_t outlen)
{
	/* sm_90a: Hopper's arch-specific instructions (wgmma, setmaxnreg, TMA
	 * multicast).  The code runs only on 9.0 devices, which is where it
	 * was compiled for. */
	snprintf(out, outlen, "sm_%d%d%s", major, minor, major == 9 && minor == 0 ? "a" : "");
}

int gpu_cuda_target_arch(int major, int minor, char *out, size_t outlen, char *note, size_t notelen)
{
	gpu_cuda_arch_name(major, minor, out, outlen);
	if (notelen > 0)
		note[0] = '\0';
	int archs[256];
	int n = nvrtc_supported_archs(archs, 256), want = major * 10 + minor, best = -1, lo = -1, hi = -1;
	for (int i = 0; i < n; i++) {
		if (archs[i] == want)
			return 0;
		if (archs[i] < want && archs[i] > best)
			best = archs[i];
		if (lo < 0 || archs[i] < lo)
			lo = archs[i];
		if (archs[i] > hi)
			hi = archs[i];
	}
	/* No list, or a device older than every arch NVRTC knows: NVRTC's
	 * own error for the device's arch says it best. */
	if (best < 0)
		return 0;
	/* Every NVRTC compile for an arch it does not know fails, the op
	 * library's included; PTX for an older virtual arch runs on any newer
	 * device, JIT-compiled by the driver. */
	char own[16];
	snprintf(own, sizeof own, "%s", out);
	snprintf(out, outlen, "compute_%d", best);
	snprintf(note, notelen, "NVRTC %s cannot compile for this GPU's %s (it knows sm_%d to sm_%d): device code "
		 "is PTX for %s, JIT-compiled by the driver when it is loaded", nvrtc_version(), own, lo, hi, out);
	return 1;
}

/* --- the probe ------------------------------------------------------------------ */


static pthread_mutex_t probe_mu = PTHREAD_MUTEX_INITIALIZER;
static int probe_done;
static struct gpu_cuda_info probe_cache;

static int device_ordinal(void)
{
	const char *e = getenv("PASSFS_CUDA_DEVICE");
	if (e == NULL || *e == '\0')
		return 0;
	char *end;
	long v = strtol(e, &end, 10);
	return *end == '\0' && v >= 0 && v < 1024 ? (int)v : -1;
}

/* In the probe child: fills *p (the parent reads it whole). */
static void probe_in_child(struct gpu_cuda_info *p)
{
	char e[200];
	CUresult rc = cu.Init(0);
	if (rc != CUDA_SUCCESS) {
		cu_errstr(rc, e, sizeof e);
		snprintf(p->why, sizeof p->why, "cuInit failed (%s)", e);
		return;
	}
	int n = 0;
	if ((rc = cu.DeviceGetCount(&n)) != CUDA_SUCCESS || n <= 0) {
		if (rc != CUDA_SUCCESS)
			cu_errstr(rc, e, sizeof e);
		snprintf(p->why, sizeof p->why, "no GPU on this machine%s%s%s", rc ? " (" : "", rc ? e : "",
			 rc ? ")" : "");
		return;
	}
	if (p->ordinal < 0 || p->ordinal >= n) {
		snprintf(p->why, sizeof p->why, "PASSFS_CUDA_DEVICE=%s: this machine has %d GPU%s (0..%d)",
			 getenv("PASSFS_CUDA_DEVICE"), n, n == 1 ? "" : "s", n - 1);
		return;
	}
	CUdevice dev;
	if ((rc = cu.DeviceGet(&dev, p->ordinal)) != CUDA_SUCCESS) {
		cu_errstr(rc, e, sizeof e);
		snprintf(p->why, sizeof p->why, "cuDeviceGet(%d) failed (%s)", p->ordinal, e);
		return;
	}
	cu.DeviceGetName(p->name, (int)sizeof p->name, dev);
	cu.DeviceGetAttribute(&p->cc_major, CU_ATTR_CC_MAJOR, dev);
	cu.DeviceGetAttribute(&p->cc_minor, CU_ATTR_CC_MINOR, dev);
	cu.DeviceGetAttribute(&p->sm_count, CU_ATTR_MULTIPROCESSOR_COUNT, dev);
	cu.DeviceGetAttribute(&p->l2_bytes, CU_ATTR_L2_CACHE_SIZE, dev);
	cu.DeviceGetAttribute(&p->mem_clock_khz, CU_ATTR_MEMORY_CLOCK_RATE, dev);
	cu.DeviceGetAttribute(&p->mem_bus_bits, CU_ATTR_GLOBAL_MEMORY_BUS_WIDTH, dev);
	cu.DeviceGetAttribute(&p->smem_optin, CU_ATTR_MAX_SHARED_PER_BLOCK_OPTIN, dev);
	size_t mem = 0;
	cu.DeviceTotalMem(&mem, dev);
	p->total_mem = mem;
	cu.DeviceGetPCIBusId(p->pci, (int)sizeof p->pci, dev);
	cu.DriverGetVersion(&p->driver_version);
	p->count = n;
}

static void probe_run(struct gpu_cuda_info *p)
{
	memset(p, 0, sizeof *p);
	p->ordinal = device_ordinal();
	if (cu_load(p->why, sizeof p->why))
		return;
	int fds[2];
	if (pipe2(fds, O_CLOEXEC) != 0) {
		snprintf(p->why, sizeof p->why, "cannot probe the GPU: pipe: %s", strerror(errno));
		return;
	}
	fflush(stdout);
	fflush(stderr);
	pid_t pid = gpu_fork_worker(&fds[1], 1);
	if (pid < 0) {
		snprintf(p->why, sizeof p->why, "cannot probe the GPU: fork: %s", strerror(errno));
		close(fds[0]);
		close(fds[1]);
		return;
	}
	if (pid == 0) {
		close(fds[0]);
		struct gpu_cuda_info c = *p;
		probe_in_child(&c);
		const char *b = (const char *)&c;
		size_t left = sizeof c;
		while (left > 0) {
			ssize_t w = write(fds[1], b, left);
			if (w <= 0 && errno != EINTR)
				break;
			if (w > 0) {
				b += w;
				left -= (size_t)w;
			}
		}
		_exit(0);
	}
	close(fds[1]);
	char *b = (char *)p;
	size_t got = 0;
	double deadline = base_now_ms() + PROBE_TIMEOUT_MS;
	int timed_out = 0;
	while (got < sizeof *p) {
		double left = deadline - base_now_ms();
		if (left <= 0) {
			timed_out = 1;
			break;
		}
		struct pollfd pf = {fds[0], POLLIN, 0};
		int r = poll(&pf, 1, (int)left + 1);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			continue;
		ssize_t n = read(fds[0], b + got, sizeof *p - got);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		got += (size_t)n;
	}
	close(fds[0]);
	if (timed_out)
		kill(pid, SIGKILL);
	int st;
	base_waitpid(pid, &st);
	if (got != sizeof *p) {
		int ord = device_ordinal();
		memset(p, 0, sizeof *p);
		p->ordinal = ord;
		if (timed_out)
			snprintf(p->why, sizeof p->why, "the GPU probe (cuInit) did not answer within %d s",
				 PROBE_TIMEOUT_MS / 1000);
		else if (WIFSIGNALED(st))
			snprintf(p->why, sizeof p->why, "the GPU probe (cuInit) crashed: %s",
				 strsignal(WTERMSIG(st)));
		else
			snprintf(p->why, sizeof p->why, "the GPU probe (cuInit) failed");
	}
	p->why[sizeof p->why - 1] = '\0';
	p->name[sizeof p->name - 1] = '\0';
	p->pci[sizeof p->pci - 1] = '\0';
}

static void probe_get(struct gpu_cuda_info *out)
{
	pthread_mutex_lock(&probe_mu);
	if (!probe_done) {
		probe_run(&probe_cache);
		probe_done = 1;
	}
	*out = probe_cache;
	pthread_mutex_unlock(&probe_mu);
}

void gpu_cuda_info_get(struct gpu_cuda_info *out)
{
	probe_get(out);
}

int gpu_cuda_probe(char *why, size_t whylen)
{
	struct gpu_cuda_info p;
	probe_get(&p);
	if (p.count <= 0 && why != NULL)
		snprintf(why, whylen, "%s", p.why[0] ? p.why : "no GPU on this machine");
	return p.count > 0 ? p.count : 0;
}

/* --- the device -------------------------------------------------------------------- */

struct cuda_kernel {
	struct gpu_kernel base;
	char *name;             /* name expression */
	char *lowered;
	CUfunction fn;
	int n_params;           /* -1: unknown */
	size_t *param_size;
	long long param_bytes;
	int regs, shared, local, cnst, max_threads;
	size_t dyn_smem_set;    /* MAX_DYNAMIC_SHARED_SIZE_BYTES as set so far */
};

struct cuda_module {
	struct gpu_module base;
	CUmodule mod;
	int n;
	struct cuda_kernel *k;
	struct cuda_module *prev, *next;
};

struct cuda_block {
	CUdeviceptr p;
	size_t bytes;
	int live;
};

#define MAX_DRIVER_FDS 64
#define MAX_PENDING 4

struct cuda_dev {
	struct gpu_dev base;
	struct gpu_cuda_info info;
	pthread_mutex_t mu;
	CUdevice dev;
	CUcontext ctx;
	int init_failed;
	char init_err[400];
	int broken;
	char broken_msg[600];
	int want_trace, tracing;
	char trace_err[300];
	struct cuda_module *modules;
	struct cuda_block *blocks;
	size_t n_blocks, cap_blocks;
	char pending[MAX_PENDING][96];
	int n_pending;
	unsigned long long pending_launches;
	CUdeviceptr l2buf;
	size_t l2bytes;
	int l2_limit_done;
	unsigned char l2_byte;
	int fds[MAX_DRIVER_FDS];
	int n_fds;
	char lock_key[48];
	int eager_loading;      /* CUDA_MODULE_LOADING=EAGER at cuInit */
};

/* cuInit succeeded in this process: CUDA_MODULE_LOADING has been read. */
static int cu_init_done;

static struct cuda_dev *cuda_of(struct gpu_dev *d)
{
	return (struct cuda_dev *)d;
}

static void *dptr(CUdeviceptr p)
{
	return (void *)(uintptr_t)p;
}

static CUdeviceptr uptr(const void *p)
{
	return (CUdeviceptr)(uintptr_t)p;
}

/* Every device's driver descriptors, for the sandbox (gpu_driver_fds(NULL)). */
static pthread_mutex_t pfd_mu = PTHREAD_MUTEX_INITIALIZER;
static int proc_fds[MAX_DRIVER_FDS];
static int n_proc_fds;

void gpu_cuda_after_fork(void)
{
	pthread_mutex_init(&cu_mu, NULL);
	pthread_mutex_init(&probe_mu, NULL);
	pthread_mutex_init(&pfd_mu, NULL);
}

int gpu_cuda_process_fds(int *fds, int max)
{
	pthread_mutex_lock(&pfd_mu);
	int n = n_proc_fds < max ? n_proc_fds : max;
	memcpy(fds, proc_fds, sizeof(int) * (size_t)(n > 0 ? n : 0));
	pthread_mutex_unlock(&pfd_mu);
	return n;
}

static void note_process_fd(int fd)
{
	pthread_mutex_lock(&pfd_mu);
	int known = 0;
	for (int k = 0; k < n_proc_fds && !known; k++)
		known = proc_fds[k] == fd;
	if (!known && n_proc_fds < MAX_DRIVER_FDS)
		proc_fds[n_proc_fds++] = fd;
	pthread_mutex_unlock(&pfd_mu);
}

/* Descriptors in `after` and not in `before` become the driver's. */
static void note_driver_fds(struct cuda_dev *c, const int *before, int nb)
{
	int after[512];
	int na = gpu_list_open_fds(after, 512);
	for (int i = 0; i < na; i++) {
		int known = 0;
		for (int k = 0; k < nb && !known; k++)
			known = before[k] == after[i];
		for (int k = 0; k < c->n_fds && !known; k++)
			known = c->fds[k] == after[i];
		if (!known && c->n_fds < MAX_DRIVER_FDS) {
			c->fds[c->n_fds++] = after[i];
			note_process_fd(after[i]);
		}
	}
}

static __thread CUcontext tls_current;

/* err = msg, cut to fit (a stored message into a caller's buffer). */
static void set_err(char *err, size_t errlen, const char *msg)
{
	if (errlen == 0)
		return;
	size_t n = strnlen(msg, errlen - 1);
	memcpy(err, msg, n);
	err[n] = '\0';
}

static int mark_broken(struct cuda_dev *c, CUresult rc, const char *fmt_prefix)
{
	if (!c->broken && cu_sticky(rc)) {
		c->broken = 1;
		snprintf(c->broken_msg, sizeof c->broken_msg, "%s", fmt_prefix);
	}
	return -1;
}

/* Initialises CUDA in this process on first use.  Returns 0, or -1 with err. */
static int ready(struct cuda_dev *c, char *err, size_t errlen)
{
	if (c->broken) {
		set_err(err, errlen, c->broken_msg);
		return -1;
	}
	if (c->ctx != NULL) {
		if (tls_current != c->ctx) {
			CUresult rc = cu.CtxSetCurrent(c->ctx);
			if (rc != CUDA_SUCCESS) {
				char e[200];
				cu_errstr(rc, e, sizeof e);
				snprintf(err, errlen, "cuCtxSetCurrent failed: %s", e);
				return -1;
			}
			tls_current = c->ctx;
		}
		return 0;
	}
	if (c->init_failed) {
		set_err(err, errlen, c->init_err);
		return -1;
	}
	/* Kernels load with their module, not at first launch (which may be
	 * inside the pass worker's sandbox) - only where asked: it also makes
	 * a library such as cuBLAS load every kernel it has. */
	if (c->eager_loading)
		setenv("CUDA_MODULE_LOADING", "EAGER", 0);
	int before[512];
	int nb = gpu_list_open_fds(before, 512);
	char e[200];
	CUresult rc = cu.Init(0);
	if (rc == CUDA_SUCCESS) {
		__atomic_store_n(&cu_init_done, 1, __ATOMIC_RELAXED);
		rc = cu.DeviceGet(&c->dev, c->info.ordinal);
	}
	if (rc != CUDA_SUCCESS) {
		cu_errstr(rc, e, sizeof e);
		snprintf(c->init_err, sizeof c->init_err, "cuda backend: cannot initialise %.80s: %.200s", c->base.name, e);
		goto fail;
	}
	/* CUPTI first: activity records must be enabled before modules load. */
	if (c->want_trace) {
		if (cupti_start(c->trace_err, sizeof c->trace_err) == 0)
			c->tracing = 1;
	}
	CUcontext ctx = NULL;
	rc = cu.DevicePrimaryCtxRetain(&ctx, c->dev);
	if (rc == CUDA_SUCCESS)
		rc = cu.CtxSetCurrent(ctx);
	if (rc != CUDA_SUCCESS) {
		cu_errstr(rc, e, sizeof e);
		snprintf(c->init_err, sizeof c->init_err, "cuda backend: cannot create a context on %.80s: %.200s",
			 c->base.name, e);
		if (ctx != NULL)
			cu.DevicePrimaryCtxRelease(c->dev);
		goto fail;
	}
	c->ctx = ctx;
	tls_current = ctx;
	note_driver_fds(c, before, nb);
	return 0;
fail:
	c->init_failed = 1;
	set_err(err, errlen, c->init_err);
	return -1;
}

/* --- memory -------------------------------------------------------------------------- */

static size_t round_block(size_t n)
{
	if (n == 0)
		n = 1;
	if (n < (1u << 20))
		return (n + 511) & ~(size_t)511;
	size_t g = (size_t)2 << 20;
	return n > SIZE_MAX - g ? n : (n + g - 1) / g * g;
}

/* Frees the cached (not live) blocks. */
static void drop_cache(struct cuda_dev *c)
{
	size_t k = 0;
	for (size_t i = 0; i < c->n_blocks; i++) {
		if (!c->blocks[i].live)
			cu.MemFree(c->blocks[i].p);
		else
			c->blocks[k++] = c->blocks[i];
	}
	c->n_blocks = k;
}

static void *cuda_alloc(struct gpu_dev *d, size_t bytes)
{
	struct cuda_dev *c = cuda_of(d);
	char e[300];
	pthread_mutex_lock(&c->mu);
	if (ready(c, e, sizeof e)) {
		pthread_mutex_unlock(&c->mu);
		return NULL;
	}
	size_t n = round_block(bytes);
	for (size_t i = 0; i < c->n_blocks; i++)
		if (!c->blocks[i].live && c->blocks[i].bytes == n) {
			c->blocks[i].live = 1;
			pthread_mutex_unlock(&c->mu);
			return dptr(c->blocks[i].p);
		}
	if (c->n_blocks == c->cap_blocks) {
		size_t cap = c->cap_blocks ? c->cap_blocks * 2 : 64;
		struct cuda_block *b = realloc(c->blocks, cap * sizeof *b);
		if (b == NULL) {
			pthread_mutex_unlock(&c->mu);
			return NULL;
		}
		c->blocks = b;
		c->cap_blocks = cap;
	}
	CUdeviceptr p = 0;
	CUresult rc = cu.MemAlloc(&p, n);
	if (rc == CUDA_ERROR_OUT_OF_MEMORY) {
		drop_cache(c);
		rc = cu.MemAlloc(&p, n);
	}
	if (rc != CUDA_SUCCESS) {
		if (cu_sticky(rc)) {
			char m[400];
			cu_errstr(rc, e, sizeof e);
			snprintf(m, sizeof m, "cuMemAlloc: %s", e);
			mark_broken(c, rc, m);
		}
		pthread_mutex_unlock(&c->mu);
		return NULL;
	}
	c->blocks[c->n_blocks++] = (struct cuda_block){p, n, 1};
	pthread_mutex_unlock(&c->mu);
	return dptr(p);
}

static void cuda_free(struct gpu_dev *d, void *p)
{
	struct cuda_dev *c = cuda_of(d);
	pthread_mutex_lock(&c->mu);
	for (size_t i = 0; i < c->n_blocks; i++)
		if (c->blocks[i].live && c->blocks[i].p == uptr(p)) {
			c->blocks[i].live = 0;
			break;
		}
	pthread_mutex_unlock(&c->mu);
}

/* A failed copy or memset: sticky errors break the device, naming the
 * kernels that may have caused them. */
static void pending_names(struct cuda_dev *c, char *buf, size_t len)
{
	size_t n = 0;
	buf[0] = '\0';
	for (int i = 0; i < c->n_pending && n < len; i++)
		n += (size_t)snprintf(buf + n, len - n, "%s%s", i ? ", " : "", c->pending[i]);
	if (c->pending_launches > (unsigned long long)c->n_pending && n < len)
		snprintf(buf + n, len - n, " (%llu launches)", c->pending_launches);
}

static int fail_call(struct cuda_dev *c, CUresult rc, const char *what, char *err, size_t errlen)
{
	char e[200], m[600], names[300];
	cu_errstr(rc, e, sizeof e);
	pending_names(c, names, sizeof names);
	if (cu_sticky(rc) && names[0])
		snprintf(m, sizeof m, "%s (in a kernel launched since the last sync: %s; reported by %s)", e,
			 names, what);
	else
		snprintf(m, sizeof m, "%s: %s", what, e);
	mark_broken(c, rc, m);
	if (err != NULL)
		snprintf(err, errlen, "%s", m);
	return -1;
}

static int cuda_copy_to_device(struct gpu_dev *d, void *dst, const void *src, size_t bytes)
{
	struct cuda_dev *c = cuda_of(d);
	char e[300];
	if (ready(c, e, sizeof e))
		return -1;
	CUresult rc = cu.MemcpyHtoD(uptr(dst), src, bytes);
	return rc == CUDA_SUCCESS ? 0 : fail_call(c, rc, "cuMemcpyHtoD", NULL, 0);
}

static int cuda_copy_to_host(struct gpu_dev *d, void *dst, const void *src, size_t bytes)
{
	struct cuda_dev *c = cuda_of(d);
	char e[300];
	if (ready(c, e, sizeof e))
		return -1;
	CUresult rc = cu.MemcpyDtoH(dst, uptr(src), bytes);
	return rc == CUDA_SUCCESS ? 0 : fail_call(c, rc, "cuMemcpyDtoH", NULL, 0);
}

static int cuda_memset(struct gpu_dev *d, void *dst, int byte, size_t bytes)
{
	struct cuda_dev *c = cuda_of(d);
	char e[300];
	if (ready(c, e, sizeof e))
		return -1;
	CUresult rc = cu.MemsetD8(uptr(dst), (unsigned char)byte, bytes);
	return rc == CUDA_SUCCESS ? 0 : fail_call(c, rc, "cuMemsetD8", NULL, 0);
}

static int cuda_sync(struct gpu_dev *d, char *err, size_t errlen)
{
	struct cuda_dev *c = cuda_of(d);
	if (ready(c, err, errlen))
		return -1;
	CUresult rc = cu.CtxSynchronize();
	if (rc != CUDA_SUCCESS)
		return fail_call(c, rc, "cuCtxSynchronize", err, errlen);
	c->n_pending = 0;
	c->pending_launches = 0;
	return 0;
}

/* --- launches -------------------------------------------------------------------------- */

int gpu_cuda_check_args(const char *kname, int n_params, const size_t *param_sizes, int nargs,
			const size_t *sizes, char *err, size_t errlen)
{
	if (n_params < 0)
		return 0;
	if (nargs != n_params) {
		snprintf(err, errlen, "%s: kernel expects %d argument%s, got %d", kname, n_params,
			 n_params == 1 ? "" : "s", nargs);
		return -1;
	}
	for (int i = 0; sizes != NULL && param_sizes != NULL && i < nargs; i++)
		if (sizes[i] != param_sizes[i]) {
			snprintf(err, errlen, "%s: argument %d has %zu bytes on the host, the kernel's parameter "
				 "%zu on the device (host and device disagree on its type)", kname, i, sizes[i],
				 param_sizes[i]);
			return -1;
		}
	return 0;
}

static int cuda_launch(struct gpu_dev *d, struct gpu_kernel *gk, pf_dim3 grid, pf_dim3 block, size_t smem,
		       void **args, int nargs, const size_t *sizes, char *err, size_t errlen)
{
	struct cuda_dev *c = cuda_of(d);
	struct cuda_kernel *k = (struct cuda_kernel *)gk;
	if (ready(c, err, errlen))
		return -1;
	if (gpu_cuda_check_args(k->name, k->n_params, k->param_size, nargs, sizes, err, errlen))
		return -1;
	char e[200];
	CUresult rc;
	if (smem > k->dyn_smem_set) {
		/* What cudaFuncSetAttribute would do; a pass cannot call it. */
		rc = cu.FuncSetAttribute(k->fn, CU_FATTR_MAX_DYNAMIC_SHARED_SIZE_BYTES, (int)smem);
		if (rc != CUDA_SUCCESS) {
			cu_errstr(rc, e, sizeof e);
			snprintf(err, errlen, "%s: %zu bytes of dynamic shared memory refused (the device allows "
				 "%d bytes per block, less the kernel's %d static): %s", k->name, smem,
				 c->info.smem_optin, k->shared, e);
			return -1;
		}
		k->dyn_smem_set = smem;
	}
	rc = cu.LaunchKernel(k->fn, grid.x, grid.y, grid.z, block.x, block.y, block.z, (unsigned)smem, NULL,
			     nargs > 0 ? args : NULL, NULL);
	if (rc != CUDA_SUCCESS) {
		char what[160];
		snprintf(what, sizeof what, "%s: launch (grid %u,%u,%u, block %u,%u,%u, %zu bytes shared)",
			 k->name, grid.x, grid.y, grid.z, block.x, block.y, block.z, smem);
		return fail_call(c, rc, what, err, errlen);
	}
	int seen = 0;
	for (int i = 0; i < c->n_pending && !seen; i++)
		seen = strcmp(c->pending[i], k->name) == 0;
	if (!seen && c->n_pending < MAX_PENDING)
		snprintf(c->pending[c->n_pending++], sizeof c->pending[0], "%s", k->name);
	c->pending_launches++;
	return 0;
}

/* --- modules ------------------------------------------------------------------------------ */

static void module_release(struct cuda_dev *c, struct cuda_module *m)
{
	for (int i = 0; i < m->n; i++) {
		free(m->k[i].name);
		free(m->k[i].lowered);
		free(m->k[i].param_size);
	}
	free(m->k);
	if (m->mod != NULL && !c->broken)
		cu.ModuleUnload(m->mod);
	free(m);
}

static void cuda_module_free(struct gpu_module *gm)
{
	struct cuda_module *m = (struct cuda_module *)gm;
	struct cuda_dev *c = cuda_of(gm->dev);
	pthread_mutex_lock(&c->mu);
	if (m->prev)
		m->prev->next = m->next;
	else
		c->modules = m->next;
	if (m->next)
		m->next->prev = m->prev;
	pthread_mutex_unlock(&c->mu);
	module_release(c, m);
}

static struct gpu_kernel *cuda_module_kernel(struct gpu_module *gm, const char *name)
{
	struct cuda_module *m = (struct cuda_module *)gm;
	for (int i = 0; i < m->n; i++)
		if (gpu_same_name_expr(m->k[i].name, name))
			return &m->k[i].base;
	return NULL;
}

static struct gpu_kernel *cuda_module_kernel_at(struct gpu_module *gm, int i)
{
	struct cuda_module *m = (struct cuda_module *)gm;
	return i >= 0 && i < m->n ? &m->k[i].base : NULL;
}

static int cuda_module_kernel_count(struct gpu_module *gm)
{
	return ((struct cuda_module *)gm)->n;
}

static void cuda_kernel_info(struct gpu_kernel *gk, struct gpu_kernel_info *out)
{
	struct cuda_kernel *k = (struct cuda_kernel *)gk;
	*out = (struct gpu_kernel_info){
		.name = k->name, .lowered = k->lowered, .num_regs = k->regs, .shared_bytes = k->shared,
		.local_bytes = k->local, .const_bytes = k->cnst, .max_threads_per_block = k->max_threads,
		.n_params = k->n_params, .param_bytes = k->param_bytes,
	};
}

/* Reads a kernel's attributes and parameter layout. */
static void kernel_describe(struct cuda_kernel *k)
{
	int v;
	k->regs = cu.FuncGetAttribute(&v, CU_FATTR_NUM_REGS, k->fn) == CUDA_SUCCESS ? v : -1;
	k->shared = cu.FuncGetAttribute(&v, CU_FATTR_SHARED_SIZE_BYTES, k->fn) == CUDA_SUCCESS ? v : -1;
	k->local = cu.FuncGetAttribute(&v, CU_FATTR_LOCAL_SIZE_BYTES, k->fn) == CUDA_SUCCESS ? v : -1;
	k->cnst = cu.FuncGetAttribute(&v, CU_FATTR_CONST_SIZE_BYTES, k->fn) == CUDA_SUCCESS ? v : -1;
	k->max_threads = cu.FuncGetAttribute(&v, CU_FATTR_MAX_THREADS_PER_BLOCK, k->fn) == CUDA_SUCCESS ? v : -1;
	/* Without an opt-in a launch may ask for 48 KiB less the kernel's
	 * static shared memory (the attribute's default), not 48 KiB. */
	if (cu.FuncGetAttribute(&v, CU_FATTR_MAX_DYNAMIC_SHARED_SIZE_BYTES, k->fn) == CUDA_SUCCESS && v >= 0)
		k->dyn_smem_set = (size_t)v;
	else {
		size_t st = k->shared > 0 ? (size_t)k->shared : 0;
		k->dyn_smem_set = st < DEFAULT_DYN_SMEM ? DEFAULT_DYN_SMEM - st : 0;
	}
	k->n_params = -1;
	k->param_bytes = -1;
	if (cu.FuncGetParamInfo == NULL)
		return;
	size_t sizes[256], end = 0;
	int n = 0;
	for (; n < 256; n++) {
		size_t off = 0, sz = 0;
		CUresult rc = cu.FuncGetParamInfo(k->fn, (size_t)n, &off, &sz);
		if (rc == CUDA_ERROR_INVALID_VALUE)
			break;                  /* past the last parameter */
		if (rc != CUDA_SUCCESS)
			return;                 /* no parameter list: the launch is not checked */
		sizes[n] = sz;
		if (off + sz > end)
			end = off + sz;
	}
	if (n == 256)
		return;
	k->param_size = malloc(sizeof(size_t) * (size_t)(n ? n : 1));
	if (k->param_size == NULL)
		return;
	memcpy(k->param_size, sizes, sizeof(size_t) * (size_t)n);
	k->n_params = n;
	k->param_bytes = (long long)end;
}

static char *dup_or_empty(const char *s)
{
	return strdup(s ? s : "");
}

static int cuda_module_load(struct gpu_dev *d, const char *label, const void *image, size_t image_size,
			    const char *const *names, const char *const *lowered, int n, struct gpu_module **out,
			    char **log, char *err, size_t errlen)
{
	struct cuda_dev *c = cuda_of(d);
	(void)image_size;       /* a cubin is an ELF, PTX is NUL-terminated: both self-delimiting */
	if (ready(c, err, errlen))
		return -1;
	char *elog = calloc(1, JIT_LOG_BYTES), *ilog = calloc(1, JIT_LOG_BYTES);
	struct cuda_module *m = calloc(1, sizeof *m);
	if (elog == NULL || ilog == NULL || m == NULL ||
	    (n > 0 && (m->k = calloc((size_t)n, sizeof *m->k)) == NULL)) {
		free(elog);
		free(ilog);
		free(m);
		snprintf(err, errlen, "%s: out of memory", label);
		return -1;
	}
	m->base.dev = d;
	int opts[4] = {CU_JIT_ERROR_LOG_BUFFER, CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES, CU_JIT_INFO_LOG_BUFFER,
		       CU_JIT_INFO_LOG_BUFFER_SIZE_BYTES};
	void *vals[4] = {elog, (void *)(uintptr_t)(JIT_LOG_BYTES - 1), ilog,
			 (void *)(uintptr_t)(JIT_LOG_BYTES - 1)};
	CUresult rc = cu.ModuleLoadDataEx(&m->mod, image, 4, opts, vals);
	if (rc != CUDA_SUCCESS) {
		char e[200];
		cu_errstr(rc, e, sizeof e);
		snprintf(err, errlen, "%s: the device cannot load the compiled code: %s%s%.*s", label, e,
			 elog[0] ? ": " : "", (int)strcspn(elog, "\n"), elog);
		if (log != NULL)
			*log = dup_or_empty(elog);
		free(elog);
		free(ilog);
		m->mod = NULL;
		mark_broken(c, rc, err);
		module_release(c, m);
		return -1;
	}
	free(elog);
	free(ilog);
	for (int i = 0; i < n; i++) {
		struct cuda_kernel *k = &m->k[i];
		k->base.mod = &m->base;
		k->name = strdup(names[i]);
		k->lowered = strdup(lowered[i] ? lowered[i] : "");
		m->n = i + 1;
		if (k->name == NULL || k->lowered == NULL) {
			snprintf(err, errlen, "%s: out of memory", label);
			module_release(c, m);
			return -1;
		}
		rc = cu.ModuleGetFunction(&k->fn, m->mod, k->lowered);
		if (rc != CUDA_SUCCESS) {
			char e[200];
			cu_errstr(rc, e, sizeof e);
			snprintf(err, errlen, "%s: the compiled code has no kernel '%s' (%s): %s", label, names[i],
				 k->lowered, e);
			module_release(c, m);
			return -1;
		}
		kernel_describe(k);
	}
	pthread_mutex_lock(&c->mu);
	m->next = c->modules;
	if (c->modules)
		c->modules->prev = m;
	c->modules = m;
	pthread_mutex_unlock(&c->mu);
	*out = &m->base;
	return 0;
}

/* --- the compiled-module cache ------------------------------------------------------------- */


/* The cache directory (created 0700), or NULL when disabled or unusable. */
static const char *cache_dir(char *buf, size_t len)
{
	return gpu_cache_dir("modules", buf, len) == 0 ? buf : NULL;
}

static void cache_path(const char *dir, const char *src, const char *const *names, int n, const char *arch,
		       char *out, size_t len)
{
	uint64_t h1 = BASE_FNV1A_BASIS, h2 = 0x84222325cbf29ce4ull;
	const char *ver = nvrtc_version();
	/* what else the image depends on: passfs.h and the headers beside it
	 * (pre-included), and passfs's version (its NVRTC options) */
	static uint64_t api;
	if (api == 0)
		api = hostcc_api_hash(NULL) | 1;
	char apis[40];
	snprintf(apis, sizeof apis, "%016llx", (unsigned long long)api);
	const char *parts[5] = {src, arch, ver, apis, PASSFS_VERSION};
	for (int i = 0; i < 5; i++) {
		h1 = base_fnv1a_step(h1, parts[i], strlen(parts[i]) + 1);
		h2 = base_fnv1a_step(h2, parts[i], strlen(parts[i]) + 1);
	}
	for (int i = 0; i < n; i++) {
		h1 = base_fnv1a_step(h1, names[i], strlen(names[i]) + 1);
		h2 = base_fnv1a_step(h2 ^ (uint64_t)i, names[i], strlen(names[i]) + 1);
	}
	snprintf(out, len, "%s/%016llx%016llx.mod", dir, (unsigned long long)h1, (unsigned long long)h2);
}

/* File: "passfs-module 1\n" n "\n" then per name "<expr>\t<lowered>\n",
 * then "<cubin|ptx> <bytes>\n" and the image.  Returns 0 with *image and
 * *lowered (n strings) malloc'd when the entry exists and names match. */
static int cache_read(const char *path, const char *const *names, int n, void **image, size_t *size,
		      int *is_cubin, char ***lowered)
{
	FILE *f = fopen(path, "rb");
	if (f == NULL)
		return -1;
	char line[4096];
	int rc = -1, count = -1;
	char **low = calloc((size_t)(n ? n : 1), sizeof(char *));
	if (low == NULL || fgets(line, sizeof line, f) == NULL || strcmp(line, "passfs-module 1\n") != 0 ||
	    fscanf(f, "%d\n", &count) != 1 || count != n)
		goto out;
	for (int i = 0; i < n; i++) {
		if (fgets(line, sizeof line, f) == NULL)
			goto out;
		line[strcspn(line, "\n")] = '\0';
		char *tab = strchr(line, '\t');
		if (tab == NULL)
			goto out;
		*tab = '\0';
		if (strcmp(line, names[i]) != 0 || (low[i] = strdup(tab + 1)) == NULL)
			goto out;
	}
	char kind[8];
	size_t bytes;
	if (fscanf(f, "%7s %zu", kind, &bytes) != 2 || fgetc(f) != '\n' || bytes == 0 || bytes > (256u << 20))
		goto out;
	*image = malloc(bytes + 1);
	if (*image == NULL)
		goto out;
	if (fread(*image, 1, bytes, f) != bytes) {
		free(*image);
		*image = NULL;
		goto out;
	}
	((char *)*image)[bytes] = '\0';
	*size = bytes;
	*is_cubin = strcmp(kind, "cubin") == 0;
	*lowered = low;
	low = NULL;
	rc = 0;
out:
	if (low != NULL)
		for (int i = 0; i < n; i++)
			free(low[i]);
	free(low);
	fclose(f);
	return rc;
}

static void cache_write(const char *path, const char *const *names, const char *const *lowered, int n,
			const void *image, size_t size, int is_cubin)
{
	struct base_atomic a;
	if (base_atomic_open(&a, path, "", 0600, 0) != 0)
		return;
	int dfd = dup(a.fd);
	FILE *f = dfd >= 0 ? fdopen(dfd, "wb") : NULL;
	if (f == NULL) {
		if (dfd >= 0)
			close(dfd);
		base_atomic_abort(&a);
		return;
	}
	fprintf(f, "passfs-module 1\n%d\n", n);
	for (int i = 0; i < n; i++)
		fprintf(f, "%s\t%s\n", names[i], lowered[i]);
	fprintf(f, "%s %zu\n", is_cubin ? "cubin" : "ptx", size);
	int ok = fwrite(image, 1, size, f) == size;
	if (fclose(f) != 0 || !ok)
		base_atomic_abort(&a);
	else
		base_atomic_commit(&a, 0);
}

static int cuda_module_compile(struct gpu_dev *d, const char *label, const char *src, const char *const *names,
			       int n_names, struct gpu_module **out, char **log, char *err, size_t errlen)
{
	struct cuda_dev *c = cuda_of(d);
	if (ready(c, err, errlen))
		return -1;
	for (int i = 0; i < n_names; i++)
		if (strchr(names[i], '\n') != NULL || strchr(names[i], '\t') != NULL) {
			snprintf(err, errlen, "%s: kernel name '%s' has a tab or newline", label, names[i]);
			return -1;
		}
	char why[300];
	if (!nvrtc_available(why, sizeof why)) {
		snprintf(err, errlen, "%s: the cuda backend needs NVRTC: %s", label, why);
		return -1;
	}
	char dirbuf[4096], path[4300];
	const char *dir = cache_dir(dirbuf, sizeof dirbuf);
	if (dir != NULL) {
		cache_path(dir, src, names, n_names, d->arch, path, sizeof path);
		void *image = NULL;
		size_t size = 0;
		int is_cubin = 0;
		char **low = NULL;
		if (cache_read(path, names, n_names, &image, &size, &is_cubin, &low) == 0) {
			int rc = cuda_module_load(d, label, image, size, names, (const char *const *)low, n_names, out,
						  log, err, errlen);
			free(image);
			for (int i = 0; i < n_names; i++)
				free(low[i]);
			free(low);
			if (rc == 0)
				return 0;
			if (c->broken)
				return -1;
			unlink(path);   /* stale or damaged: compile afresh */
		}
	}
	struct nvrtc_request nr = {.label = label, .src = src, .arch = d->arch, .include_dir = hostcc_include_dir(),
				   .pre_include = "passfs.h", .names = names, .n_names = n_names, .want_cubin = 1};
	struct nvrtc_output no;
	enum nvrtc_status ns = nvrtc_compile(&nr, &no, err, errlen);
	if (ns != NVRTC_GATE_OK) {
		if (log != NULL)
			*log = dup_or_empty(no.log);
		nvrtc_output_free(&no);
		return -1;
	}
	const void *image = no.cubin ? no.cubin : no.ptx;
	size_t size = no.cubin ? no.cubin_size : strlen(no.ptx) + 1;
	int rc = cuda_module_load(d, label, image, size, names, (const char *const *)no.lowered, n_names, out, log,
				  err, errlen);
	if (rc != 0 && no.cubin != NULL && !c->broken) {
		/* a cubin the driver refuses: its JIT of the PTX may still do */
		if (log != NULL) {
			free(*log);
			*log = NULL;
		}
		image = no.ptx;
		size = strlen(no.ptx) + 1;
		free(no.cubin);
		no.cubin = NULL;
		rc = cuda_module_load(d, label, image, size, names, (const char *const *)no.lowered, n_names, out,
				      log, err, errlen);
	}
	if (rc == 0 && dir != NULL)
		cache_write(path, names, (const char *const *)no.lowered, n_names, image,
			    no.cubin ? no.cubin_size : strlen(no.ptx), no.cubin != NULL);
	nvrtc_output_free(&no);
	return rc;
}

/* --- benchmark support ---------------------------------------------------------------------- */

static int cuda_trace_enable(struct gpu_dev *d, char *err, size_t errlen)
{
	struct cuda_dev *c = cuda_of(d);
	if (c->tracing)
		return 0;
	if (c->ctx == NULL) {
		/* Enabled at initialisation, before any module; fail now if it
		 * cannot be. */
		if (cupti_load(err, errlen))
			return -1;
		c->want_trace = 1;
		return 0;
	}
	if (cupti_start(err, errlen))
		return -1;
	c->tracing = 1;
	note_driver_fds(c, NULL, 0);
	return 0;
}

/* The device is up and tracing: 0, else -1 with the reason. */
static int tracing_ready(struct cuda_dev *c, char *err, size_t errlen)
{
	if (ready(c, err, errlen))
		return -1;
	if (!c->tracing) {
		snprintf(err, errlen, "GPU timing is not enabled%s%s", c->trace_err[0] ? ": " : " (call gpu_trace_enable)",
			 c->trace_err);
		return -1;
	}
	return 0;
}

static int cuda_trace_begin(struct gpu_dev *d, char *err, size_t errlen)
{
	if (tracing_ready(cuda_of(d), err, errlen))
		return -1;
	return cupti_window_begin(err, errlen);
}

static int cuda_trace_pause(struct gpu_dev *d, char *err, size_t errlen)
{
	if (tracing_ready(cuda_of(d), err, errlen))
		return -1;
	return cupti_pause(err, errlen);
}

static int cuda_trace_end(struct gpu_dev *d, struct gpu_trace *out, char *err, size_t errlen)
{
	struct cuda_dev *c = cuda_of(d);
	memset(out, 0, sizeof *out);
	if (cuda_sync(d, err, errlen))
		return -1;
	if (!c->tracing) {
		snprintf(err, errlen, "GPU timing is not enabled");
		return -1;
	}
	return cupti_window_end(out, err, errlen);
}

size_t gpu_l2_flush_bytes(long long l2_bytes)
{
	if (l2_bytes <= 0)
		return (size_t)256 << 20;
	unsigned long long b = (unsigned long long)l2_bytes * 2;
	unsigned long long mib = 1ull << 20;
	b = (b + mib - 1) / mib * mib;
	if (b < 8 * mib)
		b = 8 * mib;
	return (size_t)b;
}

static int cuda_l2_flush(struct gpu_dev *d, char *err, size_t errlen)
{
	struct cuda_dev *c = cuda_of(d);
	if (ready(c, err, errlen))
		return -1;
	CUresult rc;
	if (c->l2buf == 0) {
		c->l2bytes = gpu_l2_flush_bytes(c->info.l2_bytes);
		rc = cu.MemAlloc(&c->l2buf, c->l2bytes);
		if (rc != CUDA_SUCCESS) {
			c->l2buf = 0;
			char e[200];
			cu_errstr(rc, e, sizeof e);
			snprintf(err, errlen, "L2 flush: cannot allocate %zu bytes: %s", c->l2bytes, e);
			return -1;
		}
	}
	if (!c->l2_limit_done) {
		/* Lines marked persisting survive a streaming flush: no
		 * persisting set-aside at all (unsupported before Ampere: fine). */
		cu.CtxSetLimit(CU_LIMIT_PERSISTING_L2_CACHE_SIZE, 0);
		c->l2_limit_done = 1;
	}
	if (cu.CtxResetPersistingL2Cache != NULL) {
		rc = cu.CtxResetPersistingL2Cache();
		if (rc != CUDA_SUCCESS && cu_sticky(rc))
			return fail_call(c, rc, "cuCtxResetPersistingL2Cache", err, errlen);
	}
	c->l2_byte++;
	rc = cu.MemsetD8(c->l2buf, c->l2_byte, c->l2bytes);
	return rc == CUDA_SUCCESS ? 0 : fail_call(c, rc, "L2 flush (cuMemsetD8)", err, errlen);
}

static int cuda_driver_fds(struct gpu_dev *d, int *fds, int max)
{
	struct cuda_dev *c = cuda_of(d);
	int n = c->n_fds < max ? c->n_fds : max;
	memcpy(fds, c->fds, sizeof(int) * (size_t)(n > 0 ? n : 0));
	return n;
}

static const char *cuda_lock_key(struct gpu_dev *d)
{
	return cuda_of(d)->lock_key;
}

static int cuda_eager_loading(struct gpu_dev *d, char *err, size_t errlen)
{
	struct cuda_dev *c = cuda_of(d);
	if (c->ctx != NULL || __atomic_load_n(&cu_init_done, __ATOMIC_RELAXED)) {
		snprintf(err, errlen, "cuda backend: CUDA is already initialised in this process: too late to "
			 "load kernels with their modules");
		return -1;
	}
	c->eager_loading = 1;
	return 0;
}

int gpu_lockfile_acquire(const char *path, int timeout_ms, const int *cancel, char *err, size_t errlen)
{
	int fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0666);
	if (fd < 0) {
		snprintf(err, errlen, "GPU lock %s: %s", path, strerror(errno));
		return -1;
	}
	/* Every user's passfs shares the lock: make it writable for all when
	 * we created it (umask); someone else's file stays as it is. */
	struct stat st;
	if (fstat(fd, &st) == 0 && st.st_uid == geteuid() && (st.st_mode & 0666) != 0666)
		fchmod(fd, 0666);
	int rc = base_flock_wait(fd, timeout_ms, cancel);
	if (rc == 0)
		return fd;
	close(fd);
	if (rc == -ECANCELED)
		snprintf(err, errlen, "cancelled");
	else if (rc == -EWOULDBLOCK)
		snprintf(err, errlen, "the GPU is busy: another benchmark held %s for over %d ms", path, timeout_ms);
	else
		snprintf(err, errlen, "GPU lock %s: %s", path, strerror(-rc));
	return -1;
}

/* --- open / close -------------------------------------------------------------------------------- */

static void cuda_close(struct gpu_dev *d)
{
	struct cuda_dev *c = cuda_of(d);
	if (c->ctx != NULL) {
		char e[300];
		if (ready(c, e, sizeof e) == 0)
			cu.CtxSynchronize();
		if (c->tracing) {
			struct gpu_trace t;
			cupti_window_end(&t, e, sizeof e);
		}
	}
	while (c->modules != NULL) {
		struct cuda_module *m = c->modules;
		c->modules = m->next;
		module_release(c, m);
	}
	if (c->ctx != NULL && !c->broken) {
		for (size_t i = 0; i < c->n_blocks; i++)
			cu.MemFree(c->blocks[i].p);
		if (c->l2buf)
			cu.MemFree(c->l2buf);
	}
	free(c->blocks);
	if (c->ctx != NULL) {
		cu.DevicePrimaryCtxRelease(c->dev);
		if (tls_current == c->ctx)
			tls_current = NULL;
	}
	pthread_mutex_destroy(&c->mu);
	free(c);
}

static const struct gpu_ops cuda_ops = {
	.close = cuda_close,
	.module_compile = cuda_module_compile,
	.module_free = cuda_module_free,
	.module_kernel = cuda_module_kernel,
	.module_kernel_at = cuda_module_kernel_at,
	.module_kernel_count = cuda_module_kernel_count,
	.launch = cuda_launch,
	.alloc = cuda_alloc,
	.free = cuda_free,
	.copy_to_device = cuda_copy_to_device,
	.copy_to_host = cuda_copy_to_host,
	.memset = cuda_memset,
	.sync = cuda_sync,
	.run_blocks = NULL,
	.module_load = cuda_module_load,
	.kernel_info = cuda_kernel_info,
	.trace_enable = cuda_trace_enable,
	.trace_begin = cuda_trace_begin,
	.trace_end = cuda_trace_end,
	.trace_pause = cuda_trace_pause,
	.l2_flush = cuda_l2_flush,
	.driver_fds = cuda_driver_fds,
	.lock_key = cuda_lock_key,
	.eager_loading = cuda_eager_loading,
};

int gpu_cuda_open(struct gpu_dev **out, char *err, size_t errlen)
{
	*out = NULL;
	struct gpu_cuda_info p;
	probe_get(&p);
	if (p.count <= 0) {
		snprintf(err, errlen, "--backend cuda: no CUDA driver (libcuda.so.1) or no GPU on this machine (%s)",
			 p.why[0] ? p.why : "no GPU");
		return -1;
	}
	struct cuda_dev *c = calloc(1, sizeof *c);
	if (c == NULL) {
		snprintf(err, errlen, "cuda backend: out of memory");
		return -1;
	}
	pthread_mutex_init(&c->mu, NULL);
	c->info = p;
	c->base.ops = &cuda_ops;
	c->base.backend = GPU_BACKEND_CUDA;
	snprintf(c->base.name, sizeof c->base.name, "%s", p.name[0] ? p.name : "NVIDIA GPU");
	gpu_cuda_target_arch(p.cc_major, p.cc_minor, c->base.arch, sizeof c->base.arch, c->base.arch_note,
			     sizeof c->base.arch_note);
	/* The lock names the GPU itself (CUDA_VISIBLE_DEVICES may renumber it). */
	if (p.pci[0]) {
		snprintf(c->lock_key, sizeof c->lock_key, "%s", p.pci);
		for (char *s = c->lock_key; *s; s++)
			if (*s == ':' || *s == '/')
				*s = '_';
	} else {
		snprintf(c->lock_key, sizeof c->lock_key, "%d", p.ordinal);
	}
	*out = &c->base;
	return 0;
}
