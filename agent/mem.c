/*
 * Anonymous mappings for the agent's tables.  The target's allocator is never
 * used: the agent runs inside it.
 */
#include <sys/mman.h>

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "mem.h"

static uint64_t mapped;

static size_t
round_page(size_t len)
{
	return (len + 4095) & ~(size_t)4095;
}

static void *
map(size_t len, int shared)
{
	void *p;

	if (len == 0)
		return NULL;
	p = mmap(NULL, round_page(len), PROT_READ | PROT_WRITE,
	    (shared ? MAP_SHARED : MAP_PRIVATE) | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED)
		return NULL;
	__atomic_add_fetch(&mapped, round_page(len), __ATOMIC_RELAXED);
	return p;
}

void *
ht_mem_map(size_t len)
{
	return map(len, 0);
}

void *
ht_mem_map_shared(size_t len)
{
	return map(len, 1);
}

void
ht_mem_zero(void *p, size_t len)
{
	uintptr_t lo = (uintptr_t)p, hi = lo + len;
	uintptr_t a = (lo + 4095) & ~(uintptr_t)4095, b = hi & ~(uintptr_t)4095;

	if (p == NULL || len == 0)
		return;
	if (a >= b) {
		memset(p, 0, len);
		return;
	}
	/* The whole pages go back (MADV_DONTNEED on private anonymous
	 * memory: the next touch maps a zero page), the ends are written;
	 * should the kernel refuse, all of it is written. */
	memset(p, 0, a - lo);
	memset((void *)b, 0, hi - b);
	if (madvise((void *)a, b - a, MADV_DONTNEED) != 0)
		memset((void *)a, 0, b - a);
}

void
ht_mem_unmap(void *p, size_t len)
{
	if (p == NULL || len == 0)
		return;
	if (munmap(p, round_page(len)) == 0)
		__atomic_sub_fetch(&mapped, round_page(len), __ATOMIC_RELAXED);
}

void *
ht_mem_remap(void *p, size_t oldlen, size_t newlen)
{
	void *q;

	if (p == NULL)
		return ht_mem_map(newlen);
	q = mremap(p, round_page(oldlen), round_page(newlen), MREMAP_MAYMOVE);
	if (q == MAP_FAILED)
		return NULL;
	__atomic_add_fetch(&mapped, round_page(newlen), __ATOMIC_RELAXED);
	__atomic_sub_fetch(&mapped, round_page(oldlen), __ATOMIC_RELAXED);
	return q;
}

void
ht_mem_note_static(size_t len)
{
	__atomic_add_fetch(&mapped, len, __ATOMIC_RELAXED);
}

uint64_t
ht_mem_overhead(void)
{
	return __atomic_load_n(&mapped, __ATOMIC_RELAXED);
}
