/* file.h - whole files and trees: capped reads, atomic replacement, mkdir -p,
 * tree removal.
 *
 * Contract:
 *   base_read_file  reads a whole file of at most max bytes into a malloc'd
 *                   buffer with a NUL after the last byte (the bytes may hold
 *                   NULs; *len counts them).  A file larger than max, or one
 *                   that grows past max while read, fails with EFBIG.  Returns
 *                   the buffer, or NULL with *err = errno (ENOENT, EISDIR,
 *                   EFBIG, ENOMEM, ...).  base_read_fd is the same on an open
 *                   descriptor (left open), which need not be seekable.
 *   base_atomic_*   replace a file so that readers see the old bytes or the
 *                   new ones, never a mix: base_atomic_open creates a
 *                   temporary file beside path, named
 *                   "<dir>/<tmp_prefix><name>.<pid>.<n>.tmp" (so a cleaner can
 *                   find what a crash left), with `mode` less the umask
 *                   (exactly `mode` with BASE_ATOMIC_EXACT_MODE).  The caller writes to a->fd (fdopen(dup(a->fd))
 *                   for stdio, fclosed before the commit), then
 *                   base_atomic_commit: fsync when BASE_ATOMIC_DURABLE, close,
 *                   rename onto path (link() when BASE_ATOMIC_NOCLOBBER, which
 *                   fails with -EEXIST rather than replace an existing path),
 *                   then with BASE_ATOMIC_DURABLE fsync the directory so the
 *                   new name survives a crash.  base_atomic_abort drops the
 *                   temporary.  All return 0 or -errno; on any failure the
 *                   temporary is gone.
 *   base_write_atomic  the three steps for a buffer in memory (flags go to
 *                   both base_atomic_open and base_atomic_commit).
 *   base_mkdirs     mkdir -p: creates path and its missing parents with
 *                   `mode` (less the umask); 0 when path is then a directory
 *                   (-ENOTDIR when it is something else), or -errno.
 *   base_rmtree     removes path and everything under it, depth first,
 *                   never following a symbolic link; a missing path is fine.
 *                   0, or -errno of the first failure (it goes on removing
 *                   what it can).
 *   base_flock_wait takes an exclusive flock(2) on fd, waiting up to
 *                   timeout_ms (< 0: for as long as it takes) or until
 *                   *cancel (may be NULL) is nonzero, polling from 1 ms to
 *                   20 ms apart; 0, -EWOULDBLOCK when the wait ran out,
 *                   -ECANCELED, or -errno. */
#ifndef PASSFS_BASE_FILE_H
#define PASSFS_BASE_FILE_H

#include <stddef.h>
#include <sys/types.h>

char *base_read_file(const char *path, size_t max, size_t *len, int *err);
char *base_read_fd(int fd, size_t max, size_t *len, int *err);

enum {
	BASE_ATOMIC_DURABLE = 1,        /* fsync the file and its directory */
	BASE_ATOMIC_NOCLOBBER = 2,      /* never replace an existing path */
	BASE_ATOMIC_EXACT_MODE = 4,     /* fchmod to mode: the umask does not apply */
};

struct base_atomic {
	int fd;                 /* the temporary, open for writing; -1 when done */
	char tmp[4096];
	char dst[4096];
};

int base_atomic_open(struct base_atomic *a, const char *path, const char *tmp_prefix, mode_t mode, int flags);
int base_atomic_commit(struct base_atomic *a, int flags);
void base_atomic_abort(struct base_atomic *a);
int base_write_atomic(const char *path, const char *tmp_prefix, const void *buf, size_t len, mode_t mode,
		      int flags);
int base_flock_wait(int fd, int timeout_ms, const int *cancel);

int base_mkdirs(const char *path, mode_t mode);
int base_rmtree(const char *path);

#endif
