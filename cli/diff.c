/*
 * The diff model (see diff.h): two whole views, their sites matched by
 * key, the totals and per-module sums, and the order and fold of what is
 * shown.
 */
#include "config.h"

#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "diff.h"
#include "view.h"

/* Key types: the first byte of a key. */
#define KEY_STACK   'S' /* a site with its frames */
#define KEY_NOSTACK 'N' /* a site whose stack was not recorded */
#define KEY_FOLD    'F' /* the sites the agent folded */

/* A module of a profile and how sites name it across runs: its id, and
 * that id's rank among the ids of both profiles (what keys hold). */
struct modkey {
	const struct ht_module_rec *m;
	char *id;
	uint32_t rank; /* from 1; 0 is a frame in no module */
};

int64_t
ht_diff_delta(uint64_t old, uint64_t new)
{
	/* Exact below 2^63; beyond, the most an int64_t says, never a
	 * wrapped value of the other sign. */
	if (new >= old)
		return new - old > (uint64_t)INT64_MAX ? INT64_MAX :
							 (int64_t)(new - old);
	return old - new > (uint64_t)INT64_MAX ? -INT64_MAX :
						 -(int64_t)(old - new);
}

uint64_t
ht_diff_magnitude(int64_t d)
{
	return d < 0 ? -(uint64_t)d : (uint64_t)d;
}

int64_t
ht_diff_change(const struct ht_diff_side s[2], int c)
{
	return ht_diff_delta(s[0].v[c], s[1].v[c]);
}

const char *
ht_diff_status_name(enum ht_diff_status st)
{
	static const char *const names[HT_DIFF_NSTATUS] = {
		"same",
		"changed",
		"new",
		"gone",
		"folded",
	};

	return names[st];
}

int
ht_diff_site_side(const struct ht_diff_site *s)
{
	return s->row[1] != NULL ? 1 : 0;
}

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
		    m->build_id_len :
		    HT_PROFILE_MAX_BUILD_ID;
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
		n = strlen(base);
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
 * call, as the symbolizer does), or NULL.  *hint is the last answer: the
 * frames of a stack mostly lie in one module, and a look at it spares the
 * search when it is the one the search would find. */
static const struct modkey *
modkey_find(const struct modkey *mk, size_t n, uint64_t addr,
    const struct modkey **hint)
{
	const struct modkey *h = *hint;
	size_t lo = 0, hi = n, mid;
	uint64_t a = addr > 0 ? addr - 1 : addr;

	if (h != NULL && h->m->start <= a && a < h->m->end &&
	    (h + 1 == mk + n || h[1].m->start > a))
		return h;
	while (lo < hi) {
		mid = lo + (hi - lo) / 2;
		if (mk[mid].m->start <= a)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo == 0 || a >= mk[lo - 1].m->end)
		return NULL;
	return *hint = &mk[lo - 1];
}

static int
id_cmp(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/*
 * Rank the module ids of both profiles (n[k] modules in mk[k]) in byte
 * order, from 1: a key holds the rank of a frame's module, 4 bytes rather
 * than the id (up to 129), and keys still sort as their ids would.
 * Returns 0, or -1 (ENOMEM).
 */
static int
modkeys_rank(struct modkey *mk[2], const size_t n[2])
{
	char **ids;
	size_t i, j, lo, hi, mid, nids = 0;
	int k, c;

	if ((ids = calloc(n[0] + n[1] + 1, sizeof(*ids))) == NULL)
		return -1;
	for (k = 0; k < 2; k++)
		for (i = 0; i < n[k]; i++)
			ids[nids++] = mk[k][i].id;
	qsort(ids, nids, sizeof(*ids), id_cmp);
	for (i = j = 0; i < nids; i++)
		if (j == 0 || strcmp(ids[j - 1], ids[i]) != 0)
			ids[j++] = ids[i];
	for (k = 0; k < 2; k++)
		for (i = 0; i < n[k]; i++) {
			lo = 0;
			hi = j;
			while (lo < hi) {
				mid = lo + (hi - lo) / 2;
				if ((c = strcmp(ids[mid], mk[k][i].id)) < 0)
					lo = mid + 1;
				else
					hi = mid;
			}
			mk[k][i].rank = (uint32_t)lo + 1;
		}
	free(ids);
	return 0;
}

/* A key being made: a growing buffer. */
struct key {
	uint8_t *b;
	size_t n, cap;
};

/* Room for n bytes in key.  Returns 0, or -1 (ENOMEM). */
static int
key_reserve(struct key *key, size_t n)
{
	uint8_t *b;
	size_t cap;

	if (n <= key->cap)
		return 0;
	cap = key->cap == 0 ? 256 : key->cap;
	while (cap < n)
		cap *= 2;
	if ((b = realloc(key->b, cap)) == NULL)
		return -1;
	key->b = b;
	key->cap = cap;
	return 0;
}

static uint8_t
key_type(const struct ht_view_row *r)
{
	if (r->site == NULL || r->site->folded > 0)
		return KEY_FOLD;
	if (r->site->nframes == 0)
		return KEY_NOSTACK;
	return KEY_STACK;
}

static uint32_t
key_nframes(const struct ht_view_row *r)
{
	return r->site->nframes < HT_PROFILE_MAX_FRAMES ? r->site->nframes :
							  HT_PROFILE_MAX_FRAMES;
}

/* The 12 bytes of a frame at addr in a key (see row_key) at p. */
static void
key_frame(uint8_t *p, const struct modkey *mk, size_t nmk, uint64_t addr,
    const struct modkey **hint)
{
	const struct modkey *k;
	uint32_t rank = 0;

	if ((k = modkey_find(mk, nmk, addr, hint)) != NULL) {
		addr -= k->m->bias;
		rank = k->rank;
	}
	p[0] = (uint8_t)(rank >> 24);
	p[1] = (uint8_t)(rank >> 16);
	p[2] = (uint8_t)(rank >> 8);
	p[3] = (uint8_t)rank;
	memcpy(p + 4, &addr, sizeof(addr));
}

/*
 * The key of row r (of a profile whose modules are mk) into key: its
 * type, then per frame the rank of its module's name across runs
 * (modkeys_rank; 4 bytes, most significant first) and the 8 bytes of the
 * offset (address - bias); a frame outside every module has rank 0 and
 * its address.  12 bytes a frame, so no two stacks share a key.  Sites
 * keep only its hash: a site's frames are compared with a key (key_is)
 * when it meets one of that hash (64 frames made 769 bytes a site, more
 * than its record in the file).
 */
/* The tag part of row r's key (of view v), after its frames: nothing for
 * an untagged malloc site (keys as before tags), else the kind + 1 and
 * the tag's name: tags match across profiles by name, whatever their
 * ids.  Returns its length (at most TAG_PART). */
#define TAG_PART 300
static size_t
tag_part(const struct ht_view *v, const struct ht_view_row *r, uint8_t *b)
{
	const char *name;
	char buf[32];
	size_t n;

	if (r->site == NULL || (r->site->tag == 0 && r->site->kind == 0))
		return 0;
	name = ht_view_tag_name(v, r->site->tag, buf, sizeof(buf));
	n = strnlen(name, TAG_PART - 1);
	b[0] = (uint8_t)(r->site->kind != 0 ? 2 : 1);
	memcpy(b + 1, name, n);
	return 1 + n;
}

static int
row_key(struct key *key, const struct modkey *mk, size_t nmk,
    const struct ht_view_row *r, const struct ht_view *v)
{
	const struct modkey *hint = NULL;
	uint32_t i, n;
	uint8_t type = key_type(r), tb[TAG_PART];
	size_t tl = tag_part(v, r, tb);

	n = type == KEY_STACK ? key_nframes(r) : 0;
	if (key_reserve(key, 1 + 12 * (size_t)n + tl) != 0)
		return -1;
	key->b[0] = type;
	for (i = 0; i < n; i++)
		key_frame(key->b + 1 + 12 * i, mk, nmk, r->frames[i], &hint);
	memcpy(key->b + 1 + 12 * (size_t)n, tb, tl);
	key->n = 1 + 12 * (size_t)n + tl;
	return 0;
}

/* Whether row r (of a profile whose modules are mk) has the key key. */
static int
key_is(const struct key *key, const struct modkey *mk, size_t nmk,
    const struct ht_view_row *r, const struct ht_view *v)
{
	const struct modkey *hint = NULL;
	uint32_t i, n;
	uint8_t type = key_type(r), b[12], tb[TAG_PART];
	size_t tl = tag_part(v, r, tb);

	n = type == KEY_STACK ? key_nframes(r) : 0;
	if (key->n != 1 + 12 * (size_t)n + tl || key->b[0] != type ||
	    memcmp(key->b + 1 + 12 * (size_t)n, tb, tl) != 0)
		return 0;
	for (i = 0; i < n; i++) {
		key_frame(b, mk, nmk, r->frames[i], &hint);
		if (memcmp(b, key->b + 1 + 12 * i, sizeof(b)) != 0)
			return 0;
	}
	return 1;
}

/* The hash of a key, eight bytes at a time (FNV-1a a byte at a time was a
 * tenth of a diff of 200,000 stacks of 64 frames), its bits mixed at the
 * end: the index takes the low ones. */
static uint64_t
key_hash(const struct key *key)
{
	uint64_t h = HT_VIEW_HASH0, w;
	size_t i;

	for (i = 0; i + 8 <= key->n; i += 8) {
		memcpy(&w, key->b + i, sizeof(w));
		h = (h ^ w) * 0x9e3779b97f4a7c15ULL;
		h ^= h >> 29;
	}
	for (; i < key->n; i++)
		h = (h ^ key->b[i]) * 0x100000001b3ULL;
	h ^= h >> 33;
	h *= 0xff51afd7ed558ccdULL;
	h ^= h >> 33;
	return h;
}

/* The sites' keys while they are matched: both profiles' modules, the key
 * looked up and one made again for a comparison. */
struct keys {
	struct ht_diff *d;
	struct modkey *mk[2];
	size_t nmk[2];
	struct key probe;
};

/* Is site id's key the probe?  Its first row (on either side), whose hash
 * was the probe's, is compared with it. */
static int
key_eq(void *ctx, uint32_t id)
{
	struct keys *ks = ctx;
	const struct ht_diff_site *s = &ks->d->sites[id];
	int k = s->row[0] != NULL ? 0 : 1;

	return key_is(&ks->probe, ks->mk[k], ks->nmk[k], s->row[k],
	    &ks->d->v[k]);
}

static void
side_add_row(struct ht_diff_side *s, const struct ht_view_row *r)
{
	const struct ht_view_figures *f = &r->f;

	s->v[HT_DIFF_INUSE_BYTES] =
	    ht_view_sat_add(s->v[HT_DIFF_INUSE_BYTES], f->inuse_bytes);
	s->v[HT_DIFF_INUSE_OBJECTS] =
	    ht_view_sat_add(s->v[HT_DIFF_INUSE_OBJECTS], f->inuse_objects);
	s->v[HT_DIFF_ALLOC_BYTES] =
	    ht_view_sat_add(s->v[HT_DIFF_ALLOC_BYTES], f->alloc_bytes);
	s->v[HT_DIFF_ALLOC_OBJECTS] =
	    ht_view_sat_add(s->v[HT_DIFF_ALLOC_OBJECTS], f->alloc_objects);
	/* Per row, so that the freed bytes of the sites add up too. */
	s->v[HT_DIFF_FREED_BYTES] = ht_view_sat_add(s->v[HT_DIFF_FREED_BYTES],
	    f->alloc_bytes > f->inuse_bytes ? f->alloc_bytes - f->inuse_bytes :
					      0);
	s->v[HT_DIFF_SAMPLES] =
	    ht_view_sat_add(s->v[HT_DIFF_SAMPLES], f->samples);
	s->v[HT_DIFF_TEMP_OBJECTS] =
	    ht_view_sat_add(s->v[HT_DIFF_TEMP_OBJECTS], f->temp_objects);
	s->var += f->inuse_var;
}

static void
side_add(struct ht_diff_side *to, const struct ht_diff_side *s)
{
	int c;

	for (c = 0; c < HT_DIFF_NCOLS; c++)
		to->v[c] = ht_view_sat_add(to->v[c], s->v[c]);
	to->var += s->var;
}

static void
keys_free(struct keys *ks)
{
	int k;

	for (k = 0; k < 2; k++) {
		modkeys_free(ks->mk[k], ks->nmk[k]);
		ks->mk[k] = NULL;
	}
	free(ks->probe.b);
	ks->probe.b = NULL;
}

/* Put the rows of side k's view into the sites. */
static int
add_side(struct keys *ks, int k)
{
	struct ht_diff *d = ks->d;
	const struct ht_view_row *r;
	struct ht_diff_site *s;
	uint64_t h;
	int64_t id;
	size_t i;

	for (i = 0; i < d->v[k].nrows; i++) {
		if (i + HT_VIEW_AHEAD < d->v[k].nrows)
			ht_view_prefetch(&d->v[k].rows[i + HT_VIEW_AHEAD]);
		r = &d->v[k].rows[i];
		if (row_key(&ks->probe, ks->mk[k], ks->nmk[k], r,
			&ks->d->v[k]) != 0)
			goto out_nomem;
		h = key_hash(&ks->probe);
		id = ht_view_index_find(&d->index, h, key_eq, ks);
		if (id < 0) {
			s = &d->sites[d->nsites];
			memset(s, 0, sizeof(*s));
			s->hash = h;
			s->type = ks->probe.b[0];
			if (ht_view_index_add(&d->index, h,
				(uint32_t)d->nsites) != 0)
				goto out_nomem;
			id = (int64_t)d->nsites++;
		}
		s = &d->sites[id];
		/* Two records of one profile with one key (the same code
		 * mapped twice) are one site: their figures add up. */
		if (s->row[k] == NULL)
			s->row[k] = r;
		side_add_row(&s->s[k], r);
		if (s->type == KEY_FOLD && r->nfolded > s->nfolded)
			s->nfolded = r->nfolded;
	}
	return 0;

out_nomem:
	errno = ENOMEM;
	return -1;
}

static enum ht_diff_status
site_status(const struct ht_diff_site *s)
{
	int c;

	if (s->type == KEY_FOLD)
		return HT_DIFF_FOLDED;
	if (s->row[0] == NULL)
		return HT_DIFF_NEW;
	if (s->row[1] == NULL)
		return HT_DIFF_GONE;
	for (c = HT_DIFF_INUSE_BYTES; c <= HT_DIFF_ALLOC_OBJECTS; c++)
		if (s->s[0].v[c] != s->s[1].v[c])
			return HT_DIFF_CHANGED;
	return HT_DIFF_SAME;
}

static int
cmp_i64_desc(int64_t a, int64_t b)
{
	return a > b ? -1 : a < b;
}

/* Growth order: bytes in use grown most first; ties by bytes allocated,
 * then by size, then by the hash of the key, then by when the site was
 * met (the same input always prints the same). */
static int
growth_cmp(const void *a, const void *b)
{
	const struct ht_diff_site *x = *(const struct ht_diff_site *const *)a;
	const struct ht_diff_site *y = *(const struct ht_diff_site *const *)b;
	int c;

	if ((x->status == HT_DIFF_FOLDED) != (y->status == HT_DIFF_FOLDED))
		return x->status == HT_DIFF_FOLDED ? 1 : -1;
	if ((c = cmp_i64_desc(ht_diff_change(x->s, HT_DIFF_INUSE_BYTES),
		 ht_diff_change(y->s, HT_DIFF_INUSE_BYTES))) != 0)
		return c;
	if ((c = cmp_i64_desc(ht_diff_change(x->s, HT_DIFF_ALLOC_BYTES),
		 ht_diff_change(y->s, HT_DIFF_ALLOC_BYTES))) != 0)
		return c;
	if ((c = cmp_i64_desc((int64_t)x->s[1].v[HT_DIFF_INUSE_BYTES],
		 (int64_t)y->s[1].v[HT_DIFF_INUSE_BYTES])) != 0)
		return c;
	if ((c = cmp_i64_desc((int64_t)x->s[0].v[HT_DIFF_INUSE_BYTES],
		 (int64_t)y->s[0].v[HT_DIFF_INUSE_BYTES])) != 0)
		return c;
	if (x->hash != y->hash)
		return x->hash < y->hash ? -1 : 1;
	return x < y ? -1 : x > y;
}

/* Size of change, for --top: the largest change of bytes in use either
 * way first, then of bytes allocated, then growth order. */
static int
change_cmp(const void *a, const void *b)
{
	const struct ht_diff_site *x = *(const struct ht_diff_site *const *)a;
	const struct ht_diff_site *y = *(const struct ht_diff_site *const *)b;
	uint64_t mx, my;

	if ((x->status == HT_DIFF_FOLDED) != (y->status == HT_DIFF_FOLDED))
		return x->status == HT_DIFF_FOLDED ? 1 : -1;
	mx = ht_diff_magnitude(ht_diff_change(x->s, HT_DIFF_INUSE_BYTES));
	my = ht_diff_magnitude(ht_diff_change(y->s, HT_DIFF_INUSE_BYTES));
	if (mx != my)
		return mx > my ? -1 : 1;
	mx = ht_diff_magnitude(ht_diff_change(x->s, HT_DIFF_ALLOC_BYTES));
	my = ht_diff_magnitude(ht_diff_change(y->s, HT_DIFF_ALLOC_BYTES));
	if (mx != my)
		return mx > my ? -1 : 1;
	return growth_cmp(a, b);
}

static int
mod_cmp(const void *a, const void *b)
{
	const struct ht_diff_module *x = a, *y = b;
	int c;

	if ((c = cmp_i64_desc(ht_diff_delta(x->v[0][0], x->v[1][0]),
		 ht_diff_delta(y->v[0][0], y->v[1][0]))) != 0)
		return c;
	if ((c = cmp_i64_desc(ht_diff_delta(x->v[0][2], x->v[1][2]),
		 ht_diff_delta(y->v[0][2], y->v[1][2]))) != 0)
		return c;
	return strcmp(x->name, y->name);
}

/* For the index of the modules by name: the name being looked up. */
struct modnames {
	struct ht_diff *d;
	const char *key;
};

static int
modname_eq(void *ctx, uint32_t id)
{
	struct modnames *mn = ctx;

	return strcmp(mn->d->mods[id].name, mn->key) == 0;
}

static int
add_modules(struct ht_diff *d)
{
	const struct ht_view_module *vm;
	struct ht_diff_module *m;
	struct ht_view_index index;
	struct modnames mn = { d, NULL };
	uint64_t h;
	int64_t j;
	size_t i;
	int k;

	m = calloc(d->v[0].nmods + d->v[1].nmods + 1, sizeof(*m));
	if (m == NULL)
		return -1;
	d->mods = m;
	memset(&index, 0, sizeof(index));
	for (k = 0; k < 2; k++)
		for (i = 0; i < d->v[k].nmods; i++) {
			vm = &d->v[k].mods[i];
			h = ht_view_hash(HT_VIEW_HASH0, vm->name,
			    strlen(vm->name));
			mn.key = vm->name;
			if ((j = ht_view_index_find(&index, h, modname_eq,
				 &mn)) < 0) {
				if (ht_view_index_add(&index, h,
					(uint32_t)d->nmods) != 0) {
					ht_view_index_free(&index);
					return -1;
				}
				j = (int64_t)d->nmods;
				d->mods[d->nmods++].name = vm->name;
			}
			m = &d->mods[j];
			m->v[k][0] =
			    ht_view_sat_add(m->v[k][0], vm->f.inuse_bytes);
			m->v[k][1] =
			    ht_view_sat_add(m->v[k][1], vm->f.inuse_objects);
			m->v[k][2] =
			    ht_view_sat_add(m->v[k][2], vm->f.alloc_bytes);
			m->v[k][3] =
			    ht_view_sat_add(m->v[k][3], vm->f.alloc_objects);
		}
	ht_view_index_free(&index);
	if (d->nmods > 1)
		qsort(d->mods, d->nmods, sizeof(*d->mods), mod_cmp);
	return 0;
}

void
ht_diff_free(struct ht_diff *d)
{
	free(d->sites);
	free(d->shown);
	free(d->mods);
	ht_view_index_free(&d->index);
	if (d->built[0])
		ht_view_free(&d->v[0]);
	if (d->built[1])
		ht_view_free(&d->v[1]);
}

int
ht_diff_build(struct ht_diff *d, const struct ht_profile *old,
    struct ht_sym *osym, const struct ht_profile *new, struct ht_sym *nsym,
    const struct ht_diff_opts *opts)
{
	struct ht_view_opts vopts;
	struct ht_diff_site **order = NULL, *s;
	struct keys ks;
	size_t i, n, nkeep;
	int k;

	memset(d, 0, sizeof(*d));
	memset(&ks, 0, sizeof(ks));
	ks.d = d;
	d->prof[0] = old;
	d->prof[1] = new;
	d->exact = ht_view_meta_exact(&old->meta) &&
	    ht_view_meta_exact(&new->meta);
	d->floor = ht_view_meta_floor(&old->meta) ||
	    ht_view_meta_floor(&new->meta);
	/* Whole views: every site a row of its own (but those the agent
	 * folded), so that the diff folds by its own measure. */
	memset(&vopts, 0, sizeof(vopts));
	vopts.sort = HT_VIEW_INUSE;
	/* The diff sorts by growth; its sites meet the rows in memory
	 * order, with no cache miss for each. */
	vopts.unsorted = 1;
	vopts.fold = opts->fold;
	if (ht_view_build(&d->v[0], old, osym, &vopts) != 0)
		goto out_fail;
	d->built[0] = 1;
	if (ht_view_build(&d->v[1], new, nsym, &vopts) != 0)
		goto out_fail;
	d->built[1] = 1;

	d->sites = calloc(d->v[0].nrows + d->v[1].nrows + 1, sizeof(*d->sites));
	if (d->sites == NULL)
		goto out_nomem;
	for (k = 0; k < 2; k++) {
		ks.nmk[k] = d->prof[k]->nmodules;
		if ((ks.mk[k] = modkeys_new(d->prof[k])) == NULL)
			goto out_nomem;
	}
	if (modkeys_rank(ks.mk, ks.nmk) != 0)
		goto out_nomem;
	for (k = 0; k < 2; k++)
		if (add_side(&ks, k) != 0)
			goto out_fail;
	keys_free(&ks);
	for (i = 0; i < d->nsites; i++) {
		s = &d->sites[i];
		s->status = site_status(s);
		if (s->status == HT_DIFF_FOLDED)
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
		     order[nkeep]->status != HT_DIFF_FOLDED;
		     nkeep++)
			continue;
		memset(&d->fold, 0, sizeof(d->fold));
		d->fold.status = HT_DIFF_FOLDED;
		for (i = nkeep; i < n; i++) {
			side_add(&d->fold.s[0], &order[i]->s[0]);
			side_add(&d->fold.s[1], &order[i]->s[1]);
			d->fold.nfolded += order[i]->status == HT_DIFF_FOLDED ?
			    order[i]->nfolded :
			    1;
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
	keys_free(&ks);
	free(order);
	ht_diff_free(d);
	return -1;
}

void
ht_diff_prefetch(const struct ht_diff *d, size_t i)
{
	const struct ht_diff_site *s;
	const struct ht_view_row *r;

	if (i + 8 < d->nshown)
		__builtin_prefetch(d->shown[i + 8]);
	if (i + 4 < d->nshown) {
		s = d->shown[i + 4];
		__builtin_prefetch(s->row[s->row[1] != NULL]);
	}
	if (i + 2 < d->nshown) {
		s = d->shown[i + 2];
		if ((r = s->row[s->row[1] != NULL]) != NULL)
			ht_view_prefetch(r);
	}
}

int
ht_diff_symbolize(struct ht_diff *d)
{
	struct ht_view_symbols *st = &d->symbols;
	const struct ht_view_row *r;
	const struct ht_sym_frame *fr;
	struct ht_sym *sym;
	uint32_t k, n;
	size_t i;
	int side;

	memset(st, 0, sizeof(*st));
	st->max = ht_sym_max(d->v[1].sym);
	for (i = 0; i < d->nshown; i++) {
		ht_diff_prefetch(d, i);
		side = ht_diff_site_side(d->shown[i]);
		if ((r = d->shown[i]->row[side]) == NULL || r->site == NULL)
			continue;
		sym = d->v[side].sym;
		n = r->nframes;
		for (k = 0; k < n; k++) {
			if (ht_sym_lookup(sym, r->frames[k], &fr) < 0) {
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

/* x rounded, within what an int64_t holds (llround is undefined beyond). */
static int64_t
clamp_i64(double x)
{
	if (x >= 9223372036854775807.0)
		return INT64_MAX;
	if (x <= -9223372036854775807.0)
		return -INT64_MAX;
	return (int64_t)llround(x);
}

int
ht_diff_unknown(const struct ht_diff *d, int k, int c)
{
	uint32_t f = d->prof[k]->meta.flags;

	switch (c) {
	case HT_DIFF_ALLOC_BYTES:
	case HT_DIFF_ALLOC_OBJECTS:
	case HT_DIFF_FREED_BYTES:
		return (f & HT_META_ALLOC_UNKNOWN) != 0;
	case HT_DIFF_PEAK:
		return (f & HT_META_PEAK_UNKNOWN) != 0;
	case HT_DIFF_TEMP_OBJECTS:
		return !d->v[k].temp_known;
	default:
		return 0;
	}
}

void
ht_diff_interval(const struct ht_diff *d, const struct ht_diff_side *a,
    const struct ht_diff_side *b, int64_t *lo, int64_t *hi)
{
	double dv, w;

	if (d->floor) {
		*lo = INT64_MIN;
		*hi = INT64_MAX;
		return;
	}
	dv = (double)ht_diff_delta(a->v[HT_DIFF_INUSE_BYTES],
	    b->v[HT_DIFF_INUSE_BYTES]);
	w = d->exact ? 0 : 1.96 * sqrt(a->var + b->var);
	*lo = clamp_i64(dv - w);
	*hi = clamp_i64(dv + w);
}
