/*
 * The recorder's per-thread rings of events (recbuf.h).
 */
#include <errno.h>
#include <stddef.h>
#include <stdint.h>

#include "lock.h"
#include "mem.h"
#include "recbuf.h"

static struct ht_recbuf **rings; /* HT_RECBUF_MAX pointers */
static uint32_t nrings, cap;
static struct ht_lock lock; /* the free list and registration */
static struct ht_recbuf *free_list;
static uint32_t gen;

static size_t
ring_bytes(void)
{
	return sizeof(struct ht_recbuf) + (size_t)cap * HT_TRACE_EVENT_SIZE;
}

int
ht_recbuf_init(uint32_t n)
{
	cap = n;
	nrings = 0;
	free_list = NULL;
	rings = ht_mem_map(HT_RECBUF_MAX * sizeof(*rings));
	if (rings == NULL) {
		errno = ENOMEM;
		return -1;
	}
	return 0;
}

void
ht_recbuf_fini(void)
{
	uint32_t i;

	if (rings == NULL)
		return;
	for (i = 0; i < nrings; i++)
		if (rings[i] != NULL)
			ht_mem_unmap(rings[i], ring_bytes());
	ht_mem_unmap(rings, HT_RECBUF_MAX * sizeof(*rings));
	rings = NULL;
	nrings = 0;
	free_list = NULL;
}

uint32_t
ht_recbuf_cap(void)
{
	return cap;
}

uint32_t
ht_recbuf_count(void)
{
	return __atomic_load_n(&nrings, __ATOMIC_ACQUIRE);
}

uint64_t
ht_recbuf_bytes(void)
{
	if (rings == NULL)
		return 0;
	return HT_RECBUF_MAX * sizeof(*rings) +
	    (uint64_t)ht_recbuf_count() * ring_bytes();
}

struct ht_recbuf *
ht_recbuf_at(uint32_t i)
{
	return __atomic_load_n(&rings[i], __ATOMIC_ACQUIRE);
}

struct ht_recbuf *
ht_recbuf_take(uint32_t thread, uint32_t tid)
{
	struct ht_recbuf *b;
	uint32_t i;

	ht_lock_acquire(&lock);
	if ((b = free_list) != NULL)
		free_list = b->next_free;
	ht_lock_release(&lock);
	if (b == NULL) {
		/* Mapped outside the lock: a system call. */
		if ((b = ht_mem_map(ring_bytes())) == NULL)
			return NULL;
		b->ev = (uint8_t *)(b + 1);
		ht_lock_acquire(&lock);
		if (nrings == HT_RECBUF_MAX) {
			ht_lock_release(&lock);
			ht_mem_unmap(b, ring_bytes());
			return NULL;
		}
		i = nrings;
		__atomic_store_n(&nrings, i + 1, __ATOMIC_RELEASE);
		ht_lock_release(&lock);
		b->thread = thread;
		b->tid = tid;
		b->head = b->tail = 0;
		__atomic_store_n(&b->live, 1, __ATOMIC_RELEASE);
		/* The drain sees the ring once it is whole. */
		__atomic_store_n(&rings[i], b, __ATOMIC_RELEASE);
		return b;
	}
	b->thread = thread;
	b->tid = tid;
	b->head = b->tail = 0;
	__atomic_store_n(&b->live, 1, __ATOMIC_RELEASE);
	return b;
}

void
ht_recbuf_give(struct ht_recbuf *b)
{
	__atomic_store_n(&b->live, 0, __ATOMIC_RELEASE);
	ht_lock_acquire(&lock);
	b->next_free = free_list;
	free_list = b;
	ht_lock_release(&lock);
}

uint32_t *
ht_recbuf_gen(void)
{
	return &gen;
}
