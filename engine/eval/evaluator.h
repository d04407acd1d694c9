/* evaluator.h - one evaluation in a process of its own.
 *
 * The daemons (`passfs mount`, `passfs watch`) hold every task's current
 * pass.c, results and history in memory.  A pass worker is a fork of the
 * process that evaluates, so an evaluation run inside the daemon would hand
 * the pass a copy of all of that: other tasks' passes and results, readable
 * from the pass's host code.  evaluator_run() instead starts this program
 * afresh (fork + exec of /proc/self/exe with EVALUATOR_ARG), sends it the
 * one task's graph text, the pass and the options over a socket, and reads
 * back the progress phases and the result document.  Its memory holds one
 * task and one pass; its workers inherit only that.
 *
 * Every program that links the engine and may run a service calls
 * evaluator_main_if() first thing in main(). */
#ifndef PASSFS_EVALUATOR_H
#define PASSFS_EVALUATOR_H

#include <stddef.h>
#include <jansson.h>

#include "eval.h"

#define EVALUATOR_ARG "--passfs-evaluator"

/* argv[1] == EVALUATOR_ARG: runs the evaluation described on descriptor 3
 * and returns the process's exit status; otherwise -1 (not an evaluator). */
int evaluator_main_if(int argc, char **argv);

/* eval_run(job) in a fresh process.  graph_text/graph_len/graph_label: the
 * task's graph.json bytes as job->task was parsed from, and its path.
 * job->opts.progress is called on this thread; *job->opts.cancel stops the
 * evaluation (the process gets SIGTERM, kills its workers, and no result
 * comes back).  Same return as eval_run.  When the process cannot be
 * started at all (*spawned == 0) the caller may evaluate in-process. */
int evaluator_run(const struct eval_job *job, const char *graph_text, size_t graph_len,
		  const char *graph_label, int *spawned, json_t **result, char *err, size_t errlen);

#endif
