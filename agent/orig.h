/*
 * The originals that differ by module: when modules bound one hooked name
 * to different functions (a library linked against another allocator), the
 * hook must call the one its caller's module was bound to.  got.c records
 * here, per (module, hook index), each original that differs from the
 * hook's common one (ht_hook_def.orig), and hooks find theirs by caller pc
 * through ht_got_orig_for_caller().
 *
 * Writers (ht_orig_set, ht_orig_retarget, ht_orig_forget) run under got.c's
 * lock.  The reader, ht_orig_find, takes no lock: it runs inside hooks.
 * Each entry has a sequence count, odd while it is written, so a reader
 * never mixes two modules' fields.  An entry is created, reused or cleared
 * only while no call from its module can be in a hook through it (before
 * the module's slots are written, after the module is gone), so a reader
 * that skips an entry being written loses nothing.  Its original alone may
 * change in place (one atomic store) between two originals that are both
 * right.  The table comes from ht_mem_map once and never moves.
 */
#ifndef HT_ORIG_H
#define HT_ORIG_H

#include <stddef.h>
#include <stdint.h>

#include "modules.h"

/* Map the table.  Returns 0, or -1 if memory could not be mapped.
 * Idempotent. */
int ht_orig_init(void);

/* Record orig as module m's original for hook index: an entry of m for
 * index is updated in place; a new one is made only if create.  Returns 0,
 * or -1 when a new entry was wanted and the table is full. */
int
ht_orig_set(const struct ht_module *m, size_t index, void *orig, int create);

/* Every entry for hook index that holds from now holds to. */
void ht_orig_retarget(size_t index, void *from, void *to);

/* Clear the entries of modules that are not in set (they may be unmapped
 * or their addresses reused by now). */
void ht_orig_forget(const struct ht_modset *set);

/* The original recorded for hook index in the module holding caller_pc,
 * or NULL if none is.  Lock-free; safe inside a hook. */
void *ht_orig_find(size_t index, uintptr_t caller_pc);

#endif
