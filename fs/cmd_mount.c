/* cmd_mount.c - `passfs mount`: options, checks that give one clear line
 * instead of a libfuse message, daemonizing, and what to do next
 * (fs/mount.h serves the files). */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <unistd.h>

#include <fuse_opt.h>

#include "broker.h"
#include "cmd.h"
#include "evalopt.h"
#include "file.h"
#include "mount.h"
#include "state.h"

static void usage(FILE *f)
{
	fprintf(f, "usage: passfs mount [--tasks DIR] [--state DIR] [--wait-timeout S] [--parallel N]\n"
		   "                    [-f] [-d] [--broker URL] [-o OPT[,OPT...]]");
	evalopt_synopsis(EVALOPT_DAEMON, f, 90, 19);   /* the options start a line of their own */
	fprintf(f,
		" MOUNTPOINT\n\n"
		"Mounts the task tree at MOUNTPOINT (created when missing) with FUSE: one\n"
		"directory per task with README.md, graph.json, pass.c (yours to write with any\n"
		"tool), result.json, es_t, check.json and status, and docs/ with the manuals;\n"
		"MOUNTPOINT/README.md explains the loop.  Saving pass.c evaluates it; reading\n"
		"result.json or es_t waits for that evaluation (up to --wait-timeout).  Saving\n"
		"<task>/check.c checks it (every variant, nothing timed) into check.json.\n"
		"Without -f the daemon detaches once the mount is up; 'fusermount3 -u\n"
		"MOUNTPOINT' unmounts it and ends the daemon.\n"
		"No /dev/fuse (a container without it)?  'passfs watch DIR' serves the same tree\n"
		"as plain files.\n\n"
		"  --tasks DIR        tasks directory (default: $PASSFS_TASKS, else the bundled tasks)\n"
		"  --state DIR        state directory: pass.c, results, history (default:\n"
		"                     $XDG_STATE_HOME/passfs, else ~/.local/state/passfs)\n"
		"  --wait-timeout S   longest wait of a result.json/es_t read (default 20)\n"
		"  --parallel N       evaluations at once across tasks, each in a process of its\n"
		"                     own (default 1)\n"
		"  -f, --foreground   stay in the foreground, log on stderr (Ctrl-C unmounts)\n"
		"  -d, --debug        libfuse debug output (implies -f)\n"
		"  --in-process-fallback  when an evaluation process cannot start (/proc/self/exe\n"
		"                     is not passfs), evaluate inside the daemon: its memory, every\n"
		"                     task's pass.c and results, is then the pass's to read\n"
		"                     (result.json says so); default: that evaluation fails\n"
		"  --no-warm          do not count eager's modeled time of every task ahead, in\n"
		"                     the background while nothing is evaluated (default: count it,\n"
		"                     so that a task's first evaluation reads it; PASSFS_WARM=0\n"
		"                     too; never with --broker or the cuda backend); -o no_warm\n"
		"  --broker URL       evaluate on the workers of this Redis broker\n"
		"                     (redis://[user:pass@]host:port[/db]; default: $" BROKER_ENV "\n"
		"                     when set; docs/broker.md)\n"
		"  -o OPT             FUSE mount options after the default auto_unmount\n"
		"                     (e.g. -o allow_other); repeatable.  Every option here is\n"
		"                     also -o KEY=VALUE (tasks=, state=, wait_timeout=, parallel=,\n"
		"                     backend=, trials=, warmup=, timeout=, lock_timeout=) or -o cold,\n"
		"                     -o in_process_fallback, -o no_warm\n");
	evalopt_usage(EVALOPT_DAEMON, f);
	fprintf(f, "\ndocs/mount.md has the details: non-root use, containers, systemd.\n");
}

/* Makes path absolute without requiring it to exist (--state). */
static char *absolute(const char *path)
{
	if (path[0] == '/')
		return strdup(path);
	char cwd[PATH_MAX];
	if (getcwd(cwd, sizeof(cwd)) == NULL)
		return NULL;
	char *out = NULL;
	if (asprintf(&out, "%s/%s", cwd, path) < 0)
		return NULL;
	return out;
}

/* Undoes mountinfo's octal escapes (\040 for a space) in place. */
static void unescape(char *s)
{
	char *o = s;
	for (; *s; s++) {
		if (s[0] == '\\' && s[1] >= '0' && s[1] <= '3' && s[2] >= '0' && s[2] <= '7' && s[3] >= '0' &&
		    s[3] <= '7') {
			*o++ = (char)((s[1] - '0') * 64 + (s[2] - '0') * 8 + (s[3] - '0'));
			s += 3;
		} else {
			*o++ = *s;
		}
	}
	*o = 0;
}

/* The file system type mounted at the absolute path, or NULL when nothing is
 * mounted there (malloc'd). */
static char *mounted_type(const char *path)
{
	FILE *f = fopen("/proc/self/mountinfo", "r");
	if (f == NULL)
		return NULL;
	char *line = NULL, *type = NULL;
	size_t cap = 0;
	while (getline(&line, &cap, f) > 0) {
		/* id parent major:minor root MOUNTPOINT opts [optional...] - TYPE src superopts */
		char *save = NULL, *tok = strtok_r(line, " ", &save);
		for (int i = 0; tok && i < 4; i++)
			tok = strtok_r(NULL, " ", &save);
		if (tok == NULL)
			continue;
		unescape(tok);
		if (strcmp(tok, path) != 0)
			continue;
		char *t = NULL;
		while ((tok = strtok_r(NULL, " ", &save)) != NULL)
			if (strcmp(tok, "-") == 0) {
				t = strtok_r(NULL, " ", &save);
				break;
			}
		free(type);
		type = strdup(t ? t : "?");     /* the last mount there is the visible one */
	}
	free(line);
	fclose(f);
	return type;
}

/* Creates the mount point when missing and checks that it can be mounted on.
 * Returns the absolute path (malloc'd), or NULL after printing one line. */
static char *prepare_mountpoint(const char *mp)
{
	struct stat st;
	if (stat(mp, &st) != 0) {
		if (errno == ENOTCONN) {
			fprintf(stderr,
				"passfs mount: %s is a dead FUSE mount (its daemon is gone); "
				"run 'fusermount3 -u %s' and mount again\n", mp, mp);
			return NULL;
		}
		int e = errno == ENOENT ? -base_mkdirs(mp, 0755) : errno;
		if (e != 0) {
			fprintf(stderr, "passfs mount: %s: %s\n", mp, strerror(e));
			return NULL;
		}
		if (stat(mp, &st) != 0) {
			fprintf(stderr, "passfs mount: %s: %s\n", mp, strerror(errno));
			return NULL;
		}
	}
	if (!S_ISDIR(st.st_mode)) {
		fprintf(stderr, "passfs mount: %s is not a directory; give a directory to mount on\n", mp);
		return NULL;
	}
	char *abs = realpath(mp, NULL);
	if (abs == NULL) {
		fprintf(stderr, "passfs mount: %s: %s\n", mp, strerror(errno));
		return NULL;
	}
	char *type = mounted_type(abs);
	if (type) {
		fprintf(stderr,
			"passfs mount: %s is busy: a %s file system is already mounted there; "
			"unmount it first ('fusermount3 -u %s'), or choose another directory "
			"(or use 'passfs watch DIR')\n", mp, type, mp);
		free(type);
		free(abs);
		return NULL;
	}
	return abs;
}

static int check_dev_fuse(void)
{
	int fd = open("/dev/fuse", O_RDWR | O_CLOEXEC);
	if (fd >= 0) {
		close(fd);
		return 0;
	}
	if (errno == ENOENT || errno == ENXIO || errno == ENODEV)
		fprintf(stderr,
			"passfs mount: /dev/fuse is missing (no FUSE here; in docker/podman add "
			"'--device /dev/fuse --cap-add SYS_ADMIN'); 'passfs watch DIR' serves the same "
			"tree as plain files without FUSE\n");
	else
		fprintf(stderr,
			"passfs mount: cannot open /dev/fuse: %s (is fuse3 installed, and may this user "
			"use it?); 'passfs watch DIR' needs no FUSE\n", strerror(errno));
	return -1;
}

/* What to do next, for the person or agent who just mounted. */
static void next_steps(FILE *f, struct mnt *m, const char *shown, pid_t pid, const char *log)
{
	struct svc *s = mnt_svc(m);
	int n = svc_n_tasks(s);
	const char *id = svc_task(s, 0)->id;
	char cmd[6][PATH_MAX + 64];
	static const char *what[6] = {
		"one directory per task",
		"how it works: the loop, the files, the pass API",
		"one task: its graph, variants, inputs and outputs",
		"write the pass with any tool (sed, python, vim, cp)",
		"waits for the evaluation, then verdict and score",
		"unmount (the daemon exits)",
	};
	snprintf(cmd[0], sizeof(cmd[0]), "ls %s", shown);
	snprintf(cmd[1], sizeof(cmd[1]), "cat %s/README.md", shown);
	snprintf(cmd[2], sizeof(cmd[2]), "cat %s/%s/README.md", shown, id);
	snprintf(cmd[3], sizeof(cmd[3]), "$EDITOR %s/%s/pass.c", shown, id);
	snprintf(cmd[4], sizeof(cmd[4]), "cat %s/%s/result.json", shown, id);
	snprintf(cmd[5], sizeof(cmd[5]), "fusermount3 -u %s", shown);
	int w = 0;
	for (int i = 0; i < 6; i++)
		if ((int)strlen(cmd[i]) > w)
			w = (int)strlen(cmd[i]);
	fprintf(f, "passfs: %d task%s mounted at %s", n, n == 1 ? "" : "s", shown);
	if (pid > 0)
		fprintf(f, " (daemon pid %d, log %s)", (int)pid, log);
	fprintf(f, "\n\n");
	for (int i = 0; i < 6; i++)
		fprintf(f, "  %-*s   # %s\n", w, cmd[i], what[i]);
	fflush(f);
}

/* What the options set. */
struct settings {
	struct mnt_opts mo;
	const char *tasks, *state;
	int foreground;
	char *broker;                   /* --broker URL */
	int no_warm;                    /* --no-warm, -o no_warm */
	char *fuse_opts;                /* -o options for libfuse (malloc'd, comma-joined) */
};

/* passfs's own settings, as long options and as "-o key=value" (so an
 * /etc/fstab line can carry them through mount.fuse3). */
static const struct {
	const char *name;               /* the long option */
	const char *okey;               /* the -o key */
	int key;
} settings_keys[] = {
	{"tasks", "tasks", 't'}, {"state", "state", 's'}, {"wait-timeout", "wait_timeout", 'W'},
	{"parallel", "parallel", 'P'},
};

/* Applies one setting; how names it in messages.  0, or 2 after printing. */
static int apply(struct settings *st, int key, const char *val, const char *how)
{
	char *end;
	if (evalopt_is_key(key))
		return evalopt_apply(key, val, &st->mo.svc.eval, how, "passfs mount");
	switch (key) {
	case 't': st->tasks = val; return 0;
	case 's': st->state = val; return 0;
	case 'W': {
		double v = strtod(val, &end);
		if (*end || !*val || !(v > 0) || v > 86400) {
			fprintf(stderr, "passfs mount: %s needs a number of seconds above 0 and at most 86400, not '%s'\n",
				how, val);
			return 2;
		}
		st->mo.wait_timeout_s = v;
		return 0;
	}
	case 'P': {
		long v = strtol(val, &end, 10);
		if (*end || !*val || v < 1 || v > 100000) {
			fprintf(stderr, "passfs mount: %s needs a whole number from 1 to 100000, not '%s'\n", how, val);
			return 2;
		}
		st->mo.svc.parallel = (int)v;
		return 0;
	}
	}
	return 2;
}

/* One -o item, as fuse_opt_parse hands it over (escapes such as "\\,"
 * resolved): passfs's keys are applied, the rest is kept for libfuse. */
static int o_item(void *data, const char *arg, int key, struct fuse_args *outargs)
{
	struct settings *st = data;
	(void)outargs;
	if (key != FUSE_OPT_KEY_OPT)
		return 1;
	if (strcmp(arg, "in_process_fallback") == 0) {
		st->mo.svc.in_process_fallback = 1;
		return 0;
	}
	if (strcmp(arg, "no_warm") == 0) {
		st->no_warm = 1;
		return 0;
	}
	const char *eq = strchr(arg, '=');
	size_t klen = eq ? (size_t)(eq - arg) : strlen(arg);
	char how[64];
	snprintf(how, sizeof(how), "-o %.*s", (int)klen, arg);
	int ek = evalopt_okey(EVALOPT_DAEMON, arg, klen);
	if (ek >= 0)
		return apply(st, ek, eq ? eq + 1 : NULL, how) ? -1 : 0;
	for (size_t i = 0; eq && i < sizeof(settings_keys) / sizeof(settings_keys[0]); i++)
		if (klen == strlen(settings_keys[i].okey) && strncmp(arg, settings_keys[i].okey, klen) == 0) {
			/* the value must outlive the settings: keep a copy */
			char *val = strdup(eq + 1);
			if (val == NULL)
				return -1;
			int rc = apply(st, settings_keys[i].key, val, how);
			if (rc != 0 || (settings_keys[i].key != 't' && settings_keys[i].key != 's'))
				free(val);
			return rc ? -1 : 0;
		}
	return fuse_opt_add_opt_escaped(&st->fuse_opts, arg) == 0 ? 0 : -1;
}

/* Parses one -o argument with libfuse's own parser.  0 or 2. */
static int apply_o(struct settings *st, const char *arg)
{
	char *argv[] = {"passfs", "-o", (char *)arg, NULL};
	struct fuse_args a = FUSE_ARGS_INIT(3, argv);
	int rc = fuse_opt_parse(&a, st, NULL, o_item);
	fuse_opt_free_args(&a);
	return rc == 0 ? 0 : 2;
}

int cmd_mount(int argc, char **argv)
{
	struct option opts[sizeof(settings_keys) / sizeof(settings_keys[0]) + 32];
	int k = 0;
	for (; k < (int)(sizeof(settings_keys) / sizeof(settings_keys[0])); k++)
		opts[k] = (struct option){settings_keys[k].name, required_argument, NULL, settings_keys[k].key};
	opts[k++] = (struct option){"foreground", no_argument, NULL, 'f'};
	opts[k++] = (struct option){"debug", no_argument, NULL, 'd'};
	opts[k++] = (struct option){"help", no_argument, NULL, 'h'};
	opts[k++] = (struct option){"in-process-fallback", no_argument, NULL, 'I'};
	opts[k++] = (struct option){"broker", required_argument, NULL, 'b'};
	opts[k++] = (struct option){"no-warm", no_argument, NULL, 0x3000};
	evalopt_longopts(EVALOPT_DAEMON, opts, &k);
	opts[k] = (struct option){NULL, 0, NULL, 0};
	struct settings st;
	memset(&st, 0, sizeof(st));
	int c, rc;
	optind = 1;
	while ((c = getopt_long(argc, argv, "hfdo:", opts, NULL)) != -1) {
		switch (c) {
		case 'f': st.foreground = 1; break;
		case 'd': st.foreground = 1; st.mo.debug = 1; break;
		case 'I': st.mo.svc.in_process_fallback = 1; break;
		case 'b': st.broker = optarg; break;
		case 0x3000: st.no_warm = 1; break;
		case 'o':
			if ((rc = apply_o(&st, optarg)) != 0)
				return rc;
			break;
		case 'h': usage(stdout); return 0;
		case '?': usage(stderr); return 2;
		default: {
			char how[64] = "";
			for (size_t i = 0; i < sizeof(settings_keys) / sizeof(settings_keys[0]); i++)
				if (settings_keys[i].key == c)
					snprintf(how, sizeof(how), "--%s", settings_keys[i].name);
			if (evalopt_is_key(c))
				evalopt_how(c, how, sizeof(how));
			if ((rc = apply(&st, c, optarg, how)) != 0)
				return rc;
		}
		}
	}
	if (optind != argc - 1) {
		fprintf(stderr, optind >= argc ? "passfs mount: MOUNTPOINT is missing (try 'passfs mount ./mnt')\n"
					       : "passfs mount: one MOUNTPOINT only, got '%s' too\n",
			optind < argc ? argv[optind + 1] : "");
		return 2;
	}
	struct mnt_opts mo = st.mo;
	const char *tasks = st.tasks, *state = st.state;
	int foreground = st.foreground;
	char *fuse_opts = st.fuse_opts;
	const char *shown = argv[optind];

	if (tasks == NULL)
		tasks = cmd_default_tasks_dir();
	char *tasks_abs = realpath(tasks, NULL);
	if (tasks_abs == NULL) {
		fprintf(stderr, "passfs mount: tasks directory %s: %s\n", tasks, strerror(errno));
		return 1;
	}
	char defstate[PATH_MAX];
	char *state_abs = absolute(state ? state : svc_default_state_dir(defstate, sizeof(defstate)));
	if (check_dev_fuse() != 0) {
		free(tasks_abs);
		free(state_abs);
		return 1;
	}
	char *mp = prepare_mountpoint(shown);
	if (mp == NULL || state_abs == NULL) {
		free(tasks_abs);
		free(state_abs);
		free(mp);
		free(fuse_opts);
		return 1;
	}
	mo.mountpoint = mp;
	mo.svc.tasks_dir = tasks_abs;
	mo.svc.state_dir = state_abs;
	mo.svc.warm = !st.no_warm;
	mo.fuse_opts = fuse_opts;
	char log[PATH_MAX + 16];
	snprintf(log, sizeof(log), "%s/mount.log", state_abs);
	/* --broker: reached now, so that a broker that cannot be reached is
	 * one line here, not a log line after the mount */
	char berr[1024];
	if (broker_evaluator_open(st.broker, NULL, &mo.svc.evaluator, berr, sizeof(berr)) != 0) {
		fprintf(stderr, "passfs mount: %s\n", berr);
		free(tasks_abs);
		free(state_abs);
		free(mp);
		free(fuse_opts);
		return 1;
	}

	/* Daemonize before anything starts a thread (the service does): the
	 * child mounts and reports through a pipe, so mount errors still reach
	 * this terminal and the exit status. */
	int pfd[2] = {-1, -1};
	if (!foreground) {
		/* Close-on-exec: fusermount3 (auto_unmount) outlives the startup
		 * and must not hold the pipe open. */
		if (pipe2(pfd, O_CLOEXEC) != 0) {
			fprintf(stderr, "passfs mount: pipe: %s\n", strerror(errno));
			return 1;
		}
		fflush(NULL);
		pid_t pid = fork();
		if (pid < 0) {
			fprintf(stderr, "passfs mount: fork: %s\n", strerror(errno));
			return 1;
		}
		if (pid > 0) {
			close(pfd[1]);
			char buf[8192];
			size_t got = 0;
			ssize_t k;
			/* The report ends with a NUL (or the child died: EOF). */
			while (got < sizeof(buf) - 1 && (got == 0 || buf[got - 1] != 0) &&
			       (k = read(pfd[0], buf + got, sizeof(buf) - 1 - got)) != 0) {
				if (k < 0) {
					if (errno == EINTR)
						continue;
					break;
				}
				got += (size_t)k;
			}
			buf[got] = 0;
			close(pfd[0]);
			if (mo.svc.evaluator)   /* the daemon's now */
				mo.svc.evaluator->ops->destroy(mo.svc.evaluator);
			free(tasks_abs);
			free(state_abs);
			free(mp);
			free(fuse_opts);
			if (got > 0 && buf[0] == 'O') {
				fputs(buf + 1, stdout);
				return 0;
			}
			if (got > 0)
				fprintf(stderr, "passfs mount: %s\n", buf + 1);
			else
				fprintf(stderr, "passfs mount: the daemon died while mounting (see %s)\n", log);
			return 1;
		}
		close(pfd[0]);
		setsid();
		signal(SIGPIPE, SIG_IGN);
		/* Standard descriptors to /dev/null and the log now, before the
		 * service starts: an evaluation it fires at once (a pass.c saved
		 * without a result) runs in a child that inherits them, and must
		 * not hold the caller's terminal or its $(...) pipe open.  Mount
		 * errors still come back through the pipe. */
		base_mkdirs(state_abs, 0700);
		int nul = open("/dev/null", O_RDWR);
		int lfd = open(log, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
		if (nul >= 0) {
			dup2(nul, 0);
			dup2(nul, 1);
			close(nul);
		}
		if (lfd >= 0) {
			dup2(lfd, 2);
			close(lfd);
		}
	}

	char err[1024];
	struct mnt *m = NULL;
	if (mnt_open(&mo, &m, err, sizeof(err)) != 0) {
		if (foreground) {
			fprintf(stderr, "passfs mount: %s\n", err);
		} else {
			dprintf(pfd[1], "E%s%c", err, 0);
			close(pfd[1]);
		}
		if (mo.svc.evaluator)
			mo.svc.evaluator->ops->destroy(mo.svc.evaluator);
		free(tasks_abs);
		free(state_abs);
		free(mp);
		free(fuse_opts);
		return 1;
	}
	if (foreground) {
		next_steps(stderr, m, shown, 0, NULL);
		fprintf(stderr, "\nserving until unmounted, Ctrl-C or SIGTERM\n");
	} else {
		if (chdir("/") != 0) {
			/* stays where it is; the paths it uses are absolute */
		}
		char *msg = NULL;
		size_t mlen = 0;
		FILE *mf = open_memstream(&msg, &mlen);
		if (mf) {
			fputc('O', mf);
			next_steps(mf, m, shown, getpid(), log);
			fputc(0, mf);
			fclose(mf);
			if (write(pfd[1], msg, mlen) < 0) {
				/* the parent is gone; serve anyway */
			}
			free(msg);
		}
		close(pfd[1]);
		fprintf(stderr, "passfs: mounted at %s (pid %d)\n", mp, (int)getpid());
	}
	rc = mnt_run(m);
	mnt_close(m);
	if (mo.svc.evaluator)
		mo.svc.evaluator->ops->destroy(mo.svc.evaluator);
	if (!foreground)
		fprintf(stderr, "passfs: unmounted %s, exiting\n", mp);
	free(tasks_abs);
	free(state_abs);
	free(mp);
	free(fuse_opts);
	return rc == 0 ? 0 : 1;
}
