/* tree.c - the files of the task tree (see tree.h). */
#define _GNU_SOURCE
#include "tree.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>

#include "datadir.h"
#include "readme.h"
#include "service.h"
#include "file.h"
#include "graph.h"
#include "report.h"
#include "state.h"

/* ---- producers ------------------------------------------------------------------ */

static char *text_task_readme(const struct tree_src *src, int task, size_t *len)
{
	return readme_task(svc_task(src->svc, task), src->mode, len);
}

static char *text_graph(const struct tree_src *src, int task, size_t *len)
{
	char path[PATH_MAX];
	int err = 0;
	snprintf(path, sizeof(path), "%s/%s/graph.json", src->tasks_dir, svc_task(src->svc, task)->id);
	char *s = base_read_file(path, PF_CAP_GRAPH_JSON, len, &err);
	if (s == NULL)
		errno = err ? err : EIO;
	return s;
}

static char *text_pass(const struct tree_src *src, int task, size_t *len)
{
	size_t n = svc_pass_size(src->svc, task);
	char *b = malloc(n + 1);
	if (b == NULL)
		return NULL;
	*len = svc_pass_read(src->svc, task, b, n, 0);
	return b;
}

static char *text_result(const struct tree_src *src, int task, size_t *len)
{
	return svc_result_json(src->svc, task, len);
}

static char *text_es_t(const struct tree_src *src, int task, size_t *len)
{
	return svc_es_t(src->svc, task, len);
}

static char *text_check(const struct tree_src *src, int task, size_t *len)
{
	return svc_check_json(src->svc, task, len);
}

static char *text_status(const struct tree_src *src, int task, size_t *len)
{
	char *s = NULL;
	int n = asprintf(&s, "%s\n", svc_state_name(svc_state(src->svc, task)));
	if (n < 0)
		return NULL;
	*len = (size_t)n;
	return s;
}

static char *text_root_readme(const struct tree_src *src, int task, size_t *len)
{
	(void)task;
	int n = svc_n_tasks(src->svc);
	const struct graph_task **tasks = calloc((size_t)(n > 0 ? n : 1), sizeof(*tasks));
	if (tasks == NULL)
		return NULL;
	for (int i = 0; i < n; i++)
		tasks[i] = svc_task(src->svc, i);
	char *s = readme_root(tasks, n, src->mode, src->wait_timeout_s, src->b, len);
	free(tasks);
	return s;
}

static char *text_summary(const struct tree_src *src, int task, size_t *len)
{
	(void)task;
	return svc_summary_json(src->svc, len);
}

/* The report page (engine/report/report.h): the service's summary (the
 * tasks' live states) and, from the state directory, each task's latest
 * result and history.  The same bytes `passfs report` writes from that
 * state directory while the service is idle. */
static char *text_report(const struct tree_src *src, int task, size_t *len)
{
	(void)task;
	int n = svc_n_tasks(src->svc);
	const char **ids = calloc((size_t)(n > 0 ? n : 1), sizeof(*ids));
	size_t sl = 0;
	char *sum_text = svc_summary_json(src->svc, &sl);
	json_t *sum = sum_text ? json_loadb(sum_text, sl, 0, NULL) : NULL;
	free(sum_text);
	char err[512], real[PATH_MAX];
	const char *state = svc_state_dir(src->svc);
	if (realpath(state, real) != NULL)
		state = real;
	json_t *g = NULL;
	if (ids && sum) {
		for (int i = 0; i < n; i++)
			ids[i] = svc_task(src->svc, i)->id;
		g = report_gather(state, ids, n, src->report, err, sizeof(err));
	}
	char *s = g ? report_html(sum, g, state, len) : NULL;
	json_decref(g);
	json_decref(sum);
	free(ids);
	if (s == NULL)
		errno = EIO;
	return s;
}

/* The manuals: docs/<name> of passfs's docs directory (tree.h). */
static char *doc_text(const char *name, size_t *len)
{
	char path[PATH_MAX];
	int err = 0;
	snprintf(path, sizeof(path), "%s/%s", datadir_get(DATADIR_DOCS), name);
	char *s = base_read_file(path, (size_t)4 << 20, len, &err);
	if (s == NULL)
		errno = err ? err : EIO;
	return s;
}

#define DOC_PRODUCER(fn, file)                                                       \
	static char *fn(const struct tree_src *src, int task, size_t *len)           \
	{                                                                            \
		(void)src;                                                           \
		(void)task;                                                          \
		return doc_text(file, len);                                          \
	}
DOC_PRODUCER(text_doc_pass_api, "pass-api.md")
DOC_PRODUCER(text_doc_scoring, "scoring.md")
DOC_PRODUCER(text_doc_result, "result-format.md")
DOC_PRODUCER(text_doc_backends, "backends.md")
DOC_PRODUCER(text_doc_eager, "eager.md")
DOC_PRODUCER(text_doc_mount, "mount.md")
DOC_PRODUCER(text_doc_watch, "watch.md")

/* ---- the tables ----------------------------------------------------------------- */

const struct tree_row tree_task_rows[TREE_NTASK] = {
	[TREE_README] = {"README.md", TREE_FIXED, 0444, 0, TREE_WATCH_ONCE, text_task_readme,
			 "the task: its graph per variant, the `pf_in`/`pf_out` order with shapes and dtypes, the rules"},
	[TREE_GRAPH] = {"graph.json", TREE_FIXED, 0444, 0, TREE_WATCH_ONCE, text_graph,
			"the same graph as data (read-only)"},
	[TREE_PASS_C] = {"pass.c", TREE_PASS, 0644, 0, TREE_WATCH_SEED, text_pass,
			 "your pass (writable; at first a template that answers \"not implemented\")"},
	[TREE_RESULT] = {"result.json", TREE_COMPUTED, 0444, TREE_WAIT_EVAL, TREE_WATCH_REFRESH, text_result,
			 "the latest result: `state`, `verdict`, `message`, `score`, per-variant `speedup` and `min_t`, the compile log"},
	[TREE_ES_T] = {"es_t", TREE_COMPUTED, 0444, TREE_WAIT_EVAL, TREE_WATCH_REFRESH, text_es_t,
		       "the score of the current pass.c, one number; an empty file until an evaluation of it is done"},
	[TREE_CHECK_JSON] = {"check.json", TREE_COMPUTED, 0444, TREE_WAIT_CHECK, TREE_WATCH_REFRESH, text_check,
			     "the latest check of `<task>/check.c` (write it like `pass.c`: compiled and run on every variant's public and secret inputs, nothing timed, in about a second; never touches `pass.c`'s results): `state`, `worst`, `message`, per-variant `verdict` and `min_t`, `compile_log`"},
	/* last of the refreshed rows: a reader that sees "done" finds the rest in place */
	[TREE_STATUS] = {"status", TREE_COMPUTED, 0444, 0, TREE_WATCH_REFRESH, text_status,
			 "one word, never waits: `idle`, `pending`, `compiling`, `running`, `done`"},
};

const struct tree_row tree_root_rows[TREE_NROOT] = {
	[TREE_ROOT_README] = {"README.md", TREE_FIXED, 0444, 0, TREE_WATCH_ONCE, text_root_readme,
			      "this manual"},
	[TREE_ROOT_SUMMARY] = {"summary.json", TREE_COMPUTED, 0444, 0, TREE_WATCH_REFRESH, text_summary,
			       "every task's state, verdict, score and seq; `aggregate` = geometric mean of the scores of the evaluated tasks, `aggregate_all` = the same with every unevaluated task counted as %g"},
	[TREE_ROOT_REPORT] = {"report.html", TREE_COMPUTED, 0444, 0, TREE_WATCH_REFRESH, text_report,
			      "the results as one page for people (open it in a browser): the aggregate beside PassBench's, each task's ES_t curve, per-variant speedups and trajectory (docs/report.md)"},
};

const struct tree_row tree_doc_rows[TREE_NDOC] = {
	[TREE_DOC_PASS_API] = {"pass-api.md", TREE_FIXED, 0444, 0, TREE_WATCH_ONCE, text_doc_pass_api,
			       "the pass API in full: `pf_in`/`pf_out`, `pf_launch`, what a pass may call, a worked example"},
	[TREE_DOC_SCORING] = {"scoring.md", TREE_FIXED, 0444, 0, TREE_WATCH_ONCE, text_doc_scoring,
			      "how a score is made: the atol/rtol of each dtype at each level t, the weights, ES_t"},
	[TREE_DOC_RESULT] = {"result-format.md", TREE_FIXED, 0444, 0, TREE_WATCH_ONCE, text_doc_result,
			     "every field of `result.json`"},
	[TREE_DOC_BACKENDS] = {"backends.md", TREE_FIXED, 0444, 0, TREE_WATCH_ONCE, text_doc_backends,
			       "the cpu and cuda backends, the compile pipeline, what the timings measure"},
	[TREE_DOC_EAGER] = {"eager.md", TREE_FIXED, 0444, 0, TREE_WATCH_ONCE, text_doc_eager,
			    "the eager baseline a pass is timed against: its op library, per-op kernels, libraries per backend"},
	[TREE_DOC_MOUNT] = {"mount.md", TREE_FIXED, 0444, 0, TREE_WATCH_ONCE, text_doc_mount,
			    "the mounted tree: its files, when evaluations fire, waiting reads"},
	[TREE_DOC_WATCH] = {"watch.md", TREE_FIXED, 0444, 0, TREE_WATCH_ONCE, text_doc_watch,
			    "watch mode: the same tree as plain files"},
};
