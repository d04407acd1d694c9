/* minifs.c - the smallest libfuse3 low-level file system that serves the
 * same bytes as a passfs task directory: the floor any FUSE file system pays
 * on this machine, for bench/fs.sh.
 *
 *   passfs_minifs [-d] SRC MOUNTPOINT      (stays in the foreground)
 *
 * SRC is a passfs task directory (usually on a passfs mount); its six files
 * are read once at start and served from memory under MOUNTPOINT/<name of
 * SRC>/, next to the root's README.md and summary.json (read from SRC/..).
 * pass.c is writable in memory (in-place writes, O_TRUNC, ftruncate); the
 * rest is read-only.  Nothing is computed, nothing fires, no locks beyond
 * one mutex for pass.c.
 *
 * Caching is configured exactly as passfs's fs/mount.c does it, so the two
 * differ only in the work done per request, not in how many requests the
 * kernel sends:
 *   README.md, graph.json          attributes 1 day, keep_cache
 *   result.json, es_t, status,
 *   summary.json                   attributes 0 s (docs/mount.md: computed files
 *                                  never show stale sizes), keep_cache
 *   pass.c                         attributes 1 s, no keep_cache
 *   directories                    attributes 1 s; entries 60 s
 * read-only opens set noflush; writeback caching is off and O_TRUNC arrives
 * with the open (FUSE_CAP_ATOMIC_O_TRUNC); getxattr is not implemented.  The
 * same multithreaded session loop (at most 16 workers) serves requests. */
#define _GNU_SOURCE
#define FUSE_USE_VERSION 314
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <time.h>
#include <unistd.h>

#include <fuse_lowlevel.h>

#define ENTRY_TIMEOUT 60.0
#define DIR_ATTR_TIMEOUT 1.0
#define PASS_CAP (1u << 20)

enum kind { K_DIR, K_FIXED, K_COMPUTED, K_PASS };

struct file {
	const char *name;
	enum kind kind;
	mode_t mode;
	fuse_ino_t parent;
	char *data;
	size_t len;
};

/* Inodes: 1 the root, 2-3 the root files, 4 the task directory, 5.. its
 * files (the order passfs lists them in). */
enum { INO_ROOT = 1, INO_RREADME, INO_SUMMARY, INO_TASK, INO_README, INO_GRAPH, INO_PASS, INO_RESULT, INO_ES_T,
       INO_STATUS, NINO };

static struct file files[NINO] = {
	[INO_ROOT] = {"", K_DIR, 0555, INO_ROOT, NULL, 0},
	[INO_RREADME] = {"README.md", K_FIXED, 0444, INO_ROOT, NULL, 0},
	[INO_SUMMARY] = {"summary.json", K_COMPUTED, 0444, INO_ROOT, NULL, 0},
	[INO_TASK] = {NULL, K_DIR, 0755, INO_ROOT, NULL, 0},
	[INO_README] = {"README.md", K_FIXED, 0444, INO_TASK, NULL, 0},
	[INO_GRAPH] = {"graph.json", K_FIXED, 0444, INO_TASK, NULL, 0},
	[INO_PASS] = {"pass.c", K_PASS, 0644, INO_TASK, NULL, 0},
	[INO_RESULT] = {"result.json", K_COMPUTED, 0444, INO_TASK, NULL, 0},
	[INO_ES_T] = {"es_t", K_COMPUTED, 0444, INO_TASK, NULL, 0},
	[INO_STATUS] = {"status", K_COMPUTED, 0444, INO_TASK, NULL, 0},
};

static pthread_mutex_t pass_lock = PTHREAD_MUTEX_INITIALIZER;
static size_t pass_cap;
static struct timespec t0;

static double attr_of(fuse_ino_t ino, struct stat *st)
{
	const struct file *f = &files[ino];
	memset(st, 0, sizeof(*st));
	st->st_ino = ino;
	st->st_uid = getuid();
	st->st_gid = getgid();
	st->st_blksize = 4096;
	st->st_atim = st->st_mtim = st->st_ctim = t0;
	switch (f->kind) {
	case K_DIR:
		st->st_mode = S_IFDIR | f->mode;
		st->st_nlink = ino == INO_ROOT ? 3 : 2;
		st->st_size = 4096;
		return DIR_ATTR_TIMEOUT;
	case K_FIXED:
		st->st_mode = S_IFREG | f->mode;
		st->st_nlink = 1;
		st->st_size = (off_t)f->len;
		return 86400.0;
	case K_COMPUTED:
		st->st_mode = S_IFREG | f->mode;
		st->st_nlink = 1;
		st->st_size = (off_t)f->len;
		return 0.0;
	case K_PASS:
		st->st_mode = S_IFREG | f->mode;
		st->st_nlink = 1;
		pthread_mutex_lock(&pass_lock);
		st->st_size = (off_t)f->len;
		pthread_mutex_unlock(&pass_lock);
		return 1.0;
	}
	return 0;
}

static int valid(fuse_ino_t ino)
{
	return ino >= INO_ROOT && ino < NINO;
}

static void op_init(void *userdata, struct fuse_conn_info *conn)
{
	(void)userdata;
	if (conn->capable & FUSE_CAP_ATOMIC_O_TRUNC)
		conn->want |= FUSE_CAP_ATOMIC_O_TRUNC;
	conn->want &= ~(unsigned)FUSE_CAP_WRITEBACK_CACHE;
}

static void op_lookup(fuse_req_t req, fuse_ino_t parent, const char *name)
{
	for (fuse_ino_t i = INO_RREADME; i < NINO; i++)
		if (files[i].parent == parent && strcmp(files[i].name, name) == 0) {
			struct fuse_entry_param e;
			memset(&e, 0, sizeof(e));
			e.ino = i;
			e.generation = 1;
			e.attr_timeout = attr_of(i, &e.attr);
			e.entry_timeout = ENTRY_TIMEOUT;
			fuse_reply_entry(req, &e);
			return;
		}
	fuse_reply_err(req, ENOENT);
}

static void op_getattr(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
	(void)fi;
	if (!valid(ino)) {
		fuse_reply_err(req, ENOENT);
		return;
	}
	struct stat st;
	double t = attr_of(ino, &st);
	fuse_reply_attr(req, &st, t);
}

static int pass_resize(size_t len)
{
	struct file *f = &files[INO_PASS];
	if (len > PASS_CAP)
		return EFBIG;
	if (len > pass_cap) {
		size_t cap = pass_cap ? pass_cap : 4096;
		while (cap < len)
			cap *= 2;
		char *d = realloc(f->data, cap);
		if (d == NULL)
			return ENOMEM;
		f->data = d;
		pass_cap = cap;
	}
	if (len > f->len)
		memset(f->data + f->len, 0, len - f->len);
	f->len = len;
	return 0;
}

static void op_setattr(fuse_req_t req, fuse_ino_t ino, struct stat *attr, int to_set, struct fuse_file_info *fi)
{
	(void)fi;
	if (!valid(ino)) {
		fuse_reply_err(req, ENOENT);
		return;
	}
	int err = 0;
	if (to_set & FUSE_SET_ATTR_SIZE) {
		if (files[ino].kind != K_PASS) {
			err = EACCES;
		} else {
			pthread_mutex_lock(&pass_lock);
			err = pass_resize((size_t)attr->st_size);
			pthread_mutex_unlock(&pass_lock);
		}
	}
	if (err) {
		fuse_reply_err(req, err);
		return;
	}
	struct stat st;
	double t = attr_of(ino, &st);
	fuse_reply_attr(req, &st, t);
}

static void op_open(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
	if (!valid(ino) || files[ino].kind == K_DIR) {
		fuse_reply_err(req, valid(ino) ? EISDIR : ENOENT);
		return;
	}
	int writer = (fi->flags & O_ACCMODE) != O_RDONLY;
	if (files[ino].kind != K_PASS) {
		if (writer || (fi->flags & O_TRUNC)) {
			fuse_reply_err(req, EACCES);
			return;
		}
		fi->keep_cache = 1;
		fi->noflush = 1;
	} else {
		if (fi->flags & O_TRUNC) {
			pthread_mutex_lock(&pass_lock);
			pass_resize(0);
			pthread_mutex_unlock(&pass_lock);
		}
		fi->keep_cache = 0;
		fi->noflush = !writer;
	}
	fuse_reply_open(req, fi);
}

static void op_read(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off, struct fuse_file_info *fi)
{
	(void)fi;
	const struct file *f = &files[ino];
	if (f->kind != K_PASS) {
		size_t k = (size_t)off < f->len ? (f->len - (size_t)off < size ? f->len - (size_t)off : size) : 0;
		fuse_reply_buf(req, f->data + (k ? off : 0), k);
		return;
	}
	char *buf = malloc(size ? size : 1);
	if (buf == NULL) {
		fuse_reply_err(req, ENOMEM);
		return;
	}
	pthread_mutex_lock(&pass_lock);
	size_t k = (size_t)off < f->len ? (f->len - (size_t)off < size ? f->len - (size_t)off : size) : 0;
	memcpy(buf, f->data + (k ? off : 0), k);
	pthread_mutex_unlock(&pass_lock);
	fuse_reply_buf(req, buf, k);
	free(buf);
}

static void op_write(fuse_req_t req, fuse_ino_t ino, const char *buf, size_t size, off_t off,
		     struct fuse_file_info *fi)
{
	if (files[ino].kind != K_PASS) {
		fuse_reply_err(req, EBADF);
		return;
	}
	pthread_mutex_lock(&pass_lock);
	struct file *f = &files[ino];
	size_t at = (fi->flags & O_APPEND) ? f->len : (size_t)off;
	int err = at + size > f->len ? pass_resize(at + size) : 0;
	if (err == 0)
		memcpy(f->data + at, buf, size);
	pthread_mutex_unlock(&pass_lock);
	if (err)
		fuse_reply_err(req, err);
	else
		fuse_reply_write(req, size);
}

static void op_ok(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
	(void)ino, (void)fi;
	fuse_reply_err(req, 0);
}

static void op_fsync(fuse_req_t req, fuse_ino_t ino, int datasync, struct fuse_file_info *fi)
{
	(void)ino, (void)datasync, (void)fi;
	fuse_reply_err(req, 0);
}

static void op_opendir(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
	if (!valid(ino) || files[ino].kind != K_DIR) {
		fuse_reply_err(req, valid(ino) ? ENOTDIR : ENOENT);
		return;
	}
	fuse_reply_open(req, fi);
}

static void op_readdir(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off, struct fuse_file_info *fi)
{
	(void)fi;
	/* ".", "..", then the children in inode order. */
	fuse_ino_t list[NINO + 2];
	const char *names[NINO + 2];
	int n = 0;
	list[n] = ino, names[n++] = ".";
	list[n] = INO_ROOT, names[n++] = "..";
	for (fuse_ino_t i = INO_RREADME; i < NINO; i++)
		if (files[i].parent == ino)
			list[n] = i, names[n++] = files[i].name;
	char *buf = malloc(size);
	if (buf == NULL) {
		fuse_reply_err(req, ENOMEM);
		return;
	}
	size_t used = 0;
	for (off_t i = off; i < n; i++) {
		struct stat st = {.st_ino = list[i], .st_mode = files[list[i]].kind == K_DIR ? S_IFDIR : S_IFREG};
		size_t k = fuse_add_direntry(req, buf + used, size - used, names[i], &st, i + 1);
		if (k > size - used)
			break;
		used += k;
	}
	fuse_reply_buf(req, buf, used);
	free(buf);
}

static void op_statfs(fuse_req_t req, fuse_ino_t ino)
{
	(void)ino;
	struct statvfs sv;
	memset(&sv, 0, sizeof(sv));
	sv.f_bsize = sv.f_frsize = 4096;
	sv.f_namemax = 255;
	fuse_reply_statfs(req, &sv);
}

static const struct fuse_lowlevel_ops ops = {
	.init = op_init,
	.lookup = op_lookup,
	.getattr = op_getattr,
	.setattr = op_setattr,
	.open = op_open,
	.read = op_read,
	.write = op_write,
	.flush = op_ok,
	.release = op_ok,
	.fsync = op_fsync,
	.opendir = op_opendir,
	.readdir = op_readdir,
	.releasedir = op_ok,
	.statfs = op_statfs,
};

static char *slurp(const char *dir, const char *name, size_t *len)
{
	char path[PATH_MAX];
	snprintf(path, sizeof(path), "%s/%s", dir, name);
	FILE *f = fopen(path, "rb");
	if (f == NULL) {
		/* es_t before an evaluation answers ENODATA: serve it empty. */
		if (errno == ENODATA) {
			*len = 0;
			return calloc(1, 1);
		}
		fprintf(stderr, "passfs_minifs: %s: %s\n", path, strerror(errno));
		exit(1);
	}
	size_t cap = 65536, n = 0, k;
	char *s = malloc(cap);
	while (s && (k = fread(s + n, 1, cap - n, f)) > 0) {
		n += k;
		if (n == cap)
			s = realloc(s, cap *= 2);
	}
	fclose(f);
	if (s == NULL) {
		fprintf(stderr, "passfs_minifs: out of memory\n");
		exit(1);
	}
	*len = n;
	return s;
}

int main(int argc, char **argv)
{
	int debug = argc > 1 && strcmp(argv[1], "-d") == 0;
	if (argc != 3 + debug) {
		fprintf(stderr, "usage: passfs_minifs [-d] SRC_TASK_DIR MOUNTPOINT\n");
		return 2;
	}
	const char *src = argv[1 + debug], *mnt = argv[2 + debug];
	clock_gettime(CLOCK_REALTIME, &t0);
	char *s1 = strdup(src), *s2 = strdup(src);
	files[INO_TASK].name = basename(s1);
	const char *root = dirname(s2);
	for (fuse_ino_t i = INO_RREADME; i < NINO; i++)
		if (files[i].kind != K_DIR)
			files[i].data = slurp(files[i].parent == INO_ROOT ? root : src, files[i].name, &files[i].len);
	pass_cap = files[INO_PASS].len;

	char *fargv[] = {"passfs_minifs", "-o", "fsname=minifs,subtype=minifs,auto_unmount", debug ? "-d" : NULL,
			 NULL};
	struct fuse_args args = FUSE_ARGS_INIT(debug ? 4 : 3, fargv);
	struct fuse_session *se = fuse_session_new(&args, &ops, sizeof(ops), NULL);
	fuse_opt_free_args(&args);
	if (se == NULL)
		return 1;
	if (fuse_set_signal_handlers(se) != 0 || fuse_session_mount(se, mnt) != 0) {
		fuse_session_destroy(se);
		return 1;
	}
	struct fuse_loop_config *cfg = fuse_loop_cfg_create();
	fuse_loop_cfg_set_max_threads(cfg, 16);
	int rc = fuse_session_loop_mt(se, cfg);
	fuse_loop_cfg_destroy(cfg);
	fuse_remove_signal_handlers(se);
	fuse_session_unmount(se);
	fuse_session_destroy(se);
	return rc < 0 ? 1 : 0;
}
