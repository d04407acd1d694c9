/* cmd_history.c - `passfs history export`: every evaluated pass as JSON lines
 * (docs/history.md), read from the state directory; no service needed. */
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "cmd.h"
#include "file.h"
#include "service.h"

static void usage(FILE *f)
{
	fprintf(f,
		"usage: passfs history export [--state DIR] [--task ID] --out FILE.jsonl\n\n"
		"Writes one JSON object per line for every evaluated pass kept in the state\n"
		"directory (the agent's trajectory): task, seq, time, pass_sha256, the pass\n"
		"source, verdict, score and per-variant verdict, speedup and min_t, in task and\n"
		"seq order.  '--out -' writes to standard output.  docs/history.md describes it.\n\n"
		"  --state DIR   state directory (default: $XDG_STATE_HOME/passfs, else\n"
		"                ~/.local/state/passfs)\n"
		"  --task ID     only this task\n"
		"  --out FILE    where to write (replaced whole when done)\n");
}

int cmd_history(int argc, char **argv)
{
	static const struct option opts[] = {
		{"state", required_argument, NULL, 's'}, {"task", required_argument, NULL, 'k'},
		{"out", required_argument, NULL, 'o'},   {"help", no_argument, NULL, 'h'},
		{NULL, 0, NULL, 0}};
	if (argc >= 2 && (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0)) {
		usage(stdout);
		return 0;
	}
	if (argc < 2 || strcmp(argv[1], "export") != 0) {
		fprintf(stderr, "passfs history: %s (try 'passfs history --help')\n",
			argc < 2 ? "missing subcommand 'export'" : "unknown subcommand; the one there is: export");
		return 2;
	}
	const char *state = NULL, *task = NULL, *out = NULL;
	char defdir[PATH_MAX];
	int c;
	optind = 1;
	argc--;
	argv++;
	while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
		switch (c) {
		case 's': state = optarg; break;
		case 'k': task = optarg; break;
		case 'o': out = optarg; break;
		case 'h': usage(stdout); return 0;
		default: usage(stderr); return 2;
		}
	}
	if (optind < argc) {
		fprintf(stderr, "passfs history export: unexpected argument '%s'\n", argv[optind]);
		return 2;
	}
	if (out == NULL) {
		fprintf(stderr, "passfs history export: --out FILE is required ('-' for standard output)\n");
		return 2;
	}
	if (state == NULL)
		state = svc_default_state_dir(defdir, sizeof(defdir));
	char err[1024] = "";
	struct base_atomic a;
	FILE *f = stdout;
	int to_stdout = strcmp(out, "-") == 0;
	if (!to_stdout) {
		/* A temporary file beside FILE, renamed at the end: an export that
		 * fails leaves no half file behind. */
		int rc = base_atomic_open(&a, out, "", 0666, 0);
		if (rc == -ENAMETOOLONG) {
			fprintf(stderr, "passfs history export: %s: name too long\n", out);
			return 1;
		}
		int dfd = rc == 0 ? dup(a.fd) : -1;
		f = dfd >= 0 ? fdopen(dfd, "w") : NULL;
		if (f == NULL) {
			fprintf(stderr, "passfs history export: %s: %s\n", out, strerror(rc ? -rc : errno));
			if (dfd >= 0)
				close(dfd);
			if (rc == 0)
				base_atomic_abort(&a);
			return 1;
		}
	}
	int n = svc_history_export(state, task, f, err, sizeof(err));
	if (!to_stdout) {
		if (fclose(f) != 0 && n >= 0) {
			snprintf(err, sizeof(err), "%s: %s", out, strerror(errno));
			n = -1;
		}
		int rc = n >= 0 ? base_atomic_commit(&a, 0) : 0;
		if (rc != 0) {
			snprintf(err, sizeof(err), "%s: %s", out, strerror(-rc));
			n = -1;
		}
		if (n < 0)
			base_atomic_abort(&a);
	} else if (fflush(stdout) != 0 && n >= 0) {
		snprintf(err, sizeof(err), "standard output: %s", strerror(errno));
		n = -1;
	}
	if (n < 0) {
		fprintf(stderr, "passfs history export: %s\n", err);
		return 1;
	}
	if (!to_stdout)
		fprintf(stderr, "passfs history export: %d evaluation%s written to %s\n", n, n == 1 ? "" : "s", out);
	return 0;
}
