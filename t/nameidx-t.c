/* Tests for src/nameidx.c, and ht_allocfns_find (src/allocnames.c) on it. */
#include <stdio.h>
#include <string.h>

#include "allocnames.h"
#include "basic.h"
#include "nameidx.h"

int
main(void)
{
	static const char *const names[] = { "malloc", "free", NULL, "calloc",
		"free", "" };
	const size_t n = sizeof(names) / sizeof(names[0]);
	static const char *many[HT_NAMEIDX_MAX];
	static char store[HT_NAMEIDX_MAX][16];
	struct ht_nameidx x;
	char probe[64];
	size_t i;
	int bad;

	plan(0);
	ht_nameidx_build(&x, names, n);
	is_int(0, ht_nameidx_find(&x, names, "malloc"), "malloc at 0");
	is_int(3, ht_nameidx_find(&x, names, "calloc"), "calloc at 3");
	is_int(1, ht_nameidx_find(&x, names, "free"),
	    "a name listed twice: its first index");
	is_int(5, ht_nameidx_find(&x, names, ""), "the empty name");
	is_int(-1, ht_nameidx_find(&x, names, "realloc"), "an absent name");
	is_int(-1, ht_nameidx_find(&x, names, "mallo"), "a prefix is absent");
	is_int(-1, ht_nameidx_find(&x, names, "mallocx"),
	    "a longer name is absent");

	/* Full: every one of HT_NAMEIDX_MAX names found, at its index. */
	for (i = 0; i < HT_NAMEIDX_MAX; i++) {
		snprintf(store[i], sizeof(store[i]), "n%zu", i);
		many[i] = store[i];
	}
	ht_nameidx_build(&x, many, HT_NAMEIDX_MAX);
	for (i = 0, bad = 0; i < HT_NAMEIDX_MAX; i++)
		bad += ht_nameidx_find(&x, many, many[i]) != (int)i;
	is_int(0, bad, "%d names: each at its index", HT_NAMEIDX_MAX);
	for (i = 0, bad = 0; i < 10000; i++) {
		snprintf(probe, sizeof(probe), "m%zu", i);
		bad += ht_nameidx_find(&x, many, probe) != -1;
	}
	is_int(0, bad, "and 10000 names not in the list are not found");

	/* ht_allocfns_find: the table's names, each at its index, as a scan
	 * finds them. */
	for (i = 0, bad = 0; i < HT_NALLOCFNS; i++)
		bad += ht_allocfns_find(ht_allocfns[i].name) != (int)i;
	is_int(0, bad, "ht_allocfns_find: all %d names at their index",
	    (int)HT_NALLOCFNS);
	is_int(-1, ht_allocfns_find("xmalloc"),
	    "ht_allocfns_find: xmalloc "
	    "is none of them");
	is_int(-1, ht_allocfns_find(""),
	    "ht_allocfns_find: nor the empty "
	    "name");
	return 0;
}
