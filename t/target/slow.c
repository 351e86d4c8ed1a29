/*
 * libslow.so: an allocator twice as slow as the one under it, for the
 * tests of heaptool replay --compare.  Preloaded, its malloc, calloc,
 * realloc, the aligned forms and free call the next ones (RTLD_NEXT) and
 * then spin for as long again as the call took, measured on
 * CLOCK_MONOTONIC, so that every call takes twice its time, whatever it
 * costs (C++'s new and delete of libstdc++ call these too).  On a trace
 * of large blocks (each call a system call of microseconds) the clock
 * reads' tens of nanoseconds are lost in the noise: the replay then takes
 * 2.0 times as long, which is what t0098 looks for.
 *
 * Until the next functions are found (dlsym may allocate), allocations
 * come from a small static arena that free leaves alone.
 */
#include <dlfcn.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <time.h>

static void *(*next_malloc)(size_t);
static void *(*next_calloc)(size_t, size_t);
static void *(*next_realloc)(void *, size_t);
static void (*next_free)(void *);
static int (*next_posix_memalign)(void **, size_t, size_t);
static void *(*next_memalign)(size_t, size_t);
static void *(*next_aligned_alloc)(size_t, size_t);

static _Alignas(16) unsigned char arena[65536];
static size_t arena_used;
static int resolving;

static void *
from_arena(size_t n)
{
	void *p;

	n = (n + 15) & ~(size_t)15;
	if (arena_used + n > sizeof(arena))
		return NULL;
	p = arena + arena_used;
	arena_used += n;
	return p;
}

static int
in_arena(const void *p)
{
	return (const unsigned char *)p >= arena &&
	    (const unsigned char *)p < arena + sizeof(arena);
}

static void
resolve(void)
{
	if (next_free != NULL || resolving)
		return;
	resolving = 1;
	*(void **)&next_malloc = dlsym(RTLD_NEXT, "malloc");
	*(void **)&next_calloc = dlsym(RTLD_NEXT, "calloc");
	*(void **)&next_realloc = dlsym(RTLD_NEXT, "realloc");
	*(void **)&next_posix_memalign = dlsym(RTLD_NEXT, "posix_memalign");
	*(void **)&next_memalign = dlsym(RTLD_NEXT, "memalign");
	*(void **)&next_aligned_alloc = dlsym(RTLD_NEXT, "aligned_alloc");
	*(void **)&next_free = dlsym(RTLD_NEXT, "free");
	resolving = 0;
}

static uint64_t
now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* The cost of a clock read, the least of a few back-to-back pairs: the
 * time between t0 and t1 holds one, and the spin's last read another, so
 * the spin leaves out two to make the call's time twice its own and not
 * more. */
static uint64_t clock_cost = UINT64_MAX;

static void
calibrate(void)
{
	int i;

	for (i = 0; i < 64; i++) {
		uint64_t a = now(), b = now();

		if (b - a < clock_cost)
			clock_cost = b - a;
	}
}

/* Spin until as long again as since t0 has passed since t1. */
static void
again(uint64_t t0)
{
	uint64_t t1 = now(), d = t1 - t0;

	if (clock_cost == UINT64_MAX)
		calibrate();
	d = d > 2 * clock_cost ? d - 2 * clock_cost : 0;
	while (now() - t1 < d)
		;
}

void *
malloc(size_t n)
{
	uint64_t t0;
	void *p;

	resolve();
	if (next_malloc == NULL)
		return from_arena(n);
	t0 = now();
	p = next_malloc(n);
	again(t0);
	return p;
}

void *
calloc(size_t n, size_t size)
{
	uint64_t t0;
	void *p;

	resolve();
	if (next_calloc == NULL) {
		if (size != 0 && n > SIZE_MAX / size)
			return NULL;
		return from_arena(n * size); /* static: zero already */
	}
	t0 = now();
	p = next_calloc(n, size);
	again(t0);
	return p;
}

void *
realloc(void *old, size_t n)
{
	uint64_t t0;
	void *p;

	resolve();
	if (in_arena(old)) {
		/* Rare (only before dlsym is done): copy what may be there. */
		p = malloc(n);
		if (p != NULL)
			memcpy(p, old,
			    n < (size_t)(arena + sizeof(arena) -
				    (unsigned char *)old) ?
				n :
				(size_t)(arena + sizeof(arena) -
				    (unsigned char *)old));
		return p;
	}
	if (next_realloc == NULL)
		return from_arena(n);
	t0 = now();
	p = next_realloc(old, n);
	again(t0);
	return p;
}

void
free(void *p)
{
	uint64_t t0;

	if (p == NULL || in_arena(p))
		return;
	resolve();
	t0 = now();
	next_free(p);
	again(t0);
}

int
posix_memalign(void **out, size_t al, size_t n)
{
	uint64_t t0;
	int rc;

	resolve();
	t0 = now();
	rc = next_posix_memalign(out, al, n);
	again(t0);
	return rc;
}

void *
memalign(size_t al, size_t n)
{
	uint64_t t0;
	void *p;

	resolve();
	t0 = now();
	p = next_memalign(al, n);
	again(t0);
	return p;
}

void *
aligned_alloc(size_t al, size_t n)
{
	uint64_t t0;
	void *p;

	resolve();
	t0 = now();
	p = next_aligned_alloc(al, n);
	again(t0);
	return p;
}
