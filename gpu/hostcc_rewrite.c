/* hostcc_rewrite.c - the rewrites of a pass's source for the host compile
 * (hostcc_int.h): extern __shared__ arrays, and the cuda backend's device
 * stubs. */
#define _GNU_SOURCE
#include "hostcc_int.h"

/* --- extern __shared__ ------------------------------------------------------ */

/* --- growing strings: base/strbuf.h ----------------------------------------- */

/* A C string literal's body for s ("pass.c" stays, quotes and backslashes
 * are escaped, control characters dropped). */
void hostcc_buf_quoted(struct strbuf *b, const char *s)
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
		if (hostcc_is_ident(m[i]))
			while (j < e && hostcc_is_ident(m[j]))
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
		if (k > from && (hostcc_is_ident(m[t[k].b]) && hostcc_is_ident(m[t[k - 1].b])))
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
		if (hostcc_is_ident(m[t[k].b]) && tok_is(m, t[k + 1], "[")) {
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
		if (k + 2 >= n || !hostcc_is_ident(m[t[k].b]) || !tok_is(m, t[k + 1], "[") ||
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
	if (strncmp(m + j, "namespace", 9) == 0 && !hostcc_is_ident(m[j + 9]))
		return 1;
	if (strncmp(m + j, "inline", 6) == 0 && !hostcc_is_ident(m[j + 6])) {
		j += 6;
		while (j < i && (m[j] == ' ' || m[j] == '\t' || m[j] == '\n'))
			j++;
		return strncmp(m + j, "namespace", 9) == 0 && !hostcc_is_ident(m[j + 9]);
	}
	if (strncmp(m + j, "extern", 6) == 0 && !hostcc_is_ident(m[j + 6])) {
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
		if (c == 'e' && strncmp(m + i, "extern", 6) == 0 && (i == 0 || !hostcc_is_ident(m[i - 1])) &&
		    !hostcc_is_ident(m[i + 6])) {
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
					hostcc_buf_quoted(&out, label);
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
	if (e - i < 6 || strncmp(m + i, "define", 6) != 0 || hostcc_is_ident(m[i + 6]))
		return;
	i += 6;
	while (i < e && (m[i] == ' ' || m[i] == '\t'))
		i++;
	size_t nb = i;
	while (i < e && hostcc_is_ident(m[i]))
		i++;
	if (i == nb || i - nb >= sizeof st->markers[0] || (i < e && m[i] == '('))
		return;
	int dev = 0, host = 0;
	for (size_t k = i; k < e;) {
		if (!hostcc_is_ident(m[k])) {
			k++;
			continue;
		}
		size_t w = k;
		while (k < e && hostcc_is_ident(m[k]))
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
		else if (hostcc_is_ident(m[t[k].b]))
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
		if (!hostcc_is_ident(m[i]) || (i > 0 && hostcc_is_ident(m[i - 1]))) {
			i++;
			continue;
		}
		size_t w = i;
		while (i < e && hostcc_is_ident(m[i]))
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
			while (k < e && hostcc_is_ident(m[k]))
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
		if (memcmp(m + i, w, n) == 0 && (i == b || !hostcc_is_ident(m[i - 1])) && (i + n == e || !hostcc_is_ident(m[i + n])))
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
		if (memcmp(m + i, "static", 6) == 0 && (i == 0 || !hostcc_is_ident(m[i - 1])) &&
		    (i + 6 == e || !hostcc_is_ident(m[i + 6]))) {
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
