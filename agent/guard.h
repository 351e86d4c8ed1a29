/*
 * The thread's guard: nonzero while the thread runs the agent's own code (a
 * sample, a dump, a rescan, the agent's thread for its whole life, a call of
 * the in-process API).  A hook that finds it set passes the call straight
 * through, so the agent's own allocations (and the loader's and libc's on
 * its behalf) are never sampled, and a hook re-entered on the same thread (a
 * signal handler that allocates) never takes ht_lock_global a second time:
 * set the guard first, then take the lock.  Enter and leave nest.
 *
 * Initial-exec TLS: no __tls_get_addr (which may allocate) on any path,
 * even in an agent loaded by dlopen, where it fits glibc's static TLS
 * surplus because it is small.
 */
#ifndef HT_GUARD_H
#define HT_GUARD_H

extern __thread unsigned ht_guard_depth
    __attribute__((tls_model("initial-exec")));

static inline void
ht_guard_enter(void)
{
	ht_guard_depth++;
}

static inline void
ht_guard_leave(void)
{
	ht_guard_depth--;
}

/* Is this thread inside the agent? */
static inline int
ht_guard_held(void)
{
	return ht_guard_depth != 0;
}

#endif
