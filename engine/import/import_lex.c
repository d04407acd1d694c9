/* import_lex.c - the Python subset's tokenizer (import_int.h): model.py and
 * weight_meta.py to tokens and logical lines, and the helpers that read them. */
#define _POSIX_C_SOURCE 200809L
#include "import_int.h"

/* ---- tokenizer ------------------------------------------------------------ */

static const char *const ops3[] = {"**=", "//=", ">>=", "<<=", "...", NULL};
static const char *const ops2[] = {"**", "//", "->", "+=", "-=", "*=", "/=", "@=", "%=", "&=",
				   "|=", "^=", "==", "!=", "<=", ">=", "<<", ">>", ":=", NULL};
static const char ops1[] = "()[]{},:.;@=+-*/%<>&|^~";

static struct tok *tok_push(struct prog *p, enum tk t, int line)
{
	if (p->ntok + 1 >= MAX_TOKENS) {
		imp_perr(p, line, "too many tokens");
		return NULL;
	}
	if (imp_grow(p, (void **)&p->toks, &p->captok, p->ntok, sizeof(struct tok), MAX_TOKENS))
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
		imp_prog_oom(p);
		return -1;
	}
	for (;;) {
		if (i >= n) {
			free(buf);
			imp_perr(p, start_line, "unterminated string");
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
				imp_perr(p, start_line, "unterminated string");
				return -1;
			}
			(*line)++;
		}
		if (len + 4 >= cap) {
			cap *= 2;
			char *nb = realloc(buf, cap);
			if (nb == NULL) {
				free(buf);
				imp_prog_oom(p);
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
					imp_perr(p, *line, "bad \\x escape in string");
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
		imp_perr(p, start_line, "NUL character in a string");
		return -1;
	}
	struct tok *k = tok_push(p, TK_STR, start_line);
	char *s = k ? imp_arena_strndup(&p->ar, buf, len) : NULL;
	free(buf);
	if (s == NULL) {
		if (k)
			imp_prog_oom(p);
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
				imp_perr(p, line, "integer literal too large");
				return -1;
			}
			v = (v << 4) | (unsigned)hexval(t[i]);
			any = 1;
		}
		if (!any) {
			imp_perr(p, line, "bad hexadecimal literal");
			return -1;
		}
		if (i < n && (isalnum((unsigned char)t[i]) || t[i] == '.')) {
			imp_perr(p, line, "bad number literal");
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
				imp_perr(p, line, "bad number literal");
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
				imp_perr(p, line, "number literal too long");
				return -1;
			}
			buf[bl++] = c;
		}
		i++;
	}
	if (bl >= sizeof(buf) - 1) {
		imp_perr(p, line, "number literal too long");
		return -1;
	}
	buf[bl] = 0;
	if (i < n && (isalnum((unsigned char)t[i]) || t[i] == '_' || t[i] == '.')) {
		imp_perr(p, line, "bad number literal (complex, octal and binary literals are not supported)");
		return -1;
	}
	struct tok *k = tok_push(p, is_float ? TK_FLOAT : TK_INT, line);
	if (k == NULL)
		return -1;
	if (is_float) {
		errno = 0;
		k->fv = strtod(buf, NULL);
		if (!isfinite(k->fv)) {
			imp_perr(p, line, "float literal out of range");
			return -1;
		}
	} else {
		if (bl > 1 && buf[0] == '0' && strspn(buf, "0") != bl) {
			imp_perr(p, line, "leading zeros in an integer literal");
			return -1;
		}
		errno = 0;
		char *end;
		k->iv = strtoll(buf, &end, 10);
		if (errno == ERANGE || *end) {
			imp_perr(p, line, "integer literal too large");
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

int imp_tokenize(struct prog *p)
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
			imp_perr(p, line, "unexpected '\\'");
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
					imp_perr(p, line, "unsupported string prefix '%s'", pre);
					return -1;
				}
			}
			struct tok *k = tok_push(p, TK_NAME, line);
			if (k == NULL)
				return -1;
			if ((k->s = imp_arena_strndup(&p->ar, t + i, wl)) == NULL) {
				imp_prog_oom(p);
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
					imp_perr(p, line, "non-ASCII character outside a string or comment");
				else
					imp_perr(p, line, "invalid character '%c'", isprint((unsigned char)c) ? c : '?');
				return -1;
			}
			struct tok *k = tok_push(p, TK_OP, line);
			if (k == NULL)
				return -1;
			if ((k->s = imp_arena_strndup(&p->ar, op, ol)) == NULL) {
				imp_prog_oom(p);
				return -1;
			}
			if (ol == 1 && strchr("([{", c)) {
				if (depth >= MAX_DEPTH) {
					imp_perr(p, line, "brackets nested too deeply");
					return -1;
				}
				open_line[depth++] = line;
			} else if (ol == 1 && strchr(")]}", c)) {
				if (depth == 0) {
					imp_perr(p, line, "unmatched '%c'", c);
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
		imp_perr(p, open_line[depth - 1], "unclosed bracket");
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
	p->lines = imp_palloc(p, (size_t)(nl ? nl : 1) * sizeof(struct lline));
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

struct tok *imp_cur(struct prog *p)
{
	return &p->toks[p->pos];
}

int imp_is_op(const struct tok *k, const char *op)
{
	return k->t == TK_OP && strcmp(k->s, op) == 0;
}

int imp_is_kw(const struct tok *k, const char *kw)
{
	return k->t == TK_NAME && strcmp(k->s, kw) == 0;
}

int imp_accept_op(struct prog *p, const char *op)
{
	if (imp_is_op(imp_cur(p), op)) {
		p->pos++;
		return 1;
	}
	return 0;
}

const char *imp_tok_desc(const struct tok *k, char *buf, size_t len)
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

int imp_expect_op(struct prog *p, const char *op)
{
	if (imp_accept_op(p, op))
		return 0;
	char b[64];
	imp_perr(p, imp_cur(p)->line, "expected '%s', found %s", op, imp_tok_desc(imp_cur(p), b, sizeof(b)));
	return -1;
}

static const char *const py_keywords[] = {
	"False", "None", "True", "and", "as", "assert", "async", "await", "break", "class",
	"continue", "def", "del", "elif", "else", "except", "finally", "for", "from", "global",
	"if", "import", "in", "is", "lambda", "nonlocal", "not", "or", "pass", "raise",
	"return", "try", "while", "with", "yield", NULL};

int imp_is_keyword(const char *s)
{
	for (int i = 0; py_keywords[i]; i++)
		if (!strcmp(py_keywords[i], s))
			return 1;
	return 0;
}
