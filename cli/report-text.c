/*
 * The text report (see report.h): the session and its totals, the memory
 * of each module and thread, and with detail every site and its stack.
 */
#include "allocnames.h"
#include "config.h"

#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "report-int.h"
#include "coverage.h"
#include "text.h"
#include "sizes.h"
#include "timeline.h"

struct text {
	FILE *fp;
	int raw; /* --bytes */
};

static const char *
size_str(const struct text *t, uint64_t v, char *buf, size_t len)
{
	return ht_text_size(t->raw, v, buf, len);
}

/* The bounds of f's bytes in use: none at rate 1 ("exact"), unless
 * samples were dropped (then the figure is a lower bound); else its 95%
 * interval, widened by what dropped samples stood for. */
static void
text_interval(const struct text *t, const struct ht_view *v,
    const struct ht_view_figures *f)
{
	const struct ht_meta *m = &v->prof->meta;
	char lo_s[32], hi_s[32];
	uint64_t lo, hi;

	if (v->exact) {
		fprintf(t->fp, "exact");
		return;
	}
	ht_view_interval(v, f, &lo, &hi);
	if (v->every) {
		fprintf(t->fp, "at least");
		if (m->dropped_bytes > 0 && !ht_view_meta_floor(m))
			fprintf(t->fp, ", at most %s",
			    size_str(t, hi, hi_s, sizeof(hi_s)));
		return;
	}
	fprintf(t->fp, "95%% %s..%s", size_str(t, lo, lo_s, sizeof(lo_s)),
	    size_str(t, hi, hi_s, sizeof(hi_s)));
}

/* Two spaces, then the label column of the summary lines. */
#define LABEL "  %-15s"

static const char *
plural(uint64_t n)
{
	return n == 1 ? "" : "s";
}

/* The share of allocations that t of them are, in percent. */
static double
share(uint64_t part, uint64_t whole)
{
	return whole == 0 ? 0 : 100.0 * (double)part / (double)whole;
}

/*
 * The summary's line of short-lived allocations (heaptrack's temporary
 * ones): freed or reallocated by the thread that made them before it
 * allocated again.
 * Profiles before format 10 say nothing of them, so they get no line; an
 * allocator's own sampling cannot tell them, and says so.
 */
static void
text_temporary(const struct ht_view *v, const struct text *t)
{
	const struct ht_view_figures *f = &v->total;

	if (v->temp_known)
		fprintf(t->fp,
		    LABEL "%10" PRIu64 " allocation%s (%.1f%% of them; %" PRIu64
			  " sample%s), freed or reallocated before their "
			  "thread allocated again\n",
		    "short-lived", f->temp_objects, plural(f->temp_objects),
		    share(f->temp_objects, f->alloc_objects), f->temp_samples,
		    plural(f->temp_samples));
	else if (v->prof->version >= 10)
		fprintf(t->fp,
		    LABEL "%10s (the %s backend's own samples cannot tell "
			  "them)\n",
		    "short-lived", "unknown",
		    ht_backend_name(v->prof->meta.backend));
}

/* A row sorted by short-lived allocations. */
static void
text_row_temporary(const struct ht_view *v, const struct text *t,
    const struct ht_view_row *r, double pct)
{
	char a[32];

	(void)v;
	fprintf(t->fp,
	    " short-lived %" PRIu64 " (%.1f%%) of %" PRIu64
	    " allocation%s (%.1f%% of the site's), in use %s\n",
	    r->f.temp_objects, pct, r->f.alloc_objects,
	    plural(r->f.alloc_objects),
	    share(r->f.temp_objects, r->f.alloc_objects),
	    size_str(t, r->f.inuse_bytes, a, sizeof(a)));
}

static void
text_summary(const struct ht_view *v, const struct text *t)
{
	const struct ht_meta *m = &v->prof->meta;
	const struct ht_view_figures *f = &v->total;
	char a[32], b[32], c[32];
	uint64_t predates = ht_view_predates_bytes(v);
	size_t i, w;

	fprintf(t->fp, "pid %" PRIu64 " (", m->pid);
	ht_text_safe(t->fp, m->command, sizeof(m->command));
	fprintf(t->fp, "): session %" PRIu64 " %s%s", m->epoch,
	    ht_profile_state_name(m->state),
	    (m->flags & HT_META_AT_EXIT) ? " at exit" : "");
	if (m->flags & HT_META_ON_SIGNAL)
		fprintf(t->fp, " on signal %" PRIu32 " (%s)", m->signal,
		    ht_text_signal_name(m->signal));
	fputs(", ", t->fp);
	if (v->exact)
		fprintf(t->fp, "rate 1 (every allocation, exact)");
	else if (ht_view_meta_floor(m))
		fprintf(t->fp,
		    "rate 1 (NOT EXACT: %s's own sampling misses each "
		    "thread's first bytes after a start; figures are floors, "
		    "--backend got counts exactly)",
		    ht_backend_name(m->backend));
	else if (v->every)
		fprintf(t->fp,
		    "rate 1 (every allocation; NOT EXACT: samples "
		    "dropped)");
	else
		fprintf(t->fp, "rate %s (sampled: figures are estimates)",
		    size_str(t, m->rate, a, sizeof(a)));
	fprintf(t->fp, ", %.2f s", ht_text_duration_s(m));
	/* Where the samples come from, when not from the hooks. */
	if (m->backend > HT_BACKEND_INLINE)
		fprintf(t->fp, ", backend %s (its own sampling%s)",
		    ht_backend_name(m->backend),
		    m->backend == HT_BACKEND_JEMALLOC ? ", at a power of 2" :
							"");
	if (v->opts.at_peak)
		fprintf(t->fp, "; at peak, %.2f s in",
		    ht_text_since_s(m, m->peak_ns));
	putc('\n', t->fp);
	ht_text_drops(t->fp, v, t->raw);

	fprintf(t->fp, LABEL "%10s in %" PRIu64 " object%s (", "in use",
	    size_str(t, f->inuse_bytes, a, sizeof(a)), f->inuse_objects,
	    plural(f->inuse_objects));
	text_interval(t, v, f);
	if (v->live_known)
		fprintf(t->fp, "; %" PRIu64 " live sample%s", f->live_samples,
		    plural(f->live_samples));
	fputs(")\n", t->fp);
	if (m->flags & HT_META_ALLOC_UNKNOWN) {
		/* jemalloc without opt.prof_accum counts only what is in
		 * use. */
		fprintf(t->fp,
		    LABEL "%10s (%s keeps no count of freed blocks: "
			  "opt.prof_accum is off)\n",
		    "allocated", "unknown", ht_backend_name(m->backend));
		fprintf(t->fp, LABEL "%10s\n", "freed", "unknown");
	} else {
		fprintf(t->fp,
		    LABEL "%10s in %" PRIu64 " object%s (%" PRIu64
			  " sample%s%s)\n",
		    "allocated", size_str(t, f->alloc_bytes, a, sizeof(a)),
		    f->alloc_objects, plural(f->alloc_objects), f->samples,
		    plural(f->samples),
		    v->opts.at_peak ? "; whole session" : "");
		fprintf(t->fp, LABEL "%10s%s\n", "freed",
		    size_str(t, ht_view_freed_bytes(v), a, sizeof(a)),
		    v->opts.at_peak ? " (whole session)" : "");
	}
	if (m->flags & HT_META_PEAK_UNKNOWN)
		fprintf(t->fp, LABEL "%10s (%s's samples keep no peak)\n",
		    "peak", "unknown", ht_backend_name(m->backend));
	else
		fprintf(t->fp, LABEL "%10s%s\n", "peak",
		    size_str(t, ht_view_peak_bytes(v), a, sizeof(a)),
		    v->opts.filter_tag ? " (the session's, every tag: see "
					 "by tag for this tag's lines)" :
					 "");
	text_temporary(v, t);
	if (m->heap_inuse_bytes != 0 || m->heap_free_bytes != 0 ||
	    m->heap_mmap_bytes != 0) {
		fprintf(t->fp, LABEL "%10s in use, %s free, %s mmap",
		    "allocator", size_str(t, m->heap_inuse_bytes, a, sizeof(a)),
		    size_str(t, m->heap_free_bytes, b, sizeof(b)),
		    size_str(t, m->heap_mmap_bytes, c, sizeof(c)));
		/* What no site holds: the allocator's own overhead (block
		 * headers, rounding) always, and what was allocated before
		 * the session where it began after the process. */
		if (predates > 0 && (m->flags & HT_META_LAUNCHED))
			fprintf(t->fp,
			    "; %s%s in no site: the allocator's overhead "
			    "(block headers, rounding) and the loader's "
			    "blocks from before the agent",
			    v->exact ? "" : "about ",
			    size_str(t, predates, a, sizeof(a)));
		else if (predates > 0)
			fprintf(t->fp,
			    "; %s%s predates the session or is the "
			    "allocator's own",
			    v->exact ? "" : "about ",
			    size_str(t, predates, a, sizeof(a)));
		putc('\n', t->fp);
	}
	if (m->rss_bytes != 0)
		fprintf(t->fp, LABEL "%10s\n", "RSS",
		    size_str(t, m->rss_bytes, a, sizeof(a)));
	fprintf(t->fp, LABEL "%10s overhead, %" PRIu64 " dropped sample%s\n",
	    "heaptool agent", size_str(t, m->overhead_bytes, a, sizeof(a)),
	    m->dropped_samples, plural(m->dropped_samples));
	ht_coverage_summary(t->fp, "  ", v->prof);
	for (i = 0; i < v->prof->nallocators; i++)
		ht_text_unseen(t->fp, "  ", v->prof->allocators[i].names,
		    v->prof->allocators[i].path);
	if (v->total.saturated)
		fprintf(t->fp,
		    "  warning: figures passed 2^64 - 1 and stop "
		    "there: the profile is corrupt or hostile, none of its "
		    "figures is to be believed\n");

	if (v->nmods > 0) {
		w = strlen("by module");
		for (i = 0; i < v->nmods; i++)
			w = ht_text_width(w, v->mods[i].name);
		fprintf(t->fp, "\n%-*s %10s %10s\n", (int)w, "by module",
		    "in use", "allocated");
		for (i = 0; i < v->nmods; i++) {
			ht_text_column(t->fp, v->mods[i].name, w);
			fprintf(t->fp, " %10s %10s\n",
			    size_str(t, v->mods[i].f.inuse_bytes, a, sizeof(a)),
			    (v->prof->meta.flags & HT_META_ALLOC_UNKNOWN) ?
				"unknown" :
				size_str(t, v->mods[i].f.alloc_bytes, b,
				    sizeof(b)));
		}
	}
	ht_report_tags_text(t->fp, v, t->raw);
	if (v->nthreads > 0) {
		fprintf(t->fp, "\n%-24s %10s %10s\n", "by thread", "in use",
		    "allocated");
		for (i = 0; i < v->nthreads; i++) {
			const struct ht_thread_rec *th = v->threads[i];
			int n;

			n = fprintf(t->fp, "  %" PRIu32 " ", th->tid);
			n += (int)strnlen(th->name, sizeof(th->name));
			ht_text_safe(t->fp, th->name, sizeof(th->name));
			fprintf(t->fp, "%*s %10s %10s\n", n < 24 ? 24 - n : 0,
			    "", size_str(t, th->inuse_bytes, a, sizeof(a)),
			    size_str(t, th->alloc_bytes, b, sizeof(b)));
		}
	}
}

/* The first line of a row: the sorted column first, with its share. */
static void text_row_temporary(const struct ht_view *v, const struct text *t,
    const struct ht_view_row *r, double pct);

static void
text_row_head(const struct ht_view *v, const struct text *t,
    const struct ht_view_row *r, double pct)
{
	char a[32], b[32];
	const struct ht_view_figures *f = &r->f;

	size_str(t, f->inuse_bytes, a, sizeof(a));
	size_str(t, f->alloc_bytes, b, sizeof(b));
	if (v->prof->meta.flags & HT_META_ALLOC_UNKNOWN) {
		fprintf(t->fp, " in use %s (%.1f%%) in %" PRIu64 " object%s\n",
		    a, pct, f->inuse_objects, plural(f->inuse_objects));
		return;
	}
	switch (v->opts.sort) {
	case HT_VIEW_TEMPORARY:
		text_row_temporary(v, t, r, pct);
		break;
	case HT_VIEW_ALLOC:
		fprintf(t->fp,
		    " allocated %s (%.1f%%) in %" PRIu64
		    " object%s, in use %s in %" PRIu64 " object%s\n",
		    b, pct, f->alloc_objects, plural(f->alloc_objects), a,
		    f->inuse_objects, plural(f->inuse_objects));
		break;
	case HT_VIEW_OBJECTS:
		fprintf(t->fp,
		    " in use %s in %" PRIu64 " object%s (%.1f%%), "
		    "allocated %s in %" PRIu64 " object%s\n",
		    a, f->inuse_objects, plural(f->inuse_objects), pct, b,
		    f->alloc_objects, plural(f->alloc_objects));
		break;
	default:
		fprintf(t->fp,
		    " in use %s (%.1f%%) in %" PRIu64 " object%s, "
		    "allocated %s in %" PRIu64 " object%s\n",
		    a, pct, f->inuse_objects, plural(f->inuse_objects), b,
		    f->alloc_objects, plural(f->alloc_objects));
		break;
	}
}

static int
text_detail(struct ht_view *v, const struct text *t)
{
	const struct ht_view_row *r;
	uint64_t total = ht_view_value(v, &v->total);
	size_t i;

	fprintf(t->fp, "\n%zu site%s, by %s%s\n", v->nsites,
	    v->nsites == 1 ? "" : "s", ht_view_value_name(v),
	    v->opts.at_peak ? " at peak" : "");
	for (i = 0; i < v->nrows; i++) {
		if (i + HT_VIEW_AHEAD < v->nrows)
			ht_view_prefetch(&v->rows[i + HT_VIEW_AHEAD]);
		r = &v->rows[i];
		if (r->site == NULL)
			fprintf(t->fp, "\n(%zu smaller site%s)", r->nfolded,
			    plural(r->nfolded));
		else
			fprintf(t->fp, "\n#%zu", i + 1);
		text_row_head(v, t, r,
		    total == 0 ? 0 :
				 100.0 * (double)ht_view_value(v, &r->f) /
			    (double)total);
		fprintf(t->fp, "    %" PRIu64 " sample%s", r->f.samples,
		    plural(r->f.samples));
		if (v->live_known)
			fprintf(t->fp, ", %" PRIu64 " live", r->f.live_samples);
		if (v->temp_known && r->f.temp_samples > 0)
			fprintf(t->fp, ", %" PRIu64 " short-lived",
			    r->f.temp_samples);
		fputs("; in use ", t->fp);
		text_interval(t, v, &r->f);
		putc('\n', t->fp);
		ht_report_tag_site_text(t->fp, v, r);
		if (ht_text_frames(t->fp, v, r) < 0)
			return -1;
	}
	return 0;
}

int
ht_report_text(FILE *fp, struct ht_view *v, const struct ht_report_opts *opts)
{
	struct text t = { fp, opts->raw_bytes };

	text_summary(v, &t);
	if (opts->coverage)
		ht_coverage_list(fp, v->prof);
	if (opts->timeline && ht_timeline_text(fp, v, opts->raw_bytes) != 0)
		return -1;
	if (opts->sizes && ht_sizes_text(fp, v, opts->raw_bytes) != 0)
		return -1;
	if (opts->detail) {
		if (text_detail(v, &t) != 0)
			return -1;
		ht_text_notes(fp, v->sym, NULL);
		ht_text_skipped_note(fp, &v->symbols);
	}
	return 0;
}
