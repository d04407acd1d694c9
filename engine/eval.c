/* eval.c - the evaluation protocol (DESIGN.md sections 6-8).
 *
 * Processes, per variant:
 *
 *   parent (trusted)  generates the input sets into a sealed memfd, forks
 *        |            the two workers, drives them step by step over a
 *        |            socketpair, owns the watchdog, compares and scores
 *        +-- eager worker  (trusted code only) runs the op library
 *        +-- pass worker   loads the pass object, enters the seccomp
 *                          sandbox, then runs the replacement
 *
 * Eager outputs never enter the pass worker.  Each check run writes the
 * pass's outputs (and its device inputs, to prove they were not written)
 * into shared memory the parent reads.  Timing alternates batches of eager
 * and pass trials so drift hits both; outputs are poisoned before every
 * pass call and the outputs of the last timed call are verified too. */
#define _GNU_SOURCE
#include "eval.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "eager.h"
#include "eval_util.h"
#include "gpu.h"
#include "inputs.h"
#include "pass.h"
#include "pass_run.h"
#include "sha256.h"
#include "sandbox.h"
#include "score.h"

#define N_SETS 2                /* public seed 123, then the secret seed */
#define PUBLIC_SEED 123
#define LOG_CAP 16384

enum { CMD_CHECK = 1, CMD_TIME, CMD_KEEP_TIMED, CMD_QUIT };

struct cmd {
	int op, set, count;
};

struct reply {
	int status;             /* PF_OK or PF_ERR_*; W_ERR for worker trouble */
	int n_times;
	char msg[480];
};
#define W_ERR 100
#define MAX_BATCH 64

/* Shared memory of one variant's evaluation. */
struct shm {
	int fd;
	size_t size;
	unsigned char *base;
};

struct layout {
	size_t in_off[N_SETS][GRAPH_MAX_IO];
	size_t in_bytes[GRAPH_MAX_IO];
	size_t out_bytes[GRAPH_MAX_IO];
	size_t in_total;
	/* result area: outputs per set + the timed outputs, then inputs after */
	size_t res_out[N_SETS + 1][GRAPH_MAX_IO];
	size_t res_in_after[N_SETS][GRAPH_MAX_IO];
	size_t res_total;
};

struct worker {
	pid_t pid;
	int sock;               /* parent's end */
	int out_fd;             /* the child's stdout+stderr, read end */
	int report_fd;          /* sandbox report, read end */
	char *log;              /* what the child printed (capped) */
	size_t log_len;
	char report[256];
};

struct ctx {
	const struct eval_job *job;
	const struct graph_variant *v;
	struct layout lay;
	struct shm in, eager_res, pass_res;
	struct pass_module *mod;
	double timeout_s;
	int warmup, trials;
};

/* ---- small helpers -------------------------------------------------------- */

static double now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

static size_t align_up(size_t x)
{
	return (x + 255) & ~(size_t)255;
}

static int shm_create(struct shm *s, const char *name, size_t size)
{
	s->size = size ? size : 1;
	s->fd = memfd_create(name, MFD_CLOEXEC | MFD_ALLOW_SEALING);
	if (s->fd < 0 || ftruncate(s->fd, (off_t)s->size) != 0)
		return -1;
	s->base = mmap(NULL, s->size, PROT_READ | PROT_WRITE, MAP_SHARED, s->fd, 0);
	return s->base == MAP_FAILED ? -1 : 0;
}

static void shm_destroy(struct shm *s)
{
	if (s->base && s->base != MAP_FAILED)
		munmap(s->base, s->size);
	if (s->fd >= 0)
		close(s->fd);
	s->base = NULL;
	s->fd = -1;
}

/* Makes the inputs immutable for every process that maps them. */
static int shm_seal(struct shm *s)
{
	/* A shared mapping that could become writable blocks the seal: unmap,
	 * seal, then map read-only (mprotect cannot make that writable). */
	munmap(s->base, s->size);
	s->base = NULL;
	if (fcntl(s->fd, F_ADD_SEALS, F_SEAL_WRITE | F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL))
		return -1;
	s->base = mmap(NULL, s->size, PROT_READ, MAP_SHARED, s->fd, 0);
	return s->base == MAP_FAILED ? -1 : 0;
}

static size_t value_bytes(const struct graph_value *x)
{
	return (size_t)graph_shape_numel(&x->shape) * graph_dtype_size(x->dtype);
}

static void plan_layout(struct ctx *c)
{
	const struct graph_variant *v = c->v;
	struct layout *L = &c->lay;
	size_t off = 0;
	for (int i = 0; i < v->n_inputs; i++)
		L->in_bytes[i] = value_bytes(&v->values[i]);
	for (int o = 0; o < v->n_outputs; o++)
		L->out_bytes[o] = value_bytes(&v->values[v->outputs[o]]);
	for (int s = 0; s < N_SETS; s++)
		for (int i = 0; i < v->n_inputs; i++) {
			L->in_off[s][i] = off;
			off += align_up(L->in_bytes[i]);
		}
	L->in_total = off;
	off = 0;
	for (int s = 0; s <= N_SETS; s++)
		for (int o = 0; o < v->n_outputs; o++) {
			L->res_out[s][o] = off;
			off += align_up(L->out_bytes[o]);
		}
	for (int s = 0; s < N_SETS; s++)
		for (int i = 0; i < v->n_inputs; i++) {
			L->res_in_after[s][i] = off;
			off += align_up(L->in_bytes[i]);
		}
	L->res_total = off;
}

static int send_all(int fd, const void *p, size_t n)
{
	const char *b = p;
	while (n) {
		ssize_t k = send(fd, b, n, MSG_NOSIGNAL);
		if (k < 0 && errno == EINTR)
			continue;
		if (k <= 0)
			return -1;
		b += k;
		n -= (size_t)k;
	}
	return 0;
}

static int recv_all(int fd, void *p, size_t n)
{
	char *b = p;
	while (n) {
		ssize_t k = recv(fd, b, n, 0);
		if (k < 0 && errno == EINTR)
			continue;
		if (k <= 0)
			return -1;
		b += k;
		n -= (size_t)k;
	}
	return 0;
}

static void reply_send(int sock, int status, const double *times, int n, const char *fmt, ...)
	__attribute__((format(printf, 5, 6)));
static void reply_send(int sock, int status, const double *times, int n, const char *fmt, ...)
{
	struct reply r = {.status = status, .n_times = n};
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(r.msg, sizeof(r.msg), fmt, ap);
	va_end(ap);
	if (send_all(sock, &r, sizeof(r)) == 0 && n > 0)
		send_all(sock, times, sizeof(double) * (size_t)n);
}

/* ---- the workers (children) -------------------------------------------------- */

struct wstate {
	struct ctx *c;
	struct gpu_dev *dev;
	void *din[GRAPH_MAX_IO], *dout[GRAPH_MAX_IO];
	int loaded_set;
	/* pass worker */
	struct pass_instance *pi;
	/* eager worker */
	struct eager_plan *plan;
	int is_pass;
	unsigned char *poison[GRAPH_MAX_IO];
};

static int w_load_set(struct wstate *w, int set, char *err, size_t errlen)
{
	const struct ctx *c = w->c;
	for (int i = 0; i < c->v->n_inputs; i++)
		if (gpu_copy_to_device(w->dev, w->din[i], c->in.base + c->lay.in_off[set][i], c->lay.in_bytes[i])) {
			snprintf(err, errlen, "copying input %d to the device failed", i);
			return -1;
		}
	w->loaded_set = set;
	return 0;
}

/* One call of eager or of the pass, outputs poisoned first for the pass.
 * Returns PF_OK or an error code with err set; *ms is the end-to-end time
 * (sync, clock, call, sync, clock). */
static int w_call(struct wstate *w, double *ms, char *err, size_t errlen)
{
	const struct ctx *c = w->c;
	char e2[256];
	if (w->is_pass)
		for (int o = 0; o < c->v->n_outputs; o++)
			gpu_copy_to_device(w->dev, w->dout[o], w->poison[o], c->lay.out_bytes[o]);
	if (gpu_sync(w->dev, e2, sizeof(e2))) {
		snprintf(err, errlen, "%s", e2);
		return W_ERR;
	}
	double t0 = now_ms();
	int rc;
	if (w->is_pass)
		rc = pass_instance_call(w->pi, w->din, w->dout, err, errlen);
	else
		rc = eager_run(w->plan, w->din, w->dout, err, errlen) ? W_ERR : PF_OK;
	if (rc == PF_OK && gpu_sync(w->dev, e2, sizeof(e2))) {
		snprintf(err, errlen, "%s", e2);
		rc = PF_ERR_LAUNCH;
	}
	*ms = now_ms() - t0;
	return rc;
}

static int w_store(struct wstate *w, unsigned char *res, int slot, int with_inputs)
{
	const struct ctx *c = w->c;
	for (int o = 0; o < c->v->n_outputs; o++)
		if (gpu_copy_to_host(w->dev, res + c->lay.res_out[slot][o], w->dout[o], c->lay.out_bytes[o]))
			return -1;
	if (with_inputs)
		for (int i = 0; i < c->v->n_inputs; i++)
			if (gpu_copy_to_host(w->dev, res + c->lay.res_in_after[slot][i], w->din[i], c->lay.in_bytes[i]))
				return -1;
	return 0;
}

static void worker_loop(struct wstate *w, int sock, unsigned char *res)
{
	struct cmd cmd;
	char err[400];
	double times[MAX_BATCH];
	while (recv_all(sock, &cmd, sizeof(cmd)) == 0) {
		int rc = PF_OK;
		err[0] = 0;
		switch (cmd.op) {
		case CMD_CHECK: {
			double ms;
			if (w_load_set(w, cmd.set, err, sizeof(err))) {
				rc = W_ERR;
				break;
			}
			rc = w_call(w, &ms, err, sizeof(err));
			if (rc == PF_OK && w_store(w, res, cmd.set, w->is_pass)) {
				rc = W_ERR;
				snprintf(err, sizeof(err), "copying results back failed");
			}
			times[0] = ms;
			reply_send(sock, rc, times, 1, "%s", err);
			continue;
		}
		case CMD_TIME: {
			int n = cmd.count > MAX_BATCH ? MAX_BATCH : cmd.count;
			if (w->loaded_set != 0 && w_load_set(w, 0, err, sizeof(err))) {
				reply_send(sock, W_ERR, NULL, 0, "%s", err);
				continue;
			}
			int k;
			for (k = 0; k < n && rc == PF_OK; k++)
				rc = w_call(w, &times[k], err, sizeof(err));
			reply_send(sock, rc, times, rc == PF_OK ? n : 0, "%s", err);
			continue;
		}
		case CMD_KEEP_TIMED:
			rc = w_store(w, res, N_SETS, 0) ? W_ERR : PF_OK;
			reply_send(sock, rc, NULL, 0, "%s", rc ? "copying results back failed" : "");
			continue;
		case CMD_QUIT:
		default:
			return;
		}
	}
}

static int w_alloc(struct wstate *w, char *err, size_t errlen)
{
	const struct ctx *c = w->c;
	for (int i = 0; i < c->v->n_inputs; i++)
		if ((w->din[i] = gpu_alloc(w->dev, c->lay.in_bytes[i] ? c->lay.in_bytes[i] : 1)) == NULL)
			goto oom;
	for (int o = 0; o < c->v->n_outputs; o++)
		if ((w->dout[o] = gpu_alloc(w->dev, c->lay.out_bytes[o] ? c->lay.out_bytes[o] : 1)) == NULL)
			goto oom;
	return 0;
oom:
	snprintf(err, errlen, "out of device memory allocating inputs and outputs");
	return -1;
}

/* Runs in the forked child; never returns. */
static void __attribute__((noreturn)) worker_main(struct ctx *c, int is_pass, int sock, int report_fd)
{
	struct wstate w = {.c = c, .is_pass = is_pass, .loaded_set = -1};
	char err[400];
	unsigned char *res = is_pass ? c->pass_res.base : c->eager_res.base;
	if (gpu_open(c->job->opts.backend ? c->job->opts.backend : "auto", &w.dev, err, sizeof(err)) ||
	    w_alloc(&w, err, sizeof(err)))
		goto fail;
	if (is_pass) {
		for (int o = 0; o < c->v->n_outputs; o++) {
			const struct graph_value *x = &c->v->values[c->v->outputs[o]];
			w.poison[o] = malloc(c->lay.out_bytes[o] ? c->lay.out_bytes[o] : 1);
			if (w.poison[o] == NULL)
				goto fail;
			eval_fill_poison(w.poison[o], x->dtype, (size_t)graph_shape_numel(&x->shape));
		}
		if (pass_instance_create(c->mod, w.dev, c->v, &w.pi, err, sizeof(err)))
			goto fail;
		int io[1] = {sock};
		struct sandbox_limits lim = {.address_space = 0, .cpu_seconds = 0, .report_fd = report_fd,
					     .io_fds = io, .n_io_fds = 1};
		if (sandbox_enter(&lim, err, sizeof(err)))
			goto fail;
	} else {
		if ((w.plan = eager_prepare(w.dev, c->v, err, sizeof(err))) == NULL)
			goto fail;
	}
	reply_send(sock, PF_OK, NULL, 0, "ready");
	worker_loop(&w, sock, res);
	_exit(0);
fail:
	reply_send(sock, W_ERR, NULL, 0, "%s", err);
	_exit(1);
}

/* ---- the parent side ---------------------------------------------------------- */

static void worker_drain(struct worker *wk)
{
	char buf[4096];
	for (;;) {
		ssize_t n = read(wk->out_fd, buf, sizeof(buf));
		if (n <= 0)
			break;
		if (wk->log_len < LOG_CAP) {
			size_t take = (size_t)n;
			if (take > LOG_CAP - wk->log_len)
				take = LOG_CAP - wk->log_len;
			char *nl = realloc(wk->log, wk->log_len + take + 1);
			if (nl == NULL)
				break;
			wk->log = nl;
			memcpy(wk->log + wk->log_len, buf, take);
			wk->log_len += take;
			wk->log[wk->log_len] = 0;
		}
	}
}

static int worker_start(struct ctx *c, int is_pass, struct worker *wk, char *err, size_t errlen)
{
	int sv[2], out[2], rep[2];
	memset(wk, 0, sizeof(*wk));
	wk->pid = -1;
	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) || pipe2(out, O_CLOEXEC) ||
	    pipe2(rep, O_CLOEXEC)) {
		snprintf(err, errlen, "cannot create worker pipes: %s", strerror(errno));
		return -1;
	}
	fflush(stdout);
	fflush(stderr);
	pid_t pid = fork();
	if (pid < 0) {
		snprintf(err, errlen, "fork: %s", strerror(errno));
		return -1;
	}
	if (pid == 0) {
		/* The child's stdout and stderr go to the log pipe; kill it with
		 * the parent. */
		close(sv[0]);
		close(out[0]);
		close(rep[0]);
		prctl_pdeathsig_kill();
		dup2(out[1], 1);
		dup2(out[1], 2);
		close(out[1]);
		worker_main(c, is_pass, sv[1], rep[1]);
	}
	close(sv[1]);
	close(out[1]);
	close(rep[1]);
	wk->pid = pid;
	wk->sock = sv[0];
	wk->out_fd = out[0];
	wk->report_fd = rep[0];
	fcntl(wk->out_fd, F_SETFL, O_NONBLOCK);
	fcntl(wk->report_fd, F_SETFL, O_NONBLOCK);
	return 0;
}

/* Outcome of one step: 0 reply read; W_DIED the child died; W_TIMEOUT. */
enum { STEP_OK = 0, STEP_DIED = 1, STEP_TIMEOUT = 2 };

/* Waits for a reply (and its times) within the timeout, draining the
 * child's output meanwhile. */
static int worker_wait(struct worker *wk, double timeout_s, struct reply *r, double *times)
{
	double deadline = now_ms() + timeout_s * 1e3;
	for (;;) {
		struct pollfd pf[2] = {{wk->sock, POLLIN, 0}, {wk->out_fd, POLLIN, 0}};
		double left = deadline - now_ms();
		if (left <= 0)
			return STEP_TIMEOUT;
		int n = poll(pf, 2, (int)(left > 100 ? 100 : left + 1));
		if (n < 0 && errno != EINTR)
			return STEP_DIED;
		if (pf[1].revents)
			worker_drain(wk);
		if (pf[0].revents & POLLIN) {
			if (recv_all(wk->sock, r, sizeof(*r)))
				return STEP_DIED;
			r->msg[sizeof(r->msg) - 1] = 0;
			if (r->n_times < 0 || r->n_times > MAX_BATCH)
				return STEP_DIED;
			if (r->n_times && recv_all(wk->sock, times, sizeof(double) * (size_t)r->n_times))
				return STEP_DIED;
			return STEP_OK;
		}
		if (pf[0].revents & (POLLHUP | POLLERR))
			return STEP_DIED;
	}
}

/* Ends the worker and says how it ended (into msg when abnormal). */
static void worker_stop(struct worker *wk, int kill_it, char *msg, size_t len)
{
	if (wk->pid <= 0)
		return;
	if (!kill_it) {
		struct cmd q = {.op = CMD_QUIT};
		send_all(wk->sock, &q, sizeof(q));
	}
	int st = 0, killed = 0;
	double deadline = now_ms() + (kill_it ? 50 : 2000);
	pid_t got;
	/* A worker that died by itself is reaped with its own status; one that
	 * is still there when we give up is killed. */
	while ((got = waitpid(wk->pid, &st, WNOHANG)) == 0 && now_ms() < deadline)
		usleep(1000);
	if (got != wk->pid) {
		kill(wk->pid, SIGKILL);
		waitpid(wk->pid, &st, 0);
		killed = 1;
	}
	worker_drain(wk);
	ssize_t n = read(wk->report_fd, wk->report, sizeof(wk->report) - 1);
	wk->report[n > 0 ? n : 0] = 0;
	char *nl = strchr(wk->report, '\n');
	if (nl)
		*nl = 0;
	if (msg && len) {
		if (wk->report[0])
			snprintf(msg, len, "%s", wk->report);
		else if (WIFSIGNALED(st) && !killed)
			snprintf(msg, len, "%s (signal %d)", strsignal(WTERMSIG(st)), WTERMSIG(st));
		else if (WIFEXITED(st) && WEXITSTATUS(st) != 0)
			snprintf(msg, len, "the worker exited with status %d", WEXITSTATUS(st));
	}
	close(wk->sock);
	close(wk->out_fd);
	close(wk->report_fd);
	wk->pid = -1;
}

static int worker_step(struct worker *wk, double timeout_s, const struct cmd *cmd, struct reply *r,
		       double *times)
{
	if (send_all(wk->sock, cmd, sizeof(*cmd)))
		return STEP_DIED;
	return worker_wait(wk, timeout_s, r, times);
}

/* ---- per-variant evaluation ------------------------------------------------------ */

struct vresult {
	enum score_status status;
	int min_t;
	double speedup;
	double eager_ms, pass_ms;       /* medians */
	double eager_iqr, pass_iqr;     /* IQR / median */
	double max_abs_err, max_rel_err;
	int trials;
	char msg[512];
	char *log;
};

static double median_of(double *a, int n, double *iqr_ratio)
{
	eval_sort(a, n);
	double med = n % 2 ? a[n / 2] : (a[n / 2 - 1] + a[n / 2]) / 2;
	double q1 = a[n / 4], q3 = a[(3 * n) / 4 < n ? (3 * n) / 4 : n - 1];
	*iqr_ratio = med > 0 ? (q3 - q1) / med : 0;
	return med;
}

/* Compares one set's pass outputs with eager's; returns the smallest t at
 * which all outputs pass (SCORE_T_NEVER when none), and flags poison. */
static int compare_set(struct ctx *c, int pass_slot, int eager_set, int *poisoned, struct vresult *vr,
		       char *where, size_t wlen)
{
	int worst = SCORE_T_MIN;
	*poisoned = 0;
	for (int o = 0; o < c->v->n_outputs; o++) {
		const struct graph_value *x = &c->v->values[c->v->outputs[o]];
		const unsigned char *p = c->pass_res.base + c->lay.res_out[pass_slot][o];
		const unsigned char *e = c->eager_res.base + c->lay.res_out[eager_set][o];
		struct eval_cmp cmp;
		eval_compare(x->dtype, p, e, (size_t)graph_shape_numel(&x->shape), &cmp);
		if (cmp.poison_at >= 0) {
			*poisoned = 1;
			snprintf(where, wlen, "output %d ('%s') element %lld was never written (it still holds the poison)",
				 o, x->name, (long long)cmp.poison_at);
			return SCORE_T_NEVER;
		}
		if (cmp.max_abs > vr->max_abs_err)
			vr->max_abs_err = cmp.max_abs;
		if (cmp.max_rel > vr->max_rel_err)
			vr->max_rel_err = cmp.max_rel;
		if (cmp.min_t > worst) {
			worst = cmp.min_t;
			if (cmp.min_t == SCORE_T_NEVER)
				snprintf(where, wlen, "output %d ('%s') differs from eager at element %lld (pass %g, eager %g)",
					 o, x->name, (long long)cmp.first_bad, cmp.bad_pass, cmp.bad_eager);
		}
	}
	return worst;
}

static int inputs_unchanged(struct ctx *c, int set, char *where, size_t wlen)
{
	for (int i = 0; i < c->v->n_inputs; i++)
		if (memcmp(c->pass_res.base + c->lay.res_in_after[set][i], c->in.base + c->lay.in_off[set][i],
			   c->lay.in_bytes[i]) != 0) {
			snprintf(where, wlen, "the pass wrote into its input %d ('%s'); inputs are read-only", i,
				 c->v->values[i].name);
			return 0;
		}
	return 1;
}

static void fail_variant(struct vresult *vr, enum score_status st, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static void fail_variant(struct vresult *vr, enum score_status st, const char *fmt, ...)
{
	va_list ap;
	vr->status = st;
	vr->min_t = SCORE_T_NEVER;
	va_start(ap, fmt);
	vsnprintf(vr->msg, sizeof(vr->msg), fmt, ap);
	va_end(ap);
}

static enum score_status status_of_rc(int rc)
{
	switch (rc) {
	case PF_ERR_UNSUPPORTED: return SCORE_UNSUPPORTED;
	case PF_ERR_NOT_IMPLEMENTED: return SCORE_NOT_IMPLEMENTED;
	default: return SCORE_RUNTIME_ERROR;
	}
}

/* The pass worker's step failed: turn how into a verdict. */
static void pass_step_failed(struct worker *pw, int step, const struct reply *r, struct vresult *vr,
			     double timeout_s)
{
	char how[300] = "";
	if (step == STEP_TIMEOUT) {
		worker_stop(pw, 1, NULL, 0);
		fail_variant(vr, SCORE_TIMEOUT, "the pass did not finish within %.0f s", timeout_s);
		return;
	}
	if (step == STEP_DIED) {
		worker_stop(pw, 1, how, sizeof(how));
		if (strstr(how, "forbidden system call"))
			fail_variant(vr, SCORE_REJECTED, "%s: a pass may not use files, the network or processes", how);
		else
			fail_variant(vr, SCORE_RUNTIME_ERROR, "the pass crashed: %s", how[0] ? how : "the worker died");
		return;
	}
	fail_variant(vr, status_of_rc(r->status), "%s", r->msg[0] ? r->msg : "the replacement failed");
}

static int eval_variant(struct ctx *c, struct vresult *vr, char *err, size_t errlen)
{
	struct worker ew, pw;
	struct reply r;
	double t1[MAX_BATCH];
	int rc = -1, step;
	memset(vr, 0, sizeof(*vr));
	vr->min_t = SCORE_T_NEVER;
	vr->status = SCORE_OK;
	if (worker_start(c, 0, &ew, err, errlen))
		return -1;
	step = worker_wait(&ew, 600, &r, t1);
	if (step != STEP_OK || r.status != PF_OK) {
		char how[300] = "";
		worker_stop(&ew, 1, how, sizeof(how));
		snprintf(err, errlen, "eager baseline failed on variant '%s': %s", c->v->name,
			 step == STEP_OK ? r.msg : how[0] ? how : "the eager worker died");
		return -1;
	}
	for (int s = 0; s < N_SETS; s++) {
		struct cmd cm = {.op = CMD_CHECK, .set = s};
		step = worker_step(&ew, 600, &cm, &r, t1);
		if (step != STEP_OK || r.status != PF_OK) {
			worker_stop(&ew, 1, NULL, 0);
			snprintf(err, errlen, "eager baseline failed on variant '%s': %s", c->v->name,
				 step == STEP_OK ? r.msg : "the eager worker died");
			return -1;
		}
	}
	/* Eager outputs are complete: only now does pass code start to run. */
	if (worker_start(c, 1, &pw, err, errlen)) {
		worker_stop(&ew, 1, NULL, 0);
		return -1;
	}
	step = worker_wait(&pw, c->timeout_s, &r, t1);
	if (step != STEP_OK || r.status != PF_OK) {
		if (step == STEP_OK) {
			worker_stop(&pw, 1, NULL, 0);
			fail_variant(vr, SCORE_RUNTIME_ERROR, "the pass could not be loaded: %s", r.msg);
		} else {
			pass_step_failed(&pw, step, &r, vr, c->timeout_s);
		}
		goto done;
	}
	char where[400] = "";
	int poisoned;
	int min_t[N_SETS];
	for (int s = 0; s < N_SETS; s++) {
		struct cmd cm = {.op = CMD_CHECK, .set = s};
		step = worker_step(&pw, c->timeout_s, &cm, &r, t1);
		if (step != STEP_OK || r.status != PF_OK) {
			pass_step_failed(&pw, step, &r, vr, c->timeout_s);
			goto done;
		}
		if (!inputs_unchanged(c, s, where, sizeof(where))) {
			fail_variant(vr, SCORE_REJECTED, "%s", where);
			goto stop_pass;
		}
		min_t[s] = compare_set(c, s, s, &poisoned, vr, where, sizeof(where));
		if (poisoned) {
			fail_variant(vr, SCORE_REJECTED, "%s", where);
			goto stop_pass;
		}
	}
	/* Right on the public inputs, never close on the secret ones: the
	 * results depend on something other than the inputs. */
	if (min_t[0] <= 0 && min_t[1] == SCORE_T_NEVER) {
		fail_variant(vr, SCORE_REJECTED,
			     "right on the public inputs but wrong on a second, secret input set (%s): "
			     "results must be computed from the inputs",
			     where);
		goto stop_pass;
	}
	vr->min_t = min_t[0] > min_t[1] ? min_t[0] : min_t[1];
	if (vr->min_t == SCORE_T_NEVER)
		snprintf(vr->msg, sizeof(vr->msg), "%s", where);

	/* Timing: alternate batches so drift hits both. */
	int total = c->warmup + c->trials;
	double *te = calloc((size_t)total, sizeof(double)), *tp = calloc((size_t)total, sizeof(double));
	int ne = 0, np = 0;
	while (ne < total || np < total) {
		int batch = 5;
		struct cmd cm = {.op = CMD_TIME, .count = batch};
		if (ne < total) {
			cm.count = total - ne < batch ? total - ne : batch;
			step = worker_step(&ew, 600, &cm, &r, t1);
			if (step != STEP_OK || r.status != PF_OK) {
				free(te);
				free(tp);
				snprintf(err, errlen, "eager timing failed on variant '%s'", c->v->name);
				worker_stop(&ew, 1, NULL, 0);
				worker_stop(&pw, 1, NULL, 0);
				return -1;
			}
			memcpy(te + ne, t1, sizeof(double) * (size_t)r.n_times);
			ne += r.n_times;
		}
		if (np < total) {
			cm.count = total - np < batch ? total - np : batch;
			step = worker_step(&pw, c->timeout_s, &cm, &r, t1);
			if (step != STEP_OK || r.status != PF_OK) {
				pass_step_failed(&pw, step, &r, vr, c->timeout_s);
				free(te);
				free(tp);
				goto done;
			}
			memcpy(tp + np, t1, sizeof(double) * (size_t)r.n_times);
			np += r.n_times;
		}
	}
	vr->eager_ms = median_of(te + c->warmup, c->trials, &vr->eager_iqr);
	vr->pass_ms = median_of(tp + c->warmup, c->trials, &vr->pass_iqr);
	vr->trials = c->trials;
	free(te);
	free(tp);
	vr->speedup = vr->pass_ms > 0 ? vr->eager_ms / vr->pass_ms : 1e9;
	/* The outputs of the last timed call must be right too. */
	{
		struct cmd cm = {.op = CMD_KEEP_TIMED};
		step = worker_step(&pw, c->timeout_s, &cm, &r, t1);
		if (step != STEP_OK || r.status != PF_OK) {
			pass_step_failed(&pw, step, &r, vr, c->timeout_s);
			goto done;
		}
		struct vresult scratch = {0};
		int tt = compare_set(c, N_SETS, 0, &poisoned, &scratch, where, sizeof(where));
		if (poisoned || (tt == SCORE_T_NEVER && min_t[0] != SCORE_T_NEVER)) {
			fail_variant(vr, SCORE_REJECTED, "the outputs of the timed runs are wrong (%s)", where);
			goto stop_pass;
		}
	}
	if (vr->min_t == SCORE_T_NEVER)
		vr->status = SCORE_MISMATCH;
stop_pass:
	worker_stop(&pw, 0, NULL, 0);
done:
	worker_stop(&ew, 0, NULL, 0);
	if (pw.log_len) {
		vr->log = pw.log;
		pw.log = NULL;
	}
	free(pw.log);
	free(ew.log);
	rc = 0;
	return rc;
}

/* ---- the whole job ---------------------------------------------------------------- */

static enum score_status eval_status_of_diag(enum pass_verdict v)
{
	switch (v) {
	case PASS_OK: return SCORE_OK;
	case PASS_UNSUPPORTED: return SCORE_UNSUPPORTED;
	case PASS_REJECTED: return SCORE_REJECTED;
	case PASS_NOT_IMPLEMENTED: return SCORE_NOT_IMPLEMENTED;
	default: return SCORE_COMPILE_ERROR;
	}
}

static void eval_trial_counts(const struct eval_job *job, enum gpu_backend be, int *warmup, int *trials)
{
	/* The cpu backend runs kernels thousands of times slower than a GPU:
	 * fewer trials (DESIGN.md section 6), documented in docs/result-format.md. */
	*warmup = be == GPU_BACKEND_CUDA ? 25 : 2;
	*trials = be == GPU_BACKEND_CUDA ? 100 : 10;
	if (job->opts.warmup)
		*warmup = job->opts.warmup < 0 ? 0 : job->opts.warmup;
	if (job->opts.trials > 0)
		*trials = job->opts.trials;
}

static int eval_finish(const struct eval_job *job, const struct graph_task *t, struct score_variant *sv,
		       struct vresult *vr, json_t *variants, const struct pass_diag *diag,
		       const struct pass_module *mod, const char *backend,
		       const char *device, double elapsed_ms, json_t **result, char *err, size_t errlen)
{
	struct score_input in = {.params = {job->opts.b > 0 ? job->opts.b : SCORE_DEFAULT_B, job->opts.p},
				 .n_variants = (size_t)t->n_variants, .variants = sv};
	struct score_result sr;
	char hex[65];
	if (score_compute(&in, &sr, err, errlen))
		return -1;
	sha256_hex(job->pass_src, job->pass_len, hex);
	enum score_status worst = SCORE_OK;
	int first_bad = -1, n_ok = 0;
	double logsum = 0;
	for (int i = 0; i < t->n_variants; i++) {
		enum score_status st = sv[i].status == SCORE_OK && sv[i].min_t == SCORE_T_NEVER ? SCORE_MISMATCH
											 : sv[i].status;
		if (st != SCORE_OK && first_bad < 0)
			first_bad = i;
		worst = eval_worse(worst, st);
		if (st == SCORE_OK) {
			n_ok++;
			logsum += log(sv[i].speedup);
		}
	}
	char msg[768];
	int loosest = SCORE_T_MIN;
	for (int i = 0; i < t->n_variants; i++)
		if (sv[i].min_t != SCORE_T_NEVER && sv[i].min_t > loosest)
			loosest = sv[i].min_t;
	if (first_bad < 0)
		snprintf(msg, sizeof(msg), "all %d variants correct (every output within tolerance from t = %d); "
			 "geometric-mean speedup %.3f", t->n_variants, loosest, exp(logsum / t->n_variants));
	else if (diag->verdict != PASS_OK)
		snprintf(msg, sizeof(msg), "%s", diag->message);
	else
		snprintf(msg, sizeof(msg), "variant '%s': %s (%d of %d variants ok)", t->variants[first_bad].name,
			 vr[first_bad].msg[0] ? vr[first_bad].msg : eval_verdict_name(sv[first_bad].status, sv[first_bad].min_t),
			 n_ok, t->n_variants);
	json_t *curve = json_object();
	for (int k = 0; k < SCORE_N_T; k++) {
		char key[8];
		snprintf(key, sizeof(key), "%d", SCORE_T_MIN + k);
		json_object_set_new(curve, key, json_real(eval_round(sr.es_t[k], 7)));
	}
	json_t *compile = json_pack("{s:s, s:s, s:s}", "verdict", pass_verdict_name(diag->verdict), "message",
				    diag->message, "log_tail", diag->log);
	if (mod) {
		json_object_set_new(compile, "nvrtc_ms", json_real(eval_round(mod->nvrtc_ms, 4)));
		json_object_set_new(compile, "host_ms", json_real(eval_round(mod->host_ms, 4)));
		if (mod->note[0])
			json_object_set_new(compile, "note", json_string(mod->note));
		if (mod->host_log && mod->host_log[0])
			json_object_set_new(compile, "log_tail", json_string(eval_tail(mod->host_log, 4096)));
	}
	if (diag->line > 0)
		json_object_set_new(compile, "line", json_integer(diag->line));
	*result = json_pack("{s:s, s:i, s:s, s:s, s:s, s:s, s:f, s:o, s:s, s:s, s:f, s:f, s:o, s:o, s:f, s:s}",
			    "task", t->id, "seq", 0, "pass_sha256", hex, "state", "done", "verdict",
			    eval_verdict_name(worst, 0), "message", msg, "score", eval_round(sr.score, 7), "es_t", curve,
			    "backend", backend, "device", device, "b", in.params.b, "p", in.params.p, "variants",
			    variants, "compile", compile, "elapsed_ms", eval_round(elapsed_ms, 5), "passfs_version",
			    PASSFS_VERSION);
	if (*result == NULL) {
		snprintf(err, errlen, "out of memory building the result");
		return -1;
	}
	return 0;
}

static json_t *variant_json(const struct graph_variant *v, const struct vresult *vr)
{
	json_t *shapes = json_array();
	for (int o = 0; o < v->n_outputs; o++) {
		const struct graph_value *x = &v->values[v->outputs[o]];
		char sb[200];
		json_array_append_new(shapes, json_string(graph_shape_str(&x->shape, sb, sizeof(sb))));
	}
	json_t *j = json_pack("{s:s, s:s, s:s, s:o, s:o}", "name", v->name, "dtype",
			      graph_dtype_name(v->values[v->outputs[0]].dtype), "verdict",
			      eval_verdict_name(vr->status, vr->min_t), "output_shapes", shapes, "min_t",
			      vr->min_t == SCORE_T_NEVER ? json_null() : json_integer(vr->min_t));
	if (vr->status == SCORE_OK || vr->status == SCORE_MISMATCH) {
		json_object_set_new(j, "speedup", json_real(eval_round(vr->speedup, 4)));
		json_object_set_new(j, "eager_ms", json_real(eval_round(vr->eager_ms, 4)));
		json_object_set_new(j, "pass_ms", json_real(eval_round(vr->pass_ms, 4)));
		json_object_set_new(j, "eager_iqr_ratio", json_real(eval_round(vr->eager_iqr, 3)));
		json_object_set_new(j, "pass_iqr_ratio", json_real(eval_round(vr->pass_iqr, 3)));
		json_object_set_new(j, "trials", json_integer(vr->trials));
		json_object_set_new(j, "max_abs_err", json_real(vr->max_abs_err));
		json_object_set_new(j, "max_rel_err", json_real(vr->max_rel_err));
		if (vr->pass_iqr > 0.2 || vr->eager_iqr > 0.2)
			json_object_set_new(j, "timing_unstable", json_true());
	} else {
		json_object_set_new(j, "speedup", json_null());
	}
	if (vr->msg[0])
		json_object_set_new(j, "message", json_string(vr->msg));
	if (vr->log)
		json_object_set_new(j, "log_tail", json_string(eval_tail(vr->log, 2048)));
	return j;
}

int eval_run(const struct eval_job *job, json_t **result, char *err, size_t errlen)
{
	const struct graph_task *t = job->task;
	struct pass_diag diag;
	struct pass_module *mod = NULL;
	struct score_variant *sv = calloc((size_t)t->n_variants, sizeof(*sv));
	struct vresult *vr = calloc((size_t)t->n_variants, sizeof(*vr));
	json_t *variants = json_array();
	double t_start = now_ms();
	uint64_t secret = job->opts.secret_seed;
	int rc = -1;
	*result = NULL;
	if (secret == 0 && getrandom(&secret, sizeof(secret), 0) != sizeof(secret))
		secret = (uint64_t)time(NULL) * 0x9e3779b97f4a7c15ull;
	/* Resolve the backend once here ("auto" -> cpu or cuda) for the result
	 * and the trial counts; each worker opens its own device after fork. */
	struct gpu_dev *probe;
	char device[128];
	if (gpu_open(job->opts.backend ? job->opts.backend : "auto", &probe, err, errlen))
		goto out;
	enum gpu_backend be = gpu_backend_of(probe);
	snprintf(device, sizeof(device), "%s", gpu_device_name(probe));
	gpu_close(probe);
	const char *backend = be == GPU_BACKEND_CUDA ? "cuda" : "cpu";
	int warmup, trials;
	eval_trial_counts(job, be, &warmup, &trials);

	if (job->opts.progress)
		job->opts.progress(job->opts.progress_ctx, "compiling");
	struct pass_options po = {.allow_device_only = be == GPU_BACKEND_CUDA};
	memset(&diag, 0, sizeof(diag));
	if (pass_compile_opts(job->pass_label, job->pass_src, job->pass_len, &po, &mod, &diag) != 0 ||
	    diag.verdict != PASS_OK) {
		if (diag.verdict == PASS_INTERNAL_ERROR) {
			snprintf(err, errlen, "cannot compile passes here: %s", diag.message);
			goto out;
		}
		/* Nothing ran: every variant takes the compile verdict. */
		enum score_status st = eval_status_of_diag(diag.verdict);
		for (int i = 0; i < t->n_variants; i++) {
			sv[i].status = st;
			sv[i].min_t = SCORE_T_NEVER;
			sv[i].dtype = eval_score_dtype(t->variants[i].values[t->variants[i].outputs[0]].dtype);
			fail_variant(&vr[i], st, "%s", diag.message);
			json_array_append_new(variants, variant_json(&t->variants[i], &vr[i]));
		}
		rc = eval_finish(job, t, sv, vr, variants, &diag, NULL, backend, device, now_ms() - t_start, result,
				 err, errlen);
		goto out;
	}
	if (job->opts.progress)
		job->opts.progress(job->opts.progress_ctx, "running");
	for (int i = 0; i < t->n_variants; i++) {
		struct ctx c = {.job = job, .v = &t->variants[i], .mod = mod};
		c.in.fd = c.eager_res.fd = c.pass_res.fd = -1;
		c.timeout_s = job->opts.variant_timeout_s > 0 ? job->opts.variant_timeout_s : 20;
		plan_layout(&c);
		if (shm_create(&c.in, "passfs-in", c.lay.in_total) ||
		    shm_create(&c.eager_res, "passfs-eager", c.lay.res_total) ||
		    shm_create(&c.pass_res, "passfs-pass", c.lay.res_total)) {
			snprintf(err, errlen, "cannot allocate shared memory for variant '%s': %s", c.v->name,
				 strerror(errno));
			shm_destroy(&c.in);
			shm_destroy(&c.eager_res);
			shm_destroy(&c.pass_res);
			goto out;
		}
		int bad = 0;
		for (int s = 0; s < N_SETS && !bad; s++) {
			void *bufs[GRAPH_MAX_IO];
			if (inputs_generate(c.v, s == 0 ? PUBLIC_SEED : secret, bufs, err, errlen)) {
				bad = 1;
				break;
			}
			for (int k = 0; k < c.v->n_inputs; k++)
				memcpy(c.in.base + c.lay.in_off[s][k], bufs[k], c.lay.in_bytes[k]);
			inputs_free(bufs, c.v->n_inputs);
		}
		if (!bad && shm_seal(&c.in)) {
			snprintf(err, errlen, "cannot seal the inputs: %s", strerror(errno));
			bad = 1;
		}
		c.warmup = warmup;
		c.trials = trials;
		if (!bad && !job->opts.quiet)
			fprintf(stderr, "passfs eval: variant %s ...\n", c.v->name);
		if (!bad && eval_variant(&c, &vr[i], err, errlen))
			bad = 1;
		shm_destroy(&c.in);
		shm_destroy(&c.eager_res);
		shm_destroy(&c.pass_res);
		if (bad)
			goto out;
		sv[i].status = vr[i].status;
		sv[i].min_t = vr[i].min_t;
		sv[i].speedup = vr[i].speedup > 0 ? vr[i].speedup : 1;
		sv[i].dtype = eval_score_dtype(c.v->values[c.v->outputs[0]].dtype);
		json_array_append_new(variants, variant_json(c.v, &vr[i]));
	}
	rc = eval_finish(job, t, sv, vr, variants, &diag, mod, backend, device, now_ms() - t_start, result, err,
			 errlen);
out:
	for (int i = 0; i < t->n_variants; i++)
		free(vr[i].log);
	free(vr);
	free(sv);
	if (rc)
		json_decref(variants);
	pass_module_free(mod);
	return rc;
}
