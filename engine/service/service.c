/* service.c - the evaluation service behind `passfs mount` and `passfs watch`
 * (contract: service.h).
 *
 * Locks, in the order they are taken:
 *   task->io     per task: serialises the disk work of fires and of result
 *                commits, so pass.c, history and result.json land in seq order;
 *   s->mu        everything in memory (bytes, states, queues, results).
 * No disk I/O and no eval_run under s->mu, except reading the small history
 * documents that a reuse copies (under task->io, not s->mu).
 *
 * Notifications: a state change sets the task's bit in s->notify_bits and
 * wakes the notifier thread, which calls the front end's callback with no lock
 * held.  So the callback never runs inside a caller's request (a FUSE flush or
 * release), and a burst of changes coalesces into one call. */
#define _GNU_SOURCE
#include "service.h"
#include "warm.h"

#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <jansson.h>

#include "clock.h"
#include "checks.h"
#include "eval_util.h"
#include "evaluator.h"
#include "file.h"
#include "pass.h"
#include "score.h"
#include "sha256.h"
#include "result_fields.h"
#include "state.h"
#include "strbuf.h"
#include "task.h"

#define DUMP_FLAGS (JSON_INDENT(2) | JSON_REAL_PRECISION(10))

struct job {
	uint64_t seq;
	char *src;
	size_t len;
	char sha[65];
	uint64_t ticket;        /* FIFO order across tasks */
	int fresh;              /* a rerun: evaluated even where the bytes were before */
	uint64_t rerun_of;      /* then the seq of their latest result, 0: none */
};

struct known {                  /* an evaluated sha256 and the seq holding its result */
	char sha[65];
	uint64_t seq;
};

struct task {
	struct graph_task *g;
	char *graph_text;       /* graph.json's bytes, g parsed from them (for the evaluator) */
	size_t graph_len;
	char *graph_path;
	char *dir;              /* <state>/<id> */
	char *hist;             /* <state>/<id>/history */
	pthread_mutex_t io;

	/* ---- under s->mu ---- */
	char *buf;              /* the current pass.c */
	size_t len, cap;
	struct timespec mtime;
	char cur_sha[65];       /* sha256 of buf, valid when cur_sha_ok */
	int cur_sha_ok;
	int dirty;              /* bytes changed since the last fire */
	int marked;             /* svc_mark_pending since the last fire: new bytes are coming */

	enum svc_state st;      /* the state of want_seq (the current pass.c) */
	uint64_t last_seq;      /* the largest seq handed out */
	uint64_t want_seq;      /* the seq of the last fire: what "current" means */
	struct job *queued;     /* at most one */
	int running;            /* an evaluation of this task is on a worker */
	uint64_t running_seq;
	double running_since;   /* base_now_ms() when it went on the worker */
	double last_eval_ms;    /* how long this task's latest evaluation took (0: none yet) */
	uint64_t last_eval_seq;

	json_t *result;         /* the latest result (largest seq), state "done"; NULL */
	char save_err[400];     /* why the last fire's pass.c could not be saved; "" */
	uint64_t res_seq;
	struct known *known;    /* evaluated content */
	int n_known, cap_known;
	uint64_t gen;
};

struct svc {
	struct svc_opts o;
	char *tasks_dir, *state_dir;
	svc_notify_fn notify;
	void *notify_ctx;
	int n;
	struct task *t;

	pthread_mutex_t mu;
	pthread_cond_t work;    /* a job was queued, or closing */
	pthread_cond_t wake;    /* a notification is due, or closing */
	int closing;
	int cancel;             /* set by svc_close after the grace period (atomic) */
	struct evaluator *ev;   /* where evaluations run (svc_opts.evaluator) */
	int own_ev;             /* ev was made here: destroy at close */
	uint64_t tickets;
	uint64_t evaluations;   /* eval_run calls made */
	unsigned char *notify_bits;
	int notify_any;

	pthread_t notifier;
	int notifier_started;
	pthread_t *workers;
	int n_workers;
	struct checks *checks;  /* the quick checks (checks.c) */
	int lock_fd;            /* state_lock's: one daemon per state directory */
	struct warm *warm;      /* eager's model counted ahead (warm.h), or NULL */
};

/* ---- small helpers -------------------------------------------------------- */

static int svc_busy_any(void *arg);
static void svc_warm_moved(void *arg);
static int busy_locked(const struct task *t);

static char *xstrdup(const char *s)
{
	return s ? strdup(s) : NULL;
}

static char *path_join(const char *a, const char *b)
{
	char *p = NULL;
	if (asprintf(&p, "%s/%s", a, b) < 0)
		return NULL;
	return p;
}

/* Under s->mu: the task's computed files changed. */
static void changed(struct svc *s, int i)
{
	s->t[i].gen++;
	s->notify_bits[i] = 1;
	s->notify_any = 1;
	pthread_cond_signal(&s->wake);
}

static const char *cur_sha(struct task *t)
{
	if (!t->cur_sha_ok) {
		sha256_hex(t->buf, t->len, t->cur_sha);
		t->cur_sha_ok = 1;
	}
	return t->cur_sha;
}

static void bytes_changed(struct svc *s, int i)
{
	struct task *t = &s->t[i];
	t->cur_sha_ok = 0;
	t->dirty = 1;
	clock_gettime(CLOCK_REALTIME, &t->mtime);
	changed(s, i);
}

static int ensure_cap(struct task *t, size_t need)
{
	void *p = t->buf;
	int rc = base_grow(&p, &t->cap, need, 4096, 0);
	t->buf = p;
	return rc;
}

static uint64_t known_seq(const struct task *t, const char *sha)
{
	for (int k = t->n_known - 1; k >= 0; k--)
		if (strcmp(t->known[k].sha, sha) == 0)
			return t->known[k].seq;
	return 0;
}

static void known_add(struct task *t, const char *sha, uint64_t seq)
{
	for (int k = 0; k < t->n_known; k++)
		if (strcmp(t->known[k].sha, sha) == 0) {
			if (seq > t->known[k].seq)
				t->known[k].seq = seq;
			return;
		}
	if (t->n_known == t->cap_known) {
		int cap = t->cap_known ? t->cap_known * 2 : 16;
		struct known *nk = realloc(t->known, (size_t)cap * sizeof(*nk));
		if (nk == NULL)
			return;     /* only an optimisation is lost */
		t->known = nk;
		t->cap_known = cap;
	}
	memcpy(t->known[t->n_known].sha, sha, 65);
	t->known[t->n_known].seq = seq;
	t->n_known++;
}

/* A history document counts as an evaluation of its bytes when it has a
 * verdict (not the record of passfs failing to evaluate). */
static int doc_evaluated(json_t *doc)
{
	return json_is_string(json_object_get(doc, "verdict")) && json_object_get(doc, "error") == NULL;
}

static void job_free(struct job *j)
{
	if (j) {
		free(j->src);
		free(j);
	}
}

/* ---- opening: restore each task ------------------------------------------- */

const char *svc_default_state_dir(char *buf, size_t len)
{
	const char *x = getenv("XDG_STATE_HOME");
	if (x && *x == '/')
		snprintf(buf, len, "%s/passfs", x);
	else {
		const char *home = getenv("HOME");
		snprintf(buf, len, "%s/.local/state/passfs", home && *home ? home : ".");
	}
	return buf;
}

/* Restores pass.c, the known contents and the latest result of task i.
 * *refire: the saved pass.c has no result yet (a fire was lost to a crash or
 * a close with work queued). */
static int restore_task(struct svc *s, int i, int *refire, char *err, size_t errlen)
{
	struct task *t = &s->t[i];
	int e, rc;
	*refire = 0;
	if ((rc = base_mkdirs(t->hist, 0700)) != 0) {
		snprintf(err, errlen, "%s: %s", t->hist, strerror(-rc));
		return -1;
	}

	state_clean_temps(t->dir, ".");
	state_clean_temps(t->hist, ".");

	/* pass.c: the saved bytes, else the template. */
	char *p = path_join(t->dir, "pass.c");
	size_t len = 0;
	char *src = p ? base_read_file(p, SVC_PASS_MAX, &len, &e) : NULL;
	int saved = src != NULL;
	struct stat st;
	if (src && stat(p, &st) == 0)
		t->mtime = st.st_mtim;
	else
		clock_gettime(CLOCK_REALTIME, &t->mtime);
	if (src == NULL && p && e != ENOENT) {
		snprintf(err, errlen, "%s: %s", p, strerror(e));
		free(p);
		return -1;
	}
	free(p);
	if (src == NULL) {
		src = pass_template(t->g);
		if (src == NULL) {
			snprintf(err, errlen, "%s: out of memory building the template pass.c", t->g->id);
			return -1;
		}
		len = strlen(src);
	}
	t->buf = src;
	t->len = len;
	t->cap = len + 1;

	/* History: the evaluated contents and the largest seq. */
	uint64_t *seqs = NULL, max_any = 0;
	int n = 0;
	if ((rc = state_history_scan(t->hist, &seqs, &n, &max_any)) != 0) {
		snprintf(err, errlen, "%s: %s", t->hist, strerror(-rc));
		return -1;
	}
	json_t *latest = NULL;
	uint64_t latest_seq = 0;
	for (int k = 0; k < n; k++) {
		char name[40], *hp;
		state_history_name(name, sizeof(name), seqs[k], "json");
		hp = path_join(t->hist, name);
		json_t *doc = hp ? json_load_file(hp, 0, NULL) : NULL;
		free(hp);
		if (doc == NULL)
			continue;   /* unreadable: skipped, the seq stays taken */
		const char *sha = json_string_value(json_object_get(doc, "pass_sha256"));
		if (sha && strlen(sha) == 64 && doc_evaluated(doc))
			known_add(t, sha, seqs[k]);
		json_decref(latest);
		latest = doc;
		latest_seq = seqs[k];
	}
	free(seqs);

	/* result.json is the latest result; history covers a crash between the
	 * history entry and result.json. */
	char *rp = path_join(t->dir, "result.json");
	json_t *res = rp ? json_load_file(rp, 0, NULL) : NULL;
	free(rp);
	uint64_t rseq = res ? (uint64_t)json_integer_value(json_object_get(res, "seq")) : 0;
	if (res && rseq >= latest_seq) {
		json_decref(latest);
	} else {
		json_decref(res);
		res = latest;
		rseq = latest_seq;
	}
	if (res) {
		json_object_set_new(res, "state", json_string("done"));
		t->result = res;
		t->res_seq = rseq;
		t->st = SVC_DONE;
	} else {
		t->st = SVC_IDLE;
	}
	t->last_seq = max_any > rseq ? max_any : rseq;
	t->want_seq = t->res_seq;
	if (saved) {
		const char *rsha = res ? json_string_value(json_object_get(res, "pass_sha256")) : NULL;
		if (rsha == NULL || strcmp(rsha, cur_sha(t)) != 0)
			*refire = 1;
	}
	return 0;
}

static void *worker_main(void *arg);
static void *notifier_main(void *arg);

int svc_open(const struct svc_opts *o, svc_notify_fn notify, void *notify_ctx, struct svc **out, char *err,
	     size_t errlen)
{
	char defdir[PATH_MAX];
	char **ids = NULL;
	int n = 0;
	*out = NULL;
	if (o == NULL || o->tasks_dir == NULL) {
		snprintf(err, errlen, "no tasks directory given");
		return -1;
	}
	if (task_scan(o->tasks_dir, &ids, &n, err, errlen) != 0)
		return -1;
	if (n == 0) {
		snprintf(err, errlen, "%s: no tasks (subdirectories with a graph.json)", o->tasks_dir);
		task_ids_free(ids, n);
		return -1;
	}
	struct svc *s = calloc(1, sizeof(*s));
	if (s == NULL) {
		task_ids_free(ids, n);
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	s->o = *o;
	s->lock_fd = -1;
	s->tasks_dir = xstrdup(o->tasks_dir);
	s->state_dir = xstrdup(o->state_dir ? o->state_dir : svc_default_state_dir(defdir, sizeof(defdir)));
	s->o.tasks_dir = s->tasks_dir;
	s->o.state_dir = s->state_dir;
	s->ev = o->evaluator;
	if (s->ev == NULL) {
		s->ev = evaluator_local(o->in_process_fallback);
		s->own_ev = 1;
	}
	s->notify = notify;
	s->notify_ctx = notify_ctx;
	pthread_mutex_init(&s->mu, NULL);
	pthread_cond_init(&s->work, NULL);
	pthread_cond_init(&s->wake, NULL);
	s->t = calloc((size_t)n, sizeof(*s->t));
	s->notify_bits = calloc((size_t)n, 1);
	int *refire = calloc((size_t)n, sizeof(int));
	if (!s->t || !s->notify_bits || !refire || !s->tasks_dir || !s->state_dir || !s->ev) {
		snprintf(err, errlen, "out of memory");
		goto fail;
	}
	int rc = base_mkdirs(s->state_dir, 0700);
	if (rc != 0) {
		snprintf(err, errlen, "state directory %s: %s", s->state_dir, strerror(-rc));
		goto fail;
	}
	/* two daemons on one state directory would number their evaluations
	 * alike and overwrite each other's history and results */
	if (state_lock(s->state_dir, SVC_LOCK_WAIT_S, &s->lock_fd, err, errlen) != 0)
		goto fail;
	for (int i = 0; i < n; i++) {
		struct task *t = &s->t[i];
		pthread_mutex_init(&t->io, NULL);
		s->n = i + 1;
		if (task_load_text(o->tasks_dir, ids[i], &t->g, &t->graph_text, &t->graph_len, &t->graph_path, err,
				   errlen) != 0)
			goto fail;
		t->dir = path_join(s->state_dir, ids[i]);
		t->hist = t->dir ? path_join(t->dir, "history") : NULL;
		if (t->hist == NULL) {
			snprintf(err, errlen, "out of memory");
			goto fail;
		}
		if (restore_task(s, i, &refire[i], err, errlen) != 0)
			goto fail;
	}
	task_ids_free(ids, n);
	ids = NULL;

	if (pthread_create(&s->notifier, NULL, notifier_main, s) != 0) {
		snprintf(err, errlen, "cannot start the notifier thread");
		goto fail;
	}
	s->notifier_started = 1;
	int want = o->parallel > 0 ? o->parallel : 1;
	s->workers = calloc((size_t)want, sizeof(pthread_t));
	for (int k = 0; s->workers && k < want; k++) {
		if (pthread_create(&s->workers[k], NULL, worker_main, s) != 0)
			break;
		s->n_workers++;
	}
	if (s->n_workers == 0) {
		snprintf(err, errlen, "cannot start an evaluation thread");
		goto fail;
	}
	if ((s->checks = checks_open(s, s->n, err, errlen)) == NULL)
		goto fail;
	/* Fires lost to a crash (pass.c saved, no result for it) run again. */
	for (int i = 0; i < s->n; i++)
		if (refire[i]) {
			uint64_t seq;
			svc_fire(s, i, &seq);
		}
	free(refire);
	/* Eager's model of every task counted ahead, while nothing else runs
	 * (warm.h): a task's first evaluation then reads it from the cache.
	 * For evaluations of this machine's (a broker's workers count on
	 * theirs), and the cpu backend's (a cuda evaluation has no use for
	 * it). */
	if (warm_wanted(o->warm) && o->evaluator == NULL && strcmp(o->eval.backend, "cuda") != 0) {
		char **wids = calloc((size_t)s->n, sizeof(char *));
		if (wids) {
			for (int i = 0; i < s->n; i++)
				wids[i] = s->t[i].g->id;
			s->warm = warm_start(s->tasks_dir, o->eval.backend[0] ? o->eval.backend : "auto", wids, s->n,
					     svc_busy_any, svc_warm_moved, s);
			free(wids);
		}
	}
	*out = s;
	return 0;
fail:
	free(refire);
	task_ids_free(ids, n);
	svc_close(s);
	return -1;
}

/* Whether anything but the warm-up runs or waits: an evaluation (queued,
 * marked, pending, running) or a check (warm.h's busy). */
static int svc_busy_any(void *arg)
{
	struct svc *s = arg;
	int busy = 0;
	pthread_mutex_lock(&s->mu);
	for (int i = 0; i < s->n && !busy; i++) {
		const struct task *t = &s->t[i];
		busy = t->running || t->queued != NULL || t->marked || busy_locked(t);
	}
	int closing = s->closing;
	pthread_mutex_unlock(&s->mu);
	for (int i = 0; i < s->n && !busy && !closing && s->checks; i++)
		busy = svc_check_busy(s, i);
	return busy || closing;
}

/* The warm-up moved on: summary.json says so (its front ends rewrite or
 * invalidate it with the first task's files). */
static void svc_warm_moved(void *arg)
{
	struct svc *s = arg;
	pthread_mutex_lock(&s->mu);
	if (s->n > 0 && !s->closing)
		changed(s, 0);
	pthread_mutex_unlock(&s->mu);
}

void svc_close(struct svc *s)
{
	if (s == NULL)
		return;
	pthread_mutex_lock(&s->mu);
	struct warm *w = s->warm;
	s->warm = NULL;         /* (summary.json reads it under s->mu) */
	pthread_mutex_unlock(&s->mu);
	warm_stop(w);
	pthread_mutex_lock(&s->mu);
	s->closing = 1;
	pthread_cond_broadcast(&s->work);
	pthread_cond_broadcast(&s->wake);
	pthread_mutex_unlock(&s->mu);
	/* A running evaluation gets SVC_CLOSE_GRACE_S to finish and be
	 * recorded; then it is cancelled (its workers killed, no result), like
	 * the queued ones, which are dropped: their pass.c is saved, so the next
	 * open fires them again.  (Waiting it out could take the step timeout
	 * times the variants: two minutes for a pass that hangs.) */
	double until = base_now_ms() + SVC_CLOSE_GRACE_S * 1e3;
	for (;;) {
		pthread_mutex_lock(&s->mu);
		int running = 0;
		for (int i = 0; i < s->n; i++)
			running |= s->t[i].running;
		pthread_mutex_unlock(&s->mu);
		if (!running || base_now_ms() >= until)
			break;
		usleep(20000);
	}
	__atomic_store_n(&s->cancel, 1, __ATOMIC_RELAXED);
	if (s->ev != NULL)
		s->ev->ops->cancel(s->ev);
	for (int k = 0; k < s->n_workers; k++)
		pthread_join(s->workers[k], NULL);
	checks_close(s->checks);
	if (s->notifier_started)
		pthread_join(s->notifier, NULL);
	for (int i = 0; i < s->n; i++) {
		struct task *t = &s->t[i];
		graph_task_free(t->g);
		free(t->graph_text);
		free(t->graph_path);
		free(t->dir);
		free(t->hist);
		free(t->buf);
		job_free(t->queued);
		json_decref(t->result);
		free(t->known);
		pthread_mutex_destroy(&t->io);
	}
	free(s->t);
	free(s->workers);
	free(s->notify_bits);
	free(s->tasks_dir);
	free(s->state_dir);
	if (s->lock_fd >= 0)
		close(s->lock_fd);
	if (s->own_ev && s->ev != NULL)
		s->ev->ops->destroy(s->ev);
	pthread_cond_destroy(&s->work);
	pthread_cond_destroy(&s->wake);
	pthread_mutex_destroy(&s->mu);
	free(s);
}

int svc_n_tasks(const struct svc *s)
{
	return s->n;
}

int svc_find(const struct svc *s, const char *id)
{
	for (int i = 0; i < s->n; i++)
		if (strcmp(s->t[i].g->id, id) == 0)
			return i;
	return -1;
}

const struct graph_task *svc_task(const struct svc *s, int task)
{
	return task >= 0 && task < s->n ? s->t[task].g : NULL;
}

const char *svc_state_dir(const struct svc *s)
{
	return s->state_dir;
}

uint64_t svc_evaluations(struct svc *s)
{
	pthread_mutex_lock(&s->mu);
	uint64_t n = s->evaluations;
	pthread_mutex_unlock(&s->mu);
	return n;
}

/* ---- pass.c bytes --------------------------------------------------------- */

size_t svc_pass_read(struct svc *s, int task, void *buf, size_t len, uint64_t off)
{
	struct task *t = &s->t[task];
	size_t n = 0;
	pthread_mutex_lock(&s->mu);
	if (off < t->len) {
		n = t->len - (size_t)off;
		if (n > len)
			n = len;
		memcpy(buf, t->buf + off, n);
	}
	pthread_mutex_unlock(&s->mu);
	return n;
}

size_t svc_pass_size(struct svc *s, int task)
{
	pthread_mutex_lock(&s->mu);
	size_t n = s->t[task].len;
	pthread_mutex_unlock(&s->mu);
	return n;
}

int svc_pass_write(struct svc *s, int task, const void *buf, size_t len, uint64_t off)
{
	struct task *t = &s->t[task];
	if (off > SVC_PASS_MAX || len > SVC_PASS_MAX - off)
		return -EFBIG;
	if (len == 0)
		return 0;       /* a write of nothing does not extend the file */
	pthread_mutex_lock(&s->mu);
	size_t end = (size_t)off + len;
	int rc = ensure_cap(t, end);
	if (rc == 0) {
		if (off > t->len)
			memset(t->buf + t->len, 0, (size_t)off - t->len);
		memcpy(t->buf + off, buf, len);
		if (end > t->len)
			t->len = end;
		bytes_changed(s, task);
	}
	pthread_mutex_unlock(&s->mu);
	return rc;
}

int svc_pass_truncate(struct svc *s, int task, uint64_t size)
{
	struct task *t = &s->t[task];
	if (size > SVC_PASS_MAX)
		return -EFBIG;
	pthread_mutex_lock(&s->mu);
	int rc = ensure_cap(t, (size_t)size);
	if (rc == 0) {
		if (size > t->len)
			memset(t->buf + t->len, 0, (size_t)size - t->len);
		t->len = (size_t)size;
		bytes_changed(s, task);
	}
	pthread_mutex_unlock(&s->mu);
	return rc;
}

int svc_pass_replace(struct svc *s, int task, const void *buf, size_t len)
{
	struct task *t = &s->t[task];
	if (len > SVC_PASS_MAX)
		return -EFBIG;
	pthread_mutex_lock(&s->mu);
	int rc = ensure_cap(t, len);
	if (rc == 0) {
		memcpy(t->buf, buf, len);
		t->len = len;
		bytes_changed(s, task);
	}
	pthread_mutex_unlock(&s->mu);
	return rc;
}

int svc_pass_sync(struct svc *s, int task)
{
	struct task *t = &s->t[task];
	pthread_mutex_lock(&t->io);
	pthread_mutex_lock(&s->mu);
	size_t len = t->len;
	char *copy = malloc(len ? len : 1);
	if (copy != NULL && len)
		memcpy(copy, t->buf, len);
	pthread_mutex_unlock(&s->mu);
	int rc = copy == NULL ? -ENOMEM : state_write_atomic(t->dir, "pass.c", copy, len, 1);
	pthread_mutex_unlock(&t->io);
	free(copy);
	return rc;
}

void svc_pass_mtime(struct svc *s, int task, int64_t *sec, long *nsec)
{
	pthread_mutex_lock(&s->mu);
	*sec = s->t[task].mtime.tv_sec;
	*nsec = s->t[task].mtime.tv_nsec;
	pthread_mutex_unlock(&s->mu);
}

/* ---- firing --------------------------------------------------------------- */

void svc_mark_pending(struct svc *s, int task)
{
	pthread_mutex_lock(&s->mu);
	s->t[task].marked = 1;
	if (s->t[task].st != SVC_PENDING) {
		s->t[task].st = SVC_PENDING;
		changed(s, task);
	}
	pthread_mutex_unlock(&s->mu);
}

/* Loads history/<seq>.json (the result a reuse copies).  Under task->io. */
static json_t *load_history_doc(struct task *t, uint64_t seq)
{
	char name[40];
	state_history_name(name, sizeof(name), seq, "json");
	char *p = path_join(t->hist, name);
	json_t *doc = p ? json_load_file(p, 0, NULL) : NULL;
	free(p);
	return doc;
}

/* Writes history/<seq>.c and .json and, when latest, result.json.  Under
 * task->io.  0 or -errno (the in-memory result is published either way: an
 * unwritable state dir must not hide a result from the agent). */
static int commit_files(struct task *t, uint64_t seq, json_t *doc, const char *src, size_t len, int latest)
{
	char name[40];
	int rc;
	char *text = json_dumps(doc, DUMP_FLAGS);
	if (text == NULL)
		return -ENOMEM;
	size_t tl = strlen(text);
	text[tl] = 0;
	/* history entries are never replaced: a seq already there is another
	 * writer's (the state directory's lock keeps a second daemon out) */
	state_history_name(name, sizeof(name), seq, "c");
	rc = state_write_new(t->hist, name, src, len);
	if (rc == 0) {
		state_history_name(name, sizeof(name), seq, "json");
		char *full = malloc(tl + 2);
		if (full == NULL) {
			free(text);
			return -ENOMEM;
		}
		memcpy(full, text, tl);
		full[tl] = '\n';
		rc = state_write_new(t->hist, name, full, tl + 1);
		if (rc == 0 && latest)
			rc = state_write_atomic(t->dir, "result.json", full, tl + 1, 1);
		free(full);
	}
	free(text);
	return rc;
}

/* Records `doc` (owned) as the result of seq for task i: files, then memory,
 * then the state.  Under task->io, not s->mu. */
static void record(struct svc *s, int i, uint64_t seq, json_t *doc, const char *src, size_t len,
		   const char *sha)
{
	struct task *t = &s->t[i];
	char now[32];
	state_iso_now(now);
	json_object_set_new(doc, "seq", json_integer((json_int_t)seq));
	json_object_set_new(doc, "state", json_string("done"));
	json_object_set_new(doc, "time", json_string(now));

	pthread_mutex_lock(&s->mu);
	int latest = seq > t->res_seq;
	pthread_mutex_unlock(&s->mu);
	int rc = commit_files(t, seq, doc, src, len, latest);
	if (rc != 0)
		fprintf(stderr, "passfs: %s: cannot save the result of seq %" PRIu64 ": %s\n", t->g->id, seq,
			strerror(-rc));

	pthread_mutex_lock(&s->mu);
	if (doc_evaluated(doc))
		known_add(t, sha, seq);
	if (latest) {
		json_decref(t->result);
		t->result = doc;
		t->res_seq = seq;
	} else {
		json_decref(doc);
	}
	if (seq == t->want_seq && !t->marked)
		t->st = SVC_DONE;
	changed(s, i);
	pthread_mutex_unlock(&s->mu);
}

/* Answers seq from the result of `from` (same content, scored the way this
 * process scores: eval_scoring).  Under task->io.  0, or -1 when that
 * document cannot be read or was scored otherwise (then evaluate instead). */
static int reuse(struct svc *s, int i, uint64_t seq, uint64_t from, const char *src, size_t len,
		 const char *sha)
{
	struct task *t = &s->t[i];
	json_t *doc = NULL;
	pthread_mutex_lock(&s->mu);
	if (t->result && t->res_seq == from)
		doc = json_deep_copy(t->result);
	pthread_mutex_unlock(&s->mu);
	if (doc == NULL)
		doc = load_history_doc(t, from);
	if (doc == NULL)
		return -1;
	const char *dsha = json_string_value(json_object_get(doc, "pass_sha256"));
	const char *scoring = json_string_value(json_object_get(doc, "scoring"));
	if (dsha == NULL || strcmp(dsha, sha) != 0 || scoring == NULL ||
	    strcmp(scoring, eval_scoring(json_string_value(json_object_get(doc, "backend")))) != 0) {
		json_decref(doc);
		return -1;
	}
	json_object_set_new(doc, "reused_from", json_integer((json_int_t)from));
	/* an answer from history is not a rerun, whatever the result it
	 * copies was */
	json_object_del(doc, "rerun");
	json_object_del(doc, "rerun_of");
	record(s, i, seq, doc, src, len, sha);
	return 0;
}

static int fire(struct svc *s, int task, int fresh, uint64_t *seq_out);

int svc_fire(struct svc *s, int task, uint64_t *seq_out)
{
	return fire(s, task, 0, seq_out);
}

int svc_rerun(struct svc *s, int task, uint64_t *seq_out)
{
	return fire(s, task, 1, seq_out);
}

static int fire(struct svc *s, int task, int fresh, uint64_t *seq_out)
{
	struct task *t = &s->t[task];
	struct job *j = calloc(1, sizeof(*j));
	if (j == NULL)
		return -ENOMEM;
	pthread_mutex_lock(&t->io);
	pthread_mutex_lock(&s->mu);
	if (s->closing) {
		pthread_mutex_unlock(&s->mu);
		pthread_mutex_unlock(&t->io);
		free(j);
		return -ESHUTDOWN;
	}
	j->src = malloc(t->len + 1);
	if (j->src == NULL) {
		pthread_mutex_unlock(&s->mu);
		pthread_mutex_unlock(&t->io);
		free(j);
		return -ENOMEM;
	}
	memcpy(j->src, t->buf, t->len);
	j->src[t->len] = 0;
	j->len = t->len;
	memcpy(j->sha, cur_sha(t), 65);
	j->seq = ++t->last_seq;
	t->want_seq = j->seq;
	t->dirty = 0;
	t->marked = 0;
	enum svc_state before = t->st;
	if (t->st != SVC_PENDING) {
		t->st = SVC_PENDING;
		changed(s, task);
	}
	uint64_t from = known_seq(t, j->sha);
	if (fresh) {
		j->fresh = 1;
		j->rerun_of = from;
		from = 0;
	}
	pthread_mutex_unlock(&s->mu);
	*seq_out = j->seq;

	/* Durable before it is evaluated: a crash from here on finds this pass.c
	 * (and re-fires it at the next open). */
	int rc = state_write_atomic(t->dir, "pass.c", j->src, j->len, 1);
	if (rc != 0) {
		fprintf(stderr, "passfs: %s: cannot save pass.c: %s\n", t->g->id, strerror(-rc));
		pthread_mutex_lock(&s->mu);
		/* result.json says so: the writer's close() had already returned */
		snprintf(t->save_err, sizeof(t->save_err),
			 "pass.c could not be saved in %s (%s), so it was not evaluated: make room and save it again",
			 t->dir, strerror(-rc));
		if (t->want_seq == j->seq) {
			t->st = before == SVC_PENDING ? (t->result ? SVC_DONE : SVC_IDLE) : before;
			t->dirty = 1;
			changed(s, task);
		}
		pthread_mutex_unlock(&s->mu);
		pthread_mutex_unlock(&t->io);
		job_free(j);
		return rc;
	}
	pthread_mutex_lock(&s->mu);
	t->save_err[0] = 0;
	pthread_mutex_unlock(&s->mu);
	if (from && reuse(s, task, j->seq, from, j->src, j->len, j->sha) == 0) {
		pthread_mutex_lock(&s->mu);
		/* Latest wins: an older queued evaluation is no longer wanted. */
		job_free(t->queued);
		t->queued = NULL;
		pthread_mutex_unlock(&s->mu);
		pthread_mutex_unlock(&t->io);
		job_free(j);
		return 0;
	}
	pthread_mutex_lock(&s->mu);
	job_free(t->queued);
	j->ticket = ++s->tickets;
	t->queued = j;
	pthread_cond_signal(&s->work);
	pthread_mutex_unlock(&s->mu);
	pthread_mutex_unlock(&t->io);
	return 0;
}

/* ---- evaluation threads --------------------------------------------------- */

struct progress_ctx {
	struct svc *s;
	int task;
	uint64_t seq;
};

static void on_progress(void *ctx, const char *phase)
{
	struct progress_ctx *pc = ctx;
	struct svc *s = pc->s;
	struct task *t = &s->t[pc->task];
	enum svc_state st = strcmp(phase, "compiling") == 0 ? SVC_COMPILING
			    : strcmp(phase, "running") == 0 ? SVC_RUNNING
							    : SVC_IDLE;
	if (st == SVC_IDLE)
		return;
	pthread_mutex_lock(&s->mu);
	/* Only the evaluation of the current pass.c moves the state: while an
	 * older one runs, the newer fire stays pending. */
	if (pc->seq == t->want_seq && !t->marked && t->st != st && t->st != SVC_DONE) {
		t->st = st;
		changed(s, pc->task);
	}
	pthread_mutex_unlock(&s->mu);
}

/* The result of an evaluation passfs itself could not run: no verdict, no
 * score, the reason in "error".  Not the pass's fault, so it is not counted
 * as an evaluation of these bytes: firing them again evaluates again. */
static json_t *error_doc(const struct task *t, const struct job *j, const char *msg)
{
	char m[700];
	snprintf(m, sizeof(m), "passfs could not evaluate this pass: %s", msg);
	return json_pack("{s:s, s:I, s:s, s:s, s:n, s:s, s:n, s:n, s:s, s:[], s:s}", "task", t->g->id, "seq",
			 (json_int_t)j->seq, "pass_sha256", j->sha, "state", "done", "verdict", "message", m, "score",
			 "es_t", "error", msg, "variants", "passfs_version", PASSFS_VERSION);
}

/* Under s->mu: the queued job to run next (oldest ticket, task not running). */
static int pick(struct svc *s)
{
	int best = -1;
	for (int i = 0; i < s->n; i++) {
		struct task *t = &s->t[i];
		if (t->queued && !t->running && (best < 0 || t->queued->ticket < s->t[best].queued->ticket))
			best = i;
	}
	return best;
}

static void *worker_main(void *arg)
{
	struct svc *s = arg;
	pthread_mutex_lock(&s->mu);
	for (;;) {
		int i = -1;
		while (!s->closing && (i = pick(s)) < 0)
			pthread_cond_wait(&s->work, &s->mu);
		if (s->closing)
			break;
		struct task *t = &s->t[i];
		struct job *j = t->queued;
		t->queued = NULL;
		t->running = 1;
		t->running_seq = j->seq;
		t->running_since = base_now_ms();
		uint64_t from = j->fresh ? 0 : known_seq(t, j->sha);
		pthread_mutex_unlock(&s->mu);

		/* Evaluated meanwhile (the same bytes were running when this
		 * fire came): answer from that result. */
		int done = 0;
		if (from) {
			pthread_mutex_lock(&t->io);
			done = reuse(s, i, j->seq, from, j->src, j->len, j->sha) == 0;
			pthread_mutex_unlock(&t->io);
		}
		if (!done) {
			struct progress_ctx pc = {s, i, j->seq};
			struct eval_job ej = {.graph_text = t->graph_text, .graph_len = t->graph_len,
					      .graph_label = t->graph_path, .pass_label = "pass.c", .pass_src = j->src,
					      .pass_len = j->len, .opts = s->o.eval};
			json_t *doc = NULL;
			char err[512] = "";
			pthread_mutex_lock(&s->mu);
			s->evaluations++;
			pthread_mutex_unlock(&s->mu);
			int erc = s->ev->ops->run(s->ev, &ej, on_progress, &pc, &doc, err, sizeof(err));
			if (__atomic_load_n(&s->cancel, __ATOMIC_RELAXED)) {
				/* stopped by the close: no result, so the next
				 * open finds pass.c unevaluated and fires it */
				json_decref(doc);
				doc = NULL;
				fprintf(stderr, "passfs: %s: seq %" PRIu64 ": stopped at shutdown; evaluated again at the next start\n",
					t->g->id, j->seq);
			} else if (erc != 0 || doc == NULL) {
				json_decref(doc);
				fprintf(stderr, "passfs: %s: seq %" PRIu64 ": %s\n", t->g->id, j->seq,
					err[0] ? err : "evaluation failed");
				doc = error_doc(t, j, err[0] ? err : "evaluation failed");
			}
			if (doc && j->fresh) {
				/* asked for again (svc_rerun): say so, and which
				 * result of the same bytes this one stands beside */
				json_object_set_new(doc, "rerun", json_true());
				if (j->rerun_of)
					json_object_set_new(doc, "rerun_of", json_integer((json_int_t)j->rerun_of));
			}
			if (doc) {
				pthread_mutex_lock(&t->io);
				record(s, i, j->seq, doc, j->src, j->len, j->sha);
				pthread_mutex_unlock(&t->io);
			}
		}
		double took = base_now_ms() - t->running_since;
		uint64_t took_seq = j->seq;
		job_free(j);
		pthread_mutex_lock(&s->mu);
		t->running = 0;
		if (!done) {
			t->last_eval_ms = took;
			t->last_eval_seq = took_seq;
		}
		if (t->queued)
			pthread_cond_signal(&s->work);
	}
	pthread_mutex_unlock(&s->mu);
	return NULL;
}

static void *notifier_main(void *arg)
{
	struct svc *s = arg;
	unsigned char *due = calloc((size_t)s->n, 1);
	pthread_mutex_lock(&s->mu);
	for (;;) {
		while (!s->closing && !s->notify_any)
			pthread_cond_wait(&s->wake, &s->mu);
		if (s->closing || due == NULL)
			break;
		memcpy(due, s->notify_bits, (size_t)s->n);
		memset(s->notify_bits, 0, (size_t)s->n);
		s->notify_any = 0;
		pthread_mutex_unlock(&s->mu);
		for (int i = 0; i < s->n; i++)
			if (due[i] && s->notify)
				s->notify(s->notify_ctx, i);
		pthread_mutex_lock(&s->mu);
	}
	pthread_mutex_unlock(&s->mu);
	free(due);
	return NULL;
}

/* ---- results -------------------------------------------------------------- */

enum svc_state svc_state(struct svc *s, int task)
{
	pthread_mutex_lock(&s->mu);
	enum svc_state st = s->t[task].st;
	pthread_mutex_unlock(&s->mu);
	return st;
}

const char *svc_state_name(enum svc_state st)
{
	switch (st) {
	case SVC_IDLE: return "idle";
	case SVC_PENDING: return "pending";
	case SVC_COMPILING: return "compiling";
	case SVC_RUNNING: return "running";
	case SVC_DONE: return "done";
	}
	return "idle";
}

static int busy_locked(const struct task *t)
{
	return t->st == SVC_PENDING || t->st == SVC_COMPILING || t->st == SVC_RUNNING;
}

uint64_t svc_busy_seq(struct svc *s, int task)
{
	pthread_mutex_lock(&s->mu);
	const struct task *t = &s->t[task];
	/* marked: a save flushed, its fire (and seq) still to come */
	uint64_t q = !busy_locked(t) ? 0 : t->marked ? t->last_seq + 1 : t->want_seq;
	pthread_mutex_unlock(&s->mu);
	return q;
}

int svc_busy(struct svc *s, int task)
{
	pthread_mutex_lock(&s->mu);
	int b = busy_locked(&s->t[task]);
	pthread_mutex_unlock(&s->mu);
	return b;
}

static char *dump_nl(json_t *doc, size_t *len)
{
	char *text = doc ? json_dumps(doc, DUMP_FLAGS) : NULL;
	if (text == NULL)
		return NULL;
	size_t n = strlen(text);
	char *out = realloc(text, n + 2);
	if (out == NULL) {
		free(text);
		return NULL;
	}
	out[n] = '\n';
	out[n + 1] = 0;
	if (len)
		*len = n + 1;
	return out;
}

/* Under s->mu: does the latest result judge the current bytes, with nothing
 * newer fired? */
static int current_locked(struct task *t)
{
	return t->result && t->st == SVC_DONE && !t->dirty && t->res_seq == t->want_seq;
}

static int cmp_ms(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

/* Under s->mu: how long the task's evaluation in progress or in the queue
 * should take still, in ms, and what says so (into why); -1 when nothing
 * does.  What one took is taken from the task's latest evaluation in this
 * service (else its latest result's elapsed_ms, else the median of the
 * other tasks'), less what has run of it; a queued one waits for those
 * running first. */
static double remaining_ms(const struct svc *s, const struct task *t, char *why, size_t whylen)
{
	double took = t->last_eval_ms;
	char from[160];
	snprintf(from, sizeof from, "evaluation %llu of this task took %.1f s", (unsigned long long)t->last_eval_seq,
		 took / 1000);
	if (!(took > 0) && t->result != NULL) {
		json_t *e = json_object_get(t->result, "elapsed_ms");
		took = json_is_number(e) ? json_number_value(e) : 0;
		snprintf(from, sizeof from, "this task's latest result took %.1f s", took / 1000);
	}
	if (!(took > 0)) {
		/* the median of the other tasks' last evaluations */
		double v[64];
		int n = 0;
		for (int i = 0; i < s->n && n < 64; i++)
			if (s->t[i].last_eval_ms > 0)
				v[n++] = s->t[i].last_eval_ms;
		if (n == 0)
			return -1;
		qsort(v, (size_t)n, sizeof(v[0]), cmp_ms);
		took = v[n / 2];
		snprintf(from, sizeof from, "no earlier evaluation of this task here; the median of %d other task%s' is %.1f s",
			 n, n == 1 ? "" : "s", took / 1000);
	}
	double now = base_now_ms(), left;
	if (t->running && t->running_seq == t->want_seq) {
		left = took - (now - t->running_since);
	} else {
		/* queued: after the other tasks' evaluations running now (one
		 * worker each), and after an older pass.c of this task, which
		 * runs first whatever the workers */
		double ahead = 0, own = 0;
		for (int i = 0; i < s->n; i++) {
			const struct task *o = &s->t[i];
			if (!o->running)
				continue;
			double r = (o->last_eval_ms > 0 ? o->last_eval_ms : took) - (now - o->running_since);
			r = r > 0 ? r : 0;
			if (o == t)
				own = r;
			else
				ahead += r;
		}
		int workers = s->n_workers > 0 ? s->n_workers : 1;
		left = took + ahead / workers + own;
	}
	snprintf(why, whylen, "%s", from);
	return left > 1000 ? left : 1000;
}

/* Under s->mu: the estimate a read that came back before its evaluation
 * finished carries ("estimate": when to read again, and why). */
static void add_estimate(const struct svc *s, const struct task *t, json_t *doc)
{
	if (!busy_locked(t))
		return;
	char why[200];
	double left = remaining_ms(s, t, why, sizeof why);
	if (left < 0)
		json_object_set_new(doc, "estimate",
				    json_pack("{s:n, s:s}", "read_again_in_s", "based_on",
					      "no evaluation has finished here yet to estimate from"));
	else
		json_object_set_new(doc, "estimate", json_pack("{s:I, s:s}", "read_again_in_s",
							      (json_int_t)((left + 999) / 1000), "based_on", why));
}

/* Under s->mu: an older result, shown while the current pass.c waits
 * (O_NONBLOCK reads, a wait that timed out) or has unsaved edits.  Its
 * first lines say so - task, seq, state, stale, pending_seq, stale_reason,
 * and while it waits an estimate of when to read again - before the older
 * verdict, so that `head result.json` cannot be read as
 * the current pass's result.  A new document sharing old's values; NULL when
 * memory runs out. */
static json_t *stale_doc(const struct svc *s, const struct task *t, json_t *old)
{
	json_t *doc = json_object();
	if (doc == NULL)
		return NULL;
	char why[200];
	json_int_t rs = json_integer_value(json_object_get(old, "seq"));
	if (busy_locked(t))
		snprintf(why, sizeof why,
			 "the result of seq %lld, an older pass.c; the current pass.c (seq %llu) is %s: read "
			 "result.json again to wait for it",
			 (long long)rs, (unsigned long long)t->want_seq, svc_state_name(t->st));
	else if (t->dirty)
		snprintf(why, sizeof why,
			 "the result of seq %lld; pass.c was changed since and is evaluated when it is saved "
			 "(closed)", (long long)rs);
	else
		snprintf(why, sizeof why, "the result of seq %lld, not of the current pass.c", (long long)rs);
	static const char *const head[] = {"task", "seq"};
	for (size_t i = 0; i < sizeof head / sizeof head[0]; i++) {
		json_t *v = json_object_get(old, head[i]);
		if (v != NULL)
			json_object_set(doc, head[i], v);
	}
	json_object_set_new(doc, "state", json_string(svc_state_name(t->st)));
	json_object_set_new(doc, "stale", json_true());
	if (busy_locked(t))
		json_object_set_new(doc, "pending_seq", json_integer((json_int_t)t->want_seq));
	json_object_set_new(doc, "stale_reason", json_string(why));
	add_estimate(s, t, doc);
	const char *k;
	json_t *v;
	json_object_foreach(old, k, v)
		if (json_object_get(doc, k) == NULL)
			json_object_set(doc, k, v);
	return doc;
}

char *svc_result_json(struct svc *s, int task, size_t *len)
{
	struct task *t = &s->t[task];
	json_t *doc;
	pthread_mutex_lock(&s->mu);
	if (t->result == NULL) {
		const char *msg = t->st == SVC_IDLE ? "no evaluation yet: write pass.c"
						    : "the first evaluation of pass.c is under way";
		doc = json_pack("{s:s, s:I, s:s, s:s, s:n, s:s, s:n, s:n, s:[]}", "task", t->g->id, "seq",
				(json_int_t)(busy_locked(t) ? t->want_seq : 0), "pass_sha256", cur_sha(t), "state",
				svc_state_name(t->st), "verdict", "message", msg, "score", "es_t", "variants");
		if (doc)
			add_estimate(s, t, doc);
	} else {
		if (current_locked(t)) {
			doc = json_copy(t->result);
			if (doc)
				json_object_set_new(doc, "state", json_string(svc_state_name(t->st)));
		} else {
			doc = stale_doc(s, t, t->result);
		}
	}
	if (doc && t->save_err[0])
		json_object_set_new(doc, "save_error", json_string(t->save_err));
	result_fields_enforce(doc, "the service");
	char *out = dump_nl(doc, len);
	pthread_mutex_unlock(&s->mu);
	json_decref(doc);
	return out;
}

char *svc_es_t(struct svc *s, int task, size_t *len)
{
	struct task *t = &s->t[task];
	char *out = NULL;
	pthread_mutex_lock(&s->mu);
	json_t *sc = t->result ? json_object_get(t->result, "score") : NULL;
	int n;
	/* empty, never an error, until there is a score for the current pass.c:
	 * agents' editor tools crash on ENODATA */
	if (current_locked(t) && json_is_number(sc))
		n = asprintf(&out, "%.6f\n", json_number_value(sc));
	else
		n = (out = strdup("")) ? 0 : -1;
	if (n < 0)
		out = NULL;
	else if (len)
		*len = (size_t)n;
	pthread_mutex_unlock(&s->mu);
	if (out == NULL)
		errno = ENOMEM;
	return out;
}

char *svc_summary_json(struct svc *s, size_t *len)
{
	double b = s->o.eval.b > 0 ? s->o.eval.b : SCORE_DEFAULT_B;
	json_t *tasks = json_array();
	double *scores = calloc((size_t)s->n + 1, sizeof(double));
	if (tasks == NULL || scores == NULL) {
		json_decref(tasks);
		free(scores);
		return NULL;
	}
	pthread_mutex_lock(&s->mu);
	for (int i = 0; i < s->n; i++) {
		struct task *t = &s->t[i];
		json_t *verdict = t->result ? json_object_get(t->result, "verdict") : NULL;
		json_t *score = t->result ? json_object_get(t->result, "score") : NULL;
		json_t *row = json_pack("{s:s, s:s, s:O, s:O, s:I}", "id", t->g->id, "state", svc_state_name(t->st),
					"verdict", verdict ? verdict : json_null(), "score",
					score ? score : json_null(), "seq", (json_int_t)t->res_seq);
		json_array_append_new(tasks, row);
		scores[i] = json_is_number(score) ? json_number_value(score) : NAN;
	}
	/* eager's model counted ahead (warm.h): how far, null when off */
	int wdone, wn;
	const char *wst = warm_progress(s->warm, &wdone, &wn);
	json_t *ahead = wst ? json_pack("{s:s, s:i, s:i}", "state", wst, "tasks_ready", wdone, "tasks", wn) : json_null();
	pthread_mutex_unlock(&s->mu);
	double agg = 0, agg_all = 0;
	int have, have_all;
	size_t n_eval = score_aggregates(scores, (size_t)s->n, b, &agg, &have, &agg_all, &have_all);
	json_t *doc = json_pack("{s:o, s:I, s:o, s:o, s:f}", "tasks", tasks, "evaluated", (json_int_t)n_eval,
				"aggregate", have ? json_real(agg) : json_null(), "aggregate_all",
				have_all ? json_real(agg_all) : json_null(), "b", b);
	if (doc)
		json_object_set_new(doc, "eager_model_ahead", ahead);
	else
		json_decref(ahead);
	free(scores);
	char *out = dump_nl(doc, len);
	json_decref(doc);
	return out;
}

uint64_t svc_generation(struct svc *s, int task)
{
	pthread_mutex_lock(&s->mu);
	uint64_t g = s->t[task].gen;
	pthread_mutex_unlock(&s->mu);
	return g;
}

/* ---- for the checks (checks.h) ------------------------------------------------------ */

struct checks *svc_x_checks(struct svc *s)
{
	return s->checks;
}

void svc_x_graph(struct svc *s, int task, const char **text, size_t *len, const char **path)
{
	*text = s->t[task].graph_text;
	*len = s->t[task].graph_len;
	*path = s->t[task].graph_path;
}

struct evaluator *svc_x_evaluator(struct svc *s)
{
	return s->ev;
}

struct eval_opts svc_x_eval_opts(struct svc *s)
{
	return s->o.eval;
}

void svc_x_changed(struct svc *s, int task)
{
	pthread_mutex_lock(&s->mu);
	changed(s, task);
	pthread_mutex_unlock(&s->mu);
}

/* ---- history export ----------------------------------------------------------- */

/* One JSON line per history entry of one task directory. */
static int export_task(const char *state_dir, const char *id, FILE *out, char *err, size_t errlen)
{
	char *dir = path_join(state_dir, id), *hist = dir ? path_join(dir, "history") : NULL;
	uint64_t *seqs = NULL, max_any;
	int n = 0, lines = 0, rc;
	if (hist == NULL) {
		free(dir);
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	if ((rc = state_history_scan(hist, &seqs, &n, &max_any)) != 0) {
		snprintf(err, errlen, "%s: %s", hist, strerror(-rc));
		lines = -1;
		goto out;
	}
	for (int k = 0; k < n; k++) {
		char name[40];
		state_history_name(name, sizeof(name), seqs[k], "json");
		char *jp = path_join(hist, name);
		json_t *doc = jp ? json_load_file(jp, 0, NULL) : NULL;
		struct stat st;
		char mt[32] = "";
		if (jp && stat(jp, &st) == 0) {
			struct tm tm;
			gmtime_r(&st.st_mtime, &tm);
			strftime(mt, sizeof(mt), "%Y-%m-%dT%H:%M:%SZ", &tm);
		}
		free(jp);
		if (doc == NULL || !doc_evaluated(doc)) {
			json_decref(doc);
			continue;   /* unreadable, or passfs failed to evaluate: no verdict to learn from */
		}
		state_history_name(name, sizeof(name), seqs[k], "c");
		char *cp = path_join(hist, name);
		size_t slen = 0;
		int e;
		char *src = cp ? base_read_file(cp, SVC_PASS_MAX, &slen, &e) : NULL;
		free(cp);
		if (src == NULL) {
			json_decref(doc);
			continue;
		}
		json_t *vars = json_array();
		json_t *v;
		size_t vi;
		json_array_foreach(json_object_get(doc, "variants"), vi, v) {
			json_t *sp = json_object_get(v, "speedup"), *mt_ = json_object_get(v, "min_t");
			json_array_append_new(vars, json_pack("{s:O, s:O, s:O, s:O}", "name",
							      json_object_get(v, "name") ?: json_null(), "verdict",
							      json_object_get(v, "verdict") ?: json_null(), "speedup",
							      sp ? sp : json_null(), "min_t", mt_ ? mt_ : json_null()));
		}
		json_t *time_ = json_object_get(doc, "time");
		json_t *tv = json_is_string(time_) ? json_incref(time_) : json_string(mt);
		json_t *line = json_pack("{s:s, s:I, s:o, s:O, s:s%, s:O, s:O, s:o}", "task", id, "seq",
					 (json_int_t)seqs[k], "time", tv, "pass_sha256",
					 json_object_get(doc, "pass_sha256") ?: json_null(), "pass", src, slen,
					 "verdict", json_object_get(doc, "verdict"), "score",
					 json_object_get(doc, "score") ?: json_null(), "variants", vars);
		json_t *ru = json_object_get(doc, "reused_from");
		if (line && ru)
			json_object_set(line, "reused_from", ru);
		json_t *ro = json_object_get(doc, "rerun_of");
		if (line && json_is_true(json_object_get(doc, "rerun")))
			json_object_set_new(line, "rerun_of", ro ? json_incref(ro) : json_null());
		free(src);
		json_decref(doc);
		if (line == NULL)
			continue;   /* e.g. a pass that is not UTF-8: JSON strings cannot carry it */
		char *text = json_dumps(line, JSON_COMPACT | JSON_REAL_PRECISION(10));
		json_decref(line);
		if (text == NULL)
			continue;
		fprintf(out, "%s\n", text);
		free(text);
		lines++;
	}
out:
	free(seqs);
	free(hist);
	free(dir);
	return lines;
}

int svc_history_export(const char *state_dir, const char *task_id, FILE *out, char *err, size_t errlen)
{
	if (task_id) {
		char *d = path_join(state_dir, task_id);
		struct stat st;
		int ok = d && stat(d, &st) == 0 && S_ISDIR(st.st_mode);
		free(d);
		if (!ok) {
			snprintf(err, errlen, "%s: no state for task '%s'", state_dir, task_id);
			return -1;
		}
		int n = export_task(state_dir, task_id, out, err, errlen);
		if (n >= 0 && ferror(out)) {
			snprintf(err, errlen, "write error: %s", strerror(errno));
			return -1;
		}
		return n;
	}
	char **ids = NULL;
	int n = 0, total = 0;
	/* the task directories only: a mount's state directory also holds its log */
	int rc = state_task_ids(state_dir, &ids, &n);
	if (rc != 0) {
		snprintf(err, errlen, "%s: %s", state_dir, strerror(-rc));
		return -1;
	}
	for (int i = 0; i < n && total >= 0; i++) {
		int k = export_task(state_dir, ids[i], out, err, errlen);
		total = k < 0 ? -1 : total + k;
	}
	for (int i = 0; i < n; i++)
		free(ids[i]);
	free(ids);
	if (total >= 0 && ferror(out)) {
		snprintf(err, errlen, "write error: %s", strerror(errno));
		return -1;
	}
	return total;
}
