/* watch.h - `passfs watch`: the task tree as plain files, driven by inotify.
 *
 * For sandboxes without /dev/fuse.  DIR gets the same tree as the mount
 * (fs/tree.c's rows: README.md, summary.json, <id>/{README.md, graph.json,
 * pass.c, result.json, es_t, status}); a close-after-write of <id>/pass.c or a rename
 * onto it fires an evaluation; every computed file is replaced whole (temp
 * file + rename) when the service reports a change, result.json and es_t
 * before status, so a reader that sees "done" finds the result in place.
 * Nothing is read-only and no read waits (docs/watch.md). */
#ifndef PASSFS_FS_WATCH_H
#define PASSFS_FS_WATCH_H

#include <stddef.h>

#include "service.h"

struct watch_opts {
	const char *dir;            /* the tree; created when missing */
	struct svc_opts svc;        /* tasks, state, evaluation options */
	int quiet;                  /* no start banner and no per-save lines */
};

/* Runs until SIGINT or SIGTERM (blocked in the calling thread and in the
 * service's threads; taken through a signalfd), then stops the service
 * cleanly.  Returns 0, or -1 with a message when it cannot start (the
 * service does not open, DIR cannot be created, inotify fails). */
int watch_run(const struct watch_opts *o, char *err, size_t errlen);

#endif
