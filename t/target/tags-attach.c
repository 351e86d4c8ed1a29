/*
 * Fixture of t/t0083-tags-attach.sh: the tag calls of include/heaptool.h in
 * a process the agent is attached to after it started.  It tags before any
 * agent is there (heaptool_tag gives 0), prints "ready tag 0" (after
 * prctl(PR_SET_PTRACER_ANY)), then reads commands with read(2):
 *   tag      calls heaptool_tag("late") until it is not 0 (the stubs look
 *            for the agent again about every 50 ms), 10 ms apart, at most
 *            1,000 times; prints "tag N"
 *   keep N   N blocks of 1000 bytes at keep_late under
 *            HEAPTOOL_TAG_SCOPE("late"); prints "kept N"
 *   quit     exit 0 (so does end of file)
 */
#include <sys/prctl.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "fixture.h"
#include "heaptool.h"

static void *kept[1024];
static size_t nkept;
static uint64_t sum;

FX_NOINLINE static void
keep_late(size_t n)
{
	HEAPTOOL_TAG_SCOPE("late");
	size_t i;

	for (i = 0; i < n && nkept < 1024; i++) {
		void *p = malloc(1000); /* SITE keep_late */

		if (p == NULL)
			exit(2);
		fx_fill(p, 1000, i, &sum);
		kept[nkept++] = p;
	}
}

int
main(void)
{
	struct timespec ten_ms = { 0, 10000000 };
	char line[256];
	ssize_t n;
	size_t len = 0;
	uint32_t t;
	int i;

	prctl(PR_SET_PTRACER, PR_SET_PTRACER_ANY, 0, 0, 0);
	setvbuf(stdout, NULL, _IONBF, 0);
	printf("ready tag %u\n", heaptool_tag("late"));
	for (;;) {
		n = read(0, line + len, sizeof(line) - 1 - len);
		if (n <= 0)
			return 0;
		len += (size_t)n;
		line[len] = '\0';
		if (strchr(line, '\n') == NULL)
			continue;
		if (strncmp(line, "tag", 3) == 0) {
			for (i = 0; i < 1000 && (t = heaptool_tag("late")) == 0;
			     i++)
				nanosleep(&ten_ms, NULL);
			printf("tag %u\n", t);
		} else if (strncmp(line, "keep ", 5) == 0) {
			keep_late(strtoul(line + 5, NULL, 10));
			printf("kept %zu\n", nkept);
		} else if (strncmp(line, "quit", 4) == 0)
			return 0;
		len = 0;
	}
}
