/*
 * heaptool's in-process API: a program profiles its own heap without ptrace
 * and without the heaptool command.  See heaptool(3).
 *
 * Link with the agent, libheaptool-agent.so (pkg-config --cflags --libs
 * heaptool), or run the program under heaptool run, which preloads it.
 * Every function is safe to call from any thread and returns 0 or one of
 * the negative HEAPTOOL_E* codes below; heaptool_strerror() names them.
 * Where a code says "see errno", errno holds the system's reason.
 */
#ifndef HEAPTOOL_H
#define HEAPTOOL_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define HEAPTOOL_OK	     0
#define HEAPTOOL_EINVAL	     (-1)  /* invalid argument */
#define HEAPTOOL_ERUNNING    (-2)  /* a session is running */
#define HEAPTOOL_ENOTRUNNING (-3)  /* no session is running */
#define HEAPTOOL_ENOSESSION  (-4)  /* no session was started */
#define HEAPTOOL_EDETACHED   (-5)  /* heaptool detach removed the hooks */
#define HEAPTOOL_EDISABLED   (-6)  /* the agent is off in this process */
#define HEAPTOOL_ENOMEM	     (-7)  /* the agent could not map memory */
#define HEAPTOOL_EIO	     (-8)  /* a profile was not written; errno */
#define HEAPTOOL_EPREFIX     (-9)  /* the dump prefix is unusable; errno */
#define HEAPTOOL_EHOOK	     (-10) /* the hooks could not be installed */

/* Start a session: sample about one allocation per rate bytes (1: every
 * allocation, exact counts).  HEAPTOOL_ERUNNING if one runs (under
 * heaptool run, one runs from the start). */
int heaptool_start(size_t rate);

/* Stop the running session; its profile stays readable until the next
 * start.  HEAPTOOL_ENOTRUNNING if none runs. */
int heaptool_stop(void);

/* Write the current session's profile to path (mode 0600, replaced
 * atomically), readable by heaptool report; with path NULL, to the next
 * PREFIX.PID.SEQ.heap of the dumps enabled below. */
int heaptool_dump(const char *path);

/* Give the running session dump files PREFIX.PID.SEQ.heap (a relative
 * prefix is taken against the current directory now): every interval_ms
 * milliseconds, after each every_bytes bytes allocated, when an allocation
 * fails, and at exit; sites below threshold_bytes fold into one record
 * (each 0: off).  A NULL or empty prefix turns the dumps off. */
int heaptool_enable_dumps(const char *prefix, uint64_t interval_ms,
    uint64_t every_bytes, uint64_t threshold_bytes);

/* A message for a code of the functions above (static storage). */
const char *heaptool_strerror(int code);

#ifdef __cplusplus
}
#endif

#endif
