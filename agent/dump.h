/*
 * The dumps the agent writes by itself (DESIGN.md section 6): their
 * settings, the triggers that write them, their directory and the names of
 * their files.  A dump file is a snapshot (snapshot.h).  A session started
 * with a dump prefix P writes P.PID.SEQ.heap (or, when P ends in '/',
 * P + "heaptool.PID.SEQ.heap"), SEQ counting from 1 for the life of the
 * process, across sessions, so that no dump of a session overwrites one of
 * an earlier session.
 *
 * Those names can be guessed, and in a sticky directory such as /tmp anyone
 * may take one first; so a dump never opens, follows or replaces what it
 * finds at its name: it is written unseen and linked to the name only when
 * whole (file.h), and a name that is taken makes it take the next SEQ (at
 * most 64 times a dump).  P's directory is opened when the prefix is
 * checked, without following a symbolic link anywhere on its path, and
 * must belong to the process's effective user or to root and not be
 * writable by others unless sticky (src/safedir.h); the session keeps it
 * open, so its dumps go there whatever later becomes of the path.
 *
 * The triggers:
 *   - every interval_ms, by the agent's thread;
 *   - each time the session's estimated allocated bytes cross a multiple of
 *     every_bytes: the sample that crosses it (under ht_lock_global, inside
 *     a malloc hook) only wakes the agent's thread through an eventfd, and
 *     that thread writes the file;
 *   - when the process's RSS first reaches at_rss_bytes, then each time it
 *     grows by a further 10% (the agent's thread reads /proc/self/statm
 *     every HT_DUMP_RSS_MS);
 *   - when an allocation fails: the failing thread writes the dump itself,
 *     at once, before the hook returns the failure (at most one a second
 *     and HT_DUMP_MAX_FAILURES a session);
 *   - at normal exit (the destructor), if the session still runs.
 * The session's dump settings are part of it: every start disarms the
 * previous ones, stop and detach disarm them, and a dump file is never
 * written for a stopped session.  threshold_bytes folds, in the files the
 * triggers write, the sites below it (in use and allocated) into one SITE
 * record with no frames; totals stay the same.
 *
 * Arming only sets the triggers' state.  Failure dumps also need the hooks
 * to go out of line while armed (HT_HOOK_SLOW): agent.c, which arms and
 * disarms, sets that from ht_dump_arm's answer.
 */
#ifndef HT_DUMP_H
#define HT_DUMP_H

#include <stdint.h>

#define HT_DUMP_PREFIX_MAX   1024
#define HT_DUMP_RSS_MS	     200
#define HT_DUMP_MAX_FAILURES 16

struct ht_dump_cfg {
	char prefix[HT_DUMP_PREFIX_MAX + 1]; /* absolute; "" none */
	uint64_t interval_ms;		     /* 0: none */
	uint64_t every_bytes;		     /* 0: none */
	uint64_t at_rss_bytes;		     /* 0: none */
	uint64_t threshold_bytes;	     /* 0: keep every site */
	/* Not a trigger: ht_agent_start arms the final profile (final.h)
	 * with it; the dump triggers ignore it. */
	int final;
};

/* Map the snapshot buffer (ht_snapshot_init) and create the wake-up
 * eventfd.  Returns 0 or -1.  Idempotent. */
int ht_dump_init(void);

/* Whether settings need the agent's thread (interval, every-bytes or RSS
 * triggers; failure and exit dumps are written without it). */
static inline int
ht_dump_needs_thread(const struct ht_dump_cfg *cfg)
{
	return cfg->prefix[0] != '\0' &&
	    (cfg->interval_ms != 0 || cfg->every_bytes != 0 ||
		cfg->at_rss_bytes != 0);
}

/*
 * Check a prefix before a session takes it: absolute, at most
 * HT_DUMP_PREFIX_MAX bytes with a last component that leaves room for
 * .PID.SEQ.heap, and its directory safe (above) and writable and
 * searchable by this process, as the target sees its file system.  The
 * directory stays open for the ht_dump_arm of that prefix that follows.
 * Calls the kernel: not with ht_lock_global held.  Returns 0, or -1 with
 * errno set: EINVAL for a relative or empty prefix, ENAMETOOLONG, ELOOP for
 * a symbolic link on the path, EPERM for a directory of another user or
 * one that others may write in, or the lookup's or access(2)'s.
 */
int ht_dump_check_prefix(const char *prefix);

/* With ht_lock_global held, with a session running: replace its triggers
 * by cfg's (cfg NULL or its prefix "": none), with the directory that
 * ht_dump_check_prefix opened for that prefix (else the first dump opens
 * it, with the same checks).  Returns 1 if cfg armed any, 0 if none.  The
 * caller then calls ht_dump_wake() without the lock, so that the agent's
 * thread takes the new deadlines. */
int ht_dump_arm(const struct ht_dump_cfg *cfg);
/* With ht_lock_global held: disarm every trigger and close the directory
 * (the session stops). */
void ht_dump_disarm(void);
/* With ht_lock_global held: copy the running session's settings to *cfg;
 * returns 1 if it has a prefix, else 0. */
int ht_dump_armed(struct ht_dump_cfg *cfg);

/* With ht_lock_global held, from the sampler: a sample of bytes (its
 * estimate) was taken.  Returns 1 if an every-bytes dump is now due (then
 * call ht_dump_wake() once the lock is released). */
int ht_dump_note_alloc(double bytes);
/* Wake the agent's thread (eventfd).  Any thread, no lock. */
void ht_dump_wake(void);
/* The eventfd for the agent's thread to poll (-1 if none), and the read
 * that clears it. */
int ht_dump_wake_fd(void);
void ht_dump_wake_clear(void);

/* collect runs before the agent's thread writes a dump, and before a dump
 * the API asks for, never before one written inside a hook (an allocation
 * failure): agent.c has the jemalloc backend read jemalloc's samples there
 * (jemprof.h), which takes jemalloc's locks. */
void ht_dump_set_collect(void (*collect)(void));

/* The agent's thread: write the dumps now due (interval, every-bytes, RSS)
 * and return the next deadline in CLOCK_MONOTONIC milliseconds, UINT64_MAX
 * if none.  Call with the guard set and without the lock. */
uint64_t ht_dump_tick(uint64_t now_ms);

/* Inside an allocation hook that saw the allocator fail (HT_HOOK_SLOW):
 * write the failure dump now, in this thread, if the session armed one.
 * Keeps errno.  Returns at once if this thread is inside the agent (its
 * guard is set). */
void ht_dump_on_failure(void);

/* At exit (the destructor): the exit dump, if the session runs with a
 * prefix.  Guard set, lock not held. */
void ht_dump_at_exit(void);

/* Write the dump named by the running session's prefix and the next SEQ
 * now, with flags (HT_META_*).  Guard set, lock not held.  Returns 0, or
 * -1 with errno set (ENOENT: no session with a prefix runs). */
int ht_dump_now(uint32_t flags);

/* The dumps written and failed, for STATUS (src/proto.h: the counts, and
 * the last one's path, time and errno).  Takes ht_lock_global. */
struct ht_status;
void ht_dump_outcomes(struct ht_status *st);

/* For fork's child, with ht_lock_global held: close the eventfd and the
 * directories (the child has no agent thread and no session); or, if keep
 * (the child's session follows its parent's), keep the armed settings and
 * their directory, with the triggers from zero, SEQ from 1 (the names
 * carry the child's pid) and an eventfd of its own.  The counts of dumps
 * written and failed start again: they are the child's. */
void ht_dump_fork_child(int keep);

#endif
