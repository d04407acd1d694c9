/* strbuf.c - see strbuf.h. */
#include "strbuf.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int strbuf_reserve(struct strbuf *b, size_t extra)
{
	if (b->oom)
		return -1;
	if (extra > (size_t)-1 / 2 - b->len - 1) {
		b->oom = 1;
		return -1;
	}
	size_t need = b->len + extra + 1;
	if (need <= b->cap)
		return 0;
	int fresh = b->p == NULL;
	void *p = b->p;
	if (base_grow(&p, &b->cap, need, 256, 0) != 0) {
		b->oom = 1;
		return -1;
	}
	b->p = p;
	if (fresh)
		b->p[0] = '\0';
	return 0;
}

int base_grow(void **p, size_t *cap, size_t need, size_t first, size_t max)
{
	if (max && need > max)
		return -EFBIG;
	if (need <= *cap)
		return 0;
	size_t c = *cap ? *cap : (first ? first : 16);
	while (c < need)
		c = c > (size_t)-1 / 2 ? need : c * 2;
	if (max && c > max)
		c = max;
	void *n = realloc(*p, c);
	if (n == NULL)
		return -ENOMEM;
	*p = n;
	*cap = c;
	return 0;
}

int strbuf_add(struct strbuf *b, const void *s, size_t n)
{
	if (strbuf_reserve(b, n))
		return -1;
	if (n)
		memcpy(b->p + b->len, s, n);
	b->len += n;
	b->p[b->len] = '\0';
	return 0;
}

int strbuf_puts(struct strbuf *b, const char *s)
{
	return strbuf_add(b, s, strlen(s));
}

int strbuf_putc(struct strbuf *b, char c)
{
	return strbuf_add(b, &c, 1);
}

int strbuf_vprintf(struct strbuf *b, const char *fmt, va_list ap)
{
	va_list aq;
	va_copy(aq, ap);
	int n = vsnprintf(NULL, 0, fmt, aq);
	va_end(aq);
	if (n < 0 || strbuf_reserve(b, (size_t)n))
		return -1;
	vsnprintf(b->p + b->len, (size_t)n + 1, fmt, ap);
	b->len += (size_t)n;
	return 0;
}

int strbuf_printf(struct strbuf *b, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	int rc = strbuf_vprintf(b, fmt, ap);
	va_end(ap);
	return rc;
}

void strbuf_reset(struct strbuf *b)
{
	b->len = 0;
	if (b->p)
		b->p[0] = '\0';
}

char *strbuf_take(struct strbuf *b)
{
	char *p = b->p;
	if (b->oom) {
		free(p);
		p = NULL;
	} else if (p == NULL) {
		p = strdup("");
	}
	*b = (struct strbuf){0};
	return p;
}

void strbuf_free(struct strbuf *b)
{
	free(b->p);
	*b = (struct strbuf){0};
}

int strbuf_printf_bare(char **buf, size_t *cap, const char *fmt, ...)
{
	size_t have = *buf ? strlen(*buf) : 0;
	struct strbuf b = {.p = *buf, .len = have, .cap = *buf ? *cap : 0};
	va_list ap;
	va_start(ap, fmt);
	int rc = strbuf_vprintf(&b, fmt, ap);
	va_end(ap);
	*buf = b.p;
	*cap = b.cap;
	return rc;
}

void base_tail_keep(char *buf, size_t cap, size_t *len, const void *s, size_t n, unsigned long long *dropped)
{
	const char *src = s;
	if (n > cap) {
		*dropped += *len + (n - cap);
		src += n - cap;
		n = cap;
		*len = 0;
	} else if (*len + n > cap) {
		size_t drop = *len + n - cap;
		memmove(buf, buf + drop, *len - drop);
		*len -= drop;
		*dropped += drop;
	}
	if (n)
		memcpy(buf + *len, src, n);
	*len += n;
}

int base_strptr_cmp(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}
