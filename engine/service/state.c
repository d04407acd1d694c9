/* state.c - durable files of the state directory (see state.h). */
#include "state.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "file.h"
#include "strbuf.h"

int state_write_atomic(const char *dir, const char *name, const void *buf, size_t len, int durable)
{
	char dst[PATH_MAX];
	if (snprintf(dst, sizeof(dst), "%s/%s", dir, name) >= (int)sizeof(dst))
		return -ENAMETOOLONG;
	return base_write_atomic(dst, ".", buf, len, 0600, durable ? BASE_ATOMIC_DURABLE : 0);
}

int state_write_new(const char *dir, const char *name, const void *buf, size_t len)
{
	char dst[PATH_MAX];
	if (snprintf(dst, sizeof(dst), "%s/%s", dir, name) >= (int)sizeof(dst))
		return -ENAMETOOLONG;
	return base_write_atomic(dst, ".", buf, len, 0600, BASE_ATOMIC_DURABLE | BASE_ATOMIC_NOCLOBBER);
}

void state_clean_temps(const char *dir, const char *prefix)
{
	DIR *d = opendir(dir);
	if (d == NULL)
		return;
	size_t pl = strlen(prefix);
	struct dirent *e;
	while ((e = readdir(d)) != NULL) {
		size_t n = strlen(e->d_name);
		if (n > pl + 4 && strncmp(e->d_name, prefix, pl) == 0 && strcmp(e->d_name + n - 4, ".tmp") == 0)
			unlinkat(dirfd(d), e->d_name, 0);
	}
	closedir(d);
}

void state_history_name(char *buf, size_t len, uint64_t seq, const char *ext)
{
	snprintf(buf, len, "%06" PRIu64 ".%s", seq, ext);
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return x < y ? -1 : x > y;
}

int state_history_scan(const char *hist_dir, uint64_t **seqs, int *n, uint64_t *max_any)
{
	*seqs = NULL;
	*n = 0;
	*max_any = 0;
	DIR *d = opendir(hist_dir);
	if (d == NULL)
		return errno == ENOENT ? 0 : -errno;
	int cap = 0;
	struct dirent *e;
	while ((e = readdir(d)) != NULL) {
		const char *p = e->d_name;
		size_t digits = strspn(p, "0123456789");
		if (digits < 6 || digits > 19)
			continue;
		int is_json = strcmp(p + digits, ".json") == 0;
		if (!is_json && strcmp(p + digits, ".c") != 0)
			continue;
		uint64_t seq = strtoull(p, NULL, 10);
		if (seq > *max_any)
			*max_any = seq;
		if (!is_json)
			continue;
		if (*n == cap) {
			cap = cap ? cap * 2 : 64;
			uint64_t *ns = realloc(*seqs, (size_t)cap * sizeof(**seqs));
			if (ns == NULL) {
				closedir(d);
				free(*seqs);
				*seqs = NULL;
				*n = 0;
				return -ENOMEM;
			}
			*seqs = ns;
		}
		(*seqs)[(*n)++] = seq;
	}
	closedir(d);
	if (*n > 1)
		qsort(*seqs, (size_t)*n, sizeof(**seqs), cmp_u64);
	return 0;
}

int state_task_ids(const char *dir, char ***ids, int *n)
{
	*ids = NULL;
	*n = 0;
	DIR *d = opendir(dir);
	if (d == NULL)
		return -errno;
	int cap = 0, rc = 0;
	struct dirent *e;
	while ((e = readdir(d)) != NULL) {
		char p[PATH_MAX];
		struct stat st;
		if (e->d_name[0] == '.' || snprintf(p, sizeof(p), "%s/%s", dir, e->d_name) >= (int)sizeof(p) ||
		    stat(p, &st) != 0 || !S_ISDIR(st.st_mode))
			continue;
		if (*n == cap) {
			cap = cap ? cap * 2 : 32;
			char **ni = realloc(*ids, (size_t)cap * sizeof(*ni));
			if (ni == NULL) {
				rc = -ENOMEM;
				break;
			}
			*ids = ni;
		}
		if (((*ids)[*n] = strdup(e->d_name)) == NULL) {
			rc = -ENOMEM;
			break;
		}
		(*n)++;
	}
	closedir(d);
	if (rc != 0) {
		for (int i = 0; i < *n; i++)
			free((*ids)[i]);
		free(*ids);
		*ids = NULL;
		*n = 0;
		return rc;
	}
	if (*n > 1)
		qsort(*ids, (size_t)*n, sizeof(**ids), base_strptr_cmp);
	return 0;
}

void state_iso_now(char buf[32])
{
	struct timespec ts;
	struct tm tm;
	clock_gettime(CLOCK_REALTIME, &ts);
	gmtime_r(&ts.tv_sec, &tm);
	size_t k = strftime(buf, 32, "%Y-%m-%dT%H:%M:%S", &tm);
	snprintf(buf + k, 32 - k, ".%03ldZ", ts.tv_nsec / 1000000);
}

/* "pid command line" of this process, for the lock file. */
static int holder_line(char *buf, size_t len)
{
	int n = snprintf(buf, len, "%ld", (long)getpid());
	size_t clen = 0;
	int e = 0;
	char *cmd = base_read_file("/proc/self/cmdline", 4096, &clen, &e);
	for (size_t i = 0; cmd != NULL && i < clen; i++)
		if (cmd[i] == '\0' || cmd[i] == '\n')
			cmd[i] = ' ';
	while (cmd != NULL && clen > 0 && cmd[clen - 1] == ' ')
		clen--;
	n += snprintf(buf + n, len - (size_t)n, "%s%.*s\n", clen ? " " : "", (int)clen, cmd ? cmd : "");
	free(cmd);
	return n < (int)len ? n : (int)len - 1;
}

int state_lock(const char *dir, double wait_s, int *fdp, char *err, size_t errlen)
{
	char path[PATH_MAX];
	*fdp = -1;
	if (snprintf(path, sizeof path, "%s/.lock", dir) >= (int)sizeof path) {
		snprintf(err, errlen, "state directory %s: path too long", dir);
		return -1;
	}
	int fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
	if (fd < 0) {
		snprintf(err, errlen, "state directory %s: cannot open its lock %s: %s", dir, path, strerror(errno));
		return -1;
	}
	int rc = base_flock_wait(fd, (int)(wait_s * 1e3), NULL);
	if (rc == -EWOULDBLOCK) {
		char who[512] = "";
		ssize_t k = pread(fd, who, sizeof who - 1, 0);
		who[k > 0 ? k : 0] = '\0';
		who[strcspn(who, "\n")] = '\0';
		char *sp = strchr(who, ' ');
		if (sp != NULL)
			*sp++ = '\0';
		snprintf(err, errlen,
			 "state directory %s is in use by another passfs (pid %s: %s); one daemon per state "
			 "directory: stop that one, or give this one --state with another directory",
			 dir, who[0] ? who : "?", sp && *sp ? sp : "command unknown");
		close(fd);
		return -1;
	}
	if (rc != 0) {
		snprintf(err, errlen, "state directory %s: cannot lock %s: %s", dir, path, strerror(-rc));
		close(fd);
		return -1;
	}
	char line[4200];
	int n = holder_line(line, sizeof line);
	if (ftruncate(fd, 0) != 0 || pwrite(fd, line, (size_t)n, 0) != n) {
		/* the lock holds without its note */
	}
	*fdp = fd;
	return 0;
}
