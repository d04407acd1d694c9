/* file.c - see file.h. */
#define _GNU_SOURCE
#include "file.h"

#include <errno.h>
#include <limits.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <ftw.h>

#include "clock.h"

#include "proc.h"

char *base_read_fd(int fd, size_t max, size_t *len, int *err)
{
	struct stat st;
	if (max > SIZE_MAX / 4)
		max = SIZE_MAX / 4;
	if (fstat(fd, &st) != 0) {
		*err = errno;
		return NULL;
	}
	if (S_ISDIR(st.st_mode)) {
		*err = EISDIR;
		return NULL;
	}
	if (S_ISREG(st.st_mode) && (uint64_t)st.st_size > max) {
		*err = EFBIG;
		return NULL;
	}
	size_t cap = S_ISREG(st.st_mode) ? (size_t)st.st_size + 1 : 65536, n = 0;
	if (cap > max + 1)
		cap = max + 1;
	char *buf = malloc(cap);
	if (buf == NULL) {
		*err = ENOMEM;
		return NULL;
	}
	for (;;) {
		if (n + 1 == cap) {
			/* Full (the file grew since fstat, or is a pipe): keep
			 * reading up to max. */
			if (n >= max) {
				char c;
				ssize_t r;
				while ((r = read(fd, &c, 1)) < 0 && errno == EINTR)
					;
				if (r == 0)
					break;
				free(buf);
				*err = r < 0 ? errno : EFBIG;
				return NULL;
			}
			size_t ncap = cap * 2 > max + 1 ? max + 1 : cap * 2;
			char *nb = realloc(buf, ncap);
			if (nb == NULL) {
				free(buf);
				*err = ENOMEM;
				return NULL;
			}
			buf = nb;
			cap = ncap;
		}
		ssize_t r = read(fd, buf + n, cap - 1 - n);
		if (r < 0) {
			if (errno == EINTR)
				continue;
			*err = errno;
			free(buf);
			return NULL;
		}
		if (r == 0)
			break;
		n += (size_t)r;
	}
	buf[n] = 0;
	*len = n;
	return buf;
}

char *base_read_file(const char *path, size_t max, size_t *len, int *err)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		*err = errno;
		return NULL;
	}
	char *buf = base_read_fd(fd, max, len, err);
	close(fd);
	return buf;
}

int base_atomic_open(struct base_atomic *a, const char *path, const char *tmp_prefix, mode_t mode, int flags)
{
	static unsigned counter;
	unsigned k = __atomic_add_fetch(&counter, 1, __ATOMIC_RELAXED);
	a->fd = -1;
	a->tmp[0] = 0;
	const char *slash = strrchr(path, '/');
	int dlen = slash ? (int)(slash - path + 1) : 0;
	const char *name = slash ? slash + 1 : path;
	if (snprintf(a->dst, sizeof a->dst, "%s", path) >= (int)sizeof a->dst ||
	    snprintf(a->tmp, sizeof a->tmp, "%.*s%s%s.%ld.%u.tmp", dlen, path, tmp_prefix ? tmp_prefix : "", name,
		     (long)getpid(), k) >= (int)sizeof a->tmp) {
		a->tmp[0] = 0;
		return -ENAMETOOLONG;
	}
	a->fd = open(a->tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, mode);
	if (a->fd < 0) {
		int e = errno;
		a->tmp[0] = 0;
		return -e;
	}
	if ((flags & BASE_ATOMIC_EXACT_MODE) && fchmod(a->fd, mode) != 0) {
		int e = errno;
		base_atomic_abort(a);
		return -e;
	}
	return 0;
}

void base_atomic_abort(struct base_atomic *a)
{
	if (a->fd >= 0)
		close(a->fd);
	a->fd = -1;
	if (a->tmp[0])
		unlink(a->tmp);
	a->tmp[0] = 0;
}

int base_atomic_commit(struct base_atomic *a, int flags)
{
	int rc = 0;
	if (a->fd < 0 || a->tmp[0] == 0)
		return -EBADF;
	if ((flags & BASE_ATOMIC_DURABLE) && fsync(a->fd) != 0)
		rc = -errno;
	if (close(a->fd) != 0 && rc == 0)
		rc = -errno;
	a->fd = -1;
	if (rc == 0) {
		if (flags & BASE_ATOMIC_NOCLOBBER) {
			if (link(a->tmp, a->dst) != 0)
				rc = -errno;
		} else if (rename(a->tmp, a->dst) == 0) {
			a->tmp[0] = 0;          /* it is the destination now */
		} else {
			rc = -errno;
		}
	}
	if (a->tmp[0])
		unlink(a->tmp);
	a->tmp[0] = 0;
	if (rc == 0 && (flags & BASE_ATOMIC_DURABLE)) {
		char dir[sizeof a->dst];
		const char *slash = strrchr(a->dst, '/');
		if (slash == NULL)
			snprintf(dir, sizeof dir, ".");
		else if (slash == a->dst)
			snprintf(dir, sizeof dir, "/");
		else
			snprintf(dir, sizeof dir, "%.*s", (int)(slash - a->dst), a->dst);
		int dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		if (dfd < 0)
			return -errno;
		if (fsync(dfd) != 0)
			rc = -errno;
		close(dfd);
	}
	return rc;
}

int base_write_atomic(const char *path, const char *tmp_prefix, const void *buf, size_t len, mode_t mode,
		      int flags)
{
	struct base_atomic a;
	int rc = base_atomic_open(&a, path, tmp_prefix, mode, flags);
	if (rc != 0)
		return rc;
	rc = base_write_all(a.fd, buf, len);
	if (rc != 0) {
		base_atomic_abort(&a);
		return rc;
	}
	return base_atomic_commit(&a, flags);
}

static __thread int rmtree_err;

static int rm_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st, (void)ftw;
	int rc = flag == FTW_DP || flag == FTW_DNR ? rmdir(path) : unlink(path);
	if (rc != 0 && errno != ENOENT && rmtree_err == 0)
		rmtree_err = errno;
	return 0;
}

int base_rmtree(const char *path)
{
	struct stat st;
	if (lstat(path, &st) != 0)
		return errno == ENOENT ? 0 : -errno;
	rmtree_err = 0;
	if (nftw(path, rm_entry, 16, FTW_DEPTH | FTW_PHYS) != 0 && rmtree_err == 0)
		rmtree_err = errno;
	return -rmtree_err;
}

int base_mkdirs(const char *path, mode_t mode)
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

int base_flock_wait(int fd, int timeout_ms, const int *cancel)
{
	double deadline = base_now_ms() + (timeout_ms > 0 ? timeout_ms : 0);
	int pause_ms = 1;
	for (;;) {
		/* a wait that can be cancelled polls, even without a timeout */
		if (flock(fd, LOCK_EX | (timeout_ms < 0 && cancel == NULL ? 0 : LOCK_NB)) == 0)
			return 0;
		if (errno == EINTR)
			continue;
		if (errno != EWOULDBLOCK)
			return -errno;
		if (cancel != NULL && __atomic_load_n(cancel, __ATOMIC_RELAXED))
			return -ECANCELED;
		if (timeout_ms >= 0 && base_now_ms() >= deadline)
			return -EWOULDBLOCK;
		base_sleep_ms(pause_ms);
		if (pause_ms < 20)
			pause_ms *= 2;
	}
}
