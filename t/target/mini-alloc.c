/*
 * A second allocator for t/t0094: malloc, free, calloc and realloc over a
 * static arena, each block behind a header that names it.  Its free and
 * realloc refuse (and count) a block that is not theirs, so a call routed
 * to the wrong allocator shows, and glibc's free aborts on one of these.
 * Loaded only by deepbind-lib.so's dlopen with RTLD_DEEPBIND, so only that
 * library's calls bind to it; the program and libc keep glibc's.
 */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#define ARENA (8u << 20)
#define MAGIC 0x6d696e69616c6c63ull /* "miniallc" */

struct head {
	uint64_t magic;
	uint64_t size;
};

static _Alignas(16) unsigned char arena[ARENA];
static size_t used;
static unsigned long frees, foreign;

static struct head *
head_of(void *p)
{
	unsigned char *c = p;

	if (c < arena + sizeof(struct head) || c >= arena + ARENA)
		return NULL;
	return (struct head *)(c - sizeof(struct head));
}

void *
malloc(size_t n)
{
	size_t need = (sizeof(struct head) + n + 15) & ~(size_t)15;
	struct head *h;

	if (n > ARENA || need > ARENA - used)
		return NULL;
	h = (struct head *)(arena + used);
	used += need;
	h->magic = MAGIC;
	h->size = n;
	return h + 1;
}

void
free(void *p)
{
	struct head *h;

	if (p == NULL)
		return;
	h = head_of(p);
	if (h == NULL || h->magic != MAGIC) {
		foreign++;
		return;
	}
	h->magic = 0;
	frees++;
}

void *
calloc(size_t n, size_t m)
{
	void *p;

	if (m != 0 && n > SIZE_MAX / m)
		return NULL;
	p = malloc(n * m);
	if (p != NULL)
		memset(p, 0, n * m);
	return p;
}

void *
realloc(void *old, size_t n)
{
	struct head *h;
	void *p;

	if (old == NULL)
		return malloc(n);
	h = head_of(old);
	if (h == NULL || h->magic != MAGIC) {
		foreign++;
		return NULL;
	}
	p = malloc(n);
	if (p == NULL)
		return NULL;
	memcpy(p, old, h->size < n ? h->size : n);
	free(old);
	return p;
}

unsigned long
mini_frees(void)
{
	return frees;
}

unsigned long
mini_foreign(void)
{
	return foreign;
}
