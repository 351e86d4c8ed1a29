/*
 * heaptool trace-stats' figures: the overhead analysis of an allocation
 * trace (src/trace.h) without replaying it, after OpenJDK's NMT recorder
 * (issue 13): requested against usable bytes, the peaks of what was live,
 * what a heaptool session would have cost at rate 1 and at the default
 * rate, and counts and bytes by op, size class, thread and tag.
 *
 * The events are taken in sequence order, the order the allocator saw
 * them.  A block is live from the event that made it to the one that
 * freed or reallocated it; a free of a preexisting block (or of NULL)
 * changes nothing that is counted live, and a free whose block is not in
 * the trace (lost events) counts as unmatched.  An op's bytes are the
 * requested bytes of the block it made, or of the block it freed.  A
 * block of unknown usable size counts its requested size as usable and
 * is counted in usable_unknown.
 *
 * What heaptool would keep: at rate 1, an entry of live_entry_bytes (INFO)
 * for every live block and one of site_entry_bytes for every site; so at
 * the peak of live blocks.  At a rate R, a block of s bytes is sampled
 * with p = 1 - exp(-(s+1)/R) (src/sampling.h): the expected live samples
 * are the sum of p over the live blocks, taken at its peak over the
 * trace, and a site is in the table with probability 1 - exp(-sum(s+1)/R)
 * over its allocations.
 */
#ifndef HT_TRACESTATS_H
#define HT_TRACESTATS_H

#include <stdint.h>
#include <stdio.h>

#include "trace.h"

/* Size classes: 0 holds size 0, k (1 to 64) sizes from 2^(k-1) to 2^k-1. */
#define HT_TSTATS_CLASSES 65

struct ht_tstats_count {
	uint64_t count, bytes;
};

struct ht_tstats_thread {
	uint32_t idx, tid;
	const char *name; /* the trace's */
	uint64_t events, allocs, alloc_bytes, frees;
};

struct ht_tstats_tag {
	uint32_t id;
	const char *name; /* the trace's, or NULL */
	uint64_t allocs, bytes;
};

struct ht_tstats {
	uint64_t events, allocs, frees;
	struct ht_tstats_count op[HT_TROP_MAX + 1];
	struct ht_tstats_count cls[HT_TSTATS_CLASSES];
	uint64_t requested, usable, usable_unknown;
	uint64_t peak_requested, peak_usable, peak_blocks;
	uint64_t live_blocks, live_requested, live_usable; /* at the end */
	uint64_t preexisting_frees, null_frees, failed, unmatched;
	uint64_t sites; /* distinct sites of the allocations */
	/* What heaptool would keep, at rate 1 and at rate. */
	uint64_t rate;
	uint64_t rate1_bytes;
	double rate_samples, rate_sites, rate_bytes;
	struct ht_tstats_thread *threads; /* the trace's order */
	size_t nthreads;
	struct ht_tstats_tag *tags; /* by id, those with allocations */
	size_t ntags;
};

/* The figures of t at sampling rate (heaptool's estimate) into *s.  0, or
 * -1 with errno (ENOMEM). */
int
ht_tstats_compute(const struct ht_trace *t, uint64_t rate, struct ht_tstats *s);
void ht_tstats_free(struct ht_tstats *s);

/* The lowest size of class k. */
uint64_t ht_tstats_class_min(unsigned k);

/* Write s of t (read from path) as text or JSON (heaptool(1) documents
 * the keys) to fp.  0, or -1 when the stream failed. */
int ht_tstats_text(FILE *fp, const char *path, const struct ht_trace *t,
    const struct ht_tstats *s);
int ht_tstats_json(FILE *fp, const char *path, const struct ht_trace *t,
    const struct ht_tstats *s);

#endif
