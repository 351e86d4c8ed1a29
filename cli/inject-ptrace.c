/*
 * The tracee (see inject-int.h): ptrace requests, the stops they cause,
 * and the target's memory.
 *
 * A thread is seized (PTRACE_SEIZE, so that no SIGSTOP is sent that the
 * process could see) and interrupted; what it then reports is decoded in
 * one place, ht_inj_decode().  Every wait is bounded, and we never wait for a
 * thread we do not hold.
 */
#include "config.h"

#include <sys/ptrace.h>
#include <sys/signalfd.h>
#include <sys/uio.h>
#include <sys/wait.h>

#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "inject-int.h"
#include "proc.h"

int
ht_inj_ptrace(struct ht_inject *h, int req, const char *name, pid_t tid,
    void *addr, void *data)
{
	char what[128], st;
	int err;

	if (ptrace((enum __ptrace_request)req, tid, addr, data) != -1)
		return 0;
	err = errno;
	snprintf(what, sizeof(what), "ptrace(%s) of thread %d of process %d",
	    name, (int)tid, (int)h->pid);
	switch (err) {
	case ESRCH:
		ht_inj_fail(h, HT_INJ_ENOPROC, 0,
		    "%s: the thread exited or "
		    "left its stop",
		    what);
		break;
	case EPERM:
	case EACCES:
		/* The kernel refuses to seize a thread that is exiting with
		 * EPERM too: that is no missing permission. */
		st = ht_proc_task_state(h->pid, tid);
		if (st == 0 || st == 'Z' || st == 'X')
			ht_inj_fail(h, HT_INJ_ENOPROC, 0,
			    "%s: the thread is exiting", what);
		else
			ht_inj_fail_perm(h, err, what);
		break;
	default:
		ht_inj_fail(h, HT_INJ_ESYS, err, "%s", what);
		break;
	}
	errno = err;
	return -1;
}

int
ht_inj_mem_read(pid_t pid, uint64_t addr, void *buf, size_t len)
{
	struct iovec l = { buf, len }, r = { (void *)(uintptr_t)addr, len };

	return process_vm_readv(pid, &l, 1, &r, 1, 0) == (ssize_t)len ? 0 : -1;
}

int
ht_inj_mem_write(pid_t pid, uint64_t addr, const void *buf, size_t len)
{
	struct iovec l = { (void *)(uintptr_t)buf, len };
	struct iovec r = { (void *)(uintptr_t)addr, len };

	return process_vm_writev(pid, &l, 1, &r, 1, 0) == (ssize_t)len ? 0 : -1;
}

/*
 * The kernel sends the tracer SIGCHLD at each stop of a tracee; we sleep
 * on it through a signalfd, so that we notice a stop at once (on a busy
 * machine, sleeping in steps loses a scheduling round each time), but
 * never trust it alone: the caller may ignore SIGCHLD or another of its
 * threads may take it, so the sleep is short and waitpid is asked anyway.
 */
int
ht_inj_wait_stop(struct ht_inject *h, pid_t tid, uint64_t deadline, int *status)
{
	struct signalfd_siginfo ssi;
	struct pollfd pfd = { h->sfd, POLLIN, 0 };
	unsigned us = 5;
	uint64_t t;
	pid_t r;

	for (;;) {
		r = waitpid(tid, status, __WALL | WNOHANG);
		if (r == tid)
			return 1;
		if (r == -1 && errno != EINTR)
			return -1;
		if ((t = ht_inj_now_ns()) >= deadline)
			return 0;
		if (h->sfd != -1) {
			if (poll(&pfd, 1,
				deadline - t > 2 * MSEC ?
				    2 :
				    (int)((deadline - t + MSEC - 1) / MSEC)) >
			    0)
				while (read(h->sfd, &ssi, sizeof(ssi)) > 0)
					;
			continue;
		}
		ht_inj_sleep_us(us);
		if (us < 200)
			us *= 2;
	}
}

int
ht_inj_decode(int status, int *sig)
{
	*sig = 0;
	if (WIFEXITED(status) || WIFSIGNALED(status))
		return S_GONE;
	*sig = WSTOPSIG(status);
	if ((status >> 16) == PTRACE_EVENT_STOP) {
		/* Under PTRACE_SEIZE a group-stop reports its signal here;
		 * PTRACE_INTERRUPT reports SIGTRAP. */
		if (*sig == SIGSTOP || *sig == SIGTSTP || *sig == SIGTTIN ||
		    *sig == SIGTTOU)
			return S_GROUP;
		return S_EVENT;
	}
	if (*sig == (SIGTRAP | 0x80))
		return S_SYSCALL;
	if ((status >> 16) != 0)
		return S_EVENT;
	return S_SIGNAL;
}

/* sig is delivered: the signal whose delivery-stop this is. */
void
ht_inj_release(struct ht_inject *h, int sig, uint64_t t0)
{
	uint64_t d;

	(void)ptrace(PTRACE_DETACH, h->cur, NULL, (void *)(long)sig);
	d = ht_inj_now_ns() - t0;
	if (t0 != 0 && d > h->probe_ns)
		h->probe_ns = d;
	h->cur = 0;
}

/* A thread that will not stop (uninterruptible sleep) stays seized until
 * it does; the tracer's exit or ht_inject_free lets it go then. */
int
ht_inj_stop_and_release(struct ht_inject *h, uint64_t t0)
{
	int st, sig, k;

	(void)ptrace(PTRACE_INTERRUPT, h->cur, NULL, NULL);
	switch (ht_inj_wait_stop(h, h->cur,
	    ht_inj_now_ns() + STOP_GRACE_MS * MSEC, &st)) {
	case 0:
		return -1;
	case -1:
		h->cur = 0;
		return 0;
	}
	if ((k = ht_inj_decode(st, &sig)) == S_GONE) {
		h->cur = 0;
		return 0;
	}
	ht_inj_release(h, k == S_SIGNAL ? sig : 0, t0);
	return 0;
}

int
ht_inj_at_syscall_exit(struct ht_inject *h, const struct user_regs_struct *r)
{
	struct __ptrace_syscall_info si;

	if (ptrace(PTRACE_GET_SYSCALL_INFO, h->cur, (void *)sizeof(si), &si) >
	    0)
		return si.op == PTRACE_SYSCALL_INFO_EXIT;
	/* Before Linux 5.3: at the entry-stop rax is still -ENOSYS. */
	return (long)r->rax != -ENOSYS;
}

/*
 * What ht_inj_wait_stop said (r, status st) of the thread in hand: the
 * stop's kind (S_*, not S_GONE) and signal; or -1 and its fate: T_GONE,
 * or T_FATAL if it did not stop when told to (it stays seized, h->cur).
 */
static int
reported(struct ht_inject *h, pid_t tid, int r, int st, int *sig, int *fate)
{
	int k;

	if (r == 0) {
		ht_inj_fail(h, HT_INJ_ESYS, 0,
		    "thread %d of process %d did "
		    "not stop within %d ms of PTRACE_INTERRUPT",
		    (int)tid, (int)h->pid, STOP_GRACE_MS);
		*fate = T_FATAL;
		return -1;
	}
	if (r == -1 || (k = ht_inj_decode(st, sig)) == S_GONE) {
		h->cur = 0;
		*fate = T_GONE;
		return -1;
	}
	return k;
}

/*
 * A thread stopped in a system call is judged at once.  A thread in user
 * code, if follow, is resumed with PTRACE_SYSCALL and judged at each
 * syscall-exit-stop until slice_end; at the end of the slice it is
 * interrupted, which ends a blocking call with a last exit-stop, judged
 * too.
 */
int
ht_inj_try_thread(struct ht_inject *h, pid_t tid, int follow,
    uint64_t slice_end)
{
	uint64_t t0;
	int st, sig, k, r, fate = T_GONE, ending = 0, pass = 0;

	if (PT(h, PTRACE_SEIZE, tid, NULL, PTRACE_O_TRACESYSGOOD) != 0)
		return h->code == HT_INJ_ENOPROC ? T_GONE : T_FATAL;
	h->cur = tid;
	t0 = ht_inj_now_ns();
	if (PT(h, PTRACE_INTERRUPT, tid, NULL, NULL) != 0) {
		ht_inj_release(h, 0, 0);
		return T_GONE;
	}

	/* The interrupt-stop.  A signal may be reported first: pass it on,
	 * the interrupt stays pending. */
	for (;;) {
		r = ht_inj_wait_stop(h, tid,
		    ht_inj_now_ns() + STOP_GRACE_MS * MSEC, &st);
		if ((k = reported(h, tid, r, st, &sig, &fate)) < 0)
			return fate;
		if (k == S_GROUP) {
			ht_inj_release(h, 0, t0);
			h->why.stopped++;
			return T_UNSAFE;
		}
		if (k == S_EVENT)
			break;
		(void)ptrace(PTRACE_CONT, tid, NULL,
		    (void *)(long)(k == S_SIGNAL ? sig : 0));
	}
	if (PT(h, PTRACE_GETREGS, tid, NULL, &h->regs) != 0) {
		ht_inj_release(h, 0, t0);
		return T_GONE;
	}
	if ((long)h->regs.orig_rax >= 0) {
		h->t_stop = t0;
		if (ht_inj_safe_point(h))
			return T_SAFE;
		ht_inj_release(h, 0, t0);
		return T_UNSAFE;
	}
	if (!follow) {
		h->why.running++;
		ht_inj_release(h, 0, t0);
		return T_UNSAFE;
	}

	/* Follow it to its next system calls. */
	sig = 0;
	for (;;) {
		if (PT(h, PTRACE_SYSCALL, tid, NULL, (long)sig) != 0) {
			h->cur = 0;
			return T_GONE;
		}
		sig = 0;
		r = ht_inj_wait_stop(h, tid,
		    ending ? ht_inj_now_ns() + STOP_GRACE_MS * MSEC : slice_end,
		    &st);
		if (r == 0 && !ending) {
			(void)ptrace(PTRACE_INTERRUPT, tid, NULL, NULL);
			ending = 1;
			r = ht_inj_wait_stop(h, tid,
			    ht_inj_now_ns() + STOP_GRACE_MS * MSEC, &st);
		}
		if ((k = reported(h, tid, r, st, &sig, &fate)) < 0)
			return fate;
		switch (k) {
		case S_GROUP:
			ht_inj_release(h, 0, 0);
			h->why.stopped++;
			return T_UNSAFE;
		case S_SIGNAL:
			/* Delivered as we resume it (or as we let it go). */
			if (ending) {
				ht_inj_release(h, sig, 0);
				h->why.running++;
				return T_UNSAFE;
			}
			continue;
		case S_SYSCALL:
			sig = 0;
			if (PT(h, PTRACE_GETREGS, tid, NULL, &h->regs) != 0) {
				ht_inj_release(h, 0, 0);
				return T_GONE;
			}
			if (!ht_inj_at_syscall_exit(h, &h->regs))
				break;
			pass++;
			h->t_stop = ht_inj_now_ns();
			if (ht_inj_safe_point(h))
				return T_SAFE;
			break;
		default:
			sig = 0;
			break;
		}
		if (ending) {
			/* The interrupt's own stop may still be pending; the
			 * detach drops it. */
			ht_inj_release(h, 0, 0);
			if (pass == 0)
				h->why.running++;
			return T_UNSAFE;
		}
	}
}
