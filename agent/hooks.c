/*
 * The hooks.  The malloc family is reached through rewritten GOT slots
 * (got.c) of every module, the C++ runtime's included, so each hook must
 * call the original that its caller's module was bound to; in the common
 * case every module shares one original per name and the lookup is a load.
 *
 * C++'s operators new and delete are not hooked: they are wrappers
 * (wrap.h) that call malloc, aligned_alloc or free through the slots of
 * the module defining them, so every object is counted once, there, also
 * when libstdc++'s own code allocates (std::string, streams, locales,
 * exceptions), when new[] or a nothrow form calls new, or when the program
 * replaces operator new with one that calls malloc.  The sampler strips the
 * wrappers' frames, so the site is the operator's caller.  Hooking the
 * operators as well cannot be made exact: the runtime's operators and its
 * other code reach one another by tail calls (new[] jumps to new,
 * std::string's _M_create jumps to new), which leave no frame to tell a
 * nested call from a first one.
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
#include <errno.h>
#include <stddef.h>
#include <stdint.h>

#include "dump.h"
#include "got.h"
#include "hooks.h"
#include "sampler.h"
#include "tables.h"
#include "unwind.h"
#include "wrap.h"

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

/* A one-size allocation, failure dumps armed. */
static void *
call_checked(alloc_fn fn, size_t n, uintptr_t caller)
{
	void *p = fn(n);

	if (out_of_memory(p, n != 0, caller))
		ht_dump_on_failure();
	return p;
}

/* A one-size allocation whose fast path did not apply: charged says whether
 * the countdown was already charged (and a sample found due). */
static __attribute__((noinline)) void *
alloc1_slow(enum ht_hook_index i, size_t n, int charged, uintptr_t caller)
{
	alloc_fn fn = (alloc_fn)orig(i, caller);
	struct ht_regs regs;
	void *p;

	if (!charged && !ht_sample_due(n))
		return slow(i) ? call_checked(fn, n, caller) : fn(n);
	/* The hook reached here by a tail jump: this frame's caller is the
	 * program, so the walk starts one step from it. */
	HT_REGS_CAPTURE(&regs);
	p = slow(i) ? call_checked(fn, n, caller) : fn(n);
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
	    out_of_memory(p_, n != 0 && m != 0, CALLER));
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
		if (slow(HT_H_REALLOC) && out_of_memory(p, 1, caller))
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
	if (rc == ENOMEM && n != 0 && slow(HT_H_POSIX_MEMALIGN) &&
	    !ht_wrap_may_retry(CALLER - 1))
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
	    n, out_of_memory(p_, n != 0, CALLER));
}

static void *
hook_memalign(size_t a, size_t n)
{
	ALLOC_HOOK(HT_H_MEMALIGN,
	    ((void *(*)(size_t, size_t))orig(HT_H_MEMALIGN, CALLER))(a, n), n,
	    out_of_memory(p_, n != 0, CALLER));
}

static void *
hook_valloc(size_t n)
{
	ALLOC_HOOK(HT_H_VALLOC, ((alloc_fn)orig(HT_H_VALLOC, CALLER))(n), n,
	    out_of_memory(p_, n != 0, CALLER));
}

static void *
hook_pvalloc(size_t n)
{
	ALLOC_HOOK(HT_H_PVALLOC, ((alloc_fn)orig(HT_H_PVALLOC, CALLER))(n), n,
	    out_of_memory(p_, n != 0, CALLER));
}

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
	/* Their hooks are agent.c's: see ht_hooks_set_loader(). */
	[HT_H_DLOPEN] = { .name = "dlopen" },
	[HT_H_DLCLOSE] = { .name = "dlclose" },
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
	ht_got_set_wrappers(wrapper_names,
	    sizeof(wrapper_names) / sizeof(wrapper_names[0]),
	    "_ZSt15get_new_handlerv");
}

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
