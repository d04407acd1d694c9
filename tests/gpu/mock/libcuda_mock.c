/* libcuda_mock.c - a stand-in for libcuda.so.1 for tests on machines without
 * a GPU (PASSFS_LIBCUDA=<this library>).  "Device" memory is host memory,
 * copies are memcpy, kernels do not run (a launch is recorded and checked:
 * the function must come from a loaded module), so outputs keep whatever was
 * copied in.  What it lets a test check without a GPU: the probe, lazy
 * initialisation in each worker, module loading (a lowered name must occur
 * in the PTX or cubin loaded), the kernel table mapping and argument
 * packing, the launch-time argument check (cuFuncGetParamInfo answers from
 * the kernel's parameters in the cubin or PTX), the module loading each
 * worker asks for (CUDA_MODULE_LOADING, logged at cuInit), the PTX target
 * on a newer GPU (MOCK_CUDA_CC), the sandbox's allowance for driver
 * descriptors (cuInit opens two descriptors on /dev/null, and
 * cuCtxSynchronize and cuLaunchKernel issue an ioctl on one, as a driver
 * would), and sticky faults:
 *
 *   MOCK_CUDA_FAULT=substring   cuCtxSynchronize fails with
 *                               CUDA_ERROR_ILLEGAL_ADDRESS (700) when a kernel
 *                               whose lowered name contains it was launched
 *                               since the last sync; every call after fails.
 *   MOCK_CUDA_REOPEN=N          the first launch of each process opens
 *                               /dev/null N more times and keeps them (the
 *                               NVIDIA driver opens a fresh /dev/nvidiactl
 *                               for each host mapping of its memory); a
 *                               failed open fails the launch with
 *                               CUDA_ERROR_OPERATING_SYSTEM (304).
 *   MOCK_CUDA_LATE_FD=1         the first module load opens /dev/zero, and
 *                               launches and syncs issue an ioctl on it too
 *                               (a driver opens descriptors after cuInit).
 *   MOCK_CUDA_FDS=N             cuInit opens N more descriptors on /dev/null
 *                               and closes every third (a real driver holds
 *                               dozens, with gaps); launches and syncs issue
 *                               an ioctl on the last one.
 *   MOCK_CUDA_SYSCALL=1         every launch also calls getsid through
 *                               libc's syscall(), a call no sandbox allows.
 *   MOCK_CUDA_CC=MAJOR.MINOR    the compute capability reported (9.0).
 *   MOCK_CUDA_LOG=path          appends one line per launch ("launch NAME
 *                               grid block smem pid PID"), per kernel looked
 *                               up in a loaded module ("function NAME from
 *                               cubin|ptx pid PID"), per process that
 *                               initialises CUDA ("init PID module_loading=
 *                               VALUE": CUDA_MODULE_LOADING at cuInit, or
 *                               "(unset)") and per memset of 8 MiB or more
 *                               ("memset BYTES": the L2 flush of --cold).
 *
 * It is also a mock CUPTI (PASSFS_CUPTI_LIB=<this library>: the same loaded
 * object, so it sees the launches): once the activity kinds are enabled,
 * every launch, copy and memset appends a record at the offsets passfs
 * reads (kind @0, start @16, end @24, stream @48 for kernels and @40 for
 * copies, name pointer @104), stamped with CLOCK_MONOTONIC nanoseconds; a
 * kernel lasts 2 us, copies 1 us, and the flush hands the buffer to the
 * completion callback.
 *
 *   MOCK_CUPTI_SLOW=substr:ms   kernels whose name contains substr last ms
 *                               milliseconds (longer than the host's timed
 *                               window: work the host timer missed).
 *
 * Built by tests/cli/cuda_mock.sh: cc -shared -fPIC -o libcuda_mock.so this. */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "mock_env.h"

typedef int CUresult;
typedef unsigned long long CUdeviceptr;

#define MAX_FUNCS 256

struct mock_module {
	char *image;
	size_t len;
};

#define MAX_PARAMS 64

struct mock_func {
	char name[256];
	struct mock_module *mod;
	int static_smem;        /* the kernel's __shared__ bytes, from its image */
	int dyn_max;            /* MAX_DYNAMIC_SHARED_SIZE_BYTES */
	int n_params;           /* from its image; -1: not found there */
	size_t param_off[MAX_PARAMS], param_size[MAX_PARAMS];
};

#define MOCK_SMEM_OPTIN (227 * 1024)    /* an H100's/H200's per-block maximum */

/* A kernel's static shared memory, as the driver knows it: in a cubin the
 * size of section .nv.shared.NAME; in PTX the sized .shared declarations in
 * the body of `.entry NAME`. */
static int static_smem_of(const struct mock_module *m, const char *name)
{
	const char *p = m->image;
	size_t nl = strlen(name);
	if (m->len > 0x40 && memcmp(p, "\177ELF", 4) == 0) {
		uint64_t shoff;
		uint16_t shentsize, shnum, shstrndx;
		memcpy(&shoff, p + 0x28, 8);
		memcpy(&shentsize, p + 0x3a, 2);
		memcpy(&shnum, p + 0x3c, 2);
		memcpy(&shstrndx, p + 0x3e, 2);
		if (shstrndx >= shnum || shoff + (uint64_t)shentsize * shnum > m->len)
			return 0;
		uint64_t stroff;
		memcpy(&stroff, p + shoff + (uint64_t)shentsize * shstrndx + 0x18, 8);
		for (unsigned i = 0; i < shnum; i++) {
			const char *sh = p + shoff + (uint64_t)shentsize * i;
			uint32_t nm;
			uint64_t size;
			memcpy(&nm, sh, 4);
			memcpy(&size, sh + 0x20, 8);
			if (stroff + nm + 11 + nl >= m->len)
				continue;
			const char *sn = p + stroff + nm;
			if (strncmp(sn, ".nv.shared.", 11) == 0 && strcmp(sn + 11, name) == 0)
				return (int)size;
		}
		return 0;
	}
	char key[300];
	snprintf(key, sizeof key, ".entry %s(", name);
	const char *e = strstr(p, key);
	if (e == NULL)
		return 0;
	const char *body = strstr(e, "\n{"), *end = body ? strstr(body, "\n}") : NULL;
	int total = 0;
	for (const char *q = body; q != NULL && q < end; q = strstr(q + 1, ".shared ")) {
		if (q[-1] == '.' || q[-1] == '_')
			continue;
		const char *nlp = strchr(q, '\n'), *br = strchr(q, '[');
		if (br != NULL && (nlp == NULL || br < nlp) && br[1] != ']' && q > body)
			total += atoi(br + 1);
	}
	return total;
}

/* The ELF section named `name` of a cubin: its bytes and size, or NULL. */
static const char *elf_section(const struct mock_module *m, const char *name, uint64_t *size)
{
	const char *p = m->image;
	uint64_t shoff;
	uint16_t shentsize, shnum, shstrndx;
	memcpy(&shoff, p + 0x28, 8);
	memcpy(&shentsize, p + 0x3a, 2);
	memcpy(&shnum, p + 0x3c, 2);
	memcpy(&shstrndx, p + 0x3e, 2);
	if (shstrndx >= shnum || shoff + (uint64_t)shentsize * shnum > m->len)
		return NULL;
	uint64_t stroff;
	memcpy(&stroff, p + shoff + (uint64_t)shentsize * shstrndx + 0x18, 8);
	size_t nl = strlen(name);
	for (unsigned i = 0; i < shnum; i++) {
		const char *sh = p + shoff + (uint64_t)shentsize * i;
		uint32_t nm;
		uint64_t off, sz;
		memcpy(&nm, sh, 4);
		memcpy(&off, sh + 0x18, 8);
		memcpy(&sz, sh + 0x20, 8);
		if (stroff + nm + nl >= m->len || strcmp(p + stroff + nm, name) != 0)
			continue;
		if (off + sz > m->len)
			return NULL;
		*size = sz;
		return p + off;
	}
	return NULL;
}

/* The bytes of one PTX parameter type (".u64", ".f32", ".b8", ...), 0 if none. */
static size_t ptx_type_bytes(const char *t, size_t n)
{
	if (n < 3 || t[0] != '.' || strchr("usfb", t[1]) == NULL)
		return 0;
	int bits = atoi(t + 2);
	return bits == 8 || bits == 16 || bits == 32 || bits == 64 ? (size_t)bits / 8 : 0;
}

/* A kernel's parameters, as the driver knows them (cuFuncGetParamInfo): in
 * a cubin the EIATTR_KPARAM_INFO records of section .nv.info.NAME (format
 * 4, attribute 0x17: index u32, ordinal u16, offset u16, then a word whose
 * top 14 bits are the size); in PTX the .param declarations of `.entry
 * NAME(...)` (".param .align 8 .b8 NAME_param_2[24]"), laid out in order at
 * their alignment.  Sets f->n_params (-1 when the kernel is not found). */
static void params_of(struct mock_func *f)
{
	const struct mock_module *m = f->mod;
	f->n_params = -1;
	if (m->len > 0x40 && memcmp(m->image, "\177ELF", 4) == 0) {
		char sec[300];
		uint64_t size = 0;
		snprintf(sec, sizeof sec, ".nv.info.%s", f->name);
		const unsigned char *q = (const unsigned char *)elf_section(m, sec, &size);
		if (q == NULL)
			return;
		int n = 0;
		for (uint64_t at = 0; at + 4 <= size;) {
			unsigned fmt = q[at], attr = q[at + 1];
			uint16_t vsize;
			memcpy(&vsize, q + at + 2, 2);
			uint64_t len = fmt == 4 ? 4 + (uint64_t)vsize : 4;
			if (at + len > size)
				break;
			if (fmt == 4 && attr == 0x17 && vsize >= 12) {
				uint16_t ordinal, offset;
				uint32_t word;
				memcpy(&ordinal, q + at + 8, 2);
				memcpy(&offset, q + at + 10, 2);
				memcpy(&word, q + at + 12, 4);
				if (ordinal >= MAX_PARAMS)
					return;
				f->param_off[ordinal] = offset;
				f->param_size[ordinal] = word >> 18;
				if (ordinal + 1 > n)
					n = ordinal + 1;
			}
			at += len;
		}
		f->n_params = n;
		return;
	}
	char key[300];
	snprintf(key, sizeof key, ".entry %s(", f->name);
	const char *e = strstr(m->image, key);
	if (e == NULL)
		return;
	const char *end = strchr(e, ')');
	size_t at = 0;
	int n = 0;
	for (const char *p = strstr(e, ".param"); p != NULL && end != NULL && p < end; p = strstr(p + 6, ".param")) {
		const char *stop = p;
		while (stop < end && *stop != ',')
			stop++;
		size_t elem = 0, align = 0, count = 1;
		int ptr = 0;    /* after .ptr, .align is the pointee's */
		for (const char *t = p + 6; t < stop;) {
			while (t < stop && (*t == ' ' || *t == '\t' || *t == '\n'))
				t++;
			const char *w = t;
			while (t < stop && *t != ' ' && *t != '\t' && *t != '\n')
				t++;
			size_t wn = (size_t)(t - w);
			if (wn == 4 && memcmp(w, ".ptr", 4) == 0)
				ptr = 1;
			else if (wn == 6 && memcmp(w, ".align", 6) == 0 && !ptr)
				align = (size_t)atoi(t);
			else if (elem == 0)
				elem = ptx_type_bytes(w, wn);
			const char *br = memchr(w, '[', wn);
			if (br != NULL)
				count = (size_t)atoi(br + 1);
		}
		if (elem == 0 || n == MAX_PARAMS)
			return;
		if (align == 0)
			align = elem;
		at = (at + align - 1) / align * align;
		f->param_off[n] = at;
		f->param_size[n] = elem * count;
		at += elem * count;
		n++;
	}
	f->n_params = n;
}

static int inited, broken, fds[2] = {-1, -1}, late_fd = -1, last_fd = -1;
static int mock_pid;            /* taken at cuInit: the sandbox may refuse getpid later */
static int launch_log = -1;     /* opened by cuInit: before any sandbox */
static struct mock_func funcs[MAX_FUNCS];
static int n_funcs;
static int fault_pending;
static int ctx_dummy;

/* The environment as it is now (getenv is the snapshot's, mock_env.h). */
static const char *real_getenv(const char *name)
{
	extern char **environ;
	size_t n = strlen(name);
	for (char **e = environ; e != NULL && *e != NULL; e++)
		if (strncmp(*e, name, n) == 0 && (*e)[n] == '=')
			return *e + n + 1;
	return NULL;
}

static CUresult check(void)
{
	if (!inited)
		return 3;       /* CUDA_ERROR_NOT_INITIALIZED */
	return broken ? 700 : 0;
}

static void touch_driver(void)
{
	int avail;
	if (fds[0] >= 0)
		ioctl(fds[0], FIONREAD, &avail);    /* must pass the sandbox */
	if (late_fd >= 0)
		ioctl(late_fd, FIONREAD, &avail);
	if (last_fd >= 0)
		ioctl(last_fd, FIONREAD, &avail);
}

CUresult cuInit(unsigned flags)
{
	(void)flags;
	if (!inited) {
		fds[0] = open("/dev/null", O_RDWR | O_CLOEXEC);
		fds[1] = open("/dev/null", O_RDWR | O_CLOEXEC);
		/* many more, with gaps, the last one used by every launch */
		const char *many = getenv("MOCK_CUDA_FDS");
		for (int i = 0, n = many ? atoi(many) : 0; i < n; i++) {
			int fd = open("/dev/null", O_RDWR | O_CLOEXEC);
			if (i % 3 == 1)
				close(fd);
			else
				last_fd = fd;
		}
		const char *log = getenv("MOCK_CUDA_LOG");
		if (log != NULL && *log != '\0')
			launch_log = open(log, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
		mock_pid = (int)getpid();
		if (launch_log >= 0) {
			/* what a real driver would read now, once: the process's
			 * own setting, not the mock's snapshot of MOCK_* */
			const char *ml = real_getenv("CUDA_MODULE_LOADING");
			char line[160];
			int k = snprintf(line, sizeof line, "init %d module_loading=%.64s\n", mock_pid,
					 ml != NULL ? ml : "(unset)");
			if (k > 0)
				(void)!write(launch_log, line, (size_t)k);
		}
	}
	inited = 1;
	return 0;
}

CUresult cuDriverGetVersion(int *v) { *v = 13000; return 0; }
CUresult cuDeviceGetCount(int *n) { *n = inited ? 1 : 0; return inited ? 0 : 3; }
CUresult cuDeviceGet(int *d, int ordinal) { *d = ordinal; return ordinal == 0 ? 0 : 101; }

CUresult cuDeviceGetName(char *name, int len, int dev)
{
	(void)dev;
	snprintf(name, (size_t)len, "Mock GPU (no device)");
	return 0;
}

/* The compute capability's major (part 0) or minor (1): 9.0, or
 * MOCK_CUDA_CC=MAJOR.MINOR. */
static int mock_cc(int part)
{
	const char *cc = getenv("MOCK_CUDA_CC");
	if (cc == NULL || *cc == '\0')
		return part == 0 ? 9 : 0;
	const char *dot = strchr(cc, '.');
	return part == 0 ? atoi(cc) : dot != NULL ? atoi(dot + 1) : 0;
}

CUresult cuDeviceGetAttribute(int *v, int attr, int dev)
{
	(void)dev;
	switch (attr) {
	case 75: *v = mock_cc(0); break;        /* compute capability */
	case 76: *v = mock_cc(1); break;
	case 16: *v = 132; break;               /* SMs */
	/* memory clock (kHz) and bus width (bits): an H100 SXM's (3.35 TB/s),
	 * or MOCK_CUDA_MEM_KHZ / MOCK_CUDA_MEM_BITS; L2 50 MiB or MOCK_CUDA_L2 */
	case 36: *v = getenv("MOCK_CUDA_MEM_KHZ") ? atoi(getenv("MOCK_CUDA_MEM_KHZ")) : 2619000; break;
	case 37: *v = getenv("MOCK_CUDA_MEM_BITS") ? atoi(getenv("MOCK_CUDA_MEM_BITS")) : 5120; break;
	case 38: *v = getenv("MOCK_CUDA_L2") ? atoi(getenv("MOCK_CUDA_L2")) : 50 << 20; break;
	case 97: *v = 227 * 1024; break;        /* opt-in shared memory */
	default: *v = 0;
	}
	return 0;
}

CUresult cuDeviceTotalMem_v2(size_t *b, int dev) { (void)dev; *b = (size_t)80 << 30; return 0; }

CUresult cuDeviceGetPCIBusId(char *s, int len, int dev)
{
	(void)dev;
	snprintf(s, (size_t)len, "0000:00:00.0");
	return 0;
}

CUresult cuDevicePrimaryCtxRetain(void **ctx, int dev) { (void)dev; *ctx = &ctx_dummy; return check(); }
CUresult cuDevicePrimaryCtxRelease_v2(int dev) { (void)dev; return 0; }
CUresult cuCtxSetCurrent(void *ctx) { (void)ctx; return check(); }
CUresult cuCtxSetLimit(int l, size_t v) { (void)l; (void)v; return check(); }
CUresult cuCtxResetPersistingL2Cache(void) { return check(); }

CUresult cuCtxSynchronize(void)
{
	CUresult rc = check();
	if (rc)
		return rc;
	touch_driver();
	if (fault_pending) {
		broken = 1;
		return 700;
	}
	return 0;
}

CUresult cuModuleLoadDataEx(void **mod, const void *image, unsigned n, int *opts, void **vals)
{
	(void)n, (void)opts, (void)vals;
	CUresult rc = check();
	if (rc)
		return rc;
	const char *late = getenv("MOCK_CUDA_LATE_FD");
	if (late != NULL && *late == '1' && late_fd < 0)
		late_fd = open("/dev/zero", O_RDONLY | O_CLOEXEC);
	const char *p = image;
	struct mock_module *m = calloc(1, sizeof *m);
	/* PTX is text; a cubin is an ELF whose size is in its header: the mock
	 * keeps the first 16 MiB either way, enough to search names in */
	size_t len = memcmp(p, "\177ELF", 4) == 0 ? 0 : strlen(p);
	if (len == 0) {
		uint64_t shoff;
		uint16_t shentsize, shnum;
		memcpy(&shoff, p + 0x28, 8);
		memcpy(&shentsize, p + 0x3a, 2);
		memcpy(&shnum, p + 0x3c, 2);
		len = (size_t)(shoff + (uint64_t)shentsize * shnum);
	}
	m->image = malloc(len + 1);
	memcpy(m->image, p, len);
	m->image[len] = '\0';
	m->len = len;
	/* MOCK_CUDA_REFUSE_CUBIN=TEXT: a cubin holding TEXT is refused, as a
	 * driver refuses one it cannot run */
	const char *refuse = getenv("MOCK_CUDA_REFUSE_CUBIN");
	if (refuse != NULL && *refuse != '\0' && memcmp(p, "\177ELF", 4) == 0 &&
	    memmem(m->image, m->len, refuse, strlen(refuse)) != NULL) {
		free(m->image);
		free(m);
		return 209;     /* CUDA_ERROR_NO_BINARY_FOR_GPU */
	}
	*mod = m;
	return 0;
}

CUresult cuModuleUnload(void *mod)
{
	struct mock_module *m = mod;
	free(m->image);
	free(m);
	return 0;
}

CUresult cuModuleGetFunction(void **fn, void *mod, const char *name)
{
	CUresult rc = check();
	if (rc)
		return rc;
	struct mock_module *m = mod;
	if (memmem(m->image, m->len, name, strlen(name)) == NULL || n_funcs == MAX_FUNCS)
		return 500;     /* CUDA_ERROR_NOT_FOUND */
	struct mock_func *f = &funcs[n_funcs++];
	snprintf(f->name, sizeof f->name, "%s", name);
	f->mod = m;
	f->static_smem = static_smem_of(m, name);
	params_of(f);
	if (launch_log >= 0) {
		char line[400];
		int k = snprintf(line, sizeof line, "function %s from %s pid %d\n", name,
				 memcmp(m->image, "\177ELF", 4) == 0 ? "cubin" : "ptx", mock_pid);
		if (k > 0)
			(void)!write(launch_log, line, (size_t)k < sizeof line ? (size_t)k : sizeof line - 1);
	}
	f->dyn_max = f->static_smem < 48 * 1024 ? 48 * 1024 - f->static_smem : 0;
	*fn = f;
	return 0;
}

/* attributes 0 (max threads), 1 (static shared), 4 (registers), 8 (max
 * dynamic shared: by default 48 KiB less the static part) */
CUresult cuFuncGetAttribute(int *v, int attr, void *fn)
{
	struct mock_func *f = fn;
	*v = attr == 0 ? 1024 : attr == 1 ? f->static_smem : attr == 4 ? 32 : attr == 8 ? f->dyn_max : 0;
	return 0;
}

CUresult cuFuncSetAttribute(void *fn, int attr, int v)
{
	CUresult rc = check();
	if (rc)
		return rc;
	struct mock_func *f = fn;
	if (attr == 8) {
		if (v < 0 || v + f->static_smem > MOCK_SMEM_OPTIN)
			return 1;       /* CUDA_ERROR_INVALID_VALUE */
		f->dyn_max = v;
	}
	return 0;
}

/* CUDA 12.4's: the offset and size of parameter `index`, as params_of read
 * them; CUDA_ERROR_INVALID_VALUE past the last.  The first refusal per
 * kernel is logged ("params NAME COUNT OFFSET:SIZE,... pid PID"): the
 * backend asks for each parameter in turn until then. */
CUresult cuFuncGetParamInfo(void *fn, size_t index, size_t *offset, size_t *size)
{
	CUresult rc = check();
	if (rc)
		return rc;
	struct mock_func *f = fn;
	if (f < funcs || f >= funcs + n_funcs || f->n_params < 0)
		return 400;     /* CUDA_ERROR_INVALID_HANDLE */
	if (index >= (size_t)f->n_params || offset == NULL) {
		static const struct mock_func *logged[MAX_FUNCS];
		int seen = 0;
		for (int i = 0; i < MAX_FUNCS && logged[i] != NULL && !seen; i++)
			seen = logged[i] == f;
		if (!seen && launch_log >= 0) {
			for (int i = 0; i < MAX_FUNCS; i++)
				if (logged[i] == NULL) {
					logged[i] = f;
					break;
				}
			char line[1200];
			int k = snprintf(line, sizeof line, "params %s %d", f->name, f->n_params);
			for (int i = 0; i < f->n_params && k > 0 && (size_t)k < sizeof line; i++)
				k += snprintf(line + k, sizeof line - (size_t)k, "%s%zu:%zu", i ? "," : " ",
					      f->param_off[i], f->param_size[i]);
			if (k > 0 && (size_t)k < sizeof line)
				k += snprintf(line + k, sizeof line - (size_t)k, " pid %d\n", mock_pid);
			if (k > 0)
				(void)!write(launch_log, line, (size_t)k < sizeof line ? (size_t)k : sizeof line - 1);
		}
		return 1;       /* CUDA_ERROR_INVALID_VALUE */
	}
	*offset = f->param_off[index];
	if (size != NULL)
		*size = f->param_size[index];
	return 0;
}

/* ---- the mock CUPTI ---------------------------------------------------------- */

#define REC_BYTES 128
typedef void (*req_fn)(uint8_t **buffer, size_t *size, size_t *max_records);
typedef void (*done_fn)(void *ctx, uint32_t stream, uint8_t *buffer, size_t size, size_t valid);
static req_fn cupti_req;
static done_fn cupti_done;
static unsigned cupti_kinds;            /* bit per enabled kind */
static uint8_t *cupti_buf;
static size_t cupti_size, cupti_valid;

static uint64_t mono_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static void cupti_emit(uint32_t kind, uint64_t dur_ns, const char *name)
{
	uint32_t bit = kind == 10 ? 1u : kind == 1 ? 2u : kind == 2 ? 4u : 0u;
	if (!(cupti_kinds & bit) || cupti_req == NULL)
		return;
	if (cupti_buf != NULL && cupti_valid + REC_BYTES > cupti_size && cupti_done != NULL) {
		cupti_done(NULL, 0, cupti_buf, cupti_size, cupti_valid);
		cupti_buf = NULL;
	}
	if (cupti_buf == NULL) {
		size_t max = 0;
		cupti_req(&cupti_buf, &cupti_size, &max);
		cupti_valid = 0;
		if (cupti_buf == NULL || cupti_size < REC_BYTES)
			return;
	}
	uint8_t *r = cupti_buf + cupti_valid;
	uint64_t start = mono_ns(), end = start + dur_ns;
	uint32_t stream = 7;
	memset(r, 0, REC_BYTES);
	memcpy(r, &kind, 4);
	memcpy(r + 16, &start, 8);
	memcpy(r + 24, &end, 8);
	memcpy(r + (kind == 10 ? 48 : 40), &stream, 4);
	if (kind == 10)
		memcpy(r + 104, &name, sizeof name);
	cupti_valid += REC_BYTES;
}

static uint64_t kernel_ns(const char *name)
{
	const char *slow = getenv("MOCK_CUPTI_SLOW");
	const char *colon = slow ? strchr(slow, ':') : NULL;
	if (colon != NULL && colon > slow) {
		size_t n = (size_t)(colon - slow);
		char sub[128];
		if (n < sizeof sub) {
			memcpy(sub, slow, n);
			sub[n] = 0;
			if (strstr(name, sub) != NULL)
				return (uint64_t)(atof(colon + 1) * 1e6);
		}
	}
	return 2000;
}

int cuptiActivityEnable(int kind)
{
	cupti_kinds |= kind == 10 ? 1u : kind == 1 ? 2u : kind == 2 ? 4u : 0u;
	return 0;
}

int cuptiActivityDisable(int kind)
{
	cupti_kinds &= ~(kind == 10 ? 1u : kind == 1 ? 2u : kind == 2 ? 4u : 0u);
	return 0;
}

int cuptiActivityRegisterCallbacks(req_fn req, done_fn done)
{
	cupti_req = req;
	cupti_done = done;
	return 0;
}

int cuptiActivityGetNextRecord(uint8_t *buffer, size_t valid, void **rec)
{
	uint8_t *next = *rec == NULL ? buffer : (uint8_t *)*rec + REC_BYTES;
	if (next + REC_BYTES > buffer + valid)
		return 3;       /* CUPTI_ERROR_MAX_LIMIT_REACHED */
	*rec = next;
	return 0;
}

int cuptiActivityGetNumDroppedRecords(void *ctx, uint32_t stream, size_t *dropped)
{
	(void)ctx, (void)stream;
	*dropped = 0;
	return 0;
}

int cuptiActivityFlushAll(uint32_t flag)
{
	(void)flag;
	if (cupti_buf != NULL && cupti_done != NULL) {
		uint8_t *b = cupti_buf;
		cupti_buf = NULL;
		cupti_done(NULL, 0, b, cupti_size, cupti_valid);
	}
	return 0;
}

int cuptiGetTimestamp(uint64_t *ts)
{
	*ts = mono_ns();
	return 0;
}

int cuptiGetResultString(int r, const char **s)
{
	*s = r == 0 ? "CUPTI_SUCCESS" : "CUPTI_ERROR_UNKNOWN";
	return 0;
}

CUresult cuLaunchKernel(void *fn, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by, unsigned bz,
			unsigned smem, void *stream, void **params, void **extra)
{
	(void)stream, (void)extra, (void)params;
	CUresult rc = check();
	if (rc)
		return rc;
	struct mock_func *f = fn;
	if (f < funcs || f >= funcs + n_funcs)
		return 400;     /* CUDA_ERROR_INVALID_HANDLE */
	if ((unsigned long long)bx * by * bz > 1024 || gx == 0 || gy == 0 || gz == 0)
		return 1;
	if ((int)smem > f->dyn_max)
		return 1;       /* more dynamic shared memory than the kernel's limit */
	touch_driver();
	static int reopened;
	const char *reopen = getenv("MOCK_CUDA_REOPEN");
	for (int k = 0; reopen != NULL && !reopened && k < atoi(reopen); k++) {
		int fd = open("/dev/null", O_RDWR | O_CLOEXEC);
		if (fd < 0)
			return 304;
		/* used as a driver uses it (the answer is ENOTTY on /dev/null) */
		int avail;
		(void)!ioctl(fd, FIONREAD, &avail);
	}
	reopened = 1;
	const char *sc = getenv("MOCK_CUDA_SYSCALL");
	if (sc != NULL && *sc == '1')
		syscall(SYS_getsid, 0);
	const char *fault = getenv("MOCK_CUDA_FAULT");
	if (fault != NULL && *fault != '\0' && strstr(f->name, fault) != NULL)
		fault_pending = 1;
	cupti_emit(10, kernel_ns(f->name), f->name);
	if (launch_log >= 0) {
		/* snprintf + write: stdio would fstat/lseek, which the sandbox
		 * refuses on a log (it allows the driver's descriptors only the
		 * calls a driver makes) */
		char line[400];
		int k = snprintf(line, sizeof line, "launch %s %u,%u,%u %u,%u,%u %u pid %d\n", f->name, gx, gy, gz,
				 bx, by, bz, smem, mock_pid);
		if (k > 0)
			(void)!write(launch_log, line, (size_t)k < sizeof line ? (size_t)k : sizeof line - 1);
	}
	return 0;
}

CUresult cuMemAlloc_v2(CUdeviceptr *p, size_t n)
{
	CUresult rc = check();
	if (rc)
		return rc;
	void *m = aligned_alloc(256, (n + 255) & ~(size_t)255);
	if (m == NULL)
		return 2;
	*p = (CUdeviceptr)(uintptr_t)m;
	return 0;
}

CUresult cuMemFree_v2(CUdeviceptr p) { free((void *)(uintptr_t)p); return 0; }

CUresult cuMemcpyHtoD_v2(CUdeviceptr d, const void *s, size_t n)
{
	CUresult rc = check();
	if (rc)
		return rc;
	memcpy((void *)(uintptr_t)d, s, n);
	cupti_emit(1, 1000, NULL);
	return 0;
}

CUresult cuMemcpyDtoH_v2(void *d, CUdeviceptr s, size_t n)
{
	CUresult rc = check();
	if (rc)
		return rc;
	memcpy(d, (const void *)(uintptr_t)s, n);
	cupti_emit(1, 1000, NULL);
	return 0;
}

CUresult cuMemsetD8_v2(CUdeviceptr d, unsigned char v, size_t n)
{
	CUresult rc = check();
	if (rc)
		return rc;
	memset((void *)(uintptr_t)d, v, n);
	cupti_emit(2, 1000, NULL);
	if (launch_log >= 0 && n >= (8u << 20)) {
		char line[64];
		int k = snprintf(line, sizeof line, "memset %zu\n", n);
		if (k > 0)
			(void)!write(launch_log, line, (size_t)k);
	}
	return 0;
}

CUresult cuGetErrorName(CUresult rc, const char **s)
{
	switch (rc) {
	case 700: *s = "CUDA_ERROR_ILLEGAL_ADDRESS"; return 0;
	case 500: *s = "CUDA_ERROR_NOT_FOUND"; return 0;
	case 3: *s = "CUDA_ERROR_NOT_INITIALIZED"; return 0;
	default: *s = NULL; return 1;
	}
}

CUresult cuGetErrorString(CUresult rc, const char **s)
{
	*s = rc == 700 ? "an illegal memory access was encountered" : rc == 500 ? "named symbol not found" : NULL;
	return *s ? 0 : 1;
}
