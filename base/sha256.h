/* sha256.h - SHA-256 (FIPS 180-4), for naming the exact bytes a result judged. */
#ifndef PASSFS_SHA256_H
#define PASSFS_SHA256_H

#include <stddef.h>

/* Writes the 64 lowercase hex digits and a NUL into hex[65]. */
void sha256_hex(const void *data, size_t len, char hex[65]);

#endif
