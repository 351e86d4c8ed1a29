/*
 * A library for t/got-t that allocates through its own GOT slots.  Built
 * twice: got-lazy.so (-z lazy; only calls, so its slots are JUMP_SLOTs that
 * lazy binding has not resolved when the test patches them) and got-now.so
 * (-z now, and GOTLIB_ADDR: it also takes the addresses of malloc and
 * aligned_alloc, GLOB_DAT slots, and keeps malloc's in a const pointer, an
 * R_X86_64_64 slot in RELRO).
 * Compiled with -fno-builtin so that every call stays a call.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* Allocate with malloc, calloc and realloc, free with free; returns the
 * sum of what was written and read back: 300. */
long
gotlib_churn(void)
{
	char *a, *b, *c;
	long sum = 0;
	int i;

	if ((a = malloc(100)) == NULL)
		return -1;
	if ((b = calloc(10, 10)) == NULL) {
		free(a);
		return -1;
	}
	memset(a, 1, 100);
	if ((c = realloc(a, 200)) == NULL) {
		free(a);
		free(b);
		return -1;
	}
	memset(c + 100, 2, 100);
	for (i = 0; i < 200; i++)
		sum += c[i];
	for (i = 0; i < 100; i++)
		sum += b[i];
	free(c);
	free(b);
	return sum;
}

#ifdef GOTLIB_ADDR
void *(*const gotlib_malloc_ptr)(size_t) = malloc;

/* malloc as this library sees it: loaded from its GLOB_DAT slot. */
void *
gotlib_malloc_addr(void)
{
	return (void *)malloc;
}

/* Likewise for aligned_alloc: t/got-t takes its address too, so this slot
 * is bound to t/got-t's canonical PLT entry. */
void *
gotlib_aligned_addr(void)
{
	return (void *)aligned_alloc;
}

/* One aligned_alloc and one free; returns 128 if the block was aligned. */
long
gotlib_aligned(void)
{
	char *p;
	long r;

	if ((p = aligned_alloc(64, 128)) == NULL)
		return -1;
	r = ((uintptr_t)p & 63) == 0 ? 128 : -1;
	free(p);
	return r;
}

/* Allocate through the R_X86_64_64 pointer. */
void *
gotlib_malloc_via_ptr(size_t n)
{
	return gotlib_malloc_ptr(n);
}
#endif
