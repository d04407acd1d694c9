/* nvrtc.h - NVRTC, loaded at run time: the device-side compile of a pass.
 *
 * passfs never links against the CUDA toolkit.  libnvrtc is dlopen'ed on
 * first use (PASSFS_NVRTC names the library; else "libnvrtc.so",
 * "libnvrtc.so.13", "libnvrtc.so.12", then the same under
 * /usr/local/cuda/lib64).  Without a GPU it still compiles, for sm_90, and
 * that is what makes it the gate: NVRTC rejects what the host compiler would
 * accept (fopen, std::vector, host-only calls), so a pass that passes it is
 * CUDA C, wherever it later runs.
 *
 * Options used: -default-device (unannotated functions, the replacement
 * among them, become device functions), -std=c++17,
 * --gpu-architecture=<arch>, -I<pass API include dir>, -I<CUDA include dir>
 * (cuda_fp16.h, cuda_bf16.h), -lineinfo, and the caller's pre-include.  The
 * program's name is the label, so errors read "pass.c(12): error: ...";
 * errors in a name expression are moved to the line that named it.  The C
 * headers a pass may include (stdint.h, cmath, float.h, ...) resolve to
 * passfs.h, whose device branch defines what kernels use from them.
 *
 * All functions are thread-safe; compiles may run in parallel. */
#ifndef PASSFS_NVRTC_H
#define PASSFS_NVRTC_H

#include <stddef.h>

/* Whether NVRTC can be used.  Returns 1, or 0 with the reason in why
 * ("NVRTC not available: libnvrtc.so: cannot open shared object file").
 * Loads the library on the first call; the answer never changes after. */
int nvrtc_available(char *why, size_t whylen);

/* "13.0" once loaded, else "". */
const char *nvrtc_version(void);

/* The real architectures this NVRTC compiles for (nvrtcGetSupportedArchs:
 * 75, 80, ..., 121 for NVRTC 13.0, ascending), at most max of them into out:
 * their count, or 0 when NVRTC is not loaded or cannot say (before 11.2). */
int nvrtc_supported_archs(int *out, int max);

/* The CUDA include directory: PASSFS_CUDA_INCLUDE (environment), the build's
 * PASSFS_CUDA_INCLUDE, else /usr/local/cuda/include; NULL when none exists
 * (NVRTC's built-in headers are then all there is). */
const char *nvrtc_cuda_include_dir(void);

/* The file NVRTC was loaded from (it loads its builtins library from the
 * same directory at compile time), into out: 0, or -1 when NVRTC is not
 * loaded or the path is unknown. */
int nvrtc_library_path(char *out, size_t outlen);

struct nvrtc_request {
	const char *label;              /* program name: "pass.c" */
	const char *src;                /* NUL-terminated source */
	const char *arch;               /* "sm_90"; NULL: sm_90 */
	const char *include_dir;        /* the pass API headers (passfs.h) */
	const char *pre_include;        /* header included first, or NULL */
	const char *const *names;       /* name expressions ("softmax<float, 256>") */
	const int *name_lines;          /* line asking for each name (errors point
					 * there), or NULL */
	int n_names;
	int want_cubin;                 /* also return the cubin (arch "sm_XY[a]" only,
					 * NVRTC >= 11.1); the PTX is returned anyway */
};

struct nvrtc_output {
	char *ptx;                      /* NUL-terminated; NULL unless compiled */
	char **lowered;                 /* n_names lowered names (mangled), or NULL */
	int n_lowered;
	void *cubin;                    /* the cubin when asked for and available, else NULL */
	size_t cubin_size;
	char *log;                      /* compiler log tail (<= 64 KiB), may be "" */
	double ms;                      /* wall time of nvrtcCompileProgram */
};

enum nvrtc_status {
	NVRTC_GATE_OK = 0,
	NVRTC_GATE_COMPILE_ERROR = 1,   /* the source does not compile: see log */
	NVRTC_GATE_UNAVAILABLE = 2,     /* NVRTC cannot be loaded: see err */
	NVRTC_GATE_FAILED = -1,         /* NVRTC failed otherwise (out of memory ...) */
};

/* Compiles req->src.  Fills *out (free with nvrtc_output_free) in every
 * case; err gets one line unless the status is OK. */
enum nvrtc_status nvrtc_compile(const struct nvrtc_request *req, struct nvrtc_output *out,
				char *err, size_t errlen);

void nvrtc_output_free(struct nvrtc_output *o);

#endif
