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
/* Unmap what ht_mem_map returned, with the same len. */
void ht_mem_unmap(void *p, size_t len);
/* Grow or shrink a mapping (contents kept, may move).  NULL on failure, the
 * old mapping then left intact. */
void *ht_mem_remap(void *p, size_t oldlen, size_t newlen);
/* Count len bytes of the agent's static data (its .bss tables) as overhead. */
void ht_mem_note_static(size_t len);
/* Bytes currently mapped through ht_mem_map, plus static data noted. */
uint64_t ht_mem_overhead(void);

#endif
