/* cmd_eval.c - `passfs eval`: evaluate one pass without a mount. */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "broker.h"
#include "result_fields.h"
#include "cmd.h"
#include "evalopt.h"
#include "file.h"
#include "eval.h"
#include "graph.h"
#include "pass.h"
#include "task.h"

/* Ctrl-C or SIGTERM: the evaluation stops at its next wait, kills its
 * workers and removes its compile directory (eval_hooks.cancel); a second
 * signal ends the process at once. */
static int eval_cancel;
static volatile sig_atomic_t eval_signal;
static struct evaluator *eval_remote;   /* --broker: its cancel is an atomic store */

/* The progress line on a terminal (eval_hooks.status): rewritten in place,
 * cut to the terminal's width; NULL clears it. */
static void tty_status(void *ctx, const char *line)
{
	(void)ctx;
	struct winsize ws;
	int cols = ioctl(2, TIOCGWINSZ, &ws) == 0 && ws.ws_col > 20 ? ws.ws_col : 80;
	if (line == NULL)
		fprintf(stderr, "\r\033[K");
	else
		fprintf(stderr, "\r\033[Kpassfs eval: %.*s", cols - 14, line);
	fflush(stderr);
}

static void on_stop_signal(int sig)
{
	if (eval_signal) {
		signal(sig, SIG_DFL);
		raise(sig);
		return;
	}
	eval_signal = sig;
	__atomic_store_n(&eval_cancel, 1, __ATOMIC_RELAXED);
	if (eval_remote)
		eval_remote->ops->cancel(eval_remote);
}

static void usage(FILE *f)
{
	fprintf(f, "usage: passfs eval --task ID [--tasks DIR] [--pass FILE] [--json] [--profile]");
	evalopt_synopsis(EVALOPT_EVAL, f, 67, 18);
	fprintf(f,
		"\n\n"
		"Compiles FILE (default: the task's template pass.c), runs it against the eager\n"
		"baseline on every variant of task ID (outputs checked on the public and a secret\n"
		"input set, timed, integrity rules enforced) and prints a summary, or with --json\n"
		"the result.json document (docs/result-format.md).  Exit status: 0 when the\n"
		"evaluation ran (whatever the verdict), 1 when it could not run, 2 for bad usage,\n"
		"128+N when signal N stopped it (Ctrl-C: 130; its workers and compile directory go).\n"
		"On the cpu backend the score's speedup is the modeled H200 one (each side's\n"
		"launches, the bytes they touched, their threads' work: docs/scoring.md); the\n"
		"measured cpu speedup is beside it, and PASSFS_CPU_SPEEDUP=measured scores it.\n"
		"While it runs, stderr shows where it is: on a terminal one line, rewritten in\n"
		"place (the phase and the variant, K of N) and cleared before the summary;\n"
		"elsewhere a line per variant; with --json nothing.\n\n"
		"  --tasks DIR       tasks directory (default: $PASSFS_TASKS, else the bundled tasks)\n"
		"  --pass FILE       the pass source; '-' reads standard input (over 1 MiB it is\n"
		"                    judged compile_error; past 16 MiB it is not read)\n"
		"  --json            print result.json instead of the summary\n"
		"  --broker URL      evaluate on a worker of this Redis broker (redis://[user:pass@]\n"
		"                    host:port[/db]; default: $" BROKER_ENV " when set; docs/broker.md)\n"
		"  --profile         also print where the evaluation's time went, phase by\n"
		"                    phase (result.json's profile; to stderr with --json)\n");
	evalopt_usage(EVALOPT_EVAL, f);
}

/* The pass file (or stdin for "-"), whole: a pass over PASS_MAX_BYTES still
 * reaches the evaluation, which judges it (compile_error naming its real
 * size); past READ_PASS_MAX it is not read at all. */
#define READ_PASS_MAX (16u << 20)

static char *read_all(const char *path, size_t *len, char *err, size_t errlen)
{
	int stdin_ = strcmp(path, "-") == 0;
	int fd = stdin_ ? 0 : open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		snprintf(err, errlen, "%s: %s", path, strerror(errno));
		return NULL;
	}
	int e = 0;
	char *buf = base_read_fd(fd, READ_PASS_MAX, len, &e);
	if (!stdin_)
		close(fd);
	if (buf == NULL) {
		if (e == EFBIG)
			snprintf(err, errlen, "%s: over %u MiB, not read (a pass may have at most %u bytes)", path,
				 READ_PASS_MAX >> 20, PASS_MAX_BYTES);
		else
			snprintf(err, errlen, "%s: %s", stdin_ ? "standard input" : path, strerror(e));
	}
	return buf;
}

static void print_summary(json_t *r)
{
	printf("task %s   backend %s", json_string_value(json_object_get(r, "task")),
	       json_string_value(json_object_get(r, "device")));
	const char *worker = json_string_value(json_object_get(r, "worker"));
	printf(worker ? "   worker %s\n" : "\n", worker);
	printf("verdict %s   score %.6f\n", json_string_value(json_object_get(r, "verdict")),
	       json_number_value(json_object_get(r, "score")));
	const char *audit = json_string_value(json_object_get(r, "sandbox_audit"));
	if (audit != NULL)
		printf("WARNING: the sandbox was in audit mode (log: %s): the pass ran unconfined; this score "
		       "proves nothing\n", audit);
	const char *msg = json_string_value(json_object_get(r, "message"));
	if (msg && *msg)
		printf("%s\n", msg);
	printf("\n%-14s %-9s %-15s %9s %10s %10s %6s\n", "VARIANT", "DTYPE", "VERDICT", "SPEEDUP", "EAGER ms",
	       "PASS ms", "MIN_T");
	size_t i;
	json_t *v;
	json_array_foreach(json_object_get(r, "variants"), i, v) {
		json_t *mt = json_object_get(v, "min_t");
		char mts[16] = "-";
		json_t *ct = json_object_get(v, "close_from_t");
		if (json_is_integer(mt))
			snprintf(mts, sizeof(mts), "%lld", (long long)json_integer_value(mt));
		else if (json_is_integer(ct))   /* close, but at a level that does not count */
			snprintf(mts, sizeof(mts), "(%lld)", (long long)json_integer_value(ct));
		if (json_is_number(json_object_get(v, "speedup")))
			printf("%-14s %-9s %-15s %9.3f %10.3f %10.3f %6s\n", json_string_value(json_object_get(v, "name")),
			       json_string_value(json_object_get(v, "dtype")),
			       json_string_value(json_object_get(v, "verdict")),
			       json_number_value(json_object_get(v, "speedup")),
			       json_number_value(json_object_get(v, "eager_ms")),
			       json_number_value(json_object_get(v, "pass_ms")), mts);
		else
			printf("%-14s %-9s %-15s %9s %10s %10s %6s\n", json_string_value(json_object_get(v, "name")),
			       json_string_value(json_object_get(v, "dtype")),
			       json_string_value(json_object_get(v, "verdict")), "-", "-", "-", mts);
	}
	/* cpu: the modeled H200 time (what the score's speedup is, unless
	 * PASSFS_CPU_SPEEDUP=measured) beside the measured cpu speedup */
	if (json_is_number(json_object_get(r, "modeled_speedup"))) {
		int scored = 0;
		printf("\n%-14s %16s %16s %9s %9s %9s %9s\n", "VARIANT", "EAGER H200 ms*", "PASS H200 ms*", "SPEEDUP*",
		       "CPU x", "EAGER K", "PASS K");
		json_array_foreach(json_object_get(r, "variants"), i, v) {
			json_t *m = json_object_get(v, "modeled_h200_ms"), *tr = json_object_get(v, "traffic");
			if (!json_is_object(m) || !json_is_object(tr))
				continue;
			json_t *ms = json_object_get(v, "measured_speedup");
			scored |= json_is_number(ms);
			double cpu = json_is_number(ms) ? json_number_value(ms) : json_number_value(json_object_get(v, "speedup"));
			printf("%-14s %16.4f %16.4f %9.3f %9.3f %9lld %9lld\n", json_string_value(json_object_get(v, "name")),
			       json_number_value(json_object_get(m, "eager")), json_number_value(json_object_get(m, "pass")),
			       json_number_value(json_object_get(v, "modeled_speedup")), cpu,
			       (long long)json_integer_value(json_object_get(json_object_get(tr, "eager"), "launches")),
			       (long long)json_integer_value(json_object_get(json_object_get(tr, "pass"), "launches")));
		}
		printf("* modeled H200 time: per launch 3 us + the largest of its bytes at 4.3 TB/s, its slowest "
		       "threads' work and its threads' work over a GPU's (docs/backends.md); geometric mean %.3f; "
		       "%s\n",
		       json_number_value(json_object_get(r, "modeled_speedup")),
		       scored ? "the score's SPEEDUP is the modeled one; CPU x is the measured cpu speedup"
			      : "the score is the measured cpu speedup (PASSFS_CPU_SPEEDUP=measured)");
	}
	/* cuda: what the GPU itself spent (CUPTI), and the pass's kernels */
	int gpu = 0;
	json_array_foreach(json_object_get(r, "variants"), i, v) gpu |= json_is_number(json_object_get(v, "pass_gpu_ms"));
	if (gpu) {
		printf("\n%-14s %12s %12s %9s %9s\n", "VARIANT", "EAGER GPU ms", "PASS GPU ms", "EAGER K", "PASS K");
		json_array_foreach(json_object_get(r, "variants"), i, v) {
			if (!json_is_number(json_object_get(v, "pass_gpu_ms")))
				continue;
			printf("%-14s %12.4f %12.4f %9lld %9lld\n", json_string_value(json_object_get(v, "name")),
			       json_number_value(json_object_get(v, "eager_gpu_ms")),
			       json_number_value(json_object_get(v, "pass_gpu_ms")),
			       (long long)json_integer_value(json_object_get(v, "eager_kernels")),
			       (long long)json_integer_value(json_object_get(v, "pass_kernels")));
		}
	}
	json_t *ks = json_object_get(r, "kernels");
	if (json_array_size(ks) > 0) {
		printf("\n%-40s %5s %8s %8s\n", "KERNEL", "REGS", "SMEM B", "LOCAL B");
		json_array_foreach(ks, i, v) printf("%-40.40s %5lld %8lld %8lld\n", json_string_value(json_object_get(v, "name")),
						    (long long)json_integer_value(json_object_get(v, "registers")),
						    (long long)json_integer_value(json_object_get(v, "shared_bytes")),
						    (long long)json_integer_value(json_object_get(v, "local_bytes")));
	}
	const char *log = json_string_value(json_object_get(json_object_get(r, "compile"), "log_tail"));
	if (log && *log)
		printf("\ncompile log (tail):\n%s%s", log, log[strlen(log) - 1] == '\n' ? "" : "\n");
}

/* result.json's "profile": ms per phase, largest first, with its share. */
static void print_profile(json_t *res, FILE *f)
{
	json_t *prof = json_object_get(res, "profile");
	double total = json_number_value(json_object_get(res, "elapsed_ms"));
	const char *key;
	json_t *v;
	const char *names[32];
	double ms[32];
	int n = 0;
	json_object_foreach(prof, key, v) {
		if (n < 32) {
			names[n] = key;
			ms[n++] = json_number_value(v);
		}
	}
	for (int i = 1; i < n; i++)
		for (int j = i; j > 0 && ms[j] > ms[j - 1]; j--) {
			double m = ms[j];
			const char *k = names[j];
			ms[j] = ms[j - 1];
			names[j] = names[j - 1];
			ms[j - 1] = m;
			names[j - 1] = k;
		}
	fprintf(f, "\nprofile (wall ms of the evaluating process, %.1f in all):\n", total);
	for (int i = 0; i < n; i++)
		fprintf(f, "  %-16s %10.1f  %5.1f%%\n", names[i], ms[i], total > 0 ? 100.0 * ms[i] / total : 0.0);
}

int cmd_eval(int argc, char **argv)
{
	struct option opts[32] = {
		{"task", required_argument, NULL, 'k'},   {"tasks", required_argument, NULL, 't'},
		{"pass", required_argument, NULL, 'p'},   {"json", no_argument, NULL, 'j'},
		{"help", no_argument, NULL, 'h'},         {"broker", required_argument, NULL, 'b'},
		{"profile", no_argument, NULL, 'P'}};
	int nopts = 7;
	evalopt_longopts(EVALOPT_EVAL, opts, &nopts);
	opts[nopts] = (struct option){NULL, 0, NULL, 0};
	const char *dir = NULL, *id = NULL, *pass = NULL;
	char *broker = NULL;
	struct eval_opts eo = {.backend = "auto"};
	int as_json = 0, profile = 0, c;
	optind = 1;
	while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
		switch (c) {
		case 'k': id = optarg; break;
		case 't': dir = optarg; break;
		case 'p': pass = optarg; break;
		case 'j': as_json = 1; break;
		case 'b': broker = optarg; break;
		case 'P': profile = 1; break;
		case 'h': usage(stdout); return 0;
		default:
			if (!evalopt_is_key(c)) {
				usage(stderr);
				return 2;
			}
			char how[64];
			if (evalopt_apply(c, optarg, &eo, evalopt_how(c, how, sizeof(how)), "passfs eval"))
				return 2;
		}
	}
	if (optind < argc) {
		fprintf(stderr, "passfs eval: unexpected argument '%s'\n", argv[optind]);
		return 2;
	}
	if (id == NULL) {
		fprintf(stderr, "passfs eval: --task ID is required ('passfs tasks' lists them)\n");
		return 2;
	}
	if (dir == NULL)
		dir = cmd_default_tasks_dir();
	char err[1024];
	struct graph_task *t;
	char *gtext = NULL, *gpath = NULL;
	size_t glen = 0;
	if (task_load_text(dir, id, &t, &gtext, &glen, &gpath, err, sizeof(err))) {
		fprintf(stderr, "passfs eval: %s\n", err);
		return 1;
	}
	size_t len = 0;
	char *src = pass ? read_all(pass, &len, err, sizeof(err)) : pass_template(t);
	if (src == NULL) {
		fprintf(stderr, "passfs eval: %s\n", pass ? err : "out of memory");
		free(gtext);
		free(gpath);
		graph_task_free(t);
		return 1;
	}
	if (!pass)
		len = strlen(src);
	if (broker_evaluator_open(broker, NULL, &eval_remote, err, sizeof err) != 0) {
		fprintf(stderr, "passfs eval: %s\n", err);
		free(src);
		free(gtext);
		free(gpath);
		graph_task_free(t);
		return 1;
	}
	/* On a terminal one line shows where the evaluation is (phase and
	 * variant), rewritten in place and cleared at the end; elsewhere (a
	 * log, a pipe) a line per variant; with --json nothing. */
	int tty_line = !as_json && isatty(2);
	eo.quiet = as_json || tty_line;
	struct eval_job job = {.graph_text = gtext, .graph_len = glen, .graph_label = gpath,
			       .pass_label = pass && strcmp(pass, "-") ? pass : "pass.c",
			       .pass_src = src, .pass_len = len, .opts = eo};
	struct eval_hooks hooks = {.cancel = &eval_cancel, .status = tty_line ? tty_status : NULL};
	json_t *res;
	struct sigaction sa, old_int, old_term;
	memset(&sa, 0, sizeof sa);
	sa.sa_handler = on_stop_signal;         /* no SA_RESTART: waits see EINTR */
	sigemptyset(&sa.sa_mask);
	/* (a signal ignored at start, as for a background job of a script,
	 * stays ignored) */
	sigaction(SIGINT, NULL, &old_int);
	sigaction(SIGTERM, NULL, &old_term);
	if (old_int.sa_handler != SIG_IGN)
		sigaction(SIGINT, &sa, NULL);
	if (old_term.sa_handler != SIG_IGN)
		sigaction(SIGTERM, &sa, NULL);
	int rc = eval_remote ? eval_remote->ops->run(eval_remote, &job, NULL, NULL, &res, err, sizeof(err))
			     : eval_run(&job, &hooks, &res, err, sizeof(err));
	if (tty_line)
		tty_status(NULL, NULL);         /* the line cleared */
	if (rc == 0)
		result_fields_enforce(res, eval_remote ? "the broker's evaluation" : "the evaluation");
	struct evaluator *remote = eval_remote;
	eval_remote = NULL;
	if (remote)
		remote->ops->destroy(remote);
	sigaction(SIGINT, &old_int, NULL);
	sigaction(SIGTERM, &old_term, NULL);
	if (eval_signal) {
		if (rc == 0)
			json_decref(res);
		fprintf(stderr, "passfs eval: stopped by %s; nothing was scored\n", strsignal(eval_signal));
		free(src);
		free(gtext);
		free(gpath);
		graph_task_free(t);
		return 128 + eval_signal;
	}
	if (rc) {
		fprintf(stderr, "passfs eval: %s\n", err);
	} else {
		if (as_json) {
			json_dumpf(res, stdout, JSON_INDENT(2) | JSON_REAL_PRECISION(10));
			putchar('\n');
		} else {
			print_summary(res);
		}
		if (profile)
			print_profile(res, as_json ? stderr : stdout);
		json_decref(res);
	}
	free(src);
	free(gtext);
	free(gpath);
	graph_task_free(t);
	return rc ? 1 : 0;
}
