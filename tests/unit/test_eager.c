/* test_eager.c - the eager executor on the cpu backend against hand-computed
 * answers: one graph with literal inputs touching every op family (views,
 * broadcasting, scalars, casts, reductions, GEMM, conv, interpolation,
 * attention), so the op library is compiled once; plus input generation. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "eager.h"
#include "gpu.h"
#include "graph.h"
#include "inputs.h"

static int failures;

#define CHECK(cond, ...)                                              \
	do {                                                          \
		if (!(cond)) {                                        \
			fprintf(stderr, "%s:%d: ", __FILE__, __LINE__); \
			fprintf(stderr, __VA_ARGS__);                 \
			fputc('\n', stderr);                          \
			failures++;                                   \
		}                                                     \
	} while (0)

/* One variant; the expected values of each output follow below. */
static const char graph_text[] =
	"{\"id\": \"eager_unit\", \"summary\": \"known answers\", \"variants\": [{\"name\": \"v\",\n"
	" \"inputs\": [\n"
	"  {\"name\": \"x\", \"shape\": [2, 3], \"dtype\": \"float32\", \"data\": [1, 2, 3, 4, 5, 6]},\n"
	"  {\"name\": \"y\", \"shape\": [3], \"dtype\": \"float32\", \"data\": [10, 20, 30]},\n"
	"  {\"name\": \"w\", \"shape\": [2, 3], \"dtype\": \"float32\", \"data\": [1, 0, -1, 2, 1, 0]},\n"
	"  {\"name\": \"m\", \"shape\": [2, 3], \"dtype\": \"bool\", \"data\": [1, 0, 1, 0, 1, 0]},\n"
	"  {\"name\": \"img\", \"shape\": [1, 1, 3, 3], \"dtype\": \"float32\", \"data\": [1, 2, 3, 4, 5, 6, 7, 8, 9]},\n"
	"  {\"name\": \"k\", \"shape\": [1, 1, 2, 2], \"dtype\": \"float32\", \"data\": [1, 1, 1, 1]},\n"
	"  {\"name\": \"q\", \"shape\": [1, 2, 1], \"dtype\": \"float32\", \"data\": [1, 1]},\n"
	"  {\"name\": \"kk\", \"shape\": [1, 2, 1], \"dtype\": \"float32\", \"data\": [0, 1]},\n"
	"  {\"name\": \"vv\", \"shape\": [1, 2, 1], \"dtype\": \"float32\", \"data\": [1, 3]},\n"
	"  {\"name\": \"h\", \"shape\": [4], \"dtype\": \"float16\", \"data\": [0.1, 1.5, -2.25, 1000]},\n"
	"  {\"name\": \"ii\", \"shape\": [3], \"dtype\": \"int64\", \"data\": [1, 0, 2]},\n"
	"  {\"name\": \"bb\", \"shape\": [2], \"dtype\": \"float32\", \"data\": [10, 20]},\n"
	"  {\"name\": \"p4\", \"shape\": [1, 1, 2, 2], \"dtype\": \"float32\", \"data\": [1, 2, 3, 4]},\n"
	"  {\"name\": \"a1\", \"shape\": [1], \"dtype\": \"float32\", \"data\": [0.25]},\n"
	"  {\"name\": \"k4\", \"shape\": [4, 1, 3, 3], \"dtype\": \"float32\", \"data\": [1, 1, 1, 1, 1, 1, 1, 1, 1,\n"
	"     2, 2, 2, 2, 2, 2, 2, 2, 2, 3, 3, 3, 3, 3, 3, 3, 3, 3, 4, 4, 4, 4, 4, 4, 4, 4, 4]},\n"
	"  {\"name\": \"k1\", \"shape\": [2, 1, 1, 1], \"dtype\": \"float32\", \"data\": [2, -1]},\n"
	"  {\"name\": \"b2\", \"shape\": [2], \"dtype\": \"float32\", \"data\": [0.5, 1]},\n"
	"  {\"name\": \"r12\", \"shape\": [1, 1, 2], \"dtype\": \"float32\", \"data\": [1, 2]}\n"
	" ],\n"
	" \"nodes\": [\n"
	"  {\"name\": \"add\", \"op\": \"add\", \"inputs\": [\"x\", \"y\"], \"attrs\": {\"alpha\": 2}},\n"
	"  {\"name\": \"half\", \"op\": \"mul\", \"inputs\": [\"add\", 0.5]},\n"
	"  {\"name\": \"xt\", \"op\": \"transpose\", \"inputs\": [\"x\"], \"attrs\": {\"dim0\": 0, \"dim1\": 1}},\n"
	"  {\"name\": \"flat\", \"op\": \"reshape\", \"inputs\": [\"xt\"], \"attrs\": {\"shape\": [-1]}},\n"
	"  {\"name\": \"sm\", \"op\": \"softmax\", \"inputs\": [\"x\"], \"attrs\": {\"dim\": 0}},\n"
	"  {\"name\": \"mm\", \"op\": \"matmul\", \"inputs\": [\"x\", \"xt\"]},\n"
	"  {\"name\": \"lin\", \"op\": \"linear\", \"inputs\": [\"x\", \"w\", \"bb\"]},\n"
	"  {\"name\": \"ln\", \"op\": \"layer_norm\", \"inputs\": [\"x\"], \"attrs\": {\"normalized_shape\": [3], \"eps\": 0}},\n"
	"  {\"name\": \"sl\", \"op\": \"getitem\", \"inputs\": [\"x\"], \"attrs\": {\"index\": [[null, null, null], [null, null, 2]]}},\n"
	"  {\"name\": \"cat\", \"op\": \"cat\", \"inputs\": [\"sl\", \"x\"], \"attrs\": {\"dim\": 1}},\n"
	"  {\"name\": \"pad\", \"op\": \"pad\", \"inputs\": [\"x\"], \"attrs\": {\"pad\": [1, -1], \"value\": 9}},\n"
	"  {\"name\": \"sum\", \"op\": \"sum\", \"inputs\": [\"x\"], \"attrs\": {\"dim\": [0], \"keepdim\": true}},\n"
	"  {\"name\": \"mean\", \"op\": \"mean\", \"inputs\": [\"x\"]},\n"
	"  {\"name\": \"wh\", \"op\": \"where\", \"inputs\": [\"m\", \"x\", -1.5]},\n"
	"  {\"name\": \"conv\", \"op\": \"conv2d\", \"inputs\": [\"img\", \"k\"], \"attrs\": {\"padding\": 1, \"stride\": 2}},\n"
	"  {\"name\": \"up\", \"op\": \"interpolate\", \"inputs\": [\"p4\"], \"attrs\": {\"scale_factor\": 1.5, \"mode\": \"nearest\"}},\n"
	"  {\"name\": \"bil\", \"op\": \"interpolate\", \"inputs\": [\"img\"], \"attrs\": {\"size\": [2, 2], \"mode\": \"bilinear\", \"align_corners\": true}},\n"
	"  {\"name\": \"pool\", \"op\": \"adaptive_avg_pool2d\", \"inputs\": [\"img\"], \"attrs\": {\"output_size\": [2, 1]}},\n"
	"  {\"name\": \"att\", \"op\": \"scaled_dot_product_attention\", \"inputs\": [\"q\", \"kk\", \"vv\"], \"attrs\": {\"is_causal\": true}},\n"
	"  {\"name\": \"hf\", \"op\": \"to\", \"inputs\": [\"h\"], \"attrs\": {\"dtype\": \"float32\"}},\n"
	"  {\"name\": \"hb\", \"op\": \"to\", \"inputs\": [\"hf\"], \"attrs\": {\"dtype\": \"bfloat16\"}},\n"
	"  {\"name\": \"hs\", \"op\": \"sigmoid\", \"inputs\": [\"h\"]},\n"
	"  {\"name\": \"sp\", \"op\": \"split\", \"inputs\": [\"x\"], \"attrs\": {\"split_size\": [1, 2], \"dim\": 1}},\n"
	"  {\"name\": \"sp1\", \"op\": \"getitem\", \"inputs\": [\"sp\"], \"attrs\": {\"index\": 1}},\n"
	"  {\"name\": \"isum\", \"op\": \"sum\", \"inputs\": [\"ii\"]},\n"
	"  {\"name\": \"pw\", \"op\": \"pow\", \"inputs\": [\"x\", 2]},\n"
	"  {\"name\": \"gl\", \"op\": \"gelu\", \"inputs\": [\"y\"], \"attrs\": {\"approximate\": \"tanh\"}},\n"
	"  {\"name\": \"pr\", \"op\": \"prelu\", \"inputs\": [\"w\", \"a1\"]},\n"
	"  {\"name\": \"c4\", \"op\": \"conv2d\", \"inputs\": [\"img\", \"k4\"], \"attrs\": {\"padding\": \"same\"}},\n"
	"  {\"name\": \"c1\", \"op\": \"conv2d\", \"inputs\": [\"img\", \"k1\", \"b2\"]},\n"
	"  {\"name\": \"lr\", \"op\": \"leaky_relu\", \"inputs\": [\"w\"], \"attrs\": {\"negative_slope\": 0.5}},\n"
	"  {\"name\": \"ub\", \"op\": \"unbind\", \"inputs\": [\"x\"], \"attrs\": {\"dim\": -1}},\n"
	"  {\"name\": \"ub1\", \"op\": \"getitem\", \"inputs\": [\"ub\"], \"attrs\": {\"index\": 1}},\n"
	"  {\"name\": \"ts\", \"op\": \"tensor_split\", \"inputs\": [\"x\"], \"attrs\": {\"indices\": [2, 1], \"dim\": 1}},\n"
	"  {\"name\": \"ts2\", \"op\": \"getitem\", \"inputs\": [\"ts\"], \"attrs\": {\"index\": 2}},\n"
	"  {\"name\": \"tss\", \"op\": \"tensor_split\", \"inputs\": [\"y\"], \"attrs\": {\"sections\": 2}},\n"
	"  {\"name\": \"tss1\", \"op\": \"getitem\", \"inputs\": [\"tss\"], \"attrs\": {\"index\": 1}},\n"
	"  {\"name\": \"bd\", \"op\": \"baddbmm\", \"inputs\": [\"bb\", \"q\", \"r12\"], \"attrs\": {\"beta\": 0.5, \"alpha\": 2}},\n"
	"  {\"name\": \"zz\", \"op\": \"sub\", \"inputs\": [\"bb\", \"bb\"]},\n"
	"  {\"name\": \"inf\", \"op\": \"rsqrt\", \"inputs\": [\"zz\"]},\n"
	"  {\"name\": \"nan\", \"op\": \"sub\", \"inputs\": [\"inf\", \"inf\"]},\n"
	"  {\"name\": \"bd0\", \"op\": \"baddbmm\", \"inputs\": [\"nan\", \"q\", \"r12\"], \"attrs\": {\"beta\": 0}},\n"
	"  {\"name\": \"ar\", \"op\": \"arange\", \"inputs\": [], \"attrs\": {\"end\": 5}},\n"
	"  {\"name\": \"arf\", \"op\": \"arange\", \"inputs\": [], \"attrs\": {\"start\": 1, \"end\": 2, \"step\": 0.25}},\n"
	"  {\"name\": \"arh\", \"op\": \"arange\", \"inputs\": [], \"attrs\": {\"start\": -3, \"end\": 3, \"step\": 2, \"dtype\": \"float16\"}},\n"
	"  {\"name\": \"ari\", \"op\": \"arange\", \"inputs\": [], \"attrs\": {\"start\": 0.5, \"end\": 3.7, \"step\": 1.5, \"dtype\": \"int32\"}},\n"
	"  {\"name\": \"ap\", \"op\": \"avg_pool2d\", \"inputs\": [\"img\"], \"attrs\": {\"kernel_size\": 2, \"stride\": 2, \"padding\": 1}},\n"
	"  {\"name\": \"apx\", \"op\": \"avg_pool2d\", \"inputs\": [\"img\"], \"attrs\": {\"kernel_size\": 2, \"padding\": 1, \"ceil_mode\": true, \"count_include_pad\": false}},\n"
	"  {\"name\": \"apd\", \"op\": \"avg_pool2d\", \"inputs\": [\"img\"], \"attrs\": {\"kernel_size\": [2, 2], \"stride\": 1, \"divisor_override\": 3}},\n"
	"  {\"name\": \"imgb\", \"op\": \"to\", \"inputs\": [\"img\"], \"attrs\": {\"dtype\": \"bfloat16\"}},\n"
	"  {\"name\": \"apb\", \"op\": \"avg_pool2d\", \"inputs\": [\"imgb\"], \"attrs\": {\"kernel_size\": 2, \"stride\": 2, \"padding\": 1}},\n"
	"  {\"name\": \"uf\", \"op\": \"unfold\", \"inputs\": [\"x\"], \"attrs\": {\"dimension\": 1, \"size\": 2, \"step\": 1}},\n"
	"  {\"name\": \"uft\", \"op\": \"unfold\", \"inputs\": [\"xt\"], \"attrs\": {\"dimension\": -2, \"size\": 2, \"step\": 1}},\n"
	"  {\"name\": \"ufs\", \"op\": \"unfold\", \"inputs\": [\"y\"], \"attrs\": {\"dimension\": 0, \"size\": 1, \"step\": 2}}\n"
	" ],\n"
	" \"outputs\": [\"half\", \"flat\", \"sm\", \"mm\", \"lin\", \"ln\", \"cat\", \"pad\", \"sum\", \"mean\", \"wh\",\n"
	"             \"conv\", \"up\", \"bil\", \"pool\", \"att\", \"hb\", \"hs\", \"sp1\", \"isum\", \"pw\", \"gl\", \"pr\", \"xt\",\n"
	"             \"c4\", \"c1\", \"lr\", \"ub1\", \"ts2\", \"tss1\", \"bd\", \"bd0\", \"ar\", \"arf\", \"arh\", \"ari\",\n"
	"             \"ap\", \"apx\", \"apd\", \"apb\", \"uf\", \"uft\", \"ufs\"]\n"
	"}]}\n";

static double e(double x)
{
	return exp(x);
}

struct expect {
	const char *name;
	int n;
	double v[64];
	double tol;
};

static double bf(double x)
{
	return inputs_bf16_to_f32(inputs_f32_to_bf16((float)x));
}

static double sig(double x)
{
	return 1.0 / (1.0 + exp(-x));
}

static double as_double(const void *buf, enum graph_dtype dt, int i)
{
	switch (dt) {
	case DT_F32: return ((const float *)buf)[i];
	case DT_F16: return inputs_f16_to_f32(((const uint16_t *)buf)[i]);
	case DT_BF16: return inputs_bf16_to_f32(((const uint16_t *)buf)[i]);
	case DT_F64: return ((const double *)buf)[i];
	case DT_I64: return (double)((const int64_t *)buf)[i];
	case DT_I32: return ((const int32_t *)buf)[i];
	case DT_BOOL: return ((const uint8_t *)buf)[i];
	default: return NAN;
	}
}

static void test_known_answers(struct gpu_dev *d)
{
	char err[1024];
	struct graph_task *t;
	if (graph_load_buffer("eager_unit", graph_text, strlen(graph_text), &t, err, sizeof(err))) {
		CHECK(0, "graph: %s", err);
		return;
	}
	const struct graph_variant *v = &t->variants[0];
	/* softmax over dim 0 of [[1,2,3],[4,5,6]]: every column is (1, 4) + c */
	double s0 = 1.0 / (1.0 + e(3)), s1 = e(3) / (1.0 + e(3));
	/* layer_norm of (1,2,3): mean 2, var 2/3 */
	double ln = 1.0 / sqrt(2.0 / 3.0);
	/* attention: row 0 sees key 0 only; row 1 softmax(0, 1) over v = (1, 3) */
	double a1 = (1.0 + 3.0 * e(1)) / (1.0 + e(1));
	double g30 = 0.5 * 30 * (1 + tanh(0.7978845608028654 * (30 + 0.044715 * 27000)));
	double g10 = 0.5 * 10 * (1 + tanh(0.7978845608028654 * (10 + 0.044715 * 1000)));
	double g20 = 0.5 * 20 * (1 + tanh(0.7978845608028654 * (20 + 0.044715 * 8000)));
	double h01 = inputs_f16_to_f32(inputs_f32_to_f16(0.1f));     /* 0.1 as float16 */
	const struct expect want[] = {
		{"half", 6, {10.5, 21, 31.5, 12, 22.5, 33}, 1e-6},
		{"flat", 6, {1, 4, 2, 5, 3, 6}, 0},
		{"sm", 6, {s0, s0, s0, s1, s1, s1}, 1e-6},
		{"mm", 4, {14, 32, 32, 77}, 1e-5},
		{"lin", 4, {8, 24, 8, 33}, 1e-5},
		{"ln", 6, {-ln, 0, ln, -ln, 0, ln}, 1e-5},
		{"cat", 10, {1, 3, 1, 2, 3, 4, 6, 4, 5, 6}, 0},
		{"pad", 6, {9, 1, 2, 9, 4, 5}, 0},
		{"sum", 3, {5, 7, 9}, 0},
		{"mean", 1, {3.5}, 1e-6},
		{"wh", 6, {1, -1.5, 3, -1.5, 5, -1.5}, 0},
		{"conv", 4, {1, 5, 11, 28}, 1e-5},
		{"up", 9, {1, 1, 2, 1, 1, 2, 3, 3, 4}, 0},
		{"bil", 4, {1, 3, 7, 9}, 1e-6},
		{"pool", 2, {3.5, 6.5}, 1e-6},
		{"att", 2, {1, a1}, 1e-6},
		{"hb", 4, {bf(h01), 1.5, -2.25, 1000}, 0},
		{"hs", 4, {sig(h01), sig(1.5), sig(-2.25), 1}, 1e-3},
		{"sp1", 4, {2, 3, 5, 6}, 0},
		{"isum", 1, {3}, 0},
		{"pw", 6, {1, 4, 9, 16, 25, 36}, 0},
		{"gl", 3, {g10, g20, g30}, 1e-4},
		{"pr", 6, {1, 0, -0.25, 2, 1, 0}, 0},
		{"xt", 6, {1, 4, 2, 5, 3, 6}, 0},
		{"c4", 36, {12, 21, 16, 27, 45, 33, 24, 39, 28, 24, 42, 32, 54, 90, 66, 48, 78, 56,
			    36, 63, 48, 81, 135, 99, 72, 117, 84, 48, 84, 64, 108, 180, 132, 96, 156, 112}, 1e-6},
		{"c1", 18, {2.5, 4.5, 6.5, 8.5, 10.5, 12.5, 14.5, 16.5, 18.5, 0, -1, -2, -3, -4, -5, -6, -7, -8}, 1e-6},
		{"lr", 6, {1, 0, -0.5, 2, 1, 0}, 0},
		{"ub1", 2, {2, 5}, 0},
		/* tensor_split at [2, 1]: x[:, :2], x[:, 2:1] (empty), x[:, 1:] */
		{"ts2", 4, {2, 3, 5, 6}, 0},
		{"tss1", 1, {30}, 0},
		/* 0.5 * (10, 20) + 2 * (1, 1)^T (1, 2) */
		{"bd", 4, {7, 14, 7, 14}, 1e-6},
		/* beta = 0: the NaN input does not reach the result */
		{"bd0", 4, {1, 2, 1, 2}, 1e-6},
		{"ar", 5, {0, 1, 2, 3, 4}, 0},
		{"arf", 4, {1, 1.25, 1.5, 1.75}, 0},
		{"arh", 3, {-3, -1, 1}, 0},
		/* int32: ceil(3.2 / 1.5) = 3 elements of trunc(0.5) + i * trunc(1.5) (torch 1.13) */
		{"ari", 3, {0, 1, 2}, 0},
		/* avg_pool2d of img = [[1,2,3],[4,5,6],[7,8,9]] with padding 1: every
		 * window holds 4 padded cells, of which 1, 2, 2, 4 are inside */
		{"ap", 4, {1 / 4.0, 5 / 4.0, 11 / 4.0, 28 / 4.0}, 1e-7},
		/* count_include_pad false: divided by the cells inside; ceil_mode
		 * drops a third window that would start in the right padding */
		{"apx", 4, {1, 5 / 2.0, 11 / 2.0, 7}, 1e-7},
		{"apd", 4, {4, 16 / 3.0, 8, 28 / 3.0}, 1e-6},
		{"apb", 4, {0.25, 1.25, 2.75, 7}, 0},
		/* unfold(1, 2, 1) of [[1,2,3],[4,5,6]]: overlapping windows */
		{"uf", 8, {1, 2, 2, 3, 4, 5, 5, 6}, 0},
		/* of x^T (a strided view) along dim 0: r[i][j][k] = xt[i + k][j] */
		{"uft", 8, {1, 2, 4, 5, 2, 3, 5, 6}, 0},
		/* step 2 over (10, 20, 30), windows of 1: every other element */
		{"ufs", 2, {10, 30}, 0},
	};
	CHECK(v->n_outputs == (int)(sizeof(want) / sizeof(want[0])), "output count %d", v->n_outputs);

	void *host[48], *dev_in[48], *dev_out[48];
	if (inputs_generate(v, INPUTS_PUBLIC_SEED, host, err, sizeof(err))) {
		CHECK(0, "inputs: %s", err);
		graph_task_free(t);
		return;
	}
	for (int i = 0; i < v->n_inputs; i++) {
		size_t bytes = (size_t)graph_shape_numel(&v->values[i].shape) * graph_dtype_size(v->values[i].dtype);
		dev_in[i] = gpu_alloc(d, bytes);
		gpu_copy_to_device(d, dev_in[i], host[i], bytes);
	}
	size_t ob[48];
	for (int j = 0; j < v->n_outputs; j++) {
		const struct graph_value *o = &v->values[v->outputs[j]];
		ob[j] = (size_t)graph_shape_numel(&o->shape) * graph_dtype_size(o->dtype);
		dev_out[j] = gpu_alloc(d, ob[j] ? ob[j] : 1);
		gpu_memset(d, dev_out[j], 0xff, ob[j]);          /* NaN poison */
	}
	struct eager_plan *p = eager_prepare(d, v, err, sizeof(err));
	CHECK(p != NULL, "prepare: %s", err);
	if (p && eager_run(p, dev_in, dev_out, err, sizeof(err)) == 0) {
		for (int j = 0; j < v->n_outputs && j < (int)(sizeof(want) / sizeof(want[0])); j++) {
			const struct graph_value *o = &v->values[v->outputs[j]];
			const struct expect *w = &want[j];
			int n = (int)graph_shape_numel(&o->shape);
			unsigned char buf[1024];
			CHECK(strcmp(o->name, w->name) == 0, "output %d is %s, expected %s", j, o->name, w->name);
			CHECK(n == w->n, "%s: %d elements, expected %d", o->name, n, w->n);
			if (n != w->n || ob[j] > sizeof(buf))
				continue;
			gpu_copy_to_host(d, buf, dev_out[j], ob[j]);
			for (int i = 0; i < n; i++) {
				double got = as_double(buf, o->dtype, i);
				double tol = w->tol * (1 + fabs(w->v[i]));
				CHECK(fabs(got - w->v[i]) <= tol, "%s[%d] = %.9g, expected %.9g", o->name, i, got, w->v[i]);
			}
		}
		/* a second run gives the same (scratch reuse, pointer patching) */
		float first[4], again[4];
		gpu_copy_to_host(d, first, dev_out[3], sizeof(first));
		gpu_memset(d, dev_out[3], 0xff, ob[3]);
		CHECK(eager_run(p, dev_in, dev_out, err, sizeof(err)) == 0, "second run: %s", err);
		gpu_copy_to_host(d, again, dev_out[3], sizeof(again));
		CHECK(memcmp(first, again, sizeof(first)) == 0, "second run differs");
		CHECK(eager_launch_count(p) > 20, "launches: %d", eager_launch_count(p));
	} else if (p) {
		CHECK(0, "run: %s", err);
	}
	eager_free(p);
	for (int i = 0; i < v->n_inputs; i++)
		gpu_free(d, dev_in[i]);
	for (int j = 0; j < v->n_outputs; j++)
		gpu_free(d, dev_out[j]);
	inputs_free(host, v->n_inputs);
	graph_task_free(t);
}

static void test_inputs(void)
{
	static const char text[] =
		"{\"id\": \"gen\", \"summary\": \"s\", \"variants\": [{\"name\": \"v\", \"inputs\": [\n"
		" {\"name\": \"a\", \"shape\": [10000], \"dtype\": \"float32\", \"mean\": 1.0, \"std\": 5.0},\n"
		" {\"name\": \"b\", \"shape\": [1000], \"dtype\": \"int64\", \"min\": -2, \"max\": 3},\n"
		" {\"name\": \"c\", \"shape\": [1000], \"dtype\": \"bool\"},\n"
		" {\"name\": \"d\", \"shape\": [1000], \"dtype\": \"float16\", \"std\": 1000, \"min\": 0},\n"
		" {\"name\": \"e\", \"shape\": [1000], \"dtype\": \"int32\"}],\n"
		" \"nodes\": [{\"name\": \"t\", \"op\": \"to\", \"inputs\": [\"b\"], \"attrs\": {\"dtype\": \"float32\"}}],\n"
		" \"outputs\": [\"a\", \"t\", \"c\", \"d\", \"e\"]}]}\n";
	char err[512];
	struct graph_task *t;
	if (graph_load_buffer("gen", text, strlen(text), &t, err, sizeof(err))) {
		CHECK(0, "graph: %s", err);
		return;
	}
	const struct graph_variant *v = &t->variants[0];
	void *h1[5], *h2[5], *h3[5];
	CHECK(inputs_generate(v, 123, h1, err, sizeof(err)) == 0, "%s", err);
	CHECK(inputs_generate(v, 123, h2, err, sizeof(err)) == 0, "%s", err);
	CHECK(inputs_generate(v, 124, h3, err, sizeof(err)) == 0, "%s", err);
	CHECK(memcmp(h1[0], h2[0], 40000) == 0, "same seed, different floats");
	CHECK(memcmp(h1[0], h3[0], 40000) != 0, "other seed, same floats");
	double s = 0, s2 = 0;
	for (int i = 0; i < 10000; i++) {
		double x = ((float *)h1[0])[i];
		s += x;
		s2 += x * x;
	}
	double mean = s / 10000, sd = sqrt(s2 / 10000 - mean * mean);
	CHECK(fabs(mean - 1.0) < 0.05 && fabs(sd - 1.0) < 0.05, "randn*std*0.2+mean: mean %g sd %g", mean, sd);
	int seen[6] = {0}, ok = 1, trues = 0;
	for (int i = 0; i < 1000; i++) {
		int64_t k = ((int64_t *)h1[1])[i];
		ok &= k >= -2 && k <= 3;
		if (k >= -2 && k <= 3)
			seen[k + 2] = 1;
		trues += ((uint8_t *)h1[2])[i];
		float hv = inputs_f16_to_f32(((uint16_t *)h1[3])[i]);
		ok &= hv >= 0 && hv <= 100;             /* clamped to [min, 100] */
		int32_t e5 = ((int32_t *)h1[4])[i];
		ok &= e5 >= 0 && e5 < 10;
	}
	CHECK(ok, "ints, clamps or the default int range out of bounds");
	CHECK(seen[0] && seen[5], "ints never reach min or max");
	CHECK(trues > 400 && trues < 600, "bools: %d of 1000 true", trues);
	CHECK(inputs_f32_to_f16(65520.f) == 0x7c00 && inputs_f32_to_f16(65519.f) == 0x7bff, "f16 overflow rounding");
	CHECK(inputs_f32_to_f16(1.0f + 1.0f / 2048) == 0x3c00, "f16 ties to even");
	CHECK(inputs_f32_to_bf16(1.0f + 1.0f / 256) == 0x3f80, "bf16 ties to even");
	CHECK(inputs_f16_to_f32(0x0001) == ldexpf(1, -24), "f16 subnormal");
	/* every float16 pattern: the exact value (NaNs keep sign and payload) */
	int all = 1;
	for (uint32_t h = 0; h < 0x10000; h++) {
		uint32_t e5 = (h >> 10) & 0x1f, man = h & 0x3ff;
		float want = e5 == 0 ? ldexpf((float)man, -24) : e5 == 0x1f ? (man ? NAN : INFINITY)
									 : ldexpf((float)(man | 0x400), (int)e5 - 25);
		want = h & 0x8000 ? -want : want;
		float got = inputs_f16_to_f32((uint16_t)h);
		uint32_t gb;
		memcpy(&gb, &got, 4);
		if (isnan(want))
			all &= isnan(got) && (gb >> 31) == (h >> 15) && ((gb >> 13) & 0x3ff) == man;
		else
			all &= memcmp(&got, &want, 4) == 0;
	}
	CHECK(all, "f16 to f32: every pattern exact");
	inputs_free(h1, 5);
	inputs_free(h2, 5);
	inputs_free(h3, 5);
	graph_task_free(t);
}

int main(void)
{
	char err[512];
	struct gpu_dev *d;
	test_inputs();
	if (gpu_open("cpu", &d, err, sizeof(err))) {
		fprintf(stderr, "test_eager: %s\n", err);
		return 1;
	}
	test_known_answers(d);
	gpu_close(d);
	if (failures) {
		fprintf(stderr, "test_eager: %d failures\n", failures);
		return 1;
	}
	printf("test_eager: ok\n");
	return 0;
}
