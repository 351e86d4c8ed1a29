/*
 * The protection of the pages that hold GOT slots, for got.c to make them
 * writable while it patches and to put back what they were.
 * /proc/self/maps is the truth (someone may have changed a protection since
 * the loader set it); where it cannot be read, the program headers say what
 * the loader did.
 *
 * One pass of ht_got_patch at a time: got.c's lock serializes the callers.
 * Memory comes from ht_mem_map, mapped by ht_maps_init.
 */
#ifndef HT_MAPS_H
#define HT_MAPS_H

#include <stdint.h>

#include "modules.h"

/* Map the line buffer and the range table.  Returns 0, or -1 if memory
 * could not be mapped.  Idempotent. */
int ht_maps_init(void);

/* Begin a pass over set: the next ht_maps_prot reads /proc/self/maps
 * again, keeping the mappings that overlap a module of set (which must
 * stay alive for the pass). */
void ht_maps_begin(const struct ht_modset *set);

/* The protection (PROT_*) of the page of module m that holds addr, or -1 if
 * it must not be written: a shared mapping, no mapping at all, or (from the
 * program headers) no PT_LOAD.  A page of PT_GNU_RELRO is read-only. */
int ht_maps_prot(const struct ht_module *m, uintptr_t addr);

#endif
