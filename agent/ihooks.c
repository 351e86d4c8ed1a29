/*
 * hooks.c once more, renamed (see ihooks.h): every name it defines that
 * is not static gets the ihooks prefix, so this copy's table, flags and
 * originals are its own.  Its static hooks (hook_malloc ...) are this
 * copy's, and ht_ihooks lists them as ht_hooks lists the GOT ones.
 */
#include "ihooks.h"

#define HT_IHOOKS_COPY	      1
#define HT_HOOK_FN(id)	      ht_ihook_##id
#define ht_hooks	      ht_ihooks
#define ht_hooks_resolve      ht_ihooks_resolve
#define ht_hooks_set_slow     ht_ihooks_set_slow
#define ht_hooks_set_record   ht_ihooks_set_record
#define ht_hooks_set_wrappers ht_ihooks_set_wrappers
#define ht_hooks_set_loader   ht_ihooks_set_loader
#define ht_hooks_set_exit     ht_ihooks_set_exit
#define ht_hooks_gate	      ht_ihooks_gate
#define ht_hooks_orig	      ht_ihooks_orig
/* The declarations hooks.h makes for the copy's renamed names. */
void ht_ihooks_set_wrappers(void);
void ht_ihooks_set_loader(void *dlopen_hook, void *dlclose_hook);
void ht_ihooks_set_exit(void *exit_hook, void *cexit_hook);
void *ht_ihooks_orig(enum ht_hook_index i, uintptr_t caller);
void ht_ihooks_resolve(void);

#include "hooks-gen.c"
#include "hooks.c"

int
ht_ihooks_inlinable(size_t i)
{
	return i < HT_NHOOKS && i != HT_H_REALLOCARRAY && i != HT_H_DLOPEN &&
	    i != HT_H_DLCLOSE && i != HT_H_EXIT && i != HT_H_CEXIT &&
	    ht_ihooks[i].hook != NULL;
}
