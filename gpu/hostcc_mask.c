/* hostcc_mask.c - the pass API's include directory, and the source masker
 * (hostcc_int.h): comments and literals blanked so the scans and rewrites
 * see only code. */
#define _GNU_SOURCE
#include "hostcc_int.h"

/* --- include directory --------------------------------------------------- */

const char *hostcc_include_dir(void)
{
	const char *env = getenv("PASSFS_INCLUDE_DIR");
	if (env != NULL && *env != '\0')
		return env;
	return datadir_get(DATADIR_INCLUDE);
}

/* --- masking comments and literals ---------------------------------------- */

int hostcc_is_ident(int c)
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
	return hostcc_is_ident(c) || c == '$' || (c & 0x80) != 0;
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
				if (hostcc_is_ident(d) || d == '$' || (d & 0x80) != 0 || (d == '.' && prev != '\'') ||
				    ((d == '+' || d == '-') && strchr("eEpP", prev) != NULL && prev2 != '\'')) {
					prev2 = prev;
					prev = d;
					k = k2;
				} else if (d == '\'' && k2 < len && (hostcc_is_ident(s[k2]) || (s[k2] & 0x80) != 0)) {
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
