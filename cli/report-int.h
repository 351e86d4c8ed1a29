/*
 * The report module's own parts (report.h): the text and JSON writers,
 * which ht_report_write in report.c picks by format.
 */
#ifndef HT_REPORT_INT_H
#define HT_REPORT_INT_H

#include <stdio.h>

#include "report.h"
#include "view.h"

/*
 * The writers of the text and the JSON reports of view v (report-text.c,
 * report-json.c); opts
 * says which parts and how.  Return 0, or -1 with errno on a write error
 * or when out of memory.
 */
int
ht_report_text(FILE *fp, struct ht_view *v, const struct ht_report_opts *opts);
int
ht_report_json(FILE *fp, struct ht_view *v, const struct ht_report_opts *opts);

/*
 * The by-tag parts of both (report-tags.c): the summary's "by tag" section
 * (NMT's layout: each tag's malloc and arena lines, their bytes, objects,
 * peaks, samples and intervals), and the JSON "tags" array; both print
 * nothing for a profile with no tagged site.  ht_report_tag_site: a
 * site's tag and kind, in the detail ("    tag Chunk, malloc\n") or as
 * JSON keys "tag" and "kind" (null for the fold, whose sites may have
 * several).
 */
struct ht_json;
void ht_report_tags_text(FILE *fp, const struct ht_view *v, int raw);
void ht_report_tags_json(struct ht_json *j, const struct ht_view *v);
/* The agent's "tag_cache" object: tags interned, refused, the memory. */
void ht_report_tag_cache_json(struct ht_json *j, const struct ht_view *v);
void ht_report_tag_site_text(FILE *fp, const struct ht_view *v,
    const struct ht_view_row *r);
void ht_report_tag_site_json(struct ht_json *j, const struct ht_view *v,
    const struct ht_view_row *r);

#endif
