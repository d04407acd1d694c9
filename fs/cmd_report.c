/* cmd_report.c - `passfs report`: the state directory's results as one HTML
 * page (engine/report/report.h, docs/report.md); no running service needed. */
#define _GNU_SOURCE
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cmd.h"
#include "file.h"
#include "report.h"
#include "score.h"
#include "service.h"
#include "state.h"
#include "task.h"
#include "strbuf.h"

static void usage(FILE *f)
{
	fprintf(f,
		"usage: passfs report [--state DIR] [--tasks DIR] [--out FILE.html]\n\n"
		"Writes the results kept in a state directory as one self-contained HTML page\n"
		"(inline SVG, no script, nothing fetched): the aggregate beside PassBench's\n"
		"published rows, every task's verdict and score, and per task its ES_t curve,\n"
		"per-variant speedups (scored, modeled and measured) and its trajectory over\n"
		"the history.  A running mount serves the same page as MOUNT/report.html.\n"
		"docs/report.md describes it.\n\n"
		"  --state DIR   state directory (default: $XDG_STATE_HOME/passfs, else\n"
		"                ~/.local/state/passfs)\n"
		"  --tasks DIR   the tasks to list (default: $PASSFS_TASKS, else the bundled\n"
		"                tasks); tasks with results in the state directory are listed\n"
		"                too\n"
		"  --out FILE    where to write (default: report.html; '-' for standard\n"
		"                output); replaced whole when done\n");
}

static int has_entry(char **ids, int n, const char *id)
{
	for (int i = 0; i < n; i++)
		if (strcmp(ids[i], id) == 0)
			return 1;
	return 0;
}

/* Adds the state directory's task directories (state_task_ids) that hold
 * a result or a history. */
static int add_state_tasks(const char *state, char ***ids, int *n)
{
	char **sids;
	int ns, rc = 0;
	if (state_task_ids(state, &sids, &ns) != 0)
		return 0;       /* report_gather names an unreadable state directory */
	for (int k = 0; rc == 0 && k < ns; k++) {
		char p1[PATH_MAX], p2[PATH_MAX];
		struct stat st;
		if (has_entry(*ids, *n, sids[k]) ||
		    snprintf(p1, sizeof(p1), "%s/%s/result.json", state, sids[k]) >= (int)sizeof(p1) ||
		    snprintf(p2, sizeof(p2), "%s/%s/history", state, sids[k]) >= (int)sizeof(p2) ||
		    (stat(p1, &st) != 0 && stat(p2, &st) != 0))
			continue;
		char **grown = realloc(*ids, sizeof(char *) * (size_t)(*n + 1));
		if (grown == NULL) {
			rc = -1;
			break;
		}
		*ids = grown;
		(*ids)[(*n)++] = sids[k];
		sids[k] = NULL;
	}
	for (int k = 0; k < ns; k++)
		free(sids[k]);
	free(sids);
	return rc;
}

int cmd_report(int argc, char **argv)
{
	static const struct option opts[] = {{"state", required_argument, NULL, 's'},
					     {"tasks", required_argument, NULL, 't'},
					     {"out", required_argument, NULL, 'o'},
					     {"help", no_argument, NULL, 'h'},
					     {NULL, 0, NULL, 0}};
	const char *state = NULL, *tasks = NULL, *out = "report.html";
	char defdir[PATH_MAX], err[1024] = "";
	int c;
	optind = 1;
	while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
		switch (c) {
		case 's': state = optarg; break;
		case 't': tasks = optarg; break;
		case 'o': out = optarg; break;
		case 'h': usage(stdout); return 0;
		default: usage(stderr); return 2;
		}
	}
	if (optind < argc) {
		fprintf(stderr, "passfs report: unexpected argument '%s' (try 'passfs report --help')\n", argv[optind]);
		return 2;
	}
	if (state == NULL)
		state = svc_default_state_dir(defdir, sizeof(defdir));
	char real[PATH_MAX];
	if (realpath(state, real) == NULL) {
		fprintf(stderr, "passfs report: state directory %s: %s\n", state, strerror(errno));
		return 1;
	}
	char **ids = NULL;
	int n = 0;
	if (task_scan(tasks ? tasks : cmd_default_tasks_dir(), &ids, &n, err, sizeof(err)) != 0) {
		/* the default tasks directory may be absent where passfs is not installed whole */
		if (tasks) {
			fprintf(stderr, "passfs report: %s\n", err);
			return 1;
		}
		ids = NULL;
		n = 0;
	}
	if (add_state_tasks(real, &ids, &n) != 0) {
		fprintf(stderr, "passfs report: out of memory\n");
		task_ids_free(ids, n);
		return 1;
	}
	qsort(ids, (size_t)n, sizeof(char *), base_strptr_cmp);
	json_t *g = report_gather(real, (const char *const *)ids, n, NULL, err, sizeof(err));
	task_ids_free(ids, n);
	if (g == NULL) {
		fprintf(stderr, "passfs report: %s\n", err);
		return 1;
	}
	/* b as the results were scored with (docs/scoring.md), else the default */
	double b = SCORE_DEFAULT_B;
	json_t *gt = json_object_get(g, "tasks");
	for (size_t i = 0; i < json_array_size(gt); i++) {
		json_t *bv = json_object_get(json_object_get(json_array_get(gt, i), "result"), "b");
		if (json_is_number(bv) && json_number_value(bv) > 0) {
			b = json_number_value(bv);
			break;
		}
	}
	json_t *sum = report_summary(g, b);
	size_t len = 0;
	char *html = sum ? report_html(sum, g, real, &len) : NULL;
	json_decref(sum);
	json_decref(g);
	if (html == NULL) {
		fprintf(stderr, "passfs report: out of memory\n");
		return 1;
	}
	int rc = 0;
	if (strcmp(out, "-") == 0) {
		if (fwrite(html, 1, len, stdout) != len || fflush(stdout) != 0) {
			fprintf(stderr, "passfs report: standard output: %s\n", strerror(errno));
			rc = 1;
		}
	} else {
		int e = base_write_atomic(out, "", html, len, 0666, 0);
		if (e != 0) {
			fprintf(stderr, "passfs report: %s: %s\n", out, strerror(-e));
			rc = 1;
		} else {
			fprintf(stderr, "passfs report: %s written (%zu bytes)\n", out, len);
		}
	}
	free(html);
	return rc;
}
