/*
 * The text of a diff (see diff.h): both sessions, the totals old, new and
 * their delta, the same per module, and with detail every site with its
 * change and its stack.
 */
#include "config.h"

#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "allocnames.h"
#include "diff.h"
#include "text.h"

struct text {
	FILE *fp;
	int raw;
	int exact;
};

static const char *
size_str(const struct text *t, uint64_t v, char *buf, size_t len)
{
	return ht_text_size(t->raw, v, buf, len);
}

/* A signed change: "+1.50 KiB", "-48 B", "0 B"; bytes says whether it is
 * a size or a count; with approx, "~" before it (an estimate). */
static const char *
delta_str(const struct text *t, int64_t dv, int bytes, int approx, char *buf,
    size_t len)
{
	uint64_t a = ht_diff_magnitude(dv);
	size_t n = 0;

	/* Callers give at least 32 bytes: room for two marks and any
	 * 64-bit count. */
	if (approx && dv != 0)
		buf[n++] = '~';
	if (dv != 0)
		buf[n++] = dv > 0 ? '+' : '-';
	if (bytes)
		size_str(t, a, buf + n, len - n);
	else
		snprintf(buf + n, len - n, "%" PRIu64, a);
	return buf;
}

static void
text_session(const struct text *t, const char *label,
    const struct ht_profile *p)
{
	const struct ht_meta *m = &p->meta;
	char a[32], line[512];

	fprintf(t->fp, "%s pid %" PRIu64 " (", label, m->pid);
	ht_text_safe(t->fp, m->command, sizeof(m->command));
	fprintf(t->fp, "): session %" PRIu64 " %s%s, ", m->epoch,
	    ht_profile_state_name(m->state),
	    (m->flags & HT_META_AT_EXIT) ? " at exit" : "");
	if (ht_view_meta_exact(m))
		fprintf(t->fp, "rate 1 (exact)");
	else if (ht_view_meta_floor(m))
		fprintf(t->fp, "rate 1 (NOT EXACT: %s's own sampling; floors)",
		    ht_backend_name(m->backend));
	else if (m->rate == 1)
		fprintf(t->fp, "rate 1 (NOT EXACT: samples dropped)");
	else
		fprintf(t->fp, "rate %s (sampled)",
		    size_str(t, m->rate, a, sizeof(a)));
	fprintf(t->fp, ", %.2f s\n", ht_text_duration_s(m));
	if (m->dropped_samples > 0)
		fprintf(t->fp, "  %s%s: its figures leave them out\n",
		    m->rate == 1 ? "" : "WARNING: ",
		    ht_text_drop_line(m, line, sizeof(line)));
}

#define TLABEL "  %-19s"
#define TCOL   " %12s"

/* The kinds of figures of a row: sizes and counts are estimates unless
 * both profiles are exact; samples and sites are counted. */
#define ROW_OBJECTS 0
#define ROW_BYTES   1
#define ROW_COUNT   2

/* A row of the totals, column c of the diff (HT_DIFF_*, HT_DIFF_PEAK):
 * "unknown" for a side that has no such figure, and for the delta then. */
static void
text_row(const struct text *t, const struct ht_diff *d, int col,
    const char *label, uint64_t o, uint64_t n, int kind)
{
	char a[32], b[32], c[32];
	int bytes = kind == ROW_BYTES;
	int uo = ht_diff_unknown(d, 0, col), un = ht_diff_unknown(d, 1, col);

	if (bytes) {
		size_str(t, o, a, sizeof(a));
		size_str(t, n, b, sizeof(b));
	} else {
		snprintf(a, sizeof(a), "%" PRIu64, o);
		snprintf(b, sizeof(b), "%" PRIu64, n);
	}
	fprintf(t->fp, TLABEL TCOL TCOL TCOL, label, uo ? "unknown" : a,
	    un ? "unknown" : b,
	    uo || un ? "unknown" :
		       delta_str(t, ht_diff_delta(o, n), bytes,
			   !t->exact && kind != ROW_COUNT, c, sizeof(c)));
}

/* The row of column c of the totals. */
static void
text_total(const struct text *t, const struct ht_diff *d, const char *label,
    int c, int kind)
{
	text_row(t, d, c, label, d->tot[0].v[c], d->tot[1].v[c], kind);
}

static void
text_summary(const struct ht_diff *d, const struct text *t)
{
	const struct ht_meta *om = &d->prof[0]->meta, *nm = &d->prof[1]->meta;
	char a[32], b[32], c[32], e[32];
	int64_t lo, hi;
	size_t i, w;

	text_session(t, "old:", d->prof[0]);
	text_session(t, "new:", d->prof[1]);
	if (d->exact)
		fputs("deltas are exact (both profiles at rate 1)\n", t->fp);
	else if (d->floor)
		fputs("deltas are NOT EXACT (a profile's figures are floors: "
		      "an allocator's own sampling at rate 1)\n",
		    t->fp);
	else if (om->rate == 1 && nm->rate == 1)
		fputs("deltas are NOT EXACT (samples were dropped)\n", t->fp);
	else
		fputs("deltas are estimates (~), with 95% intervals from "
		      "both profiles' samples\n",
		    t->fp);
	if (d->v[0].total.saturated || d->v[1].total.saturated)
		fputs("warning: figures passed 2^64 - 1 and stop there: a "
		      "profile is corrupt or hostile, no delta is to be "
		      "believed\n",
		    t->fp);
	if (om->pid == nm->pid && om->epoch != nm->epoch)
		fprintf(t->fp,
		    "note: sessions %" PRIu64 " and %" PRIu64
		    " of one process: a session starts from zero, so the "
		    "new one holds nothing of the old\n",
		    om->epoch, nm->epoch);

	fprintf(t->fp, "\n" TLABEL TCOL TCOL TCOL "\n", "", "old", "new",
	    "delta");
	text_total(t, d, "in use", HT_DIFF_INUSE_BYTES, ROW_BYTES);
	if (d->floor)
		fprintf(t->fp, "  (a change of floors: no interval)");
	else if (!d->exact) {
		ht_diff_interval(d, &d->tot[0], &d->tot[1], &lo, &hi);
		fprintf(t->fp, "  (95%% %s..%s)",
		    delta_str(t, lo, 1, 0, a, sizeof(a)),
		    delta_str(t, hi, 1, 0, b, sizeof(b)));
	}
	putc('\n', t->fp);
	text_total(t, d, "in use objects", HT_DIFF_INUSE_OBJECTS, ROW_OBJECTS);
	putc('\n', t->fp);
	text_total(t, d, "allocated", HT_DIFF_ALLOC_BYTES, ROW_BYTES);
	putc('\n', t->fp);
	text_total(t, d, "allocated objects", HT_DIFF_ALLOC_OBJECTS,
	    ROW_OBJECTS);
	putc('\n', t->fp);
	text_total(t, d, "freed", HT_DIFF_FREED_BYTES, ROW_BYTES);
	putc('\n', t->fp);
	/* Short-lived allocations, where either profile counts them (a
	 * report of either says nothing of them otherwise). */
	if (!ht_diff_unknown(d, 0, HT_DIFF_TEMP_OBJECTS) ||
	    !ht_diff_unknown(d, 1, HT_DIFF_TEMP_OBJECTS)) {
		text_total(t, d, "short-lived", HT_DIFF_TEMP_OBJECTS,
		    ROW_OBJECTS);
		putc('\n', t->fp);
	}
	text_row(t, d, HT_DIFF_PEAK, "peak", ht_view_peak_bytes(&d->v[0]),
	    ht_view_peak_bytes(&d->v[1]), ROW_BYTES);
	putc('\n', t->fp);
	text_total(t, d, "samples", HT_DIFF_SAMPLES, ROW_COUNT);
	putc('\n', t->fp);
	text_row(t, d, HT_DIFF_SAMPLES, "sites", d->v[0].nsites, d->v[1].nsites,
	    ROW_COUNT);
	putc('\n', t->fp);

	if (d->nmods == 0)
		return;
	w = strlen("by module");
	for (i = 0; i < d->nmods; i++)
		w = ht_text_width(w, d->mods[i].name);
	fprintf(t->fp, "\n%-*s" TCOL TCOL TCOL TCOL "\n", (int)w, "by module",
	    "old in use", "new in use", "delta", "alloc delta");
	for (i = 0; i < d->nmods; i++) {
		const struct ht_diff_module *m = &d->mods[i];

		ht_text_column(t->fp, m->name, w);
		fprintf(t->fp, TCOL TCOL TCOL TCOL "\n",
		    size_str(t, m->v[0][0], a, sizeof(a)),
		    size_str(t, m->v[1][0], b, sizeof(b)),
		    delta_str(t, ht_diff_delta(m->v[0][0], m->v[1][0]), 1,
			!t->exact, c, sizeof(c)),
		    ht_diff_unknown(d, 0, HT_DIFF_ALLOC_BYTES) ||
			    ht_diff_unknown(d, 1, HT_DIFF_ALLOC_BYTES) ?
			"unknown" :
			delta_str(t, ht_diff_delta(m->v[0][2], m->v[1][2]), 1,
			    !t->exact, e, sizeof(e)));
	}
	ht_diff_tags_text(t->fp, d, t->raw);
}

/* "in use +1.00 KiB (2.00 KiB -> 3.00 KiB), +1 object (2 -> 3)" */
static void
text_change(const struct text *t, const char *what,
    const struct ht_diff_site *s, int cb, int co)
{
	char a[32], b[32], c[32];
	int64_t dv;

	fprintf(t->fp, "%s %s (%s -> %s), ", what,
	    delta_str(t, ht_diff_change(s->s, cb), 1, !t->exact, c, sizeof(c)),
	    size_str(t, s->s[0].v[cb], a, sizeof(a)),
	    size_str(t, s->s[1].v[cb], b, sizeof(b)));
	dv = ht_diff_change(s->s, co);
	fprintf(t->fp, "%s object%s (%" PRIu64 " -> %" PRIu64 ")",
	    delta_str(t, dv, 0, !t->exact, c, sizeof(c)),
	    ht_diff_magnitude(dv) == 1 ? "" : "s", s->s[0].v[co],
	    s->s[1].v[co]);
}

/* "short-lived +1 (2 -> 3)" */
static void
text_count(const struct text *t, const char *what, const struct ht_diff_site *s,
    int c)
{
	char a[32];

	fprintf(t->fp, "%s %s (%" PRIu64 " -> %" PRIu64 ")", what,
	    delta_str(t, ht_diff_change(s->s, c), 0, !t->exact, a, sizeof(a)),
	    s->s[0].v[c], s->s[1].v[c]);
}

static int
text_detail(struct ht_diff *d, const struct text *t)
{
	const struct ht_diff_site *s;
	const size_t *cnt = d->count;
	char a[32], b[32];
	int64_t lo, hi;
	size_t i, n;
	int k, nfr;

	n = cnt[HT_DIFF_NEW] + cnt[HT_DIFF_GONE] + cnt[HT_DIFF_CHANGED] +
	    cnt[HT_DIFF_SAME];
	fprintf(t->fp,
	    "\n%zu site%s: %zu new, %zu gone, %zu changed, %zu "
	    "same; by growth of bytes in use\n",
	    n, n == 1 ? "" : "s", cnt[HT_DIFF_NEW], cnt[HT_DIFF_GONE],
	    cnt[HT_DIFF_CHANGED], cnt[HT_DIFF_SAME]);
	for (i = 0; i < d->nshown; i++) {
		ht_diff_prefetch(d, i);
		s = d->shown[i];
		if (s->status == HT_DIFF_FOLDED)
			fprintf(t->fp, "\n(%zu smaller site%s) ", s->nfolded,
			    s->nfolded == 1 ? "" : "s");
		else
			fprintf(t->fp, "\n#%zu %s: ", i + 1,
			    ht_diff_status_name(s->status));
		text_change(t, "in use", s, HT_DIFF_INUSE_BYTES,
		    HT_DIFF_INUSE_OBJECTS);
		fputs("\n    ", t->fp);
		if (ht_diff_unknown(d, 0, HT_DIFF_ALLOC_BYTES) ||
		    ht_diff_unknown(d, 1, HT_DIFF_ALLOC_BYTES))
			fputs("allocated unknown", t->fp);
		else
			text_change(t, "allocated", s, HT_DIFF_ALLOC_BYTES,
			    HT_DIFF_ALLOC_OBJECTS);
		/* Where either side has some, and both count them. */
		if ((s->s[0].v[HT_DIFF_TEMP_OBJECTS] != 0 ||
			s->s[1].v[HT_DIFF_TEMP_OBJECTS] != 0) &&
		    !ht_diff_unknown(d, 0, HT_DIFF_TEMP_OBJECTS) &&
		    !ht_diff_unknown(d, 1, HT_DIFF_TEMP_OBJECTS)) {
			fputs("\n    ", t->fp);
			text_count(t, "short-lived", s, HT_DIFF_TEMP_OBJECTS);
		}
		fprintf(t->fp, "\n    %" PRIu64 " -> %" PRIu64 " samples; ",
		    s->s[0].v[HT_DIFF_SAMPLES], s->s[1].v[HT_DIFF_SAMPLES]);
		if (d->exact)
			fputs("exact\n", t->fp);
		else if (d->floor)
			fputs("a change of floors: no interval\n", t->fp);
		else {
			ht_diff_interval(d, &s->s[0], &s->s[1], &lo, &hi);
			fprintf(t->fp, "in use change 95%% %s..%s\n",
			    delta_str(t, lo, 1, 0, a, sizeof(a)),
			    delta_str(t, hi, 1, 0, b, sizeof(b)));
		}
		if (s->status == HT_DIFF_FOLDED)
			continue;
		k = ht_diff_site_side(s);
		if ((nfr = ht_text_frames(t->fp, &d->v[k], s->row[k])) < 0)
			return -1;
		if (nfr == 0)
			fprintf(t->fp, "      %s\n",
			    ht_view_row_name(s->row[k], a, sizeof(a)));
	}
	return 0;
}

int
ht_diff_text(FILE *fp, struct ht_diff *d, const struct ht_diff_opts *opts)
{
	struct text t = { fp, opts->raw_bytes, d->exact };

	text_summary(d, &t);
	if (!opts->detail)
		return 0;
	if (text_detail(d, &t) != 0)
		return -1;
	ht_text_notes(fp, d->v[0].sym, d->v[1].sym);
	ht_text_skipped_note(fp, &d->symbols);
	return 0;
}
