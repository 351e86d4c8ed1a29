/*
 * The cost of the tag calls of include/heaptool.h (bench/tags.sh, make
 * bench): ns per heaptool_tag_enter/leave pair and per heaptool_assign, in
 * whatever process this is (without the agent: the stubs' cost; under
 * heaptool run: the agent's entry points).  Usage: tagstub [N].
 */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "heaptool.h"

static double
now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

int
main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 20000000L, i;
	void *volatile block = malloc(64);
	volatile uint32_t sink = 0;
	uint32_t tag, prev;
	double t0, t1, t2;
	int rc = 0;

	tag = heaptool_tag("bench");
	t0 = now_ns();
	for (i = 0; i < n; i++) {
		prev = heaptool_tag_enter(tag);
		sink += prev;
		heaptool_tag_leave(prev);
	}
	t1 = now_ns();
	for (i = 0; i < n; i++)
		rc |= heaptool_assign(block, tag, HEAPTOOL_ARENA);
	t2 = now_ns();
	printf("tag %u: enter+leave %.2f ns/pair, assign %.2f ns/call "
	       "(%ld calls each)%s\n",
	    tag, (t1 - t0) / (double)n, (t2 - t1) / (double)n, n,
	    rc != 0 ? " ASSIGN FAILED" : "");
	free(block);
	return rc != 0;
}
