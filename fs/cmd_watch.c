/* cmd_watch.c - `passfs watch`: the task tree as plain files (fs/watch.h). */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "broker.h"
#include "cmd.h"
#include "evalopt.h"
#include "watch.h"

static void usage(FILE *f)
{
	fprintf(f, "usage: passfs watch [--tasks DIR] [--state DIR] [--parallel N] [--quiet] [--broker URL]");
	evalopt_synopsis(EVALOPT_DAEMON, f, 90, 19);
	fprintf(f,
		" DIR\n\n"
		"Writes the task tree into DIR as plain files (created when missing) and watches\n"
		"it with inotify, for containers without /dev/fuse: saving DIR/<task>/pass.c\n"
		"(close after writing, or a rename onto it) evaluates it, and result.json, es_t,\n"
		"status and summary.json are replaced whole when the evaluation moves on;\n"
		"saving DIR/<task>/check.c checks it (every variant, nothing timed) into\n"
		"check.json.  DIR/docs holds the manuals.\n"
		"Nothing is read-only and reads never wait: poll status.  The state directory is\n"
		"the mount's, so both can be used in turn.  Runs until SIGINT or SIGTERM.\n\n"
		"  --tasks DIR       tasks directory (default: $PASSFS_TASKS, else the bundled tasks)\n"
		"  --state DIR       state directory (default: $XDG_STATE_HOME/passfs, else\n"
		"                    ~/.local/state/passfs)\n"
		"  --parallel N      evaluations at once across tasks, each in a process of its\n"
		"                    own (default 1)\n"
		"  --quiet           no banner, no line per save\n"
		"  --broker URL      evaluate on the workers of this Redis broker (default:\n"
		"                    $" BROKER_ENV " when set; docs/broker.md)\n"
		"  --in-process-fallback  when an evaluation process cannot start (/proc/self/exe\n"
		"                    is not passfs), evaluate inside the watcher: its memory is\n"
		"                    then the pass's to read (result.json says so); default: fail\n"
		"  --no-warm         do not count eager's modeled time of every task ahead, in the\n"
		"                    background while nothing is evaluated (default: count it;\n"
		"                    PASSFS_WARM=0 too; never with --broker or the cuda backend)\n");
	evalopt_usage(EVALOPT_DAEMON, f);
	fprintf(f, "\ndocs/watch.md has the details.\n");
}

int cmd_watch(int argc, char **argv)
{
	struct option opts[32] = {
		{"tasks", required_argument, NULL, 't'},   {"state", required_argument, NULL, 's'},
		{"parallel", required_argument, NULL, 'P'}, {"quiet", no_argument, NULL, 'q'},
		{"help", no_argument, NULL, 'h'},          {"in-process-fallback", no_argument, NULL, 'I'},
		{"broker", required_argument, NULL, 'b'},  {"no-warm", no_argument, NULL, 0x3000}};
	int nopts = 8;
	evalopt_longopts(EVALOPT_DAEMON, opts, &nopts);
	opts[nopts] = (struct option){NULL, 0, NULL, 0};
	struct watch_opts wo = {0};
	wo.svc.eval.quiet = 1;
	int c;
	char *end, *broker = NULL;
	int no_warm = 0;
	optind = 1;
	while ((c = getopt_long(argc, argv, "hq", opts, NULL)) != -1) {
		switch (c) {
		case 't': wo.svc.tasks_dir = optarg; break;
		case 'I': wo.svc.in_process_fallback = 1; break;
		case 's': wo.svc.state_dir = optarg; break;
		case 'P': {
			long v = strtol(optarg, &end, 10);
			if (*end || !*optarg || v < 1 || v > 100000) {
				fprintf(stderr, "passfs watch: --parallel needs a whole number from 1 to 100000, not '%s'\n",
					optarg);
				return 2;
			}
			wo.svc.parallel = (int)v;
			break;
		}
		case 'q': wo.quiet = 1; break;
		case 'b': broker = optarg; break;
		case 0x3000: no_warm = 1; break;
		case 'h': usage(stdout); return 0;
		default: {
			char how[64];
			if (!evalopt_is_key(c)) {
				usage(stderr);
				return 2;
			}
			if (evalopt_apply(c, optarg, &wo.svc.eval, evalopt_how(c, how, sizeof(how)), "passfs watch"))
				return 2;
		}
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
	wo.svc.warm = !no_warm;
	if (broker_evaluator_open(broker, NULL, &wo.svc.evaluator, err, sizeof(err)) != 0) {
		fprintf(stderr, "passfs watch: %s\n", err);
		return 1;
	}
	int wrc = watch_run(&wo, err, sizeof(err));
	if (wo.svc.evaluator)
		wo.svc.evaluator->ops->destroy(wo.svc.evaluator);
	if (wrc != 0) {
		fprintf(stderr, "passfs watch: %s\n", err);
		return 1;
	}
	return 0;
}
