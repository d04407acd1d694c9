/* proc.c - see proc.h. */
#define _GNU_SOURCE
#include "proc.h"

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
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

/* Fields 48-51 of /proc/self/stat: arg_start, arg_end, env_start, env_end
 * (the first field after the command's ')' is 3).  0, or -1. */
static int stack_strings(unsigned long long b[4])
{
	FILE *f = fopen("/proc/self/stat", "re");
	char buf[2048];
	size_t n = f ? fread(buf, 1, sizeof buf - 1, f) : 0;
	if (f)
		fclose(f);
	buf[n] = '\0';
	char *p = strrchr(buf, ')');
	memset(b, 0, 4 * sizeof b[0]);
	for (int field = 3; p != NULL && field <= 51; field++) {
		p = strchr(p + 1, ' ');
		if (p != NULL && field >= 48)
			b[field - 48] = strtoull(p + 1, NULL, 10);
	}
	return b[2] != 0 && b[3] > b[2] && b[1] >= b[0] ? 0 : -1;
}

int base_scrub_environ(int (*keep)(const char *kv), int with_argv)
{
	extern char **environ;
	unsigned long long b[4];
	if (stack_strings(b) != 0)
		return -1;
	size_t count = 0;
	while (environ != NULL && environ[count] != NULL)
		count++;
	char **copy = calloc(count + 1, sizeof(char *));
	if (copy == NULL)
		return -1;
	size_t k = 0;
	for (size_t i = 0; i < count; i++) {
		if (keep != NULL && !keep(environ[i]))
			continue;
		if ((copy[k++] = strdup(environ[i])) == NULL) {
			/* leave it: the strings are still needed */
			while (k-- > 0)
				free(copy[k]);
			free(copy);
			return -1;
		}
	}
	environ = copy;
	memset((void *)(uintptr_t)b[2], 0, (size_t)(b[3] - b[2]));
	if (with_argv) {
		memset((void *)(uintptr_t)b[0], 0, (size_t)(b[1] - b[0]));
		/* the executable's name, just past the environment */
		char *fn = (char *)getauxval(AT_EXECFN);
		if (fn != NULL && (uintptr_t)fn >= b[3] && (uintptr_t)fn < b[3] + 4096)
			memset(fn, 0, strlen(fn));
	}
	return 0;
}
