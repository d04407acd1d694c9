/* hash.c - see hash.h. */
#include "hash.h"

uint64_t base_fnv1a_step(uint64_t h, const void *p, size_t n)
{
	const unsigned char *s = p;
	for (size_t i = 0; i < n; i++)
		h = (h ^ s[i]) * 1099511628211ull;
	return h;
}

uint64_t base_fnv1a(const void *p, size_t n)
{
	return base_fnv1a_step(BASE_FNV1A_BASIS, p, n);
}
