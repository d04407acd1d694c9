/* eval.h - one evaluation: a pass against every variant of a task.
 *
 * The job is a plain value: the task's graph.json text, the pass's bytes and
 * the options, with no parsed structures, callbacks or environment in it, so
 * that it can be encoded whole for another process (engine/eval/evaluator.c
 * sends it to an evaluation process in a versioned protocol).  What happens
 * while it runs - progress phases out, a cancel in - travels beside it
 * (struct eval_hooks), as messages of that protocol when it runs elsewhere.
 *
 * eval_run() parses the graph, compiles the pass once, then for each variant
 * generates the inputs (the public seed 123 and a secret seed), runs eager
 * in a trusted worker process and the pass in a sandboxed worker process,
 * compares every output at every tolerance level, times both (interleaved),
 * checks the integrity rules, and scores the whole with ES_t.  The result
 * is the result.json document (docs/result-format.md).
 *
 * The evaluation reads settings of the machine it runs on from the
 * environment (where the CUDA driver, NVRTC and the caches are, the jail's
 * mode, diagnostics: docs/service.md "Machine settings"): the operator's of
 * that machine, never part of the job. */
#ifndef PASSFS_EVAL_H
#define PASSFS_EVAL_H

#include <stddef.h>
#include <stdint.h>
#include <jansson.h>

#include "graph.h"

#define EVAL_BACKEND_MAX 16

struct eval_opts {
	char backend[EVAL_BACKEND_MAX]; /* "auto" (also ""), "cpu", "cuda" */
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
	int check_only;             /* a check (a task's check.c, docs/mount.md):
				     * compile, then each variant's outputs on
				     * the public and secret inputs against
				     * eager, with no timing: speedups are 0 and
				     * the score means nothing */
	char variant[128];          /* eager_model: this variant only ("": all) */
	int eager_model;            /* no pass: eager's modeled H200 time of
				     * each variant (cpu backend; `passfs
				     * eager --model`), the result a document
				     * of its own (docs/eager.md) */
};

/* One evaluation, as a value.  The pointers name bytes the caller keeps
 * alive for the call; nothing else is referenced. */
struct eval_job {
	const char *graph_text;     /* the task's graph.json bytes */
	size_t graph_len;
	const char *graph_label;    /* its path, in messages */
	const char *pass_label;     /* "pass.c" in messages */
	const char *pass_src;
	size_t pass_len;
	struct eval_opts opts;
};

/* What travels beside a running evaluation.  Every member may be NULL. */
struct eval_hooks {
	/* Called when the evaluation moves on: phase "compiling" (before the
	 * pass compile), "running" (after it, before the first variant).  Runs
	 * on the evaluating thread. */
	void (*progress)(void *ctx, const char *phase);
	void *ctx;
	/* What the evaluation is doing now, for a person watching (passfs
	 * eval's progress line on a terminal): "variant 3/9 f16_b8: timing".
	 * Optional; called on the evaluating thread, with status_ctx; never
	 * sent over the evaluator protocol. */
	void (*status)(void *status_ctx, const char *line);
	void *status_ctx;
	/* Once *cancel is nonzero (another thread sets it, with
	 * __atomic_store_n), the evaluation stops at its next wait - a worker
	 * step, the compile - kills its workers and returns -1 with the message
	 * "cancelled". */
	const int *cancel;
};

/* Runs the evaluation here, in this process (its pass workers are forks of
 * it: see evaluator.h for running it in a process of its own).  Returns 0
 * with the result document in *result (caller decrefs); the verdict inside
 * may be any failure: a pass that does not compile still yields a result.
 * Returns -1 with a message only when passfs itself cannot evaluate (the
 * graph does not load, no backend, out of memory, eager failed). */
int eval_run(const struct eval_job *job, const struct eval_hooks *hooks, json_t **result, char *err,
	     size_t errlen);

/* How this build, in this environment, scores the speedups of an evaluation
 * on `backend` ("cpu", "cuda"): result.json's "scoring".  A result made
 * another way (before the cpu backend scored its model, or with
 * PASSFS_CPU_SPEEDUP set otherwise, or with other model constants) is not
 * reused for the same bytes (docs/history.md). */
const char *eval_scoring(const char *backend);

#endif
