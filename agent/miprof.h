/*
 * The mimalloc backend: mimalloc's profiler API, where the process's
 * mimalloc exports it.  UNTESTED against a real build: no mimalloc release
 * has the API (Debian's 2.0.9 has none); it is written against the one
 * published header, include/mimalloc/profile.h of microsoft/mimalloc pull
 * request 1266 (April 2026), with declarations of our own:
 *
 *   bool mi_profiler_enable(size_t record_extra_bytes,
 *       size_t (*on_alloc)(void *user_data, void *ptr, size_t requested,
 *           size_t usable, size_t threshold, size_t since_last,
 *           uint8_t heap_tag),
 *       void (*on_free)(void *user_data, void *ptr));
 *
 * mimalloc charges each allocation's requested size to a per-thread count
 * and calls on_alloc when it reaches the distance on_alloc last returned;
 * on_free is called when a sampled block is freed.  The API can be enabled
 * once and never disabled, and names no start or stop: sessions are ours.
 * on_alloc returns our own exponential draw (sampling.h) at the session's
 * rate, a long one while no mimalloc session runs; a thread's first
 * crossing in a session was drawn before it and only starts the thread
 * over (ht_sampler_native), so each start is a new epoch; on_free is a
 * free of the session (ht_sampler_free), which changes nothing for a
 * block of an earlier epoch.  The issue that asked for this backend named
 * mi_profiler_start and mi_profiler_stop; no published mimalloc has them,
 * so they are not looked for.
 *
 * Detection uses dlsym, from the agent's thread or an API call.
 */
#ifndef HT_MIPROF_H
#define HT_MIPROF_H

#include <stdint.h>

/* Look for mimalloc (mi_malloc) and its profiler API (mi_profiler_enable).
 * Returns HT_NATIVE_* (jemprof.h), kept for ht_miprof_state(). */
int ht_miprof_detect(void);
int ht_miprof_state(void);
/* Why the backend cannot run: a phrase. */
const char *ht_miprof_why(void);
/* The path of mimalloc's module once a session was prepared, or NULL (as
 * ht_jemprof_module). */
const char *ht_miprof_module(void);

/* Before a mimalloc session: enable the API (once for the life of the
 * process).  Returns 0, or -1 (it cannot run). */
int ht_miprof_prepare(void);

#endif
