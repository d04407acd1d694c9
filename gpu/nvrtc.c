/* nvrtc.c - NVRTC through dlopen (see nvrtc.h).  The few entry points used
 * are declared here with NVRTC's C ABI, so the build needs no CUDA headers. */
#define _GNU_SOURCE
#include "nvrtc.h"

#include "clock.h"
#include "gpu.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#define NVRTC_LOG_CAP (64u << 10)

typedef int nvrtc_result_t;             /* nvrtcResult; NVRTC_SUCCESS == 0 */
typedef struct nvrtc_prog *nvrtc_prog_t; /* nvrtcProgram */

static struct {
	void *handle;
	char why[512];
	char version[32];
	const char *(*GetErrorString)(nvrtc_result_t);
	nvrtc_result_t (*Version)(int *, int *);
	nvrtc_result_t (*CreateProgram)(nvrtc_prog_t *, const char *, const char *, int,
					const char *const *, const char *const *);
	nvrtc_result_t (*DestroyProgram)(nvrtc_prog_t *);
	nvrtc_result_t (*CompileProgram)(nvrtc_prog_t, int, const char *const *);
	nvrtc_result_t (*GetPTXSize)(nvrtc_prog_t, size_t *);
	nvrtc_result_t (*GetPTX)(nvrtc_prog_t, char *);
	nvrtc_result_t (*GetProgramLogSize)(nvrtc_prog_t, size_t *);
	nvrtc_result_t (*GetProgramLog)(nvrtc_prog_t, char *);
	nvrtc_result_t (*AddNameExpression)(nvrtc_prog_t, const char *);
	nvrtc_result_t (*GetLoweredName)(nvrtc_prog_t, const char *, const char **);
	/* optional: NULL when the library lacks them */
	nvrtc_result_t (*GetCUBINSize)(nvrtc_prog_t, size_t *);
	nvrtc_result_t (*GetCUBIN)(nvrtc_prog_t, char *);
	nvrtc_result_t (*GetNumSupportedArchs)(int *);  /* 11.2+ */
	nvrtc_result_t (*GetSupportedArchs)(int *);
} nv;

static pthread_once_t nv_once = PTHREAD_ONCE_INIT;

static int try_open(const char *path, void *ctx)
{
	(void)ctx;
	void *h = gpu_dlopen(path, RTLD_NOW | RTLD_LOCAL);
	if (h == NULL) {
		if (nv.why[0] == '\0') {
			const char *e = dlerror();
			snprintf(nv.why, sizeof nv.why, "NVRTC not available: %s", e ? e : path);
		}
		return 0;
	}
	nv.handle = h;
	return 1;
}

/* NVRTC loads its builtins (libnvrtc-builtins.so.X.Y) at each compile, by a
 * search of its own, and unloads them after.  Pass compiles run in the
 * compile jail (engine/eval/guard/jail.c), which shows NVRTC's own
 * directory: on an H200 with NVRTC beside PyTorch's wheels every compile
 * there failed with NVRTC_ERROR_BUILTIN_OPERATION_FAILURE, while Landlock's
 * view of the same files worked.  Loaded here (where NVRTC is loaded, before
 * any fork) and kept, the builtins are in every child: NVRTC's dlopen of
 * their soname finds them loaded and reads no file. */
static void *builtins_handle;

static int keep_open(const char *path, void *ctx)
{
	(void)ctx;
	builtins_handle = dlopen(path, RTLD_NOW | RTLD_LOCAL);
	return builtins_handle != NULL;
}

static void keep_builtins(int major, int minor)
{
	/* beside NVRTC first, then as the loader and the wheels find it */
	char name[64], path[4200] = "";
	snprintf(name, sizeof name, "libnvrtc-builtins.so.%d.%d", major, minor);
	Dl_info info;
	if (dladdr((void *)nv.Version, &info) != 0 && info.dli_fname != NULL) {
		const char *sl = strrchr(info.dli_fname, '/');
		if (sl != NULL)
			snprintf(path, sizeof path, "%.*s/%s", (int)(sl - info.dli_fname), info.dli_fname, name);
	}
	const char *names[] = {path[0] ? path : name, name};
	(void)gpu_open_lib(names, 2, keep_open, NULL);
}

static void nv_load(void)
{
	const char *env = getenv("PASSFS_NVRTC");
	if (env != NULL && *env != '\0') {
		if (!try_open(env, NULL))
			return;
	} else {
		static const char *const names[] = {
			"libnvrtc.so", "libnvrtc.so.13", "libnvrtc.so.12",
			"/usr/local/cuda/lib64/libnvrtc.so", "/usr/local/cuda/lib64/libnvrtc.so.13",
			"/usr/local/cuda/lib64/libnvrtc.so.12", NULL
		};
		if (!gpu_open_lib(names, -1, try_open, NULL))
			return;
	}
	struct {
		const char *name;
		void **slot;
	} syms[] = {
		{"nvrtcGetErrorString", (void **)&nv.GetErrorString},
		{"nvrtcVersion", (void **)&nv.Version},
		{"nvrtcCreateProgram", (void **)&nv.CreateProgram},
		{"nvrtcDestroyProgram", (void **)&nv.DestroyProgram},
		{"nvrtcCompileProgram", (void **)&nv.CompileProgram},
		{"nvrtcGetPTXSize", (void **)&nv.GetPTXSize},
		{"nvrtcGetPTX", (void **)&nv.GetPTX},
		{"nvrtcGetProgramLogSize", (void **)&nv.GetProgramLogSize},
		{"nvrtcGetProgramLog", (void **)&nv.GetProgramLog},
		{"nvrtcAddNameExpression", (void **)&nv.AddNameExpression},
		{"nvrtcGetLoweredName", (void **)&nv.GetLoweredName},
	};
	for (size_t i = 0; i < sizeof syms / sizeof syms[0]; i++) {
		*syms[i].slot = dlsym(nv.handle, syms[i].name);
		if (*syms[i].slot == NULL) {
			snprintf(nv.why, sizeof nv.why, "NVRTC not available: the library has no %s",
				 syms[i].name);
			gpu_dlclose(nv.handle);
			nv.handle = NULL;
			return;
		}
	}
	nv.GetCUBINSize = (nvrtc_result_t (*)(nvrtc_prog_t, size_t *))dlsym(nv.handle, "nvrtcGetCUBINSize");
	nv.GetCUBIN = (nvrtc_result_t (*)(nvrtc_prog_t, char *))dlsym(nv.handle, "nvrtcGetCUBIN");
	nv.GetNumSupportedArchs = (nvrtc_result_t (*)(int *))dlsym(nv.handle, "nvrtcGetNumSupportedArchs");
	nv.GetSupportedArchs = (nvrtc_result_t (*)(int *))dlsym(nv.handle, "nvrtcGetSupportedArchs");
	int major = 0, minor = 0;
	if (nv.Version(&major, &minor) == 0)
		snprintf(nv.version, sizeof nv.version, "%d.%d", major, minor);
	nv.why[0] = '\0';
	keep_builtins(major, minor);
}

int nvrtc_available(char *why, size_t whylen)
{
	pthread_once(&nv_once, nv_load);
	if (nv.handle != NULL)
		return 1;
	if (why != NULL && whylen > 0)
		snprintf(why, whylen, "%s", nv.why[0] ? nv.why : "NVRTC not available");
	return 0;
}

const char *nvrtc_version(void)
{
	pthread_once(&nv_once, nv_load);
	return nv.version;
}

int nvrtc_supported_archs(int *out, int max)
{
	int n = 0;
	if (!nvrtc_available(NULL, 0) || nv.GetNumSupportedArchs == NULL || nv.GetSupportedArchs == NULL ||
	    nv.GetNumSupportedArchs(&n) != 0 || n <= 0 || n > 1024)
		return 0;
	int *all = malloc(sizeof(int) * (size_t)n);
	if (all == NULL || nv.GetSupportedArchs(all) != 0) {
		free(all);
		return 0;
	}
	int k = n < max ? n : max;
	memcpy(out, all, sizeof(int) * (size_t)(k > 0 ? k : 0));
	free(all);
	return k;
}

int nvrtc_library_path(char *out, size_t outlen)
{
	Dl_info info;
	if (!nvrtc_available(NULL, 0) || dladdr((void *)nv.Version, &info) == 0 || info.dli_fname == NULL)
		return -1;
	int n = snprintf(out, outlen, "%s", info.dli_fname);
	return n > 0 && (size_t)n < outlen ? 0 : -1;
}

static int is_dir(const char *p)
{
	struct stat st;
	return p != NULL && stat(p, &st) == 0 && S_ISDIR(st.st_mode);
}

static char wheel_inc[4096];
static pthread_once_t wheel_inc_once = PTHREAD_ONCE_INIT;

static void wheel_inc_find(void)
{
	if (!gpu_wheel_include("cuda_fp16.h", wheel_inc, sizeof wheel_inc))
		wheel_inc[0] = '\0';
}

const char *nvrtc_cuda_include_dir(void)
{
	const char *env = getenv("PASSFS_CUDA_INCLUDE");
	if (env != NULL && *env != '\0')
		return is_dir(env) ? env : NULL;
#ifdef PASSFS_CUDA_INCLUDE
	if (is_dir(PASSFS_CUDA_INCLUDE))
		return PASSFS_CUDA_INCLUDE;
#endif
	if (is_dir("/usr/local/cuda/include"))
		return "/usr/local/cuda/include";
	/* no toolkit: PyTorch's wheels carry the headers (nvidia/cu13/include) */
	pthread_once(&wheel_inc_once, wheel_inc_find);
	return wheel_inc[0] ? wheel_inc : NULL;
}

void nvrtc_output_free(struct nvrtc_output *o)
{
	if (o == NULL)
		return;
	free(o->ptx);
	free(o->cubin);
	for (int i = 0; i < o->n_lowered; i++)
		free(o->lowered[i]);
	free(o->lowered);
	free(o->log);
	memset(o, 0, sizeof *o);
}

/* Expression text with all white space removed, for comparisons. */
static void squeeze(const char *s, size_t n, char *out, size_t outlen)
{
	size_t k = 0;
	for (size_t i = 0; i < n && s[i] != '\0' && k + 1 < outlen; i++)
		if (s[i] != ' ' && s[i] != '\t' && s[i] != '\r')
			out[k++] = s[i];
	out[k] = '\0';
}

/* NVRTC reports a bad name expression against a synthetic file,
 * "__nv_name_map(5): error: identifier \"c\" is undefined", followed by a
 * context line "#pragma nv_mangled_name c".  Point such errors at the line
 * of the author's source that asked for the kernel (the pf_launch). */
static char *rewrite_name_map(char *log, const struct nvrtc_request *req)
{
	static const char tag[] = "__nv_name_map(";
	if (strstr(log, tag) == NULL)
		return log;
	size_t cap = strlen(log) * 2 + 256, len = 0;
	char *out = malloc(cap);
	if (out == NULL)
		return log;
	const char *label = req->label ? req->label : "source.cu";
	for (const char *l = log; *l;) {
		const char *nl = strchr(l, '\n');
		size_t ll = nl ? (size_t)(nl - l) + 1 : strlen(l);
		const char *close = strncmp(l, tag, sizeof tag - 1) == 0 ? memchr(l, ')', ll) : NULL;
		if (close != NULL) {
			/* find the expression on the context line */
			int line = 0;
			const char *ctx = nl ? strstr(nl, "#pragma nv_mangled_name ") : NULL;
			const char *nl2 = nl ? strchr(nl + 1, '\n') : NULL;
			if (ctx != NULL && (nl2 == NULL || ctx < nl2)) {
				ctx += strlen("#pragma nv_mangled_name ");
				const char *end = strchr(ctx, '\n');
				char want[512], have[512];
				squeeze(ctx, end ? (size_t)(end - ctx) : strlen(ctx), want, sizeof want);
				for (int i = 0; i < req->n_names && req->name_lines != NULL; i++) {
					squeeze(req->names[i], strlen(req->names[i]), have, sizeof have);
					if (strcmp(want, have) == 0) {
						line = req->name_lines[i];
						break;
					}
				}
			}
			char head[4200];
			int hn = line > 0 ? snprintf(head, sizeof head, "%s(%d)", label, line)
					  : snprintf(head, sizeof head, "%s (kernel name expression)", label);
			if (hn < 0 || (size_t)hn >= sizeof head)
				hn = 0;
			if (len + (size_t)hn + ll + 1 > cap)
				break;
			memcpy(out + len, head, (size_t)hn);
			len += (size_t)hn;
			ll -= (size_t)(close + 1 - l);
			l = close + 1;
		}
		if (len + ll + 1 > cap)
			break;
		memcpy(out + len, l, ll);
		len += ll;
		l += ll;
	}
	out[len] = '\0';
	free(log);
	return out;
}

/* The program log, its tail when longer than the cap. */
static char *read_log(nvrtc_prog_t prog)
{
	size_t n = 0;
	if (nv.GetProgramLogSize(prog, &n) != 0 || n == 0)
		return strdup("");
	char *log = malloc(n + 1);
	if (log == NULL)
		return NULL;
	if (nv.GetProgramLog(prog, log) != 0) {
		free(log);
		return strdup("");
	}
	log[n] = '\0';
	size_t len = strlen(log);
	if (len > NVRTC_LOG_CAP) {
		memmove(log, log + len - NVRTC_LOG_CAP, NVRTC_LOG_CAP + 1);
	}
	return log;
}

enum nvrtc_status nvrtc_compile(const struct nvrtc_request *req, struct nvrtc_output *out,
				char *err, size_t errlen)
{
	memset(out, 0, sizeof *out);
	if (!nvrtc_available(err, errlen))
		return NVRTC_GATE_UNAVAILABLE;

	const char *label = req->label ? req->label : "source.cu";
	char arch[64], inc[4200], cinc[4200], pre[4200];
	const char *opts[10];
	int nopt = 0;
	snprintf(arch, sizeof arch, "--gpu-architecture=%s", req->arch ? req->arch : "sm_90");
	opts[nopt++] = "-default-device";
	opts[nopt++] = "-std=c++17";
	opts[nopt++] = arch;
	opts[nopt++] = "-lineinfo";
	if (req->include_dir != NULL) {
		snprintf(inc, sizeof inc, "-I%s", req->include_dir);
		opts[nopt++] = inc;
	}
	const char *cuda_inc = nvrtc_cuda_include_dir();
	if (cuda_inc != NULL) {
		snprintf(cinc, sizeof cinc, "-I%s", cuda_inc);
		opts[nopt++] = cinc;
	}
	if (req->pre_include != NULL) {
		snprintf(pre, sizeof pre, "--pre-include=%s", req->pre_include);
		opts[nopt++] = pre;
	}

	/* The C and C++ headers a pass may include (see pass.c's allow-list)
	 * do not exist for NVRTC: passfs.h's device branch defines what device
	 * code takes from them, so they resolve to it. */
	static const char *const std_headers[] = {
		"stdint.h", "cstdint", "stddef.h", "cstddef", "math.h", "cmath",
		"float.h", "cfloat", "limits.h", "climits",
	};
	enum { N_STD = sizeof std_headers / sizeof std_headers[0] };
	const char *std_bodies[N_STD];
	for (int i = 0; i < N_STD; i++)
		std_bodies[i] = "#pragma once\n#include <passfs.h>\n";

	nvrtc_prog_t prog = NULL;
	nvrtc_result_t rc = nv.CreateProgram(&prog, req->src, label, N_STD, std_bodies, std_headers);
	if (rc != 0) {
		snprintf(err, errlen, "%s: NVRTC could not create the program: %s", label,
			 nv.GetErrorString(rc));
		return NVRTC_GATE_FAILED;
	}
	for (int i = 0; i < req->n_names; i++) {
		rc = nv.AddNameExpression(prog, req->names[i]);
		if (rc != 0) {
			snprintf(err, errlen, "%s: NVRTC refused the kernel name '%s': %s", label,
				 req->names[i], nv.GetErrorString(rc));
			nv.DestroyProgram(&prog);
			return NVRTC_GATE_FAILED;
		}
	}

	double t0 = base_now_ms();
	rc = nv.CompileProgram(prog, nopt, opts);
	out->ms = base_now_ms() - t0;
	out->log = read_log(prog);
	if (out->log != NULL)
		out->log = rewrite_name_map(out->log, req);
	if (out->log == NULL) {
		snprintf(err, errlen, "%s: out of memory", label);
		nv.DestroyProgram(&prog);
		return NVRTC_GATE_FAILED;
	}
	if (rc != 0) {
		snprintf(err, errlen, "%s: the device compile (NVRTC) failed: %s", label,
			 nv.GetErrorString(rc));
		nv.DestroyProgram(&prog);
		/* NVRTC_ERROR_COMPILATION is the author's; anything else ours. */
		return rc == 6 ? NVRTC_GATE_COMPILE_ERROR : NVRTC_GATE_FAILED;
	}

	size_t ptx_len = 0;
	if (nv.GetPTXSize(prog, &ptx_len) != 0 || (out->ptx = malloc(ptx_len + 1)) == NULL ||
	    nv.GetPTX(prog, out->ptx) != 0) {
		snprintf(err, errlen, "%s: NVRTC produced no PTX", label);
		nv.DestroyProgram(&prog);
		return NVRTC_GATE_FAILED;
	}
	out->ptx[ptx_len] = '\0';
	/* The cubin exists only for a real architecture (sm_XY), not for a
	 * virtual one (compute_XY); without it the PTX is JIT-compiled at load. */
	size_t cubin_len = 0;
	if (req->want_cubin && nv.GetCUBINSize != NULL && nv.GetCUBIN != NULL &&
	    strncmp(req->arch ? req->arch : "sm_90", "sm_", 3) == 0 &&
	    nv.GetCUBINSize(prog, &cubin_len) == 0 && cubin_len > 0 &&
	    (out->cubin = malloc(cubin_len)) != NULL) {
		if (nv.GetCUBIN(prog, out->cubin) == 0) {
			out->cubin_size = cubin_len;
		} else {
			free(out->cubin);
			out->cubin = NULL;
		}
	}

	if (req->n_names > 0) {
		out->lowered = calloc((size_t)req->n_names, sizeof(char *));
		if (out->lowered == NULL) {
			snprintf(err, errlen, "%s: out of memory", label);
			nv.DestroyProgram(&prog);
			return NVRTC_GATE_FAILED;
		}
		out->n_lowered = req->n_names;
	}
	for (int i = 0; i < req->n_names; i++) {
		const char *low = NULL;
		rc = nv.GetLoweredName(prog, req->names[i], &low);
		if (rc != 0 || low == NULL) {
			snprintf(err, errlen, "%s: '%s' does not name a __global__ function", label,
				 req->names[i]);
			nv.DestroyProgram(&prog);
			return NVRTC_GATE_COMPILE_ERROR;
		}
		if ((out->lowered[i] = strdup(low)) == NULL) {
			snprintf(err, errlen, "%s: out of memory", label);
			nv.DestroyProgram(&prog);
			return NVRTC_GATE_FAILED;
		}
	}
	nv.DestroyProgram(&prog);
	return NVRTC_GATE_OK;
}
