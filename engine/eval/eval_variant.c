/* eval_variant.c - one variant of an evaluation (eval_int.h): the checks
 * at every tolerance level on the public and secret sets, the interleaved
 * timing with its verified trials, and the integrity rules on what came back. */
#define _GNU_SOURCE
#include "eval_int.h"
#include <fcntl.h>
#include <sys/random.h>
#include <unistd.h>
#include <errno.h>
#include "sha256.h"
#include "file.h"
#include "kacct.h"
#include "proc.h"
#include "inputs.h"
#include "pool.h"
#include "traffic.h"

/* Whether a is worse than b: a larger level, or the same level further out. */
static int worst_beats(const struct worst *a, const struct worst *b)
{
	if (a->output < 0)
		return 0;
	if (b->output < 0 || a->min_t != b->min_t)
		return b->output < 0 || a->min_t > b->min_t;
	return a->excess > b->excess;
}

static double median_of(double *a, int n, double *iqr_ratio)
{
	eval_sort(a, n);
	double med = n % 2 ? a[n / 2] : (a[n / 2 - 1] + a[n / 2]) / 2;
	double q1 = a[n / 4], q3 = a[(3 * n) / 4 < n ? (3 * n) / 4 : n - 1];
	*iqr_ratio = med > 0 ? (q3 - q1) / med : 0;
	return med;
}

/* Compares one set's pass outputs with eager's; returns the smallest t at
 * which all outputs pass (SCORE_T_NEVER when none) and fills *w with the
 * worst element, or flags poison (with where filled). */
static int compare_set(struct ctx *c, int pass_slot, int eager_set, int *poisoned, struct vresult *vr,
		       struct worst *w, struct blind *bl, char *where, size_t wlen)
{
	int worst = SCORE_T_MIN;
	*poisoned = 0;
	w->output = -1;
	w->min_t = SCORE_T_MIN;
	if (bl)
		bl->output = -1;
	for (int o = 0; o < c->v->n_outputs; o++) {
		const struct graph_value *x = &c->v->values[c->v->outputs[o]];
		const unsigned char *p = c->pass_res.base + c->lay.res_out[pass_slot][o];
		const unsigned char *e = c->eager_res.base + c->lay.res_out[eager_set][o];
		struct eval_cmp cmp;
		eval_compare(x->dtype, p, e, (size_t)graph_shape_numel(&x->shape), &cmp);
		if (cmp.poison_at >= 0) {
			*poisoned = 1;
			snprintf(where, wlen, "output %d ('%s') element %lld was never written (it still holds the poison)",
				 o, x->name, (long long)cmp.poison_at);
			return SCORE_T_NEVER;
		}
		if (cmp.max_abs > vr->max_abs_err)
			vr->max_abs_err = cmp.max_abs;
		if (cmp.max_rel > vr->max_rel_err)
			vr->max_rel_err = cmp.max_rel;
		if (cmp.min_t > worst)
			worst = cmp.min_t;
		/* A counted level no tighter than a constant's proves nothing
		 * (at t >= 0 every constant near eager's range passes; the
		 * level rule already covers those).  Where even t = -10 cannot
		 * tell eager from a constant (every value within 1e-10 of zero:
		 * a degenerate output), no pass could be closer: the rule does
		 * not apply, and nothing can be verified there. */
		if (bl && bl->output < 0 && cmp.min_t <= COUNTED_T) {
			int b = eval_blind_t(x->dtype, e, (size_t)graph_shape_numel(&x->shape));
			if (b != SCORE_T_NEVER && b > SCORE_T_MIN && cmp.min_t >= b) {
				bl->output = o;
				bl->blind_t = b;
				bl->pass_t = cmp.min_t;
			}
		}
		struct worst here = {cmp.min_t, cmp.worst_at >= 0 ? o : -1, cmp.worst_at, cmp.worst_pass,
				     cmp.worst_eager, cmp.worst_excess};
		if (worst_beats(&here, w))
			*w = here;
	}
	return worst;
}

/* The worst element's index as a tuple of its output's shape, into idx;
 * returns that output. */
const struct graph_value *eval_worst_index(const struct graph_variant *v, const struct worst *w,
					     long long idx[GRAPH_MAX_DIMS])
{
	const struct graph_value *x = &v->values[v->outputs[w->output]];
	long long rest = w->at;
	for (int d = x->shape.ndim - 1; d >= 0; d--) {
		long long n = x->shape.d[d] > 0 ? x->shape.d[d] : 1;
		idx[d] = rest % n;
		rest /= n;
	}
	return x;
}

/* "t1[3,17,200]": the worst element's output name and index. */
static void worst_where(const struct graph_variant *v, const struct worst *w, char *out, size_t len)
{
	long long idx[GRAPH_MAX_DIMS];
	const struct graph_value *x = eval_worst_index(v, w, idx);
	size_t k = (size_t)snprintf(out, len, "%s[", x->name);
	for (int d = 0; d < x->shape.ndim && k < len; d++)
		k += (size_t)snprintf(out + k, len - k, "%s%lld", d ? "," : "", idx[d]);
	if (k < len)
		snprintf(out + k, len - k, "]");
}

/* What a variant's level means, in words, for its message: "output
 * t1[3,17,200] = 0.5012, eager 0.4981: close only from t = -2 (ok needs
 * -3)".  Empty when no element was compared. */
static void level_message(const struct graph_variant *v, const struct worst *w, int close_t, char *out, size_t len)
{
	char at[200];
	out[0] = 0;
	if (w->output < 0)
		return;
	worst_where(v, w, at, sizeof(at));
	if (close_t == SCORE_T_NEVER)
		snprintf(out, len, "output %s = %.6g, eager %.6g: not close at any t (ok needs t = %d)", at, w->pass,
			 w->eager, OK_T);
	else if (close_t > COUNTED_T)
		snprintf(out, len, "output %s = %.6g, eager %.6g: close only from t = %d, a level whose tolerance "
			 "(atol 1, rtol 1 or looser) accepts even an all-zero output, so it counts as wrong values "
			 "(ok needs t = %d)", at, w->pass, w->eager, close_t, OK_T);
	else
		snprintf(out, len, "output %s = %.6g, eager %.6g: close only from t = %d (ok needs %d)", at, w->pass,
			 w->eager, close_t, OK_T);
}

/* Whether the pass left the inputs of result slot `slot` as loaded: input
 * set `set`, rotated by rot[] (NULL: not rotated; see w_load_set). */
static int check_inputs_unchanged(struct ctx *c, int slot, int set, const uint64_t *rot, char *where, size_t wlen)
{
	for (int i = 0; i < c->v->n_inputs; i++) {
		const unsigned char *after = c->pass_res.base + c->lay.res_in_after[slot][i];
		/* set < 0: the fresh set of a counted call (fresh_set) */
		const unsigned char *src = set < 0 ? c->fresh[i] : c->in.base + c->lay.in_off[set][i];
		if (set < 0)
			rot = NULL;
		size_t bytes = c->lay.in_bytes[i], esz = graph_dtype_size(c->v->values[i].dtype);
		size_t n = esz ? bytes / esz : 0, r = rot && n ? (size_t)(rot[i] % n) : 0;
		if (!eval_same_bytes(after, src + r * esz, (n - r) * esz) || !eval_same_bytes(after + (n - r) * esz, src, r * esz)) {
			snprintf(where, wlen, "the pass wrote into its input %d ('%s'); inputs are read-only", i,
				 c->v->values[i].name);
			return 0;
		}
	}
	return 1;
}

/* A 64-bit generator for the parent's draws (rotations, which trials to
 * verify): splitmix64, seeded from getrandom after the pass worker forked,
 * so its state never existed in that process. */
static uint64_t rng_next(uint64_t *s)
{
	uint64_t z = (*s += 0x9e3779b97f4a7c15ull);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

static uint64_t rng_seed(void)
{
	uint64_t s;
	if (getrandom(&s, sizeof(s), 0) != sizeof(s))
		s = (uint64_t)base_now_ms() * 0x9e3779b97f4a7c15ull ^ (uint64_t)getpid();
	return s;
}

/* The first poisoned element of the pass's outputs in a result slot:
 * returns 1 with where filled, else 0. */
static int timed_poison(struct ctx *c, int slot, char *where, size_t wlen)
{
	for (int o = 0; o < c->v->n_outputs; o++) {
		const struct graph_value *x = &c->v->values[c->v->outputs[o]];
		long long at = eval_find_poison(x->dtype, c->pass_res.base + c->lay.res_out[slot][o],
						(size_t)graph_shape_numel(&x->shape));
		if (at >= 0) {
			snprintf(where, wlen, "output %d ('%s') element %lld was never written (it still holds the poison)",
				 o, x->name, at);
			return 1;
		}
	}
	return 0;
}
void eval_fail_variant(struct vresult *vr, enum score_status st, const char *fmt, ...)
{
	va_list ap;
	vr->status = st;
	vr->min_t = SCORE_T_NEVER;
	va_start(ap, fmt);
	vsnprintf(vr->msg, sizeof(vr->msg), fmt, ap);
	va_end(ap);
}

static enum score_status status_of_rc(int rc)
{
	switch (rc) {
	case PF_ERR_UNSUPPORTED: return SCORE_UNSUPPORTED;
	case PF_ERR_NOT_IMPLEMENTED: return SCORE_NOT_IMPLEMENTED;
	default: return SCORE_RUNTIME_ERROR;
	}
}

/* The step limit for the rest of an evaluation once a variant timed out:
 * a tenth of it, at least 1 s (and never more than it was): 2 s for the
 * default 20 s. */
double eval_after_timeout_s(double timeout_s)
{
	double t = timeout_s / 10 > 1 ? timeout_s / 10 : 1;
	return t < timeout_s ? t : timeout_s;
}

/* The pass worker's step failed: turn how into a verdict. */
static void worker_step_verdict(struct worker *pw, int step, const struct reply *r, struct vresult *vr,
				const struct ctx *c)
{
	char how[300] = "";
	if (step == STEP_TIMEOUT) {
		worker_stop(pw, 1, NULL, 0);
		if (c->timed_out)
			eval_fail_variant(vr, SCORE_TIMEOUT,
				     "the pass did not finish within %g s (the limit once variant '%s' timed out)",
				     c->timeout_s, c->timed_out);
		else
			eval_fail_variant(vr, SCORE_TIMEOUT, "the pass did not finish within %g s", c->timeout_s);
		return;
	}
	if (step == STEP_DIED) {
		worker_stop(pw, 1, how, sizeof(how));
		/* The kernel's word (the exit status the SIGSYS handler sets, or
		 * death by SIGSYS) says the sandbox stopped it; the report line
		 * only says which call.  The line comes from inside the worker,
		 * where pass code can write it too, so once pass code may have
		 * run it can make the verdict worse, never better: "made by the
		 * GPU driver" is believed only from a worker that had not yet
		 * said it was ready (no pass code had been called). */
		int sandboxed = (WIFEXITED(pw->status) && WEXITSTATUS(pw->status) == SANDBOX_EXIT_STATUS) ||
				(WIFSIGNALED(pw->status) && WTERMSIG(pw->status) == SIGSYS);
		int reported = strstr(how, "forbidden system call") != NULL;
		if ((sandboxed || reported) && !pw->pass_ran && strstr(how, "made by the GPU driver"))
			eval_fail_variant(vr, SCORE_RUNTIME_ERROR, "%s (a limit of passfs's sandbox, not the pass's doing: "
				     "PASSFS_SANDBOX_AUDIT lists what the driver needs)", how);
		else if ((sandboxed || reported) && strstr(how, "made by the GPU driver"))
			eval_fail_variant(vr, SCORE_REJECTED, "%s: a pass may not use files, the network or processes "
				     "(the worker says the GPU driver made the call, but pass code had run in it and "
				     "can write that line too; PASSFS_SANDBOX_AUDIT lists what the driver needs)", how);
		else if (reported)
			eval_fail_variant(vr, SCORE_REJECTED, "%s: a pass may not use files, the network or processes", how);
		else if (sandboxed)
			eval_fail_variant(vr, SCORE_REJECTED, "sandbox: a forbidden system call (the worker exited with the "
				     "sandbox's status %d%s%.200s): a pass may not use files, the network or processes",
				     SANDBOX_EXIT_STATUS, how[0] ? "; its report: " : "", how);
		else
			eval_fail_variant(vr, SCORE_RUNTIME_ERROR, "the pass crashed: %s", how[0] ? how : "the worker died");
		return;
	}
	/* a line the sandbox wrote while the worker lives on (the driver ran
	 * out of pre-opened descriptors, and the call failed) explains it */
	char note[256];
	ssize_t n = read(pw->report_fd, note, sizeof(note) - 1);
	note[n > 0 ? n : 0] = 0;
	note[strcspn(note, "\n")] = 0;
	eval_fail_variant(vr, status_of_rc(r->status), "%s%s%s", r->msg[0] ? r->msg : "the replacement failed",
		     note[0] ? "; " : "", note);
}

/* Per kernel (lowered name) over traced calls: the median time and launch
 * count per call, the slowest first, as a JSON array. */
static json_t *kernel_medians_json(const struct trial_gpu *g, int n)
{
	json_t *arr = json_array();
	double *ms = malloc(sizeof(double) * (size_t)(n ? n : 1)), *cnt = malloc(sizeof(double) * (size_t)(n ? n : 1));
	char seen[GPU_TRACE_MAX_KERNELS][sizeof(g->tr.kernels[0].name)];
	int n_seen = 0;
	for (int t = 0; ms && cnt && t < n; t++)
		for (int q = 0; g[t].valid && q < g[t].tr.n_names && q < GPU_TRACE_MAX_KERNELS; q++) {
			const char *name = g[t].tr.kernels[q].name;
			int dup = 0;
			for (int s = 0; s < n_seen && !dup; s++)
				dup = strcmp(seen[s], name) == 0;
			if (dup || n_seen == GPU_TRACE_MAX_KERNELS)
				continue;
			snprintf(seen[n_seen++], sizeof(seen[0]), "%s", name);
			int m = 0;
			for (int u = 0; u < n; u++) {
				if (!g[u].valid)
					continue;
				double a = 0, c = 0;
				for (int r = 0; r < g[u].tr.n_names && r < GPU_TRACE_MAX_KERNELS; r++)
					if (strcmp(g[u].tr.kernels[r].name, name) == 0) {
						a = g[u].tr.kernels[r].ms;
						c = g[u].tr.kernels[r].count;
					}
				ms[m] = a;
				cnt[m++] = c;
			}
			double iqr;
			double med = median_of(ms, m, &iqr), calls = median_of(cnt, m, &iqr);
			char cxx[512];
			json_t *one = json_pack("{s:s, s:f, s:f}", "name", name, "ms", eval_round(med, 5), "calls", calls);
			if (gpu_demangle(name, cxx, sizeof cxx) == 0)
				json_object_set_new(one, "kernel", json_string(cxx));
			size_t at = json_array_size(arr);
			for (size_t i = 0; i < json_array_size(arr); i++)
				if (json_real_value(json_object_get(json_array_get(arr, i), "ms")) < med) {
					at = i;
					break;
				}
			json_array_insert_new(arr, at, one);
		}
	free(ms);
	free(cnt);
	return arr;
}

static double trial_gpu_median(const struct trial_gpu *g, int n, int what, int *count)
{
	double *a = malloc(sizeof(double) * (size_t)(n ? n : 1)), iqr;
	int m = 0;
	*count = 0;
	if (a == NULL)
		return 0;
	for (int k = 0; k < n; k++)
		if (g[k].valid)
			a[m++] = what == 0 ? g[k].tr.kernel_ms : what == 1 ? g[k].tr.span_ms : g[k].tr.n_kernels;
	double med = m ? median_of(a, m, &iqr) : 0;
	free(a);
	*count = m;
	return med;
}

/* The median of the per-pair ratios eager/pass over n paired trials, and its
 * 95% interval from order statistics of the sorted log ratios (distribution
 * free: the median lies between the k-th smallest and the k-th largest of n
 * with k = floor(n/2 - 0.98*sqrt(n)), at least 95% of the time).  A pair
 * shares the machine's load of its moment, which the ratio cancels;
 * bench/rescore.sh measures this against the ratio of the two medians.
 * lo = hi = the estimate when n < 4 (no interval yet). */
static void paired_speedup(const double *te, const double *tp, int n, double *est, double *lo, double *hi)
{
	double *lr = malloc(sizeof(double) * (size_t)(n > 0 ? n : 1));
	int m = 0;
	*est = *lo = *hi = 0;
	if (lr == NULL)
		return;
	for (int k = 0; k < n; k++)
		if (te[k] > 0 && tp[k] > 0)
			lr[m++] = log(te[k] / tp[k]);
	if (m > 0) {
		eval_sort(lr, m);
		double med = m % 2 ? lr[m / 2] : (lr[m / 2 - 1] + lr[m / 2]) / 2;
		int j = (int)floor(m / 2.0 - 0.98 * sqrt((double)m));
		*est = exp(med);
		*lo = m >= 4 && j >= 0 ? exp(lr[j]) : *est;
		*hi = m >= 4 && j >= 0 ? exp(lr[m - 1 - j]) : *est;
	}
	free(lr);
}

/* Whether the paired speedup of n trials is known to SPEEDUP_TIGHT: its 95%
 * interval within +-3% (in log terms) of the estimate. */
static int speedup_tight(const double *te, const double *tp, int n)
{
	double est, lo, hi;
	if (n < ADAPT_MIN_TRIALS)
		return 0;
	paired_speedup(te, tp, n, &est, &lo, &hi);
	return est > 0 && lo > 0 && log(hi / lo) / 2 <= log(1 + SPEEDUP_TIGHT);
}

/* Whether a timing run is unstable: either side's spread (IQR / median)
 * over 0.2, and the paired speedup's 95% interval wider than +-10% (load
 * that moved both sides of each pair alike cancels in the ratio the score
 * uses: no reason to time again).  With fewer than 4 trials there is no
 * interval, and the spreads alone decide. */
int eval_timing_unstable(const struct vresult *vr)
{
	if (!(vr->eager_iqr > 0.2 || vr->pass_iqr > 0.2))
		return 0;
	if (vr->trials < 4 || !(vr->speedup_lo > 0) || !(vr->speedup_hi > 0) || vr->speedup_hi == vr->speedup_lo)
		return 1;
	return log(vr->speedup_hi / vr->speedup_lo) / 2 > log(1.10);
}

/* A fresh rotation of the public inputs for one run (a timed trial, a
 * counted call): each drawn input rotated by a random offset; literal data
 * is part of the task, not a draw. */
static void fresh_rotation(const struct ctx *c, uint64_t *rng, uint64_t *rot)
{
	for (int i = 0; i < c->v->n_inputs; i++) {
		long long n = graph_shape_numel(&c->v->values[i].shape);
		rot[i] = c->v->gen[i].data == NULL && n > 1 ? rng_next(rng) % (uint64_t)n : 0;
	}
}

/* A fresh input set for one counted call: drawn by the task's rules from a
 * seed the parent draws now (literal data as given), kept in c->fresh for
 * the checks, and written into both workers' result areas, where the
 * command (cmd.fresh) loads it from.  A pass that kept the public inputs
 * (or their rotations) in its own memory has nothing that fits them, so
 * every byte a counted call uses comes from device memory, where the
 * kernel counts it.  0, or -1 out of memory. */
static int fresh_set(struct ctx *c, uint64_t *rng)
{
	void *bufs[GRAPH_MAX_IO];
	for (int i = 0; i < c->v->n_inputs; i++) {
		free(c->fresh[i]);
		if ((c->fresh[i] = malloc(c->lay.in_bytes[i] ? c->lay.in_bytes[i] : 1)) == NULL)
			return -1;
		bufs[i] = c->fresh[i];
	}
	inputs_fill(c->v, rng_next(rng), bufs);
	for (int i = 0; i < c->v->n_inputs; i++) {
		memcpy(c->eager_res.base + c->lay.res_in_after[TIMED_SLOT][i], c->fresh[i], c->lay.in_bytes[i]);
		memcpy(c->pass_res.base + c->lay.res_in_after[TIMED_SLOT][i], c->fresh[i], c->lay.in_bytes[i]);
	}
	return 0;
}

/* Verifies a run stored in TIMED_SLOT on inputs rotated by rot (a timed
 * trial), or on the fresh set of c->fresh when rot is NULL (a counted call): the inputs unchanged, then every output against
 * eager's on the same inputs, by the secret set's rule (right from OK_T on
 * the checked runs: not close at any counted level here is a rejection);
 * the variant's level is the worst over every verified run.  Returns 0, or
 * -1 with the verdict set.  (The caller checked the poison first.) */
static int verify_run(struct ctx *c, struct vresult *vr, const char *what, const uint64_t *rot, int check_min_t)
{
	char tw[400];
	int poisoned;
	vr->timed_checked++;
	if (!check_inputs_unchanged(c, TIMED_SLOT, rot == NULL ? -1 : 0, rot, tw, sizeof(tw))) {
		eval_fail_variant(vr, SCORE_REJECTED, "%s: %s", what, tw);
		return -1;
	}
	struct worst tw_worst;
	int tt = compare_set(c, TIMED_SLOT, TIMED_SLOT, &poisoned, vr, &tw_worst, NULL, tw, sizeof(tw));
	if (check_min_t <= OK_T && tt > COUNTED_T) {
		char lv[640];
		worst_where(c->v, &tw_worst, tw, sizeof(tw));
		if (tt == SCORE_T_NEVER)
			snprintf(lv, sizeof(lv), "not close at any t (%s = %.6g, eager %.6g)", tw, tw_worst.pass,
				 tw_worst.eager);
		else
			snprintf(lv, sizeof(lv), "close only from t = %d (%s = %.6g, eager %.6g)", tt, tw, tw_worst.pass,
				 tw_worst.eager);
		eval_fail_variant(vr, SCORE_REJECTED,
			     "the outputs of %s (fresh inputs) are %s, though the checked runs were close from "
			     "t = %d: the results do not follow each call's inputs",
			     what, lv, check_min_t);
		return -1;
	}
	if (tt > vr->close_t || (tt == vr->close_t && worst_beats(&tw_worst, &vr->worst))) {
		vr->close_t = tt;
		vr->worst = tw_worst;
	}
	return 0;
}

/* ---- the modeled H200 time (cpu backend, gpu/traffic.h) ---- */

/* What names the model's constants in eager's cache key: change it with
 * them (a cached eager model is then measured again). */
#define MODEL_ID "h200 model 2: launch 0.003 ms, call 0.010 ms, 4.3e9 B/ms, 132 SMs x 2048, 32 blocks/SM, x20, share 0.05 an octave, 3 calls, clock off, eager 4 a thread, host or device, resume 10 ns, group mean, host less launches, host by CPU time, 8 short calls, hiccups, kernel floor: shared pages referenced, reductions split over blocks, eager GEMM/conv as cuBLAS/cuDNN: 6.7e10 and 9.89e11 FLOP/ms, x0.7, tiles 64, split-K 256 to the fullest waves, the output stored after, barrier and warp-exchange bookkeeping untimed, hiccups counted from raw thread time"

const char *eval_scoring(const char *backend)
{
	if (backend != NULL && strcmp(backend, "cpu") == 0 && eval_cpu_speedup_modeled())
		return "modeled_h200: " MODEL_ID;
	return "measured";
}

/* The floor the kernel's accounting puts under a side's modeled time
 * (kacct.h): a launch and the shared (device) memory its bytes call
 * referenced, at the model's bandwidth - the memory roofline of the bytes
 * the call really touched.  Pass code can write every number of its own
 * process but not these: whatever it does to the runtime's records, its
 * call is modeled no faster than moving what it touched.  The CPU time of
 * every thread of its timed calls (the least) is read too, as information:
 * it holds the emulation's own costs (fibers, this CPU's libm), which must
 * not reach the score (docs/integrity.md, "The model's numbers"). */
struct kfloor {
	double bytes;           /* -1: not read */
	double cpu_ms;          /* -1: not read */
	double floor_ms;
};

static void kfloor_reset(struct kfloor *k)
{
	k->bytes = -1;
	k->cpu_ms = -1;
	k->floor_ms = 0;
}

/* Takes one counted call's reading into k (the least CPU of the timed
 * calls). */
static void kfloor_take(struct kfloor *k, const struct kacct_call *kc, int bytes_step)
{
	if (bytes_step) {
		if (kc->have_bytes)
			k->bytes = (double)kc->bytes;
	} else if (kc->cpu_ms > 0 && (k->cpu_ms < 0 || kc->cpu_ms < k->cpu_ms)) {
		k->cpu_ms = kc->cpu_ms;
	}
}

/* The floor, or 0 when the kernel's numbers are missing. */
static double kfloor_ms(struct kfloor *k)
{
	if (k->bytes < 0)
		return k->floor_ms = 0;
	return k->floor_ms = MODEL_LAUNCH_MS + k->bytes / MODEL_BYTES_PER_MS;
}

/* The key eager's cached models are signed with (HMAC-SHA-256), kept
 * apart from the cache: PASSFS_MODEL_KEY names its file, else
 * $XDG_CONFIG_HOME/passfs/model.key, else ~/.config/passfs/model.key; 32
 * random bytes made on first use, mode 0600.  A cache directory shared or
 * written by someone else holds no model passfs will read.  0 or -1. */
static int model_key(unsigned char key[32])
{
	char path[4096];
	const char *e = getenv("PASSFS_MODEL_KEY"), *x = getenv("XDG_CONFIG_HOME"), *h = getenv("HOME");
	if (e != NULL && *e)
		snprintf(path, sizeof(path), "%s", e);
	else if (x != NULL && *x)
		snprintf(path, sizeof(path), "%s/passfs/model.key", x);
	else if (h != NULL && *h)
		snprintf(path, sizeof(path), "%s/.config/passfs/model.key", h);
	else
		return -1;
	for (int tries = 0; tries < 2; tries++) {
		size_t n = 0;
		int rerr = 0;
		char *t = base_read_file(path, 32, &n, &rerr);
		if (t != NULL) {
			if (n == 32)
				memcpy(key, t, 32);
			explicit_bzero(t, n);
			free(t);
			return n == 32 ? 0 : -1;
		}
		if (rerr != ENOENT)
			return -1;
		char dir[4096];
		snprintf(dir, sizeof(dir), "%s", path);
		char *slash = strrchr(dir, '/');
		if (slash && slash != dir) {
			*slash = 0;
			base_mkdirs(dir, 0700);
		}
		unsigned char fresh[32];
		if (getrandom(fresh, sizeof(fresh), 0) != (ssize_t)sizeof(fresh))
			return -1;
		int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
		if (fd >= 0) {
			int w = base_write_all(fd, fresh, sizeof(fresh));
			explicit_bzero(fresh, sizeof(fresh));
			close(fd);
			if (w != 0) {
				unlink(path);
				return -1;
			}
		} else if (errno != EEXIST) {
			return -1;
		}
	}
	return -1;
}

/* The signature of a cached model's line (without its newline). */
static int model_sign(const char *line, size_t len, char hex[65])
{
	unsigned char key[32];
	if (model_key(key) != 0) {
		explicit_bzero(key, sizeof(key));
		return -1;
	}
	int rc = hmac_sha256_hex(key, sizeof(key), line, len, hex);
	/* The key is read where it is used and wiped after (here, in
	 * model_key's buffer, inside the HMAC): a pass worker forked after
	 * this (the one for the next variant, after a crash) copies this
	 * process's memory, and a pass that found the key in it could sign
	 * an eager model of its choosing (tests/model/m08_finds_model_key.c). */
	explicit_bzero(key, sizeof(key));
	return rc;
}

/* A model's numbers as the cache holds them (the signature is over this
 * text): the line's length, or -1 when it does not fit. */
static int model_line_format(char *line, size_t len, const struct count_reply *m, const struct kfloor *k)
{
	const struct gpu_traffic *g = &m->tr;
	int n = snprintf(line, len, "%llu %llu %llu %.9g %.9g %.9g %.9g %.9g %d %.9g %.9g %.9g",
			 (unsigned long long)g->launches, (unsigned long long)g->bytes,
			 (unsigned long long)g->threads, g->model_ms, g->mem_ms, g->path_ms, g->par_ms, m->host_ms,
			 g->approx, k->bytes, k->cpu_ms, k->floor_ms);
	return n > 0 && (size_t)n < len ? n : -1;
}

/* The numbers of a cache line (without its signature) into *out and *k:
 * 0, or -1 when the line is not twelve numbers. */
static int model_line_parse(const char *t, struct count_reply *out, struct kfloor *k)
{
	struct gpu_traffic *g = &out->tr;
	unsigned long long l, b, th;
	memset(out, 0, sizeof(*out));
	int n = sscanf(t, "%llu %llu %llu %lf %lf %lf %lf %lf %d %lf %lf %lf", &l, &b, &th, &g->model_ms, &g->mem_ms,
		       &g->path_ms, &g->par_ms, &out->host_ms, &g->approx, &k->bytes, &k->cpu_ms, &k->floor_ms);
	if (n != 12)
		return -1;
	g->launches = l;
	g->bytes = b;
	g->threads = th;
	g->timed = 1;
	return 0;
}

/* Eager's model of a variant does not depend on the pass: it is kept in
 * the cache (gpu_cache_dir "model", a line of numbers per variant, keyed
 * by eager_model_key) so that a task's later evaluations do not count it
 * again.  0 with *out filled, or -1. */
static int eager_model_cached(const struct graph_variant *v, struct count_reply *out, struct kfloor *k, char *path,
			      size_t plen)
{
	char dir[4096], key[65];
	path[0] = 0;
	if (gpu_cache_dir("model", dir, sizeof(dir)) != 0 || eager_model_key(v, MODEL_ID, key) != 0)
		return -1;
	snprintf(path, plen, "%s/eager-%s", dir, key);
	size_t len = 0;
	int e = 0;
	char *t = base_read_file(path, 4096, &len, &e);
	if (t == NULL)
		return -1;
	/* "numbers sig=HEX": the numbers count only under passfs's own
	 * signature (an edited or copied-in line is counted again) */
	char *sig = strstr(t, " sig="), want[65];
	if (sig == NULL || model_sign(t, (size_t)(sig - t), want) != 0 || strncmp(sig + 5, want, 64) != 0) {
		free(t);
		return -1;
	}
	*sig = 0;
	int rc = model_line_parse(t, out, k);
	free(t);
	return rc;
}

/* Stores a counted model in the cache, and leaves *m and *k as the line
 * holds them: a fresh count scores with the numbers every later read of
 * the cache gets (not their unrounded forms, a last digit apart). */
static void eager_model_store(const char *path, struct count_reply *m, struct kfloor *k)
{
	char line[640];
	const struct gpu_traffic *g = &m->tr;
	if (g->uncounted || g->mismatch || !g->timed || !(k->floor_ms > 0))
		return;
	int n = model_line_format(line, sizeof(line), m, k);
	if (n < 0 || model_line_parse(line, m, k) != 0 || !path[0])
		return;
	/* the numbers, then their signature */
	char sig[65];
	if (model_sign(line, (size_t)n, sig) != 0)
		return;
	int m2 = snprintf(line + n, sizeof(line) - (size_t)n, " sig=%s\n", sig);
	if (m2 <= 0 || (size_t)m2 >= sizeof(line) - (size_t)n)
		return;
	n += m2;
	base_write_atomic(path, ".eager-", line, (size_t)n, 0600, 0);
}

/* One command to the eager worker; -1 with err set when it failed or died. */
static int eager_step(struct ctx *c, struct worker *ew, const struct cmd *cm, char *err, size_t errlen)
{
	struct reply r;
	double t1[MAX_BATCH];
	int step = worker_step(ew, 600, cm, &r, t1);
	if (step == STEP_OK && r.status == PF_OK)
		return 0;
	snprintf(err, errlen, "eager baseline failed on variant '%s': %s", c->v->name,
		 step == STEP_OK ? r.msg : "the eager worker died");
	return -1;
}

/* Eager's model of variant c->v: the cache's (signed) line, else counted
 * on the launches a GPU would run and stored.  *threads gets the most
 * threads eager's worker had in a counted call (-1: none counted, from the
 * cache).  0, or -1 when a counted call failed. */
static int eager_model(struct ctx *c, struct worker *ew, struct count_reply *er, struct kfloor *ek, int *threads,
		       int *cached)
{
	struct reply r;
	double t1[MAX_BATCH];
	struct kacct_call kc;
	char cpath[4200];
	kfloor_reset(ek);
	*threads = -1;
	*cached = eager_model_cached(c->v, er, ek, cpath, sizeof(cpath)) == 0;
	if (*cached)
		return 0;
	for (int step = 0, last = MODEL_TIMED_CALLS; step <= last; step++) {
		struct cmd cm = {.op = CMD_COUNT, .set = 0, .count = step == 0 ? COUNT_STEP_BYTES : COUNT_STEP_TIMES};
		int st = worker_step_counted(ew, 600, &cm, &r, t1, step == 0, &kc);
		if (st != STEP_OK || r.status != PF_OK || ew->payload_len != (int)sizeof(*er) || kc.out_of_order)
			return -1;
		memcpy(er, ew->payload, sizeof(*er));
		kfloor_take(ek, &kc, step == 0);
		if (kc.threads > *threads)
			*threads = kc.threads;
		/* eager's model is kept: more calls than the pass's */
		if (step == 1)
			last = t1[0] < MODEL_SHORT_CALL_MS ? MODEL_TIMED_CALLS_SHORT : MODEL_TIMED_CALLS_EAGER;
	}
	kfloor_ms(ek);
	eager_model_store(cpath, er, ek);
	return 0;
}

/* A side's modeled ms from its counted calls: launches are asynchronous on
 * a GPU, so the host's work hides behind the kernels' and only shows where
 * it is the longer (each launch's own host work, the emulator's here, is in
 * its MODEL_LAUNCH_MS); the kernel's floor under it; then the call's own
 * cost (MODEL_CALL_MS: the sync that ends it), which every call pays. */
static double side_model_ms(const struct count_reply *m, const struct kfloor *k)
{
	double h = m->host_ms - (double)m->tr.launches * MODEL_LAUNCH_MS;
	double t = m->tr.model_ms > h ? m->tr.model_ms : h;
	return (t < k->floor_ms ? k->floor_ms : t) + MODEL_CALL_MS;
}

int eval_eager_model(struct ctx *c, int k, struct worker *ew, struct eager_model_result *out, char *err,
		     size_t errlen)
{
	memset(out, 0, sizeof(*out));
	if (ew->variant != k) {
		if (eager_step(c, ew, &(struct cmd){.op = CMD_VARIANT, .variant = k}, err, errlen))
			return -1;
		ew->variant = k;
	}
	struct count_reply er;
	struct kfloor ek;
	int threads;
	if (eager_model(c, ew, &er, &ek, &threads, &out->cached) != 0) {
		snprintf(err, errlen, "eager's counted calls failed on variant '%s'", c->v->name);
		return -1;
	}
	out->tr = er.tr;
	out->host_ms = er.host_ms;
	out->kbytes = ek.bytes;
	out->kcpu_ms = ek.cpu_ms;
	out->floor_ms = ek.floor_ms;
	out->model_ms = er.tr.uncounted || !er.tr.timed || !(ek.floor_ms > 0) ? 0 : side_model_ms(&er, &ek);
	return 0;
}

/* Counted calls (CMD_COUNT): eager's on the launches a GPU would run (the
 * cache first), then the pass's, each on a fresh rotation of the public
 * inputs like a timed trial's, with eager's run on the same rotation
 * beside it, and verified like a trial: one with each launch's memory
 * traffic counted, then MODEL_TIMED_CALLS with each launch's CUDA threads
 * timed (the least time of each launch counts).  The pass's host code may
 * not touch device memory meanwhile (the guard: on a GPU that faults).
 * Returns TIME_DONE / TIME_STOP when the pass's call failed or was
 * rejected (its verdict is set), else 0; vr->modeled says whether both
 * sides got a model. */
static int model_variant(struct ctx *c, struct worker *ew, struct worker *pw, struct vresult *vr)
{
	struct reply r;
	double t1[MAX_BATCH];
	struct count_reply er, pr;
	struct kacct_call kc;
	struct kfloor ek, pk;
	kfloor_reset(&pk);
	int eager_threads, cached;
	int have_eager = eager_model(c, ew, &er, &ek, &eager_threads, &cached) == 0;
	/* The worker's threads are passfs's: the emulator's pool and the
	 * one that takes commands.  A thread of the pass's own (a raw clone)
	 * could work outside the counted window. */
	int threads_max = pool_default_threads() + 1;
	if (eager_threads > threads_max)
		threads_max = eager_threads;
	uint64_t rng = rng_seed();
	int check_min_t = vr->close_t;
	/* each timed call's own modeled time (information: how sure the
	 * model is; the scored one takes each launch's least) */
	double call_lo = 0, call_lo2 = 0, call_hi = 0;
	int calls = 0;
	for (int step = 0, last = MODEL_TIMED_CALLS; step <= last; step++) {
		struct cmd cm = {.op = CMD_TIME, .set = 0, .count = 1, .fresh = 1};
		if (fresh_set(c, &rng))
			return 0;
		/* eager's outputs on these inputs, to verify the pass's */
		int st = worker_step(ew, 600, &cm, &r, t1);
		if (st != STEP_OK || r.status != PF_OK)
			return 0;
		cm.op = CMD_COUNT;
		cm.count = step == 0 ? COUNT_STEP_BYTES : COUNT_STEP_TIMES;
		st = worker_step_counted(pw, c->timeout_s, &cm, &r, t1, step == 0, &kc);
		char what[96], tw[400];
		snprintf(what, sizeof(what), "counted run %d of %d (the modeled GPU time)", step + 1, last + 1);
		if (st == STEP_OK && kc.out_of_order) {
			eval_fail_variant(vr, SCORE_REJECTED,
				     "%s: the worker's messages around the call were out of order: pass code wrote to "
				     "passfs's socket",
				     what);
			return TIME_STOP;
		}
		if (st != STEP_OK || r.status != PF_OK) {
			worker_step_verdict(pw, st, &r, vr, c);
			return TIME_DONE;
		}
		if (kc.threads > threads_max) {
			eval_fail_variant(vr, SCORE_REJECTED,
				     "%s: the pass's worker has %d threads where passfs made %d: a pass may not make "
				     "threads",
				     what, kc.threads, threads_max);
			return TIME_STOP;
		}
		if (pw->payload_len != (int)sizeof(pr))
			return 0;
		memcpy(&pr, pw->payload, sizeof(pr));
		kfloor_take(&pk, &kc, step == 0);
		if (step > 0 && pr.tr.timed) {
			struct count_reply one = pr;
			struct kfloor kf = pk;
			one.tr.model_ms = pr.tr.call_model_ms;
			kfloor_ms(&kf);
			double m = side_model_ms(&one, &kf);
			if (calls == 0 || m < call_lo) {
				call_lo2 = call_lo;
				call_lo = m;
			} else if (calls == 1 || m < call_lo2) {
				call_lo2 = m;
			}
			call_hi = calls == 0 || m > call_hi ? m : call_hi;
			calls++;
		}
		/* short calls: more of them (a machine's hiccup is a large share
		 * of a short launch, and the least of more calls misses it) */
		if (step == 1 && t1[0] < MODEL_SHORT_CALL_MS)
			last = MODEL_TIMED_CALLS_SHORT;
		if (pr.guard_touches > 0) {
			eval_fail_variant(vr, SCORE_REJECTED,
				     "%s: the pass's host code touched device memory outside its kernels (%llu "
				     "page%s, the first at %#llx): on a GPU that faults; compute in kernels",
				     what, (unsigned long long)pr.guard_touches, pr.guard_touches == 1 ? "" : "s",
				     (unsigned long long)pr.guard_first);
			return TIME_STOP;
		}
		if (timed_poison(c, TIMED_SLOT, tw, sizeof(tw))) {
			eval_fail_variant(vr, SCORE_REJECTED, "%s: %s", what, tw);
			return TIME_STOP;
		}
		if (verify_run(c, vr, what, NULL, check_min_t))
			return TIME_STOP;
	}
	if (!have_eager)
		return 0;
	kfloor_ms(&pk);
	vr->eager_traffic = er.tr;
	vr->pass_traffic = pr.tr;
	vr->eager_kbytes = ek.bytes;
	vr->pass_kbytes = pk.bytes;
	vr->eager_kcpu_ms = ek.cpu_ms;
	vr->pass_kcpu_ms = pk.cpu_ms;
	vr->eager_floor_ms = ek.floor_ms;
	vr->pass_floor_ms = pk.floor_ms;
	/* Without the kernel's numbers for the pass there is no model to
	 * score (the measured speedup is): the runtime's records alone are
	 * the pass's to write. */
	if (er.tr.uncounted || pr.tr.uncounted || !er.tr.timed || !pr.tr.timed || !(pk.floor_ms > 0) ||
	    !(ek.floor_ms > 0))
		return 0;
	vr->modeled = 1;
	vr->eager_host_ms = er.host_ms;
	vr->pass_host_ms = pr.host_ms;
	vr->eager_model_ms = side_model_ms(&er, &ek);
	vr->pass_model_ms = side_model_ms(&pr, &pk);
	vr->model_calls = calls;
	vr->model_spread = calls > 1 && call_lo > 0 ? call_lo2 / call_lo - 1 : 0;
	vr->model_largest = calls > 1 && call_lo > 0 ? call_hi / call_lo - 1 : 0;
	return 0;
}

/* One timing run: warm-up + trials, eager and the pass alternating on the
 * same fresh rotation of the public inputs (see the top of this file). */
static int time_variant(struct ctx *c, struct worker *ew, struct worker *pw, struct eval_shared *es,
			struct vresult *vr, char *err, size_t errlen)
{
	struct reply r;
	double t1[MAX_BATCH];
	int step, out = 0;
	/* The timed trials, then (cuda with CUPTI) a few traced ones for the
	 * GPU's view, checked alike but not in the medians.  The timed trials
	 * go on past c->trials, up to TRIALS_CAP times as many, while the
	 * speedup's interval is wider than SPEEDUP_TIGHT (timed_n shrinks to
	 * where it is tight). */
	int warm = c->warmup;
	int timed_max = warm + (c->trials >= ADAPT_MIN_TRIALS ? c->trials * TRIALS_CAP : c->trials);
	double spent_ms = 0;            /* both sides' timed trials so far, round trips */
	int timed_n = timed_max, alloc = timed_max + c->traced_trials;
	double *te = calloc((size_t)alloc, sizeof(double)), *tp = calloc((size_t)alloc, sizeof(double));
	double *we = calloc((size_t)alloc, sizeof(double)), *wp = calloc((size_t)alloc, sizeof(double));
	struct trial_gpu *ge = calloc((size_t)alloc, sizeof(*ge)), *gp = calloc((size_t)alloc, sizeof(*gp));
	uint64_t rng = rng_seed();
	int check_min_t = vr->close_t;
	if (te == NULL || tp == NULL || we == NULL || wp == NULL || ge == NULL || gp == NULL) {
		snprintf(err, errlen, "out of memory timing variant '%s'", c->v->name);
		out = -1;
		goto end;
	}
	for (int k = 0; k < timed_n + c->traced_trials; k++) {
		int total = timed_n + c->traced_trials;
		struct cmd cm = {.op = CMD_TIME, .set = 0, .count = 1, .trace = k >= timed_n};
		fresh_rotation(c, &rng, cm.rot);
		double t0 = base_now_ms();
		step = worker_step(ew, 600, &cm, &r, t1);
		we[k] = base_now_ms() - t0;
		if (step != STEP_OK || r.status != PF_OK || r.n_times != 1) {
			snprintf(err, errlen, "eager timing failed on variant '%s': %s", c->v->name,
				 step == STEP_OK ? r.msg : "the eager worker died");
			out = -1;
			goto end;
		}
		te[k] = t1[0];
		if (ew->payload_len == (int)sizeof(struct trial_gpu))
			memcpy(&ge[k], ew->payload, sizeof(struct trial_gpu));
		t0 = base_now_ms();
		step = worker_step(pw, c->timeout_s, &cm, &r, t1);
		wp[k] = base_now_ms() - t0;
		if (step != STEP_OK || r.status != PF_OK || r.n_times != 1) {
			worker_step_verdict(pw, step, &r, vr, c);
			out = TIME_DONE;
			goto end;
		}
		tp[k] = t1[0];
		es->prof[PROF_TRIAL_CALLS] += te[k] + tp[k];
		es->prof[PROF_TIMING] -= te[k] + tp[k]; /* the caller adds the wall time */
		if (pw->payload_len == (int)sizeof(struct trial_gpu))
			memcpy(&gp[k], pw->payload, sizeof(struct trial_gpu));
		/* The worker's clock readings happen inside the parent's round
		 * trip; anything else means pass code moved them. */
		if (!(tp[k] > 0) || tp[k] > wp[k]) {
			eval_fail_variant(vr, SCORE_REJECTED,
				     "timed run %d of %d: the worker reported %.4f ms for a call whose round trip "
				     "took %.4f ms: the pass tampered with the timer", k + 1, total, tp[k], wp[k]);
			out = TIME_STOP;
			goto end;
		}
		/* One warm-up call is enough when it is long (the default
		 * warm-up on the cpu backend): the first pair is then the
		 * only warm-up, and the timed trials start with the next. */
		if (k == 0 && warm > 1 && c->auto_warmup && c->budget_ms > 0 && te[0] + tp[0] >= WARM_ENOUGH_MS) {
			timed_n -= warm - 1;
			warm = 1;
			total = timed_n + c->traced_trials;
		}
		/* Enough timed trials once the speedup's interval is tight
		 * (from the count asked for on; with the default count, from
		 * ADAPT_MIN_TRIALS on), or with the default count once the
		 * variant's time budget is spent: this one is then the last. */
		int n_done = k + 1 - warm;
		if (n_done > 0)
			spent_ms += we[k] + wp[k];
		int budgeted = c->auto_trials && c->budget_ms > 0;
		int tight_from = budgeted ? ADAPT_MIN_TRIALS : c->trials;
		int spent = budgeted && n_done >= c->budget_min && spent_ms >= c->budget_ms;
		if (k < timed_n - 1 && n_done > 0 &&
		    ((n_done >= tight_from && speedup_tight(te + warm, tp + warm, n_done)) || spent)) {
			timed_n = k + 1;
			total = timed_n + c->traced_trials;
		}
		/* Every trial: no poison left.  The warm-up and the first
		 * VERIFY_ALL_TRIALS timed trials, then a random quarter (drawn
		 * now, after the trial ran), and the last: every value, and
		 * the inputs.  (A variant whose timing stops after a few
		 * trials has each of them verified.) */
		char tw[400];
		if (timed_poison(c, TIMED_SLOT, tw, sizeof(tw))) {
			eval_fail_variant(vr, SCORE_REJECTED, "timed run %d of %d: %s", k + 1, total, tw);
			out = TIME_STOP;
			goto end;
		}
		if (k != total - 1 && k >= warm + VERIFY_ALL_TRIALS && rng_next(&rng) % 4 != 0)
			continue;
		char what[64];
		snprintf(what, sizeof(what), "timed run %d of %d", k + 1, total);
		if (verify_run(c, vr, what, cm.rot, check_min_t)) {
			out = TIME_STOP;
			goto end;
		}
	}
	/* The parent's own view.  Each worker's round trip minus its reported
	 * time is what it spent outside the timed window; both do the same
	 * copies, so the two should match.  Compared: each side's least such
	 * overhead over the timed trials.  Machine load only ever adds to a
	 * round trip, and it hits the two workers' trials at random, not in
	 * pairs: the median of paired differences used before flagged an
	 * honest pass (a 3.8 ms "excess") and let the tamperer through (6.6x)
	 * with the suite running three tests on two cores.  One quiet trial on
	 * each side is enough, and a tamperer hides time in every trial, so
	 * even its quickest shows it.  A pass whose least overhead exceeds
	 * eager's by more than noise (20 us: with 0.1 ms, a pass taking
	 * 0.11 ms that hid 90% of it went unseen, and scored 7x) and more than
	 * its own reported time did work its reported times do not show: pass
	 * code can reach the worker's clock readings (the same process).  Such
	 * a pass is scored on the parent's estimate instead: its round trips
	 * less eager's least overhead (so a delay that hit eager's trial earns
	 * it nothing).  The medians below sort the arrays: this comes first. */
	double pmin = 0, emin = 0, tpmin = 0;
	double *po_all = calloc((size_t)alloc, sizeof(double)), *eo_all = calloc((size_t)alloc, sizeof(double));
	double *tp_all = calloc((size_t)alloc, sizeof(double));
	int n_o = 0;
	for (int k = warm; k < timed_n; k++) {
		double po = wp[k] - tp[k], eo = we[k] - te[k];
		if (k == warm || po < pmin)
			pmin = po;
		if (k == warm || eo < emin)
			emin = eo;
		if (k == warm || tp[k] < tpmin)
			tpmin = tp[k];
		if (po_all && eo_all && tp_all) {
			po_all[n_o] = po;
			eo_all[n_o] = eo;
			tp_all[n_o++] = tp[k];
		}
	}
	/* The same rule on the medians: a pass that leaves some trials
	 * untouched moves its least overhead back to eager's (one honest
	 * trial was enough), but to move its median time it must hide time in
	 * most trials, and then its median overhead shows it.  Medians of
	 * each side's own trials, not of paired differences: load hits the
	 * two workers' trials at random. */
	double dmy, excess_med = 0, tp_med = 0;
	if (n_o > 0) {
		excess_med = median_of(po_all, n_o, &dmy) - median_of(eo_all, n_o, &dmy);
		tp_med = median_of(tp_all, n_o, &dmy);
	}
	free(po_all);
	free(eo_all);
	free(tp_all);
	double *est = calloc((size_t)alloc, sizeof(double));
	double dummy;

	vr->timing_suspect = 0;
	vr->note[0] = 0;
	for (int k = 0; k < timed_n; k++) {
		if (est)
			est[k] = wp[k] - emin;
		we[k] -= te[k];
	}
	int n_t = timed_n - warm;
	if (c->trial_times) {
		json_decref(vr->trial_ms);
		vr->trial_ms = json_pack("{s:o, s:o}", "eager", json_array(), "pass", json_array());
		for (int k = warm; k < timed_n && vr->trial_ms; k++) {
			json_array_append_new(json_object_get(vr->trial_ms, "eager"), json_real(te[k]));
			json_array_append_new(json_object_get(vr->trial_ms, "pass"), json_real(tp[k]));
		}
	}
	/* the paired estimate first: the medians below sort the arrays */
	paired_speedup(te + warm, tp + warm, n_t, &vr->speedup_paired, &vr->speedup_lo, &vr->speedup_hi);
	vr->overhead_ms = median_of(we + warm, n_t, &dummy);
	vr->eager_ms = median_of(te + warm, n_t, &vr->eager_iqr);
	vr->pass_ms = median_of(tp + warm, n_t, &vr->pass_iqr);
	vr->unexplained_ms = pmin - emin;
	/* Like with like: the least excess against the least reported time
	 * (a pass that hides a fraction f of its time shows f against 1 - f in
	 * its quickest trial, however loaded the machine; against the median
	 * reported time, load that spread the trials let a tamperer through),
	 * or the median excess against the median reported time. */
	int by_min = vr->unexplained_ms > 0.02 && vr->unexplained_ms > tpmin;
	int by_median = excess_med > 0.02 && excess_med > tp_med;
	if (est && (by_min || by_median)) {
		if (!by_min)
			vr->unexplained_ms = excess_med;
		vr->timing_suspect = 1;
		vr->pass_ms_reported = vr->pass_ms;
		vr->pass_ms = median_of(est + warm, n_t, &vr->pass_iqr);
		snprintf(vr->note, sizeof(vr->note),
			 "even the quickest pass trial's round trip took %.3f ms more than eager's quickest beyond the "
			 "%.3f ms the worker reported: the reported times do not cover the pass's work, so pass_ms "
			 "(%.3f) is the parent's estimate", vr->unexplained_ms, vr->pass_ms_reported, vr->pass_ms);
	}
	free(est);
	/* GPU time (CUPTI): the kernels of each timed call on every stream,
	 * reported beside the end-to-end medians the score uses.  GPU work
	 * longer than the host's timed window cannot be (the window ends with
	 * a context-wide sync): the host times missed work, and the pass is
	 * scored on the GPU's span instead. */
	int ne = 0, np = 0, dummy_n, nt = c->traced_trials;
	struct trial_gpu *gte = ge + timed_n, *gtp = gp + timed_n;
	vr->eager_gpu_ms = trial_gpu_median(gte, nt, 0, &ne);
	vr->pass_gpu_ms = trial_gpu_median(gtp, nt, 0, &np);
	vr->gpu_trials = ne < np ? ne : np;
	if (vr->gpu_trials > 0) {
		es->trace_seen = 1;
		vr->eager_span_ms = trial_gpu_median(gte, nt, 1, &dummy_n);
		vr->pass_span_ms = trial_gpu_median(gtp, nt, 1, &dummy_n);
		vr->eager_kernels = (int)trial_gpu_median(gte, nt, 2, &dummy_n);
		vr->pass_kernels = (int)trial_gpu_median(gtp, nt, 2, &dummy_n);
		vr->pass_streams = 0;
		vr->gpu_dropped = 0;
		json_decref(vr->eager_gpu_kernels);
		json_decref(vr->pass_gpu_kernels);
		vr->eager_gpu_kernels = kernel_medians_json(gte, nt);
		vr->pass_gpu_kernels = kernel_medians_json(gtp, nt);
		for (int k = 0; k < nt; k++) {
			if (gtp[k].tr.n_streams > vr->pass_streams)
				vr->pass_streams = gtp[k].tr.n_streams;
			vr->gpu_dropped += gte[k].tr.dropped + gtp[k].tr.dropped;
		}
		/* the traced trials' own end-to-end times: the window that the
		 * GPU span must fit in */
		double traced_host = nt > 0 ? median_of(tp + timed_n, nt, &dummy) : 0;
		if (vr->pass_span_ms > traced_host * 1.02 + 0.005) {
			vr->timing_suspect = 1;
			if (vr->pass_ms_reported == 0)
				vr->pass_ms_reported = vr->pass_ms;
			snprintf(vr->note, sizeof(vr->note),
				 "the pass's GPU work spans %.4f ms per call (CUPTI, every stream) but its traced calls "
				 "measured %.4f ms end to end: the host times missed work, so pass_ms is the GPU span",
				 vr->pass_span_ms, traced_host);
			if (vr->pass_span_ms > vr->pass_ms)
				vr->pass_ms = vr->pass_span_ms;
		}
	}
	vr->trials = n_t;
end:
	free(te), free(tp), free(we), free(wp), free(ge), free(gp);
	return out;
}

/* A pass worker's answer to loading the pass: 0 when ready (its kernel
 * list and tracing note noted), else -1 with the variant failed and the
 * worker stopped. */
static int worker_pass_ready(struct worker *pw, int step, const struct reply *r, struct eval_shared *es,
		      struct vresult *vr, const struct ctx *c)
{
	if (step != STEP_OK || r->status != PF_OK) {
		if (step == STEP_OK) {
			worker_kill(pw);
			eval_fail_variant(vr, SCORE_RUNTIME_ERROR, "the pass could not be loaded: %s", r->msg);
		} else {
			worker_step_verdict(pw, step, r, vr, c);
		}
		return -1;
	}
	pw->pass_ran = 1;
	if (es->kernels == NULL && pw->payload_len > 0 && (es->kernels = malloc((size_t)pw->payload_len + 1))) {
		memcpy(es->kernels, pw->payload, (size_t)pw->payload_len);
		es->kernels[pw->payload_len] = 0;
	}
	snprintf(es->pass_trace_note, sizeof(es->pass_trace_note), "%s", r->msg);
	return 0;
}

void eval_status(const struct ejob *job, int k, const char *what)
{
	if (job == NULL || job->hooks.status == NULL)
		return;
	char line[256];
	if (k >= 0 && job->task != NULL && k < job->task->n_variants)
		snprintf(line, sizeof(line), "variant %d/%d %s: %s", k + 1, job->task->n_variants,
			 job->task->variants[k].name, what);
	else
		snprintf(line, sizeof(line), "%s", what);
	job->hooks.status(job->hooks.status_ctx, line);
}

int eval_variant(struct ctx *c, int k, struct worker *ew, struct worker *pw, struct eval_shared *es,
			struct vresult *vr, char *err, size_t errlen)
{
	struct reply r;
	double t1[MAX_BATCH];
	int step;
	memset(vr, 0, sizeof(*vr));
	vr->min_t = vr->close_t = SCORE_T_NEVER;
	vr->worst.output = vr->blind.output = -1;
	vr->status = SCORE_OK;
	double p0 = base_now_ms(), p1;
	eval_status(c->job, c->first + k, "eager and the pass load it");
	if (ew->variant != k) {
		if (eager_step(c, ew, &(struct cmd){.op = CMD_VARIANT, .variant = k}, err, errlen))
			return -1;
		ew->variant = k;
	}
	for (int s = 0; s < N_SETS; s++)
		if (eager_step(c, ew, &(struct cmd){.op = CMD_CHECK, .set = s}, err, errlen))
			return -1;
	p1 = base_now_ms();
	es->prof[PROF_EAGER] += p1 - p0;
	p0 = p1;
	/* Eager outputs are complete: only now does pass code run on this
	 * variant.  A pass worker started before the compile gets the pass
	 * now; the pass worker of the previous variant carries on when that
	 * one went well; otherwise a fresh one starts. */
	if (pw->pid > 0 && pw->early) {
		pw->early = 0;
		step = worker_wait(pw, 600, &r, t1);    /* "warm": CUDA set up */
		if (step == STEP_OK && r.status == PF_OK) {
			char *buf;
			size_t len;
			if (eval_module_pack(c->mod, &buf, &len)) {
				snprintf(err, errlen, "out of memory sending the pass to its worker");
				return -1;
			}
			struct cmd cm = {.op = CMD_MODULE};
			uint64_t l64 = len;
			int sent = eval_send_all(pw->sock, &cm, sizeof(cm)) == 0 && eval_send_all(pw->sock, &l64, sizeof(l64)) == 0 &&
				   eval_send_all(pw->sock, buf, len) == 0;
			free(buf);
			step = sent ? worker_wait(pw, c->timeout_s, &r, t1) : STEP_DIED;
		}
		if (worker_pass_ready(pw, step, &r, es, vr, c))
			goto done;
	}
	if (pw->pid > 0 && pw->variant != k) {
		struct cmd cm = {.op = CMD_VARIANT, .variant = k};
		step = worker_step(pw, c->timeout_s, &cm, &r, t1);
		if (step != STEP_OK || r.status != PF_OK) {
			worker_step_verdict(pw, step, &r, vr, c);
			goto done;
		}
		pw->variant = k;
	} else if (pw->pid <= 0) {
		if (worker_start(c, 1, k, pw, err, errlen))
			return -1;
		step = worker_wait(pw, c->timeout_s, &r, t1);
		if (worker_pass_ready(pw, step, &r, es, vr, c))
			goto done;
	}
	char where[400] = "";
	int poisoned;
	int min_t[N_SETS];
	struct worst w[N_SETS];
	struct blind bl[N_SETS];
	p1 = base_now_ms();
	es->prof[PROF_WORKERS] += p1 - p0;
	eval_status(c->job, c->first + k, "checking the outputs");
	for (int s = 0; s < N_SETS; s++) {
		struct cmd cm = {.op = CMD_CHECK, .set = s};
		p0 = base_now_ms();
		step = worker_step(pw, c->timeout_s, &cm, &r, t1);
		p1 = base_now_ms();
		es->prof[PROF_PASS_CHECKS] += p1 - p0;
		if (step != STEP_OK || r.status != PF_OK) {
			worker_step_verdict(pw, step, &r, vr, c);
			goto done;
		}
		if (!check_inputs_unchanged(c, s, s, NULL, where, sizeof(where))) {
			eval_fail_variant(vr, SCORE_REJECTED, "%s", where);
			goto done;
		}
		min_t[s] = compare_set(c, s, s, &poisoned, vr, &w[s], &bl[s], where, sizeof(where));
		es->prof[PROF_COMPARE] += base_now_ms() - p1;
		if (poisoned) {
			eval_fail_variant(vr, SCORE_REJECTED, "%s", where);
			goto done;
		}
	}
	/* Right on the public inputs (from OK_T), not close at any counted
	 * level on the secret ones: the results depend on something other
	 * than the inputs.  Honest rounding moves a level or two between sets
	 * of the same statistics (bf16 flips an ulp), never this far; and a
	 * set that is merely less close costs its level below, not the
	 * variant. */
	if (min_t[0] <= OK_T && min_t[1] > COUNTED_T) {
		char at[200], lv[120];
		worst_where(c->v, &w[1], at, sizeof(at));
		if (min_t[1] == SCORE_T_NEVER)
			snprintf(lv, sizeof(lv), "not close at any t");
		else
			snprintf(lv, sizeof(lv), "close only from t = %d", min_t[1]);
		eval_fail_variant(vr, SCORE_REJECTED,
			     "close to eager from t = %d on the public inputs but %s on a second, secret input set "
			     "(%s = %.6g, eager %.6g): the results do not follow the inputs",
			     min_t[0], lv, at, w[1].pass, w[1].eager);
		goto done;
	}
	/* the level is the worst over every checked set */
	int ws = min_t[1] > min_t[0] || (min_t[1] == min_t[0] && worst_beats(&w[1], &w[0]));
	vr->close_t = min_t[ws];
	vr->worst = w[ws];
	vr->blind = bl[0].output >= 0 ? bl[0] : bl[1];

	/* A check (eval.h, check_only): the level alone, no timing. */
	if (c->job->opts.check_only)
		goto level;
	/* Timing, run again once when unstable (eval_timing_unstable); still
	 * unstable after that is reported (timing_unstable). */
	c->traced_trials = c->cuda && !es->eager_trace_note[0] && !es->pass_trace_note[0]
				   ? (c->trials < TRACED_TRIALS ? c->trials : TRACED_TRIALS) : 0;
	for (int attempt = 0;; attempt++) {
		p0 = base_now_ms();
		eval_status(c->job, c->first + k, attempt ? "timing again (unsteady)" : "timing");
		int tr = time_variant(c, ew, pw, es, vr, err, errlen);
		es->prof[PROF_TIMING] += base_now_ms() - p0;
		if (tr < 0)
			return -1;
		if (tr > 0)
			goto done;
		/* (scored by the model, the measured times are information:
		 * not worth a second run) */
		if (attempt == 0 && !c->by_model && eval_timing_unstable(vr)) {
			vr->timing_retries++;
			continue;
		}
		break;
	}
	if (!c->cuda) {
		double m0 = base_now_ms();
		eval_status(c->job, c->first + k, "the modeled GPU time (counted calls)");
		int mr = model_variant(c, ew, pw, vr);
		es->prof[PROF_MODEL] += base_now_ms() - m0;
		if (mr > 0)
			goto done;
	}
	/* The paired estimate, unless the pass's own times were replaced by
	 * the parent's estimate or the GPU's span (timing_suspect): then the
	 * ratio of medians of what the parent trusts. */
	vr->speedup_of_medians = vr->pass_ms > 0 ? vr->eager_ms / vr->pass_ms : 1e9;
	vr->speedup = vr->timing_suspect || !(vr->speedup_paired > 0) ? vr->speedup_of_medians : vr->speedup_paired;
	/* The cpu backend scores the modeled H200 speedup (docs/scoring.md):
	 * its measured times rank kernels as a CPU runs them, not as a GPU
	 * does.  The measured speedup stays beside it. */
	vr->measured_speedup = vr->speedup;
	vr->speedup_modeled = 0;
	if (c->by_model) {
		const char *why = NULL;
		int differ = vr->modeled && (vr->eager_traffic.mismatch || vr->pass_traffic.mismatch);
		if (!vr->modeled)
			why = "the counted calls gave no model";
		else if (!(vr->pass_model_ms > 0) || !(vr->eager_model_ms > 0))
			why = "a modeled time is zero";
		if (why == NULL && differ) {
			/* A pass that launches differently from call to call is
			 * scored the worse of the two speedups, never the
			 * better: otherwise it would choose its scorer. */
			double m = vr->eager_model_ms / vr->pass_model_ms;
			vr->mismatch_worse = 1;
			if (m <= vr->speedup) {
				vr->speedup = m;
				vr->speedup_modeled = 1;
			}
			if (!vr->note[0])
				snprintf(vr->note, sizeof(vr->note),
					 "the counted calls launched differently from one another: scored the worse of "
					 "the modeled (%.3g) and the measured cpu speedup (%.3g)",
					 m, vr->measured_speedup);
		} else if (why == NULL) {
			vr->speedup = vr->eager_model_ms / vr->pass_model_ms;
			vr->speedup_modeled = 1;
		} else if (!vr->note[0]) {
			snprintf(vr->note, sizeof(vr->note), "scored on the measured cpu speedup: %s", why);
		}
	}
	/* Plausibility: the least data the variant moves, at the fastest this
	 * machine moves data. */
	if (c->bytes_per_ms > 0) {
		size_t bytes = 0;
		for (int i = 0; i < c->v->n_inputs; i++)
			bytes += c->lay.in_bytes[i];
		for (int o = 0; o < c->v->n_outputs; o++)
			bytes += c->lay.out_bytes[o];
		/* On a GPU the fresh inputs were just copied in, so up to an
		 * L2's worth may be served from it, and outputs written back
		 * after the window: only the rest must cross the memory bus. */
		size_t dram = bytes > c->roof_cached ? bytes - c->roof_cached : 0;
		vr->roofline_ms = integrity_min_ms(dram, c->bytes_per_ms);
		if (integrity_implausible(vr->pass_ms, vr->roofline_ms)) {
			vr->implausible = 1;
			if (c->roof_cached)
				snprintf(vr->note, sizeof(vr->note),
					 "the pass median %.4f ms is under half of %.4f ms, the time the GPU's memory needs "
					 "at its peak bandwidth to move the %zu bytes of the variant's inputs and outputs "
					 "that its %zu-byte L2 cannot hold: the timing cannot be right (a flag, not a verdict)",
					 vr->pass_ms, vr->roofline_ms, dram, c->roof_cached);
			else
				snprintf(vr->note, sizeof(vr->note),
					 "the pass median %.4f ms is under half of %.4f ms, the time this machine needs to "
					 "move the variant's %zu bytes of inputs and outputs once: the timing cannot be "
					 "right (a flag, not a verdict)", vr->pass_ms, vr->roofline_ms, bytes);
		}
	}
level:
	/* The verdict from the level (docs/scoring.md): ok from OK_T, a
	 * mismatch paid from its level at COUNTED_T and tighter, and below
	 * that wrong values (min_t never: b up to t = 0, 1 from t = 1). */
	vr->min_t = vr->close_t <= COUNTED_T ? vr->close_t : SCORE_T_NEVER;
	vr->status = vr->close_t <= OK_T ? SCORE_OK : SCORE_MISMATCH;
	if (vr->blind.output >= 0) {
		/* no closer than a constant: wrong values, like t >= 0 */
		const struct graph_value *x = &c->v->values[c->v->outputs[vr->blind.output]];
		vr->min_t = SCORE_T_NEVER;
		vr->status = SCORE_MISMATCH;
		snprintf(vr->msg, sizeof(vr->msg), "output %s is close to eager only from t = %d, no closer than a "
			 "constant would be (all zeros, or the middle of eager's range, is close from t = %d): it counts "
			 "as wrong values (ok needs t = %d, and closer than a constant)", x->name, vr->blind.pass_t,
			 vr->blind.blind_t, OK_T);
	} else if (vr->status == SCORE_MISMATCH) {
		level_message(c->v, &vr->worst, vr->close_t, vr->msg, sizeof(vr->msg));
	}
done:
	/* A pass worker whose variant failed (an error it answered, a
	 * rejection) ends here; the next variant gets a fresh one. */
	if (vr->status != SCORE_OK && vr->status != SCORE_MISMATCH)
		worker_kill(pw); /* answered (or already gone): no grace to wait out */
	vr->log = worker_take_log(pw);
	return 0;
}
