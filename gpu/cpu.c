/* cpu.c - the cpu backend: CUDA C compiled by the host C++ compiler against
 * the emulation layer (gpu/include/pf_emu.h), blocks spread over a thread
 * pool, "device" memory in the process.
 *
 * A module is compiled in four steps: the NVRTC gate (when NVRTC can be
 * loaded: the source must be CUDA C a GPU would take), the host compile
 * with one trampoline per name expression (hostcc.c), the ELF check of the
 * object (elfcheck.c), then dlopen and dlsym of each trampoline.  A launch
 * calls the trampoline with a pf_call whose runtime runs the blocks on the
 * pool and records the first failure message. */
#include "backend.h"
#include "clock.h"

#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/mman.h>

#include "elfcheck.h"
#include "hostcc.h"
#include "nvrtc.h"
#include "pool.h"
#include "traffic.h"

#define CPU_ALIGN 256
/* Device memory is shared anonymous memory, a mapping of its own for each
 * allocation (never the heap): the evaluating parent counts the bytes a
 * counted call touched from outside the pass's process, as the pages of the
 * process's shared mappings that the kernel saw referenced
 * (engine/eval/kacct.c); the worker's own memory (heap, stacks, the
 * emulator's state) is private and never among them.  Not inherited by a
 * fork (a child would share it, not copy it). */
typedef int (*tramp_fn)(pf_call *c, pf_dim3 g, pf_dim3 b, size_t smem, void **args, int nargs);

struct cpu_kernel {
	struct gpu_kernel base;
	char *name;             /* the name expression as given */
	tramp_fn tramp;
};

struct cpu_module {
	struct gpu_module base;
	void *handle;
	int n_kernels;
	struct cpu_kernel *kernels;
	struct cpu_module *prev, *next;
};

/* Live allocations: pointer -> size, open addressing (keys never move while
 * present; a removed slot becomes a tombstone). */
struct alloc_slot {
	void *p;                /* NULL: empty; ALLOC_TOMB: removed */
	size_t bytes;
};
#define ALLOC_TOMB ((void *)1)

struct cpu_dev {
	struct gpu_dev base;
	struct pool *pool;
	pthread_mutex_t mu;     /* guards modules and the allocation table */
	struct cpu_module *modules;
	struct alloc_slot *slots;
	size_t cap, used;       /* used counts live entries and tombstones */
	unsigned char *flush;   /* --cold: written over before each timed call */
	size_t flush_bytes;
	unsigned char flush_byte;
	int counting;           /* COUNT_BYTES or COUNT_TIMES: each launch is counted */
	int guard;              /* gpu_guard_begin: device memory closed between launches */
	double launch_cpu_ms;   /* the calling thread's CPU time in the timed call's launches so far */
	double call_model_ms;   /* the timed call's launches modeled on their own times so far */
	struct gpu_traffic traffic;
	/* Each counted launch of the traffic count, then of the timed call
	 * (n_timed of them so far): for the model (traffic.h). */
	struct model_launch *recs;
	size_t n_recs, cap_recs, n_timed;
	double next_lib_ms;     /* gpu_model_price: the next launch is a library call */
};
enum { COUNT_NONE, COUNT_BYTES, COUNT_TIMES };

static struct cpu_dev *cpu_of(struct gpu_dev *d)
{
	return (struct cpu_dev *)d;
}

/* --- memory ------------------------------------------------------------ */

static size_t slot_hash(const void *p, size_t cap)
{
	uint64_t x = (uint64_t)(uintptr_t)p >> 8;
	x *= 0x9e3779b97f4a7c15ull;
	return (size_t)(x >> 17) & (cap - 1);
}

static int table_grow(struct cpu_dev *c)
{
	size_t cap = c->cap ? c->cap * 2 : 256;
	struct alloc_slot *s = calloc(cap, sizeof *s);
	if (s == NULL)
		return -1;
	size_t used = 0;
	for (size_t i = 0; i < c->cap; i++) {
		void *p = c->slots[i].p;
		if (p == NULL || p == ALLOC_TOMB)
			continue;
		size_t h = slot_hash(p, cap);
		while (s[h].p != NULL)
			h = (h + 1) & (cap - 1);
		s[h] = c->slots[i];
		used++;
	}
	free(c->slots);
	c->slots = s;
	c->cap = cap;
	c->used = used;
	return 0;
}

static struct alloc_slot *table_find(struct cpu_dev *c, const void *p)
{
	if (c->cap == 0)
		return NULL;
	size_t h = slot_hash(p, c->cap);
	for (size_t n = 0; n < c->cap; n++) {
		if (c->slots[h].p == NULL)
			return NULL;
		if (c->slots[h].p == p)
			return &c->slots[h];
		h = (h + 1) & (c->cap - 1);
	}
	return NULL;
}


static void *cpu_alloc(struct gpu_dev *d, size_t bytes)
{
	struct cpu_dev *c = cpu_of(d);
	size_t n = bytes ? bytes : 1;
	if (n > SIZE_MAX - CPU_ALIGN)
		return NULL;
	n = (n + CPU_ALIGN - 1) & ~(size_t)(CPU_ALIGN - 1);
	void *p = mmap(NULL, n, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (p == MAP_FAILED)
		return NULL;
	madvise(p, n, MADV_DONTFORK);
	pthread_mutex_lock(&c->mu);
	if ((c->used + 1) * 2 > c->cap && table_grow(c) != 0) {
		pthread_mutex_unlock(&c->mu);
		munmap(p, n);
		return NULL;
	}
	size_t h = slot_hash(p, c->cap);
	while (c->slots[h].p != NULL && c->slots[h].p != ALLOC_TOMB)
		h = (h + 1) & (c->cap - 1);
	if (c->slots[h].p == NULL)
		c->used++;
	c->slots[h] = (struct alloc_slot){p, n};
	pthread_mutex_unlock(&c->mu);
	return p;
}

static void cpu_free(struct gpu_dev *d, void *p)
{
	struct cpu_dev *c = cpu_of(d);
	pthread_mutex_lock(&c->mu);
	struct alloc_slot *s = table_find(c, p);
	if (s == NULL) {
		/* not ours (or freed twice): leave it alone */
		pthread_mutex_unlock(&c->mu);
		return;
	}
	size_t bytes = s->bytes;
	s->p = ALLOC_TOMB;
	pthread_mutex_unlock(&c->mu);
	munmap(p, bytes);
}

static int cpu_copy(struct gpu_dev *d, void *dst, const void *src, size_t bytes)
{
	(void)d;
	memmove(dst, src, bytes);
	return 0;
}

static int cpu_memset(struct gpu_dev *d, void *dst, int byte, size_t bytes)
{
	(void)d;
	memset(dst, byte, bytes);
	return 0;
}

static int cpu_sync(struct gpu_dev *d, char *err, size_t errlen)
{
	/* launches are synchronous here */
	(void)d;
	(void)err;
	(void)errlen;
	return 0;
}

/* --- blocks -------------------------------------------------------------- */

struct grid_job {
	pf_dim3 grid;
	void (*block_fn)(void *ctx, pf_dim3 idx);
	void *ctx;
};

static void grid_item(void *arg, uint64_t i)
{
	struct grid_job *j = arg;
	pf_dim3 b;
	b.x = (unsigned)(i % j->grid.x);
	b.y = (unsigned)(i / j->grid.x % j->grid.y);
	b.z = (unsigned)(i / ((uint64_t)j->grid.x * j->grid.y));
	j->block_fn(j->ctx, b);
}

/* The live allocations, for counting a launch's traffic (malloc'd; *n). */
static struct traffic_alloc *live_allocs(struct cpu_dev *c, int *n)
{
	pthread_mutex_lock(&c->mu);
	struct traffic_alloc *al = malloc(sizeof(*al) * (c->used ? c->used : 1));
	int k = 0;
	for (size_t i = 0; al && i < c->cap; i++)
		if (c->slots[i].p != NULL && c->slots[i].p != ALLOC_TOMB)
			al[k++] = (struct traffic_alloc){c->slots[i].p, c->slots[i].bytes};
	pthread_mutex_unlock(&c->mu);
	*n = k;
	return al;
}

/* TSC ticks per ns, measured once against the monotonic clock (5 ms). */
static double tsc_per_ns(void)
{
	static double r;
	if (r > 0)
		return r;
	double a = base_now_ms(), b;
	uint64_t t0 = __builtin_ia32_rdtsc();
	do
		b = base_now_ms();
	while (b - a < 5.0);
	uint64_t t1 = __builtin_ia32_rdtsc();
	r = (double)(t1 - t0) / ((b - a) * 1e6);
	if (!(r > 0))
		r = 1;
	return r;
}

/* What two back-to-back readings of the TSC differ by, at least: the
 * clock's own cost in a CUDA thread's timed stretch. */
static unsigned long long clock_ticks(void)
{
	static unsigned long long least;
	if (least == 0) {
		least = ~0ull;
		for (int i = 0; i < 2000; i++) {
			unsigned long long a = __builtin_ia32_rdtsc(), b = __builtin_ia32_rdtsc();
			if (b - a < least)
				least = b - a;
		}
	}
	return least;
}

/* The calling thread's wall time less its CPU time, ns (pf_launch_stats). */
static long long away_ns(void)
{
	return (long long)((base_now_ms() - base_thread_cpu_ms()) * 1e6);
}

static struct model_launch *new_rec(struct cpu_dev *c)
{
	if (c->n_recs == c->cap_recs) {
		size_t cap = c->cap_recs ? 2 * c->cap_recs : 64;
		struct model_launch *r = realloc(c->recs, cap * sizeof(*r));
		if (r == NULL)
			return NULL;
		c->recs = r;
		c->cap_recs = cap;
	}
	struct model_launch *r = &c->recs[c->n_recs++];
	memset(r, 0, sizeof(*r));
	return r;
}

static int cpu_run_blocks(struct gpu_dev *d, pf_dim3 grid, pf_dim3 block, void (*block_fn)(void *ctx, pf_dim3 idx),
			  void *ctx, struct pf_launch_stats *st)
{
	struct cpu_dev *c = cpu_of(d);
	struct grid_job j = {grid, block_fn, ctx};
	int counted = 0, n = 0;
	double lib_ms = c->next_lib_ms;
	c->next_lib_ms = 0;
	double cpu0 = base_thread_cpu_ms();     /* the guard's work is the launch's, not the host's */
	if (c->guard)
		traffic_guard_open();
	if (c->counting == COUNT_BYTES) {
		struct traffic_alloc *al = live_allocs(c, &n);
		counted = al != NULL && traffic_launch_begin(al, n) == 0;
		free(al);
		c->traffic.launches++;
		if (!counted)
			c->traffic.uncounted++;
	}
	if (c->counting == COUNT_TIMES && st != NULL) {
		st->timing = 1;
		st->tsc_per_ns = tsc_per_ns();
		st->away_ns = away_ns;
		st->clock_ticks = clock_ticks();
		st->resume_ticks = (unsigned long long)(MODEL_RESUME_NS * st->tsc_per_ns);
	}
	pool_run(c->pool, (uint64_t)grid.x * grid.y * grid.z, grid_item, &j);
	if (counted) {
		uint64_t b = 0;
		int approx = 0;
		traffic_launch_end(&b, &approx);
		c->traffic.bytes += b;
		c->traffic.approx |= approx;
		struct model_launch *r = new_rec(c);
		if (r) {
			r->bytes = b;
			r->lib_ms = lib_ms;
			r->sum_ns = r->path_ns = -1;
			r->block_threads = (uint64_t)block.x * block.y * block.z;
		} else {
			c->traffic.mismatch = 1;
		}
	}
	if (c->counting == COUNT_TIMES) {
		/* launch k of the timed call is launch k of the count, and
		 * every one of its threads was timed */
		if (c->n_timed < c->n_recs && st != NULL && st->timing &&
		    c->recs[c->n_timed].block_threads == (uint64_t)block.x * block.y * block.z &&
		    c->recs[c->n_timed].lib_ms == lib_ms &&
		    st->threads == (uint64_t)grid.x * grid.y * grid.z * block.x * block.y * block.z) {
			/* each timed call again: the least of its times (a
			 * machine's hiccups hit one call's launch, not all) */
			struct model_launch *r = &c->recs[c->n_timed];
			double f = tsc_per_ns(), sum = (double)st->sum_ticks / f, path = model_tail_ticks(st, f) / f;
			r->threads = st->threads;
			struct model_launch own = *r;
			double m, p, q;
			own.sum_ns = sum;
			own.path_ns = path;
			c->call_model_ms += model_launch_ms(&own, &m, &p, &q);
			if (r->sum_ns < 0 || sum < r->sum_ns)
				r->sum_ns = sum;
			if (r->path_ns < 0 || path < r->path_ns)
				r->path_ns = path;
		} else {
			c->traffic.mismatch = 1;
		}
		c->n_timed++;
	}
	if (c->guard) {
		struct traffic_alloc *al = live_allocs(c, &n);
		if (al == NULL || traffic_guard_close(al, n) != 0)
			c->guard = 0;   /* (guard_end then reports no touches) */
		free(al);
	}
	c->launch_cpu_ms += base_thread_cpu_ms() - cpu0;
	return 0;
}

static void cpu_model_price(struct gpu_dev *d, double lib_ms)
{
	cpu_of(d)->next_lib_ms = lib_ms > 0 ? lib_ms : 0;
}

static int cpu_guard_begin(struct gpu_dev *d)
{
	struct cpu_dev *c = cpu_of(d);
	int n = 0;
	if (!traffic_installed())
		return -1;
	struct traffic_alloc *al = live_allocs(c, &n);
	traffic_guard_reset();
	int rc = al != NULL && traffic_guard_close(al, n) == 0 ? 0 : -1;
	free(al);
	c->guard = rc == 0;
	return rc;
}

static uint64_t cpu_guard_end(struct gpu_dev *d, uintptr_t *first)
{
	struct cpu_dev *c = cpu_of(d);
	traffic_guard_open();
	c->guard = 0;
	return traffic_guard_touches(first);
}

static int cpu_traffic_begin(struct gpu_dev *d, char *err, size_t errlen)
{
	struct cpu_dev *c = cpu_of(d);
	if (!traffic_installed()) {
		snprintf(err, errlen, "counting memory traffic: no fault handler in this process");
		return -1;
	}
	memset(&c->traffic, 0, sizeof(c->traffic));
	c->n_recs = c->n_timed = 0;
	c->counting = COUNT_BYTES;
	return 0;
}

static int cpu_traffic_end(struct gpu_dev *d, struct gpu_traffic *out)
{
	struct cpu_dev *c = cpu_of(d);
	c->counting = COUNT_NONE;
	*out = c->traffic;
	return 0;
}

static int cpu_timing_begin(struct gpu_dev *d, char *err, size_t errlen)
{
	struct cpu_dev *c = cpu_of(d);
	(void)err;
	(void)errlen;
	tsc_per_ns();
	c->n_timed = 0;
	c->launch_cpu_ms = 0;
	c->call_model_ms = 0;
	c->counting = COUNT_TIMES;
	return 0;
}

static int cpu_timing_end(struct gpu_dev *d, struct gpu_traffic *out)
{
	struct cpu_dev *c = cpu_of(d);
	c->counting = COUNT_NONE;
	if (c->n_timed != c->n_recs)
		c->traffic.mismatch = 1;
	for (size_t i = 0; i < c->n_recs; i++)
		if (c->recs[i].sum_ns < 0)
			c->recs[i].sum_ns = c->recs[i].path_ns = 0;
	c->traffic.timed = 1;
	c->traffic.mem_ms = c->traffic.path_ms = c->traffic.par_ms = 0;
	c->traffic.threads = 0;
	/* launches the count could not see (no memory to protect) are paid
	 * their launch cost alone */
	c->traffic.model_ms = (double)(c->traffic.launches - c->n_recs) * MODEL_LAUNCH_MS;
	for (size_t i = 0; i < c->n_recs; i++) {
		double m, p, q;
		c->traffic.model_ms += model_launch_ms(&c->recs[i], &m, &p, &q);
		c->traffic.mem_ms += m;
		c->traffic.path_ms += p;
		c->traffic.par_ms += q;
		c->traffic.threads += c->recs[i].threads;
	}
	c->traffic.launch_cpu_ms = c->launch_cpu_ms;
	c->traffic.call_model_ms = (double)(c->traffic.launches - c->n_recs) * MODEL_LAUNCH_MS + c->call_model_ms;
	*out = c->traffic;
	return 0;
}

/* --- the runtime a module's launches see ------------------------------------ */

struct cpu_call {
	pf_call call;
	struct cpu_dev *dev;
	char msg[512];
	int failed;
};

static const pf_tensor *rt_in(pf_call *c, int i)
{
	(void)c;
	(void)i;
	return NULL;
}

static pf_tensor *rt_out(pf_call *c, int i)
{
	(void)c;
	(void)i;
	return NULL;
}

static int rt_count(pf_call *c)
{
	(void)c;
	return 0;
}

static void *rt_scratch(pf_call *c, size_t bytes)
{
	(void)c;
	(void)bytes;
	return NULL;
}

static int rt_fail(pf_call *c, int code, const char *msg)
{
	struct cpu_call *cc = c->priv;
	if (!cc->failed) {
		cc->failed = 1;
		snprintf(cc->msg, sizeof cc->msg, "%s", msg ? msg : "launch failed");
	}
	return code;
}

static const char *rt_variant(pf_call *c)
{
	(void)c;
	return "";
}

static int rt_launch(pf_call *c, const void *kernel, pf_dim3 grid, pf_dim3 block, size_t smem,
		     void **args, int nargs, const size_t *arg_sizes)
{
	(void)kernel;
	(void)grid;
	(void)block;
	(void)smem;
	(void)args;
	(void)nargs;
	(void)arg_sizes;
	return rt_fail(c, PF_ERR_LAUNCH, "the cpu backend has no device launcher");
}

static int rt_run_blocks(pf_call *c, pf_dim3 grid, pf_dim3 block, void (*block_fn)(void *ctx, pf_dim3 idx),
			 void *ctx, struct pf_launch_stats *st)
{
	struct cpu_call *cc = c->priv;
	return cpu_run_blocks(&cc->dev->base, grid, block, block_fn, ctx, st);
}

static const struct pf_runtime cpu_runtime = {
	.abi_version = PF_ABI_VERSION,
	.in = rt_in,
	.out = rt_out,
	.num_in = rt_count,
	.num_out = rt_count,
	.scratch = rt_scratch,
	.fail = rt_fail,
	.variant = rt_variant,
	.launch = rt_launch,
	.run_blocks = rt_run_blocks,
};

static int cpu_launch(struct gpu_dev *d, struct gpu_kernel *k, pf_dim3 grid, pf_dim3 block,
		      size_t smem, void **args, int nargs, const size_t *arg_sizes, char *err, size_t errlen)
{
	struct cpu_kernel *ck = (struct cpu_kernel *)k;
	(void)arg_sizes;        /* the trampoline unpacks by the kernel's own types */
	struct cpu_call cc = {.call = {.rt = &cpu_runtime, .backend = PF_BACKEND_CPU}, .dev = cpu_of(d)};
	cc.call.priv = &cc;
	int rc = ck->tramp(&cc.call, grid, block, smem, args, nargs);
	if (rc == PF_OK && !cc.failed)
		return 0;
	snprintf(err, errlen, "%s: %s", ck->name, cc.failed ? cc.msg : "launch failed");
	return -1;
}

/* --- modules ------------------------------------------------------------------ */

static void module_release(struct cpu_module *m)
{
	for (int i = 0; i < m->n_kernels; i++)
		free(m->kernels[i].name);
	free(m->kernels);
	if (m->handle != NULL)
		gpu_dlclose(m->handle);
	free(m);
}

static void cpu_module_free(struct gpu_module *gm)
{
	struct cpu_module *m = (struct cpu_module *)gm;
	struct cpu_dev *c = cpu_of(gm->dev);
	pthread_mutex_lock(&c->mu);
	if (m->prev)
		m->prev->next = m->next;
	else
		c->modules = m->next;
	if (m->next)
		m->next->prev = m->prev;
	pthread_mutex_unlock(&c->mu);
	module_release(m);
}

static struct gpu_kernel *cpu_module_kernel(struct gpu_module *gm, const char *name)
{
	struct cpu_module *m = (struct cpu_module *)gm;
	for (int i = 0; i < m->n_kernels; i++)
		if (gpu_same_name_expr(m->kernels[i].name, name))
			return &m->kernels[i].base;
	return NULL;
}

static struct gpu_kernel *cpu_module_kernel_at(struct gpu_module *gm, int i)
{
	struct cpu_module *m = (struct cpu_module *)gm;
	return i >= 0 && i < m->n_kernels ? &m->kernels[i].base : NULL;
}

static int cpu_module_kernel_count(struct gpu_module *gm)
{
	return ((struct cpu_module *)gm)->n_kernels;
}

static void cpu_kernel_info(struct gpu_kernel *k, struct gpu_kernel_info *out)
{
	out->name = ((struct cpu_kernel *)k)->name;     /* the rest is unknown here */
}

static char *dup_or_empty(const char *s)
{
	return strdup(s ? s : "");
}

static int cpu_module_compile(struct gpu_dev *d, const char *label, const char *src,
			      const char *const *names, int n_names, struct gpu_module **out,
			      char **log, char *err, size_t errlen)
{
	struct cpu_dev *c = cpu_of(d);
	const char *inc = hostcc_include_dir();

	/* 1. the device gate */
	if (nvrtc_available(NULL, 0)) {
		struct nvrtc_request nr = {.label = label, .src = src, .arch = d->arch, .include_dir = inc,
					   .pre_include = "passfs.h", .names = names, .n_names = n_names};
		struct nvrtc_output no;
		enum nvrtc_status ns = nvrtc_compile(&nr, &no, err, errlen);
		if (ns != NVRTC_GATE_OK && ns != NVRTC_GATE_UNAVAILABLE) {
			if (log != NULL)
				*log = dup_or_empty(no.log);
			nvrtc_output_free(&no);
			return -1;
		}
		nvrtc_output_free(&no);
	}

	/* 2. the host compile */
	struct hostcc_request hr = {.label = label, .src = src, .len = strlen(src), .names = names,
				    .n_names = n_names, .include_dir = inc};
	struct hostcc_output ho;
	if (hostcc_compile(&hr, &ho, err, errlen) != HOSTCC_OK) {
		if (log != NULL)
			*log = dup_or_empty(ho.log);
		hostcc_output_free(&ho);
		return -1;
	}

	/* 3. the object may not run code at load time nor reach outside the
	 * allow-list */
	char msg[1024];
	if (elfcheck_file(ho.so_path, label, msg, sizeof msg) != ELFCHECK_OK) {
		snprintf(err, errlen, "%s", msg);
		hostcc_output_free(&ho);
		return -1;
	}

	/* 4. load */
	struct cpu_module *m = calloc(1, sizeof *m);
	if (m == NULL || (n_names > 0 && (m->kernels = calloc((size_t)n_names, sizeof *m->kernels)) == NULL)) {
		free(m);
		hostcc_output_free(&ho);
		snprintf(err, errlen, "%s: out of memory", label);
		return -1;
	}
	m->base.dev = d;
	m->handle = gpu_dlopen(ho.so_path, RTLD_NOW | RTLD_LOCAL);
	hostcc_output_free(&ho);        /* the mapping outlives the file */
	if (m->handle == NULL) {
		const char *e = dlerror();
		snprintf(err, errlen, "%s: cannot load the compiled module: %s", label, e ? e : "?");
		module_release(m);
		return -1;
	}
	for (int i = 0; i < n_names; i++) {
		char sym[32];
		snprintf(sym, sizeof sym, "pf_tramp_%d", i);
		struct cpu_kernel *k = &m->kernels[i];
		k->base.mod = &m->base;
		k->name = strdup(names[i]);
		void *fn = dlsym(m->handle, sym);
		if (k->name == NULL || fn == NULL) {
			snprintf(err, errlen, "%s: the compiled module lacks %s", label, sym);
			m->n_kernels = i + 1;
			module_release(m);
			return -1;
		}
		memcpy(&k->tramp, &fn, sizeof fn);
		m->n_kernels = i + 1;
	}

	pthread_mutex_lock(&c->mu);
	m->next = c->modules;
	if (c->modules)
		c->modules->prev = m;
	c->modules = m;
	pthread_mutex_unlock(&c->mu);
	*out = &m->base;
	return 0;
}

/* --- the device ------------------------------------------------------------------ */

#define FLUSH_SLICE ((size_t)1 << 20)
#define FLUSH_MAX ((size_t)256 << 20)

static void flush_slice(void *ctx, uint64_t i)
{
	struct cpu_dev *c = ctx;
	size_t off = (size_t)i * FLUSH_SLICE, n = c->flush_bytes - off < FLUSH_SLICE ? c->flush_bytes - off : FLUSH_SLICE;
	memset(c->flush + off, c->flush_byte, n);
}

/* --cold on the cpu backend: every pool thread writes its share of a buffer
 * twice the last-level cache (sysconf; 64 MiB when unknown, 256 MiB at
 * most), so what the previous call left in the caches is gone. */
static int cpu_l2_flush(struct gpu_dev *d, char *err, size_t errlen)
{
	struct cpu_dev *c = cpu_of(d);
	if (c->flush == NULL) {
		long llc = sysconf(_SC_LEVEL3_CACHE_SIZE);
		if (llc <= 0)
			llc = sysconf(_SC_LEVEL2_CACHE_SIZE);
		size_t bytes = llc > 0 ? gpu_l2_flush_bytes(llc) : (size_t)64 << 20;
		if (bytes > FLUSH_MAX)
			bytes = FLUSH_MAX;      /* a VM may report its host's whole L3 */
		if ((c->flush = aligned_alloc(4096, bytes)) == NULL) {
			snprintf(err, errlen, "cpu backend: no memory for the cache flush (%zu bytes)", bytes);
			return -1;
		}
		c->flush_bytes = bytes;
	}
	c->flush_byte++;
	pool_run(c->pool, (c->flush_bytes + FLUSH_SLICE - 1) / FLUSH_SLICE, flush_slice, c);
	return 0;
}

static void cpu_close(struct gpu_dev *d)
{
	struct cpu_dev *c = cpu_of(d);
	free(c->flush);
	while (c->modules != NULL) {
		struct cpu_module *m = c->modules;
		c->modules = m->next;
		module_release(m);
	}
	for (size_t i = 0; i < c->cap; i++)
		if (c->slots[i].p != NULL && c->slots[i].p != ALLOC_TOMB)
			munmap(c->slots[i].p, c->slots[i].bytes);
	free(c->slots);
	free(c->recs);
	pool_destroy(c->pool);
	pthread_mutex_destroy(&c->mu);
	free(c);
}

static const struct gpu_ops cpu_ops = {
	.close = cpu_close,
	.module_compile = cpu_module_compile,
	.module_free = cpu_module_free,
	.module_kernel = cpu_module_kernel,
	.module_kernel_at = cpu_module_kernel_at,
	.module_kernel_count = cpu_module_kernel_count,
	.kernel_info = cpu_kernel_info,
	.launch = cpu_launch,
	.alloc = cpu_alloc,
	.free = cpu_free,
	.copy_to_device = cpu_copy,
	.copy_to_host = cpu_copy,
	.memset = cpu_memset,
	.sync = cpu_sync,
	.run_blocks = cpu_run_blocks,
	.l2_flush = cpu_l2_flush,
	.traffic_begin = cpu_traffic_begin,
	.traffic_end = cpu_traffic_end,
	.timing_begin = cpu_timing_begin,
	.timing_end = cpu_timing_end,
	.guard_begin = cpu_guard_begin,
	.guard_end = cpu_guard_end,
	.model_price = cpu_model_price,
};

int gpu_cpu_open(struct gpu_dev **out, char *err, size_t errlen)
{
	*out = NULL;
	struct cpu_dev *c = calloc(1, sizeof *c);
	if (c == NULL) {
		snprintf(err, errlen, "cpu backend: out of memory");
		return -1;
	}
	char perr[256];
	if (pool_create(0, &c->pool, perr, sizeof perr) != 0) {
		snprintf(err, errlen, "cpu backend: %s", perr);
		free(c);
		return -1;
	}
	pthread_mutex_init(&c->mu, NULL);
	c->base.ops = &cpu_ops;
	c->base.backend = GPU_BACKEND_CPU;
	snprintf(c->base.name, sizeof c->base.name, "cpu (%d thread%s, emulated CUDA)",
		 pool_threads(c->pool), pool_threads(c->pool) == 1 ? "" : "s");
	snprintf(c->base.arch, sizeof c->base.arch, "sm_90");
	*out = &c->base;
	return 0;
}
