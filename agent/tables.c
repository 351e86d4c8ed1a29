/*
 * Sites, live samples and threads in mmap'd, growable, bounded tables.
 * Open addressing with linear probing; the live table deletes by backward
 * shift, so it never accumulates tombstones however many samples are freed.
 */
#include <string.h>

#include "mem.h"
#include "tables.h"

#define SITE_INDEX_MIN 1024
#define SITES_MIN      512
#define FRAMES_MIN     (SITES_MIN * 16)
#define FRAMES_MAX     ((size_t)HT_MAX_SITES * 24)
#define LIVE_MIN       4096

uint8_t ht_live_filter[1u << HT_FILTER_BITS];

static uint32_t *site_index; /* site number + 1, 0 = empty */
static size_t site_index_cap;
static struct ht_site *sites;
static size_t sites_cap, nsites;
static uintptr_t *frames;
static size_t frames_cap, nframes_used;

static struct ht_live *live;
static size_t live_cap, nlive;

static struct ht_thread *threads;
static size_t nthreads;

static int ready;
static size_t max_sites = HT_MAX_SITES;
static size_t max_live = HT_MAX_LIVE;

void
ht_tables_limit(size_t sites_bound, size_t live_bound)
{
	if (sites_bound != 0)
		max_sites = sites_bound;
	if (live_bound != 0)
		max_live = live_bound;
}

int
ht_tables_init(void)
{
	if (ready)
		return 0;
	site_index = ht_mem_map(SITE_INDEX_MIN * sizeof(*site_index));
	sites = ht_mem_map(SITES_MIN * sizeof(*sites));
	frames = ht_mem_map(FRAMES_MIN * sizeof(*frames));
	live = ht_mem_map(LIVE_MIN * sizeof(*live));
	threads = ht_mem_map(HT_MAX_THREADS * sizeof(*threads));
	if (site_index == NULL || sites == NULL || frames == NULL ||
	    live == NULL || threads == NULL)
		return -1;
	ht_mem_note_static(sizeof(ht_live_filter));
	site_index_cap = SITE_INDEX_MIN;
	sites_cap = SITES_MIN;
	frames_cap = FRAMES_MIN;
	live_cap = LIVE_MIN;
	ready = 1;
	return 0;
}

void
ht_tables_reset(void)
{
	if (!ready)
		return;
	/* Given back rather than written over: the tables of a long
	 * session may be large, and a fork's child that starts its own
	 * session would copy every page a memset touches. */
	ht_mem_zero(site_index, site_index_cap * sizeof(*site_index));
	nsites = 0;
	nframes_used = 0;
	ht_mem_zero(live, live_cap * sizeof(*live));
	nlive = 0;
	memset(ht_live_filter, 0, (size_t)1 << HT_FILTER_BITS);
	nthreads = 0;
}

static uint64_t
hash_frames(const uintptr_t *f, uint32_t n)
{
	uint64_t h = 0xcbf29ce484222325ull ^ n;
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
	uint32_t *n = ht_mem_map(ncap * sizeof(*n));

	if (n == NULL)
		return -1;
	for (i = 0; i < nsites; i++) {
		j = sites[i].hash & (ncap - 1);
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
		return -1;
	while (ncap < need)
		ncap *= 2;
	if (ncap > max)
		ncap = max;
	q = ht_mem_remap(*p, *cap * elem, ncap * elem);
	if (q == NULL)
		return -1;
	*p = q;
	*cap = ncap;
	return 0;
}

int64_t
ht_sites_intern(const uintptr_t *f, uint32_t n)
{
	uint64_t h = hash_frames(f, n);
	size_t j = h & (site_index_cap - 1);
	struct ht_site *s;

	while (site_index[j] != 0) {
		s = &sites[site_index[j] - 1];
		if (s->hash == h && s->nframes == n &&
		    memcmp(&frames[s->frames_off], f, n * sizeof(*f)) == 0)
			return site_index[j] - 1;
		j = (j + 1) & (site_index_cap - 1);
	}
	if (nsites >= max_sites)
		return -1;
	if (grow((void **)&sites, &sites_cap, sizeof(*sites), nsites + 1,
		max_sites) == -1 ||
	    grow((void **)&frames, &frames_cap, sizeof(*frames),
		nframes_used + n, FRAMES_MAX) == -1)
		return -1;
	if ((nsites + 1) * 2 > site_index_cap) {
		if (site_index_grow() == -1)
			return -1;
		j = h & (site_index_cap - 1);
		while (site_index[j] != 0)
			j = (j + 1) & (site_index_cap - 1);
	}
	s = &sites[nsites];
	memset(s, 0, sizeof(*s));
	s->hash = h;
	s->nframes = n;
	s->frames_off = (uint32_t)nframes_used;
	memcpy(&frames[nframes_used], f, n * sizeof(*f));
	nframes_used += n;
	site_index[j] = (uint32_t)++nsites;
	return (int64_t)nsites - 1;
}

size_t
ht_sites_count(void)
{
	return nsites;
}

struct ht_site *
ht_sites_get(size_t i)
{
	return i < nsites ? &sites[i] : NULL;
}

const uintptr_t *
ht_sites_frames(const struct ht_site *s)
{
	return &frames[s->frames_off];
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

static int
live_grow(void)
{
	size_t ncap = live_cap * 2, i, j;
	struct ht_live *n;

	if (ncap > max_live * 2)
		return -1;
	n = ht_mem_map(ncap * sizeof(*n));
	if (n == NULL)
		return -1;
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

	if (nlive >= max_live)
		return -1;
	if ((nlive + 1) * 2 > live_cap && live_grow() == -1 &&
	    nlive + 1 >= live_cap)
		return -1;
	j = live_slot(e->ptr, live_cap);
	while (live[j].ptr != 0) {
		if (live[j].ptr == e->ptr) {
			*old = live[j];
			live[j] = *e;
			return 1;
		}
		j = (j + 1) & (live_cap - 1);
	}
	live[j] = *e;
	nlive++;
	filter_add(e->ptr);
	return 0;
}

int
ht_live_remove(uintptr_t ptr, struct ht_live *out)
{
	size_t i, j, k;

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

int64_t
ht_threads_add(uint32_t tid, const char *name)
{
	size_t i;

	for (i = nthreads; i > 0; i--)
		if (threads[i - 1].tid == tid)
			return (int64_t)i - 1;
	if (nthreads >= HT_MAX_THREADS)
		return -1;
	memset(&threads[nthreads], 0, sizeof(threads[nthreads]));
	threads[nthreads].tid = tid;
	strncpy(threads[nthreads].name, name, sizeof(threads[0].name) - 1);
	return (int64_t)nthreads++;
}

size_t
ht_threads_count(void)
{
	return nthreads;
}

struct ht_thread *
ht_threads_get(size_t i)
{
	return i < nthreads ? &threads[i] : NULL;
}
