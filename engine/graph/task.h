/* task.h - a tasks directory: one subdirectory per task, named by its id,
 * holding graph.json. */
#ifndef PASSFS_TASK_H
#define PASSFS_TASK_H

#include <stddef.h>
#include "graph.h"

/* Lists the task ids under dir (subdirectories with a graph.json), sorted.
 * Returns 0 and a malloc'd array of malloc'd strings in *ids (free with
 * task_ids_free), or -1 with a message naming dir in err. */
int task_scan(const char *dir, char ***ids, int *n, char *err, size_t errlen);
void task_ids_free(char **ids, int n);

/* Loads dir/id/graph.json and checks that its "id" field is the directory
 * name.  Returns 0 with *out set (graph_task_free), or -1 with a message. */
int task_load(const char *dir, const char *id, struct graph_task **out, char *err, size_t errlen);

/* Same, also returning the bytes it parsed (malloc'd, *text_len long) and
 * the file's path (malloc'd), for a process that parses them again. */
int task_load_text(const char *dir, const char *id, struct graph_task **out, char **text, size_t *text_len,
		   char **path_out, char *err, size_t errlen);

#endif
