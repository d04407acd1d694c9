/* traffic.h - the device memory a cpu-backend launch touched, counted page
 * by page with a SIGSEGV handler (traffic.c has the method and its limits).
 * For the modeled GPU time of an evaluation (docs/result-format.md,
 * "modeled_h200_ms"); never for the score. */
#ifndef PASSFS_TRAFFIC_H
#define PASSFS_TRAFFIC_H

#include <stddef.h>
#include <stdint.h>

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

#endif
