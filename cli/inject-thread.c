/*
 * Which threads to try, in which order, until when (see inject-int.h).
 *
 * Each round lists the threads from /proc and tries them best first: those
 * blocked in a system call that restarts after an interrupt, then those
 * blocked in one that an interrupt would end with EINTR, then those running
 * user code, followed to their next system call.
 *
 * Limits: a thread blocked in a call that the kernel ends with EINTR when
 * interrupted (epoll_wait, semop, sigtimedwait, io_getevents...) sees that
 * EINTR, as under any debugger; such threads are tried only when no other
 * thread is there to try, or after a quarter of the timeout (at most
 * 250 ms: a server idle in epoll_wait everywhere must not wait seconds).
 */
#include "config.h"

#include <sys/syscall.h>

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "inject-int.h"
#include "proc.h"

#define SLICE_MS	   20	 /* following a running thread */
#define ROUND_PAUSE_US	   1000	 /* between rounds: let threads move, */
#define ROUND_PAUSE_MAX_US 16000 /* doubling up to this */
#define EINTR_DELAY_MS	   250	 /* before threads that get EINTR */
#define MAXTHREADS	   4096

/* Calls that the kernel ends with EINTR (not a restart) when the thread
 * is interrupted, even without a handler: tried last. */
static int
eintr_call(long nr)
{
	switch (nr) {
	case SYS_epoll_wait:
	case SYS_epoll_pwait:
#ifdef SYS_epoll_pwait2
	case SYS_epoll_pwait2:
#endif
	case SYS_rt_sigtimedwait:
	case SYS_semop:
	case SYS_semtimedop:
	case SYS_io_getevents:
#ifdef SYS_io_pgetevents
	case SYS_io_pgetevents:
#endif
#ifdef SYS_io_uring_enter
	case SYS_io_uring_enter:
#endif
		return 1;
	}
	return 0;
}

struct cand {
	pid_t tid;
	int tier; /* 1 blocked, 2 blocked in an EINTR call, 3 running */
};

struct listing {
	struct ht_inject *h;
	struct cand *c;
	int n, max;
	int live;
};

/* A thread worth trying goes on the list; the others say why not. */
static int
task_cb(void *arg, pid_t tid, char st)
{
	struct listing *l = arg;
	struct ht_inject *h = l->h;
	char buf[8192], v[256];
	long nr;

	if (l->n >= l->max)
		return 1;
	if (st == 'Z' || st == 'X')
		return 0;
	l->live++;
	if (st == 'T') {
		h->why.stopped++;
		return 0;
	}
	if (ht_proc_file(h->pid, tid, "status", buf, sizeof(buf)) <= 0)
		return 0;
	if (st == 't' ||
	    (ht_proc_field(buf, "TracerPid", v, sizeof(v)) == 0 &&
		strtol(v, NULL, 10) != 0)) {
		h->why.traced++;
		return 0;
	}
	/* With a shadow stack, rt_sigreturn looks for the restore token a
	 * signal delivery puts there, which our frame has not got: the
	 * thread would die of SIGSEGV in __restore_rt. */
	if (ht_proc_field(buf, "x86_Thread_features", v, sizeof(v)) == 0 &&
	    strstr(v, "shstk") != NULL) {
		h->why.shstk++;
		return 0;
	}
	if (st == 'D') {
		h->why.dstate++;
		return 0;
	}
	nr = ht_proc_task_syscall(h->pid, tid);
	l->c[l->n].tid = tid;
	if (st == 'S' && nr >= 0)
		l->c[l->n].tier = eintr_call(nr) ? 2 : 1;
	else
		l->c[l->n].tier = 3;
	l->n++;
	return 0;
}

/* List the threads worth trying into c (max), and count the live ones. */
static int
list_threads(struct ht_inject *h, struct cand *c, int max, int *live)
{
	struct listing l = { h, c, 0, max, 0 };

	(void)ht_proc_tasks(h->pid, task_cb, &l);
	*live = l.live;
	return l.n;
}

static void
timeout_message(struct ht_inject *h, int timeout_ms)
{
	const struct reasons *w = &h->why;
	char b[768];
	size_t n = 0;

#define WHY(cond, ...)                                                         \
	do {                                                                   \
		if ((cond) && n < sizeof(b))                                   \
			n += (size_t)snprintf(b + n, sizeof(b) - n, "%s",      \
			    n > 0 ? ", " : "");                                \
		if ((cond) && n < sizeof(b))                                   \
			n += (size_t)snprintf(b + n, sizeof(b) - n,            \
			    __VA_ARGS__);                                      \
	} while (0)
	b[0] = '\0';
	WHY(w->running, "%d running user code without system calls",
	    w->running);
	WHY(w->unsafe, "%d inside %s or the like", w->unsafe, w->fn);
	WHY(w->inlib, "%d inside %s, whose function is to be called", w->inlib,
	    w->lib);
	WHY(w->unwind, "%d whose stack could not be unwound (%s)", w->unwind,
	    w->unwind_msg);
	WHY(w->eintr,
	    "%d blocked in calls that an interrupt would end with "
	    "EINTR (left alone)",
	    w->eintr);
	WHY(w->dstate, "%d in uninterruptible sleep", w->dstate);
	WHY(w->maskswap,
	    "%d in calls that swap the signal mask (ppoll, "
	    "pselect, sigsuspend: Linux 5.1 or later needed)",
	    w->maskswap);
	WHY(w->stack, "%d with less than %d KiB of stack left", w->stack,
	    STACK_NEED / 1024);
	WHY(w->shstk, "%d with a shadow stack", w->shstk);
	WHY(w->traced, "%d traced by another tracer", w->traced);
	WHY(w->stopped, "%d stopped", w->stopped);
#undef WHY
	ht_inj_fail(h, HT_INJ_ETIMEDOUT, 0,
	    "no thread of process %d reached a "
	    "safe point in %d.%d s: %s",
	    (int)h->pid, timeout_ms / 1000, timeout_ms % 1000 / 100,
	    n > 0 ? b : "no thread to try");
}

/* A round that found n threads to try among live: does it show that no
 * round ever will?  -1 with the failure in h, else 0. */
static int
hopeless(struct ht_inject *h, int n, int live)
{
	if (live == 0) {
		if (kill(h->pid, 0) == -1 && errno == ESRCH)
			return ht_inj_fail(h, HT_INJ_ENOPROC, 0,
			    "process %d "
			    "exited",
			    (int)h->pid);
		return ht_inj_fail(h, HT_INJ_EZOMBIE, 0,
		    "process %d has no "
		    "live thread",
		    (int)h->pid);
	}
	if (n == 0 && h->why.stopped == live)
		return ht_inj_fail(h, HT_INJ_ESTOPPED, 0,
		    "process %d was "
		    "stopped (SIGSTOP or job control)",
		    (int)h->pid);
	if (n == 0 && h->why.traced == live)
		return ht_inj_fail(h, HT_INJ_ETRACED, 0,
		    "every thread of "
		    "process %d is traced by another tracer",
		    (int)h->pid);
	if (n == 0 && h->why.shstk == live)
		return ht_inj_fail(h, HT_INJ_EUNSUPP, 0,
		    "process %d uses "
		    "shadow stacks (CET), which the injector does not "
		    "support",
		    (int)h->pid);
	return 0;
}

int
ht_inj_search(struct ht_inject *h, const char *lib, uint64_t start,
    uint64_t deadline, int timeout_ms)
{
	static const struct reasons none;
	struct cand *c;
	uint64_t t, slice_end;
	unsigned pause = ROUND_PAUSE_US;
	int n, i, tier, live, r, late, ret = -1;

	if ((c = calloc(MAXTHREADS, sizeof(*c))) == NULL)
		return ht_inj_fail(h, HT_INJ_ESYS, ENOMEM, "injector");
	memset(&h->lastwhy, 0, sizeof(h->lastwhy));
	memset(&h->why, 0, sizeof(h->why));
	for (;;) {
		if (memcmp(&h->why, &none, sizeof(none)) != 0)
			h->lastwhy = h->why;
		memset(&h->why, 0, sizeof(h->why));
		n = list_threads(h, c, MAXTHREADS, &live);
		ht_inj_read_vmas(h);
		if (hopeless(h, n, live) != 0)
			goto out;
		/* Rebuild the unwinder only if modules came or went: a stack
		 * that cannot be unwound for other reasons would otherwise
		 * cost a full rebuild each round. */
		if (h->dwfl_stale) {
			h->dwfl_stale = 0;
			if (ht_inj_maps_changed(h) && ht_inj_dwfl_setup(h) != 0)
				goto out;
		}
		/* Threads in calls that would see EINTR only once the
		 * others had their chance, or if there are no others. */
		for (i = 0, late = 1; i < n; i++)
			if (c[i].tier != 2)
				late = 0;
		t = (deadline - start) / 4;
		if (t > EINTR_DELAY_MS * MSEC)
			t = EINTR_DELAY_MS * MSEC;
		if (ht_inj_now_ns() - start >= t)
			late = 1;
		for (tier = 1; tier <= 3; tier++) {
			for (i = 0; i < n; i++) {
				if (c[i].tier != tier)
					continue;
				if ((t = ht_inj_now_ns()) >= deadline)
					break;
				if (tier == 2 && !late) {
					h->why.eintr++;
					continue;
				}
				slice_end = t + SLICE_MS * MSEC;
				if (slice_end > deadline)
					slice_end = deadline;
				r = ht_inj_try_thread(h, c[i].tid, tier == 3,
				    slice_end);
				if (r == T_SAFE)
					r = ht_inj_call(h, lib,
					    (deadline > t ? deadline : t) +
						CALL_GRACE_MS * MSEC);
				if (r == T_SAFE) {
					ret = h->calling || h->handle != 0 ? 0 :
									     -1;
					goto out;
				}
				if (r == T_FATAL)
					goto out;
			}
		}
		if ((t = ht_inj_now_ns()) >= deadline) {
			if (memcmp(&h->why, &none, sizeof(none)) == 0)
				h->why = h->lastwhy;
			timeout_message(h, timeout_ms);
			goto out;
		}
		if (t + pause * 1000ULL > deadline)
			pause = (unsigned)((deadline - t) / 1000) + 1;
		ht_inj_sleep_us(pause);
		if (pause < ROUND_PAUSE_MAX_US)
			pause *= 2;
	}
out:
	free(c);
	return ret;
}
