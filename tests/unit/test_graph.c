/* test_graph.c - graph.json parsing, validation and shape/dtype inference.
 *
 * Each case builds a one-variant graph around one node and checks either the
 * inferred result ("float32[1,2,3]") or a fragment of the error message.  The
 * expected shapes are PyTorch's (worked out by hand from its documented rules
 * and cross-checked against torch 1.13 where noted). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "graph.h"

static int passed, failed;

#define CHECK(cond, ...)                                                     \
	do {                                                                 \
		if (cond) {                                                  \
			passed++;                                            \
		} else {                                                     \
			failed++;                                            \
			fprintf(stderr, "FAIL %s:%d: ", __FILE__, __LINE__); \
			fprintf(stderr, __VA_ARGS__);                        \
			fputc('\n', stderr);                                 \
		}                                                            \
	} while (0)

/* Runs a graph with the given inputs JSON and nodes JSON; the last node is the
 * output.  Writes "dtype[shape]" of the output, or "ERR: message". */
static void run(const char *inputs, const char *nodes, const char *out, char *res, size_t len)
{
	char doc[8192], err[GRAPH_ERR_LEN];
	struct graph_task *t;
	snprintf(doc, sizeof(doc),
		 "{\"id\":\"t\",\"summary\":\"s\",\"variants\":[{\"name\":\"v\",\"inputs\":%s,"
		 "\"nodes\":%s,\"outputs\":[\"%s\"]}]}",
		 inputs, nodes, out);
	if (graph_load_buffer("g.json", doc, strlen(doc), &t, err, sizeof(err))) {
		snprintf(res, len, "ERR: %s", err);
		return;
	}
	const struct graph_variant *v = &t->variants[0];
	const struct graph_value *o = &v->values[v->outputs[0]];
	char sb[200];
	snprintf(res, len, "%s%s", graph_dtype_name(o->dtype), graph_shape_str(&o->shape, sb, sizeof(sb)));
	graph_task_free(t);
}

static void expect(int line, const char *inputs, const char *nodes, const char *want)
{
	char got[GRAPH_ERR_LEN + 8];
	run(inputs, nodes, "r", got, sizeof(got));
	int ok = strncmp(want, "ERR:", 4) == 0 ? (strncmp(got, "ERR:", 4) == 0 && strstr(got, want + 5) != NULL)
					       : strcmp(got, want) == 0;
	CHECK(ok, "line %d: want '%s', got '%s'", line, want, got);
}

#define EXPECT(in, nodes, want) expect(__LINE__, in, nodes, want)

#define IN1(shape, dt) "[{\"name\":\"x\",\"shape\":" shape ",\"dtype\":\"" dt "\"}]"
#define IN2(s1, d1, s2, d2) \
	"[{\"name\":\"x\",\"shape\":" s1 ",\"dtype\":\"" d1 "\"},{\"name\":\"y\",\"shape\":" s2 ",\"dtype\":\"" d2 "\"}]"
#define NODE(op, ins, attrs) "[{\"name\":\"r\",\"op\":\"" op "\",\"inputs\":" ins ",\"attrs\":" attrs "}]"

static void test_elementwise(void)
{
	EXPECT(IN2("[2,1,4]", "float32", "[3,1]", "float32"), NODE("add", "[\"x\",\"y\"]", "{}"), "float32[2,3,4]");
	EXPECT(IN2("[2,3]", "float32", "[4]", "float32"), NODE("mul", "[\"x\",\"y\"]", "{}"), "ERR: do not broadcast");
	/* Promotion: f16 with bf16 gives f32; int tensor with float scalar gives
	 * f32; a float scalar keeps f16; int / int is true division (f32). */
	EXPECT(IN2("[2]", "float16", "[2]", "bfloat16"), NODE("add", "[\"x\",\"y\"]", "{}"), "float32[2]");
	EXPECT(IN1("[2]", "int64"), NODE("mul", "[\"x\", 2.5]", "{}"), "float32[2]");
	EXPECT(IN1("[2]", "int64"), NODE("mul", "[\"x\", 2]", "{}"), "int64[2]");
	EXPECT(IN1("[2]", "float16"), NODE("mul", "[0.125, \"x\"]", "{}"), "float16[2]");
	EXPECT(IN1("[2]", "int32"), NODE("div", "[\"x\", 2]", "{}"), "float32[2]");
	EXPECT(IN1("[2]", "bool"), NODE("add", "[\"x\", 1]", "{}"), "int64[2]");
	/* A 0-dim float32 tensor does not raise a dimensioned float16 one. */
	EXPECT(IN2("[4]", "float16", "[]", "float32"), NODE("add", "[\"x\",\"y\"]", "{}"), "float16[4]");
	/* ...but a 0-dim float does raise a dimensioned int tensor. */
	EXPECT(IN2("[4]", "int64", "[]", "float16"), NODE("add", "[\"x\",\"y\"]", "{}"), "float16[4]");
	EXPECT(IN1("[3]", "float32"), NODE("pow", "[\"x\", 2]", "{}"), "float32[3]");
	EXPECT(IN1("[3]", "int64"), NODE("pow", "[\"x\", 0.5]", "{}"), "float32[3]");
	EXPECT(IN1("[3]", "float32"), NODE("add", "[1, 2]", "{}"), "ERR: at least one tensor");
	EXPECT(IN1("[3]", "bool"), NODE("sub", "[\"x\", \"x\"]", "{}"), "ERR: bool");
	EXPECT(IN1("[3]", "float32"), NODE("add", "[\"x\", \"x\"]", "{\"alpha\": 2}"), "float32[3]");
	EXPECT(IN1("[3]", "float32"), NODE("sigmoid", "[\"x\", 1]", "{}"), "ERR: takes 1 operand, got 2");
	EXPECT(IN1("[3]", "float32"), NODE("relu", "[2]", "{}"), "ERR: is a number; this op takes tensors only");
	EXPECT(IN1("[3]", "int64"), NODE("sigmoid", "[\"x\"]", "{}"), "float32[3]");
	EXPECT(IN1("[3]", "int64"), NODE("relu", "[\"x\"]", "{}"), "int64[3]");
	EXPECT(IN1("[3]", "int64"), NODE("gelu", "[\"x\"]", "{}"), "ERR: floating-point");
	EXPECT(IN1("[3]", "float16"), NODE("gelu", "[\"x\"]", "{\"approximate\":\"tanh\"}"), "float16[3]");
	EXPECT(IN1("[3]", "float16"), NODE("gelu", "[\"x\"]", "{\"approximate\":\"erf\"}"), "ERR: approximate");
	EXPECT(IN2("[2,3]", "bool", "[3]", "float16"), NODE("where", "[\"x\", \"y\", -10000.0]", "{}"), "float16[2,3]");
	EXPECT(IN2("[2,3]", "float32", "[3]", "float16"), NODE("where", "[\"x\", \"y\", 0]", "{}"), "ERR: must be bool");
	EXPECT(IN1("[3]", "float32"), NODE("dropout", "[\"x\"]", "{\"p\":0.1,\"training\":true}"), "ERR: eval mode");
	EXPECT(IN1("[3]", "float32"), NODE("dropout", "[\"x\"]", "{\"p\":0.1}"), "float32[3]");
	EXPECT(IN1("[3]", "float32"), NODE("to", "[\"x\"]", "{\"dtype\":\"torch.bfloat16\"}"), "bfloat16[3]");
	EXPECT(IN1("[3]", "float32"), NODE("to", "[\"x\"]", "{\"dtype\":\"float8\"}"), "ERR: attribute 'dtype' must be a dtype");
}

static void test_norms_and_softmax(void)
{
	EXPECT(IN1("[2,5,8]", "float32"), NODE("softmax", "[\"x\"]", "{\"dim\":-1}"), "float32[2,5,8]");
	EXPECT(IN1("[2,5,8]", "float32"), NODE("softmax", "[\"x\"]", "{\"dim\":3}"), "ERR: out of range");
	EXPECT(IN1("[2,5,8]", "float16"), NODE("softmax", "[\"x\"]", "{\"dim\":1,\"dtype\":\"float32\"}"), "float32[2,5,8]");
	EXPECT(IN1("[2,5,8]", "float32"), NODE("softmax", "[\"x\"]", "{}"), "ERR: missing attribute 'dim'");
	EXPECT("[{\"name\":\"x\",\"shape\":[2,5,8],\"dtype\":\"float32\"},{\"name\":\"w\",\"shape\":[8],\"dtype\":\"float32\"}]",
	       NODE("layer_norm", "[\"x\",\"w\",null]", "{\"normalized_shape\":[8]}"), "float32[2,5,8]");
	EXPECT("[{\"name\":\"x\",\"shape\":[2,5,8],\"dtype\":\"float32\"},{\"name\":\"w\",\"shape\":[5],\"dtype\":\"float32\"}]",
	       NODE("layer_norm", "[\"x\",\"w\"]", "{\"normalized_shape\":[8]}"), "ERR: weight 'w' has shape [5], expected [8]");
	EXPECT(IN1("[2,5,8]", "float32"), NODE("layer_norm", "[\"x\"]", "{\"normalized_shape\":[4]}"), "ERR: does not match");
	EXPECT(IN1("[2,5,8]", "float32"), NODE("layer_norm", "[\"x\"]", "{\"normalized_shape\":[5,8],\"eps\":1e-12}"), "float32[2,5,8]");
	EXPECT(IN1("[2,5,8]", "float32"), NODE("layer_norm", "[\"x\"]", "{\"normalized_shape\":[8],\"epsilon\":1}"), "ERR: unknown attribute 'epsilon'");
	EXPECT("[{\"name\":\"x\",\"shape\":[2,4,3,3],\"dtype\":\"float32\"},{\"name\":\"m\",\"shape\":[4],\"dtype\":\"float32\"}]",
	       NODE("batch_norm", "[\"x\",\"m\",\"m\",\"m\",\"m\"]", "{\"eps\":0.001}"), "float32[2,4,3,3]");
	EXPECT("[{\"name\":\"x\",\"shape\":[2,4,3,3],\"dtype\":\"float32\"},{\"name\":\"m\",\"shape\":[3],\"dtype\":\"float32\"}]",
	       NODE("batch_norm", "[\"x\",\"m\",\"m\"]", "{}"), "ERR: running_mean 'm' has shape [3], expected [4]");
	EXPECT("[{\"name\":\"x\",\"shape\":[2,4,3,3],\"dtype\":\"float32\"},{\"name\":\"m\",\"shape\":[4],\"dtype\":\"float32\"}]",
	       NODE("batch_norm", "[\"x\",\"m\",\"m\"]", "{\"training\":true}"), "ERR: eval mode");
	EXPECT(IN2("[1,64,8,8]", "float32", "[64]", "float32"), NODE("prelu", "[\"x\",\"y\"]", "{}"), "float32[1,64,8,8]");
	EXPECT(IN2("[1,64,8,8]", "float32", "[1]", "float32"), NODE("prelu", "[\"x\",\"y\"]", "{}"), "float32[1,64,8,8]");
	EXPECT(IN2("[1,64,8,8]", "float32", "[8]", "float32"), NODE("prelu", "[\"x\",\"y\"]", "{}"), "ERR: expected 1 or the 64 channels");
}

static void test_linalg(void)
{
	EXPECT(IN2("[3]", "float32", "[3]", "float32"), NODE("matmul", "[\"x\",\"y\"]", "{}"), "float32[]");
	EXPECT(IN2("[3]", "float32", "[2,3,4]", "float32"), NODE("matmul", "[\"x\",\"y\"]", "{}"), "float32[2,4]");
	EXPECT(IN2("[2,5,3]", "float32", "[3]", "float32"), NODE("matmul", "[\"x\",\"y\"]", "{}"), "float32[2,5]");
	EXPECT(IN2("[2,1,5,3]", "float16", "[4,3,7]", "float16"), NODE("matmul", "[\"x\",\"y\"]", "{}"), "float16[2,4,5,7]");
	EXPECT(IN2("[5,3]", "float32", "[4,7]", "float32"), NODE("matmul", "[\"x\",\"y\"]", "{}"), "ERR: inner dims differ");
	EXPECT(IN2("[5,3]", "float32", "[3,7]", "float16"), NODE("matmul", "[\"x\",\"y\"]", "{}"), "ERR: different dtypes");
	EXPECT(IN2("[8,400,64]", "float32", "[8,64,400]", "float32"), NODE("bmm", "[\"x\",\"y\"]", "{}"), "float32[8,400,400]");
	EXPECT(IN2("[8,4,6]", "float32", "[1,6,4]", "float32"), NODE("bmm", "[\"x\",\"y\"]", "{}"), "ERR: same batch");
	EXPECT(IN2("[2,10,768]", "float32", "[3072,768]", "float32"), NODE("linear", "[\"x\",\"y\"]", "{}"), "float32[2,10,3072]");
	EXPECT(IN2("[2,10,768]", "float32", "[3072,768]", "float32"), NODE("linear", "[\"x\",\"y\",\"x\"]", "{}"), "ERR: do not broadcast");
	EXPECT(IN2("[2,10,700]", "float32", "[3072,768]", "float32"), NODE("linear", "[\"x\",\"y\"]", "{}"), "ERR: last dim 700");
	/* conv2d: out = floor((H + 2p - d(k-1) - 1)/s) + 1 */
	EXPECT(IN2("[2,3,224,224]", "float32", "[768,3,16,16]", "float32"),
	       NODE("conv2d", "[\"x\",\"y\"]", "{\"stride\":[16,16]}"), "float32[2,768,14,14]");
	EXPECT(IN2("[1,128,56,56]", "float32", "[128,1,3,3]", "float32"),
	       NODE("conv2d", "[\"x\",\"y\",null]", "{\"stride\":1,\"padding\":[1,1],\"groups\":128}"), "float32[1,128,56,56]");
	EXPECT(IN2("[1,3,7,9]", "float32", "[4,3,3,3]", "float32"),
	       NODE("conv2d", "[\"x\",\"y\"]", "{\"stride\":2,\"padding\":1,\"dilation\":2}"), "float32[1,4,3,4]");
	EXPECT(IN2("[1,3,7,9]", "float32", "[4,3,3,3]", "float32"),
	       NODE("conv2d", "[\"x\",\"y\"]", "{\"padding\":\"same\"}"), "float32[1,4,7,9]");
	EXPECT(IN2("[1,4,8,8]", "float32", "[8,3,3,3]", "float32"),
	       NODE("conv2d", "[\"x\",\"y\"]", "{}"), "ERR: does not fit input");
	EXPECT(IN2("[1,3,2,2]", "float32", "[4,3,3,3]", "float32"),
	       NODE("conv2d", "[\"x\",\"y\"]", "{}"), "ERR: larger than the padded input");
	EXPECT(IN2("[1,3,8,8]", "float32", "[4,3,3,3]", "float32"),
	       NODE("conv2d", "[\"x\",\"y\"]", "{\"stride\":0}"), "ERR: 'stride' must be >= 1");
	/* sdpa: [..., L, E] x [..., S, E] x [..., S, Ev] -> [..., L, Ev]; mask broadcasts to [..., L, S] */
	EXPECT("[{\"name\":\"q\",\"shape\":[1,12,197,64],\"dtype\":\"float16\"},{\"name\":\"k\",\"shape\":[1,12,50,64],\"dtype\":\"float16\"},"
	       "{\"name\":\"v\",\"shape\":[1,12,50,32],\"dtype\":\"float16\"},{\"name\":\"m\",\"shape\":[1,1,1,50],\"dtype\":\"bool\"}]",
	       NODE("scaled_dot_product_attention", "[\"q\",\"k\",\"v\",\"m\"]", "{\"scale\":0.125}"), "float16[1,12,197,32]");
	EXPECT("[{\"name\":\"q\",\"shape\":[1,12,197,64],\"dtype\":\"float16\"},{\"name\":\"k\",\"shape\":[1,12,50,64],\"dtype\":\"float16\"},"
	       "{\"name\":\"v\",\"shape\":[1,12,50,32],\"dtype\":\"float16\"},{\"name\":\"m\",\"shape\":[1,1,7,50],\"dtype\":\"bool\"}]",
	       NODE("scaled_dot_product_attention", "[\"q\",\"k\",\"v\",\"m\"]", "{}"), "ERR: do not broadcast (dim -2: 197 vs 7)");
	EXPECT("[{\"name\":\"q\",\"shape\":[1,2,4,8],\"dtype\":\"float32\"}]",
	       NODE("scaled_dot_product_attention", "[\"q\",\"q\",\"q\"]", "{\"dropout_p\":0.1}"), "ERR: dropout_p must be 0");
}

static void test_spatial_and_reduce(void)
{
	EXPECT(IN1("[1,1,20,20]", "float32"), NODE("interpolate", "[\"x\"]", "{\"size\":[640,640],\"mode\":\"bilinear\"}"), "float32[1,1,640,640]");
	EXPECT(IN1("[1,3,20,30]", "float32"), NODE("interpolate", "[\"x\"]", "{\"scale_factor\":2.0}"), "float32[1,3,40,60]");
	/* floor(7 * 1.5) = 10 */
	EXPECT(IN1("[1,3,7,7]", "float32"), NODE("interpolate", "[\"x\"]", "{\"scale_factor\":[1.5,2],\"mode\":\"nearest\"}"), "float32[1,3,10,14]");
	EXPECT(IN1("[1,3,7,7]", "float32"), NODE("interpolate", "[\"x\"]", "{\"size\":8,\"scale_factor\":2}"), "ERR: exactly one of size and scale_factor");
	EXPECT(IN1("[1,3,7,7]", "float32"), NODE("interpolate", "[\"x\"]", "{\"size\":8,\"mode\":\"nearest\",\"align_corners\":false}"), "ERR: align_corners");
	EXPECT(IN1("[1,3,7]", "float32"), NODE("interpolate", "[\"x\"]", "{\"size\":8,\"mode\":\"bilinear\"}"), "ERR: needs a 4-D input");
	EXPECT(IN1("[1,3,7,7]", "float32"), NODE("interpolate", "[\"x\"]", "{\"size\":8,\"mode\":\"bicubic\"}"), "ERR: mode must be");
	EXPECT(IN1("[1,128,64,64]", "float32"), NODE("adaptive_avg_pool2d", "[\"x\"]", "{\"output_size\":1}"), "float32[1,128,1,1]");
	EXPECT(IN1("[1,128,64,64]", "float32"), NODE("adaptive_avg_pool2d", "[\"x\"]", "{\"output_size\":[7,null]}"), "float32[1,128,7,64]");
	EXPECT(IN1("[2,3,4]", "float32"), NODE("pad", "[\"x\"]", "{\"pad\":[0,1]}"), "float32[2,3,5]");
	EXPECT(IN1("[2,3,4]", "float32"), NODE("pad", "[\"x\"]", "{\"pad\":[1,1,-1,0],\"value\":2.0}"), "float32[2,2,6]");
	EXPECT(IN1("[2,3,4]", "float32"), NODE("pad", "[\"x\"]", "{\"pad\":[1]}"), "ERR: even number");
	EXPECT(IN1("[2,3,4]", "float32"), NODE("pad", "[\"x\"]", "{\"pad\":[1,1],\"mode\":\"reflect\"}"), "ERR: not supported");
	EXPECT(IN1("[2,3,4]", "float32"), NODE("pad", "[\"x\"]", "{\"pad\":[0,0,-2,-2]}"), "ERR: negative padding");
	EXPECT(IN1("[2,3,4]", "float32"), NODE("sum", "[\"x\"]", "{\"dim\":3,\"keepdim\":true}"), "ERR: out of range");
	EXPECT(IN1("[2,3,4]", "float32"), NODE("sum", "[\"x\"]", "{\"dim\":-1,\"keepdim\":true}"), "float32[2,3,1]");
	EXPECT(IN1("[2,3,4]", "float32"), NODE("mean", "[\"x\"]", "{\"dim\":[0,2]}"), "float32[3]");
	EXPECT(IN1("[2,3,4]", "float32"), NODE("mean", "[\"x\"]", "{}"), "float32[]");
	EXPECT(IN1("[2,3,4]", "bool"), NODE("sum", "[\"x\"]", "{\"dim\":1}"), "int64[2,4]");
	EXPECT(IN1("[2,3,4]", "int64"), NODE("mean", "[\"x\"]", "{\"dim\":1}"), "ERR: floating-point");
	EXPECT(IN1("[2,3,4]", "float16"), NODE("mean", "[\"x\"]", "{\"dim\":[1,-2]}"), "ERR: appears twice");
}

static void test_views(void)
{
	EXPECT(IN1("[2,3,4]", "float32"), NODE("transpose", "[\"x\"]", "{\"dim0\":-1,\"dim1\":0}"), "float32[4,3,2]");
	EXPECT(IN1("[2,3,4]", "float32"), NODE("permute", "[\"x\"]", "{\"dims\":[2,0,1]}"), "float32[4,2,3]");
	EXPECT(IN1("[2,3,4]", "float32"), NODE("permute", "[\"x\"]", "{\"dims\":[2,0,2]}"), "ERR: not a permutation");
	EXPECT(IN1("[2,3,4]", "float32"), NODE("permute", "[\"x\"]", "{\"dims\":[1,0]}"), "ERR: dims has 2 entries");
	EXPECT(IN1("[2,3,4]", "float32"), NODE("reshape", "[\"x\"]", "{\"shape\":[-1,4]}"), "float32[6,4]");
	EXPECT(IN1("[2,3,4]", "float32"), NODE("view", "[\"x\"]", "{\"shape\":[4,-1,-1]}"), "ERR: more than one -1");
	EXPECT(IN1("[2,3,4]", "float32"), NODE("view", "[\"x\"]", "{\"shape\":[5,-1]}"), "ERR: cannot hold the 24 elements");
	EXPECT(IN1("[1,320,14,28]", "float16"), NODE("view", "[\"x\"]", "{\"shape\":[1,320,14,14]}"),
	       "ERR: shape [1,320,14,14] is 62720 elements, 'x' [1,320,14,28] has 125440");
	EXPECT(IN1("[2,3,4]", "float32"), NODE("view", "[\"x\"]", "{\"shape\":24}"), "float32[24]");
	EXPECT(IN1("[2,3,4,5]", "float32"), NODE("flatten", "[\"x\"]", "{\"start_dim\":1,\"end_dim\":2}"), "float32[2,12,5]");
	EXPECT(IN1("[2,3,4,5]", "float32"), NODE("flatten", "[\"x\"]", "{}"), "float32[120]");
	EXPECT(IN1("[]", "float32"), NODE("flatten", "[\"x\"]", "{}"), "float32[1]");
	EXPECT(IN1("[2,3,4,5]", "float32"), NODE("flatten", "[\"x\"]", "{\"start_dim\":2,\"end_dim\":1}"), "ERR: comes after");
	EXPECT(IN1("[1,1,768]", "float32"), NODE("expand", "[\"x\"]", "{\"size\":[4,-1,-1]}"), "float32[4,1,768]");
	EXPECT(IN1("[12]", "float32"), NODE("expand", "[\"x\"]", "{\"size\":[1,1,12,12]}"), "float32[1,1,12,12]");
	EXPECT(IN1("[3,1]", "float32"), NODE("expand", "[\"x\"]", "{\"size\":[-1,-1,5]}"), "ERR: -1 for a new leading dim");
	EXPECT(IN1("[3,2]", "float32"), NODE("expand", "[\"x\"]", "{\"size\":[3,5]}"), "ERR: cannot expand dim 1");
	/* getitem: x[:, None, None, :], x[..., 1], x[:, :8, 11:], x[-1], x[::3] */
	EXPECT(IN1("[1,12]", "int64"), NODE("getitem", "[\"x\"]", "{\"index\":[[null,null,null],null,null,[null,null,null]]}"), "int64[1,1,1,12]");
	EXPECT(IN1("[1,625,8,4,2]", "float32"), NODE("getitem", "[\"x\"]", "{\"index\":[\"...\",1]}"), "float32[1,625,8,4]");
	EXPECT(IN1("[32,9,23]", "float32"), NODE("getitem", "[\"x\"]", "{\"index\":[[null,null,null],[null,8,null],[11,null,null]]}"), "float32[32,8,12]");
	EXPECT(IN1("[3,2,5]", "float32"), NODE("getitem", "[\"x\"]", "{\"index\":-1}"), "float32[2,5]");
	EXPECT(IN1("[10]", "float32"), NODE("getitem", "[\"x\"]", "{\"index\":[[null,null,3]]}"), "float32[4]");
	EXPECT(IN1("[10]", "float32"), NODE("getitem", "[\"x\"]", "{\"index\":[[-3,100,1]]}"), "float32[3]");
	EXPECT(IN1("[10]", "float32"), NODE("getitem", "[\"x\"]", "{\"index\":[[8,2,1]]}"), "float32[0]");
	EXPECT(IN1("[10]", "float32"), NODE("getitem", "[\"x\"]", "{\"index\":[[null,null,-1]]}"), "ERR: step must be >= 1");
	EXPECT(IN1("[10]", "float32"), NODE("getitem", "[\"x\"]", "{\"index\":[10]}"), "ERR: out of range");
	EXPECT(IN1("[10]", "float32"), NODE("getitem", "[\"x\"]", "{\"index\":[1,2]}"), "ERR: too many indices");
	EXPECT(IN1("[10]", "float32"), NODE("getitem", "[\"x\"]", "{\"index\":[\"...\",\"...\"]}"), "ERR: more than one");
	EXPECT(IN1("[2,3]", "float32"), NODE("getitem", "[\"x\"]", "{\"index\":[null,\"...\",null]}"), "float32[1,2,3,1]");
}

static void test_cat_split(void)
{
	EXPECT(IN2("[1,1,768]", "float32", "[1,196,768]", "float32"), NODE("cat", "[\"x\",\"y\"]", "{\"dim\":1}"), "float32[1,197,768]");
	EXPECT(IN2("[1,1,768]", "float32", "[1,196,768]", "float32"), NODE("cat", "[\"x\",\"y\"]", "{\"dim\":-1}"), "ERR: differ in dim 1");
	EXPECT(IN2("[2,3]", "float16", "[2,3]", "float32"), NODE("cat", "[\"x\",\"y\"]", "{}"), "float32[4,3]");
	EXPECT(IN2("[2,3]", "float32", "[3]", "float32"), NODE("cat", "[\"x\",\"y\"]", "{}"), "ERR: different ranks");
	const char *sp = "[{\"name\":\"s\",\"op\":\"split\",\"inputs\":[\"x\"],\"attrs\":{\"split_size\":[64,96,96],\"dim\":1}},"
			 "{\"name\":\"r\",\"op\":\"getitem\",\"inputs\":[\"s\"],\"attrs\":{\"index\":-1}}]";
	EXPECT(IN1("[1,256,28,28]", "float32"), sp, "float32[1,96,28,28]");
	EXPECT(IN1("[1,255,28,28]", "float32"), sp, "ERR: sum to 256 but dim 1");
	const char *sp2 = "[{\"name\":\"s\",\"op\":\"split\",\"inputs\":[\"x\"],\"attrs\":{\"split_size\":4}},"
			  "{\"name\":\"r\",\"op\":\"getitem\",\"inputs\":[\"s\"],\"attrs\":{\"index\":[2]}}]";
	EXPECT(IN1("[10,3]", "float32"), sp2, "float32[2,3]");
	/* chunk(6 into 4): ceil(6/4) = 2 per chunk -> 3 chunks */
	const char *ch = "[{\"name\":\"s\",\"op\":\"chunk\",\"inputs\":[\"x\"],\"attrs\":{\"chunks\":4}},"
			 "{\"name\":\"r\",\"op\":\"getitem\",\"inputs\":[\"s\"],\"attrs\":{\"index\":2}}]";
	EXPECT(IN1("[6]", "float32"), ch, "float32[2]");
	const char *ch3 = "[{\"name\":\"s\",\"op\":\"chunk\",\"inputs\":[\"x\"],\"attrs\":{\"chunks\":4}},"
			  "{\"name\":\"r\",\"op\":\"getitem\",\"inputs\":[\"s\"],\"attrs\":{\"index\":3}}]";
	EXPECT(IN1("[6]", "float32"), ch3, "ERR: out of range for the 3-tuple 's'");
	const char *tup = "[{\"name\":\"s\",\"op\":\"chunk\",\"inputs\":[\"x\"],\"attrs\":{\"chunks\":2}},"
			  "{\"name\":\"r\",\"op\":\"relu\",\"inputs\":[\"s\"]}]";
	EXPECT(IN1("[6]", "float32"), tup, "ERR: is a tuple");
}

/* The tuple ops unbind and tensor_split, leaky_relu, baddbmm, arange
 * (shapes and dtypes checked against torch 1.13). */
static void test_more_ops(void)
{
	EXPECT(IN1("[2,3]", "float16"), NODE("leaky_relu", "[\"x\"]", "{\"negative_slope\":0.2,\"inplace\":true}"),
	       "float16[2,3]");
	EXPECT(IN1("[2,3]", "int64"), NODE("leaky_relu", "[\"x\"]", "{}"), "ERR: needs a floating-point tensor");
	EXPECT(IN1("[2,3]", "float32"), NODE("leaky_relu", "[\"x\"]", "{\"negative_slope\":\"a\"}"),
	       "ERR: attribute 'negative_slope' must be a number");

	const char *ub = "[{\"name\":\"s\",\"op\":\"unbind\",\"inputs\":[\"x\"],\"attrs\":{\"dim\":-3}},"
			 "{\"name\":\"r\",\"op\":\"getitem\",\"inputs\":[\"s\"],\"attrs\":{\"index\":1}}]";
	EXPECT(IN1("[3,2,5,4]", "bfloat16"), ub, "bfloat16[3,5,4]");
	EXPECT(IN1("[3,2,5,4]", "float32"), NODE("unbind", "[\"x\"]", "{\"dim\":4}"), "ERR: dim 4 is out of range");
	EXPECT(IN1("[]", "float32"), NODE("unbind", "[\"x\"]", "{}"), "ERR: cannot unbind a 0-dim tensor");
	const char *ub3 = "[{\"name\":\"s\",\"op\":\"unbind\",\"inputs\":[\"x\"]},"
			  "{\"name\":\"r\",\"op\":\"getitem\",\"inputs\":[\"s\"],\"attrs\":{\"index\":3}}]";
	EXPECT(IN1("[3,2]", "float32"), ub3, "ERR: out of range for the 3-tuple 's'");

	/* tensor_split(x, 3, dim=1) of 10: 4, 3, 3; indices [7, 2, -1]: 7, 0, 7, 1 */
	const char *ts = "[{\"name\":\"s\",\"op\":\"tensor_split\",\"inputs\":[\"x\"],\"attrs\":{\"sections\":3,\"dim\":1}},"
			 "{\"name\":\"r\",\"op\":\"getitem\",\"inputs\":[\"s\"],\"attrs\":{\"index\":0}}]";
	EXPECT(IN1("[2,10]", "float32"), ts, "float32[2,4]");
	const char *ti = "[{\"name\":\"s\",\"op\":\"tensor_split\",\"inputs\":[\"x\"],\"attrs\":{\"indices\":[7,2,-1],\"dim\":-1}},"
			 "{\"name\":\"r\",\"op\":\"getitem\",\"inputs\":[\"s\"],\"attrs\":{\"index\":2}}]";
	EXPECT(IN1("[2,10]", "float32"), ti, "float32[2,7]");
	/* more sections than elements: empty pieces, as PyTorch gives */
	const char *te = "[{\"name\":\"s\",\"op\":\"tensor_split\",\"inputs\":[\"x\"],\"attrs\":{\"sections\":5}},"
			 "{\"name\":\"r\",\"op\":\"getitem\",\"inputs\":[\"s\"],\"attrs\":{\"index\":4}}]";
	EXPECT(IN1("[3]", "int64"), te, "int64[0]");
	EXPECT(IN1("[2,10]", "float32"), NODE("tensor_split", "[\"x\"]", "{\"sections\":0}"), "ERR: sections must be 1..");
	EXPECT(IN1("[2,10]", "float32"), NODE("tensor_split", "[\"x\"]", "{\"sections\":2,\"indices\":[1]}"),
	       "ERR: exactly one of 'sections' and 'indices'");
	EXPECT(IN1("[2,10]", "float32"), NODE("tensor_split", "[\"x\"]", "{}"), "ERR: exactly one of");

	const char *in3 = "[{\"name\":\"x\",\"shape\":[6,1,9],\"dtype\":\"float16\"},"
			  "{\"name\":\"y\",\"shape\":[6,5,4],\"dtype\":\"float16\"},"
			  "{\"name\":\"z\",\"shape\":[6,4,9],\"dtype\":\"float16\"}]";
	EXPECT(in3, NODE("baddbmm", "[\"x\",\"y\",\"z\"]", "{\"beta\":0,\"alpha\":0.125}"), "float16[6,5,9]");
	EXPECT(in3, NODE("baddbmm", "[\"y\",\"y\",\"z\"]", "{}"), "ERR: do not broadcast");
	EXPECT(in3, NODE("baddbmm", "[\"x\",\"z\",\"y\"]", "{}"), "ERR: must be [b, n, m] and [b, m, p]");
	EXPECT(in3, NODE("baddbmm", "[\"x\",\"y\"]", "{}"), "ERR: takes 3 operands, got 2");
	const char *mix = "[{\"name\":\"x\",\"shape\":[9],\"dtype\":\"float32\"},"
			  "{\"name\":\"y\",\"shape\":[6,5,4],\"dtype\":\"float16\"},"
			  "{\"name\":\"z\",\"shape\":[6,4,9],\"dtype\":\"float16\"}]";
	EXPECT(mix, NODE("baddbmm", "[\"x\",\"y\",\"z\"]", "{}"), "ERR: baddbmm does not promote");

	/* arange: int64 from ints, float32 once any bound is a float */
	const char *one = IN1("[1]", "float32");
	const char *ar = "[{\"name\":\"r\",\"op\":\"arange\",\"inputs\":[],\"attrs\":%s},"
			 "{\"name\":\"u\",\"op\":\"add\",\"inputs\":[\"x\",1]}]";
	static const struct {
		const char *attrs, *want;
	} arc[] = {
		{"{\"end\":10}", "int64[10]"},
		{"{\"start\":1,\"end\":2,\"step\":0.3}", "float32[4]"},
		{"{\"end\":5.0}", "float32[5]"},
		{"{\"start\":10,\"end\":0,\"step\":-3}", "int64[4]"},
		{"{\"end\":7,\"dtype\":\"float16\"}", "float16[7]"},
		{"{\"start\":2,\"end\":2}", "int64[0]"},
		/* integer dtypes truncate the bounds; int64 computes the length from
		 * them, int32 from the numbers as given (torch 1.13) */
		{"{\"start\":0.5,\"end\":3.7,\"dtype\":\"int64\"}", "int64[3]"},
		{"{\"start\":0.5,\"end\":3.7,\"dtype\":\"int32\"}", "int32[4]"},
		{"{\"end\":3,\"step\":0.5,\"dtype\":\"int64\"}", "ERR: step must be nonzero"},
		{"{\"end\":5,\"step\":0}", "ERR: step must be nonzero"},
		{"{\"start\":5,\"end\":0}", "ERR: inconsistent with step sign"},
		{"{\"start\":1}", "ERR: missing attribute 'end'"},
		{"{\"end\":3,\"dtype\":\"bool\"}", "ERR: dtype bool is not supported"},
	};
	for (size_t i = 0; i < sizeof(arc) / sizeof(arc[0]); i++) {
		char nodes[512], got[GRAPH_ERR_LEN + 8];
		snprintf(nodes, sizeof(nodes), ar, arc[i].attrs);
		/* the graph's output is r; u keeps x used */
		char doc[2048], err[GRAPH_ERR_LEN];
		struct graph_task *t;
		snprintf(doc, sizeof(doc),
			 "{\"id\":\"t\",\"summary\":\"s\",\"variants\":[{\"name\":\"v\",\"inputs\":%s,"
			 "\"nodes\":%s,\"outputs\":[\"r\",\"u\"]}]}", one, nodes);
		if (graph_load_buffer("g.json", doc, strlen(doc), &t, err, sizeof(err))) {
			snprintf(got, sizeof(got), "ERR: %s", err);
		} else {
			const struct graph_value *o = &t->variants[0].values[t->variants[0].outputs[0]];
			char sb[200];
			snprintf(got, sizeof(got), "%s%s", graph_dtype_name(o->dtype), graph_shape_str(&o->shape, sb, sizeof(sb)));
			graph_task_free(t);
		}
		int ok = strncmp(arc[i].want, "ERR:", 4) == 0 ? strncmp(got, "ERR:", 4) == 0 && strstr(got, arc[i].want + 5)
							       : strcmp(got, arc[i].want) == 0;
		CHECK(ok, "arange %s: want '%s', got '%s'", arc[i].attrs, arc[i].want, got);
	}
	EXPECT(one, "[{\"name\":\"r\",\"op\":\"arange\",\"inputs\":[\"x\"],\"attrs\":{\"end\":3}}]",
	       "ERR: takes 0 operands, got 1");
}

/* avg_pool2d and unfold (shapes and refusals checked against torch 1.13). */
static void test_pool_unfold(void)
{
	const char *x4 = IN1("[2,3,7,9]", "float32");
	EXPECT(x4, NODE("avg_pool2d", "[\"x\"]", "{\"kernel_size\":2,\"stride\":2,\"ceil_mode\":true,"
		"\"count_include_pad\":false}"), "float32[2,3,4,5]");
	EXPECT(x4, NODE("avg_pool2d", "[\"x\"]", "{\"kernel_size\":3,\"stride\":2,\"padding\":1,\"ceil_mode\":true}"),
	       "float32[2,3,4,5]");
	EXPECT(x4, NODE("avg_pool2d", "[\"x\"]", "{\"kernel_size\":[3,2],\"stride\":[1,2],\"padding\":[1,0],"
		"\"ceil_mode\":true}"), "float32[2,3,7,5]");
	/* ceil mode: the last window must start inside the input or its left padding */
	EXPECT(IN1("[4,7,6]", "bfloat16"), NODE("avg_pool2d", "[\"x\"]", "{\"kernel_size\":2,\"stride\":null,"
		"\"padding\":1,\"ceil_mode\":true}"), "bfloat16[4,4,4]");
	EXPECT(IN1("[0,3,5,5]", "float32"), NODE("avg_pool2d", "[\"x\"]", "{\"kernel_size\":2,\"stride\":[]}"),
	       "float32[0,3,2,2]");
	EXPECT(IN1("[1,3,5,5]", "float16"), NODE("avg_pool2d", "[\"x\"]", "{\"kernel_size\":5}"), "float16[1,3,1,1]");
	EXPECT(x4, NODE("avg_pool2d", "[\"x\"]", "{\"kernel_size\":3,\"padding\":2}"),
	       "ERR: padding [2, 2] must be at most half of kernel_size [3, 3]");
	EXPECT(x4, NODE("avg_pool2d", "[\"x\"]", "{\"kernel_size\":10}"), "ERR: is larger than the padded input");
	EXPECT(x4, NODE("avg_pool2d", "[\"x\"]", "{\"kernel_size\":2,\"divisor_override\":0}"),
	       "ERR: divisor_override must not be 0");
	EXPECT(x4, NODE("avg_pool2d", "[\"x\"]", "{\"kernel_size\":2,\"stride\":0}"),
	       "ERR: attribute 'stride' must be >= 1");
	EXPECT(x4, NODE("avg_pool2d", "[\"x\"]", "{\"kernel_size\":[1,2,3]}"),
	       "ERR: attribute 'kernel_size' needs 1 or 2 values, it has 3");
	EXPECT(x4, NODE("avg_pool2d", "[\"x\"]", "{}"), "ERR: missing attribute 'kernel_size'");
	EXPECT(IN1("[3,7]", "float32"), NODE("avg_pool2d", "[\"x\"]", "{\"kernel_size\":2}"), "ERR: must be 3-D");
	EXPECT(IN1("[1,0,4,4]", "float32"), NODE("avg_pool2d", "[\"x\"]", "{\"kernel_size\":2}"),
	       "ERR: only the batch dim may be 0");
	EXPECT(IN1("[1,3,4,4]", "int64"), NODE("avg_pool2d", "[\"x\"]", "{\"kernel_size\":2}"), "ERR: floating-point");

	const char *t3 = IN1("[2,5,10]", "float32");
	EXPECT(t3, NODE("unfold", "[\"x\"]", "{\"dimension\":-1,\"size\":3,\"step\":2}"), "float32[2,5,4,3]");
	EXPECT(t3, NODE("unfold", "[\"x\"]", "{\"dimension\":1,\"size\":2,\"step\":3}"), "float32[2,2,10,2]");
	EXPECT(t3, NODE("unfold", "[\"x\"]", "{\"dimension\":1,\"size\":0,\"step\":1}"), "float32[2,6,10,0]");
	EXPECT(IN1("[2,5,10]", "int64"), NODE("unfold", "[\"x\"]", "{\"dimension\":0,\"size\":2,\"step\":5}"),
	       "int64[1,5,10,2]");
	EXPECT(t3, NODE("unfold", "[\"x\"]", "{\"dimension\":1,\"size\":6,\"step\":1}"),
	       "ERR: size 6 must be 0..5 (dim 1 of 'x' [2,5,10])");
	EXPECT(t3, NODE("unfold", "[\"x\"]", "{\"dimension\":1,\"size\":-1,\"step\":1}"), "ERR: size -1 must be 0..5");
	EXPECT(t3, NODE("unfold", "[\"x\"]", "{\"dimension\":1,\"size\":2,\"step\":0}"), "ERR: step is 0 but must be > 0");
	EXPECT(t3, NODE("unfold", "[\"x\"]", "{\"dimension\":3,\"size\":1,\"step\":1}"),
	       "ERR: dimension 3 is out of range for a 3-dim tensor");
	EXPECT(t3, NODE("unfold", "[\"x\"]", "{\"size\":1,\"step\":1}"), "ERR: missing attribute 'dimension'");
	EXPECT(IN1("[]", "float32"), NODE("unfold", "[\"x\"]", "{\"dimension\":0,\"size\":1,\"step\":1}"),
	       "ERR: 0-dim");
	EXPECT(IN1("[1,1,1,1,1,1,1,2]", "float32"), NODE("unfold", "[\"x\"]", "{\"dimension\":7,\"size\":1,\"step\":1}"),
	       "ERR: more than 8 dims");
}

static void test_structure(void)
{
	char got[GRAPH_ERR_LEN + 8];
	/* Unknown op, dangling name, forward reference, duplicate, unused input, dead node. */
	EXPECT(IN1("[2]", "float32"), NODE("frobnicate", "[\"x\"]", "{}"), "ERR: variant 'v', node 'r': unknown op 'frobnicate'");
	EXPECT(IN1("[2]", "float32"), NODE("relu", "[\"zz\"]", "{}"), "ERR: operand 0 'zz' is not an input or an earlier node");
	EXPECT(IN1("[2]", "float32"),
	       "[{\"name\":\"a\",\"op\":\"relu\",\"inputs\":[\"r\"]},{\"name\":\"r\",\"op\":\"relu\",\"inputs\":[\"a\"]}]",
	       "ERR: defined later");
	EXPECT(IN1("[2]", "float32"), "[{\"name\":\"r\",\"op\":\"relu\",\"inputs\":[\"r\"]}]", "ERR: defined later");
	EXPECT(IN1("[2]", "float32"), "[{\"name\":\"x\",\"op\":\"relu\",\"inputs\":[\"x\"]}]", "ERR: duplicate name");
	EXPECT(IN2("[2]", "float32", "[2]", "float32"), NODE("relu", "[\"x\"]", "{}"), "ERR: input 'y' is never used");
	EXPECT(IN1("[2]", "float32"),
	       "[{\"name\":\"a\",\"op\":\"relu\",\"inputs\":[\"x\"]},{\"name\":\"r\",\"op\":\"relu\",\"inputs\":[\"x\"]}]",
	       "ERR: node 'a' (relu): the result is never used");
	EXPECT("[{\"name\":\"x\",\"shape\":[2],\"dtype\":\"float33\"}]", NODE("relu", "[\"x\"]", "{}"), "ERR: invalid dtype 'float33'");
	EXPECT("[{\"name\":\"x\",\"shape\":[2,-1],\"dtype\":\"float32\"}]", NODE("relu", "[\"x\"]", "{}"), "ERR: shape entry 1 must be an integer >= 0");
	EXPECT("[{\"name\":\"x\",\"shape\":[2],\"dtype\":\"float32\",\"data\":[1]}]", NODE("relu", "[\"x\"]", "{}"), "ERR: 'data' has 1 values, shape needs 2");
	EXPECT("[{\"name\":\"x\",\"shape\":[2],\"dtype\":\"float32\",\"mean\":\"a\"}]", NODE("relu", "[\"x\"]", "{}"), "ERR: 'mean' must be a finite number");
	EXPECT("[{\"name\":\"x\",\"shape\":[2],\"dtype\":\"float32\",\"colour\":1}]", NODE("relu", "[\"x\"]", "{}"), "ERR: unknown field 'colour'");
	EXPECT("[{\"name\":\"x\",\"shape\":[1048576,1048576,2],\"dtype\":\"float32\"}]", NODE("relu", "[\"x\"]", "{}"), "ERR: too large");
	EXPECT(IN1("[2]", "float32"), "[]", "ERR: output 'r' is not an input or a node");
	/* The whole message: file, variant, node, op, problem. */
	run(IN1("[2,3]", "float32"), NODE("view", "[\"x\"]", "{\"shape\":[5]}"), "r", got, sizeof(got));
	CHECK(strcmp(got, "ERR: g.json: variant 'v', node 'r' (view): shape [5] is 5 elements, 'x' [2,3] has 6") == 0,
	      "full message: %s", got);
	/* Empty graph and bad JSON. */
	struct graph_task *t;
	char err[GRAPH_ERR_LEN];
	const char *empty = "{\"id\":\"t\",\"summary\":\"s\",\"variants\":[{\"name\":\"v\",\"inputs\":[],\"nodes\":[],\"outputs\":[]}]}";
	CHECK(graph_load_buffer("g.json", empty, strlen(empty), &t, err, sizeof(err)) == -1 && strstr(err, "empty"),
	      "empty graph: %s", err);
	CHECK(graph_load_buffer("g.json", "{\"id\":", 6, &t, err, sizeof(err)) == -1 && strstr(err, "invalid JSON at line 1"),
	      "bad json: %s", err);
	const char *novar = "{\"id\":\"t\",\"summary\":\"s\",\"variants\":[]}";
	CHECK(graph_load_buffer("g.json", novar, strlen(novar), &t, err, sizeof(err)) == -1 && strstr(err, "non-empty"),
	      "no variants: %s", err);
	const char *badid = "{\"id\":\"../x\",\"summary\":\"s\",\"variants\":[]}";
	CHECK(graph_load_buffer("g.json", badid, strlen(badid), &t, err, sizeof(err)) == -1 && strstr(err, "id '../x'"),
	      "bad id: %s", err);
	/* Inconsistent variants. */
	const char *two = "{\"id\":\"t\",\"summary\":\"s\",\"variants\":["
			  "{\"name\":\"a\",\"inputs\":[{\"name\":\"x\",\"shape\":[2],\"dtype\":\"float32\"}],\"nodes\":[{\"name\":\"r\",\"op\":\"relu\",\"inputs\":[\"x\"]}],\"outputs\":[\"r\"]},"
			  "{\"name\":\"b\",\"inputs\":[{\"name\":\"x\",\"shape\":[4],\"dtype\":\"float16\"}],\"nodes\":[{\"name\":\"r\",\"op\":\"sigmoid\",\"inputs\":[\"x\"]}],\"outputs\":[\"r\"]}]}";
	CHECK(graph_load_buffer("g.json", two, strlen(two), &t, err, sizeof(err)) == -1 &&
		      strstr(err, "variant 'b': node 0 is sigmoid, variant 'a' has relu"),
	      "inconsistent variants: %s", err);
}

static void test_render(void)
{
	const char *doc = "{\"id\":\"t\",\"summary\":\"s\",\"variants\":[{\"name\":\"f16_b2\",\"inputs\":["
			  "{\"name\":\"x\",\"shape\":[2,4],\"dtype\":\"float16\"}],\"nodes\":["
			  "{\"name\":\"a\",\"op\":\"getitem\",\"inputs\":[\"x\"],\"attrs\":{\"index\":[\"...\",[1,null,null]]}},"
			  "{\"name\":\"b\",\"op\":\"mul\",\"inputs\":[\"a\",0.5]}],\"outputs\":[\"b\"]}]}";
	struct graph_task *t;
	char err[GRAPH_ERR_LEN];
	char *buf = NULL;
	size_t len = 0;
	CHECK(graph_load_buffer("g.json", doc, strlen(doc), &t, err, sizeof(err)) == 0, "render load: %s", err);
	if (t == NULL)
		return;
	CHECK(graph_render_variant(&t->variants[0], &buf, &len, "") == 0, "render");
	CHECK(strstr(buf, "variant f16_b2\n") != NULL, "render header: %s", buf);
	CHECK(strstr(buf, "a = x[0:2, 1:4]") != NULL, "render getitem: %s", buf);
	CHECK(strstr(buf, "b = mul(a, 0.5)") != NULL && strstr(buf, "float16[2,3]\n") != NULL, "render mul: %s", buf);
	CHECK(strstr(buf, "  out b\n") != NULL, "render out: %s", buf);
	char *seq = graph_op_sequence(t);
	CHECK(seq && strcmp(seq, "getitem > mul") == 0, "op sequence: %s", seq ? seq : "(null)");
	free(seq);
	free(buf);
	graph_task_free(t);

	/* Attributes that change the meaning are shown even at their defaults
	 * and even when graph.json leaves them out: dropout's training flag
	 * (an agent must not wonder whether to implement random dropout),
	 * softmax's dim; a default that says nothing (inplace) is not. */
	const char *doc2 = "{\"id\":\"t\",\"summary\":\"s\",\"variants\":[{\"name\":\"v\",\"inputs\":["
			   "{\"name\":\"x\",\"shape\":[2,4],\"dtype\":\"float32\"}],\"nodes\":["
			   "{\"name\":\"a\",\"op\":\"dropout\",\"inputs\":[\"x\"],\"attrs\":{\"p\":0.1,\"inplace\":false}},"
			   "{\"name\":\"b\",\"op\":\"softmax\",\"inputs\":[\"a\"],\"attrs\":{\"dim\":-1}}],"
			   "\"outputs\":[\"b\"]}]}";
	buf = NULL;
	len = 0;
	CHECK(graph_load_buffer("g.json", doc2, strlen(doc2), &t, err, sizeof(err)) == 0, "render load: %s", err);
	if (t == NULL)
		return;
	CHECK(graph_render_variant(&t->variants[0], &buf, &len, "") == 0, "render");
	CHECK(strstr(buf, "a = dropout(x, p=0.1, training=false)") != NULL, "render dropout: %s", buf);
	CHECK(strstr(buf, "b = softmax(a, dim=1)") != NULL, "render softmax: %s", buf);
	CHECK(strstr(buf, "inplace") == NULL, "render hides inplace: %s", buf);
	free(buf);
	graph_task_free(t);
}

int main(void)
{
	test_elementwise();
	test_norms_and_softmax();
	test_linalg();
	test_spatial_and_reduce();
	test_views();
	test_cat_split();
	test_more_ops();
	test_pool_unfold();
	test_structure();
	test_render();
	printf("%d passed, %d failed\n", passed, failed);
	return failed ? 1 : 0;
}
