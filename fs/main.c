/* main.c - the passfs command: dispatches to one subcommand per table row. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd.h"
#include "datadir.h"
#include "evaluator.h"

static const struct {
	const char *name;
	int (*run)(int, char **);
	const char *summary;
} commands[] = {
	{"tasks", cmd_tasks, "list the tasks (id, ops, variants), or show one"},
	{"import", cmd_import, "convert GraphNet/PassNet samples into a task"},
	{"eval", cmd_eval, "compile, verify, benchmark and score a pass on a task"},
	{"es-t", cmd_es_t, "score per-variant records with ES_t"},
	{"eager", cmd_eager, "run a task's variants with the eager baseline, write the tensors"},
	{"mount", cmd_mount, "mount the task tree with FUSE: write pass.c, read result.json"},
	{"watch", cmd_watch, "the task tree as plain files in DIR, driven by inotify (no FUSE)"},
	{"history", cmd_history, "export every evaluated pass as JSON lines (history export)"},
	{"report", cmd_report, "the state directory's results as one HTML page (MOUNT/report.html too)"},
	{"doctor", cmd_doctor, "check what this machine can evaluate with, and what is missing"},
	{"ops", cmd_ops, "list the graph ops (graph.json's op names), one a line"},
	{"worker", cmd_worker, "evaluate jobs from a Redis broker (--broker URL; docs/broker.md)"},
	{"broker", cmd_broker, "the Redis broker's queue and workers (broker status)"},
};

static void usage(FILE *f)
{
	fprintf(f, "usage: passfs COMMAND [OPTIONS]\n\n"
		   "passfs turns a compiler-pass benchmark into files: one directory per task\n"
		   "(a fusible subgraph of a real model), a pass.c to write, and its score.\n\n"
		   "commands:\n");
	for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
		fprintf(f, "  %-8s %s\n", commands[i].name, commands[i].summary);
	fprintf(f, "\n'passfs COMMAND --help' describes a command.  passfs %s\n", PASSFS_VERSION);
}

const char *cmd_default_tasks_dir(void)
{
	const char *env = getenv("PASSFS_TASKS");
	if (env && *env)
		return env;
	return datadir_get(DATADIR_TASKS);
}

int main(int argc, char **argv)
{
	/* the daemons run each evaluation as a fresh process of this program */
	int ev = evaluator_main_if(argc, argv);
	if (ev >= 0)
		return ev;
	if (argc < 2) {
		usage(stderr);
		return 2;
	}
	if (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0 || strcmp(argv[1], "help") == 0) {
		usage(stdout);
		return 0;
	}
	if (strcmp(argv[1], "--version") == 0) {
		printf("passfs %s\n", PASSFS_VERSION);
		return 0;
	}
	for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
		if (strcmp(argv[1], commands[i].name) == 0)
			return commands[i].run(argc - 1, argv + 1);
	fprintf(stderr, "passfs: unknown command '%s' (try 'passfs --help')\n", argv[1]);
	return 2;
}
