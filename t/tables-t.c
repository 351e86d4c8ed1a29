/*
 * The agent's tables: sites intern and dedupe, live samples insert/replace/
 * remove against a reference model (backward-shift deletion is easy to get
 * wrong), the free filter never misses a live pointer, growth keeps every
 * entry, bounds are enforced (overflow reported with its reason, never
 * fatal), growth stops where memory does not permit it, release gives the
 * memory back, threads.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "basic.h"
#include "mem.h"
#include "tables.h"

#define N 20000

/* The memory the system has available, as the tables see it (prim.h): a
 * test sets it; 0 is "unknown", as when /proc cannot be read. */
static uint64_t fake_avail;

uint64_t
ht_prim_mem_available(void)
{
	return fake_avail;
}

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
			e.size = k;
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
	int full = 0, other = 0, r;

	is_uint(300, ht_tables_bound(300), "a bound of 300");
	is_int(0, ht_tables_reset(), "reset");
	is_uint(0, ht_sites_count(), "reset empties the sites");
	memset(&e, 0, sizeof(e));
	for (i = 0; i < 1000; i++) {
		e.ptr = 0x900000 + i * 32;
		r = ht_live_insert(&e, &old);
		full += r == HT_TABLES_FULL;
		other += r != HT_TABLES_FULL && r != 0;
	}
	is_int(1000 - 300, full, "live table refuses past its bound of 300");
	is_int(0, other, "and says the bound is why");
	is_uint(300, ht_live_count(), "and holds exactly 300");
	is_int(HT_TABLES_FULL, ht_live_room(0x10), "no room for a new pointer");
	is_int(0, ht_live_room(0x900000), "room for one it holds");
	e.ptr = 0x900000;
	is_int(1, ht_live_insert(&e, &old),
	    "a full table still replaces an entry");
	full = 0;
	for (i = 0; i < 500; i++) {
		f[0] = 0x700000 + i;
		if (ht_sites_intern(f, 1) == HT_TABLES_FULL)
			full++;
	}
	is_int(500 - 300, full, "site table refuses past its bound of 300");
	is_uint(HT_TABLES_DEFAULT_BOUND, ht_tables_bound(0),
	    "bound 0 is the default");
	ok(HT_TABLES_DEFAULT_BOUND >= 32000000u,
	    "the default keeps at least 32M live samples");
	is_uint(HT_TABLES_MAX_BOUND, ht_tables_bound((size_t)-1),
	    "a bound is capped");
}

/* Growth far past the first tables keeps every entry, within the bound. */
static void
test_growth(void)
{
	struct ht_live e, old;
	size_t i, n = 1000000;
	int bad = 0;

	ht_tables_bound(n);
	ht_tables_reset();
	memset(&e, 0, sizeof(e));
	for (i = 0; i < n; i++) {
		e.ptr = 0x7f0000000000 + i * 48;
		e.size = i;
		bad += ht_live_insert(&e, &old) != 0;
	}
	is_int(0, bad,
	    "1000000 samples inserted, the table grown to hold them");
	e.ptr = 0x10;
	is_int(HT_TABLES_FULL, ht_live_insert(&e, &old),
	    "and the next is refused: the bound");
	for (i = 0; i < n; i += 7)
		if (ht_live_remove(0x7f0000000000 + i * 48, &old) != 1 ||
		    old.size != i)
			bad++;
	is_int(0, bad, "every seventh found, with its size, and removed");
	/* 24 bytes a sample, at most 3/4 full, and the 2 KiB of the rest. */
	ok(ht_mem_overhead() < 64u << 20, "the tables take %llu MiB",
	    (unsigned long long)(ht_mem_overhead() >> 20));
}

/*
 * Memory permitting: with 100 MiB available, the live table does not double
 * from 48 MiB (2Mi entries) to 96 MiB, more than half of it; it takes
 * entries up to 7/8 full, then refuses them for want of memory.
 */
static void
test_memory(void)
{
	struct ht_live e, old;
	size_t i, n = 2u << 20, kept = 0, nomem = 0, other = 0;
	int r;

	fake_avail = 100u << 20;
	ht_tables_bound(4u << 20);
	ht_tables_reset();
	memset(&e, 0, sizeof(e));
	for (i = 0; i < n; i++) {
		e.ptr = 0x7e0000000000 + i * 32;
		r = ht_live_insert(&e, &old);
		kept += r == 0;
		nomem += r == HT_TABLES_NOMEM;
		other += r != 0 && r != HT_TABLES_NOMEM;
	}
	is_uint(n / 8 * 7, kept,
	    "100 MiB available: the table stays at 48 MiB, 7/8 full");
	is_uint(n - n / 8 * 7, nomem, "the rest refused for want of memory");
	is_uint(0, other, "none for another reason");
	fake_avail = 0;
	e.ptr = 0x10;
	is_int(0, ht_live_insert(&e, &old),
	    "availability unknown: the table grows, mmap decides");
	ht_tables_bound(0);
}

/* Release gives every mapping back; the tables refuse until init. */
static void
test_release(void)
{
	struct ht_live e, old;
	uintptr_t f[1] = { 0x401000 };
	uint64_t before = ht_mem_overhead();

	memset(&e, 0, sizeof(e));
	e.ptr = 0x123450;
	ht_tables_release();
	ok(ht_mem_overhead() < before / 8 &&
		ht_mem_overhead() <= sizeof(ht_live_filter),
	    "release unmaps the tables (%llu bytes left, of %llu)",
	    (unsigned long long)ht_mem_overhead(), (unsigned long long)before);
	is_int(0, ht_tables_ready(), "not ready once released");
	is_uint(0, ht_live_count(), "no live sample");
	is_uint(0, ht_sites_count(), "no site");
	is_int(HT_TABLES_NOMEM, ht_live_insert(&e, &old), "insert refused");
	is_int(HT_TABLES_NOMEM, ht_live_room(e.ptr), "no room");
	is_int(0, ht_live_remove(e.ptr, &old), "remove finds nothing");
	is_int(HT_TABLES_NOMEM, (int)ht_sites_intern(f, 1), "intern refused");
	is_int(-1, (int)ht_threads_add(1, "t"), "thread refused");
	ok(!ht_live_maybe(0x7f0000000000), "the filter is empty");
	is_int(0, ht_tables_init(), "init maps them again");
	is_int(0, ht_live_insert(&e, &old), "and they take entries");
	ok(ht_sites_intern(f, 1) >= 0, "sites too");
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
	test_bounds();
	test_growth();
	test_memory();
	test_release();
	return 0;
}
