/*
 * Live profiles of one target, for a long-running reader (heaptool
 * serve): each taken from the target's agent over its control socket
 * (ctl.h), as heaptool report -p PID takes one, decoded, with a
 * symbolizer for its modules.
 *
 * ht_live_current keeps the last profile for a while (max_age), so that a
 * burst of readers asks the agent once; its symbolizer is carried over to
 * the next profile as long as the module map stays the same, so that what
 * it looked up is not looked up again.  ht_live_take always asks the agent
 * (the two ends of a delta) and hands the profile over.
 *
 * Nothing here prints: a failure is one line in the caller's buffer,
 * "target PID: why; what to do", e.g. for an HTTP 503.  The process is
 * the one that had pid when the handle was made: a pid taken over by
 * another process (another start time) is a failure.  A handle is not
 * thread-safe; the caller serializes the calls and the use of what they
 * return.
 */
#ifndef HT_LIVE_H
#define HT_LIVE_H

#include <sys/types.h>

#include <stddef.h>
#include <stdint.h>

#include "profile.h"
#include "symbolize.h"

/* A profile and its symbolizer, and when it was taken (CLOCK_MONOTONIC,
 * ns). */
struct ht_live_snap {
	struct ht_profile *prof;
	struct ht_sym *sym;
	uint64_t taken_ns;
};

struct ht_live;

/*
 * A source for the live process pid, started at start (ht_proc's
 * start_time), whose modules' files are looked for as files says (may be
 * NULL; copied by ht_target_sym's symbolizers, not kept); max_age_ns is how
 * long ht_live_current keeps a profile.  NULL if out of memory.
 */
struct ht_live *ht_live_new(pid_t pid, uint64_t start,
    const struct ht_sym_opts *files, uint64_t max_age_ns);
void ht_live_free(struct ht_live *);

/*
 * The current profile: the kept one if younger than max_age, else a new
 * one.  Stores a pointer, valid until the next call on the handle or
 * ht_live_free, in *snap and returns 0, or -1 with the reason in
 * err[errlen].
 */
int ht_live_current(struct ht_live *, const struct ht_live_snap **snap,
    char *err, size_t errlen);

/* A new profile, now, into *snap (the caller's: ht_live_snap_free).
 * Returns 0, or -1 with the reason in err[errlen]. */
int ht_live_take(struct ht_live *, struct ht_live_snap *snap, char *err,
    size_t errlen);
void ht_live_snap_free(struct ht_live_snap *);

/* CLOCK_MONOTONIC in ns. */
uint64_t ht_live_now_ns(void);

#endif
