/*
 * The agent's life: setting it up, putting its hooks in and taking them
 * out, the one way a session starts and stops (for the control channel,
 * the in-process API, launch mode and fork alike), the rescans after dlopen
 * and dlclose, and exit.  Every operation takes the locks it needs
 * (rescan_lock, then ht_lock_global) and sets the calling thread's guard
 * itself: call with neither lock held.
 *
 * The agent's modules, in layers.  A module calls, and includes the header
 * of, only modules below it; t/t0002 checks the include graph.
 *
 *   init      constructor and destructor: launch or attach mode (init.c)
 *   api       the in-process API of include/heaptool.h
 *   ctlthread the agent's thread: its start, revival and fork child
 *   control   the control channel the thread serves (its socket)
 *   status    what its STATUS reply says (status.c)
 *   agent     this file: the lifecycle
 *   hooks     the allocator entry points, and the table of hooked names
 *   record    the recorder of every allocator event (heaptool record),
 *             over recdrain (the trace file), recbuf (the threads'
 *             buffers) and recmap (blocks' identities, call sites)
 *   jemprof, miprof
 *             the backends of the allocators that sample by themselves:
 *             jemalloc's sampling (over heapv2, its heap profile parsed)
 *             and mimalloc's profiler API; they feed the tables
 *   sampler   the sampling decision (inlined into the hooks) and samples
 *   dump      the dump files' triggers, directory and names
 *   final     the final profile of an attached process, at exit and on a
 *             fatal signal (final.c)
 *   snapshot  the session encoded as a profile
 *   session   the session's state
 *   follow    the followed children's pids, for the parent's status
 *   coverage  which allocator functions of which modules a backend
 *             hooks, and why not the others; the backend in use
 *   got       GOT patching, over reloc (relocations and symbols), maps
 *             (page protections), orig (per-module originals), redirect
 *             (the originals the inline backend replaced) and wrap
 *             (the C++ operators' code, whose frames are not sites)
 *   unwind    the stack walker, over cfa (CFA programs), ehframe (FDE
 *             lookup) and dwarf (bounded readers)
 *   tables    sites, live samples, threads
 *   allocators  the modules with allocators the hooks do not reach
 *   modules   the set of loaded modules
 *   file      files made unseen and named whole
 *   mem, prim, guard, lock
 *             mapped memory; clocks, /proc/self and thread ids; the
 *             thread's guard; the agent's lock
 */
#ifndef HT_AGENT_H
#define HT_AGENT_H

#include <stddef.h>
#include <stdint.h>

#include "dump.h"

/* What the operations return besides 0.  The numbers are those of
 * include/heaptool.h, so that the in-process API returns them as they are;
 * the control channel turns them into its own error replies. */
#define HT_AGENT_ERUNNING    (-2)  /* a session is running */
#define HT_AGENT_ENOTRUNNING (-3)  /* no session is running */
#define HT_AGENT_EDETACHED   (-5)  /* a detach removed the hooks */
#define HT_AGENT_EDISABLED   (-6)  /* dormant in this process */
#define HT_AGENT_ENOMEM	     (-7)  /* setup could not map memory */
#define HT_AGENT_EHOOK	     (-10) /* the hooks could not go in */

#define HT_AGENT_EBACKEND (-11) /* the backend asked for cannot run */

/* The flags of a session's start. */
#define HT_AGENT_RESTART       0x1 /* replace a running session */
/* Children of fork start sessions of their own, with these settings. */
#define HT_AGENT_FOLLOW	       0x2
/* The backend of the session (HT_BACKEND_*, src/allocnames.h) in bits 8-11; 0:
 * the process's default (ht_agent_backend_default). */
#define HT_AGENT_BACKEND(b)    ((int)(((unsigned)(b)&0xf) << 8))
#define HT_AGENT_BACKEND_OF(f) ((((unsigned)(f)) >> 8) & 0xf)

/*
 * The backends (jemprof.h, miprof.h): look again for the allocators that
 * sample by themselves (dlsym: not from a hook), and return the mask of
 * the backends that can run here (bit HT_BACKEND_*), with in *present
 * those whose allocator is there, able or not.
 */
uint32_t ht_agent_backends(uint32_t *present);
/* The backend a start without one takes: jemalloc where its sampling is
 * on, else mimalloc where its profiler API is there, else the GOT. */
uint32_t ht_agent_backend_default(void);
/* Why backend b cannot run here: a phrase for an error reply. */
const char *ht_agent_backend_why(uint32_t b);

/*
 * Launch mode, from the constructor: set up (the tables, the dump buffer,
 * the fork handlers), start a session at rate bytes keeping at most
 * max_samples live samples (0: the default) with the dumps of cfg (NULL:
 * none) and flags (HT_AGENT_FOLLOW), then patch every GOT slot, so that
 * the first allocation after the patch is sampled.  This process writes
 * the launch profile at exit (ht_agent_exit); its children never do.
 * The backend is the one of flags (HT_AGENT_BACKEND: got or inline, the
 * hooks; jemalloc), or by default jemalloc where it samples by itself
 * (opt.prof on), else the hooks; a jemalloc session patches first and
 * starts after, as attach does, then settles the main thread's countdown
 * (ht_jemprof_settle), so that main's first allocation is sampled at the
 * rate.  Returns 0, HT_AGENT_EBACKEND (the backend asked for cannot run:
 * ht_agent_backend_why() says why; nothing started, the slots may be
 * patched), or -1 with nothing patched (the session then stopped, or never
 * started if setup failed).
 */
int ht_agent_launch(uint64_t rate, uint64_t max_samples,
    const struct ht_dump_cfg *cfg, int flags);

/* Attach mode, from the control thread: set up and patch every GOT slot,
 * with no session.  Returns 0, or HT_AGENT_ENOMEM (setup could not map
 * its memory; the next call tries again) or HT_AGENT_EHOOK, with nothing
 * patched. */
int ht_agent_attach_init(void);

/*
 * For heaptool attach bringing the agent up in a process where it is
 * loaded but does not serve (from the control thread's revival): wake it
 * if HEAPTOOL_PID had put it to sleep, and forget a session inherited
 * from the process that forked this one (ht_session_adopt), with its
 * dumps.  Returns 1 if there was such a session, else 0.
 */
int ht_agent_adopt(void);

/* 1 if this process runs a session that follows forks. */
int ht_agent_following(void);

/*
 * child runs in the child of every fork after the agent's own handler (so
 * after the session was started over, or ended), without the agent's
 * locks, with the guard set; follow says whether the child runs a session
 * of its own (HT_AGENT_FOLLOW).  The agent's thread (ctlthread.c), which is
 * above this layer, registers it from the constructor: one hook.
 */
void ht_agent_on_fork(void (*child)(int follow));

/* HEAPTOOL_PID names another process: stay out of this one (the API then
 * answers HT_AGENT_EDISABLED).  From the constructor. */
void ht_agent_disable(void);

/*
 * For a session the program starts itself (the API): set up (once) and put
 * the hooks in if no one has yet.  Returns 0, or HT_AGENT_EDISABLED,
 * HT_AGENT_ENOMEM, HT_AGENT_EDETACHED (heaptool detach removed the hooks:
 * they stay removed) or HT_AGENT_EHOOK.
 */
int ht_agent_prepare(void);

/*
 * Start a new session at rate bytes (0: 1), keeping at most max_samples
 * live samples and sites (0: the tables' default, tables.h), with the dumps
 * of cfg (NULL or prefix "": none), replacing a running one only with
 * HT_AGENT_RESTART in flags; with HT_AGENT_FOLLOW, the children this
 * process forks while it runs start sessions of their own at the fork
 * (see fork_child in agent.c), with the same bound.  The old session's
 * dumps are disarmed and its tables emptied.  Wakes the agent's thread for
 * the new deadlines.  The final profile (final.h) is armed if cfg->final,
 * else disarmed.  Returns 0, HT_AGENT_ERUNNING, or HT_AGENT_ENOMEM (the
 * tables could not be mapped: no session runs then).  The backend of
 * flags (HT_AGENT_BACKEND) is used, or HT_AGENT_EBACKEND returned with
 * nothing changed when it cannot run here.
 */
int ht_agent_start(uint64_t rate, uint64_t max_samples,
    const struct ht_dump_cfg *cfg, int flags);

/* Stop the running session and disarm its dumps; its profile stays
 * readable.  Wakes the agent's thread.  Returns 0 or
 * HT_AGENT_ENOTRUNNING. */
int ht_agent_stop(void);

/*
 * Give the running session the dumps of *cfg instead of its own (prefix "":
 * none), except its RSS trigger, which it keeps and which is copied into
 * *cfg (the API has no way to set one).  Wakes the agent's thread.
 * Returns 0 or HT_AGENT_ENOTRUNNING.
 */
int ht_agent_dumps(struct ht_dump_cfg *cfg);

/* 1 if the GOT slots are patched (the hooks are in). */
int ht_agent_hooked(void);

/* Rescan the modules and patch every slot (again): returns the number of
 * slots patched now (0 if all were already), or -1. */
int ht_agent_hook(void);

/* Stop the session, disarm the final profile, put every patched slot and
 * its page protection back, and give the tables back to the system (the
 * profile goes with them; the library stays mapped): returns the number of
 * slots restored, or -1. */
int ht_agent_unhook(void);

/* Whether hooked, the slots patched and the modules in the current set,
 * taken together between two rescans (a module counted there has had its
 * slots patched). */
void ht_agent_state(int *hooked, size_t *slots, size_t *modules);

/* The module list may have changed (a dlopen not seen by the hook): rescan
 * and patch new modules, if the hooks are in.  Not with ht_lock_global or
 * rescan_lock held; the loader's lock may be. */
void ht_agent_modules_changed(void);

/* At exit (the destructor): the session's exit dump, if it runs with a
 * prefix, and its final profile, if armed (final.h); then, in launch mode
 * (output names the profile; NULL or "" in attach mode), stop the session
 * and write its profile to output.  Returns 1 if the profile was written,
 * 0 if there was none to write (or the calling thread is inside the agent:
 * exit() from a signal handler that interrupted it), -1 with errno if
 * writing it failed. */
int ht_agent_exit(const char *output);

struct ht_record_cfg;
/*
 * heaptool record: set up and put the hooks in if no one has yet (as
 * ht_agent_prepare), start recording into cfg->fd (record.h) and send
 * every hook's call to the recorder.  Returns 0, an HT_AGENT_E* code, or
 * an errno value of ht_record_start (EBUSY: a recording runs).  The
 * descriptor is the recorder's (or closed) whatever happens.
 */
int ht_agent_record(const struct ht_record_cfg *cfg);
/* Stop the recording, if one runs, as state (enum ht_record_state). */
void ht_agent_record_stop(uint32_t state);
/* The agent's thread, between requests: ht_record_tick, and the hooks'
 * way back to their fast paths once a recording ended by itself. */
uint64_t ht_agent_record_tick(uint64_t now_ms);

#endif
