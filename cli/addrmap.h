/*
 * An address map: which of n address ranges holds an address, in O(log n)
 * whatever the ranges are.
 *
 * The ranges come from a profile's module records, which need not be
 * disjoint: a module unloaded and another loaded at its place are both in
 * a session's history, and a hostile profile may nest thousands of ranges
 * inside one.  Of the ranges that hold an address the answer is the one of
 * greatest index (the caller sorts its ranges by start, so that is the
 * latest to start).  The map cuts the address space into pieces that each
 * have one answer, computed once: a lookup never walks over ranges.
 */
#ifndef HT_ADDRMAP_H
#define HT_ADDRMAP_H

#include <stddef.h>
#include <stdint.h>

struct ht_addrmap {
	uint64_t *lo;  /* piece i is [lo[i], lo[i + 1]), the last to 2^64 */
	int64_t *idx;  /* its range, or -1 */
	size_t npiece; /* at most 2n + 1 */
};

/*
 * Build the map of the n ranges [start[i], end[i]) (empty ones hold
 * nothing).  Returns 0, or -1 with errno ENOMEM (the map is then empty:
 * every lookup answers -1).
 */
int ht_addrmap_build(struct ht_addrmap *, const uint64_t *start,
    const uint64_t *end, size_t n);

/* The range of greatest index that holds addr, or -1. */
int64_t ht_addrmap_find(const struct ht_addrmap *, uint64_t addr);

void ht_addrmap_free(struct ht_addrmap *);

#endif
