/* mount.c - the task tree over the libfuse low-level API (contract: mount.h).
 *
 *   $ passfs mount -f mnt &
 *   $ cp my_pass.c mnt/vit_gelu/pass.c && cat mnt/vit_gelu/result.json
 *   {"task": "vit_gelu", "seq": 3, "state": "done", "verdict": "ok", ...}
 *
 * Files.  One table, fs/tree.c's tree_task_rows[], describes the files of a
 * task directory (name, kind, mode, how their bytes are produced; fs/watch.c
 * and fs/readme.c walk it too); tree_root_rows[] does the same for the root,
 * and tree_doc_rows[] for the manuals in the root's docs/ directory.
 * task_rows[] and root_rows[] (the root's rows, then the docs' rows) here are
 * those rows as this file serves them.
 * Handlers look a node up and dispatch on its row: there is no name
 * comparison outside row_index() and root_find().
 * Kinds:
 *   FIXED     bytes known at mount time (README.md, graph.json): served from
 *             the kernel page cache (keep_cache, long attribute timeout);
 *   COMPUTED  text from the service (result.json, es_t, status,
 *             summary.json): attribute timeout 0; each open takes a
 *             snapshot of the text (struct blob) that the handle's reads and
 *             fstat() serve, so one open sees one document; the kernel keeps
 *             its page cache only while the generation it was filled from is
 *             still current (keep_cache), and the service's notify callback
 *             invalidates the inodes when the text changes;
 *   PASS      pass.c: bytes in the service; writable;
 *   SCRATCH   any other name in a task directory, and every file in a
 *             scratch directory: bytes in memory;
 *   SDIR      a scratch directory (mkdir in a task directory or in another
 *             scratch directory: git init's .git/), in memory.
 * Scratch files and directories are not persisted: a remount shows the task
 * directory without them.  Caps per task (ENOSPC beyond): SCRATCH_MAX_ENTRIES
 * files and directories together, SCRATCH_TASK_BYTES of file bytes in all;
 * one file holds at most SCRATCH_MAX_BYTES (EFBIG beyond).  Only the task
 * directory has rows: in a scratch directory "pass.c" or "README.md" is an
 * ordinary scratch name.
 * Read-only rows refuse writes in the handlers, root included (root ignores
 * mode bits): EACCES for open-for-write, truncate, unlink and rename, EPERM
 * for chmod/chown/utimens.
 *
 * Inodes.  Fixed inode numbers: 1 the root, 2.. the root files, the docs'
 * files and the docs directory, and per task
 * a block of INO_STRIDE numbers (the directory, then one per row); pass.c
 * created while absent, scratch files and scratch directories take dynamic
 * numbers above the last task's block, never reused.  pass.c and scratch
 * files are nodes that can change kind: renaming pass.c away
 * turns its node into a scratch file holding a copy of the bytes (open
 * handles follow the inode, as on any file system); renaming a scratch file
 * onto pass.c hands its bytes to the service and makes its node the task's
 * pass.c, from any directory of its task.  Such nodes (and scratch
 * directories) are freed when unlinked, forgotten by the kernel and closed.
 *
 * Firing (docs/mount.md).  A struct handle hangs off fi->fh per open:
 * the wrote/truncated flags live there, never on the inode (a concurrent
 * reader's release must not clear them).  An evaluation fires at (a) release
 * of a pass.c handle that wrote, truncated, or was opened with O_TRUNC (or
 * created pass.c); (b) a rename onto pass.c whose file has no open writer,
 * else at the release of its last writer; (c) a truncate by path.  Flush of a
 * handle that wrote marks the task pending at once (release is asynchronous),
 * and so does a rename onto pass.c.  Because release is asynchronous, the
 * next save can reach us before the previous save's release: every request
 * that changes pass.c first passes pass_gate(), which fires the saves
 * already closed but not yet released and waits for fires in flight, so
 * each fire judges the bytes its own save left.
 *
 * Waiting reads.  Opening result.json or es_t while the service is busy with
 * the task (and without O_NONBLOCK) parks the request on a waiting list and
 * returns: no worker thread is held.  The request is answered by whichever
 * comes first: the service's notify callback (it runs on the service's
 * thread, outside any request) once the task is no longer busy, the timer
 * thread at --wait-timeout, an interrupt (^C: EINTR), or unmount.  A waiter
 * is "claimed" under m->wlock by exactly one of them; see wait_begin().
 *
 * Locks: m->lock (the node table, every handler) -> service lock;
 * m->wlock (waiting list) -> service lock; m->selock (the session, for
 * notifications) alone.  The notify callback never takes m->lock, so the
 * service may call it while a handler waits on the service.  svc_fire()
 * (disk writes) is called without m->lock: fire_unlock(), pass_gate(). */
#define _GNU_SOURCE
#define FUSE_USE_VERSION 314
#include "mount.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <time.h>
#include <unistd.h>

#include <fuse_lowlevel.h>

#include "file.h"
#include "datadir.h"
#include "readme.h"
#include "report.h"
#include "state.h"
#include "strbuf.h"
#include "tree.h"

/* Scratch caps.  A git repository of a pass with a few hundred commits
 * holds about 40 entries from git init plus about 5 per commit (3 loose
 * objects, their object directories, logs) and well under 1 MiB: 4096
 * entries leave room for that, and 64 MiB for editors' copies of the 1 MiB
 * pass.c, while bounding what one task can take from the daemon's memory. */
#define SCRATCH_MAX_ENTRIES 4096        /* files and directories per task: ENOSPC beyond */
#define SCRATCH_TASK_BYTES (64u << 20)  /* file bytes per task: ENOSPC beyond */
#define SCRATCH_MAX_BYTES (16u << 20)   /* per scratch file: EFBIG beyond */
#define ENTRY_TIMEOUT 60.0              /* names never change behind the kernel's back */
#define FIXED_ATTR_TIMEOUT 86400.0      /* README.md, graph.json never change */
#define FILE_ATTR_TIMEOUT 1.0           /* pass.c, scratch: changed only through the kernel */
#define DIR_ATTR_TIMEOUT 1.0
#define INO_ROOT FUSE_ROOT_ID
#define INO_TASK0 TREE_INO_TASK0        /* the first task directory */
#define INO_STRIDE TREE_INO_STRIDE      /* per task: the directory + one per row */
#define HASH_SIZE 4096

/* ---- the file table --------------------------------------------------------- */

enum kind { K_DIR, K_FIXED, K_COMPUTED, K_PASS, K_SCRATCH, K_SDIR };

struct mnt;
struct node;
struct handle;

/* Byte access for writable kinds.  Called under m->lock.  write and truncate
 * return 0 or -errno (EFBIG past the cap). */
struct io {
	size_t (*size)(struct mnt *m, struct node *n);
	size_t (*read)(struct mnt *m, struct node *n, char *buf, size_t len, uint64_t off);
	int (*write)(struct mnt *m, struct node *n, const char *buf, size_t len, uint64_t off);
	int (*truncate)(struct mnt *m, struct node *n, uint64_t size);
	void (*mtime)(struct mnt *m, struct node *n, struct timespec *ts);
};

struct row {
	const char *name;
	enum kind kind;
	mode_t mode;                    /* permission bits shown by stat */
	int waits;                      /* opens wait while the task is busy (TREE_WAIT_*) */
	/* FIXED and COMPUTED: the text (malloc'd, *len set), or NULL with errno
	 * set (ENOMEM). */
	tree_text_fn text;
	const struct io *io;            /* PASS and SCRATCH */
};

static const struct io pass_io, scratch_io;
static void pass_gate(struct mnt *m, int task, struct handle *self);
static void fire_unlock(struct mnt *m, int task);

/* The files of a task directory and of the root, in listing order: fs/tree.c's
 * tables (tree_task_rows[], then tree_root_rows[] followed by
 * tree_doc_rows[]) as this file serves them, filled by rows_init() before the
 * session starts.  root_rows[NRROWS + i] is docs/<doc i>. */
#define ROW_PASS TREE_PASS_C
#define NROWS TREE_NTASK
#define NRROWS TREE_NROOT
#define NDOCS TREE_NDOC
static struct row task_rows[NROWS], root_rows[NRROWS + NDOCS];

static void rows_from_tree(struct row *out, const struct tree_row *in, int n)
{
	for (int i = 0; i < n; i++) {
		int pass = in[i].kind == TREE_PASS;
		out[i] = (struct row){in[i].name, pass ? K_PASS : in[i].kind == TREE_FIXED ? K_FIXED : K_COMPUTED,
				      in[i].mode, in[i].waits, pass ? NULL : in[i].text, pass ? &pass_io : NULL};
	}
}

static void rows_fill(void)
{
	rows_from_tree(task_rows, tree_task_rows, NROWS);
	rows_from_tree(root_rows, tree_root_rows, NRROWS);
	rows_from_tree(root_rows + NRROWS, tree_doc_rows, NDOCS);
}

static void rows_init(void)
{
	static pthread_once_t once = PTHREAD_ONCE_INIT;
	pthread_once(&once, rows_fill);
}

static const struct row root_dir_row = {"", K_DIR, 0555, 0, NULL, NULL};
static const struct row task_dir_row = {"", K_DIR, 0755, 0, NULL, NULL};
static const struct row docs_dir_row = {TREE_DOCS_DIR, K_DIR, 0555, 0, NULL, NULL};
static const struct row scratch_row = {"", K_SCRATCH, 0644, 0, NULL, &scratch_io};
static const struct row sdir_row = {"", K_SDIR, 0755, 0, NULL, NULL};

/* ---- nodes, handles, blobs ---------------------------------------------------- */

/* An immutable, reference-counted text: what one open of a read-only file
 * sees. */
struct blob {
	atomic_int refs;
	uint64_t gen;                   /* the generation it was made at */
	struct timespec t;              /* when (its mtime) */
	size_t len;
	char data[];
};

struct node {
	fuse_ino_t ino;
	const struct row *row;          /* what it is now; changes for pass.c/scratch */
	int task;                       /* -1: the root and its files */
	int rrow;                       /* the row index in its table, -1 for dirs/scratch */
	struct node *hnext;             /* inode hash chain */
	/* directories (task and scratch): the scratch entries in it */
	struct node *children;
	/* pass.c and scratch only (never freed otherwise): */
	char *name;                     /* scratch: its name; NULL once unlinked */
	struct node *parent;            /* scratch: the directory it is in */
	struct node *next;              /* scratch: the next entry of that directory */
	uint64_t nlookup;               /* the kernel's references */
	int nopen, nwriters;            /* open handles, those with write access */
	struct handle *handles;         /* the open handles (pass.c/scratch opens) */
	int fire_on_release;            /* renamed onto pass.c while a writer was open */
	char *data;                     /* scratch bytes */
	size_t size, cap;
	mode_t mode;                    /* scratch and scratch directory permission bits */
	struct timespec mtime, ctime;
	/* FIXED/COMPUTED: the generation the kernel's page cache holds */
	uint64_t kgen;
	int kgen_ok;
};

/* Per open file (fi->fh). */
struct handle {
	struct node *node;
	int flags;                      /* open flags */
	unsigned writer : 1;            /* opened with write access */
	unsigned wrote : 1;             /* a write succeeded on this handle */
	unsigned truncated : 1;         /* ftruncate, O_TRUNC or created */
	unsigned flushed : 1;           /* pass.c: closed since its last change (fire due) */
	unsigned check_marked : 1;      /* check.c: its flush marked a check pending (release fires it) */
	struct blob *snap;              /* FIXED/COMPUTED: the text it reads */
	struct handle *hprev, *hnext;   /* the node's handles (pass.c/scratch) */
};

/* A directory listing, taken at opendir. */
struct dirent_snap {
	int n;
	struct {
		char *name;
		fuse_ino_t ino;
		mode_t mode;
	} e[];
};

/* A text cache entry of a FIXED or COMPUTED file. */
struct cache {
	int ok;
	uint64_t gen;
	struct blob *b;                 /* NULL with err set when the text is absent */
	int err;
};

struct mtask {
	struct node *dir;
	struct node *rows[NROWS];       /* fixed rows; rows[ROW_PASS] unused */
	struct node *pass;              /* NULL while pass.c is absent */
	int nentries;                   /* linked scratch files and directories (cap) */
	size_t nbytes;                  /* bytes of its scratch nodes not yet freed (cap) */
	int firing;                     /* fires in flight (pass_gate waits for them) */
	struct timespec mtime;          /* of the directory */
	struct cache cache[NROWS];
};

#define WAITED_MAX 64           /* processes remembered as having waited once */

/* A parked open of result.json or es_t. */
struct waiter {
	struct waiter *prev, *next;
	fuse_req_t req;
	struct node *node;              /* a fixed node: never freed */
	int flags;
	struct timespec deadline;       /* CLOCK_MONOTONIC */
	pid_t pid;                      /* the opening process */
	uint64_t seq;                   /* the evaluation it waits for (svc_busy_seq) */
	int claimed;                    /* taken off the list by exactly one party */
	int registered;                 /* the interrupt callback is installed */
	int interrupted;                /* the claim came from an interrupt */
};

struct mnt {
	struct mnt_opts o;
	char *mountpoint, *tasks_dir, *fuse_opts;
	struct svc *svc;
	struct tree_src src;            /* what the rows' producers read */
	int ntasks;
	fuse_ino_t dyn_next;            /* the next free dynamic inode number */
	struct timespec t0;
	uid_t uid;
	gid_t gid;

	pthread_mutex_t lock;           /* nodes, tasks, caches */
	pthread_cond_t fire_cv;         /* with lock: a task's fires in flight ended */
	struct node *hash[HASH_SIZE];
	struct node root, rootf[NRROWS + NDOCS];
	struct node docs;               /* the docs directory: rootf[NRROWS..] */
	struct cache root_cache[NRROWS + NDOCS];
	struct mtask *t;

	pthread_mutex_t selock;         /* se and se_live, for notifications */
	struct fuse_session *se;
	int se_live, mounted, handlers;

	pthread_mutex_t wlock;          /* the waiting list */
	pthread_cond_t wcond;           /* a waiter was added, or stop */
	struct waiter waiting;          /* list head */
	/* Processes that waited the whole --wait-timeout, and for which
	 * evaluation (under wlock): their next opens of that task's result.json
	 * or es_t answer at once until it is done.  An editor's view opens a
	 * file about six times; one wait per evaluation, not six. */
	struct waited {
		pid_t pid;
		int task;
		int waits;              /* TREE_WAIT_EVAL or TREE_WAIT_CHECK */
		uint64_t seq;
	} waited[WAITED_MAX];
	int waited_next;
	int ready;                      /* svc set: notifications may act */
	int stopping;                   /* answer everything now, accept no waits */
	pthread_t timer;
	int timer_started;
};

/* ---- small helpers -------------------------------------------------------- */

static void now_real(struct timespec *ts)
{
	clock_gettime(CLOCK_REALTIME, ts);
}

static int ts_before(const struct timespec *a, const struct timespec *b)
{
	return a->tv_sec < b->tv_sec || (a->tv_sec == b->tv_sec && a->tv_nsec < b->tv_nsec);
}

static struct blob *blob_new(char *text, size_t len, uint64_t gen)
{
	struct blob *b = malloc(sizeof(*b) + len + 1);
	if (b == NULL)
		return NULL;
	atomic_init(&b->refs, 1);
	b->gen = gen;
	now_real(&b->t);
	b->len = len;
	memcpy(b->data, text, len);
	b->data[len] = 0;
	return b;
}

static struct blob *blob_ref(struct blob *b)
{
	if (b)
		atomic_fetch_add(&b->refs, 1);
	return b;
}

static void blob_unref(struct blob *b)
{
	if (b && atomic_fetch_sub(&b->refs, 1) == 1)
		free(b);
}

static fuse_ino_t task_dir_ino(int task)
{
	return INO_TASK0 + (fuse_ino_t)task * INO_STRIDE;
}

/* Whether n is a node made and freed at run time (pass.c, scratch files
 * and scratch directories), as opposed to the fixed tree. */
static int is_dynamic(const struct node *n)
{
	return n->row->kind == K_PASS || n->row->kind == K_SCRATCH || n->row->kind == K_SDIR;
}

/* Whether n is a directory: the root, a task directory or a scratch
 * directory. */
static int is_dir(const struct node *n)
{
	return n->row->kind == K_DIR || n->row->kind == K_SDIR;
}

/* Whether n is a task directory, the only directory with rows. */
static int is_task_dir(const struct node *n)
{
	return n->row->kind == K_DIR && n->task >= 0;
}

/* Whether directory d can take new entries: a removed scratch directory
 * cannot (the kernel refuses that too, but an entry linked there would
 * count against the cap for ever). */
static int dir_alive(const struct node *d)
{
	return d->row->kind != K_SDIR || d->name != NULL;
}

static int is_readonly(const struct node *n)
{
	return n->row->kind == K_FIXED || n->row->kind == K_COMPUTED;
}

static struct node *node_get(struct mnt *m, fuse_ino_t ino)
{
	struct node *n = m->hash[ino % HASH_SIZE];
	while (n && n->ino != ino)
		n = n->hnext;
	return n;
}

static void hash_add(struct mnt *m, struct node *n)
{
	n->hnext = m->hash[n->ino % HASH_SIZE];
	m->hash[n->ino % HASH_SIZE] = n;
}

static void hash_del(struct mnt *m, struct node *n)
{
	struct node **p = &m->hash[n->ino % HASH_SIZE];
	while (*p && *p != n)
		p = &(*p)->hnext;
	if (*p)
		*p = n->hnext;
}

/* A new pass.c or scratch node (not yet linked anywhere). */
static struct node *node_new(struct mnt *m, fuse_ino_t ino, const struct row *row, int task)
{
	struct node *n = calloc(1, sizeof(*n));
	if (n == NULL)
		return NULL;
	n->ino = ino ? ino : m->dyn_next++;
	n->row = row;
	n->task = task;
	n->rrow = -1;
	n->mode = row->mode;
	now_real(&n->mtime);
	n->ctime = n->mtime;
	hash_add(m, n);
	return n;
}

static int node_linked(struct mnt *m, struct node *n)
{
	return n->name != NULL || (n->task >= 0 && m->t[n->task].pass == n);
}

/* Frees a pass.c/scratch node nobody can reach any more, and gives its
 * bytes back to its task's cap. */
static void node_maybe_free(struct mnt *m, struct node *n)
{
	if (!is_dynamic(n) || node_linked(m, n) || n->nlookup > 0 || n->nopen > 0)
		return;
	m->t[n->task].nbytes -= n->size;
	hash_del(m, n);
	free(n->data);
	free(n->name);
	free(n);
}

/* A directory's entries changed: its mtime and ctime are now. */
static void touch_dir(struct mnt *m, struct node *dir)
{
	if (dir->row->kind == K_SDIR) {
		now_real(&dir->mtime);
		dir->ctime = dir->mtime;
	} else if (dir->task >= 0) {
		now_real(&m->t[dir->task].mtime);
	}
}

/* The generation of a read-only node's text: 0 for FIXED rows, the task's
 * service generation for COMPUTED ones, the sum over tasks for the root. */
static uint64_t node_gen(struct mnt *m, struct node *n)
{
	if (n->row->kind != K_COMPUTED)
		return 0;
	if (n->task >= 0)
		return svc_generation(m->svc, n->task);
	uint64_t g = 0;
	for (int i = 0; i < m->ntasks; i++)
		g += svc_generation(m->svc, i);
	return g;
}

static struct cache *node_cache(struct mnt *m, struct node *n)
{
	return n->task >= 0 ? &m->t[n->task].cache[n->rrow] : &m->root_cache[n->rrow];
}

/* The current text of a FIXED/COMPUTED node, referenced (blob_unref), or
 * NULL with *err.  Under m->lock. */
static struct blob *text_get(struct mnt *m, struct node *n, int *err)
{
	struct cache *c = node_cache(m, n);
	/* The generation is read before the text: the text is at least that
	 * new, and a later change shows as a newer generation. */
	uint64_t gen = node_gen(m, n);
	if (!c->ok || c->gen != gen) {
		size_t len = 0;
		errno = 0;
		char *s = n->row->text(&m->src, n->task, &len);
		blob_unref(c->b);
		c->b = s ? blob_new(s, len, gen) : NULL;
		c->err = s ? (c->b ? 0 : ENOMEM) : (errno ? errno : EIO);
		c->gen = gen;
		c->ok = n->row->kind == K_FIXED ? c->b != NULL : 1;
		free(s);
	}
	*err = c->err;
	return blob_ref(c->b);
}

/* ---- pass.c and scratch bytes ------------------------------------------------------ */

static size_t pass_size(struct mnt *m, struct node *n)
{
	return svc_pass_size(m->svc, n->task);
}

static size_t pass_read(struct mnt *m, struct node *n, char *buf, size_t len, uint64_t off)
{
	return svc_pass_read(m->svc, n->task, buf, len, off);
}

static int pass_write(struct mnt *m, struct node *n, const char *buf, size_t len, uint64_t off)
{
	return svc_pass_write(m->svc, n->task, buf, len, off);
}

static int pass_truncate(struct mnt *m, struct node *n, uint64_t size)
{
	return svc_pass_truncate(m->svc, n->task, size);
}

static void pass_mtime(struct mnt *m, struct node *n, struct timespec *ts)
{
	int64_t sec;
	long nsec;
	svc_pass_mtime(m->svc, n->task, &sec, &nsec);
	ts->tv_sec = (time_t)sec;
	ts->tv_nsec = nsec;
}

static const struct io pass_io = {pass_size, pass_read, pass_write, pass_truncate, pass_mtime};

static size_t scratch_size(struct mnt *m, struct node *n)
{
	(void)m;
	return n->size;
}

static size_t scratch_read(struct mnt *m, struct node *n, char *buf, size_t len, uint64_t off)
{
	(void)m;
	if (off >= n->size)
		return 0;
	size_t k = n->size - (size_t)off;
	if (k > len)
		k = len;
	memcpy(buf, n->data + off, k);
	return k;
}

static int scratch_reserve(struct node *n, size_t need)
{
	void *d = n->data;
	int rc = base_grow(&d, &n->cap, need, 4096, SCRATCH_MAX_BYTES);
	n->data = d;
	return rc;
}

/* Sets n's size to `size` in its task's byte count (the bytes are already
 * reserved). */
static void scratch_resize(struct mnt *m, struct node *n, size_t size)
{
	m->t[n->task].nbytes += size;
	m->t[n->task].nbytes -= n->size;
	n->size = size;
}

/* Whether n may grow to `size` bytes under its task's byte cap: 0, or
 * -ENOSPC. */
static int scratch_room(struct mnt *m, struct node *n, size_t size)
{
	struct mtask *t = &m->t[n->task];
	if (size > n->size && size - n->size > SCRATCH_TASK_BYTES - (t->nbytes < SCRATCH_TASK_BYTES ? t->nbytes : SCRATCH_TASK_BYTES))
		return -ENOSPC;
	return 0;
}

static int scratch_write(struct mnt *m, struct node *n, const char *buf, size_t len, uint64_t off)
{
	if (off > SCRATCH_MAX_BYTES || len > SCRATCH_MAX_BYTES - off)
		return -EFBIG;
	size_t end = (size_t)off + len;
	int rc = scratch_room(m, n, end);
	if (rc == 0)
		rc = scratch_reserve(n, end);
	if (rc)
		return rc;
	if (off > n->size)
		memset(n->data + n->size, 0, (size_t)off - n->size);
	memcpy(n->data + off, buf, len);
	if (end > n->size)
		scratch_resize(m, n, end);
	now_real(&n->mtime);
	n->ctime = n->mtime;
	return 0;
}

static int scratch_truncate(struct mnt *m, struct node *n, uint64_t size)
{
	if (size > SCRATCH_MAX_BYTES)
		return -EFBIG;
	int rc = scratch_room(m, n, (size_t)size);
	if (rc == 0)
		rc = scratch_reserve(n, (size_t)size);
	if (rc)
		return rc;
	if (size > n->size)
		memset(n->data + n->size, 0, (size_t)size - n->size);
	scratch_resize(m, n, (size_t)size);
	now_real(&n->mtime);
	n->ctime = n->mtime;
	return 0;
}

static void scratch_mtime(struct mnt *m, struct node *n, struct timespec *ts)
{
	(void)m;
	*ts = n->mtime;
}

static const struct io scratch_io = {scratch_size, scratch_read, scratch_write, scratch_truncate, scratch_mtime};

/* ---- attributes ------------------------------------------------------------------- */

/* The number of scratch directories directly in directory d (its ".."
 * links). */
static nlink_t subdirs(const struct node *d)
{
	nlink_t k = 0;
	for (const struct node *c = d->children; c; c = c->next)
		k += c->row->kind == K_SDIR;
	return k;
}

/* Fills *st for n (h: the handle of an fstat, or NULL) and returns the
 * attribute timeout.  Under m->lock. */
static double node_attr(struct mnt *m, struct node *n, struct handle *h, struct stat *st)
{
	memset(st, 0, sizeof(*st));
	st->st_ino = n->ino;
	st->st_uid = m->uid;
	st->st_gid = m->gid;
	st->st_blksize = 4096;
	st->st_atim = st->st_mtim = st->st_ctim = m->t0;
	double timeout = 0;
	switch (n->row->kind) {
	case K_DIR:
		st->st_mode = S_IFDIR | n->row->mode;
		st->st_nlink = n == &m->root ? 3 + (nlink_t)m->ntasks : n->task < 0 ? 2 : 2 + subdirs(n);
		st->st_size = 4096;
		if (n->task >= 0)
			st->st_mtim = st->st_ctim = m->t[n->task].mtime;
		timeout = DIR_ATTR_TIMEOUT;
		break;
	case K_SDIR:
		st->st_mode = S_IFDIR | n->mode;
		st->st_nlink = (n->name ? 2 : 0) + subdirs(n);     /* 0 once removed */
		st->st_size = 4096;
		st->st_atim = st->st_mtim = n->mtime;
		st->st_ctim = n->ctime;
		timeout = DIR_ATTR_TIMEOUT;
		break;
	case K_FIXED:
	case K_COMPUTED: {
		int err;
		struct blob *b = h && h->snap ? blob_ref(h->snap) : text_get(m, n, &err);
		st->st_mode = S_IFREG | n->row->mode;
		st->st_nlink = 1;
		if (b) {
			st->st_size = (off_t)b->len;
			if (n->row->kind == K_COMPUTED)
				st->st_mtim = st->st_ctim = b->t;
		}
		blob_unref(b);
		timeout = n->row->kind == K_FIXED ? FIXED_ATTR_TIMEOUT : 0;
		break;
	}
	case K_PASS:
	case K_SCRATCH:
		st->st_mode = S_IFREG | (n->row->kind == K_PASS ? n->row->mode : n->mode);
		st->st_nlink = node_linked(m, n) ? 1 : 0;
		st->st_size = (off_t)n->row->io->size(m, n);
		n->row->io->mtime(m, n, &st->st_mtim);
		st->st_ctim = n->row->kind == K_PASS ? st->st_mtim : n->ctime;
		st->st_atim = st->st_mtim;
		timeout = FILE_ATTR_TIMEOUT;
		break;
	}
	st->st_blocks = (st->st_size + 511) / 512;
	return timeout;
}

/* Replies to a lookup/create-style request with n's entry, counting the
 * kernel's reference.  Unlocks m->lock. */
static void reply_entry_unlock(struct mnt *m, fuse_req_t req, struct node *n, struct fuse_file_info *fi)
{
	struct fuse_entry_param e;
	memset(&e, 0, sizeof(e));
	e.ino = n->ino;
	e.generation = 1;
	e.attr_timeout = node_attr(m, n, NULL, &e.attr);
	e.entry_timeout = ENTRY_TIMEOUT;
	n->nlookup++;
	pthread_mutex_unlock(&m->lock);
	int rc = fi ? fuse_reply_create(req, &e, fi) : fuse_reply_entry(req, &e);
	if (rc != 0) {
		/* The kernel never saw the entry (interrupted). */
		pthread_mutex_lock(&m->lock);
		n->nlookup--;
		node_maybe_free(m, n);
		pthread_mutex_unlock(&m->lock);
	}
}

/* ---- directories: finding names ------------------------------------------------------ */

static int name_ok(const char *name)
{
	size_t n = strlen(name);
	return n > 0 && n <= 255 && strchr(name, '/') == NULL && strcmp(name, ".") && strcmp(name, "..");
}

/* Why directory p cannot take a new entry `name` (create, mkdir): ENOENT,
 * ENOTDIR, root_err for the root (which holds no entries of the user's),
 * ENAMETOOLONG or EINVAL for the name; 0 when it can. */
static int new_entry_err(const struct node *p, const char *name, int root_err)
{
	if (p == NULL)
		return ENOENT;
	if (!is_dir(p))
		return ENOTDIR;
	if (p->task < 0)
		return root_err;
	if (!dir_alive(p))
		return ENOENT;
	if (!name_ok(name))
		return strlen(name) > 255 ? ENAMETOOLONG : EINVAL;
	return 0;
}

/* The row index named `name` in task_rows, or -1. */
static int row_index(const char *name)
{
	for (int i = 0; i < NROWS; i++)
		if (strcmp(name, task_rows[i].name) == 0)
			return i;
	return -1;
}

/* Whether `name` in directory p is its task's pass.c (only the task
 * directory has rows). */
static int is_pass_name(const struct node *p, const char *name)
{
	return is_task_dir(p) && row_index(name) == ROW_PASS;
}

/* The node called name in directory p (a task directory or a scratch
 * directory), or NULL.  In a task directory rows win over scratch names (a
 * scratch entry never takes a row's name).  Under m->lock. */
static struct node *dir_find(struct mnt *m, struct node *p, const char *name)
{
	if (is_task_dir(p)) {
		struct mtask *t = &m->t[p->task];
		int r = row_index(name);
		if (r == ROW_PASS)
			return t->pass;
		if (r >= 0)
			return t->rows[r];
	}
	for (struct node *n = p->children; n; n = n->next)
		if (strcmp(n->name, name) == 0)
			return n;
	return NULL;
}

/* The node called name in p, the root or the docs directory, or NULL. */
static struct node *root_find(struct mnt *m, struct node *p, const char *name)
{
	int docs = p == &m->docs;
	for (int i = docs ? NRROWS : 0; i < (docs ? NRROWS + NDOCS : NRROWS); i++)
		if (strcmp(name, root_rows[i].name) == 0)
			return &m->rootf[i];
	if (docs)
		return NULL;
	if (strcmp(name, TREE_DOCS_DIR) == 0)
		return &m->docs;
	int k = svc_find(m->svc, name);
	return k >= 0 ? m->t[k].dir : NULL;
}

/* Links scratch node n into directory dir (of n's task) as `name`, which
 * it takes over. */
static void scratch_link(struct mnt *m, struct node *n, struct node *dir, char *name)
{
	free(n->name);
	n->name = name;
	n->parent = dir;
	n->next = dir->children;
	dir->children = n;
	m->t[n->task].nentries++;
}

/* Takes a scratch file or directory out of its directory (unlink, rmdir,
 * moved, or renamed onto pass.c). */
static void scratch_unlink(struct mnt *m, struct node *n)
{
	if (n->parent)
		for (struct node **p = &n->parent->children; *p; p = &(*p)->next)
			if (*p == n) {
				*p = n->next;
				m->t[n->task].nentries--;
				break;
			}
	free(n->name);
	n->name = NULL;
	n->parent = NULL;
	n->next = NULL;
}

/* pass.c stops being pass.c (unlinked or renamed away): its node becomes a
 * scratch file holding a copy of the bytes, so handles still open on it keep
 * reading and writing that file, not the next pass.c.  0 or -errno. */
static int pass_detach(struct mnt *m, struct node *n)
{
	size_t len = svc_pass_size(m->svc, n->task);
	scratch_resize(m, n, 0);
	int rc = scratch_reserve(n, len ? len : 1);
	if (rc)
		return rc;
	/* Counted against the byte cap but never refused by it: unlinking
	 * pass.c (git checkout) must not fail. */
	scratch_resize(m, n, svc_pass_read(m->svc, n->task, n->data, len, 0));
	pass_mtime(m, n, &n->mtime);
	now_real(&n->ctime);
	n->mode = task_rows[ROW_PASS].mode;
	n->row = &scratch_row;
	n->fire_on_release = 0;
	m->t[n->task].pass = NULL;
	return 0;
}

/* Whether n is a task's check.c: a scratch file of that name in the task
 * directory itself (fs/tree.h, TREE_CHECK_SOURCE). */
static int is_check_src(const struct node *n)
{
	return n->row->kind == K_SCRATCH && n->name && n->parent && is_task_dir(n->parent) &&
	       strcmp(n->name, TREE_CHECK_SOURCE) == 0;
}

/* Whether n is a task's rerun trigger (fs/tree.h, TREE_RERUN_TRIGGER): a
 * save of it evaluates the task's pass.c again, bytes evaluated before
 * too. */
static int is_rerun_trigger(const struct node *n)
{
	return n->row->kind == K_SCRATCH && n->name && n->parent && is_task_dir(n->parent) &&
	       strcmp(n->name, TREE_RERUN_TRIGGER) == 0;
}

/* A copy of check.c's bytes for a check (under m->lock), or NULL. */
static char *check_copy(const struct node *n, size_t *len)
{
	char *b = malloc(n->size ? n->size : 1);
	if (b && n->size)
		memcpy(b, n->data, n->size);
	*len = n->size;
	return b;
}

/* Fires a check of bytes taken by check_copy (none when NULL); frees them.
 * Called without m->lock. */
static void check_fire(struct mnt *m, int task, char *src, size_t len)
{
	if (src == NULL)
		return;
	uint64_t seq;
	svc_check_fire(m->svc, task, src, len, &seq);
	free(src);
}

/* ---- lookup, attributes, forget ------------------------------------------------------- */

static void op_lookup(fuse_req_t req, fuse_ino_t parent, const char *name)
{
	struct mnt *m = fuse_req_userdata(req);
	pthread_mutex_lock(&m->lock);
	struct node *p = node_get(m, parent), *n = NULL;
	if (p && is_dir(p))
		n = p->task < 0 ? root_find(m, p, name) : dir_find(m, p, name);
	if (n == NULL) {
		pthread_mutex_unlock(&m->lock);
		fuse_reply_err(req, p == NULL ? ENOENT : !is_dir(p) ? ENOTDIR : ENOENT);
		return;
	}
	reply_entry_unlock(m, req, n, NULL);
}

static void forget_one(struct mnt *m, fuse_ino_t ino, uint64_t nlookup)
{
	struct node *n = node_get(m, ino);
	if (n && is_dynamic(n)) {
		n->nlookup = nlookup > n->nlookup ? 0 : n->nlookup - nlookup;
		node_maybe_free(m, n);
	}
}

static void op_forget(fuse_req_t req, fuse_ino_t ino, uint64_t nlookup)
{
	struct mnt *m = fuse_req_userdata(req);
	pthread_mutex_lock(&m->lock);
	forget_one(m, ino, nlookup);
	pthread_mutex_unlock(&m->lock);
	fuse_reply_none(req);
}

static void op_forget_multi(fuse_req_t req, size_t count, struct fuse_forget_data *forgets)
{
	struct mnt *m = fuse_req_userdata(req);
	pthread_mutex_lock(&m->lock);
	for (size_t i = 0; i < count; i++)
		forget_one(m, forgets[i].ino, forgets[i].nlookup);
	pthread_mutex_unlock(&m->lock);
	fuse_reply_none(req);
}

static void op_getattr(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
	struct mnt *m = fuse_req_userdata(req);
	struct stat st;
	pthread_mutex_lock(&m->lock);
	struct node *n = node_get(m, ino);
	if (n == NULL) {
		pthread_mutex_unlock(&m->lock);
		fuse_reply_err(req, ENOENT);
		return;
	}
	/* fstat() of an open read-only file: the size of what that open reads. */
	struct handle *h = fi && is_readonly(n) ? (struct handle *)(uintptr_t)fi->fh : NULL;
	double timeout = node_attr(m, n, h, &st);
	pthread_mutex_unlock(&m->lock);
	fuse_reply_attr(req, &st, timeout);
}

static void set_time(struct timespec *dst, const struct timespec *src, int now)
{
	if (now)
		now_real(dst);
	else
		*dst = *src;
}

static void op_setattr(fuse_req_t req, fuse_ino_t ino, struct stat *attr, int to_set, struct fuse_file_info *fi)
{
	struct mnt *m = fuse_req_userdata(req);
	const int times = FUSE_SET_ATTR_ATIME | FUSE_SET_ATTR_MTIME | FUSE_SET_ATTR_ATIME_NOW |
			  FUSE_SET_ATTR_MTIME_NOW | FUSE_SET_ATTR_CTIME;
	const int owner = FUSE_SET_ATTR_MODE | FUSE_SET_ATTR_UID | FUSE_SET_ATTR_GID;
	int err = 0, fire = -1;
	struct stat st;
	double timeout = 0;
	pthread_mutex_lock(&m->lock);
	struct node *n = node_get(m, ino);
	if (n && n->row->kind == K_PASS && (to_set & FUSE_SET_ATTR_SIZE)) {
		pass_gate(m, n->task, fi ? (struct handle *)(uintptr_t)fi->fh : NULL);
		n = node_get(m, ino);
	}
	if (n == NULL) {
		err = ENOENT;
		goto out;
	}
	switch (n->row->kind) {
	case K_DIR:
		/* Directories are fixed; times are accepted and ignored (rsync -a). */
		if (to_set & (owner | FUSE_SET_ATTR_SIZE))
			err = EPERM;
		break;
	case K_FIXED:
	case K_COMPUTED:
		if (to_set & FUSE_SET_ATTR_SIZE)
			err = EACCES;
		else if (to_set & (owner | times))
			err = EPERM;
		break;
	case K_PASS:
		/* chmod, chown and utimens are accepted and ignored (cp -a, vim). */
		if (to_set & FUSE_SET_ATTR_SIZE) {
			int rc = n->row->io->truncate(m, n, (uint64_t)attr->st_size);
			if (rc) {
				err = -rc;
				break;
			}
			struct handle *h = fi ? (struct handle *)(uintptr_t)fi->fh : NULL;
			if (h)
				h->truncated = 1;       /* ftruncate: fires at that handle's release */
			else
				fire = n->task;         /* truncate by path: fires now */
		}
		break;
	case K_SCRATCH:
		if (to_set & FUSE_SET_ATTR_SIZE) {
			int rc = n->row->io->truncate(m, n, (uint64_t)attr->st_size);
			if (rc) {
				err = -rc;
				break;
			}
		}
		if (to_set & FUSE_SET_ATTR_MODE)
			n->mode = attr->st_mode & 07777;
		if (to_set & (FUSE_SET_ATTR_MTIME | FUSE_SET_ATTR_MTIME_NOW))
			set_time(&n->mtime, &attr->st_mtim, to_set & FUSE_SET_ATTR_MTIME_NOW);
		if (to_set & (owner | times | FUSE_SET_ATTR_SIZE))
			now_real(&n->ctime);
		break;
	case K_SDIR:
		/* Like a scratch file's (git init probes chmod); owners are
		 * accepted and ignored. */
		if (to_set & FUSE_SET_ATTR_SIZE) {
			err = EISDIR;
			break;
		}
		if (to_set & FUSE_SET_ATTR_MODE)
			n->mode = attr->st_mode & 07777;
		if (to_set & (FUSE_SET_ATTR_MTIME | FUSE_SET_ATTR_MTIME_NOW))
			set_time(&n->mtime, &attr->st_mtim, to_set & FUSE_SET_ATTR_MTIME_NOW);
		if (to_set & (owner | times))
			now_real(&n->ctime);
		break;
	}
	if (err == 0)
		timeout = node_attr(m, n, NULL, &st);
out:
	if (fire >= 0)
		fire_unlock(m, fire);
	else
		pthread_mutex_unlock(&m->lock);
	if (err)
		fuse_reply_err(req, err);
	else
		fuse_reply_attr(req, &st, timeout);
}

static void op_access(fuse_req_t req, fuse_ino_t ino, int mask)
{
	struct mnt *m = fuse_req_userdata(req);
	int err = 0;
	pthread_mutex_lock(&m->lock);
	struct node *n = node_get(m, ino);
	if (n == NULL)
		err = ENOENT;
	else if ((mask & W_OK) && (is_readonly(n) || (n->row->kind == K_DIR && n->task < 0)))
		err = EACCES;
	else if ((mask & X_OK) && !is_dir(n) && !(n->row->kind == K_SCRATCH && (n->mode & 0111)))
		err = EACCES;           /* scratch files keep their x bits (git's hooks) */
	pthread_mutex_unlock(&m->lock);
	fuse_reply_err(req, err);
}

/* ---- opening read-only files, and waiting ------------------------------------------------ */

/* Answers an open of a FIXED/COMPUTED node with a snapshot of its text.
 * Takes and drops m->lock. */
static void answer_ro_open(struct mnt *m, fuse_req_t req, struct node *n, int flags)
{
	struct fuse_file_info fi;
	memset(&fi, 0, sizeof(fi));
	fi.flags = flags;
	struct handle *h = calloc(1, sizeof(*h));
	if (h == NULL) {
		fuse_reply_err(req, ENOMEM);
		return;
	}
	int err = 0;
	pthread_mutex_lock(&m->lock);
	struct blob *b = text_get(m, n, &err);
	if (b == NULL) {
		pthread_mutex_unlock(&m->lock);
		free(h);
		fuse_reply_err(req, err ? err : EIO);
		return;
	}
	h->node = n;
	h->flags = flags;
	h->snap = b;
	/* Keep the kernel's pages only if they came from this very text. */
	fi.keep_cache = n->kgen_ok && n->kgen == b->gen;
	n->kgen = b->gen;
	n->kgen_ok = 1;
	fi.noflush = 1;
	fi.fh = (uint64_t)(uintptr_t)h;
	n->nopen++;
	pthread_mutex_unlock(&m->lock);
	if (fuse_reply_open(req, &fi) != 0) {
		pthread_mutex_lock(&m->lock);
		n->nopen--;
		pthread_mutex_unlock(&m->lock);
		blob_unref(h->snap);
		free(h);
	}
}

static void list_del(struct waiter *w)
{
	w->prev->next = w->next;
	w->next->prev = w->prev;
	w->prev = w->next = w;
}

/* Answers a claimed waiter (by the party that claimed it, outside any
 * interrupt callback). */
static void wait_finish(struct mnt *m, struct waiter *w)
{
	/* After this no interrupt callback runs for w, nor is one running. */
	fuse_req_interrupt_func(w->req, NULL, NULL);
	if (w->interrupted)
		fuse_reply_err(w->req, EINTR);
	else
		answer_ro_open(m, w->req, w->node, w->flags);
	free(w);
}

/* ^C on a waiting read.  Runs in libfuse's interrupt path, possibly inside
 * wait_begin()'s fuse_req_interrupt_func() when the interrupt came first. */
static void on_interrupt(fuse_req_t req, void *data)
{
	struct mnt *m = fuse_req_userdata(req);
	struct waiter *w = data;
	pthread_mutex_lock(&m->wlock);
	if (w->claimed) {
		pthread_mutex_unlock(&m->wlock);
		return;
	}
	w->claimed = 1;
	w->interrupted = 1;
	list_del(w);
	int registered = w->registered;
	pthread_mutex_unlock(&m->wlock);
	if (!registered)
		return;                 /* wait_begin() answers it */
	fuse_reply_err(req, EINTR);
	free(w);
}

/* What a waiting row's open waits for: the task's evaluation (result.json,
 * es_t) or its check (check.json).  The seq it waits for, 0 when none. */
static uint64_t row_busy_seq(struct mnt *m, const struct node *n)
{
	return n->row->waits == TREE_WAIT_CHECK ? svc_check_busy_seq(m->svc, n->task) : svc_busy_seq(m->svc, n->task);
}

static int row_busy(struct mnt *m, const struct node *n)
{
	return n->row->waits == TREE_WAIT_CHECK ? svc_check_busy(m->svc, n->task) : svc_busy(m->svc, n->task);
}

/* Parks an open of node n while its task is busy.  Returns 1 when the
 * request now belongs to the waiting list (answered later), 0 when the
 * caller should answer it now. */
static int wait_begin(struct mnt *m, fuse_req_t req, struct node *n, int flags)
{
	struct waiter *w = calloc(1, sizeof(*w));
	if (w == NULL)
		return 0;
	w->req = req;
	w->node = n;
	w->flags = flags;
	clock_gettime(CLOCK_MONOTONIC, &w->deadline);
	double t = m->o.wait_timeout_s;
	w->deadline.tv_sec += (time_t)t;
	w->deadline.tv_nsec += (long)((t - (double)(time_t)t) * 1e9);
	if (w->deadline.tv_nsec >= 1000000000L) {
		w->deadline.tv_sec++;
		w->deadline.tv_nsec -= 1000000000L;
	}
	const struct fuse_ctx *fc = fuse_req_ctx(req);
	w->pid = fc ? fc->pid : 0;
	pthread_mutex_lock(&m->wlock);
	/* Checked under wlock: a notification that makes the task idle after
	 * this check finds the waiter on the list. */
	w->seq = row_busy_seq(m, n);
	int waited_once = 0;
	for (int i = 0; i < WAITED_MAX && w->pid > 0 && w->seq; i++)
		waited_once |= m->waited[i].pid == w->pid && m->waited[i].task == n->task &&
			       m->waited[i].waits == n->row->waits && m->waited[i].seq == w->seq;
	if (m->stopping || w->seq == 0 || waited_once) {
		pthread_mutex_unlock(&m->wlock);
		free(w);
		return 0;
	}
	w->next = &m->waiting;
	w->prev = m->waiting.prev;
	m->waiting.prev->next = w;
	m->waiting.prev = w;
	pthread_cond_signal(&m->wcond);
	pthread_mutex_unlock(&m->wlock);

	/* Without wlock: an interrupt that already arrived runs on_interrupt
	 * right here. */
	fuse_req_interrupt_func(req, on_interrupt, w);
	pthread_mutex_lock(&m->wlock);
	w->registered = 1;
	int claimed = w->claimed;
	pthread_mutex_unlock(&m->wlock);
	/* Claimed meanwhile (idle, interrupted, stopping): the claimer left the
	 * answer to us. */
	if (claimed)
		wait_finish(m, w);
	return 1;
}

/* Claims and answers the waiters that are due: those of `task` (-1: any)
 * whose task is no longer busy, those past their deadline, or all when
 * stopping. */
static void wake_due(struct mnt *m, int task)
{
	struct waiter *due = NULL;
	struct timespec now;
	clock_gettime(CLOCK_MONOTONIC, &now);
	pthread_mutex_lock(&m->wlock);
	for (struct waiter *w = m->waiting.next, *nx; w != &m->waiting; w = nx) {
		nx = w->next;
		int late = !ts_before(&now, &w->deadline);
		int go = m->stopping || late ||
			 ((task < 0 || w->node->task == task) && !row_busy(m, w->node));
		if (!go)
			continue;
		if (late && !m->stopping && w->pid > 0 && row_busy_seq(m, w->node) == w->seq) {
			m->waited[m->waited_next] = (struct waited){w->pid, w->node->task, w->node->row->waits, w->seq};
			m->waited_next = (m->waited_next + 1) % WAITED_MAX;
		}
		w->claimed = 1;
		list_del(w);
		if (w->registered) {
			w->next = due;
			due = w;
		}
	}
	pthread_mutex_unlock(&m->wlock);
	while (due) {
		struct waiter *w = due;
		due = w->next;
		wait_finish(m, w);
	}
}

/* Answers waiters at --wait-timeout with the state as it is. */
static void *timer_main(void *arg)
{
	struct mnt *m = arg;
	pthread_mutex_lock(&m->wlock);
	while (!m->stopping) {
		struct timespec first = {0, 0};
		int any = 0;
		for (struct waiter *w = m->waiting.next; w != &m->waiting; w = w->next)
			if (!any || ts_before(&w->deadline, &first)) {
				first = w->deadline;
				any = 1;
			}
		if (any)
			pthread_cond_timedwait(&m->wcond, &m->wlock, &first);
		else
			pthread_cond_wait(&m->wcond, &m->wlock);
		if (m->stopping)
			break;
		pthread_mutex_unlock(&m->wlock);
		wake_due(m, -1);
		pthread_mutex_lock(&m->wlock);
	}
	pthread_mutex_unlock(&m->wlock);
	return NULL;
}

/* The service's notify callback: task's state or texts changed.  Runs on the
 * service's notifier thread, never inside a FUSE request, so it may tell the
 * kernel to drop cached pages and attributes. */
static void on_notify(void *ctx, int task)
{
	struct mnt *m = ctx;
	pthread_mutex_lock(&m->wlock);
	int ready = m->ready;
	pthread_mutex_unlock(&m->wlock);
	if (!ready)
		return;
	pthread_mutex_lock(&m->selock);
	if (m->se_live) {
		for (int r = 0; r < NROWS; r++)
			if (task_rows[r].kind == K_COMPUTED)
				fuse_lowlevel_notify_inval_inode(m->se, task_dir_ino(task) + 1 + (fuse_ino_t)r, 0, 0);
		for (int r = 0; r < NRROWS; r++)
			if (root_rows[r].kind == K_COMPUTED)
				fuse_lowlevel_notify_inval_inode(m->se, m->rootf[r].ino, 0, 0);
	}
	pthread_mutex_unlock(&m->selock);
	/* Invalidate first, then answer: a woken reader must not find the old
	 * pages. */
	wake_due(m, task);
}

/* ---- open, read, write, flush, release ------------------------------------------------------ */

static void handle_link(struct node *n, struct handle *h)
{
	h->hprev = NULL;
	h->hnext = n->handles;
	if (n->handles)
		n->handles->hprev = h;
	n->handles = h;
}

static void handle_unlink(struct node *n, struct handle *h)
{
	if (h->hprev)
		h->hprev->hnext = h->hnext;
	else if (n->handles == h)
		n->handles = h->hnext;
	if (h->hnext)
		h->hnext->hprev = h->hprev;
	h->hprev = h->hnext = NULL;
}

/* Back-to-back saves.  Every fire must judge the bytes its save left, but
 * release, where most saves fire, reaches us asynchronously, after close()
 * returned: the next save's O_TRUNC open or write can be handled first, or
 * between a release's decision to fire and the service's snapshot
 * (`cp a pass.c; cp b pass.c` evaluated an empty file for a's save).  So
 * every request that changes pass.c's bytes passes this gate first, under
 * m->lock: it waits until the task's fires in flight have returned (their
 * snapshots are taken), and it fires now the saves whose handle was closed
 * (flushed) since its last change but not yet released -- their releases
 * then fire nothing.  A handle changing the bytes again after its own flush
 * (bash's `>` flushes before it writes) only clears its mark.  Waiting drops
 * m->lock: callers look their nodes up after the gate.  Only saves that
 * follow one another within a fire's duration ever wait. */
static void pass_gate(struct mnt *m, int task, struct handle *self)
{
	struct mtask *t = &m->t[task];
	for (;;) {
		while (t->firing > 0)
			pthread_cond_wait(&m->fire_cv, &m->lock);
		int due = 0;
		if (t->pass)
			for (struct handle *h = t->pass->handles; h; h = h->hnext)
				if (h != self && h->flushed && (h->wrote || h->truncated)) {
					h->wrote = h->truncated = h->flushed = 0;
					due = 1;
				}
		if (!due)
			break;
		t->firing++;
		pthread_mutex_unlock(&m->lock);
		uint64_t seq;
		svc_fire(m->svc, task, &seq);
		pthread_mutex_lock(&m->lock);
		if (--t->firing == 0)
			pthread_cond_broadcast(&m->fire_cv);
	}
	if (self)
		self->flushed = 0;
}

/* Fires task's pass.c for a handler that decided so under m->lock, and
 * drops m->lock: the fire counts as in flight (pass_gate waits for it)
 * before the lock is dropped, so no change to the bytes can come between
 * the decision and the service's snapshot. */
static void fire_unlock_how(struct mnt *m, int task, int rerun)
{
	m->t[task].firing++;
	pthread_mutex_unlock(&m->lock);
	uint64_t seq;
	if (rerun)
		svc_rerun(m->svc, task, &seq);
	else
		svc_fire(m->svc, task, &seq);
	pthread_mutex_lock(&m->lock);
	if (--m->t[task].firing == 0)
		pthread_cond_broadcast(&m->fire_cv);
	pthread_mutex_unlock(&m->lock);
}

static void fire_unlock(struct mnt *m, int task)
{
	fire_unlock_how(m, task, 0);
}

/* Opens a pass.c/scratch node: a handle with its flags.  Under m->lock.
 * Returns 0 or an errno. */
static int open_file(struct mnt *m, struct node *n, struct fuse_file_info *fi, int created)
{
	struct handle *h = calloc(1, sizeof(*h));
	if (h == NULL)
		return ENOMEM;
	h->node = n;
	h->flags = fi->flags;
	h->writer = (fi->flags & O_ACCMODE) != O_RDONLY;
	if ((fi->flags & O_TRUNC) && !created) {
		int rc = n->row->io->truncate(m, n, 0);
		if (rc) {
			free(h);
			return -rc;
		}
		h->truncated = 1;
	}
	if (created)
		h->truncated = 1;
	n->nopen++;
	if (h->writer)
		n->nwriters++;
	handle_link(n, h);
	fi->fh = (uint64_t)(uintptr_t)h;
	fi->keep_cache = 0;
	fi->direct_io = 0;
	fi->noflush = !h->writer;       /* flush matters only for writers (pending) */
	return 0;
}

/* Undoes open_file() when the kernel never got the reply. */
static void open_undo(struct mnt *m, struct fuse_file_info *fi)
{
	struct handle *h = (struct handle *)(uintptr_t)fi->fh;
	pthread_mutex_lock(&m->lock);
	h->node->nopen--;
	if (h->writer)
		h->node->nwriters--;
	handle_unlink(h->node, h);
	node_maybe_free(m, h->node);
	pthread_mutex_unlock(&m->lock);
	free(h);
}

static void op_open(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
	struct mnt *m = fuse_req_userdata(req);
	int acc = fi->flags & O_ACCMODE;
	pthread_mutex_lock(&m->lock);
	struct node *n = node_get(m, ino);
	if (n && n->row->kind == K_PASS && (fi->flags & O_TRUNC)) {
		pass_gate(m, n->task, NULL);
		n = node_get(m, ino);
	}
	int err = 0;
	if (n == NULL)
		err = ENOENT;
	else if (is_dir(n))
		err = EISDIR;
	else if (is_readonly(n) && (acc != O_RDONLY || (fi->flags & O_TRUNC)))
		err = EACCES;
	if (err || is_readonly(n)) {
		pthread_mutex_unlock(&m->lock);
		if (err)
			fuse_reply_err(req, err);
		else if (!(n->row->waits && !(fi->flags & O_NONBLOCK) && wait_begin(m, req, n, fi->flags)))
			answer_ro_open(m, req, n, fi->flags);
		return;
	}
	err = open_file(m, n, fi, 0);
	pthread_mutex_unlock(&m->lock);
	if (err)
		fuse_reply_err(req, err);
	else if (fuse_reply_open(req, fi) != 0)
		open_undo(m, fi);
}

static void op_read(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off, struct fuse_file_info *fi)
{
	struct mnt *m = fuse_req_userdata(req);
	struct handle *h = (struct handle *)(uintptr_t)fi->fh;
	(void)ino;
	if (h->snap) {
		/* The snapshot is immutable and held by the handle: no lock. */
		size_t len = h->snap->len, k = 0;
		if ((uint64_t)off < len)
			k = len - (size_t)off < size ? len - (size_t)off : size;
		fuse_reply_buf(req, h->snap->data + (k ? off : 0), k);
		return;
	}
	char *buf = malloc(size ? size : 1);
	if (buf == NULL) {
		fuse_reply_err(req, ENOMEM);
		return;
	}
	pthread_mutex_lock(&m->lock);
	struct node *n = h->node;
	size_t got = n->row->io->read(m, n, buf, size, (uint64_t)off);
	pthread_mutex_unlock(&m->lock);
	fuse_reply_buf(req, buf, got);
	free(buf);
}

static void op_write(fuse_req_t req, fuse_ino_t ino, const char *buf, size_t size, off_t off,
		     struct fuse_file_info *fi)
{
	struct mnt *m = fuse_req_userdata(req);
	struct handle *h = (struct handle *)(uintptr_t)fi->fh;
	(void)ino;
	pthread_mutex_lock(&m->lock);
	struct node *n = h->node;
	if (n->row->kind == K_PASS)
		pass_gate(m, n->task, h);
	int rc = -EBADF;
	if (n->row->io) {
		/* Without writeback caching O_APPEND is ours to honour. */
		uint64_t at = (h->flags & O_APPEND) ? n->row->io->size(m, n) : (uint64_t)off;
		rc = n->row->io->write(m, n, buf, size, at);
		if (rc == 0)
			h->wrote = 1;
	}
	pthread_mutex_unlock(&m->lock);
	if (rc)
		fuse_reply_err(req, -rc);
	else
		fuse_reply_write(req, size);
}

/* Whether the state directory's file system visibly lacks room to save
 * `bytes` of pass.c (with its history copy and a result): then the save at
 * release would fail, so the writer's close() is told now (ENOSPC) rather
 * than succeeding on bytes that will never be evaluated.  A file system that
 * reports no sizes (f_blocks 0) is never judged full. */
static int state_full(struct mnt *m, size_t bytes)
{
	struct statvfs sv;
	if (statvfs(svc_state_dir(m->svc), &sv) != 0 || sv.f_blocks == 0 || sv.f_frsize == 0)
		return 0;
	unsigned long long avail = (unsigned long long)(geteuid() == 0 ? sv.f_bfree : sv.f_bavail) * sv.f_frsize;
	return avail < 2ull * bytes + (64u << 10);
}

static void op_flush(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
	struct mnt *m = fuse_req_userdata(req);
	struct handle *h = (struct handle *)(uintptr_t)fi->fh;
	(void)ino;
	int task = -1;
	pthread_mutex_lock(&m->lock);
	if (h->node->row->kind == K_PASS && (h->wrote || h->truncated)) {
		task = h->node->task;
		h->flushed = 1;
	}
	int check = is_check_src(h->node) && (h->wrote || h->truncated) ? h->node->task : -1;
	if (check >= 0)
		h->check_marked = 1;
	/* a save of the rerun trigger: result.json waits for the rerun */
	if (task < 0 && is_rerun_trigger(h->node) && (h->wrote || h->truncated))
		task = h->node->task;
	pthread_mutex_unlock(&m->lock);
	if (check >= 0)
		svc_check_mark_pending(m->svc, check);  /* a read of check.json waits for it */
	/* Release comes later and asynchronously: from now on a read of
	 * result.json must wait for the evaluation of these bytes. */
	if (task >= 0 && state_full(m, svc_pass_size(m->svc, task))) {
		/* the bytes stay (reads show them); the release's save fails
		 * and result.json says so (save_error) */
		fuse_reply_err(req, ENOSPC);
		return;
	}
	if (task >= 0)
		svc_mark_pending(m->svc, task);
	fuse_reply_err(req, 0);
}

static void op_release(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
	struct mnt *m = fuse_req_userdata(req);
	struct handle *h = (struct handle *)(uintptr_t)fi->fh;
	(void)ino;
	int fire = -1, check = -1, rerun = 0;
	char *csrc = NULL;
	size_t clen = 0;
	pthread_mutex_lock(&m->lock);
	struct node *n = h->node;
	if ((h->wrote || h->truncated) && is_rerun_trigger(n)) {
		fire = n->task;
		rerun = 1;
	} else if (n->row->kind == K_PASS) {
		int last_writer = h->writer && n->nwriters == 1;
		if (h->wrote || h->truncated || (last_writer && n->fire_on_release)) {
			fire = n->task;
			n->fire_on_release = 0;
		}
	} else if ((h->wrote || h->truncated) && (is_check_src(n) || h->check_marked)) {
		/* (check_marked: renamed away since its flush; its pending
		 * check still comes, with the bytes written) */
		check = n->task;
		csrc = check_copy(n, &clen);
	}
	if (h->writer)
		n->nwriters--;
	n->nopen--;
	handle_unlink(n, h);
	node_maybe_free(m, n);
	if (fire >= 0)
		fire_unlock_how(m, fire, rerun);
	else
		pthread_mutex_unlock(&m->lock);
	if (check >= 0)
		check_fire(m, check, csrc, clen);
	blob_unref(h->snap);
	free(h);
	fuse_reply_err(req, 0);
}

static void op_fsync(fuse_req_t req, fuse_ino_t ino, int datasync, struct fuse_file_info *fi)
{
	/* fsync of pass.c makes its bytes durable in the state directory
	 * (svc_pass_sync) without firing: the evaluation comes with the close,
	 * as always.  Other files have nothing to sync. */
	struct mnt *m = fuse_req_userdata(req);
	struct handle *h = (struct handle *)(uintptr_t)fi->fh;
	(void)ino;
	(void)datasync;
	int task = -1;
	pthread_mutex_lock(&m->lock);
	if (h != NULL && h->node->row->kind == K_PASS)
		task = h->node->task;
	pthread_mutex_unlock(&m->lock);
	int rc = task >= 0 ? svc_pass_sync(m->svc, task) : 0;
	fuse_reply_err(req, rc < 0 ? -rc : 0);
}

/* ---- creating, removing, renaming ------------------------------------------------------------ */

static void op_create(fuse_req_t req, fuse_ino_t parent, const char *name, mode_t mode, struct fuse_file_info *fi)
{
	struct mnt *m = fuse_req_userdata(req);
	int err = 0, created = 1;
	struct node *n = NULL;
	pthread_mutex_lock(&m->lock);
	struct node *p = node_get(m, parent);
	if ((err = new_entry_err(p, name, EACCES)) != 0)
		goto fail;
	int task = p->task;
	struct mtask *t = &m->t[task];
	int pass = is_pass_name(p, name);
	if (pass)
		pass_gate(m, task, NULL);       /* p is a task directory, a fixed node: still valid */
	n = dir_find(m, p, name);
	if (n) {
		/* Lookup said absent; someone was faster. */
		if (fi->flags & O_EXCL)
			err = EEXIST;
		else if (is_dir(n))
			err = EISDIR;
		else if (is_readonly(n))
			err = EACCES;
		created = 0;
	} else if (pass) {
		n = node_new(m, 0, &task_rows[ROW_PASS], task);
		if (n == NULL)
			err = ENOMEM;
		else if ((err = -svc_pass_truncate(m->svc, task, 0)) == 0)
			t->pass = n;
	} else if (t->nentries >= SCRATCH_MAX_ENTRIES) {
		err = ENOSPC;
	} else {
		char *nm = strdup(name);
		n = nm ? node_new(m, 0, &scratch_row, task) : NULL;
		if (n == NULL) {
			free(nm);
			err = ENOMEM;
		} else {
			n->mode = mode & 07777;
			scratch_link(m, n, p, nm);
		}
	}
	if (err == 0)
		err = open_file(m, n, fi, created);
	if (err) {
		if (n && created) {
			if (n->name)
				scratch_unlink(m, n);   /* a new pass.c stays, empty */
			node_maybe_free(m, n);
		}
		goto fail;
	}
	if (created)
		touch_dir(m, p);
	reply_entry_unlock(m, req, n, fi);
	return;
fail:
	pthread_mutex_unlock(&m->lock);
	fuse_reply_err(req, err);
}

static void op_unlink(fuse_req_t req, fuse_ino_t parent, const char *name)
{
	struct mnt *m = fuse_req_userdata(req);
	int err = 0;
	pthread_mutex_lock(&m->lock);
	struct node *p = node_get(m, parent), *n = NULL;
	if (p && is_pass_name(p, name))
		pass_gate(m, p->task, NULL);    /* a saved pass.c fires before it goes */
	if (p == NULL || !is_dir(p))
		err = p ? ENOTDIR : ENOENT;
	else if (p->task < 0)
		err = (n = root_find(m, p, name)) == NULL ? ENOENT : n->row->kind == K_DIR ? EISDIR : EACCES;
	else if ((n = dir_find(m, p, name)) == NULL)
		err = ENOENT;
	else if (is_dir(n))
		err = EISDIR;
	else if (is_readonly(n))
		err = EACCES;
	else if (n->row->kind == K_PASS)
		err = -pass_detach(m, n);       /* no evaluation: pass.c is just absent */
	else
		scratch_unlink(m, n);
	if (err == 0) {
		touch_dir(m, p);
		now_real(&n->ctime);
		node_maybe_free(m, n);
	}
	pthread_mutex_unlock(&m->lock);
	fuse_reply_err(req, err);
}

/* Renames scratch directory src to `name` in directory np of its task,
 * replacing dst (an empty directory) when there is one.  Returns 0 or an
 * errno: ENOTDIR (dst is a file, or the name is the task's pass.c),
 * ENOTEMPTY (dst has entries), EINVAL (np is src or inside it), EPERM (the
 * name of an absent pass.c: it stays a file's name), ENOMEM.  Under
 * m->lock. */
static int rename_dir(struct mnt *m, struct node *src, struct node *np, const char *name, struct node *dst)
{
	if (is_pass_name(np, name))
		return dst ? ENOTDIR : EPERM;
	if (dst && !is_dir(dst))
		return ENOTDIR;
	if (dst && dst->children)
		return ENOTEMPTY;
	for (struct node *q = np; q && q->row->kind == K_SDIR; q = q->parent)
		if (q == src)
			return EINVAL;
	char *nm = strdup(name);
	if (nm == NULL)
		return ENOMEM;
	if (dst) {
		scratch_unlink(m, dst);
		now_real(&dst->ctime);
	}
	scratch_unlink(m, src);
	scratch_link(m, src, np, nm);
	now_real(&src->ctime);
	return 0;
}

/* Renames scratch file or pass.c src (in any directory of its task) to
 * `name` in directory np, replacing file dst when there is one; a rename
 * onto the task's pass.c hands the bytes to the service and sets *fire to
 * the task when the evaluation is due now.  Returns 0 or an errno: EISDIR
 * (dst is a directory), EFBIG (over pass.c's cap), ENOSPC (pass.c renamed
 * away at the entries cap), ENOMEM, or the service's error.  Under
 * m->lock. */
static int rename_file(struct mnt *m, struct node *src, struct node *np, const char *name, struct node *dst,
		       int *fire)
{
	int task = src->task, err;
	struct mtask *t = &m->t[task];
	if (dst && is_dir(dst))
		return EISDIR;
	if (is_pass_name(np, name)) {
		/* A scratch file becomes pass.c: its bytes go to the service. */
		if (src->size > SVC_PASS_MAX)
			return EFBIG;
		if (dst && (err = -pass_detach(m, dst)) != 0)
			return err;
		int rc = svc_pass_replace(m->svc, task, src->data ? src->data : "", src->size);
		if (rc) {
			if (dst) {      /* put the old pass.c back */
				svc_pass_replace(m->svc, task, dst->data ? dst->data : "", dst->size);
				scratch_resize(m, dst, 0);
				free(dst->data);
				dst->data = NULL;
				dst->cap = 0;
				dst->row = &task_rows[ROW_PASS];
				t->pass = dst;
			}
			return -rc;
		}
		scratch_unlink(m, src);
		scratch_resize(m, src, 0);
		free(src->data);
		src->data = NULL;
		src->cap = 0;
		src->row = &task_rows[ROW_PASS];
		t->pass = src;
		svc_mark_pending(m->svc, task);
		if (src->nwriters == 0)
			*fire = task;
		else
			src->fire_on_release = 1;       /* fires at that writer's release */
		return 0;
	}
	if (src->row->kind == K_PASS && dst == NULL && t->nentries >= SCRATCH_MAX_ENTRIES)
		return ENOSPC;
	char *nm = strdup(name);
	if (nm == NULL)
		return ENOMEM;
	if (src->row->kind == K_PASS) {
		/* pass.c renamed away (vim's backup, or into a scratch
		 * directory): no evaluation. */
		if ((err = -pass_detach(m, src)) != 0) {
			free(nm);
			return err;
		}
	} else {
		scratch_unlink(m, src);
	}
	if (dst) {
		scratch_unlink(m, dst);
		now_real(&dst->ctime);
	}
	scratch_link(m, src, np, nm);
	now_real(&src->ctime);
	return 0;
}

static void op_rename(fuse_req_t req, fuse_ino_t parent, const char *name, fuse_ino_t newparent,
		      const char *newname, unsigned int flags)
{
	struct mnt *m = fuse_req_userdata(req);
	int err = 0, fire = -1, check = -1, rerun = 0;
	char *csrc = NULL;
	size_t clen = 0;
	pthread_mutex_lock(&m->lock);
	struct node *p = node_get(m, parent), *np = node_get(m, newparent), *src = NULL, *dst = NULL;
	if (p == NULL || np == NULL) {
		err = ENOENT;
		goto out;
	}
	if (!is_dir(p) || !is_dir(np)) {
		err = ENOTDIR;
		goto out;
	}
	if (flags & ~(unsigned)RENAME_NOREPLACE) {
		err = EINVAL;           /* RENAME_EXCHANGE, RENAME_WHITEOUT */
		goto out;
	}
	if (p->task < 0 || np->task < 0) {
		err = p->task < 0 && root_find(m, p, name) == NULL ? ENOENT : EACCES;
		goto out;
	}
	if (p->task != np->task) {
		err = EXDEV;            /* mv copies across tasks */
		goto out;
	}
	if (!dir_alive(np)) {
		err = ENOENT;
		goto out;
	}
	if (!name_ok(newname)) {
		err = strlen(newname) > 255 ? ENAMETOOLONG : EINVAL;
		goto out;
	}
	if (is_pass_name(p, name) || is_pass_name(np, newname)) {
		pass_gate(m, p->task, NULL);
		/* The kernel holds both directories locked and referenced for
		 * the rename: they are still there. */
		p = node_get(m, parent);
		np = node_get(m, newparent);
		if (p == NULL || np == NULL) {
			err = ENOENT;
			goto out;
		}
	}
	if ((src = dir_find(m, p, name)) == NULL) {
		err = ENOENT;
		goto out;
	}
	dst = dir_find(m, np, newname);
	if (is_readonly(src) || (dst && is_readonly(dst))) {
		err = EACCES;
		goto out;
	}
	if (dst == src)
		goto out;
	if (dst && (flags & RENAME_NOREPLACE)) {
		err = EEXIST;
		goto out;
	}
	err = is_dir(src) ? rename_dir(m, src, np, newname, dst) : rename_file(m, src, np, newname, dst, &fire);
	if (err)
		goto out;
	touch_dir(m, p);
	touch_dir(m, np);
	if (dst)
		node_maybe_free(m, dst);
	if (is_check_src(src)) {        /* a rename onto check.c: checked */
		check = src->task;
		csrc = check_copy(src, &clen);
	}
	if (is_rerun_trigger(src) && fire < 0) {        /* a rename onto rerun: a rerun */
		fire = src->task;
		rerun = 1;
	}
out:
	if (fire >= 0)
		fire_unlock_how(m, fire, rerun);
	else
		pthread_mutex_unlock(&m->lock);
	if (check >= 0)
		check_fire(m, check, csrc, clen);  /* queued before the reply: check.json waits for it */
	fuse_reply_err(req, err);
}

static void op_mknod(fuse_req_t req, fuse_ino_t parent, const char *name, mode_t mode, dev_t rdev)
{
	(void)parent, (void)name, (void)mode, (void)rdev;
	fuse_reply_err(req, EPERM);
}

/* A scratch directory in a task directory or in another scratch directory.
 * The root and the rows are fixed (EPERM, EEXIST), and pass.c's name stays
 * a file's even while pass.c is absent (EPERM). */
static void op_mkdir(fuse_req_t req, fuse_ino_t parent, const char *name, mode_t mode)
{
	struct mnt *m = fuse_req_userdata(req);
	int err = 0;
	struct node *n = NULL;
	char *nm = NULL;
	pthread_mutex_lock(&m->lock);
	struct node *p = node_get(m, parent);
	err = new_entry_err(p, name, EPERM);
	if (err == 0) {
		if (dir_find(m, p, name))
			err = EEXIST;
		else if (is_pass_name(p, name))
			err = EPERM;
		else if (m->t[p->task].nentries >= SCRATCH_MAX_ENTRIES)
			err = ENOSPC;
		else if ((nm = strdup(name)) == NULL || (n = node_new(m, 0, &sdir_row, p->task)) == NULL)
			err = ENOMEM;
	}
	if (err) {
		pthread_mutex_unlock(&m->lock);
		free(nm);
		fuse_reply_err(req, err);
		return;
	}
	n->mode = mode & 07777;
	scratch_link(m, n, p, nm);
	touch_dir(m, p);
	reply_entry_unlock(m, req, n, NULL);
}

static void op_rmdir(fuse_req_t req, fuse_ino_t parent, const char *name)
{
	struct mnt *m = fuse_req_userdata(req);
	pthread_mutex_lock(&m->lock);
	struct node *p = node_get(m, parent);
	struct node *n = p && is_dir(p) ? (p->task < 0 ? root_find(m, p, name) : dir_find(m, p, name)) : NULL;
	int err = n == NULL ? (p && !is_dir(p) ? ENOTDIR : ENOENT)
		: !is_dir(n) ? ENOTDIR
		: n->row->kind == K_DIR ? EPERM         /* task directories are fixed */
		: n->children ? ENOTEMPTY : 0;
	if (err == 0) {
		scratch_unlink(m, n);
		touch_dir(m, p);
		now_real(&n->ctime);
		node_maybe_free(m, n);
	}
	pthread_mutex_unlock(&m->lock);
	fuse_reply_err(req, err);
}

static void op_symlink(fuse_req_t req, const char *link, fuse_ino_t parent, const char *name)
{
	(void)link, (void)parent, (void)name;
	fuse_reply_err(req, EPERM);
}

static void op_link(fuse_req_t req, fuse_ino_t ino, fuse_ino_t newparent, const char *newname)
{
	(void)ino, (void)newparent, (void)newname;
	fuse_reply_err(req, EPERM);
}

/* ---- directories ---------------------------------------------------------------------------- */

static int snap_add(struct dirent_snap *d, const char *name, fuse_ino_t ino, mode_t mode)
{
	char *s = strdup(name);
	if (s == NULL)
		return -1;
	d->e[d->n].name = s;
	d->e[d->n].ino = ino;
	d->e[d->n].mode = mode;
	d->n++;
	return 0;
}

static void snap_free(struct dirent_snap *d)
{
	if (d == NULL)
		return;
	for (int i = 0; i < d->n; i++)
		free(d->e[i].name);
	free(d);
}

static void op_opendir(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
	struct mnt *m = fuse_req_userdata(req);
	pthread_mutex_lock(&m->lock);
	struct node *p = node_get(m, ino);
	if (p == NULL || !is_dir(p)) {
		pthread_mutex_unlock(&m->lock);
		fuse_reply_err(req, p ? ENOTDIR : ENOENT);
		return;
	}
	int max = 2 + (p->task < 0 ? NRROWS + NDOCS + 1 + m->ntasks : is_task_dir(p) ? NROWS : 0);
	for (struct node *n = p->children; n; n = n->next)
		max++;
	struct dirent_snap *d = calloc(1, sizeof(*d) + (size_t)max * sizeof(d->e[0]));
	int bad = d == NULL;
	if (!bad) {
		bad |= snap_add(d, ".", ino, S_IFDIR);
		bad |= snap_add(d, "..", p->parent ? p->parent->ino : INO_ROOT, S_IFDIR);
	}
	if (!bad && p == &m->docs) {
		for (int i = NRROWS; i < NRROWS + NDOCS; i++)
			bad |= snap_add(d, root_rows[i].name, m->rootf[i].ino, S_IFREG);
	} else if (!bad && p->task < 0) {
		for (int i = 0; i < NRROWS; i++)
			bad |= snap_add(d, root_rows[i].name, m->rootf[i].ino, S_IFREG);
		bad |= snap_add(d, TREE_DOCS_DIR, m->docs.ino, S_IFDIR);
		for (int i = 0; i < m->ntasks; i++)
			bad |= snap_add(d, svc_task(m->svc, i)->id, m->t[i].dir->ino, S_IFDIR);
	} else if (!bad) {
		struct mtask *t = &m->t[p->task];
		for (int i = 0; i < NROWS && is_task_dir(p); i++) {
			struct node *n = i == ROW_PASS ? t->pass : t->rows[i];
			if (n)
				bad |= snap_add(d, task_rows[i].name, n->ino, S_IFREG);
		}
		for (struct node *n = p->children; n; n = n->next)
			bad |= snap_add(d, n->name, n->ino, is_dir(n) ? S_IFDIR : S_IFREG);
	}
	pthread_mutex_unlock(&m->lock);
	if (bad) {
		snap_free(d);
		fuse_reply_err(req, ENOMEM);
		return;
	}
	fi->fh = (uint64_t)(uintptr_t)d;
	if (fuse_reply_open(req, fi) != 0)
		snap_free(d);
}

static void op_readdir(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off, struct fuse_file_info *fi)
{
	struct dirent_snap *d = (struct dirent_snap *)(uintptr_t)fi->fh;
	(void)ino;
	char *buf = malloc(size);
	if (buf == NULL) {
		fuse_reply_err(req, ENOMEM);
		return;
	}
	size_t used = 0;
	for (off_t i = off; i < d->n; i++) {
		struct stat st = {.st_ino = d->e[i].ino, .st_mode = d->e[i].mode};
		size_t k = fuse_add_direntry(req, buf + used, size - used, d->e[i].name, &st, i + 1);
		if (k > size - used)
			break;
		used += k;
	}
	fuse_reply_buf(req, buf, used);
	free(buf);
}

static void op_releasedir(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
	(void)ino;
	snap_free((struct dirent_snap *)(uintptr_t)fi->fh);
	fuse_reply_err(req, 0);
}

static void op_fsyncdir(fuse_req_t req, fuse_ino_t ino, int datasync, struct fuse_file_info *fi)
{
	(void)ino, (void)datasync, (void)fi;
	fuse_reply_err(req, 0);
}

static void op_statfs(fuse_req_t req, fuse_ino_t ino)
{
	struct mnt *m = fuse_req_userdata(req);
	(void)ino;
	struct statvfs sv;
	memset(&sv, 0, sizeof(sv));
	sv.f_bsize = sv.f_frsize = 4096;
	/* Room for every task's scratch files and pass.c: what the caps
	 * allow, less what is used. */
	sv.f_blocks = (fsblkcnt_t)m->ntasks * ((SCRATCH_TASK_BYTES + SVC_PASS_MAX) / 4096);
	sv.f_files = (fsfilcnt_t)m->ntasks * (NROWS + SCRATCH_MAX_ENTRIES) + NRROWS + NDOCS + 2;
	pthread_mutex_lock(&m->lock);
	for (int k = 0; k < m->ntasks; k++) {
		struct mtask *t = &m->t[k];
		if (t->nbytes < SCRATCH_TASK_BYTES)
			sv.f_bfree += (SCRATCH_TASK_BYTES - t->nbytes) / 4096;
		if (t->nentries < SCRATCH_MAX_ENTRIES)
			sv.f_ffree += (fsfilcnt_t)(SCRATCH_MAX_ENTRIES - t->nentries);
	}
	pthread_mutex_unlock(&m->lock);
	sv.f_bavail = sv.f_bfree;
	sv.f_favail = sv.f_ffree;
	sv.f_namemax = 255;
	fuse_reply_statfs(req, &sv);
}

static void op_init(void *userdata, struct fuse_conn_info *conn)
{
	(void)userdata;
	/* O_TRUNC arrives with the open (one request, and the handle knows). */
	if (conn->capable & FUSE_CAP_ATOMIC_O_TRUNC)
		conn->want |= FUSE_CAP_ATOMIC_O_TRUNC;
	/* Writes must reach us as they happen: pass.c's bytes live in the
	 * service, and release must see the handle's writes. */
	conn->want &= ~(unsigned)FUSE_CAP_WRITEBACK_CACHE;
}

/* getxattr/setxattr stay unimplemented: ENOSYS once, then the kernel stops
 * asking (NOTES.md). */
static const struct fuse_lowlevel_ops ops = {
	.init = op_init,
	.lookup = op_lookup,
	.forget = op_forget,
	.forget_multi = op_forget_multi,
	.getattr = op_getattr,
	.setattr = op_setattr,
	.access = op_access,
	.mknod = op_mknod,
	.mkdir = op_mkdir,
	.unlink = op_unlink,
	.rmdir = op_rmdir,
	.symlink = op_symlink,
	.link = op_link,
	.rename = op_rename,
	.create = op_create,
	.open = op_open,
	.read = op_read,
	.write = op_write,
	.flush = op_flush,
	.release = op_release,
	.fsync = op_fsync,
	.opendir = op_opendir,
	.readdir = op_readdir,
	.releasedir = op_releasedir,
	.fsyncdir = op_fsyncdir,
	.statfs = op_statfs,
};

/* ---- open, run, close ------------------------------------------------------------------------------ */

struct svc *mnt_svc(struct mnt *m)
{
	return m->svc;
}

/* The fixed nodes and the initial pass.c of every task. */
static int build_tree(struct mnt *m)
{
	m->root.ino = INO_ROOT;
	m->root.row = &root_dir_row;
	m->root.task = -1;
	m->root.rrow = -1;
	hash_add(m, &m->root);
	for (int i = 0; i < NRROWS + NDOCS; i++) {
		struct node *n = &m->rootf[i];
		n->ino = INO_ROOT + 1 + (fuse_ino_t)i;
		n->row = &root_rows[i];
		n->task = -1;
		n->rrow = i;
		hash_add(m, n);
	}
	m->docs.ino = INO_ROOT + 1 + NRROWS + NDOCS;
	m->docs.row = &docs_dir_row;
	m->docs.task = -1;
	m->docs.rrow = -1;
	hash_add(m, &m->docs);
	m->t = calloc((size_t)m->ntasks, sizeof(*m->t));
	if (m->t == NULL)
		return -1;
	m->dyn_next = task_dir_ino(m->ntasks);
	for (int k = 0; k < m->ntasks; k++) {
		struct mtask *t = &m->t[k];
		t->mtime = m->t0;
		/* One allocation for the directory and its read-only rows. */
		struct node *f = calloc(1 + NROWS, sizeof(*f));
		if (f == NULL)
			return -1;
		f[0].ino = task_dir_ino(k);
		f[0].row = &task_dir_row;
		f[0].task = k;
		f[0].rrow = -1;
		hash_add(m, &f[0]);
		t->dir = &f[0];
		for (int r = 0; r < NROWS; r++) {
			fuse_ino_t ino = task_dir_ino(k) + 1 + (fuse_ino_t)r;
			if (r == ROW_PASS) {
				if ((t->pass = node_new(m, ino, &task_rows[r], k)) == NULL)
					return -1;
				continue;
			}
			struct node *n = &f[1 + r];
			n->ino = ino;
			n->row = &task_rows[r];
			n->task = k;
			n->rrow = r;
			hash_add(m, n);
			t->rows[r] = n;
		}
	}
	return 0;
}

/* Loads the FIXED texts now: a task whose README cannot be made is an error
 * at mount time, not an EIO later. */
static int load_fixed(struct mnt *m, char *err, size_t errlen)
{
	int e;
	for (int i = 0; i < NRROWS + NDOCS; i++)
		if (root_rows[i].kind == K_FIXED) {
			struct blob *b = text_get(m, &m->rootf[i], &e);
			if (b == NULL) {
				snprintf(err, errlen, "cannot make /%s%s: %s%s%s", i < NRROWS ? "" : TREE_DOCS_DIR "/",
					 root_rows[i].name, strerror(e), i < NRROWS ? "" : " in ",
					 i < NRROWS ? "" : datadir_get(DATADIR_DOCS));
				return -1;
			}
			blob_unref(b);
		}
	for (int k = 0; k < m->ntasks; k++)
		for (int r = 0; r < NROWS; r++)
			if (task_rows[r].kind == K_FIXED) {
				struct blob *b = text_get(m, m->t[k].rows[r], &e);
				if (b == NULL) {
					snprintf(err, errlen, "cannot make %s/%s: %s", svc_task(m->svc, k)->id,
						 task_rows[r].name, strerror(e));
					return -1;
				}
				blob_unref(b);
			}
	return 0;
}

int mnt_open(const struct mnt_opts *o, struct mnt **out, char *err, size_t errlen)
{
	*out = NULL;
	rows_init();
	struct mnt *m = calloc(1, sizeof(*m));
	if (m == NULL) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	m->o = *o;
	if (!(m->o.wait_timeout_s > 0))
		m->o.wait_timeout_s = 20;
	m->mountpoint = strdup(o->mountpoint);
	m->tasks_dir = strdup(o->svc.tasks_dir);
	m->fuse_opts = o->fuse_opts ? strdup(o->fuse_opts) : NULL;
	m->o.mountpoint = m->mountpoint;
	m->o.fuse_opts = m->fuse_opts;
	m->uid = getuid();
	m->gid = getgid();
	now_real(&m->t0);
	pthread_mutex_init(&m->lock, NULL);
	pthread_cond_init(&m->fire_cv, NULL);
	pthread_mutex_init(&m->selock, NULL);
	pthread_mutex_init(&m->wlock, NULL);
	pthread_condattr_t ca;
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&m->wcond, &ca);
	pthread_condattr_destroy(&ca);
	m->waiting.next = m->waiting.prev = &m->waiting;
	if (!m->mountpoint || !m->tasks_dir || (o->fuse_opts && !m->fuse_opts)) {
		snprintf(err, errlen, "out of memory");
		goto fail;
	}

	/* Every thread but this one blocks the signals that end the session,
	 * so they reach the thread in the session loop (its handler ends it). */
	sigset_t block, old;
	sigemptyset(&block);
	sigaddset(&block, SIGINT);
	sigaddset(&block, SIGTERM);
	sigaddset(&block, SIGHUP);
	pthread_sigmask(SIG_BLOCK, &block, &old);
	struct svc_opts so = o->svc;
	so.tasks_dir = m->tasks_dir;
	int rc = svc_open(&so, on_notify, m, &m->svc, err, errlen);
	if (rc == 0 && pthread_create(&m->timer, NULL, timer_main, m) == 0)
		m->timer_started = 1;
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (rc != 0)
		goto fail;
	if (!m->timer_started) {
		snprintf(err, errlen, "cannot start the timer thread");
		goto fail;
	}
	m->ntasks = svc_n_tasks(m->svc);
	m->src = (struct tree_src){m->svc, m->tasks_dir, README_MOUNT, m->o.wait_timeout_s, m->o.svc.eval.b,
				   report_cache_new()};
	if (build_tree(m) != 0) {
		snprintf(err, errlen, "out of memory");
		goto fail;
	}
	if (load_fixed(m, err, errlen) != 0)
		goto fail;

	char opts[4096];
	snprintf(opts, sizeof(opts), "fsname=passfs,subtype=passfs,auto_unmount%s%s", m->fuse_opts ? "," : "",
		 m->fuse_opts ? m->fuse_opts : "");
	char *argv[] = {"passfs", "-o", opts, o->debug ? "-d" : NULL, NULL};
	struct fuse_args args = FUSE_ARGS_INIT(o->debug ? 4 : 3, argv);
	m->se = fuse_session_new(&args, &ops, sizeof(ops), m);
	fuse_opt_free_args(&args);      /* option parsing may have copied them */
	if (m->se == NULL) {
		snprintf(err, errlen, "cannot create the FUSE session (bad -o option '%s'?)", opts);
		goto fail;
	}
	if (fuse_set_signal_handlers(m->se) != 0) {
		snprintf(err, errlen, "cannot install signal handlers");
		goto fail;
	}
	m->handlers = 1;
	if (fuse_session_mount(m->se, m->mountpoint) != 0) {
		snprintf(err, errlen, "cannot mount on %s (see the message above); without FUSE use 'passfs watch %s'",
			 m->mountpoint, m->mountpoint);
		goto fail;
	}
	m->mounted = 1;
	pthread_mutex_lock(&m->selock);
	m->se_live = 1;
	pthread_mutex_unlock(&m->selock);
	pthread_mutex_lock(&m->wlock);
	m->ready = 1;
	pthread_mutex_unlock(&m->wlock);
	*out = m;
	return 0;
fail:
	mnt_close(m);
	return -1;
}

int mnt_run(struct mnt *m)
{
	struct fuse_loop_config *cfg = fuse_loop_cfg_create();
	if (cfg == NULL)
		return -1;
	/* Waiting reads hold no thread, so a few workers suffice; more help
	 * when many agents hit one mount at once. */
	fuse_loop_cfg_set_max_threads(cfg, 16);
	int rc = fuse_session_loop_mt(m->se, cfg);
	fuse_loop_cfg_destroy(cfg);
	/* Nobody waits past the session. */
	pthread_mutex_lock(&m->wlock);
	m->stopping = 1;
	pthread_cond_broadcast(&m->wcond);
	pthread_mutex_unlock(&m->wlock);
	wake_due(m, -1);
	return rc < 0 ? -1 : 0;
}

void mnt_close(struct mnt *m)
{
	if (m == NULL)
		return;
	pthread_mutex_lock(&m->wlock);
	m->stopping = 1;
	m->ready = 0;
	pthread_cond_broadcast(&m->wcond);
	pthread_mutex_unlock(&m->wlock);
	if (m->timer_started)
		pthread_join(m->timer, NULL);
	pthread_mutex_lock(&m->selock);
	m->se_live = 0;
	pthread_mutex_unlock(&m->selock);
	if (m->se) {
		if (m->handlers)
			fuse_remove_signal_handlers(m->se);
		if (m->mounted)
			fuse_session_unmount(m->se);
	}
	/* Running evaluations finish and are recorded (service.h). */
	svc_close(m->svc);
	report_cache_free(m->src.report);
	if (m->se)
		fuse_session_destroy(m->se);
	/* pass.c and scratch nodes: whatever is left in the hash. */
	for (int b = 0; b < HASH_SIZE; b++)
		for (struct node *n = m->hash[b], *nx; n; n = nx) {
			nx = n->hnext;
			if (is_dynamic(n)) {
				free(n->data);
				free(n->name);
				free(n);
			}
		}
	if (m->t) {
		for (int k = 0; k < m->ntasks; k++) {
			struct mtask *t = &m->t[k];
			for (int r = 0; r < NROWS; r++)
				blob_unref(t->cache[r].b);
			free(t->dir);   /* the block of the directory and its rows */
		}
		free(m->t);
	}
	for (int i = 0; i < NRROWS + NDOCS; i++)
		blob_unref(m->root_cache[i].b);
	pthread_cond_destroy(&m->wcond);
	pthread_mutex_destroy(&m->wlock);
	pthread_mutex_destroy(&m->selock);
	pthread_cond_destroy(&m->fire_cv);
	pthread_mutex_destroy(&m->lock);
	free(m->mountpoint);
	free(m->tasks_dir);
	free(m->fuse_opts);
	free(m);
}
