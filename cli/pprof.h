/*
 * The pprof export: a view as a gzip-compressed profile.proto
 * (github.com/google/pprof, proto/profile.proto), which go tool pprof,
 * pprof and the tools that read Go heap profiles open.
 *
 * Sample types, in this order: alloc_objects/count, alloc_space/bytes,
 * inuse_objects/count, inuse_space/bytes; the default is the view's sort
 * column.  The period type is space/bytes and the period the sampling rate.
 * Each row of the view is one sample; each distinct address one location,
 * in the mapping of its module (with its build-id in hex and its file name),
 * with one line per function at that address: the inlined ones first, the
 * function that holds the code last, as pprof expects.  Addresses are
 * stored as return address - 1, inside the call instruction, where the
 * lines were looked up.  Frames without a function take the name
 * "module+0xoffset"; the folded row is a location of its own named
 * "(N smaller sites)".
 */
#ifndef HT_PPROF_H
#define HT_PPROF_H

#include <stdio.h>

#include "diff.h"
#include "view.h"

/* Write v to fp.  Returns 0, or -1 with errno set (ENOMEM, or a write
 * error). */
int ht_pprof_write(FILE *fp, struct ht_view *v);

/*
 * Write the delta of d (built whole, no --top) to fp, as Go's
 * net/http/pprof serves heap?seconds=N: one sample per site whose figures
 * changed, valued new - old in each of the four sample types (a negative
 * value where a figure went down), with the later profile's mappings and
 * period; time and duration are those between the two profiles.  Sites
 * that did not change are left out.  Returns as ht_pprof_write.
 */
int ht_pprof_write_delta(FILE *fp, struct ht_diff *d);

#endif
