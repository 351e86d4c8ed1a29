/*
 * What the writers of heaptool top (top-text.c, top-screen.c) share: the
 * lines they both print, formatted into buffers (the screen cuts them to
 * its width), so that the plain text and the screen never say different
 * things.  Every string that comes from the profile goes through
 * ht_top_clean before it reaches either.
 */
#ifndef HT_TOP_INT_H
#define HT_TOP_INT_H

#include <stddef.h>
#include <stdint.h>

#include "top.h"

/* Control characters and bytes past ASCII as '?', in place, so that a
 * name from the target never drives the terminal.  Returns s. */
char *ht_top_clean(char *s);

/* A change of bytes, "+1.50 KiB", "-512 B" or "0 B" (in bytes with
 * t->raw).  Returns buf. */
const char *
ht_top_growth_str(const struct ht_top *t, int64_t g, char *buf, size_t len);

/* A rate of bytes per second, "+1.50 KiB/s", or "-" when no time has
 * passed since the baseline.  Returns buf. */
const char *
ht_top_rate_str(const struct ht_top *t, int64_t g, char *buf, size_t len);

/* The session line: "pid 1234 (cmd), session 1 running, rate 1 (exact),
 * 12.34 s".  Returns buf. */
const char *ht_top_session_line(struct ht_top *t, char *buf, size_t len);

/* The totals: "in use 1.50 MiB in 300 objects (exact), allocated
 * 2.00 MiB" (a 95% interval where the figures are estimates).  Returns
 * buf. */
const char *ht_top_totals_line(struct ht_top *t, char *buf, size_t len);

/* The process's RSS and the growth since the baseline: "RSS 5.00 MiB;
 * growth +1.00 MiB in 10.0 s (+102 KiB/s) since the view started" (or
 * "since the baseline", "since session 2 was seen").  Returns buf. */
const char *ht_top_growth_line(struct ht_top *t, char *buf, size_t len);

/* Where frame fr is: "file:line", "file", or module+0xoffset, or its
 * address.  Returns buf. */
const char *ht_top_where(const struct ht_sym_frame *fr, char *buf, size_t len);

/* The header of the sites' columns.  Returns buf. */
const char *ht_top_header(char *buf, size_t len);

/* Site s's figures as the columns of both writers (in use, growth, per
 * second, samples: 44 characters), then its function and where its first
 * frame is.  Returns buf. */
const char *ht_top_site_line(struct ht_top *t, const struct ht_top_site *s,
    char *buf, size_t len);

/* The line of frame fr of an expanded stack: "[inlined] f  file:line",
 * as a site's line names its first frame.  Returns buf. */
const char *
ht_top_frame_line(const struct ht_sym_frame *fr, char *buf, size_t len);

#endif
