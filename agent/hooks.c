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

static inline void *
orig(enum ht_hook_index i, uintptr_t caller)
{
	void	*o = __atomic_load_n(&ht_hooks[i].orig, __ATOMIC_ACQUIRE);

	if (__builtin_expect(__atomic_load_n(&ht_hooks[i].multi,
	    __ATOMIC_RELAXED), 0))
		o = ht_got_orig_for_caller(ht_hooks, i, caller);
	return o;
}

typedef void	*(*alloc_fn)(size_t);
typedef void	 (*free_fn)(void *);

static inline void
sample(void *p, size_t size, uintptr_t caller)
{
	if (ht_sample_due(size))
		ht_sampler_alloc(p, size, caller);
}

static inline void
unsample(void *p)
{
	if (__builtin_expect(ht_live_maybe((uintptr_t)p), 0))
		ht_sampler_free(p);
}

static void *
hook_malloc(size_t n)
{
	void	*p = ((alloc_fn)orig(HT_H_MALLOC, CALLER))(n);

	sample(p, n, CALLER);
	return p;
}

static void *
hook_calloc(size_t n, size_t m)
{
	void	*p = ((void *(*)(size_t, size_t))orig(HT_H_CALLOC,
	    CALLER))(n, m);

	/* If n * m overflows, calloc failed and p is NULL: not sampled. */
	sample(p, n * m, CALLER);
	return p;
}

static void *
do_realloc(void *(*fn)(void *, size_t), void *old, size_t n,
    uintptr_t caller)
{
	struct ht_live	 e;
	int		 had = 0;
	void		*p;

	/* A realloc of a sampled block is a free of the old block plus a
	 * new allocation (DESIGN.md §3). */
	if (old != NULL && __builtin_expect(ht_live_maybe((uintptr_t)old), 0))
		had = ht_sampler_take(old, &e);
	p = fn(old, n);
	if (p == NULL && n != 0 && had)
		ht_sampler_restore(&e);	/* failed: old is still valid */
	if (p != NULL)
		sample(p, n, caller);
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

static void
hook_free(void *p)
{
	unsample(p);
	((free_fn)orig(HT_H_FREE, CALLER))(p);
}

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
	int	rc = ((int (*)(void **, size_t, size_t))orig(
	    HT_H_POSIX_MEMALIGN, CALLER))(pp, a, n);

	if (rc == 0)
		sample(*pp, n, CALLER);
	return rc;
}

static void *
hook_aligned_alloc(size_t a, size_t n)
{
	void	*p = ((void *(*)(size_t, size_t))orig(HT_H_ALIGNED_ALLOC,
	    CALLER))(a, n);

	sample(p, n, CALLER);
	return p;
}

static void *
hook_memalign(size_t a, size_t n)
{
	void	*p = ((void *(*)(size_t, size_t))orig(HT_H_MEMALIGN,
	    CALLER))(a, n);

	sample(p, n, CALLER);
	return p;
}

static void *
hook_valloc(size_t n)
{
	void	*p = ((alloc_fn)orig(HT_H_VALLOC, CALLER))(n);

	sample(p, n, CALLER);
	return p;
}

static void *
hook_pvalloc(size_t n)
{
	void	*p = ((alloc_fn)orig(HT_H_PVALLOC, CALLER))(n);

	sample(p, n, CALLER);
	return p;
}

/*
 * C++.  operator new may throw; the exception unwinds through these frames
 * (C with unwind tables, nothing to clean up).  Only slots bound to
 * libstdc++'s operators are patched, and none of libstdc++'s own slots (its
 * operators call each other and malloc through its PLT; see agent.c), so
 * each object is counted once.
 */
#define NEW_HOOK(name, idx)						\
static void *								\
name(size_t n)								\
{									\
	void	*p = ((alloc_fn)orig(idx, CALLER))(n);			\
									\
	sample(p, n, CALLER);						\
	return p;							\
}
NEW_HOOK(hook_new, HT_H_NEW)
NEW_HOOK(hook_new_array, HT_H_NEW_ARRAY)

#define NEW2_HOOK(name, idx, argt)					\
static void *								\
name(size_t n, argt x)							\
{									\
	void	*p = ((void *(*)(size_t, argt))orig(idx, CALLER))(n, x); \
									\
	sample(p, n, CALLER);						\
	return p;							\
}
NEW2_HOOK(hook_new_nothrow, HT_H_NEW_NOTHROW, const void *)
NEW2_HOOK(hook_new_array_nothrow, HT_H_NEW_ARRAY_NOTHROW, const void *)
NEW2_HOOK(hook_new_align, HT_H_NEW_ALIGN, size_t)
NEW2_HOOK(hook_new_array_align, HT_H_NEW_ARRAY_ALIGN, size_t)

#define NEW3_HOOK(name, idx)						\
static void *								\
name(size_t n, size_t a, const void *nt)				\
{									\
	void	*p = ((void *(*)(size_t, size_t, const void *))orig(idx, \
	    CALLER))(n, a, nt);						\
									\
	sample(p, n, CALLER);						\
	return p;							\
}
NEW3_HOOK(hook_new_align_nothrow, HT_H_NEW_ALIGN_NOTHROW)
NEW3_HOOK(hook_new_array_align_nothrow, HT_H_NEW_ARRAY_ALIGN_NOTHROW)

#define DELETE_HOOK(name, idx)						\
static void								\
name(void *p)								\
{									\
	unsample(p);							\
	((free_fn)orig(idx, CALLER))(p);				\
}
DELETE_HOOK(hook_delete, HT_H_DELETE)
DELETE_HOOK(hook_delete_array, HT_H_DELETE_ARRAY)

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
