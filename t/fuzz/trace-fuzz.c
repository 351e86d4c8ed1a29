/*
 * libFuzzer harness for the trace reader (src/trace-read.c), which reads
 * files anyone may hand to trace-stats and replay.  Properties: nothing
 * crashes or reads outside the input; a decoded trace's threads hold
 * exactly its nevents events, every op is one the format has, every table
 * is sorted; and it re-encodes with the writer (src/trace-write.c) into a
 * trace that decodes to the same events, thread by thread, complete.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "crc32.h"
#include "trace.h"

int LLVMFuzzerTestOneInput(const uint8_t *, size_t);

/* Encode t again: every table, each thread's events in one chunk, END. */
static uint8_t *
encode(const struct ht_trace *t, size_t *len)
{
	size_t cap = 4096 + t->nevents * HT_TRACE_EVENT_SIZE, n = 0, i, k;
	struct ht_trace_end end;
	uint8_t *b;

	for (i = 0; i < t->nthreads; i++)
		cap += 64 + strlen(t->threads[i].name);
	for (i = 0; i < t->nfuncs; i++)
		cap += 32 + strlen(t->funcs[i].name);
	for (i = 0; i < t->ntags; i++)
		cap += 32 + strlen(t->tags[i].name);
	for (i = 0; i < t->nmodules; i++)
		cap += 64 + strlen(t->modules[i].path);
	cap += 32 * t->nsites + strlen(t->command);
	if ((b = malloc(cap)) == NULL)
		abort();
#define PUT(x)                                                                 \
	do {                                                                   \
		size_t r_ = (x);                                               \
		if (r_ == 0)                                                   \
			abort();                                               \
		n += r_;                                                       \
	} while (0)
	PUT(ht_tw_header(b, cap));
	PUT(ht_tw_info(b + n, cap - n, &t->info));
	for (i = 0; i < t->nfuncs; i++)
		PUT(ht_tw_func(b + n, cap - n, t->funcs[i].id,
		    t->funcs[i].name));
	for (i = 0; i < t->ntags; i++)
		PUT(ht_tw_tag(b + n, cap - n, t->tags[i].id, t->tags[i].name));
	for (i = 0; i < t->nmodules; i++)
		PUT(ht_tw_module(b + n, cap - n, t->modules[i].start,
		    t->modules[i].end, t->modules[i].offset,
		    t->modules[i].path));
	for (i = 0; i < t->nsites; i++)
		PUT(ht_tw_site(b + n, cap - n, t->sites[i].id,
		    t->sites[i].addr));
	for (i = 0; i < t->nthreads; i++) {
		const struct ht_trace_thread *th = &t->threads[i];

		PUT(ht_tw_thread(b + n, cap - n, th->idx, th->tid, th->name));
		PUT(ht_tw_events_head(b + n, cap - n, th->idx,
		    (uint32_t)th->nev));
		for (k = 0; k < th->nev; k++)
			PUT(ht_tw_event(b + n, cap - n, &th->ev[k]));
	}
	memset(&end, 0, sizeof(end));
	end.events = t->nevents;
	PUT(ht_tw_end(b + n, cap - n, &end, ht_crc32(0, b, n)));
#undef PUT
	*len = n;
	return b;
}

static int
same_event(const struct ht_trace_event *a, const struct ht_trace_event *b)
{
	return a->seq == b->seq && a->t_ns == b->t_ns && a->ref == b->ref &&
	    a->size == b->size && a->usable_over == b->usable_over &&
	    a->site == b->site && a->tag == b->tag && a->fn == b->fn &&
	    a->op == b->op && a->flags == b->flags &&
	    a->align_log2 == b->align_log2;
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char err[256];
	struct ht_trace *t, *u;
	uint64_t sum = 0;
	uint8_t *again;
	size_t i, k, len;

	t = ht_trace_decode(data, size, err, sizeof(err));
	if (t == NULL)
		return 0;
	for (i = 0; i < t->nthreads; i++) {
		if (i > 0 && t->threads[i - 1].idx >= t->threads[i].idx)
			abort();
		sum += t->threads[i].nev;
		for (k = 0; k < t->threads[i].nev; k++)
			if (t->threads[i].ev[k].op == 0 ||
			    t->threads[i].ev[k].op > HT_TROP_MAX)
				abort();
	}
	if (sum != t->nevents)
		abort();
	for (i = 1; i < t->nsites; i++)
		if (t->sites[i - 1].id > t->sites[i].id)
			abort();
	again = encode(t, &len);
	u = ht_trace_decode(again, len, err, sizeof(err));
	if (u == NULL || !u->complete || u->nthreads != t->nthreads ||
	    u->nevents != t->nevents)
		abort();
	for (i = 0; i < t->nthreads; i++)
		for (k = 0; k < t->threads[i].nev; k++)
			if (!same_event(&t->threads[i].ev[k],
				&u->threads[i].ev[k]))
				abort();
	ht_trace_free(u);
	free(again);
	ht_trace_free(t);
	return 0;
}
