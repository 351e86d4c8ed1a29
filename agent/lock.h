/*
 * The agent's one lock, ht_lock_global, and the spinlock type it is made of
 * (got.c has one more of its own).  ht_lock_global guards the session, the
 * tables, the module set and the unwind cache; the sample path, the free of
 * a sampled pointer, module rescans, session changes and snapshots take it.
 * It is a spinlock that yields: holders never block and never call into the
 * allocator or the loader, so waiters are short.
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

struct ht_lock {
	int v;
};

static inline void
ht_lock_acquire(struct ht_lock *l)
{
	unsigned spins = 0;

	while (__atomic_exchange_n(&l->v, 1, __ATOMIC_ACQUIRE) != 0) {
		while (__atomic_load_n(&l->v, __ATOMIC_RELAXED) != 0) {
			if (++spins < 128)
				__builtin_ia32_pause();
			else
				sched_yield();
		}
	}
}

static inline void
ht_lock_release(struct ht_lock *l)
{
	__atomic_store_n(&l->v, 0, __ATOMIC_RELEASE);
}

extern struct ht_lock ht_lock_global;

#endif
