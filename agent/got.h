/*
 * Hooking by GOT rewriting.  For every module of a set (except the agent
 * itself, the dynamic loader and the vdso), every relocation in DT_JMPREL,
 * DT_RELA and DT_REL of type JUMP_SLOT, GLOB_DAT or 64 whose symbol is named
 * in the hook table gets its slot overwritten with the hook's address.  The
 * value the slot held is saved: it is the original that module calls.  A slot
 * still pointing into its own module (lazy binding: the PLT stub) has its
 * original resolved with dlsym(RTLD_DEFAULT, name) instead, since once the
 * hook is in the slot the lazy resolver never runs for it.  RELRO pages are
 * made writable only while patching, then protected as they were.
 *
 * The same code serves LD_PRELOAD launch and injection into a running
 * process; it never relies on symbol interposition.  It calls dlsym and
 * mprotect: never from a hook's sample path, never with ht_agent_lock held.
 * Calls are serialized by the caller (the agent's control thread, the
 * constructor, or the dlopen hook holding the agent's patch mutex).
 */
#ifndef HT_GOT_H
#define HT_GOT_H

#include <stddef.h>
#include <stdint.h>

#include "modules.h"

struct ht_hook_def {
	const char	*name;		/* symbol name, e.g. "malloc", "_Znwm" */
	void		*hook;		/* our replacement */
	/* Set by ht_got_patch before the first slot of this name is written:
	 * the original of the first module patched.  Hooks call it. */
	void		*orig;
	/* Set to 1 when some module's original differs from orig; the hook
	 * then asks ht_got_orig_for_caller(). */
	int		 multi;
};

/* Patch, in every module of set not patched before, the slots named in
 * hooks[0..n).  Idempotent: a slot that already holds its hook is left.
 * Returns the number of slots patched now, or -1 on failure (then nothing of
 * this call stays patched).  Slots of modules that are no longer in set are
 * forgotten (their memory may be gone). */
int	ht_got_patch(const struct ht_modset *set, struct ht_hook_def *hooks,
	    size_t n);

/* Put every patched slot back to its original value and its page's
 * protection back to what it was.  Returns the number of slots restored. */
int	ht_got_restore_all(void);

/* The original that the module containing caller_pc called through slot
 * hooks[index], or hooks[index].orig when the caller is unknown.  Lock-free
 * and safe inside a hook. */
void	*ht_got_orig_for_caller(const struct ht_hook_def *hooks, size_t index,
	    uintptr_t caller_pc);

/* For tests and status: the number of slots currently patched. */
size_t	ht_got_patched_slots(void);

#endif
