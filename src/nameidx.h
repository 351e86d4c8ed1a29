/*
 * An index of a fixed list of names, for the lookups that ask about every
 * symbol of a module (tens of thousands) whether it is one of them: a
 * hash of the name and, for a hit, one compare, where a scan of the list
 * is a compare per name.  Open addressing over HT_NAMEIDX_SLOTS slots, in
 * the caller's memory (no allocation: the agent uses it too).
 */
#ifndef HT_NAMEIDX_H
#define HT_NAMEIDX_H

#include <stddef.h>
#include <stdint.h>

#define HT_NAMEIDX_SLOTS 1024			/* a power of 2 */
#define HT_NAMEIDX_MAX	 (HT_NAMEIDX_SLOTS / 2) /* names it takes */

struct ht_nameidx {
	uint16_t slot[HT_NAMEIDX_SLOTS]; /* index + 1; 0: empty */
};

/* Index names[0..n) (n <= HT_NAMEIDX_MAX; a NULL name is left out).  The
 * list must stay as it is while the index is used. */
void ht_nameidx_build(struct ht_nameidx *x, const char *const *names, size_t n);

/* The index in names (the list x was built from) of the first entry
 * equal to name, or -1. */
int ht_nameidx_find(const struct ht_nameidx *x, const char *const *names,
    const char *name);

#endif
