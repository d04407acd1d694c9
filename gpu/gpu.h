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

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "include/passfs_abi.h"

enum gpu_backend { GPU_BACKEND_CPU = 0, GPU_BACKEND_CUDA = 1 };

struct gpu_dev;
struct gpu_module;
struct gpu_kernel;

/* Opens a backend: "cpu", "cuda" or "auto" (cuda when a device exists, else
 * cpu).  "cuda" without a usable GPU fails with one clear line.
 *
 * The cuda backend finds the GPU with a probe in a short-lived child
 * process (the answer is cached for the process and the children it forks
 * later), and initialises CUDA in the calling process only when the device
 * is first used (alloc, compile, load, copy, sync): a process that only
 * opens, names and closes a cuda device never initialises CUDA, so it may
 * fork workers that each use the GPU (a CUDA context does not survive
 * fork).  PASSFS_CUDA_DEVICE picks the device ordinal (default 0). */
int gpu_open(const char *which, struct gpu_dev **out, char *err, size_t errlen);
/* Kernels are to load with their module (CUDA_MODULE_LOADING=EAGER), not
 * at their first launch: for a process that enters a sandbox after loading
 * its modules (the pass worker), where the driver's load at a first launch
 * would come after the sandbox.  Without it the driver's default holds
 * (lazy since CUDA 12.2), so a process that loads a large library (eager's
 * cuBLAS) loads only the kernels it runs.  CUDA reads the setting once per
 * process, at cuInit: call before the device's first use.  An explicit
 * CUDA_MODULE_LOADING in the environment is left as it is.  Returns 0 (the
 * cpu backend loads nothing lazily), or -1 with err when CUDA is already
 * initialised in this process. */
int gpu_load_kernels_eagerly(struct gpu_dev *d, char *err, size_t errlen);
void gpu_close(struct gpu_dev *d);
enum gpu_backend gpu_backend_of(const struct gpu_dev *d);
/* "cpu (2 threads, emulated CUDA)" or the GPU's name. */
const char *gpu_device_name(const struct gpu_dev *d);
/* The NVRTC target for the device: "sm_90a" on compute capability 9.0
 * (Hopper: wgmma, setmaxnreg and TMA need the "a" target), "sm_XY" on
 * others; "sm_90" on the cpu backend.  On a GPU newer than the NVRTC in use,
 * "compute_XY" of the newest arch NVRTC knows: PTX only, JIT-compiled by the
 * driver at load (gpu_arch_note says so). */
const char *gpu_arch(const struct gpu_dev *d);
/* Why gpu_arch is not the device's own arch (one line), or "". */
const char *gpu_arch_note(const struct gpu_dev *d);
/* A GPU's memory: peak clock (kHz), bus width (bits) and L2 size (bytes), as
 * the driver reports them.  0, or -1 on the cpu backend or when the driver
 * does not report both clock and width. */
int gpu_memory_spec(const struct gpu_dev *d, int *clock_khz, int *bus_bits, long long *l2_bytes);

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

/* Loads an already compiled module (cuda backend): `image` is NVRTC's PTX
 * (NUL-terminated text, JIT-compiled for the device at load) or a cubin
 * (ELF, image_size bytes); names[i] is a name expression and lowered[i] its
 * lowered (mangled) name from the same compile.  On failure returns -1 and,
 * when log is not NULL, the JIT's error log (malloc'd).  The cpu backend
 * answers -1 ("... needs the cuda backend"). */
int gpu_module_load(struct gpu_dev *d, const char *label, const void *image, size_t image_size,
		    const char *const *names, const char *const *lowered, int n, struct gpu_module **out,
		    char **log, char *err, size_t errlen);
/* The kernels of a module, in the order of the names given at compile or
 * load time: count, then 0 <= i < count. */
int gpu_module_kernel_count(struct gpu_module *m);
struct gpu_kernel *gpu_module_kernel_at(struct gpu_module *m, int i);

/* Launches a kernel; args[i] points at the i-th argument's value, as with
 * cuLaunchKernel.  The number of arguments and their sizes are checked
 * against the kernel's parameters when the backend knows them (cuda:
 * cuFuncGetParamInfo; cpu: the trampoline checks the count).  On the cuda
 * backend launches are asynchronous: a fault inside the kernel is reported
 * by the next gpu_sync (or copy), naming the kernels launched since the
 * previous sync, and leaves the device unusable (every later call fails
 * with the same message; the process must end). */
int gpu_launch(struct gpu_dev *d, struct gpu_kernel *k, pf_dim3 grid, pf_dim3 block, size_t smem,
	       void **args, int nargs, char *err, size_t errlen);
/* Same, also checking arg_sizes[i] (the host's sizeof of argument i, NULL:
 * unchecked) against the kernel's parameter sizes: a mismatch means host
 * and device disagree on a parameter's type and is refused. */
int gpu_launch_sized(struct gpu_dev *d, struct gpu_kernel *k, pf_dim3 grid, pf_dim3 block, size_t smem,
		     void **args, int nargs, const size_t *arg_sizes, char *err, size_t errlen);

/* What a compiled kernel uses (result.json reports it per kernel).  Fields
 * the backend cannot know are -1 (all of them on the cpu backend). */
struct gpu_kernel_info {
	const char *name;               /* the name expression (owned by the kernel) */
	const char *lowered;            /* the lowered name, "" when none */
	int num_regs;                   /* registers per thread */
	int shared_bytes;               /* static shared memory per block */
	int local_bytes;                /* local memory per thread (spills, stack arrays) */
	int const_bytes;
	int max_threads_per_block;      /* the most this kernel can be launched with */
	int n_params;                   /* parameter count (cuFuncGetParamInfo), -1 unknown */
	long long param_bytes;          /* size of the parameter block, -1 unknown */
};
/* Returns 0 and fills *out, or -1 (k NULL). */
int gpu_kernel_info(struct gpu_kernel *k, struct gpu_kernel_info *out);

/* cpu backend: calls fn(ctx, block_idx) once per block of `grid`, spread over
 * the device's threads, a block start to finish on one thread (this is what
 * pf_runtime.run_blocks does for a loaded pass; `block` and `st` as there).  Returns 0, or -1 on a
 * backend without host-run blocks. */
int gpu_run_blocks(struct gpu_dev *d, pf_dim3 grid, pf_dim3 block, void (*fn)(void *ctx, pf_dim3 block_idx),
		   void *ctx, struct pf_launch_stats *st);

/* Device memory.  gpu_alloc returns NULL when out of memory. */
void *gpu_alloc(struct gpu_dev *d, size_t bytes);
void gpu_free(struct gpu_dev *d, void *p);
int gpu_copy_to_device(struct gpu_dev *d, void *dst, const void *src, size_t bytes);
int gpu_copy_to_host(struct gpu_dev *d, void *dst, const void *src, size_t bytes);
int gpu_memset(struct gpu_dev *d, void *dst, int byte, size_t bytes);
/* Waits for all work on the device (context-wide: every stream). */
int gpu_sync(struct gpu_dev *d, char *err, size_t errlen);

/* ---- Benchmark support -------------------------------------------------
 *
 * GPU time from CUPTI activity records (cuda backend).  Kernels, memcpys and
 * memsets on every stream of the context are recorded, so work a call
 * leaves running (or puts on another stream) is counted.  Use:
 *
 *     gpu_open(...); gpu_trace_enable(d, ...);    before any module or alloc
 *     ...
 *     gpu_sync(d); gpu_trace_begin(d, ...); t0 = clock;
 *     run the call; gpu_sync(d); t1 = clock;
 *     gpu_trace_end(d, &tr, ...);                 after the host clock stops
 *
 * Tracing costs host time per launch while enabled (both eager and pass
 * pay it per launch); PASSFS_CUPTI=0 in the environment turns it off
 * (gpu_trace_enable then fails saying so). */
#define GPU_TRACE_MAX_KERNELS 8
struct gpu_trace {
	double kernel_ms;               /* sum of kernel durations */
	double memcpy_ms, memset_ms;    /* sums of copy and memset durations */
	double span_ms;                 /* first start to last end over every record */
	int n_kernels, n_memcpy, n_memset;
	int n_streams;                  /* distinct streams seen (up to 16 counted) */
	unsigned long long dropped;     /* records CUPTI dropped or could not time (start = end
					 * = 0); > 0: the sums are short */
	int n_names;                    /* per kernel (lowered name), the first 8 seen */
	struct {
		char name[192];         /* cut to fit: a longer one is not demangled */
		double ms;
		int count;
	} kernels[GPU_TRACE_MAX_KERNELS];
};
/* Starts recording.  Returns 0, or -1 with the reason (cpu backend; CUPTI
 * not found; PASSFS_CUPTI=0; another CUPTI client such as nsys). */
int gpu_trace_enable(struct gpu_dev *d, char *err, size_t errlen);
/* Collect records only inside windows from now on (after setup: module
 * loads happen with collection on, as CUPTI wants).  Calls outside a window
 * then pay no tracing cost, so timed calls can run untraced.  Returns 0, or
 * -1 when tracing is not enabled. */
int gpu_trace_pause(struct gpu_dev *d, char *err, size_t errlen);
/* Opens a window: records that start before this call are not counted.
 * Returns 0, or -1 when tracing is not enabled. */
int gpu_trace_begin(struct gpu_dev *d, char *err, size_t errlen);
/* Closes the window: synchronises the context, flushes CUPTI (forced) and
 * sums the records that started since gpu_trace_begin into *out.  Returns 0
 * or -1 (err says why; a device error is reported as by gpu_sync). */
int gpu_trace_end(struct gpu_dev *d, struct gpu_trace *out, char *err, size_t errlen);

/* The device memory the cpu backend's launches touch, for the modeled GPU
 * time (gpu/traffic.c): between begin and end every launch is counted, with
 * the bytes of the pages it touched in live device allocations.  Needs
 * gpu_traffic_install() in the process first (before a sandbox); on
 * another backend begin fails with "... needs the cpu backend". */
struct gpu_traffic {
	uint64_t launches;
	uint64_t bytes;
	int approx;             /* some allocation counted whole (too many mappings) */
	int uncounted;          /* launches that ran without counting (no memory to protect with) */
	/* After gpu_timing_end (the same call again, each launch's CUDA
	 * threads timed): the modeled H200 time (traffic.h, the model) and
	 * its parts summed over the launches, in ms. */
	int timed;              /* the model below is set */
	int mismatch;           /* the timed call launched differently: the model used what it could */
	uint64_t threads;       /* CUDA threads over the launches */
	double model_ms;        /* launches x launch cost + per launch the largest of the three below */
	double mem_ms, path_ms, par_ms;
	double launch_cpu_ms;   /* the last timed call's launches, the calling thread's CPU ms
				 * (its host time is the rest of the call's CPU time) */
	double call_model_ms;   /* model_ms of the last timed call alone (its launches' own
				 * times, not the least over the calls): how far calls differ */
};
int gpu_traffic_install(void);
int gpu_traffic_begin(struct gpu_dev *d, char *err, size_t errlen);
int gpu_traffic_end(struct gpu_dev *d, struct gpu_traffic *out);
/* The same call again after gpu_traffic_end, launch for launch: each
 * launch's CUDA threads timed, then the model over both.  end fills
 * *out's model fields (keeping what traffic_end put there).  Timed again,
 * each launch keeps the least of its times: MODEL_TIMED_CALLS calls, or
 * MODEL_TIMED_CALLS_SHORT when the first timed call took less than
 * MODEL_SHORT_CALL_MS (cheap, and where one interrupt is a large share). */
#define MODEL_TIMED_CALLS 3
#define MODEL_TIMED_CALLS_SHORT 8
#define MODEL_TIMED_CALLS_EAGER 5       /* eager's model, counted once and kept */
#define MODEL_SHORT_CALL_MS 10.0
int gpu_timing_begin(struct gpu_dev *d, char *err, size_t errlen);
/* cpu backend: between begin and end the host code may not touch device
 * memory outside its launches (on a GPU that faults): end returns how many
 * pages it touched (the first address in *first).  begin returns -1 where
 * the guard cannot be set (another backend: nothing to guard). */
int gpu_guard_begin(struct gpu_dev *d);
uint64_t gpu_guard_end(struct gpu_dev *d, uintptr_t *first);
int gpu_timing_end(struct gpu_dev *d, struct gpu_traffic *out);
/* cpu backend: the next launch stands in for a vendor library's call
 * (eager's GEMM or convolution, which a GPU runs in cuBLAS or cuDNN): the
 * model prices it at lib_ms of compute (traffic.h, model_gemm_ms) or its
 * bytes, not by its emulated threads.  Elsewhere a no-op. */
void gpu_model_price(struct gpu_dev *d, double lib_ms);

/* --cold: evicts the caches.  cuda: resets persisting L2 lines
 * (cuCtxResetPersistingL2Cache, after setting the persisting limit to 0 on
 * first use) and memsets a device buffer of gpu_l2_flush_bytes() bytes,
 * asynchronously, before the caller's next sync.  cpu: the pool threads
 * write a buffer twice the last-level cache (at most 256 MiB).  Returns 0
 * or -1 with the reason. */
int gpu_l2_flush(struct gpu_dev *d, char *err, size_t errlen);
/* The flush buffer's size for an L2 of l2_bytes (the device attribute):
 * twice the L2 (lines survive a flush of exactly its size: the L2 is
 * split in partitions and hashed), rounded up to 1 MiB, at least 8 MiB;
 * 256 MiB when the size is unknown (<= 0). */
size_t gpu_l2_flush_bytes(long long l2_bytes);

/* One benchmark at a time per GPU, machine-wide: an exclusive flock on
 * $PASSFS_LOCK_DIR (default /tmp)/passfs-gpu-<PCI bus id>.lock, shared by
 * every passfs process and user (mode 0666).  Waits up to timeout_ms (< 0:
 * forever; 0: one try), or until *cancel is nonzero (cancel may be NULL;
 * another thread sets it with __atomic_store_n): then -1 with "cancelled".
 * Returns 0 when held (also on the cpu backend, where it is a no-op), or -1
 * with the reason (timeout, cannot open).
 * Not recursive; the lock ends with gpu_bench_unlock, gpu_close, or the
 * process (and any child it forked holding the descriptor). */
int gpu_bench_lock(struct gpu_dev *d, int timeout_ms, const int *cancel, char *err, size_t errlen);
void gpu_bench_unlock(struct gpu_dev *d);

/* The descriptors the GPU driver (and CUPTI) opened while initialising d
 * (cuda backend, once the device is in use: after the first alloc, compile
 * or load); d NULL: those of every cuda device initialised in this process.
 * The sandbox allows the driver's calls on them (engine/eval/guard/sandbox.c asks with
 * NULL).  Returns how many were written (at most max); 0 on the cpu backend. */
int gpu_driver_fds(struct gpu_dev *d, int *fds, int max);

/* The descriptors this process has open (the listing's own excepted),
 * sorted ascending, at most max; 0 when /proc/self/fd cannot be read. */
int gpu_list_open_fds(int *fds, int max);

/* Forking a worker from a process whose other threads may be loading
 * libraries: a fork taken while another thread is inside dlopen leaves the
 * child's loader locked or inconsistent (glibc; seen: 77 of 200 children
 * stuck or failing an ld.so assertion).  So every passfs load and unload
 * goes through gpu_dlopen/gpu_dlclose, and a worker that goes on running
 * passfs code after the fork (not fork + exec) is made by gpu_fork_worker,
 * which waits until no load is in progress.  A library's own loads (the
 * CUDA driver loading its JIT) happen in the workers, never in the daemon.
 * The child closes every descriptor but 0, 1, 2 and keep[] (at most 16):
 * a daemon's other evaluations' pipes, sockets and lock files are never
 * held by this one's workers.  Returns as fork(2). */
void *gpu_dlopen(const char *path, int flags);
int gpu_dlclose(void *handle);
pid_t gpu_fork_worker(const int *keep, int n_keep);

/* Closes every descriptor from 3 up but keep[] (at most 16); 0 or -1 with
 * errno. */
int gpu_close_fds_except(const int *keep, int n);

/* The C++ name of a lowered (mangled) kernel name, "_Z9bias_geluIfEvPKfPfi"
 * -> "void bias_gelu<float>(float const*, float*, int)", with the C++
 * runtime's demangler (libstdc++, loaded on first use).  Returns 0, or -1
 * with `lowered` copied when it is not a mangled name or cannot be
 * demangled (no libstdc++, a name cut short). */
int gpu_demangle(const char *lowered, char *out, size_t len);

/* Opens the first of a vendor library's names that loads (`env`, when set
 * in the environment, instead).  With PASSFS_LIBCUDA naming another driver
 * than the system's (a test's mock), the system library would talk to the
 * real driver: then only `env` loads.  `what` names the library in
 * messages ("libcublas").  NULL with the reason in err. */
void *gpu_dlopen_vendor(const char *env, const char *what, const char *const *names, int n, char *err,
			size_t errlen);

/* Where PyTorch's CUDA wheels keep a library: `name` (a bare file name,
 * "libcudnn.so.9") in the first of the directories of $PASSFS_CUDA_LIBDIRS
 * (colon-separated), then nvidia/STAR/lib of the Python site directories
 * ($VIRTUAL_ENV, $CONDA_PREFIX, ~/.local, /usr/local, /usr, /opt/conda:
 * lib/python3.STAR/site-packages and dist-packages) that holds it - the
 * nvidia-cudnn, nvidia-cublas and cu13 wheels are namespace packages with no
 * __file__, so only a search of the tree finds them.  1 with the path in
 * out, else 0. */
int gpu_wheel_lib(const char *name, char *out, size_t outlen);
/* Opens the first library of names (n of them; n < 0: NULL-terminated) that
 * try_open accepts (it returns 1 when it opened path): each name as given,
 * then, for the bare file names among them, the copy gpu_wheel_lib finds.
 * 1 when one opened, else 0. */
int gpu_open_lib(const char *const *names, int n, int (*try_open)(const char *path, void *ctx), void *ctx);
/* The include directory of the nvidia wheels that holds header NAME
 * (cuda_fp16.h: the CUDA headers NVRTC needs where no toolkit is
 * installed), searched as gpu_wheel_lib searches (PASSFS_CUDA_LIBDIRS's
 * ../include first): 1 with the directory in OUT, else 0. */
int gpu_wheel_include(const char *name, char *out, size_t outlen);

/* Where a vendor library's handle (cuBLAS, cuDNN) may be used: the process
 * that created it (a CUDA context does not survive fork), with the device's
 * context current on the calling thread. */
struct gpu_vendor_owner {
	pid_t pid;
	struct gpu_dev *dev;
	pthread_t thread;       /* where the device's context was last made current */
};
/* Before the library (named `what` in messages) creates its handle: d is a
 * cuda device with CUDA initialised in this process and its context current
 * on this thread, so the library's runtime uses that context; *own records
 * it.  0, or -1 with the reason. */
int gpu_vendor_context(struct gpu_dev *d, const char *what, struct gpu_vendor_owner *own, char *err,
		       size_t errlen);
/* Before each call on the handle: this is its process, and the device's
 * context is made current when the thread changed.  0, or -1 with the
 * reason. */
int gpu_vendor_use(struct gpu_vendor_owner *own, const char *what, char *err, size_t errlen);
/* Whether this process created the handle (only it may destroy it). */
int gpu_vendor_mine(const struct gpu_vendor_owner *own);

/* passfs's on-disk cache for `what` ("modules", "oplib", "pch"): the
 * directory in $PASSFS_CACHE_DIR when set (shared by all; "off", "0" or ""
 * turn caching off), else $XDG_CACHE_HOME/passfs/<what>, else
 * ~/.cache/passfs/<what>; created (mode 0700) with its parents.  Returns 0
 * with the path in buf, or -1 (off, no home, cannot create). */
int gpu_cache_dir(const char *what, char *buf, size_t len);

/* --- the cuda backend, asked without opening it (passfs doctor, the
 * broker worker's probe) --------------------------------------------- */

/* Whether a CUDA driver and at least one GPU are present: dlopen
 * libcuda.so.1 (or $PASSFS_LIBCUDA), then cuInit and cuDeviceGetCount in a
 * forked child, so the calling process stays free of CUDA.  Cached: the
 * first answer holds for the process and the children it forks later.
 * Returns the device count (> 0), or 0 with the reason in why. */
int gpu_cuda_probe(char *why, size_t whylen);

/* What the probe found (the same cached answer). */
struct gpu_cuda_info {
	int count;              /* devices; 0: none usable (why says so) */
	int ordinal;            /* the one used ($PASSFS_CUDA_DEVICE) */
	int cc_major, cc_minor;
	int sm_count;
	int l2_bytes;
	int mem_clock_khz;      /* the memory's peak clock */
	int mem_bus_bits;       /* its bus width */
	int smem_optin;
	int driver_version;     /* 13000 = 13.0 */
	unsigned long long total_mem;
	char name[128];
	char pci[32];
	char why[256];
};
void gpu_cuda_info_get(struct gpu_cuda_info *out);

/* The device's own arch for compute capability major.minor ("sm_90a" for
 * 9.0, "sm_XY" elsewhere). */
void gpu_cuda_arch_name(int major, int minor, char *out, size_t outlen);
/* The NVRTC target for compute capability major.minor: the device's own
 * arch (gpu_cuda_arch_name; also when NVRTC is not loaded or cannot list
 * its archs) unless this NVRTC cannot compile for it - a GPU newer than
 * the NVRTC - then compute_<the newest arch NVRTC knows at or below the
 * device's>: PTX only, which the driver JIT-compiles for the device when
 * the module is loaded.  Returns 1 then, with a one-line note saying so,
 * else 0 with note "". */
int gpu_cuda_target_arch(int major, int minor, char *out, size_t outlen, char *note, size_t notelen);

#endif
