/* score.h - ES_t scoring (docs/scoring.md), as pure functions.
 *
 * Two halves:
 *  - closeness: the tolerance at each level t for a dtype and the rule for one
 *    element (the evaluator's eval_compare sweeps whole outputs with it);
 *  - scoring: per-variant records (dtype, speedup, status, min_t) -> the ES_t
 *    curve over t = -10..4 and the task score; the benchmark aggregate.
 *
 * Nothing here touches files, devices or global state: the same inputs give the
 * same numbers, so tests and `passfs es-t` hit exactly what the evaluator uses.
 * docs/scoring.md is the readable form of every formula below.
 *
 * Errors: functions that can fail return 0 or a negative errno (-EINVAL for bad
 * arguments or records, -ENOMEM) and, where they take one, write a one-line
 * message into err that names the variant and the problem.
 */
#ifndef PASSFS_SCORE_H
#define PASSFS_SCORE_H

#include <limits.h>
#include <stddef.h>
#include <jansson.h>

#define SCORE_T_MIN (-10)
#define SCORE_T_MAX 4
#define SCORE_N_T (SCORE_T_MAX - SCORE_T_MIN + 1)   /* 15 levels */
/* min_t of outputs that pass at no level.  Larger than every t, so the test
 * "correct at t" is simply min_t <= t. */
#define SCORE_T_NEVER INT_MAX

#define SCORE_DEFAULT_B 0.1
#define SCORE_DEFAULT_P 0.0

/* The dtypes an output can have; names as in graph.json. */
enum score_dtype {
	SCORE_F32, SCORE_F16, SCORE_BF16, SCORE_F64,
	SCORE_I64, SCORE_I32, SCORE_BOOL,
	SCORE_DTYPE_COUNT,
	SCORE_DTYPE_INVALID = -1
};

/* "float32", "float16", "bfloat16", "float64", "int64", "int32", "bool";
 * NULL for a value outside the enum. */
const char *score_dtype_name(enum score_dtype dt);
/* The inverse of score_dtype_name (exact names only); SCORE_DTYPE_INVALID for
 * anything else, including NULL. */
enum score_dtype score_dtype_parse(const char *name);

/* ---- closeness --------------------------------------------------------- */

/* The tolerance at level t for dt: for float dtypes and t <= 0, atol = 10^t and
 * rtol = 10^(k*t) with k = 1.1772 (float32), 0.6 (float16), 0.3592 (bfloat16);
 * float64 has atol = rtol = 10^(1.4*t); t >= 1 uses the t = 1 values.  Integer
 * and bool dtypes get atol = rtol = 0 (values must be equal) at every t.
 * Both are non-decreasing in t for every dtype, which is what makes min_t (the
 * first passing level) describe every level: outputs that pass at t pass at
 * every larger t.  Returns 0, or -EINVAL when dt is invalid or t is outside
 * SCORE_T_MIN..SCORE_T_MAX (atol and rtol are then untouched). */
int score_tolerance(enum score_dtype dt, int t, double *atol, double *rtol);

/* Whether one pass element is close to its eager element at (atol, rtol):
 * |pass - eager| <= atol + rtol*|eager|, except that where eager is NaN pass
 * must be NaN, where eager is +-Inf pass must be the same Inf, and a
 * non-finite pass value where eager is finite fails.  1 or 0.  The one
 * element rule: the evaluator's sweep over whole outputs (eval_compare,
 * engine/eval/eval_util.h, which finds the smallest passing t in one pass using
 * the monotonicity stated at score_tolerance) applies it. */
int score_close(double pass, double eager, double atol, double rtol);

/* score_close itself, for sweeps that apply it to every element (score.c's
 * score_close is this). */
static inline int score_close_inline(double pass, double eager, double atol, double rtol)
{
	/* NaN and Inf must match exactly, finite values by tolerance. */
	if (__builtin_isnan(eager))
		return __builtin_isnan(pass);
	if (__builtin_isinf(eager))
		return pass == eager;
	if (!__builtin_isfinite(pass))
		return 0;
	return __builtin_fabs(pass - eager) <= atol + rtol * __builtin_fabs(eager);
}

/* ---- records and scores ------------------------------------------------ */

/* What happened to a pass on one variant.  The names are result.json's
 * verdicts plus pass_miss (the pass did not apply to the variant). */
enum score_status {
	SCORE_OK,               /* ran; min_t says from which t the outputs pass */
	SCORE_MISMATCH,         /* ran; outputs pass at no t (min_t never), or only
				 * from a loose t (the evaluator's rule: ok needs
				 * min_t <= -3); paid like ok from its min_t on */
	SCORE_COMPILE_ERROR,
	SCORE_RUNTIME_ERROR,
	SCORE_TIMEOUT,
	SCORE_REJECTED,         /* broke an integrity rule (docs/integrity.md) */
	SCORE_UNSUPPORTED,
	SCORE_NOT_IMPLEMENTED,
	SCORE_PASS_MISS,
	SCORE_STATUS_COUNT,
	SCORE_STATUS_INVALID = -1
};

/* One verdict: name (result.json, records), rank (the more serious verdict
 * has the larger rank: a task's verdict is its most serious variant's),
 * ran (see score_status_ran), blurb (what it means, for the READMEs; NULL
 * for pass_miss, which result.json never shows). */
struct score_status_info {
	const char *name;
	int rank;
	int ran;
	const char *blurb;
};

/* The row of st in the verdict table; NULL outside the enum. */
const struct score_status_info *score_status_info(enum score_status st);

/* "ok", "mismatch", "compile_error", ...; NULL outside the enum. */
const char *score_status_name(enum score_status st);
/* The inverse of score_status_name; SCORE_STATUS_INVALID for anything else. */
enum score_status score_status_parse(const char *name);
/* 1 for the statuses where the pass ran to completion (ok, mismatch): those
 * may carry a min_t (correct from there on) and get r = 1 at t >= 1 when
 * their values are wrong, instead of b. */
int score_status_ran(enum score_status st);

struct score_params {
	double b;               /* r of a failure; in (0, 1] */
	double p;               /* slowdown penalty: r = s^(1+p) for s < 1; >= 0 */
};

struct score_variant {
	enum score_dtype dtype;
	enum score_status status;
	double speedup;         /* eager_median / pass_median; > 0 whenever
				 * min_t is a level (it is read only then);
				 * 0 when not measured */
	int min_t;              /* SCORE_T_MIN..SCORE_T_MAX, or SCORE_T_NEVER;
				 * SCORE_T_NEVER for every status but ok and
				 * mismatch.  Scored exactly as given: which
				 * levels count as correct is the evaluator's
				 * rule (it never passes a min_t >= 0 on) */
};

struct score_input {
	struct score_params params;
	size_t n_variants;
	struct score_variant *variants;  /* n_variants entries */
};

struct score_result {
	double es_t[SCORE_N_T]; /* es_t[t - SCORE_T_MIN] */
	double score;           /* the task score */
};

/* The weight w_t of level t in the task score (0.001 .. 1); 0 for a t outside
 * SCORE_T_MIN..SCORE_T_MAX. */
double score_weight(int t);

/* r of one variant at level t:
 *   correct at t (status ok or mismatch, min_t <= t): s if s >= 1, else s^(1+p);
 *   else, the pass ran (ok, mismatch) and t >= 1: 1;
 *   else: b.
 * Assumes v and params are valid (score_check_input). */
double score_variant_r(const struct score_variant *v, const struct score_params *params, int t);

/* Checks what score_compute relies on: b in (0, 1], p finite and >= 0, at
 * least one variant, and per variant a valid dtype and status, min_t in
 * range (or SCORE_T_NEVER; exactly SCORE_T_NEVER for statuses other than ok
 * and mismatch) and a finite speedup > 0 wherever min_t is a level.  Returns 0, or -EINVAL with a
 * message such as "variants[2]: status ok needs a speedup > 0 (got -1)". */
int score_check_input(const struct score_input *in, char *err, size_t errlen);

/* The ES_t curve (geometric mean of r over the variants, at each t) and the
 * task score 10^(sum_t w_t*log10 ES_t / sum_t w_t).  Eager itself (every
 * variant ok, s = 1, min_t = SCORE_T_MIN) scores exactly 1.  Returns 0 and
 * fills *out, or the error of score_check_input (*out untouched). */
int score_compute(const struct score_input *in, struct score_result *out,
		  char *err, size_t errlen);

/* The benchmark aggregate: the geometric mean of n task scores, into *out.
 * Returns 0, or -EINVAL when n == 0 or a score is not finite and > 0. */
int score_aggregate(const double *task_scores, size_t n, double *out);

/* summary.json's two aggregates over n tasks, scores[i] the task's score or
 * NAN (or anything not finite and > 0) when it has none: *agg over the
 * tasks that have one (*have_agg 0 when none does), *agg_all over all n
 * with a missing score counted as b (*have_all 0 when n == 0).  Returns
 * how many tasks have a score. */
size_t score_aggregates(const double *scores, size_t n, double b, double *agg, int *have_agg, double *agg_all,
			int *have_all);

/* Reads a records document:
 *   {"b": 0.1, "p": 0, "variants": [{"dtype": "float32", "speedup": 1.5,
 *                                    "status": "ok", "min_t": -5}, ...]}
 * b and p are optional (SCORE_DEFAULT_B, SCORE_DEFAULT_P).  Per variant: dtype
 * and status are required; speedup is required for ok (optional, null allowed,
 * otherwise, and for a mismatch with a min_t); min_t is an integer in -10..4,
 * or null / "none" for never; it is required for ok, allowed for mismatch
 * and must be never when present on other statuses; an
 * optional "name" string labels the variant in messages.  Unknown fields are an
 * error, so a typo cannot drop data.  root is only read (the caller keeps its
 * reference).  Returns 0 and fills *out (release with score_input_free), or a
 * negative errno with a message like "variants[1] ('f16_b8'): min_t must be an
 * integer in -10..4 or null (got 7)"; *out is then empty and needs no free. */
int score_parse_records(json_t *root, struct score_input *out, char *err, size_t errlen);

/* Frees what score_parse_records allocated and empties *in; NULL-safe. */
void score_input_free(struct score_input *in);

#endif
