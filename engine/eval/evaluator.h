/* evaluator.h - where an evaluation runs: the evaluator interface, and the
 * evaluation process that its local implementation starts.
 *
 * An evaluator takes a job (eval.h: a plain value) and returns its result
 * document.  The service (engine/service/service.c) holds one, chosen in
 * svc_opts, and knows nothing of how it runs the job:
 *
 *   run     evaluates one job, on the calling thread, calling progress with
 *           each phase as it comes; several runs may be in flight at once on
 *           different threads.
 *   cancel  from any thread: every run in flight, and every later one,
 *           stops and returns -1 with the message "cancelled" (the service's
 *           close uses it once its grace period is over).
 *   destroy frees it (no run in flight).
 *
 * The first implementation is local (evaluator_local): each run starts
 * this program afresh (fork + exec of /proc/self/exe with EVALUATOR_ARG)
 * and talks to it over a socket in a versioned protocol of fixed byte order
 * (evaluator.c: the request, then progress and a result back, a cancel
 * forth).  The daemons (`passfs mount`, `passfs watch`) hold every task's
 * current pass.c, results and history in memory, and a pass worker is a
 * fork of the process that evaluates: an evaluation inside the daemon would
 * hand the pass a copy of all of that.  The evaluation process holds one
 * task and one pass; its workers inherit only that.
 *
 * Every program that links the engine and may run a service calls
 * evaluator_main_if() first thing in main(). */
#ifndef PASSFS_EVALUATOR_H
#define PASSFS_EVALUATOR_H

#include <stddef.h>
#include <jansson.h>

#include "eval.h"

#define EVALUATOR_ARG "--passfs-evaluator"

struct evaluator;

struct evaluator_ops {
	const char *name;
	/* Same return as eval_run: 0 with *result, or -1 with a message when
	 * passfs could not evaluate (or the run was cancelled). */
	int (*run)(struct evaluator *ev, const struct eval_job *job, void (*progress)(void *ctx, const char *phase),
		   void *ctx, json_t **result, char *err, size_t errlen);
	void (*cancel)(struct evaluator *ev);
	void (*destroy)(struct evaluator *ev);
};

struct evaluator {
	const struct evaluator_ops *ops;
};

/* The local evaluator: every run in an evaluation process of its own.
 * When that process cannot be started at all (/proc/self/exe is not passfs:
 * a loader or a wrapper ran it), the run fails with the reason - unless
 * in_process_fallback is set, the operator's explicit choice: then it
 * evaluates inside the calling process, whose memory the pass's workers can
 * then read, and result.json says so ("evaluated_in").  NULL when out of
 * memory. */
struct evaluator *evaluator_local(int in_process_fallback);

/* The same, whose evaluation processes get setting ("NAME=VALUE") in their
 * environment in place of the caller's variable of that name: a broker
 * worker pins each slot's evaluations to a GPU with PASSFS_CUDA_DEVICE=N.
 * The in-process fallback runs in the caller's environment, without it.
 * NULL when out of memory or setting is no NAME=VALUE under 256 bytes. */
struct evaluator *evaluator_local_env(int in_process_fallback, const char *setting);

/* A job's options in the fixed layout both the evaluation process's 'Q'
 * request and the broker's job carry (docs/service.md "The evaluation
 * protocol"): i32 warmup, trials, cold, quiet, trial_times, check_only; f64
 * variant_timeout_s, b, p, lock_timeout_s; u64 secret_seed.  The backend
 * travels as a string of its own.  Adding an option here changes both
 * encodings, whose versions go up with it. */
struct wire_buf;
struct wire_in;
void eval_opts_put(struct wire_buf *b, const struct eval_opts *o);
void eval_opts_take(struct wire_in *r, struct eval_opts *o);

/* argv[1] == EVALUATOR_ARG: runs the evaluation described on descriptor 3
 * and returns the process's exit status; otherwise -1 (not an evaluator). */
int evaluator_main_if(int argc, char **argv);

#endif
