/*
 * Fixture of t0080-timeline: memory that grows at a known pace.  It reads
 * commands on stdin and answers each with one line:
 *
 *   grow N KB MS   N x malloc(KB KiB) at site tl_grow, each filled and
 *                  kept, MS milliseconds apart
 *                                       "done grow BYTES" (kept in all)
 *   free           free every block kept            "done free"
 *   quit (or EOF)  free them, print the checksum    "sum HEX"
 *   exit           print the checksum and exit(0) with the blocks kept
 *                                       "sum HEX"
 *
 * It starts with "ready".  The checksum covers the data written, so a run
 * with the agent must print what a run without does.
 */
#include <sys/prctl.h>

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "fixture.h"

#define MAX_KEPT 4096

static void *kept[MAX_KEPT];
static size_t nkept;
static uint64_t bytes, sum;
static volatile size_t one = 1;

static void
pause_ms(unsigned long ms)
{
	struct timespec ts = { (time_t)(ms / 1000),
		(long)(ms % 1000) * 1000000L };

	while (nanosleep(&ts, &ts) != 0)
		;
}

static FX_NOINLINE void
tl_grow(unsigned long n, size_t size, unsigned long ms)
{
	unsigned long i;
	void *p;

	for (i = 0; i < n && nkept < MAX_KEPT; i++) {
		if (i > 0)
			pause_ms(ms);
		p = malloc(size * one); /* SITE tl_grow */
		if (p == NULL)
			return;
		fx_fill(p, size, nkept, &sum);
		kept[nkept++] = p;
		bytes += size;
	}
}

static void
release(void)
{
	while (nkept > 0)
		free(kept[--nkept]);
	bytes = 0;
}

int
main(void)
{
	unsigned long n, kb, ms;
	char line[128];

	prctl(PR_SET_PTRACER, PR_SET_PTRACER_ANY, 0, 0, 0);
	setvbuf(stdout, NULL, _IOLBF, 0);
	printf("ready\n");
	while (fgets(line, sizeof(line), stdin) != NULL) {
		if (sscanf(line, "grow %lu %lu %lu", &n, &kb, &ms) == 3) {
			tl_grow(n, (size_t)kb * 1024, ms);
			printf("done grow %" PRIu64 "\n", bytes);
		} else if (strncmp(line, "free", 4) == 0) {
			release();
			printf("done free\n");
		} else if (strncmp(line, "quit", 4) == 0)
			break;
		else if (strncmp(line, "exit", 4) == 0) {
			printf("sum %016" PRIx64 "\n", sum);
			exit(0);
		} else
			printf("error %s", line);
	}
	release();
	printf("sum %016" PRIx64 "\n", sum);
	return 0;
}
