/*
 * Workloads 5 to 8 of the overhead benchmark: THREADS threads share PAIRS
 * malloc/free pairs between them, each on its own blocks, so that the same
 * work is done whatever the number of threads and a profiler whose locks
 * serialize the threads shows a worse ratio with 8 threads than with 1.
 * "small": workload 1's churn (16..1039 bytes through a window of 1024
 * blocks per thread), where one allocation in about a thousand is sampled
 * at the default rate; "large": workload 3's 128 KiB blocks, one in 4.5
 * sampled, where each sample takes the agent's lock twice (its allocation
 * and its free).  Each thread's seed is fixed: every run does the same
 * work, plain or profiled.
 *
 * usage: threads THREADS PAIRS small|large
 */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define WINDOW	   1024
#define BLOCK	   (128 * 1024)
#define MAXTHREADS 64

struct job {
	pthread_t th;
	uint64_t pairs;
	uint64_t seed;
	int large;
	void *slots[WINDOW];
};

/* Storing each large block here makes it escape, so that the compiler
 * cannot drop the malloc/free pair as dead code. */
static unsigned char *volatile last;

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

static void *
run(void *arg)
{
	struct job *j = arg;
	unsigned char *p;
	uint64_t i, r;
	size_t idx, size;

	for (i = 0; i < j->pairs; i++) {
		if (j->large) {
			if ((p = malloc(BLOCK)) == NULL)
				abort();
			p[(i * 4096) % BLOCK] = (unsigned char)i;
			last = p;
			free(p);
			continue;
		}
		r = next(&j->seed);
		idx = r & (WINDOW - 1);
		size = 16 + (r >> 32) % 1024;
		free(j->slots[idx]);
		if ((p = malloc(size)) == NULL)
			abort();
		p[0] = (unsigned char)i;
		p[size - 1] = (unsigned char)i;
		j->slots[idx] = p;
	}
	for (idx = 0; idx < WINDOW; idx++)
		free(j->slots[idx]);
	return NULL;
}

int
main(int argc, char *argv[])
{
	static struct job jobs[MAXTHREADS];
	uint64_t pairs;
	int n, i, large;

	if (argc != 4 || (n = atoi(argv[1])) < 1 || n > MAXTHREADS ||
	    (strcmp(argv[3], "small") != 0 && strcmp(argv[3], "large") != 0)) {
		fputs("usage: threads THREADS(1-64) PAIRS small|large\n",
		    stderr);
		return 2;
	}
	pairs = strtoull(argv[2], NULL, 10);
	large = strcmp(argv[3], "large") == 0;
	for (i = 0; i < n; i++) {
		jobs[i].pairs =
		    pairs / (uint64_t)n + ((uint64_t)i < pairs % (uint64_t)n);
		jobs[i].seed = 0x9e3779b97f4a7c15ULL * (uint64_t)(i + 1);
		jobs[i].large = large;
		if (pthread_create(&jobs[i].th, NULL, run, &jobs[i]) != 0) {
			perror("threads: pthread_create");
			return 1;
		}
	}
	for (i = 0; i < n; i++)
		pthread_join(jobs[i].th, NULL);
	return 0;
}
