/*
 * Sites, live samples and threads in mmap'd, growable, bounded tables
 * (tables.h).
 * Open addressing with linear probing; the live table deletes by backward
 * shift, so it never accumulates tombstones however many samples are freed.
 */
#include <string.h>

#include "mem.h"
#include "prim.h"
#include "tables.h"

#define SITE_INDEX_MIN 1024
#define SITES_MIN      512
#define FRAMES_MIN     (SITES_MIN * 16)
#define LIVE_MIN       4096
/* A growth of at most this much needs no look at the memory available. */
#define SMALL_GROWTH   ((size_t)64 << 20)

uint8_t ht_live_filter[1u << HT_FILTER_BITS];

static uint32_t *site_index; /* site number + 1, 0 = empty */
static size_t site_index_cap;
struct ht_tables_hot ht_tab;
static size_t sites_cap;
static size_t frames_cap, nframes_used;

static struct ht_live *live;
static size_t live_cap, nlive;

/* Lines of tags, two a tag (malloc, arena; ht_tab.lines): LINES_MIN mapped
 * with the other tables (so a session's memory at its start does not depend
 * on whether a sample came yet), grown to the highest tag sampled. */
#define LINES_MIN 128
#define LINES_MAX ((size_t)HT_TAGS_MAX * 2)

static int ready, noted;
static size_t bound_live = HT_TABLES_DEFAULT_BOUND;
static size_t bound_sites = HT_TABLES_DEFAULT_BOUND;

size_t
ht_tables_bound(size_t n)
{
	if (n == 0)
		n = HT_TABLES_DEFAULT_BOUND;
	if (n > HT_TABLES_MAX_BOUND)
		n = HT_TABLES_MAX_BOUND;
	bound_live = n;
	bound_sites = n < HT_TABLES_SITES_LIMIT ? n : HT_TABLES_SITES_LIMIT;
	return n;
}

/*
 * May a table take bytes more?  Memory permitting: never more than half of
 * what the system (or the cgroup) has available, so that the agent cannot
 * be what runs the process out of memory; the kernel would let a mapping
 * far beyond that succeed and the process be killed when its pages are
 * touched.  Unknown availability leaves the decision to mmap.
 */
static int
room_for(size_t bytes)
{
	uint64_t avail;

	if (bytes <= SMALL_GROWTH)
		return 1;
	avail = ht_prim_mem_available();
	return avail == 0 || bytes <= avail / 2;
}

void
ht_tables_release(void)
{
	ht_mem_unmap(site_index, site_index_cap * sizeof(*site_index));
	ht_mem_unmap(ht_tab.sites, sites_cap * sizeof(*ht_tab.sites));
	ht_mem_unmap(ht_tab.frames, frames_cap * sizeof(*ht_tab.frames));
	ht_mem_unmap(live, live_cap * sizeof(*live));
	ht_mem_unmap(ht_tab.threads, HT_MAX_THREADS * sizeof(*ht_tab.threads));
	ht_mem_unmap(ht_tab.lines, ht_tab.lines_cap * sizeof(*ht_tab.lines));
	ht_tab.lines = NULL;
	ht_tab.lines_cap = 0;
	site_index = NULL;
	ht_tab.sites = NULL;
	ht_tab.frames = NULL;
	live = NULL;
	ht_tab.threads = NULL;
	site_index_cap = sites_cap = frames_cap = live_cap = 0;
	ht_tab.nsites = nframes_used = nlive = ht_tab.nthreads = 0;
	memset(ht_live_filter, 0, sizeof(ht_live_filter));
	ready = 0;
}

int
ht_tables_init(void)
{
	if (ready)
		return 0;
	site_index = ht_mem_map(SITE_INDEX_MIN * sizeof(*site_index));
	ht_tab.sites = ht_mem_map(SITES_MIN * sizeof(*ht_tab.sites));
	ht_tab.frames = ht_mem_map(FRAMES_MIN * sizeof(*ht_tab.frames));
	live = ht_mem_map(LIVE_MIN * sizeof(*live));
	ht_tab.threads = ht_mem_map(HT_MAX_THREADS * sizeof(*ht_tab.threads));
	ht_tab.lines = ht_mem_map(LINES_MIN * sizeof(*ht_tab.lines));
	ht_tab.lines_cap = LINES_MIN;
	site_index_cap = SITE_INDEX_MIN;
	sites_cap = SITES_MIN;
	frames_cap = FRAMES_MIN;
	live_cap = LIVE_MIN;
	if (site_index == NULL || ht_tab.sites == NULL ||
	    ht_tab.frames == NULL || live == NULL || ht_tab.threads == NULL ||
	    ht_tab.lines == NULL) {
		ht_tables_release();
		return -1;
	}
	if (!noted)
		ht_mem_note_static(sizeof(ht_live_filter));
	noted = 1;
	ready = 1;
	return 0;
}

int
ht_tables_reset(void)
{
	/* Unmapped, not written over: faster than clearing what a session
	 * grew, it gives a large table back rather than keep it for a session
	 * that may never need it, and a fork's child that starts its own
	 * session copies none of its parent's pages. */
	ht_tables_release();
	return ht_tables_init();
}

int
ht_tables_ready(void)
{
	return ready;
}

static uint64_t
hash_frames(const uintptr_t *f, uint32_t n, uint32_t tag, uint32_t kind)
{
	uint64_t h = 0xcbf29ce484222325ull ^ n ^
	    (((uint64_t)tag << 1 | kind) * 0x9e3779b97f4a7c15ull);
	uint32_t i;

	for (i = 0; i < n; i++) {
		h ^= f[i];
		h *= 0x100000001b3ull;
		h ^= h >> 29;
	}
	return h | 1;
}

static int
site_index_grow(void)
{
	size_t ncap = site_index_cap * 2, i, j;
	uint32_t *n;

	if (!room_for(ncap * sizeof(*n)) ||
	    (n = ht_mem_map(ncap * sizeof(*n))) == NULL)
		return HT_TABLES_NOMEM;
	for (i = 0; i < ht_tab.nsites; i++) {
		j = ht_tab.sites[i].hash & (ncap - 1);
		while (n[j] != 0)
			j = (j + 1) & (ncap - 1);
		n[j] = (uint32_t)i + 1;
	}
	ht_mem_unmap(site_index, site_index_cap * sizeof(*site_index));
	site_index = n;
	site_index_cap = ncap;
	return 0;
}

static int
grow(void **p, size_t *cap, size_t elem, size_t need, size_t max)
{
	size_t ncap = *cap;
	void *q;

	if (need <= *cap)
		return 0;
	if (need > max)
		return HT_TABLES_FULL;
	while (ncap < need)
		ncap *= 2;
	if (ncap > max)
		ncap = max;
	if (!room_for((ncap - *cap) * elem) ||
	    (q = ht_mem_remap(*p, *cap * elem, ncap * elem)) == NULL)
		return HT_TABLES_NOMEM;
	*p = q;
	*cap = ncap;
	return 0;
}

int64_t
ht_sites_intern(const uintptr_t *f, uint32_t n)
{
	return ht_sites_intern_tag(f, n, 0, 0);
}

int64_t
ht_sites_intern_tag(const uintptr_t *f, uint32_t n, uint32_t tag, uint32_t kind)
{
	uint64_t h = hash_frames(f, n, tag, kind);
	size_t j = h & (site_index_cap - 1);
	struct ht_site *s;
	int r;

	if (!ready)
		return HT_TABLES_NOMEM;
	while (site_index[j] != 0) {
		s = &ht_tab.sites[site_index[j] - 1];
		if (s->hash == h && s->nframes == n && s->tag == tag &&
		    s->kind == kind &&
		    memcmp(ht_sites_frames(s), f, n * sizeof(*f)) == 0)
			return site_index[j] - 1;
		j = (j + 1) & (site_index_cap - 1);
	}
	if (ht_tab.nsites >= bound_sites)
		return HT_TABLES_FULL;
	if ((r = grow((void **)&ht_tab.sites, &sites_cap, sizeof(*ht_tab.sites),
		 ht_tab.nsites + 1, bound_sites)) != 0 ||
	    (r = grow((void **)&ht_tab.frames, &frames_cap,
		 sizeof(*ht_tab.frames), nframes_used + n,
		 bound_sites * HT_MAX_FRAMES)) != 0)
		return r;
	if ((ht_tab.nsites + 1) * 2 > site_index_cap) {
		if ((r = site_index_grow()) != 0)
			return r;
		j = h & (site_index_cap - 1);
		while (site_index[j] != 0)
			j = (j + 1) & (site_index_cap - 1);
	}
	s = &ht_tab.sites[ht_tab.nsites];
	memset(s, 0, sizeof(*s));
	s->hash = h;
	s->nframes = n;
	s->frames_off = (uint32_t)nframes_used;
	s->tag = tag;
	s->kind = kind;
	memcpy(&ht_tab.frames[nframes_used], f, n * sizeof(*f));
	nframes_used += n;
	site_index[j] = (uint32_t)++ht_tab.nsites;
	return (int64_t)ht_tab.nsites - 1;
}

size_t
ht_sites_count(void)
{
	return ht_tab.nsites;
}

static size_t
live_slot(uintptr_t ptr, size_t cap)
{
	return (size_t)(((uint64_t)ptr * 0x9e3779b97f4a7c15ull) >> 17) &
	    (cap - 1);
}

static void
filter_add(uintptr_t ptr)
{
	uint8_t *c = &ht_live_filter[ht_live_filter_index(ptr)];

	/* A saturated counter stays saturated until the next reset: it can
	 * no longer tell how many pointers share it. */
	if (*c != 255)
		__atomic_store_n(c, *c + 1, __ATOMIC_RELAXED);
}

static void
filter_remove(uintptr_t ptr)
{
	uint8_t *c = &ht_live_filter[ht_live_filter_index(ptr)];

	if (*c != 255 && *c != 0)
		__atomic_store_n(c, *c - 1, __ATOMIC_RELAXED);
}

/*
 * The live table is kept at most 3/4 full (linear probing stays short
 * there: about 8 probes for a miss), and doubled past that.  When it cannot
 * grow (no memory) it takes entries up to 7/8 full before it refuses them.
 */
static int
live_grow(void)
{
	size_t ncap = live_cap * 2, i, j;
	struct ht_live *n;

	if (!room_for(ncap * sizeof(*n)) ||
	    (n = ht_mem_map(ncap * sizeof(*n))) == NULL)
		return HT_TABLES_NOMEM;
	for (i = 0; i < live_cap; i++) {
		if (live[i].ptr == 0)
			continue;
		j = live_slot(live[i].ptr, ncap);
		while (n[j].ptr != 0)
			j = (j + 1) & (ncap - 1);
		n[j] = live[i];
	}
	ht_mem_unmap(live, live_cap * sizeof(*live));
	live = n;
	live_cap = ncap;
	return 0;
}

int
ht_live_insert(const struct ht_live *e, struct ht_live *old)
{
	size_t j;
	int why = 0;

	if (!ready)
		return HT_TABLES_NOMEM;
	/* bound_live entries fit in a table at most 3/4 full, so growth
	 * below the bound never goes past that table. */
	if (nlive >= bound_live)
		why = HT_TABLES_FULL;
	else if ((nlive + 1) * 4 > live_cap * 3 && (why = live_grow()) != 0 &&
	    (nlive + 1) * 8 <= live_cap * 7)
		why = 0;
	/* A full table still takes the replacement of an entry. */
	j = live_slot(e->ptr, live_cap);
	while (live[j].ptr != 0) {
		if (live[j].ptr == e->ptr) {
			*old = live[j];
			live[j] = *e;
			return 1;
		}
		j = (j + 1) & (live_cap - 1);
	}
	if (why != 0)
		return why;
	live[j] = *e;
	nlive++;
	filter_add(e->ptr);
	return 0;
}

int
ht_live_room(uintptr_t ptr)
{
	size_t j;

	if (!ready)
		return HT_TABLES_NOMEM;
	if (nlive < bound_live)
		return 0;
	for (j = live_slot(ptr, live_cap); live[j].ptr != 0;
	     j = (j + 1) & (live_cap - 1))
		if (live[j].ptr == ptr)
			return 0;
	return HT_TABLES_FULL;
}

int
ht_live_remove(uintptr_t ptr, struct ht_live *out)
{
	size_t i, j, k;

	if (!ready)
		return 0;
	i = live_slot(ptr, live_cap);
	while (live[i].ptr != ptr) {
		if (live[i].ptr == 0)
			return 0;
		i = (i + 1) & (live_cap - 1);
	}
	*out = live[i];
	/* Backward-shift deletion: move later members of the probe run
	 * into the hole when their home slot does not lie in (i, j]. */
	j = i;
	for (;;) {
		j = (j + 1) & (live_cap - 1);
		if (live[j].ptr == 0)
			break;
		k = live_slot(live[j].ptr, live_cap);
		if (i <= j ? (i < k && k <= j) : (i < k || k <= j))
			continue;
		live[i] = live[j];
		i = j;
	}
	live[i].ptr = 0;
	nlive--;
	filter_remove(ptr);
	return 1;
}

size_t
ht_live_count(void)
{
	return nlive;
}

struct ht_live *
ht_live_find(uintptr_t ptr)
{
	size_t i;

	if (!ready)
		return NULL;
	for (i = live_slot(ptr, live_cap); live[i].ptr != 0;
	     i = (i + 1) & (live_cap - 1))
		if (live[i].ptr == ptr)
			return &live[i];
	return NULL;
}

struct ht_tagline *
ht_taglines_grow(uint32_t tag, uint32_t kind)
{
	size_t i = (size_t)tag * 2 + (kind != 0), ncap;
	struct ht_tagline *n;

	if (!ready)
		return NULL;
	if (i < ht_tab.lines_cap)
		return &ht_tab.lines[i];
	if (i >= LINES_MAX)
		return NULL;
	for (ncap = ht_tab.lines_cap != 0 ? ht_tab.lines_cap : LINES_MIN;
	     ncap <= i;)
		ncap *= 2;
	n = ht_tab.lines == NULL ?
	    ht_mem_map(ncap * sizeof(*n)) :
	    ht_mem_remap(ht_tab.lines, ht_tab.lines_cap * sizeof(*n),
		ncap * sizeof(*n));
	if (n == NULL)
		return NULL;
	ht_tab.lines = n;
	ht_tab.lines_cap = ncap;
	return &ht_tab.lines[i];
}

size_t
ht_taglines_count(void)
{
	return ht_tab.lines_cap / 2;
}

int64_t
ht_threads_add(uint32_t tid, const char *name)
{
	size_t i;

	for (i = ht_tab.nthreads; i > 0; i--)
		if (ht_tab.threads[i - 1].tid == tid)
			return (int64_t)i - 1;
	if (!ready || ht_tab.nthreads >= HT_MAX_THREADS)
		return -1;
	memset(&ht_tab.threads[ht_tab.nthreads], 0,
	    sizeof(ht_tab.threads[ht_tab.nthreads]));
	ht_tab.threads[ht_tab.nthreads].tid = tid;
	strncpy(ht_tab.threads[ht_tab.nthreads].name, name,
	    sizeof(ht_tab.threads[0].name) - 1);
	return (int64_t)ht_tab.nthreads++;
}

size_t
ht_threads_count(void)
{
	return ht_tab.nthreads;
}
