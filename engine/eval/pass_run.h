/* pass_run.h - a loaded pass bound to one variant in the pass worker: the
 * pf_runtime it calls back into (tensors, scratch, launches, failures). */
#ifndef PASSFS_PASS_RUN_H
#define PASSFS_PASS_RUN_H

#include <stddef.h>

#include "gpu.h"
#include "graph.h"
#include "pass.h"

struct pass_instance;

/* Loads the compiled pass (pass_load: dlopen of the checked object) and binds
 * it to variant v on dev.  Call before entering the sandbox.  Returns 0, or
 * -1 with a message. */
int pass_instance_create(struct pass_module *mod, struct gpu_dev *dev, const struct graph_variant *v,
			 struct pass_instance **out, char *err, size_t errlen);

/* Binds the instance to another variant of the same task (the tensors'
 * shapes and dtypes; the loaded object and its device code stay).  Safe in
 * the sandbox.  Returns 0, or -1 with a message. */
int pass_instance_bind(struct pass_instance *pi, const struct graph_variant *v, char *err, size_t errlen);

/* Calls the replacement once with the given device inputs and outputs.
 * Returns PF_OK, or PF_ERR_UNSUPPORTED / PF_ERR_NOT_IMPLEMENTED /
 * PF_ERR_SCRATCH / PF_ERR_LAUNCH with the pass's reason in err.  Scratch
 * memory is freed before it returns. */
/* passfs's own CPU time (ms, the calling thread) in the last call:
 * scratch allocation, its poison fill and release - not the pass's. */
double pass_instance_runtime_ms(const struct pass_instance *pi);
int pass_instance_call(struct pass_instance *pi, void *const *din, void *const *dout, char *err, size_t errlen);

void pass_instance_free(struct pass_instance *pi);

/* The pass's device code on the cuda backend (gpu_module_kernel_count /
 * _at / gpu_kernel_info give each kernel's registers, shared and local
 * memory); NULL on the cpu backend. */
struct gpu_module *pass_instance_module(struct pass_instance *pi);

#endif
