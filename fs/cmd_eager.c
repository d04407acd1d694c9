/* cmd_eager.c - `passfs eager`: run a task's variants with the eager
 * baseline and write inputs, outputs and timings to files (a developer
 * command: the PyTorch oracle test reads these).
 *
 *   $ passfs eager --task llama_swiglu --variant f32_b1_s128 --out /tmp/e
 *   f32_b1_s128: 2 launches, 1 output, eager 31.2 ms (cpu (2 threads, emulated CUDA))
 *   $ ls /tmp/e/f32_b1_s128
 *   inputs  manifest.json  outputs
 *
 * OUT/<variant>/manifest.json:
 *   {"task", "variant", "seed", "backend", "launches", "scratch_bytes",
 *    "compile_ms", "eager_ms", "inputs": [{"name", "shape", "dtype", "file"}],
 *    "outputs": [...]}
 * and the tensors as raw little-endian row-major files, inputs/<i>.bin and
 * outputs/<i>.bin (float16/bfloat16 as their 16-bit patterns, bool one byte). */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <jansson.h>

#include "clock.h"
#include "cmd.h"
#include "eager.h"
#include "eval.h"
#include "file.h"
#include "gpu.h"
#include "graph.h"
#include "inputs.h"
#include "task.h"

static const char usage_text[] =
	"usage: passfs eager --task ID --out DIR [--tasks DIR] [--variant NAME]\n"
	"                    [--seed N] [--backend auto|cuda|cpu] [--trials N]\n"
	"       passfs eager --task ID --model [--json] [--tasks DIR] [--variant NAME]\n"
	"\n"
	"Runs the eager baseline (the task's graph op by op with passfs's op library)\n"
	"on every variant of task ID, or on the one named, with inputs generated from\n"
	"the graph's rules and SEED, and writes for each variant OUT/<variant>/:\n"
	"manifest.json (inputs and outputs: name, shape, dtype, file; eager_ms),\n"
	"inputs/<i>.bin and outputs/<i>.bin (raw little-endian, row-major; float16 and\n"
	"bfloat16 as 16-bit patterns, bool as bytes).  docs/eager.md.\n"
	"\n"
	"With --model (cpu backend), no files: eager's modeled H200 time of each\n"
	"variant, what passes are scored against (docs/scoring.md), with its terms:\n"
	"memory, path, parallel, host and launches, and the kernel's floor.  Taken\n"
	"from the signed model cache when there, else counted (as a first evaluation\n"
	"of the task does) and kept there.\n"
	"\n"
	"options:\n"
	"  --task ID        the task (a directory of the tasks directory)\n"
	"  --tasks DIR      tasks directory (default: $PASSFS_TASKS, else the bundled tasks)\n"
	"  --variant NAME   only this variant\n"
	"  --seed N         input seed (default 123, the public seed)\n"
	"  --backend B      auto (default), cuda or cpu\n"
	"  --trials N       eager_ms is the median of N timed runs after the first\n"
	"                   (default 0: the first run's time)\n"
	"  --out DIR        output directory (created)\n"
	"  --model          eager's modeled H200 time per variant (no --out)\n"
	"  --json           with --model: the document (docs/eager.md) on stdout\n"
	"  -h, --help       this text\n";

static json_t *tensor_json(const struct graph_value *x, const char *file)
{
	json_t *shape = json_array();
	for (int k = 0; k < x->shape.ndim; k++)
		json_array_append_new(shape, json_integer(x->shape.d[k]));
	return json_pack("{s:s, s:o, s:s, s:s}", "name", x->name, "shape", shape, "dtype",
			 graph_dtype_name(x->dtype), "file", file);
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

struct run_opts {
	const char *out;
	const char *task_id;
	uint64_t seed;
	int trials;
};

/* Runs variant v with plan p and writes its directory.  Returns 0 or 1. */
static int run_variant(struct gpu_dev *d, struct eager_plan *p, const struct graph_variant *v,
		       const struct run_opts *o)
{
	char err[1024], dir[4096], path[4200];
	int rc = 1, fe, ni = v->n_inputs, no = v->n_outputs;
	void **host_in = calloc((size_t)ni + 1, sizeof(void *)), **dev_in = calloc((size_t)ni + 1, sizeof(void *));
	void **dev_out = calloc((size_t)no + 1, sizeof(void *)), *host = NULL;
	size_t *out_bytes = calloc((size_t)no + 1, sizeof(size_t));
	double *times = NULL;
	json_t *man = NULL;
	if (!host_in || !dev_in || !dev_out || !out_bytes) {
		fprintf(stderr, "passfs eager: out of memory\n");
		goto out;
	}
	if (inputs_generate(v, o->seed, host_in, err, sizeof(err))) {
		fprintf(stderr, "passfs eager: %s\n", err);
		goto out;
	}
	snprintf(dir, sizeof(dir), "%s/%s", o->out, v->name);
	snprintf(path, sizeof(path), "%s/inputs", dir);
	if ((fe = base_mkdirs(path, 0777)) != 0) {
		fprintf(stderr, "passfs eager: cannot create %s: %s\n", path, strerror(-fe));
		goto out;
	}
	snprintf(path, sizeof(path), "%s/outputs", dir);
	if ((fe = base_mkdirs(path, 0777)) != 0) {
		fprintf(stderr, "passfs eager: cannot create %s: %s\n", path, strerror(-fe));
		goto out;
	}
	json_t *jin = json_array(), *jout = json_array();
	man = json_pack("{s:s, s:s, s:I, s:s, s:o, s:o}", "task", o->task_id, "variant", v->name, "seed",
			(json_int_t)o->seed, "backend", gpu_device_name(d), "inputs", jin, "outputs", jout);
	for (int i = 0; i < ni; i++) {
		const struct graph_value *x = &v->values[i];
		size_t bytes = (size_t)graph_shape_numel(&x->shape) * graph_dtype_size(x->dtype);
		char file[64];
		snprintf(file, sizeof(file), "inputs/%d.bin", i);
		snprintf(path, sizeof(path), "%s/%s", dir, file);
		if ((fe = base_write_atomic(path, ".", host_in[i], bytes, 0644, 0)) != 0) {
			fprintf(stderr, "passfs eager: cannot write %s: %s\n", path, strerror(-fe));
			goto out;
		}
		json_array_append_new(jin, tensor_json(x, file));
		if ((dev_in[i] = gpu_alloc(d, bytes ? bytes : 1)) == NULL ||
		    gpu_copy_to_device(d, dev_in[i], host_in[i], bytes)) {
			fprintf(stderr, "passfs eager: variant '%s': cannot place input '%s' on the device\n", v->name,
				x->name);
			goto out;
		}
	}
	for (int j = 0; j < no; j++) {
		const struct graph_value *x = &v->values[v->outputs[j]];
		out_bytes[j] = (size_t)graph_shape_numel(&x->shape) * graph_dtype_size(x->dtype);
		if ((dev_out[j] = gpu_alloc(d, out_bytes[j] ? out_bytes[j] : 1)) == NULL) {
			fprintf(stderr, "passfs eager: variant '%s': out of device memory\n", v->name);
			goto out;
		}
	}
	double t0 = base_now_ms();
	if (eager_run(p, dev_in, dev_out, err, sizeof(err))) {
		fprintf(stderr, "passfs eager: %s\n", err);
		goto out;
	}
	double ms = base_now_ms() - t0;
	if (o->trials > 0) {
		if ((times = calloc((size_t)o->trials, sizeof(double))) == NULL)
			goto out;
		for (int t = 0; t < o->trials; t++) {
			t0 = base_now_ms();
			if (eager_run(p, dev_in, dev_out, err, sizeof(err))) {
				fprintf(stderr, "passfs eager: %s\n", err);
				goto out;
			}
			times[t] = base_now_ms() - t0;
		}
		qsort(times, (size_t)o->trials, sizeof(double), cmp_double);
		ms = times[o->trials / 2];
	}
	for (int j = 0; j < no; j++) {
		const struct graph_value *x = &v->values[v->outputs[j]];
		char file[64];
		free(host);
		if ((host = malloc(out_bytes[j] ? out_bytes[j] : 1)) == NULL ||
		    gpu_copy_to_host(d, host, dev_out[j], out_bytes[j])) {
			fprintf(stderr, "passfs eager: variant '%s': cannot read output %d\n", v->name, j);
			goto out;
		}
		snprintf(file, sizeof(file), "outputs/%d.bin", j);
		snprintf(path, sizeof(path), "%s/%s", dir, file);
		if ((fe = base_write_atomic(path, ".", host, out_bytes[j], 0644, 0)) != 0) {
			fprintf(stderr, "passfs eager: cannot write %s: %s\n", path, strerror(-fe));
			goto out;
		}
		json_array_append_new(jout, tensor_json(x, file));
	}
	json_object_set_new(man, "eager_ms", json_real(ms));
	json_object_set_new(man, "trials", json_integer(o->trials));
	json_object_set_new(man, "launches", json_integer(eager_launch_count(p)));
	json_object_set_new(man, "scratch_bytes", json_integer((json_int_t)eager_scratch_bytes(p)));
	json_object_set_new(man, "compile_ms", json_real(eager_compile_ms(p)));
	json_object_set_new(man, "libraries", json_string(eager_libraries(p)));
	if (*eager_library_note(p))
		json_object_set_new(man, "library_note", json_string(eager_library_note(p)));
	snprintf(path, sizeof(path), "%s/manifest.json", dir);
	if (json_dump_file(man, path, JSON_INDENT(1)) != 0) {
		fprintf(stderr, "passfs eager: cannot write %s\n", path);
		goto out;
	}
	printf("%s: %d launch%s, %d output%s, eager %.3f ms (%s%s%s)\n", v->name, eager_launch_count(p),
	       eager_launch_count(p) == 1 ? "" : "es", no, no == 1 ? "" : "s", ms, gpu_device_name(d),
	       *eager_libraries(p) ? ", " : "", eager_libraries(p));
	if (*eager_library_note(p))
		printf("%s: note: %s\n", v->name, eager_library_note(p));
	fflush(stdout);
	rc = 0;
out:
	json_decref(man);
	free(host);
	free(times);
	if (host_in)
		inputs_free(host_in, ni);
	for (int i = 0; dev_in && i < ni; i++)
		if (dev_in[i])
			gpu_free(d, dev_in[i]);
	for (int j = 0; dev_out && j < no; j++)
		if (dev_out[j])
			gpu_free(d, dev_out[j]);
	free(host_in);
	free(dev_in);
	free(dev_out);
	free(out_bytes);
	return rc;
}

/* --model: an evaluation with no pass (eval_opts.eager_model) */
static int eager_model_cmd(const char *dir, const char *id, const char *variant, const char *backend, int as_json)
{
	char err[1024], *gtext = NULL, *gpath = NULL;
	struct graph_task *t = NULL;
	size_t glen = 0;
	if (task_load_text(dir, id, &t, &gtext, &glen, &gpath, err, sizeof(err))) {
		fprintf(stderr, "passfs eager: %s\n", err);
		return 2;
	}
	int rc = 1, known = variant == NULL;
	for (int i = 0; !known && i < t->n_variants; i++)
		known = strcmp(t->variants[i].name, variant) == 0;
	struct eval_job job = {.graph_text = gtext, .graph_len = glen, .graph_label = gpath};
	json_t *res = NULL;
	snprintf(job.opts.backend, sizeof(job.opts.backend), "%s", strcmp(backend, "auto") ? backend : "cpu");
	snprintf(job.opts.variant, sizeof(job.opts.variant), "%s", variant ? variant : "");
	job.opts.eager_model = 1;
	job.opts.quiet = as_json;
	if (!known) {
		fprintf(stderr, "passfs eager: task '%s' has no variant '%s'\n", t->id, variant);
		rc = 2;
	} else if (eval_run(&job, NULL, &res, err, sizeof(err)) != 0) {
		fprintf(stderr, "passfs eager: %s\n", err);
	} else if (as_json) {
		rc = json_dumpf(res, stdout, JSON_INDENT(1) | JSON_REAL_PRECISION(10)) == 0 && printf("\n") > 0 ? 0 : 1;
	} else {
		size_t i;
		json_t *v;
		printf("%-28s %12s %10s %10s %10s %10s %9s %12s\n", "variant", "modeled_ms", "memory", "path",
		       "parallel", "host", "launches", "floor_ms");
		json_array_foreach(json_object_get(res, "variants"), i, v) {
			json_t *kf = json_object_get(v, "kernel_floor");
			printf("%-28s %12.6f %10.6f %10.6f %10.6f %10.6f %9lld %12.6f%s\n",
			       json_string_value(json_object_get(v, "name")),
			       json_number_value(json_object_get(v, "modeled_h200_ms")),
			       json_number_value(json_object_get(v, "memory_ms")),
			       json_number_value(json_object_get(v, "path_ms")),
			       json_number_value(json_object_get(v, "parallel_ms")),
			       json_number_value(json_object_get(v, "host_ms")),
			       (long long)json_integer_value(json_object_get(v, "launches")),
			       json_number_value(json_object_get(kf, "floor_ms")),
			       json_is_true(json_object_get(v, "cached")) ? "  (cached)" : "");
		}
		rc = 0;
	}
	json_decref(res);
	free(gtext);
	free(gpath);
	graph_task_free(t);
	return rc;
}

int cmd_eager(int argc, char **argv)
{
	static const struct option opts[] = {
		{"task", required_argument, NULL, 'k'},    {"tasks", required_argument, NULL, 't'},
		{"variant", required_argument, NULL, 'v'}, {"seed", required_argument, NULL, 's'},
		{"backend", required_argument, NULL, 'b'}, {"trials", required_argument, NULL, 'n'},
		{"out", required_argument, NULL, 'o'},     {"help", no_argument, NULL, 'h'},
		{"model", no_argument, NULL, 'm'},         {"json", no_argument, NULL, 'j'},
		{NULL, 0, NULL, 0}};
	int model = 0, as_json = 0;
	const char *dir = NULL, *variant = NULL, *backend = "auto";
	struct run_opts ro = {NULL, NULL, INPUTS_PUBLIC_SEED, 0};
	char *end;
	int c;
	optind = 1;
	while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
		switch (c) {
		case 'k': ro.task_id = optarg; break;
		case 't': dir = optarg; break;
		case 'v': variant = optarg; break;
		case 'b': backend = optarg; break;
		case 'o': ro.out = optarg; break;
		case 's':
			errno = 0;
			ro.seed = strtoull(optarg, &end, 0);
			if (errno || *end || !*optarg) {
				fprintf(stderr, "passfs eager: --seed needs a non-negative integer, not '%s'\n", optarg);
				return 2;
			}
			break;
		case 'n':
			ro.trials = (int)strtol(optarg, &end, 10);
			if (*end || !*optarg || ro.trials < 0 || ro.trials > 100000) {
				fprintf(stderr, "passfs eager: --trials needs a count 0..100000, not '%s'\n", optarg);
				return 2;
			}
			break;
		case 'm': model = 1; break;
		case 'j': as_json = 1; break;
		case 'h': fputs(usage_text, stdout); return 0;
		default: fputs(usage_text, stderr); return 2;
		}
	}
	if (optind < argc) {
		fprintf(stderr, "passfs eager: unexpected argument '%s'\n", argv[optind]);
		return 2;
	}
	if (as_json && !model) {
		fprintf(stderr, "passfs eager: --json goes with --model\n");
		return 2;
	}
	if (model) {
		if (ro.task_id == NULL || ro.out != NULL || ro.trials > 0) {
			fprintf(stderr, "passfs eager: --model needs --task and takes no --out or --trials\n");
			return 2;
		}
		return eager_model_cmd(dir ? dir : cmd_default_tasks_dir(), ro.task_id, variant, backend, as_json);
	}
	if (ro.task_id == NULL || ro.out == NULL) {
		fprintf(stderr, "passfs eager: --task and --out are required (try --help)\n");
		return 2;
	}
	if (dir == NULL)
		dir = cmd_default_tasks_dir();

	char err[1024];
	struct graph_task *t = NULL;
	struct gpu_dev *d = NULL;
	struct eager_plan **plans = NULL;
	int rc = 1, fe, only = -1;
	if (task_load(dir, ro.task_id, &t, err, sizeof(err))) {
		fprintf(stderr, "passfs eager: %s\n", err);
		return 2;
	}
	if (variant) {
		for (int i = 0; i < t->n_variants; i++)
			if (strcmp(t->variants[i].name, variant) == 0)
				only = i;
		if (only < 0) {
			fprintf(stderr, "passfs eager: task '%s' has no variant '%s'\n", t->id, variant);
			graph_task_free(t);
			return 2;
		}
	}
	if ((fe = base_mkdirs(ro.out, 0777)) != 0) {
		fprintf(stderr, "passfs eager: cannot create %s: %s\n", ro.out, strerror(-fe));
		goto out;
	}
	if (gpu_open(backend, &d, err, sizeof(err))) {
		fprintf(stderr, "passfs eager: %s\n", err);
		goto out;
	}
	if ((plans = calloc((size_t)t->n_variants, sizeof(*plans))) == NULL) {
		fprintf(stderr, "passfs eager: out of memory\n");
		goto out;
	}
	double t0 = base_now_ms();
	if (only >= 0 ? (plans[only] = eager_prepare(d, &t->variants[only], err, sizeof(err))) == NULL
		      : eager_prepare_task(d, t, plans, err, sizeof(err)) != 0) {
		fprintf(stderr, "passfs eager: %s\n", err);
		goto out;
	}
	fprintf(stderr, "passfs eager: %s: planned and compiled in %.0f ms\n", t->id, base_now_ms() - t0);
	rc = 0;
	for (int i = 0; i < t->n_variants; i++) {
		if (plans[i] == NULL)
			continue;
		if (run_variant(d, plans[i], &t->variants[i], &ro))
			rc = 1;
		eager_free(plans[i]);   /* scratch back before the next variant */
		plans[i] = NULL;
	}
out:
	if (plans)
		for (int i = 0; i < t->n_variants; i++)
			eager_free(plans[i]);
	free(plans);
	gpu_close(d);
	graph_task_free(t);
	return rc;
}
