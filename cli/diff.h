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
 * shared).  Both profiles at rate 1, with no sample dropped, give exact
 * deltas.
 *
 * The model (diff.c) only computes; its writers, text (diff-text.c) and
 * JSON (diff-json.c), print it, and what they print as reports do comes
 * from text.h.  The JSON keys are a stable interface, documented in
 * heaptool(1).
 */
#ifndef HT_DIFF_H
#define HT_DIFF_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "profile.h"
#include "symbolize.h"
#include "view.h"

/* All zero is the default: the text summary of the change. */
struct ht_diff_opts {
	int detail; /* list the sites */
	int json;   /* JSON rather than text */
	/* Keep the sites of the n largest changes, fold the rest; 0 all. */
	size_t top;
	int raw_bytes; /* text: no KiB/MiB */
	/* Allocator wrappers to fold in the stacks shown (view.h), or NULL;
	 * a site is matched by its whole stack all the same. */
	struct ht_fold *fold;
};

/* The columns of a site, in the order of the JSON keys. */
enum ht_diff_col {
	HT_DIFF_INUSE_BYTES,
	HT_DIFF_INUSE_OBJECTS,
	HT_DIFF_ALLOC_BYTES,
	HT_DIFF_ALLOC_OBJECTS,
	HT_DIFF_FREED_BYTES,
	HT_DIFF_SAMPLES,
	/* Short-lived allocations (view.h's temp_objects): unknown on a side
	 * that does not count them (ht_diff_unknown). */
	HT_DIFF_TEMP_OBJECTS,
	HT_DIFF_NCOLS
};
/* The columns of the per-module sums, the first four of a site's (the
 * views keep no freed bytes per module). */
#define HT_DIFF_MOD_COLS 4

enum ht_diff_status {
	HT_DIFF_SAME,
	HT_DIFF_CHANGED,
	HT_DIFF_NEW,
	HT_DIFF_GONE,
	HT_DIFF_FOLDED, /* the agent's folded sites, the --top fold */
	HT_DIFF_NSTATUS
};

/* One side (0 old, 1 new) of a site or of the totals. */
struct ht_diff_side {
	uint64_t v[HT_DIFF_NCOLS];
	double var; /* of the bytes in use */
};

struct ht_diff_site {
	uint64_t hash; /* of its key: its stack as modules and offsets */
	uint8_t type;  /* of its key: a stack, none, the agent's fold */
	/* The first row of each side that went into it (frames, names);
	 * NULL on the side that lacks it. */
	const struct ht_view_row *row[2];
	struct ht_diff_side s[2];
	/* The sites a folded line stands for. */
	size_t nfolded;
	enum ht_diff_status status;
};

struct ht_diff_module {
	const char *name;
	uint64_t v[2][HT_DIFF_MOD_COLS];
};

struct ht_diff {
	const struct ht_profile *prof[2];
	struct ht_view v[2];
	int built[2];
	int exact; /* both at rate 1, neither with samples dropped */
	int floor; /* either's figures are floors (ht_view_meta_floor) */
	struct ht_diff_site *sites;
	size_t nsites;
	struct ht_view_index index;
	struct ht_diff_side tot[2];
	struct ht_diff_module *mods; /* by growth in use */
	size_t nmods;
	size_t count[HT_DIFF_NSTATUS];
	/* What is shown: pointers into sites, then the fold (if any). */
	struct ht_diff_site **shown;
	size_t nshown;
	struct ht_diff_site fold;
	int has_fold;
	/* What ht_diff_symbolize met. */
	struct ht_view_symbols symbols;
};

/*
 * Build the diff from old to new.  osym and nsym (built from each
 * profile's modules) name the modules; opts->top folds the sites.  Returns
 * 0, or -1 with errno ENOMEM (nothing to free).
 */
int ht_diff_build(struct ht_diff *, const struct ht_profile *old,
    struct ht_sym *osym, const struct ht_profile *new, struct ht_sym *nsym,
    const struct ht_diff_opts *opts);
void ht_diff_free(struct ht_diff *);

/*
 * Look up the frames of the sites shown, in their order, as
 * ht_view_symbolize does for a report (each site's frames on the side
 * that names it).  Fills d->symbols.  Returns 0, or -1 with errno ENOMEM.
 */
int ht_diff_symbolize(struct ht_diff *d);

/* new - old, exact for any difference below 2^63. */
int64_t ht_diff_delta(uint64_t old, uint64_t new);
/* The absolute value of a delta. */
uint64_t ht_diff_magnitude(int64_t);
/* Whether column c (HT_DIFF_*, or HT_DIFF_PEAK) of profile k (0 old, 1
 * new) is unknown: what was allocated and freed where jemalloc's sampling
 * kept no count of it (HT_META_ALLOC_UNKNOWN), the peak where it kept none
 * (HT_META_PEAK_UNKNOWN), the short-lived allocations where the profile
 * does not count them (before format 10, an allocator's own sampling).  A
 * delta with either side unknown is unknown. */
#define HT_DIFF_PEAK HT_DIFF_NCOLS
int ht_diff_unknown(const struct ht_diff *, int k, int c);

/* The delta of column c of a site's or the totals' two sides. */
int64_t ht_diff_change(const struct ht_diff_side s[2], int c);

/* The 95% interval of the change of bytes in use from side a to side b
 * (0 wide when the diff is exact; INT64_MIN..INT64_MAX, unknown, where a
 * profile's figures are floors). */
void ht_diff_interval(const struct ht_diff *, const struct ht_diff_side *a,
    const struct ht_diff_side *b, int64_t *lo, int64_t *hi);

/* "same", "changed", "new", "gone" or "folded". */
const char *ht_diff_status_name(enum ht_diff_status);

/* The side whose row names site s and gives its frames: new if it has
 * it. */
int ht_diff_site_side(const struct ht_diff_site *s);

/*
 * Ask for what a pass over the shown sites at i reads later: the site
 * 8 ahead, the row of the one 4 ahead, the frames of the one 2 ahead
 * (view.h's ht_view_prefetch, one level deeper: the sites are shown in
 * order of growth, which is no order in memory).
 */
void ht_diff_prefetch(const struct ht_diff *d, size_t i);

/*
 * The writers of a built diff, above the model: text (diff-text.c) and
 * JSON (diff-json.c); opts->detail lists the sites and opts->raw_bytes
 * prints text sizes in bytes.  Return 0, or -1 with errno (ENOMEM, or a
 * write error).
 */
int ht_diff_text(FILE *fp, struct ht_diff *d, const struct ht_diff_opts *opts);
int ht_diff_json(FILE *fp, struct ht_diff *d, const struct ht_diff_opts *opts);

/*
 * The by-tag part (diff-tags.c): each tag and kind either side has,
 * matched by the tag's name, old and new and the change of bytes and
 * objects in use and bytes allocated; text ("by tag", nothing when
 * neither profile has tagged sites) and the JSON array "tags".
 */
struct ht_json;
void ht_diff_tags_text(FILE *fp, const struct ht_diff *d, int raw);
void ht_diff_tags_json(struct ht_json *j, const struct ht_diff *d);

#endif
