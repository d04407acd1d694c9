/* checks.c - the quick checks of the service (checks.h, service.h).
 *
 * Per task: the latest check's document, the check queued (at most one,
 * the latest write wins) and whether one runs.  One thread runs the queued
 * checks in the order they came, through the service's evaluator with
 * check_only set; each change moves the task's generation, so the front
 * ends rewrite or invalidate check.json and wake its waiting readers. */
#define _GNU_SOURCE
#include "checks.h"

#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "clock.h"
#include "eval_util.h"
#include "graph.h"
#include "service.h"
#include "sha256.h"

struct cjob {
	char *src;
	size_t len;
	char sha[65];
	uint64_t seq;
	uint64_t ticket;
};

struct ctask {
	struct cjob *queued;
	int running;
	int marked;             /* svc_check_mark_pending since the last fire */
	uint64_t last_seq;      /* the largest check seq handed out */
	json_t *doc;            /* the latest check's document (state "done"), or NULL */
	uint64_t doc_seq;
};

struct checks {
	struct svc *s;
	int n;
	struct ctask *t;
	pthread_mutex_t mu;
	pthread_cond_t cv;
	int closing;
	uint64_t tickets;
	pthread_t th;
	int started;
};

static void cjob_free(struct cjob *j)
{
	if (j) {
		free(j->src);
		free(j);
	}
}

/* Under c->mu. */
static int busy_locked(const struct ctask *t)
{
	return t->queued != NULL || t->running || t->marked;
}

/* The copied keys of a variant of the result (docs/mount.md, check.json). */
static const char *const variant_keys[] = {"name", "dtype", "verdict", "min_t", "close_from_t", "max_abs_err",
					    "max_rel_err", "worst", "message", "log_tail",
					    "log_truncated"};

/* check.json's document from the evaluation's result (rc 0) or its error. */
static json_t *check_doc(const char *id, const struct cjob *j, int rc, json_t *res, const char *err, double ms)
{
	json_t *d = json_pack("{s:s, s:I, s:s, s:s}", "task", id, "check_seq", (json_int_t)j->seq, "check_sha256",
			      j->sha, "state", "done");
	if (d == NULL)
		return NULL;
	if (rc != 0 || res == NULL) {
		char m[700];
		snprintf(m, sizeof(m), "passfs could not check this pass: %s", err && err[0] ? err : "the check failed");
		json_object_set_new(d, "worst", json_null());
		json_object_set_new(d, "message", json_string(m));
		json_object_set_new(d, "error", json_string(err && err[0] ? err : "the check failed"));
		json_object_set_new(d, "variants", json_array());
		json_object_set_new(d, "compile_log", json_string(""));
	} else {
		const char *worst = json_string_value(json_object_get(res, "verdict"));
		json_t *vs = json_object_get(res, "variants"), *out = json_array();
		size_t k;
		json_t *v;
		json_array_foreach(vs, k, v) {
			json_t *o = json_object();
			for (size_t i = 0; i < sizeof(variant_keys) / sizeof(variant_keys[0]); i++) {
				json_t *x = json_object_get(v, variant_keys[i]);
				if (x)
					json_object_set(o, variant_keys[i], x);
			}
			json_array_append_new(out, o);
		}
		json_object_set_new(d, "worst", worst ? json_string(worst) : json_null());
		char m[300];
		if (worst && strcmp(worst, "ok") == 0) {
			snprintf(m, sizeof(m), "all %zu variants correct on the public and the secret inputs "
				 "(a check: nothing timed, no score)", json_array_size(vs));
			json_object_set_new(d, "message", json_string(m));
		} else {
			json_object_set(d, "message", json_object_get(res, "message"));
		}
		json_object_set_new(d, "variants", out);
		json_t *comp = json_object_get(res, "compile");
		const char *log = json_string_value(json_object_get(comp, "log_tail"));
		json_object_set_new(d, "compile_log", json_string(log ? log : ""));
		json_t *cv = json_object();
		const char *ckeys[] = {"verdict", "message", "line"};
		for (int i = 0; i < 3; i++) {
			json_t *x = json_object_get(comp, ckeys[i]);
			if (x)
				json_object_set(cv, ckeys[i], x);
		}
		json_object_set_new(d, "compile", cv);
		json_object_set(d, "backend", json_object_get(res, "backend"));
	}
	json_object_set_new(d, "elapsed_ms", json_real(ms));
	return d;
}

static void *check_main(void *arg)
{
	struct checks *c = arg;
	pthread_mutex_lock(&c->mu);
	for (;;) {
		int i = -1;
		while (!c->closing) {
			for (int k = 0; k < c->n; k++)
				if (c->t[k].queued && (i < 0 || c->t[k].queued->ticket < c->t[i].queued->ticket))
					i = k;
			if (i >= 0)
				break;
			pthread_cond_wait(&c->cv, &c->mu);
		}
		if (c->closing)
			break;
		struct ctask *t = &c->t[i];
		struct cjob *j = t->queued;
		t->queued = NULL;
		t->running = 1;
		pthread_mutex_unlock(&c->mu);
		svc_x_changed(c->s, i);

		struct eval_job ej = {.pass_label = "check.c", .pass_src = j->src, .pass_len = j->len,
				      .opts = svc_x_eval_opts(c->s)};
		svc_x_graph(c->s, i, &ej.graph_text, &ej.graph_len, &ej.graph_label);
		ej.opts.check_only = 1;
		ej.opts.quiet = 1;
		ej.opts.trial_times = 0;
		json_t *res = NULL;
		char err[512] = "";
		double t0 = base_now_ms();
		struct evaluator *ev = svc_x_evaluator(c->s);
		int rc = ev->ops->run(ev, &ej, NULL, NULL, &res, err, sizeof(err));
		json_t *doc = check_doc(svc_task(c->s, i)->id, j, rc, res, err, base_now_ms() - t0);
		json_decref(res);

		pthread_mutex_lock(&c->mu);
		t->running = 0;
		if (doc && !c->closing && j->seq > t->doc_seq) {
			json_decref(t->doc);
			t->doc = doc;
			t->doc_seq = j->seq;
			doc = NULL;
		}
		json_decref(doc);
		cjob_free(j);
		pthread_mutex_unlock(&c->mu);
		svc_x_changed(c->s, i);
		pthread_mutex_lock(&c->mu);
	}
	pthread_mutex_unlock(&c->mu);
	return NULL;
}

struct checks *checks_open(struct svc *s, int n, char *err, size_t errlen)
{
	struct checks *c = calloc(1, sizeof(*c));
	if (c == NULL || (c->t = calloc((size_t)(n > 0 ? n : 1), sizeof(*c->t))) == NULL) {
		free(c);
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	c->s = s;
	c->n = n;
	pthread_mutex_init(&c->mu, NULL);
	pthread_cond_init(&c->cv, NULL);
	if (pthread_create(&c->th, NULL, check_main, c) != 0) {
		snprintf(err, errlen, "cannot start the check thread");
		checks_close(c);
		return NULL;
	}
	c->started = 1;
	return c;
}

void checks_close(struct checks *c)
{
	if (c == NULL)
		return;
	pthread_mutex_lock(&c->mu);
	c->closing = 1;
	pthread_cond_broadcast(&c->cv);
	pthread_mutex_unlock(&c->mu);
	if (c->started)
		pthread_join(c->th, NULL);
	for (int i = 0; i < c->n; i++) {
		cjob_free(c->t[i].queued);
		json_decref(c->t[i].doc);
	}
	free(c->t);
	pthread_cond_destroy(&c->cv);
	pthread_mutex_destroy(&c->mu);
	free(c);
}

/* ---- service.h ------------------------------------------------------------------ */

void svc_check_mark_pending(struct svc *s, int task)
{
	struct checks *c = svc_x_checks(s);
	pthread_mutex_lock(&c->mu);
	int was = busy_locked(&c->t[task]);
	c->t[task].marked = 1;
	pthread_mutex_unlock(&c->mu);
	if (!was)
		svc_x_changed(s, task);
}

int svc_check_fire(struct svc *s, int task, const void *src, size_t len, uint64_t *seq)
{
	struct checks *c = svc_x_checks(s);
	if (len > SVC_PASS_MAX)
		return -EFBIG;
	struct cjob *j = calloc(1, sizeof(*j));
	if (j == NULL || (j->src = malloc(len ? len : 1)) == NULL) {
		free(j);
		return -ENOMEM;
	}
	memcpy(j->src, src, len);
	j->len = len;
	sha256_hex(j->src, len, j->sha);
	pthread_mutex_lock(&c->mu);
	if (c->closing) {
		pthread_mutex_unlock(&c->mu);
		cjob_free(j);
		return -ESHUTDOWN;
	}
	struct ctask *t = &c->t[task];
	j->seq = ++t->last_seq;
	j->ticket = ++c->tickets;
	cjob_free(t->queued);
	t->queued = j;
	t->marked = 0;
	if (seq)
		*seq = j->seq;
	pthread_cond_signal(&c->cv);
	pthread_mutex_unlock(&c->mu);
	svc_x_changed(s, task);
	return 0;
}

int svc_check_busy(struct svc *s, int task)
{
	struct checks *c = svc_x_checks(s);
	pthread_mutex_lock(&c->mu);
	int b = busy_locked(&c->t[task]);
	pthread_mutex_unlock(&c->mu);
	return b;
}

uint64_t svc_check_busy_seq(struct svc *s, int task)
{
	struct checks *c = svc_x_checks(s);
	pthread_mutex_lock(&c->mu);
	const struct ctask *t = &c->t[task];
	/* marked: the next fire's seq */
	uint64_t seq = !busy_locked(t) ? 0 : t->marked && !t->queued ? t->last_seq + 1 : t->last_seq;
	pthread_mutex_unlock(&c->mu);
	return seq;
}

char *svc_check_json(struct svc *s, int task, size_t *len)
{
	struct checks *c = svc_x_checks(s);
	const char *id = svc_task(s, task)->id;
	pthread_mutex_lock(&c->mu);
	const struct ctask *t = &c->t[task];
	const char *st = t->running ? "running" : busy_locked(t) ? "pending" : t->doc ? "done" : "idle";
	json_t *d;
	if (t->doc) {
		d = json_deep_copy(t->doc);
		if (d && strcmp(st, "done") != 0) {
			json_object_set_new(d, "state", json_string(st));
			json_object_set_new(d, "stale", json_true());
		}
	} else {
		d = json_pack("{s:s, s:s, s:s}", "task", id, "state", st, "message",
			      strcmp(st, "idle") == 0 ? "no check yet: write check.c (a pass, as pass.c) to check it on "
							"every variant's public and secret inputs, without timing"
						      : "the first check is under way");
	}
	pthread_mutex_unlock(&c->mu);
	char *text = d ? json_dumps(d, JSON_INDENT(2) | JSON_REAL_PRECISION(10)) : NULL;
	json_decref(d);
	if (text == NULL) {
		errno = ENOMEM;
		return NULL;
	}
	size_t n = strlen(text);
	char *out = realloc(text, n + 2);
	if (out == NULL) {
		free(text);
		errno = ENOMEM;
		return NULL;
	}
	out[n] = '\n';
	out[n + 1] = 0;
	*len = n + 1;
	return out;
}
