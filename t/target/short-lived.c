/*
 * Short-lived allocations (t/t0088-temporary.sh): each site's blocks are
 * freed in a known way, N times over (argv[1], default 1000):
 *
 *   tmp_alone     malloc(100), freed before anything else is allocated:
 *                 short-lived, all N
 *   tmp_outer     malloc(200), then tmp_inner's malloc(8), then both freed,
 *                 the outer first: not short-lived (an allocation came
 *                 between); tmp_inner's block is (all N) for heaptool,
 *                 which a free in between does not change, and is not for
 *                 heaptrack, for which it does (heaptool(1) says so)
 *   tmp_grown     malloc(50) (tmp_grown_first) then realloc to 5000 and
 *                 freed: both blocks are short-lived, all N each: the
 *                 first was reallocated before anything else was
 *                 allocated, the realloc's freed
 *   tmp_handed    malloc(300) freed by another thread: never
 *   tmp_kept      malloc(400) kept to the end: never
 *
 * It prints "sum S": the checksum of what it wrote.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

#include "fixture.h"

static uint64_t sum;

static FX_NOINLINE void *
tmp_alone(void)
{
	return malloc(100); /* SITE tmp_alone */
}

static FX_NOINLINE void *
tmp_outer(void)
{
	return malloc(200); /* SITE tmp_outer */
}

static FX_NOINLINE void *
tmp_inner(void)
{
	return malloc(8); /* SITE tmp_inner */
}

static FX_NOINLINE void *
tmp_grown_first(void)
{
	return malloc(50); /* SITE tmp_grown_first */
}

static FX_NOINLINE void *
tmp_grown(void *p)
{
	return realloc(p, 5000); /* SITE tmp_grown */
}

static FX_NOINLINE void *
tmp_handed(void)
{
	return malloc(300); /* SITE tmp_handed */
}

static FX_NOINLINE void *
tmp_kept(void)
{
	return malloc(400); /* SITE tmp_kept */
}

static void *
freer(void *arg)
{
	void **v = arg;
	size_t i;

	for (i = 0; v[i] != NULL; i++)
		free(v[i]);
	return NULL;
}

int
main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 1000, i;
	void **handed, **kept;
	pthread_t th;

	handed = calloc((size_t)n + 1, sizeof(*handed));
	kept = calloc((size_t)n + 1, sizeof(*kept));
	if (handed == NULL || kept == NULL)
		return 1;
	for (i = 0; i < n; i++) {
		void *p = tmp_alone(), *q;

		fx_fill(p, 100, (uint64_t)i, &sum);
		free(p);

		p = tmp_outer();
		q = tmp_inner();
		fx_fill(p, 200, (uint64_t)i, &sum);
		fx_fill(q, 8, (uint64_t)i, &sum);
		free(p);
		free(q);

		p = tmp_grown_first();
		fx_fill(p, 50, (uint64_t)i, &sum);
		p = tmp_grown(p);
		fx_fill(p, 5000, (uint64_t)i, &sum);
		free(p);

		handed[i] = tmp_handed();
		fx_fill(handed[i], 300, (uint64_t)i, &sum);
		kept[i] = tmp_kept();
		fx_fill(kept[i], 400, (uint64_t)i, &sum);
	}
	if (pthread_create(&th, NULL, freer, handed) != 0 ||
	    pthread_join(th, NULL) != 0)
		return 1;
	printf("sum %llu\n", (unsigned long long)sum);
	fflush(stdout);
	return 0;
}
