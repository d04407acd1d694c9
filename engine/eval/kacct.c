/* kacct.c - a worker's memory and CPU as the kernel accounts them (kacct.h). */
#define _GNU_SOURCE
#include "kacct.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

int kacct_clear_refs(pid_t pid)
{
	char path[64];
	snprintf(path, sizeof(path), "/proc/%d/clear_refs", (int)pid);
	int fd = open(path, O_WRONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	ssize_t n = write(fd, "1\n", 2);
	int e = errno;
	close(fd);
	errno = e;
	return n == 2 ? 0 : -1;
}

/* A mapping line of smaps: "lo-hi perms offset dev inode [path]"; 1 when
 * shared ('s' in the permissions' fourth place), 0 when private, -1 when the
 * line is not a mapping's. */
static int mapping_shared(const char *line)
{
	const char *p = line;
	int dash = 0;
	for (; *p && *p != ' '; p++) {
		if (*p == '-')
			dash = 1;
		else if (!((*p >= '0' && *p <= '9') || (*p >= 'a' && *p <= 'f')))
			return -1;
	}
	if (!dash || *p != ' ' || strlen(p) < 5)
		return -1;
	return p[4] == 's' ? 1 : 0;
}

int kacct_shared_referenced(pid_t pid, uint64_t *bytes)
{
	char path[64];
	snprintf(path, sizeof(path), "/proc/%d/smaps", (int)pid);
	FILE *f = fopen(path, "re");
	if (f == NULL)
		return -1;
	char line[1024];
	int shared = 0, any = 0;
	uint64_t kb = 0;
	while (fgets(line, sizeof(line), f)) {
		int m = mapping_shared(line);
		if (m >= 0) {
			shared = m;
			any = 1;
			continue;
		}
		unsigned long long v;
		if (shared && sscanf(line, "Referenced: %llu kB", &v) == 1)
			kb += v;
	}
	int bad = ferror(f);
	fclose(f);
	if (bad || !any)
		return -1;
	*bytes = kb * 1024;
	return 0;
}

int64_t kacct_cpu_ns(pid_t pid)
{
	clockid_t cid;
	struct timespec ts;
	if (clock_getcpuclockid(pid, &cid) != 0 || clock_gettime(cid, &ts) != 0)
		return -1;
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

int kacct_threads(pid_t pid)
{
	char path[64];
	snprintf(path, sizeof(path), "/proc/%d/task", (int)pid);
	DIR *d = opendir(path);
	if (d == NULL)
		return -1;
	int n = 0;
	struct dirent *e;
	while ((e = readdir(d)) != NULL)
		if (e->d_name[0] != '.')
			n++;
	closedir(d);
	return n;
}
