/* pass_run.c - the runtime a loaded pass calls back into (struct pf_runtime):
 * its tensors, scratch memory, launches and failure reports.  Runs inside the
 * sandboxed pass worker. */
#include "pass_run.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "eval_util.h"
#include "state.h"

#define SCRATCH_MAX_BLOCKS 256
#define SCRATCH_LIMIT ((size_t)4 << 30)

struct pass_instance {
	struct pf_call call;    /* first: callbacks get &call and cast back */
	struct pf_runtime rt;
	struct gpu_dev *dev;
	const struct graph_variant *v;
	pf_tensor in[GRAPH_MAX_IO], out[GRAPH_MAX_IO];
	struct pass_loaded loaded;
	/* cuda backend: the pass's device code, and the kernel of each entry of
	 * loaded.kernels (same index); NULL on the cpu backend */
	struct gpu_module *gmod;
	struct gpu_kernel **gk;
	void *scratch[SCRATCH_MAX_BLOCKS];
	int n_scratch;
	size_t scratch_bytes;
	int fail_code;
	char fail_msg[400];
};

static struct pass_instance *self(pf_call *c)
{
	return (struct pass_instance *)c;
}

static int rt_fail(pf_call *c, int code, const char *msg)
{
	struct pass_instance *pi = self(c);
	if (pi->fail_code == 0) {       /* keep the first reason */
		pi->fail_code = code;
		snprintf(pi->fail_msg, sizeof(pi->fail_msg), "%s", msg ? msg : "");
	}
	return code;
}

static const pf_tensor *rt_in(pf_call *c, int i)
{
	struct pass_instance *pi = self(c);
	if (i < 0 || i >= pi->v->n_inputs) {
		char m[120];
		snprintf(m, sizeof(m), "pf_in(call, %d): the task has %d inputs (0..%d)", i, pi->v->n_inputs,
			 pi->v->n_inputs - 1);
		rt_fail(c, PF_ERR_LAUNCH, m);
		return NULL;
	}
	return &pi->in[i];
}

static pf_tensor *rt_out(pf_call *c, int i)
{
	struct pass_instance *pi = self(c);
	if (i < 0 || i >= pi->v->n_outputs) {
		char m[120];
		snprintf(m, sizeof(m), "pf_out(call, %d): the task has %d outputs (0..%d)", i, pi->v->n_outputs,
			 pi->v->n_outputs - 1);
		rt_fail(c, PF_ERR_LAUNCH, m);
		return NULL;
	}
	return &pi->out[i];
}

static int rt_num_in(pf_call *c) { return self(c)->v->n_inputs; }
static int rt_num_out(pf_call *c) { return self(c)->v->n_outputs; }
static const char *rt_variant(pf_call *c) { return self(c)->v->name; }

/* Fresh and poisoned for every call, so nothing survives between calls. */
static void *rt_scratch(pf_call *c, size_t bytes)
{
	struct pass_instance *pi = self(c);
	if (pi->n_scratch == SCRATCH_MAX_BLOCKS || bytes > SCRATCH_LIMIT - pi->scratch_bytes) {
		rt_fail(c, PF_ERR_SCRATCH, "pf_scratch: over the scratch limit (4 GiB or 256 blocks per call)");
		return NULL;
	}
	/* The poison comes from one host pattern of at most 4 MiB, copied as
	 * often as needed: a large request needs no host copy of itself. */
	static uint32_t *pattern;
	static size_t pattern_bytes;
	size_t want = bytes < ((size_t)4 << 20) ? (bytes + 3) & ~(size_t)3 : (size_t)4 << 20;
	if (want < 64)
		want = 64;
	if (want > pattern_bytes) {
		uint32_t *p = malloc(want);
		if (p != NULL) {
			free(pattern);
			pattern = p;
			pattern_bytes = want;
			eval_fill_poison(pattern, DT_F32, pattern_bytes / 4);
		}
	}
	void *dev = gpu_alloc(pi->dev, bytes ? bytes : 1);
	if (dev == NULL || pattern == NULL) {
		if (dev != NULL)
			gpu_free(pi->dev, dev);
		rt_fail(c, PF_ERR_SCRATCH, "pf_scratch: out of device memory");
		return NULL;
	}
	size_t whole = bytes & ~(size_t)3;
	for (size_t off = 0; off < whole; off += pattern_bytes) {
		size_t n = whole - off < pattern_bytes ? whole - off : pattern_bytes;
		gpu_copy_to_device(pi->dev, (char *)dev + off, pattern, n);
	}
	pi->scratch[pi->n_scratch++] = dev;
	pi->scratch_bytes += bytes;
	return dev;
}

/* cuda backend: pf_launch gives the kernel's host address; the kernel table
 * maps it to the name expression whose device kernel cuda_bind found. */
static int rt_launch(pf_call *c, const void *kernel, pf_dim3 grid, pf_dim3 block, size_t smem, void **args,
		     int nargs, const size_t *sizes)
{
	struct pass_instance *pi = self(c);
	if (pi->gk == NULL)
		return rt_fail(c, PF_ERR_LAUNCH, "this backend runs kernels on the host (no device launcher)");
	for (int i = 0; i < pi->loaded.n_kernels; i++) {
		if (pi->loaded.kernels[i].addr != kernel)
			continue;
		char e[400];
		if (gpu_launch_sized(pi->dev, pi->gk[i], grid, block, smem, args, nargs, sizes, e, sizeof(e)))
			return rt_fail(c, PF_ERR_LAUNCH, e);
		return PF_OK;
	}
	return rt_fail(c, PF_ERR_LAUNCH, "pf_launch: this kernel is not named in any pf_launch of the pass "
		       "(launch kernels by name, not through a function pointer)");
}

/* cuda backend: loads the device code NVRTC made for the pass (its cubin,
 * or its PTX JIT-compiled for the device here; before the sandbox) and
 * finds the kernel of each kernel-table entry. */
static int cuda_bind(struct pass_instance *pi, const struct pass_module *mod, char *err, size_t errlen)
{
	if (mod->ptx == NULL || (mod->names.n > 0 && mod->lowered == NULL)) {
		snprintf(err, errlen, "%s: no device code to run on the GPU (%s)", mod->label,
			 mod->note[0] ? mod->note : "the device compile did not run");
		return -1;
	}
	char *log = NULL;
	/* NVRTC's cubin for this device first: no JIT here, and it loads where
	 * the driver is older than NVRTC's PTX version; the PTX if the cubin
	 * is missing or refused. */
	size_t cubin_len = 0;
	int rerr = 0;
	void *cubin = mod->cubin_path ? state_read_file(mod->cubin_path, 256u << 20, &cubin_len, &rerr) : NULL;
	int loaded = cubin != NULL &&
		     gpu_module_load(pi->dev, mod->label, cubin, cubin_len, (const char *const *)mod->names.expr,
				     (const char *const *)mod->lowered, mod->names.n, &pi->gmod, &log, err, errlen) == 0;
	free(cubin);
	free(log);
	log = NULL;
	if (!loaded && gpu_module_load(pi->dev, mod->label, mod->ptx, strlen(mod->ptx) + 1,
				       (const char *const *)mod->names.expr, (const char *const *)mod->lowered,
				       mod->names.n, &pi->gmod, &log, err, errlen)) {
		free(log);
		return -1;
	}
	free(log);
	pi->gk = calloc((size_t)pi->loaded.n_kernels + 1, sizeof(*pi->gk));
	if (pi->gk == NULL) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	for (int i = 0; i < pi->loaded.n_kernels; i++)
		if ((pi->gk[i] = gpu_module_kernel(pi->gmod, pi->loaded.kernels[i].name)) == NULL) {
			snprintf(err, errlen, "%s: the device code has no kernel '%s'", mod->label,
				 pi->loaded.kernels[i].name);
			return -1;
		}
	return 0;
}

static int rt_run_blocks(pf_call *c, pf_dim3 grid, void (*fn)(void *ctx, pf_dim3 block_idx), void *ctx)
{
	struct pass_instance *pi = self(c);
	if (gpu_run_blocks(pi->dev, grid, fn, ctx))
		return rt_fail(c, PF_ERR_LAUNCH, "this backend does not run blocks on the host");
	return PF_OK;
}

static void fill_tensor(pf_tensor *t, const struct graph_value *x)
{
	memset(t, 0, sizeof(*t));
	t->dtype = (int)x->dtype;
	t->ndim = x->shape.ndim;
	long long st = 1;
	for (int k = x->shape.ndim - 1; k >= 0; k--) {
		t->shape[k] = x->shape.d[k];
		t->stride[k] = st;
		st *= x->shape.d[k];
	}
}

int pass_instance_create(struct pass_module *mod, struct gpu_dev *dev, const struct graph_variant *v,
			 struct pass_instance **out, char *err, size_t errlen)
{
	struct pass_instance *pi = calloc(1, sizeof(*pi));
	if (pi == NULL) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	if (v->n_inputs > GRAPH_MAX_IO || v->n_outputs > GRAPH_MAX_IO) {
		snprintf(err, errlen, "the variant has more than %d inputs or outputs", GRAPH_MAX_IO);
		free(pi);
		return -1;
	}
	if (pass_load(mod, &pi->loaded, err, errlen)) {
		free(pi);
		return -1;
	}
	pi->dev = dev;
	pi->v = v;
	if (gpu_backend_of(dev) == GPU_BACKEND_CUDA && cuda_bind(pi, mod, err, errlen)) {
		pass_instance_free(pi);
		return -1;
	}
	pi->rt = (struct pf_runtime){.abi_version = PF_ABI_VERSION, .in = rt_in, .out = rt_out,
				     .num_in = rt_num_in, .num_out = rt_num_out, .scratch = rt_scratch,
				     .fail = rt_fail, .variant = rt_variant, .launch = rt_launch,
				     .run_blocks = rt_run_blocks};
	pi->call.rt = &pi->rt;
	pi->call.priv = pi;
	pi->call.backend = gpu_backend_of(dev) == GPU_BACKEND_CUDA ? PF_BACKEND_CUDA : PF_BACKEND_CPU;
	pass_instance_bind(pi, v, err, errlen);
	*out = pi;
	return 0;
}

int pass_instance_bind(struct pass_instance *pi, const struct graph_variant *v, char *err, size_t errlen)
{
	if (v->n_inputs > GRAPH_MAX_IO || v->n_outputs > GRAPH_MAX_IO) {
		snprintf(err, errlen, "the variant has more than %d inputs or outputs", GRAPH_MAX_IO);
		return -1;
	}
	pi->v = v;
	memset(pi->in, 0, sizeof(pi->in));
	memset(pi->out, 0, sizeof(pi->out));
	for (int i = 0; i < v->n_inputs; i++)
		fill_tensor(&pi->in[i], &v->values[i]);
	for (int o = 0; o < v->n_outputs; o++)
		fill_tensor(&pi->out[o], &v->values[v->outputs[o]]);
	return 0;
}

int pass_instance_call(struct pass_instance *pi, void *const *din, void *const *dout, char *err, size_t errlen)
{
	for (int i = 0; i < pi->v->n_inputs; i++)
		pi->in[i].data = din[i];
	for (int o = 0; o < pi->v->n_outputs; o++)
		pi->out[o].data = dout[o];
	pi->fail_code = 0;
	pi->fail_msg[0] = 0;
	int rc = pi->loaded.replacement(&pi->call);
	for (int k = 0; k < pi->n_scratch; k++)
		gpu_free(pi->dev, pi->scratch[k]);
	pi->n_scratch = 0;
	pi->scratch_bytes = 0;
	/* A failure the pass swallowed (it ignored pf_launch's result) still
	 * counts: its outputs cannot be what it meant. */
	if (rc == PF_OK && pi->fail_code)
		rc = pi->fail_code;
	if (rc != PF_OK) {
		if (pi->fail_msg[0])
			snprintf(err, errlen, "%s", pi->fail_msg);
		else
			snprintf(err, errlen, "the replacement returned %d", rc);
		if (rc != PF_ERR_UNSUPPORTED && rc != PF_ERR_NOT_IMPLEMENTED && rc != PF_ERR_SCRATCH)
			rc = PF_ERR_LAUNCH;
	}
	return rc;
}

void pass_instance_free(struct pass_instance *pi)
{
	if (pi) {
		gpu_module_free(pi->gmod);
		free(pi->gk);
		pass_unload(&pi->loaded);
	}
	free(pi);
}

struct gpu_module *pass_instance_module(struct pass_instance *pi)
{
	return pi ? pi->gmod : NULL;
}
