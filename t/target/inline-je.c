/*
 * Fixture of t/t0057-inline-jemalloc.sh: a program statically linked with
 * Debian's libjemalloc.a, whose malloc, calloc, realloc and free are then
 * the executable's own, called directly: only inline hooks see them.
 *
 * It prints "ready" (after prctl(PR_SET_PTRACER_ANY)) and reads commands,
 * one a line:
 *   run N     N rounds of malloc(100 + i) (site je_site, kept),
 *             calloc(2, 50) and realloc of it to 300 (site je_mix),
 *             then frees of the calloc'd block; prints "ran N A" where A is
 *             the allocating calls it made so far
 *   release   frees the kept blocks; prints "released"
 *   quit      exit 0 (so does end of file), after printing "checksum HEX"
 */
#include <sys/prctl.h>

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fixture.h"

#define MAXKEEP 10000

static void *kept[MAXKEEP];
static size_t nkept;
static uint64_t sum = 1, calls;

FX_NOINLINE static void
je_site(size_t i)
{
	void *p = malloc(100 + i); /* SITE je_site */

	if (p == NULL)
		exit(1);
	calls++;
	fx_fill(p, 100 + i, i, &sum);
	if (nkept < MAXKEEP)
		kept[nkept++] = p;
}

FX_NOINLINE static void
je_mix(size_t i)
{
	char *p, *q;

	if ((p = calloc(2, 50)) == NULL)
		exit(1);
	calls++;
	sum = fx_mix(sum, (uint64_t)p[99]);
	if ((q = realloc(p, 300)) == NULL)
		exit(1);
	calls++;
	fx_fill(q, 300, i, &sum);
	free(q);
}

int
main(void)
{
	char line[64];
	size_t i, n;

	prctl(PR_SET_PTRACER, PR_SET_PTRACER_ANY, 0, 0, 0);
	setvbuf(stdout, NULL, _IONBF, 0);
	printf("ready\n");
	while (fgets(line, sizeof(line), stdin) != NULL) {
		if (strncmp(line, "run ", 4) == 0) {
			n = strtoul(line + 4, NULL, 10);
			for (i = 0; i < n; i++) {
				je_site(i);
				je_mix(i);
			}
			printf("ran %zu %llu\n", n, (unsigned long long)calls);
		} else if (strcmp(line, "release\n") == 0) {
			for (i = 0; i < nkept; i++)
				free(kept[i]);
			nkept = 0;
			printf("released\n");
		} else if (strcmp(line, "quit\n") == 0)
			break;
	}
	printf("checksum %016llx\n", (unsigned long long)sum);
	return 0;
}
