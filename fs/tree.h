/* tree.h - the files of the task tree, one table for every front end.
 *
 * tree_task_rows[] lists the files of a task directory and tree_root_rows[]
 * those of the root: name, kind, mode, the text's producer, what watch mode
 * does with the file, and the line the root README's file table gives it.
 * fs/mount.c serves these rows (inode numbers, lookup, readdir, getattr,
 * read), fs/watch.c writes them into its directory, and fs/readme.c lists
 * them; tree_doc_rows[] are the manuals in the root's docs/ directory.
 * Adding a file to every task directory is one enum entry here and one
 * row (with its producer) in fs/tree.c (docs/testing.md, "Adding a task
 * file"). */
#ifndef PASSFS_FS_TREE_H
#define PASSFS_FS_TREE_H

#include <stddef.h>
#include <sys/types.h>

#include "readme.h"

struct svc;

/* What a producer may read: the service and the options of the front end. */
struct tree_src {
	struct svc *svc;
	const char *tasks_dir;          /* the tasks directory the service loaded */
	enum readme_mode mode;          /* which README texts */
	double wait_timeout_s;          /* the mount's --wait-timeout (root README) */
	double b;                       /* the ES_t failure value in use (0: default) */
	struct report_cache *report;    /* report.html's history points (engine/report/report.h; NULL: none) */
};

/* The text of a file of task `task` (ignored by root rows): malloc'd, *len
 * set, or NULL with errno set (ENOMEM, or why it cannot be read). */
typedef char *(*tree_text_fn)(const struct tree_src *src, int task, size_t *len);

enum tree_kind {
	TREE_FIXED,     /* read-only, fixed for the life of the service (README.md, graph.json) */
	TREE_COMPUTED,  /* read-only, changes with the service's generation (result.json) */
	TREE_PASS,      /* the writable pass; its producer gives the current bytes */
};

/* What a waiting row's opens wait for (mount). */
enum { TREE_WAIT_NONE, TREE_WAIT_EVAL, TREE_WAIT_CHECK };

enum tree_watch {
	TREE_WATCH_NONE,        /* watch mode does not write it */
	TREE_WATCH_ONCE,        /* written at start */
	TREE_WATCH_SEED,        /* written at start when missing (then the user's) */
	TREE_WATCH_REFRESH,     /* rewritten whenever the generation moves, in row order */
};

struct tree_row {
	const char *name;
	enum tree_kind kind;
	mode_t mode;                    /* permission bits (mount's stat, watch's files) */
	int waits;                      /* mount: opens wait while the task is busy (TREE_WAIT_*) */
	enum tree_watch watch;
	tree_text_fn text;
	/* The root README's "The files" table cell: a printf format given the
	 * ES_t failure value b (a double) for %g. */
	const char *what;
};

/* The files of a task directory, in listing order (and inode order in the
 * mount: the directory, then one inode per row). */
enum {
	TREE_README,
	TREE_GRAPH,
	TREE_PASS_C,
	TREE_RESULT,
	TREE_ES_T,
	TREE_CHECK_JSON,
	TREE_STATUS,
	TREE_NTASK
};
extern const struct tree_row tree_task_rows[TREE_NTASK];

/* Not a row: a file of this name written in a task directory (in the mount
 * a scratch file, in watch mode a plain one) is checked - compiled and run
 * on every variant's public and secret inputs, nothing timed - into
 * TREE_CHECK_JSON (engine/service/checks.c, docs/mount.md). */
#define TREE_CHECK_SOURCE "check.c"
/* Not a row either: a save of a file of this name in a task directory
 * (anything written to it; in the mount a scratch file) evaluates the
 * current pass.c again, even bytes evaluated before (svc_rerun,
 * docs/mount.md, "When an evaluation fires"). */
#define TREE_RERUN_TRIGGER "rerun"

/* The files of the root, listed before the task directories. */
enum { TREE_ROOT_README, TREE_ROOT_SUMMARY, TREE_ROOT_REPORT, TREE_NROOT };
extern const struct tree_row tree_root_rows[TREE_NROOT];

/* The manuals, read-only in the directory TREE_DOCS_DIR of the root: the
 * bytes of the files of the same names in passfs's docs/ (gpu/datadir.h:
 * the source tree's docs/ for a build-tree binary, <prefix>/share/passfs/docs
 * installed), read once at start. */
#define TREE_DOCS_DIR "docs"
enum { TREE_DOC_PASS_API, TREE_DOC_SCORING, TREE_DOC_RESULT, TREE_DOC_BACKENDS, TREE_DOC_EAGER, TREE_DOC_MOUNT, TREE_DOC_WATCH,
       TREE_NDOC };
extern const struct tree_row tree_doc_rows[TREE_NDOC];

/* Mount inode numbers: 1 the root, 2.. the root's files, then the docs'
 * files and the docs directory, and from
 * TREE_INO_TASK0 one block of TREE_INO_STRIDE per task (the directory, then
 * one per row). */
#define TREE_INO_TASK0 16
#define TREE_INO_STRIDE 8
_Static_assert(TREE_NTASK + 1 <= TREE_INO_STRIDE, "a task's rows outgrow its inode block");
_Static_assert(2 + TREE_NROOT + TREE_NDOC + 1 <= TREE_INO_TASK0, "the root's rows run into the first task");

#endif
