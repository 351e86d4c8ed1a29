/*
 * The session's allocations by size (profile format version 9: the SIZES
 * record, kept by the agent at each sample), for the reports: buckets of
 * powers of 2, each with the estimates of how many allocations and bytes
 * fell in it, as text, as JSON and as a table of the HTML page.  Like
 * heaptrack's histogram of sizes, from the samples: exact at rate 1.
 */
#ifndef HT_SIZES_H
#define HT_SIZES_H

#include <stdio.h>

#include "json.h"
#include "view.h"

/* The histogram as a text table (sizes as ht_text_size with raw). */
int ht_sizes_text(FILE *fp, const struct ht_view *v, int raw);

/* The histogram as the value of key "sizes": an array of its buckets that
 * are not empty, each {"from", "to", "allocations", "bytes"}. */
void ht_sizes_json(struct ht_json *j, const struct ht_view *v);

/* The histogram as an HTML table (<table id="sizes">). */
void ht_sizes_html(FILE *fp, const struct ht_view *v);

#endif
