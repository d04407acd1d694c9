/* eval_worker.c - the evaluation's worker processes (eval_int.h): the eager
 * worker and the sandboxed pass worker, each driven step by step from the
 * parent over a socketpair, and the parent's side of that protocol. */
#define _GNU_SOURCE
#include "eval_int.h"
#include "kacct.h"
#include "proc.h"


/* ---- small helpers -------------------------------------------------------- */

static size_t align_up(size_t x)
{
	return (x + 255) & ~(size_t)255;
}

int shm_create(struct shm *s, const char *name, size_t size)
{
	s->size = size ? size : 1;
	s->fd = memfd_create(name, MFD_CLOEXEC | MFD_ALLOW_SEALING);
	if (s->fd < 0 || ftruncate(s->fd, (off_t)s->size) != 0)
		return -1;
	s->base = mmap(NULL, s->size, PROT_READ | PROT_WRITE, MAP_SHARED, s->fd, 0);
	if (s->base == MAP_FAILED)
		return -1;
	/* Not inherited by any fork: the workers map what they need from the
	 * descriptor themselves, and nothing else this process forks (another
	 * evaluation's workers, in a daemon that runs several at once) ever
	 * holds a mapping of it - which would also block the seal. */
	return madvise(s->base, s->size, MADV_DONTFORK);
}

/* A worker's own mapping of s (after fork: the parent's is not inherited). */
static int shm_map(struct shm *s, int prot)
{
	s->base = mmap(NULL, s->size, prot, MAP_SHARED, s->fd, 0);
	if (s->base == MAP_FAILED) {
		s->base = NULL;
		return -1;
	}
	return 0;
}

void shm_destroy(struct shm *s)
{
	if (s->base && s->base != MAP_FAILED)
		munmap(s->base, s->size);
	if (s->fd >= 0)
		close(s->fd);
	s->base = NULL;
	s->fd = -1;
}

/* Makes the inputs immutable for every process that maps them. */
int shm_seal(struct shm *s)
{
	/* A shared mapping that could become writable blocks the seal: unmap,
	 * seal, then map read-only (mprotect cannot make that writable). */
	munmap(s->base, s->size);
	s->base = NULL;
	if (fcntl(s->fd, F_ADD_SEALS, F_SEAL_WRITE | F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL))
		return -1;
	s->base = mmap(NULL, s->size, PROT_READ, MAP_SHARED, s->fd, 0);
	if (s->base == MAP_FAILED)
		return -1;
	return madvise(s->base, s->size, MADV_DONTFORK);
}

static size_t value_bytes(const struct graph_value *x)
{
	return (size_t)graph_shape_numel(&x->shape) * graph_dtype_size(x->dtype);
}

/* Variant v's layout; its input sets start at in_base in the batch's input
 * memfd, its result slots at 0 of the (reused) result areas. */
void eval_plan_layout(const struct graph_variant *v, size_t in_base, struct layout *L)
{
	size_t off = in_base;
	memset(L, 0, sizeof(*L));
	for (int i = 0; i < v->n_inputs; i++)
		L->in_bytes[i] = value_bytes(&v->values[i]);
	for (int o = 0; o < v->n_outputs; o++)
		L->out_bytes[o] = value_bytes(&v->values[v->outputs[o]]);
	for (int s = 0; s < N_SETS; s++)
		for (int i = 0; i < v->n_inputs; i++) {
			L->in_off[s][i] = off;
			off += align_up(L->in_bytes[i]);
		}
	L->in_total = off - in_base;
	off = 0;
	for (int s = 0; s <= N_SETS; s++)
		for (int o = 0; o < v->n_outputs; o++) {
			L->res_out[s][o] = off;
			off += align_up(L->out_bytes[o]);
		}
	for (int s = 0; s <= N_SETS; s++)
		for (int i = 0; i < v->n_inputs; i++) {
			L->res_in_after[s][i] = off;
			off += align_up(L->in_bytes[i]);
		}
	L->res_total = off;
}

static void reply_send(int sock, int status, const double *times, int n, const void *payload, size_t nbytes,
		       const char *fmt, ...) __attribute__((format(printf, 7, 8)));
static void reply_send(int sock, int status, const double *times, int n, const void *payload, size_t nbytes,
		       const char *fmt, ...)
{
	if (nbytes > PAYLOAD_MAX)
		nbytes = PAYLOAD_MAX;
	struct reply r = {.status = status, .n_times = n, .n_bytes = (int)nbytes};
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(r.msg, sizeof(r.msg), fmt, ap);
	va_end(ap);
	if (eval_send_all(sock, &r, sizeof(r)) == 0 && (n <= 0 || eval_send_all(sock, times, sizeof(double) * (size_t)n) == 0) &&
	    nbytes > 0)
		eval_send_all(sock, payload, nbytes);
}

/* Loads input set `set`, each input rotated left by rot[i] elements (NULL:
 * as generated): device element k holds element (k + rot) mod n. */
static int w_load_set(struct wstate *w, int set, const uint64_t *rot, char *err, size_t errlen)
{
	const struct ctx *c = w->c;
	for (int i = 0; i < c->v->n_inputs; i++) {
		/* set < 0: the fresh set in the result area (cmd.fresh) */
		const unsigned char *src = set < 0 ? w->res + c->lay.res_in_after[TIMED_SLOT][i]
						   : c->in.base + c->lay.in_off[set][i];
		if (set < 0)
			rot = NULL;
		size_t bytes = c->lay.in_bytes[i], esz = graph_dtype_size(c->v->values[i].dtype);
		size_t n = esz ? bytes / esz : 0, r = rot && n ? (size_t)(rot[i] % n) : 0;
		if (gpu_copy_to_device(w->dev, w->din[i], src + r * esz, (n - r) * esz) ||
		    (r && gpu_copy_to_device(w->dev, (char *)w->din[i] + (n - r) * esz, src, r * esz))) {
			snprintf(err, errlen, "copying input %d to the device failed", i);
			return -1;
		}
	}
	return 0;
}

/* One call of eager or of the pass, outputs poisoned first.  Returns PF_OK
 * or an error code with err set; *ms is the end-to-end time (sync, clock,
 * call, sync, clock).  A timed call flushes the L2 first under --cold; a
 * traced one (gpu not NULL, tracing on) records the GPU work that started
 * inside the window, on every stream of the context.  Tracing costs host
 * time per launch, more for eager's many launches than for a fused pass,
 * so the timed trials the score uses run untraced. */
/* A mark of a counted call (W_MARK): tells the parent, and waits for its
 * go-ahead. */
static void w_mark(struct wstate *w, const char *what)
{
	char go;
	reply_send(w->sock, W_MARK, NULL, 0, NULL, 0, "%s", what);
	if (eval_recv_all(w->sock, &go, 1))
		_exit(1);
}

static int w_call(struct wstate *w, int timed, double *ms, struct trial_gpu *gpu, char *err, size_t errlen)
{
	const struct ctx *c = w->c;
	char e2[256];
	/* Eager's outputs are poisoned too: it overwrites them anyway, and the
	 * two workers then do the same work around the timed window, so the
	 * parent can compare their round trips (timing_suspect). */
	for (int o = 0; o < c->v->n_outputs; o++)
		gpu_copy_to_device(w->dev, w->dout[o], w->poison[o], c->lay.out_bytes[o]);
	if (timed && c->cold && gpu_l2_flush(w->dev, e2, sizeof(e2))) {
		snprintf(err, errlen, "--cold: %s", e2);
		return W_ERR;
	}
	if (gpu_sync(w->dev, e2, sizeof(e2))) {
		snprintf(err, errlen, "%s", e2);
		return W_ERR;
	}
	int tracing = gpu && w->trace && gpu_trace_begin(w->dev, e2, sizeof(e2)) == 0;
	if (w->marks)
		w_mark(w, "call");
	double t0 = base_now_ms();
	int rc;
	w->guard_ms = 0;
	double cpu0 = base_thread_cpu_ms();
	if (w->is_pass && w->guarded) {
		double g0 = base_thread_cpu_ms();
		int on = gpu_guard_begin(w->dev) == 0;
		w->guard_ms = base_thread_cpu_ms() - g0;
		rc = pass_instance_call(w->pi, w->din, w->dout, err, errlen);
		if (on) {
			uintptr_t first = 0;
			g0 = base_thread_cpu_ms();
			uint64_t n = gpu_guard_end(w->dev, &first);
			w->guard_ms += base_thread_cpu_ms() - g0;
			if (n > 0 && w->guard_touches == 0)
				w->guard_first = (uint64_t)first;
			w->guard_touches += n;
		}
	} else if (w->is_pass)
		rc = pass_instance_call(w->pi, w->din, w->dout, err, errlen);
	else
		rc = eager_run(w->plan, w->din, w->dout, err, errlen) ? W_ERR : PF_OK;
	w->call_cpu_ms = base_thread_cpu_ms() - cpu0;
	if (rc == PF_OK && gpu_sync(w->dev, e2, sizeof(e2))) {
		snprintf(err, errlen, "%s", e2);
		rc = PF_ERR_LAUNCH;
	}
	*ms = base_now_ms() - t0;
	if (w->marks)
		w_mark(w, "called");
	if (tracing) {
		if (gpu_trace_end(w->dev, &gpu->tr, e2, sizeof(e2)) == 0) {
			gpu->valid = 1;
		} else if (rc == PF_OK) {
			snprintf(err, errlen, "%s", e2);
			rc = w->is_pass ? PF_ERR_LAUNCH : W_ERR;
		}
	}
	return rc;
}

static int w_store(struct wstate *w, unsigned char *res, int slot, int with_inputs)
{
	const struct ctx *c = w->c;
	for (int o = 0; o < c->v->n_outputs; o++)
		if (gpu_copy_to_host(w->dev, res + c->lay.res_out[slot][o], w->dout[o], c->lay.out_bytes[o]))
			return -1;
	if (with_inputs)
		for (int i = 0; i < c->v->n_inputs; i++)
			if (gpu_copy_to_host(w->dev, res + c->lay.res_in_after[slot][i], w->din[i], c->lay.in_bytes[i]))
				return -1;
	return 0;
}

static void w_release(struct wstate *w)
{
	for (int i = 0; i < w->n_in; i++)
		gpu_free(w->dev, w->din[i]);
	for (int o = 0; o < w->n_out; o++) {
		gpu_free(w->dev, w->dout[o]);
		free(w->poison[o]);
		w->poison[o] = NULL;
	}
	w->n_in = w->n_out = 0;
}

/* Binds the worker to batch variant k: buffers, poison, eager's plan or
 * the pass instance. */
static int w_variant(struct wstate *w, int k, char *err, size_t errlen)
{
	struct ctx *c = w->c;
	if (k < 0 || k >= c->count) {
		snprintf(err, errlen, "no variant %d in this batch", k);
		return -1;
	}
	w_release(w);
	if (!w->is_pass && w->plan) {
		eager_free(w->plan);    /* its scratch goes; the op library stays */
		w->plan = NULL;
	}
	if (w->gpu_plan) {
		eager_free(w->gpu_plan);
		w->gpu_plan = NULL;
	}
	c->v = &c->job->task->variants[c->first + k];
	c->lay = c->lays[k];
	/* counted as made, so w_release frees whatever a failure left (NULL
	 * is fine for both frees) */
	for (int i = 0; i < c->v->n_inputs; i++)
		if ((w->din[w->n_in++] = gpu_alloc(w->dev, c->lay.in_bytes[i] ? c->lay.in_bytes[i] : 1)) == NULL)
			goto oom;
	for (int o = 0; o < c->v->n_outputs; o++) {
		const struct graph_value *x = &c->v->values[c->v->outputs[o]];
		size_t bytes = c->lay.out_bytes[o] ? c->lay.out_bytes[o] : 1;
		w->n_out++;
		w->poison[o] = malloc(bytes);
		w->dout[o] = gpu_alloc(w->dev, bytes);
		if (w->poison[o] == NULL || w->dout[o] == NULL)
			goto oom;
		eval_fill_poison(w->poison[o], x->dtype, (size_t)graph_shape_numel(&x->shape));
	}
	if (w->is_pass) {
		if (w->pi && pass_instance_bind(w->pi, c->v, err, errlen))
			return -1;
	} else {
		if (w->plans[k] == NULL) {
			snprintf(err, errlen, "variant '%s' was already run by this worker", c->v->name);
			return -1;
		}
		w->plan = w->plans[k];
		w->plans[k] = NULL;
	}
	return 0;
oom:
	snprintf(err, errlen, "out of device memory allocating the inputs and outputs of variant '%s'", c->v->name);
	return -1;
}

static void worker_loop(struct wstate *w, int sock, unsigned char *res)
{
	w->sock = sock;
	w->res = res;
	struct cmd cmd;
	char err[400];
	double times[MAX_BATCH];
	while (eval_recv_all(sock, &cmd, sizeof(cmd)) == 0) {
		int rc = PF_OK;
		err[0] = 0;
		switch (cmd.op) {
		case CMD_MAP:
			if (w->c->in.base == NULL && shm_map(&w->c->in, PROT_READ))
				reply_send(sock, W_ERR, NULL, 0, NULL, 0, "cannot map the inputs: %s", strerror(errno));
			else
				reply_send(sock, PF_OK, NULL, 0, NULL, 0, "mapped");
			continue;
		case CMD_VARIANT:
			if (w_variant(w, cmd.variant, err, sizeof(err)))
				reply_send(sock, W_ERR, NULL, 0, NULL, 0, "%s", err);
			else
				reply_send(sock, PF_OK, NULL, 0, NULL, 0, "ready");
			continue;
		case CMD_CHECK:
		case CMD_TIME: {
			double ms = 0;
			struct trial_gpu gpu = {0};
			int timed = cmd.op == CMD_TIME, slot = timed ? TIMED_SLOT : cmd.set;
			if (w->n_in != w->c->v->n_inputs || cmd.set < 0 || cmd.set >= N_SETS ||
			    w_load_set(w, timed && cmd.fresh ? -1 : cmd.set, timed ? cmd.rot : NULL, err, sizeof(err))) {
				reply_send(sock, W_ERR, NULL, 0, NULL, 0, "%s", err[0] ? err : "bad input set");
				continue;
			}
			rc = w_call(w, timed, &ms, timed && cmd.trace ? &gpu : NULL, err, sizeof(err));
			/* Both workers store every run (outside the timed window):
			 * the parent decides afterwards which trials to verify. */
			if (rc == PF_OK && w_store(w, res, slot, 1)) {
				rc = W_ERR;
				snprintf(err, sizeof(err), "copying results back failed");
			}
			times[0] = ms;
			reply_send(sock, rc, times, 1, &gpu, gpu.valid ? sizeof(gpu) : 0, "%s", err);
			continue;
		}
		case CMD_COUNT: {
			/* A counted call for the modeled GPU time (cpu backend,
			 * gpu/traffic.h) on fresh inputs like a timed trial's,
			 * its results stored like one's (the parent verifies
			 * them): cmd.count COUNT_STEP_BYTES counts each launch's
			 * memory traffic, COUNT_STEP_TIMES (after it, repeated)
			 * times each launch's CUDA threads.  Eager runs the
			 * launches a GPU would run (block-per-row reductions, an
			 * element a thread), not the cpu backend's plan; the
			 * pass runs with device memory closed to its host code
			 * outside its launches. */
			double ms = 0;
			int bytes_step = cmd.count == COUNT_STEP_BYTES;
			if (w->n_in != w->c->v->n_inputs || w_load_set(w, cmd.fresh ? -1 : 0, cmd.rot, err, sizeof(err))) {
				reply_send(sock, W_ERR, NULL, 0, NULL, 0, "%s", err[0] ? err : "bad input set");
				continue;
			}
			if (!w->is_pass && !eager_is_gpu_geometry(w->plan) && w->gpu_plan == NULL &&
			    (w->gpu_plan = eager_prepare_gpu_geometry(w->dev, w->c->v, err, sizeof(err))) == NULL) {
				reply_send(sock, W_ERR, NULL, 0, NULL, 0, "eager's GPU plan: %s", err);
				continue;
			}
			if (bytes_step) {
				memset(&w->tr, 0, sizeof(w->tr));
				w->host_ms = -1;
				w->guard_touches = 0;
			}
			rc = (bytes_step ? gpu_traffic_begin(w->dev, err, sizeof(err))
					 : gpu_timing_begin(w->dev, err, sizeof(err)))
				     ? W_ERR
				     : PF_OK;
			if (rc == PF_OK) {
				struct eager_plan *own = w->plan;
				if (w->gpu_plan)
					w->plan = w->gpu_plan;
				w->guarded = w->is_pass;
				w->marks = 1;
				rc = w_call(w, 0, &ms, NULL, err, sizeof(err));
				w->marks = 0;
				w->guarded = 0;
				w->plan = own;
				if (bytes_step) {
					gpu_traffic_end(w->dev, &w->tr);
				} else {
					gpu_timing_end(w->dev, &w->tr);
					/* the host's time: the call's CPU time
					 * less its launches' and the guard's
					 * (CPU time: a preemption is not the
					 * pass's) */
					double host = w->call_cpu_ms - w->tr.launch_cpu_ms - w->guard_ms -
						      (w->is_pass ? pass_instance_runtime_ms(w->pi) : 0);
					if (host < 0)
						host = 0;
					if (w->host_ms < 0 || host < w->host_ms)
						w->host_ms = host;
				}
			}
			if (rc == PF_OK && w_store(w, res, TIMED_SLOT, 1)) {
				rc = W_ERR;
				snprintf(err, sizeof(err), "copying results back failed");
			}
			struct count_reply cr = {w->tr, w->host_ms < 0 ? 0 : w->host_ms, w->guard_touches, w->guard_first};
			times[0] = ms;
			reply_send(sock, rc, times, 1, &cr, sizeof(cr), "%s", err);
			continue;
		}
		case CMD_QUIT:
		default:
			return;
		}
	}
}

/* The process's address space now, in bytes (0 when unknown). */
static size_t vm_size_now(void)
{
	FILE *f = fopen("/proc/self/statm", "r");
	unsigned long pages = 0;
	if (f == NULL)
		return 0;
	if (fscanf(f, "%lu", &pages) != 1)
		pages = 0;
	fclose(f);
	return (size_t)pages * (size_t)sysconf(_SC_PAGESIZE);
}

/* The process's private writable memory (VmData: what RLIMIT_DATA counts),
 * or 0. */
static size_t data_size_now(void)
{
	FILE *f = fopen("/proc/self/status", "r");
	char line[256];
	unsigned long kb = 0;
	if (f == NULL)
		return 0;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "VmData: %lu kB", &kb) == 1)
			break;
	fclose(f);
	return (size_t)kb << 10;
}

/* The variables a pass worker keeps (base_scrub_environ): what the GPU
 * driver and CUDA's libraries may still read in it (lazy module loading, the
 * JIT cache), and the emulator's thread count.  Nothing of the evaluating
 * process's own. */
static int env_kept(const char *kv)
{
	static const char *const keep[] = {"CUDA_", "PASSFS_CPU_THREADS=", "LD_LIBRARY_PATH=", "PATH=", "HOME=",
					   "TMPDIR=", "LANG=", "LC_ALL="};
	for (size_t i = 0; i < sizeof(keep) / sizeof(keep[0]); i++)
		if (strncmp(kv, keep[i], strlen(keep[i])) == 0)
			return 1;
	return 0;
}

/* The pass worker is the one the kernel's out-of-memory killer takes first:
 * a pass that floods memory some other way (pinned by a driver, say) ends
 * itself, not the daemon or another program on the machine. */
static void oom_first(void)
{
	int fd = open("/proc/self/oom_score_adj", O_WRONLY | O_CLOEXEC);
	if (fd >= 0) {
		(void)!write(fd, "1000", 4);
		close(fd);
	}
}

/* Closes every descriptor but 1, 2 and keep[] (stdin becomes /dev/null):
 * the fork inherited the caller's (a daemon's files, sockets, the memfds of
 * eager's results), and mmap of an open descriptor needs no read(). */
static int close_other_fds(const int *keep, int n, char *err, size_t errlen)
{
	int devnull = open("/dev/null", O_RDONLY | O_CLOEXEC);
	if (devnull < 0 || dup2(devnull, 0) < 0) {
		snprintf(err, errlen, "cannot open /dev/null: %s", strerror(errno));
		return -1;
	}
	if (devnull != 0)
		close(devnull);
	if (gpu_close_fds_except(keep, n)) {
		snprintf(err, errlen, "close_range: %s", strerror(errno));
		return -1;
	}
	return 0;
}

/* The pass's kernels and what each uses (cuda backend), one per line:
 * name, lowered name, registers, static shared, local (spills), constant
 * bytes, max threads per block, tab-separated. */
static size_t kernel_list(struct gpu_module *m, char *buf, size_t cap)
{
	size_t len = 0;
	int n = m ? gpu_module_kernel_count(m) : 0;
	for (int i = 0; i < n && len < cap; i++) {
		struct gpu_kernel_info ki;
		if (gpu_kernel_info(gpu_module_kernel_at(m, i), &ki))
			continue;
		int k = snprintf(buf + len, cap - len, "%s\t%s\t%d\t%d\t%d\t%d\t%d\n", ki.name ? ki.name : "",
				 ki.lowered ? ki.lowered : "", ki.num_regs, ki.shared_bytes, ki.local_bytes,
				 ki.const_bytes, ki.max_threads_per_block);
		if (k < 0 || (size_t)k >= cap - len)
			break;
		len += (size_t)k;
	}
	return len;
}

/* Setup is done (modules loaded with collection on): from here records are
 * collected inside trace windows only.  Then one traced window with a
 * record in it: whatever CUPTI sets up on its first buffer, flush or
 * re-enable (a thread, say) happens before the pass worker's sandbox,
 * which would refuse it. */
static void trace_settle(struct wstate *w)
{
	char te[200] = "";
	if (!w->trace)
		return;
	if (gpu_trace_pause(w->dev, te, sizeof(te))) {
		w->trace = 0;
		snprintf(w->trace_note, sizeof(w->trace_note), "%s", te);
		return;
	}
	struct gpu_trace tr;
	void *m = gpu_alloc(w->dev, 4096);
	if (m == NULL || gpu_trace_begin(w->dev, te, sizeof(te)) || gpu_memset(w->dev, m, 0, 4096) ||
	    gpu_trace_end(w->dev, &tr, te, sizeof(te))) {
		w->trace = 0;
		snprintf(w->trace_note, sizeof(w->trace_note), "CUPTI's first window failed: %.160s",
			 te[0] ? te : "no device memory");
	}
	gpu_free(w->dev, m);
}

/* --cold: the first flush allocates its buffer; do it before the sandbox
 * (and before the cpu backend's address-space limit is measured). */
static int cold_settle(struct wstate *w, char *err, size_t errlen)
{
	char e2[256];
	if (!w->c->cold)
		return 0;
	if (gpu_l2_flush(w->dev, e2, sizeof(e2)) || gpu_sync(w->dev, e2, sizeof(e2))) {
		snprintf(err, errlen, "--cold: %s", e2);
		return -1;
	}
	return 0;
}

/* Runs in the forked child, bound to the ctx's current variant (batch
 * variant `k`); never returns. */
static void __attribute__((noreturn)) worker_main(struct ctx *c, int is_pass, int k, int sock, int report_fd)
{
	struct wstate w = {.c = c, .is_pass = is_pass};
	char err[400];
	/* The parent's mappings are not inherited (MADV_DONTFORK): each worker
	 * maps its own result area, and the inputs read-only once sealed (the
	 * eager worker may start before they are written: CMD_MAP). */
	c->in.base = c->eager_res.base = c->pass_res.base = NULL;
	/* A pass worker started before the compile (no module yet) maps the
	 * inputs once they are sealed, when the pass arrives. */
	int early = is_pass && c->mod == NULL;
	struct shm *mine = is_pass ? &c->pass_res : &c->eager_res;
	if (shm_map(mine, PROT_READ | PROT_WRITE) || (is_pass && !early && shm_map(&c->in, PROT_READ))) {
		snprintf(err, sizeof(err), "cannot map the shared memory: %s", strerror(errno));
		goto fail;
	}
	unsigned char *res = mine->base;
	if (is_pass) {
		/* Eager's outputs are never mapped here.  Descriptors go now,
		 * before the device is opened, so the driver's own are never
		 * among them: the mappings stay, the memfds (eager's results
		 * among them) go; an early worker keeps the inputs' until it
		 * has mapped them. */
		int keep[3] = {sock, report_fd, c->in.fd};
		if (close_other_fds(keep, early ? 3 : 2, err, sizeof(err)))
			goto fail;
		oom_first();
	}
	if (gpu_open(c->job->opts.backend[0] ? c->job->opts.backend : "auto", &w.dev, err, sizeof(err)))
		goto fail;
	/* The pass's kernels must all be loaded before the sandbox (a lazy
	 * load at a first launch would come after it).  Eager's worker is not
	 * sandboxed and keeps the driver's lazy loading: eager loading would
	 * have cuBLAS load every one of its kernels at its first call. */
	if (is_pass && gpu_load_kernels_eagerly(w.dev, err, sizeof(err)))
		goto fail;
	/* The cpu backend's traffic count (CMD_COUNT) needs its fault
	 * handler, which the pass worker's sandbox will not let it install. */
	if (gpu_backend_of(w.dev) != GPU_BACKEND_CUDA && gpu_traffic_install()) {
		snprintf(err, sizeof(err), "cannot install the traffic counter: %s", strerror(errno));
		goto fail;
	}
	/* GPU time: CUPTI must be on before any module loads or memory is
	 * allocated.  Not having it is a note in the result, not a failure. */
	if (gpu_backend_of(w.dev) == GPU_BACKEND_CUDA) {
		char te[200];
		if (gpu_trace_enable(w.dev, te, sizeof(te)) == 0)
			w.trace = 1;
		else
			snprintf(w.trace_note, sizeof(w.trace_note), "%s", te);
	}
	char *kl = NULL;        /* the ready reply's payload */
	size_t kl_len = 0;
	if (early) {
		/* CUDA's setup now, while the pass compiles; then wait for it */
		void *probe_mem = gpu_alloc(w.dev, 256);
		if (probe_mem == NULL) {
			snprintf(err, sizeof(err), "cannot allocate device memory");
			goto fail;
		}
		gpu_free(w.dev, probe_mem);
		reply_send(sock, PF_OK, NULL, 0, NULL, 0, "warm");
		struct cmd cm;
		uint64_t len = 0;
		if (eval_recv_all(sock, &cm, sizeof(cm)) || cm.op != CMD_MODULE)
			_exit(0);       /* the compile failed: nothing to run */
		char *buf = NULL;
		if (eval_recv_all(sock, &len, sizeof(len)) || len > ((uint64_t)1 << 32) || (buf = malloc(len ? len : 1)) == NULL ||
		    eval_recv_all(sock, buf, len)) {
			snprintf(err, sizeof(err), "cannot receive the compiled pass");
			goto fail;
		}
		struct wire_in rb = {.p = (const unsigned char *)buf, .len = len};
		struct pass_module *m = eval_module_unpack(&rb, 0);
		free(buf);
		if (m == NULL) {
			snprintf(err, sizeof(err), "the compiled pass arrived truncated");
			goto fail;
		}
		c->mod = m;
		if (shm_map(&c->in, PROT_READ)) {
			snprintf(err, sizeof(err), "cannot map the inputs: %s", strerror(errno));
			goto fail;
		}
		close(c->in.fd);
		c->in.fd = -1;
	}
	if (is_pass) {
		c->v = &c->job->task->variants[c->first + k];
		if (pass_instance_create(c->mod, w.dev, c->v, &w.pi, err, sizeof(err)))
			goto fail;
		if (w_variant(&w, k, err, sizeof(err)) || cold_settle(&w, err, sizeof(err)))
			goto fail;
		if ((kl = malloc(PAYLOAD_MAX)) != NULL)
			kl_len = kernel_list(pass_instance_module(w.pi), kl, PAYLOAD_MAX);
		int io[1] = {sock};
		struct sandbox_limits lim = {.address_space = 0, .cpu_seconds = 0, .report_fd = report_fd,
					     .io_fds = io, .n_io_fds = 1};
		/* The cuda driver reserves terabytes of address space, so the
		 * address-space limit is for the cpu backend, where device memory
		 * is ours; on the cuda backend the pass's host memory is limited
		 * by RLIMIT_DATA (private writable memory: the driver's
		 * reservations are not writable and its mappings of device memory
		 * are shared, so neither counts).  Later variants of the batch
		 * allocate their own buffers. */
		int cuda = gpu_backend_of(w.dev) == GPU_BACKEND_CUDA;
		/* every descriptor but the socket and the report pipe was
		 * closed before the device was opened: the rest are the
		 * driver's and CUPTI's, also those opened after CUDA's
		 * initialisation (module loads, first mappings, trace windows) */
		lim.adopt_open_fds = cuda;
		lim.keep_accessed = !cuda;
		long cpus = sysconf(_SC_NPROCESSORS_ONLN);
		size_t headroom = PASS_AS_SCRATCH + PASS_AS_SLACK + (size_t)(cpus > 0 ? cpus + 1 : 2) * PASS_AS_PER_THREAD;
		size_t now = cuda ? data_size_now() : vm_size_now();
		if (now > 0 && cuda)
			lim.data = now + headroom;
		else if (now > 0)
			lim.address_space = now + c->max_io_bytes + headroom;
		trace_settle(&w);
		/* PASSFS_SANDBOX_AUDIT=file: refused calls are logged there and
		 * carried out (sandbox.h); the result says so */
		const char *audit = getenv("PASSFS_SANDBOX_AUDIT");
		if (audit != NULL && *audit && (lim.audit_fd = open(audit, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644)) < 0) {
			snprintf(err, sizeof(err), "PASSFS_SANDBOX_AUDIT: cannot open %s: %s", audit, strerror(errno));
			goto fail;
		}
		/* Before pass code runs: the evaluating process's command line
		 * and environment (tokens, keys, the daemon's settings) were the
		 * pass's to read on the stack above it (a pass walked its stack
		 * with mprotect as a probe and printed them): zeroed, and the
		 * environment replaced by copies of env_kept's. */
		base_scrub_environ(env_kept, 1);
		if (sandbox_enter(&lim, err, sizeof(err)))
			goto fail;
	} else {
		struct graph_task sub = *c->job->task;
		sub.variants = c->job->task->variants + c->first;
		sub.n_variants = c->count;
		if ((w.plans = calloc((size_t)c->count, sizeof(*w.plans))) == NULL) {
			snprintf(err, sizeof(err), "out of memory");
			goto fail;
		}
		if (eager_prepare_task(w.dev, &sub, w.plans, err, sizeof(err)))
			goto fail;
		/* which vendor libraries eager uses (cuBLAS, cuDNN), or why not:
		 * "libraries\tnote" */
		const char *libs = "", *note = "";
		for (int q = 0; q < c->count; q++) {
			if (!*libs)
				libs = eager_libraries(w.plans[q]);
			if (!*note)
				note = eager_library_note(w.plans[q]);
		}
		if ((kl = malloc(PAYLOAD_MAX)) != NULL) {
			int n = snprintf(kl, PAYLOAD_MAX, "%s\t%s", libs, note);
			kl_len = n < 0 ? 0 : (size_t)n < PAYLOAD_MAX ? (size_t)n : PAYLOAD_MAX - 1;
		}
		if (w_variant(&w, k, err, sizeof(err)) || cold_settle(&w, err, sizeof(err)))
			goto fail;
		trace_settle(&w);
	}
	reply_send(sock, PF_OK, NULL, 0, kl, kl_len, "%s", w.trace_note);
	free(kl);
	worker_loop(&w, sock, res);
	_exit(0);
fail:
	reply_send(sock, W_ERR, NULL, 0, NULL, 0, "%s", err);
	_exit(1);
}

/* ---- the parent side ---------------------------------------------------------- */

static void worker_drain(struct worker *wk)
{
	char buf[4096];
	while (wk->out_fd >= 0) {
		ssize_t n = read(wk->out_fd, buf, sizeof(buf));
		if (n <= 0)
			break;
		size_t take = 0;
		if (wk->log_len < LOG_HEAD) {
			take = (size_t)n;
			if (take > LOG_HEAD - wk->log_len)
				take = LOG_HEAD - wk->log_len;
			char *nl = realloc(wk->log, wk->log_len + take + 1);
			if (nl == NULL)
				continue;
			wk->log = nl;
			memcpy(wk->log + wk->log_len, buf, take);
			wk->log_len += take;
			wk->log[wk->log_len] = 0;
		}
		base_tail_keep(wk->tail, LOG_TAIL, &wk->tail_len, buf + take, (size_t)n - take, &wk->dropped);
	}
}

/* Joins head and tail into wk->log, saying how much was left out. */
static void worker_log_finish(struct worker *wk)
{
	if (wk->tail_len == 0)
		return;
	char gap[96] = "";
	if (wk->dropped)
		snprintf(gap, sizeof(gap), "\n[... %llu bytes of output not kept ...]\n", wk->dropped);
	size_t gl = strlen(gap);
	char *nl = realloc(wk->log, wk->log_len + gl + wk->tail_len + 1);
	if (nl == NULL)
		return;
	memcpy(nl + wk->log_len, gap, gl);
	memcpy(nl + wk->log_len + gl, wk->tail, wk->tail_len);
	wk->log = nl;
	wk->log_len += gl + wk->tail_len;
	wk->log[wk->log_len] = 0;
	wk->tail_len = 0;
}

/* Forks a worker bound to batch variant k (the ctx's current variant). */
int worker_start(struct ctx *c, int is_pass, int k, struct worker *wk, char *err, size_t errlen)
{
	int sv[2], out[2], rep[2];
	memset(wk, 0, sizeof(*wk));
	wk->pid = -1;
	wk->variant = k;
	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) || pipe2(out, O_CLOEXEC) ||
	    pipe2(rep, O_CLOEXEC)) {
		snprintf(err, errlen, "cannot create worker pipes: %s", strerror(errno));
		return -1;
	}
	fflush(stdout);
	fflush(stderr);
	/* The worker keeps its pipes and this evaluation's memfds (its own
	 * results and the inputs); whatever else the daemon has open goes. */
	int keep[5] = {sv[1], out[1], rep[1], c->in.fd, is_pass ? c->pass_res.fd : c->eager_res.fd};
	pid_t pid = gpu_fork_worker(keep, 5);
	if (pid < 0) {
		snprintf(err, errlen, "fork: %s", strerror(errno));
		return -1;
	}
	if (pid == 0) {
		/* The child's stdout and stderr go to the log pipe; kill it with
		 * the parent. */
		close(sv[0]);
		close(out[0]);
		close(rep[0]);
		eval_prctl_pdeathsig_kill();
		dup2(out[1], 1);
		dup2(out[1], 2);
		close(out[1]);
		worker_main(c, is_pass, k, sv[1], rep[1]);
	}
	close(sv[1]);
	close(out[1]);
	close(rep[1]);
	wk->pid = pid;
	wk->cancel = c->job->hooks.cancel;
	wk->sock = sv[0];
	wk->out_fd = out[0];
	wk->report_fd = rep[0];
	fcntl(wk->out_fd, F_SETFL, O_NONBLOCK);
	fcntl(wk->report_fd, F_SETFL, O_NONBLOCK);
	return 0;
}

int eval_is_cancelled(const int *cancel)
{
	return cancel != NULL && __atomic_load_n(cancel, __ATOMIC_RELAXED) != 0;
}

/* Waits for a reply (and its times) within the timeout, draining the
 * child's output meanwhile. */
int worker_wait(struct worker *wk, double timeout_s, struct reply *r, double *times)
{
	double deadline = base_now_ms() + timeout_s * 1e3;
	for (;;) {
		struct pollfd pf[2] = {{wk->sock, POLLIN, 0}, {wk->out_fd, POLLIN, 0}};
		double left = deadline - base_now_ms();
		if (left <= 0 || eval_is_cancelled(wk->cancel))
			return STEP_TIMEOUT;
		int n = poll(pf, 2, (int)(left > 100 ? 100 : left + 1));
		if (n < 0 && errno != EINTR)
			return STEP_DIED;
		if (pf[1].revents)
			worker_drain(wk);
		if (pf[0].revents & POLLIN) {
			if (eval_recv_all(wk->sock, r, sizeof(*r)))
				return STEP_DIED;
			r->msg[sizeof(r->msg) - 1] = 0;
			if (r->n_times < 0 || r->n_times > MAX_BATCH)
				return STEP_DIED;
			if (r->n_times && eval_recv_all(wk->sock, times, sizeof(double) * (size_t)r->n_times))
				return STEP_DIED;
			if (r->n_bytes < 0 || r->n_bytes > PAYLOAD_MAX)
				return STEP_DIED;
			wk->payload_len = r->n_bytes;
			if (r->n_bytes && eval_recv_all(wk->sock, wk->payload, (size_t)r->n_bytes))
				return STEP_DIED;
			return STEP_OK;
		}
		if (pf[0].revents & (POLLHUP | POLLERR))
			return STEP_DIED;
	}
}

/* Ends the worker and says how it ended (into msg when abnormal). */
void worker_kill(struct worker *wk)
{
	if (wk->pid > 0)
		kill(wk->pid, SIGKILL);
	worker_stop(wk, 1, NULL, 0);
}

void worker_stop(struct worker *wk, int kill_it, char *msg, size_t len)
{
	if (wk->pid <= 0)
		return;
	if (!kill_it) {
		struct cmd q = {.op = CMD_QUIT};
		eval_send_all(wk->sock, &q, sizeof(q));
	}
	int st = 0, killed = 0;
	double deadline = base_now_ms() + (kill_it ? 50 : 2000);
	pid_t got;
	/* A worker that died by itself is reaped with its own status; one that
	 * is still there when we give up is killed. */
	while ((got = waitpid(wk->pid, &st, WNOHANG)) == 0 && base_now_ms() < deadline)
		usleep(1000);
	if (got != wk->pid) {
		kill(wk->pid, SIGKILL);
		waitpid(wk->pid, &st, 0);
		killed = 1;
	}
	wk->status = killed ? 0 : st;
	worker_drain(wk);
	worker_log_finish(wk);
	ssize_t n = read(wk->report_fd, wk->report, sizeof(wk->report) - 1);
	wk->report[n > 0 ? n : 0] = 0;
	char *nl = strchr(wk->report, '\n');
	if (nl)
		*nl = 0;
	if (msg && len) {
		if (wk->report[0])
			snprintf(msg, len, "%s", wk->report);
		else if (WIFSIGNALED(st) && !killed)
			snprintf(msg, len, "%s (signal %d)", strsignal(WTERMSIG(st)), WTERMSIG(st));
		else if (WIFEXITED(st) && WEXITSTATUS(st) != 0)
			snprintf(msg, len, "the worker exited with status %d", WEXITSTATUS(st));
	}
	close(wk->sock);
	close(wk->out_fd);
	close(wk->report_fd);
	wk->sock = wk->out_fd = wk->report_fd = -1;
	wk->pid = -1;
}

/* What the worker printed since the last call (malloc'd, NULL when
 * nothing), head and tail as worker_log_finish joins them. */
char *worker_take_log(struct worker *wk)
{
	worker_drain(wk);
	worker_log_finish(wk);
	char *log = wk->log_len ? wk->log : NULL;
	if (log == NULL)
		free(wk->log);
	wk->log = NULL;
	wk->log_len = 0;
	wk->tail_len = 0;
	wk->dropped = 0;
	return log;
}

int worker_step(struct worker *wk, double timeout_s, const struct cmd *cmd, struct reply *r,
		       double *times)
{
	if (eval_send_all(wk->sock, cmd, sizeof(*cmd)))
		return STEP_DIED;
	return worker_wait(wk, timeout_s, r, times);
}

/* A counted call (CMD_COUNT) with the kernel's accounting of the worker
 * around it (kacct.h): at the worker's "call" mark its threads are counted
 * and, for the bytes step, the accessed bits of its pages cleared; at its
 * "called" mark its shared memory referenced since is read; the CPU time of
 * every thread runs from the first mark to the reply.  Anything but the two
 * marks and then a reply is out of order (k->out_of_order): pass code wrote
 * to the socket. */
int worker_step_counted(struct worker *wk, double timeout_s, const struct cmd *cmd, struct reply *r,
			double *times, int bytes, struct kacct_call *k)
{
	memset(k, 0, sizeof(*k));
	k->threads = -1;
	if (eval_send_all(wk->sock, cmd, sizeof(*cmd)))
		return STEP_DIED;
	int64_t cpu0 = -1;
	for (int mark = 0;; mark++) {
		int st = worker_wait(wk, timeout_s, r, times);
		if (st != STEP_OK)
			return st;
		if (r->status != W_MARK) {
			if (mark == 1)          /* a reply in place of "called" */
				k->out_of_order = 1;
			if (mark == 2 && cpu0 >= 0) {
				int64_t cpu1 = kacct_cpu_ns(wk->pid);
				k->cpu_ms = cpu1 >= cpu0 ? (double)(cpu1 - cpu0) / 1e6 : 0;
			}
			return STEP_OK;
		}
		if (mark >= 2) {
			k->out_of_order = 1;
			return STEP_OK;
		}
		if (mark == 0) {
			k->threads = kacct_threads(wk->pid);
			if (bytes && kacct_clear_refs(wk->pid) != 0)
				bytes = 0;
			cpu0 = kacct_cpu_ns(wk->pid);
		} else if (bytes) {
			k->have_bytes = kacct_shared_referenced(wk->pid, &k->bytes) == 0;
		}
		char go = 1;
		if (eval_send_all(wk->sock, &go, 1))
			return STEP_DIED;
	}
}
