/*
 * The HTML report: one self-contained file that a browser opens offline (no
 * request leaves it: no script, style, font or image from elsewhere).  It
 * holds the session's line, a chart of memory over time (in use with its
 * 95% band, and RSS: timeline.h), the flame graph by bytes in use (these
 * two on the first screen), the summary table, the top sites, and the
 * flame graph by bytes allocated: the flame graphs drawn root on top
 * (icicles: a deep stack's widest frames are on the first screen) and each
 * in a frame of its own (the flame graph's own SVG and script, flame.h, as
 * a data: URL), frames under a pixel left out and the page says so.
 *
 * Elements a test can find: <svg id="timeline"> with <polyline
 * id="inuse">, <polyline id="rss"> and <polygon id="band">; <table
 * id="summary">; <table id="sites"> with a <tr class="site"> per site;
 * <iframe id="flame-inuse"> and <iframe id="flame-alloc">.
 */
#ifndef HT_HTML_H
#define HT_HTML_H

#include <stdio.h>

#include "view.h"

/* Write the report of v (sorted by bytes in use, symbolized) to fp; vopts
 * are v's options, for the view by bytes allocated it builds.  Returns 0,
 * or -1 with errno set (ENOMEM, or a write error). */
int
ht_html_write(FILE *fp, struct ht_view *v, const struct ht_view_opts *vopts);

#endif
