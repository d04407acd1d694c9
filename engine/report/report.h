/* report.h - `passfs report` and the tree's report.html: the tasks' results
 * as one self-contained HTML page for people (docs/report.md).
 *
 * Two steps.  report_gather reads what the page shows from a state
 * directory (docs/service.md): each task's latest result.json and, from its
 * history, one point per evaluation.  report_html renders a summary (the
 * shape of summary.json: tasks with state, verdict, score and seq, the
 * aggregates, b) and the gathered data into HTML with inline SVG: no
 * script, no network, no file beside it.  The page is a pure function of
 * its input (no clock is read), so the same state gives the same bytes. */
#ifndef PASSFS_REPORT_H
#define PASSFS_REPORT_H

#include <jansson.h>
#include <stddef.h>

/* {"tasks": [{"id", "result": <result.json> | null, "result_error": "..."
 * (only when result.json is there but unreadable), "history": [{"seq",
 * "time", "verdict", "score", "rerun", "reused_from"}, ...] in seq order,
 * "history_skipped": N (entries that could not be read)}]}, one per id, in
 * the order given.  A task without a directory in the state directory has
 * a null result and an empty history.  NULL with err only when the state
 * directory itself cannot be read (missing or not a directory). */
struct report_cache;
json_t *report_gather(const char *state_dir, const char *const *ids, int n, struct report_cache *cache, char *err,
		      size_t errlen);

/* History entries are never rewritten (engine/service/state.h): a daemon
 * that serves the page keeps each entry's point once read, so a page after
 * a new evaluation reads that one entry, not the whole history again.
 * report_gather takes NULL for none; a cache may be shared by threads. */
struct report_cache *report_cache_new(void);
void report_cache_free(struct report_cache *c);

/* The summary.json a service would show for the gathered tasks when idle
 * (engine/service/service.c, svc_summary_json): state "done" for a task
 * with a result, else "idle"; the aggregates over the scores of the
 * results, unevaluated tasks counted as b in aggregate_all. */
json_t *report_summary(const json_t *gathered, double b);

/* The page.  summary: summary.json's document; gathered: report_gather's;
 * source: what the page says it was made from (the state directory).
 * malloc'd, NUL-terminated; NULL when out of memory. */
char *report_html(const json_t *summary, const json_t *gathered, const char *source, size_t *len);

/* PassBench's published rows the aggregate is shown against (the PassNet
 * paper's table, an A30 GPU, b = 0.1). */
struct report_ref {
	const char *name;
	double aggregate;
};
extern const struct report_ref report_passbench[];
extern const int report_n_passbench;

#endif
