/* eval_util.c - output comparison, poison, verdict names. */
#define _GNU_SOURCE
#include "eval_util.h"

#include <errno.h>
#include <math.h>
#include <pthread.h>
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

static long long find_poison_range(enum graph_dtype dt, const void *buf, size_t n)
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
static inline __attribute__((always_inline)) double load(enum graph_dtype dt, const void *p, size_t i, int *poison)
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
		return inputs_f16_to_f32_inline(h);
	}
	case DT_BF16: {
		uint16_t h = ((const uint16_t *)p)[i];
		*poison = h == POISON_BF16;
		uint32_t u = (uint32_t)h << 16;
		float f;
		memcpy(&f, &u, 4);
		return f;
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
static inline __attribute__((always_inline)) int within(double pv, double ev, const double *atol, const double *rtol,
								 int idx)
{
	return score_close_inline(pv, ev, atol[idx], rtol[idx]);
}

/* How far (pass, eager) is outside the tolerance of level idx: the ratio of
 * the difference to the allowed difference (<= 1 where it passes). */
static inline __attribute__((always_inline)) double excess(double pv, double ev, const double *atol, const double *rtol,
								   int idx)
{
	if (isnan(ev) || isnan(pv) || isinf(ev) || isinf(pv))
		return within(pv, ev, atol, rtol, idx) ? 0 : INFINITY;
	double allowed = atol[idx] + rtol[idx] * fabs(ev);
	double d = fabs(pv - ev);
	return allowed > 0 ? d / allowed : d > 0 ? INFINITY : 0;
}

static inline __attribute__((always_inline)) void compare_body(enum graph_dtype dt, const void *pass, const void *eager,
								      size_t n, struct eval_cmp *out)
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
		    find_poison_range(dt, (const char *)pass + i * esz, run) < 0) {
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

/* The sweep, compiled once per float dtype (the element loads and the
 * tolerance rule inline), once for the rest. */
static void compare_range(enum graph_dtype dt, const void *pass, const void *eager, size_t n, struct eval_cmp *out)
{
	switch (dt) {
	case DT_F32: compare_body(DT_F32, pass, eager, n, out); break;
	case DT_F16: compare_body(DT_F16, pass, eager, n, out); break;
	case DT_BF16: compare_body(DT_BF16, pass, eager, n, out); break;
	default: compare_body(dt, pass, eager, n, out); break;
	}
}

/* ---- the parent's sweeps on both CPUs ----------------------------------- */

/* The compares, poison scans and input checks run in the evaluating process
 * while both workers wait for it: large buffers are split in parts that
 * threads sweep side by side, and the parts' answers merged into exactly
 * the one-sweep answer (tests/unit/test_eval_util.c checks both ways). */
#define PAR_MIN ((size_t)1 << 18)      /* elements per part at least */
#define PAR_MAX 8

static int par_cpus;                    /* eval_set_threads: 0 = one per CPU */

void eval_set_threads(int n)
{
	par_cpus = n < 0 ? 0 : n;
}

static int par_parts(size_t n)
{
	long cpus = par_cpus > 0 ? par_cpus : sysconf(_SC_NPROCESSORS_ONLN);
	int p = cpus < 1 ? 1 : cpus > PAR_MAX ? PAR_MAX : (int)cpus;
	size_t most = n / PAR_MIN;
	if (most < (size_t)p)
		p = most < 1 ? 1 : (int)most;
	return p;
}

struct par_job {
	void (*fn)(void *arg, size_t lo, size_t hi, int part);
	void *arg;
	size_t n;
	int parts;
};

struct par_arg {
	const struct par_job *j;
	int part;
};

static void par_one(const struct par_job *j, int p)
{
	size_t lo = j->n / (size_t)j->parts * (size_t)p, hi = p == j->parts - 1 ? j->n : j->n / (size_t)j->parts * (size_t)(p + 1);
	j->fn(j->arg, lo, hi, p);
}

static void *par_thread(void *a)
{
	struct par_arg *pa = a;
	par_one(pa->j, pa->part);
	return NULL;
}

/* fn over parts of [0, n), part 0 on the caller's thread (and any part
 * whose thread could not start). */
static void par_for(size_t n, int parts, void (*fn)(void *, size_t, size_t, int), void *arg)
{
	struct par_job j = {fn, arg, n, parts};
	struct par_arg pa[PAR_MAX];
	pthread_t th[PAR_MAX];
	int started[PAR_MAX] = {0};
	for (int p = 1; p < parts; p++) {
		pa[p] = (struct par_arg){&j, p};
		started[p] = pthread_create(&th[p], NULL, par_thread, &pa[p]) == 0;
	}
	par_one(&j, 0);
	for (int p = 1; p < parts; p++) {
		if (started[p])
			pthread_join(th[p], NULL);
		else
			par_one(&j, p);
	}
}

struct poison_par {
	enum graph_dtype dt;
	const char *buf;
	size_t esz;
	long long at[PAR_MAX];
};

static void poison_part(void *arg, size_t lo, size_t hi, int p)
{
	struct poison_par *pp = arg;
	long long at = find_poison_range(pp->dt, pp->buf + lo * pp->esz, hi - lo);
	pp->at[p] = at >= 0 ? at + (long long)lo : -1;
}

long long eval_find_poison(enum graph_dtype dt, const void *buf, size_t n)
{
	int parts = par_parts(n);
	if (parts == 1 || graph_dtype_size(dt) == 0)
		return find_poison_range(dt, buf, n);
	struct poison_par pp = {dt, buf, graph_dtype_size(dt), {0}};
	par_for(n, parts, poison_part, &pp);
	for (int p = 0; p < parts; p++)
		if (pp.at[p] >= 0)
			return pp.at[p];
	return -1;
}

struct cmp_par {
	enum graph_dtype dt;
	const char *pass, *eager;
	size_t esz;
	struct eval_cmp res[PAR_MAX];
};

static void cmp_part(void *arg, size_t lo, size_t hi, int p)
{
	struct cmp_par *cp = arg;
	struct eval_cmp *r = &cp->res[p];
	compare_range(cp->dt, cp->pass + lo * cp->esz, cp->eager + lo * cp->esz, hi - lo, r);
	if (r->poison_at >= 0)
		r->poison_at += (long long)lo;
	if (r->first_bad >= 0)
		r->first_bad += (long long)lo;
	if (r->worst_at >= 0)
		r->worst_at += (long long)lo;
}

static int level_of(const struct eval_cmp *r)
{
	return r->min_t == SCORE_T_NEVER ? SCORE_N_T : r->min_t - SCORE_T_MIN;
}

/* The parts' answers as one sweep's: the largest level; the first part's
 * first element failing everywhere; the worst element among the parts at
 * that level (the others pass the level below it, so none of theirs is
 * worse there), the first on ties, as the sweep keeps the first. */
void eval_compare(enum graph_dtype dt, const void *pass, const void *eager, size_t n, struct eval_cmp *out)
{
	int parts = par_parts(n);
	size_t esz = graph_dtype_size(dt);
	if (parts == 1 || esz == 0) {
		compare_range(dt, pass, eager, n, out);
		return;
	}
	struct cmp_par *cp = malloc(sizeof(*cp));
	if (cp == NULL) {
		compare_range(dt, pass, eager, n, out);
		return;
	}
	cp->dt = dt;
	cp->pass = pass;
	cp->eager = eager;
	cp->esz = esz;
	par_for(n, parts, cmp_part, cp);
	int level = 0, best = -1;
	*out = cp->res[0];
	out->first_bad = -1;
	for (int p = 0; p < parts; p++) {
		const struct eval_cmp *r = &cp->res[p];
		if (r->max_abs > out->max_abs)
			out->max_abs = r->max_abs;
		if (r->max_rel > out->max_rel)
			out->max_rel = r->max_rel;
		if (r->poison_at >= 0) {
			/* the sweep stops at the first poison */
			out->poison_at = r->poison_at;
			out->min_t = SCORE_T_NEVER;
			out->worst_at = -1;
			free(cp);
			return;
		}
		if (level_of(r) > level)
			level = level_of(r);
	}
	for (int p = 0; p < parts; p++) {
		const struct eval_cmp *r = &cp->res[p];
		if (level_of(r) != level)
			continue;
		if (out->first_bad < 0 && r->first_bad >= 0) {
			out->first_bad = r->first_bad;
			out->bad_pass = r->bad_pass;
			out->bad_eager = r->bad_eager;
		}
		if (best < 0 || r->worst_excess > cp->res[best].worst_excess)
			best = p;
	}
	out->worst_at = cp->res[best].worst_at;
	out->worst_pass = cp->res[best].worst_pass;
	out->worst_eager = cp->res[best].worst_eager;
	out->worst_excess = cp->res[best].worst_excess;
	out->min_t = level >= SCORE_N_T ? SCORE_T_NEVER : SCORE_T_MIN + level;
	free(cp);
}

struct same_par {
	const char *a, *b;
	int differ[PAR_MAX];
};

static void same_part(void *arg, size_t lo, size_t hi, int p)
{
	struct same_par *sp = arg;
	sp->differ[p] = memcmp(sp->a + lo, sp->b + lo, hi - lo) != 0;
}

int eval_same_bytes(const void *a, const void *b, size_t n)
{
	int parts = par_parts(n / 4);
	if (parts == 1)
		return memcmp(a, b, n) == 0;
	struct same_par sp = {a, b, {0}};
	par_for(n, parts, same_part, &sp);
	for (int p = 0; p < parts; p++)
		if (sp.differ[p])
			return 0;
	return 1;
}

struct blind_par {
	enum graph_dtype dt;
	const char *eager;
	size_t esz;
	const double *atol, *rtol;
	double c;                       /* the constant (the level pass) */
	int best;
	double lo[PAR_MAX], hi[PAR_MAX];
	int nonfinite[PAR_MAX], level[PAR_MAX];
};

static inline __attribute__((always_inline)) void blind_range_body(enum graph_dtype dt, struct blind_par *bp, size_t lo,
									  size_t hi, int p)
{
	double l = INFINITY, h = -INFINITY;
	bp->nonfinite[p] = 0;
	for (size_t i = lo; i < hi; i++) {
		int pp;
		double ev = load(dt, bp->eager, i, &pp);
		if (!isfinite(ev)) {
			bp->nonfinite[p] = 1;
			break;
		}
		l = ev < l ? ev : l;
		h = ev > h ? ev : h;
	}
	bp->lo[p] = l;
	bp->hi[p] = h;
}

static void blind_range_part(void *arg, size_t lo, size_t hi, int p)
{
	struct blind_par *bp = arg;
	switch (bp->dt) {
	case DT_F32: blind_range_body(DT_F32, bp, lo, hi, p); break;
	case DT_F16: blind_range_body(DT_F16, bp, lo, hi, p); break;
	case DT_BF16: blind_range_body(DT_BF16, bp, lo, hi, p); break;
	default: blind_range_body(bp->dt, bp, lo, hi, p); break;
	}
}

static inline __attribute__((always_inline)) void blind_level_body(enum graph_dtype dt, struct blind_par *bp, size_t lo,
									  size_t hi, int p)
{
	int level = 0;
	for (size_t i = lo; i < hi && level < bp->best; i++) {
		int pp;
		double ev = load(dt, bp->eager, i, &pp);
		while (level < bp->best && !within(bp->c, ev, bp->atol, bp->rtol, level))
			level++;
	}
	bp->level[p] = level;
}

static void blind_level_part(void *arg, size_t lo, size_t hi, int p)
{
	struct blind_par *bp = arg;
	switch (bp->dt) {
	case DT_F32: blind_level_body(DT_F32, bp, lo, hi, p); break;
	case DT_F16: blind_level_body(DT_F16, bp, lo, hi, p); break;
	case DT_BF16: blind_level_body(DT_BF16, bp, lo, hi, p); break;
	default: blind_level_body(bp->dt, bp, lo, hi, p); break;
	}
}

int eval_blind_t(enum graph_dtype dt, const void *eager, size_t n)
{
	if (!graph_dtype_is_float(dt) || n < 2)
		return SCORE_T_NEVER;
	double atol[SCORE_N_T], rtol[SCORE_N_T], lo = INFINITY, hi = -INFINITY;
	enum score_dtype sd = eval_score_dtype(dt);
	for (int k = 0; k < SCORE_N_T; k++)
		score_tolerance(sd, SCORE_T_MIN + k, &atol[k], &rtol[k]);
	int parts = par_parts(n);
	struct blind_par *bp = malloc(sizeof(*bp));
	if (bp == NULL)
		parts = 1;
	struct blind_par one;
	if (bp == NULL)
		bp = &one;
	*bp = (struct blind_par){.dt = dt, .eager = eager, .esz = graph_dtype_size(dt), .atol = atol, .rtol = rtol};
	par_for(n, parts, blind_range_part, bp);
	int out = SCORE_T_NEVER;
	for (int p = 0; p < parts; p++) {
		if (bp->nonfinite[p])
			goto done;
		lo = bp->lo[p] < lo ? bp->lo[p] : lo;
		hi = bp->hi[p] > hi ? bp->hi[p] : hi;
	}
	double consts[2] = {0.0, (lo + hi) / 2};
	int best = SCORE_N_T;
	for (int c = 0; c < 2; c++) {
		bp->c = consts[c];
		bp->best = best;
		par_for(n, parts, blind_level_part, bp);
		int level = 0;
		for (int p = 0; p < parts; p++)
			level = bp->level[p] > level ? bp->level[p] : level;
		if (level < best)
			best = level;
	}
	out = best >= SCORE_N_T ? SCORE_T_NEVER : SCORE_T_MIN + best;
done:
	if (bp != &one)
		free(bp);
	return out;
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

void eval_prctl_pdeathsig_kill(void)
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
