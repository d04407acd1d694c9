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
#include "eval.h"

#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <math.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/random.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "eager.h"
#include "eval_util.h"
#include "gpu.h"
#include "inputs.h"
#include "integrity.h"
#include "jail.h"
#include "nvrtc.h"
#include "pass.h"
#include "pass_run.h"
#include "sha256.h"
#include "sandbox.h"
#include "score.h"

#define N_SETS 2                /* public seed 123, then the secret seed */
#define PUBLIC_SEED 123
/* What a worker printed is kept as its first LOG_HEAD and last LOG_TAIL
 * bytes (16 KiB in all, whatever it prints); the pipe is always drained, so
 * a flood never blocks the worker. */
#define LOG_HEAD 8192
#define LOG_TAIL 8192

#define TIMED_SLOT N_SETS     /* result slot of the latest timed trial */
/* Which levels count (docs/scoring.md): a variant is correct
 * only from t <= COUNTED_T (at t = 0, atol 1 and rtol 1 accept an all-zero
 * output against anything), and its verdict is ok only from t <= OK_T, the
 * first fully weighted level. */
#define COUNTED_T (-1)
#define OK_T (-3)
/* Address space a pass worker may add on the cpu backend, past what it
 * holds when the sandbox goes on: the scratch limit (pass_run.c, 4 GiB),
 * fiber stacks (pf_emu.h: 128 MiB per 1024-thread block per pool thread,
 * twice over for slack) and 1 GiB for the pass's own aligned_alloc/mmap. */
#define PASS_AS_SCRATCH ((size_t)4 << 30)
#define PASS_AS_PER_THREAD ((size_t)256 << 20)
#define PASS_AS_SLACK ((size_t)1 << 30)
/* The compile child's wall clock (NVRTC, then the host compiler's own 60
 * s); its other limits are the compile jail's (jail.h). */
#define COMPILE_TIMEOUT_S 120

enum { CMD_CHECK = 1, CMD_TIME, CMD_VARIANT, CMD_MAP, CMD_MODULE, CMD_QUIT };

/* CMD_MODULE (a pass worker started before the compile, once): the
 * compiled pass follows (a uint64_t length, then module_pack's bytes).
 * CMD_MAP (eager worker, once): map the sealed inputs.  CMD_VARIANT: move
 * on to variant `variant` (device buffers for its inputs
 * and outputs, eager's plan or the pass bound to it).  CMD_CHECK: run input
 * set `set` into result slot `set`.  CMD_TIME: one timed trial on the
 * public set rotated by rot[] (elements, per input), results into
 * TIMED_SLOT. */
struct cmd {
	int op, set, count, variant;
	int trace;              /* CMD_TIME: record GPU time (CUPTI) for this call */
	uint64_t rot[GRAPH_MAX_IO];
};

/* A reply, then n_times doubles, then n_bytes of payload (a timed trial's
 * struct trial_gpu; the pass worker's kernel list when it is ready). */
struct reply {
	int status;             /* PF_OK or PF_ERR_*; W_ERR for worker trouble */
	int n_times;
	int n_bytes;
	char msg[480];
};
#define W_ERR 100
#define MAX_BATCH 64
#define PAYLOAD_MAX 16384
#define TRACED_TRIALS 20        /* CUPTI-recorded calls per side after the timed ones */
/* Adaptive timing: past the trials asked for, up to TRIALS_CAP times as many
 * while the speedup's 95% interval is wider than +-SPEEDUP_TIGHT; only when
 * at least ADAPT_MIN_TRIALS were asked for (fewer give no interval). */
#define TRIALS_CAP 4
#define SPEEDUP_TIGHT 0.03
#define ADAPT_MIN_TRIALS 6

/* GPU time of one traced call from CUPTI (cuda backend with tracing on). */
struct trial_gpu {
	int valid;
	struct gpu_trace tr;
};

/* Inputs of the variants evaluated by one pair of workers live in one
 * sealed memfd; a batch ends where the next variant would take it past
 * this many bytes (a batch always holds at least one variant).
 * PASSFS_BATCH_BYTES changes it (tests use 1: a batch per variant). */
#define BATCH_INPUT_BYTES ((size_t)2 << 30)

static size_t batch_input_bytes(void)
{
	const char *e = getenv("PASSFS_BATCH_BYTES");
	char *end;
	unsigned long long v = e && *e ? strtoull(e, &end, 10) : 0;
	return v > 0 && *end == '\0' ? (size_t)v : BATCH_INPUT_BYTES;
}

/* Shared memory of one variant's evaluation. */
struct shm {
	int fd;
	size_t size;
	unsigned char *base;
};

struct layout {
	size_t in_off[N_SETS][GRAPH_MAX_IO];
	size_t in_bytes[GRAPH_MAX_IO];
	size_t out_bytes[GRAPH_MAX_IO];
	size_t in_total;
	/* result area: outputs per set + the timed outputs, then inputs after */
	size_t res_out[N_SETS + 1][GRAPH_MAX_IO];
	size_t res_in_after[N_SETS + 1][GRAPH_MAX_IO];
	size_t res_total;
};

struct worker {
	pid_t pid;
	int variant;            /* the variant it is bound to */
	int early;              /* a pass worker started before the compile, not yet sent the pass */
	int pass_ran;           /* it said it was ready: pass code may have run in it since, so its
				 * reports are the pass's word */
	int status;             /* waitpid's status once worker_stop reaped it */
	int sock;               /* parent's end */
	int out_fd;             /* the child's stdout+stderr, read end */
	int report_fd;          /* sandbox report, read end */
	char *log;              /* what the child printed: the head, then (at
				 * worker_stop) the tail appended */
	size_t log_len;
	char tail[LOG_TAIL];    /* the last bytes past the head */
	size_t tail_len;
	unsigned long long dropped;     /* bytes between head and tail */
	char report[256];
	unsigned char payload[PAYLOAD_MAX];
	int payload_len;        /* of the latest reply */
	const int *cancel;      /* the job's: a wait ends as a timeout once set */
};

/* The job as this file works on it: the parsed graph beside the options,
 * and the hooks (eval_run makes it from the value of eval.h). */
struct ejob {
	const struct graph_task *task;
	const char *pass_label;
	const char *pass_src;
	size_t pass_len;
	struct eval_opts opts;
	struct eval_hooks hooks;
};

/* One batch of variants, evaluated by one eager worker and a pass worker
 * that lives across variants until one fails (each variant's own copy:
 * v, lay and the variant index change as the batch goes on). */
struct ctx {
	const struct ejob *job;
	int first, count;               /* the batch: task variants first .. first+count-1 */
	struct layout *lays;            /* per batch variant */
	const struct graph_variant *v;  /* the current variant */
	struct layout lay;              /* its layout */
	struct shm in, eager_res, pass_res;
	struct pass_module *mod;
	double timeout_s;
	const char *timed_out;          /* the variant that timed out first (the limit is shorter since), or NULL */
	int warmup, trials;
	int cold;
	int trial_times;                /* keep every timed trial's ms in result.json */
	int cuda;                       /* the cuda backend */
	int traced_trials;              /* CUPTI-recorded trials after the timed ones */
	size_t max_io_bytes;            /* the largest variant's inputs + outputs */
	double bytes_per_ms;    /* the roofline's bandwidth; 0: unknown */
	size_t roof_cached;     /* bytes a cache may serve (a GPU's L2): not in the bound */
};

/* ---- small helpers -------------------------------------------------------- */


static size_t align_up(size_t x)
{
	return (x + 255) & ~(size_t)255;
}

static int shm_create(struct shm *s, const char *name, size_t size)
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

static void shm_destroy(struct shm *s)
{
	if (s->base && s->base != MAP_FAILED)
		munmap(s->base, s->size);
	if (s->fd >= 0)
		close(s->fd);
	s->base = NULL;
	s->fd = -1;
}

/* Makes the inputs immutable for every process that maps them. */
static int shm_seal(struct shm *s)
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
static void plan_layout(const struct graph_variant *v, size_t in_base, struct layout *L)
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

/* ---- a compiled pass as bytes ---------------------------------------------------- */


/* A string as a length (UINT32_MAX for NULL) and its bytes. */
static void mem_blob(FILE *f, const char *s)
{
	uint32_t n = s ? (uint32_t)strlen(s) : UINT32_MAX;
	fwrite(&n, sizeof(n), 1, f);
	if (s)
		fwrite(s, 1, n, f);
}

struct rbuf {
	const unsigned char *p;
	size_t len, off;
	int bad;
};

static void rbuf_take(struct rbuf *r, void *dst, size_t n)
{
	if (r->bad || r->len - r->off < n) {
		r->bad = 1;
		memset(dst, 0, n);
		return;
	}
	memcpy(dst, r->p + r->off, n);
	r->off += n;
}

static char *blob_read(struct rbuf *r)
{
	uint32_t n;
	rbuf_take(r, &n, sizeof(n));
	if (r->bad || n == UINT32_MAX)
		return NULL;
	if (r->len - r->off < n) {
		r->bad = 1;
		return NULL;
	}
	char *s = malloc((size_t)n + 1);
	if (s == NULL) {
		r->bad = 1;
		return NULL;
	}
	memcpy(s, r->p + r->off, n);
	s[n] = 0;
	r->off += n;
	return s;
}

/* A compiled pass as bytes (the compile child sends it to the evaluator,
 * the evaluator to a pass worker started before the compile): a head, then
 * the strings.  A field added to struct pass_module must be added here
 * (the assertion above trips first). */
struct module_head {
	int n_names, has_lowered;
	double nvrtc_ms, host_ms;
	char note[160];
};

static int module_pack(const struct pass_module *m, char **out, size_t *outlen)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	if (f == NULL)
		return -1;
	struct module_head h = {.n_names = m->names.n, .has_lowered = m->lowered != NULL, .nvrtc_ms = m->nvrtc_ms,
				.host_ms = m->host_ms};
	snprintf(h.note, sizeof(h.note), "%s", m->note);
	fwrite(&h, sizeof(h), 1, f);
	const char *strs[3] = {m->label, m->dir, m->so_path};
	for (int i = 0; i < 3; i++)
		mem_blob(f, strs[i]);
	for (int i = 0; i < m->names.n; i++) {
		mem_blob(f, m->names.expr[i]);
		fwrite(&m->names.line[i], sizeof(int), 1, f);
	}
	for (int i = 0; m->lowered && i < m->names.n; i++)
		mem_blob(f, m->lowered[i]);
	mem_blob(f, m->ptx);
	mem_blob(f, m->cubin_path);
	mem_blob(f, m->host_log);
	int bad = ferror(f);
	if (fclose(f) || bad) {
		free(buf);
		return -1;
	}
	*out = buf;
	*outlen = len;
	return 0;
}

/* NULL when the bytes are short or memory runs out.  own_dir: the module
 * owns its directory (pass_module_free removes it); a worker's copy does
 * not. */
static struct pass_module *module_unpack(struct rbuf *rb, int own_dir)
{
	struct module_head h;
	rbuf_take(rb, &h, sizeof(h));
	struct pass_module *m = rb->bad || h.n_names < 0 || h.n_names > 100000 ? NULL : calloc(1, sizeof(*m));
	if (m == NULL)
		return NULL;
	m->label = blob_read(rb);
	m->dir = blob_read(rb);
	if (!own_dir) {
		free(m->dir);
		m->dir = NULL;
	}
	m->so_path = blob_read(rb);
	m->nvrtc_ms = h.nvrtc_ms;
	m->host_ms = h.host_ms;
	memcpy(m->note, h.note, sizeof(m->note));
	m->note[sizeof(m->note) - 1] = 0;
	if (h.n_names > 0 && !rb->bad) {
		m->names.expr = calloc((size_t)h.n_names, sizeof(char *));
		m->names.line = calloc((size_t)h.n_names, sizeof(int));
		if (m->names.expr == NULL || m->names.line == NULL)
			rb->bad = 1;
		for (int i = 0; i < h.n_names && !rb->bad; i++) {
			m->names.expr[i] = blob_read(rb);
			rbuf_take(rb, &m->names.line[i], sizeof(int));
			m->names.n = i + 1;
		}
		if (h.has_lowered && !rb->bad) {
			if ((m->lowered = calloc((size_t)h.n_names, sizeof(char *))) == NULL)
				rb->bad = 1;
			for (int i = 0; i < h.n_names && !rb->bad; i++)
				m->lowered[i] = blob_read(rb);
		}
	}
	m->ptx = blob_read(rb);
	m->cubin_path = blob_read(rb);
	m->host_log = blob_read(rb);
	if (rb->bad || m->label == NULL || m->so_path == NULL) {
		pass_module_free(m);
		return NULL;
	}
	return m;
}

/* ---- the workers (children) -------------------------------------------------- */

struct wstate {
	struct ctx *c;
	struct gpu_dev *dev;
	void *din[GRAPH_MAX_IO], *dout[GRAPH_MAX_IO];
	int n_in, n_out;                /* of the buffers above */
	/* pass worker */
	struct pass_instance *pi;
	/* eager worker: a plan per batch variant (one op-library compile) */
	struct eager_plan **plans;
	struct eager_plan *plan;
	int is_pass;
	int trace;                      /* CUPTI records GPU time */
	char trace_note[200];           /* why not, when not */
	unsigned char *poison[GRAPH_MAX_IO];
};

/* Loads input set `set`, each input rotated left by rot[i] elements (NULL:
 * as generated): device element k holds element (k + rot) mod n. */
static int w_load_set(struct wstate *w, int set, const uint64_t *rot, char *err, size_t errlen)
{
	const struct ctx *c = w->c;
	for (int i = 0; i < c->v->n_inputs; i++) {
		const unsigned char *src = c->in.base + c->lay.in_off[set][i];
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
	double t0 = eval_now_ms();
	int rc;
	if (w->is_pass)
		rc = pass_instance_call(w->pi, w->din, w->dout, err, errlen);
	else
		rc = eager_run(w->plan, w->din, w->dout, err, errlen) ? W_ERR : PF_OK;
	if (rc == PF_OK && gpu_sync(w->dev, e2, sizeof(e2))) {
		snprintf(err, errlen, "%s", e2);
		rc = PF_ERR_LAUNCH;
	}
	*ms = eval_now_ms() - t0;
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
			    w_load_set(w, cmd.set, timed ? cmd.rot : NULL, err, sizeof(err))) {
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
		struct rbuf rb = {.p = (const unsigned char *)buf, .len = len};
		struct pass_module *m = module_unpack(&rb, 0);
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
		size_t rest = (size_t)n - take;
		if (rest == 0)
			continue;
		if (wk->tail_len + rest > LOG_TAIL) {
			size_t drop = wk->tail_len + rest - LOG_TAIL;
			if (drop > wk->tail_len)
				drop = wk->tail_len;
			memmove(wk->tail, wk->tail + drop, wk->tail_len - drop);
			wk->tail_len -= drop;
			wk->dropped += drop;
		}
		if (rest > LOG_TAIL) {
			wk->dropped += rest - LOG_TAIL;
			take += rest - LOG_TAIL;
			rest = LOG_TAIL;
		}
		memcpy(wk->tail + wk->tail_len, buf + take, rest);
		wk->tail_len += rest;
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
static int worker_start(struct ctx *c, int is_pass, int k, struct worker *wk, char *err, size_t errlen)
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
		prctl_pdeathsig_kill();
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

/* Outcome of one step: 0 reply read; W_DIED the child died; W_TIMEOUT. */
enum { STEP_OK = 0, STEP_DIED = 1, STEP_TIMEOUT = 2 };

static int is_cancelled(const int *cancel)
{
	return cancel != NULL && __atomic_load_n(cancel, __ATOMIC_RELAXED) != 0;
}

/* Waits for a reply (and its times) within the timeout, draining the
 * child's output meanwhile. */
static int worker_wait(struct worker *wk, double timeout_s, struct reply *r, double *times)
{
	double deadline = eval_now_ms() + timeout_s * 1e3;
	for (;;) {
		struct pollfd pf[2] = {{wk->sock, POLLIN, 0}, {wk->out_fd, POLLIN, 0}};
		double left = deadline - eval_now_ms();
		if (left <= 0 || is_cancelled(wk->cancel))
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
static void worker_stop(struct worker *wk, int kill_it, char *msg, size_t len)
{
	if (wk->pid <= 0)
		return;
	if (!kill_it) {
		struct cmd q = {.op = CMD_QUIT};
		eval_send_all(wk->sock, &q, sizeof(q));
	}
	int st = 0, killed = 0;
	double deadline = eval_now_ms() + (kill_it ? 50 : 2000);
	pid_t got;
	/* A worker that died by itself is reaped with its own status; one that
	 * is still there when we give up is killed. */
	while ((got = waitpid(wk->pid, &st, WNOHANG)) == 0 && eval_now_ms() < deadline)
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
static char *worker_take_log(struct worker *wk)
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

static int worker_step(struct worker *wk, double timeout_s, const struct cmd *cmd, struct reply *r,
		       double *times)
{
	if (eval_send_all(wk->sock, cmd, sizeof(*cmd)))
		return STEP_DIED;
	return worker_wait(wk, timeout_s, r, times);
}

/* ---- per-variant evaluation ------------------------------------------------------ */

/* The element furthest from eager on one checked input set: in the output
 * whose level is worst, the one furthest outside the tolerance of its
 * tightest failing level (eval_cmp.worst_*). */
struct worst {
	int min_t;              /* the set's level: the largest of its outputs' */
	int output;             /* -1: none (no outputs compared) */
	long long at;           /* flat index in that output */
	double pass, eager, excess;
};

/* An output whose closeness a constant matches: on a checked set, the pass is
 * close only from pass_t, and an all-zero output (or eager's mid-range value
 * everywhere) would be close from blind_t <= pass_t (eval_blind_t). */
struct blind {
	int output;             /* -1: none */
	int blind_t, pass_t;
};

/* Whether a is worse than b: a larger level, or the same level further out. */
static int worst_beats(const struct worst *a, const struct worst *b)
{
	if (a->output < 0)
		return 0;
	if (b->output < 0 || a->min_t != b->min_t)
		return b->output < 0 || a->min_t > b->min_t;
	return a->excess > b->excess;
}

struct vresult {
	enum score_status status;
	int min_t;
	double speedup;
	double eager_ms, pass_ms;       /* medians */
	double eager_iqr, pass_iqr;     /* IQR / median */
	double max_abs_err, max_rel_err;
	int close_t;                    /* worst over every checked set, before COUNTED_T applies */
	struct worst worst;             /* the element that sets close_t */
	struct blind blind;             /* an output a constant matches as closely (output -1: none) */
	int trials;
	int timed_checked;              /* timed trials fully verified */
	double roofline_ms;             /* fastest possible (0: unknown) */
	int implausible;                /* pass median below the roofline bound */
	int timing_suspect;             /* the worker's times do not explain its round trips */
	double pass_ms_reported;        /* the worker's median when timing_suspect */
	double overhead_ms;             /* eager's round trip outside its timed window (median) */
	double unexplained_ms;
	int timing_retries;             /* timing runs repeated for instability */
	double speedup_paired;          /* median of per-trial eager/pass ratios */
	double speedup_of_medians;      /* eager_ms / pass_ms */
	double speedup_lo, speedup_hi;  /* its 95% interval */
	json_t *trial_ms;               /* with opts.trial_times: {eager: [...], pass: [...]} */
	/* CUPTI (cuda backend): medians per timed call */
	int gpu_trials;                 /* timed trials with GPU time on both sides */
	double eager_gpu_ms, pass_gpu_ms;       /* kernel time */
	double eager_span_ms, pass_span_ms;     /* first start to last end */
	json_t *eager_gpu_kernels, *pass_gpu_kernels;   /* per kernel name: medians per call */
	int eager_kernels, pass_kernels, pass_streams;
	unsigned long long gpu_dropped;
	double lock_wait_ms;            /* waiting for the GPU's benchmark lock */
	char note[400];                 /* why a flag is set */
	char msg[512];
	char *log;
};

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
static const struct graph_value *worst_index(const struct graph_variant *v, const struct worst *w,
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
	const struct graph_value *x = worst_index(v, w, idx);
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
		const unsigned char *src = c->in.base + c->lay.in_off[set][i];
		size_t bytes = c->lay.in_bytes[i], esz = graph_dtype_size(c->v->values[i].dtype);
		size_t n = esz ? bytes / esz : 0, r = rot && n ? (size_t)(rot[i] % n) : 0;
		if (memcmp(after, src + r * esz, (n - r) * esz) != 0 || memcmp(after + (n - r) * esz, src, r * esz) != 0) {
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
		s = (uint64_t)eval_now_ms() * 0x9e3779b97f4a7c15ull ^ (uint64_t)getpid();
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

static void fail_variant(struct vresult *vr, enum score_status st, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static void fail_variant(struct vresult *vr, enum score_status st, const char *fmt, ...)
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
static double after_timeout_s(double timeout_s)
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
			fail_variant(vr, SCORE_TIMEOUT,
				     "the pass did not finish within %g s (the limit once variant '%s' timed out)",
				     c->timeout_s, c->timed_out);
		else
			fail_variant(vr, SCORE_TIMEOUT, "the pass did not finish within %g s", c->timeout_s);
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
			fail_variant(vr, SCORE_RUNTIME_ERROR, "%s (a limit of passfs's sandbox, not the pass's doing: "
				     "PASSFS_SANDBOX_AUDIT lists what the driver needs)", how);
		else if ((sandboxed || reported) && strstr(how, "made by the GPU driver"))
			fail_variant(vr, SCORE_REJECTED, "%s: a pass may not use files, the network or processes "
				     "(the worker says the GPU driver made the call, but pass code had run in it and "
				     "can write that line too; PASSFS_SANDBOX_AUDIT lists what the driver needs)", how);
		else if (reported)
			fail_variant(vr, SCORE_REJECTED, "%s: a pass may not use files, the network or processes", how);
		else if (sandboxed)
			fail_variant(vr, SCORE_REJECTED, "sandbox: a forbidden system call (the worker exited with the "
				     "sandbox's status %d%s%.200s): a pass may not use files, the network or processes",
				     SANDBOX_EXIT_STATUS, how[0] ? "; its report: " : "", how);
		else
			fail_variant(vr, SCORE_RUNTIME_ERROR, "the pass crashed: %s", how[0] ? how : "the worker died");
		return;
	}
	/* a line the sandbox wrote while the worker lives on (the driver ran
	 * out of pre-opened descriptors, and the call failed) explains it */
	char note[256];
	ssize_t n = read(pw->report_fd, note, sizeof(note) - 1);
	note[n > 0 ? n : 0] = 0;
	note[strcspn(note, "\n")] = 0;
	fail_variant(vr, status_of_rc(r->status), "%s%s%s", r->msg[0] ? r->msg : "the replacement failed",
		     note[0] ? "; " : "", note);
}

/* What the evaluation as a whole learns from its workers. */
struct eval_shared {
	char *kernels;                  /* the pass worker's kernel list (kernel_list) */
	char eager_trace_note[480];     /* why no GPU time, when none */
	char pass_trace_note[480];
	char eager_libs[200], eager_lib_note[400];
	int trace_seen;                 /* some timed call came with GPU time */
};

/* Outcomes of time_variant besides 0 (timed) and -1 (passfs failed). */
enum { TIME_STOP = 1, TIME_DONE = 2 };

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

/* One timing run: warm-up + trials, eager and the pass alternating on the
 * same fresh rotation of the public inputs (see the top of this file). */
static int time_variant(struct ctx *c, struct worker *ew, struct worker *pw, struct eval_shared *es,
			struct vresult *vr, char *err, size_t errlen)
{
	struct reply r;
	double t1[MAX_BATCH];
	int step, poisoned, out = 0;
	/* The timed trials, then (cuda with CUPTI) a few traced ones for the
	 * GPU's view, checked alike but not in the medians.  The timed trials
	 * go on past c->trials, up to TRIALS_CAP times as many, while the
	 * speedup's interval is wider than SPEEDUP_TIGHT (timed_n shrinks to
	 * where it is tight). */
	int timed_max = c->warmup + (c->trials >= ADAPT_MIN_TRIALS ? c->trials * TRIALS_CAP : c->trials);
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
		for (int i = 0; i < c->v->n_inputs; i++) {
			long long n = graph_shape_numel(&c->v->values[i].shape);
			/* literal data is part of the task, not a draw */
			cm.rot[i] = c->v->gen[i].data == NULL && n > 1 ? rng_next(&rng) % (uint64_t)n : 0;
		}
		double t0 = eval_now_ms();
		step = worker_step(ew, 600, &cm, &r, t1);
		we[k] = eval_now_ms() - t0;
		if (step != STEP_OK || r.status != PF_OK || r.n_times != 1) {
			snprintf(err, errlen, "eager timing failed on variant '%s': %s", c->v->name,
				 step == STEP_OK ? r.msg : "the eager worker died");
			out = -1;
			goto end;
		}
		te[k] = t1[0];
		if (ew->payload_len == (int)sizeof(struct trial_gpu))
			memcpy(&ge[k], ew->payload, sizeof(struct trial_gpu));
		t0 = eval_now_ms();
		step = worker_step(pw, c->timeout_s, &cm, &r, t1);
		wp[k] = eval_now_ms() - t0;
		if (step != STEP_OK || r.status != PF_OK || r.n_times != 1) {
			worker_step_verdict(pw, step, &r, vr, c);
			out = TIME_DONE;
			goto end;
		}
		tp[k] = t1[0];
		if (pw->payload_len == (int)sizeof(struct trial_gpu))
			memcpy(&gp[k], pw->payload, sizeof(struct trial_gpu));
		/* The worker's clock readings happen inside the parent's round
		 * trip; anything else means pass code moved them. */
		if (!(tp[k] > 0) || tp[k] > wp[k]) {
			fail_variant(vr, SCORE_REJECTED,
				     "timed run %d of %d: the worker reported %.4f ms for a call whose round trip "
				     "took %.4f ms: the pass tampered with the timer", k + 1, total, tp[k], wp[k]);
			out = TIME_STOP;
			goto end;
		}
		/* Enough timed trials once the speedup's interval is tight:
		 * this one is then the last timed trial. */
		if (k < timed_n - 1 && k + 1 >= c->warmup + c->trials &&
		    speedup_tight(te + c->warmup, tp + c->warmup, k + 1 - c->warmup)) {
			timed_n = k + 1;
			total = timed_n + c->traced_trials;
		}
		/* Every trial: no poison left.  A random quarter (drawn now,
		 * after the trial ran) and the last: every value, and the
		 * inputs. */
		char tw[400];
		if (timed_poison(c, TIMED_SLOT, tw, sizeof(tw))) {
			fail_variant(vr, SCORE_REJECTED, "timed run %d of %d: %s", k + 1, total, tw);
			out = TIME_STOP;
			goto end;
		}
		if (k != total - 1 && rng_next(&rng) % 4 != 0)
			continue;
		vr->timed_checked++;
		if (!check_inputs_unchanged(c, TIMED_SLOT, 0, cm.rot, tw, sizeof(tw))) {
			fail_variant(vr, SCORE_REJECTED, "timed run %d of %d: %s", k + 1, total, tw);
			out = TIME_STOP;
			goto end;
		}
		struct worst tw_worst;
		int tt = compare_set(c, TIMED_SLOT, TIMED_SLOT, &poisoned, vr, &tw_worst, NULL, tw, sizeof(tw));
		/* The same rule as for the secret set: right from OK_T on the
		 * checked runs, not close at any counted level here. */
		if (check_min_t <= OK_T && tt > COUNTED_T) {
			char lv[640];
			worst_where(c->v, &tw_worst, tw, sizeof(tw));
			if (tt == SCORE_T_NEVER)
				snprintf(lv, sizeof(lv), "not close at any t (%s = %.6g, eager %.6g)", tw, tw_worst.pass,
					 tw_worst.eager);
			else
				snprintf(lv, sizeof(lv), "close only from t = %d (%s = %.6g, eager %.6g)", tt, tw,
					 tw_worst.pass, tw_worst.eager);
			fail_variant(vr, SCORE_REJECTED,
				     "the outputs of timed run %d of %d (fresh inputs) are %s, though the checked runs "
				     "were close from t = %d: the results do not follow each call's inputs",
				     k + 1, total, lv, check_min_t);
			out = TIME_STOP;
			goto end;
		}
		/* the level is the worst over every verified run */
		if (tt > vr->close_t || (tt == vr->close_t && worst_beats(&tw_worst, &vr->worst))) {
			vr->close_t = tt;
			vr->worst = tw_worst;
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
	double pmin = 0, emin = 0;
	for (int k = c->warmup; k < timed_n; k++) {
		double po = wp[k] - tp[k], eo = we[k] - te[k];
		if (k == c->warmup || po < pmin)
			pmin = po;
		if (k == c->warmup || eo < emin)
			emin = eo;
	}
	double *est = calloc((size_t)alloc, sizeof(double));
	double dummy;

	vr->timing_suspect = 0;
	vr->note[0] = 0;
	for (int k = 0; k < timed_n; k++) {
		if (est)
			est[k] = wp[k] - emin;
		we[k] -= te[k];
	}
	int n_t = timed_n - c->warmup;
	if (c->trial_times) {
		json_decref(vr->trial_ms);
		vr->trial_ms = json_pack("{s:o, s:o}", "eager", json_array(), "pass", json_array());
		for (int k = c->warmup; k < timed_n && vr->trial_ms; k++) {
			json_array_append_new(json_object_get(vr->trial_ms, "eager"), json_real(te[k]));
			json_array_append_new(json_object_get(vr->trial_ms, "pass"), json_real(tp[k]));
		}
	}
	/* the paired estimate first: the medians below sort the arrays */
	paired_speedup(te + c->warmup, tp + c->warmup, n_t, &vr->speedup_paired, &vr->speedup_lo, &vr->speedup_hi);
	vr->overhead_ms = median_of(we + c->warmup, n_t, &dummy);
	vr->eager_ms = median_of(te + c->warmup, n_t, &vr->eager_iqr);
	vr->pass_ms = median_of(tp + c->warmup, n_t, &vr->pass_iqr);
	vr->unexplained_ms = pmin - emin;
	if (est && vr->unexplained_ms > 0.02 && vr->unexplained_ms > vr->pass_ms) {
		vr->timing_suspect = 1;
		vr->pass_ms_reported = vr->pass_ms;
		vr->pass_ms = median_of(est + c->warmup, n_t, &vr->pass_iqr);
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
			worker_stop(pw, 1, NULL, 0);
			fail_variant(vr, SCORE_RUNTIME_ERROR, "the pass could not be loaded: %s", r->msg);
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

static int eval_variant(struct ctx *c, int k, struct worker *ew, struct worker *pw, struct eval_shared *es,
			struct vresult *vr, char *err, size_t errlen)
{
	struct reply r;
	double t1[MAX_BATCH];
	int step;
	memset(vr, 0, sizeof(*vr));
	vr->min_t = vr->close_t = SCORE_T_NEVER;
	vr->worst.output = vr->blind.output = -1;
	vr->status = SCORE_OK;
	if (ew->variant != k) {
		struct cmd cm = {.op = CMD_VARIANT, .variant = k};
		step = worker_step(ew, 600, &cm, &r, t1);
		if (step != STEP_OK || r.status != PF_OK) {
			snprintf(err, errlen, "eager baseline failed on variant '%s': %s", c->v->name,
				 step == STEP_OK ? r.msg : "the eager worker died");
			return -1;
		}
		ew->variant = k;
	}
	for (int s = 0; s < N_SETS; s++) {
		struct cmd cm = {.op = CMD_CHECK, .set = s};
		step = worker_step(ew, 600, &cm, &r, t1);
		if (step != STEP_OK || r.status != PF_OK) {
			snprintf(err, errlen, "eager baseline failed on variant '%s': %s", c->v->name,
				 step == STEP_OK ? r.msg : "the eager worker died");
			return -1;
		}
	}
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
			if (module_pack(c->mod, &buf, &len)) {
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
	for (int s = 0; s < N_SETS; s++) {
		struct cmd cm = {.op = CMD_CHECK, .set = s};
		step = worker_step(pw, c->timeout_s, &cm, &r, t1);
		if (step != STEP_OK || r.status != PF_OK) {
			worker_step_verdict(pw, step, &r, vr, c);
			goto done;
		}
		if (!check_inputs_unchanged(c, s, s, NULL, where, sizeof(where))) {
			fail_variant(vr, SCORE_REJECTED, "%s", where);
			goto done;
		}
		min_t[s] = compare_set(c, s, s, &poisoned, vr, &w[s], &bl[s], where, sizeof(where));
		if (poisoned) {
			fail_variant(vr, SCORE_REJECTED, "%s", where);
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
		fail_variant(vr, SCORE_REJECTED,
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
	/* Timing, run again once when unstable (IQR/median > 0.2 for either
	 * side); still unstable after that is reported (timing_unstable). */
	c->traced_trials = c->cuda && !es->eager_trace_note[0] && !es->pass_trace_note[0]
				   ? (c->trials < TRACED_TRIALS ? c->trials : TRACED_TRIALS) : 0;
	for (int attempt = 0;; attempt++) {
		int tr = time_variant(c, ew, pw, es, vr, err, errlen);
		if (tr < 0)
			return -1;
		if (tr > 0)
			goto done;
		if (attempt == 0 && (vr->eager_iqr > 0.2 || vr->pass_iqr > 0.2)) {
			vr->timing_retries++;
			continue;
		}
		break;
	}
	/* The paired estimate, unless the pass's own times were replaced by
	 * the parent's estimate or the GPU's span (timing_suspect): then the
	 * ratio of medians of what the parent trusts. */
	vr->speedup_of_medians = vr->pass_ms > 0 ? vr->eager_ms / vr->pass_ms : 1e9;
	vr->speedup = vr->timing_suspect || !(vr->speedup_paired > 0) ? vr->speedup_of_medians : vr->speedup_paired;
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
		worker_stop(pw, 1, NULL, 0);
	vr->log = worker_take_log(pw);
	return 0;
}

/* ---- batches ---------------------------------------------------------------------- */

/* One batch of variants and its workers.  The eager worker starts as soon
 * as the batch is laid out (for the first batch: before the pass compiles,
 * so CUDA's initialisation and the op library's load overlap the compile);
 * it drops its writable mapping of the inputs at once and maps them
 * read-only once the parent has generated and sealed them (CMD_MAP). */
struct batch {
	struct ctx c;
	struct worker ew, pw;
	struct layout *lays;
	int started;                    /* the eager worker was forked */
};

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
			  .cuda = cuda};
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
		plan_layout(&t->variants[first + n], in_total, &L);
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
			void *bufs[GRAPH_MAX_IO];
			if (inputs_generate(v, s == 0 ? PUBLIC_SEED : secret, bufs, err, errlen))
				return -1;
			for (int i = 0; i < v->n_inputs; i++)
				memcpy(c->in.base + b->lays[k].in_off[s][i], bufs[i], b->lays[k].in_bytes[i]);
			inputs_free(bufs, v->n_inputs);
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
	if (job->opts.warmup)
		*warmup = job->opts.warmup < 0 ? 0 : job->opts.warmup;
	if (job->opts.trials > 0)
		*trials = job->opts.trials;
}

/* What the device-code scan said (integrity_scan_ptx; rc 2: it did not run). */
struct scan_result {
	int rc, line;
	double ms;
	char msg[512];
	int jail_kind;                  /* the compile jail that held (enum jail_kind) */
	double jail_ms;
	char jail_note[400];
};

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
		if (mod->ptx == NULL) {
			char note[400];
			snprintf(note, sizeof(note), "%s%sthe device-code scan (clock and timer reads, writable "
				 "__device__ state, device-side launches, trap) did not run: no PTX",
				 mod->note, mod->note[0] ? "; " : "");
			json_object_set_new(compile, "note", json_string(note));
		} else if (mod->note[0]) {
			json_object_set_new(compile, "note", json_string(mod->note));
		}
		if (mod->host_log && mod->host_log[0])
			json_object_set_new(compile, "log_tail", json_string(eval_tail(mod->host_log, 4096)));
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
	timing_json(*result, job, es, backend);
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
	const struct graph_value *x = worst_index(v, w, ix);
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
		if (vr->pass_iqr > 0.2 || vr->eager_iqr > 0.2)
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

/* ---- compiling in a child ----------------------------------------------------------- */

/* The child sends its pass_module field by field; a field added to struct
 * pass_module must be added here too (this assertion trips first). */
_Static_assert(sizeof(struct pass_module) == 256, "struct pass_module changed: update compile_isolated()");

struct compile_head {
	int rc;
	struct pass_diag diag;
	int has_mod;
	int scan_rc, scan_line;         /* integrity_scan_ptx: 0 clean, 1 refused, -1 failed; 2 not run */
	double scan_ms;
	char scan_msg[512];
	int jail_kind;                  /* enum jail_kind that held */
	double jail_ms;
	char jail_note[400];            /* why not the full jail; "" */
};


static int rm_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st, (void)flag, (void)ftw;
	remove(path);
	return 0;
}

static void rm_tree(const char *dir)
{
	nftw(dir, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
}

/* The compile timeout: PASSFS_COMPILE_TIMEOUT_S (tests), else 120 s. */
static double compile_timeout_s(void)
{
	const char *e = getenv("PASSFS_COMPILE_TIMEOUT_S");
	double t = e ? atof(e) : 0;
	return t > 0 ? t : COMPILE_TIMEOUT_S;
}

static void __attribute__((noreturn)) compile_child(const struct ejob *job, const struct pass_options *po,
						   const char *tmp, int fd)
{
	struct compile_head h;
	struct pass_module *m = NULL;
	memset(&h, 0, sizeof(h));
	prctl_pdeathsig_kill();
	/* The compilers' scratch directory: the parent removes it whatever
	 * happens here. */
	setenv("TMPDIR", tmp, 1);
	/* The compilers read what the pass names (#line, __has_include,
	 * .incbin): from here on they see the toolchain, the API headers and
	 * tmp, within the jail's limits (jail.h). */
	struct jail_info ji;
	char jerr[300];
	if (jail_compile(tmp, po->allow_device_only, (int)compile_timeout_s() + 5, &ji, jerr, sizeof(jerr)) != 0) {
		h.rc = -1;
		h.scan_rc = 2;
		h.diag.verdict = PASS_INTERNAL_ERROR;
		snprintf(h.diag.message, sizeof(h.diag.message), "%s", jerr);
		_exit(eval_send_all(fd, &h, sizeof(h)) ? 3 : 0);
	}
	h.jail_kind = (int)ji.kind;
	h.jail_ms = ji.ms;
	snprintf(h.jail_note, sizeof(h.jail_note), "%s", ji.note);
	h.rc = pass_compile_opts(job->pass_label, job->pass_src, job->pass_len, po, &m, &h.diag);
	h.scan_rc = 2;
	if (h.rc == 0 && m != NULL) {
		h.has_mod = 1;
		if (m->ptx != NULL)
			h.scan_rc = integrity_scan_ptx(m->ptx, job->pass_label ? job->pass_label : "pass.c", h.scan_msg,
						       sizeof(h.scan_msg), &h.scan_line, &h.scan_ms);
	}
	int bad = eval_send_all(fd, &h, sizeof(h));
	if (!bad && h.has_mod) {
		char *buf;
		size_t len;
		bad = module_pack(m, &buf, &len) || eval_send_all(fd, buf, len);
		if (!bad)
			free(buf);
	}
	/* No pass_module_free: its directory now belongs to the parent. */
	_exit(bad ? 3 : 0);
}

/* Runs pass_compile_opts and the device-code scan in a child process with
 * a wall-clock limit, in the compile jail (jail.h: its kind in
 * scan->jail_*).  Returns 0 with *mod (or NULL) and *diag exactly as
 * pass_compile_opts would (PASS_INTERNAL_ERROR when the jail could not be
 * entered), the device-code scan's result in scan (rc 2: not run); -1 with
 * err when passfs itself failed (no fork, no temporary directory).  *tmpdir receives a directory the caller
 * removes (rm_tree) after pass_module_free. */
static int compile_isolated(const struct ejob *job, const struct pass_options *po, struct pass_module **mod,
			    struct pass_diag *diag, struct scan_result *scan, char *tmpdir, size_t tmplen, char *err,
			    size_t errlen)
{
	const char *label = job->pass_label ? job->pass_label : "pass.c";
	const char *root = getenv("TMPDIR");
	*mod = NULL;
	scan->rc = 2;
	memset(diag, 0, sizeof(*diag));
	snprintf(tmpdir, tmplen, "%s/passfs-compile-XXXXXX", root && *root ? root : "/tmp");
	if (mkdtemp(tmpdir) == NULL) {
		snprintf(err, errlen, "cannot create a compile directory: %s", strerror(errno));
		tmpdir[0] = 0;
		return -1;
	}
	/* Loaded here once, so every child inherits it instead of loading it. */
	char why[256];
	(void)nvrtc_available(why, sizeof(why));
	int pfd[2];
	if (pipe2(pfd, O_CLOEXEC)) {
		snprintf(err, errlen, "pipe: %s", strerror(errno));
		return -1;
	}
	fflush(stdout);
	fflush(stderr);
	pid_t pid = gpu_fork_worker(&pfd[1], 1);
	if (pid < 0) {
		snprintf(err, errlen, "fork: %s", strerror(errno));
		close(pfd[0]);
		close(pfd[1]);
		return -1;
	}
	if (pid == 0) {
		close(pfd[0]);
		compile_child(job, po, tmpdir, pfd[1]);
	}
	close(pfd[1]);
	double limit = compile_timeout_s(), deadline = eval_now_ms() + limit * 1e3;
	unsigned char *buf = NULL;
	size_t len = 0, cap = 0;
	int timed_out = 0, oom = 0;
	for (;;) {
		double left = deadline - eval_now_ms();
		if (left <= 0 || is_cancelled(job->hooks.cancel)) {
			timed_out = 1;
			break;
		}
		struct pollfd pf = {pfd[0], POLLIN, 0};
		int n = poll(&pf, 1, (int)(left > 100 ? 100 : left + 1));
		if (n < 0 && errno != EINTR)
			break;
		if (n <= 0)
			continue;
		if (cap - len < 65536) {
			unsigned char *nb = realloc(buf, cap ? cap * 2 : 1 << 20);
			if (nb == NULL) {
				oom = 1;
				break;
			}
			buf = nb;
			cap = cap ? cap * 2 : 1 << 20;
		}
		ssize_t k = read(pfd[0], buf + len, cap - len);
		if (k < 0 && errno == EINTR)
			continue;
		if (k <= 0)
			break;
		len += (size_t)k;
	}
	close(pfd[0]);
	int st = 0;
	if (timed_out || oom)
		kill(pid, SIGKILL);
	waitpid(pid, &st, 0);
	struct compile_head h;
	struct rbuf rb = {.p = buf, .len = len};
	rbuf_take(&rb, &h, sizeof(h));
	if (timed_out || oom || rb.bad || !WIFEXITED(st) || WEXITSTATUS(st) != 0) {
		free(buf);
		diag->verdict = PASS_COMPILE_ERROR;
		if (oom)
			snprintf(diag->message, sizeof(diag->message), "%s: out of memory reading the compile result", label);
		else if (timed_out)
			snprintf(diag->message, sizeof(diag->message),
				 "%s: the compile did not finish within %.0f s (template or constexpr recursion?)", label,
				 limit);
		else if (WIFSIGNALED(st))
			snprintf(diag->message, sizeof(diag->message),
				 "%s: the compiler died (%s) - out of memory (a compile may add %zu GiB)?", label,
				 strsignal(WTERMSIG(st)), (size_t)(JAIL_AS_EXTRA >> 30));
		else
			snprintf(diag->message, sizeof(diag->message), "%s: the compiler failed (status %d)", label,
				 WIFEXITED(st) ? WEXITSTATUS(st) : -1);
		if (!timed_out && !oom && !WIFSIGNALED(st) && rb.bad)
			diag->verdict = PASS_INTERNAL_ERROR;
		return 0;
	}
	*diag = h.diag;
	scan->rc = h.scan_rc;
	scan->line = h.scan_line;
	scan->ms = h.scan_ms;
	snprintf(scan->msg, sizeof(scan->msg), "%s", h.scan_msg);
	scan->jail_kind = h.jail_kind;
	scan->jail_ms = h.jail_ms;
	snprintf(scan->jail_note, sizeof(scan->jail_note), "%s", h.jail_note);
	if (h.rc != 0 || !h.has_mod) {
		free(buf);
		return 0;
	}
	struct pass_module *m = module_unpack(&rb, 1);
	free(buf);
	if (m == NULL) {
		snprintf(err, errlen, "the compile child's result was truncated");
		return -1;
	}
	*mod = m;
	return 0;
}

static int eval_run_work(const struct ejob *job, json_t **result, char *err, size_t errlen)
{
	const struct graph_task *t = job->task;
	struct pass_diag diag;
	struct pass_module *mod = NULL;
	struct score_variant *sv = calloc((size_t)t->n_variants, sizeof(*sv));
	struct vresult *vr = calloc((size_t)t->n_variants, sizeof(*vr));
	json_t *variants = json_array();
	double t_start = eval_now_ms();
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
	const char *backend = be == GPU_BACKEND_CUDA ? "cuda" : "cpu";
	int gpu_clock_khz = 0, gpu_bus_bits = 0;
	long long gpu_l2 = 0;
	int gpu_mem_ok = gpu_memory_spec(probe, &gpu_clock_khz, &gpu_bus_bits, &gpu_l2) == 0;
	const char *timed_out = NULL;   /* the first variant that timed out */
	int warmup, trials;
	eval_trial_counts(job, be, &warmup, &trials);

	if (job->hooks.progress)
		job->hooks.progress(job->hooks.ctx, "compiling");
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
	if (t->n_variants > 0 &&
	    batch_open(&bt, job, 0, warmup, trials, be == GPU_BACKEND_CUDA, be == GPU_BACKEND_CUDA, err, errlen)) {
		batch_close(&bt);
		goto out;
	}
	open_batch = t->n_variants > 0;
	if (compile_isolated(job, &po, &mod, &diag, &scan, tmpdir, sizeof(tmpdir), err, errlen))
		goto out;
	if (is_cancelled(job->hooks.cancel)) {
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
			fail_variant(&vr[i], st, "%s", diag.message);
			json_array_append_new(variants, variant_json(&t->variants[i], &vr[i]));
		}
		rc = eval_finish(job, t, sv, vr, variants, &diag, mod, &scan, &es, backend, device,
				 eval_now_ms() - t_start, result, err, errlen);
		goto out;
	}
	if (job->hooks.progress)
		job->hooks.progress(job->hooks.ctx, "running");
	/* Variants run in batches: one sealed input memfd, one eager worker
	 * and (while variants go well) one pass worker per batch. */
	for (int first = 0; first < t->n_variants;) {
		if (!open_batch && batch_open(&bt, job, first, warmup, trials, be == GPU_BACKEND_CUDA, 0, err, errlen)) {
			batch_close(&bt);
			goto out;
		}
		open_batch = 0;
		struct ctx *c = &bt.c;
		c->mod = mod;
		int bad = batch_fill(&bt, secret, &es, err, errlen) != 0;
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
			if (is_cancelled(job->hooks.cancel)) {
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
				c->timeout_s = after_timeout_s(c->timeout_s);
				c->timed_out = timed_out;
			}
			if (k > 0 && !job->opts.quiet)
				fprintf(stderr, "passfs eval: variant %s ...\n", c->v->name);
			/* One benchmark per GPU at a time, machine-wide: the
			 * variant's checks and timing hold the device's lock. */
			double w0 = eval_now_ms();
			if (gpu_bench_lock(probe, lock_ms, job->hooks.cancel, err, errlen)) {
				bad = 1;
				break;
			}
			double waited = eval_now_ms() - w0;
			int erc = eval_variant(c, k, &bt.ew, &bt.pw, &es, &vr[i], err, errlen);
			gpu_bench_unlock(probe);
			vr[i].lock_wait_ms = waited;
			if (erc || is_cancelled(job->hooks.cancel)) {
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
		batch_close(&bt);
		if (bad)
			goto out;
		first += n;
	}
	rc = eval_finish(job, t, sv, vr, variants, &diag, mod, &scan, &es, backend, device, eval_now_ms() - t_start, result,
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
		rm_tree(tmpdir);
	gpu_close(probe);
	/* whatever step noticed it (a worker killed reads as "died") */
	if (rc != 0 && is_cancelled(job->hooks.cancel))
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
