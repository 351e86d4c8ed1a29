/*
 * The jemalloc backend: where the process's jemalloc samples by itself
 * (built with --enable-prof and started with opt.prof on, e.g.
 * MALLOC_CONF=prof:true,prof_active:false), a session is mapped onto its
 * controls instead of the GOT hooks' own sampling:
 *
 *   start  prof.reset with lg_sample from the rate (a power of 2), which
 *          forgets every earlier sample (a new epoch: the threads' old
 *          records are expired, frees of their blocks change nothing
 *          seen), then prof.active true
 *   stop   prof.active false, and the profile collected once more, so
 *          that it stays readable as it was at the stop
 *
 * Our unwinder replaces jemalloc's (experimental.hooks.prof_backtrace),
 * with jemalloc's frames and the agent's stripped: the first frame is the
 * caller of malloc.  The profile comes from jemalloc's own samples:
 * ht_jemprof_collect() has jemalloc write its heap profile (prof.dump) into
 * a memfd only this process can reach (/proc/self/fd/N), parses it with
 * bounded code that allocates nothing and turns each stack into a site of
 * the session's tables, unsampled as jeprof does and with the variances of
 * sampling.h (ht_sample_aggregate), so that snapshots encode it as they
 * encode the GOT backend's.  jemalloc keeps no peak, and without
 * opt.prof_accum no allocated totals: the session's native_flags say so
 * (HT_META_PEAK_UNKNOWN, HT_META_ALLOC_UNKNOWN).
 *
 * mallctl is found with dlsym, from the agent's thread or a call of the
 * API, never from a hook; prof.dump takes jemalloc's locks, so collecting
 * is never done inside a hook or with ht_lock_global held.
 */
#ifndef HT_JEMPROF_H
#define HT_JEMPROF_H

#include <stdint.h>

/* What the process's jemalloc offers. */
#define HT_NATIVE_ABSENT  0 /* no such allocator in the process */
#define HT_NATIVE_PRESENT 1 /* there, but it cannot sample for us */
#define HT_NATIVE_READY	  2 /* the backend can run */

/* Look for jemalloc's mallctl and read opt.prof.  Returns HT_NATIVE_*,
 * also kept for ht_jemprof_state().  Not from a hook; without the agent's
 * locks. */
int ht_jemprof_detect(void);
/* The last detection's result (HT_NATIVE_ABSENT before any). */
int ht_jemprof_state(void);
/* Why the backend cannot run (for an error reply): a phrase. */
const char *ht_jemprof_why(void);
/* The path of the module that holds jemalloc (as the module set names
 * it), once a session was prepared; NULL before, or where it is the
 * executable. */
const char *ht_jemprof_module(void);
/* Whether the jemalloc found is in a shared library (GOT slots lead to
 * it, so the hooks see every block it hands out), not the executable. */
int ht_jemprof_shared(void);

/* jemalloc's rate for rate bytes: the nearest power of 2 (in log2
 * terms), rate 1 giving lg_sample 0.  Returns 2^lg. */
uint64_t ht_jemprof_round(uint64_t rate, unsigned *lg);

/* Before a session starts: put our unwinder in, stop sampling and forget
 * every sample (prof.reset at rate's lg_sample).  Returns 0, or -1 (the
 * backend cannot run; nothing changed but prof.active, now false).
 * Without the agent's locks, not from a hook. */
int ht_jemprof_prepare(uint64_t rate);
/* After the session started: sample (prof.active true).  Returns 0 or
 * -1. */
int ht_jemprof_activate(void);
/*
 * Launch mode, after activate, before main: prof.reset does not draw the
 * threads' countdowns again, and the main thread's was drawn when it first
 * allocated, at opt.lg_prof_sample (or the idle rate).  So the calling
 * thread allocates and frees jemalloc's own blocks (mallocx: 64 KiB, at
 * most 256 MiB in all) until jemalloc samples one, which draws its next
 * countdown at the session's rate, then prof.reset forgets that sample:
 * from then on every allocation of the thread is sampled as the rate says
 * (threads created later draw theirs at it).  Returns 0, or -1 (no
 * mallocx, or no sample came: the thread's first sample comes when the
 * old countdown runs out).  Not from a hook; without the agent's locks.
 */
int ht_jemprof_settle(void);
/* Stop sampling (prof.active false) and collect once more, so that the
 * stopped session's profile stays as it was.  As prepare. */
void ht_jemprof_stop(void);
/* At detach: stop sampling and give jemalloc its own unwinder back. */
void ht_jemprof_detach(void);

/* If the session is jemalloc's and has not stopped since its last
 * collection: have jemalloc dump its samples and put them in the tables.
 * With the thread's guard set or not, without ht_lock_global, never in a
 * hook.  Returns 0, 1 (nothing to collect), or -1 (the dump failed: the
 * tables keep the last collection). */
int ht_jemprof_collect(void);

#endif
