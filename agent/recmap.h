/*
 * What the recorder (record.h) keeps to name things in a trace: each live
 * block's identity (the sequence number of the event that made it, by its
 * address), and the call sites interned into small ids.
 *
 * Blocks: a hash table of chained nodes in mmap'd memory, its buckets
 * guarded by striped spinlocks, so that threads freeing and allocating
 * far apart never wait on one another.  Nodes come from chunks mapped as
 * the table grows, never moved: growing stops nobody.  Only a failed map
 * refuses a block (ht_recmap_put returns -1; the recorder counts it).
 *
 * Sites: an open-addressing table of return addresses, claimed by
 * compare-and-swap, never emptied while a recording runs; a site's id is
 * its slot + 1, and the order in which sites were claimed is kept for the
 * drain, which writes each one once.  A full table gives id 0 (unknown).
 *
 * Hooks call put, take and site with their guard set; init and fini run
 * while no hook can reach the tables (before the recording starts, after
 * it stopped and every hook inside it left).
 */
#ifndef HT_RECMAP_H
#define HT_RECMAP_H

#include <stddef.h>
#include <stdint.h>

/* Map the tables.  0, or -1 (ENOMEM). */
int ht_recmap_init(void);
/* Give every byte back. */
void ht_recmap_fini(void);

/* Remember the block at addr as identity seq.  0, or -1 when no node
 * could be mapped. */
int ht_recmap_put(uintptr_t addr, uint64_t seq);
/* Forget the block at addr: its identity, or 0 when it is not known (it
 * predates the recording). */
uint64_t ht_recmap_take(uintptr_t addr);

/* The id of the call site at return address pc, interned; 0 when the
 * table is full. */
uint32_t ht_recmap_site(uintptr_t pc);
/* The sites claimed so far, in order: for i below the count, *id and *pc
 * of the i-th; 0 when it is not published yet (its claimer is between
 * the claim and the store), -1 when i is past the count. */
int ht_recmap_site_at(uint32_t i, uint32_t *id, uint64_t *pc);

/* The tables' bytes mapped now. */
uint64_t ht_recmap_bytes(void);
/* Bytes of the agent's memory per live block (a node). */
size_t ht_recmap_entry_bytes(void);

#endif
