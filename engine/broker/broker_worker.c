/* broker_worker.c - `passfs worker` and `passfs broker status` (broker.h;
 * docs/broker.md).
 *
 * A worker runs one thread per slot, each a consumer of the group "workers"
 * on passfs:jobs with a connection of its own (a hiredis context is not
 * thread-safe).  A slot takes a job (XAUTOCLAIM of a job idle past the
 * lease first - its worker died - else XREADGROUP), checks it, evaluates it
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

struct slot {
	struct wk *w;
	int idx;
	char consumer[160];
	pthread_t th;
	pthread_mutex_t mu;     /* guards the members below */
	char entry[64];         /* the job in flight: its stream entry id ("" when idle) */
	char job[72];           /* and its job id */
	struct evaluator *ev;
	int cancel_sent;        /* 1: its front end gave up; 2: this worker was told to stop now */
};

struct wk {
	struct broker_url u;
	const struct broker_worker_opts *o;
	char name[128];
	char backend[EVAL_BACKEND_MAX];
	int nslots;
	struct slot *slots;
	long lease_ms;
	pthread_mutex_t mu;
	long done;
	char last_device[32];
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

static void ensure_group(redisContext *c)
{
	redisReply *r = redisCommand(c, "XGROUP CREATE %s %s 0 MKSTREAM", BK_JOBS, BK_GROUP);
	if (r)
		freeReplyObject(r);     /* BUSYGROUP: it exists */
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
			ensure_group(c);
			return c;
		}
		if (!said++)
			logf_(w, "%s; retrying", err);
		bk_sleep_ms(backoff);
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
				bk_sleep_ms(100);
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
		r = redisCommand(c, "XADD %s * t R rc %d msg %s json %s worker %s", rkey, rc, msg ? msg : "",
				 json ? json : "", w->name);
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

static void ack(redisContext *c, const char *entry)
{
	if (c == NULL || c->err)
		return;
	redisReply *r = redisCommand(c, "XACK %s %s %s", BK_JOBS, BK_GROUP, entry);
	if (r)
		freeReplyObject(r);
	if (c->err)
		return;
	r = redisCommand(c, "XDEL %s %s", BK_JOBS, entry);
	if (r)
		freeReplyObject(r);
}

/* Checks the job, gets its graph; 0 with job and graph set, -1 with why,
 * or -2 when the connection broke (nothing to answer yet). */
static int prepare(struct slot *s, redisContext *c, const redisReply *fields, struct eval_job *job, char **labels,
		   redisReply **graph, char *why, size_t whylen)
{
	struct wk *w = s->w;
	const redisReply *v = bk_field(fields, "v"), *g = bk_field(fields, "graph"), *j = bk_field(fields, "job");
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
static long long deliveries(redisContext *c, const char *eid)
{
	redisReply *r = redisCommand(c, "XPENDING %s %s %s %s 1", BK_JOBS, BK_GROUP, eid, eid);
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
static void handle(struct slot *s, redisContext **cp, const redisReply *entry, int reclaimed)
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
		ack(*cp, eid);
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
		ack(*cp, eid);
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
		ack(*cp, eid);
		return;
	}
	struct eval_job ej;
	char *labels = NULL, why[700] = "";
	redisReply *graph = NULL;
	double t0 = base_now_ms();
	long long dl = reclaimed ? deliveries(*cp, eid) : 0;
	int prc = -1;
	if (dl > BK_MAX_DELIVERIES)
		/* every worker that took it stopped beating: a job that kills
		 * its workers goes round no more */
		snprintf(why, sizeof why, "it was handed out %lld times and every worker that took it stopped "
			 "(the most is %d)", dl, BK_MAX_DELIVERIES);
	else
		prc = prepare(s, *cp, fields, &ej, &labels, &graph, why, sizeof why);
	if (prc == -2)
		return;
	if (prc != 0) {
		char msg[900];
		snprintf(msg, sizeof msg, "worker %s refused the job: %s", w->name, why);
		logf_(w, "job %s: %s", job, msg);
		publish(s, cp, job, rkey, -1, msg, NULL);
		ack(*cp, eid);
		free(labels);
		return;
	}
	pthread_mutex_lock(&s->mu);
	snprintf(s->entry, sizeof s->entry, "%s", eid);
	snprintf(s->job, sizeof s->job, "%s", job);
	pthread_mutex_unlock(&s->mu);
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
		struct evaluator *nev = evaluator_local(0);
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
		redisReply *r = redisCommand(*cp, "XCLAIM %s %s %s 0 %s IDLE %ld JUSTID", BK_JOBS, BK_GROUP, s->consumer,
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
		verdict = json_string_value(json_object_get(doc, "verdict"));
		const char *dev = json_string_value(json_object_get(doc, "device"));
		pthread_mutex_lock(&w->mu);
		if (dev)
			snprintf(w->last_device, sizeof w->last_device, "%s", dev);
		pthread_mutex_unlock(&w->mu);
		text = json_dumps(doc, JSON_COMPACT | JSON_REAL_PRECISION(17));
		if (text == NULL) {
			rc = -1;
			snprintf(msg, sizeof msg, "worker %s: out of memory", w->name);
		}
	}
	logf_(w, "job %s: %s in %.1f s", job, rc == 0 ? (verdict ? verdict : "?") : msg, (base_now_ms() - t0) / 1000);
	if (publish(s, cp, job, rkey, rc, rc == 0 ? "" : msg, text) == 0)
		ack(*cp, eid);
	pthread_mutex_lock(&w->mu);
	w->done++;
	pthread_mutex_unlock(&w->mu);
	free(text);
	json_decref(doc);
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
		int reclaimed = 0;
		if (base_now_ms() >= next_claim) {
			/* a job whose worker stopped beating: ours now */
			next_claim = base_now_ms() + 1000;
			x = redisCommand(c, "XAUTOCLAIM %s %s %s %ld 0-0 COUNT 1", BK_JOBS, BK_GROUP, s->consumer,
					 w->lease_ms);
			if (x == NULL)
				continue;
			if (x->type == REDIS_REPLY_ERROR && strncmp(x->str, "NOGROUP", 7) == 0)
				ensure_group(c);
			if (x->type == REDIS_REPLY_ARRAY && x->elements >= 2 && x->element[1]->type == REDIS_REPLY_ARRAY &&
			    x->element[1]->elements > 0 && x->element[1]->element[0]->type == REDIS_REPLY_ARRAY) {
				entry = x->element[1]->element[0];
				reclaimed = 1;
				logf_(w, "reclaimed stream entry %s (its worker stopped beating)",
				      entry->element[0]->str);
			} else {
				freeReplyObject(x);
				x = NULL;
			}
		}
		if (entry == NULL) {
			x = redisCommand(c, "XREADGROUP GROUP %s %s COUNT 1 BLOCK %d STREAMS %s >", BK_GROUP, s->consumer,
					 BK_BLOCK_MS, BK_JOBS);
			if (x == NULL)
				continue;
			if (x->type == REDIS_REPLY_ERROR && strncmp(x->str, "NOGROUP", 7) == 0)
				ensure_group(c);
			if (x->type == REDIS_REPLY_ARRAY && x->elements == 1 && x->element[0]->elements == 2 &&
			    x->element[0]->element[1]->elements > 0)
				entry = x->element[0]->element[1]->element[0];
		}
		if (entry)
			handle(s, &c, entry, reclaimed);
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
		char entry[64], job[72];
		pthread_mutex_lock(&s->mu);
		snprintf(entry, sizeof entry, "%s", s->entry);
		snprintf(job, sizeof job, "%s", s->job);
		pthread_mutex_unlock(&s->mu);
		if (!entry[0])
			continue;
		busy++;
		/* still ours, still alive: the job's idle time starts again.
		 * Only while ours: a worker that was stalled past the lease
		 * (SIGSTOP, a frozen VM) does not take its job back from the
		 * one that took it over; both finish, one answer counts. */
		r = redisCommand(c, "XPENDING %s %s %s %s 1", BK_JOBS, BK_GROUP, entry, entry);
		int ours = r && r->type == REDIS_REPLY_ARRAY && r->elements == 1 &&
			   r->element[0]->type == REDIS_REPLY_ARRAY && r->element[0]->elements >= 2 &&
			   r->element[0]->element[1]->type == REDIS_REPLY_STRING &&
			   strcmp(r->element[0]->element[1]->str, s->consumer) == 0;
		if (r)
			freeReplyObject(r);
		if (ours) {
			r = redisCommand(c, "XCLAIM %s %s %s 0 %s JUSTID", BK_JOBS, BK_GROUP, s->consumer, entry);
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
	snprintf(w.backend, sizeof w.backend, "%s", o->backend && *o->backend ? o->backend : "auto");
	w.nslots = o->slots > 0 ? o->slots : 1;
	double lease = o->lease_s > 0 ? o->lease_s : 60;
	double beat_s = o->beat_s > 0 ? o->beat_s : 2;
	if (lease < beat_s * 2) {
		snprintf(err, errlen, "--lease (%g s) must be at least twice the heartbeat (%g s)", lease, beat_s);
		return -1;
	}
	w.lease_ms = (long)(lease * 1000);
	redisContext *c = bk_connect(&w.u, err, errlen);
	if (c == NULL)
		return -1;
	ensure_group(c);
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
		snprintf(s->consumer, sizeof s->consumer, "%s.%d", w.name, i);
		pthread_mutex_init(&s->mu, NULL);
		s->ev = evaluator_local(0);
		if (s->ev == NULL || pthread_create(&s->th, NULL, slot_main, s) != 0) {
			if (s->ev)
				s->ev->ops->destroy(s->ev);
			s->ev = NULL;
			break;
		}
		started++;
	}
	pthread_sigmask(SIG_SETMASK, &prev, NULL);
	logf_(&w, "serving %s with %d slot%s on backend %s (lease %.0f s)", w.u.shown, started,
	      started == 1 ? "" : "s", w.backend, lease);
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
			bk_sleep_ms(100);
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
			bk_sleep_ms(200);
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

int broker_status(const char *url, FILE *out, char *err, size_t errlen)
{
	struct broker_url u;
	if (broker_url_parse(url, &u, err, errlen) != 0)
		return -1;
	redisContext *c = bk_connect(&u, err, errlen);
	if (c == NULL)
		return -1;
	long long xlen = 0, pending = 0, lag = -1;
	int found;
	redisReply *r = redisCommand(c, "XLEN %s", BK_JOBS);
	if (r && r->type == REDIS_REPLY_INTEGER)
		xlen = r->integer;
	if (r)
		freeReplyObject(r);
	r = redisCommand(c, "XINFO GROUPS %s", BK_JOBS);
	if (r && r->type == REDIS_REPLY_ARRAY)
		for (size_t i = 0; i < r->elements; i++) {
			const redisReply *g = r->element[i];
			for (size_t k = 0; k + 1 < g->elements; k += 2)
				if (g->element[k]->type == REDIS_REPLY_STRING && strcmp(g->element[k]->str, "name") == 0 &&
				    g->element[k + 1]->type == REDIS_REPLY_STRING && strcmp(g->element[k + 1]->str, BK_GROUP) == 0) {
					pending = int_field(g, "pending", &found);
					long long l = int_field(g, "lag", &found);
					if (found)
						lag = l;
				}
		}
	if (r)
		freeReplyObject(r);
	/* acknowledged jobs are deleted: the stream holds the queued and the
	 * in-flight ones */
	long long queued = lag >= 0 ? lag : xlen - pending;
	fprintf(out, "broker %s\nqueued %lld   in flight %lld\n", u.shown, queued < 0 ? 0 : queued, pending);
	r = redisCommand(c, "XPENDING %s %s - + 50", BK_JOBS, BK_GROUP);
	if (r && r->type == REDIS_REPLY_ARRAY && r->elements > 0) {
		fprintf(out, "\n%-20s %-30s %10s %10s\n", "IN FLIGHT", "CONSUMER", "IDLE s", "DELIVERED");
		for (size_t i = 0; i < r->elements; i++) {
			const redisReply *p = r->element[i];
			if (p->type != REDIS_REPLY_ARRAY || p->elements < 4)
				continue;
			fprintf(out, "%-20s %-30s %10.1f %10lld\n", p->element[0]->str, p->element[1]->str,
				(double)p->element[2]->integer / 1000, p->element[3]->integer);
		}
	}
	if (r)
		freeReplyObject(r);
	fprintf(out, "\n%-24s %5s %5s %7s %10s  %s\n", "WORKER", "SLOTS", "BUSY", "DONE", "LAST BEAT", "DEVICE");
	char cursor[32] = "0";
	int nw = 0;
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
				const redisReply *dev = bk_field(h, "device");
				long long beat = int_field(h, "beat", &found);
				fprintf(out, "%-24s %5lld %5lld %7lld %6llds ago  %s\n", key + strlen(BK_WORKER),
					int_field(h, "slots", &found), int_field(h, "busy", &found),
					int_field(h, "done", &found), (long long)time(NULL) - beat, dev ? dev->str : "?");
				nw++;
			}
			if (h)
				freeReplyObject(h);
		}
		freeReplyObject(r);
	} while (strcmp(cursor, "0") != 0);
	if (nw == 0)
		fprintf(out, "(none: no worker has beaten in the last heartbeats; start 'passfs worker --broker URL')\n");
	redisFree(c);
	return 0;
}

#endif
