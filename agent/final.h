/*
 * The final profile of an attached process: when a process whose session
 * heaptool start began (the control channel's START, unless it said
 * --no-final-dump) ends, its profile would go with it; so the agent
 * writes it, once, as the process exits (the destructor) or on a fatal
 * signal (SIGSEGV, SIGBUS, SIGABRT, SIGFPE, SIGILL), to
 * DIR/final.PID.START.heap.  START is the process's start time (field 22
 * of /proc/self/stat), so a reused pid never names it.  DIR is the
 * process's own per-user state directory, as its environment says when
 * the agent is loaded: $XDG_STATE_HOME/heaptool, else
 * $HOME/.local/state/heaptool; when that cannot be made or is not safe
 * (src/safedir.h), /var/tmp/heaptool-UID.  It is made (mode 0700) and
 * opened when a session arms the final profile, and kept open.
 *
 * The signals.  Their handler is put only where the program left the
 * default action (termination, and a core dump): a program that handles
 * one itself keeps its handler, and what it does is its own business (if
 * it ends in exit() the destructor writes the profile; if it ends in
 * abort() with SIGABRT at its default, the handler here does).  A handler
 * the program installs later replaces this one; if it calls this one in
 * turn (chaining to the action it found), the profile is written and the
 * call returns to it.  Otherwise the handler writes the profile, puts the
 * default action back and queues the same signal, with the same siginfo,
 * to the same thread (rt_tgsigqueueinfo): the signal is blocked while the
 * handler runs, so it is delivered the moment the handler returns, at the
 * instruction that faulted, and the process dies of it exactly as it
 * would have: same signal, same core dump, same wait status.  Meanwhile
 * its other threads run on for as long as the write takes.
 *
 * The rule for writing from a signal handler: the interrupted thread may
 * hold any lock of the process.  So the profile is written only by a
 * thread that was not inside the agent (its guard clear: the guard is set
 * before any agent lock is taken, so such a thread holds none of ours);
 * ht_lock_global, which another thread may hold, is waited for a bounded
 * time (holders never block); the allocator is never called (not even
 * mallinfo2: the crash may be inside malloc, with an arena lock held), nor
 * stdio, nor the loader: only system calls and the agent's own memory.  A
 * fault while writing (the heap or the tables may be what is corrupt)
 * returns to the handler by siglongjmp, the half-written file vanishes
 * (it has no name until it is whole), and the signal is passed on as
 * above.  A second thread that crashes meanwhile waits a bounded time for
 * the first to finish, then dies as it would have.
 *
 * Detach disarms the final profile and puts the default action back
 * wherever this handler still is; the handler's code stays mapped (the
 * library is never unloaded), so a program that saved it can still call
 * it, and then it only passes the signal on.
 */
#ifndef HT_FINAL_H
#define HT_FINAL_H

#include <stddef.h>

#define HT_FINAL_DIR_MAX 512

/* From the constructor, in every mode: the directory the final profile
 * would go to, from the environment (nothing is made yet). */
void ht_final_setup(void);

/*
 * Arm (on) or disarm the final profile: when a session starts (on if its
 * START asked for the final profile) and at detach (off).  Arming makes
 * and opens the directory and names the file (once: the same for the life
 * of the process), and puts the handler of each fatal signal whose action
 * is the default.  No agent lock held.  Returns 0, or -1 if it could not
 * be armed (no directory: then it is off).
 */
int ht_final_arm(int on);

/* Whether armed; its directory into dir[len] ("" if never opened). */
int ht_final_state(char *dir, size_t len);

/* At exit (the destructor), with the guard set and no lock held: write
 * the final profile if armed and a session was started (running or
 * stopped). */
void ht_final_at_exit(void);

/* For fork's child, with the agent's locks held.  A child whose session
 * follows its parent's (follow: start --follow-forks) keeps the final
 * profile if the parent had it armed, under its own name; any other
 * child has no session: disarm, put the default actions back, forget the
 * directory and the name (another pid's). */
void ht_final_fork_child(int follow);

#endif
