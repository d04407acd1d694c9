/* eager.h - the eager baseline: a variant run op by op with passfs's own op
 * library (gpu/oplib), the reference a pass is checked and timed against.
 *
 * eager_prepare() plans a variant once: view-like ops (transpose, permute,
 * expand, getitem, split/chunk, dropout, contiguous, and reshape/view/flatten
 * when the strides allow) become metadata, every other op becomes one or a
 * few kernel launches that read their operands through strides, scratch
 * memory is laid out in one arena with buffers reused once dead, and the op
 * library is compiled with just the kernel instances the variant needs
 * (cached on disk, see docs/eager.md).  eager_run() then only patches
 * pointers and launches.  Outputs are materialised contiguous in the
 * caller's buffers, as a pass's outputs are; a node whose result is an
 * output writes it there directly.
 *
 * Launch geometry follows the backend (docs/eager.md); PASSFS_EAGER_GEOMETRY=gpu
 * plans the GPU's launches on the cpu backend too, for tests without a GPU.
 * On the cuda backend GEMMs and convolutions that fit become cuBLAS and
 * cuDNN calls (gpu/blas.h, gpu/dnn.h) instead of launches, as PyTorch
 * eager's are; PASSFS_EAGER_BLAS=0 turns that off.
 *
 * Ownership: a plan belongs to its gpu_dev (free plans before gpu_close);
 * it keeps no pointer into the graph.  Plans are not thread-safe: one
 * eager_run at a time per plan.  Errors: -1 / NULL and one line in err
 * naming the variant and node. */
#ifndef PASSFS_EAGER_H
#define PASSFS_EAGER_H

#include <stddef.h>

#include "gpu.h"
#include "graph.h"

struct eager_plan;

/* Plans variant v (validated by graph_load_*) on device d and compiles the
 * kernels it needs.  Returns the plan (eager_free), or NULL with a message:
 * an op or dtype the op library does not handle, or a compile failure (the
 * compiler log's first lines are in the message). */
struct eager_plan *eager_prepare(struct gpu_dev *d, const struct graph_variant *v, char *err,
				 size_t errlen);
/* The same with the GPU's launch geometry whatever the backend (block-per-
 * row reductions, an element a thread): on the cpu backend, what the
 * modeled GPU time of eager is counted on (gpu/traffic.h). */
struct eager_plan *eager_prepare_gpu_geometry(struct gpu_dev *d, const struct graph_variant *v, char *err,
					      size_t errlen);
int eager_is_gpu_geometry(const struct eager_plan *p);
/* A key naming eager's modeled GPU time of v (gpu/traffic.h): the variant,
 * model_id (the model's constants), the op library and its compiler.
 * 0, or -1 (the library's source cannot be read). */
int eager_model_key(const struct graph_variant *v, const char *model_id, char key[65]);

/* Plans every variant of t with one compile of the op library for all of
 * them (cheaper than one per variant).  On success plans[i] is variant i's
 * plan (each freed with eager_free; the module lives until the last one is
 * freed).  On failure returns -1, every plans[i] NULL. */
int eager_prepare_task(struct gpu_dev *d, const struct graph_task *t, struct eager_plan **plans,
		       char *err, size_t errlen);

/* Runs the plan: inputs[i] is device memory holding input i contiguous
 * (never written), outputs[i] device memory for output i, contiguous, of
 * numel * dtype size bytes, both in graph order.  Scratch memory is
 * allocated on the first run and kept by the plan.  Returns 0 after the
 * device has finished (gpu_sync), or -1 with a message. */
int eager_run(struct eager_plan *p, void *const *inputs, void **outputs, char *err, size_t errlen);

/* True when the eager baseline lowers the graph op (engine/eval/eager/eager.c
 * lowerings[]); every op of the table should (tests/unit/test_ops_table.c). */
int eager_op_lowered(enum graph_op op);

/* Frees the plan, its scratch memory, and its module when no other plan
 * shares it.  NULL is ignored. */
void eager_free(struct eager_plan *p);

/* Steps per run (kernel launches and library calls), and the scratch
 * arena's size in bytes. */
int eager_launch_count(const struct eager_plan *p);
size_t eager_scratch_bytes(const struct eager_plan *p);
/* Wall time the op library compile took for this plan (0 when it came from
 * a cache or is shared), in milliseconds. */
double eager_compile_ms(const struct eager_plan *p);

/* The libraries the plan calls besides the op library's kernels: "" when
 * none, else e.g. "cublas 13.1.0" (the cuda backend: GEMMs that fit are
 * cuBLAS calls; PASSFS_EAGER_BLAS=0 turns that off).  Owned by the plan. */
const char *eager_libraries(const struct eager_plan *p);
/* Why a library the plan would have used is not used ("" when nothing to
 * say), e.g. "cuBLAS: no libcublas (...)": its GEMMs then run on the op
 * library's kernels.  Owned by the plan. */
const char *eager_library_note(const struct eager_plan *p);

/* The op library's source directory: $PASSFS_OPLIB_DIR, else the source
 * tree's gpu/oplib when it exists, else the installed share/passfs/oplib. */
const char *eager_oplib_dir(void);

#endif
