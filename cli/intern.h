/*
 * A set of strings, each kept once: a pointer to one stands for its text,
 * so two names are the same name exactly when their pointers are equal.
 * The symbolizer keeps its function and file names here (a million frames
 * of one function cost its name once, and a flame graph or a pprof table
 * compares pointers, not bytes).
 */
#ifndef HT_INTERN_H
#define HT_INTERN_H

#include <stddef.h>
#include <stdint.h>

struct ht_intern {
	char **slots; /* NULL: empty */
	size_t cap;   /* a power of two, or 0 */
	size_t n;
};

/*
 * The set's copy of s, taking s (a malloc'd string) in: it is the copy
 * when s is new, else freed.  s NULL gives NULL.  Returns NULL with errno
 * ENOMEM when out of memory (s is freed).
 */
const char *ht_intern_take(struct ht_intern *, char *s);
/* The same for a string the caller keeps (copied when new). */
const char *ht_intern(struct ht_intern *, const char *s);

/* Free the set and every string in it. */
void ht_intern_free(struct ht_intern *);

#endif
