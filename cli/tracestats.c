/*
 * trace-stats' figures (tracestats.h): one walk over the events in
 * sequence order, with the blocks' sizes found by the sequence number of
 * the event that made them.
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "tracestats.h"

/* An event in the walk, and what the walk keeps of the block it made. */
struct item {
	const struct ht_trace_event *e;
	uint32_t thread; /* index into s->threads */
	int live;
	uint64_t usable; /* the block's, when it made one */
	double p;	 /* its chance of being sampled at the rate */
};

static int
cmp_item(const void *a, const void *b)
{
	uint64_t x = ((const struct item *)a)->e->seq;
	uint64_t y = ((const struct item *)b)->e->seq;

	return x < y ? -1 : x > y;
}

static struct item *
find(struct item *v, size_t n, uint64_t seq)
{
	size_t lo = 0, hi = n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (v[mid].e->seq < seq)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < n && v[lo].e->seq == seq ? &v[lo] : NULL;
}

uint64_t
ht_tstats_class_min(unsigned k)
{
	return k == 0 ? 0 : (uint64_t)1 << (k - 1);
}

static unsigned
class_of(uint64_t size)
{
	unsigned k = 0;

	while (size != 0) {
		k++;
		size >>= 1;
	}
	return k;
}

struct site_sum {
	uint32_t site;
	double bytes; /* sum of (s + 1) */
};

static int
cmp_site(const void *a, const void *b)
{
	uint32_t x = ((const struct site_sum *)a)->site;
	uint32_t y = ((const struct site_sum *)b)->site;

	return x < y ? -1 : x > y;
}

/* The distinct sites of the allocations and their expected presence in
 * a table sampled at rate. */
static void
count_sites(struct site_sum *v, size_t n, double rate, struct ht_tstats *s)
{
	size_t i = 0, j;

	qsort(v, n, sizeof(*v), cmp_site);
	while (i < n) {
		double bytes = 0;

		for (j = i; j < n && v[j].site == v[i].site; j++)
			bytes += v[j].bytes;
		s->sites++;
		s->rate_sites += 1 - exp(-bytes / rate);
		i = j;
	}
}

static void
made(struct ht_tstats *s, struct item *it, struct ht_tstats_tag *tags,
    struct site_sum *sites, size_t *nsites, double rate, double *live_p)
{
	const struct ht_trace_event *e = it->e;
	unsigned k = class_of(e->size);

	s->allocs++;
	s->requested += e->size;
	if (e->usable_over == HT_TRACE_USABLE_UNKNOWN) {
		s->usable_unknown++;
		it->usable = e->size;
	} else {
		it->usable = e->size + e->usable_over;
	}
	s->usable += it->usable;
	s->op[e->op].bytes += e->size;
	s->cls[k].count++;
	s->cls[k].bytes += e->size;
	tags[e->tag].allocs++;
	tags[e->tag].bytes += e->size;
	s->threads[it->thread].allocs++;
	s->threads[it->thread].alloc_bytes += e->size;
	sites[(*nsites)++] = (struct site_sum){ e->site, (double)e->size + 1 };
	it->live = 1;
	it->p = 1 - exp(-((double)e->size + 1) / rate);
	s->live_blocks++;
	s->live_requested += e->size;
	s->live_usable += it->usable;
	*live_p += it->p;
}

/* The block of ref goes (a free, or a reallocation's old block): its
 * bytes leave the live totals; those of a free are the op's bytes. */
static void
gone(struct ht_tstats *s, struct item *all, size_t n,
    const struct ht_trace_event *e, double *live_p)
{
	struct item *b;

	if (e->flags & HT_TREV_PREEXISTING) {
		if (ht_trace_op_frees(e->op))
			s->preexisting_frees++;
		return;
	}
	/* free(NULL), or realloc(NULL, n), which has no old block. */
	if (e->flags & HT_TREV_NULL) {
		if (ht_trace_op_frees(e->op))
			s->null_frees++;
		return;
	}
	b = find(all, n, e->ref);
	if (b == NULL || !b->live || b->e->seq >= e->seq) {
		s->unmatched++;
		return;
	}
	b->live = 0;
	if (ht_trace_op_frees(e->op))
		s->op[e->op].bytes += b->e->size;
	s->live_blocks--;
	s->live_requested -= b->e->size;
	s->live_usable -= b->usable;
	*live_p -= b->p;
}

int
ht_tstats_compute(const struct ht_trace *t, uint64_t rate, struct ht_tstats *s)
{
	struct ht_tstats_tag *tags = NULL;
	struct site_sum *sites = NULL;
	struct item *all = NULL;
	size_t n = 0, i, j, nsites = 0;
	double live_p = 0;

	memset(s, 0, sizeof(*s));
	s->rate = rate;
	s->threads = calloc(t->nthreads + 1, sizeof(*s->threads));
	tags = calloc(UINT16_MAX + 1, sizeof(*tags));
	all = calloc(t->nevents + 1, sizeof(*all));
	sites = calloc(t->nevents + 1, sizeof(*sites));
	if (s->threads == NULL || tags == NULL || all == NULL || sites == NULL)
		goto nomem;
	s->nthreads = t->nthreads;
	for (i = 0; i < t->nthreads; i++) {
		const struct ht_trace_thread *th = &t->threads[i];

		s->threads[i].idx = th->idx;
		s->threads[i].tid = th->tid;
		s->threads[i].name = th->name;
		s->threads[i].events = th->nev;
		for (j = 0; j < th->nev; j++)
			all[n++] = (struct item){ .e = &th->ev[j],
				.thread = (uint32_t)i };
	}
	qsort(all, n, sizeof(*all), cmp_item);
	for (i = 0; i < n; i++) {
		struct item *it = &all[i];
		const struct ht_trace_event *e = it->e;

		s->events++;
		s->op[e->op].count++;
		if (ht_trace_op_frees(e->op)) {
			s->frees++;
			s->threads[it->thread].frees++;
			gone(s, all, n, e, &live_p);
		} else if (e->flags & HT_TREV_FAILED) {
			s->failed++;
			continue;
		} else {
			if (e->op == HT_TROP_REALLOC ||
			    e->op == HT_TROP_REALLOC_INPLACE)
				gone(s, all, n, e, &live_p);
			made(s, it, tags, sites, &nsites, (double)rate,
			    &live_p);
		}
		if (s->live_requested > s->peak_requested)
			s->peak_requested = s->live_requested;
		if (s->live_usable > s->peak_usable)
			s->peak_usable = s->live_usable;
		if (s->live_blocks > s->peak_blocks)
			s->peak_blocks = s->live_blocks;
		if (live_p > s->rate_samples)
			s->rate_samples = live_p;
	}
	count_sites(sites, nsites, (double)rate, s);
	s->rate1_bytes = s->peak_blocks * t->info.live_entry_bytes +
	    s->sites * t->info.site_entry_bytes;
	s->rate_bytes = s->rate_samples * t->info.live_entry_bytes +
	    s->rate_sites * t->info.site_entry_bytes;
	/* The tags with allocations, with their names. */
	for (i = 0; i <= UINT16_MAX; i++)
		if (tags[i].allocs > 0) {
			tags[s->ntags] = tags[i];
			tags[s->ntags].id = (uint32_t)i;
			tags[s->ntags].name =
			    i == 0 ? NULL : ht_trace_tag_name(t, (uint32_t)i);
			s->ntags++;
		}
	s->tags = tags;
	free(all);
	free(sites);
	return 0;
nomem:
	free(tags);
	free(all);
	free(sites);
	ht_tstats_free(s);
	errno = ENOMEM;
	return -1;
}

void
ht_tstats_free(struct ht_tstats *s)
{
	free(s->threads);
	free(s->tags);
	s->threads = NULL;
	s->tags = NULL;
}
