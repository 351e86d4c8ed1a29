/*
 * The by-tag parts of the text and JSON reports (report-int.h).  Every
 * figure comes from the view's tag lines, sums of its rows (view.c): so a
 * tag's line is exactly the sum of its sites in the detail.
 */
#include "config.h"

#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "json.h"
#include "report-int.h"
#include "text.h"

static int
line_used(const struct ht_view_tag *t, int k)
{
	return t->f[k].samples > 0 || t->f[k].alloc_objects > 0 ||
	    t->peak_bytes[k] > 0;
}

static int
tag_used(const struct ht_view_tag *t)
{
	return line_used(t, 0) || line_used(t, 1);
}

/* One line's columns: bytes and objects in use, peak and its objects,
 * samples, the 95% interval of the bytes. */
static void
text_line(FILE *fp, const struct ht_view *v, const struct ht_view_tag *t, int k,
    int raw)
{
	const struct ht_view_figures *f = &t->f[k];
	char a[32], b[32], c[32], d[32];
	uint64_t lo, hi;

	ht_view_interval(v, f, &lo, &hi);
	fprintf(fp,
	    "    %-7s %10s %9" PRIu64 "  peak %10s %9" PRIu64 "  %8" PRIu64
	    " sample%s  ",
	    ht_view_kind_name((uint32_t)k),
	    ht_text_size(raw, f->inuse_bytes, a, sizeof(a)), f->inuse_objects,
	    ht_text_size(raw, t->peak_bytes[k], b, sizeof(b)),
	    t->peak_objects[k], f->samples, f->samples == 1 ? " " : "s");
	if (v->exact)
		fputs("exact", fp);
	else if (v->every)
		fputs("at least", fp);
	else
		fprintf(fp, "95%% %s..%s", ht_text_size(raw, lo, c, sizeof(c)),
		    ht_text_size(raw, hi, d, sizeof(d)));
	putc('\n', fp);
}

void
ht_report_tags_text(FILE *fp, const struct ht_view *v, int raw)
{
	const struct ht_meta *m = &v->prof->meta;
	const struct ht_view_tag *t;
	char buf[32], a[32];
	size_t i;

	if (!v->has_tags)
		return;
	fprintf(fp, "\nby tag%s\n",
	    v->opts.at_peak ? " (in use at the session's peak; the tags' "
			      "peaks are over the session)" :
			      "");
	fprintf(fp, "    %-7s %10s %9s  %4s %10s %9s  %8s\n", "", "in use",
	    "objects", "", "", "objects", "samples");
	for (i = 0; i < v->ntags; i++) {
		t = &v->tags[i];
		if (!tag_used(t))
			continue;
		fputs("  ", fp);
		ht_text_safe(fp, ht_view_tag_name(v, t->id, buf, sizeof(buf)),
		    256);
		putc('\n', fp);
		text_line(fp, v, t, 0, raw);
		if (line_used(t, 1))
			text_line(fp, v, t, 1, raw);
	}
	fprintf(fp, "  (%" PRIu32 " tag%s interned, label cache %s",
	    m->tags > 0 ? m->tags - 1 : 0, m->tags == 2 ? "" : "s",
	    ht_text_size(raw, m->tag_cache_bytes, a, sizeof(a)));
	if (m->tags_refused > 0)
		fprintf(fp, "; %" PRIu32 " name%s refused: the table is full",
		    m->tags_refused, m->tags_refused == 1 ? "" : "s");
	fputs(")\n", fp);
}

static void
json_line(struct ht_json *j, const char *key, const struct ht_view *v,
    const struct ht_view_tag *t, int k)
{
	const struct ht_view_figures *f = &t->f[k];
	uint64_t lo, hi;

	ht_view_interval(v, f, &lo, &hi);
	ht_json_object_begin(j, key);
	ht_json_uint(j, "inuse_bytes", f->inuse_bytes);
	ht_json_uint(j, "inuse_objects", f->inuse_objects);
	ht_json_uint(j, "alloc_bytes", f->alloc_bytes);
	ht_json_uint(j, "alloc_objects", f->alloc_objects);
	ht_json_uint(j, "samples", f->samples);
	if (v->live_known)
		ht_json_uint(j, "live_samples", f->live_samples);
	else
		ht_json_null(j, "live_samples");
	ht_json_uint(j, "inuse_bytes_low", lo);
	ht_json_uint(j, "inuse_bytes_high", hi);
	ht_json_uint(j, "peak_inuse_bytes", t->peak_bytes[k]);
	ht_json_uint(j, "peak_inuse_objects", t->peak_objects[k]);
	ht_json_object_end(j);
}

void
ht_report_tag_cache_json(struct ht_json *j, const struct ht_view *v)
{
	const struct ht_meta *m = &v->prof->meta;

	ht_json_object_begin(j, "tag_cache");
	ht_json_uint(j, "tags", m->tags > 0 ? m->tags - 1 : 0);
	ht_json_uint(j, "refused", m->tags_refused);
	ht_json_uint(j, "mapped_bytes", m->tag_cache_bytes);
	ht_json_uint(j, "name_bytes", m->tag_name_bytes);
	ht_json_object_end(j);
}

void
ht_report_tags_json(struct ht_json *j, const struct ht_view *v)
{
	const struct ht_view_tag *t;
	char buf[32];
	size_t i;

	ht_json_array_begin(j, "tags");
	for (i = 0; i < v->ntags; i++) {
		t = &v->tags[i];
		if (!tag_used(t))
			continue;
		ht_json_object_begin(j, NULL);
		ht_json_string(j, "tag",
		    ht_view_tag_name(v, t->id, buf, sizeof(buf)));
		ht_json_uint(j, "id", t->id);
		json_line(j, "malloc", v, t, 0);
		json_line(j, "arena", v, t, 1);
		ht_json_object_end(j);
	}
	ht_json_array_end(j);
}

void
ht_report_tag_site_text(FILE *fp, const struct ht_view *v,
    const struct ht_view_row *r)
{
	char buf[32];

	if (!v->has_tags || r->site == NULL)
		return;
	fputs("    tag ", fp);
	ht_text_safe(fp, ht_view_tag_name(v, r->site->tag, buf, sizeof(buf)),
	    256);
	fprintf(fp, ", %s\n", ht_view_kind_name(r->site->kind));
}

void
ht_report_tag_site_json(struct ht_json *j, const struct ht_view *v,
    const struct ht_view_row *r)
{
	char buf[32];

	if (r->site == NULL) {
		ht_json_null(j, "tag");
		ht_json_null(j, "kind");
		return;
	}
	ht_json_string(j, "tag",
	    ht_view_tag_name(v, r->site->tag, buf, sizeof(buf)));
	ht_json_string(j, "kind", ht_view_kind_name(r->site->kind));
}
