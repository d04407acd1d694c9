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

int state_write_atomic(const char *dir, const char *name, const void *buf, size_t len, int durable)
{
	char dst[PATH_MAX];
	if (snprintf(dst, sizeof(dst), "%s/%s", dir, name) >= (int)sizeof(dst))
		return -ENAMETOOLONG;
	return base_write_atomic(dst, ".", buf, len, 0600, durable ? BASE_ATOMIC_DURABLE : 0);
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

void state_iso_now(char buf[32])
{
	struct timespec ts;
	struct tm tm;
	clock_gettime(CLOCK_REALTIME, &ts);
	gmtime_r(&ts.tv_sec, &tm);
	size_t k = strftime(buf, 32, "%Y-%m-%dT%H:%M:%S", &tm);
	snprintf(buf + k, 32 - k, ".%03ldZ", ts.tv_nsec / 1000000);
}
