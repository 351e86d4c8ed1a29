/*
 * The hooks.  The malloc family and C++ operator new/delete are reached
 * through rewritten GOT slots (got.c), so each hook must call the original
 * that its caller's module was bound to; in the common case every module
 * shares one original per name and the lookup is a load.
 *
 * Order matters for frees: a sampled block is accounted before it goes back
 * to the allocator, so another thread cannot be handed the address and
 * sample it first.  A new block is sampled after the allocator returns it,
 * before the caller can see (and free) it.
 */
#include <dlfcn.h>
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>

#include "hooks.h"
#include "lock.h"
#include "sampler.h"

#define CALLER	((uintptr_t)__builtin_return_address(0))

/* Out of line, so that the common path of every hook needs no frame. */
static __attribute__((noinline, cold)) void *
orig_multi(enum ht_hook_index i, uintptr_t caller)
{
	return ht_got_orig_for_caller(ht_hooks, i, caller);
}

static inline void *
orig(enum ht_hook_index i, uintptr_t caller)
{
	if (__builtin_expect(__atomic_load_n(&ht_hooks[i].multi,
	    __ATOMIC_RELAXED), 0))
		return orig_multi(i, caller);
	return __atomic_load_n(&ht_hooks[i].orig, __ATOMIC_ACQUIRE);
}

typedef void	*(*alloc_fn)(size_t);
typedef void	 (*free_fn)(void *);

/*
 * The countdown is charged before the allocator is called: the decision does
 * not depend on the block, and when no sample is due (nearly always) the
 * hook ends in a tail jump to the original, with no frame of its own.
 */
static inline void
unsample(void *p)
{
	if (__builtin_expect(ht_live_maybe((uintptr_t)p), 0))
		ht_sampler_free(p);
}

#define ALLOC_HOOK(call, size) do {					\
	if (__builtin_expect(!ht_sample_due(size), 1))			\
		return call;						\
	return sampled(call, size, CALLER);				\
} while (0)

/*
 * The hottest hooks (malloc, free, operator new and delete) are written so
 * that their common path reads nothing from the stack and calls nothing but
 * the original, in tail position: GCC then gives them no frame at all.  The
 * rest (a module bound to another allocator, a sample due) goes out of line.
 */
static inline int
is_multi(enum ht_hook_index i)
{
	return __atomic_load_n(&ht_hooks[i].multi, __ATOMIC_RELAXED);
}

/* Never NULL once a slot leads to the hook: got.c sets it first. */
static inline void *
orig_fast(enum ht_hook_index i)
{
	return __atomic_load_n(&ht_hooks[i].orig, __ATOMIC_ACQUIRE);
}

/* A one-size allocation whose fast path did not apply: charged says whether
 * the countdown was already charged (and a sample found due). */
static __attribute__((noinline)) void *
alloc1_slow(enum ht_hook_index i, size_t n, int charged, uintptr_t caller)
{
	alloc_fn	 fn = (alloc_fn)orig(i, caller);
	struct ht_regs	 regs;
	void		*p;

	if (!charged && !ht_sample_due(n))
		return fn(n);
	/* The hook reached here by a tail jump: this frame's caller is the
	 * program, so the walk starts one step from it. */
	HT_REGS_CAPTURE(&regs);
	p = fn(n);
	ht_sampler_alloc(p, n, caller, &regs);
	return p;
}

static __attribute__((noinline)) void
free1_slow(enum ht_hook_index i, void *p, uintptr_t caller)
{
	unsample(p);
	((free_fn)orig(i, caller))(p);
}

#define ALLOC1_HOOK(name, idx)						\
static void *								\
name(size_t n)								\
{									\
	if (__builtin_expect(is_multi(idx), 0))				\
		return alloc1_slow(idx, n, 0, CALLER);			\
	if (__builtin_expect(ht_sample_due(n), 0))			\
		return alloc1_slow(idx, n, 1, CALLER);			\
	return ((alloc_fn)orig_fast(idx))(n);				\
}

#define FREE1_HOOK(name, idx)						\
static void								\
name(void *p)								\
{									\
	if (__builtin_expect(is_multi(idx) ||				\
	    ht_live_maybe((uintptr_t)p), 0)) {				\
		free1_slow(idx, p, CALLER);				\
		return;							\
	}								\
	((free_fn)orig_fast(idx))(p);					\
}

static __attribute__((noinline)) void *
sampled(void *p, size_t size, uintptr_t caller)
{
	ht_sampler_alloc(p, size, caller, NULL);
	return p;
}


ALLOC1_HOOK(hook_malloc, HT_H_MALLOC)

static void *
hook_calloc(size_t n, size_t m)
{
	/* If n * m overflows, calloc fails: a NULL block is never sampled. */
	ALLOC_HOOK(((void *(*)(size_t, size_t))orig(HT_H_CALLOC,
	    CALLER))(n, m), n * m);
}

static void *
do_realloc(void *(*fn)(void *, size_t), void *old, size_t n,
    uintptr_t caller)
{
	struct ht_live	 e;
	int		 had = 0, due;
	void		*p;

	/* A realloc of a sampled block is a free of the old block plus a
	 * new allocation (DESIGN.md §3). */
	if (old != NULL && __builtin_expect(ht_live_maybe((uintptr_t)old), 0))
		had = ht_sampler_take(old, &e);
	due = ht_sample_due(n);
	p = fn(old, n);
	if (p == NULL && n != 0 && had)
		ht_sampler_restore(&e);	/* failed: old is still valid */
	if (__builtin_expect(due, 0))
		ht_sampler_alloc(p, n, caller, NULL);
	return p;
}

static void *
hook_realloc(void *old, size_t n)
{
	return do_realloc((void *(*)(void *, size_t))orig(HT_H_REALLOC,
	    CALLER), old, n, CALLER);
}

/*
 * reallocarray(p, n, m) is realloc(p, n * m) with an overflow check, and
 * glibc implements it by calling realloc through its own PLT: forwarding to
 * the original reallocarray would count every block twice.  So the hook
 * does what reallocarray is defined to do, with the caller's realloc.
 */
static void *
hook_reallocarray(void *old, size_t n, size_t m)
{
	size_t	total;

	if (__builtin_mul_overflow(n, m, &total)) {
		errno = ENOMEM;
		return NULL;
	}
	return do_realloc((void *(*)(void *, size_t))orig(HT_H_REALLOC,
	    CALLER), old, total, CALLER);
}

FREE1_HOOK(hook_free, HT_H_FREE)

static void
hook_free_sized(void *p, size_t n)
{
	unsample(p);
	((void (*)(void *, size_t))orig(HT_H_FREE_SIZED, CALLER))(p, n);
}

static void
hook_free_aligned_sized(void *p, size_t a, size_t n)
{
	unsample(p);
	((void (*)(void *, size_t, size_t))orig(HT_H_FREE_ALIGNED_SIZED,
	    CALLER))(p, a, n);
}

static int
hook_posix_memalign(void **pp, size_t a, size_t n)
{
	int	(*fn)(void **, size_t, size_t) = (int (*)(void **, size_t,
	    size_t))orig(HT_H_POSIX_MEMALIGN, CALLER);
	int	rc;

	if (__builtin_expect(!ht_sample_due(n), 1))
		return fn(pp, a, n);
	rc = fn(pp, a, n);
	ht_sampler_alloc(rc == 0 ? *pp : NULL, n, CALLER, NULL);
	return rc;
}

static void *
hook_aligned_alloc(size_t a, size_t n)
{
	ALLOC_HOOK(((void *(*)(size_t, size_t))orig(HT_H_ALIGNED_ALLOC,
	    CALLER))(a, n), n);
}

static void *
hook_memalign(size_t a, size_t n)
{
	ALLOC_HOOK(((void *(*)(size_t, size_t))orig(HT_H_MEMALIGN,
	    CALLER))(a, n), n);
}

static void *
hook_valloc(size_t n)
{
	ALLOC_HOOK(((alloc_fn)orig(HT_H_VALLOC, CALLER))(n), n);
}

static void *
hook_pvalloc(size_t n)
{
	ALLOC_HOOK(((alloc_fn)orig(HT_H_PVALLOC, CALLER))(n), n);
}

/*
 * C++.  operator new may throw; the exception unwinds through these frames
 * (C with unwind tables, nothing to clean up).  Only slots bound to
 * libstdc++'s operators are patched, and none of libstdc++'s own slots (its
 * operators call each other and malloc through its PLT; see agent.c), so
 * each object is counted once.
 */
ALLOC1_HOOK(hook_new, HT_H_NEW)
ALLOC1_HOOK(hook_new_array, HT_H_NEW_ARRAY)

#define NEW2_HOOK(name, idx, argt)					\
static void *								\
name(size_t n, argt x)							\
{									\
	ALLOC_HOOK(((void *(*)(size_t, argt))orig(idx, CALLER))(n, x), n); \
}
NEW2_HOOK(hook_new_nothrow, HT_H_NEW_NOTHROW, const void *)
NEW2_HOOK(hook_new_array_nothrow, HT_H_NEW_ARRAY_NOTHROW, const void *)
NEW2_HOOK(hook_new_align, HT_H_NEW_ALIGN, size_t)
NEW2_HOOK(hook_new_array_align, HT_H_NEW_ARRAY_ALIGN, size_t)

#define NEW3_HOOK(name, idx)						\
static void *								\
name(size_t n, size_t a, const void *nt)				\
{									\
	ALLOC_HOOK(((void *(*)(size_t, size_t, const void *))orig(idx,	\
	    CALLER))(n, a, nt), n);					\
}
NEW3_HOOK(hook_new_align_nothrow, HT_H_NEW_ALIGN_NOTHROW)
NEW3_HOOK(hook_new_array_align_nothrow, HT_H_NEW_ARRAY_ALIGN_NOTHROW)

FREE1_HOOK(hook_delete, HT_H_DELETE)
FREE1_HOOK(hook_delete_array, HT_H_DELETE_ARRAY)

#define DELETE2_HOOK(name, idx, argt)					\
static void								\
name(void *p, argt x)							\
{									\
	unsample(p);							\
	((void (*)(void *, argt))orig(idx, CALLER))(p, x);		\
}
DELETE2_HOOK(hook_delete_sized, HT_H_DELETE_SIZED, size_t)
DELETE2_HOOK(hook_delete_array_sized, HT_H_DELETE_ARRAY_SIZED, size_t)
DELETE2_HOOK(hook_delete_align, HT_H_DELETE_ALIGN, size_t)
DELETE2_HOOK(hook_delete_array_align, HT_H_DELETE_ARRAY_ALIGN, size_t)
DELETE2_HOOK(hook_delete_nothrow, HT_H_DELETE_NOTHROW, const void *)
DELETE2_HOOK(hook_delete_array_nothrow, HT_H_DELETE_ARRAY_NOTHROW,
    const void *)

#define DELETE3_HOOK(name, idx, argt)					\
static void								\
name(void *p, size_t a, argt x)						\
{									\
	unsample(p);							\
	((void (*)(void *, size_t, argt))orig(idx, CALLER))(p, a, x);	\
}
DELETE3_HOOK(hook_delete_sized_align, HT_H_DELETE_SIZED_ALIGN, size_t)
DELETE3_HOOK(hook_delete_array_sized_align, HT_H_DELETE_ARRAY_SIZED_ALIGN,
    size_t)
DELETE3_HOOK(hook_delete_align_nothrow, HT_H_DELETE_ALIGN_NOTHROW,
    const void *)
DELETE3_HOOK(hook_delete_array_align_nothrow,
    HT_H_DELETE_ARRAY_ALIGN_NOTHROW, const void *)

static void *
hook_dlopen(const char *file, int flags)
{
	void	*h = ((void *(*)(const char *, int))orig(HT_H_DLOPEN,
	    CALLER))(file, flags);

	if (h != NULL)
		ht_agent_modules_changed();
	return h;
}

static int
hook_dlclose(void *h)
{
	int	rc;

	/* The unwinder must not read the CFI of a module being unmapped:
	 * samples taken meanwhile keep only their caller.  Taking the lock
	 * to raise the flag waits out any walk in progress. */
	ht_lock_acquire(&ht_agent_lock);
	ht_sampler_dlclose_busy++;
	ht_lock_release(&ht_agent_lock);
	rc = ((int (*)(void *))orig(HT_H_DLCLOSE, CALLER))(h);
	ht_agent_modules_changed();
	ht_lock_acquire(&ht_agent_lock);
	ht_sampler_dlclose_busy--;
	ht_lock_release(&ht_agent_lock);
	return rc;
}

#define HOOK(sym, fn)	{ .name = sym, .hook = (void *)fn }
struct ht_hook_def	ht_hooks[HT_NHOOKS] = {
	[HT_H_MALLOC] = HOOK("malloc", hook_malloc),
	[HT_H_CALLOC] = HOOK("calloc", hook_calloc),
	[HT_H_REALLOC] = HOOK("realloc", hook_realloc),
	[HT_H_REALLOCARRAY] = HOOK("reallocarray", hook_reallocarray),
	[HT_H_FREE] = HOOK("free", hook_free),
	[HT_H_POSIX_MEMALIGN] = HOOK("posix_memalign", hook_posix_memalign),
	[HT_H_ALIGNED_ALLOC] = HOOK("aligned_alloc", hook_aligned_alloc),
	[HT_H_MEMALIGN] = HOOK("memalign", hook_memalign),
	[HT_H_VALLOC] = HOOK("valloc", hook_valloc),
	[HT_H_PVALLOC] = HOOK("pvalloc", hook_pvalloc),
	[HT_H_FREE_SIZED] = HOOK("free_sized", hook_free_sized),
	[HT_H_FREE_ALIGNED_SIZED] = HOOK("free_aligned_sized",
	    hook_free_aligned_sized),
	[HT_H_NEW] = HOOK("_Znwm", hook_new),
	[HT_H_NEW_ARRAY] = HOOK("_Znam", hook_new_array),
	[HT_H_NEW_NOTHROW] = HOOK("_ZnwmRKSt9nothrow_t", hook_new_nothrow),
	[HT_H_NEW_ARRAY_NOTHROW] = HOOK("_ZnamRKSt9nothrow_t",
	    hook_new_array_nothrow),
	[HT_H_NEW_ALIGN] = HOOK("_ZnwmSt11align_val_t", hook_new_align),
	[HT_H_NEW_ARRAY_ALIGN] = HOOK("_ZnamSt11align_val_t",
	    hook_new_array_align),
	[HT_H_NEW_ALIGN_NOTHROW] = HOOK("_ZnwmSt11align_val_tRKSt9nothrow_t",
	    hook_new_align_nothrow),
	[HT_H_NEW_ARRAY_ALIGN_NOTHROW] =
	    HOOK("_ZnamSt11align_val_tRKSt9nothrow_t",
	    hook_new_array_align_nothrow),
	[HT_H_DELETE] = HOOK("_ZdlPv", hook_delete),
	[HT_H_DELETE_ARRAY] = HOOK("_ZdaPv", hook_delete_array),
	[HT_H_DELETE_SIZED] = HOOK("_ZdlPvm", hook_delete_sized),
	[HT_H_DELETE_ARRAY_SIZED] = HOOK("_ZdaPvm", hook_delete_array_sized),
	[HT_H_DELETE_ALIGN] = HOOK("_ZdlPvSt11align_val_t", hook_delete_align),
	[HT_H_DELETE_ARRAY_ALIGN] = HOOK("_ZdaPvSt11align_val_t",
	    hook_delete_array_align),
	[HT_H_DELETE_SIZED_ALIGN] = HOOK("_ZdlPvmSt11align_val_t",
	    hook_delete_sized_align),
	[HT_H_DELETE_ARRAY_SIZED_ALIGN] = HOOK("_ZdaPvmSt11align_val_t",
	    hook_delete_array_sized_align),
	[HT_H_DELETE_NOTHROW] = HOOK("_ZdlPvRKSt9nothrow_t",
	    hook_delete_nothrow),
	[HT_H_DELETE_ARRAY_NOTHROW] = HOOK("_ZdaPvRKSt9nothrow_t",
	    hook_delete_array_nothrow),
	[HT_H_DELETE_ALIGN_NOTHROW] =
	    HOOK("_ZdlPvSt11align_val_tRKSt9nothrow_t",
	    hook_delete_align_nothrow),
	[HT_H_DELETE_ARRAY_ALIGN_NOTHROW] =
	    HOOK("_ZdaPvSt11align_val_tRKSt9nothrow_t",
	    hook_delete_array_align_nothrow),
	[HT_H_DLOPEN] = HOOK("dlopen", hook_dlopen),
	[HT_H_DLCLOSE] = HOOK("dlclose", hook_dlclose),
};
