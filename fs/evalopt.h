/* evalopt.h - the evaluation options, one table for every command that
 * evaluates: `passfs eval`, `passfs mount` (also as `-o key=value`, so an
 * /etc/fstab line can carry them), `passfs watch` (and the coming worker).
 * One row per option: its long name, its -o key, which commands take it, its
 * help line, and one parser, so a limit or a default cannot drift between
 * commands. */
#ifndef PASSFS_EVALOPT_H
#define PASSFS_EVALOPT_H

#include <getopt.h>
#include <stdio.h>

#include "eval.h"

/* Which commands take a row. */
#define EVALOPT_EVAL 1
#define EVALOPT_DAEMON 2        /* mount and watch */

/* getopt keys of the rows: EVALOPT_KEY0 + the row's index. */
#define EVALOPT_KEY0 1000

/* Appends the long options of the rows cmds takes to opts[*n] (room for
 * every row is the caller's); no terminator. */
void evalopt_longopts(int cmds, struct option *opts, int *n);

/* Whether a getopt key is one of this table's. */
int evalopt_is_key(int key);

/* "--trials" for a getopt key of this table (into buf), for messages. */
const char *evalopt_how(int key, char *buf, size_t len);

/* The row of -o key name[0, len) that cmds takes: its getopt key, or -1.
 * Only options with an argument have -o keys of the form key=value; flags
 * (cold) are a bare key. */
int evalopt_okey(int cmds, const char *name, size_t len);

/* Applies the option of getopt key `key` with argument val (NULL for a
 * flag) to *eo.  how names it in messages ("--trials", "-o trials"), cmd is
 * the command ("passfs mount").  Returns 0, or 2 after printing one line on
 * stderr: "passfs mount: --trials needs a whole number >= 1, not 'x'". */
int evalopt_apply(int key, const char *val, struct eval_opts *eo, const char *how, const char *cmd);

/* Prints the help lines of the rows cmds takes, as usage texts do. */
void evalopt_usage(int cmds, FILE *f);

/* " [--backend auto|cpu|cuda] [--trials N] ..." for a usage line that is at
 * column col, wrapped before column 90 onto lines indented by indent. */
void evalopt_synopsis(int cmds, FILE *f, int col, int indent);

#endif
