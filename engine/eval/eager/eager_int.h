/* eager_int.h - what the files of the eager baseline share (the contract
 * is eager.h): the plan and its steps, the lowering context, and the
 * functions one file calls in another.
 *
 *   eager.c          running a plan, and the plan's accessors
 *   eager_plan.c     planning: the walk over a variant's nodes, views as
 *                    metadata, elementwise chains, the lowering table
 *   eager_ops.c      the lowerings of op families: reductions and other op
 *                    helpers, GEMM and attention, conv, pooling and
 *                    interpolation, data movement
 *   eager_oplib.c    the op library: its source, the compile, the on-disk
 *                    cache of the cpu backend's build */
#ifndef PASSFS_EAGER_INT_H
#define PASSFS_EAGER_INT_H

#include "eager.h"
#include <dirent.h>
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include "blas.h"
#include "datadir.h"
#include "clock.h"
#include "dnn.h"
#include "file.h"
#include "hostcc.h"
#include "oplib/oplib.h"
#include "proc.h"
#include "sha256.h"
#include "strbuf.h"

#define MAXD GRAPH_MAX_DIMS
#define EW_BLOCK 256
#define MAX_FIX 6
#define ARENA_ALIGN 256
#define CACHE_MAX_AGE_S (30 * 24 * 3600)

/* BK_CONST: a constant the plan owns (a vector of ones of dtype `ext`, for
 * cuBLAS bias prefills), in the arena for the plan's whole life, uploaded
 * once when the arena is allocated. */
enum { BK_INPUT, BK_OUTPUT, BK_SCRATCH, BK_CONST };

/* What a step does: a launch of an op-library kernel, or a library call. */
enum { STEP_KERNEL, STEP_BLAS_GEMM, STEP_DNN_CONV };

struct buf {
	int kind, ext;          /* ext: the input or output index */
	size_t bytes;
	int first, last;        /* steps that touch it (-1: none yet) */
	size_t off;             /* in the arena */
};

struct view {
	int buf;
	int64_t off;            /* elements */
	int ndim;
	int64_t shape[MAXD], stride[MAXD];
	enum graph_dtype dt;
};

union params {
	opl_ew ew;
	opl_softmax sm;
	opl_layer_norm ln;
	opl_batch_norm bn;
	opl_reduce rd;
	opl_gemm gm;
	opl_conv cv;
	opl_pool pl;
	opl_avg_pool ap;
	opl_upsample up;
	struct blas_gemm bg;
	struct dnn_conv dc;
};

struct fix {
	size_t field;           /* byte offset of a pointer inside the params */
	int buf;
	int64_t byte_off;
};

struct step {
	int kind;               /* STEP_* */
	int kernel;             /* STEP_KERNEL: index into the module's names */
	int ws_buf;             /* STEP_DNN_CONV: the workspace buffer */
	pf_dim3 grid, block;
	size_t psize;
	union params p;
	int nfix;
	struct fix fix[MAX_FIX];
	/* > 0: on a GPU this launch is a cuBLAS or cuDNN call, and the model
	 * prices it so (its compute time, gpu_model_price) */
	double lib_ms;
};

/* A launch trampoline of a host-compiled module (gpu/hostcc.h). */
typedef int (*tramp_fn)(pf_call *c, pf_dim3 g, pf_dim3 b, size_t smem, void **args, int nargs);

/* A compiled op library shared by the plans of one eager_prepare_task: a
 * gpu_module, or on the cpu backend the shared object itself (see
 * "the op library" below for why). */
struct shared_mod {
	struct gpu_module *mod;
	void *handle;
	int refs;
	int from_cache;
	double compile_ms;
	struct blas_handle *blas;       /* cuBLAS handle of these plans (cuda backend) */
	struct dnn_handle *dnn;         /* cuDNN handle */
};

struct eager_plan {
	struct gpu_dev *dev;
	int is_cpu;             /* launch geometry for the cpu backend (see eg_spread()) */
	int for_model;          /* the GPU's geometry, planned to be counted for the modeled
				 * GPU time (eager_prepare_gpu_geometry; see eg_spread()) */
	char *variant;
	int n_inputs, n_outputs;
	size_t *out_bytes;
	int nbufs, capbufs;
	struct buf *bufs;
	int nsteps, capsteps;
	struct step *steps;
	int nnames, capnames;
	char **names;
	struct shared_mod *mod;
	struct gpu_kernel **kernels;    /* per name (gpu_module) */
	tramp_fn *tramps;               /* per name (cpu shared object) */
	void *arena;
	size_t arena_bytes;
	int use_blas;                   /* plan GEMMs as cuBLAS calls where they fit */
	int use_dnn;                    /* plan conv2d as cuDNN calls where they fit */
	int n_blas, n_dnn;              /* steps that are cuBLAS / cuDNN calls */
	int ones_buf[3];                /* BK_CONST ones per dtype (f32, f16, bf16), -1: none */
	char libs[96];                  /* eager_libraries() */
	char note[600];                 /* eager_library_note() */
};

/* ---- plan building --------------------------------------------------------- */

struct build {
	struct eager_plan *p;
	const struct graph_variant *v;
	const struct graph_node *n;
	struct view *vals;
	char *err;
	size_t errlen;
};

/* ---- elementwise emission ---------------------------------------------------- */

struct ew_opnd {
	const struct view *v;   /* NULL: scalar */
	double scalar;
	enum graph_dtype dt;    /* of the tensor (ignored for scalars) */
};

enum { EW_UNARY = 1, EW_BINARY = 2, EW_WHERE = 3 };

/* ---- GEMM ------------------------------------------------------------------------- */

struct gemm_desc {
	const struct view *a, *b, *c, *bias;
	int64_t m, n, k, sam, sak, sbk, sbn, sbias_m, sbias_n;
	int nb;
	int64_t bshape[MAXD], sab[MAXD], sbb[MAXD];
	double alpha;
};

/* ---- the walk ----------------------------------------------------------------------------- */

/* Each graph op's lowering, keyed by the op (engine/graph/graph_ops.c is the
 * hub; tests/unit/test_ops_table.c fails on an op without a row): fn(b), or
 * fn_arg(b, arg). */
struct lowering {
	int (*fn)(struct build *b);
	int (*fn_arg)(struct build *b, int arg);
	int arg;
};
#define L(f) {f, NULL, 0}
#define LA(f, a) {NULL, f, a}

/* ---- the op library on the cpu backend: compiled once, kept on disk ----------
 *
 * The cpu backend compiles a module with g++ (seconds for the op library);
 * the same source and kernel list give the same object, so eager keeps it
 * under $XDG_CACHE_HOME/passfs/oplib (else ~/.cache/passfs/oplib), named by
 * the SHA-256 of everything that determines it: the op library source, the
 * name expressions, the pass API headers the host compile includes
 * (passfs.h, passfs_abi.h, pf_emu.h), the compiler's --version line, and the
 * compile pipeline's flags and trampolines: gpu/hostcc.c's text when the
 * source tree is there, else the passfs binary's size and mtime.  A hit is
 * one dlopen.  Eager compiles through gpu/hostcc
 * and launches through the trampolines with gpu_run_blocks, which is what
 * the cpu backend's own gpu_module_compile / gpu_launch do, minus the NVRTC
 * gate and ELF check (this source is passfs's own).  PASSFS_CACHE_DIR=off
 * turns the disk cache off (a path moves it).  Entries unused for 30 days
 * are pruned.  (On the cuda backend gpu_module_compile has its own cache.) */

struct eager_call {
	pf_call call;
	struct gpu_dev *dev;
	int failed;
	char msg[512];
};

/* ---- across the files ---- */

const char *eg_tname(enum graph_dtype dt);
int64_t eg_vnumel(const struct view *v);
int64_t eg_pow2_at_least(int64_t n, int64_t lo, int64_t hi);
unsigned eg_grid_for(int64_t work, int64_t per_block, int64_t cap);
int eg_berr(struct build *b, const char *fmt, ...);
int eg_build_oom(struct build *b);
int eg_new_buf(struct build *b, int kind, int ext, size_t bytes);
int eg_new_tensor(struct build *b, enum graph_dtype dt, int ndim, const int64_t *shape, struct view *out);
int eg_new_tensor_like(struct build *b, const struct graph_value *gv, struct view *out);
int eg_add_step(struct build *b, const char *name, pf_dim3 grid, pf_dim3 block, const void *params, size_t psize);
void eg_step_ptr(struct build *b, int si, size_t field, const struct view *v);
int eg_add_lib_step(struct build *b, int kind, const void *params, size_t psize);
void eg_spread(struct build *b, int64_t total, unsigned block, pf_dim3 *grid, long long *per);
int eg_use_thread_rows(struct build *b, int64_t n);
int eg_bcast_strides(struct build *b, const struct view *v, int nd, const int64_t *shape, int64_t *st);
int eg_emit_ew(struct build *b, int family, int op, const struct view *out, const struct ew_opnd *in, int nin, double alpha);
int eg_emit_copy(struct build *b, const struct view *dst, const struct view *src);
int eg_emit_fill(struct build *b, const struct view *dst, double value);
int eg_materialise(struct build *b, const struct view *in, enum graph_dtype dt, struct view *out);
int eg_reshape_view(struct build *b, const struct view *in, int ndim, const int64_t *shape, struct view *out);
int64_t eg_jint(json_t *attrs, const char *k);
int eg_jints(json_t *attrs, const char *k, int64_t *out, int max);
double eg_jnum(json_t *attrs, const char *k, double dflt);
int eg_do_getitem(struct build *b, const struct view *in, json_t *index, struct view *out);
int eg_op_unary(struct build *b, int opcode);
int eg_op_binary(struct build *b, int opcode);
int eg_op_where(struct build *b);
int eg_op_prelu(struct build *b);
int eg_op_to(struct build *b);
int eg_op_softmax(struct build *b);
int eg_op_layer_norm(struct build *b);
int eg_op_batch_norm(struct build *b);
int eg_op_reduce(struct build *b, int mean);
int eg_op_matmul(struct build *b);
int eg_op_baddbmm(struct build *b);
int eg_op_arange(struct build *b);
int eg_op_leaky_relu(struct build *b);
int eg_op_linear(struct build *b);
int eg_op_conv2d(struct build *b);
int eg_op_aap2d(struct build *b);
int eg_op_interpolate(struct build *b);
int eg_op_sdpa(struct build *b);
int eg_op_cat(struct build *b);
int eg_op_pad(struct build *b);
int eg_view_same(struct build *b);
int eg_view_transpose(struct build *b);
int eg_view_permute(struct build *b);
int eg_view_expand(struct build *b);
int eg_view_reshape(struct build *b);
int eg_view_getitem(struct build *b);
int eg_view_split(struct build *b);
int eg_view_tensor_split(struct build *b);
int eg_view_unbind(struct build *b);
int eg_op_gelu(struct build *b);
int eg_op_avg_pool2d(struct build *b);
int eg_view_unfold(struct build *b);
size_t eg_pack_arena(struct eager_plan *p);
void eg_plan_release(struct eager_plan *p);
struct eager_plan *eg_plan_variant(struct gpu_dev *d, const struct graph_variant *v, int use_blas, int use_dnn,
				int gpu_geometry, char *err, size_t errlen);
extern const struct pf_runtime eager_runtime;

#endif
