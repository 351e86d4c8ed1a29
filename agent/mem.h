/*
 * The agent's memory: everything it keeps comes from anonymous mmap, never
 * from the target's allocator, and is counted as the agent's overhead.
 */
#ifndef HT_MEM_H
#define HT_MEM_H

#include <stddef.h>
#include <stdint.h>

/* Map len bytes (rounded up to pages) of zeroed memory.  NULL on failure.
 * Async-signal-safe; takes no lock. */
void *ht_mem_map(size_t len);
/* As ht_mem_map, but shared with the children of fork (MAP_SHARED): what
 * a child writes there its parent reads. */
void *ht_mem_map_shared(size_t len);
/* Unmap what ht_mem_map (or ht_mem_map_shared) returned, with the same
 * len. */
void ht_mem_unmap(void *p, size_t len);
/* Grow or shrink a mapping (contents kept, may move).  NULL on failure, the
 * old mapping then left intact. */
void *ht_mem_remap(void *p, size_t oldlen, size_t newlen);
/* Zero len bytes at p, in private memory of ht_mem_map, by giving the
 * whole pages among them back to the kernel (the ends are written): they
 * read as zeros again, and the child of a fork that empties its tables
 * copies none of its parent's pages (a memset would copy every page it
 * writes). */
void ht_mem_zero(void *p, size_t len);
/* Count len bytes of the agent's static data (its .bss tables) as overhead. */
void ht_mem_note_static(size_t len);
/* Bytes currently mapped through ht_mem_map, plus static data noted. */
uint64_t ht_mem_overhead(void);

#endif
