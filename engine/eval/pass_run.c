/* pass_run.c - the runtime a loaded pass calls back into (struct pf_runtime):
 * its tensors, scratch memory, launches and failure reports.  Runs inside the
 * sandboxed pass worker. */
#define _GNU_SOURCE
#include "pass_run.h"

#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "clock.h"
#include "eval_util.h"
#include "file.h"

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
	 * loaded.kernels (same index), then of each of xaddr; NULL on the cpu
	 * backend */
	struct gpu_module *gmod;
	struct gpu_kernel **gk;
	/* cuda backend: the host addresses of the kernels no name expression
	 * gave (launched through a template parameter, a macro, a pointer),
	 * found by their exported symbols */
	const void **xaddr;
	int n_x;
	void *scratch[SCRATCH_MAX_BLOCKS];
	int n_scratch;
	size_t scratch_bytes;
	/* passfs's own work in the last call (scratch allocation, its poison
	 * fill and release), CPU ms of the calling thread: not the pass's
	 * host time */
	double runtime_ms;
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
static void *rt_scratch_fill(pf_call *c, size_t bytes);

static void *rt_scratch(pf_call *c, size_t bytes)
{
	double t0 = base_thread_cpu_ms();
	void *p = rt_scratch_fill(c, bytes);
	self(c)->runtime_ms += base_thread_cpu_ms() - t0;
	return p;
}

static void *rt_scratch_fill(pf_call *c, size_t bytes)
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
 * maps it to the name expression whose device kernel cuda_bind found, else
 * the exported kernels (xaddr) to theirs.  Returns PF_OK, or PF_ERR_LAUNCH
 * with the reason recorded (a bad configuration, a driver error, an address
 * that is no kernel of the pass). */
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
	for (int j = 0; j < pi->n_x; j++) {
		if (pi->xaddr[j] != kernel)
			continue;
		char e[400];
		if (gpu_launch_sized(pi->dev, pi->gk[pi->loaded.n_kernels + j], grid, block, smem, args, nargs,
				     sizes, e, sizeof(e)))
			return rt_fail(c, PF_ERR_LAUNCH, e);
		return PF_OK;
	}
	return rt_fail(c, PF_ERR_LAUNCH, "pf_launch: not a kernel of this pass's device code (a kernel launched "
		       "through a template parameter, a macro or a pointer must not be in an unnamed namespace "
		       "nor declared static before its definition; or name it: pf_launch(call, kernel<...>, ...))");
}

/* The kernels of the PTX (".entry NAME") that no name expression gave, as
 * names (pointing into ptx, not terminated: *lens) with the address of the
 * pass object's exported symbol of the same name.  NVRTC lowers a kernel
 * with external linkage, a template instance included, to the Itanium name
 * g++ gives its host stub, so the symbol is the kernel's host address,
 * which pf_launch passes.  Symbols found outside the pass object (dlsym
 * also searches its libraries) do not count: a pass launches only its own
 * kernels.  Returns how many (arrays malloc'd, NULL when none), or -1 when
 * out of memory. */
static int exported_kernels(struct pass_instance *pi, const struct pass_module *mod, const char ***names,
			    int **lens, const void ***addrs)
{
	*names = NULL;
	*lens = NULL;
	*addrs = NULL;
	Dl_info self_info, info;
	void *repl;
	memcpy(&repl, &pi->loaded.replacement, sizeof repl);
	if (mod->ptx == NULL || dladdr(repl, &self_info) == 0)
		return 0;
	int n = 0, cap = 0;
	for (const char *p = strstr(mod->ptx, ".entry"); p != NULL; p = strstr(p + 6, ".entry")) {
		const char *b = p + 6;
		if (*b != ' ' && *b != '\t')
			continue;
		while (*b == ' ' || *b == '\t')
			b++;
		const char *e = b;
		while (*e == '_' || *e == '$' || (*e >= '0' && *e <= '9') || (*e >= 'a' && *e <= 'z') ||
		       (*e >= 'A' && *e <= 'Z'))
			e++;
		int len = (int)(e - b), known = 0;
		char sym[512];
		if (len == 0 || len >= (int)sizeof sym)
			continue;
		for (int i = 0; i < mod->names.n && mod->lowered && !known; i++)
			known = strlen(mod->lowered[i]) == (size_t)len && memcmp(mod->lowered[i], b, (size_t)len) == 0;
		for (int i = 0; i < n && !known; i++)
			known = (*lens)[i] == len && memcmp((*names)[i], b, (size_t)len) == 0;
		if (known)
			continue;
		memcpy(sym, b, (size_t)len);
		sym[len] = '\0';
		void *addr = dlsym(pi->loaded.handle, sym);
		if (addr == NULL || dladdr(addr, &info) == 0 || info.dli_fbase != self_info.dli_fbase)
			continue;
		if (n == cap) {
			cap = cap ? cap * 2 : 8;
			const char **nn = realloc(*names, sizeof *nn * (size_t)cap);
			if (nn != NULL)
				*names = nn;
			int *nl = realloc(*lens, sizeof *nl * (size_t)cap);
			if (nl != NULL)
				*lens = nl;
			const void **na = realloc(*addrs, sizeof *na * (size_t)cap);
			if (na != NULL)
				*addrs = na;
			if (nn == NULL || nl == NULL || na == NULL)
				return -1;
		}
		(*names)[n] = b;
		(*lens)[n] = len;
		(*addrs)[n] = addr;
		n++;
	}
	return n;
}

/* cuda backend: loads the device code NVRTC made for the pass (its cubin,
 * or its PTX JIT-compiled for the device here; before the sandbox) and
 * finds the kernel of each kernel-table entry and of each exported kernel
 * (exported_kernels).  Returns 0, or -1 with err (no device code, a module
 * the driver refuses, a missing kernel, out of memory). */
static int cuda_bind(struct pass_instance *pi, const struct pass_module *mod, char *err, size_t errlen)
{
	if (mod->ptx == NULL || (mod->names.n > 0 && mod->lowered == NULL)) {
		snprintf(err, errlen, "%s: no device code to run on the GPU (%s)", mod->label,
			 mod->note[0] ? mod->note : "the device compile did not run");
		return -1;
	}
	/* The module's kernels: those of the name expressions (with NVRTC's
	 * lowered names), then the exported ones, named by their symbols. */
	const char **xname;
	int *xlen;
	int nx = exported_kernels(pi, mod, &xname, &xlen, &pi->xaddr);
	int n = mod->names.n + (nx > 0 ? nx : 0);
	char **names = calloc((size_t)n + 1, sizeof *names), **lowered = calloc((size_t)n + 1, sizeof *lowered);
	int rc = -1;
	if (nx < 0 || names == NULL || lowered == NULL) {
		snprintf(err, errlen, "out of memory");
		goto out;
	}
	for (int i = 0; i < mod->names.n; i++) {
		names[i] = mod->names.expr[i];
		lowered[i] = mod->lowered[i];
	}
	for (int j = 0; j < nx; j++)
		if ((names[mod->names.n + j] = strndup(xname[j], (size_t)xlen[j])) == NULL) {
			snprintf(err, errlen, "out of memory");
			goto out;
		} else {
			lowered[mod->names.n + j] = names[mod->names.n + j];
		}
	char *log = NULL;
	/* NVRTC's cubin for this device first: no JIT here, and it loads where
	 * the driver is older than NVRTC's PTX version; the PTX if the cubin
	 * is missing or refused. */
	size_t cubin_len = 0;
	int rerr = 0;
	void *cubin = mod->cubin_path ? base_read_file(mod->cubin_path, 256u << 20, &cubin_len, &rerr) : NULL;
	int loaded = cubin != NULL &&
		     gpu_module_load(pi->dev, mod->label, cubin, cubin_len, (const char *const *)names,
				     (const char *const *)lowered, n, &pi->gmod, &log, err, errlen) == 0;
	free(cubin);
	free(log);
	log = NULL;
	if (!loaded && gpu_module_load(pi->dev, mod->label, mod->ptx, strlen(mod->ptx) + 1,
				       (const char *const *)names, (const char *const *)lowered, n, &pi->gmod, &log,
				       err, errlen)) {
		free(log);
		goto out;
	}
	free(log);
	pi->gk = calloc((size_t)pi->loaded.n_kernels + (size_t)nx + 1, sizeof(*pi->gk));
	if (pi->gk == NULL) {
		snprintf(err, errlen, "out of memory");
		goto out;
	}
	for (int i = 0; i < pi->loaded.n_kernels; i++)
		if ((pi->gk[i] = gpu_module_kernel(pi->gmod, pi->loaded.kernels[i].name)) == NULL) {
			snprintf(err, errlen, "%s: the device code has no kernel '%s'", mod->label,
				 pi->loaded.kernels[i].name);
			goto out;
		}
	for (int j = 0; j < nx; j++)
		if ((pi->gk[pi->loaded.n_kernels + j] = gpu_module_kernel(pi->gmod, names[mod->names.n + j])) == NULL) {
			snprintf(err, errlen, "%s: the device code has no kernel '%s'", mod->label,
				 names[mod->names.n + j]);
			goto out;
		}
	pi->n_x = nx;
	rc = 0;
out:
	for (int j = 0; names != NULL && j < nx; j++)
		free(names[mod->names.n + j]);
	free(names);
	free(lowered);
	free(xname);
	free(xlen);
	return rc;
}

static int rt_run_blocks(pf_call *c, pf_dim3 grid, pf_dim3 block, void (*fn)(void *ctx, pf_dim3 block_idx),
			 void *ctx, struct pf_launch_stats *st)
{
	struct pass_instance *pi = self(c);
	if (gpu_run_blocks(pi->dev, grid, block, fn, ctx, st))
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
	pi->runtime_ms = 0;
	int rc = pi->loaded.replacement(&pi->call);
	double t0 = base_thread_cpu_ms();
	for (int k = 0; k < pi->n_scratch; k++)
		gpu_free(pi->dev, pi->scratch[k]);
	pi->runtime_ms += base_thread_cpu_ms() - t0;
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
		free(pi->xaddr);
		pass_unload(&pi->loaded);
	}
	free(pi);
}

double pass_instance_runtime_ms(const struct pass_instance *pi)
{
	return pi ? pi->runtime_ms : 0;
}

struct gpu_module *pass_instance_module(struct pass_instance *pi)
{
	return pi ? pi->gmod : NULL;
}
