/* eval_util.c - output comparison, poison, verdict names. */
#define _GNU_SOURCE
#include "eval_util.h"

#include <errno.h>
#include <math.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "inputs.h"
#include "proc.h"

#define POISON_F32 0x7fa5a5a5u
#define POISON_F16 0x7d5au
#define POISON_BF16 0x7fa5u
#define POISON_F64 0x7ff5a5a5a5a5a5a5ull

void eval_fill_poison(void *buf, enum graph_dtype dt, size_t n)
{
	switch (dt) {
	case DT_F32:
		for (size_t i = 0; i < n; i++)
			((uint32_t *)buf)[i] = POISON_F32;
		break;
	case DT_F16:
		for (size_t i = 0; i < n; i++)
			((uint16_t *)buf)[i] = POISON_F16;
		break;
	case DT_BF16:
		for (size_t i = 0; i < n; i++)
			((uint16_t *)buf)[i] = POISON_BF16;
		break;
	case DT_F64:
		for (size_t i = 0; i < n; i++)
			((uint64_t *)buf)[i] = POISON_F64;
		break;
	default:
		memset(buf, 0xA5, n * graph_dtype_size(dt));
	}
}

long long eval_find_poison(enum graph_dtype dt, const void *buf, size_t n)
{
	switch (dt) {
	case DT_F32:
		for (size_t i = 0; i < n; i++) {
			uint32_t b;
			memcpy(&b, (const char *)buf + 4 * i, 4);
			if (b == POISON_F32)
				return (long long)i;
		}
		return -1;
	case DT_F16:
	case DT_BF16: {
		uint16_t pat = dt == DT_F16 ? POISON_F16 : POISON_BF16;
		for (size_t i = 0; i < n; i++) {
			uint16_t h;
			memcpy(&h, (const char *)buf + 2 * i, 2);
			if (h == pat)
				return (long long)i;
		}
		return -1;
	}
	case DT_F64:
		for (size_t i = 0; i < n; i++) {
			uint64_t b;
			memcpy(&b, (const char *)buf + 8 * i, 8);
			if (b == POISON_F64)
				return (long long)i;
		}
		return -1;
	default:
		return -1;
	}
}

/* Element i as a double, and whether it is the poison pattern. */
static double load(enum graph_dtype dt, const void *p, size_t i, int *poison)
{
	*poison = 0;
	switch (dt) {
	case DT_F32: {
		uint32_t b;
		memcpy(&b, (const char *)p + 4 * i, 4);
		*poison = b == POISON_F32;
		float f;
		memcpy(&f, &b, 4);
		return f;
	}
	case DT_F16: {
		uint16_t h = ((const uint16_t *)p)[i];
		*poison = h == POISON_F16;
		return inputs_f16_to_f32(h);
	}
	case DT_BF16: {
		uint16_t h = ((const uint16_t *)p)[i];
		*poison = h == POISON_BF16;
		return inputs_bf16_to_f32(h);
	}
	case DT_F64: {
		uint64_t b;
		memcpy(&b, (const char *)p + 8 * i, 8);
		*poison = b == POISON_F64;
		double d;
		memcpy(&d, &b, 8);
		return d;
	}
	case DT_I64: {
		int64_t v;
		memcpy(&v, (const char *)p + 8 * i, 8);
		return (double)v;
	}
	case DT_I32: {
		int32_t v;
		memcpy(&v, (const char *)p + 4 * i, 4);
		return v;
	}
	case DT_BOOL:
		return ((const unsigned char *)p)[i] != 0;
	default:
		return 0;
	}
}

/* Does (pass, eager) pass at level idx (t = SCORE_T_MIN + idx)? */
static int within(double pv, double ev, const double *atol, const double *rtol, int idx)
{
	return score_close(pv, ev, atol[idx], rtol[idx]);
}

/* How far (pass, eager) is outside the tolerance of level idx: the ratio of
 * the difference to the allowed difference (<= 1 where it passes). */
static double excess(double pv, double ev, const double *atol, const double *rtol, int idx)
{
	if (isnan(ev) || isnan(pv) || isinf(ev) || isinf(pv))
		return within(pv, ev, atol, rtol, idx) ? 0 : INFINITY;
	double allowed = atol[idx] + rtol[idx] * fabs(ev);
	double d = fabs(pv - ev);
	return allowed > 0 ? d / allowed : d > 0 ? INFINITY : 0;
}

void eval_compare(enum graph_dtype dt, const void *pass, const void *eager, size_t n, struct eval_cmp *out)
{
	double atol[SCORE_N_T], rtol[SCORE_N_T];
	int exact = !graph_dtype_is_float(dt);
	enum score_dtype sd = eval_score_dtype(dt);
	for (int k = 0; k < SCORE_N_T; k++)
		score_tolerance(sd, SCORE_T_MIN + k, &atol[k], &rtol[k]);
	memset(out, 0, sizeof(*out));
	out->poison_at = out->first_bad = out->worst_at = -1;
	out->worst_excess = -1;
	int level = 0;                  /* index of the smallest t still possible */
	/* A stretch of elements whose bits are eager's, none of them the
	 * poison, changes nothing once an element has set the worst excess
	 * (each of them has excess 0 and the errors 0, and passes at every
	 * level): such stretches are skipped whole.  Float types only. */
	size_t esz = dt == DT_F32 ? 4 : dt == DT_F16 || dt == DT_BF16 ? 2 : dt == DT_F64 ? 8 : 0;
	const size_t run = 256;
	for (size_t i = 0; i < n; i++) {
		int pp, ep;
		if (esz && i % run == 0 && i + run <= n && out->worst_excess >= 0 &&
		    memcmp((const char *)pass + i * esz, (const char *)eager + i * esz, run * esz) == 0 &&
		    eval_find_poison(dt, (const char *)pass + i * esz, run) < 0) {
			i += run - 1;
			continue;
		}
		double pv = load(dt, pass, i, &pp), ev = load(dt, eager, i, &ep);
		if (pp && !exact) {
			out->poison_at = (long long)i;
			out->min_t = SCORE_T_NEVER;
			out->worst_at = -1;
			return;
		}
		if (isfinite(pv) && isfinite(ev)) {
			double a = fabs(pv - ev);
			if (a > out->max_abs)
				out->max_abs = a;
			if (ev != 0 && a / fabs(ev) > out->max_rel)
				out->max_rel = a / fabs(ev);
		}
		if (exact) {
			/* int64 as integers: doubles merge values past 2^53 */
			int differ = dt == DT_I64 ? memcmp((const char *)pass + 8 * i, (const char *)eager + 8 * i, 8) != 0
						  : pv != ev;
			if (differ && level < SCORE_N_T) {
				level = SCORE_N_T;
				out->first_bad = (long long)i;
				out->bad_pass = pv;
				out->bad_eager = ev;
				out->worst_excess = -1;         /* a new worst level */
			}
			double q = differ ? INFINITY : 0;
			if (q > out->worst_excess) {
				out->worst_excess = q;
				out->worst_at = (long long)i;
				out->worst_pass = pv;
				out->worst_eager = ev;
			}
			continue;
		}
		int before = level;
		while (level < SCORE_N_T && !within(pv, ev, atol, rtol, level))
			level++;
		if (level == SCORE_N_T && before < SCORE_N_T) {
			out->first_bad = (long long)i;
			out->bad_pass = pv;
			out->bad_eager = ev;
		}
		/* Only elements from the one that raised the level on can fail
		 * its new tightest failing level (every earlier one passed at
		 * the old level, which is no tighter): restart the search
		 * there. */
		if (level != before)
			out->worst_excess = -1;
		int at = level == SCORE_N_T ? SCORE_N_T - 1 : level > 0 ? level - 1 : 0;
		double q = excess(pv, ev, atol, rtol, at);
		if (q > out->worst_excess) {
			out->worst_excess = q;
			out->worst_at = (long long)i;
			out->worst_pass = pv;
			out->worst_eager = ev;
		}
	}
	out->min_t = level >= SCORE_N_T ? SCORE_T_NEVER : SCORE_T_MIN + level;
}

int eval_blind_t(enum graph_dtype dt, const void *eager, size_t n)
{
	if (!graph_dtype_is_float(dt) || n < 2)
		return SCORE_T_NEVER;
	double atol[SCORE_N_T], rtol[SCORE_N_T], lo = INFINITY, hi = -INFINITY;
	enum score_dtype sd = eval_score_dtype(dt);
	for (int k = 0; k < SCORE_N_T; k++)
		score_tolerance(sd, SCORE_T_MIN + k, &atol[k], &rtol[k]);
	for (size_t i = 0; i < n; i++) {
		int pp;
		double ev = load(dt, eager, i, &pp);
		if (!isfinite(ev))
			return SCORE_T_NEVER;
		lo = ev < lo ? ev : lo;
		hi = ev > hi ? ev : hi;
	}
	double consts[2] = {0.0, (lo + hi) / 2};
	int best = SCORE_N_T;
	for (int c = 0; c < 2; c++) {
		int level = 0;
		for (size_t i = 0; i < n && level < best; i++) {
			int pp;
			double ev = load(dt, eager, i, &pp);
			while (level < best && !within(consts[c], ev, atol, rtol, level))
				level++;
		}
		if (level < best)
			best = level;
	}
	return best >= SCORE_N_T ? SCORE_T_NEVER : SCORE_T_MIN + best;
}

const char *eval_verdict_name(enum score_status st, int min_t)
{
	if (st == SCORE_OK && min_t == SCORE_T_NEVER)
		return "mismatch";
	return score_status_name(st);
}

enum score_status eval_worse(enum score_status a, enum score_status b)
{
	const struct score_status_info *ia = score_status_info(a), *ib = score_status_info(b);
	return ib && (!ia || ib->rank > ia->rank) ? b : a;
}

enum score_dtype eval_score_dtype(enum graph_dtype dt)
{
	switch (dt) {
	case DT_F16: return SCORE_F16;
	case DT_BF16: return SCORE_BF16;
	case DT_F64: return SCORE_F64;
	case DT_I64: return SCORE_I64;
	case DT_I32: return SCORE_I32;
	case DT_BOOL: return SCORE_BOOL;
	default: return SCORE_F32;
	}
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

void eval_sort(double *a, int n)
{
	qsort(a, (size_t)n, sizeof(double), cmp_double);
}

double eval_round(double x, int digits)
{
	if (!isfinite(x) || x == 0)
		return x;
	double m = pow(10, digits - 1 - (int)floor(log10(fabs(x))));
	return round(x * m) / m;
}

const char *eval_tail(const char *s, size_t max)
{
	size_t n = strlen(s);
	if (n <= max)
		return s;
	const char *t = s + n - max;
	const char *nl = strchr(t, '\n');
	return nl && nl[1] ? nl + 1 : t;
}

void prctl_pdeathsig_kill(void)
{
	prctl(PR_SET_PDEATHSIG, SIGKILL);
}

int eval_send_all(int fd, const void *p, size_t n)
{
	return base_write_all(fd, p, n) == 0 ? 0 : -1;
}

int eval_recv_all(int fd, void *p, size_t n)
{
	return base_read_full(fd, p, n) == (ssize_t)n ? 0 : -1;
}

int eval_cpu_speedup_modeled(void)
{
	const char *e = getenv("PASSFS_CPU_SPEEDUP");
	return !(e != NULL && strcmp(e, "measured") == 0);
}
