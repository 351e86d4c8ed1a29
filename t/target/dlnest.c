/*
 * Fixture of t0013-dlopen-nested: two threads dlopen and dlclose libraries
 * as fast as they can for a fixed count, one of them a library whose
 * constructor itself calls dlopen (so the agent's dlopen hook runs inside
 * the loader's lock) while the other thread's hook rescans and patches.
 * A lock-order mistake in the agent hangs here; the test bounds it.
 *
 *   dlnest DIR N     N rounds per thread; libraries in DIR; prints
 *                    "dlnest: N rounds, 2 threads, ok" and the sum of what
 *                    the libraries returned
 */
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fixture.h"

static char dir[512];
static long rounds;

static long
use(const char *name)
{
	char path[600];
	void *h;
	long (*fn)(void);
	long v = 0;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
	if (h == NULL) {
		fprintf(stderr, "dlnest: %s\n", dlerror());
		exit(1);
	}
	fn = (long (*)(void))dlsym(h, "dlnest_value");
	if (fn != NULL)
		v = fn();
	dlclose(h);
	return v;
}

static void *
worker(void *arg)
{
	const char *name = arg;
	long i, sum = 0;

	for (i = 0; i < rounds; i++)
		sum += use(name);
	return (void *)sum;
}

int
main(int argc, char **argv)
{
	pthread_t a, b;
	void *ra, *rb;

	if (argc != 3) {
		fprintf(stderr, "usage: dlnest DIR N\n");
		return 2;
	}
	snprintf(dir, sizeof(dir), "%s", argv[1]);
	rounds = atol(argv[2]);
	if (pthread_create(&a, NULL, worker, "libdlnest-outer.so") != 0 ||
	    pthread_create(&b, NULL, worker, "libdlfix.so") != 0)
		return 1;
	pthread_join(a, &ra);
	pthread_join(b, &rb);
	printf("dlnest: %ld rounds, 2 threads, ok, sum %ld\n", rounds,
	    (long)ra + (long)rb);
	return 0;
}
