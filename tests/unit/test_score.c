/* test_score.c - engine/score: tolerances, allclose, min_t, ES_t and records.
 *
 * Expected scores are derived by hand in the comments from the formula
 *   score = 10^(sum_t w_t*log10 ES_t / sum_t w_t)
 * with these sums of weights (t = -10..4):
 *   all t: 5*0.001 + 3*1 + 0.8+0.64+0.512+0.4096+0.32768+0.262144 + 0.001 = 5.957424
 *   t <= -6: 0.005      t >= -5: 5.952424
 *   t <= -3: 3.005      t >= -2: 2.952424
 *   t <=  0: 4.957      t >=  1: 0.4096+0.32768+0.262144+0.001 = 1.000424
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "score.h"

#include "check.h"

/* |got - want| <= tol, printing both on failure. */
#define CHECK_NEAR(got, want, tol) do { \
	double g_ = (got), w_ = (want); \
	if (fabs(g_ - w_) <= (tol)) { \
		n_pass++; \
	} else { \
		n_fail++; \
		fprintf(stderr, "%s:%d: FAILED: %s = %.9g, want %.9g\n", \
			__FILE__, __LINE__, #got, g_, w_); \
	} \
} while (0)

#define EPS6 5e-7   /* "to 6 digits": the printed %.6f value must match */

static int t_idx(int t)
{
	return t - SCORE_T_MIN;
}

static struct score_variant var(enum score_dtype dt, enum score_status st, double s, int min_t)
{
	struct score_variant v = { .dtype = dt, .status = st, .speedup = s, .min_t = min_t };
	return v;
}

/* Scores n variants with (b, p); returns the score, or -1 when compute failed. */
static double run(struct score_variant *vs, size_t n, double b, double p, struct score_result *res)
{
	struct score_input in = { .params = { .b = b, .p = p }, .n_variants = n, .variants = vs };
	char err[256] = "";

	if (score_compute(&in, res, err, sizeof err) < 0) {
		fprintf(stderr, "score_compute: %s\n", err);
		return -1.0;
	}
	return res->score;
}

/* ES_t equals lo for t < from and hi for t >= from. */
static void check_curve(const struct score_result *r, int from, double lo, double hi, int line)
{
	for (int t = SCORE_T_MIN; t <= SCORE_T_MAX; t++) {
		double want = t < from ? lo : hi;

		if (fabs(r->es_t[t_idx(t)] - want) <= EPS6) {
			n_pass++;
		} else {
			n_fail++;
			fprintf(stderr, "%s:%d: FAILED: ES_t at t=%d = %.9g, want %.9g\n",
				__FILE__, line, t, r->es_t[t_idx(t)], want);
		}
	}
}

/* ---- docs/scoring.md check values ---------------------------------- */

static void test_design_check_values(void)
{
	struct score_result r;
	struct score_variant v[3];

	/* One float32 variant, s = 1.5, correct from t = -5.
	 * log10 score = (0.005*log10 0.1 + 5.952424*log10 1.5) / 5.957424
	 *             = (-0.005 + 5.952424*0.1760913) / 5.957424 = 0.1751056
	 * score = 10^0.1751056 = 1.496595 */
	v[0] = var(SCORE_F32, SCORE_OK, 1.5, -5);
	CHECK_NEAR(run(v, 1, 0.1, 0, &r), 1.496595, EPS6);
	check_curve(&r, -5, 0.1, 1.5, __LINE__);

	/* One variant never close, s = 1.2: b for t <= 0, r = 1 from t = 1.
	 * log10 score = (4.957*(-1) + 1.000424*0) / 5.957424 = -0.8320737
	 * score = 0.147207 */
	v[0] = var(SCORE_F32, SCORE_OK, 1.2, SCORE_T_NEVER);
	CHECK_NEAR(run(v, 1, 0.1, 0, &r), 0.147207, EPS6);
	check_curve(&r, 1, 0.1, 1.0, __LINE__);
	/* mismatch is the same thing spelled as a status. */
	v[0] = var(SCORE_F32, SCORE_MISMATCH, 1.2, SCORE_T_NEVER);
	CHECK_NEAR(run(v, 1, 0.1, 0, &r), 0.147207, EPS6);
	check_curve(&r, 1, 0.1, 1.0, __LINE__);

	/* Failing every variant: b everywhere, whatever the failure. */
	v[0] = var(SCORE_F32, SCORE_COMPILE_ERROR, 0, SCORE_T_NEVER);
	v[1] = var(SCORE_F16, SCORE_TIMEOUT, 0, SCORE_T_NEVER);
	v[2] = var(SCORE_BF16, SCORE_REJECTED, 3.0, SCORE_T_NEVER);
	CHECK_NEAR(run(v, 3, 0.1, 0, &r), 0.1, 1e-12);
	check_curve(&r, SCORE_T_MAX + 1, 0.1, 0.1, __LINE__);

	/* Eager itself: s = 1 and correct at every t; exactly 1, not nearly. */
	v[0] = var(SCORE_F32, SCORE_OK, 1.0, SCORE_T_MIN);
	v[1] = var(SCORE_F16, SCORE_OK, 1.0, SCORE_T_MIN);
	v[2] = var(SCORE_I64, SCORE_OK, 1.0, SCORE_T_MIN);
	CHECK(run(v, 3, 0.1, 0, &r) == 1.0);
	for (int t = SCORE_T_MIN; t <= SCORE_T_MAX; t++)
		CHECK(r.es_t[t_idx(t)] == 1.0);
}

/* ---- further values derived by hand ------------------------------------ */

static void test_derived_values(void)
{
	struct score_result r;
	struct score_variant v[2];

	/* Two float32 variants, s = 2 and s = 8, both correct from t = -5:
	 * ES_t = sqrt(2*8) = 4 from -5, 0.1 before.
	 * log10 score = (-0.005 + 5.952424*0.6020600) / 5.957424 = 0.6007203
	 * score = 3.987635 */
	v[0] = var(SCORE_F32, SCORE_OK, 2.0, -5);
	v[1] = var(SCORE_F32, SCORE_OK, 8.0, -5);
	CHECK_NEAR(run(v, 2, 0.1, 0, &r), 3.987635, EPS6);
	check_curve(&r, -5, 0.1, 4.0, __LINE__);

	/* Slowdown s = 0.5, correct everywhere: p = 0 gives r = 0.5 at every t,
	 * score 0.5; p = 1 gives r = 0.5^2 = 0.25, score 0.25. */
	v[0] = var(SCORE_F32, SCORE_OK, 0.5, SCORE_T_MIN);
	CHECK_NEAR(run(v, 1, 0.1, 0, &r), 0.5, 1e-12);
	CHECK_NEAR(run(v, 1, 0.1, 1, &r), 0.25, 1e-12);
	check_curve(&r, SCORE_T_MIN, 0, 0.25, __LINE__);
	/* p only touches slowdowns: s = 2 is 2 whatever p. */
	v[0] = var(SCORE_F32, SCORE_OK, 2.0, SCORE_T_MIN);
	CHECK_NEAR(run(v, 1, 0.1, 3, &r), 2.0, 1e-12);

	/* float16, s = 2, correct from t = -2: 0.1 for t <= -3, 2 from -2.
	 * log10 score = (3.005*(-1) + 2.952424*0.3010300) / 5.957424 = -0.3552244
	 * score = 0.441341 */
	v[0] = var(SCORE_F16, SCORE_OK, 2.0, -2);
	CHECK_NEAR(run(v, 1, 0.1, 0, &r), 0.441341, EPS6);
	check_curve(&r, -2, 0.1, 2.0, __LINE__);

	/* compile_error + (ok, s = 4, correct everywhere): ES_t = sqrt(0.1*4) =
	 * 0.632456 at every t (a failure is b even at t >= 1), score 0.632456. */
	v[0] = var(SCORE_F32, SCORE_COMPILE_ERROR, 0, SCORE_T_NEVER);
	v[1] = var(SCORE_F32, SCORE_OK, 4.0, SCORE_T_MIN);
	CHECK_NEAR(run(v, 2, 0.1, 0, &r), 0.632456, EPS6);
	check_curve(&r, SCORE_T_MIN, 0, 0.632456, __LINE__);

	/* mismatch + (ok, s = 4, correct everywhere): t <= 0: sqrt(0.1*4) =
	 * 0.632456; t >= 1: sqrt(1*4) = 2.
	 * log10 score = (4.957*(-0.1989700) + 1.000424*0.3010300) / 5.957424
	 *             = (-0.9862943 + 0.3011576) / 5.957424 = -0.1150055
	 * score = 0.767352 */
	v[0] = var(SCORE_F32, SCORE_MISMATCH, 0, SCORE_T_NEVER);
	CHECK_NEAR(run(v, 2, 0.1, 0, &r), 0.767352, EPS6);
	check_curve(&r, 1, 0.632456, 2.0, __LINE__);

	/* Correct only at t >= 1 (min_t = 1), s = 1.2: b for t <= 0, 1.2 after.
	 * log10 score = (-4.957 + 1.000424*0.0791812) / 5.957424 = -0.8187764
	 * score = 0.151784 */
	v[0] = var(SCORE_F32, SCORE_OK, 1.2, 1);
	CHECK_NEAR(run(v, 1, 0.1, 0, &r), 0.151784, EPS6);

	/* b = 0.5 on an all-failure task: 0.5 everywhere. */
	v[0] = var(SCORE_F32, SCORE_PASS_MISS, 0, SCORE_T_NEVER);
	CHECK_NEAR(run(v, 1, 0.5, 0, &r), 0.5, 1e-12);
}

static void test_variant_r(void)
{
	struct score_params pr = { .b = 0.1, .p = 1 };
	struct score_variant v = var(SCORE_F32, SCORE_OK, 0.5, -3);

	CHECK(score_variant_r(&v, &pr, -4) == 0.1);    /* wrong at t <= 0 */
	CHECK(score_variant_r(&v, &pr, -3) == 0.25);   /* 0.5^(1+1) */
	CHECK(score_variant_r(&v, &pr, 4) == 0.25);
	v = var(SCORE_F32, SCORE_RUNTIME_ERROR, 0, SCORE_T_NEVER);
	CHECK(score_variant_r(&v, &pr, 1) == 0.1);     /* did not run: b at t >= 1 too */
	v = var(SCORE_F32, SCORE_MISMATCH, 0, SCORE_T_NEVER);
	CHECK(score_variant_r(&v, &pr, 0) == 0.1);
	CHECK(score_variant_r(&v, &pr, 1) == 1.0);
	/* a mismatch with a level is paid from it, exactly as given */
	v = var(SCORE_F32, SCORE_MISMATCH, 2.0, -2);
	CHECK(score_variant_r(&v, &pr, -3) == 0.1);
	CHECK(score_variant_r(&v, &pr, -2) == 2.0);
	CHECK(score_variant_r(&v, &pr, 3) == 2.0);
}

static void test_weights_and_aggregate(void)
{
	double sum = 0.0, agg = 0.0, s[3] = { 2.0, 0.5, 1.0 }, s2[2] = { 0.1, 1000.0 };

	for (int t = SCORE_T_MIN; t <= SCORE_T_MAX; t++)
		sum += score_weight(t);
	CHECK_NEAR(sum, 5.957424, 1e-12);
	CHECK(score_weight(-6) == 0.001 && score_weight(-5) == 1.0 && score_weight(-2) == 0.8);
	CHECK(score_weight(3) == 0.262144 && score_weight(4) == 0.001);
	CHECK(score_weight(5) == 0.0 && score_weight(-11) == 0.0);

	/* (2 * 0.5 * 1)^(1/3) = 1; (0.1 * 1000)^(1/2) = 10. */
	CHECK(score_aggregate(s, 3, &agg) == 0);
	CHECK_NEAR(agg, 1.0, 1e-12);
	CHECK(score_aggregate(s2, 2, &agg) == 0);
	CHECK_NEAR(agg, 10.0, 1e-12);
	CHECK(score_aggregate(s, 0, &agg) == -EINVAL);
	s[1] = 0.0;
	CHECK(score_aggregate(s, 3, &agg) == -EINVAL);
	s[1] = NAN;
	CHECK(score_aggregate(s, 3, &agg) == -EINVAL);

	/* summary.json's pair: over the tasks with a score, and over all with
	 * a missing one (NAN, 0) as b: (1.5 * 2)^(1/2); (1.5 * 0.1 * 0.1 * 2)^(1/4) */
	double t4[] = {1.5, NAN, 0.0, 2.0}, all = 0;
	int have = -1, have_all = -1;
	CHECK(score_aggregates(t4, 4, 0.1, &agg, &have, &all, &have_all) == 2);
	CHECK(have == 1 && have_all == 1);
	CHECK_NEAR(agg, sqrt(3.0), 1e-12);
	CHECK_NEAR(all, pow(0.03, 0.25), 1e-12);
	double none[] = {NAN, 0.0};
	CHECK(score_aggregates(none, 2, 0.1, &agg, &have, &all, &have_all) == 0);
	CHECK(have == 0 && have_all == 1);
	CHECK_NEAR(all, 0.1, 1e-12);
	CHECK(score_aggregates(none, 0, 0.1, &agg, &have, &all, &have_all) == 0 && have == 0 && have_all == 0);
}

static void test_check_input(void)
{
	struct score_variant v[1];
	struct score_input in = { .params = { .b = 0.1, .p = 0 }, .n_variants = 1, .variants = v };
	struct score_result r;
	char err[256];

	v[0] = var(SCORE_F32, SCORE_OK, 1.5, -5);
	CHECK(score_check_input(&in, err, sizeof err) == 0);
	in.params.b = 0.0;
	CHECK(score_compute(&in, &r, err, sizeof err) == -EINVAL && strstr(err, "b must be"));
	in.params.b = 1.5;
	CHECK(score_check_input(&in, err, sizeof err) == -EINVAL);
	in.params.b = 1.0;
	CHECK(score_check_input(&in, err, sizeof err) == 0);
	in.params.p = -1;
	CHECK(score_check_input(&in, err, sizeof err) == -EINVAL && strstr(err, "p must be"));
	in.params.p = 0;
	v[0].speedup = 0;
	CHECK(score_check_input(&in, err, sizeof err) == -EINVAL && strstr(err, "variants[0]"));
	v[0] = var(SCORE_F32, SCORE_OK, 1.5, 5);
	CHECK(score_check_input(&in, err, sizeof err) == -EINVAL && strstr(err, "min_t"));
	/* a mismatch may carry a level (close only from -2 or -1: paid from
	 * there), and then needs its speedup; other failures have none */
	v[0] = var(SCORE_F32, SCORE_MISMATCH, 1.5, -2);
	CHECK(score_check_input(&in, err, sizeof err) == 0);
	v[0] = var(SCORE_F32, SCORE_MISMATCH, 0, -2);
	CHECK(score_check_input(&in, err, sizeof err) == -EINVAL && strstr(err, "mismatch") && strstr(err, "speedup"));
	v[0] = var(SCORE_F32, SCORE_RUNTIME_ERROR, 1.5, -3);
	CHECK(score_check_input(&in, err, sizeof err) == -EINVAL && strstr(err, "runtime_error has no passing level"));
	v[0] = var(SCORE_DTYPE_INVALID, SCORE_OK, 1.5, -3);
	CHECK(score_check_input(&in, err, sizeof err) == -EINVAL && strstr(err, "dtype"));
	in.n_variants = 0;
	CHECK(score_check_input(&in, err, sizeof err) == -EINVAL);
}

/* ---- tolerances and closeness ------------------------------------------ */

static void check_tol(enum score_dtype dt, int t, double want_atol, double want_rtol, int line)
{
	double atol = -1, rtol = -1;
	int rc = score_tolerance(dt, t, &atol, &rtol);

	/* Relative, to the 7 digits written below: values span 1e-14 .. 25. */
	if (rc == 0 && fabs(atol - want_atol) <= 1e-7 * want_atol &&
	    fabs(rtol - want_rtol) <= 1e-7 * want_rtol) {
		n_pass++;
	} else {
		n_fail++;
		fprintf(stderr, "%s:%d: FAILED: tolerance(%s, %d) = rc %d, atol %.9g, rtol %.9g; "
			"want atol %.9g, rtol %.9g\n", __FILE__, line, score_dtype_name(dt), t,
			rc, atol, rtol, want_atol, want_rtol);
	}
}

static void test_tolerance_table(void)
{
	double a = 7, r = 7;

	/* float32: atol 10^t, rtol 10^(1.1772 t); t = -5 gives PyTorch's
	 * float32 defaults (1e-5, 1.3e-6). */
	check_tol(SCORE_F32, -10, 1e-10, 1.69044093e-12, __LINE__);
	check_tol(SCORE_F32, -5, 1e-5, 1.30016958e-06, __LINE__);
	check_tol(SCORE_F32, -2, 1e-2, 4.42180921e-03, __LINE__);
	check_tol(SCORE_F32, 0, 1.0, 1.0, __LINE__);
	check_tol(SCORE_F32, 1, 10.0, 15.0383435, __LINE__);
	check_tol(SCORE_F32, 4, 10.0, 15.0383435, __LINE__);       /* t >= 1: as t = 1 */
	/* float16: rtol 10^(0.6 t) */
	check_tol(SCORE_F16, -5, 1e-5, 1e-3, __LINE__);
	check_tol(SCORE_F16, -3, 1e-3, 1.58489319e-02, __LINE__);
	check_tol(SCORE_F16, 2, 10.0, 3.98107171, __LINE__);
	/* bfloat16: rtol 10^(0.3592 t) */
	check_tol(SCORE_BF16, -3, 1e-3, 8.36372992e-02, __LINE__);
	check_tol(SCORE_BF16, -10, 1e-10, 2.55858589e-04, __LINE__);
	check_tol(SCORE_BF16, 3, 10.0, 2.2866516, __LINE__);
	/* float64: atol = rtol = 10^(1.4 t) */
	check_tol(SCORE_F64, -5, 1e-7, 1e-7, __LINE__);
	check_tol(SCORE_F64, -10, 1e-14, 1e-14, __LINE__);
	check_tol(SCORE_F64, 4, 25.1188643, 25.1188643, __LINE__);
	/* integers and bools: exact at every t */
	for (int t = SCORE_T_MIN; t <= SCORE_T_MAX; t++) {
		CHECK(score_tolerance(SCORE_I64, t, &a, &r) == 0 && a == 0 && r == 0);
		CHECK(score_tolerance(SCORE_BOOL, t, &a, &r) == 0 && a == 0 && r == 0);
	}
	a = r = 7;
	CHECK(score_tolerance(SCORE_F32, 5, &a, &r) == -EINVAL && a == 7 && r == 7);
	CHECK(score_tolerance(SCORE_F32, -11, &a, &r) == -EINVAL);
	CHECK(score_tolerance(SCORE_DTYPE_INVALID, 0, &a, &r) == -EINVAL);
}

/* What min_t relies on: tolerances never shrink as t grows. */
static void test_tolerance_monotone(void)
{
	for (int dt = 0; dt < SCORE_DTYPE_COUNT; dt++) {
		double pa = -1, pr = -1;

		for (int t = SCORE_T_MIN; t <= SCORE_T_MAX; t++) {
			double a, r;

			CHECK(score_tolerance((enum score_dtype)dt, t, &a, &r) == 0);
			CHECK(a >= pa && r >= pr);
			pa = a;
			pr = r;
		}
	}
}

/* The verdict table: every row complete and consistent, and every verdict a
 * user can see documented in docs/result-format.md (the test runs from the
 * repository root).  A new verdict is one row; this says what else it needs. */
static void test_verdict_table(void)
{
	char *doc = NULL;
	FILE *f = fopen("docs/result-format.md", "r");
	if (f) {
		size_t cap = 1 << 20;
		doc = calloc(1, cap + 1);
		if (doc)
			fread(doc, 1, cap, f);
		fclose(f);
	}
	CHECK(doc != NULL);
	for (int a = 0; a < SCORE_STATUS_COUNT; a++) {
		const struct score_status_info *ia = score_status_info((enum score_status)a);
		CHECK(ia != NULL && ia->name != NULL && ia->name[0]);
		if (ia == NULL || ia->name == NULL)
			continue;
		CHECK(score_status_parse(ia->name) == (enum score_status)a);
		CHECK(ia->ran == (a == SCORE_OK || a == SCORE_MISMATCH));
		CHECK(a == SCORE_OK ? ia->rank == 0 : ia->rank > 0);
		for (int b = 0; b < a; b++)
			CHECK(score_status_info((enum score_status)b)->rank != ia->rank);
		if (a != SCORE_PASS_MISS) {
			char quoted[64];
			snprintf(quoted, sizeof quoted, "| `%s` |", ia->name);
			CHECK_MSG(ia->blurb != NULL && ia->blurb[0], ia->name);
			CHECK_MSG(doc == NULL || strstr(doc, quoted) != NULL, ia->name);
		}
	}
	CHECK(score_status_info(SCORE_STATUS_COUNT) == NULL && score_status_info(SCORE_STATUS_INVALID) == NULL);
	free(doc);
}

/* The element rule (score_close); the sweep over whole outputs that uses it
 * is eval_compare's, tested in test_eval_util.c. */
static void test_close(void)
{
	/* boundary: inclusive, |2 - 1| = 1 <= 0.5 + 0.5*|1| */
	CHECK(score_close(2.0, 1.0, 0.5, 0.5) == 1);
	CHECK(score_close(2.0, 1.0, 0.5, 0.49) == 0);
	/* rtol scales with |eager|: 0.1 off at -2 passes rtol 0.05 (0.1 <= 0.1) */
	CHECK(score_close(-2.1, -2.0, 0, 0.05 + 1e-12) == 1);
	CHECK(score_close(-2.1, -2.0, 0, 0.04) == 0);
	/* NaN where eager is NaN, nothing else; huge tolerances do not help */
	CHECK(score_close(NAN, NAN, 0, 0) == 1);
	CHECK(score_close(0.0, NAN, 1e300, 1e300) == 0);
	CHECK(score_close(NAN, 0.0, 1e300, 1e300) == 0);       /* NaN where eager is finite */
	CHECK(score_close(INFINITY, 0.0, 1e300, 1e300) == 0);  /* Inf where eager is finite */
	CHECK(score_close(-INFINITY, INFINITY, 1e300, 1e300) == 0);   /* wrong-signed Inf */
	CHECK(score_close(1e308, INFINITY, 1e300, 1e300) == 0);       /* finite where eager is Inf */
	CHECK(score_close(INFINITY, INFINITY, 0, 0) == 1 && score_close(-INFINITY, -INFINITY, 0, 0) == 1);
	CHECK(score_close(-0.0, 0.0, 0, 0) == 1);
}

/* ---- records ----------------------------------------------------------- */

/* Parses text; returns the rc and leaves the message in err. */
static int parse_text(const char *text, struct score_input *in, char *err, size_t errlen)
{
	json_error_t jerr;
	json_t *root = json_loads(text, 0, &jerr);
	int rc;

	if (!root) {
		snprintf(err, errlen, "test JSON invalid: %s", jerr.text);
		return -999;
	}
	rc = score_parse_records(root, in, err, errlen);
	json_decref(root);
	return rc;
}

static void test_parse_ok(void)
{
	struct score_input in;
	struct score_result r;
	char err[256] = "";
	int rc;

	rc = parse_text("{\"variants\": [{\"dtype\": \"float32\", \"speedup\": 1.5,"
			" \"status\": \"ok\", \"min_t\": -5}]}", &in, err, sizeof err);
	CHECK(rc == 0);
	if (rc == 0) {
		CHECK(in.n_variants == 1 && in.params.b == 0.1 && in.params.p == 0.0);
		CHECK(in.variants[0].dtype == SCORE_F32 && in.variants[0].min_t == -5);
		CHECK(score_compute(&in, &r, err, sizeof err) == 0);
		CHECK_NEAR(r.score, 1.496595, EPS6);
		score_input_free(&in);
		CHECK(in.variants == NULL && in.n_variants == 0);
	}

	rc = parse_text("{\"b\": 0.5, \"p\": 1, \"variants\": ["
			"{\"name\": \"a\", \"dtype\": \"bfloat16\", \"speedup\": 2, \"status\": \"ok\", \"min_t\": null},"
			"{\"dtype\": \"int64\", \"status\": \"timeout\"},"
			"{\"dtype\": \"float16\", \"speedup\": null, \"status\": \"mismatch\", \"min_t\": \"none\"},"
			"{\"dtype\": \"float64\", \"speedup\": 0.9, \"status\": \"ok\", \"min_t\": -3.0}]}",
			&in, err, sizeof err);
	CHECK(rc == 0);
	if (rc == 0) {
		CHECK(in.n_variants == 4 && in.params.b == 0.5 && in.params.p == 1.0);
		CHECK(in.variants[0].min_t == SCORE_T_NEVER && in.variants[0].speedup == 2.0);
		CHECK(in.variants[1].status == SCORE_TIMEOUT && in.variants[1].speedup == 0.0);
		CHECK(in.variants[2].status == SCORE_MISMATCH && in.variants[2].min_t == SCORE_T_NEVER);
		CHECK(in.variants[3].dtype == SCORE_F64 && in.variants[3].min_t == -3);
		score_input_free(&in);
	} else {
		fprintf(stderr, "  (parse failed: %s)\n", err);
	}
}

/* Each bad document must fail with -EINVAL and a message containing `want`. */
static void check_bad(const char *text, const char *want, int line)
{
	struct score_input in = { 0 };
	char err[256] = "";
	int rc = parse_text(text, &in, err, sizeof err);

	if (rc == -EINVAL && strstr(err, want) && in.variants == NULL) {
		n_pass++;
	} else {
		n_fail++;
		fprintf(stderr, "%s:%d: FAILED: rc %d, message '%s', want -EINVAL and '%s'\n",
			__FILE__, line, rc, err, want);
		score_input_free(&in);
	}
}

#define OKV "{\"dtype\": \"float32\", \"speedup\": 1.5, \"status\": \"ok\", \"min_t\": -5}"

static void test_parse_errors(void)
{
	check_bad("[]", "JSON object", __LINE__);
	check_bad("{}", "missing field \"variants\"", __LINE__);
	check_bad("{\"variants\": {}}", "must be an array", __LINE__);
	check_bad("{\"variants\": []}", "empty", __LINE__);
	check_bad("{\"variant\": [" OKV "]}", "unknown field \"variant\"", __LINE__);
	check_bad("{\"b\": 0, \"variants\": [" OKV "]}", "b must be in (0, 1]", __LINE__);
	check_bad("{\"b\": 1.5, \"variants\": [" OKV "]}", "b must be in (0, 1]", __LINE__);
	check_bad("{\"b\": \"x\", \"variants\": [" OKV "]}", "\"b\" must be a number", __LINE__);
	check_bad("{\"p\": -1, \"variants\": [" OKV "]}", "p must be", __LINE__);
	check_bad("{\"variants\": [" OKV ", 3]}", "variants[1]: must be an object", __LINE__);
	check_bad("{\"variants\": [" OKV ", {\"status\": \"ok\", \"speedup\": 1, \"min_t\": 0}]}",
		  "variants[1]: missing field \"dtype\"", __LINE__);
	check_bad("{\"variants\": [{\"dtype\": \"float8\", \"status\": \"ok\"}]}",
		  "variants[0]: unknown dtype 'float8'", __LINE__);
	check_bad("{\"variants\": [{\"dtype\": \"float32\"}]}",
		  "missing field \"status\"", __LINE__);
	check_bad("{\"variants\": [{\"name\": \"f16_b8\", \"dtype\": \"float32\", \"status\": \"great\"}]}",
		  "variants[0] ('f16_b8'): unknown status 'great'", __LINE__);
	check_bad("{\"variants\": [{\"dtype\": \"float32\", \"status\": \"ok\", \"min_t\": 0}]}",
		  "needs field \"speedup\"", __LINE__);
	check_bad("{\"variants\": [{\"dtype\": \"float32\", \"status\": \"ok\", \"speedup\": 0, \"min_t\": 0}]}",
		  "speedup must be > 0", __LINE__);
	check_bad("{\"variants\": [{\"dtype\": \"float32\", \"status\": \"ok\", \"speedup\": -2, \"min_t\": 0}]}",
		  "speedup must be > 0 (got -2)", __LINE__);
	check_bad("{\"variants\": [{\"dtype\": \"float32\", \"status\": \"ok\", \"speedup\": \"2\", \"min_t\": 0}]}",
		  "speedup must be a number", __LINE__);
	check_bad("{\"variants\": [{\"dtype\": \"float32\", \"status\": \"ok\", \"speedup\": 2}]}",
		  "needs field \"min_t\"", __LINE__);
	check_bad("{\"variants\": [{\"dtype\": \"float32\", \"status\": \"ok\", \"speedup\": 2, \"min_t\": 5}]}",
		  "min_t must be an integer in -10..4, or null (got 5)", __LINE__);
	check_bad("{\"variants\": [{\"dtype\": \"float32\", \"status\": \"ok\", \"speedup\": 2, \"min_t\": -11}]}",
		  "(got -11)", __LINE__);
	check_bad("{\"variants\": [{\"dtype\": \"float32\", \"status\": \"ok\", \"speedup\": 2, \"min_t\": -2.5}]}",
		  "(got -2.5)", __LINE__);
	check_bad("{\"variants\": [{\"dtype\": \"float32\", \"status\": \"ok\", \"speedup\": 2, \"min_t\": \"-2\"}]}",
		  "(got a string)", __LINE__);
	check_bad("{\"variants\": [{\"dtype\": \"float32\", \"status\": \"mismatch\", \"min_t\": -2}]}",
		  "status mismatch with a min_t needs field \"speedup\"", __LINE__);
	check_bad("{\"variants\": [{\"dtype\": \"float32\", \"status\": \"rejected\", \"min_t\": -2}]}",
		  "status rejected has no passing level", __LINE__);
	check_bad("{\"variants\": [" OKV ", {\"dtype\": \"float32\", \"status\": \"ok\", \"speedup\": 2, "
		  "\"min_t\": 0, \"min-t\": 1}]}", "variants[1]: unknown field \"min-t\"", __LINE__);
	check_bad("{\"variants\": [{\"name\": 3, \"dtype\": \"float32\", \"status\": \"timeout\"}]}",
		  "name must be a string", __LINE__);
}

static void test_names(void)
{
	for (int i = 0; i < SCORE_DTYPE_COUNT; i++)
		CHECK(score_dtype_parse(score_dtype_name((enum score_dtype)i)) == i);
	for (int i = 0; i < SCORE_STATUS_COUNT; i++)
		CHECK(score_status_parse(score_status_name((enum score_status)i)) == i);
	CHECK(score_dtype_parse("float") == SCORE_DTYPE_INVALID);
	CHECK(score_dtype_parse(NULL) == SCORE_DTYPE_INVALID);
	CHECK(score_status_parse("OK") == SCORE_STATUS_INVALID);
	CHECK(score_dtype_name(SCORE_DTYPE_COUNT) == NULL);
	CHECK(score_status_name(SCORE_STATUS_INVALID) == NULL);
	CHECK(score_status_ran(SCORE_OK) && score_status_ran(SCORE_MISMATCH));
	CHECK(!score_status_ran(SCORE_REJECTED) && !score_status_ran(SCORE_PASS_MISS));
}

int main(void)
{
	test_design_check_values();
	test_derived_values();
	test_variant_r();
	test_weights_and_aggregate();
	test_check_input();
	test_tolerance_table();
	test_tolerance_monotone();
	test_close();
	test_verdict_table();
	test_parse_ok();
	test_parse_errors();
	test_names();
	printf("%d passed, %d failed\n", n_pass, n_fail);
	return n_fail != 0;
}
