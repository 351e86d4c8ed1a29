/*
 * The recorder's tables (recmap.h): live blocks by address, and call
 * sites.
 */
#include <errno.h>
#include <stddef.h>
#include <stdint.h>

#include "lock.h"
#include "mem.h"
#include "recmap.h"

#define BUCKET_BITS 20 /* 8 MiB of heads, touched as used */
#define BUCKETS	    (1u << BUCKET_BITS)
#define STRIPES	    1024
#define CHUNK_NODES 16384 /* 384 KiB a chunk */
#define MAX_CHUNKS  8192  /* 134M live blocks */
#define REFILL	    64	  /* nodes a stripe takes from a chunk at once */
#define SITE_BITS   16
#define SITES	    (1u << SITE_BITS)
#define SITE_PROBES 64

struct node {
	uintptr_t addr;
	uint64_t seq;
	struct node *next;
};

/* A stripe: its lock, which guards its buckets (those whose index is the
 * stripe's modulo STRIPES) and its own list of free nodes.  Padded to a
 * cache line: stripes are taken by different threads at once. */
struct stripe {
	struct ht_lock lock;
	struct node *free;
	char pad[64 - sizeof(struct ht_lock) - sizeof(struct node *)];
};

static struct node **heads;
static struct stripe *stripes;
static struct node *chunks[MAX_CHUNKS];
static unsigned nchunks, chunk_used;
static struct ht_lock chunk_lock;
static uint64_t *site_pc;    /* SITES slots: a return address, or 0 */
static uint32_t *site_order; /* slot + 1, in the order of the claims */
static uint32_t nsites;

static size_t
heads_bytes(void)
{
	return (size_t)BUCKETS * sizeof(struct node *);
}

int
ht_recmap_init(void)
{
	heads = ht_mem_map(heads_bytes());
	stripes = ht_mem_map(STRIPES * sizeof(struct stripe));
	site_pc = ht_mem_map(SITES * sizeof(uint64_t));
	site_order = ht_mem_map(SITES * sizeof(uint32_t));
	nchunks = chunk_used = 0;
	nsites = 0;
	if (heads == NULL || stripes == NULL || site_pc == NULL ||
	    site_order == NULL) {
		ht_recmap_fini();
		errno = ENOMEM;
		return -1;
	}
	return 0;
}

void
ht_recmap_fini(void)
{
	unsigned i;

	if (heads != NULL)
		ht_mem_unmap(heads, heads_bytes());
	if (stripes != NULL)
		ht_mem_unmap(stripes, STRIPES * sizeof(struct stripe));
	if (site_pc != NULL)
		ht_mem_unmap(site_pc, SITES * sizeof(uint64_t));
	if (site_order != NULL)
		ht_mem_unmap(site_order, SITES * sizeof(uint32_t));
	for (i = 0; i < nchunks; i++)
		ht_mem_unmap(chunks[i], CHUNK_NODES * sizeof(struct node));
	heads = NULL;
	stripes = NULL;
	site_pc = NULL;
	site_order = NULL;
	nchunks = chunk_used = 0;
}

static uint32_t
bucket_of(uintptr_t addr)
{
	return (uint32_t)(((uint64_t)addr >> 4) * 0x9e3779b97f4a7c15ull >>
	    (64 - BUCKET_BITS));
}

/* With s's lock held: REFILL nodes more on s's free list, from the last
 * chunk or a new one.  0, or -1 when no chunk could be mapped. */
static int
refill(struct stripe *s)
{
	struct node *c;
	unsigned i, n;

	ht_lock_acquire(&chunk_lock);
	if (nchunks == 0 || chunk_used + REFILL > CHUNK_NODES) {
		if (nchunks == MAX_CHUNKS ||
		    (c = ht_mem_map(CHUNK_NODES * sizeof(struct node))) ==
			NULL) {
			ht_lock_release(&chunk_lock);
			return -1;
		}
		chunks[nchunks] = c;
		__atomic_store_n(&nchunks, nchunks + 1, __ATOMIC_RELAXED);
		chunk_used = 0;
	}
	c = chunks[nchunks - 1] + chunk_used;
	n = REFILL;
	chunk_used += n;
	ht_lock_release(&chunk_lock);
	for (i = 0; i < n; i++) {
		c[i].next = s->free;
		s->free = &c[i];
	}
	return 0;
}

int
ht_recmap_put(uintptr_t addr, uint64_t seq)
{
	uint32_t b = bucket_of(addr);
	struct stripe *s = &stripes[b % STRIPES];
	struct node *n;

	ht_lock_acquire(&s->lock);
	if (s->free == NULL && refill(s) != 0) {
		ht_lock_release(&s->lock);
		return -1;
	}
	n = s->free;
	s->free = n->next;
	n->addr = addr;
	n->seq = seq;
	n->next = heads[b];
	heads[b] = n;
	ht_lock_release(&s->lock);
	return 0;
}

uint64_t
ht_recmap_take(uintptr_t addr)
{
	uint32_t b = bucket_of(addr);
	struct stripe *s = &stripes[b % STRIPES];
	struct node **pp, *n;
	uint64_t seq = 0;

	ht_lock_acquire(&s->lock);
	for (pp = &heads[b]; (n = *pp) != NULL; pp = &n->next) {
		if (n->addr != addr)
			continue;
		*pp = n->next;
		seq = n->seq;
		n->next = s->free;
		s->free = n;
		break;
	}
	ht_lock_release(&s->lock);
	return seq;
}

uint32_t
ht_recmap_site(uintptr_t pc)
{
	uint32_t h = (uint32_t)((uint64_t)pc * 0x9e3779b97f4a7c15ull >>
		     (64 - SITE_BITS)),
		 i, k, slot;
	uint64_t v;

	if (pc == 0)
		return 0;
	for (i = 0; i < SITE_PROBES; i++) {
		slot = (h + i) & (SITES - 1);
		v = __atomic_load_n(&site_pc[slot], __ATOMIC_ACQUIRE);
		if (v == pc)
			return slot + 1;
		if (v != 0)
			continue;
		if (__atomic_compare_exchange_n(&site_pc[slot], &v, pc, 0,
			__ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE)) {
			k = __atomic_fetch_add(&nsites, 1, __ATOMIC_RELAXED);
			__atomic_store_n(&site_order[k], slot + 1,
			    __ATOMIC_RELEASE);
			return slot + 1;
		}
		if (v == pc)
			return slot + 1;
	}
	return 0;
}

int
ht_recmap_site_at(uint32_t i, uint32_t *id, uint64_t *pc)
{
	uint32_t s;

	if (i >= __atomic_load_n(&nsites, __ATOMIC_RELAXED))
		return -1;
	if ((s = __atomic_load_n(&site_order[i], __ATOMIC_ACQUIRE)) == 0)
		return 0;
	*id = s;
	*pc = __atomic_load_n(&site_pc[s - 1], __ATOMIC_RELAXED);
	return 1;
}

uint64_t
ht_recmap_bytes(void)
{
	if (heads == NULL)
		return 0;
	return heads_bytes() + STRIPES * sizeof(struct stripe) +
	    SITES * (sizeof(uint64_t) + sizeof(uint32_t)) +
	    (uint64_t)__atomic_load_n(&nchunks, __ATOMIC_RELAXED) *
	    CHUNK_NODES * sizeof(struct node);
}

size_t
ht_recmap_entry_bytes(void)
{
	return sizeof(struct node);
}
