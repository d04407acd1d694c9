/* hostcc.c - the host C++ compiler as a child process (see hostcc.h). */
#define _GNU_SOURCE
#include "hostcc.h"

#include "datadir.h"
#include "clock.h"
#include "file.h"
#include "gpu.h"
#include "hash.h"
#include "proc.h"
#include "strbuf.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define HOSTCC_LOG_CAP (64u << 10)
#define HOSTCC_DEFAULT_TIMEOUT_S 60
/* cc1plus on template-heavy code stays well under this; a runaway
 * constexpr or template recursion hits it instead of the machine. */
#define HOSTCC_AS_LIMIT (8ull << 30)
#define HOSTCC_FSIZE_LIMIT (1ull << 30)

/* --- include directory --------------------------------------------------- */

const char *hostcc_include_dir(void)
{
	const char *env = getenv("PASSFS_INCLUDE_DIR");
	if (env != NULL && *env != '\0')
		return env;
	return datadir_get(DATADIR_INCLUDE);
}

/* --- masking comments and literals ---------------------------------------- */

static int is_ident(int c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
}

static int is_digit(int c)
{
	return c >= '0' && c <= '9';
}

/* The C++ lexer's view, as g++ -std=c++17 has it (libcpp): line splices
 * (a backslash, blanks, a newline) vanish before tokens are formed, except
 * inside a raw string, which sees the text as written; a string or
 * character literal's encoding prefix (u8, u, U, L, with R for a raw string)
 * is a whole identifier token, so `xLR"(` is the identifier xLR and an
 * ordinary string; identifiers may hold '$'; a raw string started in a
 * directive ends with the directive's line; a pp-number takes a digit
 * separator only before a digit or letter, and a sign only after an
 * exponent letter that does not follow a separator.  An identifier right
 * after a literal is read as a word here, as g++ reads it when it names a
 * macro (else it is the literal's suffix, and `"x"LR"(` lexes two ways):
 * pass_scan refuses an identifier touching a literal.  Trigraphs are off
 * (C++17).  tests/unit/test_lexer.c compares this with g++ -E. */

/* Length of the line splice at s[i] (0 when there is none). */
static size_t splice_len(const char *s, size_t len, size_t i)
{
	if (i >= len || s[i] != '\\')
		return 0;
	size_t j = i + 1;
	while (j < len && (s[j] == ' ' || s[j] == '\t' || s[j] == '\f' || s[j] == '\v'))
		j++;
	if (j + 1 < len && s[j] == '\r' && s[j + 1] == '\n')
		j++;
	if (j < len && (s[j] == '\n' || s[j] == '\r'))
		return j + 1 - i;
	return 0;
}

/* The first position at or after i that is not inside a line splice. */
static size_t logical(const char *s, size_t len, size_t i)
{
	size_t n;
	while ((n = splice_len(s, len, i)) > 0)
		i += n;
	return i;
}

static int lex_ident(int c)
{
	return is_ident(c) || c == '$' || (c & 0x80) != 0;
}

/* Whether c ends a line for the lexer (a lone carriage return does). */
static int lex_newline(const char *s, size_t len, size_t i)
{
	return s[i] == '\n' || (s[i] == '\r' && (i + 1 >= len || s[i + 1] != '\n'));
}

/* Blanks m[b, e) but its newlines. */
static void blank(char *m, size_t b, size_t e)
{
	for (; b < e; b++)
		if (m[b] != '\n' && m[b] != '\r')
			m[b] = ' ';
}

/* The raw string whose opening quote is at s[q]: returns the offset past
 * its closing quote, or where it stops unterminated: the end of the line in
 * a directive (as after #define; g++ lets it run on after some #pragma
 * and #if lines, which is why pass_scan refuses raw strings in directives),
 * else the end of the text.  With a bad delimiter it runs to the next
 * quote, lines and directive regardless. */
static size_t raw_string_end(const char *s, size_t len, size_t q, int in_directive)
{
	size_t d0 = q + 1, d1 = d0;
	while (d1 < len && d1 - d0 < 16 && s[d1] != '(' && !strchr(" )\\\t\v\f\n\r", s[d1]))
		d1++;
	size_t i = d1 + 1;
	int good = d1 < len && s[d1] == '(';
	if (!good)
		i = d1;         /* a bad delimiter: from there, the token runs to the next quote */
	for (; i < len; i++) {
		if (in_directive && good && lex_newline(s, len, i)) {
			/* the directive's line ends at a newline that no backslash
			 * (blanks between allowed) splices */
			size_t b = i;
			while (b > d0 && strchr(" \t\f\v\r", s[b - 1]) != NULL)
				b--;
			if (b == d0 || s[b - 1] != '\\')
				return i;
		}
		if (!good && s[i] == '"')
			return i + 1;
		if (good && s[i] == ')' && i + 1 + (d1 - d0) < len && memcmp(s + i + 1, s + d0, d1 - d0) == 0 &&
		    s[i + 1 + (d1 - d0)] == '"')
			return i + 2 + (d1 - d0);
	}
	return len;
}

char *hostcc_mask(const char *src, size_t len)
{
	char *m = malloc(len + 1);
	if (m == NULL)
		return NULL;
	memcpy(m, src, len);
	m[len] = '\0';
	for (size_t k = 0; k < len; k++)
		if (m[k] == '\0')
			m[k] = ' ';
	const char *s = m;      /* NULs are blanks for the lexer too */
	int bol = 1, directive = 0;
	size_t i = logical(s, len, 0);
	while (i < len) {
		char c = s[i];
		size_t n = logical(s, len, i + 1);      /* the next character */
		if (lex_newline(s, len, i)) {
			bol = 1;
			directive = 0;
			i = n;
		} else if (c == ' ' || c == '\t' || c == '\f' || c == '\v' || c == '\r') {
			i = n;
		} else if (c == '/' && n < len && s[n] == '/') {
			/* to the end of the line; a splice continues it */
			size_t k = i;
			while (k < len && !lex_newline(s, len, k))
				k += splice_len(s, len, k) ? splice_len(s, len, k) : 1;
			blank(m, i, k);
			i = k;
		} else if (c == '/' && n < len && s[n] == '*') {
			size_t k = logical(s, len, n + 1), end = len;
			while (k < len) {
				size_t k2 = logical(s, len, k + 1);
				if (s[k] == '*' && k2 < len && s[k2] == '/') {
					end = k2 + 1;
					break;
				}
				k = k2;
			}
			blank(m, i, end);
			i = logical(s, len, end);
		} else if (bol && (c == '#' || (c == '%' && n < len && s[n] == ':'))) {
			directive = 1;
			bol = 0;
			i = n;
		} else if (lex_ident(c) && !is_digit(c)) {
			/* an identifier, read through splices; a literal when it is
			 * exactly an encoding prefix followed by a quote */
			char w[4];
			size_t wl = 0, k = i;
			while (k < len && lex_ident(s[k])) {
				if (wl < sizeof w)
					w[wl] = s[k];
				wl++;
				k = logical(s, len, k + 1);
			}
			int raw = 0, prefix = 0;
			if (k < len && (s[k] == '"' || s[k] == '\'') && wl <= 3) {
				raw = s[k] == '"' && w[wl - 1] == 'R';
				size_t pl = wl - (size_t)raw;
				prefix = pl == 0 || (pl == 1 && strchr("LuU", w[0]) != NULL) ||
					 (pl == 2 && w[0] == 'u' && w[1] == '8');
				prefix = prefix && (s[k] == '"' || !raw);
			}
			bol = 0;
			if (!prefix) {
				i = k;
			} else if (raw) {
				size_t e = raw_string_end(s, len, k, directive);
				blank(m, k + 1, e > k + 1 && s[e - 1] == '"' ? e - 1 : e);
				i = logical(s, len, e);
			} else {
				i = k;          /* the quote: an ordinary literal below */
			}
		} else if (c == '"' || c == '\'') {
			size_t k = n;
			while (k < len && s[k] != c && !lex_newline(s, len, k)) {
				size_t k2 = logical(s, len, k + 1);
				if (s[k] == '\\' && k2 < len && !lex_newline(s, len, k2))
					k2 = logical(s, len, k2 + 1);
				k = k2;
			}
			blank(m, i + 1, k);
			bol = 0;
			i = k < len && s[k] == c ? logical(s, len, k + 1) : k;
		} else if (is_digit(c) || (c == '.' && n < len && is_digit(s[n]))) {
			/* a pp-number: 1'000'000, 0x1p-3, 1e+5f */
			char prev = c, prev2 = 0;
			size_t k = n;
			while (k < len) {
				char d = s[k];
				size_t k2 = logical(s, len, k + 1);
				if (is_ident(d) || d == '$' || (d & 0x80) != 0 || (d == '.' && prev != '\'') ||
				    ((d == '+' || d == '-') && strchr("eEpP", prev) != NULL && prev2 != '\'')) {
					prev2 = prev;
					prev = d;
					k = k2;
				} else if (d == '\'' && k2 < len && (is_ident(s[k2]) || (s[k2] & 0x80) != 0)) {
					prev2 = d;
					prev = s[k2];
					k = logical(s, len, k2 + 1);
				} else {
					break;
				}
			}
			bol = 0;
			i = k;
		} else {
			bol = 0;
			i = n;
		}
	}
	return m;
}

/* --- extern __shared__ ------------------------------------------------------ */

/* --- growing strings: base/strbuf.h ----------------------------------------- */

/* A C string literal's body for s ("pass.c" stays, quotes and backslashes
 * are escaped, control characters dropped). */
static void buf_quoted(struct strbuf *b, const char *s)
{
	strbuf_puts(b, "\"");
	for (; *s; s++) {
		if (*s == '"' || *s == '\\')
			strbuf_add(b, "\\", 1);
		if ((unsigned char)*s >= 0x20)
			strbuf_add(b, s, 1);
	}
	strbuf_puts(b, "\"");
}

/* --- extern __shared__ ------------------------------------------------------ */

/* A token of a declaration: [b, e) in the masked text. */
struct tok {
	size_t b, e;
};

static int tok_is(const char *m, struct tok t, const char *word)
{
	size_t n = strlen(word);
	return t.e - t.b == n && memcmp(m + t.b, word, n) == 0;
}

/* Splits m[b, e) into identifier/number tokens and single punctuation
 * characters.  Returns the count (at most max). */
static int tokenize(const char *m, size_t b, size_t e, struct tok *out, int max)
{
	int n = 0;
	size_t i = b;
	while (i < e && n < max) {
		if (m[i] == ' ' || m[i] == '\t' || m[i] == '\n' || m[i] == '\r' || m[i] == '\f' ||
		    m[i] == '\v' || m[i] == '\\') {
			i++;
			continue;
		}
		size_t j = i + 1;
		if (is_ident(m[i]))
			while (j < e && is_ident(m[j]))
				j++;
		out[n].b = i;
		out[n].e = j;
		n++;
		i = j;
	}
	return n;
}

/* Index after the balanced (...) group starting at tokens[k] ("("), or -1. */
static int skip_parens(const char *m, const struct tok *t, int n, int k)
{
	if (k >= n || !tok_is(m, t[k], "("))
		return -1;
	int depth = 0;
	for (; k < n; k++) {
		if (tok_is(m, t[k], "("))
			depth++;
		else if (tok_is(m, t[k], ")") && --depth == 0)
			return k + 1;
	}
	return -1;
}

static void buf_tokens(struct strbuf *b, const char *m, const struct tok *t, int from, int to)
{
	for (int k = from; k < to; k++) {
		if (k > from && (is_ident(m[t[k].b]) && is_ident(m[t[k - 1].b])))
			strbuf_puts(b, " ");
		strbuf_add(b, m + t[k].b, t[k].e - t[k].b);
	}
}

/* Rewrites the declaration m[b, e) (from `extern` to just before `;`) per
 * pf_emu.h's contract.  Appends the replacement to out and returns 1, or 0
 * when it is not a dynamic shared memory declaration this understands. */
static int rewrite_decl(const char *m, size_t b, size_t e, int ns_scope, struct strbuf *out)
{
	struct tok raw[256], t[256];
	int nr = tokenize(m, b, e, raw, 256), n = 0, shared = 0;
	if (nr >= 256)
		return 0;
	/* drop extern, __shared__ and alignment attributes */
	for (int k = 0; k < nr;) {
		if (tok_is(m, raw[k], "extern")) {
			k++;
		} else if (tok_is(m, raw[k], "__shared__")) {
			shared = 1;
			k++;
		} else if (tok_is(m, raw[k], "__align__") || tok_is(m, raw[k], "alignas") ||
			   tok_is(m, raw[k], "__attribute__")) {
			k = skip_parens(m, raw, nr, k + 1);
			if (k < 0)
				return 0;
		} else {
			t[n++] = raw[k++];
		}
	}
	if (!shared || n < 4)
		return 0;
	/* T decl {, decl}: each decl is *...NAME[] */
	int first_name = -1;
	for (int k = 0; k + 2 < n; k++)
		if (is_ident(m[t[k].b]) && tok_is(m, t[k + 1], "[")) {
			first_name = k;
			break;
		}
	if (first_name < 1)
		return 0;
	int type_end = first_name;
	while (type_end > 0 && tok_is(m, t[type_end - 1], "*"))
		type_end--;
	if (type_end < 1)
		return 0;
	struct strbuf ty = {0};
	buf_tokens(&ty, m, t, 0, type_end);
	int k = type_end, ok = 1;
	while (k < n && ok) {
		int stars = 0;
		while (k < n && tok_is(m, t[k], "*")) {
			stars++;
			k++;
		}
		if (k + 2 >= n || !is_ident(m[t[k].b]) || !tok_is(m, t[k + 1], "[") ||
		    !tok_is(m, t[k + 2], "]")) {
			ok = 0;
			break;
		}
		struct tok name = t[k];
		k += 3;
		if (k < n && !tok_is(m, t[k], ",")) {
			ok = 0;
			break;
		}
		k++;
		char elem[600];
		snprintf(elem, sizeof elem, "%s%.*s", ty.p ? ty.p : "", stars, "****************");
		if (ns_scope)
			strbuf_printf(out, "#define %.*s ((%s *)pf_emu::dyn_smem())\n", (int)(name.e - name.b),
				   m + name.b, elem);
		else
			strbuf_printf(out, "%s%s *%.*s = (%s *)pf_emu::dyn_smem();", out->len ? " " : "", elem,
				   (int)(name.e - name.b), m + name.b, elem);
	}
	free(ty.p);
	return ok && !ty.oom;
}

/* Whether the `{` at position i (masked text) opens a namespace-like scope
 * (namespace ... {, extern "C" {) rather than a function or class body. */
static int opens_namespace(const char *m, size_t i)
{
	size_t j = i;
	while (j > 0 && m[j - 1] != ';' && m[j - 1] != '{' && m[j - 1] != '}')
		j--;
	while (j < i && (m[j] == ' ' || m[j] == '\t' || m[j] == '\n' || m[j] == '\r'))
		j++;
	if (strncmp(m + j, "namespace", 9) == 0 && !is_ident(m[j + 9]))
		return 1;
	if (strncmp(m + j, "inline", 6) == 0 && !is_ident(m[j + 6])) {
		j += 6;
		while (j < i && (m[j] == ' ' || m[j] == '\t' || m[j] == '\n'))
			j++;
		return strncmp(m + j, "namespace", 9) == 0 && !is_ident(m[j + 9]);
	}
	if (strncmp(m + j, "extern", 6) == 0 && !is_ident(m[j + 6])) {
		/* extern "C" { ... }, not extern "C" void f() { ... } */
		j += 6;
		while (j < i && (m[j] == ' ' || m[j] == '\t' || m[j] == '\n'))
			j++;
		if (j >= i || m[j] != '"')
			return 0;
		j++;
		while (j < i && m[j] != '"')
			j++;
		j++;
		while (j < i && (m[j] == ' ' || m[j] == '\t' || m[j] == '\n' || m[j] == '\r'))
			j++;
		return j == i;
	}
	return 0;
}

#define MAX_SCOPE_DEPTH 256

char *hostcc_rewrite_shared(const char *label, const char *src, size_t len, size_t *outlen)
{
	char *m = hostcc_mask(src, len);
	if (m == NULL)
		return NULL;
	struct strbuf out = {0};
	/* block[d]: whether brace level d+1 is a function or class body */
	unsigned char block[MAX_SCOPE_DEPTH];
	int depth = 0, in_block = 0, line = 1;
	size_t copied = 0, i = 0;
	int line_start = 1;
	while (i < len) {
		char c = m[i];
		if (c == '\n') {
			line++;
			line_start = 1;
			i++;
			continue;
		}
		if (line_start && c == '#') {
			/* a directive: skip the logical line */
			while (i < len && !(m[i] == '\n' && (i == 0 || m[i - 1] != '\\'))) {
				if (m[i] == '\n')
					line++;
				i++;
			}
			continue;
		}
		if (c != ' ' && c != '\t' && c != '\r')
			line_start = 0;
		if (c == '{') {
			int blk = in_block || !opens_namespace(m, i);
			if (depth < MAX_SCOPE_DEPTH)
				block[depth] = (unsigned char)blk;
			depth++;
			in_block = blk;
			i++;
			continue;
		}
		if (c == '}') {
			if (depth > 0)
				depth--;
			if (depth == 0)
				in_block = 0;
			else
				in_block = depth <= MAX_SCOPE_DEPTH ? block[depth - 1] : 1;
			i++;
			continue;
		}
		if (c == 'e' && strncmp(m + i, "extern", 6) == 0 && (i == 0 || !is_ident(m[i - 1])) &&
		    !is_ident(m[i + 6])) {
			size_t semi = i;
			while (semi < len && m[semi] != ';' && m[semi] != '{' && m[semi] != '}')
				semi++;
			struct strbuf rep = {0};
			if (semi < len && m[semi] == ';' && rewrite_decl(m, i, semi, !in_block, &rep) &&
			    !rep.oom) {
				strbuf_add(&out, src + copied, i - copied);
				int decl_lines = 0;
				for (size_t k = i; k < semi; k++)
					decl_lines += m[k] == '\n';
				if (!in_block) {
					/* #define needs a line of its own */
					size_t k = i;
					while (k > 0 && (m[k - 1] == ' ' || m[k - 1] == '\t'))
						k--;
					if (k > 0 && m[k - 1] != '\n')
						strbuf_puts(&out, "\n");
					strbuf_add(&out, rep.p, rep.len);
					strbuf_printf(&out, "#line %d ", line + decl_lines);
					buf_quoted(&out, label);
					strbuf_puts(&out, "\n");
				} else {
					strbuf_add(&out, rep.p, rep.len);
					for (int k = 0; k < decl_lines; k++)
						strbuf_puts(&out, "\n");
				}
				line += decl_lines;
				copied = i = semi + 1;
				free(rep.p);
				continue;
			}
			free(rep.p);
			i += 6;
			continue;
		}
		i++;
	}
	strbuf_add(&out, src + copied, len - copied);
	free(m);
	if (out.oom || out.p == NULL) {
		free(out.p);
		if (!out.oom) {
			char *e = calloc(1, 1);
			*outlen = 0;
			return e;
		}
		return NULL;
	}
	*outlen = out.len;
	return out.p;
}

/* --- device stubs (the cuda backend's host compile) --------------------------- */

#define MAX_MARKERS 32

struct stubber {
	const char *src, *m;
	size_t len;
	char markers[MAX_MARKERS][64];  /* object-like macros that expand to __device__/__global__ */
	int n_markers;
};

/* Index just past the logical directive line starting at i. */
static size_t skip_directive(const char *m, size_t len, size_t i)
{
	while (i < len && !(m[i] == '\n' && (i == 0 || m[i - 1] != '\\')))
		i++;
	return i;
}

/* Records `#define NAME body` (object-like) whose body says __device__ or
 * __global__ but not __host__: declarations using NAME are device-only. */
static void note_marker(struct stubber *st, size_t b, size_t e)
{
	const char *m = st->m;
	size_t i = b + 1;
	while (i < e && (m[i] == ' ' || m[i] == '\t'))
		i++;
	if (e - i < 6 || strncmp(m + i, "define", 6) != 0 || is_ident(m[i + 6]))
		return;
	i += 6;
	while (i < e && (m[i] == ' ' || m[i] == '\t'))
		i++;
	size_t nb = i;
	while (i < e && is_ident(m[i]))
		i++;
	if (i == nb || i - nb >= sizeof st->markers[0] || (i < e && m[i] == '('))
		return;
	int dev = 0, host = 0;
	for (size_t k = i; k < e;) {
		if (!is_ident(m[k])) {
			k++;
			continue;
		}
		size_t w = k;
		while (k < e && is_ident(m[k]))
			k++;
		if ((k - w == 10 && (strncmp(m + w, "__device__", 10) == 0 || strncmp(m + w, "__global__", 10) == 0)))
			dev = 1;
		for (int q = 0; q < st->n_markers; q++)
			if (strlen(st->markers[q]) == k - w && strncmp(m + w, st->markers[q], k - w) == 0)
				dev = 1;
		if (k - w == 8 && strncmp(m + w, "__host__", 8) == 0)
			host = 1;
	}
	if (dev && !host && st->n_markers < MAX_MARKERS) {
		memcpy(st->markers[st->n_markers], m + nb, i - nb);
		st->markers[st->n_markers][i - nb] = '\0';
		st->n_markers++;
	}
}

enum decl_kind { DECL_OTHER, DECL_SCOPE, DECL_KEEP, DECL_STUB };

/* What the `{` closing the declaration m[b, e) opens. */
static enum decl_kind classify_decl(const struct stubber *st, size_t b, size_t e)
{
	const char *m = st->m;
	size_t cap = e - b + 1;
	struct tok *t = malloc(sizeof *t * cap);
	if (t == NULL)
		return DECL_OTHER;
	int n = tokenize(m, b, e, t, (int)cap);
	int depth = 0, seen_paren = 0, has_kw = 0, last_close = -1, dev = 0, host = 0, cexpr = 0;
	for (int k = 0; k < n; k++) {
		if (tok_is(m, t[k], "(")) {
			seen_paren = 1;
			depth++;
		} else if (tok_is(m, t[k], ")")) {
			if (--depth == 0)
				last_close = k;
		} else if (depth == 0 && !seen_paren &&
			   (tok_is(m, t[k], "class") || tok_is(m, t[k], "struct") || tok_is(m, t[k], "union") ||
			    tok_is(m, t[k], "enum") || tok_is(m, t[k], "namespace"))) {
			has_kw = 1;
		}
		if (tok_is(m, t[k], "__device__") || tok_is(m, t[k], "__global__"))
			dev = 1;
		else if (tok_is(m, t[k], "__host__"))
			host = 1;
		else if (tok_is(m, t[k], "constexpr"))
			cexpr = 1;
		else if (is_ident(m[t[k].b]))
			for (int q = 0; q < st->n_markers; q++)
				if (tok_is(m, t[k], st->markers[q]))
					dev = 1;
	}
	/* extern "C" { ... } (the literal is masked to quotes and blanks) */
	int extern_c = n >= 2 && tok_is(m, t[0], "extern") && m[t[1].b] == '"';
	if (extern_c) {
		int only_quotes = 1;
		for (int k = 1; k < n; k++)
			only_quotes &= m[t[k].b] == '"';
		if (only_quotes) {
			free(t);
			return DECL_SCOPE;
		}
	}
	enum decl_kind kind = has_kw ? DECL_SCOPE : DECL_OTHER;
	if (last_close >= 0 && depth == 0) {
		/* a function: after the parameter list only qualifiers, or a
		 * trailing return type */
		int fn = 1;
		for (int k = last_close + 1; k < n && fn; k++) {
			if (tok_is(m, t[k], "-") && k + 1 < n && tok_is(m, t[k + 1], ">"))
				break;
			fn = tok_is(m, t[k], "const") || tok_is(m, t[k], "volatile") || tok_is(m, t[k], "noexcept") ||
			     tok_is(m, t[k], "override") || tok_is(m, t[k], "final") || tok_is(m, t[k], "mutable") ||
			     tok_is(m, t[k], "&") || tok_is(m, t[k], "__restrict__");
		}
		if (fn)
			kind = dev && !host && !cexpr ? DECL_STUB : DECL_KEEP;
	}
	free(t);
	return kind;
}

/* Index of the `}` matching the `{` at i (directive lines skipped), or len. */
static size_t match_brace(const char *m, size_t len, size_t i)
{
	int depth = 0, line_start = 0;
	for (; i < len; i++) {
		char c = m[i];
		if (c == '\n') {
			line_start = 1;
			continue;
		}
		if (line_start && c == '#') {
			i = skip_directive(m, len, i) - 1;
			continue;
		}
		if (c != ' ' && c != '\t' && c != '\r')
			line_start = 0;
		if (c == '{')
			depth++;
		else if (c == '}' && --depth == 0)
			return i;
	}
	return len;
}

/* Appends src[b, e) with every asm statement (asm/__asm__/__asm, any
 * qualifiers, then a parenthesised operand list) replaced by (void)0,
 * newlines kept. */
static void emit_without_asm(struct strbuf *out, const char *src, const char *m, size_t b, size_t e)
{
	size_t copied = b;
	for (size_t i = b; i < e;) {
		if (!is_ident(m[i]) || (i > 0 && is_ident(m[i - 1]))) {
			i++;
			continue;
		}
		size_t w = i;
		while (i < e && is_ident(m[i]))
			i++;
		size_t wl = i - w;
		if (!((wl == 3 && strncmp(m + w, "asm", 3) == 0) || (wl == 5 && strncmp(m + w, "__asm", 5) == 0) ||
		      (wl == 7 && strncmp(m + w, "__asm__", 7) == 0)))
			continue;
		size_t k = i;
		for (;;) {
			while (k < e && (m[k] == ' ' || m[k] == '\t' || m[k] == '\n' || m[k] == '\r'))
				k++;
			size_t q = k;
			while (k < e && is_ident(m[k]))
				k++;
			if (k == q)
				break;
			if (!((k - q == 8 && strncmp(m + q, "volatile", 8) == 0) ||
			      (k - q == 12 && strncmp(m + q, "__volatile__", 12) == 0) ||
			      (k - q == 6 && strncmp(m + q, "inline", 6) == 0) ||
			      (k - q == 4 && strncmp(m + q, "goto", 4) == 0))) {
				k = e;  /* not an asm statement we understand */
				break;
			}
		}
		if (k >= e || m[k] != '(')
			continue;
		int depth = 0;
		size_t close = k;
		for (; close < e; close++) {
			if (m[close] == '(')
				depth++;
			else if (m[close] == ')' && --depth == 0)
				break;
		}
		if (close >= e)
			continue;
		strbuf_add(out, src + copied, w - copied);
		strbuf_puts(out, "(void)0");
		for (size_t q = w; q <= close; q++)
			if (m[q] == '\n')
				strbuf_puts(out, "\n");
		copied = i = close + 1;
	}
	strbuf_add(out, src + copied, e - copied);
}

/* Whether m[b, e) has the identifier w. */
static int has_word(const char *m, size_t b, size_t e, const char *w)
{
	size_t n = strlen(w);
	for (size_t i = b; i + n <= e; i++)
		if (memcmp(m + i, w, n) == 0 && (i == b || !is_ident(m[i - 1])) && (i + n == e || !is_ident(m[i + n])))
			return 1;
	return 0;
}

/* Appends src[b, e) with the word `static` blanked: a kernel's host stub
 * gets external linkage, so the worker finds it by the symbol NVRTC's
 * lowered name spells (NVRTC lowers a static kernel to the name it would
 * have without `static`, g++ marks internal linkage in the mangling and
 * keeps the symbol out of the dynamic symbol table).  A pass that launches
 * a static kernel through a template parameter or a pointer then works on
 * the GPU as it does on the cpu backend. */
static void emit_without_static(struct strbuf *out, const char *src, const char *m, size_t b, size_t e)
{
	size_t copied = b;
	for (size_t i = b; i + 6 <= e; i++)
		if (memcmp(m + i, "static", 6) == 0 && (i == 0 || !is_ident(m[i - 1])) &&
		    (i + 6 == e || !is_ident(m[i + 6]))) {
			strbuf_add(out, src + copied, i - copied);
			strbuf_puts(out, "      ");
			copied = i + 6;
		}
	strbuf_add(out, src + copied, e - copied);
}

char *hostcc_device_stubs(const char *src, size_t len, size_t *outlen)
{
	char *m = hostcc_mask(src, len);
	if (m == NULL)
		return NULL;
	struct stubber st = {.src = src, .m = m, .len = len};
	struct strbuf out = {0};
	size_t copied = 0, decl_start = 0, i = 0;
	int line_start = 1;
	while (i < len) {
		char c = m[i];
		if (c == '\n') {
			line_start = 1;
			i++;
			continue;
		}
		if (line_start && c == '#') {
			size_t end = skip_directive(m, len, i);
			note_marker(&st, i, end);
			i = decl_start = end;
			continue;
		}
		if (c != ' ' && c != '\t' && c != '\r')
			line_start = 0;
		if (c == ';' || c == '}') {
			decl_start = ++i;
			continue;
		}
		if (c != '{') {
			i++;
			continue;
		}
		enum decl_kind k = classify_decl(&st, decl_start, i);
		if (k == DECL_SCOPE) {
			decl_start = ++i;
			continue;
		}
		size_t close = match_brace(m, len, i);
		if (close >= len)
			break;          /* unbalanced: leave the rest to the compiler */
		if (k == DECL_STUB) {
			/* the body goes; its line breaks and directives stay */
			if (has_word(m, decl_start, i, "__global__") && copied <= decl_start) {
				strbuf_add(&out, src + copied, decl_start - copied);
				emit_without_static(&out, src, m, decl_start, i + 1);
			} else {
				strbuf_add(&out, src + copied, i + 1 - copied);
			}
			strbuf_puts(&out, " __builtin_trap(); ");
			int ls = 0;
			for (size_t q = i + 1; q < close; q++) {
				if (m[q] == '\n') {
					strbuf_puts(&out, "\n");
					ls = 1;
				} else if (ls && m[q] == '#') {
					size_t end = skip_directive(m, len, q);
					strbuf_add(&out, src + q, end - q);
					q = end - 1;
				} else if (m[q] != ' ' && m[q] != '\t' && m[q] != '\r') {
					ls = 0;
				}
			}
			copied = close;
		} else if (k == DECL_KEEP) {
			strbuf_add(&out, src + copied, i + 1 - copied);
			emit_without_asm(&out, src, m, i + 1, close);
			copied = close;
		}
		i = close + 1;
		decl_start = i;
		line_start = 0;
	}
	strbuf_add(&out, src + copied, len - copied);
	free(m);
	if (out.oom) {
		free(out.p);
		return NULL;
	}
	if (out.p == NULL) {
		out.p = calloc(1, 1);
		if (out.p == NULL)
			return NULL;
	}
	*outlen = out.len;
	return out.p;
}

/* --- the compiler's input --------------------------------------------------- */

static char *build_source(const struct hostcc_request *req, size_t *outlen)
{
	const char *label = req->label ? req->label : "source.cu";
	struct strbuf b = {0};
	size_t rlen;
	const char *text = req->src;
	size_t tlen = req->len;
	char *stubbed = NULL;
	if (req->device_stubs) {
		if ((stubbed = hostcc_device_stubs(req->src, req->len, &tlen)) == NULL)
			return NULL;
		text = stubbed;
	}
	char *body = hostcc_rewrite_shared(label, text, tlen, &rlen);
	free(stubbed);
	if (body == NULL)
		return NULL;

	strbuf_puts(&b, "#line 1 ");
	buf_quoted(&b, label);
	strbuf_puts(&b, "\n");
	strbuf_add(&b, body, rlen);
	free(body);
	strbuf_puts(&b, "\n");

	/* What every object gets: a trap for pure virtual calls (the C++
	 * runtime, which has it, is not linked). */
	strbuf_puts(&b, "#line 1 \"<passfs: kernel launch glue>\"\n"
		     "extern \"C\" __attribute__((weak, visibility(\"hidden\"))) void "
		     "__cxa_pure_virtual(void) { __builtin_trap(); }\n");
	for (int i = 0; i < req->n_names; i++) {
		int line = req->name_lines ? req->name_lines[i] : 0;
		if (line > 0) {
			strbuf_printf(&b, "#line %d ", line);
			buf_quoted(&b, label);
			strbuf_puts(&b, "\n");
		}
		strbuf_printf(&b, "extern \"C\" int pf_tramp_%d(pf_call *c, pf_dim3 g, pf_dim3 b, size_t smem, "
			       "void **args, int nargs) { return pf_emu::launch_checked(c, &%s, g, b, "
			       "smem, args, nargs); }\n", i, req->names[i]);
	}
	if (req->kernel_table) {
		strbuf_puts(&b, "#line 1 \"<passfs: kernel table>\"\n"
			     "extern \"C\" const struct pf_kernel_entry pf_kernel_table[] = {\n");
		for (int i = 0; i < req->n_names; i++) {
			int line = req->name_lines ? req->name_lines[i] : 0;
			if (line > 0) {
				strbuf_printf(&b, "#line %d ", line);
				buf_quoted(&b, label);
				strbuf_puts(&b, "\n");
			}
			strbuf_printf(&b, "\t{(const void *)&%s, ", req->names[i]);
			buf_quoted(&b, req->names[i]);
			strbuf_puts(&b, "},\n");
		}
		if (req->n_names == 0)
			strbuf_puts(&b, "\t{0, 0},\n");
		strbuf_printf(&b, "};\nextern \"C\" const int pf_kernel_count = %d;\n", req->n_names);
	}
	if (b.oom) {
		free(b.p);
		return NULL;
	}
	*outlen = b.len;
	return b.p;
}

/* --- files ------------------------------------------------------------------ */

static int write_file(const char *path, const char *data, size_t len)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
	if (fd < 0)
		return -1;
	if (base_write_all(fd, data, len) != 0) {
		close(fd);
		return -1;
	}
	return close(fd);
}

void hostcc_output_free(struct hostcc_output *out)
{
	if (out == NULL)
		return;
	if (out->dir != NULL)
		base_rmtree(out->dir);
	free(out->dir);
	free(out->so_path);
	free(out->log);
	memset(out, 0, sizeof *out);
}

/* --- running the compiler ----------------------------------------------------- */

/* Finds an executable for `name` on PATH (or name itself when it holds a
 * slash), so the child can use execve, which is safe after fork in a
 * threaded process. */
static char *find_program(const char *name)
{
	if (strchr(name, '/') != NULL)
		return access(name, X_OK) == 0 ? strdup(name) : NULL;
	const char *path = getenv("PATH");
	if (path == NULL || *path == '\0')
		path = "/usr/local/bin:/usr/bin:/bin";
	while (*path) {
		const char *colon = strchr(path, ':');
		size_t n = colon ? (size_t)(colon - path) : strlen(path);
		char p[4096];
		if (n > 0 && n + strlen(name) + 2 < sizeof p) {
			memcpy(p, path, n);
			p[n] = '/';
			strcpy(p + n + 1, name);
			if (access(p, X_OK) == 0)
				return strdup(p);
		}
		path += n;
		if (*path == ':')
			path++;
	}
	return NULL;
}

/* Keeps the last HOSTCC_LOG_CAP bytes written. */
struct tail {
	char *p;
	size_t len;
	int cut;
};

static void tail_add(struct tail *t, const char *s, size_t n)
{
	unsigned long long dropped = 0;
	base_tail_keep(t->p, HOSTCC_LOG_CAP, &t->len, s, n, &dropped);
	if (dropped)
		t->cut = 1;
}

/* The log as the pass's author reads it: the compile directory's path (the
 * pass is "pass.c"), the API headers' directory and a precompiled
 * header's (its build's pch-tmp-XXXXXX, or pch-HASH) dropped, so a note in
 * passfs.h reads "passfs.h:228:19"; and a note when the head was cut. */
static char *finish_log(struct tail *t, const char *dir, const char *inc, const char *pch)
{
	struct strbuf b = {0};
	if (t->cut)
		strbuf_puts(&b, "[... earlier compiler output cut ...]\n");
	char pre[3][4200];
	int np = 0;
	snprintf(pre[np++], sizeof pre[0], "%.4096s/", dir);
	if (inc != NULL && inc[0])
		snprintf(pre[np++], sizeof pre[0], "%.4096s/", inc);
	if (pch != NULL && pch[0]) {
		/* root/pch-: any directory of the family */
		const char *sl = strrchr(pch, '/');
		if (sl != NULL)
			snprintf(pre[np++], sizeof pre[0], "%.*s/pch-", (int)(sl - pch), pch);
	}
	for (size_t i = 0; i < t->len;) {
		int hit = 0;
		for (int k = 0; k < np && !hit; k++) {
			size_t pl = strlen(pre[k]);
			if (t->len - i < pl || memcmp(t->p + i, pre[k], pl) != 0)
				continue;
			size_t e = i + pl;
			if (k == np - 1 && pch != NULL && pch[0]) {
				while (e < t->len && t->p[e] != '/' && t->p[e] != '\n' && t->p[e] != ' ')
					e++;
				if (e >= t->len || t->p[e] != '/')
					continue;
				e++;
			}
			i = e;
			hit = 1;
		}
		if (hit)
			continue;
		strbuf_add(&b, t->p + i, 1);
		i++;
	}
	if (b.p == NULL && !b.oom)
		strbuf_puts(&b, "");
	return b.oom ? strdup("") : b.p;
}

/* Runs argv with output captured into *t, in an address space of at most
 * as_limit bytes; returns the wait status, or -1 when it could not be
 * started (err set); *timed_out when it was killed. */
static int run_child(char *const argv[], char *const envp[], int timeout_s, unsigned long long as_limit,
		     struct tail *t, int *timed_out, char *err, size_t errlen)
{
	int pfd[2];
	if (pipe2(pfd, O_CLOEXEC) != 0) {
		snprintf(err, errlen, "host compiler: pipe: %s", strerror(errno));
		return -1;
	}
	int devnull = open("/dev/null", O_RDONLY | O_CLOEXEC);
	pid_t pid = fork();
	if (pid < 0) {
		snprintf(err, errlen, "host compiler: fork: %s", strerror(errno));
		close(pfd[0]);
		close(pfd[1]);
		if (devnull >= 0)
			close(devnull);
		return -1;
	}
	if (pid == 0) {
		/* Only async-signal-safe calls from here to execve. */
		setpgid(0, 0);
		struct rlimit rl;
		rl.rlim_cur = rl.rlim_max = (rlim_t)timeout_s + 5;
		setrlimit(RLIMIT_CPU, &rl);
		/* Where the caller holds lower hard limits (the compile jail),
		 * raising fails and its limits stay. */
		rl.rlim_cur = rl.rlim_max = as_limit;
		setrlimit(RLIMIT_AS, &rl);
		rl.rlim_cur = rl.rlim_max = HOSTCC_FSIZE_LIMIT;
		setrlimit(RLIMIT_FSIZE, &rl);
		rl.rlim_cur = rl.rlim_max = 0;
		setrlimit(RLIMIT_CORE, &rl);
		if (devnull >= 0)
			dup2(devnull, 0);
		dup2(pfd[1], 1);
		dup2(pfd[1], 2);
		/* Nothing else of ours (FUSE device, sockets) goes to the compiler. */
		close_range(3, ~0u, 0);
		sigset_t none;
		sigemptyset(&none);
		sigprocmask(SIG_SETMASK, &none, NULL);
		execve(argv[0], argv, envp);
		static const char msg[] = "host compiler: cannot execute\n";
		ssize_t w = write(2, msg, sizeof msg - 1);
		(void)w;
		_exit(127);
	}
	setpgid(pid, pid);
	close(pfd[1]);
	if (devnull >= 0)
		close(devnull);

	double deadline = base_now_ms() + timeout_s * 1000.0;
	int open_pipe = 1, status = 0;
	*timed_out = 0;
	char chunk[8192];
	for (;;) {
		double left = deadline - base_now_ms();
		if (left <= 0) {
			*timed_out = 1;
			kill(-pid, SIGKILL);
			kill(pid, SIGKILL);
			break;
		}
		if (open_pipe) {
			struct pollfd p = {.fd = pfd[0], .events = POLLIN};
			int r = poll(&p, 1, left > 1000 ? 1000 : (int)left + 1);
			if (r < 0 && errno != EINTR) {
				snprintf(err, errlen, "host compiler: poll: %s", strerror(errno));
				kill(-pid, SIGKILL);
				break;
			}
			if (r > 0) {
				ssize_t n = read(pfd[0], chunk, sizeof chunk);
				if (n > 0)
					tail_add(t, chunk, (size_t)n);
				else if (n == 0 || (errno != EINTR && errno != EAGAIN))
					open_pipe = 0;
			}
		} else {
			pid_t w = waitpid(pid, &status, WNOHANG);
			if (w == pid) {
				close(pfd[0]);
				/* anything the compiler left running in its group goes too */
				kill(-pid, SIGKILL);
				return status;
			}
			struct timespec ts = {0, 2 * 1000 * 1000};
			nanosleep(&ts, NULL);
		}
	}
	close(pfd[0]);
	base_waitpid(pid, &status);
	return *timed_out ? status : -1;
}

/* The compiler command: $PASSFS_CXX (words split on spaces) or g++. */
static int compiler_words(char **words, int max, char *store, size_t storelen)
{
	const char *cxx = getenv("PASSFS_CXX");
	if (cxx == NULL || *cxx == '\0')
		cxx = "g++";
	snprintf(store, storelen, "%s", cxx);
	int n = 0;
	for (char *s = strtok(store, " \t"); s != NULL && n < max; s = strtok(NULL, " \t"))
		words[n++] = s;
	return n;
}

/* The compiler command split into words[] (*nw of them; at most max) and
 * its program found on PATH: malloc'd, or NULL when there are no words or
 * no such program. */
static char *compiler_find(char **words, int max, char *store, size_t storelen, int *nw)
{
	*nw = compiler_words(words, max, store, storelen);
	return *nw > 0 ? find_program(words[0]) : NULL;
}

/* The compiler's whole environment: a fixed one, never the caller's (a
 * daemon's environment holds tokens and keys, and a compiler can be made to
 * quote /proc/self/environ).  PATH for the driver's helpers, C messages
 * (plain quotes in diagnostics), and TMPDIR: the caller's scratch directory
 * (a path, no secret).  NULL when out of memory; free with child_env_free. */
static char **child_env(void)
{
	char **env = calloc(5, sizeof(char *));
	if (env == NULL)
		return NULL;
	const char *tmp = getenv("TMPDIR");
	env[0] = strdup("PATH=/usr/bin:/bin");
	env[1] = strdup("LANG=C");
	env[2] = strdup("LC_ALL=C");
	if (tmp != NULL && *tmp == '/' && asprintf(&env[3], "TMPDIR=%s", tmp) < 0)
		env[3] = NULL;
	if (env[0] == NULL || env[1] == NULL || env[2] == NULL) {
		for (int i = 0; i < 4; i++)
			free(env[i]);
		free(env);
		return NULL;
	}
	return env;
}

static void child_env_free(char **env)
{
	for (int i = 0; env != NULL && env[i] != NULL; i++)
		free(env[i]);
	free(env);
}

static const char *const stand_in_headers[] = {"cuda_fp16.h", "cuda_bf16.h", "cuda_runtime.h", NULL};

/* Writes the stand-ins into dir (each includes passfs.h).  0, or -1 with
 * the failing path in `path`. */
static int write_stand_ins(const char *dir, char *path, size_t pathlen)
{
	static const char body[] = "#pragma once\n#include <passfs.h>\n";
	for (int i = 0; stand_in_headers[i] != NULL; i++) {
		snprintf(path, pathlen, "%s/%s", dir, stand_in_headers[i]);
		if (write_file(path, body, sizeof body - 1) != 0)
			return -1;
	}
	return 0;
}

/* Device-only headers a pass may include on the cuda backend: in the stub
 * compile only their names have to resolve (the bodies that use them are
 * gone); the namespaces exist for `using namespace nvcuda;` and aliases. */
static const struct {
	const char *path;
	const char *body;
} device_stand_ins[] = {
	{"mma.h", "#pragma once\n#include <passfs.h>\nnamespace nvcuda { namespace wmma {\n"
		  "struct matrix_a; struct matrix_b; struct accumulator; struct row_major; struct col_major;\n"
		  "enum layout_t { mem_row_major, mem_col_major };\n"
		  "template <typename Use, int m, int n, int k, typename T, typename Layout = void> class fragment;\n"
		  "namespace precision { struct tf32; struct b1; struct s4; struct u4; }\n"
		  "} }\n"},
	{"cooperative_groups.h", "#pragma once\n#include <passfs.h>\nnamespace cooperative_groups {}\n"},
	{"cooperative_groups/reduce.h", "#pragma once\n#include <cooperative_groups.h>\n"},
	{"cooperative_groups/memcpy_async.h", "#pragma once\n#include <cooperative_groups.h>\n"},
	{"cuda_pipeline.h", "#pragma once\n#include <passfs.h>\n"},
	{"cuda_awbarrier.h", "#pragma once\n#include <passfs.h>\n"},
};

/* --- precompiled passfs.h -------------------------------------------------
 *
 * About half of a small pass's host compile is parsing passfs.h (the
 * emulation layer and its libstdc++ headers).  A precompiled header saves
 * that: <cache>/pch-<key>/ holds passfs.h.gch plus a copy of the pass API
 * headers (GCC looks for NAME.gch in each include directory just before
 * NAME itself, and a later #include <passfs.h> must find the header in the
 * same directory), and the compile puts that directory first on its include
 * path.  The key hashes the compiler (path, size, mtime), its extra words,
 * the flags and every API header's bytes, so any change builds a new one; a
 * .gch GCC finds unusable is skipped, never an error.  Built on first use
 * into a temporary directory renamed into place (concurrent builders: the
 * first rename wins).  PASSFS_PCH=0 turns it off; PASSFS_CACHE_DIR=off too. */


static uint64_t fnv_str(uint64_t h, const char *s)
{
	return base_fnv1a_step(h, s, strlen(s) + 1);
}

/* The API headers (*.h) of dir, sorted, into names[] (malloc'd); count. */
static int api_headers(const char *dir, char ***names)
{
	DIR *d = opendir(dir);
	*names = NULL;
	if (d == NULL)
		return -1;
	int n = 0, cap = 0;
	struct dirent *e;
	while ((e = readdir(d)) != NULL) {
		size_t l = strlen(e->d_name);
		if (l < 3 || strcmp(e->d_name + l - 2, ".h") != 0)
			continue;
		if (n == cap) {
			cap = cap ? cap * 2 : 8;
			char **nn = realloc(*names, sizeof(char *) * (size_t)cap);
			if (nn == NULL)
				break;
			*names = nn;
		}
		if (((*names)[n] = strdup(e->d_name)) != NULL)
			n++;
	}
	closedir(d);
	for (int i = 1; i < n; i++)
		for (int j = i; j > 0 && strcmp((*names)[j - 1], (*names)[j]) > 0; j--) {
			char *t = (*names)[j];
			(*names)[j] = (*names)[j - 1];
			(*names)[j - 1] = t;
		}
	return n;
}

/* Finds or builds the precompiled header for this compiler and these
 * flags; writes its directory into out and returns 0, or -1 (compile
 * without it). */
/* The API headers in inc, each read once: names, bytes and lengths (free
 * with api_headers_free), each name, length and its bytes hashed into *h.
 * Returns how many, or -(how many) - 1 when there are none, memory ran out
 * or one could not be read (what was read is hashed and returned all the
 * same). */
static int api_headers_read(const char *inc, uint64_t *h, char ***names, char ***data, size_t **lens)
{
	int n = api_headers(inc, names);
	if (n < 0)
		n = 0;
	*data = n > 0 ? calloc((size_t)n, sizeof(char *)) : NULL;
	*lens = n > 0 ? calloc((size_t)n, sizeof(size_t)) : NULL;
	int ok = *data != NULL && *lens != NULL;        /* and so n > 0 */
	for (int i = 0; i < n && ok; i++) {
		char path[4096];
		snprintf(path, sizeof path, "%s/%s", inc, (*names)[i]);
		int rerr = 0;   /* an API header is far below 64 MiB */
		ok = ((*data)[i] = base_read_file(path, (size_t)64 << 20, &(*lens)[i], &rerr)) != NULL;
		if (ok) {
			*h = fnv_str(*h, (*names)[i]);
			*h = base_fnv1a_step(*h, &(*lens)[i], sizeof(*lens)[i]);
			*h = base_fnv1a_step(*h, (*data)[i], (*lens)[i]);
		}
	}
	return ok ? n : -n - 1;
}

static void api_headers_free(char **names, char **data, size_t *lens, int n)
{
	for (int i = 0; i < n; i++) {
		free(names[i]);
		if (data)
			free(data[i]);
	}
	free(names);
	free(data);
	free(lens);
}

static int pch_dir(const char *prog, char *const *extra, int n_extra, const char *const *flags, const char *inc,
		   char *const *env, int timeout_s, char *out, size_t outlen)
{
	const char *off = getenv("PASSFS_PCH");
	if (off != NULL && strcmp(off, "0") == 0)
		return -1;
	char root[3072];
	if (gpu_cache_dir("pch", root, sizeof root) != 0)
		return -1;
	uint64_t h = BASE_FNV1A_BASIS;
	struct stat st;
	if (stat(prog, &st) != 0)
		return -1;
	h = fnv_str(h, prog);
	h = base_fnv1a_step(h, &st.st_size, sizeof st.st_size);
	h = base_fnv1a_step(h, &st.st_mtime, sizeof st.st_mtime);
	for (int i = 0; i < n_extra; i++)
		h = fnv_str(h, extra[i]);
	for (int i = 0; flags[i] != NULL; i++)
		h = fnv_str(h, flags[i]);
	/* the API headers, read once: hashed into the key, copied on a build */
	char **names, **data;
	size_t *lens;
	char path[4096];
	int n = api_headers_read(inc, &h, &names, &data, &lens);
	int ok = n >= 0;
	if (n < 0)
		n = -n - 1;
	snprintf(out, outlen, "%s/pch-%016llx", root, (unsigned long long)h);
	snprintf(path, sizeof path, "%s/passfs.h.gch", out);
	int have = ok && stat(path, &st) == 0;
	/* Build: headers copied, stand-ins beside them, then g++ -x c++-header. */
	char tmp[3200] = "", stubs[3300];
	if (ok && !have) {
		snprintf(tmp, sizeof tmp, "%s/pch-tmp-XXXXXX", root);
		ok = mkdtemp(tmp) != NULL;
		for (int i = 0; i < n && ok; i++) {
			snprintf(path, sizeof path, "%s/%s", tmp, names[i]);
			ok = write_file(path, data[i], lens[i]) == 0;
		}
	}
	api_headers_free(names, data, lens, n);
	if (have || !ok) {
		if (tmp[0]) {
			/* the copy failed: perhaps another compile built it meanwhile */
			base_rmtree(tmp);
			snprintf(path, sizeof path, "%s/passfs.h.gch", out);
			return stat(path, &st) == 0 ? 0 : -1;
		}
		return have ? 0 : -1;
	}
	snprintf(stubs, sizeof stubs, "%s/stand-ins", tmp);
	ok = mkdir(stubs, 0700) == 0 && write_stand_ins(stubs, path, sizeof path) == 0;
	if (ok) {
		char hdr[3400], gch[3400], inc_opt[3400], stub_opt[3400];
		snprintf(hdr, sizeof hdr, "%s/passfs.h", tmp);
		snprintf(gch, sizeof gch, "%s/passfs.h.gch", tmp);
		snprintf(inc_opt, sizeof inc_opt, "-I%s", tmp);
		snprintf(stub_opt, sizeof stub_opt, "-I%s", stubs);
		char *argv[80];
		int na = 0;
		argv[na++] = (char *)prog;
		for (int i = 0; i < n_extra && na < 60; i++)
			argv[na++] = extra[i];
		for (int i = 0; flags[i] != NULL && na < 70; i++)
			argv[na++] = (char *)flags[i];
		argv[na++] = stub_opt;
		argv[na++] = inc_opt;
		argv[na++] = "-x";
		argv[na++] = "c++-header";
		argv[na++] = hdr;
		argv[na++] = "-o";
		argv[na++] = gch;
		argv[na] = NULL;
		struct tail t = {.p = malloc(HOSTCC_LOG_CAP)};
		int timed_out = 0;
		char e[256];
		int status = t.p ? run_child(argv, env, timeout_s, HOSTCC_AS_LIMIT, &t, &timed_out, e, sizeof e) : -1;
		free(t.p);
		ok = status != -1 && !timed_out && WIFEXITED(status) && WEXITSTATUS(status) == 0;
	}
	if (ok)
		base_rmtree(stubs);
	if (!ok || rename(tmp, out) != 0) {
		/* failed, or another compile put it there first */
		base_rmtree(stubs);
		base_rmtree(tmp);
		snprintf(path, sizeof path, "%s/passfs.h.gch", out);
		return stat(path, &st) == 0 ? 0 : -1;
	}
	return 0;
}

uint64_t hostcc_api_hash(const char *inc)
{
	if (inc == NULL)
		inc = hostcc_include_dir();
	uint64_t h = fnv_str(BASE_FNV1A_BASIS, inc);
	char **names, **data;
	size_t *lens;
	int n = api_headers_read(inc, &h, &names, &data, &lens);
	api_headers_free(names, data, lens, n < 0 ? -n - 1 : n);
	return h;
}

/* The code-generation flags into cg (room for 24, NULL-terminated); a
 * precompiled header must share them.  Stub bodies are identical: without
 * -fno-ipa-icf g++ may fold kernels into one address and the kernel table
 * could not tell them apart. */
static void code_flags(int device_stubs, const char **cg)
{
	static const char *const base[] = {
		"-std=c++17", "-O2", "-fPIC", "-fno-strict-aliasing", "-fno-math-errno",
		"-Wno-unknown-pragmas", "-mf16c", "-fno-exceptions", "-fno-rtti", "-fno-stack-protector",
		"-fno-threadsafe-statics", "-fno-gnu-unique", "-fdiagnostics-color=never", "-pipe", NULL
	};
	int k = 0;
	for (; base[k] != NULL; k++)
		cg[k] = base[k];
	if (device_stubs) {
		cg[k++] = "-fno-ipa-icf";
		cg[k++] = "-DPF_DEVICE_STUBS=1";
	}
	cg[k] = NULL;
}

int hostcc_pch_prepare(int device_stubs, const char *include_dir, char *out, size_t outlen)
{
	char store[1024];
	char *words[16];
	const char *cg[24];
	int nw;
	char *prog = compiler_find(words, 16, store, sizeof store, &nw);
	char **env = prog != NULL ? child_env() : NULL;
	int rc = -1;
	code_flags(device_stubs, cg);
	if (env != NULL)
		rc = pch_dir(prog, words + 1, nw - 1, cg, include_dir ? include_dir : hostcc_include_dir(), env,
			     HOSTCC_DEFAULT_TIMEOUT_S, out, outlen);
	child_env_free(env);
	free(prog);
	return rc;
}

int hostcc_compiler_path(char *out, size_t outlen)
{
	char store[1024];
	char *words[16];
	int nw;
	char *prog = compiler_find(words, 16, store, sizeof store, &nw);
	if (prog == NULL)
		return -1;
	int n = snprintf(out, outlen, "%s", prog);
	free(prog);
	return n > 0 && (size_t)n < outlen ? 0 : -1;
}

enum hostcc_status hostcc_compile(const struct hostcc_request *req, struct hostcc_output *out,
				  char *err, size_t errlen)
{
	memset(out, 0, sizeof *out);
	const char *label = req->label ? req->label : "source.cu";
	int timeout_s = req->timeout_s > 0 ? req->timeout_s : HOSTCC_DEFAULT_TIMEOUT_S;
	const char *inc = req->include_dir ? req->include_dir : hostcc_include_dir();
	enum hostcc_status st = HOSTCC_FAILED;
	char *prog = NULL, **env = NULL, *src = NULL;
	unsigned long long as_limit = req->as_limit > 0 && req->as_limit < HOSTCC_AS_LIMIT ? req->as_limit
											: HOSTCC_AS_LIMIT;
	struct tail t = {0};
	char pch[3200] = "";
	int have_pch = 0;

	const char *tmp = getenv("TMPDIR");
	if (tmp == NULL || *tmp == '\0')
		tmp = "/tmp";
	char dir[3072];
	if (strlen(tmp) > 2048) {
		snprintf(err, errlen, "%s: TMPDIR is too long", label);
		goto done;
	}
	snprintf(dir, sizeof dir, "%s/passfs-cc-XXXXXX", tmp);
	if (mkdtemp(dir) == NULL) {
		snprintf(err, errlen, "%s: cannot create a temporary directory under %s: %s", label, tmp,
			 strerror(errno));
		goto done;
	}
	out->dir = strdup(dir);
	if (out->dir == NULL)
		goto oom;

	char path[4096], incdir[3200], so[3200];
	snprintf(incdir, sizeof incdir, "%s/include", dir);
	if (mkdir(incdir, 0700) != 0) {
		snprintf(err, errlen, "%s: cannot create %s: %s", label, incdir, strerror(errno));
		goto done;
	}
	if (write_stand_ins(incdir, path, sizeof path) != 0) {
		snprintf(err, errlen, "%s: cannot write %s: %s", label, path, strerror(errno));
		goto done;
	}
	for (size_t i = 0; req->device_stubs && i < sizeof device_stand_ins / sizeof device_stand_ins[0]; i++) {
		const char *slash = strchr(device_stand_ins[i].path, '/');
		if (slash != NULL) {
			snprintf(path, sizeof path, "%s/%.*s", incdir, (int)(slash - device_stand_ins[i].path),
				 device_stand_ins[i].path);
			mkdir(path, 0700);
		}
		snprintf(path, sizeof path, "%s/%s", incdir, device_stand_ins[i].path);
		if (write_file(path, device_stand_ins[i].body, strlen(device_stand_ins[i].body)) != 0) {
			snprintf(err, errlen, "%s: cannot write %s: %s", label, path, strerror(errno));
			goto done;
		}
	}
	size_t srclen;
	src = build_source(req, &srclen);
	if (src == NULL)
		goto oom;
	snprintf(path, sizeof path, "%s/src.cc", dir);
	if (write_file(path, src, srclen) != 0) {
		snprintf(err, errlen, "%s: cannot write %s: %s", label, path, strerror(errno));
		goto done;
	}
	snprintf(so, sizeof so, "%s/pass.so", dir);

	char store[1024];
	char *words[16];
	int nw;
	if ((prog = compiler_find(words, 16, store, sizeof store, &nw)) == NULL) {
		snprintf(err, errlen, "%s: no host C++ compiler: '%s' not found (set PASSFS_CXX)", label,
			 nw ? words[0] : "");
		goto done;
	}
	char inc_opt[4200], incdir_opt[4300], pch_opt[3300];
	snprintf(inc_opt, sizeof inc_opt, "-I%s", inc);
	snprintf(incdir_opt, sizeof incdir_opt, "-I%s", incdir);
	const char *cg[24];
	code_flags(req->device_stubs, cg);
	const char *fixed[] = {
		"-shared", "-nostartfiles", "-nostdlib", "-Wl,--no-undefined", "-Wl,-z,noexecstack", incdir_opt,
		inc_opt, "-include", "passfs.h", "-x", "c++", path, "-x", "none", "-o", so, "-lm", "-lc", "-lgcc", NULL
	};
	if ((env = child_env()) == NULL || (t.p = malloc(HOSTCC_LOG_CAP)) == NULL)
		goto oom;
	double t_pch = base_now_ms();
	have_pch = pch_dir(prog, words + 1, nw - 1, cg, inc, env, timeout_s, pch, sizeof pch) == 0;
	out->pch_ms = base_now_ms() - t_pch;
	out->used_pch = have_pch;
	snprintf(pch_opt, sizeof pch_opt, "-I%s", pch);
	char *argv[80];
	int na = 0;
	argv[na++] = prog;
	for (int i = 1; i < nw; i++)
		argv[na++] = words[i];
	for (int i = 0; cg[i] != NULL; i++)
		argv[na++] = (char *)cg[i];
	if (have_pch) {
		/* a header GCC cannot use says so in the log (a test checks
		 * that the one passfs built is used) */
		argv[na++] = "-Winvalid-pch";
		argv[na++] = pch_opt;
	}
	for (int i = 0; fixed[i] != NULL; i++)
		argv[na++] = (char *)fixed[i];
	argv[na] = NULL;

	double t0 = base_now_ms();
	int status = run_child(argv, env, timeout_s, as_limit, &t, &out->timed_out, err, errlen);
	out->ms = base_now_ms() - t0;
	if (status == -1 && !out->timed_out)
		goto done;
	if (out->timed_out) {
		snprintf(err, errlen, "%s: the host compile timed out after %d s", label, timeout_s);
		st = HOSTCC_COMPILE_ERROR;
	} else if (WIFSIGNALED(status)) {
		snprintf(err, errlen, "%s: the host compiler was killed by signal %d", label,
			 WTERMSIG(status));
		st = HOSTCC_COMPILE_ERROR;
	} else if (WEXITSTATUS(status) == 127 && t.len > 0 &&
		   strstr(t.p, "host compiler: cannot execute") != NULL) {
		snprintf(err, errlen, "%s: cannot execute the host compiler %s", label, prog);
		st = HOSTCC_FAILED;
	} else if (WEXITSTATUS(status) != 0) {
		snprintf(err, errlen, "%s: the host compile failed", label);
		st = HOSTCC_COMPILE_ERROR;
	} else if ((out->so_path = strdup(so)) == NULL) {
		goto oom;
	} else {
		st = HOSTCC_OK;
	}
	goto done;
oom:
	snprintf(err, errlen, "%s: out of memory", label);
	st = HOSTCC_FAILED;
done:
	if (t.p != NULL && out->dir != NULL)
		out->log = finish_log(&t, out->dir, inc, have_pch ? pch : NULL);
	if (out->log == NULL)
		out->log = strdup("");
	free(t.p);
	child_env_free(env);
	free(prog);
	free(src);
	return st;
}

int hostcc_compiler_version(char *out, size_t len)
{
	char store[1024];
	char *words[16];
	int nw;
	char *prog = compiler_find(words, 15, store, sizeof store, &nw);
	if (prog == NULL) {
		snprintf(out, len, "'%s' not found (set PASSFS_CXX)", nw ? words[0] : "");
		return -1;
	}
	char *argv[18];
	argv[0] = prog;
	for (int i = 1; i < nw; i++)
		argv[i] = words[i];
	argv[nw] = "--version";
	argv[nw + 1] = NULL;
	char **env = child_env();
	struct tail t = {.p = malloc(HOSTCC_LOG_CAP)};
	int timed_out = 0, rc = -1;
	char e[256];
	int status = t.p && env ? run_child(argv, env, 20, HOSTCC_AS_LIMIT, &t, &timed_out, e, sizeof e) : -1;
	if (status != -1 && !timed_out && WIFEXITED(status) && WEXITSTATUS(status) == 0 && t.len > 0) {
		size_t n = strcspn(t.p, "\n");
		n = n < t.len ? n : t.len;
		snprintf(out, len, "%.*s (%s)", (int)n, t.p, prog);
		rc = 0;
	} else {
		snprintf(out, len, "%s --version failed%s%s", prog, status == -1 ? ": " : "", status == -1 ? e : "");
	}
	free(t.p);
	child_env_free(env);
	free(prog);
	return rc;
}
