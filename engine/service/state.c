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

int state_mkdirs(const char *path, mode_t mode)
{
	char buf[PATH_MAX];
	size_t n = strlen(path);
	if (n == 0 || n >= sizeof(buf))
		return -ENAMETOOLONG;
	memcpy(buf, path, n + 1);
	for (size_t i = 1; i <= n; i++) {
		if (buf[i] != '/' && buf[i] != 0)
			continue;
		char c = buf[i];
		buf[i] = 0;
		if (mkdir(buf, mode) != 0 && errno != EEXIST)
			return -errno;
		buf[i] = c;
	}
	struct stat st;
	if (stat(path, &st) != 0)
		return -errno;
	return S_ISDIR(st.st_mode) ? 0 : -ENOTDIR;
}

static int write_all(int fd, const void *buf, size_t len)
{
	const char *p = buf;
	while (len > 0) {
		ssize_t w = write(fd, p, len);
		if (w < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		p += w;
		len -= (size_t)w;
	}
	return 0;
}

int state_write_atomic(const char *dir, const char *name, const void *buf, size_t len, int durable)
{
	char tmp[PATH_MAX], dst[PATH_MAX];
	static unsigned counter;
	unsigned k = __atomic_add_fetch(&counter, 1, __ATOMIC_RELAXED);
	if (snprintf(dst, sizeof(dst), "%s/%s", dir, name) >= (int)sizeof(dst) ||
	    snprintf(tmp, sizeof(tmp), "%s/.%s.%ld.%u.tmp", dir, name, (long)getpid(), k) >= (int)sizeof(tmp))
		return -ENAMETOOLONG;
	int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (fd < 0)
		return -errno;
	int rc = write_all(fd, buf, len);
	if (rc == 0 && durable && fsync(fd) != 0)
		rc = -errno;
	if (close(fd) != 0 && rc == 0)
		rc = -errno;
	if (rc == 0 && rename(tmp, dst) != 0)
		rc = -errno;
	if (rc != 0) {
		unlink(tmp);
		return rc;
	}
	if (durable) {
		int dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		if (dfd < 0)
			return -errno;
		if (fsync(dfd) != 0)
			rc = -errno;
		close(dfd);
	}
	return rc;
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

char *state_read_file(const char *path, size_t max, size_t *len, int *err)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		*err = errno;
		return NULL;
	}
	struct stat st;
	if (fstat(fd, &st) != 0) {
		*err = errno;
		close(fd);
		return NULL;
	}
	if ((uint64_t)st.st_size > max) {
		*err = EFBIG;
		close(fd);
		return NULL;
	}
	size_t cap = (size_t)st.st_size + 1, n = 0;
	char *buf = malloc(cap);
	if (buf == NULL) {
		*err = ENOMEM;
		close(fd);
		return NULL;
	}
	for (;;) {
		if (n + 1 == cap) {
			/* The file grew since fstat: keep reading up to max. */
			if (cap > max) {
				free(buf);
				close(fd);
				*err = EFBIG;
				return NULL;
			}
			char *nb = realloc(buf, cap * 2);
			if (nb == NULL) {
				free(buf);
				close(fd);
				*err = ENOMEM;
				return NULL;
			}
			buf = nb;
			cap *= 2;
		}
		ssize_t r = read(fd, buf + n, cap - 1 - n);
		if (r < 0) {
			if (errno == EINTR)
				continue;
			*err = errno;
			free(buf);
			close(fd);
			return NULL;
		}
		if (r == 0)
			break;
		n += (size_t)r;
	}
	close(fd);
	buf[n] = 0;
	*len = n;
	return buf;
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
