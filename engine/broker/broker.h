/* broker.h - evaluations across machines through a Redis Streams broker
 * (docs/broker.md).
 *
 * Front ends (`passfs mount|watch|eval --broker URL`) run every evaluation
 * through broker_evaluator: the job goes into the stream of the backend it
 * asks for (passfs:jobs:cpu, passfs:jobs:cuda, passfs:jobs:auto), and a
 * worker (`passfs worker --broker URL`, broker_worker_run) on a machine with
 * a device takes it, evaluates it with the local evaluator (evaluator.h:
 * the same evaluation process, jail, sandbox and integrity rules) and
 * answers on the job's reply stream.  `passfs broker status` prints
 * broker_status.
 *
 * Built without hiredis (libhiredis-dev missing at build time), every entry
 * point fails with the message "built without hiredis". */
#ifndef PASSFS_BROKER_H
#define PASSFS_BROKER_H

#include <stddef.h>
#include <stdio.h>

#include "evaluator.h"

/* The environment variable read when no --broker flag is given: keeps a
 * password out of ps. */
#define BROKER_ENV "PASSFS_BROKER"

/* 1 when this passfs was built with hiredis. */
int broker_available(void);

/* redis://[user:pass@]host[:port][/db] (rediss:// is refused: no TLS in
 * this build, docs/broker.md).  0, or -1 with a message.  `shown` is the
 * URL without its credentials, for messages and logs. */
struct broker_url {
	char host[256];
	int port;
	char user[128];
	char pass[256];
	int db;
	char shown[320];
};
int broker_url_parse(const char *url, struct broker_url *u, char *err, size_t errlen);

/* The URL: flag when given, else $PASSFS_BROKER (then removed from this
 * process's environment, so evaluation processes never inherit it), else
 * NULL.  A flag's password is overwritten with '*' in argv (ps shows no
 * password) after the URL is copied; the return is malloc'd. */
char *broker_url_take(char *flag);

struct broker_opts {
	/* The broker gone mid-run: reconnect with backoff this long, then the
	 * run fails with a clear error.  0: 60 s. */
	double retry_s;
	/* The longest wait for a worker's result (queue and evaluation).
	 * 0: 3600 s. */
	double wait_s;
};

/* The redis evaluator: connects once (PING, AUTH, SELECT) to say now when
 * the broker cannot be reached, then a connection per run.  NULL with a
 * message in err when it cannot (unreachable, bad URL, no hiredis). */
struct evaluator *broker_evaluator(const char *url, const struct broker_opts *o, char *err, size_t errlen);

/* What a front end's --broker FLAG (or $PASSFS_BROKER) asks for: 0 with
 * *out NULL when neither is set; 0 with the redis evaluator in *out; -1 with
 * a message when it cannot be had.  The URL (broker_url_take) is wiped from
 * memory once used. */
int broker_evaluator_open(char *flag, const struct broker_opts *o, struct evaluator **out, char *err,
			  size_t errlen);

/* The most GPUs one worker's --gpus may list. */
#define BROKER_GPUS_MAX 64

struct broker_worker_opts {
	const char *url;
	const char *name;           /* NULL: hostname-pid */
	const char *backend;        /* "auto", "cpu", "cuda"; NULL: auto */
	int slots;                  /* evaluations at once; <= 0: 1 */
	/* --gpus: a slot per CUDA ordinal listed, each pinned to its GPU
	 * (PASSFS_CUDA_DEVICE in its evaluation processes); slots is then
	 * ignored.  ngpus -1: every GPU the probe finds; 0: no --gpus. */
	const int *gpus;
	int ngpus;
	double lease_s;             /* a pending job idle this long is reclaimed; 0: 60 */
	double beat_s;              /* heartbeat period; 0: 2 */
	int quiet;
};

/* Serves jobs until SIGTERM or SIGINT (drains: running jobs finish, no new
 * ones are taken; a second signal stops them and hands them back).  0, or
 * -1 with a message. */
int broker_worker_run(const struct broker_worker_opts *o, char *err, size_t errlen);

/* Prints the queue (queued, in flight) and the workers.  0, or -1. */
int broker_status(const char *url, FILE *out, char *err, size_t errlen);

/* ---- the job's encoding (docs/broker.md), exposed for tests ----------------- */

#define BROKER_JOB_MAGIC 0x626a6b62u    /* "bkjb" */
#define BROKER_JOB_VERSION 3

/* Encodes the options and the pass (not the graph: it travels by sha256)
 * into a malloc'd buffer.  0, or -1 (out of memory, too large). */
int broker_job_encode(const struct eval_job *job, unsigned char **out, size_t *len);

/* Decodes into job (pointers into buf; graph_text left NULL) and malloc'd
 * labels in *labels (free both).  0, or -1 with why. */
int broker_job_decode(const unsigned char *buf, size_t len, struct eval_job *job, char **labels, char *err,
		      size_t errlen);

#endif
