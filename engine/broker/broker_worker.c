/* broker_worker.c - `passfs worker` and `passfs broker status` (broker.h;
 * docs/broker.md).
 *
 * A worker runs one thread per slot, each a consumer of the group "workers"
 * on the streams it can serve - its backend's (passfs:jobs:cpu or
 * passfs:jobs:cuda), then passfs:jobs:auto, then version 2's passfs:jobs
 * only to refuse what an old front end queues there - with a connection of
 * its own (a hiredis context is not thread-safe).  With --gpus a slot is
 * pinned to one GPU: its evaluation processes get PASSFS_CUDA_DEVICE.  A
 * slot takes a job (XAUTOCLAIM of a job idle past the lease first - its
 * worker died - else XREADGROUP), checks it, evaluates it
 * with a local evaluator of its own (evaluator.h: an evaluation process per
 * job) and answers on the job's reply stream: 'P' entries for the phases,
 * one 'R' entry for the result.  The main thread beats: the heartbeat hash,
 * and an XCLAIM of every job in flight so that a live worker's job never
 * looks idle, however long it runs; a dead worker's job is idle after the
 * lease and another worker takes it.  The result is published once per job
 * whatever the deliveries (SET passfs:done:<id> NX first). */
#define _GNU_SOURCE
#include "broker_int.h"

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "clock.h"
#include "gpu.h"
#include "sha256.h"

#ifdef PASSFS_HIREDIS

static int wk_stop;     /* signals seen: 1 drains, 2 cancels what runs */

static void on_stop(int sig)
{
	(void)sig;
	__atomic_add_fetch(&wk_stop, 1, __ATOMIC_RELAXED);
}

static int stopping(void)
{
	return __atomic_load_n(&wk_stop, __ATOMIC_RELAXED) > 0;
}

struct wk;

#define WK_NSTREAMS 3          /* its backend's, auto, version 2's */

struct slot {
	struct wk *w;
	int idx;
	int gpu;                /* the CUDA ordinal it is pinned to, or -1 */
	char consumer[160];
	pthread_t th;
	pthread_mutex_t mu;     /* guards the members below */
	char entry[64];         /* the job in flight: its stream entry id ("" when idle) */
	char stream[48];        /* and its stream */
	char job[72];           /* and its job id */
	char last_device[64];   /* the device of its last result */
	struct evaluator *ev;
	int cancel_sent;        /* 1: its front end gave up; 2: this worker was told to stop now */
};

struct wk {
	struct broker_url u;
	const struct broker_worker_opts *o;
	char name[128];
	char backend[EVAL_BACKEND_MAX];         /* cpu or cuda (auto resolved at start) */
	char streams[WK_NSTREAMS][48];          /* read in this order */
	int nslots;
	struct slot *slots;
	long lease_ms;
	pthread_mutex_t mu;
	long done;
	char last_device[32];
	/* the broker key answers are signed with (PASSFS_BROKER_KEY) */
	int have_key;
	unsigned char key[256];
	size_t klen;
};

static void logf_(const struct wk *w, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void logf_(const struct wk *w, const char *fmt, ...)
{
	if (w->o->quiet)
		return;
	char line[1200];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(line, sizeof line, fmt, ap);
	va_end(ap);
	fprintf(stderr, "passfs worker %s: %s\n", w->name, line);
}

static void ensure_groups(const struct wk *w, redisContext *c)
{
	for (int i = 0; i < WK_NSTREAMS; i++) {
		redisReply *r = redisCommand(c, "XGROUP CREATE %s %s 0 MKSTREAM", w->streams[i], BK_GROUP);
		if (r)
			freeReplyObject(r);     /* BUSYGROUP: it exists */
	}
}

/* A slot's evaluator: its evaluation processes pinned to its GPU, if any. */
static struct evaluator *slot_evaluator(const struct slot *s)
{
	if (s->gpu < 0)
		return evaluator_local(0);
	char pin[48];
	snprintf(pin, sizeof pin, "PASSFS_CUDA_DEVICE=%d", s->gpu);
	return evaluator_local_env(0, pin);
}

static int valid_id(const char *s, size_t n)
{
	if (n == 0 || n > 64)
		return 0;
	for (size_t i = 0; i < n; i++)
		if (!((s[i] >= '0' && s[i] <= '9') || (s[i] >= 'a' && s[i] <= 'z') || (s[i] >= 'A' && s[i] <= 'Z') ||
		      s[i] == '-' || s[i] == '_'))
			return 0;
	return 1;
}

/* Connects, retrying with backoff until it works or the worker stops. */
static redisContext *connect_retry(struct wk *w)
{
	double backoff = 100;
	int said = 0;
	while (!stopping()) {
		char err[512];
		redisContext *c = bk_connect(&w->u, err, sizeof err);
		if (c) {
			if (said)
				logf_(w, "the broker is back");
			ensure_groups(w, c);
			return c;
		}
		if (!said++)
			logf_(w, "%s; retrying", err);
		base_sleep_ms(backoff);
		backoff = backoff * 2 > 2000 ? 2000 : backoff * 2;
	}
	return NULL;
}

struct prog {
	redisContext *c;
	const char *rkey;
};

static void on_phase(void *ctx, const char *phase)
{
	struct prog *p = ctx;
	if (p->c == NULL || p->c->err)
		return;
	redisReply *r = redisCommand(p->c, "XADD %s * t P phase %s", p->rkey, phase);
	if (r)
		freeReplyObject(r);
}

/* Publishes the answer once per job, retrying through a broker outage.
 * Returns 0, or -1 when the worker stops first. */
static int publish(struct slot *s, redisContext **cp, const char *job, const char *rkey, int rc, const char *msg,
		   const char *json)
{
	struct wk *w = s->w;
	for (;;) {
		redisContext *c = *cp;
		if (c == NULL || c->err) {
			if (c)
				redisFree(c);
			*cp = c = connect_retry(w);
			if (c == NULL)
				return -1;
		}
		redisReply *r = redisCommand(c, "SET " BK_DONE "%s %s NX EX %d", job, s->consumer, BK_TTL_S);
		if (r == NULL)
			continue;
		if (r->type == REDIS_REPLY_ERROR) {
			/* out of memory, a changed ACL: say so, try again */
			logf_(w, "job %s: the broker refused the answer: %s; retrying", job, r->str);
			freeReplyObject(r);
			for (int i = 0; i < 20 && !stopping(); i++)
				base_sleep_ms(100);
			if (stopping())
				return -1;
			continue;
		}
		int first = r->type == REDIS_REPLY_STATUS;
		freeReplyObject(r);
		if (!first) {
			logf_(w, "job %s was answered already (by another worker); dropping this answer", job);
			return 0;
		}
		/* sig: the answer's signature under the broker key, empty
		 * without one (docs/broker.md, "Signed answers") */
		char sig[65] = "";
		if (w->have_key && bk_answer_sign(w->key, w->klen, job, rc, w->name, json ? json : "", sig) != 0)
			sig[0] = 0;
		r = redisCommand(c, "XADD %s * t R rc %d msg %s json %s worker %s sig %s", rkey, rc, msg ? msg : "",
				 json ? json : "", w->name, sig);
		if (r == NULL) {
			/* the marker may stand without the answer: undo it on
			 * the next connection so that a retry publishes */
			redisContext *c2 = connect_retry(w);
			if (c2 == NULL)
				return -1;
			redisReply *d = redisCommand(c2, "DEL " BK_DONE "%s", job);
			if (d)
				freeReplyObject(d);
			redisFree(*cp);
			*cp = c2;
			continue;
		}
		freeReplyObject(r);
		r = redisCommand(c, "EXPIRE %s %d", rkey, BK_TTL_S);
		if (r)
			freeReplyObject(r);
		return 0;
	}
}

static void ack(redisContext *c, const char *stream, const char *entry)
{
	if (c == NULL || c->err)
		return;
	redisReply *r = redisCommand(c, "XACK %s %s %s", stream, BK_GROUP, entry);
	if (r)
		freeReplyObject(r);
	if (c->err)
		return;
	r = redisCommand(c, "XDEL %s %s", stream, entry);
	if (r)
		freeReplyObject(r);
}

/* Checks the job, gets its graph; 0 with job and graph set, -1 with why,
 * or -2 when the connection broke (nothing to answer yet). */
static int prepare(struct slot *s, redisContext *c, const char *stream, const redisReply *fields,
		   struct eval_job *job, char **labels, redisReply **graph, char *why, size_t whylen)
{
	struct wk *w = s->w;
	const redisReply *v = bk_field(fields, "v"), *g = bk_field(fields, "graph"), *j = bk_field(fields, "job");
	if (strcmp(stream, BK_JOBS_OLD) == 0) {
		snprintf(why, whylen, "the job was queued on %s, the one stream of broker version 2 and before (this "
			 "job's version: %.16s); this worker speaks version %d and takes jobs from passfs:jobs:<backend>: "
			 "upgrade the front end", BK_JOBS_OLD, v ? v->str : "none", BROKER_JOB_VERSION);
		return -1;
	}
	if (v == NULL || g == NULL || j == NULL) {
		snprintf(why, whylen, "the job is malformed: a field (v, graph or job) is missing");
		return -1;
	}
	if (atoi(v->str) != BROKER_JOB_VERSION) {
		snprintf(why, whylen, "the job is of version %.16s; this worker speaks version %d", v->str,
			 BROKER_JOB_VERSION);
		return -1;
	}
	if (j->len > BROKER_JOB_MAX) {
		snprintf(why, whylen, "the job is oversized: %zu bytes, over the limit of %zu", j->len,
			 (size_t)BROKER_JOB_MAX);
		return -1;
	}
	char derr[256];
	if (broker_job_decode((const unsigned char *)j->str, j->len, job, labels, derr, sizeof derr) != 0) {
		snprintf(why, whylen, "the job is malformed: %s", derr);
		return -1;
	}
	int hex = g->len == 64;
	for (size_t i = 0; hex && i < 64; i++)
		hex = (g->str[i] >= '0' && g->str[i] <= '9') || (g->str[i] >= 'a' && g->str[i] <= 'f');
	if (!hex) {
		snprintf(why, whylen, "the job is malformed: its graph is not named by a sha256");
		return -1;
	}
	redisReply *r = redisCommand(c, "GET " BK_GRAPH "%s", g->str);
	if (r == NULL) {
		free(*labels);
		*labels = NULL;
		return -2;
	}
	if (r->type != REDIS_REPLY_STRING) {
		snprintf(why, whylen, "the job's graph %.16s... is not on the broker (expired, or the broker lost it)",
			 g->str);
		if (r)
			freeReplyObject(r);
		return -1;
	}
	char sha[65];
	if (r->len > PF_CAP_GRAPH_JSON) {
		snprintf(why, whylen, "the job's graph is oversized (%zu bytes)", r->len);
		freeReplyObject(r);
		return -1;
	}
	sha256_hex(r->str, r->len, sha);
	if (strcmp(sha, g->str) != 0) {
		snprintf(why, whylen, "the job's graph does not match its sha256 %.16s... (refused; the stored "
			 "copy is deleted, the next job stores it again)", g->str);
		freeReplyObject(r);
		/* else every job of the task would fail for as long as jobs
		 * keep refreshing its expiry */
		r = redisCommand(c, "DEL " BK_GRAPH "%s", g->str);
		if (r)
			freeReplyObject(r);
		return -1;
	}
	if (strcmp(w->backend, "auto") != 0) {
		if (strcmp(job->opts.backend, "auto") == 0)
			snprintf(job->opts.backend, sizeof job->opts.backend, "%s", w->backend);
		else if (strcmp(job->opts.backend, w->backend) != 0) {
			snprintf(why, whylen, "the job asks for backend %s; worker %s evaluates on %s", job->opts.backend,
				 w->name, w->backend);
			freeReplyObject(r);
			return -1;
		}
	}
	job->graph_text = r->str;
	job->graph_len = r->len;
	job->opts.quiet = 1;
	*graph = r;
	return 0;
}

/* How many times the group has handed out the entry (XPENDING), or 0. */
static long long deliveries(redisContext *c, const char *stream, const char *eid)
{
	redisReply *r = redisCommand(c, "XPENDING %s %s %s %s 1", stream, BK_GROUP, eid, eid);
	long long n = 0;
	if (r && r->type == REDIS_REPLY_ARRAY && r->elements == 1 && r->element[0]->type == REDIS_REPLY_ARRAY &&
	    r->element[0]->elements >= 4 && r->element[0]->element[3]->type == REDIS_REPLY_INTEGER)
		n = r->element[0]->element[3]->integer;
	if (r)
		freeReplyObject(r);
	return n;
}

/* One job: checked, evaluated, answered, acknowledged.  reclaimed: taken
 * over from a worker that stopped beating. */
static void handle(struct slot *s, redisContext **cp, const char *stream, const redisReply *entry, int reclaimed)
{
	struct wk *w = s->w;
	if (entry->type != REDIS_REPLY_ARRAY || entry->elements != 2 || entry->element[0]->type != REDIS_REPLY_STRING)
		return;
	const char *eid = entry->element[0]->str;
	const redisReply *fields = entry->element[1];
	const redisReply *id = bk_field(fields, "id"), *reply = bk_field(fields, "reply");
	char rkey[96], job[72];
	if (id == NULL || !valid_id(id->str, id->len) || reply == NULL ||
	    (snprintf(rkey, sizeof rkey, BK_REPLY "%s", id->str), strcmp(rkey, reply->str) != 0)) {
		/* nowhere to answer: drop it, loudly */
		logf_(w, "dropped stream entry %s: no valid job id and reply key", eid);
		ack(*cp, stream, eid);
		return;
	}
	snprintf(job, sizeof job, "%s", id->str);
	redisReply *cx = redisCommand(*cp, "EXISTS " BK_DONE "%s", job);
	if (cx == NULL)
		return;         /* the connection broke: the job stays pending, taken again */
	int answered = cx->type == REDIS_REPLY_INTEGER && cx->integer == 1;
	freeReplyObject(cx);
	if (answered) {
		/* a second copy of a job answered already (queued again by
		 * its front end after an outage, or reclaimed late) */
		logf_(w, "job %s: answered already; dropped", job);
		ack(*cp, stream, eid);
		return;
	}
	cx = redisCommand(*cp, "EXISTS " BK_CANCEL "%s", job);
	if (cx == NULL)
		return;
	int gone = cx->type == REDIS_REPLY_INTEGER && cx->integer == 1;
	freeReplyObject(cx);
	if (gone) {
		logf_(w, "job %s: cancelled by its front end before it started", job);
		publish(s, cp, job, rkey, -1, "cancelled", NULL);
		ack(*cp, stream, eid);
		return;
	}
	struct eval_job ej;
	char *labels = NULL, why[700] = "";
	redisReply *graph = NULL;
	double t0 = base_now_ms();
	long long dl = reclaimed ? deliveries(*cp, stream, eid) : 0;
	int prc = -1;
	if (dl > BK_MAX_DELIVERIES)
		/* every worker that took it stopped beating: a job that kills
		 * its workers goes round no more */
		snprintf(why, sizeof why, "it was handed out %lld times and every worker that took it stopped "
			 "(the most is %d)", dl, BK_MAX_DELIVERIES);
	else
		prc = prepare(s, *cp, stream, fields, &ej, &labels, &graph, why, sizeof why);
	if (prc == -2)
		return;
	if (prc != 0) {
		char msg[900];
		snprintf(msg, sizeof msg, "worker %s refused the job: %s", w->name, why);
		logf_(w, "job %s: %s", job, msg);
		publish(s, cp, job, rkey, -1, msg, NULL);
		ack(*cp, stream, eid);
		free(labels);
		return;
	}
	pthread_mutex_lock(&s->mu);
	snprintf(s->entry, sizeof s->entry, "%s", eid);
	snprintf(s->stream, sizeof s->stream, "%s", stream);
	snprintf(s->job, sizeof s->job, "%s", job);
	pthread_mutex_unlock(&s->mu);
	if (s->gpu >= 0)
		logf_(w, "job %s: evaluating (%s, GPU %d)", job, ej.opts.backend, s->gpu);
	else
		logf_(w, "job %s: evaluating (%s)", job, ej.opts.backend);
	struct prog pg = {*cp, rkey};
	json_t *doc = NULL;
	char msg[1024] = "";
	int rc = s->ev->ops->run(s->ev, &ej, on_phase, &pg, &doc, msg, sizeof msg);
	freeReplyObject(graph);
	free(labels);
	pthread_mutex_lock(&s->mu);
	s->entry[0] = 0;
	s->job[0] = 0;
	int stopped = s->cancel_sent == 2;
	if (s->cancel_sent) {
		/* a local evaluator's cancel is for good: a fresh one */
		struct evaluator *nev = slot_evaluator(s);
		if (nev) {
			s->ev->ops->destroy(s->ev);
			s->ev = nev;
			s->cancel_sent = 0;
		}
	}
	pthread_mutex_unlock(&s->mu);
	if (stopped) {
		/* the worker was stopped, not the job: hand it back, idle past
		 * the lease, for another worker to take at once */
		json_decref(doc);
		redisReply *r = redisCommand(*cp, "XCLAIM %s %s %s 0 %s IDLE %ld JUSTID", stream, BK_GROUP, s->consumer,
					     eid, w->lease_ms + 1000);
		if (r)
			freeReplyObject(r);
		logf_(w, "job %s: stopped; handed back for another worker", job);
		return;
	}
	char *text = NULL;
	const char *verdict = "-";
	if (rc == 0 && doc) {
		json_object_set_new(doc, "worker", json_string(w->name));
		if (s->gpu >= 0)
			json_object_set_new(doc, "gpu", json_integer(s->gpu));
		verdict = json_string_value(json_object_get(doc, "verdict"));
		const char *dev = json_string_value(json_object_get(doc, "device"));
		pthread_mutex_lock(&w->mu);
		if (dev)
			snprintf(w->last_device, sizeof w->last_device, "%s", dev);
		pthread_mutex_unlock(&w->mu);
		pthread_mutex_lock(&s->mu);
		if (dev)
			snprintf(s->last_device, sizeof s->last_device, "%s", dev);
		pthread_mutex_unlock(&s->mu);
		text = json_dumps(doc, JSON_COMPACT | JSON_REAL_PRECISION(17));
		if (text == NULL) {
			rc = -1;
			snprintf(msg, sizeof msg, "worker %s: out of memory", w->name);
		}
	}
	logf_(w, "job %s: %s in %.1f s", job, rc == 0 ? (verdict ? verdict : "?") : msg, (base_now_ms() - t0) / 1000);
	if (publish(s, cp, job, rkey, rc, rc == 0 ? "" : msg, text) == 0)
		ack(*cp, stream, eid);
	pthread_mutex_lock(&w->mu);
	w->done++;
	pthread_mutex_unlock(&w->mu);
	free(text);
	json_decref(doc);
}

/* An entry this slot will not evaluate goes back to the group, idle past
 * the lease, so that the next XAUTOCLAIM (of any slot) takes it at once. */
static void hand_back(struct slot *s, redisContext *c, const char *stream, const char *eid)
{
	redisReply *r = redisCommand(c, "XCLAIM %s %s %s 0 %s IDLE %ld JUSTID", stream, BK_GROUP, s->consumer, eid,
				     s->w->lease_ms + 1000);
	if (r)
		freeReplyObject(r);
}

/* The entry of an XREADGROUP or XAUTOCLAIM reply's stream, or NULL. */
static const redisReply *first_entry(const redisReply *entries)
{
	if (entries == NULL || entries->type != REDIS_REPLY_ARRAY || entries->elements == 0)
		return NULL;
	const redisReply *e = entries->element[0];
	return e->type == REDIS_REPLY_ARRAY && e->elements == 2 && e->element[0]->type == REDIS_REPLY_STRING ? e : NULL;
}

/* A job whose worker stopped beating, on any of the streams: the reply
 * holding it (*entry, *si: the stream's index), else NULL. */
static redisReply *take_idle(struct slot *s, redisContext *c, const redisReply **entry, int *si)
{
	struct wk *w = s->w;
	for (int i = 0; i < WK_NSTREAMS; i++) {
		redisReply *x = redisCommand(c, "XAUTOCLAIM %s %s %s %ld 0-0 COUNT 1", w->streams[i], BK_GROUP,
					     s->consumer, w->lease_ms);
		if (x == NULL)
			return NULL;
		if (x->type == REDIS_REPLY_ERROR && strncmp(x->str, "NOGROUP", 7) == 0)
			ensure_groups(w, c);
		if (x->type == REDIS_REPLY_ARRAY && x->elements >= 2 && (*entry = first_entry(x->element[1])) != NULL) {
			*si = i;
			return x;
		}
		freeReplyObject(x);
	}
	return NULL;
}

/* A new job: each stream in turn without waiting (its backend's first, so
 * that an auto job never delays one only this backend can take), then all
 * of them, waiting up to BK_BLOCK_MS.  Should the wait deliver on several
 * streams at once, the slot keeps one and hands the others back (idle past
 * the lease: the next XAUTOCLAIM of any slot takes them).  The reply
 * holding the job (*entry, *si), else NULL. */
static redisReply *take_new(struct slot *s, redisContext *c, const redisReply **entry, int *si)
{
	struct wk *w = s->w;
	for (int i = 0; i < WK_NSTREAMS; i++) {
		redisReply *x = redisCommand(c, "XREADGROUP GROUP %s %s COUNT 1 STREAMS %s >", BK_GROUP, s->consumer,
					     w->streams[i]);
		if (x == NULL)
			return NULL;
		if (x->type == REDIS_REPLY_ERROR && strncmp(x->str, "NOGROUP", 7) == 0)
			ensure_groups(w, c);
		if (x->type == REDIS_REPLY_ARRAY && x->elements == 1 && x->element[0]->elements == 2 &&
		    (*entry = first_entry(x->element[0]->element[1])) != NULL) {
			*si = i;
			return x;
		}
		freeReplyObject(x);
	}
	const char *argv[9 + 2 * WK_NSTREAMS];
	char block[16];
	int n = 0;
	snprintf(block, sizeof block, "%d", BK_BLOCK_MS);
	const char *head[] = {"XREADGROUP", "GROUP", BK_GROUP, s->consumer, "COUNT", "1", "BLOCK", block, "STREAMS"};
	for (size_t i = 0; i < sizeof head / sizeof *head; i++)
		argv[n++] = head[i];
	for (int i = 0; i < WK_NSTREAMS; i++)
		argv[n++] = w->streams[i];
	for (int i = 0; i < WK_NSTREAMS; i++)
		argv[n++] = ">";
	redisReply *x = redisCommandArgv(c, n, argv, NULL);
	if (x == NULL)
		return NULL;
	if (x->type == REDIS_REPLY_ERROR && strncmp(x->str, "NOGROUP", 7) == 0)
		ensure_groups(w, c);
	int best = WK_NSTREAMS;
	if (x->type == REDIS_REPLY_ARRAY)
		for (size_t k = 0; k < x->elements; k++) {
			const redisReply *st = x->element[k];
			const redisReply *e = st->type == REDIS_REPLY_ARRAY && st->elements == 2 ? first_entry(st->element[1])
												    : NULL;
			if (e == NULL || st->element[0]->type != REDIS_REPLY_STRING)
				continue;
			int i = 0;
			while (i < WK_NSTREAMS && strcmp(w->streams[i], st->element[0]->str) != 0)
				i++;
			if (i < best) {
				if (best < WK_NSTREAMS)
					hand_back(s, c, w->streams[best], (*entry)->element[0]->str);
				best = i;
				*entry = e;
			} else {
				hand_back(s, c, st->element[0]->str, e->element[0]->str);
			}
		}
	if (best == WK_NSTREAMS) {
		freeReplyObject(x);
		*entry = NULL;
		return NULL;
	}
	*si = best;
	return x;
}

static void *slot_main(void *arg)
{
	struct slot *s = arg;
	struct wk *w = s->w;
	redisContext *c = NULL;
	double next_claim = 0;
	while (!stopping()) {
		if (c == NULL || c->err) {
			if (c)
				redisFree(c);
			if ((c = connect_retry(w)) == NULL)
				break;
		}
		redisReply *x = NULL;
		const redisReply *entry = NULL;
		int si = 0, reclaimed = 0;
		if (base_now_ms() >= next_claim) {
			/* a job whose worker stopped beating: ours now */
			next_claim = base_now_ms() + 1000;
			if ((x = take_idle(s, c, &entry, &si)) != NULL) {
				reclaimed = 1;
				logf_(w, "reclaimed stream entry %s of %s (its worker stopped beating)",
				      entry->element[0]->str, w->streams[si]);
			} else if (c->err) {
				continue;
			}
		}
		if (x == NULL)
			x = take_new(s, c, &entry, &si);
		if (x && entry)
			handle(s, &c, w->streams[si], entry, reclaimed);
		if (x)
			freeReplyObject(x);
	}
	if (c)
		redisFree(c);
	return NULL;
}

static void beat(struct wk *w, redisContext *c, int final)
{
	char key[200];
	snprintf(key, sizeof key, BK_WORKER "%s", w->name);
	redisReply *r;
	if (final) {
		r = redisCommand(c, "DEL %s", key);
		if (r)
			freeReplyObject(r);
		return;
	}
	int busy = 0;
	for (int i = 0; i < w->nslots; i++) {
		struct slot *s = &w->slots[i];
		char entry[64], stream[48], job[72], last[64], field[32], what[400];
		pthread_mutex_lock(&s->mu);
		snprintf(entry, sizeof entry, "%s", s->entry);
		snprintf(stream, sizeof stream, "%s", s->stream);
		snprintf(job, sizeof job, "%s", s->job);
		snprintf(last, sizeof last, "%s", s->last_device);
		pthread_mutex_unlock(&s->mu);
		/* each consumer's device and job, for broker status */
		char dev[32];
		if (s->gpu >= 0)
			snprintf(dev, sizeof dev, "cuda:%d", s->gpu);
		else
			snprintf(dev, sizeof dev, "%s", w->backend);
		snprintf(field, sizeof field, "slot.%d", s->idx);
		snprintf(what, sizeof what, "%s %s %s %s", s->consumer, dev, entry[0] ? job : "-", last[0] ? last : "-");
		r = redisCommand(c, "HSET %s %s %s", key, field, what);
		if (r)
			freeReplyObject(r);
		if (!entry[0])
			continue;
		busy++;
		/* still ours, still alive: the job's idle time starts again.
		 * Only while ours: a worker that was stalled past the lease
		 * (SIGSTOP, a frozen VM) does not take its job back from the
		 * one that took it over; both finish, one answer counts. */
		r = redisCommand(c, "XPENDING %s %s %s %s 1", stream, BK_GROUP, entry, entry);
		int ours = r && r->type == REDIS_REPLY_ARRAY && r->elements == 1 &&
			   r->element[0]->type == REDIS_REPLY_ARRAY && r->element[0]->elements >= 2 &&
			   r->element[0]->element[1]->type == REDIS_REPLY_STRING &&
			   strcmp(r->element[0]->element[1]->str, s->consumer) == 0;
		if (r)
			freeReplyObject(r);
		if (ours) {
			r = redisCommand(c, "XCLAIM %s %s %s 0 %s JUSTID", stream, BK_GROUP, s->consumer, entry);
			if (r)
				freeReplyObject(r);
		}
		r = redisCommand(c, "EXISTS " BK_CANCEL "%s", job);
		int cancel = r && r->type == REDIS_REPLY_INTEGER && r->integer == 1 ? 1
			     : __atomic_load_n(&wk_stop, __ATOMIC_RELAXED) > 1 ? 2 : 0;
		if (r)
			freeReplyObject(r);
		pthread_mutex_lock(&s->mu);
		if (cancel && !s->cancel_sent && strcmp(s->job, job) == 0) {
			s->ev->ops->cancel(s->ev);
			s->cancel_sent = cancel;
			logf_(w, "job %s: %s", job, cancel == 1 ? "cancelled by its front end" : "cancelled: stopping now");
		}
		pthread_mutex_unlock(&s->mu);
	}
	char last[32], device[64];
	long done;
	pthread_mutex_lock(&w->mu);
	snprintf(last, sizeof last, "%s", w->last_device);
	done = w->done;
	pthread_mutex_unlock(&w->mu);
	snprintf(device, sizeof device, "%s", last[0] ? last : w->backend);
	char host[128] = "";
	gethostname(host, sizeof host - 1);
	r = redisCommand(c, "HSET %s device %s backend %s slots %d busy %d done %ld beat %lld host %s pid %d", key,
			 device, w->backend, w->nslots, busy, done, (long long)time(NULL), host, (int)getpid());
	if (r)
		freeReplyObject(r);
	double ttl = (w->o->beat_s > 0 ? w->o->beat_s : 2) * 3;
	r = redisCommand(c, "EXPIRE %s %d", key, ttl < 10 ? 10 : (int)ttl);
	if (r)
		freeReplyObject(r);
}

/* The backend the worker serves (auto resolved: cuda when the probe finds
 * a GPU, else cpu) and, with --gpus, the GPUs of its slots, each checked to
 * be present.  0, or -1 with a message naming what is missing. */
static int resolve_devices(struct wk *w, const struct broker_worker_opts *o, int *gpus, int *ngpus, char *err,
			   size_t errlen)
{
	const char *b = o->backend && *o->backend ? o->backend : "auto";
	*ngpus = 0;
	if (strcmp(b, "cpu") == 0) {
		if (o->ngpus != 0) {
			snprintf(err, errlen, "--gpus needs the cuda backend, not --backend cpu");
			return -1;
		}
		snprintf(w->backend, sizeof w->backend, "cpu");
		return 0;
	}
	if (o->ngpus > BROKER_GPUS_MAX) {
		snprintf(err, errlen, "--gpus: at most %d GPUs", BROKER_GPUS_MAX);
		return -1;
	}
	/* the list names the GPUs; a PASSFS_CUDA_DEVICE of the worker's own
	 * would only make the probe look at another one */
	if (o->ngpus != 0)
		unsetenv("PASSFS_CUDA_DEVICE");
	char why[256] = "";
	int n = gpu_cuda_probe(why, sizeof why);
	if (n <= 0) {
		if (o->ngpus != 0 || strcmp(b, "cuda") == 0) {
			snprintf(err, errlen, "%s: no CUDA device on this machine (%s)", o->ngpus ? "--gpus" : "--backend cuda",
				 why[0] ? why : "the probe found none");
			return -1;
		}
		snprintf(w->backend, sizeof w->backend, "cpu");
		return 0;
	}
	snprintf(w->backend, sizeof w->backend, "cuda");
	if (o->ngpus < 0) {
		*ngpus = n < BROKER_GPUS_MAX ? n : BROKER_GPUS_MAX;
		for (int i = 0; i < *ngpus; i++)
			gpus[i] = i;
		return 0;
	}
	for (int i = 0; i < o->ngpus; i++) {
		if (o->gpus[i] < 0 || o->gpus[i] >= n) {
			snprintf(err, errlen, "--gpus: GPU %d is not present (this machine has %d CUDA device%s: 0..%d)",
				 o->gpus[i], n, n == 1 ? "" : "s", n - 1);
			return -1;
		}
		gpus[i] = o->gpus[i];
	}
	*ngpus = o->ngpus;
	return 0;
}

int broker_worker_run(const struct broker_worker_opts *o, char *err, size_t errlen)
{
	struct wk w;
	memset(&w, 0, sizeof w);
	w.o = o;
	if (broker_url_parse(o->url, &w.u, err, errlen) != 0)
		return -1;
	if (o->name) {
		if (!valid_id(o->name, strlen(o->name))) {
			snprintf(err, errlen, "--name: letters, digits, '-' and '_' only, at most 64");
			return -1;
		}
		snprintf(w.name, sizeof w.name, "%s", o->name);
	} else {
		char host[64] = "worker";
		gethostname(host, sizeof host - 1);
		for (char *p = host; *p; p++)
			if (!valid_id(p, 1))
				*p = '-';
		snprintf(w.name, sizeof w.name, "%s-%d", host, (int)getpid());
	}
	int gpus[BROKER_GPUS_MAX];
	int ngpus = 0;
	if (resolve_devices(&w, o, gpus, &ngpus, err, errlen) != 0)
		return -1;
	bk_stream_of(w.backend, w.streams[0], sizeof w.streams[0]);
	bk_stream_of("auto", w.streams[1], sizeof w.streams[1]);
	snprintf(w.streams[2], sizeof w.streams[2], "%s", BK_JOBS_OLD);
	w.nslots = ngpus > 0 ? ngpus : o->slots > 0 ? o->slots : 1;
	double lease = o->lease_s > 0 ? o->lease_s : 60;
	double beat_s = o->beat_s > 0 ? o->beat_s : 2;
	if (lease < beat_s * 2) {
		snprintf(err, errlen, "--lease (%g s) must be at least twice the heartbeat (%g s)", lease, beat_s);
		return -1;
	}
	w.lease_ms = (long)(lease * 1000);
	int kr = bk_answer_key(w.key, sizeof w.key, &w.klen, err, errlen);
	if (kr < 0)
		return -1;
	w.have_key = kr == 0;
	redisContext *c = bk_connect(&w.u, err, errlen);
	if (c == NULL)
		return -1;
	ensure_groups(&w, c);
	pthread_mutex_init(&w.mu, NULL);
	w.slots = calloc((size_t)w.nslots, sizeof *w.slots);
	if (w.slots == NULL) {
		redisFree(c);
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	struct sigaction sa, old_int, old_term;
	memset(&sa, 0, sizeof sa);
	sa.sa_handler = on_stop;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, &old_int);
	sigaction(SIGTERM, &sa, &old_term);
	signal(SIGPIPE, SIG_IGN);
	/* the slots never take the signals: the main thread does */
	sigset_t block, prev;
	sigemptyset(&block);
	sigaddset(&block, SIGINT);
	sigaddset(&block, SIGTERM);
	pthread_sigmask(SIG_BLOCK, &block, &prev);
	int started = 0;
	for (int i = 0; i < w.nslots; i++) {
		struct slot *s = &w.slots[i];
		s->w = &w;
		s->idx = i;
		s->gpu = ngpus > 0 ? gpus[i] : -1;
		snprintf(s->consumer, sizeof s->consumer, "%s.%d", w.name, i);
		pthread_mutex_init(&s->mu, NULL);
		s->ev = slot_evaluator(s);
		if (s->ev == NULL || pthread_create(&s->th, NULL, slot_main, s) != 0) {
			if (s->ev)
				s->ev->ops->destroy(s->ev);
			s->ev = NULL;
			break;
		}
		started++;
	}
	pthread_sigmask(SIG_SETMASK, &prev, NULL);
	char pinned[BROKER_GPUS_MAX * 6 + 16] = "";
	for (int i = 0; i < ngpus; i++)
		snprintf(pinned + strlen(pinned), sizeof pinned - strlen(pinned), "%s%d", i ? "," : ", GPUs ", gpus[i]);
	logf_(&w, "serving %s with %d slot%s on backend %s%s (lease %.0f s)", w.u.shown, started,
	      started == 1 ? "" : "s", w.backend, pinned, lease);
	int said = 0;
	while (!stopping() && started == w.nslots) {
		if (c == NULL || c->err) {
			if (c)
				redisFree(c);
			char e2[512];
			c = bk_connect(&w.u, e2, sizeof e2);
		}
		if (c)
			beat(&w, c, 0);
		for (double t = 0; t < beat_s * 1000 && !stopping(); t += 100)
			base_sleep_ms(100);
		if (stopping() && !said++)
			logf_(&w, "stopping: finishing the jobs in flight (a second signal cancels them)");
	}
	/* draining: keep beating (and claiming what runs) until the slots end */
	for (int i = 0; i < started; i++) {
		for (;;) {
			int busy;
			pthread_mutex_lock(&w.slots[i].mu);
			busy = w.slots[i].entry[0] != 0;
			pthread_mutex_unlock(&w.slots[i].mu);
			if (!busy)
				break;
			if (c && !c->err)
				beat(&w, c, 0);
			base_sleep_ms(200);
		}
		pthread_join(w.slots[i].th, NULL);
		w.slots[i].ev->ops->destroy(w.slots[i].ev);
	}
	if (c && !c->err)
		beat(&w, c, 1);
	if (c)
		redisFree(c);
	sigaction(SIGINT, &old_int, NULL);
	sigaction(SIGTERM, &old_term, NULL);
	int ok = started == w.nslots;
	if (!ok)
		snprintf(err, errlen, "could not start %d slots", w.nslots);
	logf_(&w, "stopped after %ld job%s", w.done, w.done == 1 ? "" : "s");
	free(w.slots);
	memset(&w.u, 0, sizeof w.u);
	return ok ? 0 : -1;
}

/* ---- broker status ------------------------------------------------------------------- */

static long long int_field(const redisReply *arr, const char *name, int *found)
{
	*found = 0;
	if (arr == NULL || arr->type != REDIS_REPLY_ARRAY)
		return 0;
	for (size_t i = 0; i + 1 < arr->elements; i += 2) {
		const redisReply *k = arr->element[i];
		if (k->type == REDIS_REPLY_STRING && strcmp(k->str, name) == 0) {
			const redisReply *v = arr->element[i + 1];
			if (v->type == REDIS_REPLY_INTEGER) {
				*found = 1;
				return v->integer;
			}
			if (v->type == REDIS_REPLY_STRING) {
				*found = 1;
				return atoll(v->str);
			}
			return 0;
		}
	}
	return 0;
}

/* A stream's queued and in-flight jobs (its group's lag and pending).
 * 0, or -1 when the stream does not exist. */
static int stream_counts(redisContext *c, const char *stream, long long *queued, long long *pending)
{
	long long xlen = 0, lag = -1;
	int found, exists = 0;
	*pending = 0;
	redisReply *r = redisCommand(c, "EXISTS %s", stream);
	if (r && r->type == REDIS_REPLY_INTEGER)
		exists = r->integer == 1;
	if (r)
		freeReplyObject(r);
	if (!exists) {
		*queued = 0;
		return -1;
	}
	r = redisCommand(c, "XLEN %s", stream);
	if (r && r->type == REDIS_REPLY_INTEGER)
		xlen = r->integer;
	if (r)
		freeReplyObject(r);
	r = redisCommand(c, "XINFO GROUPS %s", stream);
	if (r && r->type == REDIS_REPLY_ARRAY)
		for (size_t i = 0; i < r->elements; i++) {
			const redisReply *g = r->element[i];
			const redisReply *name = bk_field(g, "name");
			if (name == NULL || strcmp(name->str, BK_GROUP) != 0)
				continue;
			*pending = int_field(g, "pending", &found);
			long long l = int_field(g, "lag", &found);
			if (found)
				lag = l;
		}
	if (r)
		freeReplyObject(r);
	/* acknowledged jobs are deleted: the stream holds the queued and the
	 * in-flight ones (without a group yet, all of them are queued) */
	*queued = lag >= 0 ? lag : xlen - *pending;
	if (*queued < 0)
		*queued = 0;
	return 0;
}

int broker_status(const char *url, FILE *out, char *err, size_t errlen)
{
	struct broker_url u;
	if (broker_url_parse(url, &u, err, errlen) != 0)
		return -1;
	redisContext *c = bk_connect(&u, err, errlen);
	if (c == NULL)
		return -1;
	const char *backends[] = {"auto", "cpu", "cuda"};
	char streams[4][48];
	long long queued[4], pending[4], tq = 0, tp = 0;
	int shown[4], found;
	for (int i = 0; i < 3; i++)
		bk_stream_of(backends[i], streams[i], sizeof streams[i]);
	snprintf(streams[3], sizeof streams[3], "%s", BK_JOBS_OLD);
	for (int i = 0; i < 4; i++) {
		/* version 2's stream only while something waits there */
		shown[i] = stream_counts(c, streams[i], &queued[i], &pending[i]) == 0 || i < 3;
		if (i == 3 && queued[i] + pending[i] == 0)
			shown[i] = 0;
		tq += queued[i];
		tp += pending[i];
	}
	fprintf(out, "broker %s\nqueued %lld   in flight %lld\n\n%-20s %8s %10s\n", u.shown, tq, tp, "STREAM", "QUEUED",
		"IN FLIGHT");
	for (int i = 0; i < 4; i++)
		if (shown[i])
			fprintf(out, "%-20s %8lld %10lld%s\n", streams[i], queued[i], pending[i],
				i == 3 ? "   (broker version 2: workers refuse these)" : "");
	int head = 0;
	for (int i = 0; i < 4; i++) {
		if (pending[i] == 0)
			continue;
		redisReply *r = redisCommand(c, "XPENDING %s %s - + 50", streams[i], BK_GROUP);
		if (r && r->type == REDIS_REPLY_ARRAY)
			for (size_t k = 0; k < r->elements; k++) {
				const redisReply *p = r->element[k];
				if (p->type != REDIS_REPLY_ARRAY || p->elements < 4)
					continue;
				if (!head++)
					fprintf(out, "\n%-20s %-18s %-30s %10s %10s\n", "IN FLIGHT", "STREAM", "CONSUMER",
						"IDLE s", "DELIVERED");
				fprintf(out, "%-20s %-18s %-30s %10.1f %10lld\n", p->element[0]->str, streams[i],
					p->element[1]->str, (double)p->element[2]->integer / 1000, p->element[3]->integer);
			}
		if (r)
			freeReplyObject(r);
	}
	fprintf(out, "\n%-24s %-7s %5s %5s %7s %10s  %s\n", "WORKER", "BACKEND", "SLOTS", "BUSY", "DONE", "LAST BEAT",
		"DEVICE");
	/* each consumer's line, printed after the workers' */
	char *cons = NULL;
	size_t cons_len = 0;
	FILE *cf = open_memstream(&cons, &cons_len);
	char cursor[32] = "0";
	int nw = 0;
	redisReply *r;
	do {
		r = redisCommand(c, "SCAN %s MATCH " BK_WORKER "* COUNT 1000", cursor);
		if (r == NULL || r->type != REDIS_REPLY_ARRAY || r->elements != 2) {
			if (r)
				freeReplyObject(r);
			break;
		}
		snprintf(cursor, sizeof cursor, "%s", r->element[0]->str);
		for (size_t i = 0; i < r->element[1]->elements; i++) {
			const char *key = r->element[1]->element[i]->str;
			redisReply *h = redisCommand(c, "HGETALL %s", key);
			if (h && h->type == REDIS_REPLY_ARRAY) {
				const redisReply *dev = bk_field(h, "device"), *be = bk_field(h, "backend");
				long long beat = int_field(h, "beat", &found);
				long long slots = int_field(h, "slots", &found);
				fprintf(out, "%-24s %-7s %5lld %5lld %7lld %6llds ago  %s\n", key + strlen(BK_WORKER),
					be ? be->str : "?", slots, int_field(h, "busy", &found), int_field(h, "done", &found),
					(long long)time(NULL) - beat, dev ? dev->str : "?");
				for (long long k = 0; cf && k < slots && k < 1024; k++) {
					char field[32], consumer[160], device[32], job[72];
					int at = 0;
					snprintf(field, sizeof field, "slot.%lld", k);
					const redisReply *sl = bk_field(h, field);
					/* "consumer device job last-device": the last may hold spaces */
					if (sl == NULL || sscanf(sl->str, "%159s %31s %71s %n", consumer, device, job, &at) != 3 ||
					    at == 0)
						continue;
					fprintf(cf, "%-30s %-8s %-34s %s\n", consumer, device, strcmp(job, "-") ? job : "(idle)",
						sl->str + at);
				}
				nw++;
			}
			if (h)
				freeReplyObject(h);
		}
		freeReplyObject(r);
	} while (strcmp(cursor, "0") != 0);
	if (nw == 0)
		fprintf(out, "(none: no worker has beaten in the last heartbeats; start 'passfs worker --broker URL')\n");
	if (cf) {
		fclose(cf);
		if (cons_len)
			fprintf(out, "\n%-30s %-8s %-34s %s\n%s", "CONSUMER", "DEVICE", "JOB", "LAST RESULT'S DEVICE",
				cons);
		free(cons);
	}
	redisFree(c);
	return 0;
}

#endif
