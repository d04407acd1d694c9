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
	int (*launch)(struct gpu_dev *d, struct gpu_kernel *k, pf_dim3 grid, pf_dim3 block,
		      size_t smem, void **args, int nargs, char *err, size_t errlen);
	void *(*alloc)(struct gpu_dev *d, size_t bytes);
	void (*free)(struct gpu_dev *d, void *p);
	int (*copy_to_device)(struct gpu_dev *d, void *dst, const void *src, size_t bytes);
	int (*copy_to_host)(struct gpu_dev *d, void *dst, const void *src, size_t bytes);
	int (*memset)(struct gpu_dev *d, void *dst, int byte, size_t bytes);
	int (*sync)(struct gpu_dev *d, char *err, size_t errlen);
	/* cpu backend only (NULL elsewhere): pf_runtime.run_blocks */
	int (*run_blocks)(struct gpu_dev *d, pf_dim3 grid,
			  void (*block_fn)(void *ctx, pf_dim3 block_idx), void *ctx);
};

struct gpu_dev {
	const struct gpu_ops *ops;
	enum gpu_backend backend;
	char name[128];
	char arch[16];
};

struct gpu_module {
	struct gpu_dev *dev;
};

struct gpu_kernel {
	struct gpu_module *mod;
};

/* The cpu backend (cpu.c). */
int gpu_cpu_open(struct gpu_dev **out, char *err, size_t errlen);

/* Whether a CUDA driver and at least one GPU are present: dlopen
 * libcuda.so.1, cuInit, cuDeviceGetCount.  Returns the device count (> 0),
 * or 0 with the reason in why. */
int gpu_cuda_probe(char *why, size_t whylen);

#endif
