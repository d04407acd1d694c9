/* map.c - see map.h. */
#define _GNU_SOURCE
#include "map.h"

#include <stdlib.h>
#include <string.h>

/* The slot holding key, or the empty slot where it would go. */
static size_t slot(const struct base_map *m, const char *key, size_t len)
{
	size_t i = (size_t)base_fnv1a(key, len) & (m->cap - 1);
	while (m->keys[i] && (m->lens[i] != len || memcmp(m->keys[i], key, len) != 0))
		i = (i + 1) & (m->cap - 1);
	return i;
}

void **base_map_getn(const struct base_map *m, const char *key, size_t len)
{
	if (m->cap == 0)
		return NULL;
	size_t i = slot(m, key, len);
	return m->keys[i] ? &m->vals[i] : NULL;
}

void **base_map_get(const struct base_map *m, const char *key)
{
	return base_map_getn(m, key, strlen(key));
}

intptr_t base_map_get_int(const struct base_map *m, const char *key, size_t len, intptr_t absent)
{
	void **v = base_map_getn(m, key, len);
	return v ? (intptr_t)*v : absent;
}

static int grow(struct base_map *m)
{
	struct base_map g = {.cap = m->cap ? m->cap * 2 : 64, .copy_keys = m->copy_keys};
	g.keys = calloc(g.cap, sizeof(*g.keys));
	g.lens = calloc(g.cap, sizeof(*g.lens));
	g.vals = calloc(g.cap, sizeof(*g.vals));
	if (g.keys == NULL || g.lens == NULL || g.vals == NULL) {
		free(g.keys);
		free(g.lens);
		free(g.vals);
		return -1;
	}
	for (size_t i = 0; i < m->cap; i++)
		if (m->keys[i]) {
			size_t j = slot(&g, m->keys[i], m->lens[i]);
			g.keys[j] = m->keys[i];
			g.lens[j] = m->lens[i];
			g.vals[j] = m->vals[i];
			g.n++;
		}
	free(m->keys);
	free(m->lens);
	free(m->vals);
	*m = g;
	return 0;
}

int base_map_putn(struct base_map *m, const char *key, size_t len, void *val)
{
	if ((m->n + 1) * 2 > m->cap && grow(m) != 0)
		return -1;
	size_t i = slot(m, key, len);
	if (m->keys[i] == NULL) {
		const char *k = key;
		if (m->copy_keys) {
			char *c = malloc(len + 1);
			if (c == NULL)
				return -1;
			memcpy(c, key, len);
			c[len] = '\0';
			k = c;
		}
		m->keys[i] = k;
		m->lens[i] = len;
		m->n++;
	}
	m->vals[i] = val;
	return 0;
}

int base_map_put(struct base_map *m, const char *key, void *val)
{
	return base_map_putn(m, key, strlen(key), val);
}

void base_map_clear(struct base_map *m)
{
	for (size_t i = 0; i < m->cap; i++) {
		if (m->copy_keys)
			free((char *)m->keys[i]);
		m->keys[i] = NULL;
	}
	m->n = 0;
}

void base_map_free(struct base_map *m)
{
	base_map_clear(m);
	free(m->keys);
	free(m->lens);
	free(m->vals);
	*m = (struct base_map){.copy_keys = m->copy_keys};
}
