/*
 * The agent's own thread, which serves the control channel (control.h):
 * its start, its revival by heaptool attach, and its start in the child
 * of a fork whose session follows its parent.
 */
#ifndef HT_CTLTHREAD_H
#define HT_CTLTHREAD_H

/* From the constructor, before anything else: have the agent run this
 * module's fork handler in every child (its descriptors closed; a thread
 * of its own for a child whose session follows forks). */
void ht_ctlthread_init(void);

/*
 * Start the agent's thread; called by the constructor (and by the API when
 * dumps it enables need the thread), returns at once (attach mode runs
 * inside a dlopen called by an injected thread, which must not wait for
 * anything).  attach is 1 when the thread must set up the
 * agent and install the hooks itself (with no session) before it serves, 0
 * when the constructor did (launch mode).  Returns 0, or -1 if no thread
 * could be started (the agent then stays as the constructor left it, and
 * a later call tries again).  Calls while the thread of this process is
 * starting or serving do nothing and return 0: there is one thread at
 * most.
 */
int ht_ctlthread_start(int attach);

/*
 * Bring the agent up in a process where it is loaded and does not answer
 * (heaptool attach calls it through heaptool_agent_revive): forget a
 * session inherited from a fork's parent (ht_agent_adopt), then start the
 * thread in attach mode, or have a thread that serves without a socket
 * bind it again, and wait (2 s at most) to see it serve.  Idempotent: a
 * thread that serves is left as it is; concurrent calls take turns.
 * Returns HT_REVIVE(what, errno) (src/proto.h): SERVING, PENDING (still
 * setting up), or the failure (ETHREAD, EMEMORY, ESOCKET, EHOOK) with its
 * errno.  After a failure, a later call tries again.
 */
long ht_ctlthread_revive(void);

/* The agent's hook in the child of a fork (see ht_ctlthread_init). */
void ht_ctlthread_fork_child(int follow);

#endif
