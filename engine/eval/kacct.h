/* kacct.h - what the kernel saw a worker do, read by the evaluating parent
 * from outside the worker's process: the numbers under the cpu backend's
 * modeled time that pass code cannot write (docs/integrity.md, "The model's
 * numbers, kept by the kernel").
 *
 * Bytes: /proc/PID/clear_refs clears the accessed bits of every page of the
 * process; after the call, the "Referenced" sizes of its shared mappings in
 * /proc/PID/smaps are the device memory the call touched (cpu-backend device
 * memory is shared anonymous memory, a mapping per allocation; the worker's
 * own memory is private).  The hardware sets a page's accessed bit on any
 * access, and the pass's sandbox refuses the calls that could clear it or
 * drop a mapped page behind it (madvise but MADV_FREE, mremap).
 * CPU: the process's CPU clock (every thread), from clock_getcpuclockid. */
#ifndef PASSFS_KACCT_H
#define PASSFS_KACCT_H

#include <stdint.h>
#include <sys/types.h>

/* Clears the accessed bits of pid's pages.  0 or -1 (errno). */
int kacct_clear_refs(pid_t pid);
/* The bytes of pid's shared mappings referenced since the last clear, into
 * *bytes.  0 or -1. */
int kacct_shared_referenced(pid_t pid, uint64_t *bytes);
/* The CPU time of every thread of pid so far, in ns, or -1. */
int64_t kacct_cpu_ns(pid_t pid);
/* The number of threads of pid, or -1. */
int kacct_threads(pid_t pid);

/* What one counted call cost, as the kernel saw it. */
struct kacct_call {
	int have_bytes;         /* bytes was read (the bytes step) */
	uint64_t bytes;         /* shared memory referenced inside the call */
	double cpu_ms;          /* every thread's CPU time over the call, store included */
	int threads;            /* the worker's threads at the call */
	int out_of_order;       /* the worker's messages did not follow the protocol */
};

#endif
