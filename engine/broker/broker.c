/* broker.c - the broker's URL, the job's encoding, the connection and the
 * redis evaluator (broker.h; docs/broker.md describes the streams and keys).
 *
 * The job's encoding carries the options with the evaluation protocol's own
 * codec (eval_opts_put/eval_opts_take, evaluator.h), little-endian with
 * base/wire.h, under a magic and a version of its own:
 *
 *   u32 magic "bkjb", u32 version (BROKER_JOB_VERSION),
 *   the options (i32 warmup, trials, cold, quiet, trial_times, check_only;
 *   f64 variant_timeout_s, b, p, lock_timeout_s; u64 secret_seed);
 *   four strings, each u32 length and bytes: backend, pass label, graph
 *   label, pass.
 *
 * The graph is not in it: it is stored once under its sha256 and the job
 * names the sha (the worker checks the bytes against it). */
#define _GNU_SOURCE
#include "broker_int.h"

#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>
#include <unistd.h>

#include "clock.h"
#include "score.h"
#include "file.h"
#include "graph.h"
#include "sha256.h"
#include "wire.h"

int broker_available(void)
{
#ifdef PASSFS_HIREDIS
	return 1;
#else
	return 0;
#endif
}

/* ---- the URL ---------------------------------------------------------------------- */

static int pct_copy(char *dst, size_t cap, const char *s, size_t n)
{
	size_t o = 0;
	for (size_t i = 0; i < n; i++) {
		char ch = s[i];
		if (ch == '%') {
			if (i + 2 >= n)
				return -1;
			char hex[3] = {s[i + 1], s[i + 2], 0};
			char *end;
			long v = strtol(hex, &end, 16);
			if (*end || v == 0)
				return -1;
			ch = (char)v;
			i += 2;
		}
		if (o + 1 >= cap)
			return -1;
		dst[o++] = ch;
	}
	dst[o] = 0;
	return 0;
}

int broker_url_parse(const char *url, struct broker_url *u, char *err, size_t errlen)
{
	memset(u, 0, sizeof *u);
	u->port = 6379;
	if (url == NULL || *url == 0) {
		snprintf(err, errlen, "no broker URL (give redis://host:port)");
		return -1;
	}
	if (strncmp(url, "rediss://", 9) == 0) {
		snprintf(err, errlen, "rediss:// (TLS) is not supported by this passfs (built without hiredis_ssl); "
			 "use redis:// through a TLS tunnel (docs/broker.md)");
		return -1;
	}
	if (strncmp(url, "redis://", 8) != 0) {
		snprintf(err, errlen, "the broker URL must start with redis:// (redis://[user:pass@]host:port[/db])");
		return -1;
	}
	const char *p = url + 8;
	const char *slash = strchr(p, '/');
	const char *end = slash ? slash : p + strlen(p);
	const char *at = NULL;
	for (const char *q = p; q < end; q++)
		if (*q == '@')
			at = q;
	if (at) {
		const char *colon = memchr(p, ':', (size_t)(at - p));
		const char *ue = colon ? colon : at;
		if (pct_copy(u->user, sizeof u->user, p, (size_t)(ue - p)) ||
		    (colon && pct_copy(u->pass, sizeof u->pass, colon + 1, (size_t)(at - colon - 1)))) {
			snprintf(err, errlen, "the broker URL's credentials are malformed or too long");
			return -1;
		}
		if (!colon) {   /* redis://password@host, as redis-cli -u reads it */
			memcpy(u->pass, u->user, sizeof u->pass < sizeof u->user ? sizeof u->pass : sizeof u->user);
			u->user[0] = 0;
		}
		p = at + 1;
	}
	const char *hs = p, *he = end;
	if (*hs == '[') {       /* [ipv6]:port */
		const char *rb = memchr(hs, ']', (size_t)(end - hs));
		if (!rb) {
			snprintf(err, errlen, "the broker URL's host is malformed");
			return -1;
		}
		hs++;
		he = rb;
		p = rb + 1;
	} else {
		const char *colon = memchr(p, ':', (size_t)(end - p));
		he = colon ? colon : end;
		p = he;
	}
	if (he - hs <= 0 || (size_t)(he - hs) >= sizeof u->host) {
		snprintf(err, errlen, "the broker URL has no host (redis://host:port)");
		return -1;
	}
	memcpy(u->host, hs, (size_t)(he - hs));
	if (*p == ':') {
		char *e;
		long v = strtol(p + 1, &e, 10);
		if (e != end || v < 1 || v > 65535) {
			snprintf(err, errlen, "the broker URL's port must be a number from 1 to 65535");
			return -1;
		}
		u->port = (int)v;
	} else if (p != end) {
		snprintf(err, errlen, "the broker URL's host is malformed");
		return -1;
	}
	if (slash && slash[1]) {
		char *e;
		long v = strtol(slash + 1, &e, 10);
		if (*e || v < 0 || v > 1000000) {
			snprintf(err, errlen, "the broker URL's database (after /) must be a number");
			return -1;
		}
		u->db = (int)v;
	}
	snprintf(u->shown, sizeof u->shown, "redis://%s%s%s:%d/%d", u->user[0] || u->pass[0] ? "***@" : "",
		 strchr(u->host, ':') ? "[" : "", u->host, u->port, u->db);
	if (strchr(u->host, ':')) {
		size_t k = strlen(u->shown);
		/* close the bracket before the port */
		char *c = strstr(u->shown, u->host) + strlen(u->host);
		memmove(c + 1, c, k - (size_t)(c - u->shown) + 1);
		*c = ']';
	}
	return 0;
}

char *broker_url_take(char *flag)
{
	if (flag == NULL) {
		const char *env = getenv(BROKER_ENV);
		if (env == NULL || *env == 0)
			return NULL;
		char *copy = strdup(env);
		/* scrub the bytes too: /proc/PID/environ shows the initial
		 * block, whatever unsetenv takes out of environ */
		for (char **e = environ; *e; e++)
			if (strncmp(*e, BROKER_ENV "=", sizeof BROKER_ENV) == 0)
				memset(*e + sizeof BROKER_ENV, '*', strlen(*e + sizeof BROKER_ENV));
		unsetenv(BROKER_ENV);
		return copy;
	}
	char *copy = strdup(flag);
	/* redis://user:PASS@host: hide PASS (or a lone password) in argv */
	char *p = strstr(flag, "://");
	char *at = p ? strrchr(p, '@') : NULL;
	if (p && at) {
		char *colon = memchr(p + 3, ':', (size_t)(at - p - 3));
		for (char *q = colon ? colon + 1 : p + 3; q < at; q++)
			*q = '*';
	}
	return copy;
}

int broker_evaluator_open(char *flag, const struct broker_opts *o, struct evaluator **out, char *err,
			  size_t errlen)
{
	*out = NULL;
	char *url = broker_url_take(flag);
	if (url == NULL)
		return 0;
	*out = broker_evaluator(url, o, err, errlen);
	memset(url, 0, strlen(url));
	free(url);
	return *out != NULL ? 0 : -1;
}

/* ---- the job's encoding ---------------------------------------------------------------- */

#define BK_NSTR 4

int broker_job_encode(const struct eval_job *job, unsigned char **out, size_t *len)
{
	const struct eval_opts *o = &job->opts;
	const char *backend = o->backend[0] ? o->backend : "auto";
	const char *label = job->pass_label ? job->pass_label : "pass.c";
	const char *glabel = job->graph_label ? job->graph_label : "graph.json";
	const char *str[BK_NSTR] = {backend, label, glabel, job->pass_src};
	size_t n[BK_NSTR] = {strlen(backend), strlen(label), strlen(glabel), job->pass_len};
	if (job->pass_len > PF_CAP_PASS_C)
		return -1;
	struct wire_buf b = {0};
	wire_add_u32(&b, BROKER_JOB_MAGIC);
	wire_add_u32(&b, BROKER_JOB_VERSION);
	eval_opts_put(&b, o);
	for (int i = 0; i < BK_NSTR; i++) {
		wire_add_u32(&b, (uint32_t)n[i]);
		wire_add_bytes(&b, str[i], n[i]);
	}
	if (b.oom) {
		free(b.p);
		return -1;
	}
	*out = b.p;
	*len = b.len;
	return 0;
}

int broker_job_decode(const unsigned char *buf, size_t len, struct eval_job *job, char **labels, char *err,
		      size_t errlen)
{
	memset(job, 0, sizeof *job);
	*labels = NULL;
	if (len > BROKER_JOB_MAX) {
		snprintf(err, errlen, "the job is %zu bytes, over the limit of %zu", len, (size_t)BROKER_JOB_MAX);
		return -1;
	}
	struct wire_in r = {.p = buf, .len = len};
	uint32_t magic = wire_take_u32(&r), version = wire_take_u32(&r);
	if (r.bad || magic != BROKER_JOB_MAGIC) {
		snprintf(err, errlen, "the job is not a passfs job (bad magic)");
		return -1;
	}
	if (version != BROKER_JOB_VERSION) {
		snprintf(err, errlen, "the job is of version %u; this worker speaks version %d", version,
			 BROKER_JOB_VERSION);
		return -1;
	}
	struct eval_opts *o = &job->opts;
	eval_opts_take(&r, o);
	const char *str[BK_NSTR];
	uint32_t n[BK_NSTR];
	for (int i = 0; i < BK_NSTR; i++) {
		n[i] = wire_take_u32(&r);
		str[i] = wire_take_bytes(&r, n[i]);
	}
	if (r.bad || r.off != r.len) {
		snprintf(err, errlen, "the job's encoding is cut short or malformed");
		return -1;
	}
	int known = (n[0] == 4 && memcmp(str[0], "auto", 4) == 0) || (n[0] == 3 && memcmp(str[0], "cpu", 3) == 0) ||
		    (n[0] == 4 && memcmp(str[0], "cuda", 4) == 0);
	if (!known) {
		snprintf(err, errlen, "the job names an unknown backend");
		return -1;
	}
	if (n[1] > 4096 || n[2] > 4096 || memchr(str[1], 0, n[1]) || memchr(str[2], 0, n[2])) {
		snprintf(err, errlen, "the job's labels are malformed");
		return -1;
	}
	if (n[3] > PF_CAP_PASS_C) {
		snprintf(err, errlen, "the job's pass is %u bytes, over the pass.c limit of %u", n[3],
			 (unsigned)PF_CAP_PASS_C);
		return -1;
	}
	if (!(o->variant_timeout_s >= 0 && o->variant_timeout_s <= 86400) ||
	    !(o->lock_timeout_s >= 0 && o->lock_timeout_s <= 86400) || o->warmup < -1 || o->warmup > 100000 ||
	    o->trials < 0 || o->trials > 100000 || !(o->b >= 0 && o->b <= 1e9) || !(o->p >= 0 && o->p <= 1e9)) {
		snprintf(err, errlen, "the job's options are out of range");
		return -1;
	}
	char *l = malloc((size_t)n[1] + n[2] + 2);
	if (l == NULL) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	memcpy(l, str[1], n[1]);
	l[n[1]] = 0;
	memcpy(l + n[1] + 1, str[2], n[2]);
	l[n[1] + 1 + n[2]] = 0;
	memcpy(o->backend, str[0], n[0]);
	o->backend[n[0]] = 0;
	job->pass_label = l;
	job->graph_label = l + n[1] + 1;
	job->pass_src = str[3];
	job->pass_len = n[3];
	*labels = l;
	return 0;
}

void bk_random_id(char out[33])
{
	unsigned char r[16];
	if (getrandom(r, sizeof r, 0) != (ssize_t)sizeof r) {
		uint64_t t = (uint64_t)base_now_ms() * 1000003u ^ (uint64_t)getpid();
		memcpy(r, &t, 8);
		memcpy(r + 8, &t, 8);
	}
	for (int i = 0; i < 16; i++)
		snprintf(out + 2 * i, 3, "%02x", r[i]);
}

#ifndef PASSFS_HIREDIS

struct evaluator *broker_evaluator(const char *url, const struct broker_opts *o, char *err, size_t errlen)
{
	(void)url;
	(void)o;
	snprintf(err, errlen, "--broker: this passfs was built without hiredis (install libhiredis-dev and rebuild)");
	return NULL;
}

int broker_worker_run(const struct broker_worker_opts *o, char *err, size_t errlen)
{
	(void)o;
	snprintf(err, errlen, "this passfs was built without hiredis (install libhiredis-dev and rebuild)");
	return -1;
}

int broker_status(const char *url, FILE *out, char *err, size_t errlen)
{
	(void)url;
	(void)out;
	snprintf(err, errlen, "this passfs was built without hiredis (install libhiredis-dev and rebuild)");
	return -1;
}

#else

/* ---- the connection ---------------------------------------------------------------------- */

redisContext *bk_connect(const struct broker_url *u, char *err, size_t errlen)
{
	struct timeval tv = {3, 0};
	redisContext *c = redisConnectWithTimeout(u->host, u->port, tv);
	if (c == NULL || c->err) {
		snprintf(err, errlen, "cannot reach the broker at %s: %s", u->shown,
			 c ? c->errstr : "out of memory");
		if (c)
			redisFree(c);
		return NULL;
	}
	/* longer than any BLOCK passfs asks for (BK_BLOCK_MS) */
	struct timeval io = {10, 0};
	redisSetTimeout(c, io);
	redisReply *r = NULL;
	if (u->pass[0]) {
		r = u->user[0] ? redisCommand(c, "AUTH %s %s", u->user, u->pass) : redisCommand(c, "AUTH %s", u->pass);
		if (r == NULL || r->type == REDIS_REPLY_ERROR) {
			snprintf(err, errlen, "the broker at %s refused the credentials: %s", u->shown,
				 r ? r->str : c->errstr);
			goto fail;
		}
		freeReplyObject(r);
	}
	if (u->db) {
		r = redisCommand(c, "SELECT %d", u->db);
		if (r == NULL || r->type == REDIS_REPLY_ERROR) {
			snprintf(err, errlen, "the broker at %s: SELECT %d: %s", u->shown, u->db, r ? r->str : c->errstr);
			goto fail;
		}
		freeReplyObject(r);
	}
	r = redisCommand(c, "PING");
	if (r == NULL || r->type == REDIS_REPLY_ERROR) {
		snprintf(err, errlen, "the broker at %s does not answer PING: %s", u->shown, r ? r->str : c->errstr);
		goto fail;
	}
	freeReplyObject(r);
	return c;
fail:
	if (r)
		freeReplyObject(r);
	redisFree(c);
	return NULL;
}

int bk_stream_of(const char *backend, char *out, size_t outlen)
{
	if (strcmp(backend, "auto") && strcmp(backend, "cpu") && strcmp(backend, "cuda"))
		return -1;
	snprintf(out, outlen, BK_JOBS "%s", backend);
	return 0;
}

/* The value of field name in a stream entry's field array, or NULL. */
const redisReply *bk_field(const redisReply *fields, const char *name)
{
	if (fields == NULL || fields->type != REDIS_REPLY_ARRAY)
		return NULL;
	for (size_t i = 0; i + 1 < fields->elements; i += 2) {
		const redisReply *k = fields->element[i];
		if (k->type == REDIS_REPLY_STRING && k->len == strlen(name) && memcmp(k->str, name, k->len) == 0)
			return fields->element[i + 1]->type == REDIS_REPLY_STRING ? fields->element[i + 1] : NULL;
	}
	return NULL;
}

/* ---- the redis evaluator --------------------------------------------------------------- */

struct redis_ev {
	struct evaluator ev;
	struct broker_url u;
	struct broker_opts o;
	int cancel;
};

/* One run's state. */
struct run {
	struct redis_ev *r;
	const struct eval_job *job;
	char id[33], sha[65];
	char gkey[96], rkey[64];
	char stream[48];        /* the job stream of its backend */
	unsigned char *enc;
	size_t enc_len;
	char entry[64];         /* the job's stream entry, once queued */
};

/* Stores the graph (once) and queues the job.  0; -1 when the connection
 * broke (c->err); -2 with a message when the broker refused. */
static int submit(redisContext *c, struct run *u, char *err, size_t errlen)
{
	redisReply *r = redisCommand(c, "EXPIRE %s %d", u->gkey, BK_TTL_S);
	if (r == NULL)
		return -1;
	int have = r->type == REDIS_REPLY_INTEGER && r->integer == 1;
	freeReplyObject(r);
	if (!have) {
		r = redisCommand(c, "SET %s %b NX EX %d", u->gkey, u->job->graph_text, u->job->graph_len, BK_TTL_S);
		if (r == NULL)
			return -1;
		if (r->type == REDIS_REPLY_ERROR) {
			snprintf(err, errlen, "the broker refused the graph: %s", r->str);
			freeReplyObject(r);
			return -2;
		}
		freeReplyObject(r);
	}
	r = redisCommand(c, "XADD %s * t S", u->rkey);
	if (r == NULL)
		return -1;
	freeReplyObject(r);
	r = redisCommand(c, "EXPIRE %s %d", u->rkey, BK_TTL_S);
	if (r == NULL)
		return -1;
	freeReplyObject(r);
	r = redisCommand(c, "XADD %s * v %d id %s graph %s reply %s job %b", u->stream, BROKER_JOB_VERSION, u->id,
			 u->sha, u->rkey, u->enc, u->enc_len);
	if (r == NULL)
		return -1;
	if (r->type == REDIS_REPLY_ERROR) {
		snprintf(err, errlen, "the broker refused the job: %s", r->str);
		freeReplyObject(r);
		return -2;
	}
	if (r->type == REDIS_REPLY_STRING)
		snprintf(u->entry, sizeof u->entry, "%s", r->str);
	freeReplyObject(r);
	return 0;
}

static int cancelled(struct redis_ev *r)
{
	return __atomic_load_n(&r->cancel, __ATOMIC_RELAXED);
}

static int r_run(struct evaluator *ev, const struct eval_job *job, void (*progress)(void *, const char *),
		 void *ctx, json_t **result, char *err, size_t errlen)
{
	struct redis_ev *r = (struct redis_ev *)ev;
	struct run u = {.r = r, .job = job};
	*result = NULL;
	bk_random_id(u.id);
	sha256_hex(job->graph_text, job->graph_len, u.sha);
	snprintf(u.gkey, sizeof u.gkey, BK_GRAPH "%s", u.sha);
	snprintf(u.rkey, sizeof u.rkey, BK_REPLY "%s", u.id);
	if (bk_stream_of(job->opts.backend[0] ? job->opts.backend : "auto", u.stream, sizeof u.stream) != 0) {
		snprintf(err, errlen, "the broker has no job stream for backend '%s' (auto, cpu or cuda)",
			 job->opts.backend);
		return -1;
	}
	if (broker_job_encode(job, &u.enc, &u.enc_len) != 0) {
		snprintf(err, errlen, "the job cannot be encoded (out of memory, or the pass is over %u bytes)",
			 (unsigned)PF_CAP_PASS_C);
		return -1;
	}
	/* answers are believed only under the broker key, when there is one */
	unsigned char key[256];
	size_t klen = 0;
	char want[65];
	int kr = bk_answer_key(key, sizeof key, &klen, err, errlen);
	if (kr < 0) {
		free(u.enc);
		return -1;
	}
	int have_key = kr == 0;
	double retry_ms = (r->o.retry_s > 0 ? r->o.retry_s : 60) * 1000;
	double wait_end = base_now_ms() + (r->o.wait_s > 0 ? r->o.wait_s : 3600) * 1000;
	double gone_since = 0, backoff = 100;
	char last[64] = "0-0", why[512] = "";
	redisContext *c = NULL;
	int submitted = 0, rc = -1, done = 0;
	while (!done) {
		if (cancelled(r)) {
			if (c) {
				redisReply *x = redisCommand(c, "SET " BK_CANCEL "%s 1 EX %d", u.id, BK_TTL_S);
				if (x)
					freeReplyObject(x);
			}
			snprintf(err, errlen, "cancelled");
			break;
		}
		if (base_now_ms() > wait_end) {
			snprintf(err, errlen, "no worker answered job %s within %.0f s (is a 'passfs worker' running "
				 "against the broker at %s? 'passfs broker status' shows)", u.id,
				 (r->o.wait_s > 0 ? r->o.wait_s : 3600), r->u.shown);
			break;
		}
		if (c == NULL) {
			c = bk_connect(&r->u, why, sizeof why);
			if (c == NULL) {
				if (gone_since == 0)
					gone_since = base_now_ms();
				if (base_now_ms() - gone_since > retry_ms) {
					snprintf(err, errlen, "the broker went away (%s); gave up on job %s after %.0f s", why,
						 u.id, retry_ms / 1000);
					break;
				}
				for (double s = 0; s < backoff && !cancelled(r); s += 50)
					base_sleep_ms(50);
				backoff = backoff * 2 > 2000 ? 2000 : backoff * 2;
				continue;
			}
			if (gone_since != 0 && submitted) {
				/* back after an outage: a broker restarted without
				 * its data lost the job, so queue it again */
				redisReply *x = redisCommand(c, "EXISTS %s", u.rkey);
				if (x && x->type == REDIS_REPLY_INTEGER && x->integer == 0) {
					submitted = 0;
					snprintf(last, sizeof last, "0-0");
					fprintf(stderr, "passfs: broker %s lost job %s in its outage; queueing it again\n",
						r->u.shown, u.id);
				}
				if (x)
					freeReplyObject(x);
				else {
					redisFree(c);
					c = NULL;
					continue;
				}
			}
			gone_since = 0;
			backoff = 100;
		}
		if (!submitted) {
			int s = submit(c, &u, err, errlen);
			if (s == -2)
				break;
			if (s == -1) {
				redisFree(c);
				c = NULL;
				gone_since = base_now_ms();
				continue;
			}
			submitted = 1;
		}
		redisReply *x = redisCommand(c, "XREAD COUNT 16 BLOCK %d STREAMS %s %s", BK_BLOCK_MS, u.rkey, last);
		if (x == NULL) {
			snprintf(why, sizeof why, "%s", c->errstr);
			redisFree(c);
			c = NULL;
			gone_since = base_now_ms();
			continue;
		}
		if (x->type == REDIS_REPLY_ARRAY && x->elements == 1 && x->element[0]->type == REDIS_REPLY_ARRAY &&
		    x->element[0]->elements == 2) {
			const redisReply *ents = x->element[0]->element[1];
			for (size_t i = 0; i < ents->elements && !done; i++) {
				const redisReply *e = ents->element[i];
				if (e->type != REDIS_REPLY_ARRAY || e->elements != 2 || e->element[0]->type != REDIS_REPLY_STRING)
					continue;
				snprintf(last, sizeof last, "%s", e->element[0]->str);
				const redisReply *t = bk_field(e->element[1], "t");
				if (t == NULL || t->len != 1)
					continue;
				if (t->str[0] == 'P') {
					const redisReply *ph = bk_field(e->element[1], "phase");
					if (ph && progress && (strcmp(ph->str, "compiling") == 0 || strcmp(ph->str, "running") == 0))
						progress(ctx, ph->str);
				} else if (t->str[0] == 'R') {
					const redisReply *erc = bk_field(e->element[1], "rc");
					const redisReply *msg = bk_field(e->element[1], "msg");
					const redisReply *js = bk_field(e->element[1], "json");
					const redisReply *wn = bk_field(e->element[1], "worker");
					const redisReply *sg = bk_field(e->element[1], "sig");
					done = 1;
					char why2[200];
					if (have_key && (erc == NULL || wn == NULL || sg == NULL || sg->len != 64 ||
							 bk_answer_sign(key, klen, u.id, atoi(erc->str), wn->str, js ? js->str : "",
									want) != 0 ||
							 memcmp(sg->str, want, 64) != 0)) {
						snprintf(err, errlen,
							 "the answer to job %s is not signed with the broker key "
							 "(PASSFS_BROKER_KEY): not taken",
							 u.id);
					} else if (erc && atoi(erc->str) == 0 && js) {
						json_error_t je;
						*result = json_loadb(js->str, js->len, 0, &je);
						if (*result == NULL || !json_is_object(*result)) {
							json_decref(*result);
							*result = NULL;
							snprintf(err, errlen, "the worker's result for job %s is not a JSON object", u.id);
						} else if (bk_result_check(*result, why2, sizeof why2) != 0) {
							json_decref(*result);
							*result = NULL;
							snprintf(err, errlen, "the worker's result for job %s is malformed: %s", u.id,
								 why2);
						} else {
							rc = 0;
						}
					} else {
						snprintf(err, errlen, "%s", msg && msg->len ? msg->str : "the worker could not evaluate");
					}
				}
			}
		} else if (x->type == REDIS_REPLY_ERROR) {
			snprintf(err, errlen, "the broker: XREAD: %s", x->str);
			freeReplyObject(x);
			break;
		}
		freeReplyObject(x);
	}
	if (c) {
		if (done) {
			/* answered: the reply goes, and the entry too where a
			 * second copy still waits (queued again after an outage) */
			redisReply *x = redisCommand(c, "DEL %s", u.rkey);
			if (x)
				freeReplyObject(x);
			if (u.entry[0] && (x = redisCommand(c, "XDEL %s %s", u.stream, u.entry)) != NULL)
				freeReplyObject(x);
		}
		redisFree(c);
	}
	free(u.enc);
	return rc;
}

/* ---- answers the front end believes ------------------------------------ */

/* The key answers are signed with (HMAC-SHA-256), shared by the front ends
 * and the workers of one broker: the file PASSFS_BROKER_KEY names (any
 * bytes, at least 16).  0 with *len set, 1 when none is configured, -1 (err)
 * when the file is unusable. */
int bk_answer_key(unsigned char *key, size_t cap, size_t *len, char *err, size_t errlen)
{
	const char *path = getenv("PASSFS_BROKER_KEY");
	if (path == NULL || !*path)
		return 1;
	size_t n = 0;
	int e = 0;
	char *t = base_read_file(path, cap, &n, &e);
	if (t == NULL || n < 16) {
		snprintf(err, errlen, "PASSFS_BROKER_KEY: %s: %s", path,
			 t == NULL ? strerror(e ? e : EIO) : "a key needs at least 16 bytes");
		free(t);
		return -1;
	}
	memcpy(key, t, n);
	*len = n;
	explicit_bzero(t, n);
	free(t);
	return 0;
}

/* The signature of an answer: the job, its rc, the worker and the result. */
int bk_answer_sign(const unsigned char *key, size_t klen, const char *job, int rc, const char *worker,
		   const char *json, char hex[65])
{
	size_t n = strlen(job) + strlen(worker) + strlen(json) + 40;
	char *m = malloc(n);
	if (m == NULL)
		return -1;
	int k = snprintf(m, n, "%s\n%d\n%s\n%s", job, rc, worker, json);
	int r = k < 0 ? -1 : hmac_sha256_hex(key, klen, m, (size_t)k, hex);
	free(m);
	return r;
}

static int finite_num(const json_t *x, double lo, double hi)
{
	if (!json_is_number(x))
		return 0;
	double v = json_number_value(x);
	return isfinite(v) && v >= lo && v <= hi;
}

/* A worker's result document as result.json must have it: the pinned
 * fields with their types and ranges (docs/result-format.md).  0, or -1
 * with the first problem in err. */
int bk_result_check(const json_t *r, char *err, size_t errlen)
{
	const json_t *v = json_object_get(r, "verdict");
	if (!json_is_string(v) || score_status_parse(json_string_value(v)) == SCORE_STATUS_INVALID) {
		snprintf(err, errlen, "\"verdict\" is not a verdict");
		return -1;
	}
	if (!finite_num(json_object_get(r, "score"), 0, 1e12)) {
		snprintf(err, errlen, "\"score\" is not a finite number >= 0");
		return -1;
	}
	const json_t *es = json_object_get(r, "es_t"), *x;
	const char *key;
	if (es != NULL) {
		if (!json_is_object(es)) {
			snprintf(err, errlen, "\"es_t\" is not an object");
			return -1;
		}
		json_object_foreach((json_t *)es, key, x)
			if (!finite_num(x, 0, 1e12)) {
				snprintf(err, errlen, "\"es_t\".\"%.16s\" is not a finite number >= 0", key);
				return -1;
			}
	}
	const json_t *vs = json_object_get(r, "variants");
	if (vs != NULL && !json_is_array(vs)) {
		snprintf(err, errlen, "\"variants\" is not an array");
		return -1;
	}
	size_t i;
	json_array_foreach((json_t *)vs, i, x) {
		const json_t *vv = json_object_get(x, "verdict"), *sp = json_object_get(x, "speedup"),
			     *mt = json_object_get(x, "min_t");
		if (!json_is_object(x) || !json_is_string(json_object_get(x, "name")) || !json_is_string(vv) ||
		    score_status_parse(json_string_value(vv)) == SCORE_STATUS_INVALID ||
		    (sp != NULL && !json_is_null(sp) && !finite_num(sp, 0, 1e12)) ||
		    (mt != NULL && !json_is_null(mt) && !(json_is_integer(mt) && json_integer_value(mt) >= -10 &&
							  json_integer_value(mt) <= 4))) {
			snprintf(err, errlen, "variant %zu: a name, a verdict, a finite speedup (or null) and a min_t in "
					      "-10..4 (or null) are needed",
				 i);
			return -1;
		}
	}
	return 0;
}

static void r_cancel(struct evaluator *ev)
{
	__atomic_store_n(&((struct redis_ev *)ev)->cancel, 1, __ATOMIC_RELAXED);
}

static void r_destroy(struct evaluator *ev)
{
	struct redis_ev *r = (struct redis_ev *)ev;
	memset(&r->u, 0, sizeof r->u);
	free(r);
}

static const struct evaluator_ops redis_ops = {"redis", r_run, r_cancel, r_destroy};

struct evaluator *broker_evaluator(const char *url, const struct broker_opts *o, char *err, size_t errlen)
{
	struct redis_ev *r = calloc(1, sizeof *r);
	if (r == NULL) {
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	if (broker_url_parse(url, &r->u, err, errlen) != 0) {
		free(r);
		return NULL;
	}
	redisContext *c = bk_connect(&r->u, err, errlen);
	if (c == NULL) {
		free(r);
		return NULL;
	}
	redisFree(c);
	if (o)
		r->o = *o;
	/* the machine's settings (docs/broker.md) where the caller set none */
	const char *e;
	if (r->o.retry_s <= 0 && (e = getenv("PASSFS_BROKER_RETRY")) != NULL)
		r->o.retry_s = atof(e);
	if (r->o.wait_s <= 0 && (e = getenv("PASSFS_BROKER_WAIT")) != NULL)
		r->o.wait_s = atof(e);
	r->ev.ops = &redis_ops;
	return &r->ev;
}

#endif
