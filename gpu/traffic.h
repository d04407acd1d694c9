/* traffic.h - the device memory a cpu-backend launch touched, counted page
 * by page with a SIGSEGV handler (traffic.c has the method and its limits);
 * the guard that closes device memory to a pass's host code; and the model
 * of an H200 made of them and of the launches' thread times: the modeled GPU
 * time of an evaluation (docs/result-format.md, "modeled_h200_ms"), which the
 * cpu backend scores (docs/scoring.md, "Which speedup is scored"). */
#ifndef PASSFS_TRAFFIC_H
#define PASSFS_TRAFFIC_H

#include <stddef.h>
#include <stdint.h>

#include "passfs_abi.h"

struct traffic_alloc {
	void *p;
	size_t bytes;
};

/* Installs the SIGSEGV handler (once; before a sandbox that refuses
 * rt_sigaction).  0 or -1. */
int traffic_install(void);
int traffic_installed(void);

/* Around one launch: protects the whole pages of the n live allocations,
 * then unprotects them and sums the bytes touched (*approx: some
 * allocation had to be opened whole and counts whole).  begin returns -1
 * when nothing could be protected (no handler, no memory): do not call
 * end then.  end returns -1 when some page could not be given back. */
int traffic_launch_begin(const struct traffic_alloc *al, int n);
int traffic_launch_end(uint64_t *bytes, int *approx);

/* The guard: between a pass's launches its host code has no business in
 * device memory (on a GPU a host pointer to it faults).  close protects the
 * whole pages of the n allocations (what the host then touches is counted
 * and opened), open gives them back; touches counts since reset, with the
 * first address.  close returns 0 or -1 (nothing could be protected). */
int traffic_guard_close(const struct traffic_alloc *al, int n);
void traffic_guard_open(void);
void traffic_guard_reset(void);
uint64_t traffic_guard_touches(uintptr_t *first);

/* ---- the modeled H200 time of a launch ------------------------------------
 *
 * A launch costs MODEL_LAUNCH_MS plus the largest of:
 *   memory:   the bytes of the pages it touched over MODEL_BYTES_PER_MS
 *             (HBM3e's 4.8 TB/s peak at the ~90% a streaming kernel gets);
 *   path:     its slowest group of CUDA threads (the mean time of the
 *             slowest octave of threads that holds MODEL_PATH_SHARE of the
 *             launch's summed thread time and has more threads than the
 *             machine's hiccups - an interrupt, a virtual CPU's exit, about
 *             one a millisecond - leave, unless they are longer than a
 *             hiccup, MODEL_HICCUP_NS) times MODEL_GPU_PER_CPU:
 *             a GPU runs one thread's dependent work that much slower than
 *             a CPU core runs it (memory latency it cannot hide without
 *             other threads), and no launch ends before its slowest thread;
 *   parallel: its threads' summed time times MODEL_GPU_PER_CPU over the
 *             threads the GPU holds at once (132 SMs x 2048, fewer with
 *             small blocks: 32 blocks an SM), or over the launch's threads
 *             when there are fewer: waves of resident threads.
 * So a kernel with too few threads (one thread per row) pays its serial
 * work, a memory-bound kernel with enough threads pays its bytes, and work
 * spread over threads is paid once per wave.  Thread times come from the
 * cpu backend's emulation (pf_launch_stats): the switching between fibers
 * and the bookkeeping of a barrier or warp exchange (the last to arrive
 * releasing the rest) are left out and MODEL_RESUME_NS is taken off each
 * switch back in; the arithmetic is at this CPU's relative costs, not a
 * GPU's (docs/benchmarks.md, bench/op_costs.py). */
#define MODEL_LAUNCH_MS 0.003
/* A call's own cost on the H200, beyond its launches: the context-wide sync
 * that ends every timed call (PassBench's protocol: synchronize, clock,
 * call, synchronize, clock) and the call's entry.  Measured on the first
 * device run (docs/benchmarks.md, "Calibration against the first run") both
 * ways: eager's two-launch tiny_bias_gelu variant took 0.0206 ms end to end
 * against 0.0041 ms of kernels, the one-launch pass 0.0146 ms against
 * 0.0012 ms - 3.2 us a launch (MODEL_LAUNCH_MS) and 10.2 us a call, the
 * same on both sides.  Added to each side's modeled time once. */
#define MODEL_CALL_MS 0.010
#define MODEL_BYTES_PER_MS 4.3e9
#define MODEL_SMS 132
#define MODEL_THREADS_PER_SM 2048
#define MODEL_BLOCKS_PER_SM 32
#define MODEL_GPU_PER_CPU 20.0
#define MODEL_PATH_SHARE 0.05
/* The longest a machine's hiccup (an interrupt, a virtual CPU's exit) makes
 * one thread: a group of fewer threads than hiccups counts as a path only
 * when its threads are longer than this. */
#define MODEL_HICCUP_NS 200000.0
/* What the emulation charges a CUDA thread each time it is switched back
 * in after a barrier or a warp operation (its stack and registers back into
 * the cache), taken off its time: a GPU's warps pay no such thing. */
#define MODEL_RESUME_NS 10.0

/* ---- eager's vendor-library calls --------------------------------------
 *
 * On a GPU eager's GEMMs are cuBLAS calls and its convolutions cuDNN's (the
 * cuda backend makes them, docs/eager.md); the op library's kernels stand
 * in for them on the cpu backend, and their emulated threads say nothing
 * about cuBLAS.  Such a launch is priced as the library runs it: its bytes,
 * or its FLOPs at the H200's dense rate for the dtype at the efficiency
 * cuBLAS reaches on large problems followed by its output's store (a
 * tile's inputs stream under its products; its result is written after
 * its last K step), whichever is longer.  Small problems pay for the SMs
 * they leave idle: the output in tiles of at most MODEL_LIB_TILE square
 * (smaller for a thin output), split along K (at least MODEL_LIB_SPLIT_K a
 * part, the split whose waves are fullest) while the tiles cannot fill the
 * SMs, waves of MODEL_SMS tiles.  Rates (H200 SXM, dense, per ms): FP32 on CUDA
 * cores 67 TFLOPS (TF32 off: eager computes float32 in float32), FP64 on
 * tensor cores 67, FP16/BF16 on tensor cores 989 (PyTorch's default for
 * half-precision GEMMs); MODEL_LIB_EFFICIENCY is the share of peak cuBLAS
 * sustains on a large GEMM (SGEMM ~50 of 67 TFLOPS, HGEMM ~700 of 989 on an
 * H100 SXM, whose rates these are too). */
#define MODEL_FP32_FLOPS_PER_MS 6.7e10
#define MODEL_FP16_TC_FLOPS_PER_MS 9.89e11
#define MODEL_LIB_EFFICIENCY 0.7
#define MODEL_LIB_TILE 64
#define MODEL_LIB_SPLIT_K 256

/* The time of a library GEMM: batch products of m x n by k (tensor_cores:
 * float16/bfloat16 operands; c_bytes: an output element's size), its
 * products and then its output's store, ms. */
double model_gemm_ms(double m, double n, double k, double batch, int tensor_cores, double c_bytes);
/* The compute time of flops with no product shape (a direct or depthwise
 * convolution: CUDA cores), ms. */
double model_flops_ms(double flops);

struct model_launch {
	uint64_t bytes;                 /* touched (traffic count) */
	uint64_t block_threads;         /* threads a block */
	uint64_t threads;               /* threads that ran (timed) */
	double path_ns, sum_ns;         /* slowest-thread tail and the sum, CPU ns */
	double lib_ms;                  /* > 0: a library call, its compute time */
};
/* The path of a launch's thread times, in ticks (ticks_per_ns: the TSC's). */
double model_tail_ticks(const struct pf_launch_stats *st, double ticks_per_ns);
/* One launch's modeled ms; *mem, *path, *par get its three terms (a
 * library call: no path, and its compute time as parallel). */
double model_launch_ms(const struct model_launch *l, double *mem, double *path, double *par);

#endif
