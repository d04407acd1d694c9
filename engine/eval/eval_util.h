/* eval_util.h - small pieces of an evaluation, shared by the evaluator
 * and the worker: comparing outputs at every tolerance level, poison
 * patterns, verdict names and score dtypes; and helpers (the monotonic
 * clock, whole-buffer socket and pipe I/O, sorting and rounding, a log's
 * tail, dying with the parent).  Separate so tests can hit them directly
 * (tests/unit/test_eval_util.c). */
#ifndef PASSFS_EVAL_UTIL_H
#define PASSFS_EVAL_UTIL_H

#include <stddef.h>
#include <stdint.h>

#include "graph.h"
#include "score.h"

#define GRAPH_MAX_IO 64         /* most inputs or outputs a variant may have to be evaluated */

/* Fills n elements of dtype with the poison pattern: a NaN with a payload no
 * arithmetic produces (float types), 0xA5 bytes otherwise. */
void eval_fill_poison(void *buf, enum graph_dtype dt, size_t n);

/* The first of n elements that still holds the poison pattern, or -1 (only
 * float types carry a recognisable poison). */
long long eval_find_poison(enum graph_dtype dt, const void *buf, size_t n);

struct eval_cmp {
	int min_t;              /* smallest t (-10..4) at which every element passes, or SCORE_T_NEVER */
	long long poison_at;    /* first element still holding the poison, or -1 */
	long long first_bad;    /* first element failing at every t, or -1 */
	double bad_pass, bad_eager;
	double max_abs, max_rel;  /* over finite pairs */
	/* The worst element: the one furthest outside the tolerance of the
	 * tightest level the output fails (t = min_t - 1), measured as
	 * |pass - eager| / (atol + rtol*|eager|) at that level (infinite for a
	 * NaN/Inf or integer mismatch); at t = -10 when nothing fails.  -1 when
	 * n == 0 or on poison. */
	long long worst_at;
	double worst_pass, worst_eager;
	double worst_excess;    /* that ratio: > 1 where the level fails */
};

/* Compares n elements of pass output against eager at every tolerance level
 * of docs/scoring.md (integers and bools must be equal; NaN and Inf must
 * match exactly).  One sweep; out->min_t is the largest per-element level. */
void eval_compare(enum graph_dtype dt, const void *pass, const void *eager, size_t n, struct eval_cmp *out);

/* The smallest t at which some constant output would pass against these n
 * eager elements: the better of all zeros and the midpoint of eager's finite
 * range (a near-uniform softmax is close to 1/n everywhere).  A pass that is
 * no closer than that proves nothing by being close.  SCORE_T_NEVER when no
 * constant passes anywhere (NaN or Inf in eager, or a wide range), and for
 * integer and bool dtypes and n < 2 (nothing to tell apart). */
int eval_blind_t(enum graph_dtype dt, const void *eager, size_t n);

/* Whether n bytes at a and b are the same (memcmp == 0). */
int eval_same_bytes(const void *a, const void *b, size_t n);

/* How many threads eval_compare, eval_find_poison, eval_blind_t and
 * eval_same_bytes may split a large buffer among: n, or 0 (the default) for
 * one per online CPU (at most 8).  Their answers do not depend on it. */
void eval_set_threads(int n);

/* "ok", "mismatch", ... for a variant (status ok with min_t never is "mismatch"). */
const char *eval_verdict_name(enum score_status st, int min_t);
/* The more serious of two verdicts (for a task's overall verdict). */
enum score_status eval_worse(enum score_status a, enum score_status b);
enum score_dtype eval_score_dtype(enum graph_dtype dt);

/* All n bytes to fd (a socket without SIGPIPE when the peer is gone, else a
 * pipe), or from fd; 0, or -1 on an error or end of file.  base/proc.h's
 * base_write_all and base_read_full with the evaluator's 0/-1 answer. */
int eval_send_all(int fd, const void *p, size_t n);
int eval_recv_all(int fd, void *p, size_t n);

void eval_sort(double *a, int n);
double eval_round(double x, int digits);
/* The last `max` bytes of s, starting at a line boundary when possible. */
const char *eval_tail(const char *s, size_t max);

/* Makes the calling (child) process die with its parent. */
void eval_prctl_pdeathsig_kill(void);

/* Whether the cpu backend scores the modeled H200 speedup (the default) or
 * the measured one (PASSFS_CPU_SPEEDUP=measured; docs/scoring.md). */
int eval_cpu_speedup_modeled(void);

#endif
