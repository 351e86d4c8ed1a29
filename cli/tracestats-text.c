/*
 * trace-stats as text (tracestats.h): the state of the trace on the first
 * line, the overhead analysis, then tables with bars.  Names from the
 * trace (threads, tags, the command) are someone else's bytes: they go
 * through ht_json_put_text, which shows controls as '?'.
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "json.h"
#include "tracestats.h"

#define BAR 40

static double
pct(uint64_t part, uint64_t whole)
{
	return whole ? 100.0 * (double)part / (double)whole : 0.0;
}

static void
bar(FILE *fp, uint64_t v, uint64_t max)
{
	int i, n = max ? (int)((double)v * BAR / (double)max + 0.5) : 0;

	if (n == 0 && v > 0)
		n = 1;
	fputc(' ', fp);
	for (i = 0; i < n; i++)
		fputc('#', fp);
}

static void
name(FILE *fp, const char *s, size_t max)
{
	ht_json_put_text(fp, s != NULL ? s : "", max, NULL, NULL);
}

static void
head(FILE *fp, const char *path, const struct ht_trace *t,
    const struct ht_tstats *s)
{
	if (t->complete)
		fprintf(fp, "trace ");
	else
		fprintf(fp, "INCOMPLETE trace ");
	name(fp, path, 256);
	if (!t->complete) {
		fprintf(fp, " (");
		name(fp, t->incomplete_why, sizeof(t->incomplete_why));
		fprintf(fp, "): the figures are of the events it has");
	}
	fprintf(fp, ": %" PRIu64 " events, %zu threads\n", s->events,
	    s->nthreads);
	fprintf(fp, "  process %" PRIu32 ": ", t->info.pid);
	name(fp, t->command, 512);
	fputc('\n', fp);
	if (t->complete) {
		fprintf(fp, "  recorded for %.3f s",
		    (double)t->end.duration_ns / 1e9);
		if (t->end.lost > 0)
			fprintf(fp,
			    "; LOST %" PRIu64 " events (%s): the figures "
			    "miss them",
			    t->end.lost,
			    t->end.lost_why ? strerror((int)t->end.lost_why) :
					      "no reason given");
		else
			fprintf(fp, "; no events lost");
		fprintf(fp, "; the recorder waited %" PRIu64 " times\n",
		    t->end.waits);
	}
}

static void
overhead(FILE *fp, const struct ht_trace *t, const struct ht_tstats *s)
{
	/* Every block's usable size is at least its requested one, so the
	 * usable peak is at least the requested peak. */
	uint64_t peak = s->peak_requested;

	fprintf(fp, "\nMemory (all allocations, and at the peak):\n");
	fprintf(fp, "  %-34s %16" PRIu64 " bytes in %" PRIu64 " blocks\n",
	    "requested", s->requested, s->allocs);
	fprintf(fp, "  %-34s %16" PRIu64 " bytes", "usable", s->usable);
	if (s->usable_unknown > 0)
		fprintf(fp,
		    " (%" PRIu64 " blocks of unknown usable size "
		    "counted as requested)",
		    s->usable_unknown);
	fputc('\n', fp);
	fprintf(fp, "  %-34s %16" PRIu64 " bytes [%.3f%%]\n",
	    "overhead of the allocator's rounding", s->usable - s->requested,
	    pct(s->usable - s->requested, s->requested));
	fprintf(fp, "  %-34s %16" PRIu64 " bytes\n", "peak live requested",
	    s->peak_requested);
	fprintf(fp, "  %-34s %16" PRIu64 " bytes [%.3f%% over requested]\n",
	    "peak live usable", s->peak_usable,
	    pct(s->peak_usable - peak, peak));
	fprintf(fp, "  %-34s %16" PRIu64 "\n", "peak live blocks",
	    s->peak_blocks);
	fprintf(fp, "  %-34s %16" PRIu64 " bytes in %" PRIu64 " blocks\n",
	    "live at the end", s->live_requested, s->live_blocks);
	fprintf(fp,
	    "  frees of blocks older than the trace %" PRIu64
	    ", of NULL %" PRIu64 ", unmatched %" PRIu64
	    "; failed allocations %" PRIu64 "\n",
	    s->preexisting_frees, s->null_frees, s->unmatched, s->failed);

	fprintf(fp, "\nThe profiler's own memory:\n");
	fprintf(fp,
	    "  heaptool at rate 1 (every block)   %16" PRIu64
	    " bytes [%.3f%% of the peak]: %" PRIu32 " a live object, %" PRIu32
	    " a site (%" PRIu64 " sites)\n",
	    s->rate1_bytes, pct(s->rate1_bytes, peak), t->info.live_entry_bytes,
	    t->info.site_entry_bytes, s->sites);
	fprintf(fp,
	    "  heaptool at rate %" PRIu64 " (default) %12.0f bytes [%.3f%% "
	    "of the peak]: %.1f live samples, %.1f sites expected\n",
	    s->rate, s->rate_bytes,
	    peak ? 100.0 * s->rate_bytes / (double)peak : 0.0, s->rate_samples,
	    s->rate_sites);
	if (t->complete)
		fprintf(fp,
		    "  the recorder (at its peak)         %16" PRIu64
		    " bytes [%.3f%% of the peak]\n",
		    t->end.agent_bytes, pct(t->end.agent_bytes, peak));
	else
		fprintf(fp, "  the recorder: unknown (no END)\n");
}

static void
ops(FILE *fp, const struct ht_tstats *s)
{
	uint64_t max = 0;
	unsigned i;

	for (i = 1; i <= HT_TROP_MAX; i++)
		if (s->op[i].count > max)
			max = s->op[i].count;
	fprintf(fp, "\nBy op:\n  %-16s %12s %16s\n", "op", "count", "bytes");
	for (i = 1; i <= HT_TROP_MAX; i++) {
		if (s->op[i].count == 0)
			continue;
		fprintf(fp, "  %-16s %12" PRIu64 " %16" PRIu64,
		    ht_trace_op_name(i), s->op[i].count, s->op[i].bytes);
		bar(fp, s->op[i].count, max);
		fputc('\n', fp);
	}
}

static void
classes(FILE *fp, const struct ht_tstats *s)
{
	uint64_t max = 0;
	unsigned k;

	for (k = 0; k < HT_TSTATS_CLASSES; k++)
		if (s->cls[k].count > max)
			max = s->cls[k].count;
	fprintf(fp, "\nAllocations by size (powers of 2):\n  %-24s %12s %16s\n",
	    "size", "count", "bytes");
	for (k = 0; k < HT_TSTATS_CLASSES; k++) {
		char range[48];
		uint64_t lo = ht_tstats_class_min(k);

		if (s->cls[k].count == 0)
			continue;
		if (k == 0)
			snprintf(range, sizeof(range), "0");
		else
			snprintf(range, sizeof(range), "%" PRIu64 "..%" PRIu64,
			    lo, lo + (lo - 1));
		fprintf(fp, "  %-24s %12" PRIu64 " %16" PRIu64, range,
		    s->cls[k].count, s->cls[k].bytes);
		bar(fp, s->cls[k].count, max);
		fputc('\n', fp);
	}
}

static void
threads(FILE *fp, const struct ht_tstats *s)
{
	size_t i;

	fprintf(fp, "\nBy thread:\n  %6s %8s %-16s %10s %10s %16s %10s\n",
	    "thread", "tid", "name", "events", "allocs", "bytes", "frees");
	for (i = 0; i < s->nthreads; i++) {
		const struct ht_tstats_thread *th = &s->threads[i];
		size_t w;

		fprintf(fp, "  %6" PRIu32 " %8" PRIu32 " ", th->idx, th->tid);
		w = ht_json_put_text(fp, th->name, 16, NULL, NULL);
		fprintf(fp,
		    "%*s %10" PRIu64 " %10" PRIu64 " %16" PRIu64 " %10" PRIu64
		    "\n",
		    (int)(16 - (w < 16 ? w : 16)), "", th->events, th->allocs,
		    th->alloc_bytes, th->frees);
	}
}

static void
tags(FILE *fp, const struct ht_tstats *s)
{
	uint64_t max = 0;
	size_t i;

	if (s->ntags == 0)
		return;
	for (i = 0; i < s->ntags; i++)
		if (s->tags[i].bytes > max)
			max = s->tags[i].bytes;
	fprintf(fp, "\nBy tag:\n  %6s %-20s %10s %16s\n", "tag", "name",
	    "allocs", "bytes");
	for (i = 0; i < s->ntags; i++) {
		const struct ht_tstats_tag *g = &s->tags[i];
		size_t w;

		fprintf(fp, "  %6" PRIu32 " ", g->id);
		w = ht_json_put_text(fp,
		    g->id == 0	? "(none)" :
			g->name ? g->name :
				  "?",
		    20, NULL, NULL);
		fprintf(fp, "%*s %10" PRIu64 " %16" PRIu64,
		    (int)(20 - (w < 20 ? w : 20)), "", g->allocs, g->bytes);
		bar(fp, g->bytes, max);
		fputc('\n', fp);
	}
}

int
ht_tstats_text(FILE *fp, const char *path, const struct ht_trace *t,
    const struct ht_tstats *s)
{
	head(fp, path, t, s);
	overhead(fp, t, s);
	ops(fp, s);
	classes(fp, s);
	threads(fp, s);
	tags(fp, s);
	return fflush(fp) != 0 || ferror(fp) ? -1 : 0;
}
