/* score.c - ES_t scoring (docs/scoring.md).  Contract in score.h, the
 * formulas written out in docs/scoring.md. */
#include "score.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const dtype_names[SCORE_DTYPE_COUNT] = {
	[SCORE_F32] = "float32", [SCORE_F16] = "float16", [SCORE_BF16] = "bfloat16",
	[SCORE_F64] = "float64", [SCORE_I64] = "int64", [SCORE_I32] = "int32",
	[SCORE_BOOL] = "bool",
};

/* Every verdict, once: its name, how serious it is (a task's verdict is its
 * most serious variant's), whether the pass ran (r = 1 at t >= 1 when wrong,
 * and a min_t may come with it), and what it means for the READMEs.  A new
 * verdict is a row here (test_score walks the table). */
static const struct score_status_info statuses[SCORE_STATUS_COUNT] = {
	[SCORE_OK] = {"ok", 0, 1,
		      "the variant ran and every output is close from t = -3 or tighter, on every input set"},
	[SCORE_MISMATCH] = {"mismatch", 5, 1,
			    "the pass ran but is close only from t = -2 or -1 (paid from there), or looser, or "
			    "never; `message` and the variant's `worst` name the element furthest off (`output "
			    "t1[3,17,200] = 0.5012, eager 0.4981: close only from t = -2 (ok needs -3)`)"},
	[SCORE_COMPILE_ERROR] = {"compile_error", 8, 0,
				 "the device gate (NVRTC) or the host compiler refused it; `message` names "
				 "`pass.c:LINE`, `compile.log_tail` has the log"},
	[SCORE_RUNTIME_ERROR] = {"runtime_error", 7, 0, "a launch failed, the pass crashed or returned an error"},
	[SCORE_TIMEOUT] = {"timeout", 6, 0, "a call took too long"},
	[SCORE_REJECTED] = {"rejected", 9, 0,
			    "broke an integrity rule: an output element left unwritten (still NaN), inputs "
			    "written, close on the public inputs and not close at all on the secret ones, a "
			    "forbidden symbol, system call or constructor"},
	[SCORE_UNSUPPORTED] = {"unsupported", 4, 0,
			       "uses what this backend cannot run (inline PTX on the cpu backend), a forbidden "
			       "include or `<<<`, or declined with `pf_unsupported`"},
	[SCORE_NOT_IMPLEMENTED] = {"not_implemented", 3, 0, "the template's answer"},
	[SCORE_PASS_MISS] = {"pass_miss", 2, 0, NULL},
};

const struct score_status_info *score_status_info(enum score_status st)
{
	return st < 0 || st >= SCORE_STATUS_COUNT ? NULL : &statuses[st];
}

/* w_t for t = -10..4.  Most weight sits where PyTorch's default tolerances
 * live (-5..-3); the extremes only break ties. */
static const double weights[SCORE_N_T] = {
	0.001, 0.001, 0.001, 0.001, 0.001,          /* -10..-6 */
	1.0, 1.0, 1.0,                              /* -5..-3 */
	0.8, 0.64, 0.512, 0.4096, 0.32768, 0.262144, /* -2..3 */
	0.001,                                      /* 4 */
};

static void set_err(char *err, size_t errlen, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static void set_err(char *err, size_t errlen, const char *fmt, ...)
{
	va_list ap;

	if (!err || errlen == 0)
		return;
	va_start(ap, fmt);
	vsnprintf(err, errlen, fmt, ap);
	va_end(ap);
}

const char *score_dtype_name(enum score_dtype dt)
{
	if (dt < 0 || dt >= SCORE_DTYPE_COUNT)
		return NULL;
	return dtype_names[dt];
}

enum score_dtype score_dtype_parse(const char *name)
{
	if (!name)
		return SCORE_DTYPE_INVALID;
	for (int i = 0; i < SCORE_DTYPE_COUNT; i++)
		if (strcmp(name, dtype_names[i]) == 0)
			return (enum score_dtype)i;
	return SCORE_DTYPE_INVALID;
}

const char *score_status_name(enum score_status st)
{
	if (st < 0 || st >= SCORE_STATUS_COUNT)
		return NULL;
	return statuses[st].name;
}

enum score_status score_status_parse(const char *name)
{
	if (!name)
		return SCORE_STATUS_INVALID;
	for (int i = 0; i < SCORE_STATUS_COUNT; i++)
		if (strcmp(name, statuses[i].name) == 0)
			return (enum score_status)i;
	return SCORE_STATUS_INVALID;
}

int score_status_ran(enum score_status st)
{
	return st >= 0 && st < SCORE_STATUS_COUNT && statuses[st].ran;
}

/* ---- closeness --------------------------------------------------------- */

static int t_in_range(int t)
{
	return t >= SCORE_T_MIN && t <= SCORE_T_MAX;
}

int score_tolerance(enum score_dtype dt, int t, double *atol, double *rtol)
{
	/* rtol = 10^(k*t): k is how fast the relative tolerance opens up as t
	 * grows; lower-precision dtypes get a flatter (looser) curve. */
	double k;

	if (!t_in_range(t) || !score_dtype_name(dt))
		return -EINVAL;
	if (t > 1)
		t = 1;
	switch (dt) {
	case SCORE_F32:  k = 1.1772; break;
	case SCORE_F16:  k = 0.6;    break;
	case SCORE_BF16: k = 0.3592; break;
	case SCORE_F64:
		*atol = *rtol = pow(10.0, 1.4 * t);
		return 0;
	default:
		*atol = *rtol = 0.0;    /* integers and bools: equal or wrong */
		return 0;
	}
	*atol = pow(10.0, (double)t);
	*rtol = pow(10.0, k * t);
	return 0;
}

int score_close(double pass, double eager, double atol, double rtol)
{
	return score_close_inline(pass, eager, atol, rtol);
}

/* ---- scores ------------------------------------------------------------ */

double score_weight(int t)
{
	return t_in_range(t) ? weights[t - SCORE_T_MIN] : 0.0;
}

double score_variant_r(const struct score_variant *v, const struct score_params *params, int t)
{
	if (score_status_ran(v->status) && v->min_t <= t)
		return v->speedup >= 1.0 ? v->speedup : pow(v->speedup, 1.0 + params->p);
	if (score_status_ran(v->status) && t >= 1)
		return 1.0;
	return params->b;
}

static int check_params(const struct score_params *pr, char *err, size_t errlen)
{
	/* b = 0 would send log10 to -inf and a single failure would zero the
	 * task; b > 1 would reward failing over a correct slowdown. */
	if (!(pr->b > 0.0 && pr->b <= 1.0)) {
		set_err(err, errlen, "b must be in (0, 1] (got %g)", pr->b);
		return -EINVAL;
	}
	if (!(isfinite(pr->p) && pr->p >= 0.0)) {
		set_err(err, errlen, "p must be a finite number >= 0 (got %g)", pr->p);
		return -EINVAL;
	}
	return 0;
}

static int check_variant(const struct score_variant *v, size_t i, char *err, size_t errlen)
{
	if (!score_dtype_name(v->dtype)) {
		set_err(err, errlen, "variants[%zu]: invalid dtype %d", i, (int)v->dtype);
		return -EINVAL;
	}
	if (!score_status_name(v->status)) {
		set_err(err, errlen, "variants[%zu]: invalid status %d", i, (int)v->status);
		return -EINVAL;
	}
	if (v->min_t != SCORE_T_NEVER && !t_in_range(v->min_t)) {
		set_err(err, errlen, "variants[%zu]: min_t must be in %d..%d or never (got %d)",
			i, SCORE_T_MIN, SCORE_T_MAX, v->min_t);
		return -EINVAL;
	}
	if (!score_status_ran(v->status) && v->min_t != SCORE_T_NEVER) {
		set_err(err, errlen, "variants[%zu]: status %s has no passing level, "
			"min_t must be never (got %d)", i, score_status_name(v->status), v->min_t);
		return -EINVAL;
	}
	if (score_status_ran(v->status) && v->min_t != SCORE_T_NEVER &&
	    !(isfinite(v->speedup) && v->speedup > 0.0)) {
		set_err(err, errlen, "variants[%zu]: status %s with a min_t needs a finite speedup > 0 (got %g)",
			i, score_status_name(v->status), v->speedup);
		return -EINVAL;
	}
	return 0;
}

int score_check_input(const struct score_input *in, char *err, size_t errlen)
{
	int rc = check_params(&in->params, err, errlen);

	if (rc < 0)
		return rc;
	if (in->n_variants == 0 || !in->variants) {
		set_err(err, errlen, "no variants: a task score needs at least one");
		return -EINVAL;
	}
	for (size_t i = 0; i < in->n_variants; i++)
		if ((rc = check_variant(&in->variants[i], i, err, errlen)) < 0)
			return rc;
	return 0;
}

int score_compute(const struct score_input *in, struct score_result *out,
		  char *err, size_t errlen)
{
	/* Work in log10 throughout: the geometric mean of r and the weighted
	 * mean over t are both arithmetic means of logs, and eager (r = 1
	 * everywhere) then sums exact zeros and scores exactly 1. */
	double log_es[SCORE_N_T], wsum = 0.0, wlog = 0.0;
	int rc = score_check_input(in, err, errlen);

	if (rc < 0)
		return rc;
	for (int i = 0; i < SCORE_N_T; i++) {
		double sum = 0.0;

		for (size_t v = 0; v < in->n_variants; v++)
			sum += log10(score_variant_r(&in->variants[v], &in->params, SCORE_T_MIN + i));
		log_es[i] = sum / (double)in->n_variants;
		wsum += weights[i];
		wlog += weights[i] * log_es[i];
	}
	for (int i = 0; i < SCORE_N_T; i++)
		out->es_t[i] = pow(10.0, log_es[i]);
	out->score = pow(10.0, wlog / wsum);
	return 0;
}

int score_aggregate(const double *task_scores, size_t n, double *out)
{
	double sum = 0.0;

	if (n == 0 || !task_scores)
		return -EINVAL;
	for (size_t i = 0; i < n; i++) {
		if (!(isfinite(task_scores[i]) && task_scores[i] > 0.0))
			return -EINVAL;
		sum += log10(task_scores[i]);
	}
	*out = pow(10.0, sum / (double)n);
	return 0;
}

size_t score_aggregates(const double *scores, size_t n, double b, double *agg, int *have_agg, double *agg_all,
			int *have_all)
{
	double *have = calloc(n + 1, sizeof(double)), *all = calloc(n + 1, sizeof(double));
	size_t n_eval = 0;
	*have_agg = *have_all = 0;
	if (have == NULL || all == NULL) {
		free(have);
		free(all);
		return 0;
	}
	for (size_t i = 0; i < n; i++) {
		int ok = isfinite(scores[i]) && scores[i] > 0;
		if (ok)
			have[n_eval++] = scores[i];
		all[i] = ok ? scores[i] : b;
	}
	*have_agg = n_eval > 0 && score_aggregate(have, n_eval, agg) == 0;
	*have_all = n > 0 && score_aggregate(all, n, agg_all) == 0;
	free(have);
	free(all);
	return n_eval;
}

/* ---- records ----------------------------------------------------------- */

/* "variants[3]" or "variants[3] ('f16_b8')": how messages point at a record. */
static void variant_label(char *buf, size_t len, size_t i, json_t *rec)
{
	const char *name = json_string_value(json_object_get(rec, "name"));

	if (name)
		snprintf(buf, len, "variants[%zu] ('%s')", i, name);
	else
		snprintf(buf, len, "variants[%zu]", i);
}

/* Returns 1 and sets *out when j is a JSON number (integer or real), else 0. */
static int get_number(json_t *j, double *out)
{
	if (!json_is_number(j))
		return 0;
	*out = json_number_value(j);
	return 1;
}

static int parse_param(json_t *root, const char *key, double def, double *out,
		       char *err, size_t errlen)
{
	json_t *j = json_object_get(root, key);

	if (!j) {
		*out = def;
		return 0;
	}
	if (!get_number(j, out)) {
		set_err(err, errlen, "\"%s\" must be a number", key);
		return -EINVAL;
	}
	return 0;
}

static int check_fields(json_t *obj, const char *const *allowed, const char *where,
			char *err, size_t errlen)
{
	const char *key;
	json_t *val;

	json_object_foreach(obj, key, val) {
		int known = 0;

		for (const char *const *a = allowed; *a; a++)
			known |= strcmp(key, *a) == 0;
		if (!known) {
			set_err(err, errlen, "%s: unknown field \"%s\"", where, key);
			return -EINVAL;
		}
	}
	return 0;
}

static int parse_dtype(json_t *rec, const char *where, struct score_variant *v,
		       char *err, size_t errlen)
{
	json_t *j = json_object_get(rec, "dtype");

	if (!j) {
		set_err(err, errlen, "%s: missing field \"dtype\"", where);
		return -EINVAL;
	}
	v->dtype = score_dtype_parse(json_string_value(j));
	if (v->dtype == SCORE_DTYPE_INVALID) {
		set_err(err, errlen, "%s: unknown dtype %s%s%s (expected float32, float16, "
			"bfloat16, float64, int64, int32 or bool)", where,
			json_is_string(j) ? "'" : "",
			json_is_string(j) ? json_string_value(j) : "(not a string)",
			json_is_string(j) ? "'" : "");
		return -EINVAL;
	}
	return 0;
}

static int parse_status(json_t *rec, const char *where, struct score_variant *v,
			char *err, size_t errlen)
{
	json_t *j = json_object_get(rec, "status");

	if (!j) {
		set_err(err, errlen, "%s: missing field \"status\"", where);
		return -EINVAL;
	}
	v->status = score_status_parse(json_string_value(j));
	if (v->status == SCORE_STATUS_INVALID) {
		set_err(err, errlen, "%s: unknown status %s%s%s (expected ok, mismatch, "
			"compile_error, runtime_error, timeout, rejected, unsupported, "
			"not_implemented or pass_miss)", where,
			json_is_string(j) ? "'" : "",
			json_is_string(j) ? json_string_value(j) : "(not a string)",
			json_is_string(j) ? "'" : "");
		return -EINVAL;
	}
	return 0;
}

/* speedup: required for ok; elsewhere optional or null, and then 0. */
static int parse_speedup(json_t *rec, const char *where, struct score_variant *v,
			 char *err, size_t errlen)
{
	json_t *j = json_object_get(rec, "speedup");

	v->speedup = 0.0;
	if (!j || json_is_null(j)) {
		/* ok always has a level; a mismatch with a level is checked
		 * once min_t is read (parse_variant) */
		if (v->status != SCORE_OK)
			return 0;
		set_err(err, errlen, "%s: status ok needs field \"speedup\" (a number > 0)", where);
		return -EINVAL;
	}
	if (!get_number(j, &v->speedup)) {
		set_err(err, errlen, "%s: speedup must be a number", where);
		return -EINVAL;
	}
	if (!(isfinite(v->speedup) && v->speedup > 0.0)) {
		set_err(err, errlen, "%s: speedup must be > 0 (got %g)", where, v->speedup);
		return -EINVAL;
	}
	return 0;
}

/* min_t: an integer level, or null / "none" for never.  An integral real
 * (-5.0) is the same number and is accepted. */
static int parse_min_t(json_t *rec, const char *where, struct score_variant *v,
		       char *err, size_t errlen)
{
	json_t *j = json_object_get(rec, "min_t");
	double d;

	v->min_t = SCORE_T_NEVER;
	if (!j) {
		if (v->status != SCORE_OK)
			return 0;
		set_err(err, errlen, "%s: status ok needs field \"min_t\" "
			"(an integer in %d..%d, or null)", where, SCORE_T_MIN, SCORE_T_MAX);
		return -EINVAL;
	}
	if (json_is_null(j) || (json_is_string(j) && strcmp(json_string_value(j), "none") == 0))
		return 0;
	if (!get_number(j, &d) || d != floor(d) || d < SCORE_T_MIN || d > SCORE_T_MAX) {
		char got[64];

		if (json_is_number(j))
			snprintf(got, sizeof got, "%g", json_number_value(j));
		else
			snprintf(got, sizeof got, "a %s", json_is_string(j) ? "string" :
				 json_is_boolean(j) ? "boolean" : json_is_array(j) ? "list" : "object");
		set_err(err, errlen, "%s: min_t must be an integer in %d..%d, or null "
			"(got %s)", where, SCORE_T_MIN, SCORE_T_MAX, got);
		return -EINVAL;
	}
	if (!score_status_ran(v->status)) {
		set_err(err, errlen, "%s: status %s has no passing level, min_t must be "
			"null (got %d)", where, score_status_name(v->status), (int)d);
		return -EINVAL;
	}
	if (v->status == SCORE_MISMATCH && !(v->speedup > 0.0)) {
		set_err(err, errlen, "%s: status mismatch with a min_t needs field \"speedup\" "
			"(a number > 0): the variant is paid its speedup from min_t on", where);
		return -EINVAL;
	}
	v->min_t = (int)d;
	return 0;
}

static int parse_variant(json_t *rec, size_t i, struct score_variant *v,
			 char *err, size_t errlen)
{
	static const char *const fields[] = { "name", "dtype", "speedup", "status", "min_t", NULL };
	json_t *name = json_object_get(rec, "name");
	char where[160];
	int rc;

	variant_label(where, sizeof where, i, rec);
	if (!json_is_object(rec)) {
		set_err(err, errlen, "%s: must be an object", where);
		return -EINVAL;
	}
	if (name && !json_is_string(name)) {
		set_err(err, errlen, "%s: name must be a string", where);
		return -EINVAL;
	}
	if ((rc = check_fields(rec, fields, where, err, errlen)) < 0 ||
	    (rc = parse_dtype(rec, where, v, err, errlen)) < 0 ||
	    (rc = parse_status(rec, where, v, err, errlen)) < 0 ||
	    (rc = parse_speedup(rec, where, v, err, errlen)) < 0 ||
	    (rc = parse_min_t(rec, where, v, err, errlen)) < 0)
		return rc;
	return 0;
}

static int parse_params(json_t *root, struct score_params *pr, char *err, size_t errlen)
{
	int rc;

	if ((rc = parse_param(root, "b", SCORE_DEFAULT_B, &pr->b, err, errlen)) < 0 ||
	    (rc = parse_param(root, "p", SCORE_DEFAULT_P, &pr->p, err, errlen)) < 0 ||
	    (rc = check_params(pr, err, errlen)) < 0)
		return rc;
	return 0;
}

int score_parse_records(json_t *root, struct score_input *out, char *err, size_t errlen)
{
	static const char *const fields[] = { "b", "p", "variants", NULL };
	struct score_input in = { 0 };
	json_t *vars = json_object_get(root, "variants");
	int rc;

	if (!json_is_object(root)) {
		set_err(err, errlen, "the records must be a JSON object "
			"{\"b\", \"p\", \"variants\": [...]}");
		return -EINVAL;
	}
	if ((rc = check_fields(root, fields, "top level", err, errlen)) < 0 ||
	    (rc = parse_params(root, &in.params, err, errlen)) < 0)
		return rc;
	if (!json_is_array(vars)) {
		set_err(err, errlen, vars ? "\"variants\" must be an array"
			: "missing field \"variants\"");
		return -EINVAL;
	}
	in.n_variants = json_array_size(vars);
	if (in.n_variants == 0) {
		set_err(err, errlen, "\"variants\" is empty: a task score needs at least one");
		return -EINVAL;
	}
	in.variants = calloc(in.n_variants, sizeof *in.variants);
	if (!in.variants) {
		set_err(err, errlen, "out of memory for %zu variants", in.n_variants);
		return -ENOMEM;
	}
	for (size_t i = 0; i < in.n_variants; i++) {
		if ((rc = parse_variant(json_array_get(vars, i), i, &in.variants[i], err, errlen)) < 0) {
			score_input_free(&in);
			return rc;
		}
	}
	*out = in;
	return 0;
}

void score_input_free(struct score_input *in)
{
	if (!in)
		return;
	free(in->variants);
	in->variants = NULL;
	in->n_variants = 0;
}
