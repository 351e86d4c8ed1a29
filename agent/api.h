/*
 * The in-process API as the agent builds it (api.c; declared for programs
 * in include/heaptool.h): its entry points, exported with default
 * visibility, and its error codes.
 *
 * The codes are those of include/heaptool.h, which the agent may not
 * include (the zones: agent/ sees src/ and agent/ only); the list here must
 * keep its numbers, and t/target/api-user checks that every code's message
 * is the one the public header documents.  The codes the lifecycle shares
 * with the API are agent.h's, which has the same numbers.
 */
#ifndef HT_API_H
#define HT_API_H

#include <stddef.h>
#include <stdint.h>

#include "agent.h"

#define HT_API_EINVAL	   (-1)			/* HEAPTOOL_EINVAL */
#define HT_API_ERUNNING	   HT_AGENT_ERUNNING	/* HEAPTOOL_ERUNNING */
#define HT_API_ENOTRUNNING HT_AGENT_ENOTRUNNING /* ..._ENOTRUNNING */
#define HT_API_ENOSESSION  (-4)			/* ..._ENOSESSION */
#define HT_API_EDETACHED   HT_AGENT_EDETACHED	/* ..._EDETACHED */
#define HT_API_EDISABLED   HT_AGENT_EDISABLED	/* ..._EDISABLED */
#define HT_API_ENOMEM	   HT_AGENT_ENOMEM	/* HEAPTOOL_ENOMEM */
#define HT_API_EIO	   (-8)			/* HEAPTOOL_EIO */
#define HT_API_EPREFIX	   (-9)			/* HEAPTOOL_EPREFIX */
#define HT_API_EHOOK	   HT_AGENT_EHOOK	/* HEAPTOOL_EHOOK */

#define HT_API __attribute__((visibility("default")))

int heaptool_start(size_t rate) HT_API;
int heaptool_stop(void) HT_API;
int heaptool_dump(const char *path) HT_API;
int heaptool_enable_dumps(const char *prefix, uint64_t interval_ms,
    uint64_t every_bytes, uint64_t threshold_bytes) HT_API;
const char *heaptool_strerror(int code) HT_API;

/*
 * Not part of heaptool.h: the entry point of heaptool attach in a process
 * where the agent is loaded but does not answer (ht_ctlthread_revive).  The
 * CLI finds it in the agent's dynamic symbols and calls it in a borrowed
 * thread, as it calls dlopen; it returns HT_REVIVE(what, errno).
 */
long heaptool_agent_revive(void) HT_API;

#endif
