/*
 * An allocator of its own for the inline backend's fixtures (t0055,
 * t0056): size classes of free lists under one spin lock, over chunks from
 * mmap, exported under glibc's names so that it is the process's malloc.
 * Its own calls to these functions bind inside the executable, where no
 * GOT slot is on their way: only inline hooks see them.
 *
 * Each entry point counts its own calls and bytes (ia_count), so a test
 * compares heaptool's figures with the allocator's; aligned_alloc and
 * posix_memalign call memalign, which counts them (and which heaptool must
 * count once, there).  free is long enough to be patched, and its lock
 * yields through libc's PLT: a call GCC cannot see into, so no caller
 * relies on registers free leaves (-fipa-ra) and the inline backend may
 * hook it (cli/inline-ipa.c).
 */
#include <sys/mman.h>

#include <errno.h>
#include <sched.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "inline-alloc.h"

#define HDR	 16
#define CLASSES	 40
#define CHUNK	 (4u << 20)
#define MIN_SIZE 16

struct ia_counts ia_count;

static struct blk {
	struct blk *next;
} * lists[CLASSES];
static unsigned char *chunk;
static size_t chunk_left;
static int lock;

static void
lock_take(void)
{
	while (__atomic_exchange_n(&lock, 1, __ATOMIC_ACQUIRE))
		while (__atomic_load_n(&lock, __ATOMIC_RELAXED))
			sched_yield();
}

static void
lock_give(void)
{
	__atomic_store_n(&lock, 0, __ATOMIC_RELEASE);
}

/* The class of n bytes: powers of two from MIN_SIZE. */
static unsigned
class_of(size_t n)
{
	unsigned c = 0;
	size_t s = MIN_SIZE;

	while (s < n && c < CLASSES - 1) {
		s <<= 1;
		c++;
	}
	return c;
}

static size_t
class_size(unsigned c)
{
	return (size_t)MIN_SIZE << c;
}

/* A block of n bytes aligned to align (a power of two <= 4096), its class
 * and its offset from the slot's start stored in the HDR bytes before it. */
static __attribute__((noinline)) void *
take(size_t n, size_t align)
{
	unsigned c;
	size_t need, s;
	unsigned char *slot, *p;
	struct blk *b;

	if (n > ((size_t)1 << 34) || align > 4096) {
		errno = ENOMEM;
		return NULL;
	}
	need = n + HDR + (align > HDR ? align : 0);
	c = class_of(need);
	s = class_size(c);
	if (s < need) {
		errno = ENOMEM;
		return NULL;
	}
	lock_take();
	if ((b = lists[c]) != NULL)
		lists[c] = b->next;
	else {
		if (chunk_left < s) {
			size_t len = s > CHUNK ? s : CHUNK;
			void *m = mmap(NULL, len, PROT_READ | PROT_WRITE,
			    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

			if (m == MAP_FAILED) {
				lock_give();
				errno = ENOMEM;
				return NULL;
			}
			chunk = m;
			chunk_left = len;
		}
		b = (struct blk *)chunk;
		chunk += s;
		chunk_left -= s;
	}
	lock_give();
	slot = (unsigned char *)b;
	p = slot + HDR;
	if (align > HDR)
		p = (unsigned char *)(((uintptr_t)p + align - 1) &
		    ~(uintptr_t)(align - 1));
	((uint32_t *)(void *)(p - HDR))[0] = c;
	((uint32_t *)(void *)(p - HDR))[1] = (uint32_t)(p - slot);
	((uint64_t *)(void *)(p - HDR))[1] = n;
	return p;
}

static void
give(void *p)
{
	unsigned char *q = p;
	uint32_t c = ((uint32_t *)(void *)(q - HDR))[0];
	struct blk *b =
	    (struct blk *)(void *)(q - ((uint32_t *)(void *)(q - HDR))[1]);

	lock_take();
	b->next = lists[c];
	lists[c] = b;
	lock_give();
}

static size_t
size_of(const void *p)
{
	return ((
	    const uint64_t *)(const void *)((const unsigned char *)p - HDR))[1];
}

static void
count(uint64_t *calls, size_t n)
{
	__atomic_add_fetch(calls, 1, __ATOMIC_RELAXED);
	__atomic_add_fetch(&ia_count.bytes, n, __ATOMIC_RELAXED);
}

void *
malloc(size_t n)
{
	count(&ia_count.malloc, n);
	return take(n, HDR);
}

void
free(void *p)
{
	if (p == NULL)
		return;
	__atomic_add_fetch(&ia_count.free, 1, __ATOMIC_RELAXED);
	give(p);
}

void *
calloc(size_t k, size_t n)
{
	void *p;

	if (n != 0 && k > SIZE_MAX / n) {
		errno = ENOMEM;
		return NULL;
	}
	count(&ia_count.calloc, k * n);
	if ((p = take(k * n, HDR)) != NULL)
		memset(p, 0, k * n);
	return p;
}

void *
realloc(void *old, size_t n)
{
	size_t m;
	void *p;

	count(&ia_count.realloc, n);
	if ((p = take(n, HDR)) != NULL && old != NULL) {
		m = size_of(old);
		memcpy(p, old, m < n ? m : n);
		__atomic_add_fetch(&ia_count.free, 1, __ATOMIC_RELAXED);
		give(old);
	}
	return p;
}

void *
memalign(size_t align, size_t n)
{
	count(&ia_count.memalign, n);
	return take(n, align < HDR ? HDR : align);
}

void *
aligned_alloc(size_t align, size_t n)
{
	return memalign(align, n);
}

int
posix_memalign(void **out, size_t align, size_t n)
{
	void *p = memalign(align, n);

	if (p == NULL)
		return ENOMEM;
	*out = p;
	return 0;
}

void *
valloc(size_t n)
{
	return memalign(4096, n);
}

void *
pvalloc(size_t n)
{
	return memalign(4096, (n + 4095) & ~(size_t)4095);
}

size_t
malloc_usable_size(void *p)
{
	return p != NULL ? size_of(p) : 0;
}
