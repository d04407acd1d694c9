/* test_import.c - engine/import: the GraphNet Python subset to graph.json.
 *
 * Every case is an in-memory forward() body run against one fixed
 * weight_meta.py (META below), checked either node by node against the JSON
 * the importer must produce, or by a fragment of its error message (which must
 * name the file and line).  Bodies are written without indentation; body line
 * k is line 4 + k of the generated model.py. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "graph.h"
#include "import.h"

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

#define ARGS "x, y, w, b, v, g, h, W, c, i, hf"

/* One entry per forward argument; GraphNet's layout (tabs, original_name,
 * device, None for int stats). */
static const char META[] =
	"class Program_weight_tensor_meta_x:\n"
	"\tname = \"x\"\n\toriginal_name = \"L_x_\"\n\tshape = [1, 4, 8, 8]\n"
	"\tdtype = \"torch.float32\"\n\tdevice = \"cuda:0\"\n\tmean = 0.5\n\tstd = 0.25\n\n\n"
	"class Program_weight_tensor_meta_y:\n"
	"\tname = \"y\"\n\tshape = [1, 4, 8, 8]\n\tdtype = \"torch.float32\"\n\tmean = -0.000\n\tstd = 0.001\n"
	"class Program_weight_tensor_meta_w:\n"
	"\tname = \"w\"\n\tshape = [8, 4, 3, 3]\n\tdtype = \"torch.float32\"\n\tmean = 0.0\n\tstd = 0.02\n"
	"class Program_weight_tensor_meta_b:\n"
	"\tname = \"b\"\n\tshape = [8]\n\tdtype = \"torch.float32\"\n\tmean = 0.0\n\tstd = 0.0\n"
	"\tmin_val = 0\n\tmax_val = 1.5\n"
	"class Program_weight_tensor_meta_v:\n"
	"\tname = \"v\"\n\tshape = [2, 8, 16]\n\tdtype = \"torch.float32\"\n"
	"class Program_weight_tensor_meta_g:\n"
	"\tname = \"g\"\n\tshape = [16]\n\tdtype = \"torch.float32\"\n\tmean = 1.0\n\tstd = 0.0\n"
	"class Program_weight_tensor_meta_h:\n"
	"\tname = \"h\"\n\tshape = [16]\n\tdtype = \"torch.float32\"\n"
	"class Program_weight_tensor_meta_W:\n"
	"\tname = \"W\"\n\tshape = [32, 16]\n\tdtype = \"torch.float32\"\n"
	"class Program_weight_tensor_meta_c:\n"
	"\tname = \"c\"\n\tshape = [2, 8, 16]\n\tdtype = \"torch.bool\"\n"
	"class Program_weight_tensor_meta_i:\n"
	"\tname = \"i\"\n\tshape = [2]\n\tdtype = \"torch.int64\"\n\tmean = None\n\tstd = None\n"
	"\tdata = [1, 2]\n"
	"class Program_weight_tensor_meta_hf:\n"
	"\tname = \"hf\"\n\tshape = [2, 8, 16]\n\tdtype = \"torch.float16\"\n";

static char warnings[8192];
static int n_warnings;

static void on_warn(void *ctx, const char *msg)
{
	(void)ctx;
	n_warnings++;
	size_t l = strlen(warnings);
	snprintf(warnings + l, sizeof(warnings) - l, "%s\n", msg);
}

/* model.py text for a body (lines separated by \n, no indentation). */
static char *model_of(const char *header_args, const char *body)
{
	size_t cap = strlen(body) * 2 + 512;
	char *m = malloc(cap);
	size_t len = (size_t)snprintf(m, cap, "import torch\n\nclass GraphModule(torch.nn.Module):\n"
				      "    def forward(self, %s):\n", header_args);
	const char *s = body;
	while (*s) {
		const char *e = strchr(s, '\n');
		size_t l = e ? (size_t)(e - s) : strlen(s);
		len += (size_t)snprintf(m + len, cap - len, "        %.*s\n", (int)l, s);
		s += l + (e != NULL);
	}
	return m;
}

static json_t *last_root;
static char last_err[IMPORT_ERR_LEN];

/* Imports one sample; 0 and last_root set, or -1 and last_err set. */
static int import_text(const char *model, const char *meta)
{
	struct import_sample s = {
		.name = "h99_testmodel_0_start1_end2_0", .model_label = "t/model.py", .model = model,
		.model_len = strlen(model), .meta_label = "t/weight_meta.py", .meta = meta,
		.meta_len = meta ? strlen(meta) : 0};
	struct import_options o = {.id = "t", .warn = on_warn};
	json_decref(last_root);
	last_root = NULL;
	warnings[0] = 0;
	n_warnings = 0;
	last_err[0] = 0;
	return import_build(&s, 1, &o, &last_root, NULL, last_err, sizeof(last_err));
}

static int import_body(const char *body)
{
	char *m = model_of(ARGS, body);
	int rc = import_text(m, META);
	free(m);
	return rc;
}

static json_t *variant0(void)
{
	return json_array_get(json_object_get(last_root, "variants"), 0);
}

static json_t *node_at(int i)
{
	return json_array_get(json_object_get(variant0(), "nodes"), (size_t)i);
}

static char *dumps(json_t *j)
{
	return j ? json_dumps(j, JSON_COMPACT | JSON_ENCODE_ANY) : strdup("(none)");
}

/* Node i of the last import equals `want` (JSON text; kinds matter: 2 != 2.0). */
static void expect_node(int line, int i, const char *want)
{
	json_error_t je;
	json_t *w = json_loads(want, 0, &je);
	json_t *g = node_at(i);
	int ok = w && g && json_equal(w, g);
	char *gs = dumps(g);
	CHECK(ok, "line %d: node %d: want %s, got %s%s%s", line, i, want, gs, w ? "" : " (bad want JSON: ",
	      w ? "" : je.text);
	free(gs);
	json_decref(w);
}

static void expect_field(int line, const char *key, const char *want)
{
	json_t *w = json_loads(want, JSON_DECODE_ANY, NULL);
	json_t *g = json_object_get(variant0(), key);
	char *gs = dumps(g);
	CHECK(w && g && json_equal(w, g), "line %d: %s: want %s, got %s", line, key, want, gs);
	free(gs);
	json_decref(w);
}

static int n_nodes(void)
{
	return (int)json_array_size(json_object_get(variant0(), "nodes"));
}

#define BODY_OK(body)                                                                   \
	do {                                                                            \
		int rc_ = import_body(body);                                            \
		CHECK(rc_ == 0, "line %d: import failed: %s", __LINE__, last_err);      \
	} while (0)
#define NODE(i, want) expect_node(__LINE__, i, want)
#define OUTPUTS(want) expect_field(__LINE__, "outputs", want)

/* The import fails with a message containing `want`. */
static void expect_err(int line, const char *body, const char *want)
{
	int rc = import_body(body);
	CHECK(rc != 0 && strstr(last_err, want), "line %d: want error containing '%s', got rc=%d '%s'", line,
	      want, rc, last_err);
	CHECK(rc != 0 && last_root == NULL, "line %d: a failed import returned a document", line);
	CHECK(strchr(last_err, '\n') == NULL, "line %d: error is not one line: '%s'", line, last_err);
}

#define BODY_ERR(body, want) expect_err(__LINE__, body, want)

/* ---- syntax forms ------------------------------------------------------------ */

static void test_basic(void)
{
	BODY_OK("tmp_0 = x + y\nreturn (tmp_0,)");
	NODE(0, "{\"name\":\"tmp_0\",\"op\":\"add\",\"inputs\":[\"x\",\"y\"]}");
	OUTPUTS("[\"tmp_0\"]");
	CHECK(n_nodes() == 1, "one node");
	/* the nine unused arguments are dropped, each with a warning */
	CHECK(n_warnings == 9 && strstr(warnings, "t/model.py: forward argument w is never used; dropped"),
	      "warnings: %s", warnings);
	json_t *ins = json_object_get(variant0(), "inputs");
	CHECK(json_array_size(ins) == 2, "two inputs kept");
	char *s = dumps(json_array_get(ins, 0));
	CHECK(!strcmp(s, "{\"name\":\"x\",\"shape\":[1,4,8,8],\"dtype\":\"float32\",\"mean\":0.5,\"std\":0.25}"),
	      "input x: %s", s);
	free(s);
	CHECK(!strcmp(json_string_value(json_object_get(variant0(), "name")), "float32_0"), "variant name");
	CHECK(!strcmp(json_string_value(json_object_get(last_root, "id")), "t"), "id");
	const char *sum = json_string_value(json_object_get(last_root, "summary"));
	CHECK(sum && !strcmp(sum, "add (testmodel)"), "summary: %s", sum ? sum : "(null)");
	CHECK(!strcmp(json_string_value(json_object_get(last_root, "source")), "h99_testmodel_0_start1_end2_0"),
	      "source");

	/* weight_meta fields: min_val/max_val/data map to min/max/data */
	BODY_OK("tmp_0 = torch.nn.functional.linear(v, W, None)\ntmp_1 = b * 2\ntmp_2 = i + 1\n"
		"return (tmp_0, tmp_1, tmp_2)");
	ins = json_object_get(variant0(), "inputs");
	s = dumps(ins);
	CHECK(strstr(s, "{\"name\":\"b\",\"shape\":[8],\"dtype\":\"float32\",\"mean\":0.0,\"std\":0.0,\"min\":0,"
			"\"max\":1.5}") &&
	      strstr(s, "{\"name\":\"i\",\"shape\":[2],\"dtype\":\"int64\",\"data\":[1,2]}"), "inputs: %s", s);
	free(s);
	NODE(0, "{\"name\":\"tmp_0\",\"op\":\"linear\",\"inputs\":[\"v\",\"W\",null]}");
}

static void test_scalars(void)
{
	/* scalars keep their side and their kind (int or float) */
	BODY_OK("tmp_0 = 1 - x\ntmp_1 = x / 8.0\ntmp_2 = 0.19245008972987526 * x\ntmp_3 = x ** 2\n"
		"tmp_4 = -x\ntmp_5 = x * (1.0 / 4)\ntmp_6 = -2 * x\ntmp_7 = 2 ** x\ntmp_8 = x - -1.5\n"
		"tmp_9 = x * True\n"
		"return (tmp_0, tmp_1, tmp_2, tmp_3, tmp_4, tmp_5, tmp_6, tmp_7, tmp_8, tmp_9)");
	NODE(0, "{\"name\":\"tmp_0\",\"op\":\"sub\",\"inputs\":[1,\"x\"]}");
	NODE(1, "{\"name\":\"tmp_1\",\"op\":\"div\",\"inputs\":[\"x\",8.0]}");
	NODE(2, "{\"name\":\"tmp_2\",\"op\":\"mul\",\"inputs\":[0.19245008972987526,\"x\"]}");
	NODE(3, "{\"name\":\"tmp_3\",\"op\":\"pow\",\"inputs\":[\"x\",2]}");
	NODE(4, "{\"name\":\"tmp_4\",\"op\":\"mul\",\"inputs\":[\"x\",-1]}");
	NODE(5, "{\"name\":\"tmp_5\",\"op\":\"mul\",\"inputs\":[\"x\",0.25]}");
	NODE(6, "{\"name\":\"tmp_6\",\"op\":\"mul\",\"inputs\":[-2,\"x\"]}");
	NODE(7, "{\"name\":\"tmp_7\",\"op\":\"pow\",\"inputs\":[2,\"x\"]}");
	NODE(8, "{\"name\":\"tmp_8\",\"op\":\"sub\",\"inputs\":[\"x\",-1.5]}");
	NODE(9, "{\"name\":\"tmp_9\",\"op\":\"mul\",\"inputs\":[\"x\",true]}");
	/* Python arithmetic on constants: // and % floor, ints stay ints */
	BODY_OK("tmp_0 = x * (7 // 2) + (-7 % 3) - 2 ** 3\nreturn tmp_0");
	NODE(0, "{\"name\":\"tmp_0_mul\",\"op\":\"mul\",\"inputs\":[\"x\",3]}");
	NODE(1, "{\"name\":\"tmp_0_add\",\"op\":\"add\",\"inputs\":[\"tmp_0_mul\",2]}");
	NODE(2, "{\"name\":\"tmp_0\",\"op\":\"sub\",\"inputs\":[\"tmp_0_add\",8]}");
	BODY_ERR("tmp_0 = x * (1 / 0)\nreturn tmp_0", "t/model.py:5: division by zero");
	BODY_ERR("tmp_0 = x * (9223372036854775807 + 1)\nreturn tmp_0", "t/model.py:5: integer overflow");
	BODY_ERR("tmp_0 = x // 2\nreturn tmp_0", "t/model.py:5: unsupported operator '//' on tensors");
	BODY_ERR("tmp_0 = x @ 2\nreturn tmp_0", "'@' needs two tensors");
	BODY_ERR("tmp_0 = 'a' + x\nreturn tmp_0", "unsupported operand types for +: a string and a tensor");
}

static void test_operators(void)
{
	BODY_OK("tmp_0 = v @ W.transpose(0, 1)\ntmp_1 = x * y\ntmp_2 = x / y\ntmp_3 = x ** y\nreturn (tmp_0, tmp_1, "
		"tmp_2, tmp_3)");
	NODE(0, "{\"name\":\"tmp_0_transpose\",\"op\":\"transpose\",\"inputs\":[\"W\"],"
		"\"attrs\":{\"dim0\":0,\"dim1\":1}}");
	NODE(1, "{\"name\":\"tmp_0\",\"op\":\"matmul\",\"inputs\":[\"v\",\"tmp_0_transpose\"]}");
	NODE(2, "{\"name\":\"tmp_1\",\"op\":\"mul\",\"inputs\":[\"x\",\"y\"]}");
	NODE(3, "{\"name\":\"tmp_2\",\"op\":\"div\",\"inputs\":[\"x\",\"y\"]}");
	NODE(4, "{\"name\":\"tmp_3\",\"op\":\"pow\",\"inputs\":[\"x\",\"y\"]}");
	/* precedence: ** binds tighter than unary minus, * tighter than + */
	BODY_OK("tmp_0 = x + y * 2\ntmp_1 = -2 ** 2 * x\nreturn (tmp_0, tmp_1)");
	NODE(0, "{\"name\":\"tmp_0_mul\",\"op\":\"mul\",\"inputs\":[\"y\",2]}");
	NODE(1, "{\"name\":\"tmp_0\",\"op\":\"add\",\"inputs\":[\"x\",\"tmp_0_mul\"]}");
	NODE(2, "{\"name\":\"tmp_1\",\"op\":\"mul\",\"inputs\":[-4,\"x\"]}");
}

static void test_rebinding(void)
{
	/* in-place ops rebind the name to a fresh, unique node name */
	BODY_OK("y += x\ntmp_0 = y\ny -= 1\ny *= x\ny /= 2.0\nreturn (tmp_0, y)");
	NODE(0, "{\"name\":\"y_1\",\"op\":\"add\",\"inputs\":[\"y\",\"x\"]}");
	NODE(1, "{\"name\":\"y_2\",\"op\":\"sub\",\"inputs\":[\"y_1\",1]}");
	NODE(2, "{\"name\":\"y_3\",\"op\":\"mul\",\"inputs\":[\"y_2\",\"x\"]}");
	NODE(3, "{\"name\":\"y_4\",\"op\":\"div\",\"inputs\":[\"y_3\",2.0]}");
	/* tmp_0 aliases the tensor object y, so it sees every in-place update */
	OUTPUTS("[\"y_4\",\"y_4_out1\"]");
	/* ...and a tensor returned twice becomes a copy (graph outputs are distinct) */
	NODE(4, "{\"name\":\"y_4_out1\",\"op\":\"contiguous\",\"inputs\":[\"y_4\"]}");
	CHECK(strstr(warnings, "t/model.py:10: y_4 is returned more than once; the repeat is the copy y_4_out1"),
	      "%s", warnings);
	/* a reused tmp gets a new name; readers see the right version */
	BODY_OK("tmp_0 = x * 2\ntmp_1 = tmp_0 + 1\ntmp_0 = tmp_1 * 3\ntmp_0 = None\ntmp_0 = tmp_1 - 1\n"
		"return (tmp_0, tmp_1)");
	NODE(0, "{\"name\":\"tmp_0\",\"op\":\"mul\",\"inputs\":[\"x\",2]}");
	NODE(1, "{\"name\":\"tmp_1\",\"op\":\"add\",\"inputs\":[\"tmp_0\",1]}");
	NODE(2, "{\"name\":\"tmp_0_2\",\"op\":\"sub\",\"inputs\":[\"tmp_1\",1]}");
	CHECK(n_nodes() == 3, "the unused tmp_0 * 3 is dropped (%d nodes)", n_nodes());
	CHECK(strstr(warnings, "t/model.py:7: tmp_0_1 (mul) is never used; dropped") != NULL, "%s", warnings);
	OUTPUTS("[\"tmp_0_2\",\"tmp_1\"]");
	/* aliases, chained None assignments, del, pass, in-place method forms */
	BODY_OK("tmp_0 = x\ntmp_1 = y\ntmp_2 = tmp_0 + tmp_1\ntmp_1 = tmp_0 = None\ndel tmp_1\npass\n"
		"tmp_2.mul_(2)\ntmp_3 = torch.relu_(tmp_2)\nreturn (tmp_2, tmp_3)");
	NODE(0, "{\"name\":\"tmp_2\",\"op\":\"add\",\"inputs\":[\"x\",\"y\"]}");
	NODE(1, "{\"name\":\"tmp_2_1\",\"op\":\"mul\",\"inputs\":[\"tmp_2\",2]}");
	NODE(2, "{\"name\":\"tmp_3\",\"op\":\"relu\",\"inputs\":[\"tmp_2_1\"]}");
	OUTPUTS("[\"tmp_3\",\"tmp_3_out1\"]");
	/* F.relu(inplace=True) returns its input object: both names follow */
	BODY_OK("tmp_0 = x * 2\ntmp_1 = torch.nn.functional.relu(tmp_0, inplace=True)\nreturn (tmp_0, tmp_1)");
	NODE(1, "{\"name\":\"tmp_1\",\"op\":\"relu\",\"inputs\":[\"tmp_0\"],\"attrs\":{\"inplace\":true}}");
	OUTPUTS("[\"tmp_1\",\"tmp_1_out1\"]");
	/* a view taken before an in-place op would see the change: refused */
	BODY_ERR("tmp_0 = x.view(-1)\nx += 1\nreturn (tmp_0,)",
		 "t/model.py:7: return value 1: tmp_0 is used after an in-place op at line 6");
	BODY_ERR("tmp_0 = x.view(-1)\ntmp_0 += 1\ntmp_1 = x * 2\nreturn (tmp_1,)",
		 "t/model.py:7: operator *: x is used after an in-place op at line 6");
	/* ...but using it before is fine */
	BODY_OK("tmp_0 = x.view(-1)\ntmp_1 = tmp_0 * 2\nx += 1\nreturn (tmp_1, x)");
	OUTPUTS("[\"tmp_1\",\"x_1\"]");
	/* in-place keeps the target's dtype in PyTorch; the graph op would not */
	BODY_ERR("hf += v\nreturn (hf,)", "t/model.py:5: in-place add on hf float16[2,8,16] would give "
		 "float32[2,8,16]");
	/* unpacking a Python tuple */
	BODY_OK("tmp_0, tmp_1 = x + 1, y * 2\nreturn tmp_1, tmp_0");
	NODE(0, "{\"name\":\"tmp_0\",\"op\":\"add\",\"inputs\":[\"x\",1]}");
	NODE(1, "{\"name\":\"tmp_1\",\"op\":\"mul\",\"inputs\":[\"y\",2]}");
	OUTPUTS("[\"tmp_1\",\"tmp_0\"]");
	BODY_ERR("tmp_0 = None\ntmp_1 = tmp_0 + x\nreturn tmp_1",
		 "t/model.py:6: unsupported operand types for +: None and a tensor");
	BODY_ERR("tmp_0 = None\ntmp_1 = torch.sigmoid(tmp_0)\nreturn tmp_1",
		 "t/model.py:6: torch.sigmoid argument 'input': expected a tensor, got None");
	BODY_OK("del x\nreturn y");
	OUTPUTS("[\"y\"]");
	BODY_ERR("tmp_0 = x\ndel tmp_0\nreturn tmp_0", "t/model.py:7: name 'tmp_0' is used after del");
}

static void test_functional(void)
{
	BODY_ERR("tmp_0 = torch.conv2d(x, w, b, (1, 1), (1, 1), (1, 1), 1)\n"
		 "tmp_1 = torch.nn.functional.conv2d(x, w, None, stride=2, padding='same' if False else 0)\n"
		 "return (tmp_0,)", "t/model.py:6: expected ')', found 'if'");
	BODY_OK("tmp_0 = torch.conv2d(x, w, b, (1, 1), (1, 1), (1, 1), 1)\n"
		"tmp_1 = torch.nn.functional.conv2d(x, w, None, stride=2, padding='valid', groups=1)\n"
		"tmp_2 = torch.nn.functional.batch_norm(tmp_0, b, b, b, b, False, 0.1, 1e-05)\n"
		"tmp_3 = torch.batch_norm(tmp_0, g[:8], None, b, b, False, 0.01, 0.001, True)\n"
		"tmp_4 = torch.nn.functional.interpolate(x, size=(16, 16), mode='bilinear', align_corners=False)\n"
		"tmp_5 = torch.nn.functional.interpolate(x, None, 2.0, 'nearest')\n"
		"tmp_6 = torch.nn.functional.adaptive_avg_pool2d(tmp_0, 1)\n"
		"tmp_7 = torch.prelu(tmp_0, b)\n"
		"return (tmp_1, tmp_2, tmp_3, tmp_4, tmp_5, tmp_6, tmp_7)");
	NODE(0, "{\"name\":\"tmp_0\",\"op\":\"conv2d\",\"inputs\":[\"x\",\"w\",\"b\"],"
		"\"attrs\":{\"stride\":[1,1],\"padding\":[1,1],\"dilation\":[1,1],\"groups\":1}}");
	NODE(1, "{\"name\":\"tmp_1\",\"op\":\"conv2d\",\"inputs\":[\"x\",\"w\",null],"
		"\"attrs\":{\"stride\":2,\"padding\":\"valid\",\"groups\":1}}");
	NODE(2, "{\"name\":\"tmp_2\",\"op\":\"batch_norm\",\"inputs\":[\"tmp_0\",\"b\",\"b\",\"b\",\"b\"],"
		"\"attrs\":{\"training\":false,\"momentum\":0.1,\"eps\":1e-05}}");
	/* torch.batch_norm(input, weight, bias, running_mean, running_var, ...) */
	NODE(4, "{\"name\":\"tmp_3\",\"op\":\"batch_norm\",\"inputs\":[\"tmp_0\",\"b\",\"b\",\"tmp_3_getitem\",null],"
		"\"attrs\":{\"training\":false,\"momentum\":0.01,\"eps\":0.001}}");
	NODE(5, "{\"name\":\"tmp_4\",\"op\":\"interpolate\",\"inputs\":[\"x\"],"
		"\"attrs\":{\"size\":[16,16],\"mode\":\"bilinear\",\"align_corners\":false}}");
	NODE(6, "{\"name\":\"tmp_5\",\"op\":\"interpolate\",\"inputs\":[\"x\"],"
		"\"attrs\":{\"scale_factor\":2.0,\"mode\":\"nearest\"}}");
	NODE(7, "{\"name\":\"tmp_6\",\"op\":\"adaptive_avg_pool2d\",\"inputs\":[\"tmp_0\"],\"attrs\":{\"output_size\":1}}");
	NODE(8, "{\"name\":\"tmp_7\",\"op\":\"prelu\",\"inputs\":[\"tmp_0\",\"b\"]}");

	BODY_OK("tmp_0 = torch.nn.functional.layer_norm(v, (16,), g, h, 1e-06)\n"
		"tmp_1 = torch.nn.functional.dropout(tmp_0, 0.1, False, False)\n"
		"tmp_2 = torch.nn.functional.softmax(v, dim=-1)\n"
		"tmp_3 = torch.nn.functional.softmax(v, -1, _stacklevel=5, dtype=torch.float32)\n"
		"tmp_4 = torch.nn.functional.gelu(v)\n"
		"tmp_5 = torch.nn.functional.gelu(v, approximate='tanh')\n"
		"tmp_6 = torch.nn.functional.silu(v, inplace=False)\n"
		"tmp_7 = torch.nn.functional.pad(v, [0, 1], 'constant', None)\n"
		"tmp_8 = torch.nn.functional.pad(v, (1, 1), value=0.5)\n"
		"tmp_9 = torch.nn.functional.layer_norm(v, 16)\n"
		"return (tmp_1, tmp_2, tmp_3, tmp_4, tmp_5, tmp_6, tmp_7, tmp_8, tmp_9)");
	NODE(0, "{\"name\":\"tmp_0\",\"op\":\"layer_norm\",\"inputs\":[\"v\",\"g\",\"h\"],"
		"\"attrs\":{\"normalized_shape\":[16],\"eps\":1e-06}}");
	NODE(1, "{\"name\":\"tmp_1\",\"op\":\"dropout\",\"inputs\":[\"tmp_0\"],"
		"\"attrs\":{\"p\":0.1,\"training\":false,\"inplace\":false}}");
	NODE(2, "{\"name\":\"tmp_2\",\"op\":\"softmax\",\"inputs\":[\"v\"],\"attrs\":{\"dim\":-1}}");
	NODE(3, "{\"name\":\"tmp_3\",\"op\":\"softmax\",\"inputs\":[\"v\"],\"attrs\":{\"dim\":-1,\"dtype\":\"float32\"}}");
	NODE(4, "{\"name\":\"tmp_4\",\"op\":\"gelu\",\"inputs\":[\"v\"]}");
	NODE(5, "{\"name\":\"tmp_5\",\"op\":\"gelu\",\"inputs\":[\"v\"],\"attrs\":{\"approximate\":\"tanh\"}}");
	NODE(6, "{\"name\":\"tmp_6\",\"op\":\"silu\",\"inputs\":[\"v\"],\"attrs\":{\"inplace\":false}}");
	NODE(7, "{\"name\":\"tmp_7\",\"op\":\"pad\",\"inputs\":[\"v\"],\"attrs\":{\"pad\":[0,1],\"mode\":\"constant\"}}");
	NODE(8, "{\"name\":\"tmp_8\",\"op\":\"pad\",\"inputs\":[\"v\"],\"attrs\":{\"pad\":[1,1],\"value\":0.5}}");
	NODE(9, "{\"name\":\"tmp_9\",\"op\":\"layer_norm\",\"inputs\":[\"v\"],\"attrs\":{\"normalized_shape\":[16]}}");

	/* F.dropout's own default is training=True: said explicitly, and refused
	 * by the graph (random) */
	BODY_ERR("tmp_0 = torch.nn.functional.dropout(v, 0.1)\nreturn tmp_0", "training");

	BODY_ERR("tmp_0 = x\ntmp_1 = y\ntmp_2 = torch.nn.functional.linear(v, W, b.repeat(4))\nreturn (tmp_2,)",
		 "t/model.py:7: unsupported call Tensor.repeat");
	BODY_OK("tmp_0 = torch.nn.functional.scaled_dot_product_attention(v, v, v, attn_mask=None, dropout_p=0.0, "
		"scale=0.25, is_causal=False)\n"
		"tmp_1 = torch.nn.functional.scaled_dot_product_attention(v, v, v, v[:, :, :8], 0.0, False)\n"
		"tmp_2 = torch.nn.functional.linear(input=v, weight=W)\n"
		"return (tmp_0, tmp_1, tmp_2)");
	NODE(0, "{\"name\":\"tmp_0\",\"op\":\"scaled_dot_product_attention\",\"inputs\":[\"v\",\"v\",\"v\",null],"
		"\"attrs\":{\"dropout_p\":0.0,\"scale\":0.25,\"is_causal\":false}}");
	NODE(2, "{\"name\":\"tmp_1\",\"op\":\"scaled_dot_product_attention\","
		"\"inputs\":[\"v\",\"v\",\"v\",\"tmp_1_getitem\"],\"attrs\":{\"dropout_p\":0.0,\"is_causal\":false}}");
	NODE(3, "{\"name\":\"tmp_2\",\"op\":\"linear\",\"inputs\":[\"v\",\"W\"]}");

	BODY_ERR("tmp_0 = x\ntmp_1 = y\ntmp_2 = x\ntmp_3 = torch.matmul(v, W.t)\nreturn (tmp_3,)",
		 "t/model.py:8: unsupported tensor attribute .t");
	BODY_OK("tmp_0 = torch.cat((x, y), dim=1)\ntmp_1 = torch.cat([x, y, tmp_0], 1)\n"
		"tmp_2 = torch.bmm(v, v.transpose(1, 2))\ntmp_3 = torch.matmul(v, g)\n"
		"tmp_4 = torch.sigmoid(x)\ntmp_5 = torch.transpose(v, 1, 2)\ntmp_6 = torch.where(c, v, 0.0)\n"
		"tmp_7 = torch.add(x, y, alpha=2)\ntmp_8 = torch.sub(1.0, x)\ntmp_9 = torch.tanh(torch.exp(x))\n"
		"return (tmp_1, tmp_2, tmp_3, tmp_4, tmp_5, tmp_6, tmp_7, tmp_8, tmp_9)");
	NODE(0, "{\"name\":\"tmp_0\",\"op\":\"cat\",\"inputs\":[\"x\",\"y\"],\"attrs\":{\"dim\":1}}");
	NODE(1, "{\"name\":\"tmp_1\",\"op\":\"cat\",\"inputs\":[\"x\",\"y\",\"tmp_0\"],\"attrs\":{\"dim\":1}}");
	NODE(3, "{\"name\":\"tmp_2\",\"op\":\"bmm\",\"inputs\":[\"v\",\"tmp_2_transpose\"]}");
	NODE(4, "{\"name\":\"tmp_3\",\"op\":\"matmul\",\"inputs\":[\"v\",\"g\"]}");
	NODE(5, "{\"name\":\"tmp_4\",\"op\":\"sigmoid\",\"inputs\":[\"x\"]}");
	NODE(6, "{\"name\":\"tmp_5\",\"op\":\"transpose\",\"inputs\":[\"v\"],\"attrs\":{\"dim0\":1,\"dim1\":2}}");
	NODE(7, "{\"name\":\"tmp_6\",\"op\":\"where\",\"inputs\":[\"c\",\"v\",0.0]}");
	NODE(8, "{\"name\":\"tmp_7\",\"op\":\"add\",\"inputs\":[\"x\",\"y\"],\"attrs\":{\"alpha\":2}}");
	NODE(9, "{\"name\":\"tmp_8\",\"op\":\"sub\",\"inputs\":[1.0,\"x\"]}");
	NODE(10, "{\"name\":\"tmp_9_exp\",\"op\":\"exp\",\"inputs\":[\"x\"]}");
	NODE(11, "{\"name\":\"tmp_9\",\"op\":\"tanh\",\"inputs\":[\"tmp_9_exp\"]}");

	/* split/chunk produce tuples that getitem picks from */
	BODY_OK("tmp_0 = torch.functional.split(v, [4, 12], dim=2)\ntmp_1 = tmp_0[0]\ntmp_2 = tmp_0[1]\n"
		"tmp_0 = None\ntmp_3 = torch.split(v, 8, 2)[-1]\ntmp_4 = torch.chunk(v, 2, dim=1)\n"
		"tmp_5 = tmp_4[1]\nreturn (tmp_1, tmp_2, tmp_3, tmp_5)");
	NODE(0, "{\"name\":\"tmp_0\",\"op\":\"split\",\"inputs\":[\"v\"],\"attrs\":{\"split_size\":[4,12],\"dim\":2}}");
	NODE(1, "{\"name\":\"tmp_1\",\"op\":\"getitem\",\"inputs\":[\"tmp_0\"],\"attrs\":{\"index\":[0]}}");
	NODE(3, "{\"name\":\"tmp_3_split\",\"op\":\"split\",\"inputs\":[\"v\"],\"attrs\":{\"split_size\":8,\"dim\":2}}");
	NODE(4, "{\"name\":\"tmp_3\",\"op\":\"getitem\",\"inputs\":[\"tmp_3_split\"],\"attrs\":{\"index\":[-1]}}");
	NODE(5, "{\"name\":\"tmp_4\",\"op\":\"chunk\",\"inputs\":[\"v\"],\"attrs\":{\"chunks\":2,\"dim\":1}}");
	BODY_ERR("tmp_0 = torch.chunk(v, 2)\nreturn (tmp_0,)", "t/model.py:6: return value 1: tmp_0 is a tuple");
	BODY_ERR("tmp_0 = torch.chunk(v, 2)\ntmp_1 = tmp_0 + 1\nreturn (tmp_1,)", "tmp_0 is a tuple");
	/* unpacking a tuple op: a getitem per name; the count is checked once
	 * the graph knows the tuple's length */
	BODY_OK("tmp_0, tmp_1 = torch.chunk(v, 2)\nreturn (tmp_1, tmp_0)");
	NODE(0, "{\"name\":\"tmp_0_chunk\",\"op\":\"chunk\",\"inputs\":[\"v\"],\"attrs\":{\"chunks\":2}}");
	NODE(1, "{\"name\":\"tmp_0\",\"op\":\"getitem\",\"inputs\":[\"tmp_0_chunk\"],\"attrs\":{\"index\":[0]}}");
	NODE(2, "{\"name\":\"tmp_1\",\"op\":\"getitem\",\"inputs\":[\"tmp_0_chunk\"],\"attrs\":{\"index\":[1]}}");
	BODY_ERR("tmp_0, tmp_1 = torch.chunk(v, 4, 1)\nreturn (tmp_1,)",
		 "t/model.py:5: cannot unpack the 4 tensors of tmp_0_chunk (chunk) into 2 names in variant 'float32_0'");
	BODY_ERR("tmp_0 = torch.chunk(v, 2)\na, b = tmp_0\nc, d = tmp_0\nreturn (a, d)",
		 "t/model.py:7: tmp_0 is unpacked a second time (first at line 6)");
	BODY_ERR("tmp_0 = torch.chunk(v, 2)[0:1]\nreturn (tmp_0,)", "can only be indexed with one int");
}

static void test_methods(void)
{
	BODY_OK("tmp_0 = x.view(1, -1)\ntmp_1 = x.view((1, -1))\ntmp_2 = x.reshape([4, 64])\n"
		"tmp_3 = v.transpose(-2, -1)\ntmp_4 = v.permute(0, 2, 1)\ntmp_5 = v.permute((0, 2, 1)).contiguous()\n"
		"tmp_6 = v.expand(2, -1, -1)\ntmp_7 = x.flatten(2)\ntmp_8 = x.sum(dim=3, keepdim=True)\n"
		"tmp_9 = x.mean((2, 3))\ntmp_10 = x.sigmoid()\ntmp_11 = v.softmax(-1)\n"
		"return (tmp_0, tmp_1, tmp_2, tmp_3, tmp_4, tmp_5, tmp_6, tmp_7, tmp_8, tmp_9, tmp_10, tmp_11)");
	NODE(0, "{\"name\":\"tmp_0\",\"op\":\"view\",\"inputs\":[\"x\"],\"attrs\":{\"shape\":[1,-1]}}");
	NODE(1, "{\"name\":\"tmp_1\",\"op\":\"view\",\"inputs\":[\"x\"],\"attrs\":{\"shape\":[1,-1]}}");
	NODE(2, "{\"name\":\"tmp_2\",\"op\":\"reshape\",\"inputs\":[\"x\"],\"attrs\":{\"shape\":[4,64]}}");
	NODE(3, "{\"name\":\"tmp_3\",\"op\":\"transpose\",\"inputs\":[\"v\"],\"attrs\":{\"dim0\":-2,\"dim1\":-1}}");
	NODE(4, "{\"name\":\"tmp_4\",\"op\":\"permute\",\"inputs\":[\"v\"],\"attrs\":{\"dims\":[0,2,1]}}");
	NODE(5, "{\"name\":\"tmp_5_permute\",\"op\":\"permute\",\"inputs\":[\"v\"],\"attrs\":{\"dims\":[0,2,1]}}");
	NODE(6, "{\"name\":\"tmp_5\",\"op\":\"contiguous\",\"inputs\":[\"tmp_5_permute\"]}");
	NODE(7, "{\"name\":\"tmp_6\",\"op\":\"expand\",\"inputs\":[\"v\"],\"attrs\":{\"size\":[2,-1,-1]}}");
	NODE(8, "{\"name\":\"tmp_7\",\"op\":\"flatten\",\"inputs\":[\"x\"],\"attrs\":{\"start_dim\":2}}");
	NODE(9, "{\"name\":\"tmp_8\",\"op\":\"sum\",\"inputs\":[\"x\"],\"attrs\":{\"dim\":3,\"keepdim\":true}}");
	NODE(10, "{\"name\":\"tmp_9\",\"op\":\"mean\",\"inputs\":[\"x\"],\"attrs\":{\"dim\":[2,3]}}");
	NODE(11, "{\"name\":\"tmp_10\",\"op\":\"sigmoid\",\"inputs\":[\"x\"]}");
	NODE(12, "{\"name\":\"tmp_11\",\"op\":\"softmax\",\"inputs\":[\"v\"],\"attrs\":{\"dim\":-1}}");

	BODY_OK("tmp_0 = v.to(torch.float16)\ntmp_1 = v.float()\ntmp_2 = v.half()\ntmp_3 = v.to('cuda')\n"
		"tmp_4 = v.to(device(type='cuda', index=0), dtype=torch.bfloat16, non_blocking=True)\n"
		"tmp_5 = i.type(torch.float32)\ntmp_6 = x.unsqueeze(0)\ntmp_7 = x.unsqueeze(-1)\n"
		"tmp_8 = torch.unsqueeze(x, dim=2)\ntmp_9 = v.chunk(2, dim=1)[0]\ntmp_10 = v.split(4, dim=2)[3]\n"
		"tmp_11 = v.add(1, alpha=2).mul(v).div(2).sub(g).pow(2)\ntmp_12 = v.matmul(g) + v.bmm(v.transpose(1, 2))[:, :, 0]\n"
		"tmp_13 = v.relu().tanh().exp().rsqrt()\ntmp_14 = v.where(c, 1.0)\n"
		"return (tmp_0, tmp_1, tmp_2, tmp_3, tmp_4, tmp_5, tmp_6, tmp_7, tmp_8, tmp_9, tmp_10, tmp_11, tmp_12, "
		"tmp_13, tmp_14)");
	NODE(0, "{\"name\":\"tmp_0\",\"op\":\"to\",\"inputs\":[\"v\"],\"attrs\":{\"dtype\":\"float16\"}}");
	NODE(1, "{\"name\":\"tmp_1\",\"op\":\"to\",\"inputs\":[\"v\"],\"attrs\":{\"dtype\":\"float32\"}}");
	NODE(2, "{\"name\":\"tmp_2\",\"op\":\"to\",\"inputs\":[\"v\"],\"attrs\":{\"dtype\":\"float16\"}}");
	/* a device move is the tensor itself */
	NODE(3, "{\"name\":\"tmp_4\",\"op\":\"to\",\"inputs\":[\"v\"],\"attrs\":{\"dtype\":\"bfloat16\"}}");
	NODE(4, "{\"name\":\"tmp_5\",\"op\":\"to\",\"inputs\":[\"i\"],\"attrs\":{\"dtype\":\"float32\"}}");
	NODE(5, "{\"name\":\"tmp_6\",\"op\":\"getitem\",\"inputs\":[\"x\"],\"attrs\":{\"index\":[null]}}");
	NODE(6, "{\"name\":\"tmp_7\",\"op\":\"getitem\",\"inputs\":[\"x\"],\"attrs\":{\"index\":[\"...\",null]}}");
	NODE(7, "{\"name\":\"tmp_8\",\"op\":\"getitem\",\"inputs\":[\"x\"],"
		"\"attrs\":{\"index\":[[null,null,null],[null,null,null],null]}}");
	NODE(10, "{\"name\":\"tmp_10_split\",\"op\":\"split\",\"inputs\":[\"v\"],\"attrs\":{\"split_size\":4,\"dim\":2}}");
	NODE(12, "{\"name\":\"tmp_11_add\",\"op\":\"add\",\"inputs\":[\"v\",1],\"attrs\":{\"alpha\":2}}");
	char *outs = dumps(json_object_get(variant0(), "outputs"));
	CHECK(strstr(outs, "\"v\",\"tmp_4\"") != NULL, "tmp_3 is v itself: %s", outs);
	free(outs);
	int k = n_nodes() - 1;
	NODE(k, "{\"name\":\"tmp_14\",\"op\":\"where\",\"inputs\":[\"c\",\"v\",1.0]}");

	BODY_ERR("tmp_0 = x.roll(1)\nreturn tmp_0", "t/model.py:5: unsupported call Tensor.roll");
	BODY_ERR("tmp_0 = x.shape\nreturn tmp_0", "t/model.py:5: unsupported tensor attribute .shape");
	BODY_ERR("tmp_0 = x.view(torch.int32)\nreturn tmp_0", "bit cast");
	BODY_ERR("tmp_0 = x.to(y)\nreturn tmp_0", "Tensor.to(other_tensor) is not supported");
	BODY_ERR("tmp_0 = x.to(torch.uint8)\nreturn tmp_0", "unsupported dtype torch.uint8");
	BODY_ERR("tmp_0 = x.view(1, 2.5)\nreturn tmp_0", "Tensor.view argument 'shape': expected ints");
}

static void test_subscripts(void)
{
	BODY_OK("tmp_0 = x[slice(None, None, None), slice(None, 2, None), 0]\ntmp_1 = x[:, 1:3, ::2]\n"
		"tmp_2 = x[None]\ntmp_3 = x[..., None]\ntmp_4 = x[Ellipsis, 1]\ntmp_5 = x[-1]\n"
		"tmp_6 = x[(0, 1)]\ntmp_7 = x[slice(2), :, -3:-1]\ntmp_8 = (x, y)[1]\ntmp_9 = [x, y, v][-1:][0]\n"
		"return (tmp_0, tmp_1, tmp_2, tmp_3, tmp_4, tmp_5, tmp_6, tmp_7, tmp_8, tmp_9)");
	NODE(0, "{\"name\":\"tmp_0\",\"op\":\"getitem\",\"inputs\":[\"x\"],"
		"\"attrs\":{\"index\":[[null,null,null],[null,2,null],0]}}");
	NODE(1, "{\"name\":\"tmp_1\",\"op\":\"getitem\",\"inputs\":[\"x\"],"
		"\"attrs\":{\"index\":[[null,null,null],[1,3,null],[null,null,2]]}}");
	NODE(2, "{\"name\":\"tmp_2\",\"op\":\"getitem\",\"inputs\":[\"x\"],\"attrs\":{\"index\":[null]}}");
	NODE(3, "{\"name\":\"tmp_3\",\"op\":\"getitem\",\"inputs\":[\"x\"],\"attrs\":{\"index\":[\"...\",null]}}");
	NODE(4, "{\"name\":\"tmp_4\",\"op\":\"getitem\",\"inputs\":[\"x\"],\"attrs\":{\"index\":[\"...\",1]}}");
	NODE(5, "{\"name\":\"tmp_5\",\"op\":\"getitem\",\"inputs\":[\"x\"],\"attrs\":{\"index\":[-1]}}");
	NODE(6, "{\"name\":\"tmp_6\",\"op\":\"getitem\",\"inputs\":[\"x\"],\"attrs\":{\"index\":[0,1]}}");
	NODE(7, "{\"name\":\"tmp_7\",\"op\":\"getitem\",\"inputs\":[\"x\"],"
		"\"attrs\":{\"index\":[[null,2,null],[null,null,null],[-3,-1,null]]}}");
	OUTPUTS("[\"tmp_0\",\"tmp_1\",\"tmp_2\",\"tmp_3\",\"tmp_4\",\"tmp_5\",\"tmp_6\",\"tmp_7\",\"y\",\"v\"]");
	BODY_ERR("tmp_0 = x[i]\nreturn tmp_0", "t/model.py:5: indexing with a tensor (advanced indexing) is not supported");
	BODY_ERR("tmp_0 = x[[0, 1]]\nreturn tmp_0", "indexing with a list (advanced indexing)");
	BODY_ERR("tmp_0 = x[1.5]\nreturn tmp_0", "unsupported index: a float");
	BODY_ERR("tmp_0 = x[slice(0, 'a')]\nreturn tmp_0", "slice() bounds must be ints or None");
	BODY_ERR("tmp_0 = (x, y)[2]\nreturn tmp_0", "index 2 out of range");
	/* the graph validator's range check, traced back to the source line */
	BODY_ERR("tmp_0 = x[9]\nreturn tmp_0", "node 'tmp_0' (getitem): index 9 is out of range");
	CHECK(strstr(last_err, "(at t/model.py:5)") != NULL, "%s", last_err);
}

static void test_statements(void)
{
	/* comments, blank lines, continuation lines, aliases, annotations */
	const char *m =
		"# generated\n"
		"import torch\n"
		"import torch.nn.functional as F\n"
		"from torch import nn\n"
		"from torch.nn import functional as G, Module\n"
		"\"\"\"A docstring.\"\"\"\n"
		"\n"
		"class GraphModule(Module):\n"
		"    \"\"\"doc\"\"\"\n"
		"    def __init__(self):\n"
		"        super().__init__()\n"
		"\n"
		"    def forward(self, x: torch.Tensor, y : torch.Tensor) -> tuple:\n"
		"        tmp_0 = F.relu(x)  # comment\n"
		"\n"
		"        tmp_1 = nn.functional.sigmoid(\n"
		"            y,\n"
		"        )\n"
		"        tmp_2 = G.gelu(tmp_0) + \\\n"
		"            tmp_1\n"
		"        return tmp_2\n";
	static const char meta2[] =
		"import torch\n"
		"class A:\n    name = 'x'\n    shape = [3]\n    dtype = 'torch.float32'\n    data = [1.0, 2.0, 3.0]\n"
		"class B:\n    name = 'y'\n    shape = [1, 3]\n    dtype = torch.float16\n    data = [[0.5, -0.5, 1e-3]]\n";
	int rc = import_text(m, meta2);
	CHECK(rc == 0, "aliases and layout: %s", last_err);
	NODE(0, "{\"name\":\"tmp_0\",\"op\":\"relu\",\"inputs\":[\"x\"]}");
	NODE(1, "{\"name\":\"tmp_1\",\"op\":\"sigmoid\",\"inputs\":[\"y\"]}");
	NODE(3, "{\"name\":\"tmp_2\",\"op\":\"add\",\"inputs\":[\"tmp_2_gelu\",\"tmp_1\"]}");
	char *s = dumps(json_object_get(variant0(), "inputs"));
	CHECK(strstr(s, "\"data\":[0.5,-0.5,0.001]") && strstr(s, "\"dtype\":\"float16\""), "nested data: %s", s);
	free(s);
	/* the variant's dtype is its dominant float dtype: one f32, one f16 -> the first most common */
	CHECK(!strcmp(json_string_value(json_object_get(variant0(), "name")), "float32_0"), "name");

	BODY_ERR("if x:\n    pass\nreturn x", "t/model.py:5: unsupported statement 'if'");
	BODY_ERR("for a in x:\n    pass\nreturn x", "t/model.py:5: unsupported statement 'for'");
	BODY_ERR("tmp_0 = x\n    tmp_1 = y\nreturn x", "t/model.py:6: unexpected indent");
	BODY_ERR("return x\ntmp_0 = y", "t/model.py:6: statement after return");
	BODY_ERR("tmp_0 = x", "forward() has no return statement");
	BODY_ERR("x.y = 1\nreturn x", "t/model.py:5: unsupported assignment target");
	BODY_ERR("tmp_0 = x; tmp_1 = y\nreturn x", "t/model.py:5:");
	BODY_ERR("tmp_0 = torch.roll(x, 1)\nreturn tmp_0", "t/model.py:5: unsupported call torch.roll");
	BODY_ERR("tmp_0 = torch.nn.functional.softmax(v, dimension=1)\nreturn tmp_0",
		 "t/model.py:5: unknown keyword argument 'dimension' for torch.nn.functional.softmax");
	BODY_ERR("tmp_0 = torch.cat(*[x, y])\nreturn tmp_0", "t/model.py:5: starred arguments are not supported");
	BODY_ERR("tmp_0 = torch.cat(**{})\nreturn tmp_0", "starred arguments are not supported");
	BODY_ERR("tmp_0 = foo + x\nreturn tmp_0", "t/model.py:5: undefined name 'foo'");
	BODY_ERR("tmp_0 = torch.sigmoid(x, y)\nreturn tmp_0", "torch.sigmoid takes at most 1 positional arguments");
	BODY_ERR("tmp_0 = torch.transpose(v, 1)\nreturn tmp_0", "torch.transpose: missing argument 'dim1'");
	BODY_ERR("tmp_0 = torch.sum(v, 1, dim=2)\nreturn tmp_0", "got multiple values for argument 'dim'");
	BODY_ERR("tmp_0 = torch.sum(v, dim=1, dim=2)\nreturn tmp_0", "keyword argument 'dim' repeated");
	BODY_ERR("tmp_0 = torch.conv2d(x, w, b, 1, 0, 1, 1.5)\nreturn tmp_0", "argument 'groups': expected an int");
	BODY_ERR("tmp_0 = torch.nn.functional.interpolate(x, scale_factor=2.0, antialias=True)\nreturn tmp_0",
		 "antialias");
	BODY_ERR("tmp_0 = torch.div(x, 2, rounding_mode='floor')\nreturn tmp_0", "only None/False is supported");
	BODY_ERR("tmp_0 = torch.add(1, 2)\nreturn tmp_0", "needs at least one tensor operand");
	BODY_ERR("tmp_0 = x.view(3, 5)\nreturn tmp_0", "node 'tmp_0'");   /* graph validation */
	BODY_ERR("tmp_0 = lambda: x\nreturn x", "t/model.py:5:");
	BODY_ERR("tmp_0 = {1: x}\nreturn x", "t/model.py:5: dicts and sets are not supported");
	BODY_ERR("tmp_0 = x == y\nreturn x", "t/model.py:5: unsupported syntax near '=='");
	BODY_ERR("tmp_0 = 'abc\nreturn x", "t/model.py:5: unterminated string");
	BODY_ERR("tmp_0 = (x\nreturn x", "t/model.py:5: unclosed bracket");
	BODY_ERR("tmp_0 = x)\nreturn x", "t/model.py:5: unmatched ')'");
	BODY_ERR("tmp_0 = x $ y\nreturn x", "t/model.py:5: invalid character '$'");
	BODY_ERR("tmp_0 = 1j * x\nreturn x", "t/model.py:5: bad number literal");
	BODY_ERR("x.view(-1)\nreturn x", "t/model.py:5: expression statement has no effect");
	BODY_ERR("return", "t/model.py:5: forward() must return tensors");
	BODY_ERR("return 1", "t/model.py:5: return value 1: expected a tensor, got an int");

	/* nesting is bounded, not a stack overflow */
	char deep[4096] = "tmp_0 = ";
	for (int k = 0; k < 1000; k++)
		strcat(deep, "-");
	strcat(deep, "x\nreturn tmp_0");
	BODY_ERR(deep, "nested too deeply");
	char deep2[4096] = "tmp_0 = ";
	for (int k = 0; k < 500; k++)
		strcat(deep2, "(");
	strcat(deep2, "x");
	for (int k = 0; k < 500; k++)
		strcat(deep2, ")");
	strcat(deep2, "\nreturn tmp_0");
	BODY_ERR(deep2, "nested too deeply");
	char deep3[4096] = "tmp_0 = x";
	for (int k = 0; k < 500; k++)
		strcat(deep3, " ** 1");
	strcat(deep3, "\nreturn tmp_0");
	BODY_ERR(deep3, "nested too deeply");

	/* structural errors */
	CHECK(import_text("import torch\n", META) != 0 && strstr(last_err, "t/model.py: no class with a forward()"),
	      "%s", last_err);
	CHECK(import_text("x = 1\n", META) != 0 && strstr(last_err, "t/model.py:1: unsupported top-level statement"),
	      "%s", last_err);
	char *mm = model_of("x, *rest", "return x");
	CHECK(import_text(mm, META) != 0 && strstr(last_err, "t/model.py:4: forward(): starred"), "%s", last_err);
	free(mm);
	mm = model_of("x, y=None", "return x");
	CHECK(import_text(mm, META) != 0 && strstr(last_err, "default values are not supported"), "%s", last_err);
	free(mm);
	mm = model_of("x, x", "return x");
	CHECK(import_text(mm, META) != 0 && strstr(last_err, "duplicate parameter 'x'"), "%s", last_err);
	free(mm);
}

static void test_meta_errors(void)
{
	char *m = model_of("x, y", "tmp_0 = x + y\nreturn tmp_0");
	CHECK(import_text(m, NULL) != 0 && !strcmp(last_err, "t/: no weight_meta.py (needed for input shapes and "
						   "dtypes)"), "%s", last_err);
	CHECK(import_text(m, "class A:\n\tname = \"x\"\n\tshape = [2]\n\tdtype = \"torch.float32\"\n") != 0 &&
	      strstr(last_err, "t/weight_meta.py: no entry with name = \"y\" (forward argument 2 of t/model.py)"),
	      "%s", last_err);
	CHECK(import_text(m, "class A:\n\tname = \"x\"\n\tshape = [2]\n") != 0 &&
	      strstr(last_err, "t/weight_meta.py:1: class A: needs name, shape and dtype"), "%s", last_err);
	CHECK(import_text(m, "class A:\n\tname = \"x\"\n\tshape = [2]\n\tdtype = \"torch.uint8\"\n") != 0 &&
	      strstr(last_err, "t/weight_meta.py:4: class A: unsupported dtype 'torch.uint8'"), "%s", last_err);
	CHECK(import_text(m, "class A:\n\tname = \"x\"\n\tshape = [2, -1]\n") != 0 &&
	      strstr(last_err, "t/weight_meta.py:3: class A: shape must be a list of ints >= 0"), "%s", last_err);
	CHECK(import_text(m, "class A:\n\tname = \"x\"\n\tshape = [2]\n\tdtype = \"torch.float32\"\n"
			  "class B:\n\tname = \"x\"\n\tshape = [2]\n\tdtype = \"torch.float32\"\n") != 0 &&
	      strstr(last_err, "t/weight_meta.py:5: class B: a second entry for 'x' (first at line 1)"), "%s", last_err);
	CHECK(import_text(m, "x = 1\n") != 0 && strstr(last_err, "t/weight_meta.py:1: unsupported statement"),
	      "%s", last_err);
	CHECK(import_text(m, "class A:\n\tname = \"x\"\n\tshape = [2]\n\tdtype = \"torch.float32\"\n"
			  "\tmean = foo()\n") != 0 && strstr(last_err, "t/weight_meta.py:5:"), "%s", last_err);
	CHECK(import_text(m, "class A:\n\tname = \"x\"\n\tshape = [2]\n\tdtype = \"torch.float32\"\n\tdata = [1.0]\n"
			  "class B:\n\tname = \"y\"\n\tshape = [2]\n\tdtype = \"torch.float32\"\n") != 0 &&
	      strstr(last_err, "variant 'float32_0'"), "data of the wrong size is the validator's error: %s", last_err);
	CHECK(import_text(m, "class A:\n\tname = \"x\"\n\tshape = [2]\n\tdtype = \"torch.int64\"\n\tdata = [1.5, 2]\n"
			  "class B:\n\tname = \"y\"\n\tshape = [2]\n\tdtype = \"torch.int64\"\n") != 0 &&
	      strstr(last_err, "t/weight_meta.py:1: entry x: data of an integer tensor holds 1.5"), "%s", last_err);
	/* an entry for no argument is a warning, not an error */
	CHECK(import_text(m, "class A:\n\tname = \"x\"\n\tshape = [2]\n\tdtype = \"torch.float32\"\n"
			  "class B:\n\tname = \"y\"\n\tshape = [2]\n\tdtype = \"torch.float32\"\n"
			  "class C:\n\tname = \"z\"\n\tshape = [2]\n\tdtype = \"torch.float32\"\n") == 0 &&
	      strstr(warnings, "t/weight_meta.py:9: entry 'z' is not an argument of forward(); ignored"),
	      "%s / %s", last_err, warnings);
	free(m);
}

/* ---- variants ------------------------------------------------------------------ */

static const char META_F32[] = "class A:\n\tname = \"x\"\n\tshape = [2, 4]\n\tdtype = \"torch.float32\"\n"
			       "class B:\n\tname = \"s\"\n\tshape = []\n\tdtype = \"torch.float32\"\n";
static const char META_F32_B8[] = "class A:\n\tname = \"x\"\n\tshape = [8, 4]\n\tdtype = \"torch.float32\"\n"
				  "class B:\n\tname = \"s\"\n\tshape = []\n\tdtype = \"torch.float32\"\n";
static const char META_F16[] = "class A:\n\tname = \"x\"\n\tshape = [2, 4]\n\tdtype = \"torch.float16\"\n"
			       "class B:\n\tname = \"s\"\n\tshape = []\n\tdtype = \"torch.float32\"\n";

static int import_many(const char *const *models, const char *const *metas, const char *const *vnames, int n,
		       struct graph_task **task)
{
	struct import_sample s[4];
	char names[4][64], ml[4][64], wl[4][64];
	for (int i = 0; i < n; i++) {
		snprintf(names[i], sizeof(names[i]), "s%d", i);
		snprintf(ml[i], sizeof(ml[i]), "s%d/model.py", i);
		snprintf(wl[i], sizeof(wl[i]), "s%d/weight_meta.py", i);
		s[i] = (struct import_sample){.name = names[i], .model_label = ml[i], .model = models[i],
			.model_len = strlen(models[i]), .meta_label = wl[i], .meta = metas[i],
			.meta_len = strlen(metas[i]), .variant = vnames ? vnames[i] : NULL};
	}
	struct import_options o = {.id = "multi", .warn = on_warn};
	json_decref(last_root);
	last_root = NULL;
	last_err[0] = 0;
	return import_build(s, n, &o, &last_root, task, last_err, sizeof(last_err));
}

static void test_variants(void)
{
	char *m = model_of("x, s", "tmp_0 = x * s\ntmp_1 = tmp_0.view(-1, 2)\nreturn (tmp_1,)");
	char *m2 = model_of("x, s", "tmp_0 = x * s\ntmp_1 = tmp_0.view(2, -1)\nreturn (tmp_1,)");
	char *m3 = model_of("x, s", "tmp_0 = x + s\ntmp_1 = tmp_0.view(-1, 2)\nreturn (tmp_1,)");
	char *m4 = model_of("x, t", "tmp_0 = x * t\ntmp_1 = tmp_0.view(-1, 2)\nreturn (tmp_1,)");
	char *m5 = model_of("x, s", "tmp_0 = x * 2\ntmp_1 = tmp_0.view(-1, 2)\nreturn (tmp_1,)");
	struct graph_task *t = NULL;
	{
		const char *ms[] = {m, m, m, m2}, *ws[] = {META_F32, META_F16, META_F32_B8, META_F32};
		int rc = import_many(ms, ws, NULL, 4, &t);
		CHECK(rc == 0, "four variants: %s", last_err);
		if (rc == 0) {
			CHECK(t->n_variants == 4, "n_variants");
			CHECK(!strcmp(t->variants[0].name, "float32_0") && !strcmp(t->variants[1].name, "float16_0") &&
			      !strcmp(t->variants[2].name, "float32_1") && !strcmp(t->variants[3].name, "float32_2"),
			      "names %s %s %s %s", t->variants[0].name, t->variants[1].name, t->variants[2].name,
			      t->variants[3].name);
			char sb[64];
			const struct graph_variant *v = &t->variants[2];
			graph_shape_str(&v->values[v->outputs[0]].shape, sb, sizeof(sb));
			CHECK(!strcmp(sb, "[16,2]"), "inferred %s", sb);
			CHECK(!strcmp(t->source, "s0, s1, s2, s3"), "source %s", t->source);
		}
		graph_task_free(t);
		t = NULL;
	}
	{
		const char *ms[] = {m, m}, *ws[] = {META_F32, META_F16}, *vn[] = {"f32_b2", NULL};
		CHECK(import_many(ms, ws, vn, 2, NULL) == 0, "%s", last_err);
		json_t *vs = json_object_get(last_root, "variants");
		CHECK(!strcmp(json_string_value(json_object_get(json_array_get(vs, 0), "name")), "f32_b2") &&
		      !strcmp(json_string_value(json_object_get(json_array_get(vs, 1), "name")), "float16_0"), "names");
		const char *vn2[] = {"a b", NULL};
		CHECK(import_many(ms, ws, vn2, 2, NULL) != 0 && strstr(last_err, "variant name 'a b'"), "%s", last_err);
		const char *vn3[] = {"same", "same"};
		CHECK(import_many(ms, ws, vn3, 2, NULL) != 0 && strstr(last_err, "s0 and s1: both are variant 'same'"),
		      "%s", last_err);
	}
	{
		const char *ms[] = {m, m3}, *ws[] = {META_F32, META_F32};
		CHECK(import_many(ms, ws, NULL, 2, NULL) != 0 &&
		      strstr(last_err, "samples s0 and s1 differ: tmp_0 = mul(...) at s0/model.py:5, but tmp_0 = "
			     "add(...) at s1/model.py:5"), "%s", last_err);
	}
	{
		const char *ms[] = {m, m4}, *ws[] = {META_F32, META_F32};
		CHECK(import_many(ms, ws, NULL, 2, NULL) != 0 &&
		      strstr(last_err, "samples s0 and s1 differ: forward() argument 2 is s in the first, t in the second"),
		      "%s", last_err);
	}
	{
		/* a scalar where the other has a tensor: different wiring */
		const char *ms[] = {m, m5}, *ws[] = {META_F32, META_F32};
		CHECK(import_many(ms, ws, NULL, 2, NULL) != 0 && strstr(last_err, "differ"), "%s", last_err);
	}
	free(m);
	free(m2);
	free(m3);
	free(m4);
	free(m5);
}

static void test_model_name(void)
{
	char b[128];
	CHECK(!strcmp(import_model_name("h14_albert-xlarge-v1_0_start5_end10_0", b, sizeof(b)), "albert-xlarge-v1"),
	      "%s", b);
	CHECK(!strcmp(import_model_name("v28_yolo11n_start145_end147_3", b, sizeof(b)), "yolo11n"), "%s", b);
	CHECK(!strcmp(import_model_name("bert_L-2_H-768_0_start5_end10_0", b, sizeof(b)), "bert_L-2_H-768"), "%s", b);
	CHECK(!strcmp(import_model_name("plain", b, sizeof(b)), "plain"), "%s", b);
	CHECK(!strcmp(import_model_name("x_start_end", b, sizeof(b)), "x_start_end"), "%s", b);
	CHECK(!strcmp(import_model_name("h14_albert", b, 4), "alb"), "%s", b);
}

/* The calls mapped to unbind, tensor_split, leaky_relu, baddbmm and arange,
 * and conv1d lowered to conv2d over a unit height. */
static void test_more_calls(void)
{
	BODY_OK("q, k, w2 = v.reshape(2, 8, 2, 8).unbind(-2)[0], v.unbind(1)[7], torch.unbind(v)\n"
		"p0, p1 = w2\nreturn (q, k, p1)");
	NODE(0, "{\"name\":\"q_reshape\",\"op\":\"reshape\",\"inputs\":[\"v\"],\"attrs\":{\"shape\":[2,8,2,8]}}");
	NODE(1, "{\"name\":\"q_unbind\",\"op\":\"unbind\",\"inputs\":[\"q_reshape\"],\"attrs\":{\"dim\":-2}}");
	NODE(2, "{\"name\":\"q\",\"op\":\"getitem\",\"inputs\":[\"q_unbind\"],\"attrs\":{\"index\":[0]}}");
	NODE(3, "{\"name\":\"q_unbind_1\",\"op\":\"unbind\",\"inputs\":[\"v\"],\"attrs\":{\"dim\":1}}");
	NODE(5, "{\"name\":\"w2\",\"op\":\"unbind\",\"inputs\":[\"v\"]}");
	NODE(6, "{\"name\":\"p1\",\"op\":\"getitem\",\"inputs\":[\"w2\"],\"attrs\":{\"index\":[1]}}");
	/* timm's q, k, v = qkv.unbind(0) */
	BODY_OK("tmp_0 = v.reshape(2, 4, 2, 16)\nq, k, w2, u = tmp_0.permute(1, 0, 2, 3).unbind(0)\nreturn (w2, q)");
	NODE(2, "{\"name\":\"q_unbind\",\"op\":\"unbind\",\"inputs\":[\"q_permute\"],\"attrs\":{\"dim\":0}}");
	NODE(3, "{\"name\":\"q\",\"op\":\"getitem\",\"inputs\":[\"q_unbind\"],\"attrs\":{\"index\":[0]}}");
	NODE(4, "{\"name\":\"w2\",\"op\":\"getitem\",\"inputs\":[\"q_unbind\"],\"attrs\":{\"index\":[2]}}");
	CHECK(strstr(warnings, "k (getitem) is never used") && strstr(warnings, "u (getitem) is never used"),
	      "unused unpacked names are dropped with a warning: %s", warnings);
	/* too many names: the getitem past the end says so; too few: the count check */
	BODY_ERR("tmp_0 = v.reshape(2, 2, 4, 16)\nq, k, w2 = tmp_0.unbind(0)\nreturn (w2,)",
		 "node 'w2' (getitem): index 2 is out of range for the 2-tuple 'q_unbind' (at t/model.py:6)");
	BODY_ERR("tmp_0 = v.reshape(2, 2, 4, 16)\nq, k = tmp_0.unbind(2)\nreturn (k,)",
		 "t/model.py:6: cannot unpack the 4 tensors of q_unbind (unbind) into 2 names");
	BODY_ERR("tmp_0 = v.unbind(3)\ntmp_1 = tmp_0[0]\nreturn (tmp_1,)", "dim 3 is out of range for a 3-dim tensor");
	BODY_ERR("tmp_0 = v.unbind(dim=1.0)\nreturn (tmp_0[0],)", "Tensor.unbind argument 'dim': expected an int");
	BODY_ERR("tmp_0 = v.unbind(0)\nreturn (tmp_0,)", "tmp_0 is a tuple");

	BODY_OK("tmp_0 = v.tensor_split(2, -1)\ntmp_1 = torch.tensor_split(v, [1, 5], dim=1)[2]\n"
		"tmp_2 = v.tensor_split(sections=3)\ntmp_3 = torch.tensor_split(v, indices=(4,))\n"
		"return (tmp_0[1], tmp_1, tmp_2[0], tmp_3[1])");
	NODE(0, "{\"name\":\"tmp_0\",\"op\":\"tensor_split\",\"inputs\":[\"v\"],\"attrs\":{\"sections\":2,\"dim\":-1}}");
	NODE(1, "{\"name\":\"tmp_1_tensor_split\",\"op\":\"tensor_split\",\"inputs\":[\"v\"],"
		"\"attrs\":{\"indices\":[1,5],\"dim\":1}}");
	NODE(3, "{\"name\":\"tmp_2\",\"op\":\"tensor_split\",\"inputs\":[\"v\"],\"attrs\":{\"sections\":3}}");
	NODE(4, "{\"name\":\"tmp_3\",\"op\":\"tensor_split\",\"inputs\":[\"v\"],\"attrs\":{\"indices\":[4]}}");
	BODY_ERR("tmp_0 = v.tensor_split()\nreturn (tmp_0[0],)", "Tensor.tensor_split: needs exactly one of");
	BODY_ERR("tmp_0 = v.tensor_split(2, sections=2)\nreturn (tmp_0[0],)", "needs exactly one of");
	BODY_ERR("tmp_0 = v.tensor_split(2.5)\nreturn (tmp_0[0],)", "'indices_or_sections': expected an int or a tuple");
	BODY_ERR("tmp_0 = v.tensor_split([1, None])\nreturn (tmp_0[0],)", "expected an int or a tuple of ints");
	BODY_ERR("tmp_0 = v.tensor_split(0)\nreturn (tmp_0[0],)",
		 "node 'tmp_0' (tensor_split): sections must be 1..1024, not 0 (at t/model.py:5)");

	BODY_OK("tmp_0 = torch.nn.functional.leaky_relu(x, 0.1, True)\ntmp_1 = torch.nn.functional.leaky_relu(y)\n"
		"tmp_2 = torch._C._nn.leaky_relu(y, negative_slope=2)\ntmp_3 = torch.nn.functional.leaky_relu_(tmp_2, 0.5)\n"
		"return (x, tmp_1, tmp_2)");
	NODE(0, "{\"name\":\"tmp_0\",\"op\":\"leaky_relu\",\"inputs\":[\"x\"],"
		"\"attrs\":{\"negative_slope\":0.1,\"inplace\":true}}");
	NODE(1, "{\"name\":\"tmp_1\",\"op\":\"leaky_relu\",\"inputs\":[\"y\"]}");
	NODE(2, "{\"name\":\"tmp_2\",\"op\":\"leaky_relu\",\"inputs\":[\"y\"],\"attrs\":{\"negative_slope\":2.0}}");
	/* in place: x and tmp_2 name the new values */
	NODE(3, "{\"name\":\"tmp_3\",\"op\":\"leaky_relu\",\"inputs\":[\"tmp_2\"],\"attrs\":{\"negative_slope\":0.5}}");
	OUTPUTS("[\"tmp_0\",\"tmp_1\",\"tmp_3\"]");
	BODY_ERR("tmp_0 = torch.nn.functional.leaky_relu(x, 'a')\nreturn tmp_0",
		 "torch.nn.functional.leaky_relu argument 'negative_slope': expected a number");
	BODY_ERR("tmp_0 = torch.nn.functional.leaky_relu(i)\nreturn tmp_0", "needs a floating-point tensor");
	BODY_ERR("tmp_0 = torch.nn.functional.leaky_relu(x, slope=0.1)\nreturn tmp_0", "unknown keyword argument 'slope'");

	/* conv1d: [N, C, L] -> conv2d over [N, C, 1, L] */
	BODY_OK("tmp_0 = torch.conv1d(v, v, None, (3,), (2,), (1,), 1)\n"
		"tmp_1 = torch.nn.functional.conv1d(v, v, stride=2, padding='same', dilation=2)\nreturn (tmp_0,)");
	NODE(0, "{\"name\":\"tmp_0_getitem\",\"op\":\"getitem\",\"inputs\":[\"v\"],"
		"\"attrs\":{\"index\":[\"...\",null,[null,null,null]]}}");
	NODE(1, "{\"name\":\"tmp_0_getitem_1\",\"op\":\"getitem\",\"inputs\":[\"v\"],"
		"\"attrs\":{\"index\":[\"...\",null,[null,null,null]]}}");
	NODE(2, "{\"name\":\"tmp_0_conv2d\",\"op\":\"conv2d\",\"inputs\":[\"tmp_0_getitem\",\"tmp_0_getitem_1\",null],"
		"\"attrs\":{\"stride\":[1,3],\"padding\":[0,2],\"dilation\":[1,1],\"groups\":1}}");
	NODE(3, "{\"name\":\"tmp_0\",\"op\":\"getitem\",\"inputs\":[\"tmp_0_conv2d\"],"
		"\"attrs\":{\"index\":[\"...\",0,[null,null,null]]}}");
	BODY_OK("tmp_1 = torch.nn.functional.conv1d(v, v, padding='same', dilation=2)\nreturn (tmp_1,)");
	NODE(2, "{\"name\":\"tmp_1_conv2d\",\"op\":\"conv2d\",\"inputs\":[\"tmp_1_getitem\",\"tmp_1_getitem_1\"],"
		"\"attrs\":{\"padding\":\"same\",\"dilation\":[1,2]}}");
	BODY_ERR("tmp_0 = torch.conv1d(v, v, None, (1, 2))\nreturn tmp_0",
		 "torch.conv1d argument 'stride': expected an int or a 1-tuple of ints");
	BODY_ERR("tmp_0 = torch.conv1d(v, g)\nreturn tmp_0", "(conv2d)");
	BODY_ERR("tmp_0 = torch.conv1d(v)\nreturn tmp_0", "torch.conv1d: missing argument 'weight'");

	BODY_OK("tmp_0 = v.transpose(1, 2)\ntmp_1 = g.baddbmm(batch1 = tmp_0, batch2 = v, beta = 1.0, alpha = 0.125)\n"
		"tmp_2 = torch.baddbmm(g, tmp_0, v, beta=0)\nreturn (tmp_1, tmp_2)");
	NODE(1, "{\"name\":\"tmp_1\",\"op\":\"baddbmm\",\"inputs\":[\"g\",\"tmp_0\",\"v\"],"
		"\"attrs\":{\"beta\":1.0,\"alpha\":0.125}}");
	NODE(2, "{\"name\":\"tmp_2\",\"op\":\"baddbmm\",\"inputs\":[\"g\",\"tmp_0\",\"v\"],\"attrs\":{\"beta\":0}}");
	BODY_ERR("tmp_0 = torch.baddbmm(g, v, v)\nreturn tmp_0", "must be [b, n, m] and [b, m, p]");
	BODY_ERR("tmp_0 = torch.baddbmm(g, v, v, 1.0)\nreturn tmp_0", "takes at most 3 positional arguments");
	BODY_ERR("tmp_0 = torch.baddbmm(g, v, v, alpha='x')\nreturn tmp_0", "argument 'alpha': expected a number");

	BODY_OK("tmp_0 = torch.arange(16)\ntmp_1 = tmp_0.to(device(type='cuda', index=0))\ntmp_2 = g * tmp_1\n"
		"tmp_3 = torch.arange(1, 9, device = device(type='cuda', index=0), dtype = torch.int32)\n"
		"tmp_4 = torch.arange(0.0, 1.0, 0.0625, dtype=None)\ntmp_5 = torch.arange(start=16, end=0, step=-1)\n"
		"tmp_6 = torch.arange(2, end=18)\nreturn (tmp_2, tmp_3, tmp_4, tmp_5, tmp_6)");
	NODE(0, "{\"name\":\"tmp_0\",\"op\":\"arange\",\"inputs\":[],\"attrs\":{\"end\":16}}");
	NODE(1, "{\"name\":\"tmp_2\",\"op\":\"mul\",\"inputs\":[\"g\",\"tmp_0\"]}");
	NODE(2, "{\"name\":\"tmp_3\",\"op\":\"arange\",\"inputs\":[],\"attrs\":{\"start\":1,\"end\":9,\"dtype\":\"int32\"}}");
	NODE(3, "{\"name\":\"tmp_4\",\"op\":\"arange\",\"inputs\":[],\"attrs\":{\"start\":0.0,\"end\":1.0,\"step\":0.0625}}");
	NODE(4, "{\"name\":\"tmp_5\",\"op\":\"arange\",\"inputs\":[],\"attrs\":{\"start\":16,\"end\":0,\"step\":-1}}");
	NODE(5, "{\"name\":\"tmp_6\",\"op\":\"arange\",\"inputs\":[],\"attrs\":{\"start\":2,\"end\":18}}");
	BODY_ERR("tmp_0 = torch.arange()\nreturn tmp_0", "torch.arange: missing argument 'end'");
	BODY_ERR("tmp_0 = torch.arange(0, 4, 1, 2)\nreturn tmp_0", "takes at most 3 positional arguments");
	BODY_ERR("tmp_0 = torch.arange(x)\nreturn tmp_0", "torch.arange argument 'end': expected a number, got a tensor");
	BODY_ERR("tmp_0 = torch.arange(4, out=x)\nreturn tmp_0", "unknown keyword argument 'out' for torch.arange");
	BODY_ERR("tmp_0 = torch.arange(4, dtype='float')\nreturn tmp_0", "argument 'dtype': expected a dtype");
	BODY_ERR("tmp_0 = torch.arange(0, 4, 0)\nreturn tmp_0", "node 'tmp_0' (arange): step must be nonzero (at t/model.py:5)");
	BODY_ERR("tmp_0 = torch.arange(4, 0)\nreturn tmp_0", "inconsistent with step sign");
}

/* F.avg_pool2d (and torch._C._nn's) with PyTorch's positional order and
 * defaults; Tensor.unfold, a view. */
static void test_pool_unfold(void)
{
	BODY_OK("tmp_0 = torch.nn.functional.avg_pool2d(x, 2, 2, 0, True, False, None)\n"
		"tmp_1 = torch.nn.functional.avg_pool2d(x, kernel_size=(3, 2), padding=[1, 0], divisor_override=5)\n"
		"tmp_2 = torch._C._nn.avg_pool2d(y, [2, 2], [], 1, True)\ntmp_3 = torch.nn.functional.avg_pool2d(y, 3, None)\n"
		"return (tmp_0, tmp_1, tmp_2, tmp_3)");
	NODE(0, "{\"name\":\"tmp_0\",\"op\":\"avg_pool2d\",\"inputs\":[\"x\"],\"attrs\":{\"kernel_size\":2,"
		"\"stride\":2,\"padding\":0,\"ceil_mode\":true,\"count_include_pad\":false}}");
	NODE(1, "{\"name\":\"tmp_1\",\"op\":\"avg_pool2d\",\"inputs\":[\"x\"],\"attrs\":{\"kernel_size\":[3,2],"
		"\"padding\":[1,0],\"divisor_override\":5}}");
	NODE(2, "{\"name\":\"tmp_2\",\"op\":\"avg_pool2d\",\"inputs\":[\"y\"],\"attrs\":{\"kernel_size\":[2,2],"
		"\"stride\":[],\"padding\":1,\"ceil_mode\":true}}");
	NODE(3, "{\"name\":\"tmp_3\",\"op\":\"avg_pool2d\",\"inputs\":[\"y\"],\"attrs\":{\"kernel_size\":3}}");
	BODY_ERR("tmp_0 = torch.nn.functional.avg_pool2d(x)\nreturn tmp_0",
		 "torch.nn.functional.avg_pool2d: missing argument 'kernel_size'");
	BODY_ERR("tmp_0 = torch.nn.functional.avg_pool2d(x, 2.0)\nreturn tmp_0",
		 "avg_pool2d argument 'kernel_size': expected an int or a tuple of ints, got a float");
	BODY_ERR("tmp_0 = torch.nn.functional.avg_pool2d(x, 3, padding=2)\nreturn tmp_0",
		 "node 'tmp_0' (avg_pool2d): padding [2, 2] must be at most half of kernel_size [3, 3] (at t/model.py:5)");
	BODY_ERR("tmp_0 = torch.nn.functional.avg_pool2d(x, 3, divisor=2)\nreturn tmp_0",
		 "unknown keyword argument 'divisor' for torch.nn.functional.avg_pool2d");
	BODY_ERR("tmp_0 = torch.nn.functional.avg_pool2d(i, 1)\nreturn tmp_0", "needs a floating-point tensor");

	BODY_OK("tmp_0 = v.unfold(2, 4, 4)\ntmp_1 = v.unfold(dimension=-2, size=3, step=2)\nreturn (tmp_0, tmp_1)");
	NODE(0, "{\"name\":\"tmp_0\",\"op\":\"unfold\",\"inputs\":[\"v\"],\"attrs\":{\"dimension\":2,\"size\":4,"
		"\"step\":4}}");
	NODE(1, "{\"name\":\"tmp_1\",\"op\":\"unfold\",\"inputs\":[\"v\"],\"attrs\":{\"dimension\":-2,\"size\":3,"
		"\"step\":2}}");
	BODY_ERR("tmp_0 = v.unfold(2, 4)\nreturn tmp_0", "Tensor.unfold: missing argument 'step'");
	BODY_ERR("tmp_0 = v.unfold(1, 9, 1)\nreturn tmp_0", "size 9 must be 0..8 (dim 1 of 'v' [2,8,16])");
	BODY_ERR("tmp_0 = v.unfold(1, 2, 0)\nreturn tmp_0", "step is 0 but must be > 0");
	/* a view: an in-place op on its base makes it stale */
	BODY_ERR("tmp_0 = v.unfold(1, 2, 2)\nv += 1\ntmp_1 = tmp_0 * 2\nreturn tmp_1", "tmp_0 is used after an in-place op");
	BODY_ERR("tmp_0 = torch.nn.functional.unfold(x, 2)\nreturn tmp_0", "unsupported call torch.nn.functional.unfold");
}

int main(void)
{
	test_basic();
	test_scalars();
	test_operators();
	test_rebinding();
	test_functional();
	test_methods();
	test_more_calls();
	test_pool_unfold();
	test_subscripts();
	test_statements();
	test_meta_errors();
	test_variants();
	test_model_name();
	json_decref(last_root);
	printf("test_import: %d passed, %d failed\n", passed, failed);
	return failed ? 1 : 0;
}
