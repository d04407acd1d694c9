/* traffic.c - what the cpu backend's kernels touch: a launch's device
 * memory traffic, counted page by page (traffic.h).
 *
 * For a counted launch every whole page inside a live device allocation is
 * made inaccessible (mprotect PROT_NONE) before the blocks run (in units of
 * 16 pages for allocations of 1 MiB or more).  The first
 * access to such a page faults; the SIGSEGV handler marks the page touched
 * and gives it back its access, and the access goes on.  After the launch
 * every page is accessible again and the touched pages, clipped to their
 * allocations, are the launch's bytes.  A page is counted once per launch
 * whether it was read, written or both, and however often: the footprint,
 * which is what a GPU moves from and to its memory when its caches hold a
 * kernel's reuse.  Bytes of an allocation that share a page with other
 * memory (its unaligned head and tail, a buffer smaller than a page) cannot
 * be protected alone: they count when the kernel touched a page of that
 * allocation, and a buffer with no whole page counts whole.
 *
 * The handler is installed once, before the sandbox (which refuses
 * rt_sigaction later).  A fault outside the protected pages is the
 * program's own (inside them it is a first touch, or one that raced with
 * another thread's first touch of the page: retried once it is open): it goes to the handler that was there before (a
 * sanitizer's), or kills the process with SIGSEGV as if no handler were
 * installed (a second fault while SIGSEGV is blocked in the handler: the
 * kernel then delivers it with the default action).
 *
 * Everything the handler touches lives in memory from mmap, never on a page
 * it may have protected (the heap holds device buffers). */
#define _GNU_SOURCE
#include "traffic.h"

#include <math.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/mman.h>

#define PG 4096u
/* Allocations from BIG_FROM bytes on are protected and counted in units of
 * BIG_UNIT (16 pages): a sixteenth of the faults, at most a unit's worth
 * of bytes counted beyond what a launch touched at each end of a touched
 * stretch. */
#define BIG_UNIT ((uintptr_t)64 * 1024)
#define BIG_FROM ((size_t)1 << 20)

enum { P_CLOSED = 0, P_OPENING = 1, P_OPEN = 2 };

struct trange {
	uintptr_t lo, hi;       /* the allocation's bytes */
	uintptr_t plo, phi;     /* its whole units: protected, counted by touch */
	uintptr_t unit;         /* PG, or BIG_UNIT for a large allocation */
	unsigned char *state;   /* per unit of [plo, phi) */
	int all;                /* every page given back at once (mprotect failed) */
};

static struct {
	int installed;
	volatile int active;
	struct trange *r;       /* sorted by lo (so by plo too); mmap'd */
	int n;
	unsigned char *states;  /* mmap'd */
	size_t r_bytes, s_bytes;
	int approx;             /* a page could not be opened alone */
	struct sigaction old;
} T;

/* The guard (traffic_guard_begin): device memory closed to the host code
 * between launches; the host's touches are recorded, and the page opened
 * so that the program goes on. */
static struct {
	volatile int active;
	struct trange *r;       /* sorted by plo, in pages (ranges_new); mmap'd */
	int n;
	size_t r_bytes;
	volatile uint64_t touches;
	volatile uintptr_t first;
} G;


/* The range of r[0..n) (sorted by plo) whose [plo, phi) holds a, or -1. */
static int find_range(const struct trange *r, int n, uintptr_t a)
{
	int lo = 0, hi = n - 1;
	while (lo <= hi) {
		int mid = (lo + hi) / 2;
		if (a < r[mid].plo)
			hi = mid - 1;
		else if (a >= r[mid].phi)
			lo = mid + 1;
		else
			return mid;
	}
	return -1;
}

static void chain(int sig, siginfo_t *si, void *uc)
{
	if ((T.old.sa_flags & SA_SIGINFO) && T.old.sa_sigaction != NULL) {
		T.old.sa_sigaction(sig, si, uc);
		return;
	}
	if (T.old.sa_handler != SIG_DFL && T.old.sa_handler != SIG_IGN && T.old.sa_handler != NULL) {
		T.old.sa_handler(sig);
		return;
	}
	/* SIGSEGV is blocked while this handler runs: a fault now is
	 * delivered with the default action, and the process dies of it. */
	*(volatile char *)0 = 0;
}

static void on_segv(int sig, siginfo_t *si, void *uc)
{
	uintptr_t a = (uintptr_t)si->si_addr;
	if (__atomic_load_n(&T.active, __ATOMIC_ACQUIRE)) {
		int k = find_range(T.r, T.n, a);
		if (k >= 0) {
			struct trange *r = &T.r[k];
			size_t pi = (a - r->plo) / r->unit;
			unsigned char want = P_CLOSED;
			if (__atomic_compare_exchange_n(&r->state[pi], &want, P_OPENING, 0, __ATOMIC_ACQ_REL,
							__ATOMIC_ACQUIRE)) {
				if (mprotect((void *)(r->plo + pi * r->unit), r->unit, PROT_READ | PROT_WRITE) != 0) {
					/* too many mappings: the whole allocation */
					if (mprotect((void *)r->plo, r->phi - r->plo, PROT_READ | PROT_WRITE) != 0)
						chain(sig, si, uc);
					r->all = 1;
					T.approx = 1;
				}
				__atomic_store_n(&r->state[pi], P_OPEN, __ATOMIC_RELEASE);
				return;
			}
			/* Another thread opened it, or is opening it: retry the
			 * access once it is open.  (A page of a device buffer,
			 * once open, is readable and writable: a fault there is
			 * always one that raced with its opening.) */
			while (__atomic_load_n(&r->state[pi], __ATOMIC_ACQUIRE) == P_OPENING && !r->all)
				;
			return;
		}
	}
	if (__atomic_load_n(&G.active, __ATOMIC_ACQUIRE) && find_range(G.r, G.n, a) >= 0) {
		uintptr_t pg = a & ~(uintptr_t)(PG - 1);
		if (__atomic_fetch_add(&G.touches, 1, __ATOMIC_ACQ_REL) == 0)
			G.first = a;
		if (mprotect((void *)pg, PG, PROT_READ | PROT_WRITE) == 0)
			return;
	}
	chain(sig, si, uc);
}

int traffic_install(void)
{
	if (T.installed)
		return 0;
	struct sigaction sa;
	memset(&sa, 0, sizeof sa);
	sa.sa_sigaction = on_segv;
	sa.sa_flags = SA_SIGINFO | SA_RESTART;
	sigemptyset(&sa.sa_mask);
	if (sigaction(SIGSEGV, &sa, &T.old) != 0)
		return -1;
	T.installed = 1;
	return 0;
}

int traffic_installed(void)
{
	return T.installed;
}

static void release(void)
{
	if (T.r)
		munmap(T.r, T.r_bytes);
	if (T.states)
		munmap(T.states, T.s_bytes);
	T.r = NULL;
	T.states = NULL;
	T.n = 0;
}

static int by_lo(const void *a, const void *b)
{
	const struct trange *x = a, *y = b;
	return x->lo < y->lo ? -1 : x->lo > y->lo;
}

/* The ranges of the n allocations, sorted, in memory from mmap (*bytes of
 * it), or NULL: each allocation's whole units (BIG_UNIT from BIG_FROM bytes
 * when big_units, else pages). */
static struct trange *ranges_new(const struct traffic_alloc *al, int n, int big_units, size_t *bytes)
{
	*bytes = ((size_t)n * sizeof(struct trange) + PG - 1) / PG * PG;
	void *m = mmap(NULL, *bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (m == MAP_FAILED)
		return NULL;
	struct trange *rs = m;
	for (int i = 0; i < n; i++) {
		uintptr_t lo = (uintptr_t)al[i].p, hi = lo + al[i].bytes;
		struct trange *r = &rs[i];
		r->lo = lo;
		r->hi = hi;
		r->unit = big_units && al[i].bytes >= BIG_FROM ? BIG_UNIT : PG;
		r->plo = (lo + r->unit - 1) / r->unit * r->unit;
		r->phi = hi / r->unit * r->unit;
		if (r->phi < r->plo)
			r->phi = r->plo;
		r->all = 0;
	}
	qsort(rs, (size_t)n, sizeof(struct trange), by_lo);
	return rs;
}

int traffic_launch_begin(const struct traffic_alloc *al, int n)
{
	if (!T.installed || n <= 0 || __atomic_load_n(&T.active, __ATOMIC_ACQUIRE))
		return -1;      /* (a launch inside a counted launch runs uncounted) */
	release();
	T.approx = 0;
	if ((T.r = ranges_new(al, n, 1, &T.r_bytes)) == NULL)
		return -1;
	T.n = n;
	size_t pages = 0;
	for (int i = 0; i < n; i++)
		pages += (T.r[i].phi - T.r[i].plo) / T.r[i].unit;
	T.s_bytes = (pages + PG) / PG * PG;
	void *sm = mmap(NULL, T.s_bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (sm == MAP_FAILED) {
		release();
		return -1;
	}
	T.states = sm;
	size_t at = 0;
	for (int i = 0; i < n; i++) {
		struct trange *r = &T.r[i];
		r->state = T.states + at;
		at += (r->phi - r->plo) / r->unit;
	}
	for (int i = 0; i < n; i++) {
		struct trange *r = &T.r[i];
		if (r->phi > r->plo && mprotect((void *)r->plo, r->phi - r->plo, PROT_NONE) != 0) {
			for (int j = 0; j < i; j++)
				if (T.r[j].phi > T.r[j].plo)
					mprotect((void *)T.r[j].plo, T.r[j].phi - T.r[j].plo, PROT_READ | PROT_WRITE);
			release();
			return -1;
		}
	}
	__atomic_store_n(&T.active, 1, __ATOMIC_RELEASE);
	return 0;
}

int traffic_launch_end(uint64_t *bytes, int *approx)
{
	__atomic_store_n(&T.active, 0, __ATOMIC_RELEASE);
	int rc = 0;
	uint64_t b = 0;
	for (int i = 0; i < T.n; i++) {
		struct trange *r = &T.r[i];
		size_t np = (r->phi - r->plo) / r->unit, touched = 0;
		if (np && mprotect((void *)r->plo, r->phi - r->plo, PROT_READ | PROT_WRITE) != 0)
			rc = -1;
		if (r->all) {
			b += r->hi - r->lo;
			continue;
		}
		for (size_t p = 0; p < np; p++)
			touched += r->state[p] != P_CLOSED;
		if (np == 0)
			b += r->hi - r->lo;     /* no page of its own */
		else if (touched > 0)
			/* the touched pages, plus the head and tail no page
			 * of its own holds */
			b += touched * r->unit + (r->plo - r->lo) + (r->hi - r->phi);
	}
	if (approx)
		*approx = T.approx;
	release();
	*bytes = b;
	return rc;
}

/* ---- the guard ----------------------------------------------------------- */

void traffic_guard_open(void)
{
	__atomic_store_n(&G.active, 0, __ATOMIC_RELEASE);
	for (int i = 0; i < G.n; i++)
		if (G.r[i].phi > G.r[i].plo &&
		    mprotect((void *)G.r[i].plo, G.r[i].phi - G.r[i].plo, PROT_READ | PROT_WRITE) == 0)
			/* Each page written once now (its own value back): a page
			 * given back its write access may take a fault on its first
			 * write, which would land in the time of the kernel thread
			 * that makes it. */
			for (uintptr_t pg = G.r[i].plo; pg < G.r[i].phi; pg += PG) {
				volatile unsigned char *b = (volatile unsigned char *)pg;
				*b = *b;
			}
	if (G.r)
		munmap(G.r, G.r_bytes);
	G.r = NULL;
	G.n = 0;
}

int traffic_guard_close(const struct traffic_alloc *al, int n)
{
	traffic_guard_open();
	if (!T.installed || n <= 0)
		return n <= 0 ? 0 : -1;
	if ((G.r = ranges_new(al, n, 0, &G.r_bytes)) == NULL)
		return -1;
	G.n = n;
	for (int i = 0; i < n; i++)
		if (G.r[i].phi > G.r[i].plo &&
		    mprotect((void *)G.r[i].plo, G.r[i].phi - G.r[i].plo, PROT_NONE) != 0) {
			traffic_guard_open();
			return -1;
		}
	__atomic_store_n(&G.active, 1, __ATOMIC_RELEASE);
	return 0;
}

void traffic_guard_reset(void)
{
	G.touches = 0;
	G.first = 0;
}

uint64_t traffic_guard_touches(uintptr_t *first)
{
	if (first)
		*first = G.first;
	return G.touches;
}

/* ---- the model (traffic.h) ------------------------------------------------ */

double model_tail_ticks(const struct pf_launch_stats *st, double ticks_per_ns)
{
	/* From the longest threads down, the first octave of thread times
	 * (4 buckets) that holds MODEL_PATH_SHARE of the summed time: a
	 * group of threads alike in their work; its threads' mean time.  The
	 * machine's hiccups spread a few threads over many octaves, and hold
	 * little of any one. */
	double want = MODEL_PATH_SHARE * (double)st->sum_ticks;
	/* A group is more threads than the machine's hiccups leave in a
	 * launch (about one a millisecond of thread time), unless its threads
	 * are longer than a hiccup can make one.  The thread time a hiccup
	 * can land in is the threads' as measured, before the clock's and the
	 * resumes' costs come off (raw_ticks): with a barrier a step, those
	 * costs are most of it, and a count from what is left saw a launch's
	 * few hiccup-struck threads as its slow group.  (Stats without
	 * raw_ticks fall back to the sum.) */
	double exposed = st->raw_ticks > st->sum_ticks ? (double)st->raw_ticks : (double)st->sum_ticks;
	double hiccups = 2 + exposed / (ticks_per_ns * 1e6);
	double ceiling = MODEL_HICCUP_NS * ticks_per_ns;
	for (int b = PF_STATS_BUCKETS - 1; b >= 0; b--) {
		if (!st->hist[b])
			continue;
		double held = 0, n = 0;
		for (int k = b; k < b + 4 && k < PF_STATS_BUCKETS; k++) {
			held += (double)st->hist_ticks[k];
			n += (double)st->hist[k];
		}
		if (held >= want && n > 0 && (n >= hiccups || held / n >= ceiling))
			return held / n;
	}
	return 0;
}

static double ceil_div(double a, double b)
{
	return ceil(a / b);
}

double model_gemm_ms(double m, double n, double k, double batch, int tensor_cores, double c_bytes)
{
	if (!(m > 0 && n > 0 && k > 0 && batch > 0))
		return 0;
	/* tiles of MODEL_LIB_TILE, or the output's own size rounded up to 8
	 * where it is thinner (a GEMV is not a 64-row product) */
	double tm = m < MODEL_LIB_TILE ? 8 * ceil_div(m, 8) : MODEL_LIB_TILE;
	double tn = n < MODEL_LIB_TILE ? 8 * ceil_div(n, 8) : MODEL_LIB_TILE;
	double tiles = batch * ceil_div(m, tm) * ceil_div(n, tn);
	/* split along K while the tiles cannot fill the SMs: of the splits up
	 * to the one that gives every SM a part (each part at least
	 * MODEL_LIB_SPLIT_K long), the one whose waves are fullest, the
	 * smaller on a tie (a split that spills a few parts into a second
	 * wave doubles the time it was meant to cut) */
	double split = 1, fill = 0, most = 1;
	if (tiles < MODEL_SMS) {
		most = floor(k / MODEL_LIB_SPLIT_K);
		if (most > ceil_div(MODEL_SMS, tiles))
			most = ceil_div(MODEL_SMS, tiles);
		if (most < 1)
			most = 1;
	}
	for (double s = 1; s <= most; s++) {
		double items = tiles * s, f = items / (ceil_div(items, MODEL_SMS) * MODEL_SMS);
		if (f > fill) {
			fill = f;
			split = s;
		}
	}
	double rate = tensor_cores ? MODEL_FP16_TC_FLOPS_PER_MS : MODEL_FP32_FLOPS_PER_MS;
	/* a tile's result is stored after its last K step: its inputs stream
	 * under the products, its store does not (a split's parts store
	 * float32 partials) */
	double stored = batch * m * n * (split > 1 ? 4.0 * split : c_bytes);
	return 2.0 * tiles * tm * tn * k / (rate * MODEL_LIB_EFFICIENCY * fill) + stored / MODEL_BYTES_PER_MS;
}

double model_flops_ms(double flops)
{
	return flops > 0 ? flops / (MODEL_FP32_FLOPS_PER_MS * MODEL_LIB_EFFICIENCY) : 0;
}

double model_launch_ms(const struct model_launch *l, double *mem, double *path, double *par)
{
	double m = (double)l->bytes / MODEL_BYTES_PER_MS;
	if (l->lib_ms > 0) {
		if (mem)
			*mem = m;
		if (path)
			*path = 0;
		if (par)
			*par = l->lib_ms;
		return MODEL_LAUNCH_MS + (m > l->lib_ms ? m : l->lib_ms);
	}
	double resident_sm = (double)MODEL_BLOCKS_PER_SM * (double)(l->block_threads ? l->block_threads : 1);
	if (resident_sm > MODEL_THREADS_PER_SM)
		resident_sm = MODEL_THREADS_PER_SM;
	double resident = resident_sm * MODEL_SMS;
	double held = l->threads > 0 && (double)l->threads < resident ? (double)l->threads : resident;
	double p = l->path_ns * MODEL_GPU_PER_CPU / 1e6;
	double q = l->threads > 0 ? l->sum_ns * MODEL_GPU_PER_CPU / held / 1e6 : 0;
	if (mem)
		*mem = m;
	if (path)
		*path = p;
	if (par)
		*par = q;
	double t = m > p ? m : p;
	return MODEL_LAUNCH_MS + (t > q ? t : q);
}
