/* mount.h - the FUSE front end of `passfs mount` (fs/mount.c).
 *
 * Serves the task tree of docs/mount.md over the libfuse low-level API:
 *
 *     MOUNT/README.md  summary.json  <task>/{README.md graph.json pass.c
 *                                            result.json es_t status}
 *
 * plus scratch files in task directories (editors' temp and backup files).
 * Every byte of pass.c, every state and every result belongs to the
 * evaluation service (engine/service/service.h); this module only turns file
 * operations into service calls and back.  docs/mount.md describes the
 * behaviour; the comment at the top of mount.c describes the design.
 *
 * Use: mnt_open() (mounts), mnt_run() (serves until unmounted or signalled),
 * mnt_close().  cmd_mount.c forks before mnt_open when it daemonizes: the
 * service starts threads, and threads do not survive fork(). */
#ifndef PASSFS_MOUNT_H
#define PASSFS_MOUNT_H

#include <stddef.h>

#include "service.h"

struct mnt_opts {
	const char *mountpoint;     /* an existing directory, absolute path */
	struct svc_opts svc;        /* tasks_dir (absolute), state_dir, eval options */
	double wait_timeout_s;      /* how long reads of result.json/es_t wait; <= 0: 20 */
	const char *fuse_opts;      /* extra "-o" options (comma list) after the defaults; may be NULL */
	int debug;                  /* libfuse debug output on stderr */
};

struct mnt;

/* Opens the service (loads every task, restores the state dir), builds the
 * inode table, creates the FUSE session with "-o auto_unmount" plus
 * o->fuse_opts, installs SIGINT/SIGTERM/SIGHUP handlers that end mnt_run(),
 * and mounts.  Returns 0 and *out, or -1 with a one-line message in err
 * (the mount is undone on failure). */
int mnt_open(const struct mnt_opts *o, struct mnt **out, char *err, size_t errlen);

/* Serves requests on a pool of threads until the file system is unmounted
 * (fusermount3 -u, umount) or a signal arrives.  Waiting readers are
 * answered before it returns.  Returns 0, or -1 on a session error. */
int mnt_run(struct mnt *m);

/* Unmounts if still mounted, waits for running evaluations (service.h) and
 * frees everything.  NULL is a no-op. */
void mnt_close(struct mnt *m);

/* The service behind the mount: task count and ids for messages. */
struct svc *mnt_svc(struct mnt *m);

#endif
