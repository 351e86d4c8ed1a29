/*
 * The view (see view.h).
 */
#include "config.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "allocnames.h"
#include "sampling.h"
#include "view.h"

/* Modules that allocate on their callers' behalf: a site is charged to the
 * first module of its stack that is none of these. */
static const char *const runtime_modules[] = {
	"libc.so",
	"libc-",
	"libstdc++.so",
	"ld-linux",
	"libheaptool-agent.so",
};

/* *to += v, stopping at UINT64_MAX rather than wrapping: figures of a
 * hostile or corrupt profile may be anything, and a sum that wrapped
 * would be a small, plausible and wrong number. */
static void
sat_add(uint64_t *to, uint64_t v, int *saturated)
{
	if (*to > UINT64_MAX - v)
		*saturated = 1;
	*to = ht_view_sat_add(*to, v);
}

static void
figures_add(struct ht_view_figures *to, const struct ht_view_figures *f)
{
	to->saturated |= f->saturated;
	sat_add(&to->inuse_bytes, f->inuse_bytes, &to->saturated);
	sat_add(&to->inuse_objects, f->inuse_objects, &to->saturated);
	sat_add(&to->alloc_bytes, f->alloc_bytes, &to->saturated);
	sat_add(&to->alloc_objects, f->alloc_objects, &to->saturated);
	sat_add(&to->samples, f->samples, &to->saturated);
	sat_add(&to->live_samples, f->live_samples, &to->saturated);
	sat_add(&to->temp_objects, f->temp_objects, &to->saturated);
	sat_add(&to->temp_samples, f->temp_samples, &to->saturated);
	/* Samples are independent, so the Horvitz-Thompson variances of
	 * disjoint sets of sites add up. */
	to->inuse_var += f->inuse_var;
}

uint64_t
ht_view_value(const struct ht_view *v, const struct ht_view_figures *f)
{
	switch (v->opts.sort) {
	case HT_VIEW_ALLOC:
		return f->alloc_bytes;
	case HT_VIEW_OBJECTS:
		return f->inuse_objects;
	case HT_VIEW_TEMPORARY:
		return f->temp_objects;
	default:
		return f->inuse_bytes;
	}
}

const char *
ht_view_value_name(const struct ht_view *v)
{
	switch (v->opts.sort) {
	case HT_VIEW_ALLOC:
		return "bytes allocated";
	case HT_VIEW_OBJECTS:
		return "objects in use";
	case HT_VIEW_TEMPORARY:
		return "short-lived allocations";
	default:
		return "bytes in use";
	}
}

int
ht_view_meta_exact(const struct ht_meta *m)
{
	return m->rate == 1 && m->dropped_samples == 0 &&
	    m->backend < HT_BACKEND_JEMALLOC;
}

int
ht_view_meta_floor(const struct ht_meta *m)
{
	return m->rate == 1 && m->backend >= HT_BACKEND_JEMALLOC;
}

void
ht_view_interval(const struct ht_view *v, const struct ht_view_figures *f,
    uint64_t *lo, uint64_t *hi)
{
	const struct ht_meta *m = &v->prof->meta;
	double l, h;

	ht_sample_interval((double)f->inuse_bytes, f->inuse_var, &l, &h);
	*lo = ht_sample_round(l);
	*hi = ht_sample_round(h);
	if (m->dropped_samples > 0)
		*hi = ht_view_sat_add(*hi, m->dropped_bytes);
	if (ht_view_meta_floor(m))
		*hi = UINT64_MAX;
}

/* The columns of the sort, most significant first. */
static void
sort_keys(enum ht_view_sort sort, const struct ht_view_figures *f,
    uint64_t k[3])
{
	switch (sort) {
	case HT_VIEW_ALLOC:
		k[0] = f->alloc_bytes;
		k[1] = f->inuse_bytes;
		k[2] = f->alloc_objects;
		break;
	case HT_VIEW_OBJECTS:
		k[0] = f->inuse_objects;
		k[1] = f->alloc_objects;
		k[2] = f->inuse_bytes;
		break;
	case HT_VIEW_TEMPORARY:
		k[0] = f->temp_objects;
		k[1] = f->alloc_objects;
		k[2] = f->inuse_bytes;
		break;
	default:
		k[0] = f->inuse_bytes;
		k[1] = f->alloc_bytes;
		k[2] = f->samples;
		break;
	}
}

static int
figures_cmp(enum ht_view_sort sort, const struct ht_view_figures *x,
    const struct ht_view_figures *y)
{
	uint64_t a[3], b[3];
	int i;

	sort_keys(sort, x, a);
	sort_keys(sort, y, b);
	for (i = 0; i < 3; i++)
		if (a[i] != b[i])
			return a[i] > b[i] ? -1 : 1;
	return 0;
}

/* qsort has no context argument: the sort of the view being built.  Views
 * are built one at a time. */
static enum ht_view_sort cur_sort;

static int
row_cmp(const void *a, const void *b)
{
	const struct ht_view_row *x = a, *y = b;
	uint32_t i, n;
	int c;

	if ((c = figures_cmp(cur_sort, &x->f, &y->f)) != 0)
		return c;
	/* The same profile always prints in the same order. */
	if (x->first != y->first)
		return x->first < y->first ? -1 : 1;
	n = x->nframes < y->nframes ? x->nframes : y->nframes;
	for (i = 0; i < n; i++)
		if (x->frames[i] != y->frames[i])
			return x->frames[i] < y->frames[i] ? -1 : 1;
	/* (The reader refuses a site of more than HT_PROFILE_MAX_FRAMES,
	 * so the rows' counts are the sites'.) */
	if (x->nframes != y->nframes)
		return x->nframes < y->nframes ? -1 : 1;
	return 0;
}

static int
module_cmp(const void *a, const void *b)
{
	const struct ht_view_module *x = a, *y = b;
	int c;

	if ((c = figures_cmp(cur_sort, &x->f, &y->f)) != 0)
		return c;
	return strcmp(x->name, y->name);
}

static int
thread_cmp(const void *a, const void *b)
{
	const struct ht_thread_rec *x = *(const struct ht_thread_rec *const *)a;
	const struct ht_thread_rec *y = *(const struct ht_thread_rec *const *)b;

	if (x->inuse_bytes != y->inuse_bytes)
		return x->inuse_bytes > y->inuse_bytes ? -1 : 1;
	if (x->alloc_bytes != y->alloc_bytes)
		return x->alloc_bytes > y->alloc_bytes ? -1 : 1;
	return x->tid < y->tid ? -1 : x->tid > y->tid;
}

static int
is_runtime(const char *name)
{
	size_t i, n;

	for (i = 0; i < sizeof(runtime_modules) / sizeof(runtime_modules[0]);
	     i++) {
		n = strlen(runtime_modules[i]);
		if (strncmp(name, runtime_modules[i], n) == 0)
			return 1;
	}
	return 0;
}

static uint32_t
site_nframes(const struct ht_profile_site *s)
{
	return s->nframes < HT_PROFILE_MAX_FRAMES ? s->nframes :
						    HT_PROFILE_MAX_FRAMES;
}

/*
 * The module a site is charged to: that of its first frame outside the C
 * and C++ runtimes, the loader and the agent (an allocation made by
 * strdup or std::vector belongs to whoever called them); failing that,
 * that of its first frame, or "[unknown]".
 */
static const char *
site_module(struct ht_sym *sym, const struct ht_profile_site *s)
{
	const char *first = NULL, *name;
	uint32_t i, n;

	/* The agent kept no stack of the sites it folded. */
	if (s->folded > 0)
		return "[folded sites]";
	n = site_nframes(s);
	for (i = 0; i < n; i++) {
		if ((name = ht_sym_module_name(sym, s->frames[i])) == NULL)
			continue;
		if (!is_runtime(name))
			return name;
		if (first == NULL)
			first = name;
	}
	return first != NULL ? first : "[unknown]";
}

/* The modules charged so far, by name: a profile may name 65,536. */
struct charges {
	struct ht_view *v;
	struct ht_view_index index;
	size_t cap;
	const char *key;
};

static int
charge_eq(void *ctx, uint32_t id)
{
	struct charges *c = ctx;

	return strcmp(c->v->mods[id].name, c->key) == 0;
}

static int
module_charge(struct charges *c, const char *name,
    const struct ht_view_figures *f)
{
	struct ht_view *v = c->v;
	struct ht_view_module *m;
	uint64_t h = ht_view_hash(HT_VIEW_HASH0, name, strlen(name));
	int64_t i;

	c->key = name;
	if ((i = ht_view_index_find(&c->index, h, charge_eq, c)) < 0) {
		if (v->nmods == c->cap) {
			c->cap = c->cap == 0 ? 16 : c->cap * 2;
			m = reallocarray(v->mods, c->cap, sizeof(*m));
			if (m == NULL)
				return -1;
			v->mods = m;
		}
		if (ht_view_index_add(&c->index, h, (uint32_t)v->nmods) != 0)
			return -1;
		i = (int64_t)v->nmods++;
		memset(&v->mods[i], 0, sizeof(v->mods[i]));
		v->mods[i].name = name;
	}
	figures_add(&v->mods[i].f, f);
	return 0;
}

/* A site's figures now, or at the peak. */
static void
site_figures(const struct ht_view *v, const struct ht_profile_site *s,
    struct ht_view_figures *f)
{
	memset(f, 0, sizeof(*f));
	f->alloc_bytes = s->alloc_bytes;
	f->alloc_objects = s->alloc_objects;
	f->samples = s->samples;
	f->temp_objects = s->temp_objects;
	f->temp_samples = s->temp_samples;
	if (!v->opts.at_peak) {
		f->inuse_bytes = s->inuse_bytes;
		f->inuse_objects = s->inuse_objects;
		f->live_samples = s->live_samples;
		f->inuse_var = s->inuse_var > 0 ? s->inuse_var : 0;
		return;
	}
	f->inuse_bytes = s->peak_inuse_bytes;
	f->inuse_objects = s->peak_inuse_objects;
	/* At rate 1 every object in use is a live sample (every object the
	 * tables kept, when some were dropped). */
	f->live_samples = v->every ? s->peak_inuse_objects : 0;
	/* A sample of s bytes has variance (1 - p) / p * s per byte it
	 * stands for: the site's ratio over all its samples, times the
	 * bytes at the peak. */
	if (s->alloc_var > 0 && s->alloc_bytes > 0)
		f->inuse_var = s->alloc_var / (double)s->alloc_bytes *
		    (double)s->peak_inuse_bytes;
}

static int
below(const struct ht_view *v, const struct ht_view_row *r)
{
	return r->f.inuse_bytes < v->opts.threshold &&
	    r->f.alloc_bytes < v->opts.threshold;
}

/* The tags of the profile, by id: every TAG record's, and every id a
 * site has.  Returns 0, or -1 out of memory. */
static int
tags_build(struct ht_view *v)
{
	const struct ht_profile *prof = v->prof;
	size_t i, n = 0;
	uint32_t k;

	for (i = 0; i < prof->ntags; i++)
		if (prof->tags[i].id < (1u << 24) && prof->tags[i].id >= n)
			n = prof->tags[i].id + 1;
	for (i = 0; i < prof->nsites; i++)
		if (prof->sites[i].tag < (1u << 24) && prof->sites[i].tag >= n)
			n = prof->sites[i].tag + 1;
	if (n == 0)
		return 0;
	if ((v->tags = calloc(n, sizeof(*v->tags))) == NULL)
		return -1;
	v->ntags = n;
	for (i = 0; i < n; i++)
		v->tags[i].id = (uint32_t)i;
	v->tags[0].name = "untagged";
	for (i = 0; i < prof->ntags; i++) {
		const struct ht_tag_rec *t = &prof->tags[i];

		if (t->id >= n)
			continue;
		if (t->id != 0)
			v->tags[t->id].name = t->name;
		for (k = 0; k < 2; k++) {
			v->tags[t->id].peak_bytes[k] = t->peak_bytes[k];
			v->tags[t->id].peak_objects[k] = t->peak_objects[k];
		}
	}
	return 0;
}

/* Row r's figures into its tag's line. */
static void
tags_add(struct ht_view *v, const struct ht_view_row *r)
{
	const struct ht_profile_site *s = r->site;
	struct ht_view_tag *t;
	uint32_t k;

	if (s->tag >= v->ntags)
		return;
	t = &v->tags[s->tag];
	k = s->kind != 0;
	figures_add(&t->f[k], &r->f);
	t->seen = 1;
	if (s->tag != 0 || s->kind != 0)
		v->has_tags = 1;
	/* A peak never below what the line holds now (the agent's peak of
	 * a line may be missing: no memory for its line, or an older
	 * backend). */
	if (t->peak_bytes[k] < t->f[k].inuse_bytes) {
		t->peak_bytes[k] = t->f[k].inuse_bytes;
		t->peak_objects[k] = t->f[k].inuse_objects;
	}
}

const char *
ht_view_tag_name(const struct ht_view *v, uint32_t id, char *buf, size_t len)
{
	if (id < v->ntags && v->tags[id].name != NULL)
		return v->tags[id].name;
	if (id == 0)
		return "untagged";
	snprintf(buf, len, "tag-%" PRIu32, id);
	return buf;
}

int64_t
ht_view_tag_find(const struct ht_profile *prof, const char *name)
{
	size_t i;

	if (strcmp(name, "untagged") == 0)
		return 0;
	for (i = 0; i < prof->ntags; i++)
		if (prof->tags[i].id != 0 &&
		    strcmp(prof->tags[i].name, name) == 0)
			return prof->tags[i].id;
	return -1;
}

const char *
ht_view_kind_name(uint32_t kind)
{
	return kind != 0 ? "arena" : "malloc";
}

const char *
ht_view_tag_root(const struct ht_view *v, const struct ht_view_row *r,
    char *buf, size_t len)
{
	char nb[32];

	if (r->site == NULL)
		snprintf(buf, len, "tag (several)");
	else
		snprintf(buf, len, "tag %s (%s)",
		    ht_view_tag_name(v, r->site->tag, nb, sizeof(nb)),
		    ht_view_kind_name(r->site->kind));
	return buf;
}

void
ht_view_free(struct ht_view *v)
{
	free(v->tags);
	free(v->rows);
	free(v->mods);
	free(v->threads);
	free(v->frames);
	memset(v, 0, sizeof(*v));
}

int
ht_view_build(struct ht_view *v, const struct ht_profile *prof,
    struct ht_sym *sym, const struct ht_view_opts *opts)
{
	const struct ht_profile_site *s;
	struct ht_view_row *r, fold;
	struct charges ch;
	size_t i, n, nkept;

	memset(v, 0, sizeof(*v));
	memset(&ch, 0, sizeof(ch));
	ch.v = v;
	v->prof = prof;
	v->sym = sym;
	v->opts = *opts;
	v->every = prof->meta.rate == 1;
	v->exact = ht_view_meta_exact(&prof->meta);
	v->live_known = !opts->at_peak || v->every;
	v->temp_known = ht_profile_temporary_known(prof);
	/* One more for the folded remainder. */
	if ((v->rows = calloc(prof->nsites + 1, sizeof(*v->rows))) == NULL ||
	    tags_build(v) != 0)
		goto out_nomem;
	for (i = n = 0; i < prof->nsites; i++) {
		s = &prof->sites[i];
		if (opts->filter_tag && s->tag != opts->tag)
			continue;
		r = &v->rows[n++];
		r->site = s;
		r->frames = s->frames;
		r->nframes = site_nframes(s);
		r->first = r->nframes > 0 ? s->frames[0] : 0;
		site_figures(v, s, &r->f);
		sat_add(&v->now_inuse_bytes, s->inuse_bytes,
		    &v->total.saturated);
		/* A record that stands for sites the agent folded (those
		 * below a dump's threshold) counts as those sites. */
		v->nsites += s->folded > 0 ? s->folded : 1;
	}
	cur_sort = opts->sort;
	if (!opts->unsorted)
		qsort(v->rows, n, sizeof(*v->rows), row_cmp);

	/* Keep the first top rows that are not below the threshold, in
	 * order; fold the others into one row, which never drops bytes. */
	memset(&fold, 0, sizeof(fold));
	nkept = 0;
	for (i = 0; i < n; i++) {
		r = &v->rows[i];
		figures_add(&v->total, &r->f);
		tags_add(v, r);
		if (module_charge(&ch, site_module(sym, r->site), &r->f) != 0)
			goto out_nomem;
		if ((opts->top == 0 || nkept < opts->top) && !below(v, r) &&
		    r->site->folded == 0)
			v->rows[nkept++] = *r;
		else {
			figures_add(&fold.f, &r->f);
			fold.nfolded += r->site->folded > 0 ? r->site->folded :
							      1;
		}
	}
	v->nrows = nkept;
	if (fold.nfolded > 0)
		v->rows[v->nrows++] = fold;
	if (v->nmods > 1)
		qsort(v->mods, v->nmods, sizeof(*v->mods), module_cmp);

	if (prof->nthreads > 0 && !opts->at_peak) {
		v->threads = calloc(prof->nthreads, sizeof(*v->threads));
		if (v->threads == NULL)
			goto out_nomem;
		for (i = 0; i < prof->nthreads; i++)
			v->threads[i] = &prof->threads[i];
		qsort(v->threads, prof->nthreads, sizeof(*v->threads),
		    thread_cmp);
		v->nthreads = prof->nthreads;
	}
	ht_view_index_free(&ch.index);
	return 0;

out_nomem:
	ht_view_index_free(&ch.index);
	ht_view_free(v);
	errno = ENOMEM;
	return -1;
}

uint32_t
ht_view_addrs(const struct ht_view_row *r, const uint64_t **addrs)
{
	*addrs = r->site != NULL ? r->frames : NULL;
	return r->site != NULL ? r->nframes : 0;
}

int
ht_view_frames(struct ht_view *v, const struct ht_view_row *r,
    const struct ht_sym_frame **frames)
{
	const struct ht_sym_frame *fr;
	struct ht_sym_frame *p;
	size_t n = 0, cap;
	uint32_t k, nk;
	int nfr;

	*frames = v->frames;
	if (r->site == NULL)
		return 0;
	nk = site_nframes(r->site);
	for (k = 0; k < nk; k++) {
		if ((nfr = ht_sym_lookup(v->sym, r->site->frames[k], &fr)) < 0)
			goto out_nomem;
		if (n + (size_t)nfr > v->frames_cap) {
			cap = v->frames_cap == 0 ? 128 : v->frames_cap;
			while (cap < n + (size_t)nfr)
				cap *= 2;
			if ((p = reallocarray(v->frames, cap, sizeof(*p))) ==
			    NULL)
				goto out_nomem;
			v->frames = p;
			v->frames_cap = cap;
		}
		memcpy(&v->frames[n], fr, (size_t)nfr * sizeof(*fr));
		n += (size_t)nfr;
	}
	*frames = v->frames;
	return (int)n;

out_nomem:
	errno = ENOMEM;
	return -1;
}

int
ht_view_fold(struct ht_view *v, const struct ht_view_row *r,
    struct ht_view_at *at)
{
	const struct ht_sym_frame *fr;
	struct ht_view_at none = { 0, 0 };
	uint32_t k, nk;
	int nfr, i, n = 0;

	if (at == NULL)
		at = &none;
	at->addr = 0;
	at->frame = 0;
	if (v->opts.fold == NULL || r->site == NULL)
		return 0;
	nk = site_nframes(r->site);
	for (k = 0; k < nk; k++) {
		if ((nfr = ht_sym_lookup(v->sym, r->site->frames[k], &fr)) <
		    0) {
			errno = ENOMEM;
			return -1;
		}
		for (i = 0; i < nfr; i++, n++)
			if (!ht_fold_match(v->opts.fold, fr[i].function)) {
				at->addr = k;
				at->frame = i;
				return n;
			}
	}
	/* Wrappers all the way out: nothing else to show. */
	return 0;
}

int
ht_view_symbolize(struct ht_view *v)
{
	struct ht_view_symbols *st = &v->symbols;
	const struct ht_sym_frame *fr;
	uint32_t k, n;
	size_t i;

	memset(st, 0, sizeof(*st));
	st->max = ht_sym_max(v->sym);
	for (i = 0; i < v->nrows; i++) {
		if (i + HT_VIEW_AHEAD < v->nrows)
			ht_view_prefetch(&v->rows[i + HT_VIEW_AHEAD]);
		if (v->rows[i].site == NULL)
			continue;
		n = v->rows[i].nframes;
		for (k = 0; k < n; k++) {
			if (ht_sym_lookup(v->sym, v->rows[i].frames[k], &fr) <
			    0) {
				errno = ENOMEM;
				return -1;
			}
			st->frames++;
			if (fr[0].flags & HT_SYM_SKIPPED)
				st->skipped++;
		}
	}
	return 0;
}

/* Append n bytes of s to buf (len bytes, at bytes used), cut to fit
 * with its NUL, as snprintf cuts.  Returns the bytes used. */
static size_t
append(char *buf, size_t len, size_t at, const char *s, size_t n)
{
	if (at + 1 >= len)
		return at;
	if (n > len - 1 - at)
		n = len - 1 - at;
	memcpy(buf + at, s, n);
	buf[at + n] = '\0';
	return at + n;
}

const char *
ht_view_frame_name(const struct ht_sym_frame *f, char *buf, size_t len)
{
	static const char digits[] = "0123456789abcdef";
	char hex[20];
	uint64_t v = f->module != NULL ? f->offset : f->address;
	size_t k = sizeof(hex), at = 0;

	if (f->function != NULL)
		return f->function;
	/* "module+0x1a2b" or "0x401000" without snprintf, which took a
	 * tenth of an export of millions of unnamed frames. */
	do {
		hex[--k] = digits[v & 15];
		v >>= 4;
	} while (v != 0);
	if (len > 0)
		buf[0] = '\0';
	if (f->module != NULL) {
		at = append(buf, len, at, f->module, strlen(f->module));
		at = append(buf, len, at, "+", 1);
	}
	at = append(buf, len, at, "0x", 2);
	(void)append(buf, len, at, hex + k, sizeof(hex) - k);
	return buf;
}

const char *
ht_view_row_name(const struct ht_view_row *r, char *buf, size_t len)
{
	if (r->site == NULL)
		snprintf(buf, len, "(%zu smaller site%s)", r->nfolded,
		    r->nfolded == 1 ? "" : "s");
	else
		snprintf(buf, len, "[no stack]");
	return buf;
}

uint64_t
ht_view_peak_bytes(const struct ht_view *v)
{
	uint64_t p = v->prof->meta.peak_inuse_bytes;

	/* The peak and the figures are rounded from different sums: clamp
	 * rather than print a contradiction. */
	if (p < v->total.inuse_bytes)
		p = v->total.inuse_bytes;
	if (p < v->now_inuse_bytes)
		p = v->now_inuse_bytes;
	return p;
}

uint64_t
ht_view_freed_bytes(const struct ht_view *v)
{
	return v->total.alloc_bytes > v->now_inuse_bytes ?
	    v->total.alloc_bytes - v->now_inuse_bytes :
	    0;
}

uint64_t
ht_view_predates_bytes(const struct ht_view *v)
{
	uint64_t heap = v->prof->meta.heap_inuse_bytes;

	return heap > v->now_inuse_bytes ? heap - v->now_inuse_bytes : 0;
}

uint64_t
ht_view_hash(uint64_t h, const void *p, size_t n)
{
	const unsigned char *s = p;
	size_t i;

	for (i = 0; i < n; i++) {
		h ^= s[i];
		h *= 0x100000001b3ULL;
	}
	return h;
}

int64_t
ht_view_index_find(const struct ht_view_index *x, uint64_t hash,
    int (*eq)(void *, uint32_t), void *ctx)
{
	size_t i, mask;

	if (x->cap == 0)
		return -1;
	mask = x->cap - 1;
	for (i = hash & mask; x->slots[i] != 0; i = (i + 1) & mask)
		if (x->hashes[i] == hash && eq(ctx, x->slots[i] - 1))
			return x->slots[i] - 1;
	return -1;
}

static void
index_put(uint32_t *slots, uint64_t *hashes, size_t cap, uint64_t hash,
    uint32_t slot)
{
	size_t i, mask = cap - 1;

	for (i = hash & mask; slots[i] != 0; i = (i + 1) & mask)
		continue;
	slots[i] = slot;
	hashes[i] = hash;
}

int
ht_view_index_add(struct ht_view_index *x, uint64_t hash, uint32_t id)
{
	uint32_t *slots;
	uint64_t *hashes;
	size_t cap, i;

	/* Keep the load at most one half: probes stay short. */
	if ((x->n + 1) * 2 > x->cap) {
		cap = x->cap == 0 ? 256 : x->cap * 2;
		slots = calloc(cap, sizeof(*slots));
		hashes = calloc(cap, sizeof(*hashes));
		if (slots == NULL || hashes == NULL) {
			free(slots);
			free(hashes);
			errno = ENOMEM;
			return -1;
		}
		for (i = 0; i < x->cap; i++)
			if (x->slots[i] != 0)
				index_put(slots, hashes, cap, x->hashes[i],
				    x->slots[i]);
		free(x->slots);
		free(x->hashes);
		x->slots = slots;
		x->hashes = hashes;
		x->cap = cap;
	}
	index_put(x->slots, x->hashes, x->cap, hash, id + 1);
	x->n++;
	return 0;
}

void
ht_view_index_free(struct ht_view_index *x)
{
	free(x->slots);
	free(x->hashes);
	memset(x, 0, sizeof(*x));
}
