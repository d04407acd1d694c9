/* service.h - the evaluation service behind `passfs mount` and `passfs watch`.
 *
 * The service owns, per task: the current pass.c bytes, the evaluation state
 * machine, the latest result, and the state directory on disk.  The front ends
 * (fs/mount.c over FUSE, fs/watch.c over inotify) only translate file
 * operations into these calls; they know files, not kernels.
 *
 * State directory (--state DIR, default $XDG_STATE_HOME/passfs, else
 * ~/.local/state/passfs), one subdirectory per task id:
 *     <id>/pass.c            the current pass (durable before its evaluation fires)
 *     <id>/result.json       the latest result (atomic replace)
 *     <id>/history/NNNNNN.c  every evaluated pass, numbered by seq
 *     <id>/history/NNNNNN.json   its result
 * A restart (also after kill -9) restores pass.c and the latest result; a
 * saved pass.c that has no result (its evaluation was cut short) is fired
 * again at open.  docs/service.md describes states, results and this layout.
 *
 * Threads: every function may be called from any thread (one mutex inside).
 * Evaluations run on the service's own thread(s): at most one running per
 * task, at most one queued per task (the latest wins).  Content whose sha256
 * was already evaluated for the task is not evaluated again: its result is
 * reused under a new seq.
 *
 * Errors: functions return 0 or a negative errno, with a message where noted. */
#ifndef PASSFS_SERVICE_H
#define PASSFS_SERVICE_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "eval.h"
#include "evaluator.h"
#include "graph.h"

#define SVC_PASS_MAX PF_CAP_PASS_C  /* pass.c size cap: larger writes get EFBIG */

enum svc_state { SVC_IDLE, SVC_PENDING, SVC_COMPILING, SVC_RUNNING, SVC_DONE };

struct svc_opts {
	const char *tasks_dir;      /* required */
	const char *state_dir;      /* NULL: the default above */
	struct eval_opts eval;      /* backend, timeouts, b and p for every evaluation */
	int parallel;               /* evaluations at once across tasks; <= 0: 1 */
	/* Where evaluations run (engine/eval/evaluator.h), the caller's to free
	 * after svc_close; NULL: the local evaluator, an evaluation process per
	 * evaluation, which the service makes and frees. */
	struct evaluator *evaluator;
	/* For the local evaluator made here: when an evaluation process cannot
	 * be started (/proc/self/exe is not passfs: a loader or wrapper ran it),
	 * evaluate inside this process instead - its pass workers then inherit
	 * this process's memory, every task's pass.c and results - and say so
	 * in result.json ("evaluated_in").  0 (the default): that evaluation
	 * fails with the reason, as an error result. */
	int in_process_fallback;
	/* Count eager's modeled time of every task ahead, in the background,
	 * while no evaluation or check runs (warm.h): 1 to do it, unless
	 * PASSFS_WARM=0 says otherwise; only with the local evaluator
	 * (evaluator NULL) and not on the cuda backend. */
	int warm;
};

struct svc;

/* Called (from the service's notifier thread, never from inside a caller's
 * call, with no service lock held; bursts coalesce) whenever task
 * `task`'s state or result changes, so front ends can wake waiting readers
 * and invalidate cached content.  May call back into the service. */
typedef void (*svc_notify_fn)(void *ctx, int task);

/* Loads every task, creates or opens the state directory and restores each
 * task's pass.c (else the template) and latest result.  Returns 0 and *out,
 * or -1 with a message in err (a task that does not validate is an error
 * naming it). */
int svc_open(const struct svc_opts *o, svc_notify_fn notify, void *notify_ctx, struct svc **out,
	     char *err, size_t errlen);
/* Stops accepting work, waits up to SVC_CLOSE_GRACE_S for running
 * evaluations to finish and be recorded, cancels those still running (their
 * workers killed, no result: the next open fires their pass.c again) and
 * frees everything. */
#define SVC_CLOSE_GRACE_S 5.0
/* How long svc_open waits for another daemon's lock on the state directory
 * (state_lock) before refusing: a daemon told to stop may take the grace
 * period to record its last evaluation. */
#define SVC_LOCK_WAIT_S (SVC_CLOSE_GRACE_S + 2.0)
void svc_close(struct svc *s);

int svc_n_tasks(const struct svc *s);
/* Task index for an id, or -1. */
int svc_find(const struct svc *s, const char *id);
const struct graph_task *svc_task(const struct svc *s, int task);
const char *svc_state_dir(const struct svc *s);

/* ---- pass.c: the bytes the front end reads and writes --------------------- */

/* Copies up to len bytes at off into buf; returns the count (0 at EOF). */
size_t svc_pass_read(struct svc *s, int task, void *buf, size_t len, uint64_t off);
size_t svc_pass_size(struct svc *s, int task);
/* Writes in place (growing as needed).  -EFBIG past SVC_PASS_MAX. */
int svc_pass_write(struct svc *s, int task, const void *buf, size_t len, uint64_t off);
/* Truncates or extends with zeros.  -EFBIG past SVC_PASS_MAX. */
int svc_pass_truncate(struct svc *s, int task, uint64_t size);
/* Replaces the whole content (rename onto pass.c, watch mode). */
int svc_pass_replace(struct svc *s, int task, const void *buf, size_t len);
/* fsync(2) of pass.c: its current bytes made durable in the state directory
 * (STATE/<id>/pass.c, file and directory synced) without an evaluation; a
 * daemon that dies before the close finds them there and evaluates them at
 * the next open.  0 or -errno. */
int svc_pass_sync(struct svc *s, int task);
/* Modification time of pass.c (the last change), seconds and nanoseconds. */
void svc_pass_mtime(struct svc *s, int task, int64_t *sec, long *nsec);

/* Marks the task pending now (flush of a handle that wrote: release comes
 * later, asynchronously, and a read of result.json right after close()
 * must not show the previous result as current). */
void svc_mark_pending(struct svc *s, int task);
/* Fires an evaluation of the current bytes: snapshots them, makes them
 * durable in the state dir, queues the evaluation (replacing a queued one)
 * and returns its seq.  Content already evaluated is answered at once from
 * that result. */
int svc_fire(struct svc *s, int task, uint64_t *seq);
/* svc_fire, but evaluated even where these bytes were evaluated before
 * (a rerun: the same pass scored again, to see the score's noise); the
 * result says "rerun": true and "rerun_of": the seq of the bytes' latest
 * result.  Counted in history like any evaluation. */
int svc_rerun(struct svc *s, int task, uint64_t *seq);

/* ---- checks: a pass checked, not timed (engine/service/checks.c) ----------- */

/* A check of src (a task's check.c) is coming: check.json reads wait for it
 * (flush of a handle that wrote check.c; release fires later). */
void svc_check_mark_pending(struct svc *s, int task);
/* Queues a check of these bytes (replacing a queued one): compiled and run
 * on every variant's public and secret inputs against eager, nothing
 * timed, on the service's check thread.  Never changes pass.c, result.json,
 * es_t, history or the summary; the task's generation moves as the check
 * goes (check.json changes).  0 and *seq, or -EFBIG past SVC_PASS_MAX,
 * -ENOMEM, -ESHUTDOWN while closing. */
int svc_check_fire(struct svc *s, int task, const void *src, size_t len, uint64_t *seq);
/* True while a check is marked, queued or running; the seq it has or will
 * have (0 when not busy), as svc_busy/svc_busy_seq for evaluations. */
int svc_check_busy(struct svc *s, int task);
uint64_t svc_check_busy_seq(struct svc *s, int task);
/* check.json (malloc'd, ends with a newline; *len set): {"task",
 * "check_seq", "check_sha256", "state", "worst" (the worst variant verdict,
 * as result.json's "verdict"), "message", "variants" [{"name", "dtype",
 * "verdict", "min_t", "close_from_t", "max_abs_err", "max_rel_err",
 * "worst", "message", "log_tail", "log_truncated"}], "compile_log", "compile" {"verdict",
 * "message", "line"}, "backend", "elapsed_ms"}; "stale": true while a newer
 * check is pending or running; before any check {"task", "state": "idle",
 * "message"}.  NULL (ENOMEM) only when out of memory. */
char *svc_check_json(struct svc *s, int task, size_t *len);

/* ---- results ------------------------------------------------------------------ */

enum svc_state svc_state(struct svc *s, int task);
const char *svc_state_name(enum svc_state st);   /* "idle", "pending", ... */
/* True while an evaluation of the current pass.c is pending or running
 * (reads of result.json and es_t wait while this holds). */
int svc_busy(struct svc *s, int task);
/* Which evaluation the task is busy with: the seq its current pass.c has or
 * will have; 0 when not busy.  The mount answers a process that already
 * waited the whole --wait-timeout for that evaluation at once. */
uint64_t svc_busy_seq(struct svc *s, int task);
/* The result.json text (malloc'd, ends with a newline; *len set): the
 * latest result, with "state" showing the current state, or before any
 * evaluation a document with state "idle" and no verdict.  While the
 * current pass.c is pending or being evaluated (or edited and not fired) the
 * previous result is shown with "stale": true (and "pending_seq" while
 * busy); when passfs could not evaluate, "verdict" and "score" are null and
 * "error" says why (docs/service.md). */
char *svc_result_json(struct svc *s, int task, size_t *len);
/* The es_t file: the task score and a newline once an evaluation of the
 * current pass.c is done; until then "" (an empty file, never an error:
 * agents' editor tools crash on a read error).  NULL (ENOMEM) only when out
 * of memory. */
char *svc_es_t(struct svc *s, int task, size_t *len);
/* summary.json: every task's latest score, and the benchmark aggregate:
 * {"tasks": [{"id", "state", "verdict", "score", "seq"}, ...], "evaluated",
 * "aggregate" (over the evaluated tasks), "aggregate_all" (unevaluated
 * tasks count as b), "b"}. */
char *svc_summary_json(struct svc *s, size_t *len);
/* A counter that changes whenever any computed file's content changes. */
uint64_t svc_generation(struct svc *s, int task);
/* How many evaluations (eval_run calls) this service has started since
 * svc_open: reused results do not count.  For tests and diagnostics. */
uint64_t svc_evaluations(struct svc *s);

/* Writes every evaluated pass of `task_id` (NULL: all tasks) found under
 * state_dir as JSON lines (docs/history.md): one object per evaluation.
 * Works without a running service.  Returns the number of lines, or -1
 * with a message. */
int svc_history_export(const char *state_dir, const char *task_id, FILE *out, char *err, size_t errlen);

/* The default state directory ($XDG_STATE_HOME/passfs or
 * ~/.local/state/passfs), into buf. */
const char *svc_default_state_dir(char *buf, size_t len);

#endif
