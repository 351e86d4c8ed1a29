/*
 * libslow.so: an allocator twice as slow as the one under it, for the
 * tests of heaptool replay --compare.  Preloaded, every allocation (malloc,
 * calloc, realloc, the aligned forms) first allocates and frees a block of
 * the same size with the next allocator (RTLD_NEXT), then makes the real
 * one; free is the next one's.  A malloc and its free then cost the next
 * allocator two mallocs and two frees of that size: twice the work, by
 * construction, with no clock in it (a wrapper that timed its calls and
 * spun as long again came out 2.05 to 2.2 times as slow, its clock reads
 * and the spin's granularity not being free).  On a trace of blocks of
 * 256 KiB to 1 MiB, each malloc an mmap and each free a munmap
 * (MALLOC_MMAP_THRESHOLD_ fixed), the calls are most of the replay's time
 * and the replay takes 2.0 times as long, which t0098 looks for.
 * C++'s new and delete of libstdc++ call these too.
 *
 * Until the next functions are found (dlsym may allocate), allocations
 * come from a small static arena that free leaves alone.
 */
#include <dlfcn.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

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

/* The same work again: a block of n bytes made and freed. */
static void
again(size_t n)
{
	next_free(next_malloc(n));
}

void *
malloc(size_t n)
{
	resolve();
	if (next_malloc == NULL)
		return from_arena(n);
	again(n);
	return next_malloc(n);
}

void *
calloc(size_t n, size_t size)
{
	resolve();
	if (next_calloc == NULL) {
		if (size != 0 && n > SIZE_MAX / size)
			return NULL;
		return from_arena(n * size); /* static: zero already */
	}
	again(size != 0 && n <= SIZE_MAX / size ? n * size : 0);
	return next_calloc(n, size);
}

void *
realloc(void *old, size_t n)
{
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
	again(n);
	return next_realloc(old, n);
}

void
free(void *p)
{
	if (p == NULL || in_arena(p))
		return;
	resolve();
	next_free(p);
}

int
posix_memalign(void **out, size_t al, size_t n)
{
	resolve();
	again(n);
	return next_posix_memalign(out, al, n);
}

void *
memalign(size_t al, size_t n)
{
	resolve();
	again(n);
	return next_memalign(al, n);
}

void *
aligned_alloc(size_t al, size_t n)
{
	resolve();
	again(n);
	return next_aligned_alloc(al, n);
}
