/*
 * t/t0094's library: loaded with RTLD_DEEPBIND, its calls of malloc, free,
 * calloc and realloc bind to mini-alloc.so (its dependency), while the
 * program's bind to glibc's.  lib_churn (no inlining: its sites are its
 * own) makes n blocks of 100 bytes, grows
 * each to 300, frees them, and n zeroed ones, and frees those.
 */
#include <stdlib.h>
#include <string.h>

__attribute__((noinline)) void
lib_churn(int n)
{
	void *p, *q;
	int i;

	for (i = 0; i < n; i++) {
		if ((p = malloc(100)) == NULL) /* SITE lib_malloc */
			abort();
		memset(p, i, 100);
		if ((q = realloc(p, 300)) == NULL) /* SITE lib_realloc */
			abort();
		free(q);
		if ((p = calloc(5, 20)) == NULL) /* SITE lib_calloc */
			abort();
		free(p);
	}
}
