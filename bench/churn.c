/*
 * Workload 1 of the overhead benchmark: one thread, malloc/free pairs of
 * 16..1039 bytes through a window of 1024 live blocks.  Each step frees the
 * block in a pseudo-random slot and puts a fresh block of a pseudo-random
 * size there, so the allocator sees mixed sizes and lifetimes rather than one
 * block recycled through one free list.  The seed is fixed: every run does
 * the same work, plain or profiled.
 *
 * usage: churn [PAIRS]		(default 30000000)
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#define WINDOW 1024

static void *slots[WINDOW];

/* xorshift64: cheap next to malloc, so the loop measures the allocator. */
static inline uint64_t
next(uint64_t *s)
{
	uint64_t x = *s;

	x ^= x << 13;
	x ^= x >> 7;
	x ^= x << 17;
	*s = x;
	return x;
}

int
main(int argc, char *argv[])
{
	uint64_t pairs = 30000000, i, r, seed = 0x9e3779b97f4a7c15ULL;
	unsigned char *p;
	size_t idx, size;

	if (argc > 1)
		pairs = strtoull(argv[1], NULL, 10);
	for (i = 0; i < pairs; i++) {
		r = next(&seed);
		idx = r & (WINDOW - 1);
		size = 16 + (r >> 32) % 1024;
		free(slots[idx]);
		if ((p = malloc(size)) == NULL) {
			perror("churn: malloc");
			return 1;
		}
		/* Touch the block so that it is really used. */
		p[0] = (unsigned char)i;
		p[size - 1] = (unsigned char)i;
		slots[idx] = p;
	}
	for (idx = 0; idx < WINDOW; idx++)
		free(slots[idx]);
	return 0;
}
