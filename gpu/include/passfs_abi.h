/* passfs_abi.h - the part of the pass API that C, C++ and NVRTC all see:
 * tensors, launch dimensions, return codes, and the runtime table through
 * which a loaded pass reaches the worker process that runs it.  passfs.h
 * includes it; the engine (C17) includes it alone. */
#ifndef PASSFS_ABI_H
#define PASSFS_ABI_H

/* Dtype codes of pf_tensor.dtype (the order of graph.json's dtype names). */
#define PF_F32 0
#define PF_F16 1
#define PF_BF16 2
#define PF_F64 3
#define PF_I64 4
#define PF_I32 5
#define PF_BOOL 6

#define PF_MAX_DIMS 8

/* Return codes of the replacement and of pf_launch. */
#define PF_OK 0
#define PF_ERR_LAUNCH 1          /* a launch was refused (bad configuration or arguments) */
#define PF_ERR_UNSUPPORTED 2     /* pf_unsupported(): this variant is not handled */
#define PF_ERR_NOT_IMPLEMENTED 3 /* the template's answer */
#define PF_ERR_SCRATCH 4         /* pf_scratch() could not allocate */

/* A tensor: device memory, row-major and contiguous (stride[] is given for
 * convenience and is always the contiguous one). */
typedef struct pf_tensor {
	void *data;
	int dtype;
	int ndim;
	long long shape[PF_MAX_DIMS];
	long long stride[PF_MAX_DIMS];  /* in elements */
} pf_tensor;

typedef struct pf_dim3 {
	unsigned x, y, z;
} pf_dim3;

typedef struct pf_call pf_call;

#ifndef __CUDACC_RTC__
#include <stddef.h>

#define PF_ABI_VERSION 2

/* What a cpu-backend launch reports when the runtime asks (timing != 0,
 * set before the blocks run): each CUDA thread's time on the CPU, in TSC
 * ticks, the emulator's own switching excluded as far as it can be, and
 * time its OS thread spent descheduled taken off.  The
 * histogram's bucket of t ticks is pf_stats_bucket(t).  For the modeled GPU
 * time (gpu/traffic.h), which the cpu backend scores; never read by the timed
 * trials. */
#define PF_STATS_BUCKETS 256
struct pf_launch_stats {
	int timing;
	double tsc_per_ns;      /* set by the runtime with timing, */
	long long (*away_ns)(void);     /* and the OS thread's wall less CPU ns so far, */
	unsigned long long clock_ticks; /* and what reading the clock twice costs (taken off each thread), */
	unsigned long long resume_ticks; /* and what a thread pays after being switched back in (likewise, each time) */
	unsigned long long threads, sum_ticks, max_ticks;
	unsigned long long hist[PF_STATS_BUCKETS];
	unsigned long long hist_ticks[PF_STATS_BUCKETS];        /* the bucket's threads' ticks */
	/* the threads' ticks before the clock's and the resumes' costs were
	 * taken off: the time the machine's hiccups could land in */
	unsigned long long raw_ticks;
};
/* 4 buckets per power of two: 4*floor(log2 t) + the next two bits. */
static inline int pf_stats_bucket(unsigned long long t)
{
	if (t < 4)
		return (int)t;
	int e = 63 - __builtin_clzll(t);
	int b = 4 * e + (int)((t >> (e - 2)) & 3);
	return b < PF_STATS_BUCKETS ? b : PF_STATS_BUCKETS - 1;
}

/* What the worker provides.  Every function gets the call back. */
struct pf_runtime {
	int abi_version;
	const pf_tensor *(*in)(pf_call *c, int i);
	pf_tensor *(*out)(pf_call *c, int i);
	int (*num_in)(pf_call *c);
	int (*num_out)(pf_call *c);
	void *(*scratch)(pf_call *c, size_t bytes);
	int (*fail)(pf_call *c, int code, const char *msg);
	const char *(*variant)(pf_call *c);
	/* cuda backend: launch the kernel whose host address is `kernel` (found
	 * in pf_kernel_table), with cuLaunchKernel-style argument pointers. */
	int (*launch)(pf_call *c, const void *kernel, pf_dim3 grid, pf_dim3 block, size_t smem,
		      void **args, int nargs, const size_t *arg_sizes);
	/* cpu backend: run block_fn once per block of `grid` (blocks of
	 * `block` threads), spread over the worker's threads; a block runs
	 * start to finish on one thread.  The runtime may set st->timing first,
	 * and reads st after (st may be NULL: nothing is recorded). */
	int (*run_blocks)(pf_call *c, pf_dim3 grid, pf_dim3 block,
			  void (*block_fn)(void *ctx, pf_dim3 block_idx), void *ctx,
			  struct pf_launch_stats *st);
};

struct pf_call {
	const struct pf_runtime *rt;
	void *priv;
	int backend;    /* PF_BACKEND_CPU or PF_BACKEND_CUDA */
};
#define PF_BACKEND_CPU 0
#define PF_BACKEND_CUDA 1

/* The pass compiler appends a table of every kernel named in a pf_launch:
 * its host address and its name expression (for NVRTC's lowered names). */
struct pf_kernel_entry {
	const void *addr;
	const char *name;
};

#endif /* !__CUDACC_RTC__ */
#endif
