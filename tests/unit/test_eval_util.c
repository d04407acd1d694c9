/* test_eval_util.c - what the evaluator compares with (eval_compare: the level
 * an output is close from, in one sweep checked against score_close at every
 * level, and its worst element) and the input generator's
 * std floor (no float input of more than one element is ever constant), its
 * bytes with any number of threads, and its distribution; and that the
 * sweeps split among threads answer as one sweep does. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "eval_util.h"
#include "graph.h"
#include "inputs.h"

/* min_t, the smallest passing level, from one sweep (eval_compare, what the
 * evaluator runs): each case worked out by hand against docs/scoring.md's
 * table. */
static void test_min_t(void)
{
	struct eval_cmp c;
	float ef[3] = {1.0f, 2.0f, 3.0f}, pf[3];
	double e[3] = {1.0, 2.0, 3.0}, p[3];

	/* identical: every level, so the lowest; no elements: the lowest */
	eval_compare(DT_F32, ef, ef, 3, &c);
	CHECK(c.min_t == SCORE_T_MIN);
	eval_compare(DT_F32, ef, ef, 0, &c);
	CHECK(c.min_t == SCORE_T_MIN && c.worst_at == -1);
	/* +1e-4 everywhere, float32: t = -5 allows 1e-5 + 1.3e-6*3 = 1.4e-5 (no);
	 * t = -4 allows 1e-4 + 1.95e-5*1 (yes), so min_t = -4 */
	for (int i = 0; i < 3; i++) {
		pf[i] = ef[i] + 1e-4f;
		p[i] = e[i] + 1e-4;
	}
	eval_compare(DT_F32, pf, ef, 3, &c);
	CHECK(c.min_t == -4);
	/* the same error in float64, binding at eager = 1: t = -3 allows
	 * 10^-4.2*(1+1) = 1.26e-4 (yes), t = -4 allows 10^-5.6*(1+1) = 5e-6
	 * (no): min_t = -3 */
	eval_compare(DT_F64, p, e, 3, &c);
	CHECK(c.min_t == -3);
	/* 5 off at eager 1, float32: t = 0 allows 1 + 1 = 2 (no), t = 1 allows
	 * 10 + 15.04 (yes): min_t = 1; 100 off: past even t = 1's 25.04: never */
	float q[3] = {6.0f, 2.0f, 3.0f};
	eval_compare(DT_F32, q, ef, 3, &c);
	CHECK(c.min_t == 1);
	q[0] = 101.0f;
	eval_compare(DT_F32, q, ef, 3, &c);
	CHECK(c.min_t == INT32_MAX && c.first_bad == 0);
	/* float16, 0.01 off at eager 3 (the worst element decides wherever it
	 * sits): t = -4 allows 1e-4 + 10^-2.4*3 = 0.0121 (yes), t = -5 allows
	 * 1e-5 + 1e-3*3 = 0.003 (no): min_t = -4.  3 and 3.01 are exact enough
	 * in float16 (spacing 2^-9 at 3: 3.01 rounds to 3.009765625) */
	uint16_t hp[3], he[3];
	for (int i = 0; i < 3; i++)
		hp[i] = he[i] = inputs_f32_to_f16(ef[i]);
	hp[2] = inputs_f32_to_f16(3.01f);
	eval_compare(DT_F16, hp, he, 3, &c);
	CHECK(c.min_t == -4 && c.worst_at == 2);
	/* integers: equal or never */
	int64_t ie[3] = {1, 2, 3}, ip[3] = {1, 2, 3};
	eval_compare(DT_I64, ip, ie, 3, &c);
	CHECK(c.min_t == SCORE_T_MIN);
	/* int64 past 2^53, where doubles would merge the two values */
	ie[0] = (1LL << 60) + 1;
	ip[0] = (1LL << 60);
	eval_compare(DT_I64, ip, ie, 3, &c);
	CHECK(c.min_t == INT32_MAX && c.first_bad == 0);
	int32_t je[3] = {1, 2, 3}, jp[3] = {1, 2, 4};
	eval_compare(DT_I32, jp, je, 3, &c);
	CHECK(c.min_t == INT32_MAX);
	/* NaN/Inf must match at every level (bfloat16 bit patterns) */
	uint16_t be[3] = {0x7fc0, 0x7f80, inputs_f32_to_bf16(3.0f)}, bp[3];
	memcpy(bp, be, sizeof bp);
	eval_compare(DT_BF16, bp, be, 3, &c);
	CHECK(c.min_t == SCORE_T_MIN);
	bp[1] = 0xff80;         /* -Inf where eager is +Inf */
	eval_compare(DT_BF16, bp, be, 3, &c);
	CHECK(c.min_t == INT32_MAX && c.first_bad == 1);
}

/* A tiny LCG so the cross-check is reproducible without global state. */
static double lcg_unit(unsigned long long *s)
{
	*s = *s * 6364136223846793005ULL + 1442695040888963407ULL;
	return (double)(*s >> 11) / 9007199254740992.0;    /* [0, 1) */
}

/* The one-sweep search must agree with score_close tried at every level on
 * every element, for float32 and float64 outputs over 12 orders of error. */
static void test_min_t_matches_bruteforce(void)
{
	unsigned long long seed = 123;
	double e[64], p[64];
	float ef[64], pf[64];
	for (int trial = 0; trial < 400; trial++) {
		int f32 = trial % 2;
		enum graph_dtype dt = f32 ? DT_F32 : DT_F64;
		double scale = pow(10.0, -12.0 + 14.0 * lcg_unit(&seed));
		for (int i = 0; i < 64; i++) {
			e[i] = (lcg_unit(&seed) - 0.5) * 20.0;
			p[i] = e[i] + (lcg_unit(&seed) < 0.3 ? (lcg_unit(&seed) - 0.5) * scale : 0.0);
			ef[i] = (float)e[i];
			pf[i] = (float)p[i];
		}
		int want = INT32_MAX;
		for (int t = SCORE_T_MAX; t >= SCORE_T_MIN; t--) {
			double a, r;
			int all = 1;
			score_tolerance(f32 ? SCORE_F32 : SCORE_F64, t, &a, &r);
			for (int i = 0; i < 64 && all; i++)
				all = f32 ? score_close(pf[i], ef[i], a, r) : score_close(p[i], e[i], a, r);
			if (all)
				want = t;
		}
		struct eval_cmp c;
		eval_compare(dt, f32 ? (const void *)pf : (const void *)p, f32 ? (const void *)ef : (const void *)e, 64, &c);
		CHECK(c.min_t == want);
	}
}

static void test_levels_and_worst(void)
{
	struct eval_cmp c;
	float e[6] = {1.0f, -2.0f, 0.5f, 3.0f, 0.0f, 10.0f};
	float p[6];
	memcpy(p, e, sizeof p);
	eval_compare(DT_F32, p, e, 6, &c);
	CHECK(c.min_t == -10 && c.first_bad == -1 && c.poison_at == -1);
	CHECK(c.worst_at >= 0 && c.worst_excess == 0);

	/* element 3 off by 1e-3 (relative 3.3e-4), element 5 by 1e-2 (1e-3):
	 * element 5 sets the level, and is the worst there */
	p[3] = 3.001f;
	p[5] = 10.01f;
	eval_compare(DT_F32, p, e, 6, &c);
	int t5 = c.min_t;
	CHECK(c.worst_at == 5 && c.worst_pass == p[5] && c.worst_eager == 10.0 && c.worst_excess > 1);
	p[5] = 10.0f;
	eval_compare(DT_F32, p, e, 6, &c);
	CHECK(c.min_t < t5 && c.worst_at == 3);

	/* all zeros against eager: close only from t = 0 (atol 1 accepts any
	 * |eager| <= 1 + |eager|); the worst element at t = -1 is the largest */
	float z[6] = {0};
	eval_compare(DT_F32, z, e, 6, &c);
	CHECK(c.min_t == 0 && c.worst_at == 5 && c.worst_eager == 10.0);

	/* a NaN where eager is finite: never close, worst is that element */
	memcpy(p, e, sizeof p);
	p[2] = NAN;
	eval_compare(DT_F32, p, e, 6, &c);
	CHECK(c.min_t == INT32_MAX && c.first_bad == 2 && c.worst_at == 2 && isinf(c.worst_excess));

	/* a later, further element at the same level replaces an earlier one */
	memcpy(p, e, sizeof p);
	p[0] = 1.5f;            /* |d| 0.5 at |e| 1 */
	p[3] = 4.5f;            /* |d| 1.5 at |e| 3 */
	eval_compare(DT_F32, p, e, 6, &c);
	CHECK(c.worst_at == 3);

	/* integers: equal or never */
	int64_t ie[3] = {1, 2, 3}, ip[3] = {1, 2, 4};
	eval_compare(DT_I64, ip, ie, 3, &c);
	CHECK(c.min_t == INT32_MAX && c.worst_at == 2 && c.worst_pass == 4 && c.worst_eager == 3);

	/* the poison: no worst element */
	eval_fill_poison(p, DT_F32, 6);
	eval_compare(DT_F32, p, e, 6, &c);
	CHECK(c.poison_at == 0 && c.worst_at == -1);
}

/* The level from which a constant output would be close (eval_blind_t). */
static void test_blind(void)
{
	float e[64];
	/* tanh of small activations: every |y| <= 0.1, so zeros pass at t = -1 */
	for (int i = 0; i < 64; i++)
		e[i] = 0.09f * sinf((float)i);
	CHECK(eval_blind_t(DT_F32, e, 64) == -1);
	/* a near-uniform softmax row: 1/128 +- 0.5%, the middle of the range is
	 * close at a tight level although zeros are not */
	for (int i = 0; i < 64; i++)
		e[i] = (1.0f / 128) * (1.0f + 0.005f * sinf((float)i));
	CHECK(eval_blind_t(DT_F32, e, 64) <= -4);
	/* values spread over [-3, 3]: no constant is close at t <= -1 */
	for (int i = 0; i < 64; i++)
		e[i] = 3.0f * sinf((float)i);
	CHECK(eval_blind_t(DT_F32, e, 64) >= 0);
	/* NaN in eager: no constant matches it */
	e[5] = NAN;
	CHECK(eval_blind_t(DT_F32, e, 64) == INT32_MAX);
	/* integers, and a single element: nothing to tell apart */
	int64_t ie[4] = {1, 2, 3, 4};
	CHECK(eval_blind_t(DT_I64, ie, 4) == INT32_MAX);
	CHECK(eval_blind_t(DT_F32, e, 1) == INT32_MAX);
}

static void test_std_floor(void)
{
	struct graph_input_gen g = {0};
	int fl;
	/* weight_meta's "std = 0.000": floored to 0.1 (mean 0) */
	g.has_std = 1;
	g.std = 0.0;
	CHECK(inputs_std(&g, DT_F32, 100, &fl) == 0.1 && fl);
	/* one element: left alone (a scalar is allowed to be what it is) */
	CHECK(inputs_std(&g, DT_F32, 1, &fl) == 0.0 && !fl);
	/* printed non-zero and spread enough in float32: PassNet's std */
	g.std = 0.001;
	CHECK(inputs_std(&g, DT_F32, 100, &fl) == 0.001 && !fl);
	/* the same std at mean 1 in bfloat16 would round to one or two
	 * values: floored, and proportional to the mean when it is large */
	g.has_mean = 1;
	g.mean = 1.0;
	CHECK(inputs_std(&g, DT_BF16, 100, &fl) == 0.1 && fl);
	g.mean = -40.0;
	g.std = 0.0;
	CHECK(fabs(inputs_std(&g, DT_F16, 100, &fl) - 2.0) < 1e-12 && fl);
	/* integer dtypes and literal data: untouched */
	CHECK(inputs_std(&g, DT_I64, 100, &fl) == 0.0 && !fl);
}

/* Every float input with std 0 comes out with many distinct values, in every
 * float dtype, on both the public and another seed. */
static void test_generated_spread(void)
{
	static const char *const dts[] = {"float32", "float16", "bfloat16"};
	for (int d = 0; d < 3; d++) {
		char text[1024], err[256];
		snprintf(text, sizeof text,
			 "{\"id\": \"spread\", \"summary\": \"s\", \"variants\": [{\"name\": \"v\", \"inputs\": ["
			 "{\"name\": \"a\", \"shape\": [4096], \"dtype\": \"%s\", \"mean\": 0.0, \"std\": 0.0},"
			 "{\"name\": \"b\", \"shape\": [4096], \"dtype\": \"%s\", \"mean\": 7.5, \"std\": 0.001}],"
			 "\"nodes\": [{\"name\": \"t0\", \"op\": \"add\", \"inputs\": [\"a\", \"b\"]}],"
			 "\"outputs\": [\"t0\"]}]}", dts[d], dts[d]);
		struct graph_task *t;
		if (graph_load_buffer("spread", text, strlen(text), &t, err, sizeof err)) {
			CHECK_MSG(0, err);
			continue;
		}
		const struct graph_variant *v = &t->variants[0];
		uint64_t seeds[2] = {INPUTS_PUBLIC_SEED, 0x5eed};
		for (int s = 0; s < 2; s++) {
			void *bufs[2];
			CHECK(inputs_generate(v, seeds[s], bufs, err, sizeof err) == 0);
			for (int i = 0; i < 2; i++) {
				size_t esz = graph_dtype_size(v->values[i].dtype), distinct = 0;
				/* count distinct values among the first 256 */
				for (size_t k = 0; k < 256; k++) {
					int seen = 0;
					for (size_t j = 0; j < k && !seen; j++)
						seen = memcmp((char *)bufs[i] + k * esz, (char *)bufs[i] + j * esz, esz) == 0;
					distinct += !seen;
				}
				char msg[96];
				snprintf(msg, sizeof msg, "%s input %d: %zu distinct of 256", dts[d], i, distinct);
				CHECK_MSG(distinct >= 8, msg);
			}
			inputs_free(bufs, 2);
		}
		graph_task_free(t);
	}
}

/* Long outputs that mostly match eager bit for bit (what a correct pass
 * gives): eval_compare skips stretches of equal elements; its answer must
 * still be the element-by-element one - the level, the errors, the first
 * failing element, the worst element's excess - and a poison value inside
 * a stretch equal to eager's is still found. */
static void test_equal_stretches(void)
{
	enum { N = 5000 };
	static float e[N], p[N];
	unsigned long long seed = 77;
	for (int trial = 0; trial < 60; trial++) {
		for (int i = 0; i < N; i++)
			e[i] = p[i] = (float)((lcg_unit(&seed) - 0.5) * 8.0);
		/* a few differences, somewhere, of varied size */
		int nd = trial % 6;
		for (int k = 0; k < nd; k++) {
			int at = (int)(lcg_unit(&seed) * N) % N;
			p[at] = e[at] + (float)(e[at] * pow(10.0, -7.0 + 6.0 * lcg_unit(&seed)));
		}
		struct eval_cmp c;
		eval_compare(DT_F32, p, e, N, &c);
		int want = SCORE_T_NEVER;
		for (int t = SCORE_T_MAX; t >= SCORE_T_MIN; t--) {
			double a, r;
			int all = 1;
			score_tolerance(SCORE_F32, t, &a, &r);
			for (int i = 0; i < N && all; i++)
				all = score_close(p[i], e[i], a, r);
			if (all)
				want = t;
		}
		double mabs = 0, mrel = 0;
		for (int i = 0; i < N; i++) {
			double d = fabs((double)p[i] - e[i]);
			mabs = d > mabs ? d : mabs;
			if (e[i] != 0 && d / fabs(e[i]) > mrel)
				mrel = d / fabs(e[i]);
		}
		CHECK(c.min_t == want);
		CHECK(c.max_abs == mabs && c.max_rel == mrel);
		CHECK(c.poison_at == -1 && c.worst_at >= 0 && c.worst_at < N);
		/* the worst element's excess is the largest at its level */
		int lvl = want == SCORE_T_NEVER ? SCORE_T_MAX : want > SCORE_T_MIN ? want - 1 : SCORE_T_MIN;
		double a, r, best = 0;
		score_tolerance(SCORE_F32, lvl, &a, &r);
		for (int i = 0; i < N; i++) {
			double q = fabs((double)p[i] - e[i]) / (a + r * fabs(e[i]));
			best = q > best ? q : best;
		}
		if (c.worst_at >= 0) {
			double q = fabs((double)p[c.worst_at] - e[c.worst_at]) / (a + r * fabs(e[c.worst_at]));
			CHECK(q == best && q == c.worst_excess);
		}
	}
	/* the poison, in a stretch where eager holds the same bits */
	uint32_t poison = 0x7fa5a5a5u;
	for (int i = 0; i < N; i++)
		e[i] = p[i] = (float)i;
	memcpy(&p[3000], &poison, 4);
	memcpy(&e[3000], &poison, 4);
	struct eval_cmp c;
	eval_compare(DT_F32, p, e, N, &c);
	CHECK(c.poison_at == 3000 && c.min_t == SCORE_T_NEVER);
}

/* A variant whose inputs span several of the generator's 65536-element
 * runs (and a ragged last one), in each float dtype and int64 and bool. */
static struct graph_task *gen_task(void)
{
	static const char text[] =
		"{\"id\": \"gen\", \"summary\": \"s\", \"variants\": [{\"name\": \"v\", \"inputs\": ["
		"{\"name\": \"a\", \"shape\": [1000003], \"dtype\": \"float32\", \"mean\": 2.0, \"std\": 5.0},"
		"{\"name\": \"b\", \"shape\": [300001], \"dtype\": \"float16\", \"mean\": 0.0, \"std\": 5.0},"
		"{\"name\": \"c\", \"shape\": [300001], \"dtype\": \"bfloat16\", \"mean\": -1.0, \"std\": 5.0},"
		"{\"name\": \"d\", \"shape\": [200001], \"dtype\": \"int64\", \"min\": -3, \"max\": 3},"
		"{\"name\": \"e\", \"shape\": [200001], \"dtype\": \"bool\"}],"
		"\"nodes\": [{\"name\": \"t0\", \"op\": \"add\", \"inputs\": [\"a\", \"a\"]}],"
		"\"outputs\": [\"t0\", \"b\", \"c\", \"d\", \"e\"]}]}";
	struct graph_task *t;
	char err[256];
	if (graph_load_buffer("gen", text, strlen(text), &t, err, sizeof err)) {
		CHECK_MSG(0, err);
		return NULL;
	}
	return t;
}

/* Inputs are generated in runs of 65536 elements, each from its own stream,
 * shared out among threads: the bytes are the same with 1, 2, 3 or 8
 * threads, on the public seed and another. */
static void test_generation_threads(void)
{
	struct graph_task *t = gen_task();
	if (t == NULL)
		return;
	const struct graph_variant *v = &t->variants[0];
	static const int threads[] = {1, 2, 3, 8};
	uint64_t seeds[2] = {INPUTS_PUBLIC_SEED, 0x5eed};
	char err[256];
	for (int s = 0; s < 2; s++) {
		void *ref[5];
		inputs_set_threads(1);
		CHECK(inputs_generate(v, seeds[s], ref, err, sizeof err) == 0);
		for (int k = 1; k < 4; k++) {
			void *got[5];
			inputs_set_threads(threads[k]);
			CHECK(inputs_generate(v, seeds[s], got, err, sizeof err) == 0);
			for (int i = 0; i < v->n_inputs; i++) {
				size_t bytes = (size_t)graph_shape_numel(&v->values[i].shape) *
					       graph_dtype_size(v->values[i].dtype);
				char msg[96];
				snprintf(msg, sizeof msg, "input %d: %d threads differ from 1", i, threads[k]);
				CHECK_MSG(memcmp(ref[i], got[i], bytes) == 0, msg);
			}
			inputs_free(got, 5);
		}
		/* inputs_fill into given buffers: the same bytes as well */
		void *into[5];
		for (int i = 0; i < v->n_inputs; i++)
			into[i] = calloc((size_t)graph_shape_numel(&v->values[i].shape), graph_dtype_size(v->values[i].dtype));
		inputs_set_threads(2);
		inputs_fill(v, seeds[s], into);
		for (int i = 0; i < v->n_inputs; i++) {
			size_t bytes = (size_t)graph_shape_numel(&v->values[i].shape) * graph_dtype_size(v->values[i].dtype);
			CHECK(memcmp(ref[i], into[i], bytes) == 0);
		}
		inputs_free(into, 5);
		inputs_free(ref, 5);
	}
	inputs_set_threads(0);
	graph_task_free(t);
}

/* The float draws are randn * std * 0.2 + mean: over 1M (float32) and 300k
 * (16-bit) draws the mean, the standard deviation, the fourth moment and
 * the share beyond 1, 2 and 3 sigma are the normal distribution's, within a
 * few standard errors; ints cover [min, max] evenly, bools are half true. */
static void test_generation_moments(void)
{
	struct graph_task *t = gen_task();
	if (t == NULL)
		return;
	const struct graph_variant *v = &t->variants[0];
	void *b[5];
	char err[256];
	CHECK(inputs_generate(v, INPUTS_PUBLIC_SEED, b, err, sizeof err) == 0);
	static const double means[3] = {2.0, 0.0, -1.0};
	for (int i = 0; i < 3; i++) {
		size_t n = (size_t)graph_shape_numel(&v->values[i].shape);
		double s = 0, s2 = 0, s4 = 0, beyond[3] = {0, 0, 0};
		for (size_t k = 0; k < n; k++) {
			double x = i == 0 ? ((float *)b[0])[k]
				 : i == 1 ? inputs_f16_to_f32(((uint16_t *)b[1])[k]) : inputs_bf16_to_f32(((uint16_t *)b[2])[k]);
			double z = x - means[i];        /* std 5 * 0.2: sigma 1 */
			s += z;
			s2 += z * z;
			s4 += z * z * z * z;
			for (int q = 0; q < 3; q++)
				beyond[q] += fabs(z) > q + 1;
		}
		double m = s / n, var = s2 / n - m * m, kurt = s4 / n / (var * var);
		/* bfloat16 keeps 8 bits: sigma-scale rounding moves the tails a little */
		double tol = i == 2 ? 3e-3 : 1e-3;
		static const double p[3] = {0.3173105, 0.0455003, 0.0026998};
		char msg[200];
		snprintf(msg, sizeof msg, "input %d: mean %g sd %g kurtosis %g, beyond 1/2/3 sigma %g %g %g", i, m, sqrt(var),
			 kurt, beyond[0] / n, beyond[1] / n, beyond[2] / n);
		CHECK_MSG(fabs(m) < 5.0 / sqrt((double)n) && fabs(sqrt(var) - 1) < 0.01 && fabs(kurt - 3) < 0.05, msg);
		for (int q = 0; q < 3; q++)
			CHECK_MSG(fabs(beyond[q] / n - p[q]) < tol + 5 * sqrt(p[q] / n), msg);
	}
	size_t n = (size_t)graph_shape_numel(&v->values[3].shape), count[7] = {0}, trues = 0, ok = 1;
	for (size_t k = 0; k < n; k++) {
		int64_t x = ((int64_t *)b[3])[k];
		ok &= x >= -3 && x <= 3;
		if (x >= -3 && x <= 3)
			count[x + 3]++;
		trues += ((uint8_t *)b[4])[k];
	}
	CHECK(ok);
	for (int q = 0; q < 7; q++)
		CHECK(fabs((double)count[q] / n - 1.0 / 7) < 0.005);
	CHECK(fabs((double)trues / n - 0.5) < 0.005);
	inputs_free(b, 5);
	graph_task_free(t);
}

/* Large buffers are swept by several threads in parts (eval_set_threads):
 * every answer - the level, the errors, the first element failing
 * everywhere, the worst element with ties to the first, the first poison,
 * the constant's level, byte equality - is the one thread's, with
 * differences placed in different parts, on part edges and in ties. */
/* equal, NaN to NaN included */
static int same_d(double a, double b)
{
	return a == b || (isnan(a) && isnan(b));
}

static void cmp_equal(const struct eval_cmp *a, const struct eval_cmp *b, const char *what)
{
	char msg[200];
	snprintf(msg, sizeof msg, "%s: min_t %d/%d worst %lld/%lld excess %g/%g first_bad %lld/%lld poison %lld/%lld", what,
		 a->min_t, b->min_t, a->worst_at, b->worst_at, a->worst_excess, b->worst_excess, a->first_bad, b->first_bad,
		 a->poison_at, b->poison_at);
	int same = a->min_t == b->min_t && a->poison_at == b->poison_at && a->worst_at == b->worst_at;
	if (same && a->poison_at < 0)
		same = a->first_bad == b->first_bad && a->max_abs == b->max_abs && a->max_rel == b->max_rel &&
		       (a->worst_at < 0 || (a->worst_excess == b->worst_excess && same_d(a->worst_pass, b->worst_pass) &&
					    same_d(a->worst_eager, b->worst_eager))) &&
		       (a->first_bad < 0 || (same_d(a->bad_pass, b->bad_pass) && same_d(a->bad_eager, b->bad_eager)));
	CHECK_MSG(same, msg);
}

static void test_parallel_sweeps(void)
{
	enum { N = (1 << 20) + 12345 };
	float *e = malloc(sizeof(float) * N), *p = malloc(sizeof(float) * N);
	uint16_t *eb = malloc(2 * N), *pb = malloc(2 * N);
	int64_t *ei = malloc(8 * N), *pi = malloc(8 * N);
	if (!e || !p || !eb || !pb || !ei || !pi) {
		CHECK_MSG(0, "out of memory");
		return;
	}
	unsigned long long seed = 99;
	static const int threads[] = {2, 3, 8};
	for (int sc = 0; sc < 8; sc++) {
		for (int i = 0; i < N; i++) {
			e[i] = p[i] = (float)((lcg_unit(&seed) - 0.5) * 8.0);
			ei[i] = pi[i] = i % 1000;
		}
		/* the scenario's differences: none (0), small ones in several
		 * parts (1), on the edges of 2- and 3-part splits (2), a tie
		 * in two parts (3), a NaN late and a small one early (4), the
		 * poison late (5) and in two parts (6), an outlier at the end (7) */
		size_t at[4] = {10, N / 2 + 7, (size_t)N / 3, N - 5};
		uint32_t poison = 0x7fa5a5a5u;
		switch (sc) {
		case 1:
			for (int k = 0; k < 4; k++)
				p[at[k]] = e[at[k]] * (float)(1 + pow(10.0, -6.0 + k));
			pi[at[1]] += 1;
			break;
		case 2:
			p[N / 2] += 1e-3f, p[N / 2 - 1] += 1e-3f, p[N / 3] += 2e-3f, p[2 * (N / 3)] += 2e-3f;
			pi[N / 3] += 1, pi[N / 2] += 1;
			break;
		case 3:
			e[5] = e[N - 9] = 1.0f;
			p[5] = p[N - 9] = 1.001f;
			break;
		case 4:
			p[100] += 1e-4f;
			p[N - 100] = NAN;
			break;
		case 5:
			memcpy(&p[N - 3], &poison, 4);
			p[7] += 1.0f;
			break;
		case 6:
			memcpy(&p[N - 3], &poison, 4);
			memcpy(&p[N / 3 + 1], &poison, 4);
			break;
		case 7:
			p[N - 1] = e[N - 1] + 50.0f;
			break;
		}
		for (int i = 0; i < N; i++) {
			eb[i] = inputs_f32_to_bf16(e[i]);
			pb[i] = inputs_f32_to_bf16(p[i]);
		}
		if (sc == 5 || sc == 6)
			pb[N - 3] = 0x7fa5u;
		struct eval_cmp r1, rb1, ri1, rn;
		eval_set_threads(1);
		eval_compare(DT_F32, p, e, N, &r1);
		eval_compare(DT_BF16, pb, eb, N, &rb1);
		eval_compare(DT_I64, pi, ei, N, &ri1);
		long long fp = eval_find_poison(DT_F32, p, N), fpb = eval_find_poison(DT_BF16, pb, N);
		int bt = eval_blind_t(DT_F32, e, N), btb = eval_blind_t(DT_BF16, eb, N);
		int same = eval_same_bytes(p, e, sizeof(float) * N);
		for (int k = 0; k < 3; k++) {
			char what[64];
			eval_set_threads(threads[k]);
			snprintf(what, sizeof what, "scenario %d, %d threads, float32", sc, threads[k]);
			eval_compare(DT_F32, p, e, N, &rn);
			cmp_equal(&r1, &rn, what);
			snprintf(what, sizeof what, "scenario %d, %d threads, bfloat16", sc, threads[k]);
			eval_compare(DT_BF16, pb, eb, N, &rn);
			cmp_equal(&rb1, &rn, what);
			snprintf(what, sizeof what, "scenario %d, %d threads, int64", sc, threads[k]);
			eval_compare(DT_I64, pi, ei, N, &rn);
			cmp_equal(&ri1, &rn, what);
			CHECK(eval_find_poison(DT_F32, p, N) == fp && eval_find_poison(DT_BF16, pb, N) == fpb);
			CHECK(eval_blind_t(DT_F32, e, N) == bt && eval_blind_t(DT_BF16, eb, N) == btb);
			CHECK(eval_same_bytes(p, e, sizeof(float) * N) == same);
		}
		/* what the scenarios were meant to show */
		if (sc == 0)
			CHECK(r1.min_t == SCORE_T_MIN && same && fp < 0);
		if (sc == 3)
			CHECK(r1.worst_at == 5);
		if (sc == 4)
			CHECK(r1.min_t == SCORE_T_NEVER && r1.first_bad == N - 100);
		if (sc == 5 || sc == 6)
			CHECK(r1.poison_at == (sc == 5 ? N - 3 : N / 3 + 1) && fp == r1.poison_at && fpb == N - 3);
		if (sc == 7)
			CHECK(r1.worst_at == N - 1);
	}
	eval_set_threads(0);
	free(e), free(p), free(eb), free(pb), free(ei), free(pi);
}

int main(void)
{
	test_min_t();
	test_min_t_matches_bruteforce();
	test_levels_and_worst();
	test_blind();
	test_std_floor();
	test_generated_spread();
	test_generation_threads();
	test_generation_moments();
	test_equal_stretches();
	test_parallel_sweeps();
	printf("test_eval_util: %d passed, %d failed\n", n_pass, n_fail);
	return n_fail ? 1 : 0;
}
