/*
 * The allocator entry points the agent hooks, and the table of every hooked
 * name for got.c (and for any backend that puts the same hooks in another
 * way).  The table has one entry per function of src/allocnames.h's list,
 * in its order (hook i stands for ht_allocfns[i]: its name, family, kind
 * and signature class), then the loader's dlopen and dlclose.  Each hook
 * has its function's own prototype, calls the original its caller's
 * module was bound to (ht_hook_def.orig, or the per-module one of orig.h),
 * then charges the allocation to the sampler's countdown (sampler.h).
 * Frees check the live-sample filter and otherwise pass straight through.
 *
 * C++'s operators new and delete are hooked only where they are an
 * allocator's own (HT_GOT_IN_ALLOCATOR: tcmalloc's, jemalloc's and
 * mimalloc's do not call malloc through a slot); libstdc++'s call malloc,
 * whose hooks count each object once (see hooks.c), and their names go to
 * got.c as the wrappers of wrap.h.  Allocating names are not hooked in a
 * slot that leads back into its own module (HT_GOT_NOT_SELF): a call
 * nested in an allocator's entry point is counted once, at the entry.
 *
 * The table also holds the loader's entry points, dlopen and dlclose, whose
 * hooks belong to agent.c (a rescan of the modules follows them): it puts
 * them in with ht_hooks_set_loader() before any slot is patched.
 */
#ifndef HT_HOOKS_H
#define HT_HOOKS_H

#include <stddef.h>
#include <stdint.h>

#include "allocnames.h"
#include "got.h"

enum ht_hook_index {
#define HT_H_ENUM(id, name, fam, kind, sig, fl) HT_H_##id,
	HT_ALLOCFN_LIST(HT_H_ENUM)
#undef HT_H_ENUM
	    HT_H_DLOPEN,
	HT_H_DLCLOSE,
	HT_H_EXIT,  /* _exit */
	HT_H_CEXIT, /* _Exit */
	HT_NHOOKS
};

_Static_assert(HT_H_DLOPEN == (int)HT_NALLOCFNS,
    "the hooks follow src/allocnames.h's list");
_Static_assert(HT_NHOOKS <= HT_GOT_MAX_HOOKS, "got.c takes every hook");

extern struct ht_hook_def ht_hooks[HT_NHOOKS]
    __attribute__((visibility("hidden")));

/* The descriptor of hook i (its name, family, kind, signature class), or
 * NULL for the loader's. */
static inline const struct ht_allocfn *
ht_hook_desc(enum ht_hook_index i)
{
	return (unsigned)i < HT_NALLOCFNS ? &ht_allocfns[i] : NULL;
}

/* Does hook i allocate (HT_KIND_ALLOC or HT_KIND_REALLOC)? */
static inline int
ht_hook_allocates(enum ht_hook_index i)
{
	return ht_allocfn_allocates((unsigned)i);
}

/* Set (on) or clear HT_HOOK_SLOW on every allocating hook: while set, each
 * allocation goes out of line, where a failure of the allocator writes the
 * failure dump (dump.h).  agent.c keeps it set while the session's dumps
 * are armed.  Any thread; atomic. */
void ht_hooks_set_slow(int on);

/* Set (on) or clear HT_HOOK_RECORD on every hook, frees included: while
 * set, each call goes out of line, to the recorder (record.h).  agent.c
 * keeps it set while a recording runs.  Any thread; atomic. */
void ht_hooks_set_record(int on);

/* Give got.c the names of the wrappers (wrap.h): C++'s operators new,
 * with std::get_new_handler as their retry query; and every hook its
 * rules (got.h).  Before the first ht_got_patch() with the table. */
void ht_hooks_set_wrappers(void);

/* Have the table's words keep the session generation (gate.h), without
 * which every allocating hook goes out of line once a session has started.
 * Before the first session starts. */
void ht_hooks_gate(void);

/* Put the hooks of _exit and _Exit in the table (launch mode, init.c:
 * a process that leaves by them runs no destructor).  Before the first
 * ht_got_patch() with the table; without it they are not hooked. */
void ht_hooks_set_exit(void *exit_hook, void *cexit_hook);

/* Put the hooks of dlopen and dlclose in the table.  Before the first
 * ht_got_resolve() or ht_got_patch() with the table. */
void ht_hooks_set_loader(void *dlopen_hook, void *dlclose_hook);

/* ht_got_resolve() of the table, and the functions some hooks call besides
 * their original (mimalloc's mi_heap_visit_blocks and mi_heap_get_backing
 * for mi_heap_destroy), looked up the same way.  Takes the loader's lock:
 * as ht_got_resolve. */
void ht_hooks_resolve(void);

/* The original that the module of caller (a return address into it) was
 * bound to for hook i.  Lock-free; for hooks outside hooks.c (agent.c's). */
void *ht_hooks_orig(enum ht_hook_index i, uintptr_t caller);

#endif
