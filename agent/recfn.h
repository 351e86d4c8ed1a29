/*
 * What the recorder (record.h) writes for each allocator function of
 * src/allocnames.h's list: its op (malloc, calloc, aligned, a C++
 * operator, a sized free ...), the flags it always has (nothrow), where
 * its hook's arguments hold the alignment asked, and which function of
 * the process tells a block's usable size (malloc_usable_size for the C
 * allocator and its C++ operators, mi_usable_size for mimalloc's,
 * sallocx for jemalloc's, by the prefix of its names).
 */
#ifndef HT_RECFN_H
#define HT_RECFN_H

#include <stddef.h>
#include <stdint.h>

/* How an allocation's alignment is found in its hook's arguments. */
enum { AL_NONE, AL_ARG0, AL_ARG1, AL_ARG2, AL_ARG3, AL_LG1, AL_PAGE };
/* Which function tells a block's usable size. */
enum { US_NONE, US_MALLOC, US_MI, US_JE, US_JE_PFX, US_RJEM };

struct ht_recfn {
	uint8_t op, flags, align, usable;
};

/* Classify every function, and find the usable-size functions with
 * dlsym: from the agent's thread (or the constructor), never a hook. */
void ht_recfn_setup(void);
/* The operator delete (its function's index) that lives at callee, or
 * HT_NALLOCFNS when none does (found by ht_recfn_setup). */
unsigned ht_recfn_delete_of(uintptr_t callee);
/* Function fn's (fn below HT_NALLOCFNS). */
const struct ht_recfn *ht_recfn(unsigned fn);
/* The alignment the call asked for (a: its hook's arguments, NULL when
 * only the size is known), or 0. */
uint64_t ht_recfn_align(const struct ht_recfn *f, const uintptr_t *a);
/* The usable size of p (allocated by f for n bytes) less n, or
 * HT_TRACE_USABLE_UNKNOWN. */
uint32_t ht_recfn_usable_over(const struct ht_recfn *f, void *p, size_t n);

#endif
