/*
 * The modules that define allocators the hooks do not reach: the
 * executable or a library other than libc defining malloc, free ... of its
 * own (whose internal calls bind inside it), or an executable defining the
 * entry points of jemalloc, mimalloc or tcmalloc (the names of
 * src/allocnames.h; in a library, the hooks reach those through the slots
 * of the modules that call them).  Part of such a process's heap is not seen, and every
 * report must say so; this module finds them, and the profile (snapshot.c)
 * and the status reply (control.c) carry what it found.
 *
 * A module's dynamic symbol table is read in place, through its GNU or
 * SysV hash table (reloc.h), for each name: what the loader would bind to,
 * so what
 * the GOT hooks stand between.  The C allocator's names count only in a
 * module that defines malloc itself: one with a reallocarray or a
 * memalign alone (libbsd's, for old systems) wraps the allocator through
 * calls that are seen.  An allocator linked into the executable
 * without exporting its names (and not replacing malloc) is not in that
 * table, and not found.  The agent itself, the dynamic loader, the vdso and
 * libc are never reported.
 *
 * The table only grows: a module seen once stays in it for the life of the
 * process (its allocations may be in the profile after a dlclose), each
 * module looked at once.  Entries are published with a release store of
 * the count and never change afterwards, so readers take no lock: a
 * snapshot in a signal handler may read them.
 */
#ifndef HT_ALLOCATORS_H
#define HT_ALLOCATORS_H

#include <stddef.h>
#include <stdint.h>

#include "modules.h"

#define HT_ALLOCATORS_MAX 16

struct ht_allocator {
	uint64_t names; /* bit i: the module defines ht_allocnames[i] */
	char path[512]; /* as ht_module's */
};

/*
 * Look at every module of set not looked at before.  Call with the set
 * kept alive and its modules mapped (agent.c's rescan_lock, after the
 * scan), one caller at a time.  Reads the modules' memory only: no
 * allocation, no lock, no call into the loader.
 */
void ht_allocators_scan(const struct ht_modset *set);

/* The entries found so far, and entry i (< ht_allocators_count()).  Any
 * thread, any time, no lock. */
size_t ht_allocators_count(void);
const struct ht_allocator *ht_allocators_get(size_t i);

/* Modules with such names that did not fit the table. */
size_t ht_allocators_overflow(void);

/* For t/allocators-t: look at one module now, as the scan does, whether or
 * not it was seen.  Returns its names (0: none, or not looked at). */
uint64_t ht_allocators_names_of(const struct ht_module *m);

#endif
