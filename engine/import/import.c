/* import.c - GraphNet/PassNet samples to graph.json (see import.h).
 *
 * The pipeline, per sample:
 *
 *   model.py --tokenize--> tokens --split--> logical lines
 *            --evaluate statement by statement--> nodes (struct prog)
 *   weight_meta.py --same tokenizer, literal evaluation--> input entries
 *
 * then, over all samples: dead-code elimination, a structural comparison of
 * the programs (variants must be the same graph), one JSON variant per sample,
 * and graph_load_json() as the judge of the result.
 *
 * The evaluator runs the forward body like Python would, on symbolic values: a
 * Python name is bound to a value object (struct pv); a tensor object refers
 * to a graph value (struct gval), the SSA name of its current contents.  An
 * in-place op (`x += y`, `relu(x, inplace=True)`) creates a new graph value
 * and points the tensor object at it, so every alias follows; other objects
 * that share its storage (views of it, or what it is a view of) keep the old
 * contents in the graph, which would be wrong, so they are marked stale and
 * using one later is an error rather than a silently different graph.
 *
 * Memory: everything a program allocates lives in its arena and dies with it,
 * except jansson objects (operand scalars and attrs), released in prog_free().
 */
#define _POSIX_C_SOURCE 200809L
#include "import.h"

#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Bounds that keep hostile input cheap.  Real samples are far below them. */
#define MAX_TEXT ((size_t)64 << 20)     /* bytes of one model.py / weight_meta.py */
#define MAX_TOKENS (8 << 20)
#define MAX_ARENA ((size_t)1 << 30)
#define MAX_DEPTH 64                    /* expression nesting */
#define MAX_ARGS 256                    /* arguments of one call */
#define MAX_NODES 8192                  /* graph.c's own limit */
#define MAX_VALUES (4 * MAX_NODES)
#define MAX_SAMPLES 1024
#define MAX_NAME_LEN 100                /* graph.c allows 128; room for suffixes */
#define MAX_PATH_LEN 256                /* dotted names like torch.nn.functional.x */
#define MAX_INDEX 64                    /* items of one subscript */

/* ---- arena ---------------------------------------------------------------- */

struct ablock {
	struct ablock *next;
	size_t used, cap;
	max_align_t data[];
};

struct arena {
	struct ablock *head;
	size_t total;
};

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

static char *arena_strndup(struct arena *a, const char *s, size_t n)
{
	char *d = arena_alloc(a, n + 1);
	if (d) {
		memcpy(d, s, n);
		d[n] = 0;
	}
	return d;
}

static void arena_free(struct arena *a)
{
	while (a->head) {
		struct ablock *n = a->head->next;
		free(a->head);
		a->head = n;
	}
	a->total = 0;
}

/* ---- string map (open addressing, keys live in the arena) ------------------ */

struct smap {
	const char **keys;
	void **vals;
	size_t cap, n;
};

static uint64_t hash_str(const char *s)
{
	uint64_t h = 1469598103934665603ULL;
	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 1099511628211ULL;
	return h;
}

static size_t smap_slot(const struct smap *m, const char *k)
{
	size_t i = hash_str(k) & (m->cap - 1);
	while (m->keys[i] && strcmp(m->keys[i], k) != 0)
		i = (i + 1) & (m->cap - 1);
	return i;
}

static void **smap_get(const struct smap *m, const char *k)
{
	if (m->cap == 0)
		return NULL;
	size_t i = smap_slot(m, k);
	return m->keys[i] ? &m->vals[i] : NULL;
}

/* Sets k (which must outlive the map) to v; -1 when out of memory. */
static int smap_put(struct smap *m, const char *k, void *v)
{
	if ((m->n + 1) * 2 > m->cap) {
		size_t ncap = m->cap ? m->cap * 2 : 64;
		struct smap nm = {calloc(ncap, sizeof(char *)), calloc(ncap, sizeof(void *)), ncap, 0};
		if (nm.keys == NULL || nm.vals == NULL) {
			free(nm.keys);
			free(nm.vals);
			return -1;
		}
		for (size_t i = 0; i < m->cap; i++)
			if (m->keys[i]) {
				size_t j = smap_slot(&nm, m->keys[i]);
				nm.keys[j] = m->keys[i];
				nm.vals[j] = m->vals[i];
				nm.n++;
			}
		free(m->keys);
		free(m->vals);
		*m = nm;
	}
	size_t i = smap_slot(m, k);
	if (m->keys[i] == NULL) {
		m->keys[i] = k;
		m->n++;
	}
	m->vals[i] = v;
	return 0;
}

/* There is no deletion: a deleted entry keeps its key with a NULL value. */
static void smap_free(struct smap *m)
{
	free(m->keys);
	free(m->vals);
	memset(m, 0, sizeof(*m));
}

/* ---- tokens --------------------------------------------------------------- */

enum tk { TK_EOF, TK_NEWLINE, TK_NAME, TK_INT, TK_FLOAT, TK_STR, TK_OP };

struct tok {
	enum tk t;
	int line;
	int indent;             /* first token of a logical line: its indent; else -1 */
	const char *s;          /* NAME, STR (decoded), OP: NUL-terminated, in the arena */
	size_t slen;            /* STR: decoded length */
	long long iv;
	double fv;
};

struct lline {                  /* one logical line: tokens [start, end), tok[end] is NEWLINE */
	int start, end, indent, line;
};

/* ---- values --------------------------------------------------------------- */

enum pk {
	PV_NONE, PV_BOOL, PV_INT, PV_FLOAT, PV_STR, PV_ELLIPSIS, PV_SLICE, PV_DTYPE,
	PV_PATH, PV_METHOD, PV_TENSOR, PV_GTUPLE, PV_SEQ, PV_DEVICE
};

/* A Python object.  Tensor objects are mutable (an in-place op repoints gv);
 * everything else is immutable once built. */
struct pv {
	enum pk k;
	int is_list;            /* SEQ: list rather than tuple */
	long long i;            /* INT, BOOL */
	double f;               /* FLOAT */
	const char *s;          /* STR, PATH, DTYPE (graph dtype name), METHOD name */
	size_t slen;            /* STR */
	int gv;                 /* TENSOR, GTUPLE: graph value */
	int n;                  /* SEQ, SLICE (3): items */
	struct pv **items;
	struct pv *self;        /* METHOD */
};

/* A graph value: a forward argument or the result of one node. */
struct gval {
	const char *name;       /* graph name; NULL until the statement ends */
	const char *py;         /* forward argument: its Python name */
	const char *hint;       /* in-place result: name base to use */
	int node;               /* -1 for a forward argument */
	int root;               /* the value whose storage this one shares */
	int stale_line;         /* modified in place through another object at this line */
	int is_tuple;
	int used;
};

enum okind { O_NULL, O_VALUE, O_SCALAR };

struct opnd {
	enum okind k;
	int gv;
	json_t *scalar;         /* owned */
};

struct gnode {
	const char *op;
	const char *call;       /* what the source called, for messages */
	int line;
	int nops;
	struct opnd *ops;
	json_t *attrs;          /* owned; NULL when empty */
	int value;
	int inplace_src;        /* in-place: the value it overwrote; else -1 */
	int dup_output;         /* a copy made for a tensor returned twice */
	int unpacked;           /* a tuple unpacked into this many names (checked after inference); else 0 */
	int unpack_line;
	int alive;
};

/* One weight_meta.py entry. */
struct meta_entry {
	const char *name;
	int line;
	int ndim;
	long long shape[GRAPH_MAX_DIMS];
	const char *dtype;      /* graph dtype name */
	int has[4];             /* mean, std, min, max */
	double num[4];
	int num_is_int[4];
	struct pv *data;        /* SEQ (nested allowed) or NULL */
};

struct prog {
	const char *label;
	const char *text;
	size_t len;
	struct arena ar;
	char *err;
	size_t errlen;
	int failed;

	struct tok *toks;
	int ntok, captok;
	struct lline *lines;
	int nlines;
	int pos;                /* token cursor */
	int depth;
	int line;               /* line of the statement being run */
	int meta_mode;          /* evaluating weight_meta.py literals */

	struct smap env;        /* Python name -> struct pv * (NULL: deleted) */
	struct smap aliases;    /* import aliases: name -> dotted path (char *) */
	struct smap names;      /* graph names in use */
	struct smap suffix;     /* name base -> next numeric suffix to try */

	struct gval *gv;
	int ngv, capgv;
	struct gnode *nodes;
	int nnodes, capnodes;
	int nargs;              /* gv[0 .. nargs-1] are the forward arguments */
	int *outputs;
	int nout;
	int stmt_first_gv;      /* values created by the current statement start here */

	struct meta_entry *meta;
	int nmeta;
};

static struct pv PV_NONE_OBJ = {.k = PV_NONE};
static struct pv PV_ELLIPSIS_OBJ = {.k = PV_ELLIPSIS};

/* Records the first error as "label:line: msg"; returns NULL for chaining. */
__attribute__((format(printf, 3, 4)))
static void *perr(struct prog *p, int line, const char *fmt, ...)
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

static void *oom(struct prog *p)
{
	return perr(p, 0, "out of memory (or the input is too large)");
}

static void *palloc(struct prog *p, size_t n)
{
	void *r = arena_alloc(&p->ar, n);
	if (r == NULL)
		oom(p);
	return r;
}

/* Grows *arr (elements of size sz) so index `need` fits; -1 on failure. */
static int grow(struct prog *p, void **arr, int *cap, int need, size_t sz, int max)
{
	if (need < *cap)
		return 0;
	if (need >= max) {
		perr(p, p->line, "too large (more than %d items)", max);
		return -1;
	}
	int ncap = *cap ? *cap * 2 : 64;
	while (ncap <= need)
		ncap *= 2;
	if (ncap > max)
		ncap = max;
	void *n = realloc(*arr, (size_t)ncap * sz);
	if (n == NULL) {
		oom(p);
		return -1;
	}
	*arr = n;
	*cap = ncap;
	return 0;
}

static struct pv *pv_new(struct prog *p, enum pk k)
{
	struct pv *v = palloc(p, sizeof(*v));
	if (v)
		v->k = k;
	return v;
}

static struct pv *pv_int(struct prog *p, long long i)
{
	struct pv *v = pv_new(p, PV_INT);
	if (v)
		v->i = i;
	return v;
}

static struct pv *pv_float(struct prog *p, double f)
{
	struct pv *v = pv_new(p, PV_FLOAT);
	if (v)
		v->f = f;
	return v;
}

static struct pv *pv_bool(struct prog *p, int b)
{
	struct pv *v = pv_new(p, PV_BOOL);
	if (v)
		v->i = !!b;
	return v;
}

static struct pv *pv_seq(struct prog *p, int n, int is_list)
{
	struct pv *v = pv_new(p, PV_SEQ);
	if (v == NULL)
		return NULL;
	v->n = n;
	v->is_list = is_list;
	v->items = palloc(p, (size_t)(n ? n : 1) * sizeof(struct pv *));
	return v->items ? v : NULL;
}

static int is_num(const struct pv *v)
{
	return v->k == PV_INT || v->k == PV_FLOAT || v->k == PV_BOOL;
}

static double num_val(const struct pv *v)
{
	return v->k == PV_FLOAT ? v->f : (double)v->i;
}

static const char *kind_name(const struct pv *v)
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

/* ---- tokenizer ------------------------------------------------------------ */

static const char *const ops3[] = {"**=", "//=", ">>=", "<<=", "...", NULL};
static const char *const ops2[] = {"**", "//", "->", "+=", "-=", "*=", "/=", "@=", "%=", "&=",
				   "|=", "^=", "==", "!=", "<=", ">=", "<<", ">>", ":=", NULL};
static const char ops1[] = "()[]{},:.;@=+-*/%<>&|^~";

static struct tok *tok_push(struct prog *p, enum tk t, int line)
{
	if (p->ntok + 1 >= MAX_TOKENS) {
		perr(p, line, "too many tokens");
		return NULL;
	}
	if (grow(p, (void **)&p->toks, &p->captok, p->ntok, sizeof(struct tok), MAX_TOKENS))
		return NULL;
	struct tok *k = &p->toks[p->ntok++];
	memset(k, 0, sizeof(*k));
	k->t = t;
	k->line = line;
	k->indent = -1;
	return k;
}

static int hexval(int c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

/* Lexes a string literal starting at *pos (the quote); raw: no escapes. */
static int lex_string(struct prog *p, size_t *pos, int *line, int raw)
{
	const char *t = p->text;
	size_t n = p->len, i = *pos;
	char q = t[i];
	int triple = i + 2 < n && t[i + 1] == q && t[i + 2] == q;
	int start_line = *line;
	i += triple ? 3 : 1;
	size_t cap = 64, len = 0;
	char *buf = malloc(cap);
	if (buf == NULL) {
		oom(p);
		return -1;
	}
	for (;;) {
		if (i >= n) {
			free(buf);
			perr(p, start_line, "unterminated string");
			return -1;
		}
		char c = t[i];
		if (c == q && (!triple || (i + 2 < n && t[i + 1] == q && t[i + 2] == q))) {
			i += triple ? 3 : 1;
			break;
		}
		if (c == '\n') {
			if (!triple) {
				free(buf);
				perr(p, start_line, "unterminated string");
				return -1;
			}
			(*line)++;
		}
		if (len + 4 >= cap) {
			cap *= 2;
			char *nb = realloc(buf, cap);
			if (nb == NULL) {
				free(buf);
				oom(p);
				return -1;
			}
			buf = nb;
		}
		if (c == '\\' && !raw && i + 1 < n) {
			char e = t[i + 1];
			i += 2;
			switch (e) {
			case 'n': buf[len++] = '\n'; break;
			case 't': buf[len++] = '\t'; break;
			case 'r': buf[len++] = '\r'; break;
			case '\\': buf[len++] = '\\'; break;
			case '\'': buf[len++] = '\''; break;
			case '"': buf[len++] = '"'; break;
			case '\n': (*line)++; break;
			case 'x': {
				int h1 = i < n ? hexval(t[i]) : -1, h2 = i + 1 < n ? hexval(t[i + 1]) : -1;
				if (h1 < 0 || h2 < 0) {
					free(buf);
					perr(p, *line, "bad \\x escape in string");
					return -1;
				}
				buf[len++] = (char)(h1 * 16 + h2);
				i += 2;
				break;
			}
			default:
				buf[len++] = '\\';
				buf[len++] = e;
				if (e == '\n')
					(*line)++;
			}
			continue;
		}
		if (c == '\\' && raw && i + 1 < n) {
			buf[len++] = c;
			buf[len++] = t[i + 1];
			if (t[i + 1] == '\n')
				(*line)++;
			i += 2;
			continue;
		}
		buf[len++] = c;
		i++;
	}
	if (memchr(buf, 0, len)) {
		free(buf);
		perr(p, start_line, "NUL character in a string");
		return -1;
	}
	struct tok *k = tok_push(p, TK_STR, start_line);
	char *s = k ? arena_strndup(&p->ar, buf, len) : NULL;
	free(buf);
	if (s == NULL) {
		if (k)
			oom(p);
		return -1;
	}
	k->s = s;
	k->slen = len;
	*pos = i;
	return 0;
}

static int lex_number(struct prog *p, size_t *pos, int line)
{
	const char *t = p->text;
	size_t n = p->len, i = *pos;
	char buf[80];
	size_t bl = 0;
	int is_float = 0;
	if (t[i] == '0' && i + 1 < n && (t[i + 1] == 'x' || t[i + 1] == 'X')) {
		i += 2;
		unsigned long long v = 0;
		int any = 0;
		for (; i < n && (hexval(t[i]) >= 0 || t[i] == '_'); i++) {
			if (t[i] == '_')
				continue;
			if (v > (ULLONG_MAX >> 4) || (v << 4) > (unsigned long long)LLONG_MAX) {
				perr(p, line, "integer literal too large");
				return -1;
			}
			v = (v << 4) | (unsigned)hexval(t[i]);
			any = 1;
		}
		if (!any) {
			perr(p, line, "bad hexadecimal literal");
			return -1;
		}
		if (i < n && (isalnum((unsigned char)t[i]) || t[i] == '.')) {
			perr(p, line, "bad number literal");
			return -1;
		}
		struct tok *k = tok_push(p, TK_INT, line);
		if (k == NULL)
			return -1;
		k->iv = (long long)v;
		*pos = i;
		return 0;
	}
	while (i < n) {
		char c = t[i];
		if (isdigit((unsigned char)c) || c == '_') {
			/* digits */
		} else if (c == '.' && !is_float) {
			is_float = 1;
		} else if ((c == 'e' || c == 'E')) {
			is_float = 1;
			if (bl < sizeof(buf) - 1)
				buf[bl++] = c;
			i++;
			if (i < n && (t[i] == '+' || t[i] == '-')) {
				if (bl < sizeof(buf) - 1)
					buf[bl++] = t[i];
				i++;
			}
			if (i >= n || !isdigit((unsigned char)t[i])) {
				perr(p, line, "bad number literal");
				return -1;
			}
			while (i < n && (isdigit((unsigned char)t[i]) || t[i] == '_')) {
				if (t[i] != '_' && bl < sizeof(buf) - 1)
					buf[bl++] = t[i];
				i++;
			}
			break;
		} else {
			break;
		}
		if (c != '_') {
			if (bl >= sizeof(buf) - 1) {
				perr(p, line, "number literal too long");
				return -1;
			}
			buf[bl++] = c;
		}
		i++;
	}
	if (bl >= sizeof(buf) - 1) {
		perr(p, line, "number literal too long");
		return -1;
	}
	buf[bl] = 0;
	if (i < n && (isalnum((unsigned char)t[i]) || t[i] == '_' || t[i] == '.')) {
		perr(p, line, "bad number literal (complex, octal and binary literals are not supported)");
		return -1;
	}
	struct tok *k = tok_push(p, is_float ? TK_FLOAT : TK_INT, line);
	if (k == NULL)
		return -1;
	if (is_float) {
		errno = 0;
		k->fv = strtod(buf, NULL);
		if (!isfinite(k->fv)) {
			perr(p, line, "float literal out of range");
			return -1;
		}
	} else {
		if (bl > 1 && buf[0] == '0' && strspn(buf, "0") != bl) {
			perr(p, line, "leading zeros in an integer literal");
			return -1;
		}
		errno = 0;
		char *end;
		k->iv = strtoll(buf, &end, 10);
		if (errno == ERANGE || *end) {
			perr(p, line, "integer literal too large");
			return -1;
		}
	}
	*pos = i;
	return 0;
}

static int is_name_start(int c)
{
	return isalpha(c) || c == '_';
}

static int tokenize(struct prog *p)
{
	const char *t = p->text;
	size_t n = p->len, i = 0;
	int line = 1, depth = 0, at_start = 1, indent = -1;
	int open_line[MAX_DEPTH];
	while (i < n) {
		if (at_start && depth == 0) {
			int col = 0;
			while (i < n && (t[i] == ' ' || t[i] == '\t' || t[i] == '\f')) {
				if (t[i] == ' ')
					col++;
				else if (t[i] == '\t')
					col = (col / 8 + 1) * 8;
				else
					col = 0;
				if (col > 100000)
					col = 100000;
				i++;
			}
			if (i >= n)
				break;
			if (t[i] == '\n' || t[i] == '#' || (t[i] == '\r' && i + 1 < n && t[i + 1] == '\n')) {
				/* blank or comment line: no logical line */
				while (i < n && t[i] != '\n')
					i++;
				if (i < n) {
					i++;
					line++;
				}
				continue;
			}
			at_start = 0;
			indent = col;
		}
		char c = t[i];
		if (c == ' ' || c == '\t' || c == '\f' || c == '\r') {
			i++;
			continue;
		}
		if (c == '#') {
			while (i < n && t[i] != '\n')
				i++;
			continue;
		}
		if (c == '\\') {
			size_t j = i + 1;
			if (j < n && t[j] == '\r')
				j++;
			if (j < n && t[j] == '\n') {
				i = j + 1;
				line++;
				continue;
			}
			perr(p, line, "unexpected '\\'");
			return -1;
		}
		if (c == '\n') {
			i++;
			if (depth == 0) {
				if (p->ntok > 0 && p->toks[p->ntok - 1].t != TK_NEWLINE &&
				    tok_push(p, TK_NEWLINE, line) == NULL)
					return -1;
				at_start = 1;
			}
			line++;
			continue;
		}
		int first_of_line = indent >= 0 ? indent : -1;
		int ntok0 = p->ntok;
		if (is_name_start((unsigned char)c)) {
			size_t j = i;
			while (j < n && (isalnum((unsigned char)t[j]) || t[j] == '_'))
				j++;
			size_t wl = j - i;
			if (j < n && (t[j] == '\'' || t[j] == '"') && wl <= 2) {
				char pre[3] = {0};
				memcpy(pre, t + i, wl);
				for (size_t q = 0; q < wl; q++)
					pre[q] = (char)tolower((unsigned char)pre[q]);
				if (!strcmp(pre, "r") || !strcmp(pre, "u")) {
					i = j;
					if (lex_string(p, &i, &line, pre[0] == 'r'))
						return -1;
					goto pushed;
				}
				if (!strcmp(pre, "b") || !strcmp(pre, "f") || !strcmp(pre, "rb") ||
				    !strcmp(pre, "br") || !strcmp(pre, "fr") || !strcmp(pre, "rf")) {
					perr(p, line, "unsupported string prefix '%s'", pre);
					return -1;
				}
			}
			struct tok *k = tok_push(p, TK_NAME, line);
			if (k == NULL)
				return -1;
			if ((k->s = arena_strndup(&p->ar, t + i, wl)) == NULL) {
				oom(p);
				return -1;
			}
			i = j;
		} else if (isdigit((unsigned char)c) ||
			   (c == '.' && i + 1 < n && isdigit((unsigned char)t[i + 1]))) {
			if (lex_number(p, &i, line))
				return -1;
		} else if (c == '\'' || c == '"') {
			if (lex_string(p, &i, &line, 0))
				return -1;
		} else {
			const char *op = NULL;
			size_t ol = 0;
			for (int q = 0; ops3[q] && !op; q++)
				if (i + 3 <= n && !memcmp(t + i, ops3[q], 3))
					op = ops3[q], ol = 3;
			for (int q = 0; ops2[q] && !op; q++)
				if (i + 2 <= n && !memcmp(t + i, ops2[q], 2))
					op = ops2[q], ol = 2;
			if (!op && strchr(ops1, c) && c) {
				op = strchr(ops1, c);
				ol = 1;
			}
			if (!op) {
				if ((unsigned char)c >= 0x80)
					perr(p, line, "non-ASCII character outside a string or comment");
				else
					perr(p, line, "invalid character '%c'", isprint((unsigned char)c) ? c : '?');
				return -1;
			}
			struct tok *k = tok_push(p, TK_OP, line);
			if (k == NULL)
				return -1;
			if ((k->s = arena_strndup(&p->ar, op, ol)) == NULL) {
				oom(p);
				return -1;
			}
			if (ol == 1 && strchr("([{", c)) {
				if (depth >= MAX_DEPTH) {
					perr(p, line, "brackets nested too deeply");
					return -1;
				}
				open_line[depth++] = line;
			} else if (ol == 1 && strchr(")]}", c)) {
				if (depth == 0) {
					perr(p, line, "unmatched '%c'", c);
					return -1;
				}
				depth--;
			}
			i += ol;
		}
pushed:
		if (p->ntok > ntok0 && first_of_line >= 0) {
			p->toks[ntok0].indent = first_of_line;
			indent = -1;
		}
	}
	if (depth > 0) {
		perr(p, open_line[depth - 1], "unclosed bracket");
		return -1;
	}
	if (p->ntok > 0 && p->toks[p->ntok - 1].t != TK_NEWLINE && tok_push(p, TK_NEWLINE, line) == NULL)
		return -1;
	if (tok_push(p, TK_EOF, line) == NULL)
		return -1;

	/* logical lines */
	int nl = 0;
	for (int k = 0; k < p->ntok; k++)
		nl += p->toks[k].t == TK_NEWLINE;
	p->lines = palloc(p, (size_t)(nl ? nl : 1) * sizeof(struct lline));
	if (p->lines == NULL)
		return -1;
	int start = 0;
	for (int k = 0; k < p->ntok; k++) {
		if (p->toks[k].t != TK_NEWLINE)
			continue;
		struct lline *L = &p->lines[p->nlines++];
		L->start = start;
		L->end = k;
		L->indent = p->toks[start].indent < 0 ? 0 : p->toks[start].indent;
		L->line = p->toks[start].line;
		start = k + 1;
	}
	return 0;
}

/* ---- token helpers ---------------------------------------------------------- */

static struct tok *cur(struct prog *p)
{
	return &p->toks[p->pos];
}

static int is_op(const struct tok *k, const char *op)
{
	return k->t == TK_OP && strcmp(k->s, op) == 0;
}

static int is_kw(const struct tok *k, const char *kw)
{
	return k->t == TK_NAME && strcmp(k->s, kw) == 0;
}

static int accept_op(struct prog *p, const char *op)
{
	if (is_op(cur(p), op)) {
		p->pos++;
		return 1;
	}
	return 0;
}

static const char *tok_desc(const struct tok *k, char *buf, size_t len)
{
	switch (k->t) {
	case TK_EOF: return "end of file";
	case TK_NEWLINE: return "end of line";
	case TK_NAME: snprintf(buf, len, "'%.40s'", k->s); return buf;
	case TK_INT: case TK_FLOAT: return "a number";
	case TK_STR: return "a string";
	case TK_OP: snprintf(buf, len, "'%s'", k->s); return buf;
	}
	return "?";
}

static int expect_op(struct prog *p, const char *op)
{
	if (accept_op(p, op))
		return 0;
	char b[64];
	perr(p, cur(p)->line, "expected '%s', found %s", op, tok_desc(cur(p), b, sizeof(b)));
	return -1;
}

static const char *const py_keywords[] = {
	"False", "None", "True", "and", "as", "assert", "async", "await", "break", "class",
	"continue", "def", "del", "elif", "else", "except", "finally", "for", "from", "global",
	"if", "import", "in", "is", "lambda", "nonlocal", "not", "or", "pass", "raise",
	"return", "try", "while", "with", "yield", NULL};

static int is_keyword(const char *s)
{
	for (int i = 0; py_keywords[i]; i++)
		if (!strcmp(py_keywords[i], s))
			return 1;
	return 0;
}

/* ---- graph values and nodes ----------------------------------------------- */

static int gv_new(struct prog *p, int node, int root)
{
	if (grow(p, (void **)&p->gv, &p->capgv, p->ngv, sizeof(struct gval), MAX_VALUES))
		return -1;
	struct gval *g = &p->gv[p->ngv];
	memset(g, 0, sizeof(*g));
	g->node = node;
	g->root = root < 0 ? p->ngv : root;
	return p->ngv++;
}

/* A fresh graph name from `base` (truncated, made unique with _1, _2...). */
static const char *fresh_name(struct prog *p, const char *base)
{
	char b[MAX_NAME_LEN + 1];
	snprintf(b, sizeof(b), "%s", base);
	char buf[MAX_NAME_LEN + 24];
	snprintf(buf, sizeof(buf), "%s", b);
	if (smap_get(&p->names, buf)) {
		/* the next suffix to try for this base: linear, not quadratic, in
		 * the number of rebinds of one name */
		void **next = smap_get(&p->suffix, b);
		long k = next ? (long)(intptr_t)*next : 1;
		do
			snprintf(buf, sizeof(buf), "%s_%ld", b, k++);
		while (smap_get(&p->names, buf));
		if (next) {
			*next = (void *)(intptr_t)k;
		} else {
			char *key = arena_strndup(&p->ar, b, strlen(b));
			if (key == NULL || smap_put(&p->suffix, key, (void *)(intptr_t)k))
				return oom(p);
		}
	}
	char *s = arena_strndup(&p->ar, buf, strlen(buf));
	if (s == NULL || smap_put(&p->names, s, s))
		return oom(p);
	return s;
}

static const char *gv_label(const struct prog *p, int g)
{
	if (g < 0 || g >= p->ngv)
		return "?";
	if (p->gv[g].name)
		return p->gv[g].name;
	return "an intermediate value";
}

/* A tensor operand: checks it is usable (not stale). Returns its graph value. */
static int use_tensor(struct prog *p, const struct pv *v, const char *what)
{
	if (v->k == PV_GTUPLE) {
		perr(p, p->line,
		     "%s: %s is a tuple (a split, chunk, unbind or tensor_split result); index or unpack it first",
		     what, gv_label(p, v->gv));
		return -1;
	}
	if (v->k != PV_TENSOR) {
		perr(p, p->line, "%s: expected a tensor, got %s", what, kind_name(v));
		return -1;
	}
	const struct gval *g = &p->gv[v->gv];
	if (g->stale_line) {
		perr(p, p->line,
		     "%s: %s is used after an in-place op at line %d changed it through an alias or view; "
		     "not supported", what, gv_label(p, v->gv), g->stale_line);
		return -1;
	}
	return v->gv;
}

struct nodebuild {
	const char *op;
	const char *call;
	struct opnd ops[MAX_ARGS];
	int nops;
	json_t *attrs;
};

static void nb_free(struct nodebuild *b)
{
	for (int i = 0; i < b->nops; i++)
		json_decref(b->ops[i].scalar);
	json_decref(b->attrs);
	memset(b, 0, sizeof(*b));
}

static int nb_attr(struct prog *p, struct nodebuild *b, const char *name, json_t *v)
{
	if (v == NULL) {
		oom(p);
		return -1;
	}
	if (b->attrs == NULL && (b->attrs = json_object()) == NULL) {
		json_decref(v);
		oom(p);
		return -1;
	}
	if (json_object_set_new(b->attrs, name, v)) {
		oom(p);
		return -1;
	}
	return 0;
}

/* Emits the node; view: the result shares its first operand's storage.
 * Takes ownership of b's JSON.  Returns the result's graph value or -1. */
static int emit_node(struct prog *p, struct nodebuild *b, int view, int tuple)
{
	if (p->nnodes >= MAX_NODES) {
		nb_free(b);
		perr(p, p->line, "too many nodes (at most %d)", MAX_NODES);
		return -1;
	}
	if (grow(p, (void **)&p->nodes, &p->capnodes, p->nnodes, sizeof(struct gnode), MAX_NODES + 1)) {
		nb_free(b);
		return -1;
	}
	int root = -1;
	if (view && b->nops > 0 && b->ops[0].k == O_VALUE)
		root = p->gv[b->ops[0].gv].root;
	int g = gv_new(p, p->nnodes, root);
	struct opnd *ops = g < 0 ? NULL : palloc(p, (size_t)(b->nops ? b->nops : 1) * sizeof(*ops));
	if (ops == NULL) {
		nb_free(b);
		return -1;
	}
	memcpy(ops, b->ops, (size_t)b->nops * sizeof(*ops));
	struct gnode *n = &p->nodes[p->nnodes++];
	memset(n, 0, sizeof(*n));
	n->op = b->op;
	n->call = b->call;
	n->line = p->line;
	n->nops = b->nops;
	n->ops = ops;
	n->attrs = b->attrs;
	n->value = g;
	n->inplace_src = -1;
	n->alive = 1;
	p->gv[g].is_tuple = tuple;
	memset(b, 0, sizeof(*b));
	return g;
}

static struct pv *tensor_pv(struct prog *p, int g, int tuple)
{
	if (g < 0)
		return NULL;
	struct pv *v = pv_new(p, tuple ? PV_GTUPLE : PV_TENSOR);
	if (v)
		v->gv = g;
	return v;
}

/* Turns the just-emitted node g into an in-place update of tensor object
 * self: everything sharing self's storage goes stale, self moves to g. */
static void make_inplace(struct prog *p, struct pv *self, int g)
{
	int old = self->gv, root = p->gv[old].root;
	for (int i = 0; i < p->ngv; i++)
		if (p->gv[i].root == root && i != g && !p->gv[i].stale_line)
			p->gv[i].stale_line = p->line;
	p->gv[g].root = root;
	p->gv[g].hint = p->gv[old].name ? p->gv[old].name : p->gv[old].hint;
	p->nodes[p->gv[g].node].inplace_src = old;
	self->gv = g;
}

/* ---- constants to JSON -------------------------------------------------------- */

static json_t *const_json(struct prog *p, const struct pv *v, const char *what, int depth)
{
	json_t *j = NULL;
	if (depth > MAX_DEPTH)
		return perr(p, p->line, "%s: nested too deeply", what);
	switch (v->k) {
	case PV_NONE: j = json_null(); break;
	case PV_BOOL: j = json_boolean(v->i); break;
	case PV_INT: j = json_integer(v->i); break;
	case PV_FLOAT:
		if (!isfinite(v->f))
			return perr(p, p->line, "%s: not a finite number", what);
		j = json_real(v->f);
		break;
	case PV_STR:
		j = json_stringn(v->s, v->slen);
		if (j == NULL)
			return perr(p, p->line, "%s: string is not valid UTF-8", what);
		break;
	case PV_DTYPE: j = json_string(v->s); break;
	case PV_SEQ:
		if ((j = json_array()) == NULL)
			return oom(p);
		for (int i = 0; i < v->n; i++) {
			json_t *e = const_json(p, v->items[i], what, depth + 1);
			if (e == NULL || json_array_append_new(j, e)) {
				json_decref(j);
				return p->failed ? NULL : oom(p);
			}
		}
		return j;
	default:
		return perr(p, p->line, "%s: expected a constant, got %s", what, kind_name(v));
	}
	return j ? j : oom(p);
}

/* ---- call binding ---------------------------------------------------------------
 *
 * A call is described by a spec string: space-separated parameters in
 * PyTorch's order, "*" before keyword-only ones.  Each parameter is
 *     pyname[>attrname]:KIND[?][n][#slot][=json-default-to-emit]
 * '?' optional, 'n' None means "not given", '#k' operand slot (default: next).
 * KIND: T tensor operand, S tensor or number operand, L list of tensors,
 *       i int, f float, N number as given, b bool, B bool, s string, d dtype,
 *       I int or ints, V ints (an int becomes [int]), v the remaining
 *       positional ints (or one sequence), a any constant,
 *       X inplace flag, Z must be None/False (ignored), - ignored. */

struct param {
	char py[40];
	char attr[40];
	char kind;
	int optional, nullable, kwonly, slot;
	char dflt[16];
};

static int parse_spec(const char *spec, struct param *ps, int max)
{
	int n = 0, kwonly = 0, slot = 0;
	const char *s = spec;
	while (*s) {
		while (*s == ' ')
			s++;
		if (!*s)
			break;
		if (*s == '*') {
			kwonly = 1;
			s++;
			continue;
		}
		if (n >= max)
			return -1;
		struct param *q = &ps[n++];
		memset(q, 0, sizeof(*q));
		size_t k = 0;
		while (*s && *s != ':' && *s != '>' && k < sizeof(q->py) - 1)
			q->py[k++] = *s++;
		if (*s == '>') {
			s++;
			k = 0;
			while (*s && *s != ':' && k < sizeof(q->attr) - 1)
				q->attr[k++] = *s++;
		} else {
			memcpy(q->attr, q->py, sizeof(q->py));
		}
		if (*s++ != ':')
			return -1;
		q->kind = *s++;
		q->kwonly = kwonly;
		q->slot = -1;
		while (*s && *s != ' ') {
			if (*s == '?')
				q->optional = 1;
			else if (*s == 'n')
				q->nullable = 1;
			else if (*s == '#')
				q->slot = s[1] - '0', s++;
			else if (*s == '=') {
				s++;
				k = 0;
				while (*s && *s != ' ' && k < sizeof(q->dflt) - 1)
					q->dflt[k++] = *s++;
				continue;
			}
			s++;
		}
		if (strchr("TSL", q->kind) && q->slot < 0)
			q->slot = slot;
		if (strchr("TSL", q->kind))
			slot = q->slot + 1;
	}
	return n;
}

struct callargs {
	int npos;
	struct pv *pos[MAX_ARGS];
	int nkw;
	const char *kwname[MAX_ARGS];
	struct pv *kw[MAX_ARGS];
	int line;
};

static int ints_of(struct prog *p, const struct pv *v, const char *what, int allow_int)
{
	if (allow_int && v->k == PV_INT)
		return 0;
	if (v->k != PV_SEQ) {
		perr(p, p->line, "%s: expected %s, got %s", what,
		     allow_int ? "an int or a tuple of ints" : "a tuple of ints", kind_name(v));
		return -1;
	}
	for (int i = 0; i < v->n; i++)
		if (v->items[i]->k != PV_INT) {
			perr(p, p->line, "%s: expected ints, got %s", what, kind_name(v->items[i]));
			return -1;
		}
	return 0;
}

/* Binds args to the spec and builds the node (operands and attrs).  On
 * return *inplace is set from an X parameter.  0 or -1. */
static int bind_call(struct prog *p, const char *fname, const char *spec, struct callargs *a,
		     struct nodebuild *b, int *inplace)
{
	struct param ps[16];
	int np = parse_spec(spec, ps, 16);
	struct pv *val[16] = {0};
	if (np < 0) {
		perr(p, p->line, "internal error: bad spec for %s", fname);
		return -1;
	}
	*inplace = 0;
	int pi = 0;
	for (int k = 0; k < a->npos; k++) {
		while (pi < np && ps[pi].kwonly)
			pi++;
		if (pi >= np) {
			int maxpos = 0;
			for (int q = 0; q < np; q++)
				maxpos += !ps[q].kwonly;
			perr(p, p->line, "%s takes at most %d positional arguments (%d given)", fname,
			     maxpos, a->npos);
			return -1;
		}
		if (ps[pi].kind == 'v') {
			int rest = a->npos - k;
			if (rest == 1 && a->pos[k]->k == PV_SEQ) {
				val[pi] = a->pos[k];
			} else {
				struct pv *s = pv_seq(p, rest, 0);
				if (s == NULL)
					return -1;
				for (int q = 0; q < rest; q++)
					s->items[q] = a->pos[k + q];
				val[pi] = s;
			}
			pi++;
			break;
		}
		val[pi++] = a->pos[k];
	}
	for (int k = 0; k < a->nkw; k++) {
		int q;
		for (q = 0; q < np; q++)
			if (!strcmp(ps[q].py, a->kwname[k]) && ps[q].kind != 'v')
				break;
		if (q == np) {
			/* the variadic shape of view/reshape/permute/expand may be a keyword too */
			for (q = 0; q < np; q++)
				if (!strcmp(ps[q].py, a->kwname[k]))
					break;
		}
		if (q == np) {
			perr(p, p->line, "unknown keyword argument '%s' for %s", a->kwname[k], fname);
			return -1;
		}
		if (val[q]) {
			perr(p, p->line, "%s got multiple values for argument '%s'", fname, ps[q].py);
			return -1;
		}
		val[q] = a->kw[k];
	}
	b->call = fname;
	int nslots = 0;
	int have_slot[MAX_ARGS] = {0};
	for (int q = 0; q < np; q++) {
		struct param *ps_q = &ps[q];
		struct pv *v = val[q];
		char what[128];
		snprintf(what, sizeof(what), "%s argument '%s'", fname, ps_q->py);
		if (v && v->k == PV_NONE && ps_q->nullable && !strchr("TS", ps_q->kind))
			v = NULL;      /* None where PyTorch's default is None: the default */
		if (v == NULL) {
			if (!ps_q->optional) {
				perr(p, p->line, "%s: missing argument '%s'", fname, ps_q->py);
				return -1;
			}
			if (ps_q->dflt[0]) {
				json_t *d = json_loads(ps_q->dflt, JSON_DECODE_ANY, NULL);
				if (nb_attr(p, b, ps_q->attr, d))
					return -1;
			}
			continue;
		}
		switch (ps_q->kind) {
		case 'T': case 'S': {
			struct opnd o = {0};
			if (v->k == PV_NONE && ps_q->kind == 'T' && ps_q->nullable) {
				o.k = O_NULL;
			} else if (ps_q->kind == 'S' && is_num(v)) {
				o.k = O_SCALAR;
				o.scalar = const_json(p, v, what, 0);
				if (o.scalar == NULL)
					return -1;
			} else {
				if ((o.gv = use_tensor(p, v, what)) < 0)
					return -1;
				o.k = O_VALUE;
			}
			int s = ps_q->slot;
			if (s >= MAX_ARGS - 1) {
				json_decref(o.scalar);
				perr(p, p->line, "internal error: slot");
				return -1;
			}
			b->ops[s] = o;
			have_slot[s] = 1;
			if (s + 1 > nslots)
				nslots = s + 1;
			if (nslots > b->nops)
				b->nops = nslots;       /* so nb_free() sees the scalars on failure */
			break;
		}
		case 'L': {
			if (v->k != PV_SEQ || v->n == 0) {
				perr(p, p->line, "%s: expected a non-empty tuple or list of tensors, got %s",
				     what, kind_name(v));
				return -1;
			}
			if (ps_q->slot + v->n >= MAX_ARGS) {
				perr(p, p->line, "%s: too many tensors", what);
				return -1;
			}
			for (int e = 0; e < v->n; e++) {
				int s = ps_q->slot + e;
				if ((b->ops[s].gv = use_tensor(p, v->items[e], what)) < 0)
					return -1;
				b->ops[s].k = O_VALUE;
				have_slot[s] = 1;
				if (s + 1 > nslots)
					nslots = s + 1;
			}
			break;
		}
		case 'i':
			if (v->k != PV_INT) {
				perr(p, p->line, "%s: expected an int, got %s", what, kind_name(v));
				return -1;
			}
			if (nb_attr(p, b, ps_q->attr, json_integer(v->i)))
				return -1;
			break;
		case 'f': case 'N':
			if (v->k != PV_INT && v->k != PV_FLOAT) {
				perr(p, p->line, "%s: expected a number, got %s", what, kind_name(v));
				return -1;
			}
			if (!isfinite(num_val(v))) {
				perr(p, p->line, "%s: not a finite number", what);
				return -1;
			}
			if (nb_attr(p, b, ps_q->attr,
				    ps_q->kind == 'N' && v->k == PV_INT ? json_integer(v->i) : json_real(num_val(v))))
				return -1;
			break;
		case 'b': case 'B': case 'X':
			if (v->k != PV_BOOL) {
				perr(p, p->line, "%s: expected True or False, got %s", what, kind_name(v));
				return -1;
			}
			if (ps_q->kind == 'X')
				*inplace = (int)v->i;
			if (nb_attr(p, b, ps_q->attr, json_boolean(v->i)))
				return -1;
			break;
		case 's':
			if (v->k != PV_STR) {
				perr(p, p->line, "%s: expected a string, got %s", what, kind_name(v));
				return -1;
			}
			if (nb_attr(p, b, ps_q->attr, const_json(p, v, what, 0)))
				return -1;
			break;
		case 'd':
			if (v->k != PV_DTYPE) {
				perr(p, p->line, "%s: expected a dtype such as torch.float16, got %s", what,
				     kind_name(v));
				return -1;
			}
			if (nb_attr(p, b, ps_q->attr, json_string(v->s)))
				return -1;
			break;
		case 'I': case 'V': case 'v':
			if (ints_of(p, v, what, ps_q->kind == 'I' || ps_q->kind == 'V'))
				return -1;
			if (v->k == PV_INT && ps_q->kind != 'I') {
				json_t *arr = json_array();
				if (arr == NULL || json_array_append_new(arr, json_integer(v->i))) {
					json_decref(arr);
					oom(p);
					return -1;
				}
				if (nb_attr(p, b, ps_q->attr, arr))
					return -1;
			} else if (nb_attr(p, b, ps_q->attr, const_json(p, v, what, 0))) {
				return -1;
			}
			break;
		case 'a':
			if (nb_attr(p, b, ps_q->attr, const_json(p, v, what, 0)))
				return -1;
			break;
		case 'Z':
			if (!(v->k == PV_NONE || (v->k == PV_BOOL && !v->i))) {
				perr(p, p->line, "%s: only None/False is supported", what);
				return -1;
			}
			break;
		case '-':
			break;
		default:
			perr(p, p->line, "internal error: spec kind '%c'", ps_q->kind);
			return -1;
		}
	}
	for (int s = 0; s < nslots; s++)
		if (!have_slot[s])
			b->ops[s].k = O_NULL;
	b->nops = nslots;
	return 0;
}

/* ---- the call tables ------------------------------------------------------ */

#define F_VIEW 1        /* result shares the first operand's storage */
#define F_TUPLE 2       /* result is a tuple (split, chunk, unbind, tensor_split) */
#define F_INPLACE 4     /* torch.relu_ and friends */
#define F_ELEM 8        /* elementwise with scalars: one operand must be a tensor */
#define F_TSPLIT 16     /* tensor_split: indices_or_sections becomes sections or indices */

struct fdef {
	const char *name;       /* dotted path, or method name */
	enum graph_op op;       /* the op it becomes (engine/graph/graph_ops.c) */
	const char *spec;
	int flags;
};

#define ADD_SPEC "input:S other:S * alpha:N?"
#define REDUCE_SPEC "input:T dim:I?n keepdim:b? * dtype:d?n"
#define SDPA_SPEC "query:T key:T value:T attn_mask:T?n dropout_p:f? is_causal:b? scale:f?n enable_gqa:b?"
#define INTERP_SPEC "input:T size:a?n scale_factor:a?n mode:s? align_corners:B?n " \
	"recompute_scale_factor:B?n antialias:b?"

/* PyTorch's three overloads in one: (indices_or_sections, dim), (sections,
 * dim), (indices, dim); tsplit_attr() sorts out which was given. */
#define TSPLIT_SPEC "input:T indices_or_sections:a? dim:i? * sections:i? indices:V?"
#define BADDBMM_SPEC "input:T batch1:T batch2:T * beta:N? alpha:N?"
#define CONV1D_SPEC "input:T weight:T bias:T?n stride:a? padding:a? dilation:a? groups:i?"
#define AVG_POOL2D_SPEC "input:T kernel_size:I stride:I?n padding:I? ceil_mode:b? count_include_pad:b? " \
	"divisor_override:i?n"

static const struct fdef funcs[] = {
	{"torch.nn.functional.linear", OP_LINEAR, "input:T weight:T bias:T?n", 0},
	{"torch._C._nn.linear", OP_LINEAR, "input:T weight:T bias:T?n", 0},
	{"torch.conv2d", OP_CONV2D, "input:T weight:T bias:T?n stride:a? padding:a? dilation:a? groups:i?", 0},
	{"torch.nn.functional.conv2d", OP_CONV2D,
	 "input:T weight:T bias:T?n stride:a? padding:a? dilation:a? groups:i?", 0},
	{"torch.nn.functional.interpolate", OP_INTERPOLATE, INTERP_SPEC, 0},
	{"torch.nn.functional.layer_norm", OP_LAYER_NORM,
	 "input:T normalized_shape:V weight:T?n bias:T?n eps:f?", 0},
	{"torch.layer_norm", OP_LAYER_NORM,
	 "input:T normalized_shape:V weight:T?n bias:T?n eps:f? cudnn_enable:-?", 0},
	{"torch.nn.functional.dropout", OP_DROPOUT, "input:T p:f? training:b?=true inplace:b?", F_VIEW},
	{"torch.dropout", OP_DROPOUT, "input:T p:f train>training:b", F_VIEW},
	{"torch.nn.functional.batch_norm", OP_BATCH_NORM,
	 "input:T running_mean:T running_var:T weight:T?n bias:T?n training:b? momentum:f?n eps:f?", 0},
	{"torch.batch_norm", OP_BATCH_NORM,
	 "input:T#0 weight:T?n#3 bias:T?n#4 running_mean:T#1 running_var:T#2 training:b momentum:f eps:f "
	 "cudnn_enabled:-", 0},
	{"torch.nn.functional.softmax", OP_SOFTMAX, "input:T dim:i?n _stacklevel:-? dtype:d?n", 0},
	{"torch.softmax", OP_SOFTMAX, "input:T dim:i dtype:d?n", 0},
	{"torch.nn.functional.gelu", OP_GELU, "input:T approximate:s?", 0},
	{"torch._C._nn.gelu", OP_GELU, "input:T approximate:s?", 0},
	{"torch.nn.functional.relu", OP_RELU, "input:T inplace:X?", 0},
	{"torch.relu", OP_RELU, "input:T", 0},
	{"torch.relu_", OP_RELU, "input:T", F_INPLACE},
	{"torch.nn.functional.relu_", OP_RELU, "input:T", F_INPLACE},
	{"torch.nn.functional.silu", OP_SILU, "input:T inplace:X?", 0},
	{"torch.sigmoid", OP_SIGMOID, "input:T", 0},
	{"torch.sigmoid_", OP_SIGMOID, "input:T", F_INPLACE},
	{"torch.nn.functional.sigmoid", OP_SIGMOID, "input:T", 0},
	{"torch.tanh", OP_TANH, "input:T", 0},
	{"torch.nn.functional.tanh", OP_TANH, "input:T", 0},
	{"torch.exp", OP_EXP, "input:T", 0},
	{"torch.rsqrt", OP_RSQRT, "input:T", 0},
	{"torch.prelu", OP_PRELU, "input:T weight:T", 0},
	{"torch.nn.functional.prelu", OP_PRELU, "input:T weight:T", 0},
	{"torch.matmul", OP_MATMUL, "input:T other:T", 0},
	{"torch.bmm", OP_BMM, "input:T mat2:T", 0},
	{"torch.nn.functional.adaptive_avg_pool2d", OP_ADAPTIVE_AVG_POOL2D, "input:T output_size:a", 0},
	{"torch._C._nn.adaptive_avg_pool2d", OP_ADAPTIVE_AVG_POOL2D, "input:T output_size:a", 0},
	{"torch.nn.functional.scaled_dot_product_attention", OP_SDPA, SDPA_SPEC, 0},
	{"torch._C._nn.scaled_dot_product_attention", OP_SDPA, SDPA_SPEC, 0},
	{"torch.sum", OP_SUM, REDUCE_SPEC, 0},
	{"torch.mean", OP_MEAN, REDUCE_SPEC, 0},
	{"torch.transpose", OP_TRANSPOSE, "input:T dim0:i dim1:i", F_VIEW},
	{"torch.permute", OP_PERMUTE, "input:T dims:V", F_VIEW},
	{"torch.reshape", OP_RESHAPE, "input:T shape:V", F_VIEW},
	{"torch.flatten", OP_FLATTEN, "input:T start_dim:i? end_dim:i?", F_VIEW},
	{"torch.cat", OP_CAT, "tensors:L dim:i?", 0},
	{"torch.concat", OP_CAT, "tensors:L dim:i?", 0},
	{"torch.split", OP_SPLIT, "tensor:T split_size_or_sections>split_size:I dim:i?", F_VIEW | F_TUPLE},
	{"torch.functional.split", OP_SPLIT, "tensor:T split_size_or_sections>split_size:I dim:i?",
	 F_VIEW | F_TUPLE},
	{"torch.chunk", OP_CHUNK, "input:T chunks:i dim:i?", F_VIEW | F_TUPLE},
	{"torch.nn.functional.pad", OP_PAD, "input:T pad:V mode:s? value:f?n", 0},
	{"torch._C._nn.pad", OP_PAD, "input:T pad:V mode:s? value:f?n", 0},
	{"torch.add", OP_ADD, ADD_SPEC, F_ELEM},
	{"torch.sub", OP_SUB, ADD_SPEC, F_ELEM},
	{"torch.subtract", OP_SUB, ADD_SPEC, F_ELEM},
	{"torch.mul", OP_MUL, "input:S other:S", F_ELEM},
	{"torch.multiply", OP_MUL, "input:S other:S", F_ELEM},
	{"torch.div", OP_DIV, "input:S other:S * rounding_mode:Z?", F_ELEM},
	{"torch.divide", OP_DIV, "input:S other:S * rounding_mode:Z?", F_ELEM},
	{"torch.true_divide", OP_DIV, "input:S other:S", F_ELEM},
	{"torch.pow", OP_POW, "input:S exponent:S", F_ELEM},
	{"torch.where", OP_WHERE, "condition:T input:S other:S", 0},
	{"torch.nn.functional.leaky_relu", OP_LEAKY_RELU, "input:T negative_slope:f? inplace:X?", 0},
	{"torch._C._nn.leaky_relu", OP_LEAKY_RELU, "input:T negative_slope:f?", 0},
	{"torch.nn.functional.leaky_relu_", OP_LEAKY_RELU, "input:T negative_slope:f?", F_INPLACE},
	{"torch._C._nn.leaky_relu_", OP_LEAKY_RELU, "input:T negative_slope:f?", F_INPLACE},
	{"torch.unbind", OP_UNBIND, "input:T dim:i?", F_VIEW | F_TUPLE},
	{"torch.tensor_split", OP_TENSOR_SPLIT, TSPLIT_SPEC, F_VIEW | F_TUPLE | F_TSPLIT},
	{"torch.baddbmm", OP_BADDBMM, BADDBMM_SPEC, 0},
	{"torch.nn.functional.avg_pool2d", OP_AVG_POOL2D, AVG_POOL2D_SPEC, 0},
	{"torch._C._nn.avg_pool2d", OP_AVG_POOL2D, AVG_POOL2D_SPEC, 0},
	{NULL, OP_INVALID, NULL, 0}};

/* Methods: self is bound to the first parameter.  A name ending in '_' is the
 * in-place form of the method without it (for the F_ELEM and unary ones). */
static const struct fdef methods[] = {
	{"view", OP_VIEW, "input:T shape:v", F_VIEW},
	{"reshape", OP_RESHAPE, "input:T shape:v", F_VIEW},
	{"transpose", OP_TRANSPOSE, "input:T dim0:i dim1:i", F_VIEW},
	{"permute", OP_PERMUTE, "input:T dims:v", F_VIEW},
	{"contiguous", OP_CONTIGUOUS, "input:T memory_format:-?", F_VIEW},
	{"expand", OP_EXPAND, "input:T size:v implicit:-?", F_VIEW},
	{"flatten", OP_FLATTEN, "input:T start_dim:i? end_dim:i?", F_VIEW},
	{"chunk", OP_CHUNK, "input:T chunks:i dim:i?", F_VIEW | F_TUPLE},
	{"split", OP_SPLIT, "input:T split_size:I dim:i?", F_VIEW | F_TUPLE},
	{"sum", OP_SUM, REDUCE_SPEC, 0},
	{"mean", OP_MEAN, REDUCE_SPEC, 0},
	{"softmax", OP_SOFTMAX, "input:T dim:i dtype:d?n", 0},
	{"sigmoid", OP_SIGMOID, "input:T", 0},
	{"relu", OP_RELU, "input:T", 0},
	{"tanh", OP_TANH, "input:T", 0},
	{"exp", OP_EXP, "input:T", 0},
	{"rsqrt", OP_RSQRT, "input:T", 0},
	{"add", OP_ADD, "input:T other:S * alpha:N?", F_ELEM},
	{"sub", OP_SUB, "input:T other:S * alpha:N?", F_ELEM},
	{"mul", OP_MUL, "input:T other:S", F_ELEM},
	{"div", OP_DIV, "input:T other:S * rounding_mode:Z?", F_ELEM},
	{"pow", OP_POW, "input:T exponent:S", F_ELEM},
	{"matmul", OP_MATMUL, "input:T other:T", 0},
	{"bmm", OP_BMM, "input:T mat2:T", 0},
	{"where", OP_WHERE, "input:S#1 condition:T#0 other:S#2", 0},
	{"unbind", OP_UNBIND, "input:T dim:i?", F_VIEW | F_TUPLE},
	{"tensor_split", OP_TENSOR_SPLIT, TSPLIT_SPEC, F_VIEW | F_TUPLE | F_TSPLIT},
	{"baddbmm", OP_BADDBMM, BADDBMM_SPEC, 0},
	{"unfold", OP_UNFOLD, "input:T dimension:i size:i step:i", F_VIEW},
	{NULL, OP_INVALID, NULL, 0}};

static const char *const inplace_methods[] = {
	"add_", "sub_", "mul_", "div_", "pow_", "sigmoid_", "relu_", "tanh_", "exp_", "rsqrt_", NULL};

/* Casting methods: name -> dtype. */
static const struct {
	const char *name, *dtype;
} cast_methods[] = {
	{"float", "float32"}, {"half", "float16"}, {"bfloat16", "bfloat16"}, {"double", "float64"},
	{"long", "int64"}, {"int", "int32"}, {"bool", "bool"}, {NULL, NULL}};

/* torch.X names that are dtypes (graph names) or are not supported ones. */
static const struct {
	const char *name, *dtype;
} torch_dtypes[] = {
	{"float32", "float32"}, {"float", "float32"}, {"float16", "float16"}, {"half", "float16"},
	{"bfloat16", "bfloat16"}, {"float64", "float64"}, {"double", "float64"},
	{"int64", "int64"}, {"long", "int64"}, {"int32", "int32"}, {"int", "int32"},
	{"bool", "bool"}, {"uint8", NULL}, {"int8", NULL}, {"int16", NULL}, {"short", NULL},
	{"complex64", NULL}, {"complex128", NULL}, {"cfloat", NULL}, {"cdouble", NULL},
	{"float8_e4m3fn", NULL}, {"float8_e5m2", NULL}, {"uint16", NULL}, {"uint32", NULL},
	{"uint64", NULL}, {NULL, NULL}};

/* Python's operators on tensors: symbol -> graph op. */
static const struct {
	const char *sym;
	enum graph_op op;
} operators[] = {
	{"+", OP_ADD}, {"-", OP_SUB}, {"*", OP_MUL}, {"/", OP_DIV}, {"**", OP_POW}, {"@", OP_MATMUL},
	{NULL, OP_INVALID}};

const char *import_call(int i, enum graph_op *op)
{
	static const struct fdef *const tables[] = {funcs, methods};
	for (int t = 0; t < 2; t++)
		for (const struct fdef *f = tables[t]; f->name; f++)
			if (i-- == 0) {
				*op = f->op;
				return f->name;
			}
	for (int k = 0; operators[k].sym; k++)
		if (i-- == 0) {
			*op = operators[k].op;
			return operators[k].sym;
		}
	return NULL;
}

/* ---- evaluation ----------------------------------------------------------------- */

static struct pv *ev_expr(struct prog *p);
static struct pv *ev_exprlist(struct prog *p, const char *close, int is_list);

static int fin_check(struct prog *p, double d)
{
	if (!isfinite(d)) {
		perr(p, p->line, "arithmetic on constants gives a non-finite number");
		return -1;
	}
	return 0;
}

/* Python arithmetic on two numbers. */
static struct pv *fold(struct prog *p, const char *op, const struct pv *a, const struct pv *b)
{
	int ints = a->k != PV_FLOAT && b->k != PV_FLOAT;
	long long x = a->i, y = b->i, r;
	double fx = num_val(a), fy = num_val(b), fr;
	if (!strcmp(op, "+") || !strcmp(op, "-") || !strcmp(op, "*")) {
		if (ints) {
			int ovf = op[0] == '+' ? __builtin_add_overflow(x, y, &r)
				: op[0] == '-' ? __builtin_sub_overflow(x, y, &r)
				: __builtin_mul_overflow(x, y, &r);
			if (ovf)
				return perr(p, p->line, "integer overflow in constant arithmetic");
			return pv_int(p, r);
		}
		fr = op[0] == '+' ? fx + fy : op[0] == '-' ? fx - fy : fx * fy;
		return fin_check(p, fr) ? NULL : pv_float(p, fr);
	}
	if (!strcmp(op, "/")) {
		if (fy == 0)
			return perr(p, p->line, "division by zero");
		fr = fx / fy;
		return fin_check(p, fr) ? NULL : pv_float(p, fr);
	}
	if (!strcmp(op, "//") || !strcmp(op, "%")) {
		if (fy == 0)
			return perr(p, p->line, "division by zero");
		if (ints) {
			if (x == LLONG_MIN && y == -1)
				return perr(p, p->line, "integer overflow in constant arithmetic");
			long long q = x / y, m = x % y;
			if (m != 0 && ((m < 0) != (y < 0))) {
				q -= 1;
				m += y;
			}
			return pv_int(p, op[0] == '/' ? q : m);
		}
		double q = floor(fx / fy);
		fr = op[0] == '/' ? q : fx - q * fy;
		return fin_check(p, fr) ? NULL : pv_float(p, fr);
	}
	if (!strcmp(op, "**")) {
		if (ints && y >= 0) {
			long long acc = 1;
			for (long long k = 0; k < y; k++) {
				if (__builtin_mul_overflow(acc, x, &acc))
					return perr(p, p->line, "integer overflow in constant arithmetic");
				if (acc == 0 || acc == 1)
					break;
				if (acc == -1) {
					acc = ((y - k - 1) % 2 == 0) ? -1 : 1;
					break;
				}
			}
			return pv_int(p, acc);
		}
		if (fx == 0 && fy < 0)
			return perr(p, p->line, "division by zero");
		if (fx < 0 && fy != floor(fy))
			return perr(p, p->line, "negative number to a fractional power");
		fr = pow(fx, fy);
		return fin_check(p, fr) ? NULL : pv_float(p, fr);
	}
	return perr(p, p->line, "unsupported operator '%s' on numbers", op);
}

static const char *binop_name(const char *op)
{
	for (int i = 0; operators[i].sym; i++)
		if (!strcmp(op, operators[i].sym))
			return graph_op_name(operators[i].op);
	return NULL;
}

static int operand_of(struct prog *p, struct pv *v, struct opnd *o, const char *what)
{
	memset(o, 0, sizeof(*o));
	if (is_num(v)) {
		o->k = O_SCALAR;
		o->scalar = const_json(p, v, what, 0);
		return o->scalar ? 0 : -1;
	}
	o->k = O_VALUE;
	o->gv = use_tensor(p, v, what);
	return o->gv < 0 ? -1 : 0;
}

/* a OP b; inplace_self: the tensor object an augmented assignment updates. */
static struct pv *binop(struct prog *p, const char *op, struct pv *a, struct pv *b, int inplace)
{
	if (is_num(a) && is_num(b))
		return fold(p, op, a, b);
	int ta = a->k == PV_TENSOR || a->k == PV_GTUPLE, tb = b->k == PV_TENSOR || b->k == PV_GTUPLE;
	const char *gop = binop_name(op);
	if (!(ta || tb) || !(ta || is_num(a)) || !(tb || is_num(b)))
		return perr(p, p->line, "unsupported operand types for %s: %s and %s", op, kind_name(a),
			    kind_name(b));
	if (gop == NULL)
		return perr(p, p->line, "unsupported operator '%s' on tensors", op);
	if (!strcmp(gop, "matmul") && !(ta && tb))
		return perr(p, p->line, "'@' needs two tensors");
	struct nodebuild nb = {.op = gop, .call = op};
	char what[64];
	snprintf(what, sizeof(what), "operator %s", op);
	if (operand_of(p, a, &nb.ops[0], what) || (nb.nops = 1, operand_of(p, b, &nb.ops[1], what))) {
		nb_free(&nb);
		return NULL;
	}
	nb.nops = 2;
	int g = emit_node(p, &nb, 0, 0);
	if (g < 0)
		return NULL;
	if (inplace && ta) {
		make_inplace(p, a, g);
		return a;
	}
	return tensor_pv(p, g, 0);
}

/* Subscript items -> getitem "index" JSON. */
static json_t *index_json(struct prog *p, struct pv **items, int n)
{
	json_t *arr = json_array();
	if (arr == NULL)
		return oom(p);
	for (int i = 0; i < n; i++) {
		struct pv *v = items[i];
		json_t *e = NULL;
		switch (v->k) {
		case PV_INT: e = json_integer(v->i); break;
		case PV_NONE: e = json_null(); break;
		case PV_ELLIPSIS: e = json_string("..."); break;
		case PV_SLICE:
			e = json_array();
			for (int k = 0; e && k < 3; k++) {
				struct pv *s = v->items[k];
				if (s->k != PV_INT && s->k != PV_NONE) {
					json_decref(e);
					json_decref(arr);
					return perr(p, p->line, "slice bounds must be ints or None, got %s",
						    kind_name(s));
				}
				if (json_array_append_new(e, s->k == PV_INT ? json_integer(s->i) : json_null())) {
					json_decref(e);
					e = NULL;
				}
			}
			break;
		case PV_TENSOR: case PV_SEQ: case PV_BOOL: case PV_GTUPLE:
			json_decref(arr);
			return perr(p, p->line, "indexing with %s (advanced indexing) is not supported",
				    kind_name(v));
		default:
			json_decref(arr);
			return perr(p, p->line, "unsupported index: %s", kind_name(v));
		}
		if (e == NULL || json_array_append_new(arr, e)) {
			json_decref(arr);
			return oom(p);
		}
	}
	return arr;
}

static struct pv *getitem(struct prog *p, struct pv *base, struct pv **items, int n, int tuple_syntax)
{
	if (base->k == PV_SEQ) {
		if (n != 1 || tuple_syntax)
			return perr(p, p->line, "unsupported index on %s", kind_name(base));
		struct pv *ix = items[0];
		if (ix->k == PV_INT) {
			long long k = ix->i < 0 ? ix->i + base->n : ix->i;
			if (k < 0 || k >= base->n)
				return perr(p, p->line, "index %lld out of range for %s of %d items", ix->i,
					    kind_name(base), base->n);
			return base->items[k];
		}
		if (ix->k == PV_SLICE) {
			long long b3[3];
			for (int k = 0; k < 3; k++) {
				if (ix->items[k]->k != PV_INT && ix->items[k]->k != PV_NONE)
					return perr(p, p->line, "slice bounds must be ints or None");
				b3[k] = ix->items[k]->k == PV_INT ? ix->items[k]->i : LLONG_MIN;
			}
			long long step = b3[2] == LLONG_MIN ? 1 : b3[2];
			if (step <= 0)
				return perr(p, p->line, "only positive slice steps are supported on tuples");
			long long lo = b3[0] == LLONG_MIN ? 0 : b3[0], hi = b3[1] == LLONG_MIN ? base->n : b3[1];
			if (lo < 0)
				lo = lo + base->n < 0 ? 0 : lo + base->n;
			if (hi < 0)
				hi = hi + base->n < 0 ? 0 : hi + base->n;
			if (lo > base->n)
				lo = base->n;
			if (hi > base->n)
				hi = base->n;
			int cnt = 0;
			for (long long k = lo; k < hi; k += step)
				cnt++;
			struct pv *r = pv_seq(p, cnt, base->is_list);
			if (r == NULL)
				return NULL;
			cnt = 0;
			for (long long k = lo; k < hi; k += step)
				r->items[cnt++] = base->items[k];
			return r;
		}
		return perr(p, p->line, "unsupported index %s on %s", kind_name(ix), kind_name(base));
	}
	if (base->k == PV_GTUPLE) {
		if (n != 1 || tuple_syntax || items[0]->k != PV_INT)
			return perr(p, p->line, "a tuple op's result can only be indexed with one int");
	} else if (base->k != PV_TENSOR) {
		return perr(p, p->line, "cannot index %s", kind_name(base));
	}
	struct nodebuild nb = {.op = graph_op_name(OP_GETITEM), .call = "[]"};
	if (base->k == PV_GTUPLE) {
		if (p->gv[base->gv].stale_line)
			return perr(p, p->line, "%s is used after an in-place op at line %d changed what it "
				    "splits; not supported", gv_label(p, base->gv), p->gv[base->gv].stale_line);
		nb.ops[0].gv = base->gv;
	} else if ((nb.ops[0].gv = use_tensor(p, base, "[]")) < 0) {
		return NULL;
	}
	nb.ops[0].k = O_VALUE;
	nb.nops = 1;
	json_t *ix = index_json(p, items, n);
	if (ix == NULL || nb_attr(p, &nb, "index", ix)) {
		nb_free(&nb);
		return NULL;
	}
	return tensor_pv(p, emit_node(p, &nb, 1, 0), 0);
}

static struct pv *ev_subscript(struct prog *p, struct pv *base)
{
	struct pv *items[MAX_INDEX];
	int n = 0, comma = 0;
	int line = cur(p)->line;
	while (!is_op(cur(p), "]")) {
		if (n >= MAX_INDEX)
			return perr(p, line, "too many index items");
		struct pv *lo = &PV_NONE_OBJ, *hi = &PV_NONE_OBJ, *st = &PV_NONE_OBJ;
		int is_slice = 0;
		if (!is_op(cur(p), ":")) {
			if ((lo = ev_expr(p)) == NULL)
				return NULL;
		}
		if (accept_op(p, ":")) {
			is_slice = 1;
			if (!is_op(cur(p), ":") && !is_op(cur(p), ",") && !is_op(cur(p), "]"))
				if ((hi = ev_expr(p)) == NULL)
					return NULL;
			if (accept_op(p, ":"))
				if (!is_op(cur(p), ",") && !is_op(cur(p), "]"))
					if ((st = ev_expr(p)) == NULL)
						return NULL;
		}
		if (is_slice) {
			struct pv *s = pv_new(p, PV_SLICE);
			if (s == NULL || (s->items = palloc(p, 3 * sizeof(struct pv *))) == NULL)
				return NULL;
			s->n = 3;
			s->items[0] = lo;
			s->items[1] = hi;
			s->items[2] = st;
			items[n++] = s;
		} else {
			items[n++] = lo;
		}
		if (!accept_op(p, ","))
			break;
		comma = 1;
	}
	if (expect_op(p, "]"))
		return NULL;
	if (n == 0)
		return perr(p, line, "empty subscript");
	/* x[(a, b)] is x[a, b]; x[[a, b]] is advanced indexing */
	if (n == 1 && !comma && items[0]->k == PV_SEQ && base->k != PV_SEQ) {
		struct pv *t = items[0];
		if (t->is_list)
			return perr(p, line, "indexing with a list (advanced indexing) is not supported");
		if (t->n > MAX_INDEX || t->n == 0)
			return perr(p, line, "unsupported index tuple");
		for (int k = 0; k < t->n; k++)
			items[k] = t->items[k];
		n = t->n;
		comma = 1;
	}
	return getitem(p, base, items, n, comma);
}

/* The value of a dotted attribute on a module path: a dtype, or a longer path. */
static struct pv *path_attr(struct prog *p, const char *base, const char *name)
{
	if (!strcmp(base, "torch")) {
		for (int i = 0; torch_dtypes[i].name; i++)
			if (!strcmp(torch_dtypes[i].name, name)) {
				if (torch_dtypes[i].dtype == NULL)
					return perr(p, p->line, "unsupported dtype torch.%s", name);
				struct pv *v = pv_new(p, PV_DTYPE);
				if (v)
					v->s = torch_dtypes[i].dtype;
				return v;
			}
	}
	size_t bl = strlen(base), nl = strlen(name);
	if (bl + nl + 2 > MAX_PATH_LEN)
		return perr(p, p->line, "dotted name too long");
	char *s = palloc(p, bl + nl + 2);
	if (s == NULL)
		return NULL;
	memcpy(s, base, bl);
	s[bl] = '.';
	memcpy(s + bl + 1, name, nl + 1);
	struct pv *v = pv_new(p, PV_PATH);
	if (v)
		v->s = s;
	return v;
}

static struct pv *lookup_name(struct prog *p, const char *name, int line)
{
	if (!strcmp(name, "None"))
		return &PV_NONE_OBJ;
	if (!strcmp(name, "True") || !strcmp(name, "False"))
		return pv_bool(p, name[0] == 'T');
	if (is_keyword(name))
		return perr(p, line, "unsupported syntax: '%s'", name);
	void **slot = smap_get(&p->env, name);
	if (slot) {
		if (*slot == NULL)
			return perr(p, line, "name '%s' is used after del", name);
		return *slot;
	}
	if (!strcmp(name, "Ellipsis"))
		return &PV_ELLIPSIS_OBJ;
	const char *path = NULL;
	void **al = smap_get(&p->aliases, name);
	if (al)
		path = *al;
	else if (!strcmp(name, "torch") || !strcmp(name, "slice") || !strcmp(name, "device"))
		path = name;
	if (path == NULL)
		return perr(p, line, "undefined name '%s'", name);
	struct pv *v = pv_new(p, PV_PATH);
	if (v)
		v->s = path;
	return v;
}

static struct pv *ev_atom(struct prog *p)
{
	struct tok *k = cur(p);
	char b[64];
	switch (k->t) {
	case TK_NAME:
		p->pos++;
		return lookup_name(p, k->s, k->line);
	case TK_INT:
		p->pos++;
		return pv_int(p, k->iv);
	case TK_FLOAT:
		p->pos++;
		return pv_float(p, k->fv);
	case TK_STR: {
		/* adjacent literals concatenate */
		size_t len = 0;
		int q = p->pos;
		for (; p->toks[q].t == TK_STR; q++) {
			if (len + p->toks[q].slen > MAX_TEXT)
				return oom(p);
			len += p->toks[q].slen;
		}
		char *s = palloc(p, len + 1);
		if (s == NULL)
			return NULL;
		len = 0;
		for (; p->pos < q; p->pos++) {
			memcpy(s + len, p->toks[p->pos].s, p->toks[p->pos].slen);
			len += p->toks[p->pos].slen;
		}
		struct pv *v = pv_new(p, PV_STR);
		if (v) {
			v->s = s;
			v->slen = len;
		}
		return v;
	}
	case TK_OP:
		if (is_op(k, "...")) {
			p->pos++;
			return &PV_ELLIPSIS_OBJ;
		}
		if (is_op(k, "(")) {
			p->pos++;
			return ev_exprlist(p, ")", 0);
		}
		if (is_op(k, "[")) {
			p->pos++;
			return ev_exprlist(p, "]", 1);
		}
		if (is_op(k, "{"))
			return perr(p, k->line, "dicts and sets are not supported");
		/* fallthrough */
	default:
		return perr(p, k->line, "unexpected %s", tok_desc(k, b, sizeof(b)));
	}
}

static struct pv *call_value(struct prog *p, struct pv *fn, struct callargs *a);

static struct pv *ev_call(struct prog *p, struct pv *fn)
{
	struct callargs *a = calloc(1, sizeof(*a));
	if (a == NULL)
		return oom(p);
	a->line = cur(p)->line;
	struct pv *res = NULL;
	while (!is_op(cur(p), ")")) {
		if (is_op(cur(p), "*") || is_op(cur(p), "**")) {
			perr(p, cur(p)->line, "starred arguments are not supported");
			goto out;
		}
		if (a->npos + a->nkw >= MAX_ARGS) {
			perr(p, cur(p)->line, "too many arguments");
			goto out;
		}
		if (cur(p)->t == TK_NAME && is_op(&p->toks[p->pos + 1], "=")) {
			const char *kn = cur(p)->s;
			for (int q = 0; q < a->nkw; q++)
				if (!strcmp(a->kwname[q], kn)) {
					perr(p, cur(p)->line, "keyword argument '%s' repeated", kn);
					goto out;
				}
			p->pos += 2;
			struct pv *v = ev_expr(p);
			if (v == NULL)
				goto out;
			a->kwname[a->nkw] = kn;
			a->kw[a->nkw++] = v;
		} else {
			if (a->nkw > 0) {
				perr(p, cur(p)->line, "positional argument after a keyword argument");
				goto out;
			}
			struct pv *v = ev_expr(p);
			if (v == NULL)
				goto out;
			a->pos[a->npos++] = v;
		}
		if (!accept_op(p, ","))
			break;
	}
	if (expect_op(p, ")"))
		goto out;
	res = call_value(p, fn, a);
out:
	free(a);
	return res;
}

static struct pv *ev_primary(struct prog *p)
{
	struct pv *v = ev_atom(p);
	while (v) {
		struct tok *k = cur(p);
		if (is_op(k, ".")) {
			p->pos++;
			struct tok *nm = cur(p);
			char b[64];
			if (nm->t != TK_NAME)
				return perr(p, nm->line, "expected a name after '.', found %s",
					    tok_desc(nm, b, sizeof(b)));
			p->pos++;
			if (v->k == PV_PATH) {
				v = path_attr(p, v->s, nm->s);
			} else if (v->k == PV_TENSOR || v->k == PV_GTUPLE) {
				if (!is_op(cur(p), "("))
					return perr(p, nm->line, "unsupported tensor attribute .%s", nm->s);
				struct pv *m = pv_new(p, PV_METHOD);
				if (m == NULL)
					return NULL;
				m->s = nm->s;
				m->self = v;
				v = m;
			} else {
				return perr(p, nm->line, "unsupported attribute .%s of %s", nm->s, kind_name(v));
			}
		} else if (is_op(k, "(")) {
			p->pos++;
			v = ev_call(p, v);
		} else if (is_op(k, "[")) {
			p->pos++;
			v = ev_subscript(p, v);
		} else {
			break;
		}
	}
	return v;
}

static struct pv *ev_factor(struct prog *p);

static struct pv *ev_power(struct prog *p)
{
	struct pv *a = ev_primary(p);
	if (a && is_op(cur(p), "**")) {
		if (++p->depth > MAX_DEPTH)
			return perr(p, cur(p)->line, "expression nested too deeply");
		p->pos++;
		struct pv *b = ev_factor(p);
		p->depth--;
		return b ? binop(p, "**", a, b, 0) : NULL;
	}
	return a;
}

static struct pv *ev_factor(struct prog *p)
{
	struct tok *k = cur(p);
	if (is_op(k, "-") || is_op(k, "+") || is_op(k, "~")) {
		if (++p->depth > MAX_DEPTH)
			return perr(p, k->line, "expression nested too deeply");
		p->pos++;
		struct pv *v = ev_factor(p);
		p->depth--;
		if (v == NULL)
			return NULL;
		if (k->s[0] == '~')
			return perr(p, k->line, "unsupported operator '~'");
		if (k->s[0] == '+') {
			if (is_num(v) || v->k == PV_TENSOR)
				return v->k == PV_BOOL ? pv_int(p, v->i) : v;
			return perr(p, k->line, "bad operand for unary +: %s", kind_name(v));
		}
		if (v->k == PV_FLOAT)
			return pv_float(p, -v->f);
		if (v->k == PV_INT || v->k == PV_BOOL) {
			if (v->i == LLONG_MIN)
				return perr(p, k->line, "integer overflow");
			return pv_int(p, -v->i);
		}
		if (v->k == PV_TENSOR) {
			/* -x is x * -1: same values, dtype and shape as torch.neg */
			struct pv *m1 = pv_int(p, -1);
			return m1 ? binop(p, "*", v, m1, 0) : NULL;
		}
		return perr(p, k->line, "bad operand for unary -: %s", kind_name(v));
	}
	return ev_power(p);
}

static struct pv *ev_term(struct prog *p)
{
	struct pv *a = ev_factor(p);
	while (a) {
		struct tok *k = cur(p);
		if (!(is_op(k, "*") || is_op(k, "/") || is_op(k, "@") || is_op(k, "//") || is_op(k, "%")))
			break;
		p->pos++;
		struct pv *b = ev_factor(p);
		if (b == NULL)
			return NULL;
		a = binop(p, k->s, a, b, 0);
	}
	return a;
}

static struct pv *ev_expr(struct prog *p)
{
	if (++p->depth > MAX_DEPTH)
		return perr(p, cur(p)->line, "expression nested too deeply");
	struct pv *a = ev_term(p);
	while (a) {
		struct tok *k = cur(p);
		if (!(is_op(k, "+") || is_op(k, "-")))
			break;
		p->pos++;
		struct pv *b = ev_term(p);
		if (b == NULL) {
			a = NULL;
			break;
		}
		a = binop(p, k->s, a, b, 0);
	}
	p->depth--;
	return a;
}

/* expr (',' expr)* [','] up to `close` (consumed; NULL: a statement's end,
 * not consumed).  A comma, or brackets for a list, makes a SEQ. */
static struct pv *ev_exprlist(struct prog *p, const char *close, int is_list)
{
	struct pv *stack[64];
	struct pv **items = stack;
	int n = 0, cap = 64, comma = 0;
	struct pv *res = NULL;
	for (;;) {
		if (close ? is_op(cur(p), close) : cur(p)->t == TK_NEWLINE)
			break;
		struct pv *v = ev_expr(p);
		if (v == NULL)
			goto out;
		if (n == cap) {
			if (cap >= (1 << 24)) {
				perr(p, p->line, "sequence too long");
				goto out;
			}
			struct pv **ni = malloc((size_t)cap * 2 * sizeof(*ni));
			if (ni == NULL) {
				oom(p);
				goto out;
			}
			memcpy(ni, items, (size_t)n * sizeof(*ni));
			if (items != stack)
				free(items);
			items = ni;
			cap *= 2;
		}
		items[n++] = v;
		if (!accept_op(p, ","))
			break;
		comma = 1;
	}
	if (close && expect_op(p, close))
		goto out;
	if (!close && cur(p)->t != TK_NEWLINE) {
		char b[64];
		perr(p, cur(p)->line, "unsupported syntax near %s", tok_desc(cur(p), b, sizeof(b)));
		goto out;
	}
	if (n == 1 && !comma && !is_list) {
		res = items[0];
		goto out;
	}
	if (n == 0 && !close) {
		perr(p, cur(p)->line, "expected an expression");
		goto out;
	}
	res = pv_seq(p, n, is_list);
	if (res)
		memcpy(res->items, items, (size_t)n * sizeof(*items));
out:
	if (items != stack)
		free(items);
	return res;
}

/* ---- calls -------------------------------------------------------------------- */

/* tensor_split's indices_or_sections, as bound, becomes the graph's
 * `sections` (an int) or `indices` (a list of ints).  0, or -1 with the error
 * set when neither or several of the three are given or the kind is wrong. */
static int tsplit_attr(struct prog *p, const char *fname, struct nodebuild *b)
{
	json_t *ios = b->attrs ? json_object_get(b->attrs, "indices_or_sections") : NULL;
	int given = (ios != NULL) + (b->attrs && json_object_get(b->attrs, "sections") != NULL) +
		    (b->attrs && json_object_get(b->attrs, "indices") != NULL);
	if (given != 1) {
		perr(p, p->line, "%s: needs exactly one of indices_or_sections, sections and indices", fname);
		return -1;
	}
	if (ios == NULL)
		return 0;
	json_incref(ios);
	json_object_del(b->attrs, "indices_or_sections");
	int ok = json_is_integer(ios) || json_is_array(ios);
	for (size_t i = 0; ok && json_is_array(ios) && i < json_array_size(ios); i++)
		ok = json_is_integer(json_array_get(ios, i));
	if (!ok) {
		json_decref(ios);
		perr(p, p->line, "%s argument 'indices_or_sections': expected an int or a tuple of ints", fname);
		return -1;
	}
	/* the graph's order: sections/indices before dim */
	json_t *dim = json_object_get(b->attrs, "dim");
	json_incref(dim);
	json_object_del(b->attrs, "dim");
	int rc = nb_attr(p, b, json_is_integer(ios) ? "sections" : "indices", ios);
	if (rc == 0 && dim)
		rc = nb_attr(p, b, "dim", dim);
	else
		json_decref(dim);
	return rc;
}

static struct pv *emit_call(struct prog *p, const struct fdef *f, const char *fname, struct callargs *a,
			    struct pv *self_for_inplace)
{
	struct nodebuild nb = {.op = graph_op_name(f->op)};
	int inplace = 0;
	if (bind_call(p, fname, f->spec, a, &nb, &inplace) || ((f->flags & F_TSPLIT) && tsplit_attr(p, fname, &nb))) {
		nb_free(&nb);
		return NULL;
	}
	if (f->flags & F_ELEM) {
		int any = 0;
		for (int i = 0; i < nb.nops; i++)
			any |= nb.ops[i].k == O_VALUE;
		if (!any) {
			nb_free(&nb);
			return perr(p, p->line, "%s: needs at least one tensor operand", fname);
		}
	}
	int g = emit_node(p, &nb, f->flags & F_VIEW, f->flags & F_TUPLE);
	if (g < 0)
		return NULL;
	if ((inplace || (f->flags & F_INPLACE)) && !(f->flags & F_TUPLE)) {
		struct pv *self = self_for_inplace;
		if (self == NULL && a->npos > 0)
			self = a->pos[0];
		for (int k = 0; self == NULL && k < a->nkw; k++)
			if (!strcmp(a->kwname[k], "input"))
				self = a->kw[k];
		if (self == NULL || self->k != PV_TENSOR)
			return perr(p, p->line, "%s: in-place on %s", fname, self ? kind_name(self) : "nothing");
		make_inplace(p, self, g);
		return self;
	}
	return tensor_pv(p, g, f->flags & F_TUPLE);
}

/* x.to(...), x.type(...), x.float() ... */
static struct pv *call_cast(struct prog *p, struct pv *self, const char *m, struct callargs *a)
{
	const char *dtype = NULL;
	char fname[64];
	snprintf(fname, sizeof(fname), "Tensor.%s", m);
	for (int i = 0; cast_methods[i].name; i++)
		if (!strcmp(cast_methods[i].name, m)) {
			if (a->npos)
				return perr(p, p->line, "%s() takes no positional arguments", fname);
			for (int k = 0; k < a->nkw; k++)
				if (strcmp(a->kwname[k], "memory_format"))
					return perr(p, p->line, "unknown keyword argument '%s' for %s", a->kwname[k],
						    fname);
			dtype = cast_methods[i].dtype;
		}
	if (!strcmp(m, "to") || !strcmp(m, "type")) {
		int is_type = m[0] == 't' && m[1] == 'y';
		for (int k = 0; k < a->npos; k++) {
			struct pv *v = a->pos[k];
			if (v->k == PV_DTYPE && !dtype) {
				dtype = v->s;
			} else if (v->k == PV_STR && is_type && !dtype) {
				enum graph_dtype dt = graph_dtype_parse(v->s);
				if (dt == DT_INVALID || strncmp(v->s, "torch.", 6))
					return perr(p, p->line, "%s: unsupported type '%.40s'", fname, v->s);
				dtype = graph_dtype_name(dt);
			} else if ((v->k == PV_STR || v->k == PV_DEVICE) && !is_type && k == 0) {
				/* a device: no effect on values */
			} else if (v->k == PV_BOOL && k > 0) {
				/* non_blocking, copy */
			} else if (v->k == PV_TENSOR) {
				return perr(p, p->line, "%s(other_tensor) is not supported; use a dtype", fname);
			} else {
				return perr(p, p->line, "%s: unsupported argument %d (%s)", fname, k + 1,
					    kind_name(v));
			}
		}
		for (int k = 0; k < a->nkw; k++) {
			const char *kn = a->kwname[k];
			struct pv *v = a->kw[k];
			if (!strcmp(kn, "dtype")) {
				if (v->k != PV_DTYPE)
					return perr(p, p->line, "%s: dtype must be a torch dtype, got %s", fname,
						    kind_name(v));
				if (dtype)
					return perr(p, p->line, "%s got multiple dtypes", fname);
				dtype = v->s;
			} else if ((!strcmp(kn, "device") && !is_type) || !strcmp(kn, "non_blocking") ||
				   (!strcmp(kn, "copy") && !is_type) || (!strcmp(kn, "memory_format") && !is_type)) {
				/* no effect on values */
			} else {
				return perr(p, p->line, "unknown keyword argument '%s' for %s", kn, fname);
			}
		}
		if (is_type && !dtype)
			return perr(p, p->line, "%s() without a dtype is not supported", fname);
	}
	int g = use_tensor(p, self, fname);
	if (g < 0)
		return NULL;
	if (dtype == NULL)
		return self;    /* only a device move: the same tensor */
	struct nodebuild nb = {.op = graph_op_name(OP_TO), .call = "to"};
	nb.ops[0].k = O_VALUE;
	nb.ops[0].gv = g;
	nb.nops = 1;
	if (nb_attr(p, &nb, "dtype", json_string(dtype))) {
		nb_free(&nb);
		return NULL;
	}
	/* a cast to the same dtype returns self in PyTorch: treat it as a view */
	return tensor_pv(p, emit_node(p, &nb, 1, 0), 0);
}

/* x.unsqueeze(d) / torch.unsqueeze(x, d) as getitem with None. */
static struct pv *call_unsqueeze(struct prog *p, const char *fname, struct pv *self, struct callargs *a,
				 int first)
{
	struct pv *x = self, *d = NULL;
	int npos = a->npos - first;
	if (!self) {
		if (a->npos < 1)
			return perr(p, p->line, "%s: missing argument 'input'", fname);
		x = a->pos[0];
	}
	if (npos == 1 && a->nkw == 0)
		d = a->pos[first];
	else if (npos == 0 && a->nkw == 1 && !strcmp(a->kwname[0], "dim"))
		d = a->kw[0];
	if (d == NULL)
		return perr(p, p->line, "%s takes exactly one argument 'dim'", fname);
	if (d->k != PV_INT)
		return perr(p, p->line, "%s: dim must be an int, got %s", fname, kind_name(d));
	if (d->i > GRAPH_MAX_DIMS || d->i < -GRAPH_MAX_DIMS - 1)
		return perr(p, p->line, "%s: dim %lld out of range", fname, d->i);
	struct pv *items[GRAPH_MAX_DIMS + 2];
	int n = 0;
	struct pv *full = pv_new(p, PV_SLICE);
	if (full == NULL || (full->items = palloc(p, 3 * sizeof(struct pv *))) == NULL)
		return NULL;
	full->n = 3;
	full->items[0] = full->items[1] = full->items[2] = &PV_NONE_OBJ;
	if (d->i >= 0) {
		for (long long k = 0; k < d->i; k++)
			items[n++] = full;
		items[n++] = &PV_NONE_OBJ;
	} else {
		items[n++] = &PV_ELLIPSIS_OBJ;
		items[n++] = &PV_NONE_OBJ;
		for (long long k = 0; k < -d->i - 1; k++)
			items[n++] = full;
	}
	return getitem(p, x, items, n, 1);
}

/* A conv1d attribute (int, one-int tuple or, for padding, a string) as
 * conv2d's pair with `h` for the unit height; strings stay.  NULL (absent)
 * stays absent.  0, or -1 with the error set. */
static int conv1d_pair(struct prog *p, const char *fname, struct nodebuild *b, const char *key, long long h)
{
	json_t *v = b->attrs ? json_object_get(b->attrs, key) : NULL;
	if (v == NULL || json_is_string(v))
		return 0;
	if (json_is_array(v) && json_array_size(v) == 1)
		v = json_array_get(v, 0);
	if (!json_is_integer(v)) {
		perr(p, p->line, "%s argument '%s': expected an int or a 1-tuple of ints%s", fname, key,
		     strcmp(key, "padding") ? "" : " or a string");
		return -1;
	}
	json_t *pair = json_pack("[II]", h, json_integer_value(v));
	return nb_attr(p, b, key, pair);
}

/* torch.conv1d / F.conv1d as conv2d over a unit height, which is how
 * PyTorch itself runs it: x[..., None, :] and w[..., None, :] in, conv2d
 * with (1, s) stride, (0, p) padding, (1, d) dilation, then [..., 0, :]
 * drops the height.  Returns the result or NULL with the error set. */
static struct pv *call_conv1d(struct prog *p, const char *fname, struct callargs *a)
{
	struct nodebuild nb = {.op = graph_op_name(OP_CONV2D)};
	int inplace = 0;
	if (bind_call(p, fname, CONV1D_SPEC, a, &nb, &inplace) || conv1d_pair(p, fname, &nb, "stride", 1) ||
	    conv1d_pair(p, fname, &nb, "padding", 0) || conv1d_pair(p, fname, &nb, "dilation", 1)) {
		nb_free(&nb);
		return NULL;
	}
	struct pv *full = pv_new(p, PV_SLICE);
	if (full == NULL || (full->items = palloc(p, 3 * sizeof(struct pv *))) == NULL) {
		nb_free(&nb);
		return NULL;
	}
	full->n = 3;
	full->items[0] = full->items[1] = full->items[2] = &PV_NONE_OBJ;
	struct pv *zero = pv_int(p, 0);
	struct pv *add_h[3] = {&PV_ELLIPSIS_OBJ, &PV_NONE_OBJ, full}, *drop_h[3] = {&PV_ELLIPSIS_OBJ, zero, full};
	for (int k = 0; k < 2; k++) {
		struct pv *t = zero ? tensor_pv(p, nb.ops[k].gv, 0) : NULL;
		struct pv *u = t ? getitem(p, t, add_h, 3, 1) : NULL;
		if (u == NULL) {
			nb_free(&nb);
			return NULL;
		}
		nb.ops[k].gv = u->gv;
	}
	nb.call = fname;
	struct pv *r = tensor_pv(p, emit_node(p, &nb, 0, 0), 0);
	return r ? getitem(p, r, drop_h, 3, 1) : NULL;
}

/* torch.arange(end) / (start, end, step=1), keywords too; dtype= and the
 * ignored device/layout/pin_memory/requires_grad.  A node with no operands;
 * the numbers keep their kind (the graph infers the dtype from them as
 * PyTorch does).  Returns the result or NULL with the error set. */
static struct pv *call_arange(struct prog *p, const char *fname, struct callargs *a)
{
	static const char *const names[3] = {"start", "end", "step"};
	struct pv *num[3] = {0}, *dtype = NULL;
	int have_end_kw = 0;
	for (int k = 0; k < a->nkw; k++)
		have_end_kw |= !strcmp(a->kwname[k], "end");
	if (a->npos > 3)
		return perr(p, p->line, "%s takes at most 3 positional arguments (%d given)", fname, a->npos);
	if (a->npos == 1 && !have_end_kw)
		num[1] = a->pos[0];
	else
		for (int k = 0; k < a->npos; k++)
			num[k] = a->pos[k];
	for (int k = 0; k < a->nkw; k++) {
		const char *kn = a->kwname[k];
		int q = -1;
		for (int i = 0; i < 3; i++)
			if (!strcmp(kn, names[i]))
				q = i;
		if (q >= 0) {
			if (num[q])
				return perr(p, p->line, "%s got multiple values for argument '%s'", fname, kn);
			num[q] = a->kw[k];
		} else if (!strcmp(kn, "dtype")) {
			if (a->kw[k]->k != PV_DTYPE && a->kw[k]->k != PV_NONE)
				return perr(p, p->line, "%s argument 'dtype': expected a dtype such as torch.float16, "
					    "got %s", fname, kind_name(a->kw[k]));
			dtype = a->kw[k]->k == PV_DTYPE ? a->kw[k] : NULL;
		} else if (strcmp(kn, "device") && strcmp(kn, "layout") && strcmp(kn, "pin_memory") &&
			   strcmp(kn, "requires_grad")) {
			return perr(p, p->line, "unknown keyword argument '%s' for %s", kn, fname);
		}
	}
	if (num[1] == NULL)
		return perr(p, p->line, "%s: missing argument 'end'", fname);
	struct nodebuild nb = {.op = graph_op_name(OP_ARANGE), .call = fname};
	for (int i = 0; i < 3; i++) {
		struct pv *v = num[i];
		if (v == NULL)
			continue;
		if (v->k != PV_INT && v->k != PV_FLOAT) {
			nb_free(&nb);
			return perr(p, p->line, "%s argument '%s': expected a number, got %s", fname, names[i],
				    kind_name(v));
		}
		if (!isfinite(num_val(v))) {
			nb_free(&nb);
			return perr(p, p->line, "%s argument '%s': not a finite number", fname, names[i]);
		}
		if (nb_attr(p, &nb, names[i], v->k == PV_INT ? json_integer(v->i) : json_real(v->f))) {
			nb_free(&nb);
			return NULL;
		}
	}
	if (dtype && nb_attr(p, &nb, "dtype", json_string(dtype->s))) {
		nb_free(&nb);
		return NULL;
	}
	return tensor_pv(p, emit_node(p, &nb, 0, 0), 0);
}

static struct pv *call_value(struct prog *p, struct pv *fn, struct callargs *a)
{
	if (p->meta_mode)
		return perr(p, p->line, "calls are not allowed in weight_meta.py");
	if (fn->k == PV_PATH) {
		const char *name = fn->s;
		if (!strcmp(name, "slice")) {
			if (a->nkw || a->npos < 1 || a->npos > 3)
				return perr(p, p->line, "slice() takes 1 to 3 positional arguments");
			struct pv *s = pv_new(p, PV_SLICE);
			if (s == NULL || (s->items = palloc(p, 3 * sizeof(struct pv *))) == NULL)
				return NULL;
			s->n = 3;
			s->items[0] = s->items[1] = s->items[2] = &PV_NONE_OBJ;
			if (a->npos == 1)
				s->items[1] = a->pos[0];
			else
				for (int k = 0; k < a->npos; k++)
					s->items[k] = a->pos[k];
			for (int k = 0; k < 3; k++)
				if (s->items[k]->k != PV_INT && s->items[k]->k != PV_NONE)
					return perr(p, p->line, "slice() bounds must be ints or None, got %s",
						    kind_name(s->items[k]));
			return s;
		}
		if (!strcmp(name, "device") || !strcmp(name, "torch.device"))
			return pv_new(p, PV_DEVICE);
		if (!strcmp(name, "torch.unsqueeze"))
			return call_unsqueeze(p, name, NULL, a, 1);
		if (!strcmp(name, "torch.conv1d") || !strcmp(name, "torch.nn.functional.conv1d"))
			return call_conv1d(p, name, a);
		if (!strcmp(name, "torch.arange"))
			return call_arange(p, name, a);
		for (int i = 0; funcs[i].name; i++)
			if (!strcmp(funcs[i].name, name))
				return emit_call(p, &funcs[i], name, a, NULL);
		return perr(p, p->line, "unsupported call %s", name);
	}
	if (fn->k == PV_METHOD) {
		const char *m = fn->s;
		struct pv *self = fn->self;
		char fname[80];
		snprintf(fname, sizeof(fname), "Tensor.%.40s", m);
		if (self->k == PV_GTUPLE)
			return perr(p, p->line,
				    "%s: %s is a tuple (a split, chunk, unbind or tensor_split result); index or "
				    "unpack it first",
				    fname, gv_label(p, self->gv));
		if (!strcmp(m, "unsqueeze"))
			return call_unsqueeze(p, fname, self, a, 0);
		if (!strcmp(m, "to") || !strcmp(m, "type"))
			return call_cast(p, self, m, a);
		for (int i = 0; cast_methods[i].name; i++)
			if (!strcmp(cast_methods[i].name, m))
				return call_cast(p, self, m, a);
		if (!strcmp(m, "view") && a->npos == 1 && a->pos[0]->k == PV_DTYPE)
			return perr(p, p->line, "Tensor.view(dtype) (a bit cast) is not supported");
		size_t ml = strlen(m);
		int inplace = 0;
		char base[48];
		for (int i = 0; inplace_methods[i]; i++)
			if (!strcmp(inplace_methods[i], m))
				inplace = 1;
		snprintf(base, sizeof(base), "%.*s", (int)(inplace ? ml - 1 : ml), m);
		for (int i = 0; methods[i].name; i++) {
			if (strcmp(methods[i].name, base))
				continue;
			if (a->npos >= MAX_ARGS)
				return perr(p, p->line, "too many arguments");
			struct callargs *b = malloc(sizeof(*b));
			if (b == NULL)
				return oom(p);
			*b = *a;
			b->pos[0] = self;
			memcpy(b->pos + 1, a->pos, (size_t)a->npos * sizeof(a->pos[0]));
			b->npos = a->npos + 1;
			struct fdef f = methods[i];
			if (inplace)
				f.flags |= F_INPLACE;
			struct pv *r = emit_call(p, &f, fname, b, self);
			free(b);
			return r;
		}
		return perr(p, p->line, "unsupported call %s", fname);
	}
	return perr(p, p->line, "%s is not callable", kind_name(fn));
}

/* ---- statements ---------------------------------------------------------------- */

/* Names the values created by the statement: `target` for `result`, the
 * rest from their hint or target_op. */
static int name_new_values(struct prog *p, const char *target, struct pv *result)
{
	if (result && (result->k == PV_TENSOR || result->k == PV_GTUPLE) &&
	    result->gv >= p->stmt_first_gv && !p->gv[result->gv].name && target) {
		if ((p->gv[result->gv].name = fresh_name(p, target)) == NULL)
			return -1;
	}
	for (int g = p->stmt_first_gv; g < p->ngv; g++) {
		if (p->gv[g].name)
			continue;
		char base[MAX_NAME_LEN + 1];
		if (p->gv[g].hint)
			snprintf(base, sizeof(base), "%s", p->gv[g].hint);
		else
			snprintf(base, sizeof(base), "%.60s_%s", target ? target : "tmp",
				 p->nodes[p->gv[g].node].op);
		if ((p->gv[g].name = fresh_name(p, base)) == NULL)
			return -1;
	}
	return 0;
}

static int bind_name(struct prog *p, const char *name, struct pv *v)
{
	if (smap_put(&p->env, name, v)) {
		oom(p);
		return -1;
	}
	return 0;
}

/* Parses the target list in [s, e): NAME or NAME, NAME (maybe bracketed). */
static int parse_targets(struct prog *p, int s, int e, const char **names, int max, int *n, int *is_tuple)
{
	*n = 0;
	*is_tuple = 0;
	if (s < e && (is_op(&p->toks[s], "(") || is_op(&p->toks[s], "[")) &&
	    is_op(&p->toks[e - 1], is_op(&p->toks[s], "(") ? ")" : "]")) {
		s++;
		e--;
		*is_tuple = 1;
	}
	for (int i = s; i < e; i++) {
		struct tok *k = &p->toks[i];
		if (k->t != TK_NAME || is_keyword(k->s)) {
			char b[64];
			perr(p, k->line, "unsupported assignment target near %s", tok_desc(k, b, sizeof(b)));
			return -1;
		}
		if (*n >= max) {
			perr(p, k->line, "too many assignment targets");
			return -1;
		}
		names[(*n)++] = k->s;
		if (i + 1 < e) {
			if (!is_op(&p->toks[i + 1], ",")) {
				char b[64];
				perr(p, p->toks[i + 1].line, "unsupported assignment target near %s",
				     tok_desc(&p->toks[i + 1], b, sizeof(b)));
				return -1;
			}
			*is_tuple = 1;
			i++;
		}
	}
	if (*n == 0) {
		perr(p, p->toks[s < e ? s : e].line, "empty assignment target");
		return -1;
	}
	return 0;
}

/* `a, b, c = x.unbind(0)`: a getitem per name on the tuple op's result,
 * whose length the graph only knows after inference: the tuple's node
 * records the count, and import_build() checks it then.  Returns a Python
 * tuple of the n elements, or NULL with the error set. */
static struct pv *unpack_gtuple(struct prog *p, struct pv *t, int n, int line)
{
	struct gnode *node = &p->nodes[p->gv[t->gv].node];
	if (node->unpacked)
		return perr(p, line, "%s is unpacked a second time (first at line %d); not supported",
			    gv_label(p, t->gv), node->unpack_line);
	struct pv *seq = pv_seq(p, n, 0);
	if (seq == NULL)
		return NULL;
	for (int k = 0; k < n; k++) {
		struct pv *ix = pv_int(p, k);
		if (ix == NULL || (seq->items[k] = getitem(p, t, &ix, 1, 0)) == NULL)
			return NULL;
	}
	node = &p->nodes[p->gv[t->gv].node];    /* getitem may have moved the array */
	node->unpacked = n;
	node->unpack_line = line;
	return seq;
}

static int exec_assign(struct prog *p, const struct lline *L, int *eqs, int neq)
{
	p->pos = eqs[neq - 1] + 1;
	struct pv *v = ev_exprlist(p, NULL, 0);
	if (v == NULL)
		return -1;
	const char *first = NULL;
	for (int q = 0; q < neq; q++) {
		int s = q == 0 ? L->start : eqs[q - 1] + 1, e = eqs[q];
		const char *names[64];
		int n, tup;
		if (parse_targets(p, s, e, names, 64, &n, &tup))
			return -1;
		if (!first)
			first = names[0];
		if (!tup) {
			if (bind_name(p, names[0], v))
				return -1;
			continue;
		}
		if (v->k == PV_GTUPLE && (v = unpack_gtuple(p, v, n, L->line)) == NULL)
			return -1;
		if (v->k != PV_SEQ) {
			perr(p, L->line, "cannot unpack %s", kind_name(v));
			return -1;
		}
		if (v->n != n) {
			perr(p, L->line, "cannot unpack %d values into %d names", v->n, n);
			return -1;
		}
		for (int k = 0; k < n; k++)
			if (bind_name(p, names[k], v->items[k]))
				return -1;
		/* name each unpacked result after its own target */
		for (int k = 0; k < n; k++) {
			struct pv *e = v->items[k];
			if ((e->k == PV_TENSOR || e->k == PV_GTUPLE) && e->gv >= p->stmt_first_gv &&
			    !p->gv[e->gv].name && (p->gv[e->gv].name = fresh_name(p, names[k])) == NULL)
				return -1;
		}
	}
	return name_new_values(p, first, v);
}

static int exec_augassign(struct prog *p, const struct lline *L, int at)
{
	struct tok *t = &p->toks[L->start];
	if (at != L->start + 1 || t->t != TK_NAME || is_keyword(t->s)) {
		perr(p, L->line, "unsupported augmented assignment target");
		return -1;
	}
	char op[3] = {0};
	const char *aop = p->toks[at].s;
	if (!strcmp(aop, "+=") || !strcmp(aop, "-=") || !strcmp(aop, "*=") || !strcmp(aop, "/="))
		op[0] = aop[0];
	else {
		perr(p, L->line, "unsupported operator '%s'", aop);
		return -1;
	}
	struct pv *a = lookup_name(p, t->s, L->line);
	if (a == NULL)
		return -1;
	p->pos = at + 1;
	struct pv *b = ev_exprlist(p, NULL, 0);
	if (b == NULL)
		return -1;
	struct pv *r = binop(p, op, a, b, a->k == PV_TENSOR);
	if (r == NULL)
		return -1;
	if (bind_name(p, t->s, r))
		return -1;
	return name_new_values(p, t->s, r);
}

static int exec_return(struct prog *p, const struct lline *L)
{
	p->pos = L->start + 1;
	if (p->toks[p->pos].t == TK_NEWLINE) {
		perr(p, L->line, "forward() must return tensors");
		return -1;
	}
	struct pv *v = ev_exprlist(p, NULL, 0);
	if (v == NULL)
		return -1;
	if (name_new_values(p, "out", v))
		return -1;
	int n = v->k == PV_SEQ ? v->n : 1;
	if (n == 0) {
		perr(p, L->line, "forward() returns nothing");
		return -1;
	}
	p->outputs = palloc(p, (size_t)n * sizeof(int));
	if (p->outputs == NULL)
		return -1;
	for (int k = 0; k < n; k++) {
		struct pv *e = v->k == PV_SEQ ? v->items[k] : v;
		char what[48];
		snprintf(what, sizeof(what), "return value %d", k + 1);
		int g = use_tensor(p, e, what);
		if (g < 0)
			return -1;
		p->outputs[p->nout++] = g;
	}
	/* graph outputs are distinct values: a tensor returned twice gets a
	 * contiguous() copy per repeat (the values are equal either way) */
	for (int k = 0; k < p->nout; k++) {
		int g = p->outputs[k], dup = 0;
		for (int q = 0; q < k; q++)
			dup |= p->outputs[q] == g;
		if (!dup)
			continue;
		struct nodebuild nb = {.op = graph_op_name(OP_CONTIGUOUS), .call = "return"};
		nb.ops[0].k = O_VALUE;
		nb.ops[0].gv = g;
		nb.nops = 1;
		int c = emit_node(p, &nb, 0, 0);
		if (c < 0)
			return -1;
		char base[MAX_NAME_LEN + 1];
		snprintf(base, sizeof(base), "%.80s_out%d", p->gv[g].name, k);
		if ((p->gv[c].name = fresh_name(p, base)) == NULL)
			return -1;
		p->outputs[k] = c;
		p->nodes[p->gv[c].node].dup_output = 1;
	}
	return 0;
}

static int exec_stmt(struct prog *p, const struct lline *L)
{
	struct tok *t = &p->toks[L->start];
	p->line = L->line;
	p->stmt_first_gv = p->ngv;
	p->depth = 0;
	if (is_kw(t, "pass"))
		return L->end == L->start + 1 ? 0 : (perr(p, L->line, "unsupported syntax after pass"), -1);
	if (is_kw(t, "del")) {
		for (int i = L->start + 1; i < L->end; i++) {
			struct tok *k = &p->toks[i];
			if (is_op(k, ","))
				continue;
			if (k->t != TK_NAME || is_keyword(k->s)) {
				perr(p, L->line, "unsupported del target");
				return -1;
			}
			void **slot = smap_get(&p->env, k->s);
			if (slot == NULL || *slot == NULL) {
				perr(p, L->line, "del of undefined name '%s'", k->s);
				return -1;
			}
			*slot = NULL;
		}
		return 0;
	}
	if (t->t == TK_NAME && is_keyword(t->s) && !is_kw(t, "None") && !is_kw(t, "True") &&
	    !is_kw(t, "False")) {
		perr(p, L->line, "unsupported statement '%s'", t->s);
		return -1;
	}
	int eqs[64], neq = 0, depth = 0;
	for (int i = L->start; i < L->end; i++) {
		struct tok *k = &p->toks[i];
		if (k->t != TK_OP)
			continue;
		if (strchr("([{", k->s[0]) && !k->s[1])
			depth++;
		else if (strchr(")]}", k->s[0]) && !k->s[1])
			depth--;
		else if (depth == 0 && !strcmp(k->s, "=")) {
			if (neq >= 64) {
				perr(p, L->line, "too many chained assignments");
				return -1;
			}
			eqs[neq++] = i;
		} else if (depth == 0 && strlen(k->s) >= 2 && k->s[strlen(k->s) - 1] == '=' &&
			   strcmp(k->s, "==") && strcmp(k->s, "<=") && strcmp(k->s, ">=") && strcmp(k->s, "!=")) {
			if (neq) {
				perr(p, L->line, "unsupported syntax '%s'", k->s);
				return -1;
			}
			return exec_augassign(p, L, i);
		}
	}
	if (neq)
		return exec_assign(p, L, eqs, neq);
	/* an expression statement: a docstring or an in-place call */
	p->pos = L->start;
	struct pv *v = ev_exprlist(p, NULL, 0);
	if (v == NULL)
		return -1;
	if (v->k == PV_STR)
		return 0;
	/* name what it created after the tensor it changed */
	if (v->k == PV_TENSOR && v->gv >= p->stmt_first_gv && p->gv[v->gv].hint)
		return name_new_values(p, NULL, NULL);
	perr(p, L->line, "expression statement has no effect (only in-place calls are allowed)");
	return -1;
}

/* NAME ('.' NAME)* at *i into buf; 0 or -1. */
static int read_dotted(struct prog *p, int *i, int end, char *buf, size_t len)
{
	size_t bl = 0;
	for (;;) {
		if (*i >= end || p->toks[*i].t != TK_NAME || is_keyword(p->toks[*i].s))
			return -1;
		size_t nl = strlen(p->toks[*i].s);
		if (bl + nl + 2 > len)
			return -1;
		memcpy(buf + bl, p->toks[*i].s, nl + 1);
		bl += nl;
		(*i)++;
		if (*i < end && is_op(&p->toks[*i], ".")) {
			buf[bl++] = '.';
			buf[bl] = 0;
			(*i)++;
			continue;
		}
		return 0;
	}
}

static int put_alias(struct prog *p, const char *name, const char *path)
{
	char *s = arena_strndup(&p->ar, path, strlen(path));
	if (s == NULL || smap_put(&p->aliases, name, s)) {
		oom(p);
		return -1;
	}
	return 0;
}

/* `import a.b [as c], ...`, `from a.b import c [as d], ...`: records aliases
 * (`import torch.nn` binds nothing new: torch is always known). */
static int exec_import(struct prog *p, const struct lline *L)
{
	int i = L->start + 1, end = L->end;
	char mod[MAX_PATH_LEN], full[2 * MAX_PATH_LEN + 2];
	if (is_kw(&p->toks[L->start], "from")) {
		if (read_dotted(p, &i, end, mod, sizeof(mod)) || i >= end || !is_kw(&p->toks[i], "import"))
			goto bad;
		i++;
		for (;;) {
			if (i >= end || p->toks[i].t != TK_NAME || is_keyword(p->toks[i].s))
				goto bad;
			const char *name = p->toks[i++].s, *bind = name;
			if (i < end && is_kw(&p->toks[i], "as")) {
				if (i + 1 >= end || p->toks[i + 1].t != TK_NAME || is_keyword(p->toks[i + 1].s))
					goto bad;
				bind = p->toks[i + 1].s;
				i += 2;
			}
			snprintf(full, sizeof(full), "%s.%s", mod, name);
			if (strlen(full) >= MAX_PATH_LEN || put_alias(p, bind, full))
				goto bad;
			if (i >= end)
				return 0;
			if (!is_op(&p->toks[i], ","))
				goto bad;
			i++;
		}
	}
	for (;;) {
		if (read_dotted(p, &i, end, mod, sizeof(mod)))
			goto bad;
		if (i < end && is_kw(&p->toks[i], "as")) {
			if (i + 1 >= end || p->toks[i + 1].t != TK_NAME || is_keyword(p->toks[i + 1].s))
				goto bad;
			if (put_alias(p, p->toks[i + 1].s, mod))
				return -1;
			i += 2;
		}
		if (i >= end)
			return 0;
		if (!is_op(&p->toks[i], ","))
			goto bad;
		i++;
	}
bad:
	if (!p->failed)
		perr(p, L->line, "unsupported import statement");
	return -1;
}

/* `def forward(self, a, b: T, ...) [-> T]:` -> forward arguments. */
static int parse_forward_header(struct prog *p, const struct lline *L)
{
	p->pos = L->start + 2;
	if (expect_op(p, "("))
		return -1;
	int n = 0;
	while (!is_op(cur(p), ")")) {
		struct tok *k = cur(p);
		if (is_op(k, "*") || is_op(k, "**") || is_op(k, "/")) {
			perr(p, k->line, "forward(): starred or positional-only parameters are not supported");
			return -1;
		}
		if (k->t != TK_NAME || is_keyword(k->s)) {
			char b[64];
			perr(p, k->line, "forward(): expected a parameter name, found %s", tok_desc(k, b, sizeof(b)));
			return -1;
		}
		p->pos++;
		if (accept_op(p, ":")) {
			/* skip the annotation */
			int d = 0;
			while (cur(p)->t != TK_NEWLINE && !(d == 0 && (is_op(cur(p), ",") || is_op(cur(p), ")") ||
								      is_op(cur(p), "=")))) {
				if (is_op(cur(p), "(") || is_op(cur(p), "[") || is_op(cur(p), "{"))
					d++;
				else if (is_op(cur(p), ")") || is_op(cur(p), "]") || is_op(cur(p), "}"))
					d--;
				p->pos++;
			}
		}
		if (is_op(cur(p), "=")) {
			perr(p, k->line, "forward(): default values are not supported");
			return -1;
		}
		if (n == 0) {
			if (strcmp(k->s, "self")) {
				perr(p, k->line, "forward(): the first parameter must be self");
				return -1;
			}
		} else {
			if (smap_get(&p->env, k->s)) {
				perr(p, k->line, "forward(): duplicate parameter '%s'", k->s);
				return -1;
			}
			int g = gv_new(p, -1, -1);
			if (g < 0)
				return -1;
			p->gv[g].py = k->s;
			if ((p->gv[g].name = fresh_name(p, k->s)) == NULL)
				return -1;
			struct pv *v = tensor_pv(p, g, 0);
			if (v == NULL || bind_name(p, k->s, v))
				return -1;
			p->nargs++;
		}
		n++;
		if (!accept_op(p, ","))
			break;
	}
	if (expect_op(p, ")"))
		return -1;
	if (accept_op(p, "->")) {
		while (cur(p)->t != TK_NEWLINE && !is_op(cur(p), ":"))
			p->pos++;
	}
	if (expect_op(p, ":"))
		return -1;
	if (cur(p)->t != TK_NEWLINE) {
		perr(p, L->line, "forward(): the body must start on the next line");
		return -1;
	}
	if (n == 0) {
		perr(p, L->line, "forward() has no self parameter");
		return -1;
	}
	return 0;
}

static int is_class_header(struct prog *p, const struct lline *L)
{
	struct tok *k = &p->toks[L->start];
	if (!is_kw(k, "class"))
		return 0;
	if (L->end - L->start < 3 || p->toks[L->start + 1].t != TK_NAME || !is_op(&p->toks[L->end - 1], ":"))
		return -1;
	return 1;
}

static int parse_model(struct prog *p)
{
	if (tokenize(p))
		return -1;
	int L = 0, have_forward = 0;
	while (L < p->nlines) {
		struct lline *ln = &p->lines[L];
		struct tok *t = &p->toks[ln->start];
		p->line = ln->line;
		if (ln->indent != 0) {
			perr(p, ln->line, "unexpected indent");
			return -1;
		}
		if (is_kw(t, "import") || is_kw(t, "from")) {
			if (exec_import(p, ln))
				return -1;
			L++;
			continue;
		}
		if (t->t == TK_STR && ln->end == ln->start + 1) {
			L++;     /* a docstring */
			continue;
		}
		int ch = is_class_header(p, ln);
		if (ch <= 0) {
			perr(p, ln->line, ch < 0 ? "unsupported class header" :
			     "unsupported top-level statement (expected import or class GraphModule)");
			return -1;
		}
		L++;
		if (L >= p->nlines || p->lines[L].indent == 0) {
			perr(p, ln->line, "class has no body");
			return -1;
		}
		int body = p->lines[L].indent;
		while (L < p->nlines && p->lines[L].indent > 0) {
			struct lline *m = &p->lines[L];
			struct tok *k = &p->toks[m->start];
			p->line = m->line;
			if (m->indent != body) {
				perr(p, m->line, "unexpected indent");
				return -1;
			}
			if (is_kw(k, "pass") || (k->t == TK_STR && m->end == m->start + 1)) {
				L++;
				continue;
			}
			if (!is_kw(k, "def") || m->end - m->start < 2 || p->toks[m->start + 1].t != TK_NAME) {
				perr(p, m->line, "unsupported statement in the class body (only def forward)");
				return -1;
			}
			int is_fwd = !strcmp(p->toks[m->start + 1].s, "forward");
			L++;
			if (!is_fwd) {
				/* another method: not run by forward(), so skipped */
				while (L < p->nlines && p->lines[L].indent > body)
					L++;
				continue;
			}
			if (have_forward) {
				perr(p, m->line, "more than one forward()");
				return -1;
			}
			have_forward = 1;
			if (parse_forward_header(p, m))
				return -1;
			if (L >= p->nlines || p->lines[L].indent <= body) {
				perr(p, m->line, "forward() has no body");
				return -1;
			}
			int fb = p->lines[L].indent, returned = 0;
			while (L < p->nlines && p->lines[L].indent > body) {
				struct lline *s = &p->lines[L];
				p->line = s->line;
				if (s->indent != fb) {
					perr(p, s->line, "unexpected indent (blocks are not supported)");
					return -1;
				}
				if (returned) {
					perr(p, s->line, "statement after return");
					return -1;
				}
				if (is_kw(&p->toks[s->start], "return")) {
					p->stmt_first_gv = p->ngv;
					p->depth = 0;
					if (exec_return(p, s))
						return -1;
					returned = 1;
				} else if (exec_stmt(p, s)) {
					return -1;
				}
				L++;
			}
			if (!returned) {
				perr(p, m->line, "forward() has no return statement");
				return -1;
			}
		}
	}
	if (!have_forward) {
		perr(p, 0, "no class with a forward() method");
		return -1;
	}
	return 0;
}

/* ---- weight_meta.py ----------------------------------------------------------- */

static int meta_number(struct prog *p, struct pv *v, const char *cls, const char *field, int line,
		       double *out, int *is_int)
{
	if (v->k != PV_INT && v->k != PV_FLOAT) {
		perr(p, line, "class %s: %s must be a number or None, got %s", cls, field, kind_name(v));
		return -1;
	}
	*out = num_val(v);
	*is_int = v->k == PV_INT;
	if (!isfinite(*out)) {
		perr(p, line, "class %s: %s is not finite", cls, field);
		return -1;
	}
	return 0;
}

static int meta_entry_set(struct prog *p, struct meta_entry *e, const char *cls, const char *field,
			  struct pv *v, int line)
{
	static const char *const nums[] = {"mean", "std", "min_val", "max_val"};
	if (!strcmp(field, "name")) {
		if (v->k != PV_STR || v->slen == 0 || strlen(v->s) != v->slen) {
			perr(p, line, "class %s: name must be a string", cls);
			return -1;
		}
		e->name = v->s;
		return 0;
	}
	if (!strcmp(field, "shape")) {
		if (v->k != PV_SEQ) {
			perr(p, line, "class %s: shape must be a list of ints", cls);
			return -1;
		}
		if (v->n > GRAPH_MAX_DIMS) {
			perr(p, line, "class %s: shape has %d dims (at most %d)", cls, v->n, GRAPH_MAX_DIMS);
			return -1;
		}
		for (int k = 0; k < v->n; k++) {
			if (v->items[k]->k != PV_INT || v->items[k]->i < 0) {
				perr(p, line, "class %s: shape must be a list of ints >= 0", cls);
				return -1;
			}
			e->shape[k] = v->items[k]->i;
		}
		e->ndim = v->n;
		return 0;
	}
	if (!strcmp(field, "dtype")) {
		const char *s = v->k == PV_STR ? v->s : v->k == PV_DTYPE ? v->s : NULL;
		enum graph_dtype dt = s ? graph_dtype_parse(s) : DT_INVALID;
		if (s == NULL) {
			perr(p, line, "class %s: dtype must be a string like \"torch.float32\"", cls);
			return -1;
		}
		if (dt == DT_INVALID) {
			perr(p, line, "class %s: unsupported dtype '%.40s'", cls, s);
			return -1;
		}
		e->dtype = graph_dtype_name(dt);
		return 0;
	}
	for (int k = 0; k < 4; k++)
		if (!strcmp(field, nums[k])) {
			if (v->k == PV_NONE) {
				e->has[k] = 0;
				return 0;
			}
			e->has[k] = 1;
			return meta_number(p, v, cls, field, line, &e->num[k], &e->num_is_int[k]);
		}
	if (!strcmp(field, "data")) {
		if (v->k == PV_NONE) {
			e->data = NULL;
			return 0;
		}
		if (v->k != PV_SEQ) {
			perr(p, line, "class %s: data must be a list of numbers", cls);
			return -1;
		}
		e->data = v;
		return 0;
	}
	return 0;       /* original_name, device, ...: not needed */
}

static int parse_meta(struct prog *p)
{
	if (tokenize(p))
		return -1;
	p->meta_mode = 1;
	int L = 0, cap = 0;
	while (L < p->nlines) {
		struct lline *ln = &p->lines[L];
		struct tok *t = &p->toks[ln->start];
		p->line = ln->line;
		if (ln->indent != 0) {
			perr(p, ln->line, "unexpected indent");
			return -1;
		}
		if (is_kw(t, "import") || is_kw(t, "from")) {
			L++;
			continue;
		}
		if (is_class_header(p, ln) <= 0) {
			perr(p, ln->line, "unsupported statement (weight_meta.py holds classes of field = value)");
			return -1;
		}
		const char *cls = p->toks[ln->start + 1].s;
		if (grow(p, (void **)&p->meta, &cap, p->nmeta, sizeof(struct meta_entry), MAX_VALUES))
			return -1;
		struct meta_entry *e = &p->meta[p->nmeta++];
		memset(e, 0, sizeof(*e));
		e->line = ln->line;
		e->ndim = -1;
		L++;
		int body = L < p->nlines ? p->lines[L].indent : 0;
		if (body == 0) {
			perr(p, ln->line, "class %s has no body", cls);
			return -1;
		}
		for (; L < p->nlines && p->lines[L].indent > 0; L++) {
			struct lline *m = &p->lines[L];
			struct tok *k = &p->toks[m->start];
			p->line = m->line;
			if (m->indent != body) {
				perr(p, m->line, "unexpected indent");
				return -1;
			}
			if (is_kw(k, "pass") || (k->t == TK_STR && m->end == m->start + 1))
				continue;
			if (k->t != TK_NAME || is_keyword(k->s) || m->end - m->start < 3 ||
			    !is_op(&p->toks[m->start + 1], "=")) {
				perr(p, m->line, "class %s: expected field = value", cls);
				return -1;
			}
			p->pos = m->start + 2;
			p->depth = 0;
			struct pv *v = ev_exprlist(p, NULL, 0);
			if (v == NULL || meta_entry_set(p, e, cls, k->s, v, m->line))
				return -1;
		}
		if (e->name == NULL || e->ndim < 0 || e->dtype == NULL) {
			perr(p, e->line, "class %s: needs name, shape and dtype", cls);
			return -1;
		}
		void **prev = smap_get(&p->names, e->name);
		if (prev) {
			perr(p, e->line, "class %s: a second entry for '%s' (first at line %d)", cls, e->name,
			     ((struct meta_entry *)p->meta)[(intptr_t)*prev - 1].line);
			return -1;
		}
		if (smap_put(&p->names, e->name, (void *)(intptr_t)p->nmeta)) {
			oom(p);
			return -1;
		}
	}
	return 0;
}

/* The weight_meta entry of each forward argument (index into w->meta, or -1). */
static int *map_args(struct prog *m, struct prog *w)
{
	int *map = palloc(w, (size_t)(m->nargs ? m->nargs : 1) * sizeof(int));
	if (map == NULL)
		return NULL;
	for (int i = 0; i < m->nargs; i++) {
		void **slot = smap_get(&w->names, m->gv[i].py);
		map[i] = slot ? (int)(intptr_t)*slot - 1 : -1;
	}
	return map;
}

/* ---- programs ------------------------------------------------------------------ */

static void prog_free(struct prog *p)
{
	if (p == NULL)
		return;
	for (int i = 0; i < p->nnodes; i++) {
		for (int k = 0; k < p->nodes[i].nops; k++)
			json_decref(p->nodes[i].ops[k].scalar);
		json_decref(p->nodes[i].attrs);
	}
	free(p->nodes);
	free(p->gv);
	free(p->toks);
	free(p->meta);
	smap_free(&p->env);
	smap_free(&p->aliases);
	smap_free(&p->names);
	smap_free(&p->suffix);
	arena_free(&p->ar);
}

/* Drops nodes whose values nothing uses, then unused arguments; warns. */
static void prune(struct prog *p, const struct import_options *opt)
{
	for (int i = 0; i < p->nout; i++)
		p->gv[p->outputs[i]].used = 1;
	for (int i = p->nnodes - 1; i >= 0; i--) {
		struct gnode *n = &p->nodes[i];
		if (!p->gv[n->value].used) {
			n->alive = 0;
			continue;
		}
		for (int k = 0; k < n->nops; k++)
			if (n->ops[k].k == O_VALUE)
				p->gv[n->ops[k].gv].used = 1;
	}
	char msg[512];
	for (int i = 0; i < p->nnodes; i++)
		if (p->nodes[i].dup_output && opt && opt->warn) {
			struct gnode *n = &p->nodes[i];
			snprintf(msg, sizeof(msg), "%s:%d: %s is returned more than once; the repeat is the copy %s",
				 p->label, n->line, p->gv[n->ops[0].gv].name, p->gv[n->value].name);
			opt->warn(opt->warn_ctx, msg);
		}
	for (int i = 0; i < p->nnodes; i++)
		if (!p->nodes[i].alive && opt && opt->warn) {
			snprintf(msg, sizeof(msg), "%s:%d: %s (%s) is never used; dropped", p->label,
				 p->nodes[i].line, p->gv[p->nodes[i].value].name, p->nodes[i].op);
			opt->warn(opt->warn_ctx, msg);
		}
	for (int i = 0; i < p->nargs; i++)
		if (!p->gv[i].used && opt && opt->warn) {
			snprintf(msg, sizeof(msg), "%s: forward argument %s is never used; dropped", p->label,
				 p->gv[i].py);
			opt->warn(opt->warn_ctx, msg);
		}
}

/* Compares the structure of two programs; 0 or -1 with the first difference. */
static int compare_progs(const struct prog *a, const struct prog *b, const char *an, const char *bn,
			 char *err, size_t errlen)
{
	if (a->nargs != b->nargs) {
		snprintf(err, errlen, "samples %s and %s differ: forward() takes %d arguments in the first, %d in "
			 "the second", an, bn, a->nargs, b->nargs);
		return -1;
	}
	for (int i = 0; i < a->nargs; i++)
		if (strcmp(a->gv[i].py, b->gv[i].py)) {
			snprintf(err, errlen, "samples %s and %s differ: forward() argument %d is %s in the first, "
				 "%s in the second", an, bn, i + 1, a->gv[i].py, b->gv[i].py);
			return -1;
		}
	int i = 0, j = 0;
	for (;;) {
		while (i < a->nnodes && !a->nodes[i].alive)
			i++;
		while (j < b->nnodes && !b->nodes[j].alive)
			j++;
		if (i >= a->nnodes || j >= b->nnodes)
			break;
		const struct gnode *x = &a->nodes[i], *y = &b->nodes[j];
		const char *xn = a->gv[x->value].name, *yn = b->gv[y->value].name;
		int same = !strcmp(x->op, y->op) && !strcmp(xn, yn) && x->nops == y->nops;
		for (int k = 0; same && k < x->nops; k++) {
			same = x->ops[k].k == y->ops[k].k;
			if (same && x->ops[k].k == O_VALUE)
				same = !strcmp(a->gv[x->ops[k].gv].name, b->gv[y->ops[k].gv].name);
		}
		if (!same) {
			snprintf(err, errlen, "samples %s and %s differ: %s = %s(...) at %s:%d, but %s = %s(...) at "
				 "%s:%d (operands or op differ)", an, bn, xn, x->op, a->label, x->line, yn, y->op,
				 b->label, y->line);
			return -1;
		}
		i++;
		j++;
	}
	if (i < a->nnodes || j < b->nnodes) {
		const struct prog *l = i < a->nnodes ? a : b;
		const struct gnode *x = i < a->nnodes ? &a->nodes[i] : &b->nodes[j];
		snprintf(err, errlen, "samples %s and %s differ: only %s has %s = %s(...) at %s:%d", an, bn,
			 l == a ? an : bn, l->gv[x->value].name, x->op, l->label, x->line);
		return -1;
	}
	if (a->nout != b->nout) {
		snprintf(err, errlen, "samples %s and %s differ: %d outputs in the first, %d in the second", an, bn,
			 a->nout, b->nout);
		return -1;
	}
	for (int k = 0; k < a->nout; k++)
		if (strcmp(a->gv[a->outputs[k]].name, b->gv[b->outputs[k]].name)) {
			snprintf(err, errlen, "samples %s and %s differ: output %d is %s in the first, %s in the second",
				 an, bn, k + 1, a->gv[a->outputs[k]].name, b->gv[b->outputs[k]].name);
			return -1;
		}
	return 0;
}

static int flatten_data(struct prog *p, struct pv *v, json_t *arr, int as_int, const char *cls, int line,
			int depth)
{
	if (depth > 16) {
		perr(p, line, "entry %s: data nested too deeply", cls);
		return -1;
	}
	for (int i = 0; i < v->n; i++) {
		struct pv *e = v->items[i];
		json_t *j;
		if (e->k == PV_SEQ) {
			if (flatten_data(p, e, arr, as_int, cls, line, depth + 1))
				return -1;
			continue;
		}
		if (!is_num(e) || (e->k == PV_FLOAT && !isfinite(e->f))) {
			perr(p, line, "entry %s: data must hold finite numbers, found %s", cls, kind_name(e));
			return -1;
		}
		if (as_int && e->k == PV_FLOAT && e->f != floor(e->f)) {
			perr(p, line, "entry %s: data of an integer tensor holds %g", cls, e->f);
			return -1;
		}
		if (as_int)
			j = json_integer(e->k == PV_FLOAT ? (long long)e->f : e->i);
		else
			j = json_real(num_val(e));
		if (j == NULL || json_array_append_new(arr, j)) {
			oom(p);
			return -1;
		}
	}
	return 0;
}

static int is_forward_arg(const struct prog *m, const char *name)
{
	for (int i = 0; i < m->nargs; i++)
		if (!strcmp(m->gv[i].py, name))
			return 1;
	return 0;
}

/* The JSON of one variant: model program m, weight_meta w. */
static json_t *variant_json(struct prog *m, struct prog *w, const int *argmeta, const char *vname,
			    const struct import_options *opt)
{
	json_t *v = json_object(), *ins = json_array(), *nodes = json_array(), *outs = json_array();
	if (!v || !ins || !nodes || !outs || json_object_set_new(v, "name", json_string(vname)) ||
	    json_object_set(v, "inputs", ins) || json_object_set(v, "nodes", nodes) ||
	    json_object_set(v, "outputs", outs))
		goto oom;
	for (int i = 0; i < m->nargs; i++) {
		if (!m->gv[i].used)
			continue;
		if (argmeta[i] < 0) {
			perr(w, 0, "no entry with name = \"%s\" (forward argument %d of %s)", m->gv[i].py, i + 1,
			     m->label);
			goto fail;
		}
		struct meta_entry *e = &w->meta[argmeta[i]];
		json_t *in = json_object(), *shape = json_array();
		if (json_array_append_new(ins, in) || json_object_set_new(in, "name", json_string(m->gv[i].name)) ||
		    json_object_set_new(in, "shape", shape) ||
		    json_object_set_new(in, "dtype", json_string(e->dtype)))
			goto oom;
		for (int d = 0; d < e->ndim; d++)
			if (json_array_append_new(shape, json_integer(e->shape[d])))
				goto oom;
		static const char *const keys[] = {"mean", "std", "min", "max"};
		for (int k = 0; k < 4; k++)
			if (e->has[k] && json_object_set_new(in, keys[k], e->num_is_int[k] && k >= 2
							     ? json_integer((long long)e->num[k]) : json_real(e->num[k])))
				goto oom;
		if (e->data) {
			json_t *d = json_array();
			int as_int = !graph_dtype_is_float(graph_dtype_parse(e->dtype));
			if (d == NULL || json_object_set_new(in, "data", d))
				goto oom;
			if (flatten_data(w, e->data, d, as_int, e->name, e->line, 0))
				goto fail;
		}
	}
	if (opt && opt->warn)
		for (int k = 0; k < w->nmeta; k++) {
			if (!is_forward_arg(m, w->meta[k].name)) {
				char msg[512];
				snprintf(msg, sizeof(msg), "%s:%d: entry '%s' is not an argument of forward(); ignored",
					 w->label, w->meta[k].line, w->meta[k].name);
				opt->warn(opt->warn_ctx, msg);
			}
		}
	for (int i = 0; i < m->nnodes; i++) {
		struct gnode *n = &m->nodes[i];
		if (!n->alive)
			continue;
		json_t *j = json_object(), *in = json_array();
		if (json_array_append_new(nodes, j) || json_object_set_new(j, "name", json_string(m->gv[n->value].name)) ||
		    json_object_set_new(j, "op", json_string(n->op)) || json_object_set_new(j, "inputs", in))
			goto oom;
		for (int k = 0; k < n->nops; k++) {
			json_t *o = n->ops[k].k == O_NULL ? json_null()
				: n->ops[k].k == O_SCALAR ? json_deep_copy(n->ops[k].scalar)
				: json_string(m->gv[n->ops[k].gv].name);
			if (json_array_append_new(in, o))
				goto oom;
		}
		if (n->attrs && json_object_set_new(j, "attrs", json_deep_copy(n->attrs)))
			goto oom;
	}
	for (int k = 0; k < m->nout; k++)
		if (json_array_append_new(outs, json_string(m->gv[m->outputs[k]].name)))
			goto oom;
	json_decref(ins);
	json_decref(nodes);
	json_decref(outs);
	return v;
oom:
	oom(w);
fail:
	json_decref(ins);
	json_decref(nodes);
	json_decref(outs);
	json_decref(v);
	return NULL;
}

char *import_model_name(const char *name, char *buf, size_t len)
{
	if (len == 0)
		return buf;
	const char *s = name;
	/* fixture prefix: one lowercase letter, two digits, '_' */
	if (islower((unsigned char)s[0]) && isdigit((unsigned char)s[1]) && isdigit((unsigned char)s[2]) &&
	    s[3] == '_' && s[4])
		s += 4;
	size_t n = strlen(s);
	/* GraphNet suffix: [_G]_startA_endB[_K] */
	const char *st = NULL;
	for (const char *q = s; (q = strstr(q, "_start")) != NULL; q++)
		st = q;
	if (st && st > s) {
		const char *q = st + 6;
		int ok = isdigit((unsigned char)*q);
		while (isdigit((unsigned char)*q))
			q++;
		ok = ok && !strncmp(q, "_end", 4) && isdigit((unsigned char)q[4]);
		if (ok) {
			n = (size_t)(st - s);
			/* a graph index before _start */
			size_t k = n;
			while (k > 0 && isdigit((unsigned char)s[k - 1]))
				k--;
			if (k < n && k > 1 && s[k - 1] == '_')
				n = k - 1;
		}
	}
	if (n >= len)
		n = len - 1;
	memcpy(buf, s, n);
	buf[n] = 0;
	return buf;
}

/* "add > layer_norm > sigmoid x5 (albert-xlarge-v1)" */
static char *make_summary(const struct prog *m, const struct import_sample *s, int n)
{
	size_t cap = 4096, len = 0;
	char *out = malloc(cap);
	if (out == NULL)
		return NULL;
	out[0] = 0;
	const char *prev = NULL;
	int run = 0;
	for (int i = 0; i <= m->nnodes; i++) {
		const char *op = NULL;
		if (i < m->nnodes) {
			if (!m->nodes[i].alive)
				continue;
			op = m->nodes[i].op;
		}
		if (prev && op && !strcmp(prev, op)) {
			run++;
			continue;
		}
		if (prev) {
			int w = run > 1 ? snprintf(out + len, cap - len, "%s%s x%d", len ? " > " : "", prev, run)
					: snprintf(out + len, cap - len, "%s%s", len ? " > " : "", prev);
			if (w < 0 || (size_t)w >= cap - len) {
				/* keep the line bounded */
				snprintf(out + cap - 8, 8, " ...");
				len = strlen(out);
				break;
			}
			len += (size_t)w;
		}
		prev = op;
		run = 1;
	}
	if (len == 0)
		len += (size_t)snprintf(out, cap, "identity");
	char model[256];
	import_model_name(s[0].name, model, sizeof(model));
	for (int i = 1; i < n; i++) {
		char other[256];
		if (strcmp(import_model_name(s[i].name, other, sizeof(other)), model)) {
			snprintf(model + strlen(model), sizeof(model) - strlen(model), " and others");
			break;
		}
	}
	if (model[0] && len + strlen(model) + 10 < cap)
		snprintf(out + len, cap - len, " (%s)", model);
	/* one printable ASCII line, whatever the directory names hold */
	for (char *q = out; *q; q++)
		if ((unsigned char)*q < 0x20 || (unsigned char)*q >= 0x7f)
			*q = '?';
	return out;
}

/* The float dtype holding most input elements (the activations' dtype; ties
 * go to the earlier argument), else the first input's dtype. */
static const char *variant_dtype(const struct prog *m, const struct prog *w, const int *argmeta)
{
	double count[DT_COUNT] = {0};
	int first = -1, order[DT_COUNT], norder = 0;
	for (int i = 0; i < m->nargs; i++) {
		if (!m->gv[i].used || argmeta[i] < 0)
			continue;
		const struct meta_entry *e = &w->meta[argmeta[i]];
		enum graph_dtype dt = graph_dtype_parse(e->dtype);
		if (dt == DT_INVALID)
			continue;
		if (first < 0)
			first = dt;
		double numel = 1;
		for (int d = 0; d < e->ndim; d++)
			numel *= (double)e->shape[d];
		int seen = 0;
		for (int k = 0; k < norder; k++)
			seen |= order[k] == (int)dt;
		if (!seen)
			order[norder++] = dt;
		count[dt] += numel + 1;   /* +1: an empty tensor still counts */
	}
	int best = -1;
	for (int k = 0; k < norder; k++) {
		int d = order[k];
		if (graph_dtype_is_float((enum graph_dtype)d) && (best < 0 || count[d] > count[best]))
			best = d;
	}
	if (best < 0)
		best = first;
	return best < 0 ? "float32" : graph_dtype_name((enum graph_dtype)best);
}

static int valid_variant_name(const char *s)
{
	size_t n = strlen(s);
	if (n == 0 || n > MAX_NAME_LEN)
		return 0;
	for (size_t i = 0; i < n; i++)
		if (!(isalnum((unsigned char)s[i]) || s[i] == '_' || s[i] == '.' || s[i] == '-'))
			return 0;
	return 1;
}

/* After inference: an in-place op keeps its target's dtype and shape in
 * PyTorch; a graph op that would change them is not the same program. */
static int check_inplace(struct prog *m, const struct graph_task *t, const struct import_sample *s,
			 char *err, size_t errlen)
{
	for (int i = 0; i < m->nnodes; i++) {
		struct gnode *n = &m->nodes[i];
		if (!n->alive || n->inplace_src < 0)
			continue;
		for (int vi = 0; vi < t->n_variants; vi++) {
			const struct graph_variant *v = &t->variants[vi];
			int a = graph_find_value(v, m->gv[n->value].name);
			int b = graph_find_value(v, m->gv[n->inplace_src].name);
			if (a < 0 || b < 0)
				continue;
			const struct graph_value *x = &v->values[a], *y = &v->values[b];
			int same = x->dtype == y->dtype && x->shape.ndim == y->shape.ndim;
			for (int d = 0; same && d < x->shape.ndim; d++)
				same = x->shape.d[d] == y->shape.d[d];
			if (!same) {
				char s1[128], s2[128];
				graph_shape_str(&y->shape, s1, sizeof(s1));
				graph_shape_str(&x->shape, s2, sizeof(s2));
				snprintf(err, errlen,
					 "%s:%d: in-place %s on %s %s%s would give %s%s in variant '%s'; "
					 "PyTorch keeps the target's dtype and shape: not supported",
					 s[vi].model_label, n->line, n->op, m->gv[n->inplace_src].name,
					 graph_dtype_name(y->dtype), s1, graph_dtype_name(x->dtype), s2, v->name);
				return -1;
			}
		}
	}
	return 0;
}

/* Python's rule for `a, b = t`: t must have exactly as many elements as
 * there are names; a tuple op's length is known only now.  Returns 0, or -1
 * with err naming the sample, line and variant. */
static int check_unpack(struct prog *m, const struct graph_task *t, const struct import_sample *s, char *err,
			size_t errlen)
{
	for (int i = 0; i < m->nnodes; i++) {
		struct gnode *n = &m->nodes[i];
		if (!n->alive || !n->unpacked)
			continue;
		for (int vi = 0; vi < t->n_variants; vi++) {
			const struct graph_variant *v = &t->variants[vi];
			for (int k = 0; k < v->n_nodes; k++) {
				const struct graph_node *g = &v->nodes[k];
				if (strcmp(g->name, m->gv[n->value].name) || g->n_results == n->unpacked)
					continue;
				snprintf(err, errlen, "%s:%d: cannot unpack the %d tensors of %s (%s) into %d names "
					 "in variant '%s'", s[vi].model_label, n->unpack_line, g->n_results, g->name,
					 n->op, n->unpacked, v->name);
				return -1;
			}
		}
	}
	return 0;
}

/* The validator names variants and nodes; say which sample and line they are. */
static void explain_graph_error(const struct prog *models, const struct import_sample *s, char *const *vnames,
				int n, char *err, size_t errlen)
{
	char key[160];
	for (int i = 0; i < n; i++) {
		snprintf(key, sizeof(key), "variant '%s'", vnames[i]);
		if (!strstr(err, key))
			continue;
		const struct prog *m = &models[i];
		size_t l = strlen(err);
		for (int k = 0; k < m->nnodes; k++) {
			snprintf(key, sizeof(key), "node '%s'", m->gv[m->nodes[k].value].name);
			if (m->nodes[k].alive && strstr(err, key)) {
				snprintf(err + l, errlen - l, " (at %s:%d)", m->label, m->nodes[k].line);
				return;
			}
		}
		snprintf(err + l, errlen - l, " (variant %s is %s)", vnames[i], s[i].name);
		return;
	}
}

int import_build(const struct import_sample *s, int n, const struct import_options *opt,
		 json_t **json_out, struct graph_task **task_out, char *err, size_t errlen)
{
	struct prog *models = NULL, *metas = NULL;
	json_t *root = NULL, *vars = NULL;
	struct graph_task *task = NULL;
	char **vnames = NULL;
	int **argmeta = NULL;
	char *summary = NULL;
	int rc = -1;
	*json_out = NULL;
	if (task_out)
		*task_out = NULL;
	if (errlen)
		err[0] = 0;
	if (n < 1 || n > MAX_SAMPLES || opt == NULL || opt->id == NULL) {
		snprintf(err, errlen, "import: need 1 to %d samples and a task id", MAX_SAMPLES);
		return -1;
	}
	models = calloc((size_t)n, sizeof(*models));
	metas = calloc((size_t)n, sizeof(*metas));
	vnames = calloc((size_t)n, sizeof(*vnames));
	argmeta = calloc((size_t)n, sizeof(*argmeta));
	if (!models || !metas || !vnames || !argmeta) {
		snprintf(err, errlen, "out of memory");
		goto out;
	}
	for (int i = 0; i < n; i++) {
		struct prog *m = &models[i], *w = &metas[i];
		m->label = s[i].model_label ? s[i].model_label : "model.py";
		m->text = s[i].model ? s[i].model : "";
		m->len = s[i].model ? s[i].model_len : 0;
		m->err = err;
		m->errlen = errlen;
		w->label = s[i].meta_label ? s[i].meta_label : "weight_meta.py";
		w->text = s[i].meta;
		w->len = s[i].meta_len;
		w->err = err;
		w->errlen = errlen;
		if (s[i].name == NULL) {
			snprintf(err, errlen, "import: sample %d has no name", i + 1);
			goto out;
		}
		if (m->len > MAX_TEXT || w->len > MAX_TEXT) {
			snprintf(err, errlen, "%s: larger than %zu MiB", m->len > MAX_TEXT ? m->label : w->label,
				 MAX_TEXT >> 20);
			goto out;
		}
		if (s[i].meta == NULL) {
			/* name the sample's directory, as the model label shows it */
			const char *ml = m->label;
			size_t dl = strlen(ml);
			if (dl >= 8 && !strcmp(ml + dl - 8, "model.py"))
				dl -= 8;
			else
				ml = s[i].name, dl = strlen(ml);
			snprintf(err, errlen, "%.*s%s: no weight_meta.py (needed for input shapes and dtypes)",
				 (int)(dl > 400 ? 400 : dl), ml, dl && ml[dl - 1] == '/' ? "" : "/");
			goto out;
		}
		if (parse_model(m) || parse_meta(w))
			goto out;
		if ((argmeta[i] = map_args(m, w)) == NULL)
			goto out;
		prune(m, i == 0 ? opt : NULL);
		if (i > 0 && compare_progs(&models[0], m, s[0].name, s[i].name, err, errlen))
			goto out;
	}

	/* variant names: given ones first, then dtype_K skipping taken names */
	for (int i = 0; i < n; i++) {
		if (!s[i].variant)
			continue;
		if (!valid_variant_name(s[i].variant)) {
			snprintf(err, errlen, "%s: variant name '%.60s' must match [A-Za-z0-9_.-]+", s[i].name,
				 s[i].variant);
			goto out;
		}
		for (int k = 0; k < i; k++)
			if (vnames[k] && !strcmp(vnames[k], s[i].variant)) {
				snprintf(err, errlen, "%s and %s: both are variant '%s'", s[k].name, s[i].name,
					 s[i].variant);
				goto out;
			}
		if ((vnames[i] = strdup(s[i].variant)) == NULL)
			goto nomem;
	}
	for (int i = 0; i < n; i++) {
		if (vnames[i])
			continue;
		const char *dt = variant_dtype(&models[i], &metas[i], argmeta[i]);
		char buf[64];
		for (int k = 0;; k++) {
			snprintf(buf, sizeof(buf), "%s_%d", dt, k);
			int taken = 0;
			for (int q = 0; q < n && !taken; q++)
				taken = vnames[q] && !strcmp(vnames[q], buf);
			if (!taken)
				break;
		}
		if ((vnames[i] = strdup(buf)) == NULL)
			goto nomem;
	}

	root = json_object();
	vars = json_array();
	summary = make_summary(&models[0], s, n);
	if (!root || !vars || !summary || json_object_set_new(root, "id", json_string(opt->id)) ||
	    json_object_set_new(root, "summary", json_string(summary)))
		goto nomem;
	if (json_object_get(root, "id") == NULL) {
		snprintf(err, errlen, "task id is not valid UTF-8");
		goto out;
	}
	{
		size_t cap = 256, len = 0;
		char *src = NULL;
		if (opt->source) {
			src = strdup(opt->source);
		} else if ((src = malloc(cap))) {
			src[0] = 0;
			for (int i = 0; i < n && src; i++) {
				size_t need = len + strlen(s[i].name) + 3;
				if (need > cap) {
					cap = need * 2;
					char *ns = realloc(src, cap);
					if (ns == NULL) {
						free(src);
						src = NULL;
						break;
					}
					src = ns;
				}
				len += (size_t)sprintf(src + len, "%s%s", i ? ", " : "", s[i].name);
			}
		}
		json_t *js = src ? json_string(src) : NULL;
		free(src);
		if (js == NULL || json_object_set_new(root, "source", js)) {
			snprintf(err, errlen, "out of memory, or a sample name is not valid UTF-8");
			goto out;
		}
	}
	if (json_object_set(root, "variants", vars))
		goto nomem;
	for (int i = 0; i < n; i++) {
		json_t *v = variant_json(&models[i], &metas[i], argmeta[i], vnames[i], opt);
		if (v == NULL)
			goto out;
		if (json_array_append_new(vars, v))
			goto nomem;
	}
	if (graph_load_json(opt->id, root, &task, err, errlen)) {
		explain_graph_error(models, s, vnames, n, err, errlen);
		goto out;
	}
	if (check_inplace(&models[0], task, s, err, errlen) || check_unpack(&models[0], task, s, err, errlen))
		goto out;
	*json_out = root;
	root = NULL;
	if (task_out) {
		*task_out = task;
		task = NULL;
	}
	rc = 0;
	goto out;
nomem:
	snprintf(err, errlen, "out of memory");
out:
	if (models)
		for (int i = 0; i < n; i++)
			prog_free(&models[i]);
	if (metas)
		for (int i = 0; i < n; i++)
			prog_free(&metas[i]);
	free(models);
	free(metas);
	if (vnames)
		for (int i = 0; i < n; i++)
			free(vnames[i]);
	free(vnames);
	free(argmeta);
	free(summary);
	json_decref(vars);
	json_decref(root);
	graph_task_free(task);
	/* one line, whatever the input's strings held */
	if (rc && errlen)
		for (char *q = err; *q; q++)
			if ((unsigned char)*q < 0x20 || *q == 0x7f)
				*q = ' ';
	return rc;
}
