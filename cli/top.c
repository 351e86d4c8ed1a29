/*
 * The model of heaptool top (see top.h): the baseline, the latest
 * profile, the diff between them and the sites in the order asked for.
 */
#include "config.h"

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "top.h"

int
ht_top_sort_parse(const char *s, enum ht_top_sort *sort)
{
	int i;

	for (i = 0; i < HT_TOP_NSORTS; i++)
		if (strcmp(s, ht_top_sort_name((enum ht_top_sort)i)) == 0) {
			*sort = (enum ht_top_sort)i;
			return 0;
		}
	return -1;
}

const char *
ht_top_sort_name(enum ht_top_sort sort)
{
	switch (sort) {
	case HT_TOP_GROWTH:
		return "growth";
	case HT_TOP_ALLOC:
		return "alloc";
	default:
		return "inuse";
	}
}

void
ht_top_init(struct ht_top *t, enum ht_top_sort sort)
{
	memset(t, 0, sizeof(*t));
	t->sort = sort;
}

/* Free what the sides no longer use among the n profiles and
 * symbolizers of old (each freed once, though it may be there twice). */
static void
release(struct ht_top *t, struct ht_profile *const *prof,
    struct ht_sym *const *sym, int n)
{
	int i, j, seen;

	for (i = 0; i < n; i++) {
		for (seen = 0, j = 0; j < i; j++)
			seen |= prof[j] == prof[i];
		if (!seen && prof[i] != NULL && prof[i] != t->base &&
		    prof[i] != t->cur)
			ht_profile_free(prof[i]);
		for (seen = 0, j = 0; j < i; j++)
			seen |= sym[j] == sym[i];
		if (!seen && sym[i] != NULL && sym[i] != t->bsym &&
		    sym[i] != t->csym)
			ht_sym_free(sym[i]);
	}
}

void
ht_top_free(struct ht_top *t)
{
	struct ht_profile *prof[2] = { t->base, t->cur };
	struct ht_sym *sym[2] = { t->bsym, t->csym };

	if (t->diff != NULL) {
		ht_diff_free(t->diff);
		free(t->diff);
	}
	free(t->sites);
	t->base = t->cur = NULL;
	t->bsym = t->csym = NULL;
	release(t, prof, sym, 2);
	memset(t, 0, sizeof(*t));
}

int
ht_top_sym_fits(const struct ht_top *t, const struct ht_profile *prof)
{
	return t->cur != NULL && t->csym != NULL &&
	    ht_profile_same_modules(t->cur, prof);
}

static uint64_t
cmp_key(const struct ht_top *t, const struct ht_top_site *s)
{
	switch (t->sort) {
	case HT_TOP_GROWTH:
		/* Signed growth as an order-preserving unsigned key. */
		return (uint64_t)s->growth ^ (1ULL << 63);
	case HT_TOP_ALLOC:
		return s->alloc_bytes;
	default:
		return s->inuse_bytes;
	}
}

/* The chosen figure, the largest first; the agent's fold last; ties by
 * bytes in use, then by id, so that equal figures keep one order from
 * refresh to refresh. */
static int
site_cmp(const void *a, const void *b, void *ctx)
{
	const struct ht_top *t = ctx;
	const struct ht_top_site *x = a, *y = b;
	int fx = x->ds->status == HT_DIFF_FOLDED;
	int fy = y->ds->status == HT_DIFF_FOLDED;
	uint64_t kx, ky;

	if (fx != fy)
		return fx ? 1 : -1;
	kx = cmp_key(t, x);
	ky = cmp_key(t, y);
	if (kx != ky)
		return kx > ky ? -1 : 1;
	if (x->inuse_bytes != y->inuse_bytes)
		return x->inuse_bytes > y->inuse_bytes ? -1 : 1;
	if (x->id != y->id)
		return x->id < y->id ? -1 : 1;
	return 0;
}

void
ht_top_set_sort(struct ht_top *t, enum ht_top_sort sort)
{
	t->sort = sort;
	if (t->nsites > 1)
		qsort_r(t->sites, t->nsites, sizeof(*t->sites), site_cmp, t);
}

/* The diff from the baseline to the latest profile, and its sites. */
static int
rebuild(struct ht_top *t)
{
	struct ht_diff_opts dopts;
	struct ht_top_site *sites;
	struct ht_diff *d;
	const struct ht_diff_site *ds;
	size_t i;

	memset(&dopts, 0, sizeof(dopts));
	dopts.fold = t->fold;
	if ((d = malloc(sizeof(*d))) == NULL)
		return -1;
	/* Every site (no --top): the view sorts by its own measures. */
	if (ht_diff_build(d, t->base, t->bsym, t->cur, t->csym, &dopts) != 0) {
		free(d);
		return -1;
	}
	if ((sites = calloc(d->nshown + 1, sizeof(*sites))) == NULL) {
		ht_diff_free(d);
		free(d);
		errno = ENOMEM;
		return -1;
	}
	for (i = 0; i < d->nshown; i++) {
		ds = d->shown[i];
		sites[i].ds = ds;
		/* 0 is the screen's "no site chosen". */
		sites[i].id = ds->hash != 0 ? ds->hash : 1;
		sites[i].inuse_bytes = ds->s[1].v[HT_DIFF_INUSE_BYTES];
		sites[i].inuse_objects = ds->s[1].v[HT_DIFF_INUSE_OBJECTS];
		sites[i].alloc_bytes = ds->s[1].v[HT_DIFF_ALLOC_BYTES];
		sites[i].samples = ds->s[1].v[HT_DIFF_SAMPLES];
		sites[i].growth = ht_diff_change(ds->s, HT_DIFF_INUSE_BYTES);
	}
	if (t->diff != NULL) {
		ht_diff_free(t->diff);
		free(t->diff);
	}
	free(t->sites);
	t->diff = d;
	t->sites = sites;
	t->nsites = d->nshown;
	t->elapsed_s = t->cur->meta.end_ns > t->base->meta.end_ns ?
	    (double)(t->cur->meta.end_ns - t->base->meta.end_ns) / 1e9 :
	    0;
	ht_top_set_sort(t, t->sort);
	return 0;
}

int
ht_top_update(struct ht_top *t, struct ht_profile *prof, struct ht_sym *sym)
{
	struct ht_profile *old[3] = { t->cur, t->base, prof };
	struct ht_sym *olds[3] = { t->csym, t->bsym, sym };
	int newbase;

	newbase = t->base == NULL || t->base->meta.epoch != prof->meta.epoch ||
	    t->base->meta.pid != prof->meta.pid;
	t->cur = prof;
	t->csym = sym;
	if (newbase) {
		t->why = t->base == NULL ? HT_TOP_BASE_START :
					   HT_TOP_BASE_SESSION;
		t->base = prof;
		t->bsym = sym;
	}
	if (rebuild(t) != 0) {
		/* Keep the last state; what was given goes. */
		t->cur = old[0];
		t->csym = olds[0];
		t->base = old[1];
		t->bsym = olds[1];
		release(t, old, olds, 3);
		return -1;
	}
	t->refreshes++;
	release(t, old, olds, 3);
	return 0;
}

int
ht_top_baseline(struct ht_top *t)
{
	struct ht_profile *old[1] = { t->base };
	struct ht_sym *olds[1] = { t->bsym };
	int why = t->why;

	if (t->cur == NULL)
		return 0;
	t->base = t->cur;
	t->bsym = t->csym;
	t->why = HT_TOP_BASE_USER;
	if (rebuild(t) != 0) {
		t->base = old[0];
		t->bsym = olds[0];
		t->why = why;
		return -1;
	}
	release(t, old, olds, 1);
	return 0;
}

struct ht_view *
ht_top_view(struct ht_top *t)
{
	return t->diff != NULL ? &t->diff->v[1] : NULL;
}

double
ht_top_rate(const struct ht_top *t, int64_t g)
{
	return t->elapsed_s > 0 ? (double)g / t->elapsed_s : 0;
}

int64_t
ht_top_total_growth(const struct ht_top *t)
{
	if (t->diff == NULL)
		return 0;
	return ht_diff_change(t->diff->tot, HT_DIFF_INUSE_BYTES);
}

int
ht_top_frames(struct ht_top *t, const struct ht_top_site *s,
    const struct ht_sym_frame **frames)
{
	int side = ht_diff_site_side(s->ds);
	const struct ht_view_row *r = s->ds->row[side];

	if (r == NULL || s->ds->status == HT_DIFF_FOLDED)
		return 0;
	return ht_view_frames(&t->diff->v[side], r, frames);
}

const char *
ht_top_site_name(struct ht_top *t, const struct ht_top_site *s, char *buf,
    size_t len)
{
	const struct ht_view_row *r = s->ds->row[ht_diff_site_side(s->ds)];
	const struct ht_sym_frame *fr;

	if (s->ds->status == HT_DIFF_FOLDED) {
		snprintf(buf, len, "(%zu sites the agent folded)",
		    s->ds->nfolded);
		return buf;
	}
	if ((fr = ht_top_site_frame(t, s)) == NULL)
		return r != NULL ? ht_view_row_name(r, buf, len) :
				   (snprintf(buf, len, "[no stack]"), buf);
	return ht_view_frame_name(fr, buf, len);
}

const struct ht_sym_frame *
ht_top_site_frame(struct ht_top *t, const struct ht_top_site *s)
{
	const struct ht_view_row *r = s->ds->row[ht_diff_site_side(s->ds)];
	const struct ht_sym_frame *fr;
	int n, k;

	if (r == NULL || s->ds->status == HT_DIFF_FOLDED)
		return NULL;
	/* Folded first: ht_view_fold's lookups come before the frames'. */
	if ((k = ht_view_fold(&t->diff->v[ht_diff_site_side(s->ds)], r, NULL)) <
		0 ||
	    (n = ht_top_frames(t, s, &fr)) <= 0)
		return NULL;
	return &fr[k > 0 && k < n ? k : 0];
}
