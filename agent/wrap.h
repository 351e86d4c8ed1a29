/*
 * The wrappers of the malloc family: C++'s operators new and delete, as the
 * C++ runtime (libstdc++, libc++abi) or a program replacing them defines
 * them, do their work by calling malloc, aligned_alloc or free through a
 * slot the agent hooks, so the allocation is counted there, once.  A frame
 * inside a wrapper is then not the allocation's site: the sampler strips
 * such frames from the top of a stack, and the site is the wrapper's
 * caller.  And a failure inside a wrapper is not yet the program's: its
 * std::new_handler may free memory and have the wrapper try again.
 *
 * got.c records here, per module, the address ranges of the wrappers the
 * module defines (found in its dynamic symbol table) and its retry query,
 * a function of the module answering whether a failure may yet be retried
 * (std::get_new_handler: a handler is installed).  Writers (ht_wrap_set,
 * ht_wrap_forget) run under got.c's lock.  Readers take no lock: they run
 * inside hooks and the sampler.  Each entry has a sequence count, odd while
 * it is written, so a reader never mixes two modules' ranges; it is written
 * only while its module is new to got.c or gone.  The table comes from
 * ht_mem_map once and never moves.
 */
#ifndef HT_WRAP_H
#define HT_WRAP_H

#include <stddef.h>
#include <stdint.h>

#include "modules.h"

#define HT_WRAP_FNS 32 /* wrappers kept per module */

struct ht_wrap_fn {
	uintptr_t lo; /* [lo, hi): the function's code */
	uintptr_t hi;
};

/* Map the table.  Returns 0, or -1 if memory could not be mapped.
 * Idempotent. */
int ht_wrap_init(void);

/*
 * Record the n wrappers fns[0..n) (n <= HT_WRAP_FNS, each inside m) and the
 * retry query of module m (NULL: none), replacing what m had.  n == 0
 * forgets m.  Returns 0, or -1 when the table is full (m then has none).
 */
int ht_wrap_set(const struct ht_module *m, const struct ht_wrap_fn *fns,
    size_t n, void *retry);

/* Forget the modules that are not in set (they may be unmapped or their
 * addresses reused by now). */
void ht_wrap_forget(const struct ht_modset *set);

/* Does pc lie inside a wrapper?  Lock-free. */
int ht_wrap_holds(uintptr_t pc);

/* Does pc lie inside a wrapper whose module's retry query says a failure
 * may yet be retried?  Calls the query.  Lock-free; safe inside a hook. */
int ht_wrap_may_retry(uintptr_t pc);

#endif
