/*
 * Fixture of t0012-run-robust: a program started as root that gives up
 * root for another user (setgid and setuid to the id given, 65534 by
 * default) and then exits normally, so that its agent writes the profile at
 * exit as that user.  Before it switches it keeps 5 blocks of 2000 bytes
 * (site keep_blocks); it prints "sum X" (a checksum of their contents) and
 * exits 0, or says why and exits 2 if it cannot switch (not root).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fixture.h"

static volatile size_t one = 1;
static void *kept[5];
static uint64_t sum;

FX_NOINLINE static void
keep_blocks(void)
{
	size_t i;

	for (i = 0; i < 5; i++) {
		kept[i] = malloc(2000 * one); /* SITE keep_blocks */
		if (kept[i] == NULL) {
			fprintf(stderr, "run-setuid: out of memory\n");
			exit(1);
		}
		fx_fill(kept[i], 2000, i, &sum);
	}
}

int
main(int argc, char **argv)
{
	long id = argc > 1 ? strtol(argv[1], NULL, 10) : 65534;

	keep_blocks();
	if (setgid((gid_t)id) != 0 || setuid((uid_t)id) != 0) {
		fprintf(stderr,
		    "run-setuid: cannot become uid %ld (not root)\n", id);
		return 2;
	}
	printf("sum %llu\n", (unsigned long long)sum);
	return 0;
}
