/* readme.c - the README.md texts of the task tree (see readme.h).
 *
 * Written for a reader who knows CUDA but has never seen passfs: every claim
 * here is something the reader can act on, and the example compiles (it is
 * docs/pass-api.md's worked example, which tests/unit/test_pass.c runs). */
#include "readme.h"

#include "inputs.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "graph_util.h"
#include "score.h"
#include "tree.h"

/* strbuf_printf_bare's *len is the buffer's capacity; the text's length is strlen. */
#define A(...) do { if (strbuf_printf_bare(&buf, &len, __VA_ARGS__)) goto oom; } while (0)

static const char example_pass[] =
	"#include <passfs.h>\n"
	"\n"
	"/* y = gelu(x + bias), bias broadcast over the last dimension (cols). */\n"
	"template <typename T>\n"
	"__global__ void bias_gelu(const T *x, const T *bias, T *y, long long n, int cols)\n"
	"{\n"
	"\tlong long i = blockIdx.x * (long long)blockDim.x + threadIdx.x;\n"
	"\tif (i >= n)\n"
	"\t\treturn;\n"
	"\tfloat v = (float)x[i] + (float)bias[i % cols];\n"
	"\ty[i] = (T)(0.5f * v * (1.0f + erff(v * (float)M_SQRT1_2)));\n"
	"}\n"
	"\n"
	"PASS_REPLACEMENT(pf_call *call)\n"
	"{\n"
	"\tconst pf_tensor *x = pf_in(call, 0), *bias = pf_in(call, 1);\n"
	"\tpf_tensor *y = pf_out(call, 0);\n"
	"\tlong long n = pf_numel(y);\n"
	"\tint cols = (int)bias->shape[bias->ndim - 1];\n"
	"\tpf_dim3 block = pf_dim(256);\n"
	"\tpf_dim3 grid = pf_dim((unsigned)((n + block.x - 1) / block.x));\n"
	"\n"
	"\tswitch (y->dtype) {\n"
	"\tcase PF_F32:\n"
	"\t\treturn pf_launch(call, bias_gelu<float>, grid, block, 0,\n"
	"\t\t\t\t x->data, bias->data, y->data, n, cols);\n"
	"\tcase PF_F16:\n"
	"\t\treturn pf_launch(call, bias_gelu<__half>, grid, block, 0,\n"
	"\t\t\t\t x->data, bias->data, y->data, n, cols);\n"
	"\tcase PF_BF16:\n"
	"\t\treturn pf_launch(call, bias_gelu<__nv_bfloat16>, grid, block, 0,\n"
	"\t\t\t\t x->data, bias->data, y->data, n, cols);\n"
	"\tdefault:\n"
	"\t\treturn pf_unsupported(call, \"only float32, float16 and bfloat16\");\n"
	"\t}\n"
	"}\n";

static const char rules_text[] =
	"- **One file.** Everything is in `pass.c`: CUDA C kernels (`__global__`) plus the\n"
	"  replacement. Includes allowed: `passfs.h`, `cuda_fp16.h`, `cuda_bf16.h`,\n"
	"  `cuda_runtime.h`, `stdint.h`, `math.h`, `float.h`, `limits.h`, `stddef.h` (and\n"
	"  their `<c...>` forms); all optional, `passfs.h` is pre-included.\n"
	"- **Your own kernels only.** Launch with `pf_launch`; no libraries (cuBLAS, cuDNN,\n"
	"  ...), no eager fallback, no `<<<...>>>`, no device-side launches.\n"
	"- **No files, network or processes**, no `malloc`, no code that runs when the pass\n"
	"  is loaded (constructors, dynamic initialisers). The host object may use only the\n"
	"  passfs API and a small part of libc/libm; the evaluation runs in a sandbox.\n"
	"- **Outputs are poisoned**: fresh buffers filled with NaN before every call. Write\n"
	"  every element. Inputs are read-only (hashed after every run).\n"
	"- **A secret input set.** Every variant also runs on inputs from a secret seed, and\n"
	"  the timed calls on fresh inputs: a variant is as close as its worst set (an\n"
	"  ulp of rounding costs a level, never the variant), and a pass close on the\n"
	"  public inputs (seed 123) and not close at all on the others is `rejected`.\n"
	"  Caching results, reading timers, or skipping work is caught the same way.\n"
	"- `pass.c` is at most 1 MiB.\n";

static int task_table(char **bufp, size_t *lenp, const struct graph_task *const *tasks, int n)
{
	char *buf = *bufp;
	size_t len = *lenp;
	A("| task | variants | ops | summary |\n|---|---|---|---|\n");
	for (int i = 0; i < n; i++) {
		char *ops = graph_op_sequence(tasks[i]);
		A("| `%s` | %d | %s | %s |\n", tasks[i]->id, tasks[i]->n_variants, ops ? ops : "",
		  tasks[i]->summary ? tasks[i]->summary : "");
		free(ops);
	}
	*bufp = buf;
	*lenp = len;
	return 0;
oom:
	*bufp = buf;
	*lenp = len;
	return -1;
}

/* The names of the tree's files (fs/tree.c) that watch mode treats as `watch`
 * (-1: the read-only ones), task rows then root rows, each name once, in
 * backquotes: "`a`, `b` and `c`" with last = " and ", "`a`, `b`, `c`" with
 * last = ", ". */
static const char *names(char *out, size_t n, int watch, const char *last)
{
	const struct tree_row *pick[TREE_NTASK + TREE_NROOT];
	int k = 0;
	for (int r = 0; r < TREE_NTASK + TREE_NROOT; r++) {
		const struct tree_row *row = r < TREE_NTASK ? &tree_task_rows[r] : &tree_root_rows[r - TREE_NTASK];
		int dup = 0;
		for (int q = 0; q < k && !dup; q++)
			dup = strcmp(pick[q]->name, row->name) == 0;
		if (!dup && (watch < 0 ? row->kind != TREE_PASS : (int)row->watch == watch))
			pick[k++] = row;
	}
	size_t at = 0;
	out[0] = 0;
	for (int q = 0; q < k && at < n; q++) {
		int w = snprintf(out + at, n - at, "%s`%s`", q == 0 ? "" : q == k - 1 ? last : ", ", pick[q]->name);
		at += w > 0 ? (size_t)w : 0;
	}
	return out;
}

char *readme_root(const struct graph_task *const *tasks, int n_tasks, enum readme_mode mode,
		  double wait_timeout_s, double b, size_t *len_out)
{
	char *buf = NULL;
	size_t len = 0;
	int watch = mode == README_WATCH;
	const char *ex = n_tasks > 0 ? tasks[0]->id : "TASK";
	char rewritten[512], once[512], readonly[512];
	if (b <= 0)
		b = SCORE_DEFAULT_B;
	if (wait_timeout_s <= 0)
		wait_timeout_s = 20;

	A("# passfs: write a compiler pass, read its score\n\n"
	  "Each directory here is a *task*: a fusible subgraph taken from a real model\n"
	  "(attention, an MLP block, a norm), at several shapes and dtypes (its *variants*).\n"
	  "Your job: write `<task>/pass.c`, a CUDA C file whose *replacement* function runs\n"
	  "in place of the whole subgraph and is faster than running it op by op (*eager*),\n"
	  "with the same results. passfs compiles it, checks it against eager on every\n"
	  "variant, times both, and scores it. Files are the whole interface: use any\n"
	  "tool (echo, cat, sed -i, python, vim, your editor tool) to write, `cat` to read.\n\n");
	if (watch)
		A("> **Watch mode** (`passfs watch`): these are plain files. A save of `pass.c`\n"
		  "> (close after writing, or a rename onto it) starts the evaluation, and the\n"
		  "> results are rewritten as whole files when it ends. Reads never wait: poll\n"
		  "> `status` until it says `done`. Nothing stops you from writing the other files,\n"
		  "> but passfs overwrites %s, and\n"
		  "> ignores changes to %s.\n\n",
		  names(rewritten, sizeof(rewritten), TREE_WATCH_REFRESH, " and "),
		  names(once, sizeof(once), TREE_WATCH_ONCE, " and "));

	A("## The loop\n\n```sh\n"
	  "ls                        # one directory per task\n"
	  "T=%s\n"
	  "cat $T/README.md          # the task: graph, inputs/outputs, variants\n"
	  "cat $T/pass.c             # the template: the same, as a comment\n"
	  "cp my_pass.c $T/pass.c    # or sed -i, python, an editor: any write\n",
	  ex);
	if (watch)
		A("sha=$(sha256sum $T/pass.c | cut -c1-64)     # then wait for the result of these bytes:\n"
		  "until [ \"$(cat $T/status)\" = done ] && grep -q \"$sha\" $T/result.json; do sleep 1; done\n");
	A("cat $T/result.json        # %s\n"
	  "cat $T/es_t               # the score alone\n```\n\n",
	  watch ? "the verdict, the message, the score" : "waits for the evaluation, then shows it");
	A("Saving `pass.c` starts an evaluation (seconds to a minute; a task's first one\n"
	  "is faster once passfs has counted eager's model ahead, in the background after\n"
	  "it starts): `status` moves\n"
	  "pending, compiling, running, done.%s Write, read the verdict and message, fix,\n"
	  "write again: every evaluation is kept as history. Writing back bytes that were\n"
	  "already evaluated is answered at once; to score the same bytes again (to see how\n"
	  "much a score moves), write anything to `$T/%s` (`echo > $T/%s`): pass.c is\n"
	  "evaluated afresh, and the result says `\"rerun\": true`.\n\n",
	  watch ? "" : " Reading `result.json` or `es_t` while an\n"
		       "evaluation runs waits for it to finish.",
	  TREE_RERUN_TRIGGER, TREE_RERUN_TRIGGER);

	A("**A quick check.** Write the same kind of file to `$T/%s` instead: it is compiled\n"
	  "and run on every variant's public and secret inputs against eager, nothing timed,\n"
	  "in about a second for a small task, and `$T/%s` gives each variant's verdict and\n"
	  "level, `worst` and the compile log. %s A check never changes\n"
	  "`result.json`, `es_t`, the history or `summary.json`: only `pass.c` is scored.\n\n",
	  TREE_CHECK_SOURCE, tree_task_rows[TREE_CHECK_JSON].name,
	  watch ? "Poll it until its `check_sha256` is your file's sha256 and `state` is `done`."
		: "Reading it while the check runs waits for it.");
	A("## The files\n\n| file | what |\n|---|---|\n");
	for (int r = 0; r < TREE_NROOT; r++) {
		A("| `%s` | ", tree_root_rows[r].name);
		A(tree_root_rows[r].what, b);
		A(" |\n");
	}
	for (int r = 0; r < TREE_NTASK; r++) {
		A("| `<task>/%s` | ", tree_task_rows[r].name);
		A(tree_task_rows[r].what, b);
		A(" |\n");
	}
	for (int r = 0; r < TREE_NDOC; r++) {
		A("| `%s/%s` | ", TREE_DOCS_DIR, tree_doc_rows[r].name);
		A(tree_doc_rows[r].what, b);
		A(" |\n");
	}
	A("\n");
	if (watch)
		A("Other files and directories in a task directory (editor swap and backup files,\n"
		  "temporaries, a git repository) are fine and ignored.\n\n");
	else
		A("%s are\n"
		  "read-only, also for root. Other files in a task directory (editor swap and\n"
		  "backup files, temporaries) are allowed. Reading `result.json` or `es_t` while an\n"
		  "evaluation is pending or running waits for it, at most %g s; then it answers with\n"
		  "the state as it is. A process waits once per evaluation: after a full wait, its\n"
		  "next opens of that task's files answer at once until the evaluation is done.\n"
		  "Opened with O_NONBLOCK it never waits.\n\n",
		  names(readonly, sizeof(readonly), -1, ", "), wait_timeout_s);

	A("### Versions of your pass with git\n\n"
	  "Only saves of `pass.c` evaluate. `git init`, `add`, `commit`, `diff`, `status` and\n"
	  "`log` in a task directory evaluate nothing; `git checkout -- pass.c`, `git stash`,\n"
	  "`git stash pop` and `git reset --hard` write `pass.c` and evaluate it once each.\n\n"
	  "```sh\n"
	  "cd $T && git init -q\n"
	  "printf '/*\\n!/pass.c\\n' >> .git/info/exclude   # track pass.c only\n"
	  "git config user.name me && git config user.email me@example.com\n"
	  "git add pass.c && git commit -qm 'first try'\n"
	  "# ... edit pass.c (one evaluation per save), then:\n"
	  "git diff                    # what changed since the commit\n"
	  "git stash; git stash pop    # back to the commit and forth again (one evaluation each)\n"
	  "git checkout -- pass.c      # give up the edit (one evaluation)\n"
	  "git log --oneline\n"
	  "```\n\n");
	if (!watch)
		A("Directories and files other than the task's own (`.git/`, editor files) live in\n"
		  "passfs's memory: they are gone after a remount (`pass.c` and the results stay).\n"
		  "Per task at most 4096 of them, files and directories together, and 64 MiB of\n"
		  "bytes (16 MiB per file); beyond, `ENOSPC` (`git gc` packs loose objects into\n"
		  "a few files). Symbolic and hard links are refused (`EPERM`; git does without).\n\n");

	A("### result.json\n\n"
	  "```json\n"
	  "{\n"
	  "  \"task\": \"%s\",\n"
	  "  \"seq\": 3,                     // which evaluation (numbered per task)\n"
	  "  \"pass_sha256\": \"4f1c...\",     // sha256 of the exact pass.c bytes judged\n"
	  "  \"state\": \"done\",\n"
	  "  \"verdict\": \"ok\",              // see Verdicts\n"
	  "  \"message\": \"all 6 variants correct ...\",\n"
	  "  \"score\": 1.73,                // the task score (ES_t, below)\n"
	  "  \"es_t\": {\"-10\": 1.84, ...},\n"
	  "  \"variants\": [{\"name\": \"f32_b1\", \"verdict\": \"ok\", \"speedup\": 1.91, \"min_t\": -5, ...}],\n"
	  "  \"compile\": {\"verdict\": \"ok\", \"log_tail\": \"\"}\n"
	  "}\n```\n\n"
	  "Check `pass_sha256` against `sha256sum pass.c` to be sure the result is for what\n"
	  "you wrote. `\"stale\": true` means the result is for an earlier pass.c (the current\n"
	  "one is still being evaluated, or was edited and not saved yet). A result with\n"
	  "`\"verdict\": null` and an `\"error\"` means passfs itself could not evaluate (not\n"
	  "your pass's fault); save again to retry.\n\n"
	  "On the cpu backend (emulated CUDA: a CPU runs kernels unlike a GPU, math slow and\n"
	  "memory cheap, a thread per row fast), a variant's `speedup` is the modeled H200\n"
	  "speedup (`speedup_source`: `modeled_h200`): each side's launches (3 us each), the\n"
	  "bytes its kernels touched (at 4.3 TB/s), its slowest threads' work and its threads'\n"
	  "work spread over a GPU's 270k resident threads, and the sync that ends the call\n"
	  "(10 us a side; `traffic`, `modeled_h200_ms`). So\n"
	  "fusing kernels pays (fewer launches and bytes), and so does spreading work over\n"
	  "many threads: a kernel with a thread per row is slow on a GPU and scores so here.\n"
	  "`measured_speedup` is the cpu's own timing, beside it. Host code must not touch\n"
	  "device memory (on a GPU that faults): compute in kernels.\n\n",
	  ex);

	A("## The pass\n\n"
	  "One file, CUDA C: `__global__` kernels plus one host function, the replacement,\n"
	  "declared `PASS_REPLACEMENT(pf_call *call)`. It receives the variant's inputs and\n"
	  "writes its outputs, launching your kernels. The same source runs on every variant\n"
	  "of the task; `pf_variant(call)` names the variant and the tensors carry shapes and\n"
	  "dtypes.\n\n"
	  "| call | does |\n|---|---|\n"
	  "| `const pf_tensor *pf_in(call, i)` | input `i`, in the graph's input order (see the task README) |\n"
	  "| `pf_tensor *pf_out(call, i)` | output `i`, in the graph's output order |\n"
	  "| `pf_num_in(call)`, `pf_num_out(call)` | how many |\n"
	  "| `long long pf_numel(t)` | product of the shape |\n"
	  "| `pf_dim3 pf_dim(x, y = 1, z = 1)` | launch dimensions |\n"
	  "| `pf_launch(call, KERNEL, grid, block, shared_bytes, args...)` | `KERNEL<<<grid, block, shared_bytes>>>(args...)`; spell the kernel out at the call (`softmax<float, 256>`); returns `PF_OK` or an error to return |\n"
	  "| `void *pf_scratch(call, bytes)` | temporary device memory for this call (NULL past the limit) |\n"
	  "| `pf_unsupported(call, \"why\")` | declines this variant (verdict `unsupported`, scored as a failure) |\n"
	  "| `pf_not_implemented(call)` | the template's answer |\n"
	  "| `const char *pf_variant(call)` | the variant's name |\n\n"
	  "`pf_tensor` has `data` (device memory), `dtype` (`PF_F32`, `PF_F16`, `PF_BF16`,\n"
	  "`PF_F64`, `PF_I64`, `PF_I32`, `PF_BOOL`), `ndim`, `shape[]`, `stride[]` (elements;\n"
	  "always contiguous, row-major). `__half` and `__nv_bfloat16` convert to and from\n"
	  "`float`: load in the tensor's type, compute in float, store in the tensor's type.\n"
	  "Launches run in order as on one CUDA stream; passfs synchronises after the\n"
	  "replacement returns. Use CUDA math (`expf`, `erff`, `rsqrtf`, `fmaxf`, `min`/`max`),\n"
	  "`__shared__`, `__syncthreads()`, warp shuffles, atomics.\n\n"
	  "A complete pass for a task `add(x, bias)` then `gelu` (erf form), one output:\n\n"
	  "```c\n%s```\n\n",
	  example_pass);

	A("## Scoring\n\n"
	  "Each variant gets a speedup `s = eager median time / pass median time` and a\n"
	  "level, `min_t`: the tightest tolerance level t at which every output is close to\n"
	  "eager, `|pass - eager| <= atol + rtol*|eager|`, on every input set passfs checked\n"
	  "(the public one, a secret one, and fresh inputs in the timed calls; the worst\n"
	  "of them counts). Integers and bools must be equal; NaN and Inf must match.\n\n"
	  "| t | weight | atol | rtol float32 | rtol float16 | rtol bfloat16 |\n"
	  "|---:|---:|---:|---:|---:|---:|\n");
	for (int t = SCORE_T_MIN; t <= SCORE_T_MAX; t++) {
		double at, r32, r16, rb;
		score_tolerance(SCORE_F32, t, &at, &r32);
		score_tolerance(SCORE_F16, t, &at, &r16);
		score_tolerance(SCORE_BF16, t, &at, &rb);
		A("| %d | %g | %.0e | %.3g | %.3g | %.3g |\n", t, score_weight(t), at, r32, r16, rb);
	}
	A("\n"
	  "(float64: atol = rtol = 10^(1.4*t); from t = 1 on, the t = 1 values.)\n\n"
	  "**Only t <= -1 counts**: at t = 0 (atol 1, rtol 1) an all-zero output is close to\n"
	  "anything, so a variant close only from t = 0 or looser has `min_t` null and is\n"
	  "scored as wrong values (`close_from_t` in result.json says how close it came); so\n"
	  "is an output no closer than a constant (all zeros, or the middle of eager's range)\n"
	  "would be, since closeness proves nothing there. At\n"
	  "each t a variant scores `r = s` if it is correct at t, i.e. `min_t <= t`\n"
	  "(`s^(1+p)` below 1); `1` if it ran but is wrong at t >= 1; else `b = %g` (wrong at\n"
	  "t <= 0, or any failure: compile error, crash, timeout, rejected, unsupported, not\n"
	  "implemented). `ES_t` is the geometric mean of r over the variants, and the task\n"
	  "score is `10^(sum_t w_t*log10 ES_t / sum_t w_t)` with the weights above. Eager\n"
	  "itself scores exactly 1; above 1 is faster than eager and correct; %g means it\n"
	  "failed everywhere. Being correct matters first, then fast: a 2x-faster pass that\n"
	  "is only close from t = -2 scores about 0.44.\n\n",
	  b, b);

	A("## Verdicts\n\n| verdict | meaning |\n|---|---|\n");
	for (int v = 0; v < SCORE_STATUS_COUNT; v++) {
		const struct score_status_info *si = score_status_info((enum score_status)v);
		if (si->blurb)
			A("| `%s` | %s |\n", si->name, si->blurb);
	}
	A("\n"
	  "The task verdict is `ok` when every variant is ok, else the most serious variant\n"
	  "verdict; `message` names the variant that failed.\n\n");

	A("## Rules\n\n%s\n", rules_text);

	A("## Tasks\n\n");
	if (task_table(&buf, &len, tasks, n_tasks))
		goto oom;
	A("\nMore, in this tree (read-only):");
	for (int r = 0; r < TREE_NDOC; r++)
		A("%s`%s/%s`", r == 0 ? " " : r == TREE_NDOC - 1 ? " and " : ", ", TREE_DOCS_DIR, tree_doc_rows[r].name);
	A(".\n");
	*len_out = strlen(buf);
	return buf;
oom:
	free(buf);
	return NULL;
}

/* "float32[1,64,256]" */
static const char *type_str(const struct graph_value *x, char *out, size_t n)
{
	char sb[200];
	const char *dn = graph_dtype_name(x->dtype);
	snprintf(out, n, "%s%s", dn ? dn : "?", graph_shape_str(&x->shape, sb, sizeof(sb)));
	return out;
}

/* Under-the-table note when a tensor's name differs across variants. */
static int renamed(const struct graph_task *t, int is_out, int idx)
{
	const struct graph_variant *v0 = &t->variants[0];
	const char *n0 = v0->values[is_out ? v0->outputs[idx] : idx].name;
	for (int k = 1; k < t->n_variants; k++) {
		const struct graph_variant *v = &t->variants[k];
		if (idx < (is_out ? v->n_outputs : v->n_inputs) &&
		    strcmp(v->values[is_out ? v->outputs[idx] : idx].name, n0) != 0)
			return 1;
	}
	return 0;
}

/* An input the task README already lists under the std floor. */
struct floor_listed {
	const char *name;
	double used;
};

char *readme_task(const struct graph_task *t, enum readme_mode mode, size_t *len_out)
{
	struct floor_listed *listed = NULL;
	char *buf = NULL, *render = NULL;
	size_t len = 0, rlen = 0;
	int watch = mode == README_WATCH;

	A("# %s\n\n", t->id);
	if (t->summary)
		A("%s\n\n", t->summary);
	if (t->source)
		A("Source: %s\n\n", t->source);
	A("Write `pass.c` in this directory: a replacement that computes the graph below for\n"
	  "every variant, faster than running it op by op. %s\n"
	  "The manual (pass API, scoring, verdicts) is `../README.md`; `pass.c` starts as a\n"
	  "template that states all of this in a comment.\n\n",
	  watch ? "Save it, poll `status` until `done`\n(and `result.json`'s `pass_sha256` is that of your file), then read `result.json`."
		: "Save it, then `cat result.json`: it waits\nfor the evaluation.");

	if (t->n_variants > 0) {
		const struct graph_variant *v0 = &t->variants[0];
		int any_renamed = 0;
		A("## Inputs, outputs and variants\n\n"
		  "One column per tensor, in the order `pf_in(call, i)` and `pf_out(call, i)` give\n"
		  "them; one row per variant (its name is `pf_variant(call)`) with each tensor's\n"
		  "dtype and shape (`pf_tensor.dtype` is the matching `PF_F32`, `PF_F16`, `PF_BF16`,\n"
		  "...).\n\n| variant |");
		for (int i = 0; i < v0->n_inputs; i++) {
			any_renamed |= renamed(t, 0, i);
			A(" `pf_in(call, %d)` %s |", i, v0->values[i].name);
		}
		for (int i = 0; i < v0->n_outputs; i++) {
			any_renamed |= renamed(t, 1, i);
			A(" `pf_out(call, %d)` %s |", i, v0->values[v0->outputs[i]].name);
		}
		A("\n|---|");
		for (int i = 0; i < v0->n_inputs + v0->n_outputs; i++)
			A("---|");
		A("\n");
		for (int k = 0; k < t->n_variants; k++) {
			const struct graph_variant *v = &t->variants[k];
			A("| `%s` |", v->name);
			for (int i = 0; i < v->n_inputs + v->n_outputs; i++) {
				char ty[256];
				const struct graph_value *x =
					&v->values[i < v->n_inputs ? i : v->outputs[i - v->n_inputs]];
				A(" `%s` |", type_str(x, ty, sizeof(ty)));
			}
			A("\n");
		}
		if (any_renamed)
			A("\nSome tensors have other names in some variants (see the graph below); the\n"
			  "position is what counts.\n");
		/* the inputs the std floor applies to (engine/eval/inputs.h), once per
		 * name and std used (at the first variant it applies to) */
		int floored_any = 0, n_listed = 0, total = 0;
		for (int k = 0; k < t->n_variants; k++)
			total += t->variants[k].n_inputs;
		listed = malloc(sizeof(*listed) * (size_t)(total > 0 ? total : 1));
		if (listed == NULL)
			goto oom;
		for (int k = 0; k < t->n_variants; k++) {
			const struct graph_variant *v = &t->variants[k];
			for (int i = 0; i < v->n_inputs; i++) {
				const struct graph_value *x = &v->values[i];
				const struct graph_input_gen *g = &v->gen[i];
				int fl, seen = 0;
				double used = inputs_std(g, x->dtype, (size_t)graph_shape_numel(&x->shape), &fl);
				for (int q = 0; q < n_listed && !seen; q++)
					seen = listed[q].used == used && strcmp(listed[q].name, x->name) == 0;
				if (!fl || seen)
					continue;
				listed[n_listed++] = (struct floor_listed){x->name, used};
				if (!floored_any)
					A("\nInputs are generated as PassNet does (`randn * std * 0.2 + mean`, seed 123,\n"
					  "plus a secret seed). These inputs' std is below what varies them, so passfs\n"
					  "generates them with its floor, std = max(0.1, 0.05*|mean|), never a constant:\n\n");
				floored_any = 1;
				if (g->has_std)
					A("- `%s` (%s): std %g instead of %g\n", x->name, v->name, used, g->std);
				else
					A("- `%s` (%s): std %g instead of 0.1\n", x->name, v->name, used);
			}
		}
		free(listed);
		listed = NULL;
	}

	A("\n## The graph\n\n"
	  "Each variant, op by op with PyTorch semantics (the eager baseline runs exactly\n"
	  "this; `graph.json` has it as data):\n\n");
	A("```\n");
	for (int k = 0; k < t->n_variants; k++) {
		free(render);
		render = NULL;
		rlen = 0;
		if (graph_render_variant(&t->variants[k], &render, &rlen, "") != 0)
			goto oom;
		size_t rl = render ? strlen(render) : 0;
		A("%s%s%s", k ? "\n" : "", render ? render : "", rl && render[rl - 1] != '\n' ? "\n" : "");
	}
	A("```\n\n");

	A("## Rules\n\n%s\n"
	  "Every variant must be handled for a good score: a declined or failing variant\n"
	  "scores %g at every tolerance level.\n",
	  rules_text, SCORE_DEFAULT_B);
	free(render);
	*len_out = strlen(buf);
	return buf;
oom:
	free(listed);
	free(render);
	free(buf);
	return NULL;
}
