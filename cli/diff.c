/*
 * Diffs (see diff.h), and the commands built on them: heaptool diff,
 * heaptool baseline and heaptool report --diff.
 *
 * A baseline is the profile of a live target as the agent sent it, kept in
 * ${XDG_STATE_HOME:-$HOME/.local/state}/heaptool/baseline.PID.START.heap,
 * START being the process's start time (field 22 of /proc/PID/stat): a pid
 * reused by another process has another start time, so it never finds the
 * baseline of the process that had the pid before.
 */
#include "config.h"

#include <sys/stat.h>
#include <sys/types.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <limits.h>
#include <math.h>
#include <pwd.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "ctl.h"
#include "diff.h"
#include "files.h"
#include "report.h"
#include "json.h"
#include "size.h"
#include "view.h"

/* The columns of a site, in the order of the JSON keys. */
enum {
	COL_INUSE_BYTES,
	COL_INUSE_OBJECTS,
	COL_ALLOC_BYTES,
	COL_ALLOC_OBJECTS,
	COL_FREED_BYTES,
	COL_SAMPLES,
	NCOLS
};
static const char *const col_keys[NCOLS] = {
	"inuse_bytes", "inuse_objects", "alloc_bytes", "alloc_objects",
	"freed_bytes", "samples",
};
/* The columns of the per-module sums (the views keep no freed bytes per
 * module). */
#define MOD_COLS	4

enum status {
	ST_SAME,
	ST_CHANGED,
	ST_NEW,
	ST_GONE,
	ST_FOLDED,	/* the agent's folded sites, or the --top fold */
	NSTATUS
};
static const char *const status_names[NSTATUS] = {
	"same", "changed", "new", "gone", "folded",
};

/* One side (old or new) of a site or of the totals. */
struct side {
	uint64_t	v[NCOLS];
	double		var;		/* of the bytes in use */
};

/* Key types: the first byte of a key. */
#define KEY_STACK	'S'	/* a site with its frames */
#define KEY_NOSTACK	'N'	/* a site whose stack was not recorded */
#define KEY_FOLD	'F'	/* the sites the agent folded */

struct dsite {
	uint8_t				*key;
	size_t				 keylen;
	/* The first row of each side that went into it (frames, names);
	 * NULL on the side that lacks it. */
	const struct ht_view_row	*row[2];
	struct side			 s[2];
	/* The sites a folded line stands for. */
	size_t				 nfolded;
	enum status			 status;
};

struct dmod {
	const char	*name;
	uint64_t	 v[2][MOD_COLS];
};

/* A module of a profile and how sites name it across runs. */
struct modkey {
	const struct ht_module_rec	*m;
	char				*id;
};

struct diff {
	const struct ht_profile	*prof[2];
	struct ht_view		 v[2];
	int			 built[2];
	int			 exact;		/* both at rate 1 */
	struct dsite		*sites;
	size_t			 nsites;
	struct ht_view_index	 index;
	struct side		 tot[2];
	struct dmod		*mods;
	size_t			 nmods;
	size_t			 count[NSTATUS];
	/* What is shown: pointers into sites, then the fold (if any). */
	struct dsite		**shown;
	size_t			 nshown;
	struct dsite		 fold;
	int			 has_fold;
	/* Scratch of the keys. */
	uint8_t			*kbuf;
	size_t			 klen, kcap;
};

static int64_t
delta(uint64_t old, uint64_t new)
{
	/* Two's complement: exact for any difference below 2^63. */
	return (int64_t)(new - old);
}

static uint64_t
magnitude(int64_t d)
{
	return d < 0 ? -(uint64_t)d : (uint64_t)d;
}

/* ---- keys: stacks as (module, offset) per frame ---- */

static int
modkey_cmp(const void *a, const void *b)
{
	const struct modkey *x = a, *y = b;

	if (x->m->start != y->m->start)
		return x->m->start < y->m->start ? -1 : 1;
	return 0;
}

static void
modkeys_free(struct modkey *mk, size_t n)
{
	size_t i;

	if (mk == NULL)
		return;
	for (i = 0; i < n; i++)
		free(mk[i].id);
	free(mk);
}

/*
 * The modules of prof, sorted by address, each with its name across runs:
 * "b" and its build ID in hexadecimal, or without one "n" and its file's
 * basename.  Returns NULL (ENOMEM) on failure, or a non-NULL pointer for
 * no modules.
 */
static struct modkey *
modkeys_new(const struct ht_profile *prof)
{
	static const char hex[] = "0123456789abcdef";
	const struct ht_module_rec *m;
	struct modkey *mk;
	const char *base;
	size_t i, j, n;

	if ((mk = calloc(prof->nmodules + 1, sizeof(*mk))) == NULL)
		return NULL;
	for (i = 0; i < prof->nmodules; i++) {
		m = &prof->modules[i];
		mk[i].m = m;
		n = m->build_id_len < HT_PROFILE_MAX_BUILD_ID ?
		    m->build_id_len : HT_PROFILE_MAX_BUILD_ID;
		if (n > 0) {
			if ((mk[i].id = malloc(2 * n + 2)) == NULL)
				goto out_nomem;
			mk[i].id[0] = 'b';
			for (j = 0; j < n; j++) {
				mk[i].id[1 + 2 * j] = hex[m->build_id[j] >> 4];
				mk[i].id[2 + 2 * j] = hex[m->build_id[j] & 15];
			}
			mk[i].id[1 + 2 * n] = '\0';
			continue;
		}
		base = strrchr(m->path, '/');
		base = base != NULL ? base + 1 : m->path;
		n = strnlen(base, sizeof(m->path));
		if ((mk[i].id = malloc(n + 2)) == NULL)
			goto out_nomem;
		mk[i].id[0] = 'n';
		memcpy(mk[i].id + 1, base, n);
		mk[i].id[n + 1] = '\0';
	}
	if (prof->nmodules > 1)
		qsort(mk, prof->nmodules, sizeof(*mk), modkey_cmp);
	return mk;

out_nomem:
	modkeys_free(mk, prof->nmodules);
	errno = ENOMEM;
	return NULL;
}

/* The module that holds return address addr (looked up at addr - 1, the
 * call, as the symbolizer does), or NULL. */
static const struct modkey *
modkey_find(const struct modkey *mk, size_t n, uint64_t addr)
{
	size_t lo = 0, hi = n, mid;
	uint64_t a = addr > 0 ? addr - 1 : addr;

	while (lo < hi) {
		mid = lo + (hi - lo) / 2;
		if (mk[mid].m->start <= a)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo == 0 || a >= mk[lo - 1].m->end)
		return NULL;
	return &mk[lo - 1];
}

static int
key_put(struct diff *d, const void *p, size_t n)
{
	uint8_t *b;
	size_t cap;

	if (d->klen + n > d->kcap) {
		cap = d->kcap == 0 ? 256 : d->kcap;
		while (cap < d->klen + n)
			cap *= 2;
		if ((b = realloc(d->kbuf, cap)) == NULL)
			return -1;
		d->kbuf = b;
		d->kcap = cap;
	}
	memcpy(d->kbuf + d->klen, p, n);
	d->klen += n;
	return 0;
}

/*
 * The key of row r into d->kbuf: its type, then per frame the module's
 * name across runs, a NUL and the 8 bytes of the offset (address - bias);
 * a frame outside every module is "?", a NUL and its address.  Each name
 * ends at its NUL and is followed by exactly 8 bytes, so no two stacks
 * share a key.
 */
static int
row_key(struct diff *d, const struct modkey *mk, size_t nmk,
    const struct ht_view_row *r)
{
	const struct modkey *k;
	uint64_t off;
	uint32_t i, n;
	uint8_t type;

	d->klen = 0;
	if (r->site == NULL || r->site->folded > 0)
		type = KEY_FOLD;
	else if (r->site->nframes == 0)
		type = KEY_NOSTACK;
	else
		type = KEY_STACK;
	if (key_put(d, &type, 1) != 0)
		return -1;
	if (type != KEY_STACK)
		return 0;
	n = r->site->nframes < HT_PROFILE_MAX_FRAMES ? r->site->nframes :
	    HT_PROFILE_MAX_FRAMES;
	for (i = 0; i < n; i++) {
		off = r->site->frames[i];
		if ((k = modkey_find(mk, nmk, off)) != NULL) {
			off -= k->m->bias;
			if (key_put(d, k->id, strlen(k->id) + 1) != 0)
				return -1;
		} else if (key_put(d, "?", 2) != 0)
			return -1;
		if (key_put(d, &off, sizeof(off)) != 0)
			return -1;
	}
	return 0;
}

/* Is site id's key the one in d->kbuf? */
static int
key_eq(void *ctx, uint32_t id)
{
	struct diff *d = ctx;
	const struct dsite *s = &d->sites[id];

	return s->keylen == d->klen && memcmp(s->key, d->kbuf, d->klen) == 0;
}

/* ---- building the diff ---- */

static void
side_add_row(struct side *s, const struct ht_view_row *r)
{
	const struct ht_view_figures *f = &r->f;

	s->v[COL_INUSE_BYTES] += f->inuse_bytes;
	s->v[COL_INUSE_OBJECTS] += f->inuse_objects;
	s->v[COL_ALLOC_BYTES] += f->alloc_bytes;
	s->v[COL_ALLOC_OBJECTS] += f->alloc_objects;
	/* Per row, so that the freed bytes of the sites add up too. */
	s->v[COL_FREED_BYTES] += f->alloc_bytes > f->inuse_bytes ?
	    f->alloc_bytes - f->inuse_bytes : 0;
	s->v[COL_SAMPLES] += f->samples;
	s->var += f->inuse_var;
}

static void
side_add(struct side *to, const struct side *s)
{
	int c;

	for (c = 0; c < NCOLS; c++)
		to->v[c] += s->v[c];
	to->var += s->var;
}

/* Put the rows of side k's view into the sites. */
static int
add_side(struct diff *d, int k)
{
	const struct ht_view_row *r;
	struct modkey *mk;
	struct dsite *s;
	uint64_t h;
	int64_t id;
	size_t i;
	int rc = -1;

	if ((mk = modkeys_new(d->prof[k])) == NULL)
		return -1;
	for (i = 0; i < d->v[k].nrows; i++) {
		r = &d->v[k].rows[i];
		if (row_key(d, mk, d->prof[k]->nmodules, r) != 0)
			goto out;
		h = ht_view_hash(HT_VIEW_HASH0, d->kbuf, d->klen);
		if ((id = ht_view_index_find(&d->index, h, key_eq, d)) < 0) {
			s = &d->sites[d->nsites];
			memset(s, 0, sizeof(*s));
			if ((s->key = malloc(d->klen)) == NULL)
				goto out;
			memcpy(s->key, d->kbuf, d->klen);
			s->keylen = d->klen;
			if (ht_view_index_add(&d->index, h,
			    (uint32_t)d->nsites) != 0) {
				free(s->key);
				goto out;
			}
			id = (int64_t)d->nsites++;
		}
		s = &d->sites[id];
		/* Two records of one profile with one key (the same code
		 * mapped twice) are one site: their figures add up. */
		if (s->row[k] == NULL)
			s->row[k] = r;
		side_add_row(&s->s[k], r);
		if (d->kbuf[0] == KEY_FOLD && r->nfolded > s->nfolded)
			s->nfolded = r->nfolded;
	}
	rc = 0;
out:
	modkeys_free(mk, d->prof[k]->nmodules);
	if (rc != 0)
		errno = ENOMEM;
	return rc;
}

static enum status
site_status(const struct dsite *s)
{
	int c;

	if (s->keylen > 0 && s->key[0] == KEY_FOLD)
		return ST_FOLDED;
	if (s->row[0] == NULL)
		return ST_NEW;
	if (s->row[1] == NULL)
		return ST_GONE;
	for (c = COL_INUSE_BYTES; c <= COL_ALLOC_OBJECTS; c++)
		if (s->s[0].v[c] != s->s[1].v[c])
			return ST_CHANGED;
	return ST_SAME;
}

static int
cmp_i64_desc(int64_t a, int64_t b)
{
	return a > b ? -1 : a < b;
}

/* Growth order: bytes in use grown most first; ties by bytes allocated,
 * then by size, then by key (the same input always prints the same). */
static int
growth_cmp(const void *a, const void *b)
{
	const struct dsite *x = *(const struct dsite *const *)a;
	const struct dsite *y = *(const struct dsite *const *)b;
	size_t n;
	int c;

	if ((x->status == ST_FOLDED) != (y->status == ST_FOLDED))
		return x->status == ST_FOLDED ? 1 : -1;
	if ((c = cmp_i64_desc(delta(x->s[0].v[COL_INUSE_BYTES],
	    x->s[1].v[COL_INUSE_BYTES]), delta(y->s[0].v[COL_INUSE_BYTES],
	    y->s[1].v[COL_INUSE_BYTES]))) != 0)
		return c;
	if ((c = cmp_i64_desc(delta(x->s[0].v[COL_ALLOC_BYTES],
	    x->s[1].v[COL_ALLOC_BYTES]), delta(y->s[0].v[COL_ALLOC_BYTES],
	    y->s[1].v[COL_ALLOC_BYTES]))) != 0)
		return c;
	if ((c = cmp_i64_desc((int64_t)x->s[1].v[COL_INUSE_BYTES],
	    (int64_t)y->s[1].v[COL_INUSE_BYTES])) != 0)
		return c;
	if ((c = cmp_i64_desc((int64_t)x->s[0].v[COL_INUSE_BYTES],
	    (int64_t)y->s[0].v[COL_INUSE_BYTES])) != 0)
		return c;
	n = x->keylen < y->keylen ? x->keylen : y->keylen;
	if ((c = memcmp(x->key, y->key, n)) != 0)
		return c;
	return x->keylen < y->keylen ? -1 : x->keylen > y->keylen;
}

/* Size of change, for --top: the largest change of bytes in use either
 * way first, then of bytes allocated, then growth order. */
static int
change_cmp(const void *a, const void *b)
{
	const struct dsite *x = *(const struct dsite *const *)a;
	const struct dsite *y = *(const struct dsite *const *)b;
	uint64_t mx, my;

	if ((x->status == ST_FOLDED) != (y->status == ST_FOLDED))
		return x->status == ST_FOLDED ? 1 : -1;
	mx = magnitude(delta(x->s[0].v[COL_INUSE_BYTES],
	    x->s[1].v[COL_INUSE_BYTES]));
	my = magnitude(delta(y->s[0].v[COL_INUSE_BYTES],
	    y->s[1].v[COL_INUSE_BYTES]));
	if (mx != my)
		return mx > my ? -1 : 1;
	mx = magnitude(delta(x->s[0].v[COL_ALLOC_BYTES],
	    x->s[1].v[COL_ALLOC_BYTES]));
	my = magnitude(delta(y->s[0].v[COL_ALLOC_BYTES],
	    y->s[1].v[COL_ALLOC_BYTES]));
	if (mx != my)
		return mx > my ? -1 : 1;
	return growth_cmp(a, b);
}

static int
mod_cmp(const void *a, const void *b)
{
	const struct dmod *x = a, *y = b;
	int c;

	if ((c = cmp_i64_desc(delta(x->v[0][0], x->v[1][0]),
	    delta(y->v[0][0], y->v[1][0]))) != 0)
		return c;
	if ((c = cmp_i64_desc(delta(x->v[0][2], x->v[1][2]),
	    delta(y->v[0][2], y->v[1][2]))) != 0)
		return c;
	return strcmp(x->name, y->name);
}

static int
add_modules(struct diff *d)
{
	const struct ht_view_module *vm;
	struct dmod *m;
	size_t i, j;
	int k;

	m = calloc(d->v[0].nmods + d->v[1].nmods + 1, sizeof(*m));
	if (m == NULL)
		return -1;
	d->mods = m;
	for (k = 0; k < 2; k++)
		for (i = 0; i < d->v[k].nmods; i++) {
			vm = &d->v[k].mods[i];
			for (j = 0; j < d->nmods; j++)
				if (strcmp(d->mods[j].name, vm->name) == 0)
					break;
			if (j == d->nmods)
				d->mods[d->nmods++].name = vm->name;
			m = &d->mods[j];
			m->v[k][0] += vm->f.inuse_bytes;
			m->v[k][1] += vm->f.inuse_objects;
			m->v[k][2] += vm->f.alloc_bytes;
			m->v[k][3] += vm->f.alloc_objects;
		}
	if (d->nmods > 1)
		qsort(d->mods, d->nmods, sizeof(*d->mods), mod_cmp);
	return 0;
}

static void
diff_free(struct diff *d)
{
	size_t i;

	for (i = 0; i < d->nsites; i++)
		free(d->sites[i].key);
	free(d->sites);
	free(d->shown);
	free(d->mods);
	free(d->kbuf);
	ht_view_index_free(&d->index);
	if (d->built[0])
		ht_view_free(&d->v[0]);
	if (d->built[1])
		ht_view_free(&d->v[1]);
}

static int
diff_build(struct diff *d, const struct ht_profile *old, struct ht_sym *osym,
    const struct ht_profile *new, struct ht_sym *nsym,
    const struct ht_diff_opts *opts)
{
	struct ht_view_opts vopts;
	struct dsite **order = NULL, *s;
	size_t i, n, nkeep;
	int k;

	memset(d, 0, sizeof(*d));
	d->prof[0] = old;
	d->prof[1] = new;
	d->exact = old->meta.rate == 1 && new->meta.rate == 1;
	/* Whole views: every site a row of its own (but those the agent
	 * folded), so that the diff folds by its own measure. */
	memset(&vopts, 0, sizeof(vopts));
	vopts.sort = HT_VIEW_INUSE;
	if (ht_view_build(&d->v[0], old, osym, &vopts) != 0)
		goto out_fail;
	d->built[0] = 1;
	if (ht_view_build(&d->v[1], new, nsym, &vopts) != 0)
		goto out_fail;
	d->built[1] = 1;

	d->sites = calloc(d->v[0].nrows + d->v[1].nrows + 1,
	    sizeof(*d->sites));
	if (d->sites == NULL)
		goto out_nomem;
	for (k = 0; k < 2; k++)
		if (add_side(d, k) != 0)
			goto out_fail;
	for (i = 0; i < d->nsites; i++) {
		s = &d->sites[i];
		s->status = site_status(s);
		if (s->status == ST_FOLDED)
			s->nfolded = s->nfolded > 0 ? s->nfolded : 1;
		else
			d->count[s->status]++;
		side_add(&d->tot[0], &s->s[0]);
		side_add(&d->tot[1], &s->s[1]);
	}
	if (add_modules(d) != 0)
		goto out_nomem;

	if ((order = calloc(d->nsites + 1, sizeof(*order))) == NULL ||
	    (d->shown = calloc(d->nsites + 1, sizeof(*d->shown))) == NULL)
		goto out_nomem;
	for (i = 0; i < d->nsites; i++)
		order[i] = &d->sites[i];
	/* Sites and their sizes of change, the agent's fold last. */
	n = d->nsites;
	nkeep = n;
	if (n > 1)
		qsort(order, n, sizeof(*order),
		    opts->top > 0 ? change_cmp : growth_cmp);
	if (opts->top > 0) {
		/* Keep the top largest changes, fold the others and the
		 * agent's fold into one row; then show in growth order. */
		for (nkeep = 0; nkeep < n && nkeep < opts->top &&
		    order[nkeep]->status != ST_FOLDED; nkeep++)
			continue;
		memset(&d->fold, 0, sizeof(d->fold));
		d->fold.status = ST_FOLDED;
		for (i = nkeep; i < n; i++) {
			side_add(&d->fold.s[0], &order[i]->s[0]);
			side_add(&d->fold.s[1], &order[i]->s[1]);
			d->fold.nfolded += order[i]->status == ST_FOLDED ?
			    order[i]->nfolded : 1;
		}
		d->has_fold = nkeep < n;
		qsort(order, nkeep, sizeof(*order), growth_cmp);
	}
	for (i = 0; i < nkeep; i++)
		d->shown[d->nshown++] = order[i];
	if (d->has_fold)
		d->shown[d->nshown++] = &d->fold;
	free(order);
	return 0;

out_nomem:
	errno = ENOMEM;
out_fail:
	free(order);
	diff_free(d);
	return -1;
}

/* The 95% interval of the change of bytes in use from a to b. */
static void
delta_interval(const struct diff *d, const struct side *a,
    const struct side *b, int64_t *lo, int64_t *hi)
{
	double dv, w;

	dv = (double)delta(a->v[COL_INUSE_BYTES], b->v[COL_INUSE_BYTES]);
	w = d->exact ? 0 : 1.96 * sqrt(a->var + b->var);
	*lo = (int64_t)llround(dv - w);
	*hi = (int64_t)llround(dv + w);
}

/* ---- text ---- */

struct text {
	FILE	*fp;
	int	 raw;
	int	 exact;
};


static const char *
size_str(const struct text *t, uint64_t v, char *buf, size_t len)
{
	if (t->raw) {
		snprintf(buf, len, "%" PRIu64 " B", v);
		return buf;
	}
	return ht_size_format(v, buf, len);
}

/* A signed change: "+1.50 KiB", "-48 B", "0 B"; bytes says whether it is
 * a size or a count; with approx, "~" before it (an estimate). */
static const char *
delta_str(const struct text *t, int64_t dv, int bytes, int approx, char *buf,
    size_t len)
{
	uint64_t a = magnitude(dv);
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

static double
duration_s(const struct ht_meta *m)
{
	if (m->start_ns == 0 || m->end_ns < m->start_ns)
		return 0;
	return (double)(m->end_ns - m->start_ns) / 1e9;
}

static void
text_session(const struct text *t, const char *label,
    const struct ht_profile *p)
{
	const struct ht_meta *m = &p->meta;
	char a[32];

	fprintf(t->fp, "%s pid %" PRIu64 " (", label, m->pid);
	ht_report_put_safe(t->fp, m->command, sizeof(m->command));
	fprintf(t->fp, "): session %" PRIu64 " %s%s, ", m->epoch,
	    ht_profile_state_name(m->state),
	    (m->flags & HT_META_AT_EXIT) ? " at exit" : "");
	if (m->rate == 1)
		fprintf(t->fp, "rate 1 (exact)");
	else
		fprintf(t->fp, "rate %s (sampled)",
		    size_str(t, m->rate, a, sizeof(a)));
	fprintf(t->fp, ", %.2f s\n", duration_s(m));
}

#define TLABEL	"  %-19s"
#define TCOL	" %12s"

/* The kinds of figures of a row: sizes and counts are estimates unless
 * both profiles are exact; samples and sites are counted. */
#define ROW_OBJECTS	0
#define ROW_BYTES	1
#define ROW_COUNT	2

static void
text_row(const struct text *t, const char *label, uint64_t o, uint64_t n,
    int kind)
{
	int bytes = kind == ROW_BYTES;

	char a[32], b[32], c[32];

	if (bytes) {
		size_str(t, o, a, sizeof(a));
		size_str(t, n, b, sizeof(b));
	} else {
		snprintf(a, sizeof(a), "%" PRIu64, o);
		snprintf(b, sizeof(b), "%" PRIu64, n);
	}
	fprintf(t->fp, TLABEL TCOL TCOL TCOL, label, a, b,
	    delta_str(t, delta(o, n), bytes, !t->exact && kind != ROW_COUNT,
	    c, sizeof(c)));
}

static void
text_summary(const struct diff *d, const struct text *t)
{
	const struct ht_meta *om = &d->prof[0]->meta, *nm = &d->prof[1]->meta;
	const struct side *o = &d->tot[0], *n = &d->tot[1];
	char a[32], b[32], c[32], e[32];
	int64_t lo, hi;
	size_t i, w;

	text_session(t, "old:", d->prof[0]);
	text_session(t, "new:", d->prof[1]);
	if (d->exact)
		fputs("deltas are exact (both profiles at rate 1)\n", t->fp);
	else
		fputs("deltas are estimates (~), with 95% intervals from "
		    "both profiles' samples\n", t->fp);
	if (om->pid == nm->pid && om->epoch != nm->epoch)
		fprintf(t->fp, "note: sessions %" PRIu64 " and %" PRIu64
		    " of one process: a session starts from zero, so the "
		    "new one holds nothing of the old\n", om->epoch,
		    nm->epoch);

	fprintf(t->fp, "\n" TLABEL TCOL TCOL TCOL "\n", "", "old", "new",
	    "delta");
	text_row(t, "in use", o->v[COL_INUSE_BYTES], n->v[COL_INUSE_BYTES],
	    ROW_BYTES);
	if (!d->exact) {
		delta_interval(d, o, n, &lo, &hi);
		fprintf(t->fp, "  (95%% %s..%s)",
		    delta_str(t, lo, 1, 0, a, sizeof(a)),
		    delta_str(t, hi, 1, 0, b, sizeof(b)));
	}
	putc('\n', t->fp);
	text_row(t, "in use objects", o->v[COL_INUSE_OBJECTS],
	    n->v[COL_INUSE_OBJECTS], ROW_OBJECTS);
	putc('\n', t->fp);
	text_row(t, "allocated", o->v[COL_ALLOC_BYTES], n->v[COL_ALLOC_BYTES],
	    ROW_BYTES);
	putc('\n', t->fp);
	text_row(t, "allocated objects", o->v[COL_ALLOC_OBJECTS],
	    n->v[COL_ALLOC_OBJECTS], ROW_OBJECTS);
	putc('\n', t->fp);
	text_row(t, "freed", o->v[COL_FREED_BYTES], n->v[COL_FREED_BYTES],
	    ROW_BYTES);
	putc('\n', t->fp);
	text_row(t, "peak", ht_view_peak_bytes(&d->v[0]),
	    ht_view_peak_bytes(&d->v[1]), ROW_BYTES);
	putc('\n', t->fp);
	text_row(t, "samples", o->v[COL_SAMPLES], n->v[COL_SAMPLES],
	    ROW_COUNT);
	putc('\n', t->fp);
	text_row(t, "sites", d->v[0].nsites, d->v[1].nsites, ROW_COUNT);
	putc('\n', t->fp);

	if (d->nmods == 0)
		return;
	w = strlen("by module");
	for (i = 0; i < d->nmods; i++)
		if (strlen(d->mods[i].name) + 2 > w)
			w = strlen(d->mods[i].name) + 2;
	if (w > 40)
		w = 40;
	fprintf(t->fp, "\n%-*s" TCOL TCOL TCOL TCOL "\n", (int)w, "by module",
	    "old in use", "new in use", "delta", "alloc delta");
	for (i = 0; i < d->nmods; i++) {
		const struct dmod *m = &d->mods[i];
		size_t len = strlen(m->name);

		fputs("  ", t->fp);
		ht_report_put_safe(t->fp, m->name, w - 2);
		fprintf(t->fp, "%*s" TCOL TCOL TCOL TCOL "\n",
		    (int)(w - 2 - (len < w - 2 ? len : w - 2)), "",
		    size_str(t, m->v[0][0], a, sizeof(a)),
		    size_str(t, m->v[1][0], b, sizeof(b)),
		    delta_str(t, delta(m->v[0][0], m->v[1][0]), 1,
		    !t->exact, c, sizeof(c)),
		    delta_str(t, delta(m->v[0][2], m->v[1][2]), 1,
		    !t->exact, e, sizeof(e)));
	}
}

/* "in use +1.00 KiB (2.00 KiB -> 3.00 KiB), +1 object (2 -> 3)" */
static void
text_change(const struct text *t, const char *what, const struct dsite *s,
    int cb, int co)
{
	char a[32], b[32], c[32];
	int64_t dv;

	fprintf(t->fp, "%s %s (%s -> %s), ", what,
	    delta_str(t, delta(s->s[0].v[cb], s->s[1].v[cb]), 1, !t->exact,
	    c, sizeof(c)), size_str(t, s->s[0].v[cb], a, sizeof(a)),
	    size_str(t, s->s[1].v[cb], b, sizeof(b)));
	dv = delta(s->s[0].v[co], s->s[1].v[co]);
	fprintf(t->fp, "%s object%s (%" PRIu64 " -> %" PRIu64 ")",
	    delta_str(t, dv, 0, !t->exact, c, sizeof(c)),
	    magnitude(dv) == 1 ? "" : "s",
	    s->s[0].v[co], s->s[1].v[co]);
}

/* The side whose row names a site and gives its frames: new if it has
 * it. */
static int
site_side(const struct dsite *s)
{
	return s->row[1] != NULL ? 1 : 0;
}

static int
text_detail(struct diff *d, const struct text *t)
{
	const struct ht_sym_frame *fr;
	const struct dsite *s;
	char a[32], b[32];
	int64_t lo, hi;
	size_t i, n;
	int k, nfr, j;

	n = d->count[ST_NEW] + d->count[ST_GONE] + d->count[ST_CHANGED] +
	    d->count[ST_SAME];
	fprintf(t->fp, "\n%zu site%s: %zu new, %zu gone, %zu changed, %zu "
	    "same; by growth of bytes in use\n", n, n == 1 ? "" : "s",
	    d->count[ST_NEW], d->count[ST_GONE], d->count[ST_CHANGED],
	    d->count[ST_SAME]);
	for (i = 0; i < d->nshown; i++) {
		s = d->shown[i];
		if (s->status == ST_FOLDED)
			fprintf(t->fp, "\n(%zu smaller site%s) ", s->nfolded,
			    s->nfolded == 1 ? "" : "s");
		else
			fprintf(t->fp, "\n#%zu %s: ", i + 1,
			    status_names[s->status]);
		text_change(t, "in use", s, COL_INUSE_BYTES,
		    COL_INUSE_OBJECTS);
		fputs("\n    ", t->fp);
		text_change(t, "allocated", s, COL_ALLOC_BYTES,
		    COL_ALLOC_OBJECTS);
		fprintf(t->fp, "\n    %" PRIu64 " -> %" PRIu64 " samples; ",
		    s->s[0].v[COL_SAMPLES], s->s[1].v[COL_SAMPLES]);
		if (d->exact)
			fputs("exact\n", t->fp);
		else {
			delta_interval(d, &s->s[0], &s->s[1], &lo, &hi);
			fprintf(t->fp, "in use change 95%% %s..%s\n",
			    delta_str(t, lo, 1, 0, a, sizeof(a)),
			    delta_str(t, hi, 1, 0, b, sizeof(b)));
		}
		if (s->status == ST_FOLDED)
			continue;
		k = site_side(s);
		if ((nfr = ht_view_frames(&d->v[k], s->row[k], &fr)) < 0)
			return -1;
		if (nfr == 0)
			fprintf(t->fp, "      %s\n",
			    ht_view_row_name(s->row[k], a, sizeof(a)));
		for (j = 0; j < nfr; j++)
			ht_report_frame(t->fp, &fr[j]);
	}
	return 0;
}

static void
problem_note(void *arg, const char *path, const char *why)
{
	FILE *fp = arg;

	fputs("note: ", fp);
	ht_report_put_safe(fp, path, SIZE_MAX);
	fprintf(fp, ": %s; its frames show as module+offset\n", why);
}

static int
write_text(FILE *fp, struct diff *d, const struct ht_diff_opts *opts,
    struct ht_sym *osym, struct ht_sym *nsym)
{
	struct text t = { fp, opts->raw_bytes, d->exact };

	text_summary(d, &t);
	if (!opts->detail)
		return 0;
	if (text_detail(d, &t) != 0)
		return -1;
	if (ht_sym_problems(osym, NULL, NULL) +
	    ht_sym_problems(nsym, NULL, NULL) > 0) {
		putc('\n', fp);
		ht_sym_problems(osym, problem_note, fp);
		if (nsym != osym)
			ht_sym_problems(nsym, problem_note, fp);
	}
	return 0;
}

/* ---- JSON ---- */

static void
json_session(struct ht_json *j, const char *key, const struct diff *d, int k)
{
	const struct ht_meta *m = &d->prof[k]->meta;

	ht_json_object_begin(j, key);
	ht_json_uint(j, "pid", m->pid);
	ht_json_stringn(j, "command", m->command,
	    strnlen(m->command, sizeof(m->command)));
	ht_json_uint(j, "epoch", m->epoch);
	ht_json_string(j, "state", ht_profile_state_name(m->state));
	ht_json_uint(j, "rate", m->rate);
	ht_json_double(j, "duration_s", duration_s(m));
	ht_json_bool(j, "exact", m->rate == 1);
	ht_json_bool(j, "at_exit", (m->flags & HT_META_AT_EXIT) != 0);
	ht_json_uint(j, "site_count", d->v[k].nsites);
	ht_json_object_end(j);
}

/* {"old": o, "new": n, "delta": n - o} */
static void
json_triple(struct ht_json *j, const char *key, uint64_t o, uint64_t n)
{
	ht_json_object_begin(j, key);
	ht_json_uint(j, "old", o);
	ht_json_uint(j, "new", n);
	ht_json_int(j, "delta", delta(o, n));
	ht_json_object_end(j);
}

static void
json_side(struct ht_json *j, const char *key, const struct side *s)
{
	int c;

	ht_json_object_begin(j, key);
	for (c = 0; c < NCOLS; c++)
		ht_json_uint(j, col_keys[c], s->v[c]);
	ht_json_object_end(j);
}

static int
json_site(struct ht_json *j, struct diff *d, const struct dsite *s)
{
	const struct ht_sym_frame *fr;
	char buf[24];
	int64_t lo, hi;
	int c, k, nfr, i;

	ht_json_object_begin(j, NULL);
	ht_json_string(j, "status", status_names[s->status]);
	json_side(j, "old", &s->s[0]);
	json_side(j, "new", &s->s[1]);
	ht_json_object_begin(j, "delta");
	for (c = 0; c < NCOLS; c++)
		ht_json_int(j, col_keys[c], delta(s->s[0].v[c], s->s[1].v[c]));
	delta_interval(d, &s->s[0], &s->s[1], &lo, &hi);
	ht_json_int(j, "inuse_bytes_low", lo);
	ht_json_int(j, "inuse_bytes_high", hi);
	ht_json_object_end(j);
	ht_json_uint(j, "folded_sites", s->status == ST_FOLDED ?
	    s->nfolded : 0);
	ht_json_array_begin(j, "frames");
	if (s->status != ST_FOLDED) {
		k = site_side(s);
		if ((nfr = ht_view_frames(&d->v[k], s->row[k], &fr)) < 0)
			return -1;
		for (i = 0; i < nfr; i++) {
			ht_json_object_begin(j, NULL);
			snprintf(buf, sizeof(buf), "0x%" PRIx64,
			    fr[i].address);
			ht_json_string(j, "address", buf);
			ht_json_string(j, "module", fr[i].module);
			snprintf(buf, sizeof(buf), "0x%" PRIx64, fr[i].offset);
			ht_json_string(j, "offset", buf);
			ht_json_string(j, "function", fr[i].function);
			ht_json_string(j, "file", fr[i].file);
			if (fr[i].line > 0)
				ht_json_uint(j, "line", fr[i].line);
			else
				ht_json_null(j, "line");
			ht_json_bool(j, "inlined", fr[i].inlined);
			if (fr[i].flags & HT_SYM_BUILD_ID_MISMATCH)
				ht_json_bool(j, "build_id_mismatch", 1);
			ht_json_object_end(j);
		}
	}
	ht_json_array_end(j);
	ht_json_object_end(j);
	return 0;
}

static int
write_json(FILE *fp, struct diff *d, const struct ht_diff_opts *opts)
{
	static const char *const mod_keys[MOD_COLS] = {
		"inuse_bytes", "inuse_objects", "alloc_bytes", "alloc_objects",
	};
	const struct side *o = &d->tot[0], *n = &d->tot[1];
	struct ht_json j;
	int64_t lo, hi;
	size_t i;
	int c;

	ht_json_init(&j, fp, 1);
	ht_json_object_begin(&j, NULL);
	json_session(&j, "old", d, 0);
	json_session(&j, "new", d, 1);
	ht_json_bool(&j, "exact", d->exact);

	ht_json_object_begin(&j, "totals");
	for (c = 0; c < NCOLS; c++) {
		if (c != COL_INUSE_BYTES) {
			json_triple(&j, col_keys[c], o->v[c], n->v[c]);
			continue;
		}
		ht_json_object_begin(&j, col_keys[c]);
		ht_json_uint(&j, "old", o->v[c]);
		ht_json_uint(&j, "new", n->v[c]);
		ht_json_int(&j, "delta", delta(o->v[c], n->v[c]));
		delta_interval(d, o, n, &lo, &hi);
		ht_json_int(&j, "delta_low", lo);
		ht_json_int(&j, "delta_high", hi);
		ht_json_object_end(&j);
	}
	json_triple(&j, "peak_inuse_bytes", ht_view_peak_bytes(&d->v[0]),
	    ht_view_peak_bytes(&d->v[1]));
	json_triple(&j, "site_count", d->v[0].nsites, d->v[1].nsites);
	ht_json_object_end(&j);

	ht_json_object_begin(&j, "status_counts");
	for (c = ST_SAME; c < ST_FOLDED; c++)
		ht_json_uint(&j, status_names[c], d->count[c]);
	ht_json_object_end(&j);

	ht_json_array_begin(&j, "modules");
	for (i = 0; i < d->nmods; i++) {
		ht_json_object_begin(&j, NULL);
		ht_json_string(&j, "module", d->mods[i].name);
		for (c = 0; c < MOD_COLS; c++)
			json_triple(&j, mod_keys[c], d->mods[i].v[0][c],
			    d->mods[i].v[1][c]);
		ht_json_object_end(&j);
	}
	ht_json_array_end(&j);

	if (opts->detail) {
		ht_json_array_begin(&j, "sites");
		for (i = 0; i < d->nshown; i++)
			if (json_site(&j, d, d->shown[i]) != 0)
				return -1;
		ht_json_array_end(&j);
	}
	ht_json_object_end(&j);
	return ht_json_finish(&j);
}

int
ht_diff_write(FILE *fp, const struct ht_profile *old, struct ht_sym *osym,
    const struct ht_profile *new, struct ht_sym *nsym,
    const struct ht_diff_opts *opts)
{
	struct diff d;
	int rc;

	if (diff_build(&d, old, osym, new, nsym, opts) != 0)
		return -1;
	if (opts->json)
		rc = write_json(fp, &d, opts);
	else
		rc = write_text(fp, &d, opts, osym, nsym);
	diff_free(&d);
	if (rc == 0 && (fflush(fp) != 0 || ferror(fp)))
		rc = -1;
	return rc;
}

/* ---- the commands ---- */


/* Open out (NULL or "-": stdout), write the diff, close.  Returns the exit
 * status, after printing why on failure. */
static int
emit(const char *out, const struct ht_profile *old, struct ht_sym *osym,
    const struct ht_profile *new, struct ht_sym *nsym,
    const struct ht_diff_opts *opts)
{
	FILE *fp = stdout;
	int rc = HT_EXIT_OK;

	if (out != NULL && strcmp(out, "-") != 0 &&
	    (fp = fopen(out, "w")) == NULL) {
		ht_warn("-o %s: %s; choose a writable path", out,
		    strerror(errno));
		return HT_EXIT_FAIL;
	}
	if (ht_diff_write(fp, old, osym, new, nsym, opts) != 0) {
		ht_warn("diff: %s: %s", fp == stdout ? "stdout" : out,
		    strerror(errno));
		rc = HT_EXIT_FAIL;
	}
	if (fp != stdout && fclose(fp) != 0 && rc == HT_EXIT_OK) {
		ht_warn("-o %s: %s", out, strerror(errno));
		rc = HT_EXIT_FAIL;
	}
	return rc;
}

static const char diff_usage[] =
"usage: heaptool diff [--detail] [--json] [--top N] [--bytes] [-o OUT]\n"
"                     OLD NEW\n"
"\n"
"Compare two profiles (files written by heaptool run or dump; - reads\n"
"stdin): the change of every total and of the memory of each module, and\n"
"with --detail of each allocation site, the largest growth first.  Sites\n"
"are matched by their stacks as module and offset, so two runs of one\n"
"program match; a site only NEW has is new, one only OLD has is gone.\n"
"\n"
"  -d, --detail         also list the sites, each with old, new and delta\n"
"  -j, --json           write JSON (keys in man heaptool)\n"
"  -t, --top N          list the N sites that changed most, fold the rest\n"
"  -b, --bytes          print sizes in bytes, not KiB/MiB/GiB\n"
"  -o, --output OUT     write the diff to OUT instead of stdout\n"
"  -h, --help           show this help\n"
"\n"
"See man heaptool for the details.\n";

static const struct option diff_options[] = {
	{ "detail", no_argument, NULL, 'd' },
	{ "json", no_argument, NULL, 'j' },
	{ "top", required_argument, NULL, 't' },
	{ "bytes", no_argument, NULL, 'b' },
	{ "output", required_argument, NULL, 'o' },
	{ "help", no_argument, NULL, 'h' },
	{ NULL, 0, NULL, 0 },
};

int
ht_cmd_diff(int argc, char **argv)
{
	struct ht_diff_opts opts;
	struct ht_profile *prof[2] = { NULL, NULL };
	struct ht_sym *sym[2] = { NULL, NULL };
	const char *out = NULL;
	char err[256];
	int c, k, rc = HT_EXIT_FAIL;

	memset(&opts, 0, sizeof(opts));
	optind = 0;
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":djt:bo:h", diff_options,
	    NULL)) != -1) {
		switch (c) {
		case 'd':
			opts.detail = 1;
			break;
		case 'j':
			opts.json = 1;
			break;
		case 't':
			if (ht_report_parse_count(optarg, &opts.top) != 0)
				return ht_usage("--top %s: not a count; use a "
				    "whole number of sites, at least 1",
				    optarg);
			break;
		case 'b':
			opts.raw_bytes = 1;
			break;
		case 'o':
			if (optarg[0] == '\0')
				return ht_usage("-o: empty file name; give "
				    "the diff's path");
			out = optarg;
			break;
		case 'h':
			fputs(diff_usage, stdout);
			return fflush(stdout) == 0 && !ferror(stdout) ?
			    HT_EXIT_OK : HT_EXIT_FAIL;
		case ':':
			return ht_usage("diff: %s needs a value; see "
			    "'heaptool diff --help'", argv[optind - 1]);
		default:
			return ht_usage("diff: %s: unknown option; see "
			    "'heaptool diff --help'", argv[optind - 1]);
		}
	}
	if (argc - optind != 2)
		return ht_usage("diff: %s; usage: heaptool diff [OPTION...] "
		    "OLD NEW", argc - optind < 2 ? "two profiles needed" :
		    "only two profiles at a time");
	if (strcmp(argv[optind], "-") == 0 &&
	    strcmp(argv[optind + 1], "-") == 0)
		return ht_usage("diff: - and -: standard input holds one "
		    "profile; give at least one file");

	for (k = 0; k < 2; k++) {
		const char *path = argv[optind + k];

		if ((prof[k] = ht_profile_read_file(path, err,
		    sizeof(err))) == NULL) {
			ht_warn("diff %s: %s; %s", path, err,
			    errno == ENOENT ? "check the file name" :
			    "pass a profile written by heaptool");
			goto out;
		}
		if ((sym[k] = ht_sym_new(prof[k]->modules, prof[k]->nmodules,
		    NULL)) == NULL) {
			ht_warn("diff %s: %s", path, strerror(errno));
			goto out;
		}
	}
	rc = emit(out, prof[0], sym[0], prof[1], sym[1], &opts);
out:
	for (k = 0; k < 2; k++) {
		if (sym[k] != NULL)
			ht_sym_free(sym[k]);
		if (prof[k] != NULL)
			ht_profile_free(prof[k]);
	}
	return rc;
}

/* ---- baselines ---- */


#define BASELINE_FMT	"baseline.%ld.%" PRIu64 ".heap"

/* The baseline's path for pid started at start, in dir (made with
 * create).  Returns 0, or -1 with errno. */
static int
baseline_path(char *buf, size_t len, pid_t pid, uint64_t start, int create)
{
	char dir[PATH_MAX];
	int n;

	if (ht_state_dir(dir, sizeof(dir), create) != 0)
		return -1;
	n = snprintf(buf, len, "%s/" BASELINE_FMT, dir, (long)pid, start);
	if (n < 0 || (size_t)n >= len) {
		errno = ENAMETOOLONG;
		return -1;
	}
	return 0;
}

/* The start time of pid, or -1 after printing why. */
static int
start_time(pid_t pid, uint64_t *start)
{
	struct ht_proc p;

	if (ht_proc_read(pid, &p) != 0 || p.state == 'Z' || p.state == 'X') {
		ht_warn("target %ld: no such process (it exited); check the "
		    "PID", (long)pid);
		return -1;
	}
	*start = p.start_time;
	return 0;
}

/*
 * The current profile of pid from its agent: the bytes (copied into *raw,
 * malloc'd, when raw is not NULL) and the decoded profile.  Returns the
 * profile, or NULL after printing why.
 */
static struct ht_profile *
pull(pid_t pid, uint8_t **raw, size_t *rawlen)
{
	struct ht_profile *prof = NULL;
	struct ht_ctl *c;
	const uint8_t *buf;
	char err[256];
	size_t len;

	if ((c = ht_ctl_new(pid)) == NULL) {
		ht_warn("target %ld: out of memory", (long)pid);
		return NULL;
	}
	if (ht_ctl_report(c, &buf, &len) != 0) {
		ht_warn("%s", ht_ctl_error(c));
		goto out;
	}
	if ((prof = ht_profile_decode(buf, len, err, sizeof(err))) == NULL) {
		ht_warn("target %ld: the agent sent a profile that does not "
		    "decode (%s); use the heaptool that matches the agent",
		    (long)pid, err);
		goto out;
	}
	if (raw != NULL) {
		if ((*raw = malloc(len > 0 ? len : 1)) == NULL) {
			ht_warn("target %ld: out of memory", (long)pid);
			ht_profile_free(prof);
			prof = NULL;
			goto out;
		}
		memcpy(*raw, buf, len);
		*rawlen = len;
	}
out:
	ht_ctl_free(c);
	return prof;
}



/* Remove the baselines of processes that are gone (their pid is free, or
 * has another start time now): nothing could ever read them again. */
static void
prune_baselines(void)
{
	char dir[PATH_MAX], end[8];
	struct dirent *de;
	struct ht_proc p;
	unsigned long long start;
	long pid;
	DIR *dp;

	if (ht_state_dir(dir, sizeof(dir), 0) != 0 || (dp = opendir(dir)) == NULL)
		return;
	while ((de = readdir(dp)) != NULL) {
		if (sscanf(de->d_name, "baseline.%ld.%llu%7s", &pid, &start,
		    end) != 3 || strcmp(end, ".heap") != 0 || pid <= 0 ||
		    pid > INT_MAX)
			continue;
		if (ht_proc_read((pid_t)pid, &p) == 0 ? p.start_time == start :
		    errno != ENOENT)
			continue;
		unlinkat(dirfd(dp), de->d_name, 0);
	}
	closedir(dp);
}

static const char baseline_usage[] =
"usage: heaptool baseline [-p PID]\n"
"\n"
"Remember the target's current profile (PID, or the current target of\n"
"heaptool attach) as its baseline: heaptool report --diff then shows what\n"
"changed since.  A new baseline replaces the previous one.\n"
"\n"
"  -p, --pid PID        the running process PID\n"
"  -h, --help           show this help\n"
"\n"
"See man heaptool for the details.\n";

static const struct option baseline_options[] = {
	{ "pid", required_argument, NULL, 'p' },
	{ "help", no_argument, NULL, 'h' },
	{ NULL, 0, NULL, 0 },
};

int
ht_cmd_baseline(int argc, char **argv)
{
	struct ht_profile *prof;
	const struct ht_site_rec *s;
	const char *popt = NULL;
	char path[PATH_MAX + 64], a[32];
	uint64_t start, start2, inuse = 0, objects = 0, nsites = 0;
	uint8_t *raw = NULL;
	size_t len = 0, i;
	int c, rc;
	pid_t pid;

	optind = 0;
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":p:h", baseline_options,
	    NULL)) != -1) {
		switch (c) {
		case 'p':
			popt = optarg;
			break;
		case 'h':
			fputs(baseline_usage, stdout);
			return fflush(stdout) == 0 && !ferror(stdout) ?
			    HT_EXIT_OK : HT_EXIT_FAIL;
		case ':':
			return ht_usage("baseline: %s needs a value; see "
			    "'heaptool baseline --help'", argv[optind - 1]);
		default:
			return ht_usage("baseline: %s: unknown option; see "
			    "'heaptool baseline --help'", argv[optind - 1]);
		}
	}
	if (optind < argc)
		return ht_usage("baseline: %s: unexpected argument; give the "
		    "process with -p PID", argv[optind]);
	if ((rc = ht_target_resolve(popt, &pid)) != HT_EXIT_OK)
		return rc;
	if (start_time(pid, &start) != 0)
		return HT_EXIT_FAIL;
	if ((prof = pull(pid, &raw, &len)) == NULL)
		return HT_EXIT_FAIL;
	rc = HT_EXIT_FAIL;
	/* The profile must be the process's whose start time names it. */
	if (start_time(pid, &start2) != 0)
		goto out;
	if (start2 != start) {
		ht_warn("target %ld: no such process (it exited); check the "
		    "PID", (long)pid);
		goto out;
	}
	if (baseline_path(path, sizeof(path), pid, start, 1) != 0 ||
	    ht_write_atomic(path, raw, len) != 0) {
		ht_warn("baseline %ld: %s; set XDG_STATE_HOME to a writable "
		    "directory", (long)pid, strerror(errno));
		goto out;
	}
	prune_baselines();
	for (i = 0; i < prof->nsites; i++) {
		s = &prof->sites[i];
		inuse += s->inuse_bytes;
		objects += s->inuse_objects;
		nsites += s->folded > 0 ? s->folded : 1;
	}
	printf("heaptool: baseline of %ld saved to %s: session %" PRIu64
	    " (%s), %s%s in use in %" PRIu64 " object%s at %" PRIu64
	    " site%s, rate %" PRIu64 "\n", (long)pid, path, prof->meta.epoch,
	    ht_profile_state_name(prof->meta.state),
	    prof->meta.rate == 1 ? "" : "about ",
	    ht_size_format(inuse, a, sizeof(a)), objects,
	    objects == 1 ? "" : "s", nsites, nsites == 1 ? "" : "s",
	    prof->meta.rate);
	if (fflush(stdout) != 0 || ferror(stdout))
		ht_warn("stdout: %s", strerror(errno));
	else
		rc = HT_EXIT_OK;
out:
	free(raw);
	ht_profile_free(prof);
	return rc;
}

int
ht_diff_live(const char *popt, const struct ht_diff_opts *opts,
    const char *out)
{
	struct ht_profile *base = NULL, *now = NULL;
	struct ht_sym *bsym = NULL, *nsym = NULL;
	struct ht_sym_opts sopts;
	char path[PATH_MAX + 64], err[256], root[64];
	uint64_t start;
	int rc;
	pid_t pid;

	if ((rc = ht_target_resolve(popt, &pid)) != HT_EXIT_OK)
		return rc;
	if (start_time(pid, &start) != 0)
		return HT_EXIT_FAIL;
	rc = HT_EXIT_FAIL;
	if (baseline_path(path, sizeof(path), pid, start, 0) != 0) {
		ht_warn("report --diff: no baseline for %ld (%s); run "
		    "heaptool baseline first", (long)pid, strerror(errno));
		return HT_EXIT_FAIL;
	}
	if ((base = ht_profile_read_file(path, err, sizeof(err))) == NULL) {
		if (errno == ENOENT)
			ht_warn("report --diff: no baseline for %ld; run "
			    "heaptool baseline first", (long)pid);
		else
			ht_warn("report --diff: baseline %s: %s; run heaptool "
			    "baseline again", path, err);
		return HT_EXIT_FAIL;
	}
	if ((now = pull(pid, NULL, NULL)) == NULL)
		goto out;
	/* Both are the process's: its files as it sees them. */
	memset(&sopts, 0, sizeof(sopts));
	snprintf(root, sizeof(root), "/proc/%ld/root", (long)pid);
	sopts.root = root;
	sopts.pid = pid;
	if ((bsym = ht_sym_new(base->modules, base->nmodules, &sopts)) ==
	    NULL || (nsym = ht_sym_new(now->modules, now->nmodules,
	    &sopts)) == NULL) {
		ht_warn("report --diff %ld: %s", (long)pid, strerror(errno));
		goto out;
	}
	rc = emit(out, base, bsym, now, nsym, opts);
out:
	if (nsym != NULL)
		ht_sym_free(nsym);
	if (bsym != NULL)
		ht_sym_free(bsym);
	ht_profile_free(now);
	ht_profile_free(base);
	return rc;
}
