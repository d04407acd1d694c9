/* fuzz_import.c - libFuzzer target for the GraphNet importer: any model.py or
 * weight_meta.py text must give either a task or a one-line error, never a
 * crash, leak or hang.
 *
 *   CC=clang cmake -B build-fuzz -DPASSFS_FUZZ=ON -DPASSFS_WERROR=OFF
 *   cmake --build build-fuzz --target fuzz_import
 *   ./build-fuzz/fuzz_import -max_total_time=180 tests/fuzz/corpus_import
 *
 * The input is a model.py run against a fixed weight_meta.py; an input that
 * starts with the line "#meta" is a weight_meta.py run against a fixed
 * model.py instead (the line is a Python comment, so corpus files stay valid
 * Python).  A model that imports is imported again as two variants (float32
 * and float16 metas), which exercises naming and the variant comparison. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "import.h"

static const char META_F32[] =
	"class Program_weight_tensor_meta_in_0:\n"
	"\tname = \"in_0\"\n\tshape = [2, 3, 4]\n\tdtype = \"torch.float32\"\n\tmean = 0.0\n\tstd = 1.0\n"
	"class Program_weight_tensor_meta_in_1:\n"
	"\tname = \"in_1\"\n\tshape = [2, 3, 4]\n\tdtype = \"torch.float32\"\n\tmin_val = 0\n\tmax_val = 2\n"
	"class Program_weight_tensor_meta_w_0:\n"
	"\tname = \"w_0\"\n\tshape = [4]\n\tdtype = \"torch.float32\"\n"
	"class Program_weight_tensor_meta_w_1:\n"
	"\tname = \"w_1\"\n\tshape = [4, 3, 1, 1]\n\tdtype = \"torch.float32\"\n"
	"class Program_weight_tensor_meta_i:\n"
	"\tname = \"i\"\n\tshape = [2]\n\tdtype = \"torch.int64\"\n\tmean = None\n\tstd = None\n\tdata = [1, 2]\n";

static const char META_F16[] =
	"class A:\n\tname = \"in_0\"\n\tshape = [2, 3, 4]\n\tdtype = \"torch.float16\"\n"
	"class B:\n\tname = \"in_1\"\n\tshape = [2, 3, 4]\n\tdtype = \"torch.float16\"\n"
	"class C:\n\tname = \"w_0\"\n\tshape = [4]\n\tdtype = \"torch.float16\"\n"
	"class D:\n\tname = \"w_1\"\n\tshape = [4, 3, 1, 1]\n\tdtype = \"torch.float16\"\n"
	"class E:\n\tname = \"i\"\n\tshape = [2]\n\tdtype = \"torch.int64\"\n\tdata = [0, 1]\n";

static const char MODEL[] =
	"import torch\n\nclass GraphModule(torch.nn.Module):\n"
	"    def forward(self, in_0, in_1, w_0, w_1, i):\n"
	"        tmp_0 = torch.nn.functional.layer_norm(in_0, (4,), w_0, None, 1e-05)\n"
	"        tmp_1 = tmp_0 + in_1\n"
	"        tmp_2 = tmp_1.transpose(1, 2)\n"
	"        tmp_3 = i * 2\n"
	"        return (tmp_2, tmp_3)\n";

static void ignore(void *ctx, const char *msg)
{
	(void)ctx;
	if (strchr(msg, '\n'))
		abort();        /* warnings are one line */
}

static void run(const char *model, size_t mlen, const char *const *metas, int n)
{
	struct import_sample s[2];
	for (int k = 0; k < n; k++)
		s[k] = (struct import_sample){.name = k ? "s1" : "s0", .model_label = "fuzz/model.py",
			.model = model, .model_len = mlen, .meta_label = "fuzz/weight_meta.py",
			.meta = metas[k], .meta_len = strlen(metas[k])};
	struct import_options o = {.id = "fuzz", .warn = ignore};
	json_t *root = NULL;
	struct graph_task *t = NULL;
	char err[IMPORT_ERR_LEN];
	if (import_build(s, n, &o, &root, &t, err, sizeof(err)) == 0) {
		if (root == NULL || t == NULL || t->n_variants != n)
			abort();
		json_decref(root);
		graph_task_free(t);
		if (n == 1) {
			const char *two[] = {META_F32, META_F16};
			run(model, mlen, two, 2);
		}
	} else if (memchr(err, 0, sizeof(err)) == NULL || err[0] == 0 || strchr(err, '\n') || root || t) {
		abort();        /* every failure leaves one line and nothing else */
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *text = (const char *)data;
	if (size >= 6 && memcmp(text, "#meta\n", 6) == 0) {
		/* weight_meta mode; the text is passed as is (not NUL-terminated),
		 * so ASan sees any read past its end */
		struct import_sample s = {.name = "s0", .model_label = "fuzz/model.py", .model = MODEL,
			.model_len = strlen(MODEL), .meta_label = "fuzz/weight_meta.py", .meta = text,
			.meta_len = size};
		struct import_options o = {.id = "fuzz", .warn = ignore};
		json_t *root = NULL;
		struct graph_task *t = NULL;
		char err[IMPORT_ERR_LEN];
		if (import_build(&s, 1, &o, &root, &t, err, sizeof(err)) == 0) {
			json_decref(root);
			graph_task_free(t);
		} else if (memchr(err, 0, sizeof(err)) == NULL || err[0] == 0 || strchr(err, '\n') || root || t) {
			abort();
		}
		return 0;
	}
	const char *one[] = {META_F32};
	run(text, size, one, 1);
	return 0;
}
