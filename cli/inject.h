/*
 * The injector: make a running process dlopen() a library, or call a
 * function of a library it has loaded, with ptrace, without stopping it
 * as a whole and without ever leaving it broken.
 *
 * One thread is seized (PTRACE_SEIZE + PTRACE_INTERRUPT, the others keep
 * running), and only at a safe point: stopped in a system call, its stack
 * (unwound with libdwfl from our registers and memory reads) free of any
 * frame of the allocator, the dynamic loader, fork or exit, so that it holds
 * none of the locks dlopen needs.  Threads blocked in a system call are tried
 * first; running threads are followed to their next system call; a thread
 * that does not qualify is let go at once.  The chosen thread, its signals
 * blocked, maps a page, calls the libc's dlopen(path, RTLD_NOW) (dlerror()
 * too if that fails) from a trampoline there, and unmaps it; then its
 * general and extended (FPU/SSE/AVX) registers, its signal mask and the
 * stack bytes written are put back, the interrupted system call completes
 * or restarts as the kernel would have done it, the signals that arrived
 * meanwhile are delivered by the kernel, and the thread is detached.
 *
 * The tracer (the caller) may die at any instant, SIGKILL included: the
 * thread then finishes the call by itself, puts itself back through an
 * rt_sigreturn of a signal frame that holds its state (built on its stack
 * before anything else changes), and resumes where it was, with or
 * without the library loaded; at worst a page stays mapped.  The one
 * difference: a system call interrupted with a timeout (poll, nanosleep)
 * starts again with its full timeout, or fails with EINTR if it was
 * already restarted once.
 *
 * Refused, with a one-line message saying what to do: no such process, a
 * zombie, a stopped (SIGSTOP) process (left stopped), a process already
 * traced, a statically linked or non-glibc process, no permission.  A
 * process in which no thread reaches a safe point within the timeout is left
 * running untouched.
 *
 * x86-64 only; the library path is resolved in the target's mount namespace
 * (it is checked through /proc/TID/root first).  The process's /proc files
 * and memory are read through a live thread (TID): a main thread that
 * called pthread_exit is a zombie without them (proc.h).  Its files (the
 * libc, the modules whose stacks are unwound) are read as it maps them
 * (modfile.h), never at the same path in our file system.  The calls of one handle
 * must come from one thread (the ptrace tracer is a thread), and the caller
 * must not reap the target's threads with wait() meanwhile.  During
 * ht_inject_load SIGCHLD is blocked in the calling thread and the SIGCHLD
 * of the tracee's stops are consumed (through a signalfd); the previous
 * mask is restored on return.
 */
#ifndef HT_INJECT_H
#define HT_INJECT_H

#include <sys/types.h>

#include <stdint.h>

/*
 * Error codes and the default advice of each, in one list.  The advice
 * ends the message of ht_inject_error(); a few errors (EPERM) give a more
 * specific one.
 */
#define HT_INJECT_CODES(X)                                                     \
	X(OK, "")                                                              \
	X(ENOPROC, "check the PID")                                            \
	X(EPERM,                                                               \
	    "run as the target's user or as root, or set "                     \
	    "kernel.yama.ptrace_scope to 0")                                   \
	X(ETIMEDOUT, "try again, or with a longer timeout")                    \
	X(ESTATIC,                                                             \
	    "heaptool loads its agent with glibc's dynamic loader, so "        \
	    "neither attach nor run can profile a program without it; "        \
	    "link the program dynamically against glibc")                      \
	X(EZOMBIE,                                                             \
	    "the process has exited; its parent has not "                      \
	    "reaped it yet")                                                   \
	X(ESTOPPED, "resume it with kill -CONT first")                         \
	X(ETRACED, "detach the debugger or tracer first")                      \
	X(EUNSUPP, "start the program with heaptool run instead")              \
	X(ESECCOMP,                                                            \
	    "if its filter allows what dlopen does (opening, "                 \
	    "reading and mapping a file), attach with --ignore-seccomp")       \
	X(ENOLIB,                                                              \
	    "install the library where the target can see it "                 \
	    "(its mount namespace and user)")                                  \
	X(EDLOPEN,                                                             \
	    "check that the library matches the target "                       \
	    "(architecture, glibc version) and that its user can "             \
	    "read it")                                                         \
	X(ECRASH, "the target died while loading the library")                 \
	X(EHUNG,                                                               \
	    "the target's thread is still inside dlopen; it "                  \
	    "resumes where it was when dlopen returns")                        \
	X(ESYS, "this is unexpected; please report it")

enum ht_inject_code {
#define HT_INJECT_ENUM(name, advice) HT_INJ_##name,
	HT_INJECT_CODES(HT_INJECT_ENUM)
#undef HT_INJECT_ENUM
	    HT_INJ_NCODES
};

struct ht_inject;

/* A handle for process pid.  Touches nothing yet.  NULL if out of memory. */
struct ht_inject *ht_inject_new(pid_t pid);

/*
 * A process under a seccomp filter is refused (ESECCOMP): the filter may
 * kill it on a system call that dlopen makes, and reading it back needs
 * CAP_SYS_ADMIN and a BPF interpreter, which this module does not have.
 * ht_inject_allow_seccomp(h, 1) lets the caller take that risk knowingly.
 */
void ht_inject_allow_seccomp(struct ht_inject *h, int allow);

/*
 * Make the target dlopen(lib_path, RTLD_NOW).  lib_path is a path in the
 * target's file system view (absolute is best: a relative name is looked up
 * by the target's loader).  timeout_ms bounds the search for a safe point
 * (<= 0: 5000); the remote call itself may take up to 10 s more before it
 * is declared hung.  Returns 0 when the library is loaded (dlopen of a
 * library already loaded only counts a reference); -1 otherwise, with the
 * code and message in the handle.  May be called again on the same handle.
 */
int ht_inject_load(struct ht_inject *h, const char *lib_path, int timeout_ms);

/*
 * Make the target call symbol, a function of no argument returning long,
 * exported by a library it has loaded already: the first mapped whose file
 * name (the path's last component) match accepts.  The function is found
 * in the library's dynamic symbols as the target maps it (its build-id
 * checked, as libc's is), and called as ht_inject_load calls dlopen, with
 * every guarantee above, from a thread at a safe point that has no frame
 * in that library either (the function may take a lock the library's own
 * code holds).  Returns 0 when the call was made, its return value in
 * ht_inject_handle(); -1 otherwise (ENOLIB: no such library, or it does
 * not export symbol).
 */
int ht_inject_call(struct ht_inject *h, int (*match)(const char *base),
    const char *symbol, int timeout_ms);

/* The last failure as one line: what, why, what to do; "" if none. */
const char *ht_inject_error(const struct ht_inject *h);

/* The last failure's code, HT_INJ_OK after a success. */
int ht_inject_errcode(const struct ht_inject *h);

/* The name of a code without its prefix ("ETIMEDOUT"); "?" if unknown. */
const char *ht_inject_codename(int code);

/*
 * After ht_inject_load or ht_inject_call: the thread that made the call (0
 * if none), the time it was stopped in nanoseconds (from the interrupt, or
 * from the system call stop where it was caught, to the detach: the remote
 * call included), the longest stop of any other thread that was examined
 * and let go, and the handle dlopen returned in the target (or the
 * function's return value).
 */
pid_t ht_inject_tid(const struct ht_inject *h);
uint64_t ht_inject_pause_ns(const struct ht_inject *h);
uint64_t ht_inject_probe_pause_ns(const struct ht_inject *h);
uint64_t ht_inject_handle(const struct ht_inject *h);

/*
 * Release the handle.  No thread stays traced after ht_inject_load has
 * returned, except one that did not stop within 2 s of PTRACE_INTERRUPT
 * (uninterruptible sleep): the next ht_inject_load, or this, tries once
 * more to let it go, and the kernel does when the tracer exits.
 */
void ht_inject_free(struct ht_inject *h);

#endif
