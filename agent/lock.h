/*
 * The agent's one lock, ht_lock_global, and the spinlock type it is made of
 * (got.c has one more of its own).  ht_lock_global guards the session, the
 * tables, the module set and the unwind cache (whose writes ht_unwind_fast
 * reads without it, under the cache's sequence count: a sample's stack is
 * walked before the lock is taken); the sample path, the free of
 * a sampled pointer, module rescans, session changes and snapshots take it.
 * Holders never block and never call into the allocator or the loader, so
 * waiters are short: a waiter spins a little, then sleeps in the kernel (a
 * futex) until the holder lets go, so that a waiter whose holder was
 * preempted (8 allocating threads on 2 cores) gives its CPU back to the
 * holder instead of spinning on it.  The word is 0 (free), 1 (held) or 2
 * (held, and a waiter may sleep: the release wakes one).  A release that
 * finds 1 stores 0 without a locked instruction (an atomic exchange costs
 * as much as a third of a sample's hold): should a waiter turn the word to
 * 2 and sleep in the instant between its load and its store (the releasing
 * thread preempted right there), that sleeper is not woken, and its sleep's
 * bound (a millisecond, ht_prim_futex_wait) ends it; it then takes the lock
 * as any waiter does.  Never a hang, and the common release is a load and
 * a store.
 *
 * Lock order: a thread may take this lock while holding a loader lock (a
 * malloc hook called inside dlopen), so never call into the loader
 * (dl_iterate_phdr, dlopen, dlsym) while holding it.  A hook re-entered on the
 * same thread (a signal handler that allocates) must not take it: callers
 * check the thread's guard (guard.h) first.  Fork handlers take it around
 * fork.
 */
#ifndef HT_LOCK_H
#define HT_LOCK_H

#include <sched.h>
#include <unistd.h>

#include "prim.h"

struct ht_lock {
	int v;
};

/* Take the lock if it is free.  Returns 1 if taken, 0 if held. */
static inline int
ht_lock_try(struct ht_lock *l)
{
	int v = 0;

	return __atomic_compare_exchange_n(&l->v, &v, 1, 0, __ATOMIC_ACQUIRE,
	    __ATOMIC_RELAXED);
}

/* The contended case, out of line: a sample holds the lock for well under
 * a microsecond, so a short spin finds it free when its holder runs. */
static __attribute__((noinline, unused)) void
ht_lock_wait(struct ht_lock *l)
{
	unsigned spins;

	for (spins = 0; spins < 100; spins++) {
		__builtin_ia32_pause();
		if (__atomic_load_n(&l->v, __ATOMIC_RELAXED) == 0 &&
		    ht_lock_try(l))
			return;
	}
	/* Taken at 2 from here on: whoever holds it then wakes a sleeper
	 * at its release, and a sleeper that wakes takes it at 2 again,
	 * since other sleepers may remain. */
	while (__atomic_exchange_n(&l->v, 2, __ATOMIC_ACQUIRE) != 0)
		ht_prim_futex_wait(&l->v, 2);
}

static inline void
ht_lock_acquire(struct ht_lock *l)
{
	if (__builtin_expect(!ht_lock_try(l), 0))
		ht_lock_wait(l);
}

static inline void
ht_lock_release(struct ht_lock *l)
{
	if (__builtin_expect(__atomic_load_n(&l->v, __ATOMIC_RELAXED) == 1, 1))
		__atomic_store_n(&l->v, 0, __ATOMIC_RELEASE);
	else if (__atomic_exchange_n(&l->v, 0, __ATOMIC_RELEASE) == 2)
		ht_prim_futex_wake(&l->v);
}

extern struct ht_lock ht_lock_global __attribute__((visibility("hidden")));

/*
 * A lock for the slow paths that set the agent up (its set-up, the start
 * of its thread), which may run in a fork's child whose parent forked
 * while one of its threads held it, without any fork handler of ours to
 * let it go (none is registered until the set-up succeeds).  The word
 * holds the pid of the process whose thread holds it: a pid other than
 * ours is a thread that does not exist here, and its hold is taken over.
 * Not for hot paths: each acquire asks getpid().
 */
struct ht_plock {
	pid_t pid;
};

static inline void
ht_plock_acquire(struct ht_plock *l)
{
	pid_t self = getpid(), v;
	unsigned spins = 0;

	for (;;) {
		v = __atomic_load_n(&l->pid, __ATOMIC_RELAXED);
		if (v != self &&
		    __atomic_compare_exchange_n(&l->pid, &v, self, 0,
			__ATOMIC_ACQUIRE, __ATOMIC_RELAXED))
			return;
		if (++spins < 128)
			__builtin_ia32_pause();
		else
			sched_yield();
	}
}

static inline void
ht_plock_release(struct ht_plock *l)
{
	__atomic_store_n(&l->pid, 0, __ATOMIC_RELEASE);
}

#endif
