/* gpu.c - backend selection and the calls that dispatch to it.  Arguments are
 * checked here once, so backends can trust them. */
#define _GNU_SOURCE
#include "backend.h"
#include "blas.h"
#include "cupti.h"
#include "dnn.h"
#include "file.h"
#include "traffic.h"

#include <dirent.h>
#include <dlfcn.h>
#include <errno.h>
#include <glob.h>
#include <limits.h>
#include <pthread.h>
#include <stdlib.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>
#include <stdio.h>
#include <string.h>

int gpu_open(const char *which, struct gpu_dev **out, char *err, size_t errlen)
{
	*out = NULL;
	int rc;
	if (which == NULL || strcmp(which, "auto") == 0) {
		char why[256] = "";
		const char *pin = getenv("PASSFS_CUDA_DEVICE");
		int gpus = gpu_cuda_probe(why, sizeof why);
		if (pin != NULL && *pin != '\0' && gpus <= 0) {
			/* a GPU was named: falling back to the cpu backend would
			 * score every pass on another machine than the one asked for */
			snprintf(err, errlen,
				 "--backend auto with PASSFS_CUDA_DEVICE=%s: %s (unset PASSFS_CUDA_DEVICE or use "
				 "--backend cpu for the cpu backend)",
				 pin, why[0] ? why : "no usable GPU");
			return -1;
		}
		rc = gpus > 0 ? gpu_cuda_open(out, err, errlen) : gpu_cpu_open(out, err, errlen);
	} else if (strcmp(which, "cpu") == 0) {
		rc = gpu_cpu_open(out, err, errlen);
	} else if (strcmp(which, "cuda") == 0) {
		rc = gpu_cuda_open(out, err, errlen);
	} else {
		snprintf(err, errlen, "--backend %s: unknown backend (auto, cuda or cpu)", which);
		return -1;
	}
	if (rc == 0)
		(*out)->bench_fd = -1;
	return rc;
}

int gpu_load_kernels_eagerly(struct gpu_dev *d, char *err, size_t errlen)
{
	return d->ops->eager_loading != NULL ? d->ops->eager_loading(d, err, errlen) : 0;
}

void gpu_close(struct gpu_dev *d)
{
	if (d == NULL)
		return;
	gpu_bench_unlock(d);
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

const char *gpu_arch_note(const struct gpu_dev *d)
{
	return d->arch_note;
}

int gpu_memory_spec(const struct gpu_dev *d, int *clock_khz, int *bus_bits, long long *l2_bytes)
{
	if (d == NULL || d->backend != GPU_BACKEND_CUDA)
		return -1;
	struct gpu_cuda_info ci;
	gpu_cuda_info_get(&ci);         /* the probe's answer, cached */
	if (ci.count <= 0 || ci.mem_clock_khz <= 0 || ci.mem_bus_bits <= 0)
		return -1;
	*clock_khz = ci.mem_clock_khz;
	*bus_bits = ci.mem_bus_bits;
	*l2_bytes = ci.l2_bytes > 0 ? ci.l2_bytes : 0;
	return 0;
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
	return gpu_launch_sized(d, k, grid, block, smem, args, nargs, NULL, err, errlen);
}

int gpu_launch_sized(struct gpu_dev *d, struct gpu_kernel *k, pf_dim3 grid, pf_dim3 block, size_t smem,
		     void **args, int nargs, const size_t *arg_sizes, char *err, size_t errlen)
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
	return d->ops->launch(d, k, grid, block, smem, args, nargs, arg_sizes, err, errlen);
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

int gpu_run_blocks(struct gpu_dev *d, pf_dim3 grid, pf_dim3 block, void (*block_fn)(void *ctx, pf_dim3 block_idx),
		   void *ctx, struct pf_launch_stats *st)
{
	if (d->ops->run_blocks == NULL || grid.x == 0 || grid.y == 0 || grid.z == 0)
		return -1;
	return d->ops->run_blocks(d, grid, block, block_fn, ctx, st);
}

/* --- loading, introspection, benchmark support ------------------------------- */

static int not_here(const struct gpu_dev *d, const char *what, char *err, size_t errlen)
{
	snprintf(err, errlen, "%s needs the cuda backend (this is %s)", what, d->name);
	return -1;
}

int gpu_module_load(struct gpu_dev *d, const char *label, const void *image, size_t image_size,
		    const char *const *names, const char *const *lowered, int n, struct gpu_module **out,
		    char **log, char *err, size_t errlen)
{
	*out = NULL;
	if (log != NULL)
		*log = NULL;
	if (label == NULL)
		label = "module";
	if (image == NULL || n < 0 || (n > 0 && (names == NULL || lowered == NULL))) {
		snprintf(err, errlen, "%s: no code or kernel names given", label);
		return -1;
	}
	for (int i = 0; i < n; i++)
		if (names[i] == NULL || lowered[i] == NULL) {
			snprintf(err, errlen, "%s: kernel %d has no name or no lowered name", label, i);
			return -1;
		}
	if (d->ops->module_load == NULL)
		return not_here(d, "loading compiled device code", err, errlen);
	return d->ops->module_load(d, label, image, image_size, names, lowered, n, out, log, err, errlen);
}

int gpu_module_kernel_count(struct gpu_module *m)
{
	return m != NULL ? m->dev->ops->module_kernel_count(m) : 0;
}

struct gpu_kernel *gpu_module_kernel_at(struct gpu_module *m, int i)
{
	return m != NULL ? m->dev->ops->module_kernel_at(m, i) : NULL;
}

int gpu_kernel_info(struct gpu_kernel *k, struct gpu_kernel_info *out)
{
	if (k == NULL)
		return -1;
	*out = (struct gpu_kernel_info){.name = "", .lowered = "", .num_regs = -1, .shared_bytes = -1,
					.local_bytes = -1, .const_bytes = -1, .max_threads_per_block = -1,
					.n_params = -1, .param_bytes = -1};
	k->mod->dev->ops->kernel_info(k, out);
	return 0;
}

int gpu_trace_enable(struct gpu_dev *d, char *err, size_t errlen)
{
	if (d->ops->trace_enable == NULL)
		return not_here(d, "GPU timing (CUPTI)", err, errlen);
	return d->ops->trace_enable(d, err, errlen);
}

int gpu_trace_begin(struct gpu_dev *d, char *err, size_t errlen)
{
	if (d->ops->trace_begin == NULL)
		return not_here(d, "GPU timing (CUPTI)", err, errlen);
	return d->ops->trace_begin(d, err, errlen);
}

int gpu_trace_pause(struct gpu_dev *d, char *err, size_t errlen)
{
	if (d->ops->trace_pause == NULL)
		return not_here(d, "GPU timing (CUPTI)", err, errlen);
	return d->ops->trace_pause(d, err, errlen);
}

int gpu_trace_end(struct gpu_dev *d, struct gpu_trace *out, char *err, size_t errlen)
{
	memset(out, 0, sizeof *out);
	if (d->ops->trace_end == NULL)
		return not_here(d, "GPU timing (CUPTI)", err, errlen);
	return d->ops->trace_end(d, out, err, errlen);
}

int gpu_traffic_install(void)
{
	return traffic_install();
}

int gpu_traffic_begin(struct gpu_dev *d, char *err, size_t errlen)
{
	if (d->ops->traffic_begin == NULL) {
		snprintf(err, errlen, "counting memory traffic needs the cpu backend (this is %s)", d->name);
		return -1;
	}
	return d->ops->traffic_begin(d, err, errlen);
}

int gpu_traffic_end(struct gpu_dev *d, struct gpu_traffic *out)
{
	memset(out, 0, sizeof(*out));
	if (d->ops->traffic_end == NULL)
		return -1;
	return d->ops->traffic_end(d, out);
}

int gpu_timing_begin(struct gpu_dev *d, char *err, size_t errlen)
{
	if (d->ops->timing_begin == NULL) {
		snprintf(err, errlen, "timing CUDA threads needs the cpu backend (this is %s)", d->name);
		return -1;
	}
	return d->ops->timing_begin(d, err, errlen);
}

int gpu_timing_end(struct gpu_dev *d, struct gpu_traffic *out)
{
	if (d->ops->timing_end == NULL)
		return -1;
	return d->ops->timing_end(d, out);
}

void gpu_model_price(struct gpu_dev *d, double lib_ms)
{
	if (d->ops->model_price)
		d->ops->model_price(d, lib_ms);
}

int gpu_guard_begin(struct gpu_dev *d)
{
	return d->ops->guard_begin ? d->ops->guard_begin(d) : -1;
}

uint64_t gpu_guard_end(struct gpu_dev *d, uintptr_t *first)
{
	if (first)
		*first = 0;
	return d->ops->guard_end ? d->ops->guard_end(d, first) : 0;
}

int gpu_l2_flush(struct gpu_dev *d, char *err, size_t errlen)
{
	if (d->ops->l2_flush == NULL)
		return 0;
	return d->ops->l2_flush(d, err, errlen);
}

/* Ascending; insertion: the lists are descriptors, a few hundred at most. */
static void sort_fds(int *a, int n)
{
	for (int i = 1; i < n; i++)
		for (int j = i; j > 0 && a[j - 1] > a[j]; j--) {
			int t = a[j];
			a[j] = a[j - 1];
			a[j - 1] = t;
		}
}

/* The open descriptors of this process, sorted ascending. */
int gpu_list_open_fds(int *fds, int max)
{
	DIR *d = opendir("/proc/self/fd");
	if (d == NULL)
		return 0;
	int n = 0, self = dirfd(d);
	struct dirent *e;
	while ((e = readdir(d)) != NULL && n < max) {
		if (e->d_name[0] < '0' || e->d_name[0] > '9')
			continue;
		int fd = atoi(e->d_name);
		if (fd != self)
			fds[n++] = fd;
	}
	closedir(d);
	sort_fds(fds, n);
	return n;
}

int gpu_driver_fds(struct gpu_dev *d, int *fds, int max)
{
	if (fds == NULL || max <= 0)
		return 0;
	if (d == NULL)
		return gpu_cuda_process_fds(fds, max);
	if (d->ops->driver_fds == NULL)
		return 0;
	return d->ops->driver_fds(d, fds, max);
}

int gpu_bench_lock(struct gpu_dev *d, int timeout_ms, const int *cancel, char *err, size_t errlen)
{
	const char *key = d->ops->lock_key ? d->ops->lock_key(d) : NULL;
	if (key == NULL)
		return 0;
	if (d->bench_held) {
		snprintf(err, errlen, "the GPU benchmark lock is already held by this device");
		return -1;
	}
	const char *dir = getenv("PASSFS_LOCK_DIR");
	char path[4096];
	snprintf(path, sizeof path, "%s/passfs-gpu-%s.lock", dir && *dir ? dir : "/tmp", key);
	int fd = gpu_lockfile_acquire(path, timeout_ms, cancel, err, errlen);
	if (fd < 0)
		return -1;
	d->bench_fd = fd;
	d->bench_held = 1;
	return 0;
}

void gpu_bench_unlock(struct gpu_dev *d)
{
	if (d == NULL || !d->bench_held)
		return;
	flock(d->bench_fd, LOCK_UN);
	close(d->bench_fd);
	d->bench_fd = -1;
	d->bench_held = 0;
}

int gpu_same_name_expr(const char *a, const char *b)
{
	for (;;) {
		while (*a == ' ' || *a == '\t' || *a == '\n')
			a++;
		while (*b == ' ' || *b == '\t' || *b == '\n')
			b++;
		if (*a != *b)
			return 0;
		if (*a == '\0')
			return 1;
		a++;
		b++;
	}
}

int gpu_cache_dir(const char *what, char *buf, size_t len)
{
	const char *env = getenv("PASSFS_CACHE_DIR");
	const char *x = getenv("XDG_CACHE_HOME"), *home = getenv("HOME");
	int n;
	if (env != NULL && (*env == '\0' || strcmp(env, "off") == 0 || strcmp(env, "0") == 0))
		return -1;
	if (env != NULL)
		n = snprintf(buf, len, "%s", env);
	else if (x != NULL && *x == '/')
		n = snprintf(buf, len, "%s/passfs/%s", x, what);
	else if (home != NULL && *home == '/')
		n = snprintf(buf, len, "%s/.cache/passfs/%s", home, what);
	else
		return -1;
	if (n < 0 || (size_t)n >= len)
		return -1;
	return base_mkdirs(buf, 0700) != 0 ? -1 : 0;
}

/* Workers are forked from a daemon whose other threads run other
 * evaluations: a process-wide lock one of them held at the fork would stay
 * locked for ever in the child (seen: 14 of 40 children stuck while a
 * thread asked for the probe's answer in a loop).  The child is the only
 * thread there, so each lock starts afresh; what a lock guards is written
 * once (the probe's answer, the loaded libraries) before any worker is
 * forked. */
static pthread_rwlock_t fork_guard;
static pthread_once_t fork_guard_once = PTHREAD_ONCE_INIT;

/* Writer-preferring: a worker's fork is not held off by a stream of loads. */
static void fork_guard_init(void)
{
	pthread_rwlockattr_t a;
	pthread_rwlockattr_init(&a);
	pthread_rwlockattr_setkind_np(&a, PTHREAD_RWLOCK_PREFER_WRITER_NONRECURSIVE_NP);
	pthread_rwlock_init(&fork_guard, &a);
	pthread_rwlockattr_destroy(&a);
}

void *gpu_dlopen(const char *path, int flags)
{
	pthread_once(&fork_guard_once, fork_guard_init);
	pthread_rwlock_rdlock(&fork_guard);
	void *h = dlopen(path, flags);
	pthread_rwlock_unlock(&fork_guard);
	return h;
}

int gpu_dlclose(void *handle)
{
	pthread_once(&fork_guard_once, fork_guard_init);
	pthread_rwlock_rdlock(&fork_guard);
	int rc = dlclose(handle);
	pthread_rwlock_unlock(&fork_guard);
	return rc;
}

int gpu_close_fds_except(const int *keep, int n)
{
	int k[16];
	if (n < 0 || n > 16 || (n > 0 && keep == NULL)) {
		errno = EINVAL;
		return -1;
	}
	if (n > 0)
		memcpy(k, keep, sizeof(int) * (size_t)n);
	sort_fds(k, n);
	unsigned lo = 3;
	for (int i = 0; i < n; i++) {
		if (k[i] < 3 || (unsigned)k[i] < lo)
			continue;
		if ((unsigned)k[i] > lo && close_range(lo, (unsigned)k[i] - 1, 0))
			return -1;
		lo = (unsigned)k[i] + 1;
	}
	return close_range(lo, ~0u, 0);
}

pid_t gpu_fork_worker(const int *keep, int n_keep)
{
	pthread_once(&fork_guard_once, fork_guard_init);
	pthread_rwlock_wrlock(&fork_guard);
	pid_t pid = fork();
	if (pid != 0) {
		pthread_rwlock_unlock(&fork_guard);
		return pid;
	}
	/* The child's copy of the guard starts afresh (gpu_after_fork_child).
	 * It holds every descriptor the daemon had open at the fork: other
	 * evaluations' pipes among them, whose readers wait for end of file
	 * until every copy of the write end is closed (seen: one evaluation
	 * held "compiling" until another's spinning pass timed out). */
	if (gpu_close_fds_except(keep, n_keep)) {
		static const char msg[] = "passfs: a forked worker cannot close the descriptors it inherited\n";
		ssize_t w = write(2, msg, sizeof msg - 1);
		(void)w;
		_exit(127);
	}
	return 0;
}

static void gpu_after_fork_child(void)
{
	fork_guard_init();
	gpu_cuda_after_fork();
	cupti_after_fork();
	blas_after_fork();
	dnn_after_fork();
}

__attribute__((constructor)) static void gpu_register_atfork(void)
{
	pthread_atfork(NULL, NULL, gpu_after_fork_child);
}

typedef char *(*demangle_fn)(const char *, char *, size_t *, int *);
static demangle_fn demangler;
static pthread_once_t demangler_once = PTHREAD_ONCE_INIT;

static void demangler_load(void)
{
	void *h = gpu_dlopen("libstdc++.so.6", RTLD_NOW | RTLD_LOCAL);
	if (h != NULL)
		*(void **)&demangler = dlsym(h, "__cxa_demangle");
}

int gpu_demangle(const char *lowered, char *out, size_t len)
{
	if (len == 0)
		return -1;
	snprintf(out, len, "%s", lowered);
	if (strncmp(lowered, "_Z", 2) != 0)
		return -1;
	pthread_once(&demangler_once, demangler_load);
	if (demangler == NULL)
		return -1;
	int status = -1;
	char *d = demangler(lowered, NULL, NULL, &status);
	if (d == NULL || status != 0) {
		free(d);
		return -1;
	}
	snprintf(out, len, "%s", d);
	free(d);
	return 0;
}

int gpu_open_lib(const char *const *names, int n, int (*try_open)(const char *path, void *ctx), void *ctx)
{
	for (int i = 0; n < 0 ? names[i] != NULL : i < n; i++)
		if (try_open(names[i], ctx))
			return 1;
	char wheel[PATH_MAX];
	for (int i = 0; n < 0 ? names[i] != NULL : i < n; i++)
		if (strchr(names[i], '/') == NULL && gpu_wheel_lib(names[i], wheel, sizeof wheel) &&
		    try_open(wheel, ctx))
			return 1;
	return 0;
}

/* gpu_dlopen_vendor's try_open: the handle, and the first failure's words. */
struct vendor_try {
	void *h;
	char first[300];
};

static int vendor_try_open(const char *path, void *ctx)
{
	struct vendor_try *t = ctx;
	t->h = gpu_dlopen(path, RTLD_NOW | RTLD_LOCAL);
	if (t->h == NULL && t->first[0] == 0) {
		const char *e = dlerror();
		snprintf(t->first, sizeof t->first, "%s", e ? e : path);
	}
	return t->h != NULL;
}

void *gpu_dlopen_vendor(const char *env, const char *what, const char *const *names, int n, char *err,
			size_t errlen)
{
	const char *path = getenv(env);
	if (path && *path) {
		void *h = gpu_dlopen(path, RTLD_NOW | RTLD_LOCAL);
		if (h == NULL) {
			const char *e = dlerror();
			snprintf(err, errlen, "cannot load %s=%s: %s", env, path, e ? e : "?");
		}
		return h;
	}
	const char *drv = getenv("PASSFS_LIBCUDA");
	if (drv && *drv && strcmp(drv, "libcuda.so.1") != 0) {
		snprintf(err, errlen, "not loaded: PASSFS_LIBCUDA names another driver than %s would use (set %s)", what,
			 env);
		return NULL;
	}
	struct vendor_try t = {NULL, ""};
	if (gpu_open_lib(names, n, vendor_try_open, &t))
		return t.h;
	snprintf(err, errlen, "no %s (%s; nor in PASSFS_CUDA_LIBDIRS or a Python site's nvidia wheels)", what,
		 t.first);
	return NULL;
}

static int lib_in(const char *dir, const char *name, char *out, size_t outlen)
{
	int k = snprintf(out, outlen, "%s/%s", dir, name);
	return k > 0 && (size_t)k < outlen && access(out, R_OK) == 0;
}

/* A file of the nvidia wheels: SUB is "lib" or "include". */
static int wheel_file(const char *sub, const char *name, char *out, size_t outlen)
{
	const char *dirs = getenv("PASSFS_CUDA_LIBDIRS");
	if (dirs != NULL && *dirs != '\0') {
		char buf[4096], d2[PATH_MAX];
		snprintf(buf, sizeof buf, "%s", dirs);
		char *save = NULL;
		for (char *d = strtok_r(buf, ":", &save); d != NULL; d = strtok_r(NULL, ":", &save)) {
			if (!*d)
				continue;
			/* a lib directory's headers are beside it, in ../include */
			int k = strcmp(sub, "lib") == 0 ? snprintf(d2, sizeof d2, "%s", d)
							: snprintf(d2, sizeof d2, "%s/../%s", d, sub);
			if (k > 0 && (size_t)k < sizeof d2 && lib_in(d2, name, out, outlen))
				return 1;
		}
	}
	const char *roots[] = {getenv("VIRTUAL_ENV"), getenv("CONDA_PREFIX"), NULL, "/usr/local", "/usr",
			       "/opt/conda"};
	char home[PATH_MAX] = "";
	const char *h = getenv("HOME");
	if (h != NULL && *h == '/') {
		snprintf(home, sizeof home, "%s/.local", h);
		roots[2] = home;
	}
	static const char *const kinds[] = {"site-packages", "dist-packages"};
	for (size_t r = 0; r < sizeof roots / sizeof roots[0]; r++) {
		if (roots[r] == NULL || roots[r][0] != '/')
			continue;
		for (size_t k = 0; k < 2; k++) {
			char pat[PATH_MAX];
			snprintf(pat, sizeof pat, "%s/lib/python3*/%s/nvidia/*/%s", roots[r], kinds[k], sub);
			glob_t g;
			if (glob(pat, GLOB_ONLYDIR | GLOB_NOSORT, NULL, &g) != 0)
				continue;
			int found = 0;
			for (size_t i = 0; i < g.gl_pathc && !found; i++)
				found = lib_in(g.gl_pathv[i], name, out, outlen);
			globfree(&g);
			if (found)
				return 1;
		}
	}
	return 0;
}

int gpu_wheel_lib(const char *name, char *out, size_t outlen)
{
	return wheel_file("lib", name, out, outlen);
}

int gpu_wheel_include(const char *name, char *out, size_t outlen)
{
	if (!wheel_file("include", name, out, outlen))
		return 0;
	char *slash = strrchr(out, '/');
	if (slash != NULL)
		*slash = '\0';
	return 1;
}

int gpu_vendor_context(struct gpu_dev *d, const char *what, struct gpu_vendor_owner *own, char *err,
		       size_t errlen)
{
	if (d == NULL || gpu_backend_of(d) != GPU_BACKEND_CUDA) {
		snprintf(err, errlen, "%s: only on the cuda backend", what);
		return -1;
	}
	char e[300];
	if (gpu_sync(d, e, sizeof(e))) {
		snprintf(err, errlen, "%s: %s", what, e);
		return -1;
	}
	*own = (struct gpu_vendor_owner){.pid = getpid(), .dev = d, .thread = pthread_self()};
	return 0;
}

int gpu_vendor_use(struct gpu_vendor_owner *own, const char *what, char *err, size_t errlen)
{
	if (own->pid != getpid()) {
		snprintf(err, errlen, "%s: the handle belongs to another process", what);
		return -1;
	}
	if (!pthread_equal(own->thread, pthread_self())) {
		/* another thread: make the device's context current here first */
		char e[300];
		if (gpu_sync(own->dev, e, sizeof(e))) {
			snprintf(err, errlen, "%s: %s", what, e);
			return -1;
		}
		own->thread = pthread_self();
	}
	return 0;
}

int gpu_vendor_mine(const struct gpu_vendor_owner *own)
{
	return own->pid == getpid();
}
