/* integrity.h - the checks of docs/integrity.md that no compiler and no
 * single run makes: a scan of the device code NVRTC produced, and the
 * roofline bound that says when a measured time cannot be right.
 * docs/integrity.md describes every defence and what it costs.
 *
 * Device-code scan.  The PTX of the pass (pass_module->ptx, compiled with
 * -lineinfo) is refused when device code
 *   - reads a clock or timer register: %clock, %clock_hi, %clock64
 *     (clock(), clock64()), %globaltimer, %globaltimer_lo/_hi, %pm0..%pm7;
 *   - writes a module-scope .global variable (a __device__ variable that is
 *     assigned, incremented, atomically updated, or whose address is stored
 *     or passed to a device function): state that survives between calls;
 *     or declares a __managed__ one (the host can write it directly);
 *   - launches work or allocates from the device side (cudaLaunchDevice,
 *     cudaGetParameterBuffer, device cudaMalloc, malloc/free: the device
 *     heap also survives between calls);
 *   - executes `trap` or `brkpt` (__trap(), __brkpt(): they abort the
 *     kernel and leave the CUDA context unusable).  assert() is allowed: NVRTC
 *     compiles it to a call of __assertfail, not to a trap instruction; and
 *     `exit` (a thread's early return) is allowed.
 * A read-only __device__ table (initialised, never written) is fine: PTX does
 * not say `const`, so what counts is whether device code writes it.
 *
 * Each finding names the author's line from the `.loc` directives (the
 * inlined-at line when the code came from a header), else the kernel.
 *
 * Thread-safe; no global state except the bandwidth table below. */
#ifndef PASSFS_INTEGRITY_H
#define PASSFS_INTEGRITY_H

#include <stddef.h>

/* Scans ptx (NUL-terminated).  label is the author's file name as the
 * messages should show it ("pass.c"); the PTX's `.file` entries are matched
 * on its base name.  Returns 0 when the code is clean, 1 with one sentence
 * in msg ("pass.c:12: kernel 'count' writes the __device__ variable 'calls'
 * ...") and the author's line in *line (0 when unknown), -1 when out of
 * memory (msg says so).  ms (may be NULL) receives the scan's wall time. */
int integrity_scan_ptx(const char *ptx, const char *label, char *msg, size_t msglen, int *line, double *ms);

/* Roofline plausibility.  The bandwidth (bytes per millisecond) at which
 * this machine's CPU copies a buffer of `bytes` bytes (read + write traffic
 * counted, so memcpy of n bytes moves 2n), times the number of online CPUs
 * (the cpu backend spreads blocks over them): the most traffic any pass can
 * move per millisecond on the cpu backend.  Measured with memcpy at the
 * smallest of 32 KiB, 256 KiB, 2 MiB, 16 MiB that holds `bytes` (16 MiB
 * for anything larger) the first time that size is asked for, then cached
 * for the process (about 1-15 ms per size).  Thread-safe.  Returns 0 when
 * it cannot be measured. */
double integrity_cpu_bytes_per_ms(size_t bytes);

/* A GPU's peak memory bandwidth in bytes per millisecond from its memory
 * clock (kHz) and bus width (bits), double data rate: clock x 2 x width / 8
 * (an H100 SXM's 2619 MHz x 5120 bits: 3.35 TB/s).  0 when either is
 * unknown (0). */
double integrity_gpu_bytes_per_ms(int mem_clock_khz, int bus_bits);

/* The fastest a variant that must move `bytes` bytes (its inputs read once,
 * its outputs written once) can run at bytes_per_ms: bytes / bytes_per_ms,
 * in milliseconds.  0 when bytes_per_ms is 0 (unknown). */
double integrity_min_ms(size_t bytes, double bytes_per_ms);

/* Whether a pass median of pass_ms is implausible against min_ms: below
 * half of it (the bound is the copy speed of the whole machine; the factor
 * 2 absorbs timer resolution and the copy measurement's own noise).  The
 * result is a flag for result.json, never a verdict: a variant that slices
 * an input legitimately reads less than all of it. */
int integrity_implausible(double pass_ms, double min_ms);

#endif
