/* test_lexer.c - hostcc_mask (the masker every source scan reads through)
 * against the C++ lexer of g++ itself.
 *
 * The scan is only as good as its idea of what is code: text the masker
 * blanks as a comment or literal while g++ compiles it is invisible to the
 * include allow-list and every other check (`#define xLR` then `xLR"(` hid
 * an `#include "/etc/passwd"` that way).  So, for many random token soups
 * (identifiers ending in L/u/U/8/R, every string prefix, raw strings with
 * good and bad delimiters, character literals, digit separators, comments,
 * line splices with and without blanks, trigraphs, directives):
 *
 *   oracle: every identifier of a small vocabulary is a macro expanding to
 *     a marker (#define xLR QJ7_) in a prelude; `g++ -E -std=c++17` expands
 *     exactly the vocabulary identifiers its lexer sees as identifier
 *     tokens in code (not in comments, not in literals, not in the bodies
 *     of #define), so the markers in its output, in order, are g++'s view;
 *   masker: the vocabulary identifiers that are whole identifier tokens in
 *     hostcc_mask's output (not inside pp-numbers), in order.
 *
 * Both must be the same sequence.  Directive lines carry no vocabulary
 * words (a #define body is not expanded, and the scan reads every
 * directive line anyway), only what may start a literal there; what they
 * test is where that literal ends, seen in the lines that follow.  The
 * -E oracle is sound for #define and code; g++ lexes raw strings in some
 * #pragma and #if lines differently when compiling, which is why pass_scan
 * refuses raw strings in directives.  Fixed seed; PASSFS_LEXER_ITERS,
 * PASSFS_LEXER_SEED and PASSFS_LEXER_SIZE (tokens per soup) change the run.  Skipped (passes) without g++. */
#define _GNU_SOURCE
#include <ctype.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "hostcc.h"

#include "check.h"

static const char *const vocab[] = {
	"a", "R", "L", "u", "U", "u8", "LR", "uR", "UR", "u8R", "xL", "xLR", "xu", "xU", "x8", "xu8R", "x8R",
	"xR", "Ru", "R8", "_R", "$R", "b$", "uu8",
};
#define NV ((int)(sizeof vocab / sizeof vocab[0]))

static uint64_t rng;

static unsigned pick(unsigned n)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return (unsigned)(rng % n);
}

struct sbuf {
	char *p;
	size_t len, cap;
};

static void put(struct sbuf *b, const char *s)
{
	size_t n = strlen(s);
	if (b->len + n + 1 > b->cap) {
		b->cap = (b->len + n + 1) * 2;
		b->p = realloc(b->p, b->cap);
		if (b->p == NULL)
			abort();
	}
	memcpy(b->p + b->len, s, n + 1);
	b->len += n;
}

static const char *any(const char *const *list, unsigned n)
{
	return list[pick(n)];
}
#define ANY(list) any(list, sizeof list / sizeof list[0])

/* Between tokens: nothing (tokens touch), blanks, newlines, splices. */
static const char *const seps[] = {
	"", "", "", " ", " ", "\t", "\n", "\\\n", "\\ \n", "\\\t\n", "\r\n", "\\\r\n", "?\?/\n",
};
/* What literals and comments hold: quotes, backslashes, parentheses,
 * vocabulary words, newlines and splices. */
static const char *const inner[] = {
	"a", "R", "xLR", "u8", " ", "\"", "'", "\\", "\\\"", "\\'", "\\\\", "(", ")", ")\"", ")x\"", "x", "\n",
	"\\\n", "\\ \n", "*", "/", "*/", "//", "/*", "?\?/",
};
static const char *const delims[] = {
	"", "", "x", "ab", "a)", "\\", " ", "x\\\ny", "\"", "12345678901234567", "(", "\n",
};
static const char *const prefixes[] = {"", "", "L", "u", "U", "u8", "R", "LR", "uR", "UR", "u8R", "xLR", "x8R"};
static const char *const numbers[] = {
	"1", "1'000", "0x1'e", "1e", "1e+", "0x1p-", ".5", "1.", "1'", "1'a", "12'3'4", "1'e+", "0'u8", "1.'",
	"9'R", "7e'+",
};
static const char *const puncts[] = {
	"+", "-", "(", ")", ";", ",", ".", "<", ">", "*", "/", "'", "\"", "%", ":", "=", "\\", "?", "?\?/",
};

/* Up to n pieces of literal or comment text.  mode 0: anything; 1 (a
 * literal or // comment in a directive line): no vocabulary word and no
 * block comment (its newlines would not end the line) before a newline
 * ends the line, since text after an early close would still be the
 * directive's and the oracle cannot see a directive's words; 2 (a
 * block comment there): neither words nor newlines. */
static void inner_text(struct sbuf *b, unsigned n, int mode)
{
	int line_ended = 0;
	for (unsigned k = pick(n); k > 0; k--) {
		const char *t = ANY(inner);
		int word = strcmp(t, "a") == 0 || strcmp(t, "R") == 0 || strcmp(t, "xLR") == 0 || strcmp(t, "u8") == 0;
		if ((mode == 1 && !line_ended && (word || strcmp(t, "/*") == 0)) ||
		    (mode == 2 && (word || strchr(t, '\n') != NULL)))
			t = "x";
		line_ended |= strcmp(t, "\n") == 0;
		put(b, t);
	}
}

/* Prefixes a directive line may use: only real ones (a word before a
 * quote that is not a prefix would be a word the oracle cannot see). */
static const char *const dir_prefixes[] = {"", "", "L", "u", "U", "u8"};

/* One token of code; in_directive: no vocabulary word and no newline.
 * Returns whether it was a literal. */
static int token(struct sbuf *b, int in_directive)
{
	switch (pick(in_directive ? 6 : 9)) {
	case 0: /* a string or character literal, maybe unterminated */
		put(b, in_directive ? ANY(dir_prefixes) : ANY(prefixes));
		put(b, pick(3) ? "\"" : "'");
		inner_text(b, 4, in_directive);
		if (pick(4))
			put(b, pick(2) ? "\"" : "'");
		return 1;
	case 1: { /* a raw string */
		put(b, in_directive ? ANY(dir_prefixes) : ANY(prefixes));
		put(b, "R\"");
		/* a bad delimiter in a directive runs to the next quote,
		 * directive and all: pass_scan refuses raw strings there */
		static const char *const dir_delims[] = {"", "x", "ab"};
		const char *d = in_directive ? ANY(dir_delims) : ANY(delims);
		put(b, d);
		put(b, "(");
		inner_text(b, 6, in_directive);
		if (pick(5)) {
			put(b, ")");
			put(b, pick(4) ? d : ANY(delims));
			put(b, "\"");
		}
		return 1;
	}
	case 2:
		put(b, ANY(numbers));
		break;
	case 3:
		put(b, ANY(puncts));
		break;
	case 4: /* a comment */
		if (pick(2)) {
			put(b, "//");
			inner_text(b, 4, in_directive);
			if (!in_directive)
				put(b, pick(3) ? "\n" : "\\\n");
		} else {
			put(b, "/*");
			inner_text(b, 4, in_directive ? 2 : 0);
			if (pick(6) || in_directive)
				put(b, pick(4) ? "*/" : "*\\\n/");
		}
		break;
	case 5:
		put(b, "x");
		break;
	default:
		put(b, vocab[pick(NV)]);
		break;
	}
	return 0;
}

/* A soup of tokens, separators and directive lines. */
static void soup(struct sbuf *b, int n)
{
	for (int k = 0; k < n; k++) {
		if (pick(12) == 0) {
			/* a directive: what may start a literal in it, but no word
			 * g++ would expand (#define bodies are not expanded) */
			static const char *const hashes[] = {"\n#define D", "\n# define D", "\n%:define D", "\n#  define  D"};
			put(b, ANY(hashes));
			char num[16];
			snprintf(num, sizeof num, "%d ", k);
			put(b, num);
			for (unsigned t = 1 + pick(3); t > 0; t--) {
				token(b, 1);
				put(b, pick(4) ? " " : " \\\n");
			}
			put(b, "\n");
			continue;
		}
		/* a word touching a literal is refused by pass_scan, so such
		 * soups are not compared: keep most literals apart */
		int literal = token(b, 0);
		put(b, literal && pick(4) ? " " : ANY(seps));
	}
}

/* The position after the line splices at m[i] (i when there is none). */
static size_t past_splices(const char *m, size_t len, size_t i)
{
	for (;;) {
		if (i >= len || m[i] != '\\')
			return i;
		size_t j = i + 1;
		while (j < len && (m[j] == ' ' || m[j] == '\t' || m[j] == '\f' || m[j] == '\v' || m[j] == '\r'))
			j++;
		if (j >= len || m[j] != '\n')
			return i;
		i = j + 1;
	}
}

static int word_char(int c)
{
	return isalnum(c) || c == '_' || c == '$' || c >= 0x80;
}

/* The vocabulary indexes of the identifier tokens in masked text m, in
 * order, skipping pp-numbers as g++ forms them (the same rules as the
 * masker, written again from the grammar). */
static int masker_view(const char *m, size_t len, int *out, int max)
{
	int n = 0, bol = 1;
	size_t i = past_splices(m, len, 0);
	while (i < len) {
		unsigned char c = (unsigned char)m[i];
		size_t nx = past_splices(m, len, i + 1);
		if (c == '\n') {
			bol = 1;
			i = nx;
			continue;
		}
		if (c == ' ' || c == '\t' || c == '\r' || c == '\f' || c == '\v') {
			i = nx;
			continue;
		}
		if (bol && (c == '#' || (c == '%' && nx < len && m[nx] == ':'))) {
			/* a directive: its words are not expanded; to the end of
			 * the line, splices continuing it */
			while (i < len && m[i] != '\n')
				i = past_splices(m, len, i + 1);
			continue;
		}
		bol = 0;
		/* a word touching a closing quote: pass_scan refuses the text
		 * (g++ makes it a suffix unless it names a macro) */
		if ((c == '"' || (c == '\'' && (i == 0 || !word_char((unsigned char)m[i - 1])))) && nx < len &&
		    (isalpha((unsigned char)m[nx]) || m[nx] == '_' || m[nx] == '$'))
			return -2;
		if (isdigit(c) || (c == '.' && nx < len && isdigit((unsigned char)m[nx]))) {
			char prev = (char)c, prev2 = 0;
			while (nx < len) {
				unsigned char d = (unsigned char)m[nx];
				size_t n2 = past_splices(m, len, nx + 1);
				if (isalnum(d) || d == '_' || d == '$' || d >= 0x80 || (d == '.' && prev != '\'') ||
				    ((d == '+' || d == '-') && strchr("eEpP", prev) != NULL && prev2 != '\'')) {
					prev2 = prev;
					prev = (char)d;
					nx = n2;
				} else if (d == '\'' && n2 < len && (isalnum((unsigned char)m[n2]) || m[n2] == '_' ||
								     (unsigned char)m[n2] >= 0x80)) {
					prev2 = '\'';
					prev = m[n2];
					nx = past_splices(m, len, n2 + 1);
				} else {
					break;
				}
			}
			i = nx;
			continue;
		}
		if (word_char(c)) {
			char w[64];
			size_t wl = 0, k = i;
			while (k < len && word_char((unsigned char)m[k])) {
				if (wl + 1 < sizeof w)
					w[wl++] = m[k];
				k = past_splices(m, len, k + 1);
			}
			w[wl] = '\0';
			/* an encoding prefix is part of its literal, not a word */
			int quote = k < len && (m[k] == '"' || m[k] == '\'');
			if (quote && (strcmp(w, "L") == 0 || strcmp(w, "u") == 0 || strcmp(w, "U") == 0 ||
				      strcmp(w, "u8") == 0 ||
				      (m[k] == '"' && (strcmp(w, "R") == 0 || strcmp(w, "LR") == 0 || strcmp(w, "uR") == 0 ||
						       strcmp(w, "UR") == 0 || strcmp(w, "u8R") == 0)))) {
				i = k;
				continue;
			}
			for (int v = 0; v < NV; v++)
				if (strcmp(w, vocab[v]) == 0 && n < max)
					out[n++] = v;
			i = k;
			continue;
		}
		i = nx;
	}
	return n;
}

/* g++'s view: the markers QJ<k>_ in the preprocessed output, in order;
 * -1 when g++ could not be run. */
static int gcc_view(const char *path, int *out, int max)
{
	char cmd[600];
	snprintf(cmd, sizeof cmd, "g++ -E -P -std=c++17 -x c++ %s 2>/dev/null", path);
	FILE *p = popen(cmd, "r");
	if (p == NULL)
		return -1;
	int n = 0, c, state = 0, num = 0;
	/* a tiny matcher for QJ[0-9]+_ */
	while ((c = fgetc(p)) != EOF) {
		if (state == 0 && c == 'Q')
			state = 1;
		else if (state == 1 && c == 'J')
			state = 2, num = 0;
		else if (state >= 2 && c >= '0' && c <= '9')
			state = 3, num = num * 10 + (c - '0');
		else if (state == 3 && c == '_') {
			if (n < max)
				out[n++] = num;
			state = 0;
		} else
			state = c == 'Q';
	}
	int st = pclose(p);
	return st == -1 ? -1 : n;
}

/* Writes the prelude and s to path. */
static int write_case(const char *path, const char *s)
{
	FILE *f = fopen(path, "w");
	if (f == NULL)
		return -1;
	for (int v = 0; v < NV; v++)
		fprintf(f, "#define %s QJ%d_\n", vocab[v], v);
	fputs(s, f);
	return fclose(f);
}

static void show(const char *what, const int *seq, int n)
{
	fprintf(stderr, "    %s:", what);
	for (int k = 0; k < n; k++)
		fprintf(stderr, " %s", vocab[seq[k]]);
	fprintf(stderr, "\n");
}

/* Checks one source text; returns 1 when both views agree, 0 when not
 * (saying so), 2 when pass_scan refuses the text anyway (a word touching
 * a literal), -1 when g++ cannot run. */
static int agree(const char *path, const char *s, int verbose)
{
	enum { MAX = 4096 };
	static int a[MAX], b[MAX];
	if (write_case(path, s) != 0)
		return -1;
	int nb = gcc_view(path, b, MAX);
	if (nb < 0)
		return -1;
	char *m = hostcc_mask(s, strlen(s));
	if (m == NULL)
		return -1;
	int na = masker_view(m, strlen(s), a, MAX);
	if (na == -2) {
		free(m);
		return 2;
	}
	int same = na == nb && memcmp(a, b, sizeof(int) * (size_t)na) == 0;
	if (!same && verbose) {
		fprintf(stderr, "  masker and g++ disagree on:\n----\n%s\n----\n", s);
		show("masker", a, na);
		show("g++   ", b, nb);
		fprintf(stderr, "  masked:\n----\n%s\n----\n", m);
	}
	free(m);
	return same;
}

int main(void)
{
	if (system("g++ --version >/dev/null 2>&1") != 0) {
		printf("g++ not found: skipped\n0 passed, 0 failed\n");
		return 0;
	}
	const char *tmp = test_tmpdir();
	char path[512];
	snprintf(path, sizeof path, "%.400s/passfs-test-lexer-%d.cc", tmp, (int)getpid());

	/* the corners found so far, each once */
	static const char *const corners[] = {
		"xLR\"(\" a\n#define Y\n// )\"\na\n",
		"x$R\"(\na\n)\" a\n",
		"#define X R\"(\na\n)\" a\n",
		"// c \\ \na\nR\n",
		"1'e+'a' a\n",
		"0x1'e+'L'a' a\n",
		"u8'x' a u8\"x\" a\n",
		"R\"a\\(x)a\\\" a\n",
		"R\"(x)\\\n\" a )\" a\n",
		"/* a *\\\n/ a\n",
		"a ?\?/\na\n",
		"L\\\n\"a\" a\n",
	};
	for (size_t k = 0; k < sizeof corners / sizeof corners[0]; k++) {
		int r = agree(path, corners[k], 1);
		if (r < 0) {
			printf("cannot run g++ -E: skipped\n0 passed, 0 failed\n");
			unlink(path);
			return 0;
		}
		CHECK_MSG(r == 1 || r == 2, corners[k]);
	}

	const char *it = getenv("PASSFS_LEXER_ITERS"), *sd = getenv("PASSFS_LEXER_SEED");
	int iters = it ? atoi(it) : 500;
	const char *sz = getenv("PASSFS_LEXER_SIZE");
	int size = sz ? atoi(sz) : 0;
	rng = sd ? strtoull(sd, NULL, 0) : 0x9e3779b97f4a7c15ull;
	int bad = 0, refused = 0;
	for (int k = 0; k < iters; k++) {
		struct sbuf b = {0};
		put(&b, "");
		soup(&b, size ? 1 + (int)pick((unsigned)size) : 20 + (int)pick(40));
		int r = agree(path, b.p, bad < 3);
		if (r < 0) {
			free(b.p);
			break;
		}
		if (r == 0)
			bad++;
		refused += r == 2;
		free(b.p);
	}
	CHECK_MSG(bad == 0, "random soups where the masker and g++ disagree (the first three are shown above)");
	if (bad)
		fprintf(stderr, "%d of %d soups disagree\n", bad, iters);
	printf("%d soups, %d of them not compared (a word touching a literal, which pass_scan refuses)\n",
	       iters, refused);
	unlink(path);
	printf("%d passed, %d failed\n", n_pass, n_fail);
	return n_fail ? 1 : 0;
}
