/*
 * What every writer of reports and diffs prints the same way, so that
 * the text and the JSON of a report and of a diff never drift apart:
 * sizes, the session's times, strings that come from a profile, the stack
 * of a site (as text lines or as JSON objects) and the notes on modules
 * whose files could not be used.
 *
 * A profile's strings (the command, module paths, function and file names)
 * are whatever the target put there: text output shows them through
 * ht_text_safe, which never lets one drive the terminal.
 */
#ifndef HT_TEXT_H
#define HT_TEXT_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "json.h"
#include "profile.h"
#include "symbolize.h"
#include "view.h"

/* The widest name column of a table ("by module"), two spaces included. */
#define HT_TEXT_MAX_WIDTH 40

/* v as a size for people ("1.50 KiB", ht_size_format), or with raw as
 * bytes ("1536 B").  Returns buf. */
const char *ht_text_size(int raw, uint64_t v, char *buf, size_t len);

/* Seconds from the start of m's session to ns, 0 if either is unknown or
 * ns is earlier. */
double ht_text_since_s(const struct ht_meta *m, uint64_t ns);
/* The session's duration in seconds (start to end), or 0. */
double ht_text_duration_s(const struct ht_meta *m);

/* The name of signal sig, "SIGSEGV", or "signal N" for one this system
 * does not name (a profile may come from elsewhere). */
const char *ht_text_signal_name(uint32_t sig);

/* The name of a sort column as --sort and the JSON spell it: "inuse",
 * "alloc" or "objects". */
const char *ht_text_sort_name(enum ht_view_sort);

/* Print at most max bytes of s (it may end earlier, at a NUL), control
 * characters as '?'. */
void ht_text_safe(FILE *fp, const char *s, size_t max);

/* At most max bytes of s escaped for XML and HTML (text and attribute
 * values alike), bytes that are not UTF-8 as '?': for the flame graph and
 * the HTML report.  Returns what ht_json_put_text does. */
size_t ht_text_xml(FILE *fp, const char *s, size_t max);

/* At most max bytes of s, copied into a malloc'd string (its length in
 * *lenp when lenp is not NULL): ill-formed UTF-8 and control characters
 * (C0, DEL, C1) become '?', so what pprof or a metrics scraper prints of
 * it stays text.  NULL with errno ENOMEM. */
char *ht_text_clean(const char *s, size_t max, size_t *lenp);

/* The width of a name column that holds w and name after two spaces, at
 * most HT_TEXT_MAX_WIDTH. */
size_t ht_text_width(size_t w, const char *name);
/* Print two spaces and name, cut or padded to fill a column of width w. */
void ht_text_column(FILE *fp, const char *name, size_t w);

/* Print one symbolized frame as a line: "[inlined] f (file:line)", or
 * module+0xoffset where nothing is known. */
void ht_text_frame(FILE *fp, const struct ht_sym_frame *fr);

/* Print the stack of row r of v, a line per frame (ht_text_frame), from
 * its first frame outside the allocator wrappers folded (ht_view_fold),
 * which one line before it names.  Returns the number of frames, folded
 * ones included, or -1 with errno ENOMEM. */
int ht_text_frames(FILE *fp, struct ht_view *v, const struct ht_view_row *r);

/* The stack of row r of v as the array "frames" of the object j is in
 * (the keys of DESIGN.md section 2), every frame, those of the allocator
 * wrappers folded (ht_view_fold) marked "folded", after the key
 * "site_frame": the index of the first frame not folded; with r NULL, an
 * empty one.  Returns 0, or -1 with errno ENOMEM. */
int ht_text_json_frames(struct ht_json *j, struct ht_view *v,
    const struct ht_view_row *r);

/* Why the samples of m were dropped, as a clause ("the live-sample table
 * held its bound of 4194304"), and what raises the bound when one was the
 * cause (", which --max-samples raises").  Returns buf. */
const char *ht_text_drop_why(const struct ht_meta *m, char *buf, size_t len);

/* One line on the dropped samples of m, for the exports and warnings: at
 * rate 1 "NOT EXACT: 805698 samples dropped (why)", else "805698 samples
 * dropped (why)"; "" when none was.  Returns buf. */
const char *ht_text_drop_line(const struct ht_meta *m, char *buf, size_t len);

/* The summary's lines on the dropped samples of v (none when none was):
 * how many, why, and what they mean for the figures below them (sizes as
 * ht_text_size with raw). */
void ht_text_drops(FILE *fp, const struct ht_view *v, int raw);

/*
 * A module that defines allocator entry points the hooks do not reach
 * (names: the bits of src/allocnames.h).  It may say two things: that it
 * has a malloc, free ... of its own (the calls other modules make to them
 * are seen, its own are not), and that it is jemalloc, mimalloc or
 * tcmalloc with an API of its own (nothing through it is seen).
 * ht_text_unseen prints a line for each, starting with lead; the JSON
 * form is an object per kind in the array j is in: "module", "allocator"
 * ("malloc" for its own malloc family, else the family), "functions",
 * "other_modules_seen" (whether the calls of other modules are seen).
 * ht_text_unseen_line puts the line of kind (0: its own malloc, 1: its
 * API) into buf, without lead or newline, and returns 0, or -1 if names
 * hold none of that kind.
 */
void
ht_text_unseen(FILE *fp, const char *lead, uint64_t names, const char *path);
void ht_text_json_unseen(struct ht_json *j, uint64_t names, const char *path);
int ht_text_unseen_line(char *buf, size_t len, int kind, uint64_t names,
    const char *path);

/* When a or b (either may be NULL, or both the same) met problems with
 * module files, print a blank line and a note for each, at most
 * HT_TEXT_MAX_NOTES of them and then how many more (a profile may name
 * 65,536 modules). */
#define HT_TEXT_MAX_NOTES 10
void ht_text_notes(FILE *fp, struct ht_sym *a, struct ht_sym *b);

/* The same notes as warnings on stderr, for the formats that cannot hold
 * one. */
void ht_text_warn_notes(struct ht_sym *a, struct ht_sym *b);

/*
 * What to say when the symbolizer's limit left frames unsymbolized
 * (st as ht_view_symbolize fills it): one line into buf, without a
 * newline.  Returns buf, or NULL when no frame was left.
 */
const char *
ht_text_skipped(const struct ht_view_symbols *st, char *buf, size_t len);
/* That line as a note of a text report (after a blank line), if any. */
void ht_text_skipped_note(FILE *fp, const struct ht_view_symbols *st);

#endif
