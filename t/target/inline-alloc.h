/* The counters of t/target/inline-alloc.c: calls of each entry point
 * (aligned_alloc, posix_memalign, valloc and pvalloc count as memalign,
 * which they call), bytes asked for, and frees (realloc's of its old block
 * included). */
#ifndef INLINE_ALLOC_H
#define INLINE_ALLOC_H

#include <stdint.h>

struct ia_counts {
	uint64_t malloc, calloc, realloc, memalign, free, bytes;
};
extern struct ia_counts ia_count;

#endif
