/* datadir.h - where passfs's own data is: the bundled tasks, the pass API
 * headers (gpu/include), the eager baseline's op library (gpu/oplib) and
 * the manuals (docs/).
 *
 * One decision for all four, from where the running binary is
 * (/proc/self/exe):
 *   - a binary inside the build tree it was built in (CMakeLists.txt's
 *     binary directory: passfs, the unit tests, the fuzz targets) uses the
 *     source tree's tasks/, gpu/include, gpu/oplib and docs/;
 *   - any other binary uses the directories installed beside it:
 *     <exe>/../share/passfs/tasks, <exe>/../include/passfs,
 *     <exe>/../share/passfs/oplib and <exe>/../share/passfs/docs (the layout `cmake --install` writes, so
 *     a relocated prefix works too), even when the source tree still
 *     exists;
 *   - a binary that is in neither (copied somewhere on its own) falls back
 *     to the source tree when it exists, else the configured install
 *     prefix.
 * The environment overrides each but the docs ($PASSFS_TASKS,
 * $PASSFS_INCLUDE_DIR, $PASSFS_OPLIB_DIR); that is the callers' business (fs/main.c,
 * gpu/hostcc.c, engine/eval/eager/eager.c), not this module's.
 *
 * Thread-safe (decided once). */
#ifndef PASSFS_DATADIR_H
#define PASSFS_DATADIR_H

enum datadir_kind {
	DATADIR_TASKS,          /* tasks/ */
	DATADIR_INCLUDE,        /* gpu/include: passfs.h and the rest of the pass API */
	DATADIR_OPLIB,          /* gpu/oplib: the eager baseline's op library */
	DATADIR_DOCS,           /* docs: the manuals the task tree serves (fs/tree.c) */
};

/* The directory of `kind` as decided above; never NULL. */
const char *datadir_get(enum datadir_kind kind);

/* 1 when the running binary sits in its build tree (uses the source
 * tree), else 0. */
int datadir_in_build_tree(void);

/* The source tree's gpu/hostcc.c (beside it the rest of the host compiler,
 * gpu/hostcc_*.c) when this is a build-tree binary (the
 * eager op library's cache key reads it), else NULL. */
const char *datadir_hostcc_source(void);

#endif
