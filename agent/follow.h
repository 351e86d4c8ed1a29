/*
 * The children that follow this process's session (start --follow-forks):
 * their pids, for the status of the parent.
 *
 * A fork's parent cannot learn its child's pid in a pthread_atfork
 * handler, so the child tells it: a ring of pids in a page the parent maps
 * shared before it forks (ht_follow_prepare), which every child inherits
 * and writes its pid into from its own fork handler (ht_follow_child).  A
 * child then leaves its parent's ring and maps its own, so that its
 * children are its own to list.  The writers only add (an atomic count
 * picks the slot); the parent reads the ring when asked and keeps only
 * those that are still its children, running: waitid(WNOHANG | WNOWAIT),
 * which reaps nothing and tells a reused pid (not our child) from ours.
 *
 * No locks; nothing here allocates.  The ring counts as the agent's
 * overhead.
 */
#ifndef HT_FOLLOW_H
#define HT_FOLLOW_H

#include <sys/types.h>

#include <stddef.h>
#include <stdint.h>

/* Map the ring if there is none yet (before a session that follows forks
 * begins).  Returns 0, or -1 if it could not be mapped (the children are
 * followed all the same; the parent cannot list them). */
int ht_follow_prepare(void);

/* In a child of fork that follows its parent: add self to the parent's
 * ring, leave it, and map a ring of its own (as ht_follow_prepare). */
void ht_follow_child(pid_t self);

/* In a child of fork that does not follow: leave the parent's ring. */
void ht_follow_leave(void);

/* The followed children of this process that are running (not yet exited
 * or reaped), the most recent first, into out[max]; returns how many.
 * Makes a system call per child: not under ht_lock_global. */
size_t ht_follow_children(uint32_t *out, size_t max);

#endif
