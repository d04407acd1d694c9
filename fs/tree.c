/* tree.c - the files of the task tree (see tree.h). */
#define _GNU_SOURCE
#include "tree.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>

#include "readme.h"
#include "service.h"
#include "file.h"
#include "graph.h"
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

/* ---- the tables ----------------------------------------------------------------- */

const struct tree_row tree_task_rows[TREE_NTASK] = {
	[TREE_README] = {"README.md", TREE_FIXED, 0444, 0, TREE_WATCH_ONCE, text_task_readme,
			 "the task: its graph per variant, the `pf_in`/`pf_out` order with shapes and dtypes, the rules"},
	[TREE_GRAPH] = {"graph.json", TREE_FIXED, 0444, 0, TREE_WATCH_ONCE, text_graph,
			"the same graph as data (read-only)"},
	[TREE_PASS_C] = {"pass.c", TREE_PASS, 0644, 0, TREE_WATCH_SEED, text_pass,
			 "your pass (writable; at first a template that answers \"not implemented\")"},
	[TREE_RESULT] = {"result.json", TREE_COMPUTED, 0444, 1, TREE_WATCH_REFRESH, text_result,
			 "the latest result: `state`, `verdict`, `message`, `score`, per-variant `speedup` and `min_t`, the compile log"},
	[TREE_ES_T] = {"es_t", TREE_COMPUTED, 0444, 1, TREE_WATCH_REFRESH, text_es_t,
		       "the score of the current pass.c, one number; an empty file until an evaluation of it is done"},
	/* last of the refreshed rows: a reader that sees "done" finds the rest in place */
	[TREE_STATUS] = {"status", TREE_COMPUTED, 0444, 0, TREE_WATCH_REFRESH, text_status,
			 "one word, never waits: `idle`, `pending`, `compiling`, `running`, `done`"},
};

const struct tree_row tree_root_rows[TREE_NROOT] = {
	[TREE_ROOT_README] = {"README.md", TREE_FIXED, 0444, 0, TREE_WATCH_ONCE, text_root_readme,
			      "this manual"},
	[TREE_ROOT_SUMMARY] = {"summary.json", TREE_COMPUTED, 0444, 0, TREE_WATCH_REFRESH, text_summary,
			       "every task's state, verdict, score and seq; `aggregate` = geometric mean of the scores of the evaluated tasks, `aggregate_all` = the same with every unevaluated task counted as %g"},
};
