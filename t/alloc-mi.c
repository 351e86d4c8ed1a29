/*
 * A library for t/allocators-t that looks like mimalloc to the agent: it
 * defines mi_malloc and mi_free (handing them to glibc), and refers to
 * jemalloc's je_malloc only weakly, an undefined entry that must not count.
 * It also has a reallocarray of its own, as libbsd has for old systems: a
 * wrapper of realloc, which is no allocator of its own (no malloc).
 * Built with --hash-style=sysv, so that the agent's SysV hash lookup is the
 * one tested here (got-fake.so has the GNU hash table).
 */
#include <stddef.h>
#include <stdlib.h>

extern void *je_malloc(size_t) __attribute__((weak));

void *
mi_malloc(size_t n)
{
	return je_malloc != NULL ? je_malloc(n) : malloc(n);
}

void
mi_free(void *p)
{
	free(p);
}

void *
reallocarray(void *p, size_t n, size_t size)
{
	if (size != 0 && n > (size_t)-1 / size)
		return NULL;
	return realloc(p, n * size);
}
