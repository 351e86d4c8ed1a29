/*
 * The allocator entry points the agent hooks, and the table of every hooked
 * name for got.c.  Each hook calls the original its caller's module was
 * bound to, then charges the allocation to the sampler's countdown
 * (sampler.h).  Frees check the live-sample filter and otherwise pass
 * straight through.  C++'s operators new and delete are not hooked: they
 * call the malloc family, whose hooks count each object once (see hooks.c);
 * their names go to got.c as the wrappers of wrap.h.
 *
 * The table also holds the loader's entry points, dlopen and dlclose, whose
 * hooks belong to agent.c (a rescan of the modules follows them): it puts
 * them in with ht_hooks_set_loader() before any slot is patched.
 */
#ifndef HT_HOOKS_H
#define HT_HOOKS_H

#include <stddef.h>
#include <stdint.h>

#include "got.h"

enum ht_hook_index {
	HT_H_MALLOC,
	HT_H_CALLOC,
	HT_H_REALLOC,
	HT_H_REALLOCARRAY,
	HT_H_FREE,
	HT_H_POSIX_MEMALIGN,
	HT_H_ALIGNED_ALLOC,
	HT_H_MEMALIGN,
	HT_H_VALLOC,
	HT_H_PVALLOC,
	HT_H_FREE_SIZED,
	HT_H_FREE_ALIGNED_SIZED,
	HT_H_DLOPEN,
	HT_H_DLCLOSE,
	HT_NHOOKS
};

extern struct ht_hook_def ht_hooks[HT_NHOOKS];

/* Does hook i allocate (the malloc family but its frees)? */
static inline int
ht_hook_allocates(enum ht_hook_index i)
{
	return i != HT_H_FREE && i != HT_H_FREE_SIZED &&
	    i != HT_H_FREE_ALIGNED_SIZED && i < HT_H_DLOPEN;
}

/* Set (on) or clear HT_HOOK_SLOW on every allocating hook: while set, each
 * allocation goes out of line, where a failure of the allocator writes the
 * failure dump (dump.h).  agent.c keeps it set while the session's dumps
 * are armed.  Any thread; atomic. */
void ht_hooks_set_slow(int on);

/* Give got.c the names of the wrappers (wrap.h): C++'s operators new,
 * with std::get_new_handler as their retry query.  Before the first
 * ht_got_patch() with the table. */
void ht_hooks_set_wrappers(void);

/* Put the hooks of dlopen and dlclose in the table.  Before the first
 * ht_got_resolve() or ht_got_patch() with the table. */
void ht_hooks_set_loader(void *dlopen_hook, void *dlclose_hook);

/* The original that the module of caller (a return address into it) was
 * bound to for hook i.  Lock-free; for hooks outside hooks.c (agent.c's). */
void *ht_hooks_orig(enum ht_hook_index i, uintptr_t caller);

#endif
