/*
 * Reports (see report.h): the view a report prints, and the writer of its
 * format.
 */
#include "config.h"

#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "collapsed.h"
#include "flame.h"
#include "html.h"
#include "pprof.h"
#include "report-int.h"
#include "text.h"

static const struct {
	const char *name;
	enum ht_report_format format;
} formats[] = {
	{ "text", HT_REPORT_TEXT },
	{ "json", HT_REPORT_JSON },
	{ "pprof", HT_REPORT_PPROF },
	{ "collapsed", HT_REPORT_COLLAPSED },
	{ "svg", HT_REPORT_SVG },
	{ "html", HT_REPORT_HTML },
};

int
ht_report_format_parse(const char *name, enum ht_report_format *fmt)
{
	size_t i;

	for (i = 0; i < sizeof(formats) / sizeof(formats[0]); i++)
		if (strcmp(name, formats[i].name) == 0) {
			*fmt = formats[i].format;
			return 0;
		}
	return -1;
}

int
ht_report_sort_parse(const char *name, enum ht_view_sort *sort)
{
	enum ht_view_sort s;

	for (s = HT_VIEW_INUSE; s <= HT_VIEW_SORT_LAST; s++)
		if (strcmp(name, ht_text_sort_name(s)) == 0) {
			*sort = s;
			return 0;
		}
	return -1;
}

int
ht_report_write(FILE *fp, const struct ht_profile *prof, struct ht_sym *sym,
    const struct ht_report_opts *opts)
{
	struct ht_view_opts vopts;
	struct ht_view v;
	char msg[300];
	int rc;

	memset(&vopts, 0, sizeof(vopts));
	vopts.sort = opts->sort;
	vopts.top = opts->top;
	vopts.threshold = opts->threshold;
	vopts.at_peak = opts->at_peak;
	vopts.filter_tag = opts->filter_tag;
	vopts.tag = opts->tag;
	vopts.group_by_tag = opts->group_by_tag;
	vopts.fold = opts->fold;
	if (ht_view_build(&v, prof, sym, &vopts) != 0)
		return -1;
	/* Every format that prints frames meets them in one order: the
	 * limit of the symbolizer, if it is reached, leaves the same frames
	 * bare in all of them.  Said first, so that it cannot be missed
	 * after a long report. */
	if ((opts->detail ||
		(opts->format != HT_REPORT_TEXT &&
		    opts->format != HT_REPORT_JSON)) &&
	    ht_view_symbolize(&v) != 0) {
		ht_view_free(&v);
		return -1;
	}
	if (ht_text_skipped(&v.symbols, msg, sizeof(msg)) != NULL)
		ht_warn("warning: %s", msg);
	switch (opts->format) {
	case HT_REPORT_JSON:
		rc = ht_report_json(fp, &v, opts);
		break;
	case HT_REPORT_PPROF:
		rc = ht_pprof_write(fp, &v);
		break;
	case HT_REPORT_COLLAPSED:
		rc = ht_collapsed_write(fp, &v);
		break;
	case HT_REPORT_SVG:
		rc = ht_flame_write(fp, &v);
		break;
	case HT_REPORT_HTML:
		rc = ht_html_write(fp, &v, &vopts);
		break;
	default:
		rc = ht_report_text(fp, &v, opts);
		break;
	}
	if (rc == 0 && opts->format != HT_REPORT_TEXT &&
	    opts->format != HT_REPORT_JSON)
		ht_text_warn_notes(sym, NULL);
	ht_view_free(&v);
	if (rc == 0 && (fflush(fp) != 0 || ferror(fp)))
		rc = -1;
	return rc;
}
