/* test_eval_util.c - what the evaluator compares with (eval_compare: the level
 * an output is close from and its worst element) and the input generator's
 * std floor (no float input of more than one element is ever constant). */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "eval_util.h"
#include "graph.h"
#include "inputs.h"

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

int main(void)
{
	test_levels_and_worst();
	test_blind();
	test_std_floor();
	test_generated_spread();
	printf("test_eval_util: %d passed, %d failed\n", n_pass, n_fail);
	return n_fail ? 1 : 0;
}
