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
 *
 * Failure dumps (dump.h): while a session has them armed, every allocation
 * hook's flag word has HT_HOOK_SLOW, which its fast path already tests (the
 * word also carries HT_HOOK_MULTI), so the call goes out of line, where a
 * failure of the allocator (NULL and ENOMEM for a nonzero size) writes the
 * dump before the hook hands the failure on.  Unarmed, the fast paths are
 * what they were: one load and test of the word.
 */
#include <dlfcn.h>
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "dump.h"
#include "got.h"
#include "hooks.h"
#include "sampler.h"
#include "tables.h"
#include "unwind.h"

#define CALLER ((uintptr_t)__builtin_return_address(0))

static inline unsigned
hook_flags(enum ht_hook_index i)
{
	return __atomic_load_n(&ht_hooks[i].flags, __ATOMIC_RELAXED);
}

/* Out of line, so that the common path of every hook needs no frame. */
static __attribute__((noinline, cold)) void *
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

static inline int
slow(enum ht_hook_index i)
{
	return (hook_flags(i) & HT_HOOK_SLOW) != 0;
}

/* The allocator failed for want of memory (not for a bad argument). */
static inline int
out_of_memory(const void *p, int nonzero)
{
	return p == NULL && nonzero && errno == ENOMEM;
}

/*
 * C++ throwing operators new report failure by throwing std::bad_alloc,
 * which passes through these C frames where nothing can see it.  While
 * failure dumps are armed, a throwing hook first calls the nothrow form of
 * the same libstdc++ (which calls the throwing one inside libstdc++, through
 * its own unpatched PLT, and turns the exception into NULL); on NULL it
 * dumps, then calls the throwing original, which fails again and throws
 * the program its std::bad_alloc as before (or succeeds, if memory was
 * freed meanwhile: an allocation may always succeed).  This is exact only
 * when no std::new_handler is installed: a handler would run in both calls,
 * so with one installed the hook calls the throwing original alone and no
 * failure dump is written for operator new.  The partners and
 * std::get_new_handler are looked up by ht_hooks_resolve_extra(), never
 * from a hook.
 */
enum { NEWP_NEW, NEWP_ARRAY, NEWP_ALIGN, NEWP_ARRAY_ALIGN, NEWP_N };
static const struct {
	enum ht_hook_index throwing, nothrow;
} newpairs[NEWP_N] = {
	{ HT_H_NEW, HT_H_NEW_NOTHROW },
	{ HT_H_NEW_ARRAY, HT_H_NEW_ARRAY_NOTHROW },
	{ HT_H_NEW_ALIGN, HT_H_NEW_ALIGN_NOTHROW },
	{ HT_H_NEW_ARRAY_ALIGN, HT_H_NEW_ARRAY_ALIGN_NOTHROW },
};
static void *new_throwing[NEWP_N], *new_nothrow[NEWP_N];
static void *new_handler_fn;   /* std::get_new_handler */
static const char nothrow_tag; /* a std::nothrow_t: empty, unread */

static int
is_libstdcxx_at(const void *fn, void **base)
{
	Dl_info info;
	const char *b;

	if (fn == NULL || dladdr(fn, &info) == 0 || info.dli_fname == NULL)
		return 0;
	b = strrchr(info.dli_fname, '/');
	b = b != NULL ? b + 1 : info.dli_fname;
	*base = info.dli_fbase;
	return strncmp(b, "libstdc++.so", 12) == 0;
}

void
ht_hooks_resolve_extra(void)
{
	void *t, *nt, *gh, *bt, *bn, *bg;
	size_t k;

	gh = dlsym(RTLD_DEFAULT, "_ZSt15get_new_handlerv");
	if (!is_libstdcxx_at(gh, &bg))
		gh = NULL;
	for (k = 0; k < NEWP_N; k++) {
		t = __atomic_load_n(&ht_hooks[newpairs[k].throwing].dl,
		    __ATOMIC_ACQUIRE);
		nt = __atomic_load_n(&ht_hooks[newpairs[k].nothrow].dl,
		    __ATOMIC_ACQUIRE);
		/* Both of one libstdc++, and the one get_new_handler
		 * answers for. */
		if (gh == NULL || !is_libstdcxx_at(t, &bt) ||
		    !is_libstdcxx_at(nt, &bn) || bt != bn || bt != bg)
			t = nt = NULL;
		__atomic_store_n(&new_nothrow[k], nt, __ATOMIC_RELEASE);
		__atomic_store_n(&new_throwing[k], t, __ATOMIC_RELEASE);
	}
	__atomic_store_n(&new_handler_fn, gh, __ATOMIC_RELEASE);
}

/* The nothrow partner to call instead of the throwing original fn, or
 * NULL when the failure cannot be seen exactly (see above). */
static void *
nothrow_for(int k, const void *fn)
{
	void *(*gh)(void);
	void *nt;

	*(void **)&gh = __atomic_load_n(&new_handler_fn, __ATOMIC_ACQUIRE);
	nt = __atomic_load_n(&new_nothrow[k], __ATOMIC_ACQUIRE);
	if (gh == NULL || nt == NULL ||
	    fn != __atomic_load_n(&new_throwing[k], __ATOMIC_ACQUIRE) ||
	    gh() != NULL)
		return NULL;
	return nt;
}

/* A throwing operator new(size_t) or new[](size_t), failure dumps armed. */
static void *
new_checked(int k, void *(*fn)(size_t), size_t n)
{
	void *(*nt)(size_t, const void *);
	void *p;

	if ((*(void **)&nt = nothrow_for(k, (void *)fn)) == NULL)
		return fn(n);
	if ((p = nt(n, &nothrow_tag)) != NULL)
		return p;
	ht_dump_on_failure();
	return fn(n); /* throws std::bad_alloc, as it would have */
}

/* The same for operator new(size_t, align_val_t) and new[]. */
static void *
new_align_checked(int k, void *(*fn)(size_t, size_t), size_t n, size_t a)
{
	void *(*nt)(size_t, size_t, const void *);
	void *p;

	if ((*(void **)&nt = nothrow_for(k, (void *)fn)) == NULL)
		return fn(n, a);
	if ((p = nt(n, a, &nothrow_tag)) != NULL)
		return p;
	ht_dump_on_failure();
	return fn(n, a);
}

void
ht_hooks_set_slow(int on)
{
	size_t i;

	for (i = 0; i < HT_NHOOKS; i++) {
		if (!ht_hook_allocates((enum ht_hook_index)i))
			continue;
		if (on)
			__atomic_or_fetch(&ht_hooks[i].flags, HT_HOOK_SLOW,
			    __ATOMIC_RELEASE);
		else
			__atomic_and_fetch(&ht_hooks[i].flags,
			    ~(unsigned)HT_HOOK_SLOW, __ATOMIC_RELEASE);
	}
}

typedef void *(*alloc_fn)(size_t);
typedef void (*free_fn)(void *);

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

/* The out-of-line end of an allocation hook: write the failure dump if
 * the allocator failed (fail), sample if due, hand p on. */
static __attribute__((noinline)) void *
finish(void *p, size_t size, int due, int fail, uintptr_t caller)
{
	if (fail)
		ht_dump_on_failure();
	if (due)
		ht_sampler_alloc(p, size, caller, NULL);
	return p;
}

/* call: the call of the original, whose result is p_; failed: whether p_
 * is a failure for want of memory (evaluated only when armed). */
#define ALLOC_HOOK(idx, call, size, failed)                                    \
	do {                                                                   \
		void *p_;                                                      \
		int due_ = ht_sample_due(size);                                \
                                                                               \
		if (__builtin_expect(!due_, 1) &&                              \
		    __builtin_expect(!slow(idx), 1))                           \
			return call;                                           \
		p_ = call;                                                     \
		return finish(p_, size, due_, slow(idx) && (failed), CALLER);  \
	} while (0)

/*
 * The hottest hooks (malloc, free, operator new and delete) are written so
 * that their common path reads nothing from the stack and calls nothing but
 * the original, in tail position: GCC then gives them no frame at all.  The
 * rest (a flag set in the hook's word: a module bound to another allocator,
 * failure dumps armed; a sample due) goes out of line.
 */

/* Never NULL once a slot leads to the hook: got.c sets it first. */
static inline void *
orig_fast(enum ht_hook_index i)
{
	return __atomic_load_n(&ht_hooks[i].orig, __ATOMIC_ACQUIRE);
}

/* A one-size allocation whose fast path did not apply: charged says whether
 * the countdown was already charged (and a sample found due). */
static void *
call_checked(enum ht_hook_index i, alloc_fn fn, size_t n)
{
	void *p;

	if (i == HT_H_NEW)
		return new_checked(NEWP_NEW, fn, n);
	if (i == HT_H_NEW_ARRAY)
		return new_checked(NEWP_ARRAY, fn, n);
	p = fn(n);
	if (out_of_memory(p, n != 0))
		ht_dump_on_failure();
	return p;
}

static __attribute__((noinline)) void *
alloc1_slow(enum ht_hook_index i, size_t n, int charged, uintptr_t caller)
{
	alloc_fn fn = (alloc_fn)orig(i, caller);
	struct ht_regs regs;
	void *p;

	if (!charged && !ht_sample_due(n))
		return slow(i) ? call_checked(i, fn, n) : fn(n);
	/* The hook reached here by a tail jump: this frame's caller is the
	 * program, so the walk starts one step from it. */
	HT_REGS_CAPTURE(&regs);
	p = slow(i) ? call_checked(i, fn, n) : fn(n);
	ht_sampler_alloc(p, n, caller, &regs);
	return p;
}

static __attribute__((noinline)) void
free1_slow(enum ht_hook_index i, void *p, uintptr_t caller)
{
	unsample(p);
	((free_fn)orig(i, caller))(p);
}

#define ALLOC1_HOOK(name, idx)                                                 \
	static void *name(size_t n)                                            \
	{                                                                      \
		if (__builtin_expect(hook_flags(idx) != 0, 0))                 \
			return alloc1_slow(idx, n, 0, CALLER);                 \
		if (__builtin_expect(ht_sample_due(n), 0))                     \
			return alloc1_slow(idx, n, 1, CALLER);                 \
		return ((alloc_fn)orig_fast(idx))(n);                          \
	}

#define FREE1_HOOK(name, idx)                                                  \
	static void name(void *p)                                              \
	{                                                                      \
		if (__builtin_expect(hook_flags(idx) != 0 ||                   \
			    ht_live_maybe((uintptr_t)p),                       \
			0)) {                                                  \
			free1_slow(idx, p, CALLER);                            \
			return;                                                \
		}                                                              \
		((free_fn)orig_fast(idx))(p);                                  \
	}

ALLOC1_HOOK(hook_malloc, HT_H_MALLOC)

static void *
hook_calloc(size_t n, size_t m)
{
	/* If n * m overflows, calloc fails: a NULL block is never sampled,
	 * and the failure is one (ENOMEM) like any other. */
	ALLOC_HOOK(HT_H_CALLOC,
	    ((void *(*)(size_t, size_t))orig(HT_H_CALLOC, CALLER))(n, m), n * m,
	    out_of_memory(p_, n != 0 && m != 0));
}

static void *
do_realloc(void *(*fn)(void *, size_t), void *old, size_t n, uintptr_t caller)
{
	struct ht_live e;
	uint64_t epoch;
	int had = 0, due;
	void *p;

	/* A realloc of a sampled block is a free of the old block plus a
	 * new allocation (DESIGN.md §3). */
	if (old != NULL && __builtin_expect(ht_live_maybe((uintptr_t)old), 0))
		had = ht_sampler_take(old, &e, &epoch);
	due = ht_sample_due(n);
	p = fn(old, n);
	if (p == NULL && n != 0) {
		if (had) /* failed: old is still valid */
			ht_sampler_restore(&e, epoch);
		if (slow(HT_H_REALLOC) && errno == ENOMEM)
			ht_dump_on_failure();
	}
	if (__builtin_expect(due, 0))
		ht_sampler_alloc(p, n, caller, NULL);
	return p;
}

static void *
hook_realloc(void *old, size_t n)
{
	return do_realloc((void *(*)(void *, size_t))orig(HT_H_REALLOC, CALLER),
	    old, n, CALLER);
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
	size_t total;

	if (__builtin_mul_overflow(n, m, &total)) {
		errno = ENOMEM;
		if (slow(HT_H_REALLOC))
			ht_dump_on_failure();
		return NULL;
	}
	return do_realloc((void *(*)(void *, size_t))orig(HT_H_REALLOC, CALLER),
	    old, total, CALLER);
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
	int (*fn)(void **, size_t, size_t) =
	    (int (*)(void **, size_t, size_t))orig(HT_H_POSIX_MEMALIGN, CALLER);
	int rc;

	int due = ht_sample_due(n);

	if (__builtin_expect(!(due | slow(HT_H_POSIX_MEMALIGN)), 1))
		return fn(pp, a, n);
	rc = fn(pp, a, n);
	/* posix_memalign returns its error and leaves errno alone. */
	if (rc == ENOMEM && n != 0 && slow(HT_H_POSIX_MEMALIGN))
		ht_dump_on_failure();
	if (due)
		ht_sampler_alloc(rc == 0 ? *pp : NULL, n, CALLER, NULL);
	return rc;
}

static void *
hook_aligned_alloc(size_t a, size_t n)
{
	ALLOC_HOOK(HT_H_ALIGNED_ALLOC,
	    ((void *(*)(size_t, size_t))orig(HT_H_ALIGNED_ALLOC, CALLER))(a, n),
	    n, out_of_memory(p_, n != 0));
}

static void *
hook_memalign(size_t a, size_t n)
{
	ALLOC_HOOK(HT_H_MEMALIGN,
	    ((void *(*)(size_t, size_t))orig(HT_H_MEMALIGN, CALLER))(a, n), n,
	    out_of_memory(p_, n != 0));
}

static void *
hook_valloc(size_t n)
{
	ALLOC_HOOK(HT_H_VALLOC, ((alloc_fn)orig(HT_H_VALLOC, CALLER))(n), n,
	    out_of_memory(p_, n != 0));
}

static void *
hook_pvalloc(size_t n)
{
	ALLOC_HOOK(HT_H_PVALLOC, ((alloc_fn)orig(HT_H_PVALLOC, CALLER))(n), n,
	    out_of_memory(p_, n != 0));
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

/* The nothrow forms return NULL only when out of memory, whatever the
 * size and errno. */
#define NEW2_HOOK(name, idx, argt)                                             \
	static void *name(size_t n, argt x)                                    \
	{                                                                      \
		ALLOC_HOOK(idx,                                                \
		    ((void *(*)(size_t, argt))orig(idx, CALLER))(n, x), n,     \
		    p_ == NULL);                                               \
	}
NEW2_HOOK(hook_new_nothrow, HT_H_NEW_NOTHROW, const void *)
NEW2_HOOK(hook_new_array_nothrow, HT_H_NEW_ARRAY_NOTHROW, const void *)

/* The throwing aligned forms: see new_align_checked(). */
#define NEWALIGN_HOOK(name, idx, k)                                            \
	static void *name(size_t n, size_t a)                                  \
	{                                                                      \
		void *(*fn_)(size_t, size_t) =                                 \
		    (void *(*)(size_t, size_t))orig(idx, CALLER);              \
		void *p_;                                                      \
		int due_ = ht_sample_due(n);                                   \
                                                                               \
		if (__builtin_expect(!(due_ | slow(idx)), 1))                  \
			return fn_(n, a);                                      \
		p_ = slow(idx) ? new_align_checked(k, fn_, n, a) : fn_(n, a);  \
		return finish(p_, n, due_, 0, CALLER);                         \
	}
NEWALIGN_HOOK(hook_new_align, HT_H_NEW_ALIGN, NEWP_ALIGN)
NEWALIGN_HOOK(hook_new_array_align, HT_H_NEW_ARRAY_ALIGN, NEWP_ARRAY_ALIGN)

#define NEW3_HOOK(name, idx)                                                   \
	static void *name(size_t n, size_t a, const void *nt)                  \
	{                                                                      \
		ALLOC_HOOK(idx,                                                \
		    ((void *(*)(size_t, size_t, const void *))orig(idx,        \
			CALLER))(n, a, nt),                                    \
		    n, p_ == NULL);                                            \
	}
NEW3_HOOK(hook_new_align_nothrow, HT_H_NEW_ALIGN_NOTHROW)
NEW3_HOOK(hook_new_array_align_nothrow, HT_H_NEW_ARRAY_ALIGN_NOTHROW)

FREE1_HOOK(hook_delete, HT_H_DELETE)
FREE1_HOOK(hook_delete_array, HT_H_DELETE_ARRAY)

#define DELETE2_HOOK(name, idx, argt)                                          \
	static void name(void *p, argt x)                                      \
	{                                                                      \
		unsample(p);                                                   \
		((void (*)(void *, argt))orig(idx, CALLER))(p, x);             \
	}
DELETE2_HOOK(hook_delete_sized, HT_H_DELETE_SIZED, size_t)
DELETE2_HOOK(hook_delete_array_sized, HT_H_DELETE_ARRAY_SIZED, size_t)
DELETE2_HOOK(hook_delete_align, HT_H_DELETE_ALIGN, size_t)
DELETE2_HOOK(hook_delete_array_align, HT_H_DELETE_ARRAY_ALIGN, size_t)
DELETE2_HOOK(hook_delete_nothrow, HT_H_DELETE_NOTHROW, const void *)
DELETE2_HOOK(hook_delete_array_nothrow, HT_H_DELETE_ARRAY_NOTHROW, const void *)

#define DELETE3_HOOK(name, idx, argt)                                          \
	static void name(void *p, size_t a, argt x)                            \
	{                                                                      \
		unsample(p);                                                   \
		((void (*)(void *, size_t, argt))orig(idx, CALLER))(p, a, x);  \
	}
DELETE3_HOOK(hook_delete_sized_align, HT_H_DELETE_SIZED_ALIGN, size_t)
DELETE3_HOOK(hook_delete_array_sized_align, HT_H_DELETE_ARRAY_SIZED_ALIGN,
    size_t)
DELETE3_HOOK(hook_delete_align_nothrow, HT_H_DELETE_ALIGN_NOTHROW, const void *)
DELETE3_HOOK(hook_delete_array_align_nothrow, HT_H_DELETE_ARRAY_ALIGN_NOTHROW,
    const void *)

#define HOOK(sym, fn)                                                          \
	{                                                                      \
		.name = sym, .hook = (void *)fn                                \
	}
struct ht_hook_def ht_hooks[HT_NHOOKS] = {
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
	[HT_H_FREE_ALIGNED_SIZED] =
	    HOOK("free_aligned_sized", hook_free_aligned_sized),
	[HT_H_NEW] = HOOK("_Znwm", hook_new),
	[HT_H_NEW_ARRAY] = HOOK("_Znam", hook_new_array),
	[HT_H_NEW_NOTHROW] = HOOK("_ZnwmRKSt9nothrow_t", hook_new_nothrow),
	[HT_H_NEW_ARRAY_NOTHROW] =
	    HOOK("_ZnamRKSt9nothrow_t", hook_new_array_nothrow),
	[HT_H_NEW_ALIGN] = HOOK("_ZnwmSt11align_val_t", hook_new_align),
	[HT_H_NEW_ARRAY_ALIGN] =
	    HOOK("_ZnamSt11align_val_t", hook_new_array_align),
	[HT_H_NEW_ALIGN_NOTHROW] =
	    HOOK("_ZnwmSt11align_val_tRKSt9nothrow_t", hook_new_align_nothrow),
	[HT_H_NEW_ARRAY_ALIGN_NOTHROW] = HOOK(
	    "_ZnamSt11align_val_tRKSt9nothrow_t", hook_new_array_align_nothrow),
	[HT_H_DELETE] = HOOK("_ZdlPv", hook_delete),
	[HT_H_DELETE_ARRAY] = HOOK("_ZdaPv", hook_delete_array),
	[HT_H_DELETE_SIZED] = HOOK("_ZdlPvm", hook_delete_sized),
	[HT_H_DELETE_ARRAY_SIZED] = HOOK("_ZdaPvm", hook_delete_array_sized),
	[HT_H_DELETE_ALIGN] = HOOK("_ZdlPvSt11align_val_t", hook_delete_align),
	[HT_H_DELETE_ARRAY_ALIGN] =
	    HOOK("_ZdaPvSt11align_val_t", hook_delete_array_align),
	[HT_H_DELETE_SIZED_ALIGN] =
	    HOOK("_ZdlPvmSt11align_val_t", hook_delete_sized_align),
	[HT_H_DELETE_ARRAY_SIZED_ALIGN] =
	    HOOK("_ZdaPvmSt11align_val_t", hook_delete_array_sized_align),
	[HT_H_DELETE_NOTHROW] =
	    HOOK("_ZdlPvRKSt9nothrow_t", hook_delete_nothrow),
	[HT_H_DELETE_ARRAY_NOTHROW] =
	    HOOK("_ZdaPvRKSt9nothrow_t", hook_delete_array_nothrow),
	[HT_H_DELETE_ALIGN_NOTHROW] = HOOK(
	    "_ZdlPvSt11align_val_tRKSt9nothrow_t", hook_delete_align_nothrow),
	[HT_H_DELETE_ARRAY_ALIGN_NOTHROW] =
	    HOOK("_ZdaPvSt11align_val_tRKSt9nothrow_t",
		hook_delete_array_align_nothrow),
	/* Their hooks are agent.c's: see ht_hooks_set_loader(). */
	[HT_H_DLOPEN] = { .name = "dlopen" },
	[HT_H_DLCLOSE] = { .name = "dlclose" },
};

void
ht_hooks_set_loader(void *dlopen_hook, void *dlclose_hook)
{
	ht_hooks[HT_H_DLOPEN].hook = dlopen_hook;
	ht_hooks[HT_H_DLCLOSE].hook = dlclose_hook;
}

void *
ht_hooks_orig(enum ht_hook_index i, uintptr_t caller)
{
	return orig(i, caller);
}
