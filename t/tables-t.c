/*
 * The agent's tables: sites intern and dedupe, live samples insert/replace/
 * remove against a reference model (backward-shift deletion is easy to get
 * wrong), the free filter never misses a live pointer, growth keeps every
 * entry, bounds are enforced (overflow reported, never fatal), threads.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "basic.h"
#include "tables.h"

#define N 20000

static uint64_t rng = 88172645463325252ull;

static uint64_t
next(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng;
}

static void
test_sites(void)
{
	uintptr_t a[3] = { 0x401000, 0x402000, 0x403000 };
	uintptr_t b[3] = { 0x401000, 0x402000, 0x403001 };
	uintptr_t f[HT_MAX_FRAMES];
	int64_t sa, sb, i, n;
	int ok_all = 1;

	sa = ht_sites_intern(a, 3);
	sb = ht_sites_intern(b, 3);
	ok(sa >= 0 && sb >= 0 && sa != sb, "two stacks, two sites");
	is_int(sa, ht_sites_intern(a, 3), "same stack, same site");
	is_int(sa == ht_sites_intern(a, 2), 0, "a prefix is another site");
	ok(memcmp(ht_sites_frames(ht_sites_get((size_t)sb)), b, sizeof(b)) == 0,
	    "frames stored");
	n = (int64_t)ht_sites_count();
	for (i = 0; i < 5000; i++) {
		int k, depth = 1 + (int)(i % HT_MAX_FRAMES);

		for (k = 0; k < depth; k++)
			f[k] = 0x500000 + (uintptr_t)i * 64 + (uintptr_t)k;
		if (ht_sites_intern(f, (uint32_t)depth) != n + i)
			ok_all = 0;
	}
	ok(ok_all, "5000 new sites numbered in order through growth");
	ok_all = 1;
	for (i = 0; i < 5000; i++) {
		int k, depth = 1 + (int)(i % HT_MAX_FRAMES);
		const struct ht_site *s = ht_sites_get((size_t)(n + i));

		for (k = 0; k < depth; k++)
			f[k] = 0x500000 + (uintptr_t)i * 64 + (uintptr_t)k;
		if (s == NULL || s->nframes != (uint32_t)depth ||
		    memcmp(ht_sites_frames(s), f, depth * sizeof(*f)) != 0 ||
		    ht_sites_intern(f, (uint32_t)depth) != n + i)
			ok_all = 0;
	}
	ok(ok_all, "every site found again with its frames after growth");
}

static void
test_live(void)
{
	static uintptr_t model[N]; /* 0 = absent */
	struct ht_live e, old;
	size_t i, count = 0;
	int bad = 0, miss = 0, r;

	memset(&e, 0, sizeof(e));
	for (i = 0; i < 200000; i++) {
		size_t k = next() % N;
		uintptr_t p = 0x10000 + k * 16;

		if (model[k] == 0 || next() % 4 == 0) {
			e.ptr = p;
			e.site = (uint32_t)k;
			e.bytes = (double)k;
			r = ht_live_insert(&e, &old);
			if (r != (model[k] != 0))
				bad++;
			if (r == 1 && old.ptr != p)
				bad++;
			if (model[k] == 0)
				count++;
			model[k] = p;
		} else {
			r = ht_live_remove(p, &old);
			if (r != 1 || old.ptr != p || old.site != k)
				bad++;
			model[k] = 0;
			count--;
		}
	}
	is_int(0, bad,
	    "200000 random inserts/replacements/removals agree "
	    "with the model");
	is_uint(count, ht_live_count(), "live count agrees");
	for (i = 0; i < N; i++) {
		uintptr_t p = 0x10000 + i * 16;

		if (model[i] != 0 && !ht_live_maybe(p))
			miss++;
	}
	is_int(0, miss, "the filter never rules out a live pointer");
	for (i = 0; i < N; i++)
		if (model[i] != 0 && ht_live_remove(model[i], &old) != 1)
			bad++;
	is_int(0, bad, "every live pointer removable");
	is_uint(0, ht_live_count(), "table empty");
	for (i = 0; i < N; i++)
		if (ht_live_maybe(0x10000 + i * 16))
			miss++;
	is_int(0, miss, "filter empty again once everything is removed");
	is_int(0, ht_live_remove(0x10000, &old), "remove of absent pointer");
}

static void
test_bounds(void)
{
	struct ht_live e, old;
	uintptr_t f[1];
	size_t i;
	int full = 0;

	ht_tables_reset();
	is_uint(0, ht_sites_count(), "reset empties the sites");
	memset(&e, 0, sizeof(e));
	for (i = 0; i < 1000; i++) {
		e.ptr = 0x900000 + i * 32;
		if (ht_live_insert(&e, &old) < 0)
			full++;
	}
	is_int(1000 - 300, full, "live table refuses past its bound of 300");
	is_uint(300, ht_live_count(), "and holds exactly 300");
	full = 0;
	for (i = 0; i < 500; i++) {
		f[0] = 0x700000 + i;
		if (ht_sites_intern(f, 1) < 0)
			full++;
	}
	is_int(500 - 100, full, "site table refuses past its bound of 100");
}

static void
test_threads(void)
{
	int64_t a, b;

	a = ht_threads_add(100, "main");
	b = ht_threads_add(101, "worker");
	ok(a >= 0 && b >= 0 && a != b, "two threads");
	is_int(a, ht_threads_add(100, "main"), "same tid, same record");
	is_string("worker", ht_threads_get((size_t)b)->name, "name kept");
}

int
main(void)
{
	plan(0);
	if (ht_tables_init() != 0)
		bail("cannot map tables");
	test_sites();
	test_live();
	test_threads();
	ht_tables_limit(100, 300);
	test_bounds();
	return 0;
}
