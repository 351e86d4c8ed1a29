/*
 * Byte sampling inside the allocation hooks (DESIGN.md §3).
 *
 * The fast path, ht_sample_due(), is inlined into every hook: a thread-local
 * subtract, a load of the session generation, one branch.  No lock, no atomic
 * read-modify-write, no system call, no call.  Everything else (starting
 * over after a start/stop, drawing countdowns, capturing the stack, updating
 * the tables) is the slow path, behind the branch.
 *
 * The thread state uses initial-exec TLS: no __tls_get_addr (which may
 * allocate) on any path, including in an agent loaded by dlopen, where it
 * fits glibc's static TLS surplus because it is small.  The slow paths run
 * with the thread's guard set (guard.h) and pass through when it already
 * is.
 */
#ifndef HT_SAMPLER_H
#define HT_SAMPLER_H

#include <stddef.h>
#include <stdint.h>

#include "sampling.h"
#include "session.h"
#include "tables.h"
#include "unwind.h"

#define HT_PENDING_FREES 8

struct ht_tls {
	int64_t countdown; /* bytes until the next sample */
	unsigned gen;	   /* ht_session_gen this thread set up under */
	uint64_t rate;	   /* the rate of the countdown */
	struct ht_rng rng;
	uint64_t thread_epoch; /* epoch in which thread_idx is valid */
	uint32_t thread_idx;
	uint32_t npending;
	uintptr_t pending[HT_PENDING_FREES]; /* frees seen under guard */
	unsigned native_gen; /* ht_session_gen of ht_sampler_native's draw */
	/* The thread's current tag (tags.h): read only when a sample is
	 * taken, so the fast path never touches it. */
	uint32_t tag;
	/* Countdowns drawn: with the countdown, what tells a free whether
	 * its thread allocated since the sample (sampler.c). */
	uint32_t draws;
	/* ht_sampler_take counted the block short-lived (its restore takes
	 * that back). */
	int took_temporary;
};

extern __thread struct ht_tls ht_tls __attribute__((tls_model("initial-exec")));

/* Fast path: charge an allocation of size bytes; nonzero when the slow path
 * must run (a sample is due, or the session changed since this thread last
 * looked). */
static inline int
ht_sample_due(size_t size)
{
	struct ht_tls *t = &ht_tls;

	t->countdown -= (int64_t)size + 1;
	return __builtin_expect(t->countdown < 0, 0) |
	    __builtin_expect(t->gen !=
		    __atomic_load_n(&ht_session_gen, __ATOMIC_RELAXED),
		0);
}

/* Slow path after ht_sample_due() said so: p is what the allocator returned
 * for size bytes (NULL: failed, never sampled), caller the hook's return
 * address (a fallback stack when unwinding is impossible), from the
 * registers captured in the agent frame nearest the caller (NULL: captured
 * here; the agent's frames are stripped either way, this only saves
 * unwinding through them). */
void ht_sampler_alloc(void *p, size_t size, uintptr_t caller,
    const struct ht_regs *from);

/* As ht_sampler_alloc, from the registers of the hook's caller as they
 * are once the hook returns (from->pc its return address, caller):
 * ht_unwind_return, which saves the walk through the agent's frames. */
void ht_sampler_alloc_return(void *p, size_t size, uintptr_t caller,
    const struct ht_regs *from);

/* A free (or the old block of a realloc) of p, which ht_live_maybe() could
 * not rule out: subtract its sample if it has one.  Call before the block is
 * given back to the allocator, so another thread cannot receive the address
 * and sample it first. */
void ht_sampler_free(void *p);

/* For realloc: remove p's sample into *e and its session's epoch into
 * *epoch (returns 1), or return 0.  If the reallocation then fails and p
 * stays valid, ht_sampler_restore(e, epoch) puts the sample back as it was,
 * unless another session started meanwhile (its tables owe nothing to an
 * older epoch's sample). */
int ht_sampler_take(void *p, struct ht_live *e, uint64_t *epoch);
void ht_sampler_restore(const struct ht_live *e, uint64_t epoch);

/*
 * heaptool_assign (tags.h): if p is a live sample of the running session,
 * its record (what it counts in use and what it counted allocated) moves
 * from its site to the site of the same stack under tag and kind, and
 * between their tags' lines, at once.  Returns 0 (also when p is no
 * sample), or HT_TABLES_FULL or HT_TABLES_NOMEM when the new site cannot
 * be made (p stays where it was).
 */
int ht_sampler_assign(const void *p, uint32_t tag, uint32_t kind);

/*
 * For the recorder: the return address in the program that the allocation
 * being made was asked at, past the agent's frames and the wrappers' (a
 * malloc called by operator new: the operator's caller), as a sample's
 * site would be; 0 when the stack cannot be walked.  Walks without
 * ht_lock_global where it can (ht_unwind_fast), else takes it: call with
 * no lock of the agent held.
 */
uintptr_t ht_sampler_site_pc(void);

/*
 * For the allocators that sample by themselves.  With ht_lock_global held:
 * the stack from the registers from (a frame of the agent's), with the
 * agent's frames and then, at the top, those of [lo, hi) (the allocator's
 * text) stripped, so that pcs[0] is the return address into the caller of
 * the allocation function.  Returns the number stored, at most max (0 if
 * nothing is left).
 */
int ht_sampler_stack(const struct ht_regs *from, uintptr_t lo, uintptr_t hi,
    uintptr_t *pcs, int max);

/*
 * For mimalloc's profiler API (miprof.h), from its on_alloc callback: the
 * allocation p of size bytes crossed the distance this thread's previous
 * call returned.  It is recorded as a sample of the session (backend
 * HT_BACKEND_MIMALLOC) if that distance was drawn in this session, its
 * stack taken from the registers from with the frames of [lo, hi)
 * stripped; a thread's first crossing in a session was drawn before it
 * and only starts the thread over.  Returns the next distance in bytes:
 * drawn from Exp(mean rate) (0 at rate 1: every allocation), or a long
 * one while no such session runs.
 */
uint64_t ht_sampler_native(void *p, size_t size, const struct ht_regs *from,
    uintptr_t lo, uintptr_t hi);

/* Seed for the per-thread generators (0: from the clock and the thread). */
extern uint64_t ht_sampler_seed;
/* Nonzero while a dlclose is running: stacks are cut to the caller, since the
 * unwinder must not read the CFI of a module that may be going away. */
extern int ht_sampler_dlclose_busy;

#endif
