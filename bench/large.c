/*
 * Workload 3 of the overhead benchmark: malloc/free of 128 KiB blocks,
 * touching one byte of each.  At the default rate of 512 KiB an allocation
 * of 128 KiB is sampled with probability 1 - exp(-1/4), about one in 4.5, so
 * this workload measures the cost of taking a sample (stack capture, site
 * table, sampled-pointer table) rather than the cost of the hooks.
 *
 * usage: large [PAIRS]		(default 30000000)
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#define BLOCK (128 * 1024)

/* Storing each block here makes it escape, so the compiler cannot drop the
 * malloc/free pair as dead code. */
static unsigned char *volatile last;

int
main(int argc, char *argv[])
{
	uint64_t pairs = 30000000, i;
	unsigned char *p;

	if (argc > 1)
		pairs = strtoull(argv[1], NULL, 10);
	for (i = 0; i < pairs; i++) {
		if ((p = malloc(BLOCK)) == NULL) {
			perror("large: malloc");
			return 1;
		}
		p[(i * 4096) % BLOCK] = (unsigned char)i;
		last = p;
		free(p);
	}
	return 0;
}
