/* cmd.h - the passfs subcommands.  Each takes the arguments after its own
 * name (argv[0] is the subcommand name), prints errors as one line on stderr
 * and returns the process exit status: 0 success, 1 failure, 2 bad usage or
 * bad input. */
#ifndef PASSFS_CMD_H
#define PASSFS_CMD_H

int cmd_tasks(int argc, char **argv);
int cmd_import(int argc, char **argv);
int cmd_es_t(int argc, char **argv);
int cmd_eager(int argc, char **argv);
int cmd_eval(int argc, char **argv);
int cmd_watch(int argc, char **argv);
int cmd_mount(int argc, char **argv);
int cmd_history(int argc, char **argv);
int cmd_report(int argc, char **argv);
int cmd_doctor(int argc, char **argv);
int cmd_ops(int argc, char **argv);
int cmd_worker(int argc, char **argv);
int cmd_broker(int argc, char **argv);

/* The default tasks directory: $PASSFS_TASKS, else the tasks/ of the source
 * tree this binary was built from, else the installed share/passfs/tasks. */
const char *cmd_default_tasks_dir(void);

#endif
