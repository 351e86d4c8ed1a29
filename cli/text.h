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

/* The name of a sort column as --sort and the JSON spell it: "inuse",
 * "alloc" or "objects". */
const char *ht_text_sort_name(enum ht_view_sort);

/* Print at most max bytes of s (it may end earlier, at a NUL), control
 * characters as '?'. */
void ht_text_safe(FILE *fp, const char *s, size_t max);

/* The width of a name column that holds w and name after two spaces, at
 * most HT_TEXT_MAX_WIDTH. */
size_t ht_text_width(size_t w, const char *name);
/* Print two spaces and name, cut or padded to fill a column of width w. */
void ht_text_column(FILE *fp, const char *name, size_t w);

/* Print one symbolized frame as a line: "[inlined] f (file:line)", or
 * module+0xoffset where nothing is known. */
void ht_text_frame(FILE *fp, const struct ht_sym_frame *fr);

/* Print the stack of row r of v, a line per frame (ht_text_frame).
 * Returns the number of frames, or -1 with errno ENOMEM. */
int ht_text_frames(FILE *fp, struct ht_view *v, const struct ht_view_row *r);

/* The stack of row r of v as the array "frames" of the object j is in
 * (the keys of DESIGN.md section 2); with r NULL, an empty one.  Returns 0,
 * or -1 with errno ENOMEM. */
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

/* When a or b (either may be NULL, or both the same) met problems with
 * module files, print a blank line and a note for each. */
void ht_text_notes(FILE *fp, struct ht_sym *a, struct ht_sym *b);

#endif
