/*
 * Tests for cli/addrmap.c: on ranges disjoint, nested, equal, empty and
 * crossing, with a fixed seed, every lookup (at each range's ends and
 * around them, and at random addresses) gives what a walk over all the
 * ranges gives: the range of greatest index that holds the address.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "addrmap.h"
#include "basic.h"

#define MAXN 300

static uint64_t rng = 0x243f6a8885a308d3ULL;

static uint64_t
rnd(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng;
}

static int64_t
walk(const uint64_t *start, const uint64_t *end, size_t n, uint64_t a)
{
	size_t i;

	for (i = n; i > 0; i--)
		if (start[i - 1] <= a && a < end[i - 1])
			return (int64_t)(i - 1);
	return -1;
}

/* Check n ranges; returns how many lookups disagreed. */
static size_t
check(const uint64_t *start, const uint64_t *end, size_t n)
{
	static const int64_t delta[] = { -1, 0, 1 };
	struct ht_addrmap m;
	uint64_t a;
	size_t i, k, bad = 0;

	if (ht_addrmap_build(&m, start, end, n) != 0)
		bail("ht_addrmap_build: out of memory");
	for (i = 0; i < n; i++)
		for (k = 0; k < 3; k++) {
			a = start[i] + (uint64_t)delta[k];
			bad += ht_addrmap_find(&m, a) != walk(start, end, n, a);
			a = end[i] + (uint64_t)delta[k];
			bad += ht_addrmap_find(&m, a) != walk(start, end, n, a);
		}
	for (i = 0; i < 2000; i++) {
		a = rnd() % 0x20000;
		bad += ht_addrmap_find(&m, a) != walk(start, end, n, a);
	}
	bad += ht_addrmap_find(&m, 0) != walk(start, end, n, 0);
	bad += ht_addrmap_find(&m, UINT64_MAX) !=
	    walk(start, end, n, UINT64_MAX);
	ok(m.npiece <= 2 * n + 1, "%zu ranges: %zu pieces, at most 2n + 1", n,
	    m.npiece);
	ht_addrmap_free(&m);
	return bad;
}

int
main(void)
{
	static uint64_t start[MAXN], end[MAXN];
	size_t n, i, t, bad = 0;

	plan(0);
	ok(check(start, end, 0) == 0, "no ranges: nothing holds anything");

	/* Sorted by start, as the symbolizer gives them: disjoint, then
	 * with one range under all the others (the walk back over them was
	 * the cost of a lookup), then random. */
	for (i = 0; i < 100; i++) {
		start[i] = 0x1000 + i * 0x100;
		end[i] = start[i] + 0x80;
	}
	ok(check(start, end, 100) == 0, "disjoint ranges");
	start[0] = 0;
	end[0] = UINT64_MAX;
	ok(check(start, end, 100) == 0, "one range under 99 others");
	for (t = 0; t < 200; t++) {
		n = 1 + rnd() % MAXN;
		for (i = 0; i < n; i++) {
			start[i] = rnd() % 0x10000;
			/* Some empty, some equal to another. */
			end[i] = rnd() % 7 == 0 ? start[i] :
						  start[i] + rnd() % 0x4000;
			if (i > 0 && rnd() % 9 == 0) {
				start[i] = start[i - 1];
				end[i] = end[i - 1];
			}
		}
		bad += check(start, end, n);
	}
	is_uint(0, bad,
	    "200 random sets of ranges: every lookup agrees with "
	    "a walk over them");
	return 0;
}
