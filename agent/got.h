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
 * mprotect: never from a hook's sample path, never with ht_lock_global held.
 * ht_got_patch, ht_got_restore_all and ht_got_slots serialize themselves
 * with an internal spinlock (they may run in the control thread and in a
 * dlopen hook at once); they call the loader before taking it, never under
 * it, and fail with EDEADLK rather than spin if re-entered on one thread (a
 * signal handler).  All memory comes from ht_mem_map, in bounded tables;
 * a slot that does not fit is left unpatched and counted.
 */
#ifndef HT_GOT_H
#define HT_GOT_H

#include <stddef.h>
#include <stdint.h>

#include "gate.h"
#include "modules.h"

#define HT_GOT_MAX_HOOKS 256 /* the most names ht_got_patch takes */

/*
 * Which slots of a name are patched (ht_hook_def.rules):
 *
 * HT_GOT_NOT_SELF: not a module's slot that leads into the module itself,
 * but for libc's.  An allocator's own code calls its entry points through
 * such slots (libmimalloc's mi_realloc calls mi_malloc through its PLT,
 * libjemalloc's operator new calls malloc, libtcmalloc's operator new[]
 * calls operator new): the outer call was counted where its caller's slot
 * led to its hook, and counting the inner one would count the block twice.
 * libc is the exception: its own calls of malloc (strdup, fopen) are the
 * program's allocations, made nowhere else.  For allocating names; frees
 * are idempotent (a block's sample goes once) and keep their slots.
 *
 * HT_GOT_IN_ALLOCATOR: only a slot that leads into a module that defines
 * malloc too (an allocator: libtcmalloc, libjemalloc, libmimalloc, an
 * executable with its own): C++'s operators new and delete, whose
 * libstdc++ forms call malloc and free, where they are counted.
 */
#define HT_GOT_NOT_SELF	    0x1
#define HT_GOT_IN_ALLOCATOR 0x2

/* Look up every name of hooks[0..n) with dlsym(RTLD_DEFAULT) into its dl
 * field.  This takes the loader's lock, so call it holding none of the
 * agent's locks (a thread inside dlopen holds the loader's lock and may be
 * waiting for them), before ht_got_patch, which calls nothing of the
 * loader. */
void ht_got_resolve(struct ht_hook_def *hooks, size_t n);

/* Patch, in every module of set not patched before, the slots named in
 * hooks[0..n), resolved by ht_got_resolve() (a lazy slot whose name it did
 * not find is left unpatched).  Idempotent: a slot that already holds its hook is left.
 * Returns the number of slots patched now, or -1 on failure (then nothing of
 * this call stays patched).  Slots of modules that are no longer in set are
 * forgotten (their memory may be gone).  Pass the same hooks array on every
 * call (n <= HT_GOT_MAX_HOOKS).  A module whose slot could not be patched
 * yet (a lazy slot whose name dlsym cannot find, a race with lazy binding,
 * a full table) is looked at again by the next call. */
int
ht_got_patch(const struct ht_modset *set, struct ht_hook_def *hooks, size_t n);

/* Put every patched slot back to its original value and its page's
 * protection back to what it was, then forget it.  A slot that no longer
 * holds its hook (someone rewrote it) is left as it is.  Scans the modules
 * first (ht_modules_scan: takes the loader lock) so that it never writes to
 * a module unloaded since the last ht_got_patch.  Returns the number of
 * slots restored, or -1 if re-entered. */
int ht_got_restore_all(void);

/* The original that the module containing caller_pc called through slot
 * hooks[index], or hooks[index].orig when the caller is unknown.  Lock-free
 * and safe inside a hook. */
void *ht_got_orig_for_caller(const struct ht_hook_def *hooks, size_t index,
    uintptr_t caller_pc);

/* For the coverage account: add to counts[i] (i < n, the hooks' indices)
 * the patched slots of hook i whose original lies in [lo, hi).  Returns 0,
 * or -1 if re-entered. */
int ht_got_count(uintptr_t lo, uintptr_t hi, uint32_t *counts, size_t n);

/* For tests and status: the number of slots currently patched. */
size_t ht_got_patched_slots(void);

/* For status: slots left unpatched because a table was full. */
size_t ht_got_overflows(void);

/*
 * The names of the wrappers (wrap.h): each module that ht_got_patch scans
 * for the first time has the functions it defines by these names recorded
 * as its wrappers, with the function it defines by the name retry (NULL:
 * none) as their retry query.  The strings must stay; call before the
 * first ht_got_patch.  Without a call, no module has wrappers.
 */
void ht_got_set_wrappers(const char *const *names, size_t n, const char *retry);

/*
 * For the inline backend (inline.h).  ht_got_redirect: from now on an
 * original equal to from is to, in every table where originals are kept
 * (hooks[0..n), the modules', the slots') and for slots patched later; to
 * must do what from does (from's trampoline).  Returns 0, or -1 (ENOSPC:
 * HT_GOT_MAX_REDIRECTS redirections already; EDEADLK: re-entered).
 * ht_got_exclude: put back every slot whose original is fn and patch none
 * bound to fn until ht_got_restore_all (fn calls a function hooked
 * inline, which counts the call).  Returns the slots put back, or -1.
 */
#define HT_GOT_MAX_REDIRECTS 64
int ht_got_redirect(struct ht_hook_def *hooks, size_t n, void *from, void *to);
int ht_got_exclude(void *fn);

struct ht_got_slot {
	uintptr_t addr; /* the slot */
	void *saved;	/* its value before, for restore */
	void *orig;	/* what calls through it must reach */
	void *hook;	/* what it holds now */
	size_t index;	/* hooks[index] */
	int prot;	/* its page's protection (PROT_*) */
};

/* For tests and status: copy the first max patched slots (sorted by
 * address) to out.  Returns the number patched. */
size_t ht_got_slots(struct ht_got_slot *out, size_t max);

#endif
