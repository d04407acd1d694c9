/* evaluator.c - the evaluator interface's local implementation, and the
 * evaluation process it starts (evaluator.h).
 *
 * The protocol between the caller and the evaluation process, over a stream
 * socket (the process's descriptor 3), in a fixed byte order (little-endian)
 * whatever the hosts':
 *
 *   caller -> process:  u32 magic "evfp", u32 version (EV_VERSION), then
 *                       messages
 *   a message:          u8 type, u32 n, n bytes of payload
 *   caller -> process:  'Q' the request (once, first): i32 warmup, trials,
 *                       cold, quiet, trial_times, check_only; f64
 *                       variant_timeout_s, b,
 *                       p, lock_timeout_s; u64 secret_seed; then five
 *                       strings, each u32 length and bytes: backend, pass
 *                       label, graph label, graph text, pass
 *                       'C' cancel (no payload): stop, kill the workers,
 *                       answer "cancelled"
 *   process -> caller:  'P' a phase ("compiling", "running")
 *                       'R' the result: i32 rc, u32 n, message, u32 m, JSON
 *
 * A message of a type the reader does not know is skipped whole (its length
 * says how far), so a newer caller's extra message is ignored, not misread;
 * a field added to, moved in or reinterpreted in a known message bumps
 * EV_VERSION.  A closed socket is a cancel too, and the caller's death
 * reaches the process as SIGTERM (PR_SET_PDEATHSIG), which cancels. */
#define _GNU_SOURCE
#include "evaluator.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
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
#include "clock.h"
#include "wire.h"

#define EV_MAGIC 0x70667665u    /* "evfp" */
#define EV_VERSION 4
#define EV_FD 3
#define EV_STR_MAX ((uint32_t)512 << 20)
#define EV_NSTR 5               /* backend, pass label, graph label, graph text, pass */
/* After a cancel is sent, how long the process has to answer before it is
 * killed (it stops at its next wait, at most a worker step's poll). */
#define EV_CANCEL_GRACE_MS 3000

/* The fields are put and got with base/wire.h. */

/* ---- messages ------------------------------------------------------------------ */

static int send_msg(int fd, char type, const void *a, uint32_t an)
{
	unsigned char h[5];
	h[0] = (unsigned char)type;
	wire_put_u32(h + 1, an);
	return eval_send_all(fd, h, 5) || (an > 0 && eval_send_all(fd, a, an)) ? -1 : 0;
}

/* Reads one message's header: 0 with its type and length, or -1 (the end). */
static int recv_head(int fd, char *type, uint32_t *n)
{
	unsigned char h[5];
	if (eval_recv_all(fd, h, 5) != 0)
		return -1;
	*type = (char)h[0];
	*n = wire_get_u32(h + 1);
	return 0;
}

/* Skips n bytes of payload: 0, or -1 (the end). */
static int skip(int fd, uint32_t n)
{
	char buf[4096];
	while (n > 0) {
		uint32_t k = n < sizeof buf ? n : (uint32_t)sizeof buf;
		if (eval_recv_all(fd, buf, k) != 0)
			return -1;
		n -= k;
	}
	return 0;
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

/* ---- the request ------------------------------------------------------------- */

void eval_opts_put(struct wire_buf *b, const struct eval_opts *o)
{
	int32_t ints[6] = {o->warmup, o->trials, o->cold, o->quiet, o->trial_times, o->check_only};
	for (int i = 0; i < 6; i++)
		wire_add_u32(b, (uint32_t)ints[i]);
	double dbl[4] = {o->variant_timeout_s, o->b, o->p, o->lock_timeout_s};
	for (int i = 0; i < 4; i++)
		wire_add_f64(b, dbl[i]);
	wire_add_u64(b, o->secret_seed);
}

void eval_opts_take(struct wire_in *r, struct eval_opts *o)
{
	int32_t *ints[6] = {&o->warmup, &o->trials, &o->cold, &o->quiet, &o->trial_times, &o->check_only};
	for (int i = 0; i < 6; i++)
		*ints[i] = (int32_t)wire_take_u32(r);
	double *dbl[4] = {&o->variant_timeout_s, &o->b, &o->p, &o->lock_timeout_s};
	for (int i = 0; i < 4; i++)
		*dbl[i] = wire_take_f64(r);
	o->secret_seed = wire_take_u64(r);
}

/* The request of a job: the hello and the 'Q' message.  0, or -1. */
static int send_request(int fd, const struct eval_job *job)
{
	const struct eval_opts *o = &job->opts;
	const char *backend = o->backend[0] ? o->backend : "auto";
	const char *label = job->pass_label ? job->pass_label : "pass.c";
	const char *glabel = job->graph_label ? job->graph_label : "graph.json";
	const char *str[EV_NSTR] = {backend, label, glabel, job->graph_text, job->pass_src};
	size_t len[EV_NSTR] = {strlen(backend), strlen(label), strlen(glabel), job->graph_len, job->pass_len};
	struct wire_buf b = {0};
	wire_add_u32(&b, EV_MAGIC);
	wire_add_u32(&b, EV_VERSION);
	wire_add_u8(&b, 'Q');
	wire_add_u32(&b, 0);            /* the payload's length, below */
	eval_opts_put(&b, o);
	for (int i = 0; i < EV_NSTR; i++) {
		if (len[i] > EV_STR_MAX) {
			free(b.p);
			return -1;
		}
		wire_add_u32(&b, (uint32_t)len[i]);
		wire_add_bytes(&b, str[i], len[i]);
	}
	int rc = -1;
	if (!b.oom && b.len - 13 <= UINT32_MAX) {
		wire_put_u32(b.p + 9, (uint32_t)(b.len - 13));
		rc = eval_send_all(fd, b.p, b.len) ? -1 : 0;
	}
	free(b.p);
	return rc;
}

/* A decoded request: the job, pointing into its payload and strings. */
struct ev_req {
	struct eval_job job;
	unsigned char *payload;
	char *label, *glabel;
};

static void req_free(struct ev_req *q)
{
	free(q->payload);
	free(q->label);
	free(q->glabel);
}

/* Reads the hello and the request from fd: 0, or -1 with why in err. */
static int recv_request(int fd, struct ev_req *q, char *err, size_t errlen)
{
	unsigned char h[8];
	memset(q, 0, sizeof *q);
	/* magic and version first: a request of another version is named as
	 * such, whatever follows */
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
	char type;
	uint32_t n;
	if (recv_head(fd, &type, &n) != 0 || type != 'Q' || n > (uint64_t)EV_NSTR * (4 + (uint64_t)EV_STR_MAX) ||
	    (q->payload = malloc(n ? n : 1)) == NULL || eval_recv_all(fd, q->payload, n) != 0) {
		req_free(q);
		snprintf(err, errlen, "the evaluation request on descriptor %d is cut short or malformed", fd);
		return -1;
	}
	struct wire_in r = {.p = q->payload, .len = n};
	struct eval_opts *o = &q->job.opts;
	eval_opts_take(&r, o);
	const char *str[EV_NSTR];
	uint32_t len[EV_NSTR];
	for (int i = 0; i < EV_NSTR; i++) {
		len[i] = wire_take_u32(&r);
		str[i] = wire_take_bytes(&r, len[i]);
	}
	if (r.bad || r.off != r.len || len[0] >= sizeof o->backend ||
	    (q->label = strndup(str[1], len[1])) == NULL || (q->glabel = strndup(str[2], len[2])) == NULL) {
		req_free(q);
		snprintf(err, errlen, "the evaluation request on descriptor %d is malformed", fd);
		return -1;
	}
	memcpy(o->backend, str[0], len[0]);
	o->backend[len[0]] = '\0';
	q->job.pass_label = q->label;
	q->job.graph_label = q->glabel;
	q->job.graph_text = str[3];
	q->job.graph_len = len[3];
	q->job.pass_src = str[4];
	q->job.pass_len = len[4];
	return 0;
}

/* ---- the evaluation process (the exec'd program) --------------------------------- */

static int ev_cancel;

static void on_term(int sig)
{
	(void)sig;
	__atomic_store_n(&ev_cancel, 1, __ATOMIC_RELAXED);
}

/* Reads the caller's messages while the evaluation runs: 'C', or the end of
 * the stream, cancels it. */
static void *listen_main(void *arg)
{
	(void)arg;
	char type;
	uint32_t n;
	while (recv_head(EV_FD, &type, &n) == 0) {
		if (type == 'C')
			break;
		if (skip(EV_FD, n) != 0)
			break;
	}
	__atomic_store_n(&ev_cancel, 1, __ATOMIC_RELAXED);
	return NULL;
}

static void on_phase(void *ctx, const char *phase)
{
	(void)ctx;
	send_msg(EV_FD, 'P', phase, (uint32_t)strlen(phase));
}

static int send_result(int rc, const char *msg, const char *json)
{
	uint32_t mn = (uint32_t)strlen(msg), jn = json ? (uint32_t)strlen(json) : 0;
	unsigned char h[13], j4[4];
	h[0] = 'R';
	wire_put_u32(h + 1, 4 + 4 + mn + 4 + jn);
	wire_put_u32(h + 5, (uint32_t)rc);
	wire_put_u32(h + 9, mn);
	wire_put_u32(j4, jn);
	return eval_send_all(EV_FD, h, 13) || eval_send_all(EV_FD, msg, mn) || eval_send_all(EV_FD, j4, 4) ||
			       eval_send_all(EV_FD, json, jn)
		       ? -1
		       : 0;
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
	char err[1024] = "";
	if (recv_request(EV_FD, &q, err, sizeof err) != 0) {
		fprintf(stderr, "passfs: %s: %s\n", EVALUATOR_ARG, err);
		return 2;
	}
	/* the listener is a thread of this process only: the pass's workers
	 * are forks, which take the calling thread alone, and close every
	 * descriptor they did not ask for */
	pthread_t listener;
	int listening = pthread_create(&listener, NULL, listen_main, NULL) == 0;
	if (!listening)
		fprintf(stderr, "passfs: %s: no listener for a cancel (%s); SIGTERM still cancels\n", EVALUATOR_ARG,
			strerror(errno));
	json_t *doc = NULL;
	struct eval_hooks hooks = {.progress = on_phase, .cancel = &ev_cancel};
	int rc = eval_run(&q.job, &hooks, &doc, err, sizeof err);
	char *text = rc == 0 && doc != NULL ? json_dumps(doc, JSON_COMPACT) : NULL;
	if (rc == 0 && text == NULL) {
		rc = -1;
		snprintf(err, sizeof err, "out of memory");
	}
	int sent = send_result(rc, err, text);
	free(text);
	json_decref(doc);
	req_free(&q);
	/* the listener may still be blocked in a read: the process's exit
	 * ends it */
	return sent == 0 ? 0 : 1;
}

/* ---- the local evaluator (the caller's side) -------------------------------------- */

struct local {
	struct evaluator base;
	int fallback;           /* in_process_fallback */
	int cancelled;          /* atomic: cancel() was called */
	char setting[256];      /* "NAME=VALUE" for the evaluation process, or "" */
};

static int is_cancelled(struct local *l)
{
	return __atomic_load_n(&l->cancelled, __ATOMIC_RELAXED);
}

/* In the child between fork and exec: async-signal-safe calls only. */
static void __attribute__((noreturn)) exec_evaluator(int sock, pid_t parent, char **envp)
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
	execve("/proc/self/exe", argv, envp);
	_exit(127);
}

/* The evaluation process's environment: the caller's, with l->setting in
 * place of a variable of its name.  A malloc'd array of pointers into
 * environ and l (made before the fork: the child may not allocate), or
 * NULL when out of memory. */
static char **child_env(struct local *l)
{
	extern char **environ;
	size_t n = 0, k = 0;
	while (environ[n])
		n++;
	char **envp = malloc((n + 2) * sizeof *envp);
	if (envp == NULL)
		return NULL;
	const char *eq = strchr(l->setting, '=');
	size_t nl = eq ? (size_t)(eq - l->setting) + 1 : 0;
	for (size_t i = 0; i < n; i++)
		if (nl == 0 || strncmp(environ[i], l->setting, nl) != 0)
			envp[k++] = environ[i];
	if (nl)
		envp[k++] = l->setting;
	envp[k] = NULL;
	return envp;
}

/* Reads replies until 'R' (0 with *result/rc filled) or the end (-1);
 * *answered: anything came.  A cancel meanwhile is sent as 'C'; a process
 * that does not answer it within EV_CANCEL_GRACE_MS is killed. */
static int read_replies(struct local *l, int fd, pid_t pid, void (*progress)(void *, const char *), void *ctx,
			int *rc_out, json_t **result, char *err, size_t errlen, int *answered)
{
	double cancel_at = -1;
	for (;;) {
		if (cancel_at < 0 && is_cancelled(l)) {
			cancel_at = base_now_ms();
			if (send_msg(fd, 'C', NULL, 0) != 0)
				kill(pid, SIGTERM);
		}
		if (cancel_at >= 0 && base_now_ms() - cancel_at > EV_CANCEL_GRACE_MS) {
			kill(pid, SIGKILL);
			cancel_at = 1e300;      /* once */
		}
		struct pollfd pf = {.fd = fd, .events = POLLIN};
		int k = poll(&pf, 1, 100);
		if (k < 0 && errno != EINTR)
			return -1;
		if (k <= 0)
			continue;
		char type;
		uint32_t n;
		if (recv_head(fd, &type, &n) != 0)
			return -1;
		*answered = 1;
		if (type == 'P') {
			char phase[64];
			if (n >= sizeof phase || eval_recv_all(fd, phase, n) != 0)
				return -1;
			phase[n] = '\0';
			if (progress != NULL)
				progress(ctx, phase);
			continue;
		}
		if (type != 'R') {
			if (skip(fd, n) != 0)
				return -1;
			continue;
		}
		unsigned char b4[4];
		char *msg, *json;
		if (n < 12 || eval_recv_all(fd, b4, 4) != 0)
			return -1;
		int32_t rc = (int32_t)wire_get_u32(b4);
		if (eval_recv_all(fd, b4, 4) != 0 || wire_get_u32(b4) > n - 12 || (msg = read_str(fd, wire_get_u32(b4))) == NULL)
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

/* One run in an evaluation process.  *spawned: the process started (it
 * answered, or died of something other than a failed start). */
static int run_process(struct local *l, const struct eval_job *job, void (*progress)(void *, const char *),
		       void *ctx, int *spawned, json_t **result, char *err, size_t errlen)
{
	*spawned = 0;
	int sv[2];
	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) != 0) {
		snprintf(err, errlen, "socketpair: %s", strerror(errno));
		return -1;
	}
	char **envp = child_env(l);
	if (envp == NULL) {
		snprintf(err, errlen, "out of memory");
		close(sv[0]);
		close(sv[1]);
		return -1;
	}
	pid_t parent = getpid();
	pid_t pid = fork();
	if (pid < 0) {
		snprintf(err, errlen, "fork: %s", strerror(errno));
		free(envp);
		close(sv[0]);
		close(sv[1]);
		return -1;
	}
	if (pid == 0)
		exec_evaluator(sv[1], parent, envp);
	free(envp);
	close(sv[1]);
	int rc = -1, got = -1, answered = 0;
	if (send_request(sv[0], job) == 0)
		got = read_replies(l, sv[0], pid, progress, ctx, &rc, result, err, errlen, &answered);
	close(sv[0]);
	int st = 0;
	while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
		;
	if (got == 0) {
		*spawned = 1;
		if (rc != 0 && is_cancelled(l))
			snprintf(err, errlen, "cancelled");
		return rc;
	}
	/* No result.  It exited without a word: the exec failed (127), or
	 * /proc/self/exe is not this program (a loader or a wrapper ran it).
	 * Killed, or gone after it answered: the evaluation's own failure. */
	if (WIFEXITED(st) && !answered) {
		snprintf(err, errlen, "cannot start the evaluation process (/proc/self/exe %s, exit status %d)",
			 EVALUATOR_ARG, WEXITSTATUS(st));
		return -1;
	}
	*spawned = 1;
	if (is_cancelled(l))
		snprintf(err, errlen, "cancelled");
	else if (WIFSIGNALED(st))
		snprintf(err, errlen, "the evaluation process was killed by signal %d (%s)", WTERMSIG(st),
			 strsignal(WTERMSIG(st)));
	else
		snprintf(err, errlen, "the evaluation process exited with status %d without a result",
			 WIFEXITED(st) ? WEXITSTATUS(st) : -1);
	return -1;
}

static int local_run(struct evaluator *ev, const struct eval_job *job, void (*progress)(void *, const char *),
		     void *ctx, json_t **result, char *err, size_t errlen)
{
	struct local *l = (struct local *)ev;
	*result = NULL;
	if (is_cancelled(l)) {
		snprintf(err, errlen, "cancelled");
		return -1;
	}
	int spawned = 0;
	int rc = run_process(l, job, progress, ctx, &spawned, result, err, errlen);
	if (spawned || rc == 0)
		return rc;
	if (!l->fallback) {
		size_t el = strlen(err);
		snprintf(err + el, errlen - el, "; not evaluated inside the daemon instead (--in-process-fallback "
			 "allows that)");
		return -1;
	}
	/* the operator's explicit choice: here, and result.json says so */
	fprintf(stderr, "passfs: %s; evaluating inside the daemon instead (--in-process-fallback)\n", err);
	err[0] = '\0';
	struct eval_hooks hooks = {.progress = progress, .ctx = ctx, .cancel = &l->cancelled};
	rc = eval_run(job, &hooks, result, err, errlen);
	if (rc == 0 && *result != NULL)
		json_object_set_new(*result, "evaluated_in",
				    json_string("the daemon's own process (--in-process-fallback): the pass's workers "
						"could read its memory"));
	return rc;
}

static void local_cancel(struct evaluator *ev)
{
	__atomic_store_n(&((struct local *)ev)->cancelled, 1, __ATOMIC_RELAXED);
}

static void local_destroy(struct evaluator *ev)
{
	free(ev);
}

static const struct evaluator_ops local_ops = {
	.name = "local", .run = local_run, .cancel = local_cancel, .destroy = local_destroy,
};

struct evaluator *evaluator_local(int in_process_fallback)
{
	return evaluator_local_env(in_process_fallback, NULL);
}

struct evaluator *evaluator_local_env(int in_process_fallback, const char *setting)
{
	if (setting && (strchr(setting, '=') == NULL || strlen(setting) >= sizeof ((struct local *)0)->setting))
		return NULL;
	struct local *l = calloc(1, sizeof *l);
	if (l == NULL)
		return NULL;
	l->base.ops = &local_ops;
	l->fallback = in_process_fallback;
	if (setting)
		snprintf(l->setting, sizeof l->setting, "%s", setting);
	return &l->base;
}
