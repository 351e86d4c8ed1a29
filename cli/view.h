/*
 * The view: the rows every report format prints, built once from a profile.
 *
 * One row per site with the figures to show (the site's current figures,
 * or with at_peak those it had when the estimate of memory in use peaked),
 * sorted by the chosen column, cut after top rows and below the threshold,
 * with the rest folded into one last row; then the totals and the
 * per-module sums, all computed from the same rows.  So every writer (text,
 * JSON, pprof, collapsed stacks, flame graph) and a future diff print one
 * model, and a summary always equals the sum of its detail exactly, in every
 * column (DESIGN.md section 4).  Nothing is ever subtracted: no figure can
 * be negative.
 *
 * At the peak the profile knows each site's bytes and objects in use, not
 * what had been allocated by then nor how many samples were live: the
 * allocated columns stay those of the whole session, and live samples are
 * known only at rate 1 (where every object is a sample).  The variance of a
 * site's in-use bytes at the peak is scaled from its variance per byte over
 * all its samples (exact for a site whose blocks have one size, where that
 * ratio is the same for every sample).
 *
 * A site record of the profile that stands for sites the agent folded
 * (below a dump's threshold) always goes into the folded row, and counts
 * as the sites it stands for.
 *
 * Strings a view hands out (frame names, module names) live as long as the
 * view and its symbolizer.
 */
#ifndef HT_VIEW_H
#define HT_VIEW_H

#include <stddef.h>
#include <stdint.h>

#include "fold.h"
#include "profile.h"
#include "symbolize.h"

/* The columns a view sorts by; also the value of a flame graph or of
 * collapsed stacks. */
enum ht_view_sort {
	HT_VIEW_INUSE,	   /* bytes in use (the default) */
	HT_VIEW_ALLOC,	   /* bytes allocated */
	HT_VIEW_OBJECTS,   /* objects in use */
	HT_VIEW_TEMPORARY, /* short-lived allocations (temp_known) */
};

/* The last of enum ht_view_sort. */
#define HT_VIEW_SORT_LAST HT_VIEW_TEMPORARY

struct ht_view_opts {
	enum ht_view_sort sort;
	/* Keep this many rows and fold the rest; 0 keeps all. */
	size_t top;
	/* Fold the sites below this many bytes both in use and allocated. */
	uint64_t threshold;
	int at_peak;
	/* Rows in the profile's order, not sorted (a diff, which sorts by
	 * its own measure and reads the rows in memory order). */
	int unsorted;
	/* Only the sites of this tag (--tag), when filter_tag is set: the
	 * totals are then that tag's. */
	int filter_tag;
	uint32_t tag;
	/* Stack formats (collapsed, svg): each stack rooted at its tag. */
	int group_by_tag;
	/* The allocator wrappers whose frames writers fold (ht_view_fold),
	 * or NULL for none; the caller's, alive as long as the view. */
	struct ht_fold *fold;
};

struct ht_view_figures {
	uint64_t inuse_bytes;
	uint64_t inuse_objects;
	uint64_t alloc_bytes;
	uint64_t alloc_objects;
	uint64_t samples;
	uint64_t live_samples; /* meaningful when live_known */
	double inuse_var;      /* variance of inuse_bytes */
	/* Short-lived allocations (meaningful when temp_known): the
	 * estimate of how many, and the samples behind it. */
	uint64_t temp_objects;
	uint64_t temp_samples;
	/* A sum passed 2^64 - 1 and stopped there (a corrupt or hostile
	 * profile): the figures are not to be believed. */
	int saturated;
};

/* a + b, or UINT64_MAX where that would wrap: the sums of a profile's
 * figures never wrap (a hostile profile's may be anything). */
static inline uint64_t
ht_view_sat_add(uint64_t a, uint64_t b)
{
	return a > UINT64_MAX - b ? UINT64_MAX : a + b;
}

/* A site, or (site NULL) the fold of nfolded smaller sites. */
struct ht_view_row {
	struct ht_view_figures f;
	const struct ht_profile_site *site;
	size_t nfolded;
	/* The site's innermost frame, or 0: the sort's first tie-break,
	 * here so that sorting rows of equal figures need not read the
	 * sites (a cache miss each, the most of a sort of 200,000). */
	uint64_t first;
	/* The site's frames (ht_view_addrs), here for the same reason. */
	const uint64_t *frames;
	uint32_t nframes;
};

/*
 * Ask for the site and frames of row r ahead of a pass over the rows that
 * reads them: sorted rows meet their sites in no order, and a pass over
 * millions of frames waited for each site's first ones.  Passes call it
 * for the row HT_VIEW_AHEAD rows after the one they are at.
 */
#define HT_VIEW_AHEAD 4
static inline void
ht_view_prefetch(const struct ht_view_row *r)
{
	if (r->site != NULL)
		__builtin_prefetch(r->site);
	if (r->nframes > 0)
		__builtin_prefetch(r->frames);
}

/* What ht_view_symbolize met. */
struct ht_view_symbols {
	uint64_t frames;  /* of the rows' stacks, looked up */
	uint64_t skipped; /* of which past the symbolizer's limit */
	size_t max;	  /* that limit (ht_sym_max) */
};

struct ht_view_module {
	const char *name;
	struct ht_view_figures f;
};

/*
 * A tag's two lines (HT_TAG_MALLOC, HT_TAG_ARENA): the sums of the figures
 * of its sites (so the by-tag summary is the sum of the detail, column by
 * column), and the peaks the agent kept for the lines (TAG records;
 * never below the line's figure now).
 */
struct ht_view_tag {
	uint32_t id;
	const char *name; /* "untagged" for 0 */
	struct ht_view_figures f[2];
	uint64_t peak_bytes[2];
	uint64_t peak_objects[2];
	int seen; /* a site has this tag */
};

struct ht_view {
	const struct ht_profile *prof;
	struct ht_sym *sym;
	struct ht_view_opts opts;
	int every;		  /* rate 1: every allocation a sample */
	int exact;		  /* every, and no sample was dropped */
	int live_known;		  /* live_samples are */
	int temp_known;		  /* temp_objects are (version 10, hooks) */
	struct ht_view_row *rows; /* shown sites, then the fold */
	size_t nrows;
	/* Sites in the profile, those the agent folded included. */
	size_t nsites;
	struct ht_view_figures total;
	/* Bytes in use now, whatever at_peak says: what the allocator's
	 * view and the freed bytes are compared with. */
	uint64_t now_inuse_bytes;
	struct ht_view_module *mods;
	size_t nmods;
	/* Threads by bytes in use; none at the peak (not recorded). */
	const struct ht_thread_rec **threads;
	size_t nthreads;
	/* Tags by id, 0 to ntags - 1 (all of a profile's TAG records and
	 * every tag a site has); ntags 0 before version 7.  has_tags: some
	 * site is tagged or arena memory. */
	struct ht_view_tag *tags;
	size_t ntags;
	int has_tags;
	/* What ht_view_symbolize met (zero until it is called). */
	struct ht_view_symbols symbols;
	/* Scratch of ht_view_frames. */
	struct ht_sym_frame *frames;
	size_t frames_cap;
};

/*
 * Build the view of prof.  sym (built from prof's modules) names the
 * modules sites are charged to.  Returns 0, or -1 with errno ENOMEM.
 */
int ht_view_build(struct ht_view *, const struct ht_profile *prof,
    struct ht_sym *sym, const struct ht_view_opts *);
void ht_view_free(struct ht_view *);

/*
 * The symbolized stack of row r, innermost first, each address expanded
 * into its inlined frames (innermost first, as ht_sym_lookup gives them).
 * Stores a pointer to the frames, valid until the next call, in *frames and
 * returns their number (0 for the fold and for a site without frames), or
 * -1 with errno ENOMEM.
 */
int ht_view_frames(struct ht_view *, const struct ht_view_row *r,
    const struct ht_sym_frame **frames);

/*
 * The first frame of row r outside allocator wrappers: how many of its
 * symbolized frames (innermost first, as ht_view_frames gives them) are
 * functions of opts.fold, from the innermost on, up to the first that is
 * not.  0 without a fold list, for the fold and when every frame is one
 * (there is then nothing else to show).  This is presentation only: the
 * site, its figures, its module (charged by module, from the frames'
 * addresses alone: site_module) and a diff's matching of sites are the
 * same folded or not.  It looks up the frames it reads (ht_sym_lookup),
 * so call it before a writer's own lookups of r.  Stores where that first
 * frame is in *at when at is not NULL (address 0, frame 0 when none is
 * folded).  Returns the count, or -1 with errno ENOMEM.
 */
struct ht_view_at {
	uint32_t addr; /* the address's index in the site's stack */
	int frame;     /* the frame's among that address's (0: innermost) */
};
int ht_view_fold(struct ht_view *, const struct ht_view_row *r,
    struct ht_view_at *at);

/*
 * The return addresses of row r's stack, innermost first, into *addrs (the
 * profile's; valid as long as it): their number, 0 for the fold and for a
 * site without frames.  For writers that look each up (ht_sym_lookup) and
 * print its frames at once, without ht_view_frames' copy.
 */
uint32_t ht_view_addrs(const struct ht_view_row *r, const uint64_t **addrs);

/*
 * Look up the frames of the rows in the order a report prints them (the
 * first row's innermost frame first).  So when the symbolizer's limit
 * (ht_sym_limit) stops it, the addresses it symbolized are those of the
 * first sites, in every format alike: each writer then meets the frames
 * as they are now.  Fills v->symbols.  Returns 0, or -1 with errno ENOMEM.
 */
int ht_view_symbolize(struct ht_view *v);

/*
 * The name of a frame for stack formats: its function, else its module and
 * offset ("libfoo.so.1+0x1a2b"), else its address ("0x401000").  Returns
 * the function's string or buf (len bytes, truncated).
 */
const char *
ht_view_frame_name(const struct ht_sym_frame *, char *buf, size_t len);

/* The name of a row without frames: "(N smaller sites)" for the fold,
 * "[no stack]" for a site whose stack was not recorded.  Returns buf. */
const char *ht_view_row_name(const struct ht_view_row *, char *buf, size_t len);

/* The figure of f that the view sorts by (bytes in use, bytes allocated or
 * objects in use). */
uint64_t ht_view_value(const struct ht_view *, const struct ht_view_figures *f);

/* What the value counts: "bytes in use", "bytes allocated" or "objects in
 * use". */
const char *ht_view_value_name(const struct ht_view *);

/* Whether the figures of a profile with meta m are exact: at rate 1, with no
 * sample dropped, and sampled by the agent's hooks. */
int ht_view_meta_exact(const struct ht_meta *m);

/* Whether its figures at rate 1 are only lower bounds, with no known high
 * end: sampled by an allocator's own sampling (the jemalloc and mimalloc
 * backends), where each thread's first sample after a start waits for
 * what remains of a countdown drawn before it (jemprof.c), and the bytes
 * until then go uncounted. */
int ht_view_meta_floor(const struct ht_meta *m);

/* The 95% interval of f's bytes in use, a row's or the total of v; where
 * samples were dropped, its high end is raised by what they stood for (any
 * of them may belong to any row).  At rate 1 with nothing dropped, lo and
 * hi are the figure itself; where the figure is a floor
 * (ht_view_meta_floor), hi is UINT64_MAX: unknown. */
void ht_view_interval(const struct ht_view *, const struct ht_view_figures *,
    uint64_t *lo, uint64_t *hi);

/* The name of tag id in v ("untagged" for 0, "tag-N" for one the profile
 * does not name).  Returns the view's string or buf. */
const char *
ht_view_tag_name(const struct ht_view *, uint32_t id, char *buf, size_t len);
/* The id of the tag called name in prof, or -1. */
int64_t ht_view_tag_find(const struct ht_profile *prof, const char *name);
/* "malloc" or "arena". */
const char *ht_view_kind_name(uint32_t kind);
/* The root frame of row r's stack under --group-by tag: "tag NAME
 * (KIND)", or "tag (several)" for the fold.  Returns buf. */
const char *ht_view_tag_root(const struct ht_view *,
    const struct ht_view_row *r, char *buf, size_t len);

/* The session's peak of bytes in use, never below the total in use. */
uint64_t ht_view_peak_bytes(const struct ht_view *);
/* Bytes freed in the session: allocated minus in use now. */
uint64_t ht_view_freed_bytes(const struct ht_view *);
/* What the allocator holds in use that the session did not see allocated
 * (its view minus the bytes in use now), or 0. */
uint64_t ht_view_predates_bytes(const struct ht_view *);

/*
 * An index from keys to ids 0..n-1 for the writers' tables (strings,
 * functions, locations, flame graph nodes): open addressing over a 64-bit
 * hash; the caller keeps the keys and says whether id holds the key.
 */
struct ht_view_index {
	uint32_t *slots; /* id + 1, 0 for empty */
	uint64_t *hashes;
	size_t cap; /* a power of two, or 0 */
	size_t n;
};

/* FNV-1a of n bytes, continuing from h (start with HT_VIEW_HASH0). */
#define HT_VIEW_HASH0 0xcbf29ce484222325ULL
uint64_t ht_view_hash(uint64_t h, const void *, size_t n);

/* The id under hash for which eq(ctx, id) is true, or -1. */
int64_t ht_view_index_find(const struct ht_view_index *, uint64_t hash,
    int (*eq)(void *ctx, uint32_t id), void *ctx);
/* Add id under hash (not already there).  Returns 0, or -1 (ENOMEM). */
int ht_view_index_add(struct ht_view_index *, uint64_t hash, uint32_t id);
void ht_view_index_free(struct ht_view_index *);

#endif
