/*
 * The agent's tables: call sites (a stack and its statistics), live samples
 * (sampled pointers not yet freed, so a free subtracts exactly what its sample
 * added) and threads.  All memory comes from ht_mem_map.  The site and live
 * tables start small and grow to what the program needs, up to the session's
 * bound (ht_tables_bound) and as far as memory permits: a table never takes
 * more than half of what the system (or the process's cgroup) still has
 * available in one growth.  A caller that finds a table full counts a dropped
 * sample instead of failing, and learns why (HT_TABLES_FULL: the bound;
 * HT_TABLES_NOMEM: memory).
 *
 * Everything here is called with ht_lock_global held, except ht_live_maybe(),
 * the lock-free negative check on the free path: a counting filter indexed by
 * a hash of the pointer.  A zero counter proves the pointer is not sampled;
 * frees of unsampled pointers (nearly all) stop there.  The filter is only
 * written under the lock; a racing reader cannot miss a pointer it could
 * legally free, because the pointer's insert happened before malloc returned
 * it.  The filter is static, in the agent's own data, never a mapping: it
 * stays readable whatever happens to the tables, so a free hook still
 * running on another thread after a detach reads valid memory.
 *
 * ht_tables_release() gives every mapping back (detach).  That is safe
 * because no thread touches a table without ht_lock_global, and every path
 * that takes the lock to touch one first checks, under it, that a session
 * is running (sampler.c), which a released set never has: the next session
 * maps the tables again (ht_tables_init).  Growth needs nothing more: it
 * happens under the lock, and no pointer into a table is kept past it.
 */
#ifndef HT_TABLES_H
#define HT_TABLES_H

#include <stddef.h>
#include <stdint.h>

#define HT_MAX_FRAMES		64
#define HT_MAX_THREADS		4096
#define HT_FILTER_BITS		16
/* The bound on live samples (and on sites) a session gets by default, and
 * the most one may ask for.  Sites are bounded by the same number, but never
 * above HT_TABLES_SITES_LIMIT (a site's frames are found by a 32-bit offset
 * into a pool of up to HT_MAX_FRAMES each). */
#define HT_TABLES_DEFAULT_BOUND (1u << 25)
#define HT_TABLES_MAX_BOUND	(1u << 30)
#define HT_TABLES_SITES_LIMIT	(1u << 25)
/* The most tags a process may intern, "untagged" (0) included (tags.h). */
#define HT_TAGS_MAX		16384

_Static_assert(HT_MAX_THREADS < 65535, "a live sample's thread takes 16 bits");

/* Why a table refused an entry. */
#define HT_TABLES_FULL	(-1) /* it holds as many as its bound allows */
#define HT_TABLES_NOMEM (-2) /* it could not grow: no memory */

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
	/* Part of the site's identity (DESIGN.md section 8): the same stack
	 * under another tag or kind is another site.  Kind is 0 (malloc) or
	 * 1 (arena), as HEAPTOOL_MALLOC and HEAPTOOL_ARENA. */
	uint32_t tag;
	uint32_t kind;
	struct ht_stats st;
	/* This site's in-use at the last global peak: valid when peak_gen
	 * equals the global peak generation, else the site has not changed
	 * since the peak and st.inuse_* is its value then (DESIGN.md §3). */
	uint64_t peak_gen;
	double peak_bytes;
	double peak_objects;
	/* Short-lived allocations (heaptrack's "temporary"): the estimate
	 * of how many of the site's blocks were freed by the thread that
	 * made them with no other allocation of that thread in between,
	 * and the samples behind it (sampler.c says how that is told). */
	double temp_objects;
	uint64_t temp_samples;
};

/* A live sample keeps its size, not its weight: a session has one rate, so
 * the weight (sampling.h) is the same function of the size when the sample
 * is freed as when it was taken, and 24 bytes an entry instead of 40 is what
 * lets tens of millions of them fit.  Its size takes 48 bits (no block of
 * user space is larger) and its thread 16 (HT_MAX_THREADS), so that the
 * low 32 bits of its thread's countdown right after the sample (mark) fit
 * too: a free by the same thread that finds the countdown unchanged had
 * no allocation of that thread in between (sampler.c). */
struct ht_live {
	uintptr_t ptr;
	uint64_t size : 48;
	uint64_t thread : 16;
	uint32_t site;
	uint32_t mark;
};

/*
 * A tag's line of one kind (malloc or arena): the sum of its sites'
 * statistics, kept as they change, and its peak, the most bytes it held
 * in use at any moment of the session (with its objects at that moment),
 * raised when it is reached.  Emptied with the tables: a new session
 * starts every line at zero.
 */
struct ht_tagline {
	struct ht_stats st;
	double peak_bytes;
	double peak_objects;
	/* A snapshot's scratch (snapshot.c, under ht_lock_global): the
	 * rounded figures of the line's sites below a dump's threshold, to
	 * fold into one record of this tag and kind. */
	struct ht_tagfold {
		/* in use, allocated, samples, live, peak, temporary */
		uint64_t v[10];
		double inuse_var, alloc_var;
		uint32_t folded;
	} fold;
};

struct ht_thread {
	uint32_t tid;
	char name[16];
	struct ht_stats st;
};

/* Map the initial (small) tables.  Returns 0, or -1 if memory could not be
 * mapped.  Idempotent; maps them again after ht_tables_release. */
int ht_tables_init(void);
/* Empty every table (a new session): what they grew to is unmapped and
 * they start small again.  Returns 0, or -1 (as ht_tables_init). */
int ht_tables_reset(void);
/* Give every table's memory back; the filter is emptied.  Until the next
 * ht_tables_init the tables are empty and refuse entries (HT_TABLES_NOMEM). */
void ht_tables_release(void);
/* Whether the tables are mapped. */
int ht_tables_ready(void);

/* At most n live samples and n sites (0: HT_TABLES_DEFAULT_BOUND; capped
 * at HT_TABLES_MAX_BOUND, sites at HT_TABLES_SITES_LIMIT).  Returns the
 * bound in force. */
size_t ht_tables_bound(size_t n);

/* The site for this stack, added if new.  Returns its index, or
 * HT_TABLES_FULL or HT_TABLES_NOMEM when it is new and cannot be added.
 * ht_sites_intern is the untagged malloc site (tag 0, kind 0).  frames
 * must not point into the table's own pool (it may move). */
int64_t ht_sites_intern(const uintptr_t *frames, uint32_t n);
int64_t ht_sites_intern_tag(const uintptr_t *frames, uint32_t n, uint32_t tag,
    uint32_t kind);
size_t ht_sites_count(void);
/* ht_sites_get and ht_sites_frames are inline, below. */

/* Insert e.  Returns 0 when inserted, 1 when an entry for e->ptr existed (its
 * block must have been freed unseen, e.g. by an unhooked caller: the old entry
 * is copied to *old and replaced), or HT_TABLES_FULL or HT_TABLES_NOMEM. */
int ht_live_insert(const struct ht_live *e, struct ht_live *old);
/* Whether an insert of ptr can find room: 0 if the table is below its
 * bound or has an entry for ptr (to replace), else HT_TABLES_FULL or
 * HT_TABLES_NOMEM.  (An insert may still fail for want of memory.) */
int ht_live_room(uintptr_t ptr);
/* Remove the entry for ptr into *out.  Returns 1 if found, else 0. */
int ht_live_remove(uintptr_t ptr, struct ht_live *out);
size_t ht_live_count(void);
/* The entry for ptr, or NULL; valid until the table next changes. */
struct ht_live *ht_live_find(uintptr_t ptr);

/* ht_taglines_get is inline, below; ht_taglines_grow is its slow path:
 * the line of tag and kind, the table grown to hold it (NULL when it
 * cannot: no memory, or no tables). */
struct ht_tagline *ht_taglines_grow(uint32_t tag, uint32_t kind);
/* How many tags have lines (tags 0 to n - 1). */
size_t ht_taglines_count(void);

/* Static, not mapped: the free fast path indexes it with a pointer that is
 * never NULL (gate.h).  Its size is counted in the agent's overhead. */
extern uint8_t ht_live_filter[1u << HT_FILTER_BITS]
    __attribute__((visibility("hidden")));

/* Fibonacci hashing of the pointer's low 32 bits: a multiply by a 32-bit
 * constant is one instruction with no constant to load first (the free
 * path's), and blocks 4 GiB apart, which share an entry, are rare in one
 * heap (a shared entry only sends a free out of line to look). */
static inline size_t
ht_live_filter_index(uintptr_t ptr)
{
	return (size_t)((uint32_t)((uint32_t)ptr * 0x9e3779b1u) >>
	    (32 - HT_FILTER_BITS));
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

/*
 * The tables' bases and counts, for the accessors below: every sample and
 * every sampled block's free looks up a site, a thread and a tag line, and
 * a call into tables.c for each cost more than the lookup.  Written only
 * by tables.c, read (like everything here) with ht_lock_global held.
 * Released tables have counts of 0, so every lookup finds nothing.
 */
struct ht_tables_hot {
	struct ht_site *sites;
	size_t nsites;
	uintptr_t *frames; /* the sites' frame pool */
	struct ht_thread *threads;
	size_t nthreads;
	struct ht_tagline *lines; /* two a tag: malloc, arena */
	size_t lines_cap;
};

extern struct ht_tables_hot ht_tab __attribute__((visibility("hidden")));

/* Site i, or NULL past the end.  Valid until the next site is added. */
static inline struct ht_site *
ht_sites_get(size_t i)
{
	return i < ht_tab.nsites ? &ht_tab.sites[i] : NULL;
}

/* The frames of site s (s->nframes of them).  Valid as ht_sites_get. */
static inline const uintptr_t *
ht_sites_frames(const struct ht_site *s)
{
	return &ht_tab.frames[s->frames_off];
}

/* Thread record i, or NULL past the end. */
static inline struct ht_thread *
ht_threads_get(size_t i)
{
	return i < ht_tab.nthreads ? &ht_tab.threads[i] : NULL;
}

/* The line of tag and kind (kind 0 or 1).  With grow, the table is grown
 * to hold it (NULL when it cannot: no memory); without, NULL for a line
 * never grown to (it holds nothing).  Valid until the next grow. */
static inline struct ht_tagline *
ht_taglines_get(uint32_t tag, uint32_t kind, int grow)
{
	size_t i = (size_t)tag * 2 + (kind != 0);

	if (__builtin_expect(i < ht_tab.lines_cap, 1))
		return &ht_tab.lines[i];
	return grow ? ht_taglines_grow(tag, kind) : NULL;
}

#endif
