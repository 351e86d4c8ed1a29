/*
 * Diffs: what changed between two profiles, the view for hunting a leak
 * (like the summary.diff and detail.diff of HotSpot's native memory
 * tracking).
 *
 * Each profile is read through its own view (view.h), whole: no row is cut
 * or folded there.  Sites are then matched across the two by their stacks,
 * each frame taken as the module it lies in (its build ID, or its file's
 * basename when it has none) and its offset in that module's ELF address
 * space: never by raw address, so that two runs of one program loaded at
 * other addresses (ASLR) still match, site by site.  A site only NEW has
 * is "new" (its figures all +), one only OLD has is "gone" (all -), one in
 * both is "changed" or, when its figures in use and allocated are equal,
 * "same".  Sites go by the growth of their bytes in use, the largest first.
 *
 * The totals are the sums of the sites on each side, and a delta is new
 * minus old, so the sites' deltas add up to the totals' delta exactly, in
 * every column; the --top fold ("(N smaller sites)") keeps the sites with
 * the largest changes and sums the others, so the sums still hold.  The
 * per-module deltas add up to the totals too (the views charge each site
 * to one module).  Deltas of sampled profiles are estimates: their 95%
 * interval combines both sides' variances (var_old + var_new, which is
 * conservative for two snapshots of one session, whose samples are
 * shared).  Both profiles at rate 1 give exact deltas.
 *
 * The JSON keys are a stable interface, documented in heaptool(1).
 */
#ifndef HT_DIFF_H
#define HT_DIFF_H

#include <stddef.h>
#include <stdio.h>

#include "profile.h"
#include "symbolize.h"

/* All zero is the default: the text summary of the change. */
struct ht_diff_opts {
	int	detail;		/* list the sites */
	int	json;		/* JSON rather than text */
	/* Keep the sites of the n largest changes, fold the rest; 0 all. */
	size_t	top;
	int	raw_bytes;	/* text: no KiB/MiB */
};

/*
 * Write the diff from old to new to fp.  osym and nsym (built from each
 * profile's modules) name the modules and, with detail, the frames.
 * Returns 0, or -1 on a write error or when out of memory (errno says
 * which).
 */
int	ht_diff_write(FILE *fp, const struct ht_profile *old,
	    struct ht_sym *osym, const struct ht_profile *new,
	    struct ht_sym *nsym, const struct ht_diff_opts *);

/*
 * heaptool report --diff: the current profile of the target (popt, the
 * argument of -p, or NULL for the current target) against its baseline,
 * written to out (NULL: stdout) exactly as heaptool diff BASELINE NOW
 * would.  Returns the exit status, after printing why on failure.
 */
int	ht_diff_live(const char *popt, const struct ht_diff_opts *,
	    const char *out);

#endif
