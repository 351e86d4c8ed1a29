/*
 * Fixture of t0074 to t0076 (heaptool top): sites that grow at known,
 * different rates.  At its start it keeps 8 MiB at "big" (128 blocks of
 * 64 KiB, never freed, never more); then every 100 ms it keeps 1000 bytes
 * at "slow" and 4000 at "fast" (about 10 and 40 KB/s), for at most TICKS
 * ticks (default 3000, five minutes), then sleeps until it is killed, or
 * exits 0 with TICKS given as "exit N" after N ticks.
 *
 *   site   in use            growth
 *   big    8 MiB             none
 *   fast   4000 B per tick   the fastest
 *   slow   1000 B per tick   a quarter of fast's
 *
 * So by bytes in use big comes first (fast needs some 200 s to pass it),
 * and by growth fast, then slow, then big.  fast is called through feed,
 * so its stack has more frames than its own.  It prints "ready" once big
 * is kept, after prctl(PR_SET_PTRACER_ANY).
 */
#include <sys/prctl.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "fixture.h"

static uint64_t sum;
static volatile size_t one = 1;

static void
keep(void *p, size_t size, size_t i)
{
	if (p == NULL) {
		fprintf(stderr, "top-grow: out of memory\n");
		exit(1);
	}
	fx_fill(p, size, i, &sum);
}

FX_NOINLINE static void
big(void)
{
	size_t i;

	for (i = 0; i < 128; i++)
		keep(malloc(65536 * one), 65536, i); /* SITE big */
}

FX_NOINLINE static void
slow(size_t i)
{
	keep(malloc(1000 * one), 1000, i); /* SITE slow */
}

FX_NOINLINE static void
fast(size_t i)
{
	keep(malloc(4000 * one), 4000, i); /* SITE fast */
}

FX_NOINLINE static void
feed(size_t i)
{
	fast(i);
	/* After the call, so that it is no tail call: feed stays in the
	 * stack. */
	sum ^= i;
}

int
main(int argc, char *argv[])
{
	struct timespec tick = { 0, 100 * 1000 * 1000 };
	unsigned long ticks = 3000, i;
	int quit = 0;

	if (argc == 3 && strcmp(argv[1], "exit") == 0) {
		ticks = strtoul(argv[2], NULL, 10);
		quit = 1;
	} else if (argc != 1) {
		fprintf(stderr, "usage: top-grow [exit TICKS]\n");
		return 2;
	}
	prctl(PR_SET_PTRACER, PR_SET_PTRACER_ANY, 0, 0, 0);
	sum = 0xcbf29ce484222325ULL;
	big();
	printf("ready\n");
	fflush(stdout);
	for (i = 0; i < ticks; i++) {
		nanosleep(&tick, NULL);
		slow(i);
		feed(i);
	}
	if (quit) {
		printf("top-grow: checksum %016llx\n", (unsigned long long)sum);
		return 0;
	}
	for (;;)
		nanosleep(&tick, NULL);
}
