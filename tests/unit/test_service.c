/* test_service.c - engine/service: the evaluation service behind mount and watch.
 *
 * Runs the real evaluator on the tiny test task (tests/passes/tasks, cpu
 * backend, one trial, no warm-up: a few seconds per evaluation) with a
 * temporary state directory, and checks what the front ends rely on:
 *   - before any evaluation: the template, state idle, an idle result.json
 *     naming the template's sha256, es_t absent (ENODATA);
 *   - the 1 MiB cap (EFBIG) on write and truncate; zero-filled holes;
 *   - mark_pending flips the state at once; fire -> done, the result names
 *     the sha256 of the bytes, history/NNNNNN.{c,json} written;
 *   - the same bytes fired again are answered from history at once (no new
 *     evaluation, a new seq, "reused_from");
 *   - three fires in quick succession: the middle one is never evaluated
 *     (at most one queued, the latest wins) and the final result is for the
 *     final bytes; while waiting, result.json shows the older result "stale";
 *   - a flush (mark_pending) during an evaluation keeps the state pending;
 *   - close + open restores pass.c, result.json and es_t byte for byte;
 *   - a pass.c saved but never judged (kill -9 during an evaluation) is
 *     fired again at open;
 *   - passfs failing to evaluate (unknown backend) records an error result
 *     with no verdict and no score, and is not reused;
 *   - summary.json and the history export. */
#define _GNU_SOURCE
#include <errno.h>
#include <dirent.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <jansson.h>

#include "pass.h"
#include "service.h"
#include "evaluator.h"
#include "sha256.h"

#include "check.h"

#define TASKS "tests/passes/tasks"
#define TASK "tiny_bias_gelu"

/* es_t reads as an empty file (no score for the current pass.c): "" with
 * length 0, never NULL. */
static int es_empty(struct svc *s, int t)
{
	size_t len = 1;
	char *es = svc_es_t(s, t, &len);
	int ok = es != NULL && es[0] == 0 && len == 0;
	free(es);
	return ok;
}

static atomic_int notified;

static void on_notify(void *ctx, int task)
{
	(void)ctx;
	(void)task;
	atomic_fetch_add(&notified, 1);
}

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

static char *slurp(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	if (f == NULL)
		return NULL;
	fseek(f, 0, SEEK_END);
	long n = ftell(f);
	fseek(f, 0, SEEK_SET);
	char *buf = malloc((size_t)n + 1);
	if (buf && fread(buf, 1, (size_t)n, f) != (size_t)n) {
		free(buf);
		buf = NULL;
	}
	fclose(f);
	if (buf) {
		buf[n] = 0;
		*len = (size_t)n;
	}
	return buf;
}

static int exists(const char *dir, const char *name)
{
	char p[4096];
	struct stat st;
	snprintf(p, sizeof(p), "%s/%s", dir, name);
	return stat(p, &st) == 0;
}

/* Waits until the task is done (not busy); 1 when it got there in time. */
static int wait_done(struct svc *s, int t, double timeout_s)
{
	double end = now_s() + timeout_s;
	while (now_s() < end) {
		if (svc_state(s, t) == SVC_DONE && !svc_busy(s, t))
			return 1;
		usleep(20000);
	}
	return 0;
}

static json_t *result(struct svc *s, int t)
{
	size_t len = 0;
	char *text = svc_result_json(s, t, &len);
	if (text == NULL)
		return NULL;
	CHECK(len > 0 && text[len - 1] == '\n' && strlen(text) == len);
	json_t *j = json_loads(text, 0, NULL);
	free(text);
	return j;
}

/* The document's first n keys, space-separated, in the order it has them. */
static const char *first_keys(json_t *j, int n)
{
	static char buf[512];
	buf[0] = '\0';
	void *it = json_object_iter(j);
	for (int i = 0; i < n && it != NULL; i++, it = json_object_iter_next(j, it))
		snprintf(buf + strlen(buf), sizeof buf - strlen(buf), "%s%s", i ? " " : "", json_object_iter_key(it));
	return buf;
}

static const char *str(json_t *j, const char *key)
{
	return json_string_value(json_object_get(j, key));
}

/* Under AddressSanitizer the sandboxed worker dies of SIGSYS (the ASan
 * runtime makes system calls the seccomp filter refuses), so every pass that
 * runs is a runtime_error there; the service's behaviour is what this test is
 * about, so an ASan build accepts any verdict where a pass runs. */
#if defined(__SANITIZE_ADDRESS__)
#define RAN_VERDICT(r, want) (json_is_string(json_object_get(r, "verdict")))
#else
#define RAN_VERDICT(r, want) (strcmp(str(r, "verdict"), want) == 0)
#endif

static long long num(json_t *j, const char *key)
{
	return json_integer_value(json_object_get(j, key));
}

/* This process's child running an evaluation (passfs --passfs-evaluator),
 * or 0. */
static pid_t evaluator_child(void)
{
	DIR *d = opendir("/proc");
	struct dirent *e;
	pid_t found = 0;
	while (d != NULL && found == 0 && (e = readdir(d)) != NULL) {
		pid_t pid = (pid_t)atoi(e->d_name);
		if (pid <= 0)
			continue;
		char path[64], buf[512];
		snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
		FILE *f = fopen(path, "r");
		if (f == NULL)
			continue;
		int ppid = 0;
		char *cp = fgets(buf, sizeof(buf), f) ? strrchr(buf, ')') : NULL;
		fclose(f);
		if (cp == NULL || sscanf(cp + 2, "%*c %d", &ppid) != 1 || ppid != (int)getpid())
			continue;
		snprintf(path, sizeof(path), "/proc/%d/cmdline", (int)pid);
		f = fopen(path, "r");
		if (f == NULL)
			continue;
		size_t n = fread(buf, 1, sizeof(buf) - 1, f);
		fclose(f);
		buf[n] = 0;
		if (n > strlen(buf) + 1 && strcmp(buf + strlen(buf) + 1, EVALUATOR_ARG) == 0)
			found = pid;
	}
	if (d != NULL)
		closedir(d);
	return found;
}

static struct svc *open_svc_fb(const char *state, const char *backend, int in_process_fallback)
{
	struct svc_opts o = {.tasks_dir = TASKS, .state_dir = state, .in_process_fallback = in_process_fallback};
	snprintf(o.eval.backend, sizeof o.eval.backend, "%s", backend);
	o.eval.trials = 1;
	o.eval.warmup = -1;
	o.eval.quiet = 1;
	struct svc *s = NULL;
	char err[512] = "";
	if (svc_open(&o, on_notify, NULL, &s, err, sizeof(err)) != 0) {
		fprintf(stderr, "svc_open: %s\n", err);
		return NULL;
	}
	return s;
}

static struct svc *open_svc(const char *state, const char *backend)
{
	return open_svc_fb(state, backend, 0);
}

static void replace_with(struct svc *s, int t, const char *src)
{
	CHECK(svc_pass_replace(s, t, src, strlen(src)) == 0);
}

int main(int argc, char **argv)
{
	/* the service runs evaluations as fresh processes of this program;
	 * TEST_NOT_EVALUATOR: this program is no evaluator (as when a loader
	 * or wrapper ran passfs), it exits without a word */
	if (argc > 1 && strcmp(argv[1], EVALUATOR_ARG) == 0 && getenv("TEST_NOT_EVALUATOR") != NULL)
		return 3;
	int ev = evaluator_main_if(argc, argv);
	if (ev >= 0)
		return ev;
	char state[512];
	test_path(state, sizeof state, "passfs-test-service-XXXXXX");
	char hist[1200], sdir[1100];
	CHECK(mkdtemp(state) != NULL);
	snprintf(sdir, sizeof(sdir), "%s/%s", state, TASK);
	snprintf(hist, sizeof(hist), "%s/history", sdir);

	size_t ok_len = 0, ce_len = 0;
	char *ok_src = slurp("tests/passes/ok_fused.c", &ok_len);
	char *ce_src = slurp("tests/passes/compile_error.c", &ce_len);
	if (ok_src == NULL || ce_src == NULL) {
		fprintf(stderr, "run from the source tree: tests/passes/ not found\n");
		return 1;
	}
	char ok_sha[65];
	sha256_hex(ok_src, ok_len, ok_sha);

	struct svc *s = open_svc(state, "cpu");
	if (s == NULL)
		return 1;
	CHECK(svc_n_tasks(s) == 1);
	int t = svc_find(s, TASK);
	CHECK(t == 0);
	CHECK(svc_find(s, "nope") == -1);
	CHECK(strcmp(svc_state_dir(s), state) == 0);

	/* Before any evaluation: the template, idle. */
	char *tmpl = pass_template(svc_task(s, t));
	size_t tl = strlen(tmpl);
	char *buf = malloc(SVC_PASS_MAX + 16);
	CHECK(svc_pass_size(s, t) == tl);
	CHECK(svc_pass_read(s, t, buf, SVC_PASS_MAX, 0) == tl && memcmp(buf, tmpl, tl) == 0);
	CHECK(svc_pass_read(s, t, buf, 10, tl) == 0);
	CHECK(svc_state(s, t) == SVC_IDLE && !svc_busy(s, t));
	json_t *r = result(s, t);
	char tsha[65];
	sha256_hex(tmpl, tl, tsha);
	CHECK(r && strcmp(str(r, "state"), "idle") == 0 && num(r, "seq") == 0);
	CHECK(r && json_is_null(json_object_get(r, "verdict")) && json_is_null(json_object_get(r, "score")));
	CHECK(r && strcmp(str(r, "pass_sha256"), tsha) == 0);
	CHECK(r && strcmp(str(r, "task"), TASK) == 0);
	json_decref(r);
	size_t len;
	errno = 0;
	CHECK(es_empty(s, t));

	/* The cap, holes, truncate. */
	CHECK(svc_pass_write(s, t, "xy", 2, SVC_PASS_MAX - 1) == -EFBIG);
	CHECK(svc_pass_write(s, t, "x", 1, (uint64_t)SVC_PASS_MAX + 5) == -EFBIG);
	CHECK(svc_pass_truncate(s, t, (uint64_t)SVC_PASS_MAX + 1) == -EFBIG);
	CHECK(svc_pass_write(s, t, "x", 1, SVC_PASS_MAX - 1) == 0);
	CHECK(svc_pass_size(s, t) == SVC_PASS_MAX);
	CHECK(svc_pass_read(s, t, buf, 4, tl) == 4 && memcmp(buf, "\0\0\0\0", 4) == 0);
	CHECK(svc_pass_truncate(s, t, 3) == 0 && svc_pass_size(s, t) == 3);
	CHECK(svc_pass_truncate(s, t, 6) == 0 && svc_pass_read(s, t, buf, 16, 0) == 6 &&
	      memcmp(buf + 3, "\0\0\0", 3) == 0);
	CHECK(svc_pass_replace(s, t, buf, (size_t)SVC_PASS_MAX + 1) == -EFBIG);
	CHECK(svc_pass_write(s, t, "ab", 2, 1) == 0 && svc_pass_read(s, t, buf, 16, 0) == 6 &&
	      memcmp(buf + 1, "ab", 2) == 0);
	CHECK(svc_pass_write(s, t, "", 0, 100) == 0 && svc_pass_size(s, t) == 6);   /* no extension */
	struct stat dst;
	CHECK(stat(sdir, &dst) == 0 && (dst.st_mode & 0777) == 0700);
	CHECK(stat(hist, &dst) == 0 && (dst.st_mode & 0777) == 0700);
	int64_t sec;
	long nsec;
	svc_pass_mtime(s, t, &sec, &nsec);
	CHECK(sec > 1700000000 && nsec >= 0 && nsec < 1000000000);

	/* mark_pending at once; fire -> done. */
	uint64_t gen0 = svc_generation(s, t);
	replace_with(s, t, ok_src);
	CHECK(svc_generation(s, t) != gen0);
	svc_mark_pending(s, t);
	CHECK(svc_state(s, t) == SVC_PENDING && svc_busy(s, t));
	uint64_t seq = 0;
	CHECK(svc_fire(s, t, &seq) == 0 && seq == 1);
	CHECK(exists(sdir, "pass.c"));      /* durable before the evaluation */
	CHECK(wait_done(s, t, 120));
	CHECK(svc_evaluations(s) == 1);
	r = result(s, t);
	CHECK(r && num(r, "seq") == 1 && strcmp(str(r, "state"), "done") == 0);
	CHECK(r && RAN_VERDICT(r, "ok") && strcmp(str(r, "pass_sha256"), ok_sha) == 0);
	CHECK(r && json_object_get(r, "stale") == NULL && json_is_string(json_object_get(r, "time")));
	json_decref(r);
	char *es = svc_es_t(s, t, &len);
	CHECK(es && len == strlen(es) && es[len - 1] == '\n' && atof(es) > 0);
	free(es);
	CHECK(exists(hist, "000001.c") && exists(hist, "000001.json") && exists(sdir, "result.json"));
	CHECK(atomic_load(&notified) > 0);

	/* The same bytes again: answered from history, no evaluation. */
	double t0 = now_s();
	CHECK(svc_fire(s, t, &seq) == 0 && seq == 2);
	CHECK(svc_state(s, t) == SVC_DONE);
	CHECK(now_s() - t0 < 1.0);
	CHECK(svc_evaluations(s) == 1);
	r = result(s, t);
	CHECK(r && num(r, "seq") == 2 && num(r, "reused_from") == 1 && RAN_VERDICT(r, "ok"));
	CHECK(r && str(r, "scoring") && strncmp(str(r, "scoring"), "modeled_h200: ", 14) == 0);
	json_decref(r);
	CHECK(exists(hist, "000002.json"));

	/* Three fires in quick succession: B is replaced in the queue by C. */
	char *a = NULL, *b = NULL, *c = NULL;
	CHECK(asprintf(&a, "%s// a\n", ok_src) > 0 && asprintf(&b, "%s// b\n", ok_src) > 0 &&
	      asprintf(&c, "%s// c\n", ok_src) > 0);
	char c_sha[65];
	sha256_hex(c, strlen(c), c_sha);
	uint64_t evals0 = svc_evaluations(s), sa, sb, sc;
	replace_with(s, t, a);
	CHECK(svc_fire(s, t, &sa) == 0);
	/* A is on the worker before B comes (on a loaded machine the worker
	 * may wake late, and a queued A is rightly replaced by B). */
	for (int k = 0; k < 20000 && svc_state(s, t) == SVC_PENDING; k++)
		usleep(1000);
	CHECK(svc_state(s, t) == SVC_COMPILING || svc_state(s, t) == SVC_RUNNING);
	replace_with(s, t, b);
	CHECK(svc_fire(s, t, &sb) == 0);
	replace_with(s, t, c);
	CHECK(svc_fire(s, t, &sc) == 0);
	CHECK(sa == 3 && sb == 4 && sc == 5);
	CHECK(svc_state(s, t) == SVC_PENDING || svc_state(s, t) == SVC_COMPILING);
	r = result(s, t);   /* what an O_NONBLOCK reader sees: the older result, stale */
	CHECK(r && json_is_true(json_object_get(r, "stale")) && num(r, "seq") == 2);
	CHECK(r && num(r, "pending_seq") == 5 && strcmp(str(r, "state"), "done") != 0);
	/* it says so first, with when to read again, before the older verdict */
	CHECK_MSG(r && strcmp(first_keys(r, 8), "task seq state stale pending_seq stale_reason estimate pass_sha256") ==
			       0,
		  r ? first_keys(r, 8) : "");
	/* seq 2 was evaluated here: the estimate is from it */
	json_t *est = r ? json_object_get(r, "estimate") : NULL;
	CHECK_MSG(est && json_is_integer(json_object_get(est, "read_again_in_s")) &&
			  json_integer_value(json_object_get(est, "read_again_in_s")) >= 1 &&
			  strstr(json_string_value(json_object_get(est, "based_on")), "of this task took") != NULL,
		  est ? json_string_value(json_object_get(est, "based_on")) : "no estimate");
	CHECK_MSG(r && str(r, "stale_reason") && strstr(str(r, "stale_reason"), "the result of seq 2, an older "
		  "pass.c; the current pass.c (seq 5) is ") != NULL, r ? str(r, "stale_reason") : "");
	json_decref(r);
	errno = 0;
	CHECK(es_empty(s, t));
	CHECK(wait_done(s, t, 240));
	uint64_t d = svc_evaluations(s) - evals0;
	CHECK(d >= 1 && d <= 2);
	CHECK(!exists(hist, "000004.json"));
	r = result(s, t);
	CHECK(r && num(r, "seq") == 5 && strcmp(str(r, "pass_sha256"), c_sha) == 0);
	json_decref(r);

	/* A flush after the fire keeps the state pending until the next fire,
	 * even when the running evaluation finishes in between. */
	replace_with(s, t, a);
	CHECK(svc_fire(s, t, &seq) == 0 && seq == 6);   /* a was evaluated (or reused) */
	svc_mark_pending(s, t);
	CHECK(svc_state(s, t) == SVC_PENDING);
	usleep(100000);
	CHECK(svc_state(s, t) == SVC_PENDING && svc_busy(s, t));
	replace_with(s, t, c);
	CHECK(svc_fire(s, t, &seq) == 0 && seq == 7);
	CHECK(wait_done(s, t, 120));
	r = result(s, t);
	CHECK(r && num(r, "seq") == 7 && strcmp(str(r, "pass_sha256"), c_sha) == 0);
	json_decref(r);

	/* Unfired edits: the result stays, marked stale; es_t is withheld. */
	CHECK(svc_pass_write(s, t, "/", 1, strlen(c)) == 0);
	r = result(s, t);
	CHECK(r && json_is_true(json_object_get(r, "stale")) && strcmp(str(r, "state"), "done") == 0);
	CHECK_MSG(r && str(r, "stale_reason") && strstr(str(r, "stale_reason"), "pass.c was changed since") != NULL,
		  r ? str(r, "stale_reason") : "");
	json_decref(r);
	CHECK(es_empty(s, t));
	replace_with(s, t, c);

	/* summary.json */
	char *sum = svc_summary_json(s, &len);
	json_t *sj = sum ? json_loads(sum, 0, NULL) : NULL;
	CHECK(sj && num(sj, "evaluated") == 1 && json_is_number(json_object_get(sj, "aggregate")));
	CHECK(sj && json_array_size(json_object_get(sj, "tasks")) == 1);
	CHECK(sj && strcmp(str(json_array_get(json_object_get(sj, "tasks"), 0), "id"), TASK) == 0);
	json_decref(sj);
	free(sum);

	/* Restart: the same pass.c, result.json and es_t. */
	CHECK(svc_fire(s, t, &seq) == 0 && seq == 8 && svc_state(s, t) == SVC_DONE);  /* reused */
	char *before = svc_result_json(s, t, &len);
	char *es_before = svc_es_t(s, t, &len);
	svc_close(s);
	s = open_svc(state, "cpu");
	CHECK(s != NULL);
	if (s == NULL)
		return 1;
	CHECK(svc_pass_size(s, t) == strlen(c) && svc_pass_read(s, t, buf, SVC_PASS_MAX, 0) == strlen(c) &&
	      memcmp(buf, c, strlen(c)) == 0);
	char *after = svc_result_json(s, t, &len);
	char *es_after = svc_es_t(s, t, &len);
	CHECK(before && after && strcmp(before, after) == 0);
	CHECK(es_before && es_after && strcmp(es_before, es_after) == 0);
	CHECK(svc_state(s, t) == SVC_DONE && svc_evaluations(s) == 0);
	free(before);
	free(after);
	free(es_before);
	free(es_after);
	svc_close(s);

	/* A crash after pass.c was saved, before its result: fired again at open. */
	char staged[1300];
	snprintf(staged, sizeof(staged), "%s.pass.c", state);   /* this run's own, beside the state */
	FILE *f = fopen(staged, "w");
	CHECK(f && fwrite(ce_src, 1, ce_len, f) == ce_len);
	fclose(f);
	char cmd[8192];
	snprintf(cmd, sizeof(cmd), "mv %s %s/pass.c", staged, sdir);
	CHECK(system(cmd) == 0);
	s = open_svc(state, "cpu");
	CHECK(s != NULL);
	if (s == NULL)
		return 1;
	CHECK(wait_done(s, t, 120));
	char ce_sha[65];
	sha256_hex(ce_src, ce_len, ce_sha);
	r = result(s, t);
	CHECK(r && num(r, "seq") == 9 && strcmp(str(r, "pass_sha256"), ce_sha) == 0);
	CHECK(r && strcmp(str(r, "verdict"), "compile_error") == 0);
	json_decref(r);
	es = svc_es_t(s, t, &len);
	CHECK(es && strcmp(es, "0.100000\n") == 0);   /* a failed pass has a score: b */
	free(es);
	svc_close(s);

	/* History export: one line per history entry (all have verdicts here). */
	char exp_path[512];
	test_path(exp_path, sizeof exp_path, "passfs-test-service-exp-XXXXXX");
	int efd = mkstemp(exp_path);
	FILE *ef = fdopen(efd, "w+");
	char err[512] = "";
	int lines = svc_history_export(state, NULL, ef, err, sizeof(err));
	/* seqs 1,2,(3),5,6,7,8,9: 4 was replaced in the queue, and 3 too when
	 * it had not started before 4 came */
	int entries = 0;
	for (int k = 1; k <= 9; k++) {
		char name[32];
		snprintf(name, sizeof(name), "%06d.json", k);
		entries += exists(hist, name);
	}
	CHECK(entries == 7 || entries == 8);
	CHECK(lines == entries);
	rewind(ef);
	char *line = NULL;
	size_t cap = 0;
	int parsed = 0, with_src = 0;
	while (getline(&line, &cap, ef) > 0) {
		json_t *j = json_loads(line, 0, NULL);
		if (j)
			parsed++;
		if (j && str(j, "pass") && strstr(str(j, "pass"), "PASS_REPLACEMENT") && str(j, "time") &&
		    json_array_size(json_object_get(j, "variants")) == 6)
			with_src++;
		json_decref(j);
	}
	CHECK(parsed == entries && with_src == entries);
	free(line);
	fclose(ef);
	unlink(exp_path);
	CHECK(svc_history_export(state, "nope", stdout, err, sizeof(err)) == -1 && strstr(err, "nope"));

	/* No evaluation process can start (/proc/self/exe is no evaluator):
	 * the evaluation fails with the reason, never silently inside the
	 * daemon; with in_process_fallback it runs here, and says so. */
	setenv("TEST_NOT_EVALUATOR", "1", 1);
	for (int fb = 0; fb < 2; fb++) {
		char st3[512];
		test_path(st3, sizeof st3, "passfs-test-service3-XXXXXX");
		CHECK(mkdtemp(st3) != NULL);
		struct svc *s3 = open_svc_fb(st3, "cpu", fb);
		CHECK(s3 != NULL);
		if (s3 == NULL)
			break;
		replace_with(s3, t, ok_src);
		CHECK(svc_fire(s3, t, &seq) == 0);
		CHECK(wait_done(s3, t, 120));
		r = result(s3, t);
		if (fb == 0)
			CHECK(r && json_is_null(json_object_get(r, "verdict")) && str(r, "error") &&
			      strstr(str(r, "error"), "cannot start the evaluation process") &&
			      strstr(str(r, "error"), "--in-process-fallback"));
		else
			CHECK(r && str(r, "verdict") && strcmp(str(r, "verdict"), "ok") == 0 && str(r, "evaluated_in") &&
			      strstr(str(r, "evaluated_in"), "--in-process-fallback"));
		json_decref(r);
		svc_close(s3);
		char rmc[600];
		snprintf(rmc, sizeof(rmc), "rm -rf %s", st3);
		CHECK(system(rmc) == 0);
	}
	unsetenv("TEST_NOT_EVALUATOR");

	/* passfs cannot evaluate: no verdict, no score, an error; not reused. */
	char state2[512];
	test_path(state2, sizeof state2, "passfs-test-service2-XXXXXX");
	CHECK(mkdtemp(state2) != NULL);
	s = open_svc(state2, "no-such-backend");
	CHECK(s != NULL);
	if (s == NULL)
		return 1;
	replace_with(s, t, ok_src);
	CHECK(svc_fire(s, t, &seq) == 0 && seq == 1);
	CHECK(wait_done(s, t, 60));
	r = result(s, t);
	CHECK(r && json_is_null(json_object_get(r, "verdict")) && json_is_null(json_object_get(r, "score")));
	CHECK(r && str(r, "error") && strstr(str(r, "error"), "no-such-backend"));
	json_decref(r);
	CHECK(es_empty(s, t));
	CHECK(svc_fire(s, t, &seq) == 0 && seq == 2);
	CHECK(wait_done(s, t, 60));
	CHECK(svc_evaluations(s) == 2);

	/* A pass.c that cannot be saved (over RLIMIT_FSIZE here, a full disk
	 * in life) is not evaluated, and result.json says why - the writer's
	 * close() had returned long before the save. */
	struct rlimit fsz, small;
	getrlimit(RLIMIT_FSIZE, &fsz);
	small = fsz;
	small.rlim_cur = 64;
	signal(SIGXFSZ, SIG_IGN);
	uint64_t evals_before = svc_evaluations(s);
	replace_with(s, t, ok_src);     /* far over 64 bytes */
	CHECK(setrlimit(RLIMIT_FSIZE, &small) == 0);
	CHECK(svc_fire(s, t, &seq) != 0);
	CHECK(setrlimit(RLIMIT_FSIZE, &fsz) == 0);
	r = result(s, t);
	CHECK(r && str(r, "save_error") && strstr(str(r, "save_error"), "could not be saved") &&
	      strstr(str(r, "save_error"), "File too large") && json_is_true(json_object_get(r, "stale")));
	json_decref(r);
	CHECK(svc_evaluations(s) == evals_before && svc_state(s, t) != SVC_PENDING);
	/* saved again once there is room: evaluated, and the error is gone */
	replace_with(s, t, ce_src);
	CHECK(svc_fire(s, t, &seq) == 0);
	CHECK(wait_done(s, t, 60));
	r = result(s, t);
	CHECK(r && str(r, "save_error") == NULL && !json_is_true(json_object_get(r, "stale")));
	json_decref(r);

	/* Each evaluation is a child process of its own (engine/eval/evaluator.c);
	 * one that dies (here: SIGKILL while its pass spins) yields an error
	 * result naming that, and the next evaluation runs as usual. */
	svc_close(s);
	s = open_svc(state, "cpu");
	size_t spin_len = 0;
	char *spin = slurp("tests/passes/timeout_spin.c", &spin_len);
	CHECK(spin != NULL && s != NULL);
	if (spin != NULL && s != NULL) {
		replace_with(s, t, spin);
		CHECK(svc_fire(s, t, &seq) == 0);
		pid_t ev = 0;
		for (int k = 0; k < 3000 && ev == 0; k++) {
			ev = evaluator_child();
			if (ev == 0)
				usleep(10000);
		}
		CHECK(ev > 0);
		usleep(300000);
		CHECK(svc_busy(s, t));
		if (ev > 0)
			kill(ev, SIGKILL);
		CHECK(wait_done(s, t, 60));
		r = result(s, t);
		CHECK_MSG(r && json_is_null(json_object_get(r, "verdict")) && str(r, "error") &&
				  strstr(str(r, "error"), "the evaluation process was killed by signal 9") != NULL,
			  r && str(r, "error") ? str(r, "error") : "(no error)");
		json_decref(r);
		char *again = NULL;
		CHECK(asprintf(&again, "%s// again\n", ok_src) > 0);
		replace_with(s, t, again);
		CHECK(svc_fire(s, t, &seq) == 0);
		CHECK(wait_done(s, t, 120));
		r = result(s, t);
		CHECK(r && str(r, "verdict") && strcmp(str(r, "verdict"), "ok") == 0);
		json_decref(r);
		free(again);
		free(spin);
	}

	/* The same bytes are answered from a result only when it was scored
	 * the way this process scores (docs/history.md): on the cpu backend
	 * the modeled speedup, unless PASSFS_CPU_SPEEDUP=measured. */
	{
		uint64_t e0 = svc_evaluations(s), s1 = 0, s2 = 0;
		CHECK(svc_fire(s, t, &s1) == 0 && svc_state(s, t) == SVC_DONE);
		r = result(s, t);
		CHECK(r && num(r, "seq") == (long long)s1 && json_is_number(json_object_get(r, "reused_from")));
		CHECK(r && str(r, "scoring") && strncmp(str(r, "scoring"), "modeled_h200: ", 14) == 0);
		json_decref(r);
		CHECK(svc_evaluations(s) == e0);
		setenv("PASSFS_CPU_SPEEDUP", "measured", 1);
		CHECK(svc_fire(s, t, &s2) == 0 && s2 == s1 + 1);
		CHECK(wait_done(s, t, 120));
		CHECK(svc_evaluations(s) == e0 + 1);
		r = result(s, t);
		CHECK(r && num(r, "seq") == (long long)s2 && json_object_get(r, "reused_from") == NULL);
		CHECK(r && str(r, "scoring") && strcmp(str(r, "scoring"), "measured") == 0 && RAN_VERDICT(r, "ok"));
		json_decref(r);
		unsetenv("PASSFS_CPU_SPEEDUP");
	}
	svc_close(s);

	snprintf(cmd, sizeof(cmd), "rm -rf %s %s", state, state2);
	if (n_fail == 0 && system(cmd) != 0)
		fprintf(stderr, "cannot remove %s\n", state);
	free(a);
	free(b);
	free(c);
	free(buf);
	free(tmpl);
	free(ok_src);
	free(ce_src);
	printf("test_service: %d passed, %d failed\n", n_pass, n_fail);
	return n_fail ? 1 : 0;
}
