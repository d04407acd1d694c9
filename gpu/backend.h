/* backend.h - what a backend provides behind gpu.h (inside gpu/ only).
 *
 * A backend embeds struct gpu_dev, gpu_module and gpu_kernel as the first
 * member of its own structures and fills a struct gpu_ops; gpu.c checks
 * arguments and dispatches. */
#ifndef PASSFS_GPU_BACKEND_H
#define PASSFS_GPU_BACKEND_H

#include "gpu.h"

struct gpu_ops {
	void (*close)(struct gpu_dev *d);
	int (*module_compile)(struct gpu_dev *d, const char *label, const char *src,
			      const char *const *names, int n_names, struct gpu_module **out,
			      char **log, char *err, size_t errlen);
	void (*module_free)(struct gpu_module *m);
	struct gpu_kernel *(*module_kernel)(struct gpu_module *m, const char *name);
	struct gpu_kernel *(*module_kernel_at)(struct gpu_module *m, int i);
	int (*module_kernel_count)(struct gpu_module *m);
	/* arg_sizes may be NULL */
	int (*launch)(struct gpu_dev *d, struct gpu_kernel *k, pf_dim3 grid, pf_dim3 block,
		      size_t smem, void **args, int nargs, const size_t *arg_sizes, char *err,
		      size_t errlen);
	void *(*alloc)(struct gpu_dev *d, size_t bytes);
	void (*free)(struct gpu_dev *d, void *p);
	int (*copy_to_device)(struct gpu_dev *d, void *dst, const void *src, size_t bytes);
	int (*copy_to_host)(struct gpu_dev *d, void *dst, const void *src, size_t bytes);
	int (*memset)(struct gpu_dev *d, void *dst, int byte, size_t bytes);
	int (*sync)(struct gpu_dev *d, char *err, size_t errlen);
	/* cpu backend only (NULL elsewhere): pf_runtime.run_blocks */
	int (*run_blocks)(struct gpu_dev *d, pf_dim3 grid, pf_dim3 block,
			  void (*block_fn)(void *ctx, pf_dim3 block_idx), void *ctx, struct pf_launch_stats *st);
	/* Optional (NULL: gpu.c answers "not on this backend" or a no-op). */
	int (*module_load)(struct gpu_dev *d, const char *label, const void *image, size_t image_size,
			   const char *const *names, const char *const *lowered, int n,
			   struct gpu_module **out, char **log, char *err, size_t errlen);
	void (*kernel_info)(struct gpu_kernel *k, struct gpu_kernel_info *out);
	int (*trace_enable)(struct gpu_dev *d, char *err, size_t errlen);
	int (*trace_begin)(struct gpu_dev *d, char *err, size_t errlen);
	int (*trace_end)(struct gpu_dev *d, struct gpu_trace *out, char *err, size_t errlen);
	int (*trace_pause)(struct gpu_dev *d, char *err, size_t errlen);
	int (*l2_flush)(struct gpu_dev *d, char *err, size_t errlen);
	int (*driver_fds)(struct gpu_dev *d, int *fds, int max);
	/* the bench lock's file name part ("0000_19_00.0"); NULL: no lock */
	const char *(*lock_key)(struct gpu_dev *d);
	/* gpu_load_kernels_eagerly (NULL: nothing to do) */
	int (*eager_loading)(struct gpu_dev *d, char *err, size_t errlen);
	/* cpu backend only: count each launch's memory traffic (traffic.h) */
	int (*traffic_begin)(struct gpu_dev *d, char *err, size_t errlen);
	int (*traffic_end)(struct gpu_dev *d, struct gpu_traffic *out);
	int (*timing_begin)(struct gpu_dev *d, char *err, size_t errlen);
	int (*timing_end)(struct gpu_dev *d, struct gpu_traffic *out);
	int (*guard_begin)(struct gpu_dev *d);
	uint64_t (*guard_end)(struct gpu_dev *d, uintptr_t *first);
	void (*model_price)(struct gpu_dev *d, double lib_ms);
};

struct gpu_dev {
	const struct gpu_ops *ops;
	enum gpu_backend backend;
	char name[128];
	char arch[16];
	char arch_note[320];    /* why arch is not the device's own, or "" */
	int bench_fd;           /* the bench lock's descriptor while held */
	int bench_held;
};

struct gpu_module {
	struct gpu_dev *dev;
};

struct gpu_kernel {
	struct gpu_module *mod;
};

/* The cpu backend (cpu.c). */
int gpu_cpu_open(struct gpu_dev **out, char *err, size_t errlen);

/* The cuda backend (cuda.c).  Fails with the reason when no GPU is usable. */
int gpu_cuda_open(struct gpu_dev **out, char *err, size_t errlen);
/* In a forked child (the only thread there): the cuda backend's
 * process-wide locks start unlocked again - another thread of the parent
 * may have held one at the fork (gpu.c calls it, with CUPTI's, cuBLAS's and
 * cuDNN's, from a pthread_atfork child handler). */
void gpu_cuda_after_fork(void);

/* The driver descriptors of every cuda device initialised in this process. */
int gpu_cuda_process_fds(int *fds, int max);

/* --- internals exposed for the unit tests (no GPU needed) ----------------- */

/* Every driver entry point the cuda backend uses, checked in the library
 * at path (NULL: libcuda.so.1 / $PASSFS_LIBCUDA) without calling any: 0 when
 * all resolve, else -1 with the missing ones (or the dlopen error) in why. */
int gpu_cuda_check_symbols(const char *path, char *why, size_t whylen);

/* The launch-time argument check: nargs against n_params (n_params < 0:
 * unknown, not checked), then each sizes[i] (sizes NULL: not checked)
 * against param_sizes[i].  Returns 0, or -1 with a message naming `kname`. */
int gpu_cuda_check_args(const char *kname, int n_params, const size_t *param_sizes, int nargs,
			const size_t *sizes, char *err, size_t errlen);

/* Opens (creating, mode 0666) and exclusively flocks path, waiting up to
 * timeout_ms (< 0 forever) or until *cancel is nonzero (cancel may be NULL;
 * -1 with "cancelled").  Returns the descriptor, or -1 with the reason. */
int gpu_lockfile_acquire(const char *path, int timeout_ms, const int *cancel, char *err, size_t errlen);

/* Name expressions compare without white space: "softmax<float,256>"
 * finds "softmax<float, 256>".  (gpu.c) */
int gpu_same_name_expr(const char *a, const char *b);

#endif
