/*
 * The remote call (see inject-int.h): the thread in hand, stopped at a
 * safe point, calls dlopen(lib, RTLD_NOW) (and dlerror() if that fails),
 * then is put back exactly as it was.
 *
 * How the call returns: we push 0 as its return address.  dlopen returns to
 * address 0 and the fetch faults; the SIGSEGV stops the thread in a
 * signal-delivery-stop, where we recognise it by rip == 0 together with rsp
 * == our slot + 8 (a stray jump to 0 inside the call cannot match both) and
 * suppress it.  Nothing is ever mapped at 0 (vm.mmap_min_addr; we refuse a
 * process that maps page 0 anyway), so no other thread can execute there,
 * and unlike an int3 in a scratch page this needs no remote mmap: no extra
 * system call in the target, no mapping left behind.  Either way the trap
 * is a forced signal, and the kernel resets the disposition of a forced
 * signal that is blocked or ignored; so threads that block or ignore
 * SIGSEGV are never chosen.
 *
 * Why restoring the saved registers is enough for the interrupted system
 * call: a thread stopped in a blocking system call (by PTRACE_INTERRUPT, or
 * at a syscall-exit-stop) has orig_rax = the call's number and rax = its
 * result, -ERESTARTSYS/-ERESTARTNOINTR/-ERESTARTNOHAND/-ERESTART_RESTARTBLOCK
 * if it was interrupted.  The kernel decides about the restart only when the
 * thread leaves its stop and finds no signal to deliver (x86's
 * arch_do_signal_or_restart): orig_rax >= 0 and rax one of those, then rax =
 * orig_rax (or restart_syscall) and rip -= 2.  We run the call with
 * orig_rax = -1, so that nothing restarts into it, and put the saved
 * registers back in the last stop (the SIGSEGV's): leaving that stop, the
 * kernel sees the original call's state and restarts it, or returns its
 * result, exactly as if we had never been there.  A signal that arrived
 * during the call is handed back in that same stop (PTRACE_SETSIGINFO and
 * the detach's signal), so its handler sees the original call interrupted
 * and SA_RESTART applies as usual.  (ERESTART_RESTARTBLOCK also relies on
 * the thread's restart_block, which only a sleep with a timeout that a
 * signal interrupts could overwrite; dlopen does not sleep that way.)
 *
 * A call that never returns (dlopen blocked for good) cannot be undone:
 * after CALL_GRACE_MS we let the thread go and say so.
 */
#include "config.h"

#include <sys/ptrace.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/wait.h>

#include <dlfcn.h>
#include <elf.h>
#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "inject-int.h"
#include "proc.h"

#define RED_ZONE		128
#define MAXVMAS			65536
#define ERRSTR_MAX		512

static int
vma_cb(void *arg, const struct ht_proc_map *m)
{
	struct ht_inject	*h = arg;

	if (h->nvma == MAXVMAS)
		return 1;
	h->vmas[h->nvma].lo = m->lo;
	h->vmas[h->nvma].hi = m->hi;
	h->vmas[h->nvma].grows = strcmp(m->path, "[stack]") == 0;
	h->nvma++;
	return 0;
}

/* The kernel lists the mappings in address order: sorted already. */
void
ht_inj_read_vmas(struct ht_inject *h)
{
	h->nvma = 0;
	if (h->vmas == NULL &&
	    (h->vmas = calloc(MAXVMAS, sizeof(*h->vmas))) == NULL)
		return;
	(void)ht_proc_maps(h->pid, vma_cb, h);
}

/* Bytes of stack below sp; (uint64_t)-1 for the growing main stack, 0 if
 * sp is in no known mapping. */
static uint64_t
stack_room(const struct ht_inject *h, uint64_t sp)
{
	size_t	lo = 0, hi = h->nvma, mid;

	while (lo < hi) {
		mid = lo + (hi - lo) / 2;
		if (h->vmas[mid].hi <= sp)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo == h->nvma || sp < h->vmas[lo].lo)
		return 0;
	return h->vmas[lo].grows ? (uint64_t)-1 : sp - h->vmas[lo].lo;
}

/* Send a held-back signal again to the thread. */
static void
resend(struct ht_inject *h, pid_t tid, siginfo_t *si)
{
	/* The kernel lets us queue a siginfo only with a negative si_code
	 * other than SI_TKILL; the others go again as tgkill() (their
	 * sender becomes us). */
	if (si->si_code < 0 && si->si_code != SI_TKILL &&
	    syscall(SYS_rt_tgsigqueueinfo, h->pid, tid, si->si_signo, si) ==
	    0)
		return;
	(void)syscall(SYS_tgkill, h->pid, tid, si->si_signo);
}

static int
is_fault(int sig, const siginfo_t *si)
{
	return (sig == SIGSEGV || sig == SIGBUS || sig == SIGILL ||
	    sig == SIGFPE || sig == SIGTRAP || sig == SIGSYS) &&
	    si->si_code > 0;
}

enum { CALL_OK, CALL_GONE, CALL_HUNG, CALL_ERR };

/*
 * Run fn(a0, a1) on the thread in hand with its stack pointer at sp (where
 * the return address 0 is written), and wait for its return to 0.  Signals
 * that arrive meanwhile are held back (h->defer) to be handed back once
 * the thread's own state is restored: a handler must not run on top of
 * dlopen, nor see our registers.  Faults raised by the call itself are
 * delivered: the call is broken, nothing we could restore would be right.
 */
static int
remote_call(struct ht_inject *h, uint64_t fn, uint64_t a0, uint64_t a1,
    uint64_t sp, uint64_t deadline, uint64_t *ret)
{
	struct user_regs_struct	c = h->regs, now;
	static const uint64_t	zero = 0;
	pid_t			tid = h->cur;
	siginfo_t		si;
	int			st, sig, k, r;

	if (ht_inj_mem_write(h->pid, sp, &zero, sizeof(zero)) != 0) {
		ht_inj_fail(h, HT_INJ_ESYS, errno, "writing the stack of "
		    "thread %d", (int)tid);
		return CALL_ERR;
	}
	c.rip = fn;
	c.rdi = a0;
	c.rsi = a1;
	c.rax = 0;
	c.rsp = sp;
	c.orig_rax = (unsigned long)-1;
	c.eflags &= ~(0x400UL | 0x100UL);	/* DF and TF clear, per ABI */
	if (PT(h, PTRACE_SETREGS, tid, NULL, &c) != 0 ||
	    PT(h, PTRACE_CONT, tid, NULL, NULL) != 0)
		return CALL_ERR;
	for (;;) {
		r = ht_inj_wait_stop(h, tid, deadline, &st);
		if (r == 0)
			return CALL_HUNG;
		if (r == -1 || (k = ht_inj_decode(st, &sig)) == S_GONE) {
			h->cur = 0;
			if (r != -1 && WIFSIGNALED(st))
				ht_inj_fail(h, HT_INJ_ECRASH, 0, "process %d "
				    "was killed by signal %d (%s) during the "
				    "call%s", (int)h->pid, WTERMSIG(st),
				    strsignal(WTERMSIG(st)), WTERMSIG(st) ==
				    SIGSYS ? " (a seccomp filter forbids a "
				    "system call that dlopen needs)" : "");
			else
				ht_inj_fail(h, HT_INJ_ENOPROC, 0, "process %d "
				    "exited during the call", (int)h->pid);
			return CALL_GONE;
		}
		sig = k == S_SIGNAL ? sig : 0;
		if (k == S_SIGNAL) {
			if (ptrace(PTRACE_GETSIGINFO, tid, NULL, &si) == -1)
				memset(&si, 0, sizeof(si));
			if (sig == SIGSEGV && ptrace(PTRACE_GETREGS, tid, NULL,
			    &now) == 0 && now.rip == 0 && now.rsp == sp + 8) {
				*ret = now.rax;
				return CALL_OK;
			}
			if (!is_fault(sig, &si) && h->ndefer < MAXDEFER) {
				si.si_signo = sig;
				h->defer[h->ndefer++] = si;
				sig = 0;
			}
		}
		/* A group-stop (someone stopped the process) is not waited
		 * out: the call finishes, and the thread, detached, joins
		 * the stop again (__ptrace_unlink re-arms it). */
		if (PT(h, PTRACE_CONT, tid, NULL, (long)sig) != 0) {
			h->cur = 0;
			return CALL_GONE;
		}
	}
}

/* Read a NUL-terminated string of the target, page by page. */
static void
read_string(pid_t pid, uint64_t addr, char *buf, size_t size)
{
	size_t	got = 0, n;

	buf[0] = '\0';
	while (got < size - 1) {
		n = 4096 - ((addr + got) & 4095);
		if (n > size - 1 - got)
			n = size - 1 - got;
		if (ht_inj_mem_read(pid, addr + got, buf + got, n) != 0)
			break;
		got += n;
		if (memchr(buf + got - n, '\0', n) != NULL)
			break;
	}
	buf[got] = '\0';
	buf[strcspn(buf, "\n")] = '\0';
}

/* Not enough stack for dlopen: the thread is let go untouched. */
static int
no_room(struct ht_inject *h)
{
	h->why.stack++;
	ht_inj_release(h, 0, h->t_stop);
	return T_UNSAFE;
}

int
ht_inj_call(struct ht_inject *h, const char *lib, uint64_t call_deadline)
{
	struct iovec		 iov = { h->xstate, sizeof(h->xstate) };
	unsigned char		 saved[PATH_MAX + 64], frame[PATH_MAX + 64];
	unsigned char		 code[sizeof(h->dlopen_code)];
	uint64_t		 top, path_at, sp, ret = 0, errp = 0;
	size_t			 plen = strlen(lib) + 1, len;
	pid_t			 tid = h->cur;
	char			 err[ERRSTR_MAX];
	int			 r, i, sig0 = 0, result;

	/* The same program still?  An execve since we read its libc would
	 * have us call into whatever is there now. */
	if (ht_inj_mem_read(h->pid, h->dlopen_addr, code, sizeof(code)) != 0 ||
	    memcmp(code, h->dlopen_code, sizeof(code)) != 0) {
		ht_inj_release(h, 0, h->t_stop);
		ht_inj_fail(h, HT_INJ_ENOPROC, 0, "process %d changed "
		    "(execve?) during the attach", (int)h->pid);
		return T_FATAL;
	}

	/* Extended state first: the call will clobber vector registers.
	 * Without XSAVE, the FPU and SSE state. */
	if (ptrace(PTRACE_GETREGSET, tid, (void *)NT_X86_XSTATE, &iov) == 0) {
		h->xkind = 1;
		h->xlen = iov.iov_len;
	} else if (PT(h, PTRACE_GETFPREGS, tid, NULL, &h->fpregs) == 0)
		h->xkind = 2;
	else {
		ht_inj_release(h, 0, h->t_stop);
		return T_FATAL;
	}

	/* Below the red zone: the path, then 16-byte alignment, then our
	 * return address, so that rsp + 8 is 16-aligned at dlopen's entry
	 * as after a call. */
	top = h->regs.rsp - RED_ZONE;
	path_at = (top - plen) & ~(uint64_t)15;
	sp = ((path_at - 16) & ~(uint64_t)15) - 8;
	len = (size_t)(top - sp);
	/* A thread on a small stack (or on a signal stack, which the
	 * unwinder already refused) must not overflow it in dlopen. */
	if (stack_room(h, sp) < STACK_NEED)
		return no_room(h);
	/* Not mapped yet (a main thread near the end of its stack mapping;
	 * the kernel grows it only for the thread itself). */
	if (ht_inj_mem_read(h->pid, sp, saved, len) != 0)
		return no_room(h);
	memset(frame, 0, len);
	memcpy(frame + (path_at - sp), lib, plen);
	if (ht_inj_mem_write(h->pid, sp, frame, len) != 0) {
		(void)ht_inj_mem_write(h->pid, sp, saved, len);
		return no_room(h);
	}

	h->ndefer = 0;
	r = remote_call(h, h->dlopen_addr, path_at, RTLD_NOW, sp,
	    call_deadline, &ret);
	if (r == CALL_OK && ret == 0 && h->dlerror_addr != 0)
		r = remote_call(h, h->dlerror_addr, 0, 0, sp, call_deadline,
		    &errp);
	if (r == CALL_GONE)
		return T_GONE;
	if (r == CALL_HUNG) {
		/* Nothing can be undone inside dlopen: let it go on, with
		 * the signals it was sent meanwhile. */
		for (i = 0; i < h->ndefer; i++)
			resend(h, tid, &h->defer[i]);
		(void)ht_inj_stop_and_release(h, h->t_stop);
		ht_inj_fail(h, HT_INJ_EHUNG, 0, "dlopen in thread %d of "
		    "process %d did not return within %d s", (int)tid,
		    (int)h->pid, CALL_GRACE_MS / 1000);
		return T_FATAL;
	}
	err[0] = '\0';
	if (r == CALL_OK && ret == 0 && errp != 0)
		read_string(h->pid, errp, err, sizeof(err));

	/* Put everything back, in the SIGSEGV's signal-delivery-stop. */
	result = 0;
	if (ht_inj_mem_write(h->pid, sp, saved, len) != 0)
		result = ht_inj_fail(h, HT_INJ_ESYS, errno, "restoring the "
		    "stack of thread %d", (int)tid);
	iov.iov_base = h->xstate;
	iov.iov_len = h->xlen;
	if (h->xkind == 1 ? PT(h, PTRACE_SETREGSET, tid, NT_X86_XSTATE,
	    &iov) != 0 : PT(h, PTRACE_SETFPREGS, tid, NULL, &h->fpregs) != 0)
		result = -1;
	if (PT(h, PTRACE_SETREGS, tid, NULL, &h->regs) != 0)
		result = -1;
	/* Held-back signals: the first one is delivered by the detach from
	 * this stop with its own siginfo, the others are queued again. */
	for (i = 1; i < h->ndefer; i++)
		resend(h, tid, &h->defer[i]);
	if (h->ndefer > 0) {
		if (ptrace(PTRACE_SETSIGINFO, tid, NULL, &h->defer[0]) == 0)
			sig0 = h->defer[0].si_signo;
		else
			resend(h, tid, &h->defer[0]);
	}
	(void)ptrace(PTRACE_DETACH, tid, NULL, (void *)(long)sig0);
	h->cur = 0;
	h->pause_ns = ht_inj_now_ns() - h->t_stop;
	h->tid = tid;
	if (result != 0)
		return T_FATAL;
	if (r != CALL_OK)
		return T_FATAL;	/* message set by remote_call */

	h->handle = ret;
	if (ret == 0)
		ht_inj_fail(h, HT_INJ_EDLOPEN, 0, "dlopen(\"%s\") in process "
		    "%d failed%s%s", lib, (int)h->pid, err[0] != '\0' ? ": " :
		    "", err);
	return T_SAFE;
}
