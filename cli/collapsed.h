/*
 * Collapsed stacks: one line per row of a view, "outer;...;inner value",
 * the input of flamegraph.pl, inferno and speedscope.
 *
 * The value is the view's sort column (bytes in use by default, bytes
 * allocated with --sort alloc, objects in use with --sort objects); rows
 * whose value is 0 are left out, so the values add up to the view's total.
 * Each frame is its function's name, inlined calls as frames of their own,
 * or module+0xoffset where there is no name; the folded row is one frame
 * "(N smaller sites)" and a site without a stack "[no stack]".  A name can
 * hold none of the characters that delimit the format: ';' becomes ':',
 * white space and control characters '_', and bytes that are not UTF-8 '?'.
 * With the view's group_by_tag each stack starts with one more frame,
 * outermost, "tag NAME (KIND)" (ht_view_tag_root).
 */
#ifndef HT_COLLAPSED_H
#define HT_COLLAPSED_H

#include <stdio.h>

#include "view.h"

/* Write v to fp.  Returns 0, or -1 with errno set. */
int ht_collapsed_write(FILE *fp, struct ht_view *v);

#endif
