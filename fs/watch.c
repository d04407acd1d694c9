/* watch.c - `passfs watch` (see watch.h).
 *
 * One thread: a poll() over a signalfd (SIGINT/SIGTERM), an eventfd that the
 * service's notify callback bumps, and the inotify descriptor.  The notify
 * callback does nothing but wake this loop, which then rewrites the files of
 * every task whose generation moved: the service stays the only source of
 * truth and this loop the only writer of DIR.
 *
 *   $ passfs watch --tasks tests/passes/tasks /tmp/w &
 *   $ cp tests/passes/ok_fused.c /tmp/w/tiny_bias_gelu/pass.c   # IN_CLOSE_WRITE: fires
 *   $ cat /tmp/w/tiny_bias_gelu/status                          # pending .. done
 *   $ sed -i 's/256/128/' /tmp/w/tiny_bias_gelu/pass.c          # IN_MOVED_TO: fires */
#define _GNU_SOURCE
#include "watch.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/inotify.h>
#include <sys/signalfd.h>
#include <sys/stat.h>
#include <unistd.h>

#include "file.h"
#include "datadir.h"
#include "readme.h"
#include "report.h"
#include "sha256.h"
#include "state.h"
#include "tree.h"

struct wtask {
	char *dir;              /* DIR/<id> */
	int wd;                 /* inotify watch, -1 when none */
	uint64_t gen;           /* the service generation last written */
	int written;            /* the computed files were written at least once */
	char self_sha[65];      /* pass.c bytes this watcher wrote itself: not an edit */
};

struct watch {
	const struct watch_opts *o;
	struct svc *s;
	struct tree_src src;    /* what the rows' producers read */
	int n;
	struct wtask *t;
	int efd, ifd, sfd;
};

static void on_notify(void *ctx, int task)
{
	struct watch *w = ctx;
	uint64_t one = 1;
	(void)task;
	/* Coalesced: the loop compares every task's generation. */
	if (write(w->efd, &one, sizeof(one)) < 0 && errno != EAGAIN)
		perror("passfs watch: eventfd");
}

/* Replaces dir/name with buf: a temporary file (mode) in dir, then rename,
 * so readers see the old bytes or the new ones, never a part. */
static int put_file(const char *dir, const char *name, const void *buf, size_t len, mode_t mode)
{
	char dst[PATH_MAX];
	if (snprintf(dst, sizeof(dst), "%s/%s", dir, name) >= (int)sizeof(dst))
		return -ENAMETOOLONG;
	return base_write_atomic(dst, ".passfs-", buf, len, mode, BASE_ATOMIC_EXACT_MODE);
}

static void put_or_warn(const char *dir, const char *name, const void *buf, size_t len, mode_t mode)
{
	int rc = put_file(dir, name, buf, len, mode);
	if (rc != 0)
		fprintf(stderr, "passfs watch: %s/%s: %s\n", dir, name, strerror(-rc));
}

/* Rewrites the TREE_WATCH_REFRESH rows of task i (-1: of the root) in row
 * order (fs/tree.c puts status last: a reader that sees "done" finds the
 * result already there).  A row whose text is absent is left as it is. */
static void write_rows(struct watch *w, int i)
{
	const struct tree_row *rows = i < 0 ? tree_root_rows : tree_task_rows;
	int n = i < 0 ? TREE_NROOT : TREE_NTASK;
	const char *dir = i < 0 ? w->o->dir : w->t[i].dir;
	for (int r = 0; r < n; r++) {
		if (rows[r].watch != TREE_WATCH_REFRESH)
			continue;
		size_t len = 0;
		char *s = rows[r].text(&w->src, i, &len);
		if (s)
			put_or_warn(dir, rows[r].name, s, len, rows[r].mode);
		free(s);
	}
}

static void write_task(struct watch *w, int i)
{
	uint64_t gen = svc_generation(w->s, i);
	write_rows(w, i);
	w->t[i].gen = gen;
	w->t[i].written = 1;
}

/* Rewrites every task whose generation moved, then summary.json. */
static void refresh(struct watch *w)
{
	int any = 0;
	for (int i = 0; i < w->n; i++)
		if (!w->t[i].written || svc_generation(w->s, i) != w->t[i].gen) {
			write_task(w, i);
			any = 1;
		}
	if (any)
		write_rows(w, -1);
}

/* A save of DIR/<id>/pass.c (or, at start, an edit made while the watcher
 * was down): the file's bytes become the task's pass.c and fire. */
/* The bytes of DIR/<id>/name (its path into p), a source under pass.c's
 * cap (malloc'd, *len set), or NULL: gone, or unreadable or too large (said
 * on stderr, with what was then not done). */
static char *read_source(struct watch *w, int i, const char *name, const char *not_done, char *p, size_t plen,
			 size_t *len)
{
	int e = 0;
	snprintf(p, plen, "%s/%s", w->t[i].dir, name);
	char *src = base_read_file(p, SVC_PASS_MAX, len, &e);
	if (src == NULL && e == EFBIG)
		fprintf(stderr, "passfs watch: %s: larger than %u bytes; %s\n", p, SVC_PASS_MAX, not_done);
	else if (src == NULL && e != ENOENT)
		fprintf(stderr, "passfs watch: %s: %s\n", p, strerror(e));
	return src;
}

static void pass_saved(struct watch *w, int i, int at_start)
{
	struct wtask *t = &w->t[i];
	char p[PATH_MAX];
	size_t len = 0;
	char *src = read_source(w, i, tree_task_rows[TREE_PASS_C].name, "not evaluated", p, sizeof(p), &len);
	if (src == NULL)
		return;
	char sha[65];
	sha256_hex(src, len, sha);
	if (t->self_sha[0] && strcmp(sha, t->self_sha) == 0) {
		t->self_sha[0] = 0;     /* our own write of pass.c */
		free(src);
		return;
	}
	t->self_sha[0] = 0;
	if (at_start) {
		size_t cur = svc_pass_size(w->s, i);
		char *mine = malloc(cur + 1);
		int same = mine && cur == len && svc_pass_read(w->s, i, mine, cur, 0) == cur && memcmp(mine, src, len) == 0;
		free(mine);
		if (same) {
			free(src);
			return;
		}
	}
	uint64_t seq = 0;
	int rc = svc_pass_replace(w->s, i, src, len);
	if (rc == 0)
		rc = svc_fire(w->s, i, &seq);
	if (rc != 0)
		fprintf(stderr, "passfs watch: %s: cannot evaluate: %s\n", p, strerror(-rc));
	else if (!w->o->quiet)
		fprintf(stderr, "passfs watch: %s/pass.c saved (%zu bytes, sha256 %.12s): evaluation %llu%s\n",
			svc_task(w->s, i)->id, len, sha, (unsigned long long)seq,
			at_start ? " (edited while the watcher was stopped)" : "");
	free(src);
}

/* A save of DIR/<id>/check.c: its bytes are checked (check.json). */
static void check_saved(struct watch *w, int i)
{
	char p[PATH_MAX];
	size_t len = 0;
	char *src = read_source(w, i, TREE_CHECK_SOURCE, "not checked", p, sizeof(p), &len);
	if (src == NULL)
		return;
	uint64_t seq = 0;
	int rc = svc_check_fire(w->s, i, src, len, &seq);
	if (rc != 0)
		fprintf(stderr, "passfs watch: %s: cannot check: %s\n", p, strerror(-rc));
	else if (!w->o->quiet)
		fprintf(stderr, "passfs watch: %s/%s saved (%zu bytes): check %llu\n", svc_task(w->s, i)->id,
			TREE_CHECK_SOURCE, len, (unsigned long long)seq);
	free(src);
}

/* A save of DIR/<id>/rerun: the current pass.c evaluated again, even bytes
 * evaluated before (svc_rerun). */
static void rerun_saved(struct watch *w, int i)
{
	uint64_t seq = 0;
	int rc = svc_rerun(w->s, i, &seq);
	if (rc != 0)
		fprintf(stderr, "passfs watch: %s/%s: cannot evaluate: %s\n", svc_task(w->s, i)->id, TREE_RERUN_TRIGGER,
			strerror(-rc));
	else if (!w->o->quiet)
		fprintf(stderr, "passfs watch: %s/%s saved: pass.c evaluated again, evaluation %llu\n",
			svc_task(w->s, i)->id, TREE_RERUN_TRIGGER, (unsigned long long)seq);
}

/* Writes row r of task i (-1: the root) at start: TREE_WATCH_ONCE rows, and
 * TREE_WATCH_SEED rows where the file is missing. */
static int put_row(struct watch *w, int i, const struct tree_row *row, char *err, size_t errlen)
{
	const char *dir = i < 0 ? w->o->dir : w->t[i].dir;
	char p[PATH_MAX];
	struct stat st;
	snprintf(p, sizeof(p), "%s/%s", dir, row->name);
	if (row->watch == TREE_WATCH_SEED ? stat(p, &st) == 0 : row->watch != TREE_WATCH_ONCE)
		return 0;
	size_t len = 0;
	errno = 0;
	char *s = row->text(&w->src, i, &len);
	if (s == NULL) {
		snprintf(err, errlen, "%s: %s", p, errno && errno != ENOMEM ? strerror(errno) : "out of memory");
		return -1;
	}
	if (row->kind == TREE_PASS)
		sha256_hex(s, len, w->t[i].self_sha);   /* our own write: not an edit */
	int rc = put_file(dir, row->name, s, len, row->mode);
	free(s);
	if (rc != 0) {
		snprintf(err, errlen, "%s: %s", p, strerror(-rc));
		return -1;
	}
	return 0;
}

/* The manuals (fs/tree.c's tree_doc_rows[]) into DIR/docs, read-only. */
static int put_docs(struct watch *w, char *err, size_t errlen)
{
	char dir[PATH_MAX];
	if (snprintf(dir, sizeof(dir), "%s/%s", w->o->dir, TREE_DOCS_DIR) >= (int)sizeof(dir)) {
		snprintf(err, errlen, "%s/%s: %s", w->o->dir, TREE_DOCS_DIR, strerror(ENAMETOOLONG));
		return -1;
	}
	int rc = base_mkdirs(dir, 0755);
	if (rc != 0) {
		snprintf(err, errlen, "%s: %s", dir, strerror(-rc));
		return -1;
	}
	state_clean_temps(dir, ".passfs-");
	for (int r = 0; r < TREE_NDOC; r++) {
		const struct tree_row *row = &tree_doc_rows[r];
		size_t len = 0;
		errno = 0;
		char *s = row->text(&w->src, -1, &len);
		if (s == NULL) {
			snprintf(err, errlen, "%s/%s: %s (reading %s)", dir, row->name,
				 errno && errno != ENOMEM ? strerror(errno) : "out of memory", datadir_get(DATADIR_DOCS));
			return -1;
		}
		rc = put_file(dir, row->name, s, len, row->mode);
		free(s);
		if (rc != 0) {
			snprintf(err, errlen, "%s/%s: %s", dir, row->name, strerror(-rc));
			return -1;
		}
	}
	return 0;
}

/* The files of the tree that watch mode writes once (fs/tree.c), and pass.c
 * where it is missing. */
static int build_tree(struct watch *w, char *err, size_t errlen)
{
	const struct watch_opts *o = w->o;
	state_clean_temps(o->dir, ".passfs-");
	for (int r = 0; r < TREE_NROOT; r++)
		if (put_row(w, -1, &tree_root_rows[r], err, errlen) != 0)
			return -1;
	if (put_docs(w, err, errlen) != 0)
		return -1;
	for (int i = 0; i < w->n; i++) {
		struct wtask *t = &w->t[i];
		const struct graph_task *g = svc_task(w->s, i);
		if (asprintf(&t->dir, "%s/%s", o->dir, g->id) < 0) {
			t->dir = NULL;
			snprintf(err, errlen, "out of memory");
			return -1;
		}
		int rc = base_mkdirs(t->dir, 0755);
		if (rc != 0) {
			snprintf(err, errlen, "%s: %s", t->dir, strerror(-rc));
			return -1;
		}
		state_clean_temps(t->dir, ".passfs-");   /* left by a kill -9 */
		for (int r = 0; r < TREE_NTASK; r++)
			if (put_row(w, i, &tree_task_rows[r], err, errlen) != 0)
				return -1;
	}
	return 0;
}

static void drain_inotify(struct watch *w)
{
	char buf[16384] __attribute__((aligned(__alignof__(struct inotify_event))));
	for (;;) {
		ssize_t n = read(w->ifd, buf, sizeof(buf));
		if (n <= 0)
			return;
		for (char *p = buf; p < buf + n;) {
			struct inotify_event *ev = (struct inotify_event *)p;
			p += sizeof(*ev) + ev->len;
			if (ev->mask & IN_Q_OVERFLOW) {
				/* Events were lost: treat every pass.c that differs
				 * from the service's bytes as saved. */
				for (int i = 0; i < w->n; i++)
					pass_saved(w, i, 1);
				continue;
			}
			int check = ev->len > 0 && strcmp(ev->name, TREE_CHECK_SOURCE) == 0;
			int rerun = ev->len > 0 && strcmp(ev->name, TREE_RERUN_TRIGGER) == 0;
			if (ev->len == 0 ||
			    (!check && !rerun && strcmp(ev->name, tree_task_rows[TREE_PASS_C].name) != 0))
				continue;
			for (int i = 0; i < w->n; i++)
				if (w->t[i].wd == ev->wd) {
					if (check)
						check_saved(w, i);
					else if (rerun)
						rerun_saved(w, i);
					else
						pass_saved(w, i, 0);
					break;
				}
		}
	}
}

int watch_run(const struct watch_opts *o, char *err, size_t errlen)
{
	struct watch w = {.o = o, .efd = -1, .ifd = -1, .sfd = -1};
	int rc = -1;
	sigset_t sigs, old;
	sigemptyset(&sigs);
	sigaddset(&sigs, SIGINT);
	sigaddset(&sigs, SIGTERM);
	/* Blocked before the service starts its threads, so they inherit the
	 * mask and the signals reach only the signalfd. */
	pthread_sigmask(SIG_BLOCK, &sigs, &old);
	w.sfd = signalfd(-1, &sigs, SFD_CLOEXEC | SFD_NONBLOCK);
	w.efd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	w.ifd = inotify_init1(IN_CLOEXEC | IN_NONBLOCK);
	if (w.sfd < 0 || w.efd < 0 || w.ifd < 0) {
		snprintf(err, errlen, "cannot set up signal, event and inotify descriptors: %s", strerror(errno));
		goto out;
	}
	int e = base_mkdirs(o->dir, 0755);
	if (e != 0) {
		snprintf(err, errlen, "%s: %s", o->dir, strerror(-e));
		goto out;
	}
	if (svc_open(&o->svc, on_notify, &w, &w.s, err, errlen) != 0)
		goto out;
	w.n = svc_n_tasks(w.s);
	w.src = (struct tree_src){w.s, o->svc.tasks_dir, README_WATCH, 0, o->svc.eval.b, report_cache_new()};
	w.t = calloc((size_t)w.n, sizeof(*w.t));
	if (w.t == NULL) {
		snprintf(err, errlen, "out of memory");
		goto out;
	}
	for (int i = 0; i < w.n; i++)
		w.t[i].wd = -1;
	if (build_tree(&w, err, errlen) != 0)
		goto out;
	for (int i = 0; i < w.n; i++) {
		w.t[i].wd = inotify_add_watch(w.ifd, w.t[i].dir, IN_CLOSE_WRITE | IN_MOVED_TO | IN_ONLYDIR);
		if (w.t[i].wd < 0) {
			snprintf(err, errlen, "inotify on %s: %s%s", w.t[i].dir, strerror(errno),
				 errno == ENOSPC ? " (raise fs.inotify.max_user_watches)" : "");
			goto out;
		}
	}
	/* Watches first, then the edits made while stopped: nothing falls between. */
	for (int i = 0; i < w.n; i++)
		pass_saved(&w, i, 1);
	refresh(&w);

	if (!o->quiet) {
		const char *ex = svc_task(w.s, 0)->id;
		printf("passfs watch: %d task%s in %s (state %s)\n\n"
		       "  ls %s                      # one directory per task\n"
		       "  cat %s/%s/README.md        # the task and the rules; %s/README.md is the manual\n"
		       "  edit %s/%s/pass.c          # any tool; every save starts an evaluation\n"
		       "  cat %s/%s/status           # poll until it says done (and result.json's\n"
		       "                             #   pass_sha256 is sha256sum of your pass.c)\n"
		       "  cat %s/%s/result.json      # verdict, message, score, per-variant speedups\n\n"
		       "Plain files: nothing here is read-only and reads never wait. Ctrl-C or SIGTERM stops.\n",
		       w.n, w.n == 1 ? "" : "s", o->dir, svc_state_dir(w.s), o->dir, o->dir, ex, o->dir, o->dir, ex,
		       o->dir, ex, o->dir, ex);
		fflush(stdout);
	}

	for (;;) {
		struct pollfd pf[3] = {{w.sfd, POLLIN, 0}, {w.efd, POLLIN, 0}, {w.ifd, POLLIN, 0}};
		if (poll(pf, 3, -1) < 0) {
			if (errno == EINTR)
				continue;
			snprintf(err, errlen, "poll: %s", strerror(errno));
			goto out;
		}
		if (pf[0].revents) {
			struct signalfd_siginfo si;
			if (read(w.sfd, &si, sizeof(si)) == (ssize_t)sizeof(si) && !o->quiet)
				fprintf(stderr, "passfs watch: %s: stopping\n", strsignal((int)si.ssi_signo));
			break;
		}
		if (pf[2].revents)
			drain_inotify(&w);
		if (pf[1].revents) {
			uint64_t v;
			if (read(w.efd, &v, sizeof(v)) < 0 && errno != EAGAIN)
				perror("passfs watch: eventfd");
		}
		refresh(&w);
	}
	rc = 0;
out:
	/* svc_close waits for a running evaluation; its result lands in the
	 * state directory and appears here at the next start. */
	svc_close(w.s);
	report_cache_free(w.src.report);
	if (w.t)
		for (int i = 0; i < w.n; i++)
			free(w.t[i].dir);
	free(w.t);
	if (w.ifd >= 0)
		close(w.ifd);
	if (w.efd >= 0)
		close(w.efd);
	if (w.sfd >= 0)
		close(w.sfd);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	return rc;
}
