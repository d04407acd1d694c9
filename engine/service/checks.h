/* checks.h - the quick checks of the service (service.h, "checks"): the
 * parts engine/service/service.c and engine/service/checks.c share; not for
 * front ends, which use service.h.
 *
 * A check is a pass (a task's check.c) compiled and run on every variant's
 * public and secret inputs against eager, with no timing (eval.h,
 * check_only).  Checks run on a thread of their own, one at a time, the
 * latest per task wins; their results live in memory only: they never touch
 * a task's pass.c, result, history, es_t or the summary. */
#ifndef PASSFS_SERVICE_CHECKS_H
#define PASSFS_SERVICE_CHECKS_H

#include <stddef.h>

#include "eval.h"
#include "evaluator.h"

struct svc;
struct checks;

/* The checks of service s with n tasks: its thread started.  NULL with a
 * message in err. */
struct checks *checks_open(struct svc *s, int n, char *err, size_t errlen);
/* Stops the thread (a check in flight ends when the service's evaluator is
 * cancelled, which svc_close does first) and frees everything.  NULL: no-op. */
void checks_close(struct checks *c);

/* What checks.c reads of the service (service.c). */
struct checks *svc_x_checks(struct svc *s);
void svc_x_graph(struct svc *s, int task, const char **text, size_t *len, const char **path);
struct evaluator *svc_x_evaluator(struct svc *s);
struct eval_opts svc_x_eval_opts(struct svc *s);
/* The task's computed files changed (its generation moves, the front end
 * is told). */
void svc_x_changed(struct svc *s, int task);

#endif
