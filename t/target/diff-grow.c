/*
 * Fixture of t0050-diff: two runs of it make two profiles whose sites
 * differ in known ways.  "diff-grow N old" and "diff-grow N new" keep, at
 * each site (one function per site, each allocation on the line of its
 * "SITE name" marker):
 *
 *   site        old run                     new run
 *   steady      10 x malloc(100), kept      the same
 *   churn       50 x malloc(64), freed      the same
 *   grow        N x malloc(1000), kept      (N of this run)
 *   shrink      6 x malloc(500), kept       2 x malloc(500), kept
 *   only_old    4 x malloc(200), kept       -
 *   only_new    -                           3 x malloc(300), kept
 *
 * So with N old and M new, the diff of the two at rate 1 is grow
 * +(M - N) * 1000 bytes, only_new +900 (new), steady and churn 0 (same),
 * only_old -800 (gone) and shrink -2000.  It prints a checksum of what it
 * wrote and exits 0; the kept blocks are never freed.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fixture.h"

static uint64_t sum;
/* Sizes come through a volatile so that no call is specialized on them. */
static volatile size_t one = 1;

static void
keep(void *p, size_t size, size_t i)
{
	if (p == NULL) {
		fprintf(stderr, "diff-grow: out of memory\n");
		exit(1);
	}
	fx_fill(p, size, i, &sum);
}

FX_NOINLINE static void
steady(size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		keep(malloc(100 * one), 100, i); /* SITE steady */
}

FX_NOINLINE static void
churn(size_t n)
{
	size_t i;
	void *p;

	for (i = 0; i < n; i++) {
		p = malloc(64 * one); /* SITE churn */
		keep(p, 64, i);
		free(p);
	}
}

FX_NOINLINE static void
grow(size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		keep(malloc(1000 * one), 1000, i); /* SITE grow */
}

FX_NOINLINE static void
shrink(size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		keep(malloc(500 * one), 500, i); /* SITE shrink */
}

FX_NOINLINE static void
only_old(size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		keep(malloc(200 * one), 200, i); /* SITE only_old */
}

FX_NOINLINE static void
only_new(size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		keep(malloc(300 * one), 300, i); /* SITE only_new */
}

int
main(int argc, char *argv[])
{
	unsigned long n;
	char *end;

	if (argc != 3 ||
	    (strcmp(argv[2], "old") != 0 && strcmp(argv[2], "new") != 0)) {
		fprintf(stderr, "usage: diff-grow N old|new\n");
		return 2;
	}
	n = strtoul(argv[1], &end, 10);
	if (*end != '\0' || n > 100000) {
		fprintf(stderr, "diff-grow: %s: not a count\n", argv[1]);
		return 2;
	}
	sum = 0xcbf29ce484222325ULL;
	steady(10);
	churn(50);
	grow(n);
	/* One call of shrink for both runs: one stack, one site. */
	shrink(strcmp(argv[2], "old") == 0 ? 6 : 2);
	if (strcmp(argv[2], "old") == 0)
		only_old(4);
	else
		only_new(3);
	printf("diff-grow %lu %s: checksum %016llx\n", n, argv[2],
	    (unsigned long long)sum);
	return 0;
}
