/* wire.h - a little-endian wire codec: fixed byte order whatever the host's.
 *
 * Contract:
 *   wire_put_le/wire_get_le  n (1..8) bytes of v at p, least significant
 *                   first, and back; the u32/u64/f64 forms are those with
 *                   n = 4 and 8 (an f64 travels as its IEEE 754 bits).  The
 *                   caller owns the bounds of p.
 *   struct wire_buf a growable output buffer ({0} to start): each put
 *                   appends; out of memory is sticky (`oom`, and the puts
 *                   become no-ops), so a caller checks once.  free(b.p).
 *   struct wire_in  a bounded input: each get takes the next bytes; reading
 *                   past the end sets `bad` (sticky), returns 0 / NULL and
 *                   consumes nothing, so a caller checks once after decoding
 *                   a whole record. */
#ifndef PASSFS_BASE_WIRE_H
#define PASSFS_BASE_WIRE_H

#include <stddef.h>
#include <stdint.h>

void wire_put_le(unsigned char *p, uint64_t v, int n);
uint64_t wire_get_le(const unsigned char *p, int n);
void wire_put_u32(unsigned char *p, uint32_t v);
uint32_t wire_get_u32(const unsigned char *p);
void wire_put_u64(unsigned char *p, uint64_t v);
uint64_t wire_get_u64(const unsigned char *p);
void wire_put_f64(unsigned char *p, double d);
double wire_get_f64(const unsigned char *p);

struct wire_buf {
	unsigned char *p;
	size_t len, cap;
	int oom;
};

void wire_add_u8(struct wire_buf *b, uint8_t v);
void wire_add_u32(struct wire_buf *b, uint32_t v);
void wire_add_u64(struct wire_buf *b, uint64_t v);
void wire_add_f64(struct wire_buf *b, double d);
void wire_add_bytes(struct wire_buf *b, const void *p, size_t n);

struct wire_in {
	const unsigned char *p;
	size_t len, off;
	int bad;
};

uint8_t wire_take_u8(struct wire_in *r);
uint32_t wire_take_u32(struct wire_in *r);
uint64_t wire_take_u64(struct wire_in *r);
double wire_take_f64(struct wire_in *r);
/* The next n bytes (pointing into the input), or NULL when fewer are left. */
const void *wire_take_bytes(struct wire_in *r, size_t n);

#endif
