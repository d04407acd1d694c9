/* pass.h - the pass compiler: from an author's pass.c to a checked shared
 * object, and (inside the sandboxed worker) to a callable replacement.
 *
 * pass_compile() runs, in order, stopping at the first failure:
 *   (a) source checks, before any compiler runs (pass_scan): size (1 MiB),
 *       NUL bytes, constructs the backend cannot run (inline PTX `asm`,
 *       wmma/mma, cooperative groups; allowed where the backend has a GPU),
 *       `<<<` launches, #include outside the allow-list, a missing
 *       PASS_REPLACEMENT; attributes and directives whose strings g++ copies
 *       into its assembly (section, alias, weakref, symver, ifunc,
 *       target_clones; #ident, #sccs); text the lexers could read two ways
 *       (a splice inside code, a lone CR, non-ASCII code, a word touching a
 *       literal, a raw string in a directive); what makes a compiler read or
 *       probe another file: a #line naming any file but the pass's own label
 *       (bare `#line N` is fine), __has_include(_next) of anything but the
 *       allow-list, #pragma GCC dependency;
 *   (b) the kernel name expressions: the second argument of every
 *       `pf_launch(call, KERNEL, ...)`, whitespace normalised, deduplicated,
 *       kept only where it means the same at the end of the file (no
 *       template parameter, parameter or local of the code around the
 *       launch, no subscript or member, no #undef'd macro); the device
 *       pf_launch takes the kernel, so the others need no name;
 *   (c) the NVRTC device gate with those names (skipped, with a note, when
 *       NVRTC cannot be loaded);
 *   (d) the host compile (gpu/hostcc.h) with the kernel table appended;
 *       where the backend has a GPU (allow_device_only), with device stubs:
 *       kernels and __device__ functions keep their signatures but not
 *       their bodies (hostcc_device_stubs), so inline PTX and wmma never
 *       reach g++, and mma.h / cooperative_groups.h / cuda_pipeline.h may be
 *       included;
 *   (e) the ELF check of the object (gpu/elfcheck.h).
 * Every failure is a pass_diag: a verdict (the result.json word), one
 * sentence naming file:line where there is one, and the compiler log tail.
 *
 * Thread-safe: several passes may compile at once. */
#ifndef PASSFS_PASS_H
#define PASSFS_PASS_H

#include <stddef.h>

#include "gpu.h"
#include "graph.h"

struct graph_task;

#define PASS_MAX_BYTES PF_CAP_PASS_C   /* engine/graph/graph.h */
#define PASS_LOG_TAIL 4096

enum pass_verdict {
	PASS_OK = 0,
	PASS_COMPILE_ERROR,     /* the source does not compile (or is not text) */
	PASS_UNSUPPORTED,       /* uses what this backend cannot run, or is not allowed */
	PASS_REJECTED,          /* the object breaks an integrity rule (elfcheck) */
	PASS_NOT_IMPLEMENTED,   /* (set by the worker: the template's answer) */
	PASS_INTERNAL_ERROR,    /* passfs could not compile it (no compiler, out of memory) */
};

/* The result.json word: "ok", "compile_error", "unsupported", "rejected",
 * "not_implemented"; "runtime_error" for PASS_INTERNAL_ERROR. */
const char *pass_verdict_name(enum pass_verdict v);

struct pass_diag {
	enum pass_verdict verdict;
	char message[512];      /* one sentence: "pass.c:14: inline PTX (asm) needs a GPU; ..." */
	int line;               /* the author's line, 0 when none */
	char log[PASS_LOG_TAIL + 1];  /* compiler log tail, "" when none */
};

/* The kernels a pass launches, as found in its source. */
struct pass_names {
	int n;
	char **expr;            /* normalised name expressions: "softmax<float, 256>" */
	int *line;              /* line of the first pf_launch naming each */
};

void pass_names_free(struct pass_names *nm);

/* (a) and (b): checks src and collects the kernel name expressions that
 * mean the same at the end of the file into *names (free with
 * pass_names_free, also on failure).  allow_device_only: the backend has a
 * GPU, so inline PTX, wmma/mma and cooperative groups are allowed.
 * Returns 0, or -1 with *diag filled. */
int pass_scan(const char *label, const char *src, size_t len, int allow_device_only,
	      struct pass_names *names, struct pass_diag *diag);

/* A compiled pass: a shared object checked by elfcheck, not loaded. */
struct pass_module {
	char *label;
	char *dir;              /* private temporary directory; removed by pass_module_free */
	char *so_path;          /* dir/pass.so */
	struct pass_names names;
	char **lowered;         /* names.n lowered (mangled) names from NVRTC, or NULL */
	char *ptx;              /* NVRTC's PTX (for the device-code scan), or NULL */
	char *cubin_path;       /* dir/pass.cubin: NVRTC's code for the device (cuda
				 * backend), loaded instead of JIT-compiling the PTX; or NULL */
	char note[160];         /* "device compile skipped: NVRTC not available", or "" */
	double nvrtc_ms;        /* 0 when skipped */
	double host_ms;
	char *host_log;         /* the host compiler's warnings, "" when none */
};

struct pass_options {
	const char *arch;       /* NVRTC target; NULL: sm_90 */
	int allow_device_only;  /* see pass_scan; also selects the host compile with device stubs */
	int host_timeout_s;     /* <= 0: 60 */
	int skip_nvrtc;         /* do not run the device gate (tests, cpu-only speed) */
};

/* Compiles a pass for dev (NULL: the cpu backend's defaults: sm_90, no
 * device-only constructs).  Returns 0 with *out (free with
 * pass_module_free) and diag->verdict == PASS_OK, or -1 with *out NULL and
 * *diag filled.  label names the file in diagnostics ("pass.c"). */
int pass_compile(const char *label, const char *src, size_t len, struct gpu_dev *dev,
		 struct pass_module **out, struct pass_diag *diag);

/* Same, with explicit options. */
int pass_compile_opts(const char *label, const char *src, size_t len, const struct pass_options *opt,
		      struct pass_module **out, struct pass_diag *diag);

/* A compiler log (g++'s or NVRTC's) as the author of the pass labelled
 * label may read it: diagnostics about the pass with their quoted lines;
 * in public files (passfs.h, the toolchain's headers) without quoted
 * lines; of any other file only "name:line: error: (...not shown)" - the
 * text, quotes and carets would carry that file's bytes.  Lines naming no
 * file stay.  malloc'd; NULL when out of memory. */
char *pass_log_for_author(const char *label, const char *log);

/* Removes the temporary directory and frees everything. NULL is ignored. */
void pass_module_free(struct pass_module *m);

/* A pass loaded into the calling process.  To be called inside the
 * sandboxed worker only: it re-checks the object (elfcheck), then
 * dlopen(RTLD_NOW | RTLD_LOCAL) and looks up the replacement and the
 * kernel table. */
struct pass_loaded {
	void *handle;
	int (*replacement)(pf_call *call);
	const struct pf_kernel_entry *kernels;
	int n_kernels;
};

/* Returns 0, or -1 with a message in err. */
int pass_load(const struct pass_module *m, struct pass_loaded *out, char *err, size_t errlen);
void pass_unload(struct pass_loaded *l);

/* The pass.c shown before anything is written: the task and its variants
 * in a comment, the input and output order with shapes and dtypes, the
 * rules, and a replacement that returns pf_not_implemented().  malloc'd;
 * NULL when out of memory.  It passes pass_compile. */
char *pass_template(const struct graph_task *t);

#endif
