/* warm.h - eager's modeled H200 time counted ahead (docs/service.md, "Eager's
 * model ahead").  A task's first evaluation on the cpu backend counts
 * eager's model of every variant (tens of seconds for a large task) before it
 * can score; the model does not depend on the pass, and once counted it is
 * kept in the cache (signed), for every later evaluation and mount.  So when
 * a mount or watch starts, a thread runs `passfs eager --model` for each task
 * in turn, in a process of its own (niced), while the service is idle: when
 * an evaluation or a check is asked for, the count in progress is stopped
 * (the variants it finished are kept) and taken up again once the service
 * is idle.  Tasks already counted take a moment each (their lines are read
 * from the cache). */
#ifndef PASSFS_WARM_H
#define PASSFS_WARM_H

struct warm;

/* Whether to count ahead: PASSFS_WARM (0: no, anything else: yes) where set,
 * else opt. */
int warm_wanted(int opt);
/* Starts counting the n tasks ids of tasks_dir on backend (as `passfs eager
 * --backend`), pausing while busy(ctx) is true (called from the warm
 * thread, often: keep it cheap); moved(ctx), when not NULL, each time the
 * state below changes.  NULL when nothing was started. */
struct warm *warm_start(const char *tasks_dir, const char *backend, char *const *ids, int n,
			int (*busy)(void *ctx), void (*moved)(void *ctx), void *ctx);
/* How many tasks are counted so far, of n, and the state: "starting",
 * "counting", "waiting for the evaluations and checks to end", "done",
 * "stopped (...)" or "off (...)"; NULL for w NULL. */
const char *warm_progress(struct warm *w, int *done, int *n);
/* Stops the count in progress (its process group) and the thread; frees w.
 * NULL is fine. */
void warm_stop(struct warm *w);

#endif
