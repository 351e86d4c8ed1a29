/*
 * The in-process API (api.c, declared for programs in include/heaptool.h):
 * what the agent's side shares between api.c and agent.c.
 *
 * The error codes are those of include/heaptool.h, which the agent may not
 * include (the zones: agent/ sees src/ and agent/ only); the list here must
 * keep its numbers, and t/target/api-user checks that every code's message
 * is the one the public header documents.
 */
#ifndef HT_API_H
#define HT_API_H

#define HT_API_EINVAL		(-1)	/* HEAPTOOL_EINVAL */
#define HT_API_ERUNNING		(-2)	/* HEAPTOOL_ERUNNING */
#define HT_API_ENOTRUNNING	(-3)	/* HEAPTOOL_ENOTRUNNING */
#define HT_API_ENOSESSION	(-4)	/* HEAPTOOL_ENOSESSION */
#define HT_API_EDETACHED	(-5)	/* HEAPTOOL_EDETACHED */
#define HT_API_EDISABLED	(-6)	/* HEAPTOOL_EDISABLED */
#define HT_API_ENOMEM		(-7)	/* HEAPTOOL_ENOMEM */
#define HT_API_EIO		(-8)	/* HEAPTOOL_EIO */
#define HT_API_EPREFIX		(-9)	/* HEAPTOOL_EPREFIX */
#define HT_API_EHOOK		(-10)	/* HEAPTOOL_EHOOK */

/*
 * Implemented by agent.c: make the agent ready for a session started by
 * the program itself: set up (once) and install the hooks if no one has
 * yet.  Takes rescan_lock and ht_lock_global as it needs: call with neither
 * held.  Returns 0, or HT_API_EDISABLED (HEAPTOOL_PID names another
 * process), HT_API_ENOMEM, HT_API_EDETACHED (heaptool detach removed the
 * hooks: they stay removed), HT_API_EHOOK.
 */
int	ht_agent_prepare(void);

#endif
