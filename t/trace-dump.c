/*
 * A test helper for heaptool record's tests: read a trace with the reader
 * (src/trace-read.c) and print, one "key value" line each, what the tests
 * check:
 *
 *   complete 0|1, events, threads (THREAD chunks), max_thread_events,
 *   end_events, end_threads, lost, lost_why, waits, modules, sites, funcs
 *   dup_seqs       sequence numbers that occur twice
 *   unordered      threads whose events are not in increasing order
 *   bad_refs       frees and reallocations whose ref names no allocation
 *                  of the trace made before them and still live
 *   preexisting    events flagged HT_TREV_PREEXISTING
 *   unnamed_sites  events whose site id has no SITE chunk
 *   op NAME N      events per op, of the sites inside MODULE (every
 *                  event when no MODULE is given)
 *   peak N         the peak of live requested bytes of those events, in
 *                  sequence order
 *   tagged N       events with a tag (of the sites inside MODULE)
 *   tags N         TAG chunks
 *   aligned_new N  new events with an alignment (of those events)
 *
 * usage: trace-dump TRACE [MODULE]   (MODULE: a module's path as the
 * trace names it)
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "trace.h"

struct ev {
	const struct ht_trace_event *e;
	int mine;
};

static int
by_seq(const void *a, const void *b)
{
	uint64_t x = ((const struct ev *)a)->e->seq,
		 y = ((const struct ev *)b)->e->seq;

	return x < y ? -1 : x > y;
}

static int
in_module(const struct ht_trace *t, const char *mod, uint32_t site)
{
	const struct ht_trace_site *s;
	size_t i;

	if (mod == NULL)
		return 1;
	if ((s = ht_trace_site(t, site)) == NULL)
		return 0;
	for (i = 0; i < t->nmodules; i++)
		if (strcmp(t->modules[i].path, mod) == 0 &&
		    s->addr >= t->modules[i].start &&
		    s->addr < t->modules[i].end)
			return 1;
	return 0;
}

int
main(int argc, char **argv)
{
	uint64_t ops[HT_TROP_MAX + 1] = { 0 }, live = 0, peak = 0, maxseq = 0;
	uint64_t dup = 0, bad = 0, pre = 0, unnamed = 0, tagged = 0;
	uint64_t aligned_new = 0;
	size_t i, j, n = 0, unordered = 0, maxev = 0;
	const char *mod = argc > 2 ? argv[2] : NULL;
	struct ht_trace *t;
	uint64_t *size;
	uint8_t *state; /* per seq: 1 allocated and live, 2 freed */
	struct ev *all;
	char err[256];

	if (argc < 2) {
		fprintf(stderr, "usage: trace-dump TRACE [MODULE]\n");
		return 2;
	}
	if ((t = ht_trace_read_file(argv[1], err, sizeof(err))) == NULL) {
		fprintf(stderr, "trace-dump: %s: %s\n", argv[1], err);
		return 1;
	}
	all = calloc(t->nevents + 1, sizeof(*all));
	for (i = 0; i < t->nthreads; i++) {
		const struct ht_trace_thread *th = &t->threads[i];

		if (th->nev > maxev)
			maxev = th->nev;
		for (j = 0; j < th->nev; j++) {
			const struct ht_trace_event *e = &th->ev[j];

			if (j > 0 && e->seq <= th->ev[j - 1].seq) {
				unordered++;
				break;
			}
		}
		for (j = 0; j < th->nev; j++) {
			all[n].e = &th->ev[j];
			all[n].mine = in_module(t, mod, th->ev[j].site);
			if (th->ev[j].seq > maxseq)
				maxseq = th->ev[j].seq;
			n++;
		}
	}
	qsort(all, n, sizeof(*all), by_seq);
	size = calloc(maxseq + 1, sizeof(*size));
	state = calloc(maxseq + 1, 1);
	for (i = 0; i < n; i++) {
		const struct ht_trace_event *e = all[i].e;
		int ok = !(e->flags & HT_TREV_FAILED);

		if (i > 0 && e->seq == all[i - 1].e->seq)
			dup++;
		if (e->site != 0 && ht_trace_site(t, e->site) == NULL)
			unnamed++;
		if (e->tag != 0 && all[i].mine)
			tagged++;
		if (e->flags & HT_TREV_PREEXISTING)
			pre++;
		/* A reallocation frees its ref as a free does. */
		if ((ht_trace_op_frees(e->op) || e->op == HT_TROP_REALLOC ||
			e->op == HT_TROP_REALLOC_INPLACE) &&
		    !(e->flags & HT_TREV_NULL) &&
		    !(e->flags & HT_TREV_PREEXISTING)) {
			if (e->ref == 0 || e->ref >= e->seq ||
			    state[e->ref] != 1)
				bad++;
			else if (ok) {
				state[e->ref] = 2;
				if (all[i].mine)
					live -= size[e->ref];
			}
		}
		if (ht_trace_op_allocates(e->op) && ok) {
			state[e->seq] = 1;
			size[e->seq] = e->size;
			if (all[i].mine)
				live += e->size;
		}
		if (all[i].mine && e->op <= HT_TROP_MAX)
			ops[e->op]++;
		if (all[i].mine && e->op == HT_TROP_NEW &&
		    (e->flags & HT_TREV_ALIGNED))
			aligned_new++;
		if (live > peak)
			peak = live;
	}
	printf("complete %d\n", t->complete);
	printf("events %" PRIu64 "\n", t->nevents);
	printf("threads %zu\n", t->nthreads);
	printf("max_thread_events %zu\n", maxev);
	printf("end_events %" PRIu64 "\n", t->end.events);
	printf("end_threads %" PRIu32 "\n", t->end.threads);
	printf("lost %" PRIu64 "\n", t->end.lost);
	printf("lost_why %" PRIu32 "\n", t->end.lost_why);
	printf("waits %" PRIu64 "\n", t->end.waits);
	printf("modules %zu\n", t->nmodules);
	printf("sites %zu\n", t->nsites);
	printf("funcs %zu\n", t->nfuncs);
	printf("tags %zu\n", t->ntags);
	printf("dup_seqs %" PRIu64 "\n", dup);
	printf("unordered %zu\n", unordered);
	printf("bad_refs %" PRIu64 "\n", bad);
	printf("preexisting %" PRIu64 "\n", pre);
	printf("unnamed_sites %" PRIu64 "\n", unnamed);
	printf("tagged %" PRIu64 "\n", tagged);
	for (i = 1; i <= HT_TROP_MAX; i++)
		printf("op %s %" PRIu64 "\n", ht_trace_op_name((unsigned)i),
		    ops[i]);
	printf("peak %" PRIu64 "\n", peak);
	printf("aligned_new %" PRIu64 "\n", aligned_new);
	free(size);
	free(state);
	free(all);
	ht_trace_free(t);
	return 0;
}
