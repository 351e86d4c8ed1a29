/*
 * Workload 1 of the overhead benchmark: one thread, malloc/free pairs of
 * 16..1039 bytes through a window of 1024 live blocks.  Each step frees the
 * block in a pseudo-random slot and puts a fresh block of a pseudo-random
 * size there, so the allocator sees mixed sizes and lifetimes rather than one
 * block recycled through one free list.  The seed is fixed: every run does
 * the same work, plain or profiled.
 *
 * usage: churn [PAIRS [gate]]	(default 30000000)
 *
 * With "gate" (bench/backends.sh), churn first waits for a byte on stdin,
 * so that a profiler can attach and start before the loop, and then prints
 * the loop's own wall and CPU seconds on stdout: the figures then leave out
 * the start-up, the attach and the final profile, which differ by backend.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

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

	struct timespec w0, w1, c0, c1;
	int gate;
	char c;

	if (argc > 1)
		pairs = strtoull(argv[1], NULL, 10);
	gate = argc > 2 && strcmp(argv[2], "gate") == 0;
	if (gate) {
		/* The caller waits for this line before it attaches. */
		puts("ready");
		fflush(stdout);
	}
	if (gate && read(0, &c, 1) != 1) {
		fputs("churn: no byte on stdin to open the gate\n", stderr);
		return 1;
	}
	clock_gettime(CLOCK_MONOTONIC, &w0);
	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &c0);
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
	clock_gettime(CLOCK_MONOTONIC, &w1);
	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &c1);
	if (gate)
		printf("%.6f %.6f\n",
		    (double)(w1.tv_sec - w0.tv_sec) +
			(double)(w1.tv_nsec - w0.tv_nsec) / 1e9,
		    (double)(c1.tv_sec - c0.tv_sec) +
			(double)(c1.tv_nsec - c0.tv_nsec) / 1e9);
	return 0;
}
