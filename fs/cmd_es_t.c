/* cmd_es_t.c - `passfs es-t`: score per-variant records (docs/scoring.md).
 *
 *   $ echo '{"variants": [{"dtype": "float32", "speedup": 1.5,
 *            "status": "ok", "min_t": -5}]}' | passfs es-t -
 *   t=-10  ES_t=0.100000
 *   ...
 *   t=4    ES_t=1.500000
 *   score 1.496595
 *
 * All the arithmetic is engine/eval/score.c; this file only reads, overrides b and
 * p, and prints. */
#define _POSIX_C_SOURCE 200809L    /* fileno */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <jansson.h>

#include "cmd.h"
#include "score.h"

static const char usage_head[] =
	"usage: passfs es-t [--json] [--b B] [--p P] RECORDS.json\n"
	"\n"
	"Scores per-variant records with ES_t (docs/scoring.md) and prints the\n"
	"ES_t curve, one line per tolerance level t = -10..4, then the task score\n"
	"as the last line: \"score 1.496595\".\n"
	"\n"
	"RECORDS.json (\"-\" reads standard input):\n"
	"  {\"b\": 0.1, \"p\": 0,\n"
	"   \"variants\": [{\"dtype\": \"float32\", \"speedup\": 1.5,\n"
	"                 \"status\": \"ok\", \"min_t\": -5}, ...]}\n"
	"  b and p are optional; status is one of\n";
/* ... the verdict names, from the verdict table (score_status_info) ... */
static const char usage_tail[] =
	"  min_t is the smallest t at which the outputs pass (-10..4), or null when\n"
	"  they never do (ok needs one; a mismatch may have one, and then a speedup).\n"
	"\n"
	"options:\n"
	"  --json     print {\"score\": S, \"curve\": {\"-10\": ES, ..., \"4\": ES},\n"
	"             \"b\": B, \"p\": P} instead of the table\n"
	"  --b B      r of a failed variant, in (0, 1] (default 0.1; overrides the file)\n"
	"  --p P      slowdown penalty >= 0: r = s^(1+P) for s < 1 (default 0;\n"
	"             overrides the file)\n"
	"  -h, --help this text\n"
	"\n"
	"Exit status: 0 scored, 1 could not write the output, 2 bad usage or bad records.\n";

struct es_t_opts {
	int json;
	int have_b, have_p;
	double b, p;
	const char *path;
};

/* A whole argument as a finite double; 0 on success, -EINVAL otherwise. */
static int parse_double(const char *s, double *out)
{
	char *end;

	errno = 0;
	*out = strtod(s, &end);
	if (end == s || *end || errno == ERANGE || !isfinite(*out))
		return -EINVAL;
	return 0;
}

/* The value of "--b B" or "--b=B"; advances *i past a separate value.  NULL
 * when arg is not this option. */
static const char *option_value(int argc, char **argv, int *i, const char *name, int *missing)
{
	size_t len = strlen(name);
	const char *arg = argv[*i];

	*missing = 0;
	if (strncmp(arg, name, len) != 0)
		return NULL;
	if (arg[len] == '=')
		return arg + len + 1;
	if (arg[len] != '\0')
		return NULL;
	if (*i + 1 >= argc) {
		*missing = 1;
		return NULL;
	}
	return argv[++*i];
}

/* Handles --b / --p at argv[*i].  Returns 1 when it was one (and sets the
 * value), 0 when it was not, -EINVAL after printing the problem. */
static int parse_param_option(int argc, char **argv, int *i, struct es_t_opts *o)
{
	static const char *const names[2] = { "--b", "--p" };

	for (int k = 0; k < 2; k++) {
		int missing;
		const char *val = option_value(argc, argv, i, names[k], &missing);
		double d;

		if (missing) {
			fprintf(stderr, "passfs es-t: %s needs a value (try --help)\n", names[k]);
			return -EINVAL;
		}
		if (!val)
			continue;
		if (parse_double(val, &d) < 0) {
			fprintf(stderr, "passfs es-t: %s: not a number: '%s'\n", names[k], val);
			return -EINVAL;
		}
		if (k == 0 && !(d > 0.0 && d <= 1.0)) {
			fprintf(stderr, "passfs es-t: --b must be in (0, 1] (got %s)\n", val);
			return -EINVAL;
		}
		if (k == 1 && d < 0.0) {
			fprintf(stderr, "passfs es-t: --p must be >= 0 (got %s)\n", val);
			return -EINVAL;
		}
		if (k == 0) {
			o->b = d;
			o->have_b = 1;
		} else {
			o->p = d;
			o->have_p = 1;
		}
		return 1;
	}
	return 0;
}

/* The usage, its list of statuses taken from the verdict table. */
static void usage(FILE *f)
{
	fputs(usage_head, f);
	for (int v = 0; v < SCORE_STATUS_COUNT; v++)
		fprintf(f, "%s%s", v == 0 ? "    " : v % 4 == 0 ? "\n    " : " ", score_status_name((enum score_status)v));
	fputs(";\n", f);
	fputs(usage_tail, f);
}

/* Returns 0 to go on, 1 when --help was printed, 2 on bad usage (printed). */
static int parse_args(int argc, char **argv, struct es_t_opts *o)
{
	int only_operands = 0;

	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];
		int rc;

		if (!only_operands && (strcmp(a, "-h") == 0 || strcmp(a, "--help") == 0)) {
			usage(stdout);
			return 1;
		}
		if (!only_operands && strcmp(a, "--") == 0) {
			only_operands = 1;
			continue;
		}
		if (!only_operands && strcmp(a, "--json") == 0) {
			o->json = 1;
			continue;
		}
		if (!only_operands && (rc = parse_param_option(argc, argv, &i, o)) != 0) {
			if (rc < 0)
				return 2;
			continue;
		}
		if (!only_operands && a[0] == '-' && a[1] != '\0') {
			fprintf(stderr, "passfs es-t: unknown option '%s' (try --help)\n", a);
			return 2;
		}
		if (o->path) {
			fprintf(stderr, "passfs es-t: one RECORDS.json only (got '%s' and '%s')\n",
				o->path, a);
			return 2;
		}
		o->path = a;
	}
	if (!o->path) {
		fprintf(stderr, "passfs es-t: missing RECORDS.json (try --help)\n");
		return 2;
	}
	return 0;
}

/* Loads the records document; NULL after printing "FILE:LINE:COL: ...". */
static json_t *load_records(const char *path, const char *label)
{
	int from_stdin = strcmp(path, "-") == 0;
	FILE *f = from_stdin ? stdin : fopen(path, "r");
	json_error_t jerr;
	struct stat st;
	json_t *root;

	if (!f) {
		fprintf(stderr, "passfs es-t: %s: cannot open: %s\n", label, strerror(errno));
		return NULL;
	}
	/* fopen() opens a directory; reading it would look like an empty file. */
	if (fstat(fileno(f), &st) == 0 && S_ISDIR(st.st_mode)) {
		fprintf(stderr, "passfs es-t: %s: is a directory\n", label);
		if (!from_stdin)
			fclose(f);
		return NULL;
	}
	/* Duplicate keys are rejected: the second "min_t" of a record would
	 * otherwise silently win. */
	root = json_loadf(f, JSON_REJECT_DUPLICATES, &jerr);
	if (!from_stdin)
		fclose(f);
	if (root)
		return root;
	if (jerr.line > 0)
		fprintf(stderr, "passfs es-t: %s:%d:%d: invalid JSON: %s\n",
			label, jerr.line, jerr.column, jerr.text);
	else
		fprintf(stderr, "passfs es-t: %s: cannot read: %s\n", label, jerr.text);
	return NULL;
}

static void print_table(const struct score_result *r)
{
	for (int t = SCORE_T_MIN; t <= SCORE_T_MAX; t++)
		printf("t=%-4d ES_t=%.6f\n", t, r->es_t[t - SCORE_T_MIN]);
	printf("score %.6f\n", r->score);
}

static int print_json(const struct score_result *r, const struct score_params *pr)
{
	json_t *root = json_object(), *curve = json_object();
	char key[8];
	int rc = -ENOMEM;

	if (!root || !curve)
		goto out;
	for (int t = SCORE_T_MIN; t <= SCORE_T_MAX; t++) {
		snprintf(key, sizeof key, "%d", t);
		if (json_object_set_new(curve, key, json_real(r->es_t[t - SCORE_T_MIN])) < 0)
			goto out;
	}
	if (json_object_set_new(root, "score", json_real(r->score)) < 0 ||
	    json_object_set(root, "curve", curve) < 0 ||
	    json_object_set_new(root, "b", json_real(pr->b)) < 0 ||
	    json_object_set_new(root, "p", json_real(pr->p)) < 0 ||
	    /* 15 digits: the last two of %.17g are pow/log10 rounding noise
	     * (0.20000000000000004), not information. */
	    json_dumpf(root, stdout, JSON_INDENT(2) | JSON_REAL_PRECISION(15)) < 0)
		goto out;
	putchar('\n');
	rc = 0;
out:
	json_decref(curve);
	json_decref(root);
	return rc;
}

int cmd_es_t(int argc, char **argv)
{
	struct es_t_opts o = { 0 };
	struct score_input in = { 0 };
	struct score_result res;
	const char *label;
	char err[512];
	json_t *root;
	int rc = parse_args(argc, argv, &o);

	if (rc != 0)
		return rc == 1 ? 0 : 2;
	label = strcmp(o.path, "-") == 0 ? "<stdin>" : o.path;
	if (!(root = load_records(o.path, label)))
		return 2;
	rc = score_parse_records(root, &in, err, sizeof err);
	json_decref(root);
	if (rc < 0) {
		fprintf(stderr, "passfs es-t: %s: %s\n", label, err);
		return rc == -ENOMEM ? 1 : 2;
	}
	if (o.have_b)
		in.params.b = o.b;
	if (o.have_p)
		in.params.p = o.p;
	rc = score_compute(&in, &res, err, sizeof err);
	if (rc < 0) {
		fprintf(stderr, "passfs es-t: %s: %s\n", label, err);
		score_input_free(&in);
		return 2;
	}
	rc = 0;
	if (o.json)
		rc = print_json(&res, &in.params);
	else
		print_table(&res);
	score_input_free(&in);
	if (rc < 0 || fflush(stdout) != 0 || ferror(stdout)) {
		fprintf(stderr, "passfs es-t: cannot write the result: %s\n",
			rc < 0 ? "out of memory" : strerror(errno));
		return 1;
	}
	return 0;
}
