/* broker_int.h - what broker.c and broker_worker.c share: the keys, the
 * limits and the connection (docs/broker.md). */
#ifndef PASSFS_BROKER_INT_H
#define PASSFS_BROKER_INT_H

#include "broker.h"
#include "graph.h"

#define BK_JOBS "passfs:jobs:"          /* + backend (auto, cpu, cuda): its job stream */
#define BK_JOBS_OLD "passfs:jobs"       /* broker version 2's one stream: refused by name */
#define BK_GROUP "workers"              /* each stream's consumer group */
#define BK_GRAPH "passfs:graph:"        /* + sha256: a task's graph.json */
#define BK_REPLY "passfs:reply:"        /* + job id: the job's reply stream */
#define BK_DONE "passfs:done:"          /* + job id: who answered (once) */
#define BK_CANCEL "passfs:cancel:"      /* + job id: the front end gave up */
#define BK_WORKER "passfs:worker:"      /* + name: a worker's heartbeat hash */
#define BK_TTL_S 86400                  /* graphs, replies, markers expire */
#define BK_BLOCK_MS 1000                /* the longest XREAD BLOCK */
#define BK_MAX_DELIVERIES 3             /* a job handed out more often is refused */
/* A job entry's encoding: options, labels and a pass (the graph goes by sha). */
#define BROKER_JOB_MAX ((size_t)PF_CAP_PASS_C + 3 * 4096 + 256)

void bk_random_id(char out[33]);
/* The job stream of a backend ("auto", "cpu", "cuda": passfs:jobs:cpu...):
 * 0, or -1 for another name. */
int bk_stream_of(const char *backend, char *out, size_t outlen);

#ifdef PASSFS_HIREDIS
#include <hiredis/hiredis.h>
/* Connects, AUTH and SELECT as the URL says, PING.  NULL with a message
 * (the URL shown without its password). */
redisContext *bk_connect(const struct broker_url *u, char *err, size_t errlen);
/* The string value of a field in a stream entry's [f, v, ...] array, or NULL. */
const redisReply *bk_field(const redisReply *fields, const char *name);
#endif

/* Answers (docs/broker.md, "Signed answers"): the broker key from
 * PASSFS_BROKER_KEY (0 with *len, 1 none configured, -1 err), an answer's
 * HMAC-SHA-256 over its job id, rc, worker and result, and the check of a
 * result document's pinned fields. */
int bk_answer_key(unsigned char *key, size_t cap, size_t *len, char *err, size_t errlen);
int bk_answer_sign(const unsigned char *key, size_t klen, const char *job, int rc, const char *worker,
		   const char *json, char hex[65]);
struct json_t;
int bk_result_check(const struct json_t *r, char *err, size_t errlen);

#endif
