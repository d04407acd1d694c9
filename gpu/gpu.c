/* gpu.c - backend selection and the calls that dispatch to it.  Arguments are
 * checked here once, so backends can trust them. */
#include "backend.h"

#include <dlfcn.h>
#include <stdio.h>
#include <string.h>

int gpu_cuda_probe(char *why, size_t whylen)
{
	void *h = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
	if (h == NULL) {
		snprintf(why, whylen, "no CUDA driver (libcuda.so.1)");
		return 0;
	}
	int (*init)(unsigned) = (int (*)(unsigned))dlsym(h, "cuInit");
	int (*count)(int *) = (int (*)(int *))dlsym(h, "cuDeviceGetCount");
	int n = 0;
	if (init == NULL || count == NULL) {
		snprintf(why, whylen, "libcuda.so.1 lacks cuInit/cuDeviceGetCount");
	} else if (init(0) != 0) {
		snprintf(why, whylen, "cuInit failed (no GPU, or the driver cannot use it)");
	} else if (count(&n) != 0 || n <= 0) {
		snprintf(why, whylen, "no GPU on this machine");
		n = 0;
	}
	/* The driver stays loaded: unloading an initialised libcuda is not
	 * supported, and the cuda backend will want it. */
	return n;
}

int gpu_open(const char *which, struct gpu_dev **out, char *err, size_t errlen)
{
	*out = NULL;
	if (which == NULL || strcmp(which, "auto") == 0) {
		/* The cuda backend is not written yet: auto means cpu for now,
		 * even where a GPU exists. */
		return gpu_cpu_open(out, err, errlen);
	}
	if (strcmp(which, "cpu") == 0)
		return gpu_cpu_open(out, err, errlen);
	if (strcmp(which, "cuda") == 0) {
		char why[256];
		if (gpu_cuda_probe(why, sizeof why) <= 0)
			snprintf(err, errlen,
				 "--backend cuda: no CUDA driver (libcuda.so.1) or no GPU on this machine");
		else
			snprintf(err, errlen, "--backend cuda: the cuda backend is not available in this "
				 "build yet (use --backend cpu)");
		return -1;
	}
	snprintf(err, errlen, "--backend %s: unknown backend (auto, cuda or cpu)", which);
	return -1;
}

void gpu_close(struct gpu_dev *d)
{
	if (d != NULL)
		d->ops->close(d);
}

enum gpu_backend gpu_backend_of(const struct gpu_dev *d)
{
	return d->backend;
}

const char *gpu_device_name(const struct gpu_dev *d)
{
	return d->name;
}

const char *gpu_arch(const struct gpu_dev *d)
{
	return d->arch;
}

int gpu_module_compile(struct gpu_dev *d, const char *label, const char *src,
		       const char *const *names, int n_names, struct gpu_module **out,
		       char **log, char *err, size_t errlen)
{
	*out = NULL;
	if (log != NULL)
		*log = NULL;
	if (src == NULL || n_names < 0 || (n_names > 0 && names == NULL)) {
		snprintf(err, errlen, "%s: no source or kernel names given", label ? label : "module");
		return -1;
	}
	return d->ops->module_compile(d, label ? label : "module.cu", src, names, n_names, out, log,
				      err, errlen);
}

void gpu_module_free(struct gpu_module *m)
{
	if (m != NULL)
		m->dev->ops->module_free(m);
}

struct gpu_kernel *gpu_module_kernel(struct gpu_module *m, const char *name)
{
	if (m == NULL || name == NULL)
		return NULL;
	return m->dev->ops->module_kernel(m, name);
}

int gpu_launch(struct gpu_dev *d, struct gpu_kernel *k, pf_dim3 grid, pf_dim3 block, size_t smem,
	       void **args, int nargs, char *err, size_t errlen)
{
	if (k == NULL) {
		snprintf(err, errlen, "launch of a null kernel");
		return -1;
	}
	if (k->mod->dev != d) {
		snprintf(err, errlen, "launch of a kernel from another device");
		return -1;
	}
	if (nargs < 0 || (nargs > 0 && args == NULL)) {
		snprintf(err, errlen, "launch with %d arguments but no argument list", nargs);
		return -1;
	}
	return d->ops->launch(d, k, grid, block, smem, args, nargs, err, errlen);
}

void *gpu_alloc(struct gpu_dev *d, size_t bytes)
{
	return d->ops->alloc(d, bytes);
}

void gpu_free(struct gpu_dev *d, void *p)
{
	if (p != NULL)
		d->ops->free(d, p);
}

int gpu_copy_to_device(struct gpu_dev *d, void *dst, const void *src, size_t bytes)
{
	if (bytes == 0)
		return 0;
	return d->ops->copy_to_device(d, dst, src, bytes);
}

int gpu_copy_to_host(struct gpu_dev *d, void *dst, const void *src, size_t bytes)
{
	if (bytes == 0)
		return 0;
	return d->ops->copy_to_host(d, dst, src, bytes);
}

int gpu_memset(struct gpu_dev *d, void *dst, int byte, size_t bytes)
{
	if (bytes == 0)
		return 0;
	return d->ops->memset(d, dst, byte, bytes);
}

int gpu_sync(struct gpu_dev *d, char *err, size_t errlen)
{
	return d->ops->sync(d, err, errlen);
}

int gpu_run_blocks(struct gpu_dev *d, pf_dim3 grid, void (*block_fn)(void *ctx, pf_dim3 block_idx),
		   void *ctx)
{
	if (d->ops->run_blocks == NULL || grid.x == 0 || grid.y == 0 || grid.z == 0)
		return -1;
	return d->ops->run_blocks(d, grid, block_fn, ctx);
}
