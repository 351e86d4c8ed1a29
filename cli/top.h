/*
 * The live view of heaptool top: a target's profile taken again and
 * again, each one compared with a baseline (the first profile, or the one
 * the user last chose), and its sites in the order the user asks for.
 *
 * The model reuses the diff (diff.h) rather than a matching of its own:
 * each refresh is the diff from the baseline to the profile just taken, so
 * sites are matched by their stacks exactly as heaptool diff matches them
 * (each frame as its module's build ID and offset), a site's growth is its
 * change of bytes in use since the baseline, and its figures now are those
 * of the new side.  A site keeps its identity from one refresh to the next
 * (the hash of its key, ht_top_site.id), which is what the screen's
 * selection and expanded stacks follow.  The key ranks modules among
 * those of both profiles, so a module loaded between two refreshes may
 * give the sites new ids once; nothing but the selection depends on them.
 *
 * The model owns the profiles and the symbolizers it is given and frees
 * each once no side uses it.  It prints nothing.  Its writers are the
 * plain text of a refresh (top-text.c) and the full screen (top-screen.c,
 * ncurses); what they share is top-int.h.
 */
#ifndef HT_TOP_H
#define HT_TOP_H

#include <signal.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "diff.h"
#include "profile.h"
#include "symbolize.h"
#include "view.h"

/* The orders of the sites: --sort and the keys i, g and a. */
enum ht_top_sort {
	HT_TOP_INUSE,  /* bytes in use now, the largest first */
	HT_TOP_GROWTH, /* growth of bytes in use since the baseline */
	HT_TOP_ALLOC,  /* bytes allocated in the session */
	HT_TOP_NSORTS
};

/* Parse a --sort name (inuse, growth, alloc).  Returns 0 or -1. */
int ht_top_sort_parse(const char *, enum ht_top_sort *);
/* "inuse", "growth" or "alloc". */
const char *ht_top_sort_name(enum ht_top_sort);

/* A site as the view shows it. */
struct ht_top_site {
	const struct ht_diff_site *ds;
	uint64_t id; /* stable across refreshes (see above) */
	uint64_t inuse_bytes, inuse_objects, alloc_bytes, samples;
	int64_t growth; /* bytes in use now minus at the baseline */
};

struct ht_top {
	/* The baseline and the latest profile, each with its symbolizer;
	 * the same pointers when the baseline is the latest. */
	struct ht_profile *base, *cur;
	struct ht_sym *bsym, *csym;
	struct ht_diff *diff;	   /* from base to cur; NULL before the first */
	struct ht_top_site *sites; /* in the order of sort */
	size_t nsites;
	enum ht_top_sort sort;
	/* Seconds from the baseline to the latest profile (their snapshot
	 * times), 0 when they are one. */
	double elapsed_s;
	/* What the baseline is: the view's first profile, the first one of
	 * a new session, or one the user took (ht_top_baseline). */
	enum { HT_TOP_BASE_START, HT_TOP_BASE_SESSION, HT_TOP_BASE_USER } why;
	uint64_t refreshes; /* profiles taken */
	int raw;	    /* the writers print sizes in bytes (--bytes) */
	/* The allocator wrappers folded in the sites' names (fold.h), the
	 * caller's; or NULL. */
	struct ht_fold *fold;
};

void ht_top_init(struct ht_top *, enum ht_top_sort sort);
void ht_top_free(struct ht_top *);

/*
 * Whether t's latest symbolizer serves prof too: prof's modules are those
 * of the latest profile, so its cached lookups stay right.
 */
int ht_top_sym_fits(const struct ht_top *t, const struct ht_profile *prof);

/*
 * Take prof, with its symbolizer sym (built from prof's modules, or t's
 * latest one when ht_top_sym_fits), as the latest profile; the model owns
 * both from now on, even on failure.  The first profile, and one of a new
 * session (another epoch), is also the baseline.  Returns 0, or -1 with
 * errno ENOMEM (the view keeps its last state).
 */
int
ht_top_update(struct ht_top *t, struct ht_profile *prof, struct ht_sym *sym);

/* Make the latest profile the baseline: growth is counted from now.
 * Returns 0, or -1 (ENOMEM). */
int ht_top_baseline(struct ht_top *t);

/* Sort the sites again, by sort. */
void ht_top_set_sort(struct ht_top *t, enum ht_top_sort sort);

/* The view of the latest profile (its totals, its rows), or NULL before
 * the first update. */
struct ht_view *ht_top_view(struct ht_top *t);

/* Bytes per second that growth g makes over the elapsed time, 0 when no
 * time has passed. */
double ht_top_rate(const struct ht_top *t, int64_t g);

/* The growth of the totals' bytes in use since the baseline. */
int64_t ht_top_total_growth(const struct ht_top *t);

/* The frames of site s (innermost first), as ht_view_frames gives them:
 * their number, 0 for a fold or a site without a stack, -1 (ENOMEM). */
int ht_top_frames(struct ht_top *t, const struct ht_top_site *s,
    const struct ht_sym_frame **frames);

/* Site s's site frame: its first outside allocator wrappers (t->fold, as
 * report folds them), valid until the next lookup; NULL for a fold or a
 * site without a stack (or out of memory). */
const struct ht_sym_frame *
ht_top_site_frame(struct ht_top *t, const struct ht_top_site *s);

/* The name of site s for one line: its site frame's function (else
 * module+offset or address), or what ht_view_row_name says of a fold.
 * Returns a pointer to buf or to the symbolizer's string. */
const char *ht_top_site_name(struct ht_top *t, const struct ht_top_site *s,
    char *buf, size_t len);

/*
 * Write the plain text of the current state to fp (top-text.c): one block,
 * its first line "heaptool top: ...", the session, the totals, then at
 * most nsites sites (0: all) with their first frames, and a blank line.
 * Returns 0, or -1 with errno on a write error or ENOMEM.
 */
int ht_top_text(FILE *fp, struct ht_top *t, size_t nsites);

/* What the screen keeps between refreshes: the selected site, the sites
 * whose stacks are expanded, the first line shown. */
#define HT_TOP_MAX_EXPANDED 32
struct ht_top_ui {
	uint64_t selected; /* a site's id, 0 for the first site */
	size_t sel_index;  /* where it was, when it goes away */
	uint64_t expanded[HT_TOP_MAX_EXPANDED];
	size_t nexpanded;
	size_t scroll; /* the first line of the sites shown */
	int paused;
	const char *message; /* a note for the status line, or NULL */
};

/* What a key asks for (ht_top_screen_key). */
enum ht_top_key {
	HT_TOP_KEY_NONE, /* no key in time, or one that means nothing */
	HT_TOP_KEY_QUIT,
	HT_TOP_KEY_INUSE,
	HT_TOP_KEY_GROWTH,
	HT_TOP_KEY_ALLOC,
	HT_TOP_KEY_SORT_NEXT,
	HT_TOP_KEY_UP,
	HT_TOP_KEY_DOWN,
	HT_TOP_KEY_TOGGLE, /* expand or collapse the selected stack */
	HT_TOP_KEY_PAUSE,
	HT_TOP_KEY_BASELINE,
	HT_TOP_KEY_RESIZE,
};

/*
 * The full screen (top-screen.c), with ncurses.  open: take the terminal
 * (on stdin and stdout); returns 0, or -1 when it cannot be used (no
 * terminfo entry for TERM).  close: give it back as it was (endwin); safe
 * to call twice and without open.  draw: the whole screen for t and ui,
 * fit to the terminal's size whatever it is (cut, never wrapped).  key:
 * wait at most ms milliseconds for a key, with the signal mask mask
 * (ppoll: the caller's stop signals are let in during the wait only), and
 * say what it asks for (HT_TOP_KEY_NONE when a signal or the time ends
 * the wait).  move: the
 * selection by delta sites.  toggle: expand or collapse the selected
 * site's stack.
 */
int ht_top_screen_open(void);
void ht_top_screen_close(void);
void ht_top_screen_draw(struct ht_top *t, struct ht_top_ui *ui);
enum ht_top_key ht_top_screen_key(int ms, const sigset_t *mask);
void ht_top_screen_move(struct ht_top *t, struct ht_top_ui *ui, int delta);
void ht_top_screen_toggle(struct ht_top *t, struct ht_top_ui *ui);

#endif
