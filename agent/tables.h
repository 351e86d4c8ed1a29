/*
 * The agent's tables: call sites (a stack and its statistics), live samples
 * (sampled pointers not yet freed, so a free subtracts exactly what its sample
 * added) and threads.  All memory comes from ht_mem_map; every table grows up
 * to a fixed bound, and a caller that finds a table full counts a dropped
 * sample instead of failing.
 *
 * Everything here is called with ht_lock_global held, except ht_live_maybe(),
 * the lock-free negative check on the free path: a counting filter indexed by
 * a hash of the pointer.  A zero counter proves the pointer is not sampled;
 * frees of unsampled pointers (nearly all) stop there.  The filter is only
 * written under the lock; a racing reader cannot miss a pointer it could
 * legally free, because the pointer's insert happened before malloc returned
 * it.
 */
#ifndef HT_TABLES_H
#define HT_TABLES_H

#include <stddef.h>
#include <stdint.h>

#define HT_MAX_FRAMES  64
#define HT_MAX_SITES   (1u << 20)
#define HT_MAX_LIVE    (1u << 22)
#define HT_MAX_THREADS 4096
#define HT_FILTER_BITS 16

struct ht_stats {
	double inuse_bytes;
	double inuse_objects;
	double inuse_var;
	double alloc_bytes;
	double alloc_objects;
	double alloc_var;
	uint64_t samples;
	uint64_t live_samples;
};

struct ht_site {
	uint64_t hash;
	uint32_t nframes;
	uint32_t frames_off; /* index into the frame pool */
	struct ht_stats st;
	/* This site's in-use at the last global peak: valid when peak_gen
	 * equals the global peak generation, else the site has not changed
	 * since the peak and st.inuse_* is its value then (DESIGN.md §3). */
	uint64_t peak_gen;
	double peak_bytes;
	double peak_objects;
};

struct ht_live {
	uintptr_t ptr;
	uint32_t site;
	uint32_t thread;
	double bytes;
	double objects;
	double var;
};

struct ht_thread {
	uint32_t tid;
	char name[16];
	struct ht_stats st;
};

/* Map the initial tables.  Returns 0, or -1 if memory could not be mapped.
 * Idempotent. */
int ht_tables_init(void);
/* Lower the bounds (for tests; 0 keeps a bound).  Before ht_tables_init. */
void ht_tables_limit(size_t max_sites, size_t max_live);
/* Empty every table (a new session); keeps the memory. */
void ht_tables_reset(void);

/* The site for this stack, added if new.  Returns its index, or -1 when the
 * table or the frame pool is full. */
int64_t ht_sites_intern(const uintptr_t *frames, uint32_t n);
size_t ht_sites_count(void);
struct ht_site *ht_sites_get(size_t i);
const uintptr_t *ht_sites_frames(const struct ht_site *);

/* Insert e.  Returns 0 when inserted, 1 when an entry for e->ptr existed (its
 * block must have been freed unseen, e.g. by an unhooked caller: the old entry
 * is copied to *old and replaced), or -1 when the table is full. */
int ht_live_insert(const struct ht_live *e, struct ht_live *old);
/* Remove the entry for ptr into *out.  Returns 1 if found, else 0. */
int ht_live_remove(uintptr_t ptr, struct ht_live *out);
size_t ht_live_count(void);

/* Static, not mapped: the free fast path indexes it with no pointer to load
 * or test.  Its size is counted in the agent's overhead. */
extern uint8_t ht_live_filter[1u << HT_FILTER_BITS];

static inline size_t
ht_live_filter_index(uintptr_t ptr)
{
	return (size_t)(((uint64_t)(ptr >> 4) * 0x9e3779b97f4a7c15ull) >>
	    (64 - HT_FILTER_BITS));
}

/* Lock-free: 0 if ptr is certainly not a live sample. */
static inline int
ht_live_maybe(uintptr_t ptr)
{
	return __atomic_load_n(&ht_live_filter[ht_live_filter_index(ptr)],
		   __ATOMIC_RELAXED) != 0;
}

/* The thread record for tid, added if new (name is read by the caller).
 * Returns its index, or -1 when full. */
int64_t ht_threads_add(uint32_t tid, const char *name);
size_t ht_threads_count(void);
struct ht_thread *ht_threads_get(size_t i);

#endif
