/*
 * The agent's thread (ctlthread.h): its start, in attach mode (set up and
 * hook, then serve) or launch mode (serve), its revival by heaptool attach
 * in a process where the agent is loaded and does not answer, and its
 * start in a fork's child whose session follows its parent.  What the
 * thread serves is the control channel (control.h).
 */
#include <sys/mman.h>
#include <sys/prctl.h>

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>
#include <unistd.h>

#include "agent.h"
#include "config.h"
#include "control.h"
#include "ctlthread.h"
#include "guard.h"
#include "lock.h"
#include "mem.h"
#include "prim.h"
#include "proto.h"

#define STACK_SIZE (256 * 1024)
#define REVIVE_MS  2000 /* a revival waits this long for the thread */

static int attach_mode;

/*
 * The thread's life, for ht_ctlthread_start and ht_ctlthread_revive, in the
 * process where it was started (th_pid: a fork's child has another pid,
 * and no thread).  th_state is written by the starter and by the thread;
 * th_failure says why it is TH_FAILED (HT_REVIVE(what, errno)).  start_lock
 * serializes the starters (the constructor, the API, a revival, a fork's
 * child), revive_lock the revivals; a fork's child takes either over from
 * a thread of its parent that held it (lock.h).
 */
enum { TH_NONE, TH_STARTING, TH_SERVING, TH_FAILED };
static int th_state;
static pid_t th_pid;
static long th_failure;
static uint8_t *th_stack; /* from ht_mem_map, or NULL: glibc's */
static struct ht_plock start_lock, revive_lock;
/* Set by the constructor (ht_ctlthread_init): the agent is relocated.  A
 * concurrent attach may see the agent in the maps while another attach's
 * dlopen has mapped it but not relocated it yet: a call through its GOT
 * would jump to nothing, so a revival first reads this (a PC-relative
 * load, as is its call from heaptool_agent_revive) and does nothing
 * until it is set. */
static int constructed;

/* The thread's new state, and why it failed (what, errno). */
static void
set_state(int state, unsigned what, int err)
{
	if (state == TH_FAILED)
		__atomic_store_n(&th_failure, HT_REVIVE(what, err),
		    __ATOMIC_RELAXED);
	__atomic_store_n(&th_state, state, __ATOMIC_RELEASE);
}

static void *
control_main(void *arg)
{
	int rc, err;

	(void)arg;
	/* Nothing this thread does is sampled, for its whole life. */
	ht_guard_enter();
	(void)prctl(PR_SET_NAME, "heaptool", 0, 0, 0);
	/*
	 * Attach mode binds before it patches: if the name is taken (another
	 * copy of the agent, a squatter), this copy must not hook the process
	 * behind a channel it cannot serve, with no way to remove its hooks.
	 */
	if ((err = ht_control_bind()) != 0 && attach_mode) {
		set_state(TH_FAILED, HT_REVIVE_ESOCKET, err);
		return NULL;
	}
	if (attach_mode && (rc = ht_agent_attach_init()) != 0) {
		ht_control_unbind();
		set_state(TH_FAILED,
		    rc == HT_AGENT_ENOMEM ? HT_REVIVE_EMEMORY : HT_REVIVE_EHOOK,
		    rc == HT_AGENT_ENOMEM ? ENOMEM : 0);
		return NULL;
	}
	set_state(TH_SERVING, 0, 0);
	ht_control_serve();
	return NULL;
}

/* Start the thread on stack (NULL: one of glibc's), every signal blocked:
 * the program's signals are for its own threads (glibc keeps the two it
 * needs for setxid and cancellation deliverable).  Returns 0 or an errno
 * value. */
static int
spawn(void *stack)
{
	pthread_attr_t a;
	pthread_t t;
	sigset_t all, old;
	int rc;

	if ((rc = pthread_attr_init(&a)) != 0)
		return rc;
	rc = pthread_attr_setdetachstate(&a, PTHREAD_CREATE_DETACHED);
	if (rc == 0 && stack != NULL)
		rc = pthread_attr_setstack(&a, stack, STACK_SIZE);
	if (rc == 0) {
		sigfillset(&all);
		pthread_sigmask(SIG_SETMASK, &all, &old);
		rc = pthread_create(&t, &a, control_main, NULL);
		pthread_sigmask(SIG_SETMASK, &old, NULL);
	}
	pthread_attr_destroy(&a);
	return rc;
}

/* With start_lock held: start the thread unless it runs in this process
 * (or is starting).  Returns 0, or -1 with th_state TH_FAILED. */
static int
start_locked(int attach)
{
	uint8_t *stack;
	int rc, map_err = 0;

	if (th_pid == getpid() &&
	    (__atomic_load_n(&th_state, __ATOMIC_ACQUIRE) == TH_STARTING ||
		th_state == TH_SERVING))
		return 0;
	attach_mode = attach;
	th_pid = getpid();
	set_state(TH_STARTING, 0, 0);
	/*
	 * The stack comes from ht_mem_map like all the agent's memory (it
	 * counts as overhead); its lowest page is the guard.  glibc puts the
	 * static TLS of every module at its top: in a program whose TLS
	 * does not fit, it refuses, and we take a stack of its own size.
	 * A thread that failed may still be on its stack, on its way out:
	 * that one is never reused nor given back.
	 */
	if ((stack = ht_mem_map(STACK_SIZE)) != NULL) {
		if (mprotect(stack, 4096, PROT_NONE) == 0 &&
		    (rc = spawn(stack)) == 0) {
			th_stack = stack;
			return 0;
		}
		ht_mem_unmap(stack, STACK_SIZE);
	} else
		map_err = errno;
	if ((rc = spawn(NULL)) == 0) {
		th_stack = NULL;
		return 0;
	}
	/* glibc says EAGAIN when it cannot map a stack either: when ours
	 * could not be mapped, the cause is memory. */
	if (rc == EAGAIN && map_err == ENOMEM)
		rc = ENOMEM;
	set_state(TH_FAILED, HT_REVIVE_ETHREAD, rc);
	return -1;
}

int
ht_ctlthread_start(int attach)
{
	int rc;

	ht_guard_enter();
	ht_plock_acquire(&start_lock);
	rc = start_locked(attach);
	ht_plock_release(&start_lock);
	ht_guard_leave();
	return rc;
}

static void
sleep_ms(unsigned ms)
{
	struct timespec ts = { 0, (long)ms * 1000000 };

	while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
		;
}

/* Wait (REVIVE_MS at most) while the thread is starting; its state. */
static int
wait_started(uint64_t deadline)
{
	int st;

	while ((st = __atomic_load_n(&th_state, __ATOMIC_ACQUIRE)) ==
		TH_STARTING &&
	    ht_prim_mono_ms() < deadline)
		sleep_ms(1);
	return st;
}

/*
 * heaptool attach found the agent loaded and not answering: the thread
 * could not start (a process short of memory), it gave up its socket, the
 * agent was put to sleep by HEAPTOOL_PID, or this is a fork's child of a
 * profiled process, which has no thread and its parent's session.  Bring
 * it up, as attach mode would have, and say how that went.
 *
 * The caller is a thread of the program borrowed by heaptool attach at a
 * safe point (no allocator, loader or agent lock held, no frame of the
 * agent on its stack: cli/inject-unwind.c), so it may wait for the thread
 * to set up: the thread needs only locks that the caller does not hold.
 * It waits REVIVE_MS at most.
 */
long
ht_ctlthread_revive(void)
{
	uint64_t deadline;
	long r;
	int st;

	/* Not relocated yet: the dlopen that maps it starts its thread. */
	if (!__atomic_load_n(&constructed, __ATOMIC_ACQUIRE))
		return HT_REVIVE(HT_REVIVE_PENDING, 0);
	deadline = ht_prim_mono_ms() + REVIVE_MS;
	ht_guard_enter();
	ht_plock_acquire(&revive_lock);
	(void)ht_agent_adopt();
	ht_plock_acquire(&start_lock);
	st = th_pid == getpid() ? __atomic_load_n(&th_state, __ATOMIC_ACQUIRE) :
				  TH_NONE;
	if (st == TH_SERVING) {
		/* It serves, but without a socket (it gave it up, or could
		 * not bind it in launch mode): bind it again. */
		ht_plock_release(&start_lock);
		r = ht_control_rebind(deadline);
		goto out;
	}
	if (st != TH_STARTING && start_locked(1) != 0) {
		r = __atomic_load_n(&th_failure, __ATOMIC_RELAXED);
		ht_plock_release(&start_lock);
		goto out;
	}
	ht_plock_release(&start_lock);
	switch (wait_started(deadline)) {
	case TH_SERVING:
		r = HT_REVIVE(HT_REVIVE_SERVING, 0);
		break;
	case TH_FAILED:
		r = __atomic_load_n(&th_failure, __ATOMIC_RELAXED);
		break;
	default:
		r = HT_REVIVE(HT_REVIVE_PENDING, 0);
		break;
	}
out:
	ht_plock_release(&revive_lock);
	ht_guard_leave();
	return r;
}

/*
 * The agent's hook in the child of every fork (ht_agent_on_fork).  The
 * child has no agent thread: the control channel forgets its descriptors
 * (ht_control_forget).  The threads that held our locks are gone with the
 * parent's other threads, and the state those locks guard is reset here:
 * so are the locks.
 *
 * A child whose session follows its parent's gets a thread of its own,
 * with its own socket, now.  That is safe here, in a fork handler: glibc
 * has made the child's allocator and loader usable before it runs the
 * child handlers (__malloc_fork_unlock_child, and dl_load_lock,
 * dl_load_tls_lock and the stack cache lock reinitialized), and the
 * agent's own locks are free (the agent's handler released them).  In a
 * multi-threaded parent glibc took the allocator's locks around the fork,
 * so none was held by a thread that does not exist in the child; a
 * session that follows forks runs the agent's thread, so its parent is
 * multi-threaded at every fork.  pthread_create allocates the new thread's
 * TLS vector with the program's allocator, under our guard: it is not
 * sampled.
 */
void
ht_ctlthread_fork_child(int follow)
{
	ht_control_forget();
	ht_plock_release(&start_lock);
	ht_plock_release(&revive_lock);
	/* No thread runs on the parent's stack here. */
	if (th_stack != NULL && th_pid != getpid()) {
		ht_mem_unmap(th_stack, STACK_SIZE);
		th_stack = NULL;
	}
	th_pid = 0;
	__atomic_store_n(&th_state, TH_NONE, __ATOMIC_RELAXED);
	if (follow)
		(void)ht_ctlthread_start(0);
}

void
ht_ctlthread_init(void)
{
	ht_agent_on_fork(ht_ctlthread_fork_child);
	__atomic_store_n(&constructed, 1, __ATOMIC_RELEASE);
}
