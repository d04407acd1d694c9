/* eval.h - one evaluation: a pass against every variant of a task.
 *
 * The job is a value (task graph + pass source + options) so it can cross a
 * process or network boundary.  eval_run() compiles the pass once, then for
 * each variant generates the inputs (the public seed 123 and a secret seed),
 * runs eager in a trusted worker process and the pass in a sandboxed worker
 * process, compares every output at every tolerance level, times both
 * (interleaved), checks the integrity rules, and scores the whole with ES_t.
 * The result is the result.json document (docs/result-format.md). */
#ifndef PASSFS_EVAL_H
#define PASSFS_EVAL_H

#include <stddef.h>
#include <stdint.h>
#include <jansson.h>

#include "graph.h"

struct eval_opts {
	const char *backend;        /* "auto" (default), "cpu", "cuda" */
	int warmup;                 /* 0: the backend's default */
	int trials;                 /* 0: the backend's default */
	double variant_timeout_s;   /* wall clock for one worker step; 0: 20 s */
	uint64_t secret_seed;       /* 0: drawn from getrandom */
	double b, p;                /* ES_t parameters; b 0 means the default 0.1 */
	int cold;                   /* flush the L2 before every timed trial (cuda) */
	double lock_timeout_s;      /* wait for the GPU's benchmark lock; 0: 600 s */
	int quiet;                  /* no progress lines on stderr */
	int trial_times;            /* result.json: every timed trial's ms per side
				     * (trial_ms; `passfs eval --trial-times`,
				     * for bench/rescore.sh's estimator study) */
	/* Called when the evaluation moves on: phase "compiling" (before the
	 * pass compile), "running" (after it, before the first variant).  May be
	 * NULL.  Runs on the evaluating thread. */
	void (*progress)(void *ctx, const char *phase);
	void *progress_ctx;
	/* May be NULL.  Once *cancel is nonzero (another thread sets it, with
	 * __atomic_store_n), the evaluation stops at its next wait - a worker
	 * step, the compile - kills its workers and returns -1 with the message
	 * "cancelled".  The service's close uses it after a grace period. */
	const int *cancel;
};

struct eval_job {
	const struct graph_task *task;
	const char *pass_label;     /* "pass.c" in messages */
	const char *pass_src;
	size_t pass_len;
	struct eval_opts opts;
};

/* Runs the evaluation.  Returns 0 with the result document in *result
 * (caller decrefs); the verdict inside may be any failure: a pass that does
 * not compile still yields a result.  Returns -1 with a message only when
 * passfs itself cannot evaluate (no backend, out of memory, eager failed). */
int eval_run(const struct eval_job *job, json_t **result, char *err, size_t errlen);

#endif
