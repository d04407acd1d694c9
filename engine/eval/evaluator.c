/* evaluator.c - one evaluation in a process of its own (evaluator.h).
 *
 * The caller and the evaluator talk over a stream socket, the evaluator's
 * descriptor 3, in a versioned protocol of fixed byte order (below, at
 * EV_VERSION): the request (the options, then the strings backend, pass
 * label, graph label, graph text, pass bytes), then replies: progress phases
 * and one result.
 * Cancel is SIGTERM to the evaluator (eval_opts.cancel there); the caller's
 * death reaches it as SIGTERM too (PR_SET_PDEATHSIG), and so does a closed
 * socket at its next write. */
#define _GNU_SOURCE
#include "evaluator.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "eval_util.h"
#include "graph.h"
#include "wire.h"

#define EV_MAGIC 0x70667665u    /* "evfp" */
/* The protocol's version: bumped whenever a field is added, moved or
 * reinterpreted.  Both ends are the same binary today; a remote worker of
 * another build must be told, not misread. */
#define EV_VERSION 2
#define EV_FD 3
#define EV_STR_MAX ((uint32_t)512 << 20)
#define EV_NSTR 5               /* backend, pass label, graph label, graph text, pass */

/* The request, in a fixed byte order (little-endian) whatever the host's:
 *   u32 magic, u32 version,
 *   i32 warmup, i32 trials, i32 cold, i32 quiet, i32 trial_times,
 *   f64 variant_timeout_s, f64 b, f64 p, f64 lock_timeout_s, u64 secret_seed,
 *   u32 len[5], then the five strings' bytes.
 * Replies: 'P' u32 n, n bytes (a phase); 'R' i32 rc, u32 n, message, u32 m,
 * JSON. */
#define EV_HEAD_BYTES (4 * 2 + 4 * 5 + 8 * 5 + 4 * EV_NSTR)

/* The fields are put and got with base/wire.h. */

/* A request's fixed part, decoded. */
struct ev_req {
	int32_t warmup, trials, cold, quiet, trial_times;
	double variant_timeout_s, b, p, lock_timeout_s;
	uint64_t secret_seed;
	uint32_t len[EV_NSTR];
};

/* Reads and checks the fixed part from fd: 0, or -1 with why in err. */
static int recv_head(int fd, struct ev_req *q, char *err, size_t errlen)
{
	unsigned char h[EV_HEAD_BYTES];
	/* magic and version first: a request of another version is named as
	 * such, whatever its length */
	if (eval_recv_all(fd, h, 8) != 0) {
		snprintf(err, errlen, "no evaluation request on descriptor %d", fd);
		return -1;
	}
	if (wire_get_u32(h) != EV_MAGIC) {
		snprintf(err, errlen, "descriptor %d holds no evaluation request (magic %08x, not the evaluation "
			 "protocol version %d's)", fd, wire_get_u32(h), EV_VERSION);
		return -1;
	}
	if (wire_get_u32(h + 4) != EV_VERSION) {
		snprintf(err, errlen, "an evaluation request of protocol version %u; this passfs speaks version %d",
			 wire_get_u32(h + 4), EV_VERSION);
		return -1;
	}
	if (eval_recv_all(fd, h + 8, sizeof h - 8) != 0) {
		snprintf(err, errlen, "the evaluation request on descriptor %d is cut short", fd);
		return -1;
	}
	const unsigned char *p = h + 8;
	int32_t *ints[5] = {&q->warmup, &q->trials, &q->cold, &q->quiet, &q->trial_times};
	for (int i = 0; i < 5; i++, p += 4)
		*ints[i] = (int32_t)wire_get_u32(p);
	double *dbl[4] = {&q->variant_timeout_s, &q->b, &q->p, &q->lock_timeout_s};
	for (int i = 0; i < 4; i++, p += 8)
		*dbl[i] = wire_get_f64(p);
	q->secret_seed = wire_get_le(p, 8);
	p += 8;
	for (int i = 0; i < EV_NSTR; i++, p += 4)
		q->len[i] = wire_get_u32(p);
	return 0;
}

/* ---- the evaluator (the exec'd process) --------------------------------------- */

static int ev_cancel;

static void on_term(int sig)
{
	(void)sig;
	__atomic_store_n(&ev_cancel, 1, __ATOMIC_RELAXED);
}

static void send_msg(int fd, char type, const void *a, uint32_t an)
{
	unsigned char h[5];
	h[0] = (unsigned char)type;
	wire_put_u32(h + 1, an);
	if (eval_send_all(fd, h, 5) == 0 && an > 0)
		eval_send_all(fd, a, an);
}

static void on_phase(void *ctx, const char *phase)
{
	(void)ctx;
	send_msg(EV_FD, 'P', phase, (uint32_t)strlen(phase));
}

static int send_result(int rc, const char *msg, const char *json)
{
	uint32_t mn = (uint32_t)strlen(msg), jn = json ? (uint32_t)strlen(json) : 0;
	unsigned char h[9], j4[4];
	h[0] = 'R';
	wire_put_u32(h + 1, (uint32_t)rc);
	wire_put_u32(h + 5, mn);
	wire_put_u32(j4, jn);
	return eval_send_all(EV_FD, h, 9) || eval_send_all(EV_FD, msg, mn) || eval_send_all(EV_FD, j4, 4) ||
			       eval_send_all(EV_FD, json, jn)
		       ? -1
		       : 0;
}

/* n bytes from fd as a malloc'd NUL-terminated string, or NULL. */
static char *read_str(int fd, uint32_t n)
{
	if (n > EV_STR_MAX)
		return NULL;
	char *s = malloc((size_t)n + 1);
	if (s != NULL && eval_recv_all(fd, s, n) != 0) {
		free(s);
		return NULL;
	}
	if (s != NULL)
		s[n] = '\0';
	return s;
}

int evaluator_main_if(int argc, char **argv)
{
	if (argc < 2 || strcmp(argv[1], EVALUATOR_ARG) != 0)
		return -1;
	struct sigaction sa;
	memset(&sa, 0, sizeof sa);
	sa.sa_handler = on_term;        /* no SA_RESTART: waits see EINTR */
	sigemptyset(&sa.sa_mask);
	sigaction(SIGTERM, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);
	struct ev_req q;
	char herr[200];
	if (recv_head(EV_FD, &q, herr, sizeof herr) != 0) {
		fprintf(stderr, "passfs: %s: %s\n", EVALUATOR_ARG, herr);
		return 2;
	}
	char *s[EV_NSTR] = {NULL};
	for (int i = 0; i < EV_NSTR; i++)
		if ((s[i] = read_str(EV_FD, q.len[i])) == NULL) {
			for (int k = 0; k < i; k++)
				free(s[k]);
			fprintf(stderr, "passfs: %s: the evaluation request is cut short\n", EVALUATOR_ARG);
			return 2;
		}
	char err[1024] = "";
	struct graph_task *t = NULL;
	json_t *doc = NULL;
	int rc = graph_load_buffer(s[2], s[3], q.len[3], &t, err, sizeof err);
	if (rc == 0) {
		struct eval_job job = {
			.task = t, .pass_label = s[1], .pass_src = s[4], .pass_len = q.len[4],
			.opts = {.backend = s[0], .warmup = q.warmup, .trials = q.trials,
				 .variant_timeout_s = q.variant_timeout_s, .secret_seed = q.secret_seed, .b = q.b,
				 .p = q.p, .cold = q.cold, .lock_timeout_s = q.lock_timeout_s, .quiet = q.quiet,
				 .trial_times = q.trial_times,
				 .progress = on_phase, .cancel = &ev_cancel},
		};
		rc = eval_run(&job, &doc, err, sizeof err);
	}
	char *text = rc == 0 && doc != NULL ? json_dumps(doc, JSON_COMPACT) : NULL;
	if (rc == 0 && text == NULL) {
		rc = -1;
		snprintf(err, sizeof err, "out of memory");
	}
	int sent = send_result(rc, err, text);
	free(text);
	json_decref(doc);
	graph_task_free(t);
	for (int i = 0; i < EV_NSTR; i++)
		free(s[i]);
	return sent == 0 ? 0 : 1;
}

/* ---- the caller ------------------------------------------------------------------ */

/* In the child between fork and exec: async-signal-safe calls only. */
static void __attribute__((noreturn)) exec_evaluator(int sock, pid_t parent)
{
	prctl(PR_SET_PDEATHSIG, SIGTERM);
	if (getppid() != parent)
		_exit(127);
	if (sock != EV_FD) {
		if (dup2(sock, EV_FD) != EV_FD)
			_exit(127);
	} else {
		fcntl(EV_FD, F_SETFD, 0);
	}
	/* nothing else of the caller's: its files, its FUSE channel */
	if (syscall(SYS_close_range, EV_FD + 1, ~0u, 0) != 0)
		for (int fd = EV_FD + 1; fd < 65536; fd++)
			close(fd);
	sigset_t none;
	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);
	signal(SIGPIPE, SIG_DFL);
	char arg0[] = "passfs", arg1[] = EVALUATOR_ARG;
	char *argv[] = {arg0, arg1, NULL};
	extern char **environ;
	execve("/proc/self/exe", argv, environ);
	_exit(127);
}

static int send_request(int fd, const struct eval_job *job, const char *graph_text, size_t graph_len,
			const char *graph_label)
{
	const struct eval_opts *o = &job->opts;
	const char *backend = o->backend ? o->backend : "auto";
	const char *label = job->pass_label ? job->pass_label : "pass.c";
	const char *str[EV_NSTR] = {backend, label, graph_label, graph_text, job->pass_src};
	size_t len[EV_NSTR] = {strlen(backend), strlen(label), strlen(graph_label), graph_len, job->pass_len};
	unsigned char h[EV_HEAD_BYTES], *p = h;
	wire_put_u32(p, EV_MAGIC);
	wire_put_u32(p + 4, EV_VERSION);
	p += 8;
	int32_t ints[5] = {o->warmup, o->trials, o->cold, o->quiet, o->trial_times};
	for (int i = 0; i < 5; i++, p += 4)
		wire_put_u32(p, (uint32_t)ints[i]);
	double dbl[4] = {o->variant_timeout_s, o->b, o->p, o->lock_timeout_s};
	for (int i = 0; i < 4; i++, p += 8)
		wire_put_f64(p, dbl[i]);
	wire_put_le(p, o->secret_seed, 8);
	p += 8;
	for (int i = 0; i < EV_NSTR; i++, p += 4) {
		if (len[i] > EV_STR_MAX)
			return -1;
		wire_put_u32(p, (uint32_t)len[i]);
	}
	if (eval_send_all(fd, h, sizeof h))
		return -1;
	for (int i = 0; i < EV_NSTR; i++)
		if (eval_send_all(fd, str[i], len[i]))
			return -1;
	return 0;
}

/* Reads replies until 'R' (0 with *result/rc filled) or the end (-1);
 * *answered: anything came. */
static int read_replies(int fd, pid_t pid, const struct eval_job *job, int *rc_out, json_t **result, char *err,
			size_t errlen, int *answered)
{
	int killed = 0;
	for (;;) {
		if (!killed && job->opts.cancel != NULL && __atomic_load_n(job->opts.cancel, __ATOMIC_RELAXED)) {
			kill(pid, SIGTERM);
			killed = 1;
		}
		struct pollfd pf = {.fd = fd, .events = POLLIN};
		int k = poll(&pf, 1, 100);
		if (k < 0 && errno != EINTR)
			return -1;
		if (k <= 0)
			continue;
		unsigned char type, b4[4];
		uint32_t n;
		if (eval_recv_all(fd, &type, 1) != 0)
			return -1;
		*answered = 1;
		if (type == 'P') {
			char phase[64];
			if (eval_recv_all(fd, b4, 4) != 0 || (n = wire_get_u32(b4)) >= sizeof phase ||
			    eval_recv_all(fd, phase, n) != 0)
				return -1;
			phase[n] = '\0';
			if (job->opts.progress != NULL)
				job->opts.progress(job->opts.progress_ctx, phase);
			continue;
		}
		int32_t rc;
		char *msg, *json;
		if (type != 'R' || eval_recv_all(fd, b4, 4) != 0)
			return -1;
		rc = (int32_t)wire_get_u32(b4);
		if (eval_recv_all(fd, b4, 4) != 0 || (msg = read_str(fd, wire_get_u32(b4))) == NULL)
			return -1;
		snprintf(err, errlen, "%s", msg);
		free(msg);
		if (eval_recv_all(fd, b4, 4) != 0 || (json = read_str(fd, wire_get_u32(b4))) == NULL)
			return -1;
		*rc_out = rc;
		if (rc == 0) {
			json_error_t je;
			*result = json_loads(json, 0, &je);
			if (*result == NULL) {
				snprintf(err, errlen, "the evaluation process sent an unreadable result: %s", je.text);
				*rc_out = -1;
			}
		}
		free(json);
		return 0;
	}
}

int evaluator_run(const struct eval_job *job, const char *graph_text, size_t graph_len, const char *graph_label,
		  int *spawned, json_t **result, char *err, size_t errlen)
{
	*result = NULL;
	*spawned = 0;
	int sv[2];
	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) != 0) {
		snprintf(err, errlen, "socketpair: %s", strerror(errno));
		return -1;
	}
	pid_t parent = getpid();
	pid_t pid = fork();
	if (pid < 0) {
		snprintf(err, errlen, "fork: %s", strerror(errno));
		close(sv[0]);
		close(sv[1]);
		return -1;
	}
	if (pid == 0)
		exec_evaluator(sv[1], parent);
	close(sv[1]);
	int rc = -1, got = -1, answered = 0;
	if (send_request(sv[0], job, graph_text, graph_len, graph_label) == 0)
		got = read_replies(sv[0], pid, job, &rc, result, err, errlen, &answered);
	close(sv[0]);
	int st = 0;
	while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
		;
	if (got == 0) {
		*spawned = 1;
		return rc;
	}
	/* No result.  It exited without a word: the exec failed (127), or
	 * /proc/self/exe is not this program (a loader or a wrapper ran it), so
	 * the caller may evaluate in-process.  Killed, or gone after it
	 * answered: the evaluation's own failure. */
	if (WIFEXITED(st) && !answered) {
		snprintf(err, errlen, "cannot start the evaluation process (/proc/self/exe %s, exit status %d)",
			 EVALUATOR_ARG, WEXITSTATUS(st));
		return -1;
	}
	*spawned = 1;
	if (job->opts.cancel != NULL && __atomic_load_n(job->opts.cancel, __ATOMIC_RELAXED))
		snprintf(err, errlen, "cancelled");
	else if (WIFSIGNALED(st))
		snprintf(err, errlen, "the evaluation process was killed by signal %d (%s)", WTERMSIG(st),
			 strsignal(WTERMSIG(st)));
	else
		snprintf(err, errlen, "the evaluation process exited with status %d without a result",
			 WIFEXITED(st) ? WEXITSTATUS(st) : -1);
	return -1;
}
