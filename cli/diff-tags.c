/*
 * The by-tag part of a diff (diff.h): each tag's lines (malloc, arena) on
 * both sides, matched by the tag's name (ids differ between processes),
 * old, new and the change of the bytes and objects in use and of the bytes
 * allocated.  From the views' tag lines, sums of their sites: so the
 * lines' changes add up to the totals' change.
 */
#include "config.h"

#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "diff.h"
#include "json.h"
#include "text.h"

/* Line k of the tag of view v called name, or NULL. */
static const struct ht_view_figures *
find_line(const struct ht_view *v, const char *name, int k)
{
	char buf[32];
	size_t i;

	for (i = 0; i < v->ntags; i++)
		if (v->tags[i].seen &&
		    strcmp(ht_view_tag_name(v, (uint32_t)i, buf, sizeof(buf)),
			name) == 0)
			return &v->tags[i].f[k];
	return NULL;
}

/* Calls fn for each (name, kind) either side has, the old side's first,
 * then those only the new one has. */
static void
each_line(const struct ht_diff *d,
    void (*fn)(void *, const char *, int, const struct ht_view_figures *,
	const struct ht_view_figures *),
    void *ctx)
{
	static const struct ht_view_figures zero;
	const struct ht_view_figures *o, *n;
	const struct ht_view *v;
	char buf[32];
	const char *name;
	size_t i;
	int side, k;

	for (side = 0; side < 2; side++) {
		v = &d->v[side];
		for (i = 0; i < v->ntags; i++) {
			if (!v->tags[i].seen)
				continue;
			name =
			    ht_view_tag_name(v, (uint32_t)i, buf, sizeof(buf));
			for (k = 0; k < 2; k++) {
				o = find_line(&d->v[0], name, k);
				n = find_line(&d->v[1], name, k);
				if (side == 1 && o != NULL)
					continue; /* done from the old side */
				if ((o == NULL || o->samples == 0) &&
				    (n == NULL || n->samples == 0))
					continue;
				fn(ctx, name, k, o != NULL ? o : &zero,
				    n != NULL ? n : &zero);
			}
		}
	}
}

static int
any_tags(const struct ht_diff *d)
{
	return d->v[0].has_tags || d->v[1].has_tags;
}

struct text_ctx {
	FILE *fp;
	int raw;
	int exact;
};

static const char *
delta(const struct text_ctx *t, uint64_t o, uint64_t n, int bytes, char *buf,
    size_t len)
{
	int64_t dv = ht_diff_delta(o, n);
	size_t at = 0;

	if (!t->exact && dv != 0)
		buf[at++] = '~';
	if (dv != 0)
		buf[at++] = dv > 0 ? '+' : '-';
	if (bytes)
		ht_text_size(t->raw, ht_diff_magnitude(dv), buf + at, len - at);
	else
		snprintf(buf + at, len - at, "%" PRIu64, ht_diff_magnitude(dv));
	return buf;
}

static void
text_line(void *ctx, const char *name, int k, const struct ht_view_figures *o,
    const struct ht_view_figures *n)
{
	const struct text_ctx *t = ctx;
	char a[32], b[32], c[32], e[32], f[32];
	int w;

	w = fprintf(t->fp, "  ");
	ht_text_safe(t->fp, name, 256);
	w += (int)strnlen(name, 256);
	w += fprintf(t->fp, " (%s)", ht_view_kind_name((uint32_t)k));
	fprintf(t->fp, "%*s %10s %10s %10s %10s %10s\n", w < 26 ? 26 - w : 0,
	    "", ht_text_size(t->raw, o->inuse_bytes, a, sizeof(a)),
	    ht_text_size(t->raw, n->inuse_bytes, b, sizeof(b)),
	    delta(t, o->inuse_bytes, n->inuse_bytes, 1, c, sizeof(c)),
	    delta(t, o->inuse_objects, n->inuse_objects, 0, e, sizeof(e)),
	    delta(t, o->alloc_bytes, n->alloc_bytes, 1, f, sizeof(f)));
}

void
ht_diff_tags_text(FILE *fp, const struct ht_diff *d, int raw)
{
	struct text_ctx t = { fp, raw, d->exact };

	if (!any_tags(d))
		return;
	fprintf(fp, "\n%-26s %10s %10s %10s %10s %10s\n", "by tag",
	    "old in use", "new in use", "delta", "objects", "alloc delta");
	each_line(d, text_line, &t);
}

static void
json_pair(struct ht_json *j, const char *key, uint64_t o, uint64_t n)
{
	ht_json_object_begin(j, key);
	ht_json_uint(j, "old", o);
	ht_json_uint(j, "new", n);
	ht_json_int(j, "delta", ht_diff_delta(o, n));
	ht_json_object_end(j);
}

static void
json_line(void *ctx, const char *name, int k, const struct ht_view_figures *o,
    const struct ht_view_figures *n)
{
	struct ht_json *j = ctx;

	ht_json_object_begin(j, NULL);
	ht_json_string(j, "tag", name);
	ht_json_string(j, "kind", ht_view_kind_name((uint32_t)k));
	json_pair(j, "inuse_bytes", o->inuse_bytes, n->inuse_bytes);
	json_pair(j, "inuse_objects", o->inuse_objects, n->inuse_objects);
	json_pair(j, "alloc_bytes", o->alloc_bytes, n->alloc_bytes);
	json_pair(j, "alloc_objects", o->alloc_objects, n->alloc_objects);
	ht_json_object_end(j);
}

void
ht_diff_tags_json(struct ht_json *j, const struct ht_diff *d)
{
	ht_json_array_begin(j, "tags");
	each_line(d, json_line, j);
	ht_json_array_end(j);
}
