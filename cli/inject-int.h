/*
 * The injector's parts (inject.h is the contract), behind this one
 * private header:
 *   inject.c         the interface, the checks of the process, messages;
 *   inject-elf.c     the target's libc: dlopen and dlerror in it, and the
 *                    two code sequences the remote call returns through;
 *   inject-unwind.c  libdwfl on a stopped thread: is it at a safe point;
 *   inject-ptrace.c  ptrace requests and stops, the target's memory;
 *   inject-frame.c   what the call leaves on the thread's stack (a signal
 *                    frame of the thread's own state) and the trampoline;
 *   inject-call.c    the remote call of dlopen, step by step, below;
 *   inject-thread.c  which threads to try, in which order, until when.
 * The order of the work and the reasons behind it are told at the top of
 * inject.c.  Every function here works on the handle of one
 * ht_inject_load, from the one thread that is the tracer.
 *
 * The remote call must survive the death of the tracer at any instant
 * (SIGKILL, the OOM killer): the kernel then detaches the thread, which
 * goes on with whatever registers it has (exit_ptrace: __ptrace_unlink
 * wakes it from any ptrace-stop, or rearms a group stop).  So the thread
 * never holds a state that needs us to finish: from its first change on,
 * its registers always lead to glibc's __restore_rt ("mov $15, %rax;
 * syscall"), whose rt_sigreturn rebuilds the thread from a signal frame
 * we built on its stack below the red zone: every general register, rip,
 * rsp and eflags, the XSAVE area (fpu__restore_sig, checked by its
 * FP_XSTATE_MAGIC1/MAGIC2 words), and the signal mask.  The frame's
 * uc_stack has an invalid mode, so restore_altstack's do_sigaltstack fails
 * with EINVAL, an error rt_sigreturn ignores, and the thread's alternate
 * stack stays as it is.  rt_sigreturn sets orig_rax to -1, so the kernel's
 * syscall restart (arch_do_signal_or_restart) cannot apply after it: the
 * frame does it itself, as the kernel would with no handler to run (rax =
 * the call's number, rip - 2 for -ERESTARTSYS, -ERESTARTNOINTR,
 * -ERESTARTNOHAND), and the trampoline turns it into -EINTR when a signal
 * with a handler is pending that the kernel would have let interrupt it.
 * rt_sigreturn also makes any restart_syscall return -EINTR
 * (restart_block.fn = do_no_restart_syscall), so for
 * -ERESTART_RESTARTBLOCK (poll, nanosleep, futex with a timeout) the frame
 * issues the original call again, with its full timeout, unless the thread
 * was already in restart_syscall, which can then only give -EINTR.
 *
 * While we live, we finish the call ourselves and rt_sigreturn never runs:
 * the thread is put back with ptrace in a stop inside get_signal, where
 * the kernel then makes its own restart decision with the restart_block
 * intact, as if we had not been there.  With PTRACE_O_TRACESYSGOOD, a
 * thread left in a syscall-stop by a dead tracer resumes with exit code
 * SIGTRAP | 0x80, which ptrace_report_syscall "sends" to it and send_sig
 * drops as an invalid signal; without it that would be a real SIGTRAP.
 *
 * The steps of the call (inject-call.c), and what the thread does if we
 * die right after each (T: it traps through __restore_rt's rt_sigreturn
 * with our frame and resumes where it was, as above):
 *   ST_FRAME       frame, XSAVE area, data block and path written below
 *                  the red zone; registers untouched: the thread resumes
 *                  as if nothing happened (that stack is free).
 *   ST_MMAP_SET    registers: rip at a "syscall; ret" of the libc, rax
 *                  mmap (one read-write page), rsp at the frame, whose
 *                  first word is the address of __restore_rt: mmap, T;
 *                  the page is left behind.  (A signal pending right then
 *                  may first run its handler, which returns to the
 *                  syscall; the interrupted call then restarts after it,
 *                  where the kernel would have ended it with EINTR.)
 *   ST_BLOCKED     every signal blocked (PTRACE_SETSIGMASK; the frame has
 *                  the thread's own mask, as PTRACE_GETSIGMASK gives it:
 *                  the saved one in ppoll, pselect, sigsuspend since Linux
 *                  5.1): as ST_MMAP_SET.  The mask is set after the
 *                  registers, so the thread never runs its own code with
 *                  every signal blocked; and no handler can run on top of
 *                  the call, nor a signal get lost: they stay pending.
 *   ST_MMAP_DONE   at mmap's syscall-exit-stop: T, the page left.
 *   ST_CODE        the trampoline written into the page: T, page left.
 *   ST_MPROTECT_SET, ST_MPROTECT_DONE  the same for mprotect(page, R|X).
 *   ST_CALL_SET    registers: the trampoline (inject-frame.c) with rsp
 *                  below the data block: it calls dlopen(path, RTLD_NOW)
 *                  (or, for ht_inject_call, the library's function, with
 *                  those arguments, which it ignores, and no dlerror),
 *                  dlerror() if that failed, stores both in the data
 *                  block, decides about EINTR (above), then munmaps its
 *                  page through the libc's "syscall; ret" with rsp at the
 *                  frame, so that the ret goes to __restore_rt: T, with
 *                  nothing left behind.
 *   ST_CALL_SYSCALL at each syscall-stop inside the call: as ST_CALL_SET.
 *   ST_RETURNED    at munmap's syscall-exit-stop: the page is gone, the
 *                  results are read: T.
 *   ST_RESUME_SET  registers: rip at __restore_rt, rsp just above the
 *                  frame, orig_rax -1 (as after the ret): T.  Then
 *                  PTRACE_INTERRUPT and PTRACE_CONT: the thread stops in
 *                  get_signal (ST_TRAPPED) before running user code.
 *   ST_TRAPPED     in that stop: T.
 *   ST_XSTATE      its extended state put back: T (the same state again).
 *   ST_MASK        its signal mask put back: a pending signal may now be
 *                  delivered with its handler running on the __restore_rt
 *                  state, which it returns to: then T.
 *   ST_REGS        its registers put back: the thread is itself again; as
 *                  it leaves the stop, the kernel delivers what is pending
 *                  or restarts the interrupted call.
 *   ST_DETACHED    the stack bytes put back, the thread let go.
 * A failure after ST_MMAP_SET ends the same way (an mmap that failed, a
 * page that cannot be written: munmap it through the gadget first).  A
 * call that does not return in time is let go where it is: it finishes by
 * itself.  Memory is written only while the registers lead to T (or are
 * untouched), and each step that changes the thread is one ptrace request.
 */
#ifndef HT_INJECT_INT_H
#define HT_INJECT_INT_H

#include <sys/types.h>
#include <sys/user.h>

#include <limits.h>
#include <signal.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <elfutils/libdwfl.h>

#include "inject.h"
#include "modfile.h"

#if !defined(__x86_64__)
#error "the injector supports x86-64 only (registers, system call restart)"
#endif

#define CALL_GRACE_MS 10000	  /* the remote call's own allowance */
#define STOP_GRACE_MS 2000	  /* to stop, once told to */
#define STACK_NEED    (32 * 1024) /* dlopen, constructors */
#define XSTATE_MAX    16384	  /* > any XSAVE area (AMX: 11 KB) */
/* What the call writes below the red zone: the XSAVE area, the frame, the
 * data block and the path (inject-frame.c). */
#define IMAGE_MAX     (XSTATE_MAX + PATH_MAX + 1024)

#define NSEC 1000000000ULL
#define MSEC 1000000ULL

/* Why the threads of the last round were not used, for the timeout
 * message. */
struct reasons {
	int running;   /* user code, reached no system call */
	int unsafe;    /* a frame of malloc/loader/fork/exit */
	int unwind;    /* stack could not be unwound */
	int eintr;     /* in a call that would see EINTR: left */
	int dstate;    /* uninterruptible sleep */
	int maskswap;  /* in ppoll & co. before Linux 5.1 */
	int stack;     /* too little stack left */
	int inlib;     /* a frame in the library whose function is called */
	int shstk;     /* shadow stack */
	int traced;    /* traced by someone else */
	int stopped;   /* in a group-stop */
	char fn[128];  /* the last unsafe frame seen */
	char lib[128]; /* the library of inlib */
	char unwind_msg[128];
};

/* A mapping of the target, to tell how much stack a thread has left. */
struct vma {
	uint64_t lo, hi;
	int grows; /* the main stack, which grows down */
};

/* The address range of a function that may hold one of dlopen's locks. */
struct urange {
	uint64_t lo, hi;
	const char *name; /* in the Dwfl's symbol table */
};

struct ht_inject {
	pid_t pid;
	int code;
	int allow_seccomp; /* ht_inject_allow_seccomp */
	char msg[1024];
	pid_t tid;
	uint64_t pause_ns;
	uint64_t probe_ns;
	uint64_t handle;

	/* One ht_inject_load. */
	pid_t mpid;		 /* a live thread: its /proc/TID and memory */
	char root[64];		 /* /proc/TID/root */
	char rootlink[PATH_MAX]; /* its target (ht_proc_root_link), or "" */
	char libc_path[PATH_MAX];
	uint64_t dlopen_addr;
	uint64_t dlerror_addr;
	uint64_t restore_rt;	       /* glibc's __restore_rt */
	uint64_t gadget;	       /* "syscall; ret" in the libc */
	unsigned char dlopen_code[16]; /* to notice an execve */
	/* What the trampoline calls: dlopen and dlerror (ht_inject_load),
	 * or a function of a library the target has loaded already
	 * (ht_inject_call; fn_err 0, no dlerror), whose first bytes must
	 * still be fn_code when the call is made.  A thread with a frame
	 * in that library, [avoid_lo, avoid_hi), is at no safe point: it
	 * may hold a lock the function takes. */
	int calling;
	char fn_name[64];
	uint64_t fn_addr;
	uint64_t fn_err;
	unsigned char fn_code[16];
	uint64_t avoid_lo, avoid_hi;
	int saved_sigmask; /* GETSIGMASK sees a saved mask */
	Dwfl *dwfl;
	int dwfl_stale;	    /* an unwind failed: maps changed? */
	uint64_t maps_hash; /* of /proc/PID/maps at dwfl_setup */
	struct urange *ur;  /* unsafe functions, sorted */
	size_t nur, urcap;
	struct vma *fmaps; /* file mappings at dwfl_setup, sorted */
	size_t nfmaps, fmcap;
	struct reasons why;	/* this round's */
	struct reasons lastwhy; /* the last round's that saw any */

	int sfd;	  /* signalfd for SIGCHLD, or -1 */
	struct vma *vmas; /* this round's mappings, sorted */
	size_t nvma;

	/* The thread in hand. */
	pid_t cur;		      /* seized, 0 if none */
	uint64_t t_stop;	      /* when it was stopped for good */
	struct user_regs_struct regs; /* its registers at that stop */

	/* The unwinder's one-page window on the target's memory. */
	uint64_t cpage;
	int cvalid;
	unsigned char cbuf[4096];

	/* The thread's extended state and signal mask while it makes the
	 * call. */
	unsigned char xstate[XSTATE_MAX];
	size_t xlen;
	int xkind; /* 1 NT_X86_XSTATE, 2 FPREGS */
	struct user_fpregs_struct fpregs;
	uint64_t mask;

	/* The call's stack region [sp, top) (inject-frame.c): its image,
	 * the bytes it replaced, and where the frame and data block are. */
	uint64_t sp, top, frame;
	size_t ilen;
	unsigned char image[IMAGE_MAX];
	unsigned char saved[IMAGE_MAX];

	/* Called after each step of the call (ST_*), if set: the trace of
	 * HEAPTOOL_INJECT_TRACE (inject.c), or a test's. */
	void (*on_step)(struct ht_inject *h, int step);
	int trace_fd;
};

/* The steps of the call, in order (see the top of this file). */
/* One step a line: clang-format's reflow of such lists is not stable. */
/* clang-format off */
#define HT_INJ_STEPS(X)							\
	X(FRAME)							\
	X(MMAP_SET)							\
	X(BLOCKED)							\
	X(MMAP_DONE)							\
	X(CODE)								\
	X(MPROTECT_SET)							\
	X(MPROTECT_DONE)						\
	X(CALL_SET)							\
	X(CALL_SYSCALL)							\
	X(RETURNED)							\
	X(RESUME_SET)							\
	X(TRAPPED)							\
	X(XSTATE)							\
	X(MASK)								\
	X(REGS)								\
	X(DETACHED)
/* clang-format on */
enum {
#define HT_INJ_STEP_ENUM(n) ST_##n,
	HT_INJ_STEPS(HT_INJ_STEP_ENUM)
#undef HT_INJ_STEP_ENUM
	    ST_NSTEPS
};

/* What became of a thread tried: used (or usable), let go, exited, or
 * the attach is over. */
enum { T_SAFE, T_UNSAFE, T_GONE, T_FATAL };

/* A stop as decode() reads its wait status. */
enum { S_GONE, S_EVENT, S_GROUP, S_SYSCALL, S_SIGNAL };

/*
 * inject.c.  Record a failure in h: its code, the message (fmt, then
 * strerror(err) unless err is 0, then the advice: the code's own unless
 * given).  They return -1.  fail_perm chooses the advice for "not
 * permitted" from the system's ptrace policy and the target's user.
 */
int ht_inj_fail(struct ht_inject *h, int code, int err, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
int
ht_inj_fail_advice(struct ht_inject *h, int code, int err, const char *advice,
    const char *fmt, ...) __attribute__((format(printf, 5, 6)));
int ht_inj_fail_perm(struct ht_inject *h, int err, const char *what);
/* The name of step ST_* ("CALL_SET"), "?" if none. */
const char *ht_inj_step_name(int step);
/* CLOCK_MONOTONIC in nanoseconds; a sleep that EINTR does not cut. */
uint64_t ht_inj_now_ns(void);
void ht_inj_sleep_us(unsigned us);

/*
 * inject-elf.c.  find_export: the first library mapped in the target whose
 * file name match accepts, and the address of its exported function
 * symbol, into h (fn_addr, avoid_lo and avoid_hi, and its path into path
 * of PATH_MAX bytes).  Returns 0, or -1 with the failure in h (ENOLIB).
 */
int ht_inj_find_export(struct ht_inject *h, int (*match)(const char *base),
    const char *symbol, char *path);
/*
 * inject-elf.c.  Find the target's libc in its maps, and dlopen and
 * dlerror in it (or in libdl before glibc 2.34) into h, and in the libc's
 * executable segment the bytes of __restore_rt ("mov $15, %rax; syscall")
 * and of "syscall; ret" (any occurrence will do: the bytes are what runs).
 * Returns 0 or -1.
 */
int ht_inj_find_libc(struct ht_inject *h);
/*
 * Open the file of the target's module whose mapping of file offset 0 is
 * [lo, hi), path as /proc/PID/maps names it: through its map_files link,
 * else at that path inside the target's root (ht_proc_in_root; a path
 * outside it has only the link); and only if its build-id is the one in
 * the target's memory.  Returns 0 with *mf and the module's load bias, or
 * -1.
 */
int ht_inj_open_mapped(struct ht_inject *h, const char *path, uint64_t lo,
    uint64_t hi, struct ht_modfile *mf, uint64_t *bias);

/*
 * inject-unwind.c.  setup: report the target's modules to libdwfl and read
 * all it will need, before any thread stops (0 or -1); teardown frees it
 * all.  safe_point: is the thread in hand (stopped, h->regs read) at a
 * safe point; counts the reason in h->why if not.  maps_changed: did
 * modules come or go since the setup.
 */
int ht_inj_dwfl_setup(struct ht_inject *h);
void ht_inj_dwfl_teardown(struct ht_inject *h);
int ht_inj_safe_point(struct ht_inject *h);
int ht_inj_maps_changed(const struct ht_inject *h);

/*
 * inject-ptrace.c.  The one place where a failed ptrace request becomes
 * one of our codes: ESRCH (the thread exited, or is not in a stop) is
 * HT_INJ_ENOPROC, EPERM and EACCES are HT_INJ_EPERM with the advice of
 * ht_inj_fail_perm, the rest HT_INJ_ESYS; the message names the request
 * and the thread.  Returns 0, or -1 with h's code and message set and
 * errno kept.  PT() passes the request's name.  Requests whose failure
 * changes nothing we would do (a detach, an interrupt of a thread about
 * to go, a query with a fallback) call ptrace() directly.
 */
int ht_inj_ptrace(struct ht_inject *h, int req, const char *name, pid_t tid,
    void *addr, void *data);
#define PT(h, req, tid, addr, data)                                            \
	ht_inj_ptrace((h), (req), #req, (tid), (void *)(uintptr_t)(addr),      \
	    (void *)(uintptr_t)(data))
/* process_vm_readv/writev of all len bytes: 0, or -1 with errno.  pid is
 * h->mpid, a live thread (a zombie leader has no memory). */
int ht_inj_mem_read(pid_t pid, uint64_t addr, void *buf, size_t len);
int ht_inj_mem_write(pid_t pid, uint64_t addr, const void *buf, size_t len);
/* Wait for a stop of tid until deadline: 1 with *status, 0 timed out, -1
 * no such child any more. */
int ht_inj_wait_stop(struct ht_inject *h, pid_t tid, uint64_t deadline,
    int *status);
/* Classify a wait status (S_*); *sig is the stop's signal. */
int ht_inj_decode(int status, int *sig);
/* Let the thread in hand go from its stop with signal sig; t0 (if not 0)
 * is when it stopped, for the longest probe pause. */
void ht_inj_release(struct ht_inject *h, int sig, uint64_t t0);
/* The thread in hand runs: stop it and let it go.  -1 if it would not
 * stop in time (it stays seized). */
int ht_inj_stop_and_release(struct ht_inject *h, uint64_t t0);
/* The thread in hand, in a syscall-stop with registers r: is it the
 * stop at the call's exit? */
int
ht_inj_at_syscall_exit(struct ht_inject *h, const struct user_regs_struct *r);
/* Seize tid and bring it to a safe point, following it to its next system
 * calls until slice_end if follow.  Returns a T_* code; with T_SAFE the
 * thread is in hand, stopped, h->regs and h->t_stop set. */
int ht_inj_try_thread(struct ht_inject *h, pid_t tid, int follow,
    uint64_t slice_end);

/*
 * inject-frame.c.  frame_build: lay out the call's stack region below the
 * red zone of the thread in hand (h->regs, its extended state and mask
 * read) and compose its image: h->sp (the trampoline's rsp and its data
 * block), h->frame, h->top, h->image and h->ilen; nothing is written to
 * the target.  -1 if it does not fit, or the XSAVE area is not one that
 * rt_sigreturn would take.  frame_results: read the trampoline's results
 * back (0, or -1).  tramp_code: the trampoline's code, to copy to the
 * start of a page of the target.
 */
int ht_inj_frame_build(struct ht_inject *h, const char *lib);
int ht_inj_frame_results(struct ht_inject *h, uint64_t *handle, uint64_t *err);
const unsigned char *ht_inj_tramp_code(size_t *len);

/*
 * inject-call.c.  read_vmas: this round's mappings, for the stack check.
 * call: the thread in hand is at a safe point: make it dlopen(lib) (or
 * call h->fn_addr, ht_inject_call), put it back as it was, let it go (the
 * steps ST_*, above).  T_SAFE when done (h->handle and h->code tell how
 * dlopen went; h->handle is the function's result), T_UNSAFE if this
 * thread cannot be used after all and was let go untouched, T_GONE or
 * T_FATAL.
 */
void ht_inj_read_vmas(struct ht_inject *h);
int ht_inj_call(struct ht_inject *h, const char *lib, uint64_t call_deadline);

/*
 * inject-thread.c.  Try the threads, round after round, until one made the
 * call or deadline passed (start is when the load began).  Returns 0 when
 * the library is loaded, -1 with the failure in h.
 */
int ht_inj_search(struct ht_inject *h, const char *lib, uint64_t start,
    uint64_t deadline, int timeout_ms);

static inline const char *
ht_inj_basename(const char *path)
{
	const char *s = strrchr(path, '/');

	return s != NULL ? s + 1 : path;
}

#endif
