/*
 * The session: its epoch, rate, state, totals and peak, and the history of
 * modules seen while it ran (so frames of a library closed since still have
 * a module in the profile).  Everything is guarded by ht_lock_global except
 * ht_session_gen, which the malloc fast path reads without a lock.
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

#define HT_MAX_MODULE_HISTORY	4096

struct ht_session {
	uint64_t	epoch;		/* 0 before the first start */
	uint64_t	rate;
	uint32_t	state;		/* enum ht_session_state */
	pid_t		pid;		/* the process the session belongs to */
	uint64_t	start_ns;
	uint64_t	end_ns;
	double		inuse_bytes;	/* estimate, sum over live samples */
	double		peak_bytes;
	uint64_t	peak_ns;
	uint64_t	peak_gen;	/* bumped at every new peak */
	uint64_t	samples;
	uint64_t	dropped;	/* samples lost to full tables */
	uint64_t	lost_frees;	/* frees we could not account */
	uint64_t	truncated;	/* stacks cut short (dlclose in progress) */
};

extern struct ht_session	ht_session;
extern unsigned			ht_session_gen;

/* With ht_lock_global held.  Start a new session (new epoch; every table
 * emptied; no dumps armed: see ht_dump_arm) at rate bytes; stop the running
 * one (its profile stays; its dumps are disarmed). */
void	ht_session_start(uint64_t rate);
void	ht_session_stop(void);

/* With ht_lock_global held: remember the modules of set for the profile. */
void	ht_session_note_modules(const struct ht_modset *set);
size_t	ht_session_module_count(void);
/* Fill rec with remembered module i. */
void	ht_session_module_get(size_t i, struct ht_module_rec *rec);

uint64_t	ht_now_ns(void);	/* CLOCK_REALTIME in ns */

#endif
