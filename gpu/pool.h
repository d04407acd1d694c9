/* pool.h - a fixed pool of OS threads that spreads numbered work items (CUDA
 * blocks, on the cpu backend) over the machine's cores.
 *
 * The pool is created by trusted code before any untrusted code runs (the
 * worker's sandbox allows thread-only clone, but creating threads late is
 * still something a pass should never cause).  Its size is the number of
 * online CPUs, or PASSFS_CPU_THREADS when that is set to a positive number.
 * The calling thread takes part in the work, so a pool of n threads has n - 1
 * helper threads.
 *
 * One pool_run at a time: concurrent calls from different threads are
 * serialised; a pool_run from inside a work item runs its items inline on
 * that thread (it cannot deadlock, it just does not spread). */
#ifndef PASSFS_POOL_H
#define PASSFS_POOL_H

#include <stddef.h>
#include <stdint.h>

struct pool;

/* The default size: PASSFS_CPU_THREADS if set (1..1024), else the online
 * CPU count (at least 1). */
int pool_default_threads(void);

/* Creates a pool of n_threads (n_threads <= 0: pool_default_threads()).
 * Returns 0 and *out, or -1 with a message in err. */
int pool_create(int n_threads, struct pool **out, char *err, size_t errlen);

/* Stops the helper threads and frees the pool.  NULL is ignored. */
void pool_destroy(struct pool *p);

/* The number of threads that run items (helpers + the caller). */
int pool_threads(const struct pool *p);

/* Calls fn(ctx, i) for every i in [0, n_items), spread over the pool's
 * threads, and returns when all calls have returned.  Items are handed out
 * in increasing order in small chunks; there is no order guarantee between
 * threads.  fn must not fail: record errors in ctx. */
void pool_run(struct pool *p, uint64_t n_items, void (*fn)(void *ctx, uint64_t item), void *ctx);

#endif
