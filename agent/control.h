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

/*
 * Start the agent's thread; called by the constructor (and by the API when
 * dumps it enables need the thread), returns at once (attach mode runs
 * inside a dlopen called by an injected thread, which must not wait for
 * anything).  attach is 1 when the thread must set up the
 * agent and install the hooks itself (with no session) before it serves, 0
 * when the constructor did (launch mode).  Returns 0, or -1 if no thread
 * could be started (the agent then stays as the constructor left it).
 * Later calls do nothing and return 0: there is one thread at most.
 */
int ht_control_start(int attach);

#endif
