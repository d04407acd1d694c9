/* report_gather.c - what the report shows, read from a state directory
 * (report.h): each task's latest result.json and a point per history entry. */
#define _GNU_SOURCE
#include "report.h"

#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "file.h"
#include "score.h"
#include "state.h"

#define RESULT_CAP ((size_t)64 << 20) /* a result.json is a few KiB; the service's own cap is larger than any */

/* Loads path as a JSON document; NULL with why in err (a missing file: ENOENT in *e). */
static json_t *load_doc(const char *path, int *e, char *err, size_t errlen)
{
	size_t len = 0;
	*e = 0;
	char *s = base_read_file(path, RESULT_CAP, &len, e);
	if (s == NULL) {
		snprintf(err, errlen, "%s: %s", path, strerror(*e ? *e : EIO));
		return NULL;
	}
	json_error_t je;
	json_t *doc = json_loadb(s, len, 0, &je);
	free(s);
	if (doc == NULL || !json_is_object(doc)) {
		snprintf(err, errlen, "%s:%d: %s", path, je.line, doc ? "not a JSON object" : je.text);
		json_decref(doc);
		*e = EINVAL;
		return NULL;
	}
	return doc;
}

/* One history point: what the trajectory chart needs of an entry. */
static json_t *history_point(const json_t *doc, uint64_t seq)
{
	json_t *p = json_pack("{s:I}", "seq", (json_int_t)seq);
	static const char *keep[] = {"time", "verdict", "score", "rerun", "reused_from"};
	for (size_t i = 0; p && i < sizeof(keep) / sizeof(keep[0]); i++) {
		json_t *v = json_object_get(doc, keep[i]);
		if (v)
			json_object_set(p, keep[i], v);
	}
	return p;
}

struct report_cache {
	pthread_mutex_t mu;
	char *state_dir;        /* the directory the points are of */
	json_t *points;         /* "id/seq" -> point */
};

struct report_cache *report_cache_new(void)
{
	struct report_cache *c = calloc(1, sizeof(*c));
	if (c == NULL || (c->points = json_object()) == NULL) {
		free(c);
		return NULL;
	}
	pthread_mutex_init(&c->mu, NULL);
	return c;
}

void report_cache_free(struct report_cache *c)
{
	if (c == NULL)
		return;
	json_decref(c->points);
	free(c->state_dir);
	pthread_mutex_destroy(&c->mu);
	free(c);
}

/* A copy of the cached point of id's entry seq, or NULL. */
static json_t *cache_get(struct report_cache *c, const char *id, uint64_t seq)
{
	if (c == NULL)
		return NULL;
	char key[512];
	snprintf(key, sizeof(key), "%s/%llu", id, (unsigned long long)seq);
	pthread_mutex_lock(&c->mu);
	json_t *p = json_deep_copy(json_object_get(c->points, key));
	pthread_mutex_unlock(&c->mu);
	return p;
}

static void cache_put(struct report_cache *c, const char *id, uint64_t seq, const json_t *p)
{
	if (c == NULL)
		return;
	char key[512];
	snprintf(key, sizeof(key), "%s/%llu", id, (unsigned long long)seq);
	pthread_mutex_lock(&c->mu);
	json_object_set_new(c->points, key, json_deep_copy(p));
	pthread_mutex_unlock(&c->mu);
}

/* Forgets the points when the cache was of another state directory. */
static void cache_for(struct report_cache *c, const char *state_dir)
{
	if (c == NULL)
		return;
	pthread_mutex_lock(&c->mu);
	if (c->state_dir == NULL || strcmp(c->state_dir, state_dir) != 0) {
		json_object_clear(c->points);
		free(c->state_dir);
		c->state_dir = strdup(state_dir);
	}
	pthread_mutex_unlock(&c->mu);
}

static json_t *gather_task(const char *state_dir, const char *id, struct report_cache *cache)
{
	char path[4096], err[512];
	json_t *t = json_pack("{s:s, s:n, s:[]}", "id", id, "result", "history");
	if (t == NULL)
		return NULL;
	int e = 0;
	snprintf(path, sizeof(path), "%s/%s/result.json", state_dir, id);
	json_t *res = load_doc(path, &e, err, sizeof(err));
	if (res)
		json_object_set_new(t, "result", res);
	else if (e != ENOENT)
		json_object_set_new(t, "result_error", json_string(err));

	snprintf(path, sizeof(path), "%s/%s/history", state_dir, id);
	uint64_t *seqs = NULL, max_any = 0;
	int n = 0, skipped = 0;
	if (state_history_scan(path, &seqs, &n, &max_any) != 0)
		n = 0;
	json_t *hist = json_object_get(t, "history");
	for (int k = 0; k < n; k++) {
		json_t *p = cache_get(cache, id, seqs[k]);
		if (p == NULL) {
			char name[64], hp[4200];
			state_history_name(name, sizeof(name), seqs[k], "json");
			snprintf(hp, sizeof(hp), "%s/%s", path, name);
			json_t *doc = load_doc(hp, &e, err, sizeof(err));
			p = doc ? history_point(doc, seqs[k]) : NULL;
			json_decref(doc);
			if (p)
				cache_put(cache, id, seqs[k], p);
		}
		if (p)
			json_array_append_new(hist, p);
		else
			skipped++;
	}
	free(seqs);
	if (skipped)
		json_object_set_new(t, "history_skipped", json_integer(skipped));
	return t;
}

json_t *report_gather(const char *state_dir, const char *const *ids, int n, struct report_cache *cache, char *err,
		      size_t errlen)
{
	struct stat st;
	if (stat(state_dir, &st) != 0) {
		snprintf(err, errlen, "%s: %s", state_dir, strerror(errno));
		return NULL;
	}
	if (!S_ISDIR(st.st_mode)) {
		snprintf(err, errlen, "%s: not a directory", state_dir);
		return NULL;
	}
	cache_for(cache, state_dir);
	json_t *tasks = json_array();
	for (int i = 0; tasks && i < n; i++) {
		json_t *t = gather_task(state_dir, ids[i], cache);
		if (t == NULL || json_array_append_new(tasks, t) != 0) {
			json_decref(tasks);
			tasks = NULL;
		}
	}
	if (tasks == NULL) {
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	return json_pack("{s:o}", "tasks", tasks);
}

json_t *report_summary(const json_t *gathered, double b)
{
	json_t *tasks = json_object_get(gathered, "tasks");
	size_t n = json_array_size(tasks);
	double *scores = calloc(n + 1, sizeof(double));
	json_t *rows = json_array();
	if (scores == NULL || rows == NULL) {
		free(scores);
		json_decref(rows);
		return NULL;
	}
	for (size_t i = 0; i < n; i++) {
		json_t *t = json_array_get(tasks, i), *res = json_object_get(t, "result");
		json_t *verdict = json_object_get(res, "verdict"), *score = json_object_get(res, "score");
		json_t *seq = json_object_get(res, "seq");
		json_array_append_new(rows, json_pack("{s:O, s:s, s:O, s:O, s:I}", "id", json_object_get(t, "id"), "state",
						      res ? "done" : "idle", "verdict", verdict ? verdict : json_null(),
						      "score", score ? score : json_null(), "seq",
						      (json_int_t)(json_is_integer(seq) ? json_integer_value(seq) : 0)));
		scores[i] = json_is_number(score) ? json_number_value(score) : NAN;
	}
	double agg = 0, agg_all = 0;
	int have, have_all;
	size_t n_eval = score_aggregates(scores, n, b, &agg, &have, &agg_all, &have_all);
	free(scores);
	return json_pack("{s:o, s:I, s:o, s:o, s:f}", "tasks", rows, "evaluated", (json_int_t)n_eval, "aggregate",
			 have ? json_real(agg) : json_null(), "aggregate_all", have_all ? json_real(agg_all) : json_null(),
			 "b", b);
}
