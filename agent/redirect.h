/*
 * The originals the inline backend replaced, for got.c: a function the CLI
 * patched inline is reached through its trampoline by every GOT slot that
 * led to it (a redirect), or by none, when it is counted inside (an
 * exclusion).  Plain tables; got.c's lock serializes every call.
 */
#ifndef HT_REDIRECT_H
#define HT_REDIRECT_H

#define HT_REDIRECT_MAX                                                        \
	64 /* redirects, and as many exclusions: HT_GOT_MAX_REDIRECTS */

/* From now on a slot's original from means to.  0, or -1 if full. */
int ht_redirect_set(void *from, void *to);

/* No slot may lead to fn any more.  0, or -1 if full. */
int ht_redirect_exclude(void *fn);

/* What a call to orig must reach now, or NULL if no slot may lead to it. */
void *ht_redirect_of(void *orig);

/* Forget the exclusions (the slots are all put back). */
void ht_redirect_forget_excluded(void);

#endif
