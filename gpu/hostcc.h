/* hostcc.h - compile CUDA C with the host C++ compiler into a shared object
 * that runs on the CUDA emulation layer (gpu/include/pf_emu.h).
 *
 * The source the compiler sees is the author's, with three changes that keep
 * its line numbers:
 *   - `-include passfs.h` and a `#line 1 "<label>"` before it, so
 *     diagnostics read "pass.c:12:5: error: ..." as the author wrote it;
 *   - each `extern __shared__ T name[];` rewritten per the emulation
 *     header's contract (dynamic shared memory cannot be a macro), newlines
 *     kept;
 *   - appended: one trampoline per requested name expression,
 *       extern "C" int pf_tramp_<i>(pf_call *c, pf_dim3 g, pf_dim3 b,
 *                                 size_t smem, void **args, int nargs);
 *     which launches that kernel with cuLaunchKernel-style arguments
 *     (checked against its parameters), and optionally the kernel table
 *       extern "C" const struct pf_kernel_entry pf_kernel_table[];
 *       extern "C" const int pf_kernel_count;
 *     Each is preceded by a #line naming the line that asked for it.
 * `#include <cuda_fp16.h>`, <cuda_bf16.h> and <cuda_runtime.h> resolve to
 * stand-ins that include passfs.h (the emulation layer has those types).
 *
 * The compiler ($PASSFS_CXX, else g++) runs as a child process in its own
 * process group with a wall-clock timeout (the group is killed), CPU, memory
 * and file-size limits and no core dumps, in a private temporary directory
 * (mkdtemp under $TMPDIR or /tmp, mode 0700), with a fixed environment
 * (PATH=/usr/bin:/bin, LANG=C, LC_ALL=C, TMPDIR), never the caller's.  Flags: -std=c++17 -O2 -fPIC
 * -shared -nostartfiles -nostdlib (then -lm -lc -lgcc: only libc and libm are
 * needed at run time) -fno-strict-aliasing -fno-math-errno
 * -Wno-unknown-pragmas -mf16c -fno-exceptions -fno-rtti -fno-stack-protector
 * -fno-threadsafe-statics -fno-gnu-unique, -Wl,--no-undefined, and -I the
 * pass API include directory.
 *
 * Thread-safe: compiles may run in parallel. */
#ifndef PASSFS_HOSTCC_H
#define PASSFS_HOSTCC_H

#include <stddef.h>
#include <stdint.h>

/* The pass API include directory (holding passfs.h): $PASSFS_INCLUDE_DIR,
 * else the source tree's gpu/include when it exists, else the installed
 * one.  Never NULL. */
const char *hostcc_include_dir(void);

/* A hash of the API headers in inc (NULL: hostcc_include_dir()): their names
 * and bytes.  What a compiled module depends on besides its source. */
uint64_t hostcc_api_hash(const char *inc);

/* The host compiler's first `--version` line and path ("g++ (Debian
 * 12.2.0-14) 12.2.0 (/usr/bin/g++)"): 0, or -1 with why in out. */
int hostcc_compiler_version(char *out, size_t len);

struct hostcc_request {
	const char *label;              /* file name in diagnostics: "pass.c" */
	const char *src;                /* the author's source */
	size_t len;
	const char *const *names;       /* name expressions to make trampolines for */
	const int *name_lines;          /* line asking for each (for #line), or NULL */
	int n_names;
	int kernel_table;               /* also append pf_kernel_table / pf_kernel_count */
	int timeout_s;                  /* wall-clock limit; <= 0: 60 s */
	int device_stubs;               /* cuda backend: see hostcc_device_stubs */
	const char *include_dir;        /* NULL: hostcc_include_dir() */
	unsigned long long as_limit;    /* the compiler's address space, bytes; 0 (or more): 8 GiB */
};

struct hostcc_output {
	char *dir;                      /* the private temporary directory, or NULL */
	char *so_path;                  /* dir/pass.so when compiled, else NULL */
	char *log;                      /* compiler output, tail <= 64 KiB, never NULL
					 * after hostcc_compile returned */
	double ms;                      /* wall time of the compiler */
	double pch_ms;                  /* finding (or building, once) the precompiled passfs.h */
	int used_pch;                   /* the compile had a precompiled passfs.h */
	int timed_out;
};

enum hostcc_status {
	HOSTCC_OK = 0,
	HOSTCC_COMPILE_ERROR = 1,       /* the compiler said no (or timed out): see log */
	HOSTCC_FAILED = -1,             /* could not run it (no compiler, no temp dir) */
};

/* Compiles req->src into out->so_path.  Fills *out in every case; err gets
 * one line unless the status is HOSTCC_OK.  The caller removes the temporary
 * directory and frees *out with hostcc_output_free (also after errors). */
enum hostcc_status hostcc_compile(const struct hostcc_request *req, struct hostcc_output *out,
				  char *err, size_t errlen);

/* Finds or builds the precompiled passfs.h that hostcc_compile would use
 * for a request with this device_stubs and include_dir (NULL: the default),
 * so that a later compile that cannot write the cache (the compile jail)
 * finds it.  Returns 0 with its directory in out, or -1 (off, no cache
 * directory, no compiler, or the build failed: compiles go without it). */
int hostcc_pch_prepare(int device_stubs, const char *include_dir, char *out, size_t outlen);

/* The host compiler's program ($PASSFS_CXX's first word or g++, found on
 * PATH) into out: 0, or -1 when there is none (or out is too small). */
int hostcc_compiler_path(char *out, size_t outlen);

/* Removes out->dir with everything in it and frees the strings. */
void hostcc_output_free(struct hostcc_output *out);

/* A copy of src[0..len) with comments and the contents of string and
 * character literals replaced by spaces (quotes kept, newlines kept), so
 * scanners see only code at the original offsets.  malloc'd, NUL-terminated
 * (NUL bytes inside src become spaces); NULL when out of memory. */
char *hostcc_mask(const char *src, size_t len);

/* The source as the host compiler sees it, minus the prefix and the
 * trampolines: every `extern __shared__ T name[];` rewritten per pf_emu.h's
 * contract (in a function: a pointer variable; at file scope: a #define on a
 * line of its own followed by a `#line N "label"`), line numbers kept.
 * malloc'd, NUL-terminated; *outlen gets its length.  NULL when out of
 * memory. */
char *hostcc_rewrite_shared(const char *label, const char *src, size_t len, size_t *outlen);

/* The cuda backend's host compile: kernels run on the GPU, so the host
 * object needs their signatures (pf_launch's parameter types, the kernel
 * table's addresses) but not their bodies, which may hold what g++ cannot
 * compile (inline PTX, wmma, cooperative groups).  Returns a copy of src
 * where, with line numbers kept:
 *   - the body of every function declared __global__ or __device__ (or
 *     with an object-like macro whose body says so), and neither __host__
 *     nor constexpr, becomes `{ __builtin_trap(); }` - its line breaks and
 *     preprocessor lines stay, so #if/#endif pairs and #line numbering hold;
 *   - a __global__ function's definition loses the word `static`: its
 *     stub is exported, so the worker finds a kernel that no name
 *     expression names by the symbol NVRTC's lowered name spells;
 *   - in the bodies that stay (the replacement, unannotated or __host__
 *     __device__ helpers), every asm statement (asm, __asm__, any
 *     qualifiers) becomes (void)0.
 * The compile then adds -fno-ipa-icf (identical stub bodies keep distinct
 * addresses), -DPF_DEVICE_STUBS=1, and stand-ins for mma.h,
 * cooperative_groups.h (+ reduce.h, memcpy_async.h), cuda_pipeline.h and
 * cuda_awbarrier.h that declare the namespaces.  Known limits: a body
 * whose device-only use is hidden behind a function-like macro, a
 * file-scope asm, or wmma types outside function bodies beyond the
 * declared fragment template do not compile on the host.  malloc'd;
 * *outlen gets the length; NULL when out of memory. */
char *hostcc_device_stubs(const char *src, size_t len, size_t *outlen);

#endif
