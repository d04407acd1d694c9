/* sandbox.h - confine the current process before it runs untrusted pass code.
 *
 * Called in a worker child after everything it needs is set up (threads
 * created, the pass object loaded, memory mapped): afterwards the process can
 * compute, use memory, wait on futexes, read the clock and talk over the file
 * descriptors it already holds, and nothing else: no files, no network, no
 * processes, no new threads, no signal handlers, no clock changes.  A
 * forbidden system call ends the process with SIGSYS after it writes one
 * line naming the call, and the loaded object whose code made it, to the
 * report fd ("sandbox: forbidden system call openat (in libc.so.6)"; a call
 * made in the GPU driver's libraries adds ": made by the GPU driver, not by
 * the pass").
 *
 * After entry, opening a device path the GPU driver already had open (a
 * character device under /dev, not /dev/nvidia-uvm*) is served from
 * descriptors pre-opened at entry (8 per path): the NVIDIA driver opens a
 * fresh one for each host mapping of its memory.  passfs exports open, open64, openat and their
 * fortified forms from its executable for this; outside a sandboxed worker
 * they are plain openat(2). */
#ifndef PASSFS_SANDBOX_H
#define PASSFS_SANDBOX_H

#include <stddef.h>

struct sandbox_limits {
	size_t address_space;   /* RLIMIT_AS bytes; 0 = leave */
	size_t data;            /* RLIMIT_DATA bytes (private writable memory); 0 = leave */
	unsigned cpu_seconds;   /* RLIMIT_CPU; 0 = leave */
	int report_fd;          /* where the SIGSYS handler writes its line (-1: none) */
	const int *io_fds;      /* fds the process may read and write (IPC), besides 1 and 2 */
	int n_io_fds;
	/* Device descriptors (at most 512 with the driver's and the adopted
	 * ones; a CUDA process holds many): ioctl, read, write, pread64,
	 * pwrite64, readv, writev, fcntl, fstat, newfstatat, close, the epoll
	 * waits and epoll_ctl, timerfd_settime/gettime are allowed on these, and
	 * poll, ppoll, select and pselect6 (which open nothing) at all.  The descriptors
	 * the GPU driver opened when this process initialised CUDA
	 * (gpu_driver_fds(NULL, ...)) are added by sandbox_enter itself: a CUDA
	 * worker needs them after entry - launches, syncs and copies talk to the
	 * driver through them, also from the driver's own threads. */
	const int *dev_fds;
	int n_dev_fds;
	/* Nonzero: every other descriptor open at entry (not 0-2, report_fd,
	 * io_fds or audit_fd) is a device descriptor too.  For a worker that
	 * closed all but its own before opening the device: the driver and
	 * CUPTI open more while modules load and memory is first mapped. */
	int adopt_open_fds;
	/* > 0: audit mode.  Instead of ending the process, a refused call is
	 * written to this descriptor ("audit: openat from libcuda.so.1 path
	 * /dev/nvidiactl = 41", the first 4 of each call and caller) and then
	 * carried out; only process creation (clone, fork, execve) and
	 * replacing the SIGSYS handler fail, with EPERM.  It confines nothing:
	 * for finding out what a GPU driver needs, never for scoring. */
	int audit_fd;
	/* Nonzero (the cpu backend): madvise only with MADV_FREE, any other
	 * advice fails with EPERM.  The parent counts a counted call's device
	 * bytes by the accessed bits of the worker's shared pages
	 * (engine/eval/kacct.h); MADV_DONTNEED drops a shared page's mapping
	 * (and its accessed bit) while keeping its data, MADV_COLD and
	 * MADV_PAGEOUT clear the bit, MADV_HUGEPAGE and MADV_COLLAPSE make one
	 * bit stand for 2 MiB. */
	int keep_accessed;
};

/* The exit status of a process the SIGSYS handler ended (a refused call).
 * The parent classifies by it (or by death from SIGSYS, when the filter
 * kills outright), not by the report line: the line is written from inside
 * the confined process, where the pass's code could have written it too. */
#define SANDBOX_EXIT_STATUS 159

/* Applies the rlimits and installs the seccomp filter.  Returns 0, or -1 with
 * a message (the caller must then exit: running unconfined is not an option). */
int sandbox_enter(const struct sandbox_limits *lim, char *err, size_t errlen);

#endif
