/* test_evaluator.c - one evaluation in a process of its own
 * through the evaluator interface's local implementation
 * (engine/eval/evaluator.c): this program is also the evaluator it starts
 * (evaluator_main_if first thing in main).  Checks a whole evaluation
 * through the socket (the result, its progress phases), a graph that does
 * not load, a cancel, an evaluation process that dies, and a program at
 * /proc/self/exe that is no evaluator (no evaluation, unless the in-process
 * fallback was asked for, which the result then names). */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "clock.h"
#include "eval_util.h"
#include "evaluator.h"
#include "file.h"
#include "graph.h"
#include "state.h"

#include "check.h"

#define GRAPH "tests/passes/tasks/tiny_bias_gelu/graph.json"

struct phases {
	char seen[128];
	int cancel_at_running;
	struct evaluator *ev;
};

static void on_phase(void *ctx, const char *phase)
{
	struct phases *p = ctx;
	snprintf(p->seen + strlen(p->seen), sizeof p->seen - strlen(p->seen), "%s%s", p->seen[0] ? " " : "", phase);
	if (p->cancel_at_running && strcmp(phase, "running") == 0)
		p->ev->ops->cancel(p->ev);
}

static char *slurp(const char *path, size_t *len)
{
	int e = 0;
	char *b = base_read_file(path, 1 << 24, len, &e);
	if (b == NULL)
		fprintf(stderr, "%s: %s (run from the source tree)\n", path, strerror(e));
	return b;
}

int main(int argc, char **argv)
{
	/* TEST_NOT_EVALUATOR=1: this program plays one that is not an
	 * evaluator (a loader or wrapper at /proc/self/exe): it exits without
	 * reading the request */
	if (argc > 1 && strcmp(argv[1], EVALUATOR_ARG) == 0 && getenv("TEST_NOT_EVALUATOR") != NULL)
		return 3;
	/* TEST_EVALUATOR_DIE=1: the evaluator dies once it has started */
	if (argc > 1 && strcmp(argv[1], EVALUATOR_ARG) == 0 && getenv("TEST_EVALUATOR_DIE") != NULL) {
		char c;
		(void)!read(3, &c, 1);
		raise(SIGKILL);
	}
	int as_evaluator = evaluator_main_if(argc, argv);
	if (as_evaluator >= 0)
		return as_evaluator;

	size_t glen = 0, plen = 0, slen = 0;
	char *graph = slurp(GRAPH, &glen), *pass = slurp("tests/passes/ok_fused.c", &plen);
	char *spin = slurp("tests/passes/timeout_spin.c", &slen);
	if (graph == NULL || pass == NULL || spin == NULL)
		return 1;
	char err[1024] = "";
	struct evaluator *ev = evaluator_local(0);
	CHECK(ev != NULL && strcmp(ev->ops->name, "local") == 0);
	if (ev == NULL)
		return 1;

	/* a whole evaluation: the result document and its phases */
	struct phases ph = {.ev = ev};
	struct eval_job job = {.graph_text = graph, .graph_len = glen, .graph_label = GRAPH, .pass_label = "pass.c",
			       .pass_src = pass, .pass_len = plen,
			       .opts = {.backend = "cpu", .trials = 2, .warmup = 1, .quiet = 1}};
	json_t *doc = NULL;
	int rc = ev->ops->run(ev, &job, on_phase, &ph, &doc, err, sizeof err);
	CHECK_MSG(rc == 0 && doc != NULL, err);
	const char *verdict = doc ? json_string_value(json_object_get(doc, "verdict")) : NULL;
	CHECK_MSG(verdict && strcmp(verdict, "ok") == 0, verdict ? verdict : "(none)");
	/* the options came along: 2 timed trials per variant */
	CHECK(doc && json_integer_value(json_object_get(json_array_get(json_object_get(doc, "variants"), 0), "trials")) ==
			     2);
	CHECK_MSG(strcmp(ph.seen, "compiling running") == 0, ph.seen);
	CHECK(doc && json_object_get(doc, "evaluated_in") == NULL);
	json_decref(doc);

	/* a graph that does not load is passfs's failure, named */
	job.graph_len = glen / 2;
	doc = NULL;
	rc = ev->ops->run(ev, &job, NULL, NULL, &doc, err, sizeof err);
	CHECK_MSG(rc == -1 && doc == NULL && strstr(err, GRAPH) != NULL, err);
	job.graph_len = glen;

	/* a compile error is a result too, not a failure */
	static const char broken[] = "#include <passfs.h>\nPASS_REPLACEMENT(pf_call *call) { return nope; }\n";
	job.pass_src = broken;
	job.pass_len = sizeof broken - 1;
	ph.seen[0] = '\0';
	rc = ev->ops->run(ev, &job, on_phase, &ph, &doc, err, sizeof err);
	verdict = rc == 0 && doc ? json_string_value(json_object_get(doc, "verdict")) : NULL;
	CHECK_MSG(verdict && strcmp(verdict, "compile_error") == 0, err);
	json_decref(doc);

	/* an evaluation process that dies: the caller says so */
	job.pass_src = pass;
	job.pass_len = plen;
	setenv("TEST_EVALUATOR_DIE", "1", 1);
	rc = ev->ops->run(ev, &job, NULL, NULL, &doc, err, sizeof err);
	unsetenv("TEST_EVALUATOR_DIE");
	CHECK_MSG(rc == -1 && strstr(err, "the evaluation process was killed by signal 9") != NULL, err);

	/* /proc/self/exe that is no evaluator: no evaluation, and none inside
	 * this process either unless asked */
	setenv("TEST_NOT_EVALUATOR", "1", 1);
	rc = ev->ops->run(ev, &job, NULL, NULL, &doc, err, sizeof err);
	CHECK_MSG(rc == -1 && strstr(err, "cannot start the evaluation process") != NULL &&
			  strstr(err, "exit status 3") != NULL && strstr(err, "--in-process-fallback") != NULL, err);
	/* asked (the operator's explicit choice): here, and the result says so */
	struct evaluator *fb = evaluator_local(1);
	doc = NULL;
	rc = fb ? fb->ops->run(fb, &job, NULL, NULL, &doc, err, sizeof err) : -1;
	unsetenv("TEST_NOT_EVALUATOR");
	verdict = rc == 0 && doc ? json_string_value(json_object_get(doc, "verdict")) : NULL;
	CHECK_MSG(verdict && strcmp(verdict, "ok") == 0 && json_object_get(doc, "evaluated_in") != NULL, err);
	json_decref(doc);
	if (fb)
		fb->ops->destroy(fb);

	/* a setting of the evaluation process's own (a broker worker's GPU pin)
	 * replaces the caller's variable of that name there, not here */
	setenv("PASSFS_CPU_THREADS", "2", 1);
	struct evaluator *pin = evaluator_local_env(0, "PASSFS_CPU_THREADS=1");
	CHECK(evaluator_local_env(0, "no equals sign") == NULL);
	doc = NULL;
	rc = pin ? pin->ops->run(pin, &job, NULL, NULL, &doc, err, sizeof err) : -1;
	const char *dev = rc == 0 && doc ? json_string_value(json_object_get(doc, "device")) : NULL;
	CHECK_MSG(dev && strstr(dev, "(1 thread,") != NULL, dev ? dev : err);
	json_decref(doc);
	doc = NULL;
	rc = ev->ops->run(ev, &job, NULL, NULL, &doc, err, sizeof err);
	dev = rc == 0 && doc ? json_string_value(json_object_get(doc, "device")) : NULL;
	CHECK_MSG(dev && strstr(dev, "(2 threads,") != NULL, dev ? dev : err);
	json_decref(doc);
	CHECK(strcmp(getenv("PASSFS_CPU_THREADS"), "2") == 0);
	unsetenv("PASSFS_CPU_THREADS");
	if (pin)
		pin->ops->destroy(pin);

	/* cancel once it runs: a 'C' message, then no result, "cancelled",
	 * and soon (the pass spins for the 20 s step limit otherwise) */
	job.pass_src = spin;
	job.pass_len = slen;
	ph.seen[0] = '\0';
	ph.cancel_at_running = 1;
	double t0 = base_now_ms();
	doc = NULL;
	rc = ev->ops->run(ev, &job, on_phase, &ph, &doc, err, sizeof err);
	double ms = base_now_ms() - t0;
	CHECK_MSG(rc == -1 && doc == NULL && strstr(err, "cancelled") != NULL, err);
	CHECK(ms < 15000);
	/* and every later run: at once, no process */
	t0 = base_now_ms();
	rc = ev->ops->run(ev, &job, NULL, NULL, &doc, err, sizeof err);
	CHECK_MSG(rc == -1 && strcmp(err, "cancelled") == 0 && base_now_ms() - t0 < 100, err);
	ev->ops->destroy(ev);

	free(graph);
	free(pass);
	free(spin);
	printf("test_evaluator: %d passed, %d failed\n", n_pass, n_fail);
	return n_fail ? 1 : 0;
}
