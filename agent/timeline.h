/*
 * The session's memory over time: a bounded list of points (time since the
 * session's start, in use and its variance, allocated, RSS, samples), at
 * most one every HT_TIMELINE_PERIOD_MS while a session runs: one each
 * period from the agent's thread where it runs, and one at a sample when
 * the period has passed.  When the list is full its older half is thinned to every other
 * point, so a long session keeps its whole span in HT_TIMELINE_POINTS,
 * recent points dense and old ones sparse, never more.  A new session
 * starts a new list; a stopped one keeps its list for its profile.
 */
#ifndef HT_TIMELINE_H
#define HT_TIMELINE_H

#include <stddef.h>
#include <stdint.h>

#include "profile.h"

#define HT_TIMELINE_PERIOD_MS 100
#define HT_TIMELINE_POINTS    2048

/* From the agent's thread, outside the agent's locks, at monotonic time
 * now_ms: take a point if one is due.  Returns when the next one is due
 * (monotonic ms). */
uint64_t ht_timeline_tick(uint64_t now_ms);

/* From a hook that took a sample, inside the agent (guard held) but
 * outside its locks: take a point if one is due.  heaptool run has no
 * agent's thread unless a trigger needs one, so its points come from here
 * (as the samples come; RSS read then). */
void ht_timeline_poke(void);

/* With ht_lock_global held: the number of points of the session's list,
 * and its point i, the oldest first. */
size_t ht_timeline_count(void);
const struct ht_timeline_rec *ht_timeline_get(size_t i);

#endif
