/* gpu.h - one interface in front of the backends that run CUDA C: "cuda"
 * (driver API, NVRTC, CUPTI, all loaded at run time) and "cpu" (the same
 * source compiled by the host C++ compiler against the CUDA emulation layer,
 * gpu/include/pf_emu.h).  The engine knows graphs and passes; this layer knows
 * devices, modules, memory and launches, nothing about tasks.
 *
 * Ownership: a gpu_dev owns the modules and allocations made through it until
 * they are freed or the device is closed.  Errors: functions return 0 or -1
 * and write a one-line message into the caller's err buffer (never exit). */
#ifndef PASSFS_GPU_H
#define PASSFS_GPU_H

#include <stddef.h>
#include <stdint.h>

#include "include/passfs_abi.h"

enum gpu_backend { GPU_BACKEND_CPU = 0, GPU_BACKEND_CUDA = 1 };

struct gpu_dev;
struct gpu_module;
struct gpu_kernel;

/* Opens a backend: "cpu", "cuda" or "auto" (cuda when a device exists, else
 * cpu).  "cuda" without a usable GPU fails with one clear line. */
int gpu_open(const char *which, struct gpu_dev **out, char *err, size_t errlen);
void gpu_close(struct gpu_dev *d);
enum gpu_backend gpu_backend_of(const struct gpu_dev *d);
/* "cpu (2 threads, emulated CUDA)" or the GPU's name. */
const char *gpu_device_name(const struct gpu_dev *d);
/* "sm_90" for the present GPU (or sm_90 on the cpu backend). */
const char *gpu_arch(const struct gpu_dev *d);

/* Compiles CUDA C source into a module holding the kernels named by the name
 * expressions `names` ("add_kernel", "softmax<float, 256>").  `label` is the
 * file name used in diagnostics.  On failure returns -1 and, when log is not
 * NULL, a malloc'd compiler log (file:line as the author wrote them). */
int gpu_module_compile(struct gpu_dev *d, const char *label, const char *src,
		       const char *const *names, int n_names, struct gpu_module **out,
		       char **log, char *err, size_t errlen);
void gpu_module_free(struct gpu_module *m);
/* The kernel for name expression `name` (one of those given at compile). */
struct gpu_kernel *gpu_module_kernel(struct gpu_module *m, const char *name);

/* Launches a kernel; args[i] points at the i-th argument's value, as with
 * cuLaunchKernel.  The number of arguments and their sizes are checked
 * against the kernel's parameters when the backend knows them. */
int gpu_launch(struct gpu_dev *d, struct gpu_kernel *k, pf_dim3 grid, pf_dim3 block, size_t smem,
	       void **args, int nargs, char *err, size_t errlen);

/* cpu backend: calls fn(ctx, block_idx) once per block of `grid`, spread over
 * the device's threads, a block start to finish on one thread (this is what
 * pf_runtime.run_blocks does for a loaded pass).  Returns 0, or -1 on a
 * backend without host-run blocks. */
int gpu_run_blocks(struct gpu_dev *d, pf_dim3 grid, void (*fn)(void *ctx, pf_dim3 block_idx), void *ctx);

/* Device memory.  gpu_alloc returns NULL when out of memory. */
void *gpu_alloc(struct gpu_dev *d, size_t bytes);
void gpu_free(struct gpu_dev *d, void *p);
int gpu_copy_to_device(struct gpu_dev *d, void *dst, const void *src, size_t bytes);
int gpu_copy_to_host(struct gpu_dev *d, void *dst, const void *src, size_t bytes);
int gpu_memset(struct gpu_dev *d, void *dst, int byte, size_t bytes);
/* Waits for all work on the device (context-wide). */
int gpu_sync(struct gpu_dev *d, char *err, size_t errlen);

#endif
