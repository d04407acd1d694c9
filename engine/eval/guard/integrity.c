/* integrity.c - the device-code scan and the roofline bound (integrity.h).
 *
 * The scan reads PTX in two passes.  The first splits the text into
 * statements (an instruction or declaration up to its `;`, a function
 * header up to its `{`), remembering for each the function it is in and the
 * last `.loc`; the `.file` table comes at the end of NVRTC's output, so
 * lines are resolved only in the second pass, which classifies module-scope
 * declarations and then analyses every function body:
 *
 *   - a register holding the address of a .global variable is "tainted"
 *     (mov %rd, var; then anything computed from it: cvta, add, mad, ...);
 *     the taint is a flow-insensitive fixed point, so loops cannot hide it;
 *     values loaded from memory are data, never addresses;
 *   - a store, atomic or reduction whose address is the variable or a
 *     tainted register writes the variable; storing a tainted register as a
 *     value, or passing it to a device function of the module, lets the
 *     address escape, which counts as a write (it can be written there).
 *
 * PTX registers are per function, so the taint map is reset per function. */
#define _GNU_SOURCE
#include "integrity.h"

#include <ctype.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "clock.h"
#include "map.h"
#include "strbuf.h"

/* ---- small helpers ---------------------------------------------------------- */

static int is_name_char(int c)
{
	return isalnum(c) || c == '_' || c == '$' || c == '.';
}

/* PTX identifiers (no '.': that separates opcode modifiers). */
static int is_id_char(int c)
{
	return isalnum(c) || c == '_' || c == '$';
}

static int starts(const char *s, const char *prefix)
{
	return strncmp(s, prefix, strlen(prefix)) == 0;
}

static const char *base_name(const char *path)
{
	const char *s = strrchr(path, '/');
	return s ? s + 1 : path;
}

/* ---- pass 1: statements -------------------------------------------------------- */

struct stmt {
	char *text;             /* trimmed, without the `;` */
	int depth;              /* 0: module scope */
	int func;               /* index into funcs, -1 at module scope */
	int is_header;          /* a function header (before its `{`) */
	int loc_file, loc_line, in_file, in_line;   /* the last .loc, -1 when none */
};

struct func {
	char *name;             /* as in the PTX (mangled) */
	int is_entry;
};

struct ptx {
	struct stmt *s;
	int n, cap;
	struct func *f;
	int nf, capf;
	char **files;           /* .file index -> path (NULL when not given) */
	int nfiles;
	int oom;
};

static void ptx_free(struct ptx *p)
{
	for (int i = 0; i < p->n; i++)
		free(p->s[i].text);
	free(p->s);
	for (int i = 0; i < p->nf; i++)
		free(p->f[i].name);
	free(p->f);
	for (int i = 0; i < p->nfiles; i++)
		free(p->files[i]);
	free(p->files);
}

/* The trimmed content of b (NUL-terminated in place); "" when empty. */
static char *buf_trim(struct strbuf *b)
{
	if (b->p == NULL)
		return "";
	size_t e = b->len;
	while (e > 0 && isspace((unsigned char)b->p[e - 1]))
		e--;
	b->p[e] = 0;
	char *s = b->p;
	while (*s && isspace((unsigned char)*s))
		s++;
	return s;
}

/* The name of a function declared by header text ".visible .entry NAME(" or
 * ".extern .func (.param .b32 r) NAME (": written to out. */
static void func_name(const char *t, char *out, size_t outlen)
{
	const char *p = t;
	out[0] = 0;
	for (;;) {
		while (*p && isspace((unsigned char)*p))
			p++;
		if (*p == '.') {
			while (*p && !isspace((unsigned char)*p) && *p != '(')
				p++;
			continue;
		}
		if (*p == '(') {       /* return value list */
			int d = 0;
			for (; *p; p++) {
				d += *p == '(';
				d -= *p == ')';
				if (d == 0) {
					p++;
					break;
				}
			}
			continue;
		}
		break;
	}
	size_t k = 0;
	while (*p && is_id_char((unsigned char)*p) && k + 1 < outlen)
		out[k++] = *p++;
	out[k] = 0;
}

static int add_stmt(struct ptx *x, const char *text, int depth, int func, int is_header, const int loc[4])
{
	if (x->n == x->cap) {
		int cap = x->cap ? x->cap * 2 : 1024;
		struct stmt *s = realloc(x->s, sizeof(*s) * (size_t)cap);
		if (s == NULL)
			return -1;
		x->s = s;
		x->cap = cap;
	}
	struct stmt *s = &x->s[x->n];
	if ((s->text = strdup(text)) == NULL)
		return -1;
	s->depth = depth;
	s->func = func;
	s->is_header = is_header;
	s->loc_file = loc[0];
	s->loc_line = loc[1];
	s->in_file = loc[2];
	s->in_line = loc[3];
	x->n++;
	return 0;
}

static int add_func(struct ptx *x, const char *header)
{
	char name[512];
	func_name(header, name, sizeof(name));
	if (x->nf == x->capf) {
		int cap = x->capf ? x->capf * 2 : 32;
		struct func *f = realloc(x->f, sizeof(*f) * (size_t)cap);
		if (f == NULL)
			return -1;
		x->f = f;
		x->capf = cap;
	}
	if ((x->f[x->nf].name = strdup(name)) == NULL)
		return -1;
	x->f[x->nf].is_entry = strstr(header, ".entry") != NULL;
	return x->nf++;
}

/* ".file 3 "path"[, ...]" */
static int parse_file(struct ptx *x, const char *t)
{
	char *end;
	long idx = strtol(t + 5, &end, 10);
	const char *q = strchr(end, '"');
	if (idx < 0 || idx > 100000 || q == NULL)
		return 0;
	const char *q2 = strchr(q + 1, '"');
	if (q2 == NULL)
		return 0;
	if (idx >= x->nfiles) {
		char **f = realloc(x->files, sizeof(char *) * (size_t)(idx + 1));
		if (f == NULL)
			return -1;
		for (long i = x->nfiles; i <= idx; i++)
			f[i] = NULL;
		x->files = f;
		x->nfiles = (int)idx + 1;
	}
	free(x->files[idx]);
	x->files[idx] = strndup(q + 1, (size_t)(q2 - q - 1));
	return x->files[idx] ? 0 : -1;
}

/* ".loc F L C[, function_name X, inlined_at F2 L2 C2]" */
static void parse_loc(const char *t, int loc[4])
{
	int f = -1, l = -1;
	if (sscanf(t + 4, "%d %d", &f, &l) != 2)
		return;
	loc[0] = f;
	loc[1] = l;
	loc[2] = loc[3] = -1;
	const char *ia = strstr(t, "inlined_at");
	if (ia != NULL && sscanf(ia + 10, "%d %d", &loc[2], &loc[3]) != 2)
		loc[2] = loc[3] = -1;
}

static int split_statements(const char *src, struct ptx *x)
{
	struct strbuf b = {0};
	int depth = 0, in_init = 0, in_vec = 0, func = -1;
	int loc[4] = {-1, -1, -1, -1};
	int rc = 0;
	for (const char *p = src; *p && rc == 0; p++) {
		char c = *p;
		if (c == '/' && p[1] == '/') {
			while (p[1] && p[1] != '\n')
				p++;
			continue;
		}
		if (c == '/' && p[1] == '*') {
			p += 2;
			while (*p && !(p[0] == '*' && p[1] == '/'))
				p++;
			if (*p == 0)
				break;
			p++;
			continue;
		}
		if (c == '"') {
			rc = strbuf_putc(&b, c);
			for (p++; *p && *p != '"' && rc == 0; p++)
				rc = strbuf_putc(&b, *p);
			if (*p == 0)
				break;
			rc = rc ? rc : strbuf_putc(&b, '"');
			continue;
		}
		if (c == '\n') {
			if (b.len == 0)
				continue;
			char *t = buf_trim(&b);
			size_t tl = strlen(t);
			b.len = strlen(b.p);
			if (strncmp(t, ".loc", 4) == 0 && isspace((unsigned char)t[4])) {
				parse_loc(t, loc);
				b.len = 0;
			} else if (strncmp(t, ".file", 5) == 0 && isspace((unsigned char)t[5])) {
				rc = parse_file(x, t);
				b.len = 0;
			} else if (depth == 0 && (starts(t, ".version") || starts(t, ".target") ||
						  starts(t, ".address_size"))) {
				rc = add_stmt(x, t, depth, func, 0, loc);
				b.len = 0;
			} else if (tl > 0 && t[tl - 1] == ':' && !in_init && !in_vec) {
				b.len = 0;                /* a label */
			} else {
				rc = strbuf_putc(&b, ' ');
			}
			continue;
		}
		if (c == ';' && !in_init && !in_vec) {
			char *t = buf_trim(&b);
			if (*t)
				rc = add_stmt(x, t, depth, func, 0, loc);
			b.len = 0;
			continue;
		}
		if (c == '{') {
			char *t = buf_trim(&b);
			if (*t == 0) {
				depth++;        /* a scope: callseq, inline asm */
			} else if (depth == 0 && (strchr(t, '=') != NULL || in_init)) {
				in_init++;
				b.len = strlen(b.p);
				rc = strbuf_putc(&b, c);
			} else if (depth == 0) {
				/* a function header */
				func = add_func(x, t);
				if (func < 0 || add_stmt(x, t, depth, func, 1, loc))
					rc = -1;
				b.len = 0;
				depth = 1;
				loc[0] = loc[1] = loc[2] = loc[3] = -1;
			} else {
				in_vec++;       /* a vector operand {%f1, %f2} */
				b.len = strlen(b.p);
				rc = strbuf_putc(&b, c);
			}
			continue;
		}
		if (c == '}') {
			if (in_init || in_vec) {
				if (in_init)
					in_init--;
				else
					in_vec--;
				rc = strbuf_putc(&b, c);
				continue;
			}
			char *t = buf_trim(&b);
			if (*t)
				rc = add_stmt(x, t, depth, func, 0, loc);
			b.len = 0;
			if (depth > 0 && --depth == 0)
				func = -1;
			continue;
		}
		if (b.len == 0 && isspace((unsigned char)c))
			continue;
		rc = strbuf_putc(&b, c);
	}
	if (rc == 0) {
		char *t = buf_trim(&b);
		if (*t && strncmp(t, ".file", 5) == 0)
			rc = parse_file(x, t);
	}
	free(b.p);
	return rc;
}

/* ---- pass 2: analysis ------------------------------------------------------------ */

enum finding_kind { F_NONE, F_TIMER, F_WRITE, F_MANAGED, F_LAUNCH, F_HEAP, F_TRAP };

struct global {
	char *name;
	int managed;
};

struct scan {
	struct ptx x;
	const char *label;
	int *author;            /* per file index: the author's file? */
	struct global *g;
	int ng;
	struct base_map gmap;   /* global name -> index (keys copied) */
	struct base_map mfuncs; /* module (non-extern) functions -> 1 */
	struct base_map taint;  /* register -> global index (per function) */
	/* the first finding in statement order */
	int f_stmt;
	enum finding_kind f_kind;
	char f_what[160];
	int f_global;
	int oom;
};

static int author_file(const struct scan *sc, int f)
{
	return f >= 0 && f < sc->x.nfiles && sc->author[f];
}

/* The author's line for statement i: its .loc when in the author's file,
 * else the inlined-at line, else the last author line before it in the same
 * function. */
static int author_line(const struct scan *sc, int i)
{
	for (int k = i; k >= 0; k--) {
		const struct stmt *s = &sc->x.s[k];
		if (s->func != sc->x.s[i].func)
			break;
		if (author_file(sc, s->loc_file) && s->loc_line > 0)
			return s->loc_line;
		if (author_file(sc, s->in_file) && s->in_line > 0)
			return s->in_line;
	}
	return 0;
}

static void finding(struct scan *sc, int stmt, enum finding_kind k, int global, const char *fmt, ...)
	__attribute__((format(printf, 5, 6)));
static void finding(struct scan *sc, int stmt, enum finding_kind k, int global, const char *fmt, ...)
{
	if (sc->f_kind != F_NONE && sc->f_stmt <= stmt)
		return;
	sc->f_stmt = stmt;
	sc->f_kind = k;
	sc->f_global = global;
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(sc->f_what, sizeof(sc->f_what), fmt, ap);
	va_end(ap);
}

/* Module-scope declaration: records .global variables and functions. */
static int declare(struct scan *sc, int i)
{
	const char *t = sc->x.s[i].text;
	if (sc->x.s[i].is_header || strstr(t, ".func") != NULL || strstr(t, ".entry") != NULL) {
		if (strstr(t, ".extern") == NULL) {
			char name[512];
			func_name(t, name, sizeof(name));
			if (name[0] && base_map_putn(&sc->mfuncs, name, strlen(name), (void *)(intptr_t)1) < 0)
				return -1;
		}
		return 0;
	}
	/* ".global" as a word (not ".globl", a comment in NVRTC's output) */
	const char *gw = strstr(t, ".global");
	if (gw == NULL || is_name_char((unsigned char)gw[7]))
		return 0;
	if (strstr(t, ".texref") || strstr(t, ".surfref") || strstr(t, ".samplerref"))
		return 0;
	/* the name: last word before '[', '=' or the end */
	size_t end = strcspn(t, "=");
	while (end > 0 && isspace((unsigned char)t[end - 1]))
		end--;
	size_t ne = end;
	const char *lb = memchr(t, '[', end);
	if (lb != NULL)
		ne = (size_t)(lb - t);
	while (ne > 0 && isspace((unsigned char)t[ne - 1]))
		ne--;
	size_t nb = ne;
	while (nb > 0 && is_id_char((unsigned char)t[nb - 1]))
		nb--;
	if (nb == ne)
		return 0;
	struct global *g = realloc(sc->g, sizeof(*g) * (size_t)(sc->ng + 1));
	if (g == NULL)
		return -1;
	sc->g = g;
	g[sc->ng].name = strndup(t + nb, ne - nb);
	g[sc->ng].managed = strstr(t, ".managed") != NULL;
	if (g[sc->ng].name == NULL || base_map_putn(&sc->gmap, t + nb, ne - nb, (void *)(intptr_t)sc->ng) < 0)
		return -1;
	sc->ng++;
	return 0;
}

/* Splits an instruction's operands at top-level commas.  Returns the count
 * (at most max); ops[k] points into t (modified in place). */
static int split_operands(char *t, char **ops, int max)
{
	int n = 0, d = 0;
	char *start = t;
	for (char *p = t;; p++) {
		if (*p == '[' || *p == '{' || *p == '(')
			d++;
		else if (*p == ']' || *p == '}' || *p == ')')
			d--;
		if ((*p == ',' && d == 0) || *p == 0) {
			int last = *p == 0;
			*p = 0;
			while (*start && isspace((unsigned char)*start))
				start++;
			char *e = start + strlen(start);
			while (e > start && isspace((unsigned char)e[-1]))
				*--e = 0;
			if (*start && n < max)
				ops[n++] = start;
			if (last)
				break;
			start = p + 1;
		}
	}
	return n;
}

/* The global whose address the operand names (var, var+8, [var], [var+8]),
 * or -1. */
static int names_global(const struct scan *sc, const char *op)
{
	if (*op == '[')
		op++;
	while (*op && isspace((unsigned char)*op))
		op++;
	if (*op == '%' || !(*op == '_' || *op == '$' || isalpha((unsigned char)*op)))
		return -1;
	size_t n = 0;
	while (is_id_char((unsigned char)op[n]))
		n++;
	return (int)base_map_get_int(&sc->gmap, op, n, -1);
}

/* The global whose address some register in the operand holds, or -1. */
static int tainted(const struct scan *sc, const char *op)
{
	for (const char *p = op; *p; p++) {
		if (*p != '%')
			continue;
		size_t n = 1;
		while (is_id_char((unsigned char)p[n]))
			n++;
		int g = (int)base_map_get_int(&sc->taint, p, n, -1);
		if (g >= 0)
			return g;
		p += n - 1;
	}
	return -1;
}

/* Marks every register in the operand as holding the address of global g.
 * Returns 1 when something changed, -1 when out of memory. */
static int taint_regs(struct scan *sc, const char *op, int g)
{
	int changed = 0;
	for (const char *p = op; *p; p++) {
		if (*p != '%')
			continue;
		size_t n = 1;
		while (is_id_char((unsigned char)p[n]))
			n++;
		/* predicates carry no addresses */
		if (!(n >= 2 && p[1] == 'p' && (n == 2 || isdigit((unsigned char)p[2])))) {
			if ((int)base_map_get_int(&sc->taint, p, n, -1) < 0) {
				if (base_map_putn(&sc->taint, p, n, (void *)(intptr_t)g) < 0)
					return -1;
				changed = 1;
			}
		}
		p += n - 1;
	}
	return changed;
}

/* Opcode families that write memory at their first [address] operand. */
static int writes_memory(const char *op)
{
	return (starts(op, "st") && (op[2] == 0 || op[2] == '.')) || starts(op, "atom") || starts(op, "red.") ||
	       starts(op, "cp.") || starts(op, "multimem.st") || starts(op, "multimem.red") ||
	       starts(op, "stmatrix") || starts(op, "st.async") || starts(op, "red.async");
}

static int is_load(const char *op)
{
	return (starts(op, "ld") && (op[2] == 0 || op[2] == '.')) || starts(op, "ldu") || starts(op, "tex") ||
	       starts(op, "tld4") || starts(op, "suld") || starts(op, "ldmatrix") || starts(op, "setp") ||
	       starts(op, "set.") || starts(op, "vote") || starts(op, "match");
}

/* The first timer or clock register the text reads (%clock64,
 * %globaltimer_lo, %pm3, ...), copied to out; 0 when none. */
static int timer_reg(const char *t, char *out, size_t outlen)
{
	for (const char *p = strchr(t, '%'); p != NULL; p = strchr(p + 1, '%')) {
		if (starts(p, "%globaltimer") || starts(p, "%clock") ||
		    (p[1] == 'p' && p[2] == 'm' && isdigit((unsigned char)p[3]))) {
			size_t n = 1;
			while (is_id_char((unsigned char)p[n]) && n + 1 < outlen)
				n++;
			snprintf(out, outlen, "%.*s", (int)n, p);
			return 1;
		}
	}
	return 0;
}

/* What calling an external device function means, or NULL when harmless. */
static enum finding_kind extern_call_kind(const char *callee)
{
	static const char *const launch[] = {"cudaLaunch", "cudaGetParameterBuffer", "cudaStream",
					     "cudaEvent", "cudaGraph", "cudaDeviceSynchronize", NULL};
	static const char *const heap[] = {"malloc", "free", "cudaMalloc", "cudaFree", NULL};
	for (int k = 0; launch[k]; k++)
		if (starts(callee, launch[k]))
			return F_LAUNCH;
	for (int k = 0; heap[k]; k++)
		if (strcmp(callee, heap[k]) == 0 || (starts(heap[k], "cuda") && starts(callee, heap[k])))
			return F_HEAP;
	return F_NONE;
}

/* The callee of a `call` instruction's operand text (after the opcode). */
static void callee_of(const char *rest, char *out, size_t outlen)
{
	const char *p = rest;
	out[0] = 0;
	for (;;) {
		while (*p && (isspace((unsigned char)*p) || *p == ','))
			p++;
		if (*p == '(') {       /* the return value list */
			while (*p && *p != ')')
				p++;
			if (*p)
				p++;
			continue;
		}
		break;
	}
	size_t k = 0;
	while (*p && is_id_char((unsigned char)*p) && k + 1 < outlen)
		out[k++] = *p++;
	out[k] = 0;
}

/* One pass over function statements [b, e): taint propagation (report == 0)
 * or findings (report == 1).  Returns 1 when the taint changed, 0 when not,
 * -1 when out of memory. */
static int analyse(struct scan *sc, int b, int e, int report)
{
	int changed = 0, pending = -1;   /* a tainted st.param before a call */
	char *copy = NULL;
	size_t copycap = 0;
	for (int i = b; i < e; i++) {
		const struct stmt *s = &sc->x.s[i];
		if (s->is_header || s->depth == 0)
			continue;
		const char *t = s->text;
		if (*t == '.')                  /* .reg, .local, .shared, .pragma */
			continue;
		size_t tl = strlen(t);
		if (tl + 1 > copycap) {
			free(copy);
			copycap = tl + 64;
			if ((copy = malloc(copycap)) == NULL)
				return -1;
		}
		memcpy(copy, t, tl + 1);
		char *p = copy;
		if (*p == '@') {                /* a guard predicate */
			while (*p && !isspace((unsigned char)*p))
				p++;
			while (*p && isspace((unsigned char)*p))
				p++;
		}
		char *op = p;
		while (*p && !isspace((unsigned char)*p))
			p++;
		if (*p)
			*p++ = 0;
		if (report) {
			char reg[40];
			if (timer_reg(p, reg, sizeof(reg)))
				finding(sc, i, F_TIMER, -1, "%s", reg);
			if (strcmp(op, "trap") == 0 || strcmp(op, "brkpt") == 0)
				finding(sc, i, F_TRAP, -1, "%s", op);
		}
		if (starts(op, "call")) {
			char callee[256];
			callee_of(p, callee, sizeof(callee));
			int module_func = (int)base_map_get_int(&sc->mfuncs, callee, strlen(callee), -1) >= 0;
			if (report && !module_func) {
				enum finding_kind k = extern_call_kind(callee);
				if (k != F_NONE)
					finding(sc, i, k, -1, "%s", callee);
			}
			if (report && pending >= 0 && module_func)
				finding(sc, i, F_WRITE, pending, "passes the address of");
			pending = -1;
			continue;
		}
		char *ops[16];
		int n = split_operands(p, ops, 16);
		if (n == 0)
			continue;
		if (writes_memory(op)) {
			int param = starts(op, "st.param"), local = starts(op, "st.local");
			int first_addr = -1;
			for (int k = 0; k < n; k++)
				if (ops[k][0] == '[') {
					first_addr = k;
					break;
				}
			if (!param && first_addr >= 0 && report) {
				int g = names_global(sc, ops[first_addr]);
				if (g < 0)
					g = tainted(sc, ops[first_addr]);
				if (g >= 0)
					finding(sc, i, F_WRITE, g, "writes");
			}
			/* an address stored as a value */
			for (int k = 0; k < n; k++) {
				if (k == first_addr || (starts(op, "atom") && k == 0))
					continue;
				int g = tainted(sc, ops[k]);
				if (g < 0 && ops[k][0] != '[')
					g = names_global(sc, ops[k]);
				if (g < 0)
					continue;
				if (param)
					pending = g;
				else if (!local && report)
					finding(sc, i, F_WRITE, g, "stores the address of");
			}
			continue;
		}
		if (is_load(op) || (ops[0][0] != '%' && ops[0][0] != '{'))
			continue;
		/* anything else computes its first operand from the others */
		int g = -1;
		for (int k = 1; k < n && g < 0; k++) {
			g = tainted(sc, ops[k]);
			if (g < 0 && ops[k][0] != '[')
				g = names_global(sc, ops[k]);
		}
		if (g >= 0) {
			int r = taint_regs(sc, ops[0], g);
			if (r < 0) {
				free(copy);
				return -1;
			}
			changed |= r;
		}
	}
	free(copy);
	return changed;
}

/* "_Z9bias_geluIfEvPKT_S2_PS0_xx" -> "bias_gelu<...>"; "_ZN2ns1kEv" ->
 * "ns::k"; anything else as it is.  Not gpu_demangle (gpu/gpu.h): that
 * one gives the whole signature through libstdc++'s __cxa_demangle, loaded at
 * run time; a finding names only the function, the same with or without
 * libstdc++, so the message (result.json) does not depend on the host. */
static void demangle(const char *m, char *out, size_t outlen)
{
	snprintf(out, outlen, "%s", m);
	if (strncmp(m, "_Z", 2) != 0)
		return;
	const char *p = m + 2;
	int nested = 0;
	if (*p == 'L')
		p++;
	if (*p == 'N') {
		nested = 1;
		p++;
		while (*p == 'K' || *p == 'V' || *p == 'r')
			p++;
	}
	size_t k = 0;
	out[0] = 0;
	for (;;) {
		if (!isdigit((unsigned char)*p))
			break;
		long len = strtol(p, (char **)&p, 10);
		if (len <= 0 || (long)strlen(p) < len)
			break;
		k += (size_t)snprintf(out + k, k < outlen ? outlen - k : 0, "%s%.*s", k ? "::" : "", (int)len, p);
		p += len;
		if (*p == 'I') {
			k += (size_t)snprintf(out + k, k < outlen ? outlen - k : 0, "<...>");
			break;
		}
		if (!nested)
			break;
	}
	if (out[0] == 0)
		snprintf(out, outlen, "%s", m);
}

int integrity_scan_ptx(const char *ptx, const char *label, char *msg, size_t msglen, int *line, double *ms)
{
	double t0 = base_now_ms();
	struct scan sc = {.label = label ? label : "pass.c", .f_kind = F_NONE, .f_global = -1,
			  .gmap.copy_keys = 1, .mfuncs.copy_keys = 1, .taint.copy_keys = 1};
	int rc = 0;
	*line = 0;
	msg[0] = 0;
	if (split_statements(ptx, &sc.x) != 0)
		goto oom;
	if ((sc.author = calloc((size_t)sc.x.nfiles + 1, sizeof(int))) == NULL)
		goto oom;
	for (int f = 0; f < sc.x.nfiles; f++)
		sc.author[f] = sc.x.files[f] && strcmp(base_name(sc.x.files[f]), base_name(sc.label)) == 0;
	for (int i = 0; i < sc.x.n; i++)
		if (sc.x.s[i].depth == 0 && declare(&sc, i))
			goto oom;
	/* Initialisers that hold another variable's address (int *p = &g). */
	for (int i = 0; i < sc.x.n; i++) {
		const struct stmt *s = &sc.x.s[i];
		const char *eq = s->depth == 0 ? strchr(s->text, '=') : NULL;
		if (eq == NULL || strstr(s->text, ".global") == NULL)
			continue;
		for (const char *p = eq + 1; *p; p++) {
			if (!(*p == '_' || *p == '$' || isalpha((unsigned char)*p)) ||
			    (p > eq + 1 && is_id_char((unsigned char)p[-1])))
				continue;
			int g = names_global(&sc, p);
			if (g >= 0 && strcmp(sc.g[g].name, "generic") != 0)
				finding(&sc, i, F_WRITE, g, "stores the address of");
			while (is_id_char((unsigned char)p[1]))
				p++;
		}
	}
	for (int g = 0; g < sc.ng; g++)
		if (sc.g[g].managed)
			for (int i = 0; i < sc.x.n; i++)
				if (sc.x.s[i].depth == 0 && strstr(sc.x.s[i].text, sc.g[g].name)) {
					finding(&sc, i, F_MANAGED, g, "declares");
					break;
				}
	/* Function bodies, one at a time. */
	for (int i = 0; i < sc.x.n;) {
		int f = sc.x.s[i].func;
		if (f < 0) {
			i++;
			continue;
		}
		int e = i;
		while (e < sc.x.n && sc.x.s[e].func == f)
			e++;
		base_map_clear(&sc.taint);
		int r, rounds = 0;
		while ((r = analyse(&sc, i, e, 0)) == 1 && ++rounds < 64)
			;
		if (r < 0 || analyse(&sc, i, e, 1) < 0)
			goto oom;
		i = e;
	}
	if (sc.f_kind != F_NONE) {
		const struct stmt *s = &sc.x.s[sc.f_stmt];
		char where[600], fn[300];
		int ln = s->depth > 0 ? author_line(&sc, sc.f_stmt) : 0;
		if (s->func >= 0) {
			demangle(sc.x.f[s->func].name, fn, sizeof(fn));
			snprintf(where, sizeof(where), "%s '%s'", sc.x.f[s->func].is_entry ? "kernel" : "device function",
				 fn);
		} else {
			snprintf(where, sizeof(where), "device code");
		}
		char loc[300];
		if (ln > 0)
			snprintf(loc, sizeof(loc), "%s:%d: ", sc.label, ln);
		else
			snprintf(loc, sizeof(loc), "%s: ", sc.label);
		const char *gname = sc.f_global >= 0 ? sc.g[sc.f_global].name : "?";
		switch (sc.f_kind) {
		case F_TIMER:
			snprintf(msg, msglen, "%s%s reads the %s register (%s); device code may not read clocks or "
				 "timers (timing is passfs's job)", loc, where, sc.f_what,
				 starts(sc.f_what, "%clock") ? "clock() or clock64()" :
				 starts(sc.f_what, "%globaltimer") ? "the global nanosecond timer" : "a performance counter");
			break;
		case F_WRITE:
			if (s->depth == 0)
				snprintf(msg, msglen, "%sthe __device__ variable '%s' holds the address of '%s' (it could "
					 "be written through it); module-scope __device__ state survives between calls: keep "
					 "per-call state in pf_scratch or kernel arguments", loc, s->text + strcspn(s->text, " "),
					 gname);
			else
				snprintf(msg, msglen, "%s%s %s the __device__ variable '%s': module-scope device state "
					 "survives between calls, so a pass may not write it; keep per-call state in "
					 "pf_scratch or kernel arguments, and make tables const or __constant__", loc, where,
					 sc.f_what, gname);
			break;
		case F_MANAGED:
			snprintf(msg, msglen, "%sthe __managed__ variable '%s' is state that survives between calls; "
				 "keep per-call state in pf_scratch", loc, gname);
			break;
		case F_LAUNCH:
			snprintf(msg, msglen, "%s%s calls %s: device-side launches and runtime calls are not allowed; "
				 "launch every kernel from the replacement with pf_launch", loc, where, sc.f_what);
			break;
		case F_HEAP:
			snprintf(msg, msglen, "%s%s calls %s: the device heap survives between calls; use pf_scratch "
				 "for temporary memory", loc, where, sc.f_what);
			break;
		case F_TRAP:
			snprintf(msg, msglen, "%s%s executes `%s` (__trap()/__brkpt()), which aborts the kernel and "
				 "leaves the CUDA context unusable; return an error from the replacement instead "
				 "(assert() is allowed)", loc, where, sc.f_what);
			break;
		case F_NONE:
			break;
		}
		*line = ln;
		rc = 1;
	}
	goto out;
oom:
	snprintf(msg, msglen, "%s: out of memory scanning the device code", sc.label);
	rc = -1;
out:
	ptx_free(&sc.x);
	free(sc.author);
	for (int g = 0; g < sc.ng; g++)
		free(sc.g[g].name);
	free(sc.g);
	base_map_free(&sc.gmap);
	base_map_free(&sc.mfuncs);
	base_map_free(&sc.taint);
	if (ms)
		*ms = base_now_ms() - t0;
	return rc;
}

/* ---- roofline ------------------------------------------------------------------------ */

#define BW_SIZES 5
static const size_t bw_size[BW_SIZES] = {32u << 10, 256u << 10, 2u << 20, 16u << 20, 0};
static double bw_table[BW_SIZES];       /* bytes of traffic per ms, one CPU; 0: not yet */
static pthread_mutex_t bw_mu = PTHREAD_MUTEX_INITIALIZER;

/* memcpy bandwidth at n bytes: the best of at least 3 copies and ~1 ms, so
 * noise (other processes) only lowers the bound's speed, never raises it. */
static double bw_measure(size_t n)
{
	char *a = malloc(n), *b = malloc(n);
	double best = 0;
	if (a != NULL && b != NULL) {
		memset(a, 1, n);
		memset(b, 2, n);
		double start = base_now_ms();
		for (int rep = 0; rep < 3 || (base_now_ms() - start < 1 && rep < 1000); rep++) {
			double t0 = base_now_ms();
			memcpy(rep & 1 ? a : b, rep & 1 ? b : a, n);
			__asm__ volatile("" ::: "memory");
			double dt = base_now_ms() - t0;
			if (dt > 0 && (best == 0 || dt < best))
				best = dt;
		}
	}
	free(a);
	free(b);
	return best > 0 ? 2.0 * (double)n / best : 0;
}

double integrity_cpu_bytes_per_ms(size_t bytes)
{
	/* The smallest measured size that holds the variant: the speed of the
	 * cache level it fits in (16 MiB stands for everything larger: an
	 * upper bound on memory speed where that still fits a cache). */
	int k = 0;
	while (bw_size[k + 1] && bw_size[k] < bytes)
		k++;
	long cpus = sysconf(_SC_NPROCESSORS_ONLN);
	pthread_mutex_lock(&bw_mu);
	if (bw_table[k] == 0)
		bw_table[k] = bw_measure(bw_size[k]);
	double bw = bw_table[k];
	pthread_mutex_unlock(&bw_mu);
	return bw * (double)(cpus > 0 ? cpus : 1);
}

double integrity_gpu_bytes_per_ms(int mem_clock_khz, int bus_bits)
{
	if (mem_clock_khz <= 0 || bus_bits <= 0)
		return 0;
	return (double)mem_clock_khz * 1e3 * 2.0 * ((double)bus_bits / 8.0) / 1e3;
}

double integrity_min_ms(size_t bytes, double bytes_per_ms)
{
	return bytes_per_ms > 0 ? (double)bytes / bytes_per_ms : 0;
}

int integrity_implausible(double pass_ms, double min_ms)
{
	return min_ms > 0 && pass_ms > 0 && pass_ms < 0.5 * min_ms;
}
