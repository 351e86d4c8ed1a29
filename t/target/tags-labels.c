/*
 * Fixture of t/t0066-tags-labels.sh: TileDB's labelled allocations (seed
 * 001), record_alloc(p, size, "reader.cc::1923"), written with heaptool's
 * tags and no link to the agent.  100,000 blocks, block i of 32 + (i % 7)
 * * 16 bytes, labelled "reader.cc::L" with L = 1000 + i % 1000 (1,000
 * labels, each made afresh in a buffer, so only interning can share it),
 * then the blocks with i % 4 == 3 freed.  Prints "labels N" with the
 * number of distinct tags heaptool_tag gave.
 */
#include <stdio.h>
#include <stdlib.h>

#include "fixture.h"
#include "heaptool.h"

#define N      100000
#define LABELS 1000

static void *blocks[N];
static uint64_t sum;

static void
record_alloc(void *p, const char *label)
{
	heaptool_assign(p, heaptool_tag(label), HEAPTOOL_MALLOC);
}

FX_NOINLINE static void *
labelled_alloc(size_t size)
{
	return malloc(size); /* SITE labelled_alloc */
}

int
main(void)
{
	static uint32_t seen[LABELS];
	char label[64];
	size_t i, size;
	int distinct = 0;
	uint32_t t;

	for (i = 0; i < N; i++) {
		size = 32 + (i % 7) * 16;
		if ((blocks[i] = labelled_alloc(size)) == NULL)
			return 2;
		fx_fill(blocks[i], size, i, &sum);
		snprintf(label, sizeof(label), "reader.cc::%zu",
		    1000 + i % LABELS);
		record_alloc(blocks[i], label);
		t = heaptool_tag(label);
		if (seen[i % LABELS] == 0) {
			seen[i % LABELS] = t;
			distinct++;
		} else if (seen[i % LABELS] != t)
			distinct = -1000000;
	}
	for (i = 3; i < N; i += 4)
		free(blocks[i]);
	printf("labels %d\nsum %llu\n", distinct, (unsigned long long)sum);
	return 0;
}
