/* proc.h - process and file-descriptor helpers that every layer repeats.
 *
 * Contract:
 *   base_write_all  writes all n bytes to fd, retrying on EINTR and short
 *                   writes.  On a socket it sends with MSG_NOSIGNAL, so a
 *                   peer that is gone gives -EPIPE instead of SIGPIPE; on
 *                   anything else it write()s.  0, or -errno (-EIO when the
 *                   fd accepts nothing).
 *   base_read_full  reads until n bytes or end of file, retrying on EINTR.
 *                   Returns the bytes read (less than n only at end of file),
 *                   or -errno.
 *   base_waitpid    waitpid(pid, status, 0) retried on EINTR; the pid, or
 *                   -1 with errno.  status may be NULL.
 *   base_scrub_environ
 *                   the environment strings at the top of the stack (what
 *                   /proc/PID/environ shows, from the kernel's env_start and
 *                   env_end), and with_argv the argument strings and the
 *                   executable's name beside them, overwritten with zeros;
 *                   environ is first replaced by heap copies of the
 *                   variables keep() accepts (all when keep is NULL), so
 *                   getenv still finds those.  0, or -1 when nothing was
 *                   scrubbed (the bounds unknown, out of memory). */
#ifndef PASSFS_BASE_PROC_H
#define PASSFS_BASE_PROC_H

#include <stddef.h>
#include <sys/types.h>

int base_write_all(int fd, const void *p, size_t n);
ssize_t base_read_full(int fd, void *p, size_t n);
pid_t base_waitpid(pid_t pid, int *status);
int base_scrub_environ(int (*keep)(const char *kv), int with_argv);

#endif
