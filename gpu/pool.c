/* pool.c - the fixed thread pool behind the cpu backend's block loop.
 *
 * A job is published under the mutex with a new generation number; helpers
 * wake, claim chunks of items with an atomic counter, and the last one to
 * finish signals the caller, which has been claiming chunks too. */
#include "pool.h"

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define POOL_MAX_THREADS 1024
/* Kernels without barriers run on the pool threads' own stacks, and CUDA
 * code is used to generous local arrays: give them the usual 8 MiB. */
#define POOL_STACK_BYTES (8u << 20)

struct pool {
	int n_threads;          /* helpers + the caller */
	int n_helpers;          /* started helper threads */
	pthread_t *tids;
	pthread_mutex_t run_mu; /* one job at a time */
	pthread_mutex_t mu;
	pthread_cond_t work_cv, done_cv;
	uint64_t gen;
	int stop;
	int busy;               /* helpers still inside the current job */
	int running;            /* helpers that have reached helper_main */
	/* the current job */
	void (*fn)(void *ctx, uint64_t item);
	void *ctx;
	uint64_t n_items, chunk;
	_Atomic uint64_t next;
};

/* Set while a thread runs items, so a nested pool_run runs inline. */
static _Thread_local int in_pool_job;

int pool_default_threads(void)
{
	const char *e = getenv("PASSFS_CPU_THREADS");
	if (e != NULL && *e != '\0') {
		char *end;
		long v = strtol(e, &end, 10);
		if (*end == '\0' && v >= 1 && v <= POOL_MAX_THREADS)
			return (int)v;
	}
	long n = sysconf(_SC_NPROCESSORS_ONLN);
	if (n < 1)
		n = 1;
	if (n > POOL_MAX_THREADS)
		n = POOL_MAX_THREADS;
	return (int)n;
}

static void run_items(struct pool *p)
{
	for (;;) {
		uint64_t first = atomic_fetch_add_explicit(&p->next, p->chunk, memory_order_relaxed);
		if (first >= p->n_items)
			return;
		uint64_t last = first + p->chunk;
		if (last > p->n_items || last < first)
			last = p->n_items;
		for (uint64_t i = first; i < last; i++)
			p->fn(p->ctx, i);
	}
}

static void *helper_main(void *arg)
{
	struct pool *p = arg;
	uint64_t seen = 0;

	in_pool_job = 1;
	pthread_mutex_lock(&p->mu);
	p->running++;
	pthread_cond_broadcast(&p->done_cv);
	for (;;) {
		while (!p->stop && p->gen == seen)
			pthread_cond_wait(&p->work_cv, &p->mu);
		if (p->stop)
			break;
		seen = p->gen;
		pthread_mutex_unlock(&p->mu);
		run_items(p);
		pthread_mutex_lock(&p->mu);
		if (--p->busy == 0)
			pthread_cond_signal(&p->done_cv);
	}
	pthread_mutex_unlock(&p->mu);
	return NULL;
}

int pool_create(int n_threads, struct pool **out, char *err, size_t errlen)
{
	*out = NULL;
	if (n_threads <= 0)
		n_threads = pool_default_threads();
	if (n_threads > POOL_MAX_THREADS)
		n_threads = POOL_MAX_THREADS;

	struct pool *p = calloc(1, sizeof *p);
	if (p == NULL || (p->tids = calloc((size_t)n_threads, sizeof(pthread_t))) == NULL) {
		free(p);
		snprintf(err, errlen, "thread pool: out of memory");
		return -1;
	}
	p->n_threads = n_threads;
	pthread_mutex_init(&p->run_mu, NULL);
	pthread_mutex_init(&p->mu, NULL);
	pthread_cond_init(&p->work_cv, NULL);
	pthread_cond_init(&p->done_cv, NULL);
	atomic_init(&p->next, 0);

	/* Helpers take no signals: they belong to the thread that runs the
	 * process (the worker's watchdog, ^C).  Faults excepted: a fault is
	 * the faulting thread's own, and while blocked it would bypass the
	 * process's handler (the traffic counter's, gpu/traffic.c). */
	sigset_t all, old;
	sigfillset(&all);
	sigdelset(&all, SIGSEGV);
	sigdelset(&all, SIGBUS);
	sigdelset(&all, SIGFPE);
	sigdelset(&all, SIGILL);
	pthread_sigmask(SIG_BLOCK, &all, &old);
	pthread_attr_t attr;
	pthread_attr_init(&attr);
	pthread_attr_setstacksize(&attr, POOL_STACK_BYTES);
	int rc = 0;
	for (int i = 0; i < n_threads - 1; i++) {
		rc = pthread_create(&p->tids[i], &attr, helper_main, p);
		if (rc != 0)
			break;
		p->n_helpers++;
	}
	pthread_attr_destroy(&attr);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	/* Return only once every helper runs: a thread still starting up may
	 * hold a lock of the C library's or a sanitizer's allocator, and a
	 * process forked then (an evaluation's workers) would inherit it held
	 * and hang at its first allocation. */
	pthread_mutex_lock(&p->mu);
	while (p->running < p->n_helpers)
		pthread_cond_wait(&p->done_cv, &p->mu);
	pthread_mutex_unlock(&p->mu);
	if (rc != 0) {
		snprintf(err, errlen, "thread pool: cannot start thread %d of %d: %s",
			 p->n_helpers + 1, n_threads - 1, strerror(rc));
		pool_destroy(p);
		return -1;
	}
	*out = p;
	return 0;
}

void pool_destroy(struct pool *p)
{
	if (p == NULL)
		return;
	pthread_mutex_lock(&p->mu);
	p->stop = 1;
	pthread_cond_broadcast(&p->work_cv);
	pthread_mutex_unlock(&p->mu);
	for (int i = 0; i < p->n_helpers; i++)
		pthread_join(p->tids[i], NULL);
	pthread_cond_destroy(&p->work_cv);
	pthread_cond_destroy(&p->done_cv);
	pthread_mutex_destroy(&p->mu);
	pthread_mutex_destroy(&p->run_mu);
	free(p->tids);
	free(p);
}

int pool_threads(const struct pool *p)
{
	return p->n_threads;
}

void pool_run(struct pool *p, uint64_t n_items, void (*fn)(void *ctx, uint64_t item), void *ctx)
{
	if (n_items == 0)
		return;
	if (in_pool_job || p->n_helpers == 0 || n_items == 1) {
		int was = in_pool_job;
		in_pool_job = 1;
		for (uint64_t i = 0; i < n_items; i++)
			fn(ctx, i);
		in_pool_job = was;
		return;
	}

	pthread_mutex_lock(&p->run_mu);
	pthread_mutex_lock(&p->mu);
	p->fn = fn;
	p->ctx = ctx;
	p->n_items = n_items;
	/* About eight chunks per thread: few atomics, and uneven blocks still
	 * balance. */
	p->chunk = n_items / ((uint64_t)p->n_threads * 8);
	if (p->chunk == 0)
		p->chunk = 1;
	atomic_store_explicit(&p->next, 0, memory_order_relaxed);
	p->busy = p->n_helpers;
	p->gen++;
	pthread_cond_broadcast(&p->work_cv);
	pthread_mutex_unlock(&p->mu);

	in_pool_job = 1;
	run_items(p);
	in_pool_job = 0;

	pthread_mutex_lock(&p->mu);
	while (p->busy > 0)
		pthread_cond_wait(&p->done_cv, &p->mu);
	pthread_mutex_unlock(&p->mu);
	pthread_mutex_unlock(&p->run_mu);
}
