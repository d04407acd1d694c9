/* map.h - one open-addressing string map (hashed with hash.h's FNV-1a).
 *
 * Contract:
 *   struct base_map   a map from byte-string keys to void * values: linear
 *                     probing in a power-of-two table kept at most half full,
 *                     doubled when an insert would pass that.  Start it as
 *                     {0}; set copy_keys = 1 before the first put to have the
 *                     map copy keys (and free them), else the caller's keys
 *                     must outlive the map (they are compared by length and
 *                     bytes, so a key need not be NUL-terminated).  There is
 *                     no deletion: store a value that means "gone" instead.
 *   base_map_get[n]   the address of the key's value (valid until the next
 *                     put), or NULL when the key is absent.
 *   base_map_put[n]   sets the key's value, adding the key when new; 0, or -1
 *                     when out of memory (the map is unchanged then).
 *   base_map_get_int  the value stored as an integer ((void *)(intptr_t)v),
 *                     or `absent`.
 *   base_map_clear    drops every entry, keeping the table.
 *   base_map_free     drops everything; the map is {0} again (copy_keys
 *                     kept). */
#ifndef PASSFS_BASE_MAP_H
#define PASSFS_BASE_MAP_H

#include <stddef.h>
#include <stdint.h>

#include "hash.h"

struct base_map {
	const char **keys;      /* NULL: an empty slot */
	size_t *lens;
	void **vals;
	size_t cap, n;
	int copy_keys;
};

void **base_map_getn(const struct base_map *m, const char *key, size_t len);
void **base_map_get(const struct base_map *m, const char *key);
int base_map_putn(struct base_map *m, const char *key, size_t len, void *val);
int base_map_put(struct base_map *m, const char *key, void *val);
intptr_t base_map_get_int(const struct base_map *m, const char *key, size_t len, intptr_t absent);
void base_map_clear(struct base_map *m);
void base_map_free(struct base_map *m);

#endif
