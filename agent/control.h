/*
 * The agent's own thread and the control channel it serves (src/proto.h):
 * an abstract Unix stream socket "\0heaptool.PID", one request and one
 * reply per connection.  Only the target's user and root are served, many
 * clients at once, and none can hold up another: a request must arrive
 * whole within 2 s of its accept, a reply must keep moving, and when every
 * place is taken the oldest idle connection (of the process holding the
 * most) is dropped to make room, with ERR BUSY.  A few reports at most are
 * sent at once; one more is refused with ERR BUSY.
 *
 * The thread blocks every signal, is named "heaptool", and keeps its TLS
 * guard set for its whole life, so nothing it does (nor anything the
 * loader or libc allocate for it) is sampled.  Between requests it watches
 * dl_iterate_phdr's load and unload counters and patches modules that were
 * loaded without passing through the dlopen hook, and writes the dumps
 * whose time has come.
 *
 * The thread never prints, exits the process or aborts; when something it
 * needs fails it stops serving and leaves the process as it found it.
 * Each request is one operation of agent.h (start, stop, detach, hook) or
 * a snapshot (snapshot.h) sent back.
 */
#ifndef HT_CONTROL_H
#define HT_CONTROL_H

/* From the constructor, before anything else: have the agent run this
 * module's fork handler in every child (its descriptors closed; a thread
 * of its own for a child whose session follows forks). */
void ht_control_init(void);

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
int ht_control_start(int attach);

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
long ht_control_revive(void);

/* The agent's hook in the child of a fork (see ht_control_init). */
void ht_control_fork_child(int follow);

#endif
