/* sha256.h - SHA-256 (FIPS 180-4), for naming the exact bytes a result judged,
 * and HMAC-SHA-256, for records passfs must know it wrote itself. */
#ifndef PASSFS_SHA256_H
#define PASSFS_SHA256_H

#include <stddef.h>

/* Writes the 64 lowercase hex digits and a NUL into hex[65]. */
void sha256_hex(const void *data, size_t len, char hex[65]);
/* The 32 bytes of the digest. */
void sha256_raw(const void *data, size_t len, unsigned char out[32]);
/* HMAC-SHA-256 (RFC 2104) of data under key, as 64 hex digits.  0, or -1
 * out of memory. */
int hmac_sha256_hex(const void *key, size_t klen, const void *data, size_t len, char hex[65]);

#endif
