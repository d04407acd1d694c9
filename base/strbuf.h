/* strbuf.h - a growable, always NUL-terminated string builder.
 *
 * Contract: a struct strbuf starts as {0} (p NULL, len 0).  Every append keeps
 * p[len] == '\0' once p is non-NULL, grows the buffer geometrically and returns
 * 0, or -1 when out of memory.  Out of memory is sticky: `oom` is set, the
 * builder keeps what it had and every later append is a no-op returning -1,
 * so a caller may append many times and check once (`b.oom`).  The caller owns
 * p: free it with strbuf_free(), or take it with strbuf_take().
 *
 * strbuf_printf_bare() is the same builder for callers that hold a bare malloc'd
 * string and its capacity: it appends after strlen(*buf).
 *
 * base_tail_keep() keeps only the last `cap` bytes of a stream (a child's
 * output, say) in buf[0, *len): it appends n bytes, dropping the oldest ones
 * as needed and adding their count to *dropped.  No NUL is written. */
#ifndef PASSFS_BASE_STRBUF_H
#define PASSFS_BASE_STRBUF_H

#include <stdarg.h>
#include <stddef.h>

struct strbuf {
	char *p;        /* NULL until the first append */
	size_t len;     /* bytes before the terminating NUL */
	size_t cap;     /* bytes allocated at p */
	int oom;        /* an append failed for want of memory */
};

/* Grows a malloc'd buffer: *p of *cap bytes to at least `need` bytes,
 * doubling from `first` (a *cap of 0) and never past `max` (0: no bound).
 * 0; -EFBIG when need > max; -ENOMEM when realloc fails (nothing changed). */
int base_grow(void **p, size_t *cap, size_t need, size_t first, size_t max);

/* Room for at least `extra` more bytes and the NUL; 0 or -1. */
int strbuf_reserve(struct strbuf *b, size_t extra);
/* Appends n bytes of s (which may hold NULs); 0 or -1. */
int strbuf_add(struct strbuf *b, const void *s, size_t n);
int strbuf_puts(struct strbuf *b, const char *s);
int strbuf_putc(struct strbuf *b, char c);
int strbuf_printf(struct strbuf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
int strbuf_vprintf(struct strbuf *b, const char *fmt, va_list ap) __attribute__((format(printf, 2, 0)));
/* Empties the builder, keeping its memory (and clearing nothing else). */
void strbuf_reset(struct strbuf *b);
/* The string (a malloc'd "" when nothing was appended; NULL only when out of
 * memory, in which case the partial string is freed); the builder is left
 * empty as {0}. */
char *strbuf_take(struct strbuf *b);
void strbuf_free(struct strbuf *b);

/* Appends printf output to the malloc'd, NUL-terminated string *buf (NULL to
 * start) whose allocation is *cap bytes; 0 or -1 (out of memory; *buf is
 * kept). */
int strbuf_printf_bare(char **buf, size_t *cap, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

void base_tail_keep(char *buf, size_t cap, size_t *len, const void *s, size_t n, unsigned long long *dropped);

/* qsort/bsearch comparator of an array of strings (char * or const char *
 * elements): strcmp of the two they point at. */
int base_strptr_cmp(const void *a, const void *b);

#endif
