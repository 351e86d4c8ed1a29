/*
 * Reports: a decoded profile printed for people (text), for scripts (JSON),
 * or exported for other tools (pprof, collapsed stacks, an SVG flame graph).
 *
 * Every format prints one view (view.h), so every figure of the summary is
 * the exact sum of the sites' figures (DESIGN.md section 4): the totals, the
 * per-module table and the folded "smaller sites" line are all computed
 * from the same rows, and summary and detail never disagree in any format.
 * The session's own counters (peak, agent overhead, allocator view) come
 * from the profile's META record.
 *
 * The JSON keys are a stable interface (DESIGN.md section 2; documented in
 * heaptool(1)): keys may be added, never renamed.
 *
 * This module picks the view and the writer; the text and JSON writers
 * are its parts report-text.c and report-json.c (behind report-int.h),
 * the exports have modules of their
 * own (pprof.h, collapsed.h, flame.h), and what writers print alike is in
 * text.h.  The command is cmd-report.c.
 */
#ifndef HT_REPORT_H
#define HT_REPORT_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "profile.h"
#include "symbolize.h"
#include "view.h"

enum ht_report_format {
	HT_REPORT_TEXT,
	HT_REPORT_JSON,
	HT_REPORT_PPROF,
	HT_REPORT_COLLAPSED,
	HT_REPORT_SVG,
	HT_REPORT_HTML,
};

/* All zero is the default report: the text summary of the sites now. */
struct ht_report_opts {
	enum ht_report_format format;
	int detail; /* list the sites */
	/* Keep this many sites and fold the rest; 0 keeps all. */
	size_t top;
	int raw_bytes; /* text: no KiB/MiB */
	enum ht_view_sort sort;
	/* Fold the sites below this many bytes in use and allocated. */
	uint64_t threshold;
	int at_peak;  /* the sites at the peak */
	int coverage; /* text: list the account of coverage */
	/* --tag: only the sites of this tag (resolved by the caller from
	 * its name, ht_view_tag_find), the totals those of the tag. */
	int filter_tag;
	uint32_t tag;
	/* --group-by tag: collapsed stacks and the flame graph rooted at
	 * each site's tag and kind. */
	int group_by_tag;
	/* --timeline: text and JSON add the session's memory over time
	 * (timeline.h). */
	int timeline;
	/* --sizes: text and JSON add the allocations by size (sizes.h). */
	int sizes;
	/* Allocator wrappers to fold in the stacks shown (view.h), or NULL
	 * for none. */
	struct ht_fold *fold;
};

/* Parse a --format name.  Returns 0, or -1 for a name this heaptool does
 * not produce. */
int ht_report_format_parse(const char *, enum ht_report_format *);

/* Parse a --sort name (inuse, alloc, objects).  Returns 0 or -1. */
int ht_report_sort_parse(const char *, enum ht_view_sort *);

/*
 * Write the report of prof to fp.  sym (built from prof's modules) names
 * the modules and, with detail, the frames.  pprof, collapsed and svg
 * always hold the sites (detail or not) and pprof is binary.  Returns 0,
 * or -1 on a write error or when out of memory (errno says which).
 */
int ht_report_write(FILE *fp, const struct ht_profile *prof, struct ht_sym *sym,
    const struct ht_report_opts *opts);

#endif
