/*
 * The remote call (see inject-int.h for its steps and what each leaves
 * behind if we die): the thread in hand, stopped at a safe point, calls
 * dlopen(lib, RTLD_NOW) (and dlerror() if that fails) from a trampoline in
 * a page it maps for it, then is put back exactly as it was.
 *
 * We follow the whole call with PTRACE_SYSCALL, stopping at each of its
 * system calls: the trampoline's last one, the munmap of its page through
 * the libc's "syscall; ret", is where we take the thread back before it
 * runs rt_sigreturn (the frame is its way back if we are gone, not ours).
 * Its registers, extended state and signal mask are then put back in a
 * stop inside get_signal (PTRACE_INTERRUPT): leaving that stop, the kernel
 * delivers what came meanwhile or restarts the interrupted system call by
 * its own rules (arch_do_signal_or_restart on the original orig_rax and
 * rax), with the thread's restart_block intact.  Signals are blocked
 * during the call and stay pending, so none is lost if we die, none is
 * held by us, and no handler runs on top of dlopen; SIGSTOP and faults,
 * which no mask holds, are passed on at once (a fault in dlopen is fatal,
 * as it would be anyway).  A group stop does not stop the call; the thread
 * joins the stop when let go (__ptrace_unlink rearms it).
 *
 * A call that does not return within the deadline is let go where it is:
 * it finishes, restores itself and resumes on its own.
 */
#include "config.h"

#include <sys/mman.h>
#include <sys/ptrace.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/wait.h>

#include <elf.h>
#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "inject-int.h"
#include "proc.h"

#define MAXVMAS	   65536
#define ERRSTR_MAX 512

static int
vma_cb(void *arg, const struct ht_proc_map *m)
{
	struct ht_inject *h = arg;

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
	size_t lo = 0, hi = h->nvma, mid;

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

static void
step(struct ht_inject *h, int st)
{
	if (h->on_step != NULL && st >= 0)
		h->on_step(h, st);
}

enum { CALL_OK, CALL_GONE, CALL_HUNG, CALL_ERR };

/* The thread in hand exited, or the whole process (wait status st if r
 * is 1). */
static int
call_gone(struct ht_inject *h, int r, int st)
{
	h->cur = 0;
	if (r == 1 && WIFSIGNALED(st))
		ht_inj_fail(h, HT_INJ_ECRASH, 0,
		    "process %d was killed by "
		    "signal %d (%s) during the call%s",
		    (int)h->pid, WTERMSIG(st), strsignal(WTERMSIG(st)),
		    WTERMSIG(st) == SIGSYS ?
			" (a seccomp filter forbids a system call that "
			"dlopen needs)" :
			"");
	else
		ht_inj_fail(h, HT_INJ_ENOPROC, 0,
		    "process %d exited during "
		    "the call",
		    (int)h->pid);
	return CALL_GONE;
}

/*
 * Resume the thread in hand with PTRACE_SYSCALL, stop after stop, until
 * the exit of system call nr made through the gadget with rsp at the
 * frame (only ours are: the trampoline's and dlopen's own stacks are
 * below the data block); *ret is its result.  step each (if not -1) at
 * every other syscall-stop.
 */
static int
follow(struct ht_inject *h, long nr, uint64_t deadline, int each, uint64_t *ret)
{
	struct user_regs_struct now;
	pid_t tid = h->cur;
	int st, sig = 0, k, r;

	for (;;) {
		if (PT(h, PTRACE_SYSCALL, tid, NULL, (long)sig) != 0)
			return errno == ESRCH ? call_gone(h, 0, 0) : CALL_ERR;
		sig = 0;
		if ((r = ht_inj_wait_stop(h, tid, deadline, &st)) == 0)
			return CALL_HUNG;
		if (r == -1 || (k = ht_inj_decode(st, &sig)) == S_GONE)
			return call_gone(h, r, st);
		if (k != S_SIGNAL)
			sig = 0;
		if (k != S_SYSCALL)
			continue;
		if (PT(h, PTRACE_GETREGS, tid, NULL, &now) != 0)
			return errno == ESRCH ? call_gone(h, 0, 0) : CALL_ERR;
		if (now.rip == h->gadget + 2 && (long)now.orig_rax == nr &&
		    now.rsp == h->frame && ht_inj_at_syscall_exit(h, &now)) {
			*ret = now.rax;
			return CALL_OK;
		}
		if (each != -1)
			step(h, each);
	}
}

/*
 * Make the thread in hand issue system call nr(a[0..5]) from the libc's
 * "syscall; ret" with rsp at the frame, so that it returns into
 * __restore_rt, and follow it to the call's exit; *ret is its result.
 * block: block every signal once the registers are set.
 */
static int
gadget_call(struct ht_inject *h, long nr, const uint64_t a[6], int st_set,
    int block, uint64_t deadline, uint64_t *ret)
{
	struct user_regs_struct c = h->regs;
	static const uint64_t all = ~(uint64_t)0;

	c.rip = h->gadget;
	c.rax = (uint64_t)nr;
	c.rdi = a[0];
	c.rsi = a[1];
	c.rdx = a[2];
	c.r10 = a[3];
	c.r8 = a[4];
	c.r9 = a[5];
	c.rsp = h->frame;
	c.orig_rax = (uint64_t)-1;
	if (PT(h, PTRACE_SETREGS, h->cur, NULL, &c) != 0)
		return errno == ESRCH ? call_gone(h, 0, 0) : CALL_ERR;
	step(h, st_set);
	if (block) {
		if (PT(h, PTRACE_SETSIGMASK, h->cur, sizeof(all), &all) != 0)
			return errno == ESRCH ? call_gone(h, 0, 0) : CALL_ERR;
		step(h, ST_BLOCKED);
	}
	return follow(h, nr, deadline, -1, ret);
}

/*
 * The thread in hand is in a syscall-stop whose registers lead to
 * __restore_rt with our frame (the gadget's exit, or a stop before it):
 * put it back with ptrace in a stop inside get_signal (ST_RESUME_SET to
 * ST_DETACHED), or, if any of that fails, let it go to rt_sigreturn.
 * Returns CALL_OK (the thread is let go; or, if it would not stop, left
 * to run into its frame, still seized), or CALL_GONE.
 */
static int
finish(struct ht_inject *h)
{
	struct user_regs_struct c = h->regs;
	struct iovec iov = { h->xstate, h->xlen };
	pid_t tid = h->cur;
	int st, sig = 0, k, r;

	c.rip = h->restore_rt;
	c.rsp = h->frame + 8;
	c.orig_rax = (uint64_t)-1;
	if (ptrace(PTRACE_SETREGS, tid, NULL, &c) == -1)
		goto out_detach;
	step(h, ST_RESUME_SET);
	if (ptrace(PTRACE_INTERRUPT, tid, NULL, NULL) == -1 ||
	    ptrace(PTRACE_CONT, tid, NULL, NULL) == -1)
		goto out_detach;
	r = ht_inj_wait_stop(h, tid, ht_inj_now_ns() + STOP_GRACE_MS * MSEC,
	    &st);
	if (r == 0)
		return CALL_OK;
	if (r == -1 || (k = ht_inj_decode(st, &sig)) == S_GONE)
		return call_gone(h, r, st);
	/* An interrupt-stop, a group-stop, or SIGSTOP's signal-delivery-
	 * stop: all inside get_signal, which the thread leaves through the
	 * kernel's restart or delivery on the registers we put back. */
	if (k != S_SIGNAL)
		sig = 0;
	step(h, ST_TRAPPED);
	if (h->xkind == 1 ?
		ptrace(PTRACE_SETREGSET, tid, (void *)NT_X86_XSTATE, &iov) ==
		    -1 :
		ptrace(PTRACE_SETFPREGS, tid, NULL, &h->fpregs) == -1)
		goto out_detach;
	step(h, ST_XSTATE);
	if (ptrace(PTRACE_SETSIGMASK, tid, (void *)sizeof(h->mask), &h->mask) ==
	    -1)
		goto out_detach;
	step(h, ST_MASK);
	if (ptrace(PTRACE_SETREGS, tid, NULL, &h->regs) == -1)
		goto out_detach;
	step(h, ST_REGS);
	(void)ht_inj_mem_write(h->mpid, h->sp, h->saved, h->ilen);
out_detach:
	(void)ptrace(PTRACE_DETACH, tid, NULL, (void *)(long)sig);
	h->cur = 0;
	step(h, ST_DETACHED);
	return CALL_OK;
}

/* Give the page back and finish (an attempt that failed after mmap). */
static int
unmap_and_finish(struct ht_inject *h, uint64_t page, uint64_t deadline)
{
	const uint64_t a[6] = { page, 4096, 0, 0, 0, 0 };
	uint64_t ret;
	int r;

	if ((r = gadget_call(h, SYS_munmap, a, -1, 0, deadline, &ret)) !=
	    CALL_OK)
		return r;
	return finish(h);
}

/* Read a NUL-terminated string of the target, page by page. */
static void
read_string(pid_t pid, uint64_t addr, char *buf, size_t size)
{
	size_t got = 0, n;

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

/* Read what the call needs of the thread in hand before it changes
 * anything: its extended state and signal mask.  0 or -1 (let go). */
static int
save_state(struct ht_inject *h)
{
	struct iovec iov = { h->xstate, sizeof(h->xstate) };
	pid_t tid = h->cur;

	if (ptrace(PTRACE_GETREGSET, tid, (void *)NT_X86_XSTATE, &iov) == 0) {
		h->xkind = 1;
		h->xlen = iov.iov_len;
	} else if (PT(h, PTRACE_GETFPREGS, tid, NULL, &h->fpregs) == 0)
		h->xkind = 2;
	else
		return -1;
	return PT(h, PTRACE_GETSIGMASK, tid, sizeof(h->mask), &h->mask);
}

/*
 * Steps ST_MMAP_SET to ST_DETACHED (see inject-int.h).  Returns CALL_OK
 * with dlopen's result in *handle (and dlerror's text in err if it is 0),
 * the thread let go; CALL_ERR with the failure in h (the thread let go,
 * or still in a stop, its registers leading to its frame); or CALL_GONE,
 * or CALL_HUNG (the thread runs, seized).
 */
static int
run_call(struct ht_inject *h, uint64_t deadline, uint64_t *handle, char *err,
    size_t errsize)
{
	const uint64_t map[6] = { 0, 4096, PROT_READ | PROT_WRITE,
		MAP_PRIVATE | MAP_ANONYMOUS, (uint64_t)-1, 0 };
	uint64_t prot[6] = { 0, 4096, PROT_READ | PROT_EXEC, 0, 0, 0 };
	struct user_regs_struct c = h->regs;
	const unsigned char *code;
	uint64_t page, ret, errp;
	size_t len;
	int r;

	if ((r = gadget_call(h, SYS_mmap, map, ST_MMAP_SET, 1, deadline,
		 &page)) != CALL_OK)
		return r;
	step(h, ST_MMAP_DONE);
	if (page >= (uint64_t)-4095) {
		ht_inj_fail_advice(h, HT_INJ_ESYS, (int)-page,
		    (long)page == -ENOMEM ?
			"it is short of memory or of address space "
			"(ulimit -v): try again later" :
			NULL,
		    "mmap in thread %d "
		    "of process %d",
		    (int)h->cur, (int)h->pid);
		return finish(h) == CALL_OK ? CALL_ERR : CALL_GONE;
	}
	code = ht_inj_tramp_code(&len);
	if (ht_inj_mem_write(h->mpid, page, code, len) != 0) {
		ht_inj_fail(h, HT_INJ_ESYS, errno,
		    "writing the memory of "
		    "process %d",
		    (int)h->pid);
		return unmap_and_finish(h, page, deadline) == CALL_OK ?
		    CALL_ERR :
		    CALL_GONE;
	}
	step(h, ST_CODE);
	prot[0] = page;
	if ((r = gadget_call(h, SYS_mprotect, prot, ST_MPROTECT_SET, 0,
		 deadline, &ret)) != CALL_OK)
		return r;
	step(h, ST_MPROTECT_DONE);
	if (ret != 0) {
		ht_inj_fail(h, HT_INJ_ESYS, (int)-ret,
		    "mprotect in thread %d "
		    "of process %d",
		    (int)h->cur, (int)h->pid);
		return unmap_and_finish(h, page, deadline) == CALL_OK ?
		    CALL_ERR :
		    CALL_GONE;
	}

	c.rip = page;
	c.rsp = h->sp;
	c.r12 = h->sp;
	c.rax = 0;
	c.orig_rax = (uint64_t)-1;
	c.eflags &= ~(0x400UL | 0x100UL); /* DF and TF clear, per ABI */
	if (PT(h, PTRACE_SETREGS, h->cur, NULL, &c) != 0)
		return errno == ESRCH ? call_gone(h, 0, 0) : CALL_ERR;
	step(h, ST_CALL_SET);
	if ((r = follow(h, SYS_munmap, deadline, ST_CALL_SYSCALL, &ret)) !=
	    CALL_OK)
		return r;
	step(h, ST_RETURNED);
	/* dlerror's text is the thread's: read it before it runs on. */
	err[0] = '\0';
	if (ht_inj_frame_results(h, handle, &errp) != 0)
		*handle = errp = 0;
	if (*handle == 0 && errp != 0)
		read_string(h->mpid, errp, err, errsize);
	return finish(h);
}

int
ht_inj_call(struct ht_inject *h, const char *lib, uint64_t call_deadline)
{
	unsigned char code[sizeof(h->dlopen_code)];
	uint64_t handle = 0;
	pid_t tid = h->cur;
	char err[ERRSTR_MAX];
	int r;

	/* The same program still?  An execve since we read its libc would
	 * have us call into whatever is there now. */
	if (ht_inj_mem_read(h->mpid, h->dlopen_addr, code, sizeof(code)) != 0 ||
	    memcmp(code, h->dlopen_code, sizeof(code)) != 0 ||
	    ht_inj_mem_read(h->mpid, h->fn_addr, code, sizeof(code)) != 0 ||
	    memcmp(code, h->fn_code, sizeof(code)) != 0) {
		ht_inj_release(h, 0, h->t_stop);
		ht_inj_fail(h, HT_INJ_ENOPROC, 0,
		    "process %d changed "
		    "(execve?) during the attach",
		    (int)h->pid);
		return T_FATAL;
	}
	if (save_state(h) != 0) {
		ht_inj_release(h, 0, h->t_stop);
		return T_FATAL;
	}
	if (ht_inj_frame_build(h, lib) != 0) {
		ht_inj_release(h, 0, h->t_stop);
		ht_inj_fail(h, HT_INJ_EUNSUPP, 0,
		    "the extended (XSAVE) state "
		    "of thread %d of process %d is not one a signal frame "
		    "can hold",
		    (int)tid, (int)h->pid);
		return T_FATAL;
	}
	/* A thread on a small stack (or on a signal stack, which the
	 * unwinder already refused) must not overflow it in dlopen. */
	if (stack_room(h, h->sp) < STACK_NEED)
		return no_room(h);
	/* Not mapped yet (a main thread near the end of its stack mapping;
	 * the kernel grows it only for the thread itself). */
	if (ht_inj_mem_read(h->mpid, h->sp, h->saved, h->ilen) != 0)
		return no_room(h);
	if (ht_inj_mem_write(h->mpid, h->sp, h->image, h->ilen) != 0) {
		(void)ht_inj_mem_write(h->mpid, h->sp, h->saved, h->ilen);
		return no_room(h);
	}
	step(h, ST_FRAME);

	r = run_call(h, call_deadline, &handle, err, sizeof(err));
	h->pause_ns = ht_inj_now_ns() - h->t_stop;
	h->tid = tid;
	if (r == CALL_GONE)
		return T_GONE;
	if (r == CALL_HUNG) {
		/* It finishes, restores itself and resumes on its own. */
		(void)ht_inj_stop_and_release(h, h->t_stop);
		ht_inj_fail(h, HT_INJ_EHUNG, 0,
		    "%s in thread %d of "
		    "process %d did not return within %d s",
		    h->fn_name, (int)tid, (int)h->pid, CALL_GRACE_MS / 1000);
		return T_FATAL;
	}
	if (r != CALL_OK) {
		/* A failed request, in a stop: its registers lead to its
		 * frame, or are its own.  Message set already. */
		if (h->cur != 0)
			ht_inj_release(h, 0, 0);
		return T_FATAL;
	}
	h->handle = handle;
	if (handle == 0 && !h->calling) {
		ht_inj_fail(h, HT_INJ_EDLOPEN, 0,
		    "dlopen(\"%s\") in process "
		    "%d failed%s%s",
		    lib, (int)h->pid, err[0] != '\0' ? ": " : "", err);
	}
	return T_SAFE;
}
