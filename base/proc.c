/* proc.c - see proc.h. */
#define _GNU_SOURCE
#include "proc.h"

#include <errno.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

int base_write_all(int fd, const void *p, size_t n)
{
	const char *b = p;
	int sock = 1;
	while (n > 0) {
		ssize_t k = -1;
		if (sock) {
			k = send(fd, b, n, MSG_NOSIGNAL);
			if (k < 0 && errno == ENOTSOCK) {
				sock = 0;
				k = write(fd, b, n);
			}
		} else {
			k = write(fd, b, n);
		}
		if (k < 0 && errno == EINTR)
			continue;
		if (k < 0)
			return -errno;
		if (k == 0)
			return -EIO;
		b += k;
		n -= (size_t)k;
	}
	return 0;
}

ssize_t base_read_full(int fd, void *p, size_t n)
{
	char *b = p;
	size_t got = 0;
	while (got < n) {
		ssize_t k = read(fd, b + got, n - got);
		if (k < 0 && errno == EINTR)
			continue;
		if (k < 0)
			return -errno;
		if (k == 0)
			break;
		got += (size_t)k;
	}
	return (ssize_t)got;
}

pid_t base_waitpid(pid_t pid, int *status)
{
	pid_t r;
	int st = 0;
	while ((r = waitpid(pid, &st, 0)) < 0 && errno == EINTR)
		;
	if (r >= 0 && status != NULL)
		*status = st;
	return r;
}
