/*
 * The allocator entry points that the agent looks for in the modules other
 * than libc: a module that defines one of them allocates in ways the GOT
 * hooks do not see (DESIGN.md section 7).  Two kinds:
 *
 *   - the C allocator's own names (family "malloc"): a module that defines
 *     malloc, free ... replaces glibc's for the whole process.  Calls that
 *     other modules make reach it through their GOT and are seen; the calls
 *     its own code makes bind inside it and are not.
 *   - the entry points of allocators with an API of their own (jemalloc's
 *     mallocx, mimalloc's mi_malloc, tcmalloc's tc_malloc): no hook is put
 *     on them, so nothing allocated through them is seen, whoever calls.
 *
 * A profile's ALLOCATOR records and the status reply carry a module's
 * names as a bit set, bit i for ht_allocnames[i].  The table only grows at
 * its end, so that a bit keeps its name in every profile ever written; a
 * reader names a bit beyond its table "?".
 *
 * Libc only, constant data: the agent and the CLI share it.
 */
#ifndef HT_ALLOCNAMES_H
#define HT_ALLOCNAMES_H

#include <stddef.h>
#include <stdint.h>

struct ht_allocname {
	const char *name;   /* the symbol, as the dynamic symbol table has it */
	const char *family; /* "malloc", "jemalloc", "mimalloc", "tcmalloc" */
};

extern const struct ht_allocname ht_allocnames[];
/* The entries of ht_allocnames (at most 64: the bits of a set). */
extern const size_t ht_nallocnames;

/* The bits of names of the C allocator's own (family "malloc"). */
uint64_t ht_allocnames_malloc_mask(void);

/* The name of bit i, "?" beyond the table. */
const char *ht_allocnames_name(unsigned i);

/* The family of bit i, "?" beyond the table. */
const char *ht_allocnames_family(unsigned i);

#endif
