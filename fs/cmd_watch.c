/* cmd_watch.c - `passfs watch`: the task tree as plain files (fs/watch.h). */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd.h"
#include "watch.h"

static void usage(FILE *f)
{
	fprintf(f,
		"usage: passfs watch [--tasks DIR] [--state DIR] [--backend auto|cpu|cuda]\n"
		"                    [--trials N] [--warmup N] [--timeout S] [--parallel N] [--cold] [--quiet] DIR\n\n"
		"Writes the task tree into DIR as plain files (created when missing) and watches\n"
		"it with inotify, for containers without /dev/fuse: saving DIR/<task>/pass.c\n"
		"(close after writing, or a rename onto it) evaluates it, and result.json, es_t,\n"
		"status and summary.json are replaced whole when the evaluation moves on.\n"
		"Nothing is read-only and reads never wait: poll status.  The state directory is\n"
		"the mount's, so both can be used in turn.  Runs until SIGINT or SIGTERM.\n\n"
		"  --tasks DIR       tasks directory (default: $PASSFS_TASKS, else the bundled tasks)\n"
		"  --state DIR       state directory (default: $XDG_STATE_HOME/passfs, else\n"
		"                    ~/.local/state/passfs)\n"
		"  --backend B       auto (default: cuda when a GPU exists), cpu or cuda\n"
		"  --trials N        timed calls per variant (default: 100 on cuda, 10 on cpu)\n"
		"  --warmup N        warm-up calls per variant (default: 25 on cuda, 2 on cpu)\n"
		"  --timeout S       wall-clock limit of one worker step in seconds (default 20;\n"
		"                    once a variant timed out, a tenth of it, at least 1 s)\n"
		"  --parallel N      evaluations at once across tasks, each in a process of its\n"
		"                    own (default 1)\n"
		"  --cold            flush the caches (GPU L2 / CPU) before every timed call\n"
		"  --quiet           no banner, no line per save\n"
		"\ndocs/watch.md has the details.\n");
}

int cmd_watch(int argc, char **argv)
{
	static const struct option opts[] = {
		{"tasks", required_argument, NULL, 't'},   {"state", required_argument, NULL, 's'},
		{"backend", required_argument, NULL, 'b'}, {"trials", required_argument, NULL, 'n'},
		{"warmup", required_argument, NULL, 'w'},  {"timeout", required_argument, NULL, 'T'},
		{"parallel", required_argument, NULL, 'P'}, {"quiet", no_argument, NULL, 'q'},
		{"cold", no_argument, NULL, 'C'},
		{"help", no_argument, NULL, 'h'},          {NULL, 0, NULL, 0}};
	struct watch_opts wo = {0};
	wo.svc.eval.backend = "auto";
	wo.svc.eval.quiet = 1;
	int c;
	char *end;
	optind = 1;
	while ((c = getopt_long(argc, argv, "hq", opts, NULL)) != -1) {
		switch (c) {
		case 't': wo.svc.tasks_dir = optarg; break;
		case 's': wo.svc.state_dir = optarg; break;
		case 'C': wo.svc.eval.cold = 1; break;
		case 'b':
			if (strcmp(optarg, "auto") && strcmp(optarg, "cpu") && strcmp(optarg, "cuda")) {
				fprintf(stderr, "passfs watch: --backend must be auto, cpu or cuda, not '%s'\n", optarg);
				return 2;
			}
			wo.svc.eval.backend = optarg;
			break;
		case 'w':
		case 'n':
		case 'P': {
			long v = strtol(optarg, &end, 10);
			if (*end || !*optarg || v < (c == 'w' ? 0 : 1) || v > 100000) {
				fprintf(stderr, "passfs watch: --%s needs a whole number%s, not '%s'\n",
					c == 'w' ? "warmup" : c == 'n' ? "trials" : "parallel", c == 'w' ? "" : " >= 1",
					optarg);
				return 2;
			}
			if (c == 'w')
				wo.svc.eval.warmup = v ? (int)v : -1;   /* -1: explicitly none */
			else if (c == 'n')
				wo.svc.eval.trials = (int)v;
			else
				wo.svc.parallel = (int)v;
			break;
		}
		case 'T':
			wo.svc.eval.variant_timeout_s = strtod(optarg, &end);
			if (*end || !(wo.svc.eval.variant_timeout_s > 0)) {
				fprintf(stderr, "passfs watch: --timeout needs a positive number of seconds\n");
				return 2;
			}
			break;
		case 'q': wo.quiet = 1; break;
		case 'h': usage(stdout); return 0;
		default: usage(stderr); return 2;
		}
	}
	if (optind != argc - 1) {
		if (optind >= argc)
			fprintf(stderr, "passfs watch: the directory to watch is missing (try 'passfs watch --help')\n");
		else
			fprintf(stderr, "passfs watch: unexpected argument '%s'\n", argv[optind + 1]);
		return 2;
	}
	wo.dir = argv[optind];
	if (wo.svc.tasks_dir == NULL)
		wo.svc.tasks_dir = cmd_default_tasks_dir();
	char err[1024] = "";
	if (watch_run(&wo, err, sizeof(err)) != 0) {
		fprintf(stderr, "passfs watch: %s\n", err);
		return 1;
	}
	return 0;
}
