/*
 * A library for t/allocators-t that looks like mimalloc to the agent: it
 * defines mi_malloc and mi_free (handing them to glibc), and refers to
 * jemalloc's je_malloc only weakly, an undefined entry that must not count.
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
