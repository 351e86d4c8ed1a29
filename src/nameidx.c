/* An index of a fixed list of names (nameidx.h). */
#include <string.h>

#include "nameidx.h"

static uint32_t
hash(const char *s)
{
	uint32_t h = 2166136261u; /* FNV-1a */

	for (; *s != '\0'; s++)
		h = (h ^ (uint8_t)*s) * 16777619u;
	return h;
}

void
ht_nameidx_build(struct ht_nameidx *x, const char *const *names, size_t n)
{
	uint32_t j;
	size_t i;

	memset(x->slot, 0, sizeof(x->slot));
	if (n > HT_NAMEIDX_MAX)
		n = HT_NAMEIDX_MAX;
	for (i = 0; i < n; i++) {
		if (names[i] == NULL)
			continue;
		/* A name listed twice keeps its first index: the probe
		 * meets the first one first. */
		j = hash(names[i]) & (HT_NAMEIDX_SLOTS - 1);
		while (x->slot[j] != 0)
			j = (j + 1) & (HT_NAMEIDX_SLOTS - 1);
		x->slot[j] = (uint16_t)(i + 1);
	}
}

int
ht_nameidx_find(const struct ht_nameidx *x, const char *const *names,
    const char *name)
{
	uint32_t j;

	for (j = hash(name) & (HT_NAMEIDX_SLOTS - 1); x->slot[j] != 0;
	     j = (j + 1) & (HT_NAMEIDX_SLOTS - 1))
		if (strcmp(names[x->slot[j] - 1], name) == 0)
			return x->slot[j] - 1;
	return -1;
}
