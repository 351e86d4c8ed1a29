/*
 * Launch mode's status page for heaptool run (src/runstat.h): taken from
 * the environment by the constructor, written at the session's start and
 * at exit.  No allocation, no lock; a process without a page (attach mode,
 * an exec'd program, a page that does not check out) ignores every call.
 */
#ifndef HT_RUNPAGE_H
#define HT_RUNPAGE_H

#include "runstat.h"

/* Map the page the environment names, if it is heaptool run's (see
 * src/runstat.h), and close its descriptor.  Call once, from the
 * constructor of the profiled process. */
void ht_runpage_open(void);

/* Record state (enum ht_runstat_state) with err (an errno, or 0) and the
 * process's current ids; only in the process that took the page (a forked
 * child shares the mapping). */
void ht_runpage_set(unsigned state, int err);
/* Before ht_runpage_set(HT_RUNSTAT_NOBACKEND, 0): why, cut to fit. */
void ht_runpage_why(const char *why);

#endif
