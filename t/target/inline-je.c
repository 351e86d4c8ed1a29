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
 *   xrun N    the same through jemalloc's own API: N rounds of
 *             mallocx(200 + i) (site je_xsite, kept), mallocx(64)
 *             grown by rallocx to 512 then sdallocx'd (site je_xmix);
 *             prints "xran N A"
 *   xrelease  dallocx of the blocks xrun kept; prints "xreleased"
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

/* jemalloc's API (jemalloc/jemalloc.h of libjemalloc-dev, unprefixed in
 * Debian's build), declared here so that no macro of the header renames
 * them. */
void *mallocx(size_t size, int flags);
void *rallocx(void *ptr, size_t size, int flags);
void sdallocx(void *ptr, size_t size, int flags);
void dallocx(void *ptr, int flags);

static void *kept[MAXKEEP], *xkept[MAXKEEP];
static size_t nkept, nxkept;
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

FX_NOINLINE static void
je_xsite(size_t i)
{
	void *p = mallocx(200 + i, 0); /* SITE je_xsite */

	if (p == NULL)
		exit(1);
	calls++;
	fx_fill(p, 200 + i, i, &sum);
	if (nxkept < MAXKEEP)
		xkept[nxkept++] = p;
}

FX_NOINLINE static void
je_xmix(size_t i)
{
	char *p, *q;

	if ((p = mallocx(64, 0)) == NULL)
		exit(1);
	calls++;
	fx_fill(p, 64, i, &sum);
	if ((q = rallocx(p, 512, 0)) == NULL)
		exit(1);
	calls++;
	sum = fx_mix(sum, (uint64_t)q[63]);
	fx_fill(q, 512, i, &sum);
	sdallocx(q, 512, 0);
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
		} else if (strncmp(line, "xrun ", 5) == 0) {
			n = strtoul(line + 5, NULL, 10);
			for (i = 0; i < n; i++) {
				je_xsite(i);
				je_xmix(i);
			}
			printf("xran %zu %llu\n", n, (unsigned long long)calls);
		} else if (strcmp(line, "xrelease\n") == 0) {
			for (i = 0; i < nxkept; i++)
				dallocx(xkept[i], 0);
			nxkept = 0;
			printf("xreleased\n");
		} else if (strcmp(line, "quit\n") == 0)
			break;
	}
	printf("checksum %016llx\n", (unsigned long long)sum);
	return 0;
}
