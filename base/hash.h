/* hash.h - FNV-1a, the non-cryptographic 64-bit hash of hash tables and
 * cache keys (for naming bytes securely: sha256.h).
 *
 * Contract: base_fnv1a_step(h, p, n) folds n bytes into the running hash h
 * (start from BASE_FNV1A_BASIS; prime 1099511628211), so a key of several
 * parts hashes part by part; base_fnv1a(p, n) is one step from the basis.
 * The values are the published FNV-1a 64 ones, the same on every host. */
#ifndef PASSFS_BASE_HASH_H
#define PASSFS_BASE_HASH_H

#include <stddef.h>
#include <stdint.h>

#define BASE_FNV1A_BASIS 14695981039346656037ull

uint64_t base_fnv1a_step(uint64_t h, const void *p, size_t n);
uint64_t base_fnv1a(const void *p, size_t n);

#endif
