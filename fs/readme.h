/* readme.h - the README.md texts of the task tree (mount and watch).
 *
 * The root README.md is the whole manual for an agent that has never seen
 * passfs: the loop, every file, the pass API with a complete example,
 * scoring, verdicts and rules, and the task list.  A task's README.md is the
 * task in readable form: its graph per variant, the pf_in/pf_out order with
 * shapes and dtypes, the variants, the rules.
 *
 * The texts are fixed for the life of a service (they depend only on the
 * tasks and the mode), so front ends build them once and serve the bytes. */
#ifndef PASSFS_FS_README_H
#define PASSFS_FS_README_H

#include <stddef.h>

#include "graph.h"

enum readme_mode {
	README_MOUNT,   /* passfs mount: read-only files are enforced, reads block */
	README_WATCH,   /* passfs watch: plain files, nothing enforced, reads never block */
};

/* The root README.md for these tasks: malloc'd, *len set; NULL when out of
 * memory.  wait_timeout_s is the mount's --wait-timeout (ignored in watch
 * mode); b the ES_t failure value in use (0: the default 0.1). */
char *readme_root(const struct graph_task *const *tasks, int n_tasks, enum readme_mode mode,
		  double wait_timeout_s, double b, size_t *len);

/* The task's README.md: malloc'd, *len set; NULL when out of memory. */
char *readme_task(const struct graph_task *t, enum readme_mode mode, size_t *len);

#endif
