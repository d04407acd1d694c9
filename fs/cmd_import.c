/* cmd_import.c - `passfs import`: GraphNet/PassNet samples to a passfs task.
 *
 *   $ passfs import ../shared/passnet-samples/h25_Hubert_emotion_0_start18_end21_2 \
 *         --out tasks/hubert_linear_dropout
 *   float32_0: tmp_1 float32[1,249,768], tmp_2 float32[1,768,249]
 *   passfs import: wrote tasks/hubert_linear_dropout/graph.json (1 variant)
 *
 * Each SAMPLE_DIR (model.py + weight_meta.py) is one variant; or one
 * SAMPLE_DIR's model.py with several --weight-meta files (PassNet's
 * "<graph>.float32_7.weight_meta.py" naming gives the variant names).  The
 * conversion itself is engine/import/import.c; this file reads the files, writes
 * graph.json atomically and prints the result.  docs/importer.md. */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <jansson.h>

#include "cmd.h"
#include "file.h"
#include "graph.h"
#include "import.h"

#define MAX_FILE ((size_t)64 << 20)
#define MAX_IMPORT_SAMPLES 1024

static const char usage_text[] =
	"usage: passfs import SAMPLE_DIR... --out TASK_DIR [--id ID] [--force]\n"
	"       passfs import SAMPLE_DIR --weight-meta FILE... --out TASK_DIR [--id ID] [--force]\n"
	"\n"
	"Converts GraphNet/PassNet samples into a passfs task: TASK_DIR/graph.json.\n"
	"Each SAMPLE_DIR holds model.py (class GraphModule with forward()) and\n"
	"weight_meta.py (name, shape, dtype, mean/std, min_val/max_val, data of\n"
	"every forward argument) and becomes one variant, named from its dtype\n"
	"(float32_0, float16_0, ...).  All samples must be the same graph (same\n"
	"arguments, op sequence and wiring; shapes, dtypes, attributes and\n"
	"scalars may differ).  Arguments and nodes nothing uses are dropped, with\n"
	"a warning.  docs/importer.md lists the supported Python and the mapping.\n"
	"\n"
	"On success prints one line per variant with its outputs' inferred dtype\n"
	"and shape.\n"
	"\n"
	"options:\n"
	"  --out TASK_DIR        the task directory to create (its parent must\n"
	"                        exist); graph.json is written atomically\n"
	"  --id ID               task id (default: the basename of TASK_DIR)\n"
	"  --force               overwrite an existing TASK_DIR/graph.json\n"
	"  --weight-meta FILE    use FILE instead of SAMPLE_DIR/weight_meta.py;\n"
	"                        repeat for more variants of one model.py (needs\n"
	"                        exactly one SAMPLE_DIR)\n"
	"  -h, --help            this text\n"
	"\n"
	"Exit status: 0 written, 1 could not write, 2 bad usage or bad samples.\n";

struct import_opts {
	const char *out;
	const char *id;
	int force;
	int ndirs, nmeta;
	const char *dirs[MAX_IMPORT_SAMPLES];
	const char *meta[MAX_IMPORT_SAMPLES];
};

/* Reads a whole file (at most MAX_FILE bytes) with base_read_file.
 * Returns 0, or a negative errno (-EFBIG when too large). */
static int read_file(const char *path, char **out, size_t *len)
{
	int e = 0;
	*len = 0;
	*out = base_read_file(path, MAX_FILE, len, &e);
	return *out ? 0 : -e;
}

/* The last path component of s, without trailing slashes, in buf. */
static char *base_name(const char *s, char *buf, size_t len)
{
	size_t n = strlen(s);
	while (n > 1 && s[n - 1] == '/')
		n--;
	size_t b = n;
	while (b > 0 && s[b - 1] != '/')
		b--;
	snprintf(buf, len, "%.*s", (int)(n - b), s + b);
	return buf;
}

/* "X.float32_7.weight_meta.py" -> "float32_7"; NULL when it does not match. */
static char *variant_from_file(const char *path, char *buf, size_t len)
{
	char b[512];
	base_name(path, b, sizeof(b));
	const char *suffix = ".weight_meta.py";
	size_t n = strlen(b), sl = strlen(suffix);
	if (n <= sl || strcmp(b + n - sl, suffix))
		return NULL;
	b[n - sl] = 0;
	char *dot = strrchr(b, '.');
	if (dot == NULL || !dot[1])
		return NULL;
	snprintf(buf, len, "%s", dot + 1);
	for (char *q = buf; *q; q++)
		if (!((*q >= 'a' && *q <= 'z') || (*q >= 'A' && *q <= 'Z') || (*q >= '0' && *q <= '9') ||
		      *q == '_' || *q == '-'))
			return NULL;
	return buf;
}

static int valid_id(const char *s)
{
	size_t n = strlen(s);
	if (n == 0 || n > 100 || s[0] == '.')
		return 0;
	for (size_t i = 0; i < n; i++)
		if (!((s[i] >= 'a' && s[i] <= 'z') || (s[i] >= 'A' && s[i] <= 'Z') || (s[i] >= '0' && s[i] <= '9') ||
		      s[i] == '_' || s[i] == '.' || s[i] == '-'))
			return 0;
	return 1;
}

static int parse_args(int argc, char **argv, struct import_opts *o)
{
	int dashdash = 0;
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];
		if (!dashdash && a[0] == '-' && a[1]) {
			if (!strcmp(a, "--")) {
				dashdash = 1;
				continue;
			}
			if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
				fputs(usage_text, stdout);
				return 1;
			}
			if (!strcmp(a, "--force")) {
				o->force = 1;
				continue;
			}
			const char *names[] = {"--out", "--id", "--weight-meta"};
			int k;
			const char *val = NULL;
			for (k = 0; k < 3; k++) {
				size_t nl = strlen(names[k]);
				if (!strcmp(a, names[k])) {
					if (i + 1 >= argc) {
						fprintf(stderr, "passfs import: %s needs a value (try --help)\n", a);
						return -1;
					}
					val = argv[++i];
					break;
				}
				if (!strncmp(a, names[k], nl) && a[nl] == '=') {
					val = a + nl + 1;
					break;
				}
			}
			if (k == 3) {
				fprintf(stderr, "passfs import: unknown option '%s' (try --help)\n", a);
				return -1;
			}
			if (k == 0 || k == 1) {
				const char **dst = k == 0 ? &o->out : &o->id;
				if (*dst) {
					fprintf(stderr, "passfs import: %s given twice\n", names[k]);
					return -1;
				}
				*dst = val;
			} else {
				if (o->nmeta >= MAX_IMPORT_SAMPLES) {
					fprintf(stderr, "passfs import: too many --weight-meta files\n");
					return -1;
				}
				o->meta[o->nmeta++] = val;
			}
			continue;
		}
		if (o->ndirs >= MAX_IMPORT_SAMPLES) {
			fprintf(stderr, "passfs import: too many samples (at most %d)\n", MAX_IMPORT_SAMPLES);
			return -1;
		}
		o->dirs[o->ndirs++] = a;
	}
	if (o->ndirs == 0) {
		fprintf(stderr, "passfs import: no SAMPLE_DIR given (try --help)\n");
		return -1;
	}
	if (o->out == NULL || !o->out[0]) {
		fprintf(stderr, "passfs import: --out TASK_DIR is required (try --help)\n");
		return -1;
	}
	if (o->nmeta && o->ndirs != 1) {
		fprintf(stderr, "passfs import: --weight-meta needs exactly one SAMPLE_DIR (got %d)\n", o->ndirs);
		return -1;
	}
	return 0;
}

/* ---- output ------------------------------------------------------------------ */

static int all_scalars(json_t *a)
{
	size_t i;
	json_t *e;
	json_array_foreach(a, i, e) {
		if (json_is_object(e))
			return 0;
		if (json_is_array(e) && !all_scalars(e))
			return 0;
	}
	return 1;
}

/* The shortest text that reads back as d, always with a '.' or exponent so
 * it stays a JSON real (jansson prints 0.1 as 0.10000000000000001). */
static void fmt_real(double d, char *buf, size_t len)
{
	for (int prec = 1; prec <= 17; prec++) {
		snprintf(buf, len, "%.*g", prec, d);
		if (strtod(buf, NULL) == d)
			break;
	}
	if (!strpbrk(buf, ".eE"))
		snprintf(buf + strlen(buf), len - strlen(buf), ".0");
}

static int write_string(FILE *f, const char *s)
{
	json_t *j = json_string(s);
	char *t = j ? json_dumps(j, JSON_ENCODE_ANY) : NULL;
	json_decref(j);
	if (t == NULL)
		return -1;
	fputs(t, f);
	free(t);
	return 0;
}

/* One-line JSON with ", " and ": " separators. */
static int write_inline(FILE *f, json_t *v)
{
	char num[64];
	size_t i;
	const char *k;
	json_t *e;
	switch (json_typeof(v)) {
	case JSON_NULL: fputs("null", f); return 0;
	case JSON_TRUE: fputs("true", f); return 0;
	case JSON_FALSE: fputs("false", f); return 0;
	case JSON_INTEGER: fprintf(f, "%" JSON_INTEGER_FORMAT, json_integer_value(v)); return 0;
	case JSON_REAL:
		fmt_real(json_real_value(v), num, sizeof(num));
		fputs(num, f);
		return 0;
	case JSON_STRING: return write_string(f, json_string_value(v));
	case JSON_ARRAY:
		fputc('[', f);
		json_array_foreach(v, i, e) {
			if (i)
				fputs(", ", f);
			if (write_inline(f, e))
				return -1;
		}
		fputc(']', f);
		return 0;
	case JSON_OBJECT:
		fputc('{', f);
		i = 0;
		json_object_foreach(v, k, e) {
			if (i++)
				fputs(", ", f);
			if (write_string(f, k))
				return -1;
			fputs(": ", f);
			if (write_inline(f, e))
				return -1;
		}
		fputc('}', f);
		return 0;
	}
	return -1;
}

static char *inline_text(json_t *v)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	if (f == NULL)
		return NULL;
	int bad = write_inline(f, v);
	if (fclose(f) != 0 || bad) {
		free(buf);
		return NULL;
	}
	return buf;
}

/* Pretty JSON: objects one key per line, unless the whole object fits on a
 * line of 120 columns; arrays of scalars (shapes, data, indices) inline. */
static int dump(FILE *f, json_t *v, int indent)
{
	char *one = inline_text(v);
	if (one == NULL)
		return -1;
	int inline_ok = (json_is_array(v) && all_scalars(v)) || (!json_is_object(v) && !json_is_array(v)) ||
		indent + strlen(one) <= 120;
	if (inline_ok) {
		fputs(one, f);
		free(one);
		return 0;
	}
	free(one);
	if (json_is_object(v)) {
		const char *k;
		json_t *e;
		size_t n = json_object_size(v), i = 0;
		fputs("{\n", f);
		json_object_foreach(v, k, e) {
			fprintf(f, "%*s", indent + 2, "");
			if (write_string(f, k))
				return -1;
			fputs(": ", f);
			if (dump(f, e, indent + 2))
				return -1;
			fputs(++i < n ? ",\n" : "\n", f);
		}
		fprintf(f, "%*s}", indent, "");
		return 0;
	}
	size_t i, n = json_array_size(v);
	json_t *e;
	fputs("[\n", f);
	json_array_foreach(v, i, e) {
		fprintf(f, "%*s", indent + 2, "");
		if (dump(f, e, indent + 2))
			return -1;
		fputs(i + 1 < n ? ",\n" : "\n", f);
	}
	fprintf(f, "%*s]", indent, "");
	return 0;
}

/* Writes dir/graph.json through a temporary file: rename() when force, else
 * link() so an existing graph.json is never replaced.  0, or -1 (message
 * printed). */
static int write_task(const char *dir, json_t *root, int force)
{
	char path[4096];
	struct base_atomic a;
	int rc = snprintf(path, sizeof(path), "%s/graph.json", dir) >= (int)sizeof(path)
			 ? -ENAMETOOLONG
			 : base_atomic_open(&a, path, ".", 0644, 0);
	if (rc == -ENAMETOOLONG) {
		fprintf(stderr, "passfs import: %s: path too long\n", dir);
		return -1;
	}
	int dfd = rc == 0 ? dup(a.fd) : -1;
	FILE *f = dfd >= 0 ? fdopen(dfd, "w") : NULL;
	if (f == NULL) {
		fprintf(stderr, "passfs import: %s: cannot create: %s\n", rc == 0 ? a.tmp : path,
			strerror(rc ? -rc : errno));
		if (dfd >= 0)
			close(dfd);
		if (rc == 0)
			base_atomic_abort(&a);
		return -1;
	}
	int bad = dump(f, root, 0);
	fputc('\n', f);
	bad |= fflush(f) != 0 || ferror(f);
	int e = errno;
	bad |= fclose(f) != 0;
	if (bad) {
		fprintf(stderr, "passfs import: %s: write failed: %s\n", a.tmp, strerror(e ? e : errno));
		base_atomic_abort(&a);
		return -1;
	}
	/* link() unless force, so an existing graph.json is never replaced */
	rc = base_atomic_commit(&a, BASE_ATOMIC_DURABLE | (force ? 0 : BASE_ATOMIC_NOCLOBBER));
	if (rc != 0) {
		if (rc == -EEXIST)
			fprintf(stderr, "passfs import: %s already exists (pass --force to overwrite)\n", path);
		else
			fprintf(stderr, "passfs import: %s: %s\n", path, strerror(-rc));
		return -1;
	}
	return 0;
}

static void print_warning(void *ctx, const char *msg)
{
	(void)ctx;
	fprintf(stderr, "passfs import: warning: %s\n", msg);
}

static void print_variants(const struct graph_task *t)
{
	for (int i = 0; i < t->n_variants; i++) {
		const struct graph_variant *v = &t->variants[i];
		printf("%s:", v->name);
		for (int k = 0; k < v->n_outputs; k++) {
			const struct graph_value *x = &v->values[v->outputs[k]];
			char shape[256];
			graph_shape_str(&x->shape, shape, sizeof(shape));
			printf("%s %s %s%s", k ? "," : "", x->name, graph_dtype_name(x->dtype), shape);
		}
		putchar('\n');
	}
}

struct loaded {
	char *model, *meta;
	size_t model_len, meta_len;
	char model_label[4200], meta_label[4200], name[512], variant[128];
};

/* Reads DIR/model.py and the weight_meta (meta_path, or DIR/weight_meta.py
 * when NULL; missing is left to the importer, which says so).  0 or -1. */
static int load_sample(const char *dir, const char *meta_path, struct loaded *l)
{
	size_t dl = strlen(dir);
	const char *sep = dl && dir[dl - 1] == '/' ? "" : "/";
	snprintf(l->model_label, sizeof(l->model_label), "%s%smodel.py", dir, sep);
	base_name(dir, l->name, sizeof(l->name));
	struct stat st;
	if (stat(dir, &st) != 0) {
		fprintf(stderr, "passfs import: %s: %s\n", dir, strerror(errno));
		return -1;
	}
	if (!S_ISDIR(st.st_mode)) {
		fprintf(stderr, "passfs import: %s: not a directory (SAMPLE_DIR holds model.py and "
			"weight_meta.py)\n", dir);
		return -1;
	}
	int rc = read_file(l->model_label, &l->model, &l->model_len);
	if (rc) {
		fprintf(stderr, "passfs import: %s: %s\n", l->model_label,
			rc == -ENOENT ? "no model.py in this sample" : rc == -EFBIG ? "file too large" : strerror(-rc));
		return -1;
	}
	if (meta_path)
		snprintf(l->meta_label, sizeof(l->meta_label), "%s", meta_path);
	else
		snprintf(l->meta_label, sizeof(l->meta_label), "%s%sweight_meta.py", dir, sep);
	rc = read_file(l->meta_label, &l->meta, &l->meta_len);
	if (rc && (rc != -ENOENT || meta_path)) {
		fprintf(stderr, "passfs import: %s: %s\n", l->meta_label,
			rc == -EFBIG ? "file too large" : strerror(-rc));
		return -1;
	}
	return 0;
}

int cmd_import(int argc, char **argv)
{
	struct import_opts *o = calloc(1, sizeof(*o));
	int n = 0, status = 2;
	struct loaded *ld = NULL;
	struct import_sample *smp = NULL;
	json_t *root = NULL;
	struct graph_task *task = NULL;
	char *source = NULL;
	if (o == NULL) {
		fprintf(stderr, "passfs import: out of memory\n");
		return 1;
	}
	int pr = parse_args(argc, argv, o);
	if (pr) {
		free(o);
		return pr > 0 ? 0 : 2;
	}

	/* the output first: fail before the work when it cannot be written */
	char outdir[4096], id[512], parent[4096];
	snprintf(outdir, sizeof(outdir), "%s", o->out);
	for (size_t l = strlen(outdir); l > 1 && outdir[l - 1] == '/'; l--)
		outdir[l - 1] = 0;
	base_name(outdir, id, sizeof(id));
	if (o->id)
		snprintf(id, sizeof(id), "%s", o->id);
	if (!valid_id(id)) {
		fprintf(stderr, "passfs import: task id '%s' must match [A-Za-z0-9_.-]+ (at most 100 bytes, not "
			"starting with '.'); %s\n", id, o->id ? "fix --id" : "pass --id ID");
		goto out;
	}
	snprintf(parent, sizeof(parent), "%s", outdir);
	char *slash = strrchr(parent, '/');
	if (slash == parent)
		parent[1] = 0;
	else if (slash)
		*slash = 0;
	else
		snprintf(parent, sizeof(parent), ".");
	struct stat st;
	if (stat(parent, &st) != 0 || !S_ISDIR(st.st_mode)) {
		fprintf(stderr, "passfs import: --out %s: parent directory %s does not exist\n", o->out, parent);
		goto out;
	}
	if (stat(outdir, &st) == 0) {
		if (!S_ISDIR(st.st_mode)) {
			fprintf(stderr, "passfs import: --out %s: exists and is not a directory\n", o->out);
			goto out;
		}
		char gj[4200];
		snprintf(gj, sizeof(gj), "%s/graph.json", outdir);
		if (!o->force && stat(gj, &st) == 0) {
			fprintf(stderr, "passfs import: %s already exists (pass --force to overwrite)\n", gj);
			status = 1;
			goto out;
		}
	}

	n = o->nmeta ? o->nmeta : o->ndirs;
	ld = calloc((size_t)n, sizeof(*ld));
	smp = calloc((size_t)n, sizeof(*smp));
	if (ld == NULL || smp == NULL) {
		fprintf(stderr, "passfs import: out of memory\n");
		status = 1;
		goto out;
	}
	for (int i = 0; i < n; i++) {
		const char *dir = o->nmeta ? o->dirs[0] : o->dirs[i];
		if (load_sample(dir, o->nmeta ? o->meta[i] : NULL, &ld[i]))
			goto out;
		smp[i].name = ld[i].name;
		smp[i].model_label = ld[i].model_label;
		smp[i].model = ld[i].model;
		smp[i].model_len = ld[i].model_len;
		smp[i].meta_label = ld[i].meta_label;
		smp[i].meta = ld[i].meta;
		smp[i].meta_len = ld[i].meta_len;
		if (o->nmeta)
			smp[i].variant = variant_from_file(o->meta[i], ld[i].variant, sizeof(ld[i].variant));
	}
	if (o->nmeta) {
		/* "dir (weight_meta: a.py, b.py)" */
		size_t cap = strlen(ld[0].name) + 32, len;
		for (int i = 0; i < n; i++)
			cap += strlen(o->meta[i]) + 2;
		if ((source = malloc(cap)) == NULL) {
			status = 1;
			goto out;
		}
		len = (size_t)sprintf(source, "%s (weight_meta: ", ld[0].name);
		for (int i = 0; i < n; i++) {
			char b[512];
			len += (size_t)sprintf(source + len, "%s%s", i ? ", " : "", base_name(o->meta[i], b, sizeof(b)));
		}
		sprintf(source + len, ")");
	}

	struct import_options io = {.id = id, .source = source, .warn = print_warning};
	char err[IMPORT_ERR_LEN];
	if (import_build(smp, n, &io, &root, &task, err, sizeof(err))) {
		fprintf(stderr, "passfs import: %s\n", err);
		goto out;
	}
	status = 1;
	if (mkdir(outdir, 0777) != 0 && errno != EEXIST) {
		fprintf(stderr, "passfs import: %s: cannot create: %s\n", outdir, strerror(errno));
		goto out;
	}
	if (write_task(outdir, root, o->force))
		goto out;
	print_variants(task);
	fflush(stdout);
	fprintf(stderr, "passfs import: wrote %s/graph.json (%d variant%s)\n", outdir, task->n_variants,
		task->n_variants == 1 ? "" : "s");
	status = 0;
out:
	if (ld)
		for (int i = 0; i < n; i++) {
			free(ld[i].model);
			free(ld[i].meta);
		}
	free(ld);
	free(smp);
	free(source);
	free(o);
	json_decref(root);
	graph_task_free(task);
	return status;
}
