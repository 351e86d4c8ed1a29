/*
 * The hook of every function of src/allocnames.h's list, stamped out by its
 * signature class (allocnames.h says what each class means).  A hook passes
 * every argument it was given on to the original, which has the same
 * prototype: the x86-64 calling convention puts the first six in registers,
 * so a class that takes more arguments than a function has passes what
 * the unused registers held, which the function never reads.
 *
 * The fast paths are those of hooks.c: a countdown charge, one flag word,
 * and a tail jump to the original when no sample is due; a sample, a
 * module bound to another original, or failure dumps go out of line.
 *
 * Sizes: a class with a count and a size charges their product (saturated:
 * the allocator fails an overflowing one, and a NULL is never sampled);
 * the string classes (mi_strdup, mi_realpath) know the copy's size only
 * afterwards, and charge strlen + 1 then.  Reallocations are a free of the
 * old block's sample and a new allocation (DESIGN.md §3), also when the
 * block stays where it was (mi_expand, rallocx, xallocx); a failure leaves
 * the old sample as it was, but for reallocf, whose failure frees the old
 * block.  jemalloc's xallocx resizes in place only: it succeeded when it
 * returns at least the size asked for, and the block is then counted at
 * that size, at the same address; else nothing changed.
 */
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "allocnames.h"
#include "dump.h"
#include "hooks-int.h"
#include "hooks.h"
#include "record.h"
#include "sampler.h"
#include "session.h"
#include "tables.h"
#include "unwind.h"

typedef void *(*alloc5_fn)(ht_arg, ht_arg, ht_arg, ht_arg, ht_arg);
typedef void *(*alloc6_fn)(ht_arg, ht_arg, ht_arg, ht_arg, ht_arg, ht_arg);
typedef void (*free3_fn)(ht_arg, ht_arg, ht_arg);

static inline size_t
product(ht_arg n, ht_arg m)
{
	size_t r;

	return __builtin_mul_overflow((size_t)n, (size_t)m, &r) ? SIZE_MAX : r;
}

/* A recording runs (record.h): every call is recorded, out of line. */
static inline int
recording(enum ht_hook_index i)
{
	return (hook_flags(i) & HT_HOOK_RECORD) != 0;
}

/*
 * The common path's test of an allocating hook (gate.h): its word equals
 * the thread's generation when no HT_HOOK_* bit is set and the thread's
 * countdown is the running session's.  Then charge_due() charges the
 * countdown; nonzero when a sample is due.  Otherwise the call goes out of
 * line uncharged, where ht_sample_due() charges it and, for a new session,
 * starts the thread over.
 */
static inline int
hook_open(enum ht_hook_index i)
{
	return __atomic_load_n(&ht_hooks[i].flags, __ATOMIC_RELAXED) ==
	    ht_tls.gen;
}

static inline int
charge_due(size_t size)
{
	ht_tls.countdown -= (int64_t)size + 1;
	return ht_tls.countdown < 0;
}

/* The same, where it saves an instruction: left alone, the compiler
 * charges ~size with an add, one more than a lea and a subtract, which the
 * empty asm has it make by taking the charge as it is, in a register.  Not
 * in the hooks that pass five arguments on (calloc, memalign): there the
 * registers' shuffling costs more than it saves (objdump; realloc, which
 * passes six, gains one). */
static inline int
charge_due_lea(size_t size)
{
	int64_t charge = (int64_t)size + 1;

	__asm__("" : "+r"(charge));
	ht_tls.countdown -= charge;
	return ht_tls.countdown < 0;
}

/* A free's test (gate.h): p may be a live sample, or a bit is set.  The
 * pointer is loaded relaxed: x86-64 keeps loads in order, and the filter it
 * points at is static, filled before the pointer was stored.  The byte is
 * compared in place, one instruction where an atomic load and a test are
 * two (a byte's load is atomic on x86-64 all the same). */
static inline int
free_gate(enum ht_hook_index i, const void *p)
{
	const uint8_t *f =
	    __atomic_load_n(&ht_hooks[i].filter, __ATOMIC_RELAXED);
	int maybe;

	__asm__("cmpb $0, %1"
		: "=@ccnz"(maybe)
		: "m"(f[ht_live_filter_index((uintptr_t)p)]));
	return maybe;
}

static inline void
unsample(void *p)
{
	if (__builtin_expect(ht_live_maybe((uintptr_t)p), 0))
		ht_sampler_free(p);
}

/* A sample, or failure dumps: charged says whether the countdown was
 * charged already (and found due). */
static __attribute__((noinline)) void *
alloc_slow(enum ht_hook_index i, size_t n, int charged, uintptr_t caller,
    const ht_arg *a)
{
	alloc5_fn fn = (alloc5_fn)orig(i, caller);
	struct ht_regs regs;
	void *p;

	if (!charged && !ht_sample_due(n)) {
		p = fn(a[0], a[1], a[2], a[3], a[4]);
		if (slow(i) && out_of_memory(p, n != 0, caller))
			ht_dump_on_failure();
		if (recording(i))
			ht_rec_alloc(i, p, n, a, caller);
		return p;
	}
	HT_REGS_CAPTURE(&regs);
	p = fn(a[0], a[1], a[2], a[3], a[4]);
	if (slow(i) && out_of_memory(p, n != 0, caller))
		ht_dump_on_failure();
	if (recording(i))
		ht_rec_alloc(i, p, n, a, caller);
	ht_sampler_alloc(p, n, caller, &regs);
	return p;
}

/*
 * fast: the size when wide is false (for a count and a size below 2^32
 * each, their product, which cannot overflow: an imul that leaves the
 * argument registers alone, where the overflow check's mul takes rdx and
 * costs the common path a frame); size: the size in every case.
 */
#define GEN_ALLOC(f, idx, size, fast, wide)                                    \
	void *f(ht_arg a0, ht_arg a1, ht_arg a2, ht_arg a3, ht_arg a4)         \
	{                                                                      \
		ht_arg a_[5];                                                  \
		int charged_ = 0;                                              \
                                                                               \
		if (__builtin_expect(hook_open(idx) && !(wide), 1)) {          \
			if (__builtin_expect(!charge_due(fast), 1))            \
				return ((alloc5_fn)orig_fast(idx))(a0, a1, a2, \
				    a3, a4);                                   \
			charged_ = 1;                                          \
		}                                                              \
		a_[0] = a0, a_[1] = a1, a_[2] = a2, a_[3] = a3, a_[4] = a4;    \
		return alloc_slow(idx, (size), charged_, CALLER, a_);          \
	}

/* One argument, the size (malloc): no frame on the common path. */
static __attribute__((noinline)) void *
alloc1_slow(enum ht_hook_index i, size_t n, int charged, uintptr_t caller)
{
	void *(*fn)(size_t) = (void *(*)(size_t))orig(i, caller);
	struct ht_regs regs;
	uintptr_t *fa;
	void *p;

	if (!charged && !ht_sample_due(n)) {
		p = fn(n);
		if (slow(i) && out_of_memory(p, n != 0, caller))
			ht_dump_on_failure();
		if (recording(i))
			ht_rec_alloc(i, p, n, NULL, caller);
		return p;
	}
	p = fn(n);
	if (slow(i) && out_of_memory(p, n != 0, caller))
		ht_dump_on_failure();
	if (recording(i))
		ht_rec_alloc(i, p, n, NULL, caller);
	/* The hook reached here by a tail jump: this frame's caller is the
	 * program (caller), so the walk starts in the program's frame, as
	 * it is once this returns: its sp above the return address, its
	 * rbp saved by this frame's prologue, which the frame address
	 * forces (and which holds wherever the jump came from: the walk
	 * from any return address is a walk of the stack). */
	fa = (uintptr_t *)__builtin_frame_address(0);
	regs.pc = fa[1];
	regs.sp = (uintptr_t)(fa + 2);
	regs.bp = fa[0];
	ht_sampler_alloc_return(p, n, caller, &regs);
	return p;
}

#define GEN_S1(f, idx)                                                         \
	void *f(size_t n)                                                      \
	{                                                                      \
		if (__builtin_expect(!hook_open(idx), 0))                      \
			return alloc1_slow(idx, n, 0, CALLER);                 \
		if (__builtin_expect(charge_due_lea(n), 0))                    \
			return alloc1_slow(idx, n, 1, CALLER);                 \
		return ((void *(*)(size_t))orig_fast(idx))(n);                 \
	}

static __attribute__((noinline)) void
free_slow(enum ht_hook_index i, ht_arg a0, ht_arg a1, ht_arg a2,
    uintptr_t caller)
{
	if (recording(i)) {
		ht_arg a_[3] = { a0, a1, a2 };

		ht_rec_free(i, (void *)a0, a_, caller);
	}
	unsample((void *)a0);
	((free3_fn)orig(i, caller))(a0, a1, a2);
}

#define GEN_P(f, idx)                                                          \
	void f(void *p, ht_arg a1, ht_arg a2)                                  \
	{                                                                      \
		if (__builtin_expect(free_gate(idx, p), 0)) {                  \
			free_slow(idx, (ht_arg)p, a1, a2, CALLER);             \
			return;                                                \
		}                                                              \
		((free3_fn)orig_fast(idx))((ht_arg)p, a1, a2);                 \
	}

/* a1: what the second argument's register held, for the recorder: a
 * sized operator delete that reached free by a tail call left its size
 * there. */
static __attribute__((noinline)) void
free1_slow(enum ht_hook_index i, void *p, ht_arg a1, uintptr_t caller)
{
	if (recording(i)) {
		ht_arg a_[2] = { (ht_arg)p, a1 };

		ht_rec_free(i, p, a_, caller);
	}
	unsample(p);
	((void (*)(void *))orig(i, caller))(p);
}

#define GEN_P1(f, idx)                                                         \
	void f(void *p, ht_arg a1)                                             \
	{                                                                      \
		if (__builtin_expect(free_gate(idx, p), 0)) {                  \
			free1_slow(idx, p, a1, CALLER);                        \
			return;                                                \
		}                                                              \
		((void (*)(void *))orig_fast(idx))(p);                         \
	}

/*
 * A reallocation: the old block's sample goes first (another thread may
 * be handed its address once the allocator has it back), and comes back
 * if the call failed and the block is still the caller's.  oldp: the old
 * block; how: RE_FREED_ON_FAIL (reallocf) and RE_CHARGED (the hook charged
 * the countdown already, and found it due).
 */
#define RE_FREED_ON_FAIL 1
#define RE_CHARGED	 2

static __attribute__((noinline)) void *
realloc_call(enum ht_hook_index i, void *old, size_t n, int how,
    uintptr_t caller, const ht_arg *a)
{
	alloc6_fn fn = (alloc6_fn)orig(i, caller);
	struct ht_live e;
	uint64_t epoch, rid = 0;
	int had = 0, due, rec = recording(i);
	void *p;

	if (rec)
		rid = ht_rec_take(old);
	if (old != NULL && __builtin_expect(ht_live_maybe((uintptr_t)old), 0))
		had = ht_sampler_take(old, &e, &epoch);
	due = (how & RE_CHARGED) || ht_sample_due(n);
	p = fn(a[0], a[1], a[2], a[3], a[4], a[5]);
	if (rec)
		ht_rec_realloc(i, old, rid, p, n, (how & RE_FREED_ON_FAIL) != 0,
		    caller);
	if (p == NULL && n != 0) {
		if (had && !(how & RE_FREED_ON_FAIL))
			ht_sampler_restore(&e, epoch);
		if (slow(i) && out_of_memory(p, 1, caller))
			ht_dump_on_failure();
	}
	if (__builtin_expect(due, 0))
		ht_sampler_alloc(p, n, caller, NULL);
	return p;
}

/*
 * The common path, as malloc's and free's: the flag word, the old block's
 * filter, a countdown charge, a tail jump.  fast: the size when wide is
 * false, as GEN_ALLOC's.
 */
#define GEN_REALLOC(f, idx, oldp, size, fast, wide, freed)                     \
	void *f(ht_arg a0, ht_arg a1, ht_arg a2, ht_arg a3, ht_arg a4,         \
	    ht_arg a5)                                                         \
	{                                                                      \
		ht_arg a_[6];                                                  \
		int how_ = (freed);                                            \
                                                                               \
		if (__builtin_expect(hook_open(idx) && !(wide) &&              \
			    !ht_live_maybe((uintptr_t)(oldp)),                 \
			1)) {                                                  \
			if (__builtin_expect(!charge_due_lea(fast), 1))        \
				return ((alloc6_fn)orig_fast(idx))(a0, a1, a2, \
				    a3, a4, a5);                               \
			how_ |= RE_CHARGED;                                    \
		}                                                              \
		a_[0] = a0, a_[1] = a1, a_[2] = a2, a_[3] = a3, a_[4] = a4;    \
		a_[5] = a5;                                                    \
		return realloc_call(idx, (void *)(oldp), (size), how_, CALLER, \
		    a_);                                                       \
	}

/* glibc's reallocarray calls realloc through its own PLT: forwarding to it
 * would count every block twice.  So the hook does what reallocarray is
 * defined to do, with the caller's realloc. */
void *
HT_HOOK_FN(REALLOCARRAY)(void *old, size_t n, size_t m)
{
	ht_arg a[6] = { (ht_arg)old, 0, 0, 0, 0, 0 };
	size_t total;

	if (__builtin_mul_overflow(n, m, &total)) {
		errno = ENOMEM;
		if (slow(HT_H_REALLOC))
			ht_dump_on_failure();
		return NULL;
	}
	a[1] = total;
	return realloc_call(HT_H_REALLOC, old, total, 0, CALLER, a);
}

/* posix_memalign(pp, alignment, size) and its kin: an int back, the block
 * in *pp; they leave errno alone.  due: 1 when the hook charged the
 * countdown and found a sample due, -1 when it did not charge it. */
static __attribute__((noinline)) int
memalign_slow(enum ht_hook_index i, void **pp, size_t a, size_t n, int due,
    uintptr_t caller)
{
	int rc;

	if (due < 0) /* the hook did not charge it */
		due = ht_sample_due(n);
	rc = ((int (*)(void **, size_t, size_t))orig(i, caller))(pp, a, n);

	if (rc == ENOMEM && n != 0 && slow(i) && !ht_wrap_may_retry(caller - 1))
		ht_dump_on_failure();
	if (recording(i)) {
		ht_arg al_[1] = { a };

		ht_rec_alloc(i, rc == 0 ? *pp : NULL, n, al_, caller);
	}
	if (due)
		ht_sampler_alloc(rc == 0 ? *pp : NULL, n, caller, NULL);
	return rc;
}

#define GEN_PM(f, idx)                                                         \
	int f(void **pp, size_t a, size_t n)                                   \
	{                                                                      \
		int due_;                                                      \
                                                                               \
		if (__builtin_expect(hook_open(idx), 1)) {                     \
			if (__builtin_expect(!charge_due_lea(n), 1))           \
				return ((int (*)(void **, size_t,              \
				    size_t))orig_fast(idx))(pp, a, n);         \
			due_ = 1;                                              \
		} else                                                         \
			due_ = -1;                                             \
		return memalign_slow(idx, pp, a, n, due_, CALLER);             \
	}

/* A copy of a string: its size is known once it is made.  given: the
 * caller's own buffer (realpath's second argument), which allocates
 * nothing. */
static __attribute__((noinline)) void *
str_call(enum ht_hook_index i, int given, uintptr_t caller, const ht_arg *a)
{
	void *p = ((alloc5_fn)orig(i, caller))(a[0], a[1], a[2], a[3], a[4]);
	size_t n;

	if (p == NULL) {
		if (!given && slow(i) && out_of_memory(p, 1, caller))
			ht_dump_on_failure();
		if (!given && recording(i))
			ht_rec_alloc(i, p, 0, NULL, caller);
		return p;
	}
	if (given)
		return p;
	n = strlen(p) + 1;
	if (recording(i))
		ht_rec_alloc(i, p, n, NULL, caller);
	if (__builtin_expect(ht_sample_due(n), 0))
		ht_sampler_alloc(p, n, caller, NULL);
	return p;
}

#define GEN_STRING(f, idx, given)                                              \
	void *f(ht_arg a0, ht_arg a1, ht_arg a2, ht_arg a3, ht_arg a4)         \
	{                                                                      \
		ht_arg a_[5] = { a0, a1, a2, a3, a4 };                         \
                                                                               \
		return str_call(idx, (given) != 0, CALLER, a_);                \
	}

/* mimalloc's reallocarr(pp, count, size): BSD's, the block in *pp, 0 or
 * an errno back. */
static __attribute__((noinline)) int
reallocarr_call(enum ht_hook_index i, void **pp, size_t c, size_t s,
    uintptr_t caller)
{
	int (*fn)(void *, size_t, size_t) =
	    (int (*)(void *, size_t, size_t))orig(i, caller);
	void *old = pp != NULL ? *pp : NULL;
	size_t n = product(c, s);
	struct ht_live e;
	uint64_t epoch, rid = 0;
	int had = 0, due, rc, rec = recording(i);

	if (rec)
		rid = ht_rec_take(old);
	if (old != NULL && ht_live_maybe((uintptr_t)old))
		had = ht_sampler_take(old, &e, &epoch);
	due = ht_sample_due(n);
	rc = fn(pp, c, s);
	if (rec)
		ht_rec_realloc(i, old, rid, rc == 0 ? *pp : NULL,
		    rc == 0 ? n : (n != 0 ? n : 1), 0, caller);
	if (rc != 0 && had)
		ht_sampler_restore(&e, epoch);
	if (due)
		ht_sampler_alloc(rc == 0 ? *pp : NULL, n, caller, NULL);
	return rc;
}

#define GEN_RARR(f, idx)                                                       \
	int f(void *pp, size_t c, size_t s)                                    \
	{                                                                      \
		return reallocarr_call(idx, pp, c, s, CALLER);                 \
	}

/* jemalloc's xallocx(p, size, extra, flags): in place only. */
static __attribute__((noinline)) size_t
xallocx_call(enum ht_hook_index i, void *p, size_t size, size_t extra,
    int flags, uintptr_t caller)
{
	size_t (*fn)(void *, size_t, size_t, int) =
	    (size_t(*)(void *, size_t, size_t, int))orig(i, caller);
	struct ht_live e;
	uint64_t epoch, rid = 0;
	int had = 0, due, rec = recording(i);
	size_t r;

	if (rec)
		rid = ht_rec_take(p);
	if (p != NULL && ht_live_maybe((uintptr_t)p))
		had = ht_sampler_take(p, &e, &epoch);
	due = ht_sample_due(size);
	r = fn(p, size, extra, flags);
	if (rec)
		ht_rec_realloc(i, p, rid, r >= size ? p : NULL,
		    size != 0 ? size : 1, 0, caller);
	if (r < size) {
		/* Not resized: the block is as it was. */
		if (had)
			ht_sampler_restore(&e, epoch);
		if (due)
			ht_sampler_alloc(NULL, size, caller, NULL);
		return r;
	}
	if (due)
		ht_sampler_alloc(p, size, caller, NULL);
	return r;
}

#define GEN_XA(f, idx)                                                         \
	size_t f(void *p, size_t size, size_t extra, int flags)                \
	{                                                                      \
		return xallocx_call(idx, p, size, extra, flags, CALLER);       \
	}

/*
 * mimalloc's mi_heap_destroy(heap) frees every block of the heap without
 * mi_free: their samples go first, found by visiting the heap's blocks
 * (mi_heap_visit_blocks).  A heap that may hold reclaimed pages, and the
 * thread's backing heap, are deleted instead (their blocks move to the
 * backing heap and stay in use): nothing goes for those.  A block handed
 * out at an alignment inside a larger one (mi_malloc_aligned beyond the
 * natural alignment) is visited at its start, not at the address its
 * sample has: such a sample stays until its address is allocated again.
 */
typedef bool (*visit_fn)(const void *heap, const void *area, void *block,
    size_t size, void *arg);
typedef bool (
    *heap_visit_fn)(const void *heap, bool all, visit_fn fn, void *arg);

static bool
drop_block(const void *heap, const void *area, void *block, size_t size,
    void *arg)
{
	(void)heap;
	(void)area;
	(void)size;
	(void)arg;
	if (block != NULL)
		unsample(block);
	return true;
}

#define GEN_HEAP(f, idx)                                                       \
	void f(void *heap)                                                     \
	{                                                                      \
		heap_visit_fn v_ = (heap_visit_fn)__atomic_load_n(             \
		    &ht_hooks_heap_visit, __ATOMIC_ACQUIRE);                   \
		void *(*b_)(void) = (void *(*)(void))__atomic_load_n(          \
		    &ht_hooks_heap_backing, __ATOMIC_ACQUIRE);                 \
                                                                               \
		if (heap != NULL && v_ != NULL && b_ != NULL &&                \
		    __atomic_load_n(&ht_session.state, __ATOMIC_RELAXED) ==    \
			HT_STATE_RUNNING &&                                    \
		    heap != b_())                                              \
			(void)v_(heap, true, drop_block, NULL);                \
		((void (*)(void *))orig(idx, CALLER))(heap);                   \
	}

/* A count and a size, either at or above 2^32 (the product may overflow),
 * and their product when neither is. */
#define WIDE(n, m)    (((n) | (m)) >> 32 != 0)
#define NARROW(n, m)  ((n) * (m))
#define GEN_S(f, idx) GEN_ALLOC(f, idx, a0, a0, 0)
#define GEN_NS(f, idx)                                                         \
	GEN_ALLOC(f, idx, product(a0, a1), NARROW(a0, a1), WIDE(a0, a1))
#define GEN_AS(f, idx) GEN_ALLOC(f, idx, a1, a1, 0)
#define GEN_HS(f, idx) GEN_ALLOC(f, idx, a1, a1, 0)
#define GEN_HNS(f, idx)                                                        \
	GEN_ALLOC(f, idx, product(a1, a2), NARROW(a1, a2), WIDE(a1, a2))
#define GEN_STR(f, idx)	  GEN_STRING(f, idx, 0)
#define GEN_STRN(f, idx)  GEN_STRING(f, idx, 0)
#define GEN_RP(f, idx)	  GEN_STRING(f, idx, a1)
#define GEN_HSTR(f, idx)  GEN_STRING(f, idx, 0)
#define GEN_HSTRN(f, idx) GEN_STRING(f, idx, 0)
#define GEN_HRP(f, idx)	  GEN_STRING(f, idx, a2)
#define GEN_PS(f, idx)	  GEN_REALLOC(f, idx, a0, a1, a1, 0, 0)
#define GEN_PNS(f, idx)                                                        \
	GEN_REALLOC(f, idx, a0, product(a1, a2), NARROW(a1, a2), WIDE(a1, a2), \
	    0)
#define GEN_PSF(f, idx) GEN_REALLOC(f, idx, a0, a1, a1, 0, RE_FREED_ON_FAIL)
#define GEN_HPS(f, idx) GEN_REALLOC(f, idx, a1, a2, a2, 0, 0)
#define GEN_HPNS(f, idx)                                                       \
	GEN_REALLOC(f, idx, a1, product(a2, a3), NARROW(a2, a3), WIDE(a2, a3), \
	    0)
#define GEN_HPSF(f, idx) GEN_REALLOC(f, idx, a1, a2, a2, 0, RE_FREED_ON_FAIL)
#define GEN_RAY(f, idx)	 /* hand-written above */
#define GEN_NONE(f, idx)
#define GEN_UNSUP(f, idx)

#define GEN_ONE(id, nm, fam, k, sig, fl) GEN_##sig(HT_HOOK_FN(id), HT_H_##id)
HT_ALLOCFN_LIST(GEN_ONE)
