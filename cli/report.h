/*
 * Reports: a decoded profile printed for people (text) or scripts (JSON).
 *
 * Every figure of the summary is the exact sum of the sites' figures
 * (DESIGN.md section 4): the totals, the per-module table and the folded
 * "smaller sites" line are all computed from the same rows, so summary and
 * detail never disagree in any format.  The session's own counters (peak,
 * agent overhead, allocator view) come from the profile's META record.
 *
 * The JSON keys are a stable interface (DESIGN.md section 2; documented in
 * heaptool(1)): keys may be added, never renamed.
 */
#ifndef HT_REPORT_H
#define HT_REPORT_H

#include <stddef.h>
#include <stdio.h>

#include "profile.h"
#include "symbolize.h"

enum ht_report_format {
	HT_REPORT_TEXT,
	HT_REPORT_JSON,
};

struct ht_report_opts {
	enum ht_report_format	format;
	int			detail;		/* list the sites */
	/* Keep this many sites and fold the rest; 0 keeps all. */
	size_t			top;
	int			raw_bytes;	/* text: no KiB/MiB */
};

/* Parse a --format name.  Returns 0, or -1 for a name this heaptool does
 * not produce. */
int	ht_report_format_parse(const char *, enum ht_report_format *);

/*
 * Write the report of prof to fp.  sym (built from prof's modules) names
 * the modules and, with detail, the frames.  Returns 0, or -1 on a write
 * error or when out of memory (errno says which).
 */
int	ht_report_write(FILE *fp, const struct ht_profile *prof,
	    struct ht_sym *sym, const struct ht_report_opts *opts);

#endif
