/*
 * The replay's plan (replay.h): each thread's steps, and the table of
 * blocks that links a free to the allocation of its block, wherever that
 * was made.
 *
 * The trace is checked for what would make the replay unsafe: within a
 * thread the sequence numbers must grow, and a step may only wait for a
 * block made earlier in the sequence and not taken already; a free that
 * breaks that (the trace lost the block's allocation, or the block was
 * freed twice) is not played but counted, so that the replay can neither
 * deadlock nor free a pointer twice.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "replay.h"

struct ev_ref {
	const struct ht_trace_event *e;
	uint32_t thread;
	uint32_t index; /* in its thread */
};

static int
cmp_ref(const void *a, const void *b)
{
	uint64_t x = ((const struct ev_ref *)a)->e->seq;
	uint64_t y = ((const struct ev_ref *)b)->e->seq;

	return x < y ? -1 : x > y;
}

static size_t
find(const struct ev_ref *v, size_t n, uint64_t seq)
{
	size_t lo = 0, hi = n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (v[mid].e->seq < seq)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < n && v[lo].e->seq == seq ? lo : SIZE_MAX;
}

static int
is_named(const char *fn, const char *name)
{
	return fn != NULL && strcmp(fn, name) == 0;
}

static uint8_t
how_of(const struct ht_trace *t, const struct ht_trace_event *e)
{
	const char *fn = ht_trace_func_name(t, e->fn);

	switch (e->op) {
	case HT_TROP_ALIGNED:
		if (is_named(fn, "memalign"))
			return RP_MEMALIGN;
		if (is_named(fn, "aligned_alloc"))
			return RP_ALIGNED_ALLOC;
		if (is_named(fn, "valloc"))
			return RP_VALLOC;
		if (is_named(fn, "pvalloc"))
			return RP_PVALLOC;
		return RP_POSIX_MEMALIGN;
	case HT_TROP_NEW:
	case HT_TROP_NEW_ARRAY:
		if (e->flags & HT_TREV_ALIGNED)
			return RP_ALIGNED_NEW;
		return e->flags & HT_TREV_NOTHROW ? RP_NOTHROW : RP_PLAIN;
	case HT_TROP_DELETE:
	case HT_TROP_DELETE_ARRAY:
		return e->flags & HT_TREV_NOTHROW ? RP_NOTHROW : RP_PLAIN;
	default:
		return RP_PLAIN;
	}
}

static int
fail(char *err, size_t errlen, const char *msg, unsigned long long a,
    unsigned long long b)
{
	snprintf(err, errlen, msg, a, b);
	return -1;
}

int
rp_plan_build(const struct ht_trace *t, struct rp_plan *p, char *err,
    size_t errlen)
{
	struct ev_ref *all;
	uint32_t *slot_of;
	uint8_t *taken;
	size_t n = 0, i, j;
	uint32_t nslots = 0;

	memset(p, 0, sizeof(*p));
	if (t->nevents >= RP_NONE)
		return fail(err, errlen, "%llu events: too many to replay",
		    (unsigned long long)t->nevents, 0);
	all = calloc(t->nevents + 1, sizeof(*all));
	slot_of = calloc(t->nevents + 1, sizeof(*slot_of));
	taken = calloc(t->nevents + 1, 1);
	p->threads = calloc(t->nthreads + 1, sizeof(*p->threads));
	if (all == NULL || slot_of == NULL || taken == NULL ||
	    p->threads == NULL)
		goto nomem;
	p->nthreads = t->nthreads;
	for (i = 0; i < t->nthreads; i++) {
		const struct ht_trace_thread *th = &t->threads[i];

		for (j = 0; j < th->nev; j++) {
			if (j > 0 && th->ev[j].seq <= th->ev[j - 1].seq) {
				fail(err, errlen,
				    "thread %llu: event %llu after a later "
				    "one; the trace is out of order",
				    th->idx, th->ev[j].seq);
				goto out;
			}
			all[n++] = (struct ev_ref){ &th->ev[j], (uint32_t)i,
				(uint32_t)j };
		}
		p->threads[i].idx = th->idx;
		p->threads[i].nsteps = th->nev;
		p->threads[i].steps =
		    calloc(th->nev + 1, sizeof(*p->threads[i].steps));
		if (p->threads[i].steps == NULL)
			goto nomem;
	}
	p->nevents = n;
	qsort(all, n, sizeof(*all), cmp_ref);
	for (i = 1; i < n; i++)
		if (all[i].e->seq == all[i - 1].e->seq) {
			fail(err, errlen,
			    "two events of sequence number %llu; the trace is "
			    "damaged",
			    all[i].e->seq, 0);
			goto out;
		}
	/* The slots, in sequence order. */
	for (i = 0; i < n; i++) {
		const struct ht_trace_event *e = all[i].e;

		slot_of[i] = RP_NONE;
		if (ht_trace_op_allocates(e->op) &&
		    !(e->flags & HT_TREV_FAILED))
			slot_of[i] = nslots++;
	}
	p->nslots = nslots;
	p->ptr = calloc(nslots + 1, sizeof(*p->ptr));
	p->size = calloc(nslots + 1, sizeof(*p->size));
	p->kind = calloc(nslots + 1, sizeof(*p->kind));
	p->delta = calloc(n + 1, sizeof(*p->delta));
	if (p->ptr == NULL || p->size == NULL || p->kind == NULL ||
	    p->delta == NULL)
		goto nomem;
	for (i = 0; i < n; i++) {
		const struct ht_trace_event *e = all[i].e;
		struct rp_step *s =
		    &p->threads[all[i].thread].steps[all[i].index];
		int frees = ht_trace_op_frees(e->op);
		size_t r;

		s->size = e->size;
		s->op = e->op;
		s->how = how_of(t, e);
		s->align = (e->flags & HT_TREV_ALIGNED) ? e->align_log2 : 0;
		s->order = (uint32_t)i;
		s->slot = slot_of[i];
		s->ref = RP_NONE;
		if (e->op == HT_TROP_NEW || e->op == HT_TROP_NEW_ARRAY ||
		    e->op >= HT_TROP_DELETE)
			p->need_cxx = 1;
		if (!frees && (e->flags & HT_TREV_FAILED)) {
			s->skip = RP_SKIP_FAILED;
			continue;
		}
		if (!frees && e->op != HT_TROP_REALLOC &&
		    e->op != HT_TROP_REALLOC_INPLACE)
			continue;
		if (e->flags & HT_TREV_PREEXISTING) {
			/* A realloc of such a block makes one from nothing. */
			if (frees)
				s->skip = RP_SKIP_PREEXISTING;
			continue;
		}
		if (e->flags & HT_TREV_NULL)
			continue; /* free(NULL) or realloc(NULL, n), as such */
		r = find(all, n, e->ref);
		/* Waiting is safe only for a block made before, in the
		 * sequence; taking it only once. */
		if (r == SIZE_MAX || r >= i || slot_of[r] == RP_NONE ||
		    taken[slot_of[r]]) {
			if (frees)
				s->skip = RP_SKIP_UNMATCHED;
			else
				p->skipped[RP_SKIP_UNMATCHED]++;
			continue;
		}
		taken[slot_of[r]] = 1;
		s->ref = slot_of[r];
	}
	for (i = 0; i < p->nthreads; i++)
		for (j = 0; j < p->threads[i].nsteps; j++)
			p->skipped[p->threads[i].steps[j].skip]++;
	free(all);
	free(slot_of);
	free(taken);
	return 0;
nomem:
	snprintf(err, errlen, "out of memory");
out:
	free(all);
	free(slot_of);
	free(taken);
	rp_plan_free(p);
	return -1;
}

void
rp_plan_free(struct rp_plan *p)
{
	size_t i;

	for (i = 0; p->threads != NULL && i < p->nthreads; i++)
		free(p->threads[i].steps);
	free(p->threads);
	free(p->ptr);
	free(p->size);
	free(p->kind);
	free(p->delta);
	memset(p, 0, sizeof(*p));
}
