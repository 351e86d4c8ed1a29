/*
 * The accounting of cli/view.c, the model every report format prints
 * (view.h): a summary is the sum of its detail in every column, folding
 * (--top, --threshold) moves sites into one row and never drops or adds a
 * byte, and nothing is ever negative.
 *
 * Profiles are written with src/profile.c's writer into memory and decoded
 * with src/profile-read.c, as a report reads a file.  The symbolizer is a
 * stand-in defined here (the view needs only ht_sym_module_name and
 * ht_sym_lookup): a module is found by address among the profile's module
 * records, and a frame is its address, so no libdw is involved.
 *
 *   - a hand-made profile with every kind of site (charged to the
 *     executable past a libc frame, to a library, to libc alone, to no
 *     module, and a record of sites the agent folded): every figure of the
 *     summary, of the fold for --top 2 and for --threshold 1000, of the
 *     modules and at the peak, computed by hand;
 *   - a profile whose sampled estimates have more in use than allocated,
 *     and an allocator view below what is in use: freed and "predates"
 *     are 0, not a wrapped-around difference;
 *   - 300 profiles from a fixed seed, each viewed under every sort, now
 *     and at the peak, with several --top and --threshold values: the
 *     properties above, and that the rows shown are the first rows of the
 *     unfolded view that pass the threshold, in the same order.
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "basic.h"
#include "profile.h"
#include "symbolize.h"
#include "view.h"

/* ---- the symbolizer's stand-in */

struct ht_sym {
	const struct ht_profile *prof;
	struct ht_sym_frame frame;
};

const char *
ht_sym_module_name(struct ht_sym *sym, uint64_t addr)
{
	const struct ht_module_rec *m;
	const char *slash;
	size_t i;

	for (i = 0; i < sym->prof->nmodules; i++) {
		m = &sym->prof->modules[i];
		if (addr >= m->start && addr < m->end) {
			slash = strrchr(m->path, '/');
			return slash != NULL ? slash + 1 : m->path;
		}
	}
	return NULL;
}

int
ht_sym_lookup(struct ht_sym *sym, uint64_t addr,
    const struct ht_sym_frame **frames)
{
	memset(&sym->frame, 0, sizeof(sym->frame));
	sym->frame.address = addr;
	sym->frame.module = ht_sym_module_name(sym, addr);
	*frames = &sym->frame;
	return 1;
}

size_t
ht_sym_max(const struct ht_sym *sym)
{
	(void)sym;
	return 0;
}

/* ---- profiles in memory */

#define APP	0x400000ull	  /* /usr/bin/app */
#define LIBC	0x7f0000000000ull /* libc.so.6 */
#define LIBFOO	0x7f1000000000ull /* libfoo.so.1 */
#define NOWHERE 0x1234ull	  /* in no module */
#define MODSIZE 0x100000ull

static const struct {
	const char *path;
	uint64_t start;
} modules[] = {
	{ "/usr/bin/app", APP },
	{ "/lib/x86_64-linux-gnu/libc.so.6", LIBC },
	{ "/opt/lib/libfoo.so.1", LIBFOO },
};
#define NMODULES (sizeof(modules) / sizeof(modules[0]))

struct buf {
	uint8_t *p;
	size_t len, cap;
};

static int
buf_flush(void *ctx, const void *data, size_t n)
{
	struct buf *b = ctx;

	if (b->len + n > b->cap) {
		b->cap = (b->len + n) * 2;
		if ((b->p = realloc(b->p, b->cap)) == NULL)
			bail("out of memory");
	}
	memcpy(b->p + b->len, data, n);
	b->len += n;
	return 0;
}

/* The profile of meta and sites, through the writer and the reader. */
static struct ht_profile *
make_profile(const struct ht_meta *meta, const struct ht_site_rec *sites,
    size_t nsites)
{
	static struct ht_module_rec mod;
	struct ht_pwriter w;
	struct ht_profile *p;
	struct buf b = { NULL, 0, 0 };
	uint8_t chunk[4096];
	char err[256];
	size_t i;

	ht_pw_init(&w, chunk, sizeof(chunk), buf_flush, &b);
	ht_pw_meta(&w, meta);
	for (i = 0; i < NMODULES; i++) {
		memset(&mod, 0, sizeof(mod));
		mod.start = modules[i].start;
		mod.end = modules[i].start + MODSIZE;
		mod.path = modules[i].path;
		ht_pw_module(&w, &mod);
	}
	for (i = 0; i < nsites; i++)
		ht_pw_site(&w, &sites[i]);
	if (ht_pw_finish(&w) != 0)
		bail("the profile writer failed");
	if ((p = ht_profile_decode(b.p, b.len, err, sizeof(err))) == NULL)
		bail("the profile does not decode: %s", err);
	free(b.p);
	return p;
}

static void
site(struct ht_site_rec *s, uint64_t inuse, uint64_t inuse_objects,
    uint64_t alloc, uint64_t alloc_objects, uint64_t samples, uint64_t live,
    double inuse_var, double alloc_var, uint64_t peak, uint64_t peak_objects)
{
	memset(s, 0, sizeof(*s));
	s->inuse_bytes = inuse;
	s->inuse_objects = inuse_objects;
	s->alloc_bytes = alloc;
	s->alloc_objects = alloc_objects;
	s->samples = samples;
	s->live_samples = live;
	s->inuse_var = inuse_var;
	s->alloc_var = alloc_var;
	s->peak_inuse_bytes = peak;
	s->peak_inuse_objects = peak_objects;
}

static struct ht_view *
view(const struct ht_profile *p, struct ht_sym *sym, enum ht_view_sort sort,
    size_t top, uint64_t threshold, int at_peak)
{
	static struct ht_view v;
	struct ht_view_opts o;

	memset(&o, 0, sizeof(o));
	o.sort = sort;
	o.top = top;
	o.threshold = threshold;
	o.at_peak = at_peak;
	sym->prof = p;
	if (ht_view_build(&v, p, sym, &o) != 0)
		bail("ht_view_build: out of memory");
	return &v;
}

/* ---- the columns of a view's figures */

#define NCOLS 6
static const char *const colname[NCOLS] = {
	"inuse_bytes",
	"inuse_objects",
	"alloc_bytes",
	"alloc_objects",
	"samples",
	"live_samples",
};

static void
cols(const struct ht_view_figures *f, uint64_t c[NCOLS])
{
	c[0] = f->inuse_bytes;
	c[1] = f->inuse_objects;
	c[2] = f->alloc_bytes;
	c[3] = f->alloc_objects;
	c[4] = f->samples;
	c[5] = f->live_samples;
}

/* What a view of p must total, from the site records and view.h's
 * contract: the figures now, or at the peak in use, where allocated
 * columns stay the session's and live samples are known at rate 1 only. */
static void
expected(const struct ht_profile *p, int at_peak, uint64_t c[NCOLS])
{
	const struct ht_profile_site *s;
	size_t i;

	memset(c, 0, NCOLS * sizeof(c[0]));
	for (i = 0; i < p->nsites; i++) {
		s = &p->sites[i];
		c[0] += at_peak ? s->peak_inuse_bytes : s->inuse_bytes;
		c[1] += at_peak ? s->peak_inuse_objects : s->inuse_objects;
		c[2] += s->alloc_bytes;
		c[3] += s->alloc_objects;
		c[4] += s->samples;
		c[5] += !at_peak      ? s->live_samples :
		    p->meta.rate == 1 ? s->peak_inuse_objects :
					0;
	}
}

static int
same_var(double a, double b)
{
	return fabs(a - b) <= 1e-9 * (fabs(a) + fabs(b)) + 1e-9;
}

static char why[512];

/* Is the summary the sum of the rows, and of the modules, in every
 * column?  NULL, or what is not. */
static const char *
sums(const struct ht_view *v)
{
	uint64_t t[NCOLS], r[NCOLS], m[NCOLS], c[NCOLS];
	double rv = 0, mv = 0;
	size_t i, k;

	cols(&v->total, t);
	memset(r, 0, sizeof(r));
	memset(m, 0, sizeof(m));
	for (i = 0; i < v->nrows; i++) {
		cols(&v->rows[i].f, c);
		for (k = 0; k < NCOLS; k++)
			r[k] += c[k];
		rv += v->rows[i].f.inuse_var;
	}
	for (i = 0; i < v->nmods; i++) {
		cols(&v->mods[i].f, c);
		for (k = 0; k < NCOLS; k++)
			m[k] += c[k];
		mv += v->mods[i].f.inuse_var;
	}
	for (k = 0; k < NCOLS; k++) {
		if (r[k] != t[k]) {
			snprintf(why, sizeof(why),
			    "%s: summary %llu, rows "
			    "%llu",
			    colname[k], (unsigned long long)t[k],
			    (unsigned long long)r[k]);
			return why;
		}
		if (m[k] != t[k]) {
			snprintf(why, sizeof(why),
			    "%s: summary %llu, modules "
			    "%llu",
			    colname[k], (unsigned long long)t[k],
			    (unsigned long long)m[k]);
			return why;
		}
	}
	if (!same_var(rv, v->total.inuse_var) ||
	    !same_var(mv, v->total.inuse_var)) {
		snprintf(why, sizeof(why),
		    "inuse_var: summary %g, rows %g, "
		    "modules %g",
		    v->total.inuse_var, rv, mv);
		return why;
	}
	return NULL;
}

/* Nothing negative, and nothing wrapped around: no figure above what the
 * whole profile holds.  NULL, or what is wrong. */
static const char *
nonnegative(const struct ht_view *v, const uint64_t want[NCOLS])
{
	uint64_t c[NCOLS], lo, hi;
	size_t i, k;

	for (i = 0; i <= v->nrows + v->nmods; i++) {
		const struct ht_view_figures *f = i < v->nrows ? &v->rows[i].f :
		    i < v->nrows + v->nmods ? &v->mods[i - v->nrows].f :
					      &v->total;

		cols(f, c);
		for (k = 0; k < NCOLS; k++)
			if (c[k] > want[k]) {
				snprintf(why, sizeof(why),
				    "%s %llu is more "
				    "than the profile's %llu",
				    colname[k], (unsigned long long)c[k],
				    (unsigned long long)want[k]);
				return why;
			}
		if (!(f->inuse_var >= 0) || isinf(f->inuse_var))
			return "a variance is negative or not finite";
		ht_view_interval(v, f, &lo, &hi);
		if (lo > hi || lo > f->inuse_bytes || hi < f->inuse_bytes)
			return "an interval does not hold its estimate";
	}
	if (ht_view_freed_bytes(v) > v->total.alloc_bytes)
		return "more freed than allocated";
	if (ht_view_predates_bytes(v) > v->prof->meta.heap_inuse_bytes)
		return "more predates the session than the allocator holds";
	if (ht_view_peak_bytes(v) < v->total.inuse_bytes)
		return "the peak is below the bytes in use";
	return NULL;
}

/* The rows of the view folded with top and threshold, against the view
 * u of the same profile and options unfolded.  NULL, or what is wrong. */
static const char *
folding(const struct ht_view *v, const struct ht_view *u)
{
	const struct ht_view_row *r;
	size_t i, j, shown, nfolded = 0;
	uint64_t thr = v->opts.threshold;

	shown = v->nrows;
	if (shown > 0 && v->rows[shown - 1].site == NULL) {
		nfolded = v->rows[shown - 1].nfolded;
		shown--;
		if (nfolded == 0)
			return "an empty fold row";
	}
	if (v->opts.top > 0 && shown > v->opts.top)
		return "more rows shown than --top";
	if (shown + nfolded != v->nsites) {
		snprintf(why, sizeof(why),
		    "%zu rows shown + %zu folded, of "
		    "%zu sites",
		    shown, nfolded, v->nsites);
		return why;
	}
	/* The rows shown are the first of the unfolded order that are
	 * neither below the threshold nor folded by the agent. */
	for (i = j = 0; i < shown; i++, j++) {
		r = &v->rows[i];
		if (r->site == NULL)
			return "a fold row before the last";
		if (r->site->folded > 0)
			return "a record of folded sites shown as a site";
		if (r->f.inuse_bytes < thr && r->f.alloc_bytes < thr)
			return "a row below the threshold shown";
		if (i > 0 &&
		    ht_view_value(v, &r->f) >
			ht_view_value(v, &v->rows[i - 1].f))
			return "rows out of order";
		while (j < u->nrows && u->rows[j].site != NULL &&
		    (u->rows[j].site->folded > 0 ||
			(u->rows[j].f.inuse_bytes < thr &&
			    u->rows[j].f.alloc_bytes < thr)))
			j++;
		if (j >= u->nrows || u->rows[j].site != r->site)
			return "the rows shown are not the first of the "
			       "unfolded view";
		if (memcmp(&u->rows[j].f, &r->f, sizeof(r->f)) != 0)
			return "a row's figures change with folding";
	}
	return NULL;
}

/* The modules of v are those of u, figure by figure. */
static int
same_modules(const struct ht_view *v, const struct ht_view *u)
{
	size_t i;

	if (v->nmods != u->nmods)
		return 0;
	for (i = 0; i < v->nmods; i++)
		if (strcmp(v->mods[i].name, u->mods[i].name) != 0 ||
		    memcmp(&v->mods[i].f, &u->mods[i].f,
			sizeof(v->mods[i].f)) != 0)
			return 0;
	return 1;
}

static const struct ht_view_module *
module(const struct ht_view *v, const char *name)
{
	size_t i;

	for (i = 0; i < v->nmods; i++)
		if (strcmp(v->mods[i].name, name) == 0)
			return &v->mods[i];
	return NULL;
}

static uint64_t
module_inuse(const struct ht_view *v, const char *name)
{
	const struct ht_view_module *m = module(v, name);

	return m != NULL ? m->f.inuse_bytes : UINT64_MAX;
}

/* ---- the hand-made profile */

static void
test_handmade(void)
{
	struct ht_site_rec s[5];
	struct ht_meta meta;
	struct ht_profile *p;
	struct ht_sym sym;
	struct ht_view *v;
	const struct ht_view_row *f;
	uint64_t want[NCOLS];
	char name[64];

	memset(&meta, 0, sizeof(meta));
	meta.rate = 4096;
	meta.state = HT_STATE_STOPPED;
	meta.peak_inuse_bytes = 24000;
	meta.heap_inuse_bytes = 20000;
	/* a: an allocation through libc, for the executable */
	site(&s[0], 10000, 5, 40000, 20, 8, 3, 1e6, 4e6, 20000, 10);
	s[0].nframes = 2;
	s[0].frames[0] = LIBC + 0x100;
	s[0].frames[1] = APP + 0x200;
	/* b: a library's */
	site(&s[1], 3000, 3, 3000, 3, 2, 2, 2e5, 2e5, 0, 0);
	s[1].nframes = 1;
	s[1].frames[0] = LIBFOO + 0x10;
	/* c: nothing but libc, all freed */
	site(&s[2], 0, 0, 8192, 2, 1, 0, 0, 1e5, 4096, 1);
	s[2].nframes = 1;
	s[2].frames[0] = LIBC + 0x300;
	/* d: a frame in no module */
	site(&s[3], 500, 1, 500, 1, 1, 1, 1000, 1000, 500, 1);
	s[3].nframes = 1;
	s[3].frames[0] = NOWHERE;
	/* e: 4 sites the agent folded below a dump's threshold */
	site(&s[4], 700, 7, 9000, 30, 5, 2, 5000, 6000, 100, 1);
	s[4].folded = 4;
	p = make_profile(&meta, s, 5);

	v = view(p, &sym, HT_VIEW_INUSE, 0, 0, 0);
	cols(&v->total, want);
	ok(want[0] == 14200 && want[1] == 16 && want[2] == 60692 &&
		want[3] == 56 && want[4] == 17 && want[5] == 8 &&
		same_var(v->total.inuse_var, 1206000),
	    "summary: 14200 B / 16 in use, 60692 B / 56 allocated, 17 "
	    "samples, 8 live, variance 1206000");
	is_uint(8, v->nsites, "the folded record counts as its 4 sites");
	is_uint(5, v->nrows, "no options: 4 sites and the fold of the agent's");
	ok(v->rows[0].site == &p->sites[0] && v->rows[1].site == &p->sites[1] &&
		v->rows[2].site == &p->sites[3] &&
		v->rows[3].site == &p->sites[2],
	    "sites by bytes in use");
	f = &v->rows[4];
	ok(f->site == NULL && f->nfolded == 4 && f->f.inuse_bytes == 700,
	    "the agent's folded sites are the last row, always folded");
	is_string(NULL, sums(v), "no options: summary = rows = modules");
	is_uint(10000, module_inuse(v, "app"),
	    "a site past a libc frame is the executable's");
	is_uint(3000, module_inuse(v, "libfoo.so.1"), "a library's site");
	ok(module(v, "libc.so.6") != NULL &&
		module(v, "libc.so.6")->f.alloc_bytes == 8192,
	    "a site of libc frames only is libc's");
	is_uint(500, module_inuse(v, "[unknown]"),
	    "a site in no module is \"[unknown]\"");
	is_uint(700, module_inuse(v, "[folded sites]"),
	    "the agent's folded sites are \"[folded sites]\"");
	is_uint(46492, ht_view_freed_bytes(v), "freed = 60692 - 14200");
	is_uint(5800, ht_view_predates_bytes(v),
	    "predates = the allocator's 20000 - 14200");
	is_uint(24000, ht_view_peak_bytes(v), "the peak is the session's");
	is_string("(4 smaller sites)", ht_view_row_name(f, name, sizeof(name)),
	    "the fold's name");
	ht_view_free(v);

	v = view(p, &sym, HT_VIEW_INUSE, 2, 0, 0);
	f = &v->rows[v->nrows - 1];
	ok(v->nrows == 3 && v->rows[0].site == &p->sites[0] &&
		v->rows[1].site == &p->sites[1] && f->site == NULL,
	    "--top 2: the two largest, then the fold");
	ok(f->nfolded == 6 && f->f.inuse_bytes == 1200 &&
		f->f.inuse_objects == 8 && f->f.alloc_bytes == 17692 &&
		f->f.alloc_objects == 33 && f->f.samples == 7 &&
		f->f.live_samples == 3 && same_var(f->f.inuse_var, 6000),
	    "--top 2: the fold holds the other 6 sites' every figure");
	is_string(NULL, sums(v), "--top 2: summary = rows = modules");
	cols(&v->total, want);
	ok(want[0] == 14200 && want[2] == 60692 && want[4] == 17,
	    "--top 2: the summary is unchanged");
	ht_view_free(v);

	v = view(p, &sym, HT_VIEW_INUSE, 0, 1000, 0);
	f = &v->rows[v->nrows - 1];
	ok(v->nrows == 4 && v->rows[2].site == &p->sites[2] &&
		f->site == NULL && f->nfolded == 5 &&
		f->f.inuse_bytes == 1200 && f->f.alloc_bytes == 9500,
	    "--threshold 1000: a site below it both in use and allocated is "
	    "folded, one above it allocated is not");
	is_string(NULL, sums(v), "--threshold 1000: summary = rows = modules");
	ht_view_free(v);

	v = view(p, &sym, HT_VIEW_ALLOC, 1, 0, 0);
	ok(v->nrows == 2 && v->rows[0].site == &p->sites[0] &&
		v->rows[1].nfolded == 7 && v->rows[1].f.alloc_bytes == 20692,
	    "--sort alloc --top 1: the largest allocator, 7 folded");
	is_string(NULL, sums(v),
	    "--sort alloc --top 1: summary = rows = "
	    "modules");
	ht_view_free(v);

	v = view(p, &sym, HT_VIEW_INUSE, 0, 0, 1);
	cols(&v->total, want);
	ok(want[0] == 24696 && want[1] == 13 && want[2] == 60692 &&
		want[3] == 56 && want[4] == 17 && want[5] == 0 &&
		!v->live_known,
	    "at the peak: 24696 B / 13 in use, the session's allocations, "
	    "live samples unknown at rate 4096");
	is_uint(24696, ht_view_peak_bytes(v),
	    "at the peak: the peak is never below the bytes in use");
	is_uint(46492, ht_view_freed_bytes(v),
	    "at the peak: freed is still of the bytes in use now");
	is_string(NULL, sums(v), "at the peak: summary = rows = modules");
	ht_view_free(v);
	ht_profile_free(p);
}

/* Sampled estimates with more in use than allocated, and an allocator
 * that reports less than that: differences stop at 0. */
static void
test_clamps(void)
{
	struct ht_site_rec s[2];
	struct ht_meta meta;
	struct ht_profile *p;
	struct ht_sym sym;
	struct ht_view *v;
	uint64_t want[NCOLS];

	memset(&meta, 0, sizeof(meta));
	meta.rate = 65536;
	meta.heap_inuse_bytes = 1000;
	site(&s[0], 70000, 2, 65536, 1, 1, 1, 4e9, 4e9, 70000, 2);
	s[0].nframes = 1;
	s[0].frames[0] = APP + 1;
	site(&s[1], 0, 0, 0, 0, 0, 0, -1, -1, 0, 0);
	s[1].nframes = 1;
	s[1].frames[0] = APP + 2;
	p = make_profile(&meta, s, 2);
	v = view(p, &sym, HT_VIEW_INUSE, 0, 0, 0);
	is_uint(0, ht_view_freed_bytes(v),
	    "more in use than allocated: freed 0, not negative");
	is_uint(0, ht_view_predates_bytes(v),
	    "the allocator below the bytes in use: predates 0");
	ok(v->total.inuse_var >= 0 && v->rows[1].f.inuse_var == 0,
	    "a negative variance in the file counts as 0");
	expected(p, 0, want);
	is_string(NULL, nonnegative(v, want), "nothing negative");
	ht_view_free(v);
	ht_profile_free(p);
}

/* ---- profiles from a fixed seed */

static uint64_t rng = 0x5eed0fc0de15ull;

static uint64_t
next(void)
{
	rng ^= rng >> 12;
	rng ^= rng << 25;
	rng ^= rng >> 27;
	return rng * 0x2545f4914f6cdd1dull;
}

static uint64_t
below(uint64_t n)
{
	return n == 0 ? 0 : next() % n;
}

static uint64_t
frame(void)
{
	switch (below(5)) {
	case 0:
		return NOWHERE + below(64);
	case 1:
	case 2:
		return LIBC + below(MODSIZE);
	case 3:
		return LIBFOO + below(MODSIZE);
	default:
		return APP + below(MODSIZE);
	}
}

/* Sizes across orders of magnitude, some equal, some zero. */
static uint64_t
amount(void)
{
	switch (below(6)) {
	case 0:
		return 0;
	case 1:
		return 4096;
	default:
		return below(1ull << (below(32) + 1));
	}
}

static struct ht_profile *
random_profile(void)
{
	static struct ht_site_rec s[40];
	struct ht_meta meta;
	size_t n = below(41), i, k;
	uint64_t a, u;

	memset(&meta, 0, sizeof(meta));
	meta.rate = below(3) == 0 ? 1 : 4096;
	meta.peak_inuse_bytes = amount();
	meta.heap_inuse_bytes = amount();
	for (i = 0; i < n; i++) {
		a = amount();
		/* Estimates may have more in use than allocated. */
		u = below(8) == 0 ? a + amount() : below(a + 1);
		site(&s[i], u, below(u / 16 + 2), a, below(a / 16 + 2),
		    below(100), below(50), (double)amount() * 1000,
		    (double)amount() * 1000, below(4) == 0 ? u : amount(),
		    below(100));
		if (below(10) == 0)
			s[i].folded = 1 + (uint32_t)below(20);
		else
			for (k = s[i].nframes = (uint32_t)below(6); k > 0; k--)
				s[i].frames[k - 1] = frame();
	}
	return make_profile(&meta, s, n);
}

static void
test_random(void)
{
	static const size_t tops[] = { 0, 1, 2, 5, 1000 };
	struct ht_profile *p;
	struct ht_sym sym;
	struct ht_view u, *v;
	uint64_t want[NCOLS], got[NCOLS], thr[4];
	const char *e;
	const char *bad_sums = NULL, *bad_neg = NULL;
	const char *bad_fold = NULL;
	int bad_total = 0, bad_mods = 0, sort, at_peak;
	int i, views = 0;
	size_t t, h, k;

	for (i = 0; i < 300; i++) {
		p = random_profile();
		thr[0] = 0;
		thr[1] = 1024;
		thr[2] = 1ull << 20;
		thr[3] = amount();
		for (sort = HT_VIEW_INUSE; sort <= HT_VIEW_OBJECTS; sort++)
			for (at_peak = 0; at_peak <= 1; at_peak++) {
				expected(p, at_peak, want);
				memcpy(&u, view(p, &sym, sort, 0, 0, at_peak),
				    sizeof(u));
				for (t = 0; t < sizeof(tops) / sizeof(tops[0]);
				     t++)
					for (h = 0; h < 4; h++) {
						v = view(p, &sym, sort, tops[t],
						    thr[h], at_peak);
						views++;
						if ((e = sums(v)) != NULL &&
						    bad_sums == NULL)
							bad_sums = strdup(e);
						if ((e = nonnegative(v,
							 want)) != NULL &&
						    bad_neg == NULL)
							bad_neg = strdup(e);
						if ((e = folding(v, &u)) !=
							NULL &&
						    bad_fold == NULL)
							bad_fold = strdup(e);
						cols(&v->total, got);
						for (k = 0; k < NCOLS; k++)
							bad_total += got[k] !=
							    want[k];
						bad_mods +=
						    !same_modules(v, &u);
						ht_view_free(v);
					}
				ht_view_free(&u);
			}
		ht_profile_free(p);
	}
	diag("%d views of 300 profiles", views);
	is_string(NULL, bad_sums,
	    "every view: the summary is the sum of the "
	    "rows and of the modules, in every column");
	is_int(0, bad_total,
	    "every view: the summary is the sum of the "
	    "profile's sites, whatever --top and --threshold fold");
	is_string(NULL, bad_fold,
	    "every view: at most --top rows shown, none "
	    "below the threshold, the first of the unfolded order, the rest "
	    "in one last row");
	is_int(0, bad_mods,
	    "every view: the modules are those of the "
	    "unfolded view");
	is_string(NULL, bad_neg,
	    "every view: nothing negative or wrapped "
	    "around (figures, variances, intervals, freed, predates, peak)");
}

int
main(void)
{
	plan(0);
	test_handmade();
	test_clamps();
	test_random();
	return 0;
}
