/*
 * What the two halves of the hooks module share: the table's flag and
 * original lookups (inlined into every hook), and the hook functions that
 * hooks-gen.c stamps out, one per entry of src/allocnames.h's list, by its
 * signature class, for hooks.c's table.
 */
#ifndef HT_HOOKS_INT_H
#define HT_HOOKS_INT_H

#include <errno.h>
#include <stddef.h>
#include <stdint.h>

#include "allocnames.h"
#include "gate.h"
#include "got.h"
#include "hooks.h"
#include "wrap.h"

#define CALLER ((uintptr_t)__builtin_return_address(0))

/* The name of entry id's hook function; ihooks.c compiles the hooks once
 * more under names of their own. */
#ifndef HT_HOOK_FN
#define HT_HOOK_FN(id) ht_hook_##id
#endif

/* The hook's HT_HOOK_* bits, without the generation (gate.h). */
static inline unsigned
hook_flags(enum ht_hook_index i)
{
	return __atomic_load_n(&ht_hooks[i].flags, __ATOMIC_RELAXED) &
	    HT_GATE_FLAGS;
}

/* Out of line, so that the common path of every hook needs no frame. */
static __attribute__((noinline, cold, unused)) void *
orig_multi(enum ht_hook_index i, uintptr_t caller)
{
	return ht_got_orig_for_caller(ht_hooks, i, caller);
}

static inline void *
orig(enum ht_hook_index i, uintptr_t caller)
{
	if (__builtin_expect(hook_flags(i) & HT_HOOK_MULTI, 0))
		return orig_multi(i, caller);
	return __atomic_load_n(&ht_hooks[i].orig, __ATOMIC_ACQUIRE);
}

/* Never NULL once a slot leads to the hook: got.c sets it first, with a
 * release store, before the slot.  A relaxed load is enough here, where the
 * agent runs (x86-64 orders loads with loads, and the slot's load came
 * first), and lets the compiler jump through the table's word itself. */
static inline void *
orig_fast(enum ht_hook_index i)
{
	return __atomic_load_n(&ht_hooks[i].orig, __ATOMIC_RELAXED);
}

static inline int
slow(enum ht_hook_index i)
{
	return (hook_flags(i) & HT_HOOK_SLOW) != 0;
}

/*
 * The allocator failed for want of memory (not for a bad argument), and the
 * program sees the failure: not when its caller is a wrapper that will call
 * a std::new_handler, which may free memory and have the wrapper try again
 * (then no dump is written for that operator new, as the handler's outcome
 * cannot be known here).  Without a handler, operator new throws
 * std::bad_alloc, or its nothrow form returns NULL, right after.
 */
static inline int
out_of_memory(const void *p, int nonzero, uintptr_t caller)
{
	return p == NULL && nonzero && errno == ENOMEM &&
	    !ht_wrap_may_retry(caller - 1);
}

/* mimalloc's functions that mi_heap_destroy's hook calls (NULL where the
 * process has no mimalloc): set by ht_hooks_resolve(). */
extern void *ht_hooks_heap_visit;
extern void *ht_hooks_heap_backing;

/* The hook functions, by signature class (allocnames.h): every argument
 * is passed on to the original as it came. */
typedef uintptr_t ht_arg;
#define HT_HOOK_PROTO_S1(f)    void *f(size_t)
#define HT_HOOK_PROTO_P1(f)    void f(void *, ht_arg)
#define HT_HOOK_PROTO_ALLOC(f) void *f(ht_arg, ht_arg, ht_arg, ht_arg, ht_arg)
#define HT_HOOK_PROTO_S(f)     HT_HOOK_PROTO_ALLOC(f)
#define HT_HOOK_PROTO_NS(f)    HT_HOOK_PROTO_ALLOC(f)
#define HT_HOOK_PROTO_AS(f)    HT_HOOK_PROTO_ALLOC(f)
#define HT_HOOK_PROTO_HS(f)    HT_HOOK_PROTO_ALLOC(f)
#define HT_HOOK_PROTO_HNS(f)   HT_HOOK_PROTO_ALLOC(f)
#define HT_HOOK_PROTO_PM(f)    int f(void **, size_t, size_t)
#define HT_HOOK_PROTO_STR(f)   HT_HOOK_PROTO_ALLOC(f)
#define HT_HOOK_PROTO_STRN(f)  HT_HOOK_PROTO_ALLOC(f)
#define HT_HOOK_PROTO_RP(f)    HT_HOOK_PROTO_ALLOC(f)
#define HT_HOOK_PROTO_HSTR(f)  HT_HOOK_PROTO_ALLOC(f)
#define HT_HOOK_PROTO_HSTRN(f) HT_HOOK_PROTO_ALLOC(f)
#define HT_HOOK_PROTO_HRP(f)   HT_HOOK_PROTO_ALLOC(f)
#define HT_HOOK_PROTO_REALLOC(f)                                               \
	void *f(ht_arg, ht_arg, ht_arg, ht_arg, ht_arg, ht_arg)
#define HT_HOOK_PROTO_PS(f)   HT_HOOK_PROTO_REALLOC(f)
#define HT_HOOK_PROTO_PNS(f)  HT_HOOK_PROTO_REALLOC(f)
#define HT_HOOK_PROTO_PSF(f)  HT_HOOK_PROTO_REALLOC(f)
#define HT_HOOK_PROTO_HPS(f)  HT_HOOK_PROTO_REALLOC(f)
#define HT_HOOK_PROTO_HPNS(f) HT_HOOK_PROTO_REALLOC(f)
#define HT_HOOK_PROTO_HPSF(f) HT_HOOK_PROTO_REALLOC(f)
#define HT_HOOK_PROTO_RARR(f) int f(void *, size_t, size_t)
#define HT_HOOK_PROTO_RAY(f)  void *f(void *, size_t, size_t)
#define HT_HOOK_PROTO_XA(f)   size_t f(void *, size_t, size_t, int)
#define HT_HOOK_PROTO_P(f)    void f(void *, ht_arg, ht_arg)
#define HT_HOOK_PROTO_HEAP(f) void f(void *)

#define HT_HOOK_DECL_ONE(sig, id) HT_HOOK_PROTO_##sig(HT_HOOK_FN(id));
#define HT_HOOK_DECL_S1(id)	  HT_HOOK_DECL_ONE(S1, id)
#define HT_HOOK_DECL_S(id)	  HT_HOOK_DECL_ONE(S, id)
#define HT_HOOK_DECL_NS(id)	  HT_HOOK_DECL_ONE(NS, id)
#define HT_HOOK_DECL_AS(id)	  HT_HOOK_DECL_ONE(AS, id)
#define HT_HOOK_DECL_HS(id)	  HT_HOOK_DECL_ONE(HS, id)
#define HT_HOOK_DECL_HNS(id)	  HT_HOOK_DECL_ONE(HNS, id)
#define HT_HOOK_DECL_PM(id)	  HT_HOOK_DECL_ONE(PM, id)
#define HT_HOOK_DECL_STR(id)	  HT_HOOK_DECL_ONE(STR, id)
#define HT_HOOK_DECL_STRN(id)	  HT_HOOK_DECL_ONE(STRN, id)
#define HT_HOOK_DECL_RP(id)	  HT_HOOK_DECL_ONE(RP, id)
#define HT_HOOK_DECL_HSTR(id)	  HT_HOOK_DECL_ONE(HSTR, id)
#define HT_HOOK_DECL_HSTRN(id)	  HT_HOOK_DECL_ONE(HSTRN, id)
#define HT_HOOK_DECL_HRP(id)	  HT_HOOK_DECL_ONE(HRP, id)
#define HT_HOOK_DECL_PS(id)	  HT_HOOK_DECL_ONE(PS, id)
#define HT_HOOK_DECL_PNS(id)	  HT_HOOK_DECL_ONE(PNS, id)
#define HT_HOOK_DECL_PSF(id)	  HT_HOOK_DECL_ONE(PSF, id)
#define HT_HOOK_DECL_HPS(id)	  HT_HOOK_DECL_ONE(HPS, id)
#define HT_HOOK_DECL_HPNS(id)	  HT_HOOK_DECL_ONE(HPNS, id)
#define HT_HOOK_DECL_HPSF(id)	  HT_HOOK_DECL_ONE(HPSF, id)
#define HT_HOOK_DECL_RARR(id)	  HT_HOOK_DECL_ONE(RARR, id)
#define HT_HOOK_DECL_RAY(id)	  HT_HOOK_DECL_ONE(RAY, id)
#define HT_HOOK_DECL_XA(id)	  HT_HOOK_DECL_ONE(XA, id)
#define HT_HOOK_DECL_P1(id)	  HT_HOOK_DECL_ONE(P1, id)
#define HT_HOOK_DECL_P(id)	  HT_HOOK_DECL_ONE(P, id)
#define HT_HOOK_DECL_HEAP(id)	  HT_HOOK_DECL_ONE(HEAP, id)
#define HT_HOOK_DECL_NONE(id)
#define HT_HOOK_DECL_UNSUP(id)

#define HT_HOOK_DECL(id, nm, fam, k, sig, fl) HT_HOOK_DECL_##sig(id)
HT_ALLOCFN_LIST(HT_HOOK_DECL)
#undef HT_HOOK_DECL

#endif
