/* eval_int.h - what the files of one evaluation share (engine/eval/eval.c
 * and its neighbours; the contract is eval.h): the worker protocol's
 * commands and replies, shared memory and layouts, the worker and batch
 * records, and the functions one file calls in another.
 *
 *   eval.c          the whole job: batches of variants, the report
 *   eval_worker.c   the worker processes and the parent's side of them
 *   eval_variant.c  one variant: checks at every level, timing, integrity
 *   eval_compile.c  the pass compiled in a child, and its bytes */
#ifndef PASSFS_EVAL_INT_H
#define PASSFS_EVAL_INT_H

#include "wire.h"
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
#include "clock.h"
#include "eager.h"
#include "eval_util.h"
#include "file.h"
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
#include "strbuf.h"

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

enum { CMD_CHECK = 1, CMD_TIME, CMD_VARIANT, CMD_MAP, CMD_MODULE, CMD_QUIT, CMD_COUNT };
/* CMD_COUNT's steps (cmd.count), and its reply's payload */
enum { COUNT_STEP_BYTES = 1, COUNT_STEP_TIMES = 2 };
struct count_reply {
	struct gpu_traffic tr;          /* the model so far (gpu/traffic.h) */
	double host_ms;                 /* the least host time of the timed calls */
	uint64_t guard_touches;         /* pass: device pages its host code touched */
	uint64_t guard_first;           /* the first such address */
};

/* CMD_MODULE (a pass worker started before the compile, once): the
 * compiled pass follows (a uint64_t length, then eval_module_pack's bytes).
 * CMD_MAP (eager worker, once): map the sealed inputs.  CMD_VARIANT: move
 * on to variant `variant` (device buffers for its inputs
 * and outputs, eager's plan or the pass bound to it).  CMD_CHECK: run input
 * set `set` into result slot `set`.  CMD_TIME: one timed trial on the
 * public set rotated by rot[] (elements, per input), results into
 * TIMED_SLOT.  CMD_COUNT (cpu backend): one untimed call on the public
 * set with its launches' memory traffic counted (payload: struct
 * gpu_traffic), results into TIMED_SLOT's device buffers only. */
struct cmd {
	int op, set, count, variant;
	/* CMD_TIME, CMD_COUNT: the inputs are a fresh set the parent wrote
	 * into this worker's result area (the inputs-after region of
	 * TIMED_SLOT) just before the command, not set/rot */
	int fresh;
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
/* A counted call's marks (CMD_COUNT): the worker says "about to call" and
 * "called" and waits for one byte from the parent after each, so that the
 * parent reads the kernel's accounting of the worker (kacct.h) around the
 * call itself; then the call's reply follows. */
#define W_MARK 101
#define MAX_BATCH 64
#define PAYLOAD_MAX 16384
#define TRACED_TRIALS 20        /* CUPTI-recorded calls per side after the timed ones */
/* Adaptive timing: past the trials asked for, up to TRIALS_CAP times as many
 * while the speedup's 95% interval is wider than +-SPEEDUP_TIGHT; only when
 * at least ADAPT_MIN_TRIALS were asked for (fewer give no interval). */
#define TRIALS_CAP 4
#define SPEEDUP_TIGHT 0.03
#define ADAPT_MIN_TRIALS 6
/* The default count (no --trials) on the cpu backend is also bounded by
 * time, as GPU benchmark harnesses count repetitions by time: a variant's
 * timed calls stop once the speedup is tight (from ADAPT_MIN_TRIALS on),
 * or once both sides' timed trials took TRIAL_BUDGET_MS (their round
 * trips: the call, the fresh-input rotation, the store) and at least
 * BUDGET_MIN_TRIALS ran; one warm-up call per side when the first took
 * WARM_ENOUGH_MS or more (large variants: caches cannot hold them). */
#define TRIAL_BUDGET_MS 1000.0
#define BUDGET_MIN_TRIALS 5
/* ... and when the cpu backend scores the modeled speedup (the measured
 * one is information then; the counted calls are verified runs too): */
#define TRIAL_BUDGET_MODELED_MS 150.0
#define BUDGET_MIN_TRIALS_MODELED 1
#define WARM_ENOUGH_MS 100.0
/* Timed trials verified value by value: every one up to this many, then a
 * random quarter and the last. */
#define VERIFY_ALL_TRIALS 10

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

/* The status line (eval_hooks.status), when one is asked for: "variant
 * K/N NAME: what" for variant index k (what: "checks", "timing", ...), or
 * what alone for k < 0. */
void eval_status(const struct ejob *job, int k, const char *what);

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
	unsigned char *fresh[GRAPH_MAX_IO];     /* the parent's copy of a counted call's fresh inputs */
	struct pass_module *mod;
	double timeout_s;
	const char *timed_out;          /* the variant that timed out first (the limit is shorter since), or NULL */
	int warmup, trials;
	int auto_trials;                /* the default counts: stop early when tight, bounded by time */
	int auto_warmup;                /* the default warm-up: one call when it is long */
	double budget_ms;               /* auto_trials: timed calls' budget per variant, 0: none */
	int budget_min;                 /* ... and the least timed calls */
	int by_model;                   /* cpu backend scoring the modeled speedup (eval_cpu_speedup_modeled) */
	int cold;
	int trial_times;                /* keep every timed trial's ms in result.json */
	int cuda;                       /* the cuda backend */
	int traced_trials;              /* CUPTI-recorded trials after the timed ones */
	size_t max_io_bytes;            /* the largest variant's inputs + outputs */
	double bytes_per_ms;    /* the roofline's bandwidth; 0: unknown */
	size_t roof_cached;     /* bytes a cache may serve (a GPU's L2): not in the bound */
};

/* A compiled pass as bytes (the compile child sends it to the evaluator,
 * the evaluator to a pass worker started before the compile): a head, then
 * the strings.  A field added to struct pass_module must be added here
 * (the assertion above trips first). */
struct module_head {
	int n_names, has_lowered;
	double nvrtc_ms, host_ms;
	char note[160];
};

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
	/* CMD_COUNT: eager's GPU-geometry plan, the counts so far, the
	 * least host time of the timed calls, and the pass's host touches of
	 * device memory (the guard) */
	struct eager_plan *gpu_plan;
	struct gpu_traffic tr;
	double host_ms;
	int guarded;
	uint64_t guard_touches, guard_first;
	double guard_ms;                /* the last call's guard setup and teardown, CPU ms */
	double call_cpu_ms;             /* the last call's CPU time in this thread */
	int is_pass;
	int trace;                      /* CUPTI records GPU time */
	char trace_note[200];           /* why not, when not */
	unsigned char *poison[GRAPH_MAX_IO];
	int marks;                      /* CMD_COUNT: the call marked to the parent (W_MARK) */
	unsigned char *res;             /* its result area */
	int sock;
};

/* Outcome of one step: 0 reply read; W_DIED the child died; W_TIMEOUT. */
enum { STEP_OK = 0, STEP_DIED = 1, STEP_TIMEOUT = 2 };

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
	double measured_speedup;        /* the measured one, when speedup is the model's */
	int speedup_modeled;            /* speedup is eager / pass modeled H200 time */
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
	/* The modeled GPU time (cpu backend, MODEL_*): each side's launches and
	 * the device bytes their pages touched in one counted call */
	int modeled;
	struct gpu_traffic eager_traffic, pass_traffic;
	double eager_model_ms, pass_model_ms;
	int model_calls;                /* the pass's timed counted calls */
	double model_spread;            /* their own modeled times: second least / least - 1 */
	double model_largest;           /* largest / least - 1 */
	double eager_host_ms, pass_host_ms;     /* their host time, in them */
	/* what the kernel accounted of each side's counted calls (kacct.h):
	 * the shared (device) memory the bytes call referenced, the least
	 * CPU time of the timed calls, and the floor they give the model */
	double eager_kbytes, pass_kbytes;
	double eager_kcpu_ms, pass_kcpu_ms;
	double eager_floor_ms, pass_floor_ms;
	int mismatch_worse;             /* launched differently: scored the worse of model and measured */
	char note[400];                 /* why a flag is set */
	char msg[512];
	char *log;
};

/* What the evaluation as a whole learns from its workers. */
/* Where an evaluation's wall time goes, for result.json's "profile"
 * (docs/result-format.md): the parent's clock around each phase, summed
 * over variants. */
enum eval_phase {
	PROF_SETUP,             /* the backend probe, before the compile */
	PROF_COMPILE,           /* the pass compile (NVRTC and g++ beside it, the jail) */
	PROF_WORKERS,           /* starting workers, sending the pass module */
	PROF_INPUTS,            /* generating and sealing the input sets */
	PROF_EAGER,             /* eager's plan, op library and runs on the checked sets */
	PROF_PASS_CHECKS,       /* the pass's runs on the checked sets */
	PROF_COMPARE,           /* comparing outputs, checking inputs unchanged */
	PROF_TRIAL_CALLS,       /* inside the trials: the timed calls themselves, both sides */
	PROF_TIMING,            /* the trials' rest: input rotation, round trips, poison checks, compares */
	PROF_MODEL,             /* the cpu backend's traffic-counted calls (modeled_h200_ms) */
	PROF_N
};
#define EVAL_PHASE_NAMES "setup", "compile", "workers", "inputs", "eager", "pass_checks", "compare", \
	"trial_calls", "trial_other", "model"

struct eval_shared {
	double prof[PROF_N];            /* ms per enum eval_phase */
	char *kernels;                  /* the pass worker's kernel list (kernel_list) */
	char eager_trace_note[480];     /* why no GPU time, when none */
	char pass_trace_note[480];
	char eager_libs[200], eager_lib_note[400];
	char arch_note[320];            /* why the device code is not for the GPU's own arch (gpu_arch_note) */
	int trace_seen;                 /* some timed call came with GPU time */
};

/* Outcomes of time_variant besides 0 (timed) and -1 (passfs failed). */
enum { TIME_STOP = 1, TIME_DONE = 2 };

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

/* What the device-code scan said (integrity_scan_ptx; rc 2: it did not run). */
struct scan_result {
	int rc, line;
	double ms;
	char msg[512];
	int jail_kind;                  /* the compile jail that held (enum jail_kind) */
	double jail_ms;
	char jail_note[400];
};

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

/* ---- across the files ---- */

int shm_create(struct shm *s, const char *name, size_t size);
void shm_destroy(struct shm *s);
int shm_seal(struct shm *s);
void eval_plan_layout(const struct graph_variant *v, size_t in_base, struct layout *L);
int eval_module_pack(const struct pass_module *m, char **out, size_t *outlen);
struct pass_module *eval_module_unpack(struct wire_in *rb, int own_dir);
int worker_start(struct ctx *c, int is_pass, int k, struct worker *wk, char *err, size_t errlen);
int eval_is_cancelled(const int *cancel);
int worker_wait(struct worker *wk, double timeout_s, struct reply *r, double *times);
void worker_stop(struct worker *wk, int kill_it, char *msg, size_t len);
/* Kills a live worker that answered its last command at once (no grace:
 * it is idle, so there is no status of its own to wait for), then reaps it
 * as worker_stop does. */
void worker_kill(struct worker *wk);
char *worker_take_log(struct worker *wk);
int worker_step(struct worker *wk, double timeout_s, const struct cmd *cmd, struct reply *r, double *times);
struct kacct_call;
int worker_step_counted(struct worker *wk, double timeout_s, const struct cmd *cmd, struct reply *r,
			double *times, int bytes, struct kacct_call *k);
const struct graph_value *eval_worst_index(const struct graph_variant *v, const struct worst *w, long long idx[GRAPH_MAX_DIMS]);
int eval_timing_unstable(const struct vresult *vr);
void eval_fail_variant(struct vresult *vr, enum score_status st, const char *fmt, ...);
double eval_after_timeout_s(double timeout_s);
int eval_variant(struct ctx *c, int k, struct worker *ew, struct worker *pw, struct eval_shared *es, struct vresult *vr, char *err, size_t errlen);
/* Eager's model of variant k alone (eval_opts.eager_model): what
 * model_variant scores a pass against. */
struct eager_model_result {
	struct gpu_traffic tr;  /* the launches' model (gpu/traffic.h) */
	double host_ms;         /* the least host time of the timed calls */
	double kbytes, kcpu_ms, floor_ms;       /* the kernel's accounting (kfloor) */
	double model_ms;        /* the modeled time; 0: no model (not counted) */
	int cached;             /* from the signed cache, not counted now */
};
int eval_eager_model(struct ctx *c, int k, struct worker *ew, struct eager_model_result *out, char *err,
		     size_t errlen);
int eval_compile_isolated(const struct ejob *job, const struct pass_options *po, struct pass_module **mod, struct pass_diag *diag, struct scan_result *scan, char *tmpdir, size_t tmplen, char *err, size_t errlen);

#endif
