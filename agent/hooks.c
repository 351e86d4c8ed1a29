/*
 * The hooks' table (the hooks themselves are in hooks-gen.c).  The malloc
 * family is reached through rewritten GOT slots (got.c) of every module,
 * the C++ runtime's included, so each hook must call the original that its
 * caller's module was bound to; in the common case every module shares
 * one original per name and the lookup is a load.
 *
 * libstdc++'s operators new and delete are not hooked: they are wrappers
 * (wrap.h) that call malloc, aligned_alloc or free through the slots of
 * the module defining them, so every object is counted once, there, also
 * when libstdc++'s own code allocates (std::string, streams, locales,
 * exceptions), when new[] or a nothrow form calls new, or when the program
 * replaces operator new with one that calls malloc.  The sampler strips the
 * wrappers' frames, so the site is the operator's caller.  Hooking the
 * operators as well cannot be made exact: the runtime's operators and its
 * other code reach one another by tail calls (new[] jumps to new,
 * std::string's _M_create jumps to new), which leave no frame to tell a
 * nested call from a first one.  An allocator's operators (tcmalloc's,
 * jemalloc's, mimalloc's) call no slot: they are hooked as what they are,
 * entry points (HT_GOT_IN_ALLOCATOR), and their own nested calls are not
 * (HT_GOT_NOT_SELF).
 *
 * Order matters for frees: a sampled block is accounted before it goes back
 * to the allocator, so another thread cannot be handed the address and
 * sample it first.  A new block is sampled after the allocator returns it,
 * before the caller can see (and free) it.
 *
 * Failure dumps (dump.h): while a session has them armed, every allocation
 * hook's flag word has HT_HOOK_SLOW, which its fast path already tests (the
 * word also carries HT_HOOK_MULTI), so the call goes out of line, where a
 * failure of the allocator (NULL and ENOMEM for a nonzero size) writes the
 * dump before the hook hands the failure on.  Unarmed, the fast paths are
 * what they were: one load and test of the word.
 */
#include <dlfcn.h>
#include <stddef.h>
#include <stdint.h>

#include "allocnames.h"
#include "gate.h"
#include "got.h"
#include "hooks-int.h"
#include "hooks.h"
#include "tables.h"

/* One pair for both copies of the hooks (ihooks.c compiles this file
 * again): ht_hooks_resolve() sets them. */
#ifndef HT_IHOOKS_COPY
void *ht_hooks_heap_visit;
void *ht_hooks_heap_backing;
#endif

void
ht_hooks_set_slow(int on)
{
	size_t i;

	for (i = 0; i < HT_NHOOKS; i++) {
		if (!ht_hook_allocates((enum ht_hook_index)i))
			continue;
		ht_gate_bits(&ht_hooks[i], HT_HOOK_SLOW, on);
	}
}

void
ht_hooks_set_record(int on)
{
	size_t i;

	for (i = 0; i < HT_NALLOCFNS; i++) {
		ht_gate_bits(&ht_hooks[i], HT_HOOK_RECORD, on);
	}
}

#define HT_HOOK_PTR_S1(id)    ((void *)HT_HOOK_FN(id))
#define HT_HOOK_PTR_S(id)     ((void *)HT_HOOK_FN(id))
#define HT_HOOK_PTR_NS(id)    ((void *)HT_HOOK_FN(id))
#define HT_HOOK_PTR_AS(id)    ((void *)HT_HOOK_FN(id))
#define HT_HOOK_PTR_HS(id)    ((void *)HT_HOOK_FN(id))
#define HT_HOOK_PTR_HNS(id)   ((void *)HT_HOOK_FN(id))
#define HT_HOOK_PTR_PM(id)    ((void *)HT_HOOK_FN(id))
#define HT_HOOK_PTR_STR(id)   ((void *)HT_HOOK_FN(id))
#define HT_HOOK_PTR_STRN(id)  ((void *)HT_HOOK_FN(id))
#define HT_HOOK_PTR_RP(id)    ((void *)HT_HOOK_FN(id))
#define HT_HOOK_PTR_HSTR(id)  ((void *)HT_HOOK_FN(id))
#define HT_HOOK_PTR_HSTRN(id) ((void *)HT_HOOK_FN(id))
#define HT_HOOK_PTR_HRP(id)   ((void *)HT_HOOK_FN(id))
#define HT_HOOK_PTR_PS(id)    ((void *)HT_HOOK_FN(id))
#define HT_HOOK_PTR_PNS(id)   ((void *)HT_HOOK_FN(id))
#define HT_HOOK_PTR_PSF(id)   ((void *)HT_HOOK_FN(id))
#define HT_HOOK_PTR_HPS(id)   ((void *)HT_HOOK_FN(id))
#define HT_HOOK_PTR_HPNS(id)  ((void *)HT_HOOK_FN(id))
#define HT_HOOK_PTR_HPSF(id)  ((void *)HT_HOOK_FN(id))
#define HT_HOOK_PTR_RARR(id)  ((void *)HT_HOOK_FN(id))
#define HT_HOOK_PTR_RAY(id)   ((void *)HT_HOOK_FN(id))
#define HT_HOOK_PTR_XA(id)    ((void *)HT_HOOK_FN(id))
#define HT_HOOK_PTR_P1(id)    ((void *)HT_HOOK_FN(id))
#define HT_HOOK_PTR_P(id)     ((void *)HT_HOOK_FN(id))
#define HT_HOOK_PTR_HEAP(id)  ((void *)HT_HOOK_FN(id))
#define HT_HOOK_PTR_NONE(id)  NULL
#define HT_HOOK_PTR_UNSUP(id) NULL

struct ht_hook_def ht_hooks[HT_NHOOKS] = {
#define HT_HOOK_ROW(id, nm, fam, k, sig, fl)                                   \
	[HT_H_##id] = { .name = nm,                                            \
		.hook = HT_HOOK_PTR_##sig(id),                                 \
		.filter = ht_live_filter },
	HT_ALLOCFN_LIST(HT_HOOK_ROW)
#undef HT_HOOK_ROW
	    /* Their hooks are agent.c's: see ht_hooks_set_loader(). */
	    [HT_H_DLOPEN] = { .name = "dlopen" },
	[HT_H_DLCLOSE] = { .name = "dlclose" },
	/* init.c's: see ht_hooks_set_exit(). */
	[HT_H_EXIT] = { .name = "_exit" },
	[HT_H_CEXIT] = { .name = "_Exit" },
};

/* The C++ operators new (wrap.h), in every form: the deletes call free
 * and need nothing. */
static const char *const wrapper_names[] = {
	"_Znwm",
	"_Znam",
	"_ZnwmRKSt9nothrow_t",
	"_ZnamRKSt9nothrow_t",
	"_ZnwmSt11align_val_t",
	"_ZnamSt11align_val_t",
	"_ZnwmSt11align_val_tRKSt9nothrow_t",
	"_ZnamSt11align_val_tRKSt9nothrow_t",
};

void
ht_hooks_set_wrappers(void)
{
	size_t i;

	for (i = 0; i < HT_NALLOCFNS; i++) {
		unsigned r = 0;

		if (ht_allocfn_allocates((unsigned)i))
			r |= HT_GOT_NOT_SELF;
		if (ht_allocfns[i].flags & HT_FNF_ALLOCATOR)
			r |= HT_GOT_IN_ALLOCATOR;
		ht_hooks[i].rules = r;
	}
	ht_got_set_wrappers(wrapper_names,
	    sizeof(wrapper_names) / sizeof(wrapper_names[0]),
	    "_ZSt15get_new_handlerv");
}

_Static_assert(sizeof(ht_live_filter) == HT_GATE_FILTER_SIZE,
    "gate.h's filter size is the live-sample filter's");

void
ht_hooks_gate(void)
{
	(void)ht_gate_add(ht_hooks, HT_NHOOKS, ht_live_filter);
}

void
ht_hooks_set_exit(void *exit_hook, void *cexit_hook)
{
	ht_hooks[HT_H_EXIT].hook = exit_hook;
	ht_hooks[HT_H_CEXIT].hook = cexit_hook;
}

void
ht_hooks_set_loader(void *dlopen_hook, void *dlclose_hook)
{
	ht_hooks[HT_H_DLOPEN].hook = dlopen_hook;
	ht_hooks[HT_H_DLCLOSE].hook = dlclose_hook;
}

void
ht_hooks_resolve(void)
{
	void *v, *b;

	ht_got_resolve(ht_hooks, HT_NHOOKS);
	/* Both or neither: the hook of mi_heap_destroy calls the two. */
	v = dlsym(RTLD_DEFAULT, "mi_heap_visit_blocks");
	b = dlsym(RTLD_DEFAULT, "mi_heap_get_backing");
	if (v == NULL || b == NULL) {
		(void)dlerror(); /* ours, not the program's */
		v = b = NULL;
	}
	__atomic_store_n(&ht_hooks_heap_backing, b, __ATOMIC_RELEASE);
	__atomic_store_n(&ht_hooks_heap_visit, v, __ATOMIC_RELEASE);
}

void *
ht_hooks_orig(enum ht_hook_index i, uintptr_t caller)
{
	return orig(i, caller);
}
