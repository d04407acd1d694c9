/* import_value.c - the importer's memory and values (import_int.h): the
 * arena a program lives in, string maps over it, and the Python values the
 * evaluator binds names to. */
#define _POSIX_C_SOURCE 200809L
#include "import_int.h"

static void *arena_alloc(struct arena *a, size_t n)
{
	n = (n + sizeof(max_align_t) - 1) / sizeof(max_align_t) * sizeof(max_align_t);
	if (n == 0)
		n = sizeof(max_align_t);
	if (a->head == NULL || a->head->cap - a->head->used < n) {
		size_t cap = n > 65536 ? n : 65536;
		if (a->total + cap > MAX_ARENA)
			return NULL;
		struct ablock *b = malloc(sizeof(*b) + cap);
		if (b == NULL)
			return NULL;
		b->next = a->head;
		b->used = 0;
		b->cap = cap;
		a->head = b;
		a->total += cap;
	}
	void *p = (char *)a->head->data + a->head->used;
	a->head->used += n;
	memset(p, 0, n);
	return p;
}

char *imp_arena_strndup(struct arena *a, const char *s, size_t n)
{
	char *d = arena_alloc(a, n + 1);
	if (d) {
		memcpy(d, s, n);
		d[n] = 0;
	}
	return d;
}

void imp_arena_free(struct arena *a)
{
	while (a->head) {
		struct ablock *n = a->head->next;
		free(a->head);
		a->head = n;
	}
	a->total = 0;
}

struct pv import_pv_none_obj = {.k = PV_NONE};
struct pv import_pv_ellipsis_obj = {.k = PV_ELLIPSIS};

/* Records the first error as "label:line: msg"; returns NULL for chaining. */
__attribute__((format(printf, 3, 4)))
void *imp_perr(struct prog *p, int line, const char *fmt, ...)
{
	if (p->failed)
		return NULL;
	p->failed = 1;
	char msg[768];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (line > 0)
		snprintf(p->err, p->errlen, "%s:%d: %s", p->label, line, msg);
	else
		snprintf(p->err, p->errlen, "%s: %s", p->label, msg);
	return NULL;
}

void *imp_prog_oom(struct prog *p)
{
	return imp_perr(p, 0, "out of memory (or the input is too large)");
}

void *imp_palloc(struct prog *p, size_t n)
{
	void *r = arena_alloc(&p->ar, n);
	if (r == NULL)
		imp_prog_oom(p);
	return r;
}

/* Grows *arr (elements of size sz) so index `need` fits; -1 on failure. */
int imp_grow(struct prog *p, void **arr, int *cap, int need, size_t sz, int max)
{
	if (need < *cap)
		return 0;
	if (need >= max) {
		imp_perr(p, p->line, "too large (more than %d items)", max);
		return -1;
	}
	int ncap = *cap ? *cap * 2 : 64;
	while (ncap <= need)
		ncap *= 2;
	if (ncap > max)
		ncap = max;
	void *n = realloc(*arr, (size_t)ncap * sz);
	if (n == NULL) {
		imp_prog_oom(p);
		return -1;
	}
	*arr = n;
	*cap = ncap;
	return 0;
}

struct pv *imp_pv_new(struct prog *p, enum pk k)
{
	struct pv *v = imp_palloc(p, sizeof(*v));
	if (v)
		v->k = k;
	return v;
}

struct pv *imp_pv_int(struct prog *p, long long i)
{
	struct pv *v = imp_pv_new(p, PV_INT);
	if (v)
		v->i = i;
	return v;
}

struct pv *imp_pv_float(struct prog *p, double f)
{
	struct pv *v = imp_pv_new(p, PV_FLOAT);
	if (v)
		v->f = f;
	return v;
}

struct pv *imp_pv_bool(struct prog *p, int b)
{
	struct pv *v = imp_pv_new(p, PV_BOOL);
	if (v)
		v->i = !!b;
	return v;
}

struct pv *imp_pv_seq(struct prog *p, int n, int is_list)
{
	struct pv *v = imp_pv_new(p, PV_SEQ);
	if (v == NULL)
		return NULL;
	v->n = n;
	v->is_list = is_list;
	v->items = imp_palloc(p, (size_t)(n ? n : 1) * sizeof(struct pv *));
	return v->items ? v : NULL;
}

int imp_is_num(const struct pv *v)
{
	return v->k == PV_INT || v->k == PV_FLOAT || v->k == PV_BOOL;
}

double imp_num_val(const struct pv *v)
{
	return v->k == PV_FLOAT ? v->f : (double)v->i;
}

const char *imp_kind_name(const struct pv *v)
{
	switch (v->k) {
	case PV_NONE: return "None";
	case PV_BOOL: return "a bool";
	case PV_INT: return "an int";
	case PV_FLOAT: return "a float";
	case PV_STR: return "a string";
	case PV_ELLIPSIS: return "Ellipsis";
	case PV_SLICE: return "a slice";
	case PV_DTYPE: return "a dtype";
	case PV_PATH: return "a module or function";
	case PV_METHOD: return "a method";
	case PV_TENSOR: return "a tensor";
	case PV_GTUPLE: return "a tuple of tensors";
	case PV_SEQ: return v->is_list ? "a list" : "a tuple";
	case PV_DEVICE: return "a device";
	}
	return "a value";
}
