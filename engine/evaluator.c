/* evaluator.c - one evaluation in a process of its own (evaluator.h).
 *
 * The caller and the evaluator talk over a stream socket, the evaluator's
 * descriptor 3:
 *   request (caller -> evaluator): struct ev_req, then its strings in the
 *     order backend, pass label, graph label, graph text, pass bytes;
 *   replies (evaluator -> caller): 'P' u32 n, n bytes: a progress phase;
 *     'R' i32 rc, u32 n, n bytes of message, u32 m, m bytes of JSON: the end.
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

#define EV_MAGIC 0x70667665u    /* "evfp" */
#define EV_FD 3
#define EV_STR_MAX ((uint32_t)512 << 20)

struct ev_req {
	uint32_t magic, size;   /* size: sizeof(struct ev_req), a build check */
	int32_t warmup, trials, cold, quiet;
	double variant_timeout_s, b, p, lock_timeout_s;
	uint64_t secret_seed;
	uint32_t len[5];        /* backend, pass label, graph label, graph text, pass */
};

/* ---- the evaluator (the exec'd process) --------------------------------------- */

static int ev_cancel;

static void on_term(int sig)
{
	(void)sig;
	__atomic_store_n(&ev_cancel, 1, __ATOMIC_RELAXED);
}

static void send_msg(int fd, char type, const void *a, uint32_t an)
{
	char h[5];
	h[0] = type;
	memcpy(h + 1, &an, 4);
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
	int32_t r = rc;
	char t = 'R';
	return eval_send_all(EV_FD, &t, 1) || eval_send_all(EV_FD, &r, 4) || eval_send_all(EV_FD, &mn, 4) ||
			       eval_send_all(EV_FD, msg, mn) || eval_send_all(EV_FD, &jn, 4) || eval_send_all(EV_FD, json, jn)
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
	if (eval_recv_all(EV_FD, &q, sizeof q) != 0 || q.magic != EV_MAGIC || q.size != sizeof q) {
		fprintf(stderr, "passfs: %s: no evaluation request on descriptor %d\n", EVALUATOR_ARG, EV_FD);
		return 2;
	}
	char *s[5] = {NULL};
	for (int i = 0; i < 5; i++)
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
	for (int i = 0; i < 5; i++)
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
	struct ev_req q = {
		.magic = EV_MAGIC, .size = sizeof q, .warmup = o->warmup, .trials = o->trials, .cold = o->cold,
		.quiet = o->quiet, .variant_timeout_s = o->variant_timeout_s, .b = o->b, .p = o->p,
		.lock_timeout_s = o->lock_timeout_s, .secret_seed = o->secret_seed,
		.len = {(uint32_t)strlen(backend), (uint32_t)strlen(label), (uint32_t)strlen(graph_label),
			(uint32_t)graph_len, (uint32_t)job->pass_len},
	};
	return eval_send_all(fd, &q, sizeof q) || eval_send_all(fd, backend, q.len[0]) || eval_send_all(fd, label, q.len[1]) ||
			       eval_send_all(fd, graph_label, q.len[2]) || eval_send_all(fd, graph_text, graph_len) ||
			       eval_send_all(fd, job->pass_src, job->pass_len)
		       ? -1
		       : 0;
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
		char type;
		uint32_t n;
		if (eval_recv_all(fd, &type, 1) != 0)
			return -1;
		*answered = 1;
		if (type == 'P') {
			char phase[64];
			if (eval_recv_all(fd, &n, 4) != 0 || n >= sizeof phase || eval_recv_all(fd, phase, n) != 0)
				return -1;
			phase[n] = '\0';
			if (job->opts.progress != NULL)
				job->opts.progress(job->opts.progress_ctx, phase);
			continue;
		}
		int32_t rc;
		char *msg, *json;
		if (type != 'R' || eval_recv_all(fd, &rc, 4) != 0 || eval_recv_all(fd, &n, 4) != 0 ||
		    (msg = read_str(fd, n)) == NULL)
			return -1;
		snprintf(err, errlen, "%s", msg);
		free(msg);
		if (eval_recv_all(fd, &n, 4) != 0 || (json = read_str(fd, n)) == NULL)
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
