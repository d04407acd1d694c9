/* eval.c - the evaluation protocol (docs/scoring.md, docs/integrity.md).
 *
 * Processes, per variant:
 *
 *   parent (trusted)  generates the input sets into a sealed memfd, forks
 *        |            the two workers, drives them step by step over a
 *        |            socketpair, owns the watchdog, compares and scores
 *        +-- eager worker  (trusted code only) runs the op library
 *        +-- pass worker   loads the pass object, enters the seccomp
 *                          sandbox, then runs the replacement
 *
 * Eager outputs never enter the pass worker: it unmaps eager's result area
 * and closes every descriptor it does not need before the sandbox goes on.
 * Each run writes the pass's outputs (and its device inputs, to prove they
 * were not written) into shared memory the parent reads.  Outputs are
 * poisoned before every call.
 *
 * Timing alternates single trials of eager and the pass, one command each.
 * Every timed trial gets inputs no call has seen before: the public set with
 * each generated input rotated (flat, circularly) by an offset the parent
 * draws after the pass worker exists and sends with that trial's command
 * only, so neither a cache keyed by pointer or content nor a call counter
 * can replay an earlier answer, and nothing in the worker's memory predicts
 * the next trial.  After every trial both workers store their outputs; the
 * parent checks every pass trial for poison and fully verifies a random
 * quarter of them (always the last) against eager's outputs of the same
 * trial, chosen after the trial ran.  docs/integrity.md has the rules.
 *
 * The pass is compiled in a child process (NVRTC runs in-process there, and
 * a template explosion must not stall or bloat the caller) with a wall-clock
 * limit and an address-space limit; the device-code scan runs there too. */
#define _GNU_SOURCE
#include "eval_int.h"
#include "traffic.h"

static size_t batch_input_bytes(void)
{
	const char *e = getenv("PASSFS_BATCH_BYTES");
	char *end;
	unsigned long long v = e && *e ? strtoull(e, &end, 10) : 0;
	return v > 0 && *end == '\0' ? (size_t)v : BATCH_INPUT_BYTES;
}

static void batch_close(struct batch *b)
{
	worker_stop(&b->pw, 0, NULL, 0);
	worker_stop(&b->ew, b->started ? 0 : 1, NULL, 0);
	free(b->pw.log);
	free(b->ew.log);
	b->pw.log = b->ew.log = NULL;
	shm_destroy(&b->c.in);
	shm_destroy(&b->c.eager_res);
	shm_destroy(&b->c.pass_res);
	for (int i = 0; i < GRAPH_MAX_IO; i++) {
		free(b->c.fresh[i]);
		b->c.fresh[i] = NULL;
	}
	free(b->lays);
	b->lays = NULL;
}

/* Lays out the batch from task variant `first` on, creates its shared
 * memory and starts its eager worker. */
static int batch_open(struct batch *b, const struct ejob *job, int first, int warmup, int trials, int cuda,
		      int early_pass, char *err, size_t errlen)
{
	const struct graph_task *t = job->task;
	memset(b, 0, sizeof(*b));
	struct ctx *c = &b->c;
	*c = (struct ctx){.job = job, .first = first, .warmup = warmup, .trials = trials, .cold = job->opts.cold, .trial_times = job->opts.trial_times,
			  .cuda = cuda, .auto_trials = job->opts.trials <= 0, .auto_warmup = job->opts.warmup == 0,
			  .by_model = !cuda && eval_cpu_speedup_modeled()};
	c->budget_ms = cuda ? 0 : c->by_model ? TRIAL_BUDGET_MODELED_MS : TRIAL_BUDGET_MS;
	c->budget_min = c->by_model ? BUDGET_MIN_TRIALS_MODELED : BUDGET_MIN_TRIALS;
	b->ew = (struct worker){.pid = -1, .sock = -1, .out_fd = -1, .report_fd = -1};
	b->pw = b->ew;
	c->in.fd = c->eager_res.fd = c->pass_res.fd = -1;
	c->timeout_s = job->opts.variant_timeout_s > 0 ? job->opts.variant_timeout_s : 20;
	size_t in_total = 0, res_max = 0;
	int n = 0;
	if ((b->lays = calloc((size_t)(t->n_variants - first), sizeof(*b->lays))) == NULL) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	for (; first + n < t->n_variants; n++) {
		struct layout L;
		eval_plan_layout(&t->variants[first + n], in_total, &L);
		if (n > 0 && in_total + L.in_total > batch_input_bytes())
			break;
		b->lays[n] = L;
		in_total += L.in_total;
		if (L.res_total > res_max)
			res_max = L.res_total;
		size_t io = 0;
		for (int k = 0; k < t->variants[first + n].n_inputs; k++)
			io += L.in_bytes[k];
		for (int o = 0; o < t->variants[first + n].n_outputs; o++)
			io += L.out_bytes[o];
		if (io > c->max_io_bytes)
			c->max_io_bytes = io;
	}
	c->count = n;
	c->lays = b->lays;
	c->v = &t->variants[first];
	c->lay = b->lays[0];
	if (shm_create(&c->in, "passfs-in", in_total) || shm_create(&c->eager_res, "passfs-eager", res_max) ||
	    shm_create(&c->pass_res, "passfs-pass", res_max)) {
		snprintf(err, errlen, "cannot allocate shared memory for the inputs of %d variants: %s", n,
			 strerror(errno));
		return -1;
	}
	if (worker_start(c, 0, 0, &b->ew, err, errlen))
		return -1;
	b->started = 1;
	/* Before the compile, the pass worker too (c->mod is still NULL): it
	 * sets up CUDA and waits for the pass (CMD_MODULE).  No pass code
	 * exists in it until then. */
	if (early_pass) {
		if (worker_start(c, 1, 0, &b->pw, err, errlen))
			return -1;
		b->pw.early = 1;
	}
	return 0;
}

/* Generates the batch's inputs, seals them, and waits for the eager worker
 * to be ready and to map them. */
static int batch_fill(struct batch *b, uint64_t secret, struct eval_shared *es, char *err, size_t errlen)
{
	struct ctx *c = &b->c;
	for (int k = 0; k < c->count; k++) {
		const struct graph_variant *v = &c->job->task->variants[c->first + k];
		for (int s = 0; s < N_SETS; s++) {
			/* straight into the input memfd: no copy, no second
			 * buffer's pages to clear */
			void *bufs[GRAPH_MAX_IO];
			for (int i = 0; i < v->n_inputs; i++)
				bufs[i] = c->in.base + b->lays[k].in_off[s][i];
			inputs_fill(v, s == 0 ? PUBLIC_SEED : secret, bufs);
		}
	}
	struct reply r;
	double t1[MAX_BATCH];
	int step = worker_wait(&b->ew, 600, &r, t1);
	if (step != STEP_OK || r.status != PF_OK) {
		char how[300] = "";
		worker_stop(&b->ew, 1, how, sizeof(how));
		snprintf(err, errlen, "eager baseline failed on variant '%s': %s", c->v->name,
			 step == STEP_OK ? r.msg : how[0] ? how : "the eager worker died");
		return -1;
	}
	snprintf(es->eager_trace_note, sizeof(es->eager_trace_note), "%s", r.msg);
	char pl[PAYLOAD_MAX + 1];
	memcpy(pl, b->ew.payload, (size_t)b->ew.payload_len);
	pl[b->ew.payload_len] = 0;
	char *tab = strchr(pl, '\t');
	if (tab != NULL) {
		*tab = 0;
		snprintf(es->eager_libs, sizeof(es->eager_libs), "%.150s", pl);
		snprintf(es->eager_lib_note, sizeof(es->eager_lib_note), "%.390s", tab + 1);
	}
	/* The eager worker no longer maps the inputs writable: seal them. */
	if (shm_seal(&c->in)) {
		snprintf(err, errlen, "cannot seal the inputs: %s", strerror(errno));
		return -1;
	}
	struct cmd cm = {.op = CMD_MAP};
	step = worker_step(&b->ew, 600, &cm, &r, t1);
	if (step != STEP_OK || r.status != PF_OK) {
		snprintf(err, errlen, "eager baseline failed on variant '%s': %s", c->v->name,
			 step == STEP_OK ? r.msg : "the eager worker died");
		return -1;
	}
	return 0;
}

/* ---- the whole job ---------------------------------------------------------------- */

static enum score_status eval_status_of_diag(enum pass_verdict v)
{
	switch (v) {
	case PASS_OK: return SCORE_OK;
	case PASS_UNSUPPORTED: return SCORE_UNSUPPORTED;
	case PASS_REJECTED: return SCORE_REJECTED;
	case PASS_NOT_IMPLEMENTED: return SCORE_NOT_IMPLEMENTED;
	default: return SCORE_COMPILE_ERROR;
	}
}

static void eval_trial_counts(const struct ejob *job, enum gpu_backend be, int *warmup, int *trials)
{
	/* The cpu backend runs kernels thousands of times slower than a GPU:
	 * fewer trials (documented in docs/result-format.md). */
	*warmup = be == GPU_BACKEND_CUDA ? 25 : 2;
	*trials = be == GPU_BACKEND_CUDA ? 100 : 10;
	/* scored by the model, the cpu's measured times are information: no
	 * warm-up call (the checks ran each side twice already; the timed
	 * calls stop at the budget) */
	if (be != GPU_BACKEND_CUDA && eval_cpu_speedup_modeled())
		*warmup = 0;
	if (job->opts.warmup)
		*warmup = job->opts.warmup < 0 ? 0 : job->opts.warmup;
	if (job->opts.trials > 0)
		*trials = job->opts.trials;
}

/* How the evaluation timed (result.json: timing), and the pass's kernels
 * with what each uses (kernels; cuda backend). */
static void timing_json(json_t *res, const struct ejob *job, const struct eval_shared *es, const char *backend)
{
	json_t *tm = json_object();
	int cuda = strcmp(backend, "cuda") == 0;
	json_object_set_new(tm, "cold", json_boolean(job->opts.cold));
	if (!cuda)
		json_object_set_new(tm, "gpu_time", json_string("none: the cpu backend has no GPU"));
	else if (es->trace_seen)
		json_object_set_new(tm, "gpu_time", json_string("cupti"));
	else if (es->pass_trace_note[0] || es->eager_trace_note[0])
		json_object_set_new(tm, "gpu_time", json_pack("s+", "none: ", es->pass_trace_note[0] ? es->pass_trace_note
											   : es->eager_trace_note));
	else
		json_object_set_new(tm, "gpu_time", json_string("none: no timed run"));
	json_object_set_new(res, "timing", tm);
	json_t *eg = json_pack("{s:s}", "libraries", es->eager_libs);
	if (es->eager_lib_note[0])
		json_object_set_new(eg, "library_note", json_string(es->eager_lib_note));
	json_object_set_new(res, "eager", eg);
	if (es->kernels == NULL)
		return;
	json_t *ks = json_array();
	const char *p = es->kernels;
	while (*p) {
		const char *nl = strchr(p, '\n');
		size_t len = nl ? (size_t)(nl - p) : strlen(p);
		char line[1200], name[512] = "", lowered[512] = "";
		int v[5] = {-1, -1, -1, -1, -1};
		if (len < sizeof(line)) {
			memcpy(line, p, len);
			line[len] = 0;
			char *f[7] = {0}, *q = line;
			int nf = 0;
			while (nf < 7 && (f[nf] = strsep(&q, "\t")) != NULL)
				nf++;
			if (nf == 7) {
				snprintf(name, sizeof(name), "%.500s", f[0]);
				snprintf(lowered, sizeof(lowered), "%.500s", f[1]);
				for (int k = 0; k < 5; k++)
					v[k] = atoi(f[2 + k]);
				json_t *one = json_pack("{s:s, s:s}", "name", name, "lowered", lowered);
				static const char *const keys[5] = {"registers", "shared_bytes", "local_bytes", "const_bytes",
								    "max_threads_per_block"};
				for (int k = 0; k < 5; k++)
					json_object_set_new(one, keys[k], v[k] < 0 ? json_null() : json_integer(v[k]));
				json_array_append_new(ks, one);
			}
		}
		p += len + (nl != NULL);
	}
	json_object_set_new(res, "kernels", ks);
}

static int eval_finish(const struct ejob *job, const struct graph_task *t, struct score_variant *sv,
		       struct vresult *vr, json_t *variants, const struct pass_diag *diag,
		       const struct pass_module *mod, const struct scan_result *scan, const struct eval_shared *es,
		       const char *backend, const char *device, double elapsed_ms, json_t **result, char *err,
		       size_t errlen)
{
	struct score_input in = {.params = {job->opts.b > 0 ? job->opts.b : SCORE_DEFAULT_B, job->opts.p},
				 .n_variants = (size_t)t->n_variants, .variants = sv};
	struct score_result sr;
	char hex[65];
	if (score_compute(&in, &sr, err, errlen))
		return -1;
	sha256_hex(job->pass_src, job->pass_len, hex);
	enum score_status worst = SCORE_OK;
	int first_bad = -1, n_ok = 0;
	double logsum = 0;
	for (int i = 0; i < t->n_variants; i++) {
		enum score_status st = sv[i].status == SCORE_OK && sv[i].min_t == SCORE_T_NEVER ? SCORE_MISMATCH
											 : sv[i].status;
		if (st != SCORE_OK && first_bad < 0)
			first_bad = i;
		worst = eval_worse(worst, st);
		if (st == SCORE_OK) {
			n_ok++;
			logsum += log(sv[i].speedup);
		}
	}
	char msg[768];
	int loosest = SCORE_T_MIN;
	for (int i = 0; i < t->n_variants; i++)
		if (sv[i].min_t != SCORE_T_NEVER && sv[i].min_t > loosest)
			loosest = sv[i].min_t;
	if (first_bad < 0)
		snprintf(msg, sizeof(msg), "all %d variants correct (every output within tolerance from t = %d); "
			 "geometric-mean speedup %.3f", t->n_variants, loosest, exp(logsum / t->n_variants));
	else if (diag->verdict != PASS_OK)
		snprintf(msg, sizeof(msg), "%s", diag->message);
	else
		snprintf(msg, sizeof(msg), "variant '%s': %s (%d of %d variants ok)", t->variants[first_bad].name,
			 vr[first_bad].msg[0] ? vr[first_bad].msg : eval_verdict_name(sv[first_bad].status, sv[first_bad].min_t),
			 n_ok, t->n_variants);
	json_t *curve = json_object();
	for (int k = 0; k < SCORE_N_T; k++) {
		char key[8];
		snprintf(key, sizeof(key), "%d", SCORE_T_MIN + k);
		json_object_set_new(curve, key, json_real(eval_round(sr.es_t[k], 7)));
	}
	json_t *compile = json_pack("{s:s, s:s, s:s}", "verdict", pass_verdict_name(diag->verdict), "message",
				    diag->message, "log_tail", diag->log);
	if (mod) {
		json_object_set_new(compile, "nvrtc_ms", json_real(eval_round(mod->nvrtc_ms, 4)));
		json_object_set_new(compile, "host_ms", json_real(eval_round(mod->host_ms, 4)));
		json_object_set_new(compile, "device_scan",
				    json_string(scan->rc == 2 ? "not run" : scan->rc == 0 ? "clean" : "rejected"));
		if (scan->rc != 2)
			json_object_set_new(compile, "device_scan_ms", json_real(eval_round(scan->ms, 3)));
		/* A scan that could not run must say so: silence would read as
		 * "clean". */
		char note[800];
		snprintf(note, sizeof(note), "%s", mod->note);
		if (mod->ptx == NULL)
			snprintf(note + strlen(note), sizeof(note) - strlen(note), "%sthe device-code scan (clock and "
				 "timer reads, writable __device__ state, device-side launches, trap) did not run: no PTX",
				 note[0] ? "; " : "");
		if (es->arch_note[0])
			snprintf(note + strlen(note), sizeof(note) - strlen(note), "%s%s", note[0] ? "; " : "",
				 es->arch_note);
		if (note[0])
			json_object_set_new(compile, "note", json_string(note));
		if (mod->host_log && mod->host_log[0])
			json_object_set_new(compile, "log_tail", json_string(eval_tail(mod->host_log, 4096)));
	} else if (es->arch_note[0]) {
		json_object_set_new(compile, "note", json_string(es->arch_note));
	}
	if (diag->line > 0)
		json_object_set_new(compile, "line", json_integer(diag->line));
	/* Which compile jail held, and when it was not the full one, why
	 * (unknown when the compile child never answered: a timeout). */
	if (scan->jail_ms > 0) {
		json_object_set_new(compile, "jail", json_string(jail_kind_name((enum jail_kind)scan->jail_kind)));
		json_object_set_new(compile, "jail_ms", json_real(eval_round(scan->jail_ms, 3)));
	}
	if (scan->jail_note[0])
		json_object_set_new(compile, "jail_note", json_string(scan->jail_note));
	*result = json_pack("{s:s, s:i, s:s, s:s, s:s, s:s, s:f, s:o, s:s, s:s, s:f, s:f, s:o, s:o, s:f, s:s}",
			    "task", t->id, "seq", 0, "pass_sha256", hex, "state", "done", "verdict",
			    eval_verdict_name(worst, 0), "message", msg, "score", eval_round(sr.score, 7), "es_t", curve,
			    "backend", backend, "device", device, "b", in.params.b, "p", in.params.p, "variants",
			    variants, "compile", compile, "elapsed_ms", eval_round(elapsed_ms, 5), "passfs_version",
			    PASSFS_VERSION);
	if (*result == NULL) {
		snprintf(err, errlen, "out of memory building the result");
		return -1;
	}
	if (json_object_set_new(*result, "scoring", json_string(eval_scoring(backend)))) {
		json_decref(*result);
		*result = NULL;
		snprintf(err, errlen, "out of memory building the result");
		return -1;
	}
	timing_json(*result, job, es, backend);
	/* The modeled H200 speedup over the variants that have one
	 * (geometric mean; on the cpu backend the variants' scored speedups
	 * are theirs) */
	double lsum = 0;
	int nm = 0;
	for (int i = 0; i < t->n_variants; i++)
		if (vr[i].modeled && vr[i].pass_model_ms > 0 && vr[i].eager_model_ms > 0) {
			lsum += log(vr[i].eager_model_ms / vr[i].pass_model_ms);
			nm++;
		}
	if (nm > 0)
		json_object_set_new(*result, "modeled_speedup", json_real(eval_round(exp(lsum / nm), 4)));
	/* where the time went: each phase, and the rest (the probe's device,
	 * the lock, building this document) as other_ms */
	static const char *const phase[PROF_N] = {EVAL_PHASE_NAMES};
	json_t *prof = json_object();
	double rest = elapsed_ms;
	for (int k = 0; k < PROF_N && prof; k++) {
		char key[32];
		snprintf(key, sizeof(key), "%s_ms", phase[k]);
		json_object_set_new(prof, key, json_real(eval_round(es->prof[k], 4)));
		rest -= es->prof[k];
	}
	if (prof) {
		json_object_set_new(prof, "other_ms", json_real(eval_round(rest > 0 ? rest : 0, 4)));
		json_object_set_new(*result, "profile", prof);
	}
	const char *audit = getenv("PASSFS_SANDBOX_AUDIT");
	if (audit != NULL && *audit)
		json_object_set_new(*result, "sandbox_audit", json_string(audit));
	return 0;
}

/* {output, index, pass, eager, abs_err, rel_err} of the worst element;
 * non-finite values as the strings "nan", "inf", "-inf" (JSON has none). */
static json_t *num_json(double x)
{
	if (isnan(x))
		return json_string("nan");
	if (isinf(x))
		return json_string(x > 0 ? "inf" : "-inf");
	return json_real(x);
}

static json_t *worst_json(const struct graph_variant *v, const struct worst *w)
{
	long long ix[GRAPH_MAX_DIMS];
	const struct graph_value *x = eval_worst_index(v, w, ix);
	json_t *idx = json_array();
	for (int d = 0; d < x->shape.ndim; d++)
		json_array_append_new(idx, json_integer(ix[d]));
	double a = fabs(w->pass - w->eager);
	return json_pack("{s:s, s:o, s:o, s:o, s:o, s:o}", "output", x->name, "index", idx, "pass", num_json(w->pass),
			 "eager", num_json(w->eager), "abs_err", num_json(isnan(a) ? NAN : a), "rel_err",
			 w->eager != 0 ? num_json(a / fabs(w->eager)) : json_null());
}

static json_t *variant_json(const struct graph_variant *v, const struct vresult *vr)
{
	json_t *shapes = json_array();
	for (int o = 0; o < v->n_outputs; o++) {
		const struct graph_value *x = &v->values[v->outputs[o]];
		char sb[200];
		json_array_append_new(shapes, json_string(graph_shape_str(&x->shape, sb, sizeof(sb))));
	}
	json_t *j = json_pack("{s:s, s:s, s:s, s:o, s:o}", "name", v->name, "dtype",
			      graph_dtype_name(v->values[v->outputs[0]].dtype), "verdict",
			      eval_verdict_name(vr->status, vr->min_t), "output_shapes", shapes, "min_t",
			      vr->min_t == SCORE_T_NEVER ? json_null() : json_integer(vr->min_t));
	if (vr->status == SCORE_OK || vr->status == SCORE_MISMATCH) {
		json_object_set_new(j, "speedup", json_real(eval_round(vr->speedup, 4)));
		if (vr->speedup_modeled) {
			json_object_set_new(j, "speedup_source", json_string("modeled_h200"));
			json_object_set_new(j, "measured_speedup", json_real(eval_round(vr->measured_speedup, 4)));
		} else {
			json_object_set_new(j, "speedup_source", json_string("measured"));
		}
		json_object_set_new(j, "eager_ms", json_real(eval_round(vr->eager_ms, 4)));
		json_object_set_new(j, "pass_ms", json_real(eval_round(vr->pass_ms, 4)));
		json_object_set_new(j, "eager_iqr_ratio", json_real(eval_round(vr->eager_iqr, 3)));
		json_object_set_new(j, "pass_iqr_ratio", json_real(eval_round(vr->pass_iqr, 3)));
		json_object_set_new(j, "trials", json_integer(vr->trials));
		json_object_set_new(j, "speedup_of_medians", json_real(eval_round(vr->speedup_of_medians, 4)));
		if (vr->speedup_lo > 0 && !vr->timing_suspect)
			json_object_set_new(j, "speedup_ci95", json_pack("[f, f]", eval_round(vr->speedup_lo, 4),
									 eval_round(vr->speedup_hi, 4)));
		json_object_set_new(j, "max_abs_err", json_real(vr->max_abs_err));
		json_object_set_new(j, "max_rel_err", json_real(vr->max_rel_err));
		json_object_set_new(j, "close_from_t", vr->close_t == SCORE_T_NEVER ? json_null()
										      : json_integer(vr->close_t));
		if (vr->worst.output >= 0)
			json_object_set_new(j, "worst", worst_json(v, &vr->worst));
		if (eval_timing_unstable(vr))
			json_object_set_new(j, "timing_unstable", json_true());
		if (vr->timing_retries)
			json_object_set_new(j, "timing_retries", json_integer(vr->timing_retries));
		if (vr->gpu_trials > 0) {
			json_object_set_new(j, "eager_gpu_ms", json_real(eval_round(vr->eager_gpu_ms, 5)));
			json_object_set_new(j, "pass_gpu_ms", json_real(eval_round(vr->pass_gpu_ms, 5)));
			json_object_set_new(j, "eager_gpu_span_ms", json_real(eval_round(vr->eager_span_ms, 5)));
			json_object_set_new(j, "pass_gpu_span_ms", json_real(eval_round(vr->pass_span_ms, 5)));
			json_object_set_new(j, "eager_kernels", json_integer(vr->eager_kernels));
			json_object_set_new(j, "pass_kernels", json_integer(vr->pass_kernels));
			json_object_set_new(j, "pass_streams", json_integer(vr->pass_streams));
			if (vr->gpu_dropped)
				json_object_set_new(j, "gpu_records_dropped", json_integer((json_int_t)vr->gpu_dropped));
			if (vr->eager_gpu_kernels)
				json_object_set(j, "eager_gpu_kernels", vr->eager_gpu_kernels);
			if (vr->pass_gpu_kernels)
				json_object_set(j, "pass_gpu_kernels", vr->pass_gpu_kernels);
		}
		if (vr->trial_ms)
			json_object_set(j, "trial_ms", vr->trial_ms);
		if (vr->lock_wait_ms >= 1)
			json_object_set_new(j, "lock_wait_ms", json_real(eval_round(vr->lock_wait_ms, 1)));
		json_object_set_new(j, "timed_checks", json_integer(vr->timed_checked));
		json_object_set_new(j, "trial_overhead_ms", json_real(eval_round(vr->overhead_ms, 3)));
		if (vr->roofline_ms > 0)
			json_object_set_new(j, "roofline_ms", json_real(eval_round(vr->roofline_ms, 6)));
		if (vr->modeled) {
			json_object_set_new(j, "modeled_h200_ms",
					    json_pack("{s:f, s:f}", "eager", eval_round(vr->eager_model_ms, 6), "pass",
						      eval_round(vr->pass_model_ms, 6)));
			json_object_set_new(j, "modeled_speedup",
					    json_real(eval_round(vr->eager_model_ms / vr->pass_model_ms, 4)));
			if (vr->model_calls > 1)
				json_object_set_new(j, "model_spread",
						    json_pack("{s:i, s:f, s:f}", "calls", vr->model_calls, "spread",
							      eval_round(vr->model_spread, 4), "largest",
							      eval_round(vr->model_largest, 4)));
			json_object_set_new(j, "modeled_host_ms",
					    json_pack("{s:f, s:f}", "eager", eval_round(vr->eager_host_ms, 6), "pass",
						      eval_round(vr->pass_host_ms, 6)));
			json_t *tr = json_object();
			const struct gpu_traffic *side[2] = {&vr->eager_traffic, &vr->pass_traffic};
			for (int k = 0; k < 2; k++) {
				const struct gpu_traffic *g = side[k];
				json_object_set_new(
					tr, k ? "pass" : "eager",
					json_pack("{s:I, s:I, s:I, s:f, s:f, s:f, s:f}", "launches", (json_int_t)g->launches,
						  "bytes", (json_int_t)g->bytes, "threads", (json_int_t)g->threads,
						  "memory_ms", eval_round(g->mem_ms, 6), "path_ms",
						  eval_round(g->path_ms, 6), "parallel_ms", eval_round(g->par_ms, 6),
						  "call_ms", MODEL_CALL_MS));
			}
			if (vr->eager_traffic.approx || vr->pass_traffic.approx)
				json_object_set_new(tr, "approx", json_true());
			if (vr->eager_traffic.mismatch || vr->pass_traffic.mismatch)
				json_object_set_new(tr, "mismatch", json_true());
			json_object_set_new(j, "traffic", tr);
			/* the kernel's accounting of the counted calls (kacct.h) */
			json_object_set_new(
				j, "kernel_floor",
				json_pack("{s:{s:I, s:f, s:f}, s:{s:I, s:f, s:f}}", "eager", "bytes",
					  (json_int_t)vr->eager_kbytes, "cpu_ms", eval_round(vr->eager_kcpu_ms, 4),
					  "floor_ms", eval_round(vr->eager_floor_ms, 6), "pass", "bytes",
					  (json_int_t)vr->pass_kbytes, "cpu_ms", eval_round(vr->pass_kcpu_ms, 4),
					  "floor_ms", eval_round(vr->pass_floor_ms, 6)));
			if (vr->mismatch_worse)
				json_object_set_new(j, "scored_worse_of_two", json_true());
		}
		if (vr->implausible)
			json_object_set_new(j, "implausible", json_true());
		if (vr->timing_suspect) {
			json_object_set_new(j, "timing_suspect", json_true());
			json_object_set_new(j, "pass_ms_reported", json_real(eval_round(vr->pass_ms_reported, 4)));
		}
		if (vr->note[0])
			json_object_set_new(j, "integrity_note", json_string(vr->note));
	} else {
		json_object_set_new(j, "speedup", json_null());
	}
	if (vr->msg[0])
		json_object_set_new(j, "message", json_string(vr->msg));
	if (vr->log) {
		/* what the pass printed, the last 4 KiB of it (docs/result-format.md) */
		const char *tail = eval_tail(vr->log, 4096);
		json_object_set_new(j, "log_tail", json_string(tail));
		if (tail != vr->log)
			json_object_set_new(j, "log_truncated", json_true());
	}
	return j;
}

/* eval_opts.eager_model: eager's modeled H200 time of every variant, no
 * pass (the cache's line, else counted and kept, as an evaluation would). */
static json_t *eager_model_json(const struct graph_variant *v, const struct eager_model_result *m)
{
	json_t *kf = json_pack("{s:f, s:f, s:f}", "bytes", m->kbytes, "cpu_ms", eval_round(m->kcpu_ms, 4), "floor_ms",
			       eval_round(m->floor_ms, 6));
	return json_pack("{s:s, s:o, s:f, s:f, s:f, s:f, s:f, s:f, s:I, s:I, s:f, s:o, s:b}", "name", v->name,
			 "modeled_h200_ms", m->model_ms > 0 ? json_real(eval_round(m->model_ms, 6)) : json_null(),
			 "memory_ms", eval_round(m->tr.mem_ms, 6), "path_ms", eval_round(m->tr.path_ms, 6),
			 "parallel_ms", eval_round(m->tr.par_ms, 6), "host_ms", eval_round(m->host_ms, 6),
			 "launch_ms", eval_round((double)m->tr.launches * MODEL_LAUNCH_MS, 6), "call_ms", MODEL_CALL_MS,
			 "launches",
			 (json_int_t)m->tr.launches, "threads", (json_int_t)m->tr.threads, "traffic_bytes",
			 (double)m->tr.bytes, "kernel_floor", kf, "cached", m->cached);
}

static int eager_model_run(const struct ejob *job, enum gpu_backend be, json_t **result, char *err, size_t errlen)
{
	const struct graph_task *t = job->task;
	if (be != GPU_BACKEND_CPU) {
		snprintf(err, errlen,
			 "eager's modeled time is the cpu backend's (--backend cpu); on a GPU `passfs eager --trials N` "
			 "measures it");
		return -1;
	}
	struct eval_shared es = {0};
	struct batch bt = {.lays = NULL};
	json_t *variants = json_array();
	uint64_t secret = job->opts.secret_seed ? job->opts.secret_seed : 1;
	int rc = -1;
	for (int first = 0; first < t->n_variants;) {
		if (batch_open(&bt, job, first, 1, 1, 0, 0, err, errlen) || batch_fill(&bt, secret, &es, err, errlen)) {
			batch_close(&bt);
			goto out;
		}
		struct ctx *c = &bt.c;
		for (int k = 0; k < c->count; k++) {
			struct eager_model_result m;
			c->v = &t->variants[first + k];
			c->lay = bt.lays[k];
			if (job->opts.variant[0] && strcmp(job->opts.variant, c->v->name) != 0)
				continue;
			if (!job->opts.quiet)
				fprintf(stderr, "passfs eager: variant %s: the model ...\n", c->v->name);
			if (eval_is_cancelled(job->hooks.cancel)) {
				snprintf(err, errlen, "cancelled");
				batch_close(&bt);
				goto out;
			}
			if (eval_eager_model(c, k, &bt.ew, &m, err, errlen)) {
				batch_close(&bt);
				goto out;
			}
			json_array_append_new(variants, eager_model_json(c->v, &m));
		}
		int n = c->count;
		batch_close(&bt);
		first += n;
	}
	*result = json_pack("{s:s, s:s, s:s, s:O}", "task", t->id, "backend", "cpu", "scoring", eval_scoring("cpu"),
			    "variants", variants);
	rc = *result ? 0 : -1;
	if (rc)
		snprintf(err, errlen, "out of memory");
out:
	free(es.kernels);
	json_decref(variants);
	return rc;
}

static int eval_run_work(const struct ejob *job, json_t **result, char *err, size_t errlen)
{
	const struct graph_task *t = job->task;
	struct pass_diag diag;
	struct pass_module *mod = NULL;
	struct score_variant *sv = calloc((size_t)t->n_variants, sizeof(*sv));
	struct vresult *vr = calloc((size_t)t->n_variants, sizeof(*vr));
	json_t *variants = json_array();
	double t_start = base_now_ms();
	uint64_t secret = job->opts.secret_seed;
	struct scan_result scan = {.rc = 2};
	char tmpdir[4096] = "";
	int rc = -1;
	*result = NULL;
	if (secret == 0 && getrandom(&secret, sizeof(secret), 0) != sizeof(secret))
		secret = (uint64_t)time(NULL) * 0x9e3779b97f4a7c15ull;
	/* Resolve the backend once here ("auto" -> cpu or cuda) for the result
	 * and the trial counts; each worker opens its own device after fork. */
	struct gpu_dev *probe = NULL;
	char device[128];
	struct eval_shared es = {0};
	struct batch bt = {.lays = NULL};
	int open_batch = 0;             /* bt is open (batch 0, started before the compile) */
	int lock_ms = (int)((job->opts.lock_timeout_s > 0 ? job->opts.lock_timeout_s : 600) * 1000);
	if (gpu_open(job->opts.backend[0] ? job->opts.backend : "auto", &probe, err, errlen))
		goto out;
	/* The device stays open (CUDA is never initialised here: workers do
	 * that) for the benchmark lock. */
	enum gpu_backend be = gpu_backend_of(probe);
	snprintf(device, sizeof(device), "%s", gpu_device_name(probe));
	char arch[32];
	snprintf(arch, sizeof(arch), "%s", gpu_arch(probe));
	snprintf(es.arch_note, sizeof(es.arch_note), "%s", gpu_arch_note(probe));
	const char *backend = be == GPU_BACKEND_CUDA ? "cuda" : "cpu";
	int gpu_clock_khz = 0, gpu_bus_bits = 0;
	long long gpu_l2 = 0;
	int gpu_mem_ok = gpu_memory_spec(probe, &gpu_clock_khz, &gpu_bus_bits, &gpu_l2) == 0;
	const char *timed_out = NULL;   /* the first variant that timed out */
	int warmup, trials;
	eval_trial_counts(job, be, &warmup, &trials);
	if (job->opts.eager_model) {
		rc = eager_model_run(job, be, result, err, errlen);
		goto out;
	}

	if (job->hooks.progress)
		job->hooks.progress(job->hooks.ctx, "compiling");
	eval_status(job, -1, "compiling the pass");
	/* The device's own arch (sm_90a on an H200), so Hopper instructions
	 * are there for passes; the cpu backend keeps the default. */
	struct pass_options po = {.allow_device_only = be == GPU_BACKEND_CUDA,
				  .arch = be == GPU_BACKEND_CUDA ? arch : NULL};
	memset(&diag, 0, sizeof(diag));
	/* The first batch's eager worker starts now: its setup (CUDA, the op
	 * library) overlaps the pass compile.  On the cuda backend the pass
	 * worker too (its CUDA context takes a while); on the cpu backend its
	 * setup costs next to nothing and an extra process only competes
	 * with the compiler for the CPUs (measured: 7% slower on 2 CPUs). */
	double p0 = base_now_ms();
	es.prof[PROF_SETUP] = p0 - t_start;
	if (t->n_variants > 0 &&
	    batch_open(&bt, job, 0, warmup, trials, be == GPU_BACKEND_CUDA, be == GPU_BACKEND_CUDA, err, errlen)) {
		batch_close(&bt);
		goto out;
	}
	open_batch = t->n_variants > 0;
	double p1 = base_now_ms();
	es.prof[PROF_WORKERS] += p1 - p0;
	if (eval_compile_isolated(job, &po, &mod, &diag, &scan, tmpdir, sizeof(tmpdir), err, errlen))
		goto out;
	es.prof[PROF_COMPILE] = base_now_ms() - p1;
	if (eval_is_cancelled(job->hooks.cancel)) {
		snprintf(err, errlen, "cancelled");
		goto out;
	}
	if (mod != NULL && diag.verdict == PASS_OK && scan.rc != 0 && scan.rc != 2) {
		/* The device code broke an integrity rule: nothing runs. */
		diag.verdict = PASS_REJECTED;
		diag.line = scan.line;
		snprintf(diag.message, sizeof(diag.message), "%s",
			 scan.rc < 0 ? "out of memory scanning the device code" : scan.msg);
	}
	if (mod == NULL || diag.verdict != PASS_OK) {
		if (diag.verdict == PASS_INTERNAL_ERROR) {
			snprintf(err, errlen, "cannot compile passes here: %s", diag.message);
			goto out;
		}
		/* Nothing ran: every variant takes the compile verdict. */
		enum score_status st = eval_status_of_diag(diag.verdict);
		for (int i = 0; i < t->n_variants; i++) {
			sv[i].status = st;
			sv[i].min_t = SCORE_T_NEVER;
			sv[i].dtype = eval_score_dtype(t->variants[i].values[t->variants[i].outputs[0]].dtype);
			eval_fail_variant(&vr[i], st, "%s", diag.message);
			json_array_append_new(variants, variant_json(&t->variants[i], &vr[i]));
		}
		rc = eval_finish(job, t, sv, vr, variants, &diag, mod, &scan, &es, backend, device,
				 base_now_ms() - t_start, result, err, errlen);
		goto out;
	}
	if (job->hooks.progress)
		job->hooks.progress(job->hooks.ctx, "running");
	/* Variants run in batches: one sealed input memfd, one eager worker
	 * and (while variants go well) one pass worker per batch. */
	for (int first = 0; first < t->n_variants;) {
		p0 = base_now_ms();
		if (!open_batch && batch_open(&bt, job, first, warmup, trials, be == GPU_BACKEND_CUDA, 0, err, errlen)) {
			batch_close(&bt);
			goto out;
		}
		open_batch = 0;
		struct ctx *c = &bt.c;
		c->mod = mod;
		p1 = base_now_ms();
		es.prof[PROF_WORKERS] += p1 - p0;
		int bad = batch_fill(&bt, secret, &es, err, errlen) != 0;
		es.prof[PROF_INPUTS] += base_now_ms() - p1;
		if (!bad && !job->opts.quiet)
			fprintf(stderr, "passfs eval: variant %s ...\n", c->v->name);
		for (int k = 0; k < c->count && !bad; k++) {
			int i = first + k;
			c->v = &t->variants[i];
			c->lay = bt.lays[k];
			c->bytes_per_ms = 0;
			c->roof_cached = 0;
			if (be == GPU_BACKEND_CPU) {
				size_t bytes = 0;
				for (int q = 0; q < c->v->n_inputs; q++)
					bytes += c->lay.in_bytes[q];
				for (int o = 0; o < c->v->n_outputs; o++)
					bytes += c->lay.out_bytes[o];
				c->bytes_per_ms = integrity_cpu_bytes_per_ms(bytes);
			} else if (gpu_mem_ok) {
				c->bytes_per_ms = integrity_gpu_bytes_per_ms(gpu_clock_khz, gpu_bus_bits);
				c->roof_cached = (size_t)gpu_l2;
			}
			if (eval_is_cancelled(job->hooks.cancel)) {
				snprintf(err, errlen, "cancelled");
				bad = 1;
				break;
			}
			/* A pass that hung once most likely hangs on every variant:
			 * the rest get a shorter limit, so a hang costs about one
			 * step limit, not one per variant (two minutes with the
			 * defaults, the GPU's lock held all along).  Each batch
			 * starts with the full limit, so once per batch. */
			if (timed_out && !c->timed_out) {
				c->timeout_s = eval_after_timeout_s(c->timeout_s);
				c->timed_out = timed_out;
			}
			if (k > 0 && !job->opts.quiet)
				fprintf(stderr, "passfs eval: variant %s ...\n", c->v->name);
			/* One benchmark per GPU at a time, machine-wide: the
			 * variant's checks and timing hold the device's lock. */
			double w0 = base_now_ms();
			if (gpu_bench_lock(probe, lock_ms, job->hooks.cancel, err, errlen)) {
				bad = 1;
				break;
			}
			double waited = base_now_ms() - w0;
			int erc = eval_variant(c, k, &bt.ew, &bt.pw, &es, &vr[i], err, errlen);
			gpu_bench_unlock(probe);
			vr[i].lock_wait_ms = waited;
			if (erc || eval_is_cancelled(job->hooks.cancel)) {
				/* a wait cut short by the cancel reads as a timeout:
				 * no result at all, not that one */
				if (!erc)
					snprintf(err, errlen, "cancelled");
				bad = 1;
				break;
			}
			if (vr[i].status == SCORE_TIMEOUT && timed_out == NULL)
				timed_out = c->v->name;
			sv[i].status = vr[i].status;
			sv[i].min_t = vr[i].min_t;
			sv[i].speedup = vr[i].speedup > 0 ? vr[i].speedup : 1;
			sv[i].dtype = eval_score_dtype(c->v->values[c->v->outputs[0]].dtype);
			json_array_append_new(variants, variant_json(c->v, &vr[i]));
		}
		int n = c->count;
		p0 = base_now_ms();
		batch_close(&bt);
		es.prof[PROF_WORKERS] += base_now_ms() - p0;
		if (bad)
			goto out;
		first += n;
	}
	rc = eval_finish(job, t, sv, vr, variants, &diag, mod, &scan, &es, backend, device, base_now_ms() - t_start, result,
			 err, errlen);
out:
	if (open_batch)
		batch_close(&bt);
	for (int i = 0; i < t->n_variants; i++) {
		free(vr[i].log);
		json_decref(vr[i].eager_gpu_kernels);
		json_decref(vr[i].pass_gpu_kernels);
		json_decref(vr[i].trial_ms);
	}
	free(vr);
	free(sv);
	free(es.kernels);
	if (rc)
		json_decref(variants);
	pass_module_free(mod);
	if (tmpdir[0])
		base_rmtree(tmpdir);
	gpu_close(probe);
	/* whatever step noticed it (a worker killed reads as "died") */
	if (rc != 0 && eval_is_cancelled(job->hooks.cancel))
		snprintf(err, errlen, "cancelled");
	return rc;
}

int eval_run(const struct eval_job *job, const struct eval_hooks *hooks, json_t **result, char *err,
	     size_t errlen)
{
	*result = NULL;
	struct graph_task *t = NULL;
	const char *label = job->graph_label ? job->graph_label : "graph.json";
	if (job->graph_text == NULL) {
		snprintf(err, errlen, "%s: the job holds no graph", label);
		return -1;
	}
	if (graph_load_buffer(label, job->graph_text, job->graph_len, &t, err, errlen) != 0)
		return -1;
	struct ejob w = {.task = t, .pass_label = job->pass_label ? job->pass_label : "pass.c",
			 .pass_src = job->pass_src, .pass_len = job->pass_len, .opts = job->opts};
	if (hooks != NULL)
		w.hooks = *hooks;
	int rc = eval_run_work(&w, result, err, errlen);
	graph_task_free(t);
	return rc;
}
