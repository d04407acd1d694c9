/* pass.c - the pass compiler (see pass.h). */
#define _GNU_SOURCE
#include "pass.h"

#include <dlfcn.h>
#include <stdarg.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "elfcheck.h"
#include "file.h"
#include "hostcc.h"
#include "nvrtc.h"
#include "strbuf.h"

/* The address space of each host compiler process for a pass. */
#define PASS_HOST_AS_LIMIT (2ull << 30)

/* What a pass may #include: the pass API, the CUDA half/bfloat16 types, and
 * C headers whose content both compilers provide (NVRTC gets passfs.h's
 * stand-ins).  No file system, no libraries. */
static const char *const include_allow[] = {
	"passfs.h", "passfs_abi.h", "cuda_fp16.h", "cuda_bf16.h", "cuda_runtime.h",
	"stdint.h", "cstdint", "math.h", "cmath", "float.h", "cfloat", "limits.h", "climits",
	"stddef.h", "cstddef", NULL
};
#define INCLUDE_ALLOW_TEXT \
	"passfs.h, cuda_fp16.h, cuda_bf16.h, cuda_runtime.h, stdint.h, cstdint, math.h, cmath, " \
	"float.h, cfloat, limits.h, climits, stddef.h, cstddef"
/* Device-only headers, allowed where the backend has a GPU (NVRTC takes them
 * from the CUDA include directory; the host compile gets stand-ins, see
 * hostcc_device_stubs). */
static const char *const include_allow_gpu[] = {
	"mma.h", "cooperative_groups.h", "cooperative_groups/reduce.h", "cooperative_groups/memcpy_async.h",
	"cuda_pipeline.h", "cuda_awbarrier.h", NULL
};

const char *pass_verdict_name(enum pass_verdict v)
{
	switch (v) {
	case PASS_OK: return "ok";
	case PASS_COMPILE_ERROR: return "compile_error";
	case PASS_UNSUPPORTED: return "unsupported";
	case PASS_REJECTED: return "rejected";
	case PASS_NOT_IMPLEMENTED: return "not_implemented";
	case PASS_INTERNAL_ERROR: return "runtime_error";
	}
	return "runtime_error";
}

__attribute__((format(printf, 4, 5)))
static int fail(struct pass_diag *d, enum pass_verdict v, int line, const char *fmt, ...)
{
	d->verdict = v;
	d->line = line;
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(d->message, sizeof d->message, fmt, ap);
	va_end(ap);
	return -1;
}

/* Keeps the last PASS_LOG_TAIL bytes of log, starting at a line. */
static void set_log(struct pass_diag *d, const char *log)
{
	d->log[0] = '\0';
	if (log == NULL)
		return;
	size_t n = strlen(log);
	const char *p = log;
	if (n > PASS_LOG_TAIL) {
		p = log + n - PASS_LOG_TAIL;
		const char *nl = strchr(p, '\n');
		if (nl != NULL && nl[1] != '\0')
			p = nl + 1;
	}
	snprintf(d->log, sizeof d->log, "%s", p);
}

/* --- scanning ------------------------------------------------------------- */

static int is_ident(int c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
}

static int is_space(int c)
{
	return c == ' ' || c == '\t' || c == '\r' || c == '\f' || c == '\v';
}

/* Line of offset off (1-based): *cursor and *line carry the last answer, so
 * increasing offsets cost one pass over the text. */
static int line_at(const char *m, size_t off, size_t *cursor, int *line)
{
	if (off < *cursor) {
		*cursor = 0;
		*line = 1;
	}
	for (; *cursor < off; (*cursor)++)
		if (m[*cursor] == '\n')
			(*line)++;
	return *line;
}

/* Identifiers that name what only a GPU can run. */
static const struct {
	const char *word;
	const char *what;
} device_only[] = {
	{"asm", "inline PTX (asm)"},
	{"__asm__", "inline PTX (asm)"},
	{"__asm", "inline PTX (asm)"},
	{"wmma", "wmma (tensor core matrix operations)"},
	{"nvcuda", "wmma (tensor core matrix operations)"},
	{"mma_sync", "mma (tensor core matrix operations)"},
	{"cooperative_groups", "cooperative groups"},
	{"this_grid", "cooperative groups"},
};

/* What the identifier w[0, n) names that only a GPU can run, or NULL. */
static const char *device_only_word(const char *w, size_t n)
{
	for (size_t k = 0; k < sizeof device_only / sizeof device_only[0]; k++)
		if (strlen(device_only[k].word) == n && memcmp(device_only[k].word, w, n) == 0)
			return device_only[k].what;
	return NULL;
}

static int in_list(const char *const *list, const char *s, size_t n)
{
	for (int i = 0; list[i] != NULL; i++)
		if (strlen(list[i]) == n && memcmp(list[i], s, n) == 0)
			return 1;
	return 0;
}

/* Skips blanks and line continuations from m[i]; returns the next offset. */
static size_t skip_blank(const char *m, size_t len, size_t i)
{
	while (i < len && (is_space(m[i]) || (m[i] == '\\' && i + 1 < len && m[i + 1] == '\n')))
		i += m[i] == '\\' ? 2 : 1;
	return i;
}

/* A #line directive (or GCC's line marker `# 12 "file"`) whose argument
 * starts at m[i]: a line number alone, or one followed by the pass's own
 * label, nothing else.  A #line naming another file makes g++ quote that
 * file's lines under every error (a file reader); a computed argument
 * (macros) could expand to such a name.  Returns 0 or -1 with diag. */
static int check_line(const char *label, const char *src, const char *m, size_t len, size_t i, int line,
		      struct pass_diag *diag)
{
	size_t d = i;
	while (i < len && m[i] >= '0' && m[i] <= '9')
		i++;
	if (i == d || (i < len && is_ident(m[i])))
		return fail(diag, PASS_COMPILE_ERROR, line,
			    "%s:%d: #line with a computed argument is not allowed (a pass may write #line N or "
			    "#line N \"%s\")", label, line, label);
	i = skip_blank(m, len, i);
	if (i >= len || m[i] == '\n')
		return 0;
	if (m[i] != '"')
		return fail(diag, PASS_COMPILE_ERROR, line,
			    "%s:%d: #line with a computed file name is not allowed (a pass may write #line N or "
			    "#line N \"%s\")", label, line, label);
	size_t b = i + 1, e = b;
	while (e < len && m[e] != '"' && m[e] != '\n')
		e++;
	if (e - b == strlen(label) && memcmp(src + b, label, e - b) == 0) {
		/* the flags of a line marker (# 1 "f" 3), nothing else */
		size_t k = e + 1;
		while (k < len && ((m[k] >= '0' && m[k] <= '9') || is_space(m[k]) ||
				   (m[k] == '\\' && k + 1 < len && m[k + 1] == '\n')))
			k += m[k] == '\\' ? 2 : 1;
		if (k >= len || m[k] == '\n')
			return 0;
	}
	return fail(diag, PASS_COMPILE_ERROR, line,
		    "%s:%d: #line names the file \"%.*s\"; a pass's #line may name only its own file \"%s\" "
		    "(or no file)", label, line, (int)(e - b > 200 ? 200 : e - b), src + b, label);
}

/* __has_include / __has_include_next (the identifier ends at m[i]): the
 * argument must be a header a pass may include, spelled out; any other
 * answers whether a path exists on the compiling machine.  Returns 0 or
 * -1 with diag. */
static int check_has_include(const char *label, const char *src, const char *m, size_t len, size_t i, int line,
			     int allow_device_only, struct pass_diag *diag)
{
	while (i < len && (is_space(m[i]) || m[i] == '\n' || m[i] == '\\'))
		i++;
	if (i < len && m[i] == '(') {
		i++;
		while (i < len && (is_space(m[i]) || m[i] == '\n' || m[i] == '\\'))
			i++;
		char close = i < len && src[i] == '<' ? '>' : i < len && src[i] == '"' ? '"' : 0;
		size_t b = i + 1, e = b;
		while (close && e < len && src[e] != close && src[e] != '\n')
			e++;
		if (close && e < len && src[e] == close &&
		    (in_list(include_allow, src + b, e - b) ||
		     (allow_device_only && in_list(include_allow_gpu, src + b, e - b))))
			return 0;
		if (close && e < len && src[e] == close)
			return fail(diag, PASS_COMPILE_ERROR, line,
				    "%s:%d: __has_include(%c%.*s%c) asks about a header a pass may not include (a pass "
				    "may ask only about " INCLUDE_ALLOW_TEXT ")", label, line, src[i],
				    (int)(e - b > 200 ? 200 : e - b), src + b, close);
	}
	return fail(diag, PASS_COMPILE_ERROR, line,
		    "%s:%d: __has_include with a computed argument is not allowed (a pass may ask only about "
		    INCLUDE_ALLOW_TEXT ")", label, line);
}

/* _Pragma("GCC dependency \"file\"") (the identifier ends at m[i]): the
 * same file probe as the directive.  Returns 0 or -1 with diag. */
static int check_pragma_op(const char *label, const char *src, const char *m, size_t len, size_t i, int line,
			   struct pass_diag *diag)
{
	while (i < len && (is_space(m[i]) || m[i] == '\n' || m[i] == '(' || m[i] == '\\'))
		i++;
	if (i >= len || m[i] != '"')
		return 0;
	size_t e = i + 1;
	while (e < len && m[e] != '"' && m[e] != '\n')
		e++;
	if (memmem(src + i, e - i, "dependency", 10) != NULL)
		return fail(diag, PASS_COMPILE_ERROR, line,
			    "%s:%d: _Pragma(\"GCC dependency ...\") is not allowed (it asks about a file)", label, line);
	return 0;
}

/* Whether m[b, e) is __has_include or __has_include_next. */
static int is_has_include(const char *m, size_t b, size_t e)
{
	return (e - b == 13 && memcmp(m + b, "__has_include", 13) == 0) ||
	       (e - b == 18 && memcmp(m + b, "__has_include_next", 18) == 0);
}

/* Checks a preprocessor directive starting at m[i] ('#' or the digraph
 * '%:'); src holds the unmasked text (the header name is inside quotes,
 * which the mask blanks).  Returns 0 or -1 with diag. */
static int check_directive(const char *label, const char *src, const char *m, size_t len, size_t i,
			   int line, int allow_device_only, struct pass_diag *diag)
{
	i += m[i] == '#' ? 1 : 2;
	i = skip_blank(m, len, i);
	size_t w = i;
	while (i < len && is_ident(m[i]))
		i++;
	size_t wl = i - w;
	if (wl > 0 && m[w] >= '0' && m[w] <= '9')
		return check_line(label, src, m, len, w, line, diag);
	if (wl == 4 && memcmp(m + w, "line", 4) == 0)
		return check_line(label, src, m, len, skip_blank(m, len, i), line, diag);
	if (wl == 6 && memcmp(m + w, "pragma", 6) == 0) {
		/* #pragma GCC dependency "file": whether a path exists, and its age */
		size_t k = skip_blank(m, len, i), b = k;
		while (k < len && is_ident(m[k]))
			k++;
		if (k - b == 3 && memcmp(m + b, "GCC", 3) == 0) {
			b = k = skip_blank(m, len, k);
			while (k < len && is_ident(m[k]))
				k++;
			if (k - b == 10 && memcmp(m + b, "dependency", 10) == 0)
				return fail(diag, PASS_COMPILE_ERROR, line,
					    "%s:%d: #pragma GCC dependency is not allowed (it asks about a file)", label,
					    line);
		}
		return 0;
	}
	int is_include = (wl == 7 && memcmp(m + w, "include", 7) == 0) ||
			 (wl == 12 && memcmp(m + w, "include_next", 12) == 0) ||
			 (wl == 6 && memcmp(m + w, "import", 6) == 0) ||
			 (wl == 5 && memcmp(m + w, "embed", 5) == 0);
	if (!is_include)
		return 0;
	while (i < len && is_space(m[i]))
		i++;
	char close = i < len && src[i] == '<' ? '>' : i < len && src[i] == '"' ? '"' : 0;
	if (close == 0)
		return fail(diag, PASS_UNSUPPORTED, line,
			    "%s:%d: #include with a computed name is not allowed (a pass may include only "
			    INCLUDE_ALLOW_TEXT ")", label, line);
	size_t b = i + 1, e = b;
	while (e < len && src[e] != close && src[e] != '\n')
		e++;
	if (e >= len || src[e] != close)
		return fail(diag, PASS_COMPILE_ERROR, line, "%s:%d: unterminated #include", label, line);
	if (!allow_device_only && in_list(include_allow_gpu, src + b, e - b))
		return fail(diag, PASS_UNSUPPORTED, line,
			    "%s:%d: #include %c%.*s%c is not allowed on the cpu backend: it needs a GPU; the cpu "
			    "backend cannot run it", label, line, src[i], (int)(e - b), src + b, close);
	if (!in_list(include_allow, src + b, e - b) &&
	    !(allow_device_only && in_list(include_allow_gpu, src + b, e - b)))
		return fail(diag, PASS_UNSUPPORTED, line,
			    "%s:%d: #include %c%.*s%c is not allowed (a pass may include only "
			    INCLUDE_ALLOW_TEXT ")", label, line, src[i], (int)(e - b > 200 ? 200 : e - b),
			    src + b, close);
	return 0;
}

/* Appends to out the kernel expression m[b, e), normalised: white space
 * dropped except one space between identifier characters and after a
 * comma; a leading '&' and enclosing parentheses removed. */
static int normalise_expr(const char *m, size_t b, size_t e, char *out, size_t outlen)
{
	for (;;) {
		while (b < e && (is_space(m[b]) || m[b] == '\n'))
			b++;
		while (e > b && (is_space(m[e - 1]) || m[e - 1] == '\n'))
			e--;
		if (b < e && m[b] == '&') {
			b++;
			continue;
		}
		if (b < e && m[b] == '(' && m[e - 1] == ')') {
			/* only when the parentheses enclose everything */
			int depth = 0, whole = 1;
			for (size_t k = b; k < e; k++) {
				depth += m[k] == '(';
				depth -= m[k] == ')';
				if (depth == 0 && k + 1 < e) {
					whole = 0;
					break;
				}
			}
			if (whole) {
				b++;
				e--;
				continue;
			}
		}
		break;
	}
	size_t k = 0;
	char prev = 0;
	int pending_space = 0;
	for (size_t i = b; i < e; i++) {
		char c = m[i];
		if (is_space(c) || c == '\n' || c == '\\') {
			pending_space = 1;
			continue;
		}
		if (k + 3 >= outlen)
			return -1;
		if ((pending_space && is_ident(prev) && is_ident(c)) || prev == ',')
			out[k++] = ' ';
		/* characters a kernel name expression never holds */
		if (strchr(";{}\"'#`@$", c) != NULL)
			return -1;
		out[k++] = c;
		prev = c;
		pending_space = 0;
	}
	out[k] = '\0';
	return k > 0 ? 0 : -1;
}

void pass_names_free(struct pass_names *nm)
{
	for (int i = 0; i < nm->n; i++)
		free(nm->expr[i]);
	free(nm->expr);
	free(nm->line);
	memset(nm, 0, sizeof *nm);
}

static int names_add(struct pass_names *nm, const char *expr, int line)
{
	for (int i = 0; i < nm->n; i++)
		if (strcmp(nm->expr[i], expr) == 0)
			return 0;
	char **e = realloc(nm->expr, sizeof(char *) * (size_t)(nm->n + 1));
	if (e == NULL)
		return -1;
	nm->expr = e;
	int *l = realloc(nm->line, sizeof(int) * (size_t)(nm->n + 1));
	if (l == NULL)
		return -1;
	nm->line = l;
	if ((nm->expr[nm->n] = strdup(expr)) == NULL)
		return -1;
	nm->line[nm->n] = line;
	nm->n++;
	return 0;
}

/* The kernel argument of the pf_launch whose '(' is at m[i].  Returns 0 and
 * the expression's extent, 1 when the call has no kernel argument, -1 when
 * the parentheses do not balance. */
static int launch_kernel_arg(const char *m, size_t len, size_t i, size_t *kb, size_t *ke)
{
	int depth = 0;
	size_t k = i + 1;
	/* first argument: the call */
	for (; k < len; k++) {
		char c = m[k];
		if (c == '(' || c == '[' || c == '{')
			depth++;
		else if (c == ')' || c == ']' || c == '}') {
			if (depth == 0)
				return 1;
			depth--;
		} else if (c == ',' && depth == 0)
			break;
	}
	if (k >= len)
		return -1;
	*kb = ++k;
	/* second argument: the kernel; angle brackets nest here */
	int angle = 0;
	depth = 0;
	for (; k < len; k++) {
		char c = m[k];
		if (c == '(' || c == '[' || c == '{')
			depth++;
		else if (c == ')' || c == ']' || c == '}') {
			if (depth == 0)
				break;
			depth--;
		} else if (depth == 0 && c == '<')
			angle++;
		else if (depth == 0 && c == '>' && angle > 0)
			angle--;
		else if (c == ',' && depth == 0 && angle == 0)
			break;
	}
	if (k >= len)
		return -1;
	*ke = k;
	return 0;
}

/* --- which name expressions are file-scope names -------------------------- */

/* A name expression helps only when it means the same at the end of the
 * file, where NVRTC's name map and the host object's kernel table look it
 * up: `bias_gelu<float>` does; `kern<T>` in a templated helper, a kernel
 * pointer held in a local or a parameter, `kerns[i]`, do not, and handing
 * them on would fail both compiles.  Those launches need no name: pf_launch
 * takes the kernel's address on both compilers (the device side
 * instantiates what it reaches, the cuda backend finds an exported kernel
 * by its symbol).  So the scan keeps an expression only when every
 * identifier in it is visible at file scope and none is a parameter of the
 * declarations around the launch. */

/* An identifier of the masked source: m[b, b + n). */
struct ident {
	size_t b;
	size_t n;
};

struct ident_set {
	struct ident *v;
	int n, cap;
};

/* A brace pair: the declaration or statement header before it is
 * [hb, open); its body (open, close). */
struct frame {
	size_t hb, open, close;
	int header_names;       /* its header declares names local to the body */
	int parent;             /* the frame around it, -1 at file scope */
};

struct scope_map {
	int built, oom;
	struct ident_set file;  /* identifiers declared at file scope (also in namespaces, enums) */
	struct ident_set macro; /* names #defined anywhere */
	struct ident_set undef; /* names #undef'd anywhere: not defined at the end */
	struct frame *fr;
	int n_fr, cap_fr;
};

/* Returns 0, or -1 when out of memory. */
static int ident_add(struct ident_set *s, size_t b, size_t n)
{
	if (s->n == s->cap) {
		int cap = s->cap ? s->cap * 2 : 64;
		struct ident *v = realloc(s->v, sizeof *v * (size_t)cap);
		if (v == NULL)
			return -1;
		s->v = v;
		s->cap = cap;
	}
	s->v[s->n++] = (struct ident){b, n};
	return 0;
}

/* Orders identifiers of the masked source ctx by their bytes. */
static int ident_cmp(const void *a, const void *b, void *ctx)
{
	const struct ident *x = a, *y = b;
	const char *m = ctx;
	int c = memcmp(m + x->b, m + y->b, x->n < y->n ? x->n : y->n);
	return c != 0 ? c : (x->n > y->n) - (x->n < y->n);
}

/* Whether s (sorted by ident_cmp) holds the identifier w[0, n) of m: a
 * binary search, so that a large pass with many launches stays fast. */
static int ident_in(const struct ident_set *s, const char *m, const char *w, size_t n)
{
	int lo = 0, hi = s->n;
	while (lo < hi) {
		int mid = lo + (hi - lo) / 2;
		const struct ident *x = &s->v[mid];
		int c = memcmp(m + x->b, w, x->n < n ? x->n : n);
		if (c == 0)
			c = (x->n > n) - (x->n < n);
		if (c == 0)
			return 1;
		if (c < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return 0;
}

static void scope_map_free(struct scope_map *sm)
{
	free(sm->file.v);
	free(sm->macro.v);
	free(sm->undef.v);
	free(sm->fr);
	memset(sm, 0, sizeof *sm);
}

/* Whether the header m[hb, open) opens a scope whose names stay at file
 * scope: `namespace x {`, `extern "C" {`, `enum e {`. */
static int header_is_file_level(const char *m, size_t hb, size_t open)
{
	size_t i = hb;
	int line_start = hb == 0 || m[hb - 1] == '\n';
	/* the first word outside preprocessor lines */
	while (i < open && !is_ident(m[i])) {
		if (line_start && m[i] == '#') {
			while (i < open && !(m[i] == '\n' && m[i - 1] != '\\'))
				i++;
			continue;
		}
		if (m[i] == '\n')
			line_start = 1;
		else if (!is_space(m[i]))
			line_start = 0;
		i++;
	}
	size_t b = i;
	while (i < open && is_ident(m[i]))
		i++;
	size_t n = i - b;
	if ((n == 9 && memcmp(m + b, "namespace", 9) == 0) || (n == 4 && memcmp(m + b, "enum", 4) == 0))
		return 1;
	return n == 6 && memcmp(m + b, "extern", 6) == 0 && memchr(m + i, '(', open - i) == NULL;
}

/* Fills sm from the masked source m: the file-scope identifiers (not those
 * in parameter lists or template parameter lists), the macro names and the
 * brace pairs with their headers.  Sets sm->oom when out of memory. */
static void scope_map_build(struct scope_map *sm, const char *m, size_t len)
{
	enum { MAX_NEST = 256 };
	int stack[MAX_NEST], parens[MAX_NEST], file_level[MAX_NEST];
	int depth = 0, paren = 0, line_start = 1, code_depth = 0; /* code_depth: non-file-level frames open */
	size_t hb = 0;
	sm->built = 1;
	for (size_t i = 0; i < len && !sm->oom;) {
		char c = m[i];
		if (c == '\n') {
			line_start = 1;
			i++;
			continue;
		}
		if (is_space(c)) {
			i++;
			continue;
		}
		if (line_start && c == '#') {
			/* a directive: note a #define'd name, skip the logical line */
			size_t k = skip_blank(m, len, i + 1);
			int def = len - k > 6 && memcmp(m + k, "define", 6) == 0 && !is_ident(m[k + 6]);
			int undef = len - k > 5 && memcmp(m + k, "undef", 5) == 0 && !is_ident(m[k + 5]);
			if (def || undef) {
				size_t b = skip_blank(m, len, k + (def ? 6 : 5)), e = b;
				while (e < len && is_ident(m[e]))
					e++;
				if (e > b && ident_add(def ? &sm->macro : &sm->undef, b, e - b) != 0)
					sm->oom = 1;
			}
			while (i < len && !(m[i] == '\n' && m[i - 1] != '\\'))
				i++;
			continue;
		}
		line_start = 0;
		if (is_ident(c)) {
			size_t b = i;
			while (i < len && is_ident(m[i]))
				i++;
			if (i - b == 8 && memcmp(m + b, "template", 8) == 0) {
				/* a template parameter list: its names are not file-scope names */
				size_t k = i;
				while (k < len && (is_space(m[k]) || m[k] == '\n'))
					k++;
				if (k < len && m[k] == '<') {
					int angle = 0, par = 0;
					for (; k < len; k++) {
						if (m[k] == '(')
							par++;
						else if (m[k] == ')' && par > 0)
							par--;
						else if (par == 0 && m[k] == '<')
							angle++;
						else if (par == 0 && m[k] == '>' && --angle == 0)
							break;
						else if (m[k] == ';' || m[k] == '{' || m[k] == '}')
							break;
					}
					if (k < len && m[k] == '>')
						i = k + 1;
				}
				continue;
			}
			if (code_depth == 0 && paren == 0 && !(m[b] >= '0' && m[b] <= '9') &&
			    ident_add(&sm->file, b, i - b) != 0)
				sm->oom = 1;
			continue;
		}
		if (c == '(' || c == '[')
			paren++;
		else if ((c == ')' || c == ']') && paren > 0)
			paren--;
		else if (c == ';' && paren == 0)
			hb = i + 1;
		else if (c == '{') {
			if (sm->n_fr == sm->cap_fr) {
				int cap = sm->cap_fr ? sm->cap_fr * 2 : 32;
				struct frame *f = realloc(sm->fr, sizeof *f * (size_t)cap);
				if (f == NULL) {
					sm->oom = 1;
					break;
				}
				sm->fr = f;
				sm->cap_fr = cap;
			}
			int fl = header_is_file_level(m, hb, i);
			int parent = depth > 0 && depth <= MAX_NEST ? stack[depth - 1] : -1;
			sm->fr[sm->n_fr] = (struct frame){.hb = hb, .open = i, .close = len, .header_names = !fl,
							  .parent = parent};
			if (depth < MAX_NEST) {
				stack[depth] = sm->n_fr;
				parens[depth] = paren;
				file_level[depth] = fl;
			}
			depth++;
			code_depth += !fl;
			sm->n_fr++;
			paren = 0;
			hb = i + 1;
		} else if (c == '}' && depth > 0) {
			depth--;
			if (depth < MAX_NEST) {
				sm->fr[stack[depth]].close = i;
				paren = parens[depth];
				code_depth -= !file_level[depth];
			}
			hb = i + 1;
		}
		i++;
	}
	struct ident_set *sets[] = {&sm->file, &sm->macro, &sm->undef};
	for (int k = 0; k < 3; k++)
		if (sets[k]->n > 1)
			qsort_r(sets[k]->v, (size_t)sets[k]->n, sizeof *sets[k]->v, ident_cmp, (void *)m);
}

/* Names every compile knows without the pass declaring them. */
static int builtin_name(const char *w, size_t n)
{
	static const char *const names[] = {
		"void", "bool", "char", "short", "int", "long", "float", "double", "signed", "unsigned",
		"const", "volatile", "true", "false", "nullptr", "template", "typename", "sizeof", "decltype",
		"__half", "__half2", "half", "half2", "__nv_bfloat16", "__nv_bfloat162", "nv_bfloat16",
		"nv_bfloat162", "int8_t", "int16_t", "int32_t", "int64_t", "uint8_t", "uint16_t",
		"uint32_t", "uint64_t", "intptr_t", "uintptr_t", "size_t", "ptrdiff_t", "dim3", NULL
	};
	if (in_list(names, w, n))
		return 1;
	/* the CUDA vector types: float4, uchar2, longlong1, ... */
	static const char *const vec[] = {
		"char", "uchar", "short", "ushort", "int", "uint", "long", "ulong", "longlong", "ulonglong",
		"float", "double", NULL
	};
	return n > 1 && w[n - 1] >= '1' && w[n - 1] <= '4' && in_list(vec, w, n - 1);
}

/* Whether the header m[hb, open) has the identifier w[0, n) outside its
 * preprocessor lines (a #define between two functions is not part of the
 * second one's declaration). */
static int header_has(const char *m, size_t hb, size_t open, const char *w, size_t n)
{
	int line_start = hb == 0 || m[hb - 1] == '\n';
	for (size_t k = hb; k < open;) {
		if (m[k] == '\n') {
			line_start = 1;
			k++;
		} else if (is_space(m[k])) {
			k++;
		} else if (line_start && m[k] == '#') {
			while (k < open && !(m[k] == '\n' && m[k - 1] != '\\'))
				k++;
		} else if (is_ident(m[k])) {
			size_t b = k;
			while (k < open && is_ident(m[k]))
				k++;
			if (k - b == n && memcmp(m + b, w, n) == 0)
				return 1;
			line_start = 0;
		} else {
			line_start = 0;
			k++;
		}
	}
	return 0;
}

/* Whether the kernel expression m[kb, ke) of a pf_launch means the same at
 * the end of the file: no subscript or member access, and every identifier
 * in it a builtin name, a macro that is never #undef'd or a file-scope name
 * that no header of a declaration around the launch (template parameters,
 * function parameters, a lambda's) redeclares.  Returns 1 or 0; 1 when out of memory (the
 * compilers then say what is wrong, as they always did). */
static int expr_is_file_scope(struct scope_map *sm, const char *m, size_t len, size_t kb, size_t ke)
{
	if (!sm->built)
		scope_map_build(sm, m, len);
	if (sm->oom)
		return 1;
	for (size_t i = kb; i < ke;) {
		char c = m[i];
		if (c == '[' || (c == '-' && i + 1 < ke && m[i + 1] == '>') ||
		    (c == '.' && !(i > kb && m[i - 1] >= '0' && m[i - 1] <= '9')))
			return 0;
		if (!is_ident(c)) {
			i++;
			continue;
		}
		size_t b = i;
		while (i < ke && is_ident(m[i]))
			i++;
		size_t n = i - b;
		if ((m[b] >= '0' && m[b] <= '9') || builtin_name(m + b, n))
			continue;
		if (ident_in(&sm->undef, m, m + b, n))
			return 0;
		if (ident_in(&sm->macro, m, m + b, n))
			continue;
		if (!ident_in(&sm->file, m, m + b, n))
			return 0;
		/* the frames around the launch: the last one opened before it
		 * and those of its ancestors still open (frames are in the
		 * order of their `{`) */
		int lo = 0, hi = sm->n_fr;
		while (lo < hi) {
			int mid = lo + (hi - lo) / 2;
			if (sm->fr[mid].open < kb)
				lo = mid + 1;
			else
				hi = mid;
		}
		for (int f = lo - 1; f >= 0; f = sm->fr[f].parent) {
			const struct frame *fr = &sm->fr[f];
			if (fr->header_names && fr->close >= ke && header_has(m, fr->hb, fr->open, m + b, n))
				return 0;
		}
	}
	return 1;
}

/* GNU attributes whose string argument g++ copies verbatim into its assembly
 * output (a newline in it starts a directive of the author's choosing, such
 * as `.incbin "/any/file"`) or that make the loader run code (ifunc,
 * target_clones).  pf_emu.h poisons the same names for the host compile, so
 * a name made by token pasting fails there; this check names the line. */
static const char *const smuggling_attr[] = {
	"section", "alias", "weakref", "ifunc", "symver", "target_clones", NULL
};

/* Whether m[b, b + n) names one of smuggling_attr, bare or as __name__. */
static int smuggling_attr_name(const char *w, size_t n)
{
	if (n > 4 && memcmp(w, "__", 2) == 0 && memcmp(w + n - 2, "__", 2) == 0) {
		w += 2;
		n -= 4;
	}
	return in_list(smuggling_attr, w, n);
}

/* Offset just past the bracket that closes the one at m[i] ('(' or '['),
 * or len when it does not close. */
static size_t close_of(const char *m, size_t len, size_t i)
{
	int depth = 0;
	for (; i < len; i++) {
		if (m[i] == '(' || m[i] == '[')
			depth++;
		else if ((m[i] == ')' || m[i] == ']') && --depth == 0)
			return i + 1;
	}
	return len;
}

/* The checks that keep the author's strings out of the host compiler's
 * assembly output, on the masked text m (src: the text itself):
 *   - the attributes in smuggling_attr inside __attribute__((...)),
 *     __attribute((...)), __declspec(...) and [[...]];
 *   - #ident and #sccs, whose string g++ also copies into the assembly;
 *   - what the lexers read differently from the physical text the scan
 *     sees: a backslash-newline between two characters of code (g++ joins
 *     them: `#inc\<newline>lude` is an #include), a lone carriage return
 *     (a newline to g++), a non-ASCII character in code, a word touching
 *     a literal's closing quote (a suffix or a macro, so `"x"LR"(` lexes
 *     two ways), a raw string in a directive (g++ ends it with the line
 *     after #define, not after #pragma or #if).
 * Returns 0, or -1 with diag (compile_error, the line). */
static int check_asm_strings(const char *label, const char *src, const char *m, size_t len,
			     struct pass_diag *diag)
{
	size_t cursor = 0;
	int cur_line = 1, line_start = 1, in_directive = 0;
	/* g++ ends a line at a lone carriage return, which the scan would
	 * read as a blank (in a // comment: the rest of the line) */
	for (size_t i = 0; i < len; i++)
		if (src[i] == '\r' && (i + 1 >= len || src[i + 1] != '\n')) {
			int line = line_at(m, i, &cursor, &cur_line);
			return fail(diag, PASS_COMPILE_ERROR, line, "%s:%d: a carriage return that does not end "
				    "a line (CR LF); save the file with LF or CR LF line ends", label, line);
		}
	for (size_t i = 0; i < len; i++) {
		char c = m[i];
		if ((unsigned char)c >= 0x80) {
			int line = line_at(m, i, &cursor, &cur_line);
			return fail(diag, PASS_COMPILE_ERROR, line, "%s:%d: a non-ASCII character outside comments "
				    "and strings", label, line);
		}
		if ((c == '"' || (c == '\'' && (i == 0 || !is_ident(m[i - 1])))) && i + 1 < len &&
		    ((m[i + 1] >= 'a' && m[i + 1] <= 'z') || (m[i + 1] >= 'A' && m[i + 1] <= 'Z') ||
		     m[i + 1] == '_' || m[i + 1] == '$')) {
			/* a literal's closing quote touching a word: g++ reads the
			 * word as the literal's suffix unless it names a macro, so
			 * `"x"LR"(` is a raw string or not depending on a #define */
			int line = line_at(m, i, &cursor, &cur_line);
			return fail(diag, PASS_COMPILE_ERROR, line, "%s:%d: a word touching a string or character "
				    "literal; put a space between them", label, line);
		}
		if (c == '"' && in_directive && i > 0 && m[i - 1] == 'R' &&
		    (i < 2 || !is_ident(m[i - 2]) || (strchr("LuU8", m[i - 2]) != NULL &&
		     (i < 3 || !is_ident(m[i - 3]) || (m[i - 2] == '8' && m[i - 3] == 'u' &&
							(i < 4 || !is_ident(m[i - 4]))))))) {
			/* g++ ends such a literal with the line after #define but
			 * not after #pragma or #if: no lexer can be sure of it */
			int line = line_at(m, i, &cursor, &cur_line);
			return fail(diag, PASS_COMPILE_ERROR, line, "%s:%d: a raw string literal in a preprocessor "
				    "directive", label, line);
		}
		if (c == '\\' && i > 0 && !is_space(m[i - 1]) && m[i - 1] != '\n') {
			/* g++ splices a backslash, blanks and a newline away before
			 * it forms tokens; the scan reads the lines as they are */
			size_t j = i + 1;
			while (j < len && is_space(m[j]))
				j++;
			if (j + 1 < len && m[j] == '\n' && !is_space(m[j + 1]) && m[j + 1] != '\n') {
				int line = line_at(m, i, &cursor, &cur_line);
				return fail(diag, PASS_COMPILE_ERROR, line, "%s:%d: a backslash-newline between two "
					    "characters of code; join the two lines, or leave a blank before the "
					    "backslash", label, line);
			}
		}
		if (c == '\n') {
			size_t b = i;
			while (b > 0 && (is_space(m[b - 1])))
				b--;
			if (b == 0 || m[b - 1] != '\\')
				in_directive = 0;
			line_start = 1;
			continue;
		}
		if (is_space(c))
			continue;
		if (line_start && (c == '#' || (c == '%' && i + 1 < len && m[i + 1] == ':'))) {
			in_directive = 1;
			size_t d = i + (c == '#' ? 1 : 2);
			while (d < len && is_space(m[d]))
				d++;
			size_t w = d;
			while (d < len && is_ident(m[d]))
				d++;
			if ((d - w == 5 && memcmp(m + w, "ident", 5) == 0) ||
			    (d - w == 4 && memcmp(m + w, "sccs", 4) == 0)) {
				int line = line_at(m, i, &cursor, &cur_line);
				return fail(diag, PASS_COMPILE_ERROR, line, "%s:%d: #%.*s copies its string into "
					    "the host assembly; a pass may not use it", label, line,
					    (int)(d - w), m + w);
			}
		}
		line_start = 0;
		size_t b = i, e;
		if (is_ident(c) && (i == 0 || !is_ident(m[i - 1]))) {
			while (i + 1 < len && is_ident(m[i + 1]))
				i++;
			size_t n = i + 1 - b;
			int attr = (n == 13 && memcmp(m + b, "__attribute__", 13) == 0) ||
				   (n == 11 && memcmp(m + b, "__attribute", 11) == 0) ||
				   (n == 10 && memcmp(m + b, "__declspec", 10) == 0);
			if (!attr)
				continue;
			e = i + 1;
			while (e < len && (is_space(m[e]) || m[e] == '\n'))
				e++;
			if (e >= len || m[e] != '(')
				continue;
			b = e;
		} else if (c == '[' && i + 1 < len && m[i + 1] == '[') {
			b = i;
		} else {
			continue;
		}
		e = close_of(m, len, b);
		for (size_t k = b; k < e; k++) {
			if (!is_ident(m[k]) || is_ident(m[k - 1]))
				continue;
			size_t w = k;
			while (k < e && is_ident(m[k]))
				k++;
			if (smuggling_attr_name(m + w, k - w)) {
				int line = line_at(m, w, &cursor, &cur_line);
				return fail(diag, PASS_COMPILE_ERROR, line, "%s:%d: the attribute '%.*s' is not "
					    "allowed in a pass: its string goes into the host assembly or the "
					    "loader", label, line, (int)(k - w), src + w);
			}
		}
	}
	return 0;
}

int pass_scan(const char *label, const char *src, size_t len, int allow_device_only,
	      struct pass_names *names, struct pass_diag *diag)
{
	memset(names, 0, sizeof *names);
	memset(diag, 0, sizeof *diag);
	if (len > PASS_MAX_BYTES)
		return fail(diag, PASS_COMPILE_ERROR, 0, "%s: %zu bytes; a pass may have at most %u bytes "
			    "(1 MiB)", label, len, PASS_MAX_BYTES);
	const char *nul = memchr(src, '\0', len);
	if (nul != NULL) {
		int line = 1;
		for (const char *p = src; p < nul; p++)
			line += *p == '\n';
		return fail(diag, PASS_COMPILE_ERROR, line, "%s:%d: a NUL byte; a pass is text", label, line);
	}
	char *m = hostcc_mask(src, len);
	if (m == NULL)
		return fail(diag, PASS_INTERNAL_ERROR, 0, "%s: out of memory", label);

	size_t cursor = 0;
	int cur_line = 1, line_start = 1, has_replacement = 0, rc = 0;
	struct scope_map sm = {0};      /* built at the first pf_launch */
	for (size_t i = 0; i < len && rc == 0;) {
		char c = m[i];
		if (c == '\n') {
			line_start = 1;
			i++;
			continue;
		}
		if (is_space(c)) {
			i++;
			continue;
		}
		if (line_start && (c == '#' || (c == '%' && i + 1 < len && m[i + 1] == ':'))) {
			int line = line_at(m, i, &cursor, &cur_line);
			rc = check_directive(label, src, m, len, i, line, allow_device_only, diag);
			/* The rest of the logical line: a macro body may not hide
			 * what the code may not say, but pf_launch inside a #define
			 * is not a launch of a known kernel. */
			while (rc == 0 && i < len && !(m[i] == '\n' && m[i - 1] != '\\')) {
				if (m[i] == '<' && i + 2 < len && m[i + 1] == '<' && m[i + 2] == '<') {
					int l = line_at(m, i, &cursor, &cur_line);
					rc = fail(diag, PASS_UNSUPPORTED, l, "%s:%d: a <<<...>>> launch; launch kernels "
						  "with pf_launch from the replacement (device-side launches are "
						  "not supported)", label, l);
					break;
				}
				if (!is_ident(m[i]) || (i > 0 && is_ident(m[i - 1]))) {
					i++;
					continue;
				}
				size_t b = i;
				while (i < len && is_ident(m[i]))
					i++;
				if (is_has_include(m, b, i) || (i - b == 7 && memcmp(m + b, "_Pragma", 7) == 0)) {
					int l = line_at(m, b, &cursor, &cur_line);
					rc = m[b + 1] == '_' ? check_has_include(label, src, m, len, i, l, allow_device_only, diag)
							     : check_pragma_op(label, src, m, len, i, l, diag);
					continue;
				}
				const char *what = allow_device_only ? NULL : device_only_word(m + b, i - b);
				if (what != NULL) {
					int l = line_at(m, b, &cursor, &cur_line);
					rc = fail(diag, PASS_UNSUPPORTED, l, "%s:%d: %s needs a GPU; the cpu backend "
						  "cannot run it", label, l, what);
				}
			}
			continue;
		}
		line_start = 0;
		if (c == '<' && i + 2 < len && m[i + 1] == '<' && m[i + 2] == '<') {
			int line = line_at(m, i, &cursor, &cur_line);
			rc = fail(diag, PASS_UNSUPPORTED, line,
				  "%s:%d: a <<<...>>> launch; launch kernels with pf_launch from the "
				  "replacement (device-side launches are not supported)", label, line);
			break;
		}
		if (!is_ident(c)) {
			i++;
			continue;
		}
		size_t b = i;
		while (i < len && is_ident(m[i]))
			i++;
		size_t n = i - b;
		if (c >= '0' && c <= '9')
			continue;
		if (is_has_include(m, b, i) || (n == 7 && memcmp(m + b, "_Pragma", 7) == 0)) {
			int line = line_at(m, b, &cursor, &cur_line);
			rc = m[b + 1] == '_' ? check_has_include(label, src, m, len, i, line, allow_device_only, diag)
					     : check_pragma_op(label, src, m, len, i, line, diag);
			if (rc != 0)
				break;
			continue;
		}
		const char *what = allow_device_only ? NULL : device_only_word(m + b, n);
		if (what != NULL) {
			int line = line_at(m, b, &cursor, &cur_line);
			rc = fail(diag, PASS_UNSUPPORTED, line, "%s:%d: %s needs a GPU; the cpu backend cannot "
				  "run it", label, line, what);
			break;
		}
		if ((n == 16 && memcmp(m + b, "PASS_REPLACEMENT", 16) == 0) ||
		    (n == 19 && memcmp(m + b, "pf_pass_replacement", 19) == 0))
			has_replacement = 1;
		if (n == 9 && memcmp(m + b, "pf_launch", 9) == 0) {
			size_t p = i;
			while (p < len && (is_space(m[p]) || m[p] == '\n'))
				p++;
			if (p >= len || m[p] != '(')
				continue;
			int line = line_at(m, b, &cursor, &cur_line);
			size_t kb, ke;
			int r = launch_kernel_arg(m, len, p, &kb, &ke);
			if (r < 0) {
				rc = fail(diag, PASS_COMPILE_ERROR, line,
					  "%s:%d: pf_launch( without its closing parenthesis", label, line);
				break;
			}
			if (r > 0)
				continue;       /* the compilers will say what is missing */
			char expr[512];
			if (normalise_expr(m, kb, ke, expr, sizeof expr) != 0) {
				rc = fail(diag, PASS_COMPILE_ERROR, line,
					  "%s:%d: pf_launch's second argument '%.*s' does not name a kernel",
					  label, line, (int)(ke - kb > 120 ? 120 : ke - kb), src + kb);
				break;
			}
			if (expr_is_file_scope(&sm, m, len, kb, ke) && names_add(names, expr, line) != 0) {
				rc = fail(diag, PASS_INTERNAL_ERROR, 0, "%s: out of memory", label);
				break;
			}
			i = p + 1;
		}
	}
	if (rc == 0)
		rc = check_asm_strings(label, src, m, len, diag);
	scope_map_free(&sm);
	free(m);
	if (rc == 0 && !has_replacement)
		rc = fail(diag, PASS_COMPILE_ERROR, 0,
			  "%s: no replacement: a pass defines PASS_REPLACEMENT(pf_call *call) { ... }", label);
	return rc;
}

/* --- what the author sees of a compiler log ------------------------------ */

/* The file a diagnostic line names, as [*b, *e), or 0 when the line is not
 * one: "f:12:5: error: ...", "f:12: ...", "f(12): error: ..." (NVRTC),
 * "f: In function ...", "f: At global scope:", "In file included from f:3,"
 * and its "                 from f:1:" continuations. */
static int diag_file(const char *l, size_t n, size_t *b, size_t *e)
{
	size_t i = 0;
	if (n > 22 && memcmp(l, "In file included from ", 22) == 0)
		i = 22;
	else if (n > 0 && l[0] == ' ') {
		while (i < n && l[i] == ' ')
			i++;
		if (n - i < 6 || memcmp(l + i, "from ", 5) != 0)
			return 0;
		i += 5;
	}
	*b = i;
	for (; i < n; i++) {
		if (l[i] == '(' && i + 1 < n && l[i + 1] >= '0' && l[i + 1] <= '9') {
			size_t k = i + 1;
			while (k < n && l[k] >= '0' && l[k] <= '9')
				k++;
			if (k + 1 < n && l[k] == ')' && l[k + 1] == ':')
				break;
		}
		if (l[i] == ':' && i + 1 < n && ((l[i + 1] >= '0' && l[i + 1] <= '9') || l[i + 1] == ' '))
			break;
	}
	if (i >= n || i == *b)
		return 0;
	if (l[i] == ':' && l[i + 1] == ' ' && !(i + 4 < n && (memcmp(l + i + 2, "In ", 3) == 0 ||
							     memcmp(l + i + 2, "At ", 3) == 0)))
		return 0;
	*e = i;
	return 1;
}

/* Whether a file a diagnostic names is public: the toolchain's (/usr),
 * the API headers' (their directory is cut from the log: a bare name), the
 * stand-ins (include/...), passfs's own glue and the compilers' pseudo
 * files. */
static int public_file(const char *f, size_t n)
{
	if (n >= 5 && memcmp(f, "/usr/", 5) == 0 && memmem(f, n, "/../", 4) == NULL)
		return 1;
	if (n >= 8 && memcmp(f, "include/", 8) == 0 && memmem(f, n, "..", 2) == NULL)
		return 1;
	if (n > 0 && (f[0] == '<' || f[0] == '{'))
		return 1;       /* <passfs: ...>, <command-line>, {standard input} */
	return memchr(f, '/', n) == NULL && n < 64 && n > 2 && memcmp(f + n - 2, ".h", 2) == 0;
}

/* The compiler log as the author may read it: diagnostics about the pass
 * itself with their quoted source lines; diagnostics in public files
 * (passfs.h, the toolchain's headers) without the quoted lines; and of any
 * other file only its name, line and kind: its text, quoted lines and
 * carets are what would carry that file's bytes (a #line naming a file,
 * an assembler .include).  Lines that name no file ("collect2: error: ld
 * returned 1 exit status") are kept.  malloc'd; NULL when out of memory. */
char *pass_log_for_author(const char *label, const char *log)
{
	size_t ll = strlen(label);
	struct strbuf out = {0};
	if (strbuf_reserve(&out, log ? strlen(log) : 0))
		return NULL;
	enum { NONE, OWN, PUBLIC, OTHER } cur = NONE;
	for (const char *l = log; l && *l;) {
		const char *nl = strchr(l, '\n');
		size_t len = nl ? (size_t)(nl - l) + 1 : strlen(l), body = nl ? len - 1 : len;
		size_t fb, fe;
		const char *add = l;
		size_t addn = len;
		char repl[400];
		if (diag_file(l, body, &fb, &fe)) {
			if (fe - fb == ll && memcmp(l + fb, label, ll) == 0)
				cur = OWN;
			else if (public_file(l + fb, fe - fb))
				cur = PUBLIC;
			else
				cur = OTHER;
			if (cur == OTHER) {
				/* the name and the line, and the kind of message */
				size_t pos = fe;
				while (pos < body && l[pos] != ' ')
					pos++;
				const char *kind = memmem(l + pos, body - pos, "error", 5) != NULL ? "error"
						   : memmem(l + pos, body - pos, "warning", 7) != NULL ? "warning" : "note";
				int w = snprintf(repl, sizeof repl, "%.*s %s: (a message about a file other than %.100s, "
						 "not shown)\n", (int)(pos > 200 ? 200 : pos), l, kind, label);
				add = repl;
				addn = w > 0 ? ((size_t)w < sizeof repl ? (size_t)w : sizeof repl - 1) : 0;
			}
		} else if (body == 0 || l[0] == ' ' || l[0] == '\t') {
			/* a quoted line, a caret line, a fix-it, NVRTC's context */
			if (cur != OWN && cur != NONE)
				addn = 0;
		} else {
			cur = NONE;
		}
		if (strbuf_add(&out, add, addn)) {
			strbuf_free(&out);
			return NULL;
		}
		l += len;
	}
	return strbuf_take(&out);
}

/* Replaces *log (malloc'd, or NULL) with what the author may read of it;
 * "" when memory runs out (nothing unfiltered is kept). */
static void author_log(const char *label, char **log)
{
	if (*log == NULL)
		return;
	char *f = pass_log_for_author(label, *log);
	free(*log);
	*log = f != NULL ? f : strdup("");
}

/* --- compiling --------------------------------------------------------------- */

/* g++ says why an overload or a template did not fit in a note after the
 * error ("cannot convert 'grid' (type 'float') to type ...", "the comparison
 * reduces to '(5 == 4)'"): the first such note before the next error is
 * appended to msg in parentheses. */
static void why_note(const char *l, char *msg, size_t msglen)
{
	static const char *const keys[] = {
		"cannot convert", "could not convert", "no known conversion", "candidate expects",
		"the comparison reduces to", "deduced conflicting", "mismatched types",
	};
	for (; l && *l; l = strchr(l, '\n') ? strchr(l, '\n') + 1 : NULL) {
		const char *nl = strchr(l, '\n');
		size_t n = nl ? (size_t)(nl - l) : strlen(l);
		if (memmem(l, n, "error: ", 7) != NULL)
			return;
		const char *note = memmem(l, n, "note:", 5);
		if (note == NULL)
			continue;
		note += 5;
		while (*note == ' ')
			note++;
		for (size_t k = 0; k < sizeof keys / sizeof keys[0]; k++)
			if (memmem(note, n - (size_t)(note - l), keys[k], strlen(keys[k])) != NULL) {
				size_t used = strlen(msg);
				if (used + 4 < msglen)
					snprintf(msg + used, msglen - used, " (%.*s)", (int)(n - (size_t)(note - l)),
						 note);
				return;
			}
	}
}

/* The first error of a compiler log, as "pass.c:12: <text>", and its line.
 * NVRTC writes "pass.c(12): error: text", g++ "pass.c:12:5: error: text";
 * the linker "... undefined reference to `x'".  An error inside a header
 * (a static_assert in passfs.h) takes the line of the author's code that led
 * there: g++ names it just before ("pass.c:12:18:   required from here"). */
static void first_error(const char *label, const char *log, char *msg, size_t msglen, int *line)
{
	size_t ll = strlen(label);
	int last_author_line = 0;
	*line = 0;
	msg[0] = '\0';
	for (const char *l = log; l && *l; l = strchr(l, '\n') ? strchr(l, '\n') + 1 : NULL) {
		const char *nl = strchr(l, '\n');
		int n = nl ? (int)(nl - l) : (int)strlen(l);
		const char *err = NULL;
		int ln = 0;
		if (strncmp(l, label, ll) == 0) {
			const char *p = l + ll;
			if (*p == '(' || *p == ':')
				ln = atoi(p + 1);
		}
		if (ln > 0)
			last_author_line = ln;
		const char *e1 = memmem(l, (size_t)n, "error: ", 7);
		const char *e2 = memmem(l, (size_t)n, "undefined reference to", 22);
		if (e1 != NULL)
			err = e1 + 7;
		else if (e2 != NULL)
			err = e2;
		if (err == NULL)
			continue;
		if (ln == 0)
			ln = last_author_line;
		int rest = n - (int)(err - l);
		if (ln > 0)
			snprintf(msg, msglen, "%s:%d: %.*s", label, ln, rest, err);
		else
			snprintf(msg, msglen, "%s: %.*s", label, rest, err);
		*line = ln;
		why_note(nl ? nl + 1 : NULL, msg, msglen);
		return;
	}
}

void pass_module_free(struct pass_module *m)
{
	if (m == NULL)
		return;
	if (m->lowered != NULL)
		for (int i = 0; i < m->names.n; i++)
			free(m->lowered[i]);
	free(m->lowered);
	pass_names_free(&m->names);
	free(m->ptx);
	free(m->cubin_path);
	free(m->host_log);
	struct hostcc_output ho = {.dir = m->dir, .so_path = m->so_path};
	hostcc_output_free(&ho);
	free(m->label);
	free(m);
}

/* dir/pass.cubin with the bytes, or NULL (the PTX is loaded then). */
static char *write_cubin(const char *dir, const void *cubin, size_t size)
{
	char *path = NULL;
	if (dir == NULL || asprintf(&path, "%s/pass.cubin", dir) < 0)
		return NULL;
	if (base_write_atomic(path, ".", cubin, size, 0600, 0) != 0) {
		free(path);
		return NULL;
	}
	return path;
}

int pass_compile(const char *label, const char *src, size_t len, struct gpu_dev *dev,
		 struct pass_module **out, struct pass_diag *diag)
{
	struct pass_options o = {
		.arch = dev ? gpu_arch(dev) : "sm_90",
		.allow_device_only = dev != NULL && gpu_backend_of(dev) == GPU_BACKEND_CUDA,
	};
	return pass_compile_opts(label, src, len, &o, out, diag);
}

/* The host compile runs on its own thread while NVRTC checks the device
 * code: the two are independent (both start from the scanned source), and
 * the compiler is a child process, so the wall time is the longer of the
 * two instead of their sum. */
struct host_job {
	struct hostcc_request hr;
	struct hostcc_output ho;
	enum hostcc_status hs;
	char err[1024];
};

static void *host_job_run(void *arg)
{
	struct host_job *j = arg;
	j->hs = hostcc_compile(&j->hr, &j->ho, j->err, sizeof j->err);
	return NULL;
}

/* The device gate failed: wait for the host compile and drop it. */
static void host_job_end(struct host_job *j, int async, pthread_t tid)
{
	if (async)
		pthread_join(tid, NULL);
	else
		memset(&j->ho, 0, sizeof j->ho);
	if (async)
		hostcc_output_free(&j->ho);
}

int pass_compile_opts(const char *label, const char *src, size_t len, const struct pass_options *opt,
		      struct pass_module **out, struct pass_diag *diag)
{
	*out = NULL;
	if (label == NULL)
		label = "pass.c";
	struct pass_module *m = calloc(1, sizeof *m);
	if (m == NULL || (m->label = strdup(label)) == NULL) {
		free(m);
		memset(diag, 0, sizeof *diag);
		return fail(diag, PASS_INTERNAL_ERROR, 0, "%s: out of memory", label);
	}
	if (pass_scan(label, src, len, opt->allow_device_only, &m->names, diag) != 0) {
		pass_module_free(m);
		return -1;
	}
	const char *inc = hostcc_include_dir();
	char err[1024] = "";

	/* (d), started first: the host compile, with trampolines and the
	 * kernel table */
	struct host_job hj = {
		.hr = {
			.label = label, .src = src, .len = len,
			.names = (const char *const *)m->names.expr, .name_lines = m->names.line,
			.n_names = m->names.n, .kernel_table = 1, .timeout_s = opt->host_timeout_s,
			.include_dir = inc,
			/* a GPU runs the kernels: the host object needs only their
			 * signatures (inline PTX and wmma stay out of g++'s way) */
			.device_stubs = opt->allow_device_only,
			/* a pass's host code is small: cc1plus needs ~0.3 GiB */
			.as_limit = PASS_HOST_AS_LIMIT,
		},
	};
	pthread_t host_tid;
	int host_async = pthread_create(&host_tid, NULL, host_job_run, &hj) == 0;

	/* (c) the device gate; NVRTC needs a NUL-terminated copy */
	void *cubin = NULL;             /* written beside pass.so once the host compile is done */
	size_t cubin_size = 0;
	char why[256];
	if (opt->skip_nvrtc) {
		snprintf(m->note, sizeof m->note, "device compile skipped");
	} else if (!nvrtc_available(why, sizeof why)) {
		snprintf(m->note, sizeof m->note, "device compile skipped: NVRTC not available");
	} else {
		char *copy = malloc(len + 1);
		if (copy == NULL) {
			host_job_end(&hj, host_async, host_tid);
			pass_module_free(m);
			return fail(diag, PASS_INTERNAL_ERROR, 0, "%s: out of memory", label);
		}
		memcpy(copy, src, len);
		copy[len] = '\0';
		struct nvrtc_request nr = {
			.label = label, .src = copy, .arch = opt->arch ? opt->arch : "sm_90",
			.include_dir = inc, .pre_include = "passfs.h",
			.names = (const char *const *)m->names.expr, .name_lines = m->names.line,
			.n_names = m->names.n, .want_cubin = opt->allow_device_only,
		};
		struct nvrtc_output no;
		enum nvrtc_status st = nvrtc_compile(&nr, &no, err, sizeof err);
		free(copy);
		author_log(label, &no.log);
		m->nvrtc_ms = no.ms;
		if (st == NVRTC_GATE_COMPILE_ERROR || st == NVRTC_GATE_FAILED) {
			char msg[512];
			int line;
			first_error(label, no.log ? no.log : "", msg, sizeof msg, &line);
			set_log(diag, no.log);
			if (st == NVRTC_GATE_COMPILE_ERROR)
				fail(diag, PASS_COMPILE_ERROR, line, "%s", msg[0] ? msg : err);
			else
				fail(diag, PASS_INTERNAL_ERROR, 0, "%s", err);
			nvrtc_output_free(&no);
			host_job_end(&hj, host_async, host_tid);
			pass_module_free(m);
			return -1;
		}
		if (st == NVRTC_GATE_UNAVAILABLE) {
			snprintf(m->note, sizeof m->note, "device compile skipped: NVRTC not available");
		} else {
			m->ptx = no.ptx;
			m->lowered = no.lowered;
			cubin = no.cubin;
			cubin_size = no.cubin_size;
			no.ptx = NULL;
			no.lowered = NULL;
			no.n_lowered = 0;
			no.cubin = NULL;
		}
		nvrtc_output_free(&no);
	}

	/* (d) the host compile's outcome */
	if (host_async)
		pthread_join(host_tid, NULL);
	else
		host_job_run(&hj);
	struct hostcc_output ho = hj.ho;
	enum hostcc_status hs = hj.hs;
	author_log(label, &ho.log);
	snprintf(err, sizeof err, "%s", hj.err);
	m->host_ms = ho.ms;
	m->dir = ho.dir;
	m->so_path = ho.so_path;
	ho.dir = ho.so_path = NULL;
	if (hs == HOSTCC_OK && cubin != NULL)
		m->cubin_path = write_cubin(m->dir, cubin, cubin_size);
	free(cubin);
	if (hs != HOSTCC_OK) {
		char msg[512];
		int line;
		first_error(label, ho.log, msg, sizeof msg, &line);
		set_log(diag, ho.log);
		if (hs == HOSTCC_COMPILE_ERROR)
			fail(diag, PASS_COMPILE_ERROR, line, "%s", ho.timed_out || !msg[0] ? err : msg);
		else
			fail(diag, PASS_INTERNAL_ERROR, 0, "%s", err);
		hostcc_output_free(&ho);
		pass_module_free(m);
		return -1;
	}
	m->host_log = ho.log;
	ho.log = NULL;
	hostcc_output_free(&ho);
	if (m->host_log == NULL && (m->host_log = strdup("")) == NULL) {
		pass_module_free(m);
		return fail(diag, PASS_INTERNAL_ERROR, 0, "%s: out of memory", label);
	}

	/* (e) what the object would do when loaded, and what it refers to */
	char msg[1024];
	enum elfcheck_result er = elfcheck_file(m->so_path, label, msg, sizeof msg);
	if (er != ELFCHECK_OK) {
		fail(diag, er == ELFCHECK_REFUSED ? PASS_REJECTED : PASS_INTERNAL_ERROR, 0, "%s", msg);
		pass_module_free(m);
		return -1;
	}
	diag->verdict = PASS_OK;
	*out = m;
	return 0;
}

/* --- loading (in the worker) ----------------------------------------------------- */

int pass_load(const struct pass_module *m, struct pass_loaded *out, char *err, size_t errlen)
{
	memset(out, 0, sizeof *out);
	char msg[1024];
	if (elfcheck_file(m->so_path, m->label, msg, sizeof msg) != ELFCHECK_OK) {
		snprintf(err, errlen, "%s", msg);
		return -1;
	}
	void *h = gpu_dlopen(m->so_path, RTLD_NOW | RTLD_LOCAL);
	if (h == NULL) {
		const char *e = dlerror();
		snprintf(err, errlen, "%s: cannot load the compiled pass: %s", m->label, e ? e : "?");
		return -1;
	}
	void *fn = dlsym(h, "pf_pass_replacement");
	const struct pf_kernel_entry *table = dlsym(h, "pf_kernel_table");
	const int *count = dlsym(h, "pf_kernel_count");
	if (fn == NULL || table == NULL || count == NULL) {
		snprintf(err, errlen, "%s: the compiled pass has no %s", m->label,
			 fn == NULL ? "pf_pass_replacement (PASS_REPLACEMENT)" : "kernel table");
		gpu_dlclose(h);
		return -1;
	}
	out->handle = h;
	memcpy(&out->replacement, &fn, sizeof fn);
	out->kernels = table;
	out->n_kernels = *count;
	return 0;
}

void pass_unload(struct pass_loaded *l)
{
	if (l->handle != NULL)
		gpu_dlclose(l->handle);
	memset(l, 0, sizeof *l);
}
