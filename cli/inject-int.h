/*
 * The injector's parts (inject.h is the contract), behind this one
 * private header:
 *   inject.c         the interface, the checks of the process, messages;
 *   inject-elf.c     the target's libc and the addresses of dlopen and
 *                    dlerror in it;
 *   inject-unwind.c  libdwfl on a stopped thread: is it at a safe point;
 *   inject-ptrace.c  ptrace requests and stops, the target's memory;
 *   inject-call.c    the remote call of dlopen and the thread's restore;
 *   inject-thread.c  which threads to try, in which order, until when.
 * The order of the work and the reasons behind it are told at the top of
 * inject.c.  Every function here works on the handle of one
 * ht_inject_load, from the one thread that is the tracer.
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

#define CALL_GRACE_MS		10000	/* the remote call's own allowance */
#define STOP_GRACE_MS		2000	/* to stop, once told to */
#define STACK_NEED		(32 * 1024)	/* dlopen, constructors */
#define MAXDEFER		32
#define XSTATE_MAX		16384	/* > any XSAVE area (AMX: 11 KB) */

#define NSEC			1000000000ULL
#define MSEC			1000000ULL

/* Why the threads of the last round were not used, for the timeout
 * message. */
struct reasons {
	int	running;	/* user code, reached no system call */
	int	unsafe;		/* a frame of malloc/loader/fork/exit */
	int	unwind;		/* stack could not be unwound */
	int	eintr;		/* in a call that would see EINTR: left */
	int	dstate;		/* uninterruptible sleep */
	int	sigsegv;	/* blocks or ignores SIGSEGV */
	int	stack;		/* too little stack left */
	int	shstk;		/* shadow stack */
	int	traced;		/* traced by someone else */
	int	stopped;	/* in a group-stop */
	char	fn[128];	/* the last unsafe frame seen */
	char	unwind_msg[128];
};

/* A mapping of the target, to tell how much stack a thread has left. */
struct vma {
	uint64_t	lo, hi;
	int		grows;		/* the main stack, which grows down */
};

/* The address range of a function that may hold one of dlopen's locks. */
struct urange {
	uint64_t	 lo, hi;
	const char	*name;		/* in the Dwfl's symbol table */
};

struct ht_inject {
	pid_t		 pid;
	int		 code;
	int		 allow_seccomp;	/* ht_inject_allow_seccomp */
	char		 msg[1024];
	pid_t		 tid;
	uint64_t	 pause_ns;
	uint64_t	 probe_ns;
	uint64_t	 handle;

	/* One ht_inject_load. */
	char		 root[64];	/* /proc/PID/root */
	char		 libc_path[PATH_MAX];
	uint64_t	 dlopen_addr;
	uint64_t	 dlerror_addr;
	unsigned char	 dlopen_code[16];	/* to notice an execve */
	Dwfl		*dwfl;
	int		 dwfl_stale;	/* an unwind failed: maps changed? */
	uint64_t	 maps_hash;	/* of /proc/PID/maps at dwfl_setup */
	struct urange	*ur;		/* unsafe functions, sorted */
	size_t		 nur, urcap;
	struct reasons	 why;		/* this round's */
	struct reasons	 lastwhy;	/* the last round's that saw any */

	int		 sfd;		/* signalfd for SIGCHLD, or -1 */
	struct vma	*vmas;		/* this round's mappings, sorted */
	size_t		 nvma;

	/* The thread in hand. */
	pid_t		 cur;		/* seized, 0 if none */
	uint64_t	 t_stop;	/* when it was stopped for good */
	struct user_regs_struct regs;	/* its registers at that stop */
	siginfo_t	 defer[MAXDEFER];	/* signals held back */
	int		 ndefer;

	/* The unwinder's one-page window on the target's memory. */
	uint64_t	 cpage;
	int		 cvalid;
	unsigned char	 cbuf[4096];

	/* The thread's extended state while it makes the call. */
	unsigned char	 xstate[XSTATE_MAX];
	size_t		 xlen;
	int		 xkind;		/* 1 NT_X86_XSTATE, 2 FPREGS */
	struct user_fpregs_struct fpregs;
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
int		 ht_inj_fail(struct ht_inject *h, int code, int err,
		    const char *fmt, ...)
		    __attribute__((format(printf, 4, 5)));
int		 ht_inj_fail_advice(struct ht_inject *h, int code, int err,
		    const char *advice, const char *fmt, ...)
		    __attribute__((format(printf, 5, 6)));
int		 ht_inj_fail_perm(struct ht_inject *h, int err,
		    const char *what);
/* CLOCK_MONOTONIC in nanoseconds; a sleep that EINTR does not cut. */
uint64_t	 ht_inj_now_ns(void);
void		 ht_inj_sleep_us(unsigned us);

/*
 * inject-elf.c.  Find the target's libc in its maps, and dlopen and
 * dlerror in it (or in libdl before glibc 2.34) into h.  Refuses a
 * process that maps page 0 (the call returns there).  Returns 0 or -1.
 */
int		 ht_inj_find_libc(struct ht_inject *h);
/*
 * Open the file of the target's module path whose mapping of file offset 0
 * is [lo, hi): through the target's root, else (unless hi is lo) its
 * map_files link; and only if its build-id is the one in the target's
 * memory.  Returns 0 with *mf and the module's load bias, or -1.
 */
int		 ht_inj_open_mapped(struct ht_inject *h, const char *path,
		    uint64_t lo, uint64_t hi, struct ht_modfile *mf,
		    uint64_t *bias);

/*
 * inject-unwind.c.  setup: report the target's modules to libdwfl and read
 * all it will need, before any thread stops (0 or -1); teardown frees it
 * all.  safe_point: is the thread in hand (stopped, h->regs read) at a
 * safe point; counts the reason in h->why if not.  maps_changed: did
 * modules come or go since the setup.
 */
int		 ht_inj_dwfl_setup(struct ht_inject *h);
void		 ht_inj_dwfl_teardown(struct ht_inject *h);
int		 ht_inj_safe_point(struct ht_inject *h);
int		 ht_inj_maps_changed(const struct ht_inject *h);

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
int		 ht_inj_ptrace(struct ht_inject *h, int req, const char *name,
		    pid_t tid, void *addr, void *data);
#define PT(h, req, tid, addr, data)					\
	ht_inj_ptrace((h), (req), #req, (tid), (void *)(uintptr_t)(addr), \
	    (void *)(uintptr_t)(data))
/* process_vm_readv/writev of all len bytes: 0, or -1 with errno. */
int		 ht_inj_mem_read(pid_t pid, uint64_t addr, void *buf,
		    size_t len);
int		 ht_inj_mem_write(pid_t pid, uint64_t addr, const void *buf,
		    size_t len);
/* Wait for a stop of tid until deadline: 1 with *status, 0 timed out, -1
 * no such child any more. */
int		 ht_inj_wait_stop(struct ht_inject *h, pid_t tid,
		    uint64_t deadline, int *status);
/* Classify a wait status (S_*); *sig is the stop's signal. */
int		 ht_inj_decode(int status, int *sig);
/* Let the thread in hand go from its stop with signal sig; t0 (if not 0)
 * is when it stopped, for the longest probe pause. */
void		 ht_inj_release(struct ht_inject *h, int sig, uint64_t t0);
/* The thread in hand runs: stop it and let it go.  -1 if it would not
 * stop in time (it stays seized). */
int		 ht_inj_stop_and_release(struct ht_inject *h, uint64_t t0);
/* Seize tid and bring it to a safe point, following it to its next system
 * calls until slice_end if follow.  Returns a T_* code; with T_SAFE the
 * thread is in hand, stopped, h->regs and h->t_stop set. */
int		 ht_inj_try_thread(struct ht_inject *h, pid_t tid, int follow,
		    uint64_t slice_end);

/*
 * inject-call.c.  read_vmas: this round's mappings, for the stack check.
 * call: the thread in hand is at a safe point: make it dlopen(lib), put it
 * back as it was, let it go.  T_SAFE when done (h->handle and h->code tell
 * how dlopen went), T_UNSAFE if this thread cannot be used after all and
 * was let go untouched, T_GONE or T_FATAL.
 */
void		 ht_inj_read_vmas(struct ht_inject *h);
int		 ht_inj_call(struct ht_inject *h, const char *lib,
		    uint64_t call_deadline);

/*
 * inject-thread.c.  Try the threads, round after round, until one made the
 * call or deadline passed (start is when the load began).  Returns 0 when
 * the library is loaded, -1 with the failure in h.
 */
int		 ht_inj_search(struct ht_inject *h, const char *lib,
		    uint64_t start, uint64_t deadline, int timeout_ms);

static inline const char *
ht_inj_basename(const char *path)
{
	const char	*s = strrchr(path, '/');

	return s != NULL ? s + 1 : path;
}

#endif
