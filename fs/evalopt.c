/* evalopt.c - the evaluation options table (evalopt.h). */
#include "evalopt.h"

#include <stddef.h>
#include <stdlib.h>
#include <string.h>

enum kind { K_BACKEND, K_COUNT, K_WARMUP, K_SECONDS, K_FLAG, K_SEED };

struct row {
	const char *name;       /* --name */
	const char *okey;       /* -o key (mount) */
	int cmds;
	enum kind kind;
	size_t off;             /* the eval_opts field it sets (an int for counts and
				 * flags, a double for seconds) */
	const char *arg;        /* the argument in usage texts, NULL for a flag */
	const char *help;       /* help lines, each but the first indented by the printer */
};

static const struct row rows[] = {
	{"backend", "backend", EVALOPT_EVAL | EVALOPT_DAEMON, K_BACKEND, offsetof(struct eval_opts, backend), "B",
	 "auto (default: cuda when a GPU exists), cpu or cuda"},
	{"trials", "trials", EVALOPT_EVAL | EVALOPT_DAEMON, K_COUNT, offsetof(struct eval_opts, trials), "N",
	 "timed calls per variant (default: 100 on cuda, 10 on cpu); from\n"
	 "6 on, up to 4 times as many while the speedup's 95% interval is\n"
	 "wider than +-3%.  The cpu default also stops early: once the\n"
	 "interval is within +-3% (from 6 calls on), or once a variant's\n"
	 "timed trials took 1 s, round trips (at least 5)"},
	{"warmup", "warmup", EVALOPT_EVAL | EVALOPT_DAEMON, K_WARMUP, offsetof(struct eval_opts, warmup), "N",
	 "warm-up calls per variant (default: 25 on cuda, 2 on cpu, 1 when\n"
	 "the first took 100 ms or more; 0: none)"},
	{"timeout", "timeout", EVALOPT_EVAL | EVALOPT_DAEMON, K_SECONDS, offsetof(struct eval_opts, variant_timeout_s), "S",
	 "wall-clock limit of one worker step in seconds (default 20;\n"
	 "once a variant timed out, a tenth of it, at least 1 s)"},
	{"lock-timeout", "lock_timeout", EVALOPT_EVAL | EVALOPT_DAEMON, K_SECONDS, offsetof(struct eval_opts, lock_timeout_s), "S",
	 "wait at most S seconds for the GPU's benchmark lock, held by\n"
	 "another evaluation on the same GPU (default 600)"},
	{"cold", "cold", EVALOPT_EVAL | EVALOPT_DAEMON, K_FLAG, offsetof(struct eval_opts, cold), NULL,
	 "flush the caches before every timed call (the GPU's L2 on cuda,\n"
	 "the CPU caches on cpu); inputs are rotated every call either way"},
	{"secret-seed", NULL, EVALOPT_EVAL, K_SEED, offsetof(struct eval_opts, secret_seed), "N",
	 "fix the secret input seed (for reproducing a result)"},
	{"trial-times", NULL, EVALOPT_EVAL, K_FLAG, offsetof(struct eval_opts, trial_times), NULL,
	 "add every timed call's time per side to result.json (trial_ms;\n"
	 "for studying the timing, bench/rescore.sh)"},
};
#define NROWS ((int)(sizeof(rows) / sizeof(rows[0])))
/* The longest --name is what the help column is aligned to. */
#define HELP_COL 20

void evalopt_longopts(int cmds, struct option *opts, int *n)
{
	for (int i = 0; i < NROWS; i++)
		if (rows[i].cmds & cmds)
			opts[(*n)++] = (struct option){rows[i].name, rows[i].arg ? required_argument : no_argument, NULL,
						       EVALOPT_KEY0 + i};
}

int evalopt_is_key(int key)
{
	return key >= EVALOPT_KEY0 && key < EVALOPT_KEY0 + NROWS;
}

const char *evalopt_how(int key, char *buf, size_t len)
{
	snprintf(buf, len, "--%s", evalopt_is_key(key) ? rows[key - EVALOPT_KEY0].name : "?");
	return buf;
}

int evalopt_okey(int cmds, const char *name, size_t len)
{
	for (int i = 0; i < NROWS; i++)
		if ((rows[i].cmds & cmds) && rows[i].okey && strlen(rows[i].okey) == len &&
		    strncmp(rows[i].okey, name, len) == 0)
			return EVALOPT_KEY0 + i;
	return -1;
}

int evalopt_apply(int key, const char *val, struct eval_opts *eo, const char *how, const char *cmd)
{
	if (!evalopt_is_key(key))
		return 2;
	const struct row *r = &rows[key - EVALOPT_KEY0];
	char *end = NULL;
	if (r->kind != K_FLAG && (val == NULL || *val == '\0')) {
		fprintf(stderr, "%s: %s needs a value\n", cmd, how);
		return 2;
	}
	switch (r->kind) {
	case K_BACKEND:
		if (strcmp(val, "auto") && strcmp(val, "cpu") && strcmp(val, "cuda")) {
			fprintf(stderr, "%s: %s must be auto, cpu or cuda, not '%s'\n", cmd, how, val);
			return 2;
		}
		snprintf((char *)eo + r->off, EVAL_BACKEND_MAX, "%s", val);
		return 0;
	case K_COUNT:
	case K_WARMUP: {
		long v = strtol(val, &end, 10);
		long lo = r->kind == K_WARMUP ? 0 : 1;
		if (*end || v < lo || v > 100000) {
			fprintf(stderr, "%s: %s needs a whole number from %ld to 100000, not '%s'\n", cmd, how, lo, val);
			return 2;
		}
		/* warmup 0 is stored as -1: explicitly none (0 is the default) */
		*(int *)((char *)eo + r->off) = r->kind == K_WARMUP && v == 0 ? -1 : (int)v;
		return 0;
	}
	case K_SECONDS: {
		double v = strtod(val, &end);
		if (*end || !(v > 0) || v > 86400) {
			fprintf(stderr, "%s: %s needs a number of seconds above 0 and at most 86400, not '%s'\n", cmd,
				how, val);
			return 2;
		}
		*(double *)((char *)eo + r->off) = v;
		return 0;
	}
	case K_SEED: {
		unsigned long long v = strtoull(val, &end, 0);
		if (*end || v == 0) {
			fprintf(stderr, "%s: %s needs a non-zero integer, not '%s'\n", cmd, how, val);
			return 2;
		}
		*(uint64_t *)((char *)eo + r->off) = v;
		return 0;
	}
	case K_FLAG:
		*(int *)((char *)eo + r->off) = 1;
		return 0;
	}
	return 2;
}

void evalopt_usage(int cmds, FILE *f)
{
	for (int i = 0; i < NROWS; i++) {
		if (!(rows[i].cmds & cmds))
			continue;
		char head[64];
		snprintf(head, sizeof(head), "  --%s%s%s", rows[i].name, rows[i].arg ? " " : "",
			 rows[i].arg ? rows[i].arg : "");
		fprintf(f, "%-*s", HELP_COL, head);
		for (const char *p = rows[i].help; *p;) {
			const char *nl = strchr(p, '\n');
			int n = nl ? (int)(nl - p) : (int)strlen(p);
			fprintf(f, "%.*s\n", n, p);
			if (!nl)
				break;
			p = nl + 1;
			fprintf(f, "%-*s", HELP_COL, "");
		}
	}
}

void evalopt_synopsis(int cmds, FILE *f, int col, int indent)
{
	for (int i = 0; i < NROWS; i++) {
		if (!(rows[i].cmds & cmds))
			continue;
		char one[64];
		int n = snprintf(one, sizeof(one), " [--%s%s%s]", rows[i].name, rows[i].arg ? " " : "",
				 strcmp(rows[i].name, "backend") == 0 ? "auto|cpu|cuda" : rows[i].arg ? rows[i].arg : "");
		if (col + n > 90) {
			fprintf(f, "\n%*s", indent, "");
			col = indent;
		}
		fputs(one, f);
		col += n;
	}
}
