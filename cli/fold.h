/*
 * Allocator wrappers to fold: the names of functions that only pass an
 * allocation on (xmalloc, g_malloc, palloc, PyMem_Malloc...), so that a
 * report shows a site at the first frame of its stack outside them, where
 * the memory was asked for (view.h, ht_view_fold).
 *
 * A list holds patterns: a name compares whole against a function's name,
 * and against that name without its parameter list ("ns::f(int)" matches
 * "ns::f"); a pattern with *, ? or [ is an fnmatch(3) glob.  The built-in
 * list is ht_fold_builtin's; users add to it with --fold and a file of
 * names (ht_fold_load).  Folding is presentation only: it never changes
 * which sites a profile has nor their figures.
 */
#ifndef HT_FOLD_H
#define HT_FOLD_H

#include <stddef.h>

struct ht_fold;

/* An empty list, or NULL (ENOMEM). */
struct ht_fold *ht_fold_new(void);
void ht_fold_free(struct ht_fold *);

/* Add the built-in wrappers.  Returns 0, or -1 (ENOMEM). */
int ht_fold_builtin(struct ht_fold *);

/* Add pattern (copied).  Returns 0, or -1 (ENOMEM). */
int ht_fold_add(struct ht_fold *, const char *pattern);

/*
 * Add the names of the file path: one a line, blanks around it ignored,
 * empty lines and lines starting with # skipped.  Returns 1 when the file
 * was read, 0 when there is none (stat(2) fails: missing, or in a
 * directory this user may not search), or -1 with errno and the reason in
 * why (len bytes) when it is there but cannot be read.
 */
int ht_fold_load(struct ht_fold *, const char *path, char *why, size_t len);

/*
 * The user's file of names: $XDG_CONFIG_HOME/heaptool/fold, or without
 * that variable $HOME/.config/heaptool/fold, into buf (len bytes).
 * Returns buf, or NULL when neither variable is set or it does not fit.
 */
const char *ht_fold_config_path(char *buf, size_t len);

/*
 * Whether function (a demangled name, or NULL) is on the list.  Answers
 * are kept by the string's address: the symbolizer's names are interned
 * (equal text, equal pointer, alive as long as it), so a name is matched
 * once however many frames carry it.
 */
int ht_fold_match(struct ht_fold *, const char *function);

/* How many patterns the list holds. */
size_t ht_fold_count(const struct ht_fold *);

#endif
