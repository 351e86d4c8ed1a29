/*
 * The session, as state: its epoch, rate, state, totals and peak, and the
 * history of modules seen while it ran (so frames of a library closed since
 * still have a module in the profile).  Changing it is agent.c's business
 * (ht_agent_start, ht_agent_stop), which arms and disarms the session's
 * dumps around these calls; nothing here calls above the tables.
 * Everything is guarded by ht_lock_global except ht_session_gen, which the
 * malloc fast path reads without a lock.
 *
 * Every start and every stop bumps ht_session_gen.  A thread compares the
 * generation it last set up under with ht_session_gen on each allocation;
 * when they differ it starts over (fresh countdown at the current rate,
 * nothing carried), so nothing of an old session leaks into a new one.
 */
#ifndef HT_SESSION_H
#define HT_SESSION_H

#include <stdint.h>
#include <sys/types.h>

#include "modules.h"
#include "profile.h"

#define HT_MAX_MODULE_HISTORY 4096

struct ht_session {
	uint64_t epoch; /* 0 before the first start */
	uint64_t rate;
	uint32_t state; /* enum ht_session_state */
	pid_t pid;	/* the process the session belongs to */
	uint64_t start_ns;
	uint64_t end_ns;
	double inuse_bytes; /* estimate, sum over live samples */
	double inuse_var;   /* its variance (the timeline's band) */
	double alloc_bytes; /* estimate of what the session allocated */
	/* Its allocations by size (profile.h's buckets): estimates of their
	 * number and bytes. */
	double size_objects[HT_SIZE_BUCKETS];
	double size_bytes[HT_SIZE_BUCKETS];
	double peak_bytes;
	uint64_t peak_ns;
	uint64_t peak_gen; /* bumped at every new peak */
	uint64_t samples;
	uint64_t dropped;	/* samples lost to full tables */
	uint64_t lost_frees;	/* frees we could not account */
	uint64_t truncated;	/* stacks cut short (dlclose in progress) */
	uint32_t follow;	/* children start sessions of their own */
	pid_t parent;		/* this session follows that process's, or 0 */
	uint64_t max_samples;	/* the tables' bound (ht_tables_bound) */
	double dropped_bytes;	/* what the dropped samples stood for */
	double dropped_objects; /* (estimates, exact at rate 1) */
	uint32_t drop_why;	/* HT_DROP_* (profile.h): why they were */
	uint32_t released;	/* the tables were given back (detach) */
	/* How the samples are taken (HT_BACKEND_*, src/allocnames.h): set by
	 * agent.c with the start.  A backend that reads the allocator's own
	 * samples (jemprof.h) fills the tables itself, and says here which
	 * figures it cannot give (HT_META_PEAK_UNKNOWN, ...) and how many
	 * samples are live; rate_asked is the rate the start asked for,
	 * which such a backend may have rounded (rate). */
	uint32_t backend;
	uint32_t native_flags;
	uint64_t native_live;
	uint64_t rate_asked;
};

extern struct ht_session ht_session __attribute__((visibility("hidden")));
extern unsigned ht_session_gen __attribute__((visibility("hidden")));

/* With ht_lock_global held.  Start a new session at rate bytes keeping at
 * most max_samples live samples (0: the tables' default), with a new epoch,
 * every table emptied (mapped again after a release), follow and parent 0.
 * Returns 0, or -1 if the tables could not be mapped (a running session is
 * then stopped, its profile released). */
int ht_session_start(uint64_t rate, uint64_t max_samples);
/* With ht_lock_global held: stop the running one (its profile stays). */
void ht_session_stop(void);
/* With ht_lock_global held, no session running: give the tables and the
 * module history back to the system (detach).  The profile is gone with
 * them (ht_session.released says so) until the next start.  Safe however
 * many hooks are still running on other threads: see tables.h. */
void ht_session_release(void);
/* With ht_lock_global held, in the child of a fork: the session is the
 * parent's; this process has none (state HT_STATE_NONE) and samples
 * nothing, while the profile stays as the parent left it. */
void ht_session_forget(void);
/*
 * With ht_lock_global held, in a process that inherited the session of
 * the process that forked it, without following it (the agent comes up in
 * a fork's child later): forget all of it, tables, totals and modules,
 * and belong to this process, with no session (HT_STATE_NONE).  The epoch
 * goes on from the parent's: a thread's record of the epoch in which its
 * thread index is valid (the parent's) never matches a later session.
 * Returns 1 if there was such a session, 0 if the session was this
 * process's already.
 */
int ht_session_adopt(void);

/* With ht_lock_global held: remember the modules of set for the profile. */
void ht_session_note_modules(const struct ht_modset *set);
size_t ht_session_module_count(void);
/* Fill rec with remembered module i. */
void ht_session_module_get(size_t i, struct ht_module_rec *rec);

#endif
