/* state.h - the files of the state directory: durable atomic writes,
 * and the numbered history.  Shared by the service (engine/service/service.c) and
 * `passfs history export`, which reads a state directory without a service.
 *
 * Layout (one subdirectory per task id; see service.h):
 *     .lock (state_lock), <id>/pass.c, <id>/result.json, <id>/history/NNNNNN.{c,json}
 * NNNNNN is the evaluation's seq, zero-padded to 6 digits (more when larger).
 * A history entry exists once its .json is there: the .c is written first. */
#ifndef PASSFS_STATE_H
#define PASSFS_STATE_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* Writes dir/name atomically (mode 0600) with base/file.h's base_write_atomic:
 * a temporary ".name.*.tmp" in dir, then rename onto name; durable fsyncs the
 * file and then dir so the rename survives a crash.  Readers see the old file
 * or the new one, never a mix.  0 or -errno. */
int state_write_atomic(const char *dir, const char *name, const void *buf, size_t len, int durable);

/* The same, durable, for a file that must not exist yet (a history entry):
 * -EEXIST, and the existing file untouched, when it does. */
int state_write_new(const char *dir, const char *name, const void *buf, size_t len);

/* Removes the files in dir whose names start with prefix and end in ".tmp":
 * the temporaries of writes a crash interrupted.  Errors are ignored. */
void state_clean_temps(const char *dir, const char *prefix);

/* "000042.json" for seq 42 and ext "json". */
void state_history_name(char *buf, size_t len, uint64_t seq, const char *ext);

/* The seqs of the history entries in hist_dir (files NNNNNN.json), sorted
 * ascending, malloc'd into *seqs (free()).  A missing directory is empty.
 * *max_any is the largest seq of any NNNNNN.c or .json there (0 if none), so
 * a new seq never reuses a number a crash left half-written.  0 or -errno. */
int state_history_scan(const char *hist_dir, uint64_t **seqs, int *n, uint64_t *max_any);

/* The task directories of a state directory: every subdirectory whose
 * name does not start with '.' (a mount's log and lock are files), sorted,
 * malloc'd names in a malloc'd *ids (free each, then the array).  0 or
 * -errno (nothing to free then). */
int state_task_ids(const char *dir, char ***ids, int *n);

/* One daemon per state directory: takes an exclusive flock(2) on dir/.lock
 * and writes the holder there ("pid command line").  A lock another process
 * holds is waited for up to wait_s seconds (a daemon that was just stopped
 * may still be writing its last result), then refused with err naming the
 * directory and the holder.  0 with *fd (keep it open: closing it, or the
 * process ending, releases the lock), or -1. */
int state_lock(const char *dir, double wait_s, int *fd, char *err, size_t errlen);

/* The current time as ISO 8601 UTC with milliseconds: "2026-03-01T12:34:56.789Z". */
void state_iso_now(char buf[32]);

#endif
