/*
 * The flame graph: a view as one self-contained, interactive SVG file.
 *
 * The rows' stacks are merged into a tree by frame name (outermost at the
 * bottom, "all" the root) and drawn as one rectangle per node, as wide as
 * the node's share of the view's value (bytes in use by default, bytes
 * allocated with --sort alloc, objects in use with --sort objects); children
 * are ordered by value, largest first.  A node narrower than half a pixel
 * is left out with everything above it, as flamegraph.pl does under a
 * tenth (the subtitle then says so): so the graph holds at most 2,360
 * frames a row, whatever the profile.  Each node's title (shown on hover)
 * gives its function, file:line, value and percentage.  A few lines of
 * inline JavaScript zoom into a node when it is clicked and search the
 * frames by regular expression; without scripts (an image viewer) the
 * graph still renders.  All text is escaped for XML, and bytes that are not
 * UTF-8 are shown as '?'.
 *
 * Each frame is a <g class="f"> holding a <title>, a <rect> and a <text>,
 * with attributes data-n (the name), data-d (depth, 0 for the root), data-x
 * and data-v (its offset and value in the view's unit), so that tools and
 * tests can read the graph back.
 */
#ifndef HT_FLAME_H
#define HT_FLAME_H

#include <stdio.h>

#include "view.h"

/* Write v to fp.  Returns 0, or -1 with errno set (ENOMEM, or a write
 * error). */
int ht_flame_write(FILE *fp, struct ht_view *v);

/* The same, with the root at the top (an icicle graph: a deep stack's wide
 * frames are on the first screen) when icicle is set, leaving out the
 * frames narrower than min_px pixels (0.5 for ht_flame_write). */
int ht_flame_write_as(FILE *fp, struct ht_view *v, int icicle, double min_px);

#endif
