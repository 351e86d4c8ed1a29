/*
 * The Prometheus export: a view as the text exposition format, version
 * 0.0.4 (prometheus.io/docs/instrumenting/exposition_formats), each
 * metric with its HELP and TYPE lines, for heaptool serve's /metrics.
 *
 * The totals (bytes and objects in use, allocated, freed, the peak,
 * samples, dropped samples), the agent's overhead, the process's RSS, the
 * sampling rate, the bytes in use per module and per site, and one info
 * series (value 1) whose labels name the process and its session.  Sites
 * are named by the first frame of their stack (the caller of the
 * allocator), labels function and location ("file:line", or "" where no
 * file is known); sites that share those are one series, and only the top
 * ones by bytes in use get one, the rest being summed into the series
 * function="(other sites)": a profile of a million sites is still a
 * bounded set of series, and the per-site series still add up to the
 * total.  Label values are valid UTF-8 (ill-formed bytes and control
 * characters become '?'), cut at 200 bytes, and escaped as the format
 * says (backslash, double quote, line feed).  A figure the profile does
 * not know (HT_META_ALLOC_UNKNOWN, HT_META_PEAK_UNKNOWN) is left out,
 * never written as 0.
 */
#ifndef HT_METRICS_H
#define HT_METRICS_H

#include <stddef.h>
#include <stdio.h>

#include "view.h"

/* The content type of what ht_metrics_write writes. */
#define HT_METRICS_CONTENT_TYPE "text/plain; version=0.0.4; charset=utf-8"

/*
 * Write v (built whole: no top, no threshold) to fp, with at most top
 * per-site series besides "(other sites)" (top > 0).  Symbolizes the first
 * frame of each row with v's symbolizer.  Returns 0, or -1 with errno
 * (ENOMEM, or a write error).
 */
int ht_metrics_write(FILE *fp, struct ht_view *v, size_t top);

#endif
