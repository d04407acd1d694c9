/* wire.c - see wire.h. */
#include "wire.h"

#include <stdlib.h>
#include <string.h>

void wire_put_le(unsigned char *p, uint64_t v, int n)
{
	for (int i = 0; i < n; i++)
		p[i] = (unsigned char)(v >> (8 * i));
}

uint64_t wire_get_le(const unsigned char *p, int n)
{
	uint64_t v = 0;
	for (int i = 0; i < n; i++)
		v |= (uint64_t)p[i] << (8 * i);
	return v;
}

void wire_put_u32(unsigned char *p, uint32_t v)
{
	wire_put_le(p, v, 4);
}

uint32_t wire_get_u32(const unsigned char *p)
{
	return (uint32_t)wire_get_le(p, 4);
}

void wire_put_u64(unsigned char *p, uint64_t v)
{
	wire_put_le(p, v, 8);
}

uint64_t wire_get_u64(const unsigned char *p)
{
	return wire_get_le(p, 8);
}

void wire_put_f64(unsigned char *p, double d)
{
	uint64_t v;
	memcpy(&v, &d, 8);
	wire_put_le(p, v, 8);
}

double wire_get_f64(const unsigned char *p)
{
	uint64_t v = wire_get_le(p, 8);
	double d;
	memcpy(&d, &v, 8);
	return d;
}

/* Room for n more bytes at b->p + b->len, or NULL (b->oom set). */
static unsigned char *room(struct wire_buf *b, size_t n)
{
	if (b->oom)
		return NULL;
	if (n > SIZE_MAX / 2 - b->len) {
		b->oom = 1;
		return NULL;
	}
	if (b->len + n > b->cap) {
		size_t cap = b->cap ? b->cap : 256;
		while (cap < b->len + n)
			cap *= 2;
		unsigned char *p = realloc(b->p, cap);
		if (p == NULL) {
			b->oom = 1;
			return NULL;
		}
		b->p = p;
		b->cap = cap;
	}
	unsigned char *at = b->p + b->len;
	b->len += n;
	return at;
}

void wire_add_u8(struct wire_buf *b, uint8_t v)
{
	unsigned char *p = room(b, 1);
	if (p)
		*p = v;
}

void wire_add_u32(struct wire_buf *b, uint32_t v)
{
	unsigned char *p = room(b, 4);
	if (p)
		wire_put_u32(p, v);
}

void wire_add_u64(struct wire_buf *b, uint64_t v)
{
	unsigned char *p = room(b, 8);
	if (p)
		wire_put_u64(p, v);
}

void wire_add_f64(struct wire_buf *b, double d)
{
	unsigned char *p = room(b, 8);
	if (p)
		wire_put_f64(p, d);
}

void wire_add_bytes(struct wire_buf *b, const void *s, size_t n)
{
	unsigned char *p = room(b, n);
	if (p && n)
		memcpy(p, s, n);
}

const void *wire_take_bytes(struct wire_in *r, size_t n)
{
	if (r->bad || n > r->len - r->off) {
		r->bad = 1;
		return NULL;
	}
	const unsigned char *p = r->p + r->off;
	r->off += n;
	return p;
}

uint8_t wire_take_u8(struct wire_in *r)
{
	const unsigned char *p = wire_take_bytes(r, 1);
	return p ? *p : 0;
}

uint32_t wire_take_u32(struct wire_in *r)
{
	const unsigned char *p = wire_take_bytes(r, 4);
	return p ? wire_get_u32(p) : 0;
}

uint64_t wire_take_u64(struct wire_in *r)
{
	const unsigned char *p = wire_take_bytes(r, 8);
	return p ? wire_get_u64(p) : 0;
}

double wire_take_f64(struct wire_in *r)
{
	const unsigned char *p = wire_take_bytes(r, 8);
	return p ? wire_get_f64(p) : 0.0;
}
