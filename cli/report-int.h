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

#endif
