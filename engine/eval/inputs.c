/* inputs.c - deterministic input generation (inputs.h). */
#include "inputs.h"

#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Elements per independent random stream: inputs are generated in chunks
 * that threads share out, with the same bytes whatever the thread count. */
#define CHUNK 65536
#define MAX_THREADS 16
#define BLOCK 512               /* normals drawn, then stored, at a time */

static int max_threads;         /* inputs_set_threads: 0 = one per CPU */

/* ---- 16-bit float conversions ------------------------------------------- */

static uint32_t f2u(float f)
{
	uint32_t u;
	memcpy(&u, &f, 4);
	return u;
}

static float u2f(uint32_t u)
{
	float f;
	memcpy(&f, &u, 4);
	return f;
}

/* Round-to-nearest-even float32 -> float16 (F. Giesen's float_to_half_rtne). */
uint16_t inputs_f32_to_f16(float ff)
{
	const uint32_t f32infty = 255u << 23, f16max = (127u + 16) << 23;
	const uint32_t denorm_magic = ((127u - 15) + (23 - 10) + 1) << 23;
	uint32_t f = f2u(ff), sign = f & 0x80000000u;
	uint16_t o;
	f ^= sign;
	if (f >= f16max) {
		o = f > f32infty ? 0x7e00 : 0x7c00;     /* NaN stays NaN, the rest is inf */
	} else if (f < (113u << 23)) {                  /* subnormal or zero */
		o = (uint16_t)(f2u(u2f(f) + u2f(denorm_magic)) - denorm_magic);
	} else {
		uint32_t mant_odd = (f >> 13) & 1;
		f += (uint32_t)((15 - 127) * (1 << 23)) + 0xfff + mant_odd;
		o = (uint16_t)(f >> 13);
	}
	return (uint16_t)(o | (sign >> 16));
}

uint16_t inputs_f32_to_bf16(float f)
{
	uint32_t u = f2u(f);
	if ((u & 0x7fffffffu) > 0x7f800000u)
		return (uint16_t)((u >> 16) | 0x40);    /* quiet NaN */
	u += 0x7fffu + ((u >> 16) & 1);
	return (uint16_t)(u >> 16);
}

float inputs_f16_to_f32(uint16_t h)
{
	return inputs_f16_to_f32_inline(h);
}

float inputs_bf16_to_f32(uint16_t b)
{
	return u2f((uint32_t)b << 16);
}

/* ---- the generator ------------------------------------------------------- */

struct rng {
	uint64_t s[4];
};

static uint64_t splitmix64(uint64_t *x)
{
	uint64_t z = (*x += 0x9e3779b97f4a7c15ull);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

static uint64_t rotl(uint64_t x, int k)
{
	return (x << k) | (x >> (64 - k));
}

static inline uint64_t next_u64(struct rng *r)     /* xoshiro256** */
{
	uint64_t *s = r->s, result = rotl(s[1] * 5, 7) * 9, t = s[1] << 17;
	s[2] ^= s[0];
	s[3] ^= s[1];
	s[1] ^= s[2];
	s[0] ^= s[3];
	s[2] ^= t;
	s[3] = rotl(s[3], 45);
	return result;
}

/* A stream per (seed, stream number): splitmix64 of the number, mixed into
 * the seed, then splitmix64 fills xoshiro's state. */
static void rng_seed(struct rng *r, uint64_t seed, uint64_t stream)
{
	uint64_t x = seed ^ splitmix64(&stream);
	for (int i = 0; i < 4; i++)
		r->s[i] = splitmix64(&x);
}

/* Uniform in [0, 1). */
static double uniform(struct rng *r)
{
	return (double)(next_u64(r) >> 11) * 0x1.0p-53;
}

/* Standard normals by Marsaglia and Tsang's ziggurat ("The Ziggurat Method
 * for Generating Random Variables", J. Stat. Softw. 5(8), 2000) with 256
 * layers and a 52-bit uniform per draw, the layout numpy's Generator uses:
 * one 64-bit draw gives the layer (8 bits), the sign (1) and the uniform
 * (52); 99% of draws end with a multiply and a compare, the rest test the
 * layer's wedge against exp() or draw from the tail past ZIG_R (Marsaglia's
 * tail method).  Exact in distribution, like Box-Muller, at a fraction of
 * its cost (no log, sin and cos per pair). */
#define ZIG_R 3.6541528853610088        /* the base layer's right edge */
#define ZIG_V 4.92867323399e-3          /* each layer's area */
static uint64_t zig_k[256];
static double zig_w[256], zig_f[256];
static pthread_once_t zig_once = PTHREAD_ONCE_INIT;

static void zig_init(void)
{
	const double m = 0x1.0p52;
	double dn = ZIG_R, tn = dn, q = ZIG_V / exp(-0.5 * dn * dn);
	zig_k[0] = (uint64_t)((dn / q) * m);
	zig_k[1] = 0;
	zig_w[0] = q / m;
	zig_w[255] = dn / m;
	zig_f[0] = 1.0;
	zig_f[255] = exp(-0.5 * dn * dn);
	for (int i = 254; i >= 1; i--) {
		dn = sqrt(-2.0 * log(ZIG_V / dn + exp(-0.5 * dn * dn)));
		zig_k[i + 1] = (uint64_t)((dn / tn) * m);
		tn = dn;
		zig_f[i] = exp(-0.5 * dn * dn);
		zig_w[i] = dn / m;
	}
}

/* The 1% of draws past the layer's box: the tail, or the wedge's exp()
 * test; NAN when rejected (draw again). */
static double normal_slow(struct rng *r, int idx, double x, int neg)
{
	if (idx == 0) {                 /* the tail past ZIG_R */
		for (;;) {
			double xx = -log(1.0 - uniform(r)) / ZIG_R, yy = -log(1.0 - uniform(r));
			if (yy + yy > xx * xx)
				return neg ? -(ZIG_R + xx) : ZIG_R + xx;
		}
	}
	if ((zig_f[idx - 1] - zig_f[idx]) * uniform(r) + zig_f[idx] < exp(-0.5 * x * x))
		return x;
	return NAN;
}

/* m standard normals into out[], the stream's state in registers on the
 * fast path (xoshiro256** as next_u64). */
static void normals(struct rng *r, double *out, size_t m)
{
	uint64_t s0 = r->s[0], s1 = r->s[1], s2 = r->s[2], s3 = r->s[3];
	for (size_t i = 0; i < m; i++) {
		for (;;) {
			uint64_t u = rotl(s1 * 5, 7) * 9, t = s1 << 17;
			s2 ^= s0;
			s3 ^= s1;
			s1 ^= s2;
			s0 ^= s3;
			s2 ^= t;
			s3 = rotl(s3, 45);
			int idx = (int)(u & 0xff), neg = (int)((u >> 8) & 1);
			uint64_t rabs = u >> 12;        /* 52 bits */
			/* 52 bits: a signed conversion, one instruction; the sign
			 * by its bit, not a branch (a coin flip mispredicts half
			 * the time, and cost three times the rest of the draw) */
			double x = (double)(int64_t)rabs * zig_w[idx];
			uint64_t xb;
			memcpy(&xb, &x, 8);
			xb ^= (uint64_t)neg << 63;
			memcpy(&x, &xb, 8);
			if (rabs < zig_k[idx]) {
				out[i] = x;
				break;
			}
			r->s[0] = s0, r->s[1] = s1, r->s[2] = s2, r->s[3] = s3;
			double y = normal_slow(r, idx, x, neg);
			s0 = r->s[0], s1 = r->s[1], s2 = r->s[2], s3 = r->s[3];
			if (y == y) {
				out[i] = y;
				break;
			}
		}
	}
	r->s[0] = s0, r->s[1] = s1, r->s[2] = s2, r->s[3] = s3;
}

/* Uniform integer in [lo, hi] (hi >= lo), without modulo bias. */
static int64_t uniform_int(struct rng *r, int64_t lo, int64_t hi)
{
	uint64_t span = (uint64_t)hi - (uint64_t)lo + 1;
	if (span == 0)                  /* the whole 64-bit range */
		return (int64_t)next_u64(r);
	uint64_t limit = UINT64_MAX - UINT64_MAX % span, x;
	do
		x = next_u64(r);
	while (x >= limit);
	return (int64_t)((uint64_t)lo + x % span);
}

/* ---- the std floor ------------------------------------------------------- */

/* The spacing of dt's values at magnitude m (0 at m == 0, where every
 * float dtype is dense enough for any spread passfs draws). */
static double spacing(enum graph_dtype dt, double m)
{
	int bits = dt == DT_F32 ? 23 : dt == DT_F16 ? 10 : dt == DT_BF16 ? 7 : 52;
	if (!(m > 0) || !isfinite(m))
		return 0;
	int e;
	frexp(m, &e);           /* m = f * 2^e, f in [0.5, 1) */
	return ldexp(1.0, e - 1 - bits);
}

double inputs_std(const struct graph_input_gen *g, enum graph_dtype dt, size_t n, int *floored)
{
	double std = g->has_std ? g->std : 0.1, mean = g->has_mean ? g->mean : 0.0;
	if (floored)
		*floored = 0;
	if (n <= 1 || g->data || !graph_dtype_is_float(dt))
		return std;
	double m = fabs(mean);
	/* Below the three decimals weight_meta prints, or a draw that rounds
	 * to a handful of the dtype's values at the mean: the floor. */
	if (std < INPUTS_STD_PRINTED || 0.2 * std < INPUTS_STD_ULPS * spacing(dt, m)) {
		double f = INPUTS_STD_FLOOR > INPUTS_STD_FLOOR_REL * m ? INPUTS_STD_FLOOR : INPUTS_STD_FLOOR_REL * m;
		if (f > std) {
			std = f;
			if (floored)
				*floored = 1;
		}
	}
	return std;
}

/* ---- storing ------------------------------------------------------------- */

static void store(void *buf, enum graph_dtype dt, size_t i, double v)
{
	switch (dt) {
	case DT_F32: ((float *)buf)[i] = (float)v; break;
	case DT_F16: ((uint16_t *)buf)[i] = inputs_f32_to_f16((float)v); break;
	case DT_BF16: ((uint16_t *)buf)[i] = inputs_f32_to_bf16((float)v); break;
	case DT_F64: ((double *)buf)[i] = v; break;
	case DT_I64: ((int64_t *)buf)[i] = (int64_t)v; break;
	case DT_I32: ((int32_t *)buf)[i] = (int32_t)v; break;
	case DT_BOOL: ((uint8_t *)buf)[i] = v != 0; break;
	default: break;
	}
}

static void store_int(void *buf, enum graph_dtype dt, size_t i, int64_t v)
{
	if (dt == DT_I64)
		((int64_t *)buf)[i] = v;
	else
		((int32_t *)buf)[i] = (int32_t)v;
}

static double clamp_int_bound(double b)
{
	if (!(b > -9.2e18))
		return -9.2e18;
	if (b > 9.2e18)
		return 9.2e18;
	return b;
}

struct gen_job {
	const struct graph_input_gen *g;
	enum graph_dtype dt;
	size_t n;
	uint64_t seed;
	int index;
	void *buf;
	size_t nchunks;
	size_t next;            /* next chunk to take */
	pthread_mutex_t mu;
};

/* Elements [lo, hi) of one input, from the stream of (seed, input, chunk). */
static void generate_chunk(const struct gen_job *j, size_t chunk)
{
	const struct graph_input_gen *g = j->g;
	enum graph_dtype dt = j->dt;
	void *buf = j->buf;
	size_t lo = chunk * CHUNK, hi = lo + CHUNK < j->n ? lo + CHUNK : j->n;
	struct rng r;
	rng_seed(&r, j->seed, ((uint64_t)(unsigned)j->index << 40) ^ (uint64_t)chunk);
	if (dt == DT_BOOL) {
		for (size_t i = lo; i < hi; i++)
			((uint8_t *)buf)[i] = uniform(&r) > 0.5;
		return;
	}
	if (dt == DT_I64 || dt == DT_I32) {
		int64_t lo_v = g->has_min ? (int64_t)ceil(clamp_int_bound(g->min)) : 0;
		int64_t hi_v = g->has_max ? (int64_t)floor(clamp_int_bound(g->max)) : lo_v + 9;
		if (dt == DT_I32) {
			lo_v = lo_v < INT32_MIN ? INT32_MIN : lo_v > INT32_MAX ? INT32_MAX : lo_v;
			hi_v = hi_v < INT32_MIN ? INT32_MIN : hi_v > INT32_MAX ? INT32_MAX : hi_v;
		}
		if (hi_v < lo_v)
			hi_v = lo_v;
		for (size_t i = lo; i < hi; i++)
			store_int(buf, dt, i, uniform_int(&r, lo_v, hi_v));
		return;
	}
	double std = inputs_std(g, dt, j->n, NULL), mean = g->has_mean ? g->mean : 0.0;
	pthread_once(&zig_once, zig_init);
	double lo_b = g->has_min ? g->min : -INFINITY, hi_b = g->has_max ? g->max : INFINITY;
	double v[BLOCK];
	for (size_t b = lo; b < hi; b += BLOCK) {
		size_t m = hi - b < BLOCK ? hi - b : BLOCK;
		normals(&r, v, m);
		/* randn * std * 0.2 + mean, clamped to [min, max] where given
		 * (a missing bound: none), non-finite to 0, then to [-100, 100];
		 * branch-free, so the loop vectorises */
		for (size_t i = 0; i < m; i++) {
			double x = v[i] * std * 0.2 + mean;
			x = x < lo_b ? lo_b : x;
			x = x > hi_b ? hi_b : x;
			x = __builtin_isfinite(x) ? x : 0.0;
			x = x < -100.0 ? -100.0 : x;
			v[i] = x > 100.0 ? 100.0 : x;
		}
		switch (dt) {
		case DT_F32:
			for (size_t i = 0; i < m; i++)
				((float *)buf)[b + i] = (float)v[i];
			break;
		case DT_F16:
			for (size_t i = 0; i < m; i++)
				((uint16_t *)buf)[b + i] = inputs_f32_to_f16((float)v[i]);
			break;
		case DT_BF16:
			for (size_t i = 0; i < m; i++)
				((uint16_t *)buf)[b + i] = inputs_f32_to_bf16((float)v[i]);
			break;
		default:
			for (size_t i = 0; i < m; i++)
				store(buf, dt, b + i, v[i]);
		}
	}
}

static void *gen_worker(void *arg)
{
	struct gen_job *j = arg;
	for (;;) {
		pthread_mutex_lock(&j->mu);
		size_t c = j->next < j->nchunks ? j->next++ : j->nchunks;
		pthread_mutex_unlock(&j->mu);
		if (c >= j->nchunks)
			return NULL;
		generate_chunk(j, c);
	}
}

static void generate_one(const struct graph_input_gen *g, enum graph_dtype dt, size_t n,
			 uint64_t seed, int index, void *buf)
{
	if (g->data) {
		for (size_t i = 0; i < n; i++)
			store(buf, dt, i, i < g->n_data ? g->data[i] : 0.0);
		return;
	}
	struct gen_job j = {g, dt, n, seed, index, buf, (n + CHUNK - 1) / CHUNK, 0, PTHREAD_MUTEX_INITIALIZER};
	long cpus = max_threads > 0 ? max_threads : sysconf(_SC_NPROCESSORS_ONLN);
	int nt = cpus < 1 ? 1 : cpus > MAX_THREADS ? MAX_THREADS : (int)cpus;
	if ((size_t)nt > j.nchunks)
		nt = (int)j.nchunks;
	pthread_t th[MAX_THREADS];
	int started = 0;
	for (int t = 1; t < nt; t++)
		if (pthread_create(&th[started], NULL, gen_worker, &j) == 0)
			started++;
	gen_worker(&j);         /* the caller works too; alone if no thread started */
	for (int t = 0; t < started; t++)
		pthread_join(th[t], NULL);
}

void inputs_free(void **host_bufs, int n)
{
	for (int i = 0; i < n; i++) {
		free(host_bufs[i]);
		host_bufs[i] = NULL;
	}
}

void inputs_set_threads(int n)
{
	max_threads = n < 0 ? 0 : n;
}

void inputs_fill(const struct graph_variant *v, uint64_t seed, void *const *bufs)
{
	for (int i = 0; i < v->n_inputs; i++) {
		const struct graph_value *x = &v->values[i];
		generate_one(&v->gen[i], x->dtype, (size_t)graph_shape_numel(&x->shape), seed, i, bufs[i]);
	}
}

int inputs_generate(const struct graph_variant *v, uint64_t seed, void **host_bufs,
		    char *err, size_t errlen)
{
	for (int i = 0; i < v->n_inputs; i++)
		host_bufs[i] = NULL;
	for (int i = 0; i < v->n_inputs; i++) {
		const struct graph_value *x = &v->values[i];
		size_t n = (size_t)graph_shape_numel(&x->shape);
		size_t bytes = n * graph_dtype_size(x->dtype);
		host_bufs[i] = malloc(bytes ? bytes : 1);
		if (host_bufs[i] == NULL) {
			inputs_free(host_bufs, i);
			snprintf(err, errlen, "variant '%s': out of memory generating input '%s' (%zu bytes)",
				 v->name, x->name, bytes);
			return -1;
		}
	}
	inputs_fill(v, seed, host_bufs);
	return 0;
}
