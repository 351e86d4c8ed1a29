/*
 * The control channel that the agent's own thread (ctlthread.h) serves
 * (src/proto.h):
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

#include <stdint.h>

/*
 * For the agent's thread (ctlthread.h), in this order.  Bind the socket
 * (after taking the loader's counters, so no module loaded from now on
 * goes unnoticed): 0, or the errno value of the failure.  Unbind it (a
 * thread that could not set up).  Serve, for ever.
 */
int ht_control_bind(void);
void ht_control_unbind(void);
void ht_control_serve(void);

/* Have the serving thread bind its socket again (it has none), and wait
 * until deadline (CLOCK_MONOTONIC ms) for it: HT_REVIVE(SERVING, 0), or
 * (ESOCKET, errno), or (PENDING, 0) when it has not answered by then. */
long ht_control_rebind(uint64_t deadline);

/* In a fork's child: close the descriptors of the channel that are still
 * ours, and forget the connections. */
void ht_control_forget(void);

#endif
